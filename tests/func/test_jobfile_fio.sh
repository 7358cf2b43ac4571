#!/usr/bin/env bash
# fio job files as fio has them: every fio option known by name, every
# problem of a file listed in one run with its line, --parse-only, the
# engines mapped onto blkstack's drivers; docs/bench.md's option table is
# the one the binary prints; the stock job files of Debian's fio-examples
# counted: how many blkstack accepts, and for the others, that every line
# refused on its own is named in the file's one run.
source "$(dirname "$0")/lib.sh" "$@"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

# docs/bench.md holds the table the binary prints, byte for byte
"$BLKSTACK" bench --fio-options >"$TMP/table.md"
check "--fio-options: exit 0" test $? -eq 0
sed -n '/<!-- fio-options table: begin -->/,/<!-- fio-options table: end -->/p' \
	"$SRC/docs/bench.md" | sed '1d;$d' >"$TMP/doc.md"
check "docs/bench.md's fio option table is --fio-options' output" \
	cmp "$TMP/table.md" "$TMP/doc.md"
# every option of the installed fio is in the table
if command -v fio >/dev/null; then
	fio --cmdhelp=all | awk -F: '{gsub(/ /, "", $1); print $1}' | sort -u >"$TMP/fio.names"
	awk -F' \\| ' 'NR > 2 && /^\| / {sub(/^\| /, "", $1); print $1}' "$TMP/table.md" |
		sort -u >"$TMP/ours.names"
	check "every option of fio --cmdhelp=all is in the table ($(wc -l <"$TMP/fio.names") names)" \
		bash -c '[ -s "$1" ] && [ -z "$(comm -23 "$1" "$2")" ]' _ "$TMP/fio.names" "$TMP/ours.names"
else
	fail "fio is not installed (scripts/install-deps.sh installs it)"
fi

# one run lists every problem, each with file:line, and a count
cat >"$TMP/many.fio" <<'JOB'
[global]
ioengine=rbd
size=16m
[a]
rw=randread
offset_align=4k
iodpeth=4
[b]
rw=read
rw_sequencer=identical
port=8080
JOB
expect_error "refused engine named with its line" "many.fio:2: ioengine=rbd: a fio engine blkstack bench does not support: network" \
	bench --parse-only "$TMP/many.fio"
check "refused option with its line and reason" grep -q "many.fio:6: option 'offset_align' is a fio option that blkstack bench does not support: a workload option" "$TMP/err"
check "typo with the nearest name" grep -q "many.fio:7: unknown option 'iodpeth' (did you mean 'iodepth'?)" "$TMP/err"
check "a later job's problem too" grep -q "many.fio:10: option 'rw_sequencer'" "$TMP/err"
check "an engine's option names the engine" grep -q "many.fio:11: option 'port' .*an option of ioengine=.*net" "$TMP/err"
check "the count of problems" grep -q "^blkstack bench: 5 problems; nothing ran$" "$TMP/err"
# the command line's problems and the file's, in one run
expect_error "command line and file problems together" "unknown option 'bsplit' \(did you mean 'bssplit'\?\)" \
	bench --parse-only --bsplit=4k "$TMP/many.fio"
check "... with the file's" grep -q "^blkstack bench: 6 problems; nothing ran$" "$TMP/err"

# --parse-only: a good file is checked and nothing runs
printf '[j]\nrw=randread\nsize=16m\nruntime=1h\ntime_based\n' >"$TMP/good.fio"
start=$(date +%s)
"$BLKSTACK" bench --parse-only "$TMP/good.fio" >"$TMP/po.out" 2>"$TMP/po.err"
check "--parse-only: exit 0" test $? -eq 0
check "--parse-only: no report" test ! -s "$TMP/po.out"
check "--parse-only: runtime=1h did not run" test $(( $(date +%s) - start )) -lt 5

# engines: mapped onto drivers
printf '[j]\nrw=randread\nioengine=libaio\niodepth=8\nsize=4m\nfilename=%s\n' "$TMP/img" >"$TMP/aio.fio"
"$BLKSTACK" bench --output-format=json "$TMP/aio.fio" >"$TMP/aio.json" 2>"$TMP/aio.err"
check "ioengine=libaio with filename=: runs" test $? -eq 0
check "ioengine=libaio: on dev=uring, at iodepth 8" \
	jq -e '.jobs[0].blkstack.dev == "uring" and .jobs[0]."job options".iodepth == "8" and .jobs[0].read.total_ios == 1024' "$TMP/aio.json"
printf '[j]\nrw=randread\nioengine=psync\niodepth=8\nsize=4m\n' >"$TMP/psync.fio"
"$BLKSTACK" bench --dev=null --output-format=json "$TMP/psync.fio" >"$TMP/psync.json" 2>"$TMP/psync.err"
check "ioengine=psync: runs" test $? -eq 0
check "ioengine=psync: iodepth 1, as fio's sync engines" jq -e '.jobs[0]."job options".iodepth == "1"' "$TMP/psync.json"
check "... and says so" grep -q "note: job 'j': ioengine=psync is synchronous: iodepth=8 runs as iodepth=1" "$TMP/psync.err"
check "--dev= says which job option it overrides" grep -q "note: --dev=null overrides job 'j' ioengine=psync (dev=uring)" "$TMP/psync.err"
printf '[j]\nrw=read\nioengine=null\nsize=4m\n' >"$TMP/null.fio"
"$BLKSTACK" bench --output-format=json "$TMP/null.fio" >"$TMP/null.json"
check "ioengine=null: on dev=null" jq -e '.jobs[0].blkstack.dev == "null"' "$TMP/null.json"
printf '[a]\nrw=read\nioengine=null\nsize=4m\n[b]\nrw=read\nioengine=libaio\nsize=4m\n' >"$TMP/mix.fio"
expect_error "engines on two drivers: both named" "job 'b' runs on dev=uring \(ioengine=libaio\) and job 'a' on dev=null" \
	bench --parse-only --filename="$TMP/img" "$TMP/mix.fio"
# ioengine=libaio without filename=: fio's own name, bench.0.0, here
BIN=$(realpath "$BLKSTACK")
(cd "$TMP" && "$BIN" bench --ioengine=libaio --rw=write --size=1m >/dev/null)
check "ioengine=libaio without filename=: runs on ./bench.0.0, as fio names it" \
	test "$(stat -c %s "$TMP/bench.0.0" 2>/dev/null)" = 1048576
expect_error "an engine name fio does not have" "ioengine=libaoi: not a fio engine, allowed sync\|psync" \
	bench --parse-only --ioengine=libaoi --rw=read
"$BLKSTACK" bench --parse-only --dev=null --direct=1 --rw=read 2>"$TMP/direct.err"
check "direct=1 on null: a note" grep -q "note: job 'bench': direct=1 has no effect on dev=null" "$TMP/direct.err"

printf '[j]\nrw=read\nioengine=cpp_null\nsize=4m\n' >"$TMP/cppnull.fio"
"$BLKSTACK" bench --output-format=json "$TMP/cppnull.fio" >"$TMP/cppnull.json"
check "ioengine=cpp_null (fio's null engine in C++): on dev=null" \
	jq_true '.jobs[0].blkstack.dev == "null" and .jobs[0].read.total_ios == 1024' "$TMP/cppnull.json"
# the engines that cannot apply name themselves and say why
for e in net:network cpuio:'burns CPU' rbd:network librpma_apm_client:network \
	 filecreate:file-system mmap:memory-mapped sg:'SCSI generic' io_uring_cmd:'NVMe passthrough' \
	 dev-dax:'persistent memory' splice:pipes exec:'runs a program'; do
	expect_error "ioengine=${e%%:*}: refused by name (${e#*:})" \
		"x\.fio:2: ioengine=${e%%:*}: a fio engine blkstack bench does not support: .*${e#*:}" \
		bench --parse-only "$(printf '[j]\nioengine=%s\nrw=read\n' "${e%%:*}" >"$TMP/x.fio"; echo "$TMP/x.fio")"
done

# fio's job-file syntax, the same file run by fio and by blkstack: inline
# ';' and '#' comments, include, ${VAR}, kb_base, size and offset as
# percentages, time suffixes, bare booleans; the bytes moved must agree
truncate -s 64m "$TMP/data.img"
cat >"$TMP/part.inc" <<'INC'
; included: options of the section that includes it
bs=8k   # eight KiB
rw=read ; sequential
INC
cat >"$TMP/syntax.fio" <<JOB
[global]
ioengine=psync ; a sync engine: one I/O in flight
filename=$TMP/data.img
norandommap   # a bare boolean
runtime=1m    ; a time with its unit

[pct]
include part.inc
size=25%      ; of the 64 MiB file: 16 MiB
offset=50%

[si]
stonewall
kb_base=1000  ; SI prefixes from here on: k is 1000, KiB 1024
bs=\${BLK_BS}
rw=randread
size=4096k    ; 4 096 000 bytes: 1000 blocks of 4 KiB
JOB
if command -v fio >/dev/null; then
	BLK_BS=4KiB fio --output-format=json "$TMP/syntax.fio" >"$TMP/syntax.fio.json" 2>"$TMP/syntax.fio.err"
	check "syntax: fio runs the file" test $? -eq 0
	BLK_BS=4KiB "$BLKSTACK" bench --output-format=json "$TMP/syntax.fio" >"$TMP/syntax.blk.json" 2>"$TMP/syntax.blk.err"
	check "syntax: blkstack runs the same file ($(head -c 200 "$TMP/syntax.blk.err"))" test $? -eq 0
	check "syntax: blkstack ran it on dev=uring (filename=, ioengine=psync)" \
		jq -e '[.jobs[].blkstack.dev] == ["uring", "uring"]' "$TMP/syntax.blk.json"
	for k in io_bytes total_ios; do
		want=$(jq -c "[.jobs[].read.$k]" "$TMP/syntax.fio.json")
		got=$(jq -c "[.jobs[].read.$k]" "$TMP/syntax.blk.json")
		check "syntax: read $k as fio: $got == $want" test "$got" = "$want"
	done
	want=$(jq -c '[.jobs[]."job options".bs]' "$TMP/syntax.fio.json")
	check "syntax: fio read the block sizes we read" test "$want" = '["8k","4KiB"]'
	check "syntax: the sync engine ran at iodepth 1" \
		jq -e '[.jobs[]."job options".iodepth] == ["1", "1"]' "$TMP/syntax.blk.json"
else
	fail "fio is not installed (scripts/install-deps.sh installs it)"
fi

# Each job its own files, as fio names them; the same file run by fio in
# one directory and by blkstack in another: the same files, the same sizes,
# the same bytes per job
mkdir -p "$TMP/fio.d" "$TMP/blk.d"
cat >"$TMP/files.fio" <<'JOB'
[global]
ioengine=libaio
rw=write
bs=64k
size=2m
directory=${BLK_DIR}

[a]
filename=a.img

[b]
filename=b.img
size=4m

[c]
numjobs=2          ; each thread its own file: c.0.0, c.1.0

[d]
filename_format=d-$jobnum.dat
filesize=1m
JOB
if command -v fio >/dev/null; then
	BLK_DIR=$TMP/fio.d fio --output-format=json "$TMP/files.fio" >"$TMP/files.fio.json" 2>/dev/null
	check "files: fio runs the file" test $? -eq 0
	BLK_DIR=$TMP/blk.d "$BLKSTACK" bench --output-format=json "$TMP/files.fio" \
		>"$TMP/files.blk.json" 2>"$TMP/files.blk.err"
	check "files: blkstack runs the same file ($(head -c 200 "$TMP/files.blk.err"))" test $? -eq 0
	list() { (cd "$1" && for f in *; do printf '%s:%s ' "$f" "$(stat -c %s "$f")"; done); }
	want=$(list "$TMP/fio.d") got=$(list "$TMP/blk.d")
	check "files: the files fio made, by name and size: $got" test "$got" = "$want"
	want=$(jq -c '[.jobs[] | [.jobname, .write.io_bytes]]' "$TMP/files.fio.json")
	got=$(jq -c '[.jobs[] | [.jobname, .write.io_bytes]]' "$TMP/files.blk.json")
	check "files: bytes per job as fio: $got" test "$got" = "$want"
else
	fail "fio is not installed (scripts/install-deps.sh installs it)"
fi
# a job file with filename= and no --dev runs on the file, not on null
printf '[j]\nrw=write\nsize=1m\nfilename=%s\n' "$TMP/touched.img" >"$TMP/touch.fio"
"$BLKSTACK" bench --output-format=json "$TMP/touch.fio" >"$TMP/touch.json"
check "filename= without --dev: on dev=uring" jq -e '.jobs[0].blkstack.dev == "uring"' "$TMP/touch.json"
check "filename= without --dev: the file was written" test "$(stat -c %s "$TMP/touched.img")" -eq 1048576
# --dev=null says that it leaves the job's file alone
"$BLKSTACK" bench --dev=null --output-format=json "$TMP/touch.fio" >/dev/null 2>"$TMP/touch.err"
check "--dev=null: a note names the file it overrides" \
	grep -q "note: --dev=null overrides job 'j' file $TMP/touched.img" "$TMP/touch.err"

# Engines with fio's meaning on a file: the depth each one keeps at the
# file, from the device's counters (Little: the requests' summed time in
# flight over the time the file was busy), and how the driver issued them
truncate -s 16m "$TMP/eng.img"
depth() {
	jq -r '.jobs[0].read.runtime as $rt | .disk_util[0] |
		(.read_ticks / (.util / 100 * $rt) * 100 | round / 100)' "$1"
}
for e in psync sync vsync pvsync pvsync2 libaio io_uring posixaio; do
	"$BLKSTACK" bench --name=q --ioengine=$e --iodepth=16 --rw=randread --bs=4k \
		--size=16m --filename="$TMP/eng.img" --runtime=400ms --time_based \
		--output-format=json >"$TMP/eng.json" 2>"$TMP/eng.err"
	check "ioengine=$e: runs on the file ($(head -c 200 "$TMP/eng.err"))" \
		jq_true '.jobs[0].blkstack.dev == "uring" and .jobs[0].read.total_ios > 1000' "$TMP/eng.json"
	d=$(depth "$TMP/eng.json")
	case $e in
	*sync*)
		check "ioengine=$e iodepth=16: one I/O at a time at the file (depth $d)" \
			awk -v d="$d" 'BEGIN { exit !(d > 0.5 && d <= 1.2) }'
		check "ioengine=$e: each I/O a system call of the job's thread (inline, none through the ring)" \
			jq_true '.jobs[0].blkstack.uring | .inline_requests > 1000 and .ring_requests == 0 and .pool_requests == 0' "$TMP/eng.json"
		check "ioengine=$e: says iodepth=16 runs as 1" \
			grep -q "note: job 'q': ioengine=$e is synchronous: iodepth=16 runs as iodepth=1" "$TMP/eng.err"
		;;
	posixaio)
		check "ioengine=posixaio iodepth=16: 16 queued at the job (depth $d)" \
			awk -v d="$d" 'BEGIN { exit !(d >= 8) }'
		check "ioengine=posixaio: on the pool, one worker (glibc's helper thread per file)" \
			jq_true '.jobs[0].blkstack.uring | .pool_requests > 1000 and .ring_requests == 0 and .inline_requests == 0' "$TMP/eng.json"
		;;
	*)
		check "ioengine=$e iodepth=16: 16 in flight at the file (depth $d)" \
			awk -v d="$d" 'BEGIN { exit !(d >= 8) }'
		check "ioengine=$e: through the ring" \
			jq_true '.jobs[0].blkstack.uring | .ring_requests > 1000 and .inline_requests == 0' "$TMP/eng.json"
		;;
	esac
done
# an issue option the user gives wins over the engine's, and says so
"$BLKSTACK" bench --name=q --ioengine=psync --uring_inline=never --rw=read --size=1m \
	--filename="$TMP/eng.img" --output-format=json >"$TMP/eng.json" 2>"$TMP/eng.err"
check "ioengine=psync --uring_inline=never: the ring, as given" \
	jq_true '.jobs[0].blkstack.uring | .ring_requests > 0 and .inline_requests == 0' "$TMP/eng.json"
check "... and a note says the option given wins" \
	grep -q "note: job 'q': ioengine=psync makes each I/O a system call of the job's thread (uring_inline=always); the uring_inline= given wins" "$TMP/eng.err"
# Several files per job, as fio has them: filename=a:b, nrfiles= with
# fio's names, directory=a:b; the same file through fio and blkstack in
# two directories each: the same files by name and size, the same bytes
# per job, and every block of every file written
mkdir -p "$TMP/mf.fio/d1" "$TMP/mf.fio/d2" "$TMP/mf.blk/d1" "$TMP/mf.blk/d2"
cat >"$TMP/multi.fio" <<'JOB'
[global]
ioengine=psync
rw=write
bs=4k

[list]
directory=${BLK_DIR}/d1
filename=a.img:b.img
size=2m

[nr]
directory=${BLK_DIR}/d1:${BLK_DIR}/d2
nrfiles=3
numjobs=2
size=3m

[fsz]
directory=${BLK_DIR}/d2
filename_format=f-$jobnum-$filenum.dat
nrfiles=2
filesize=512k
JOB
if command -v fio >/dev/null; then
	BLK_DIR=$TMP/mf.fio fio --output-format=json "$TMP/multi.fio" >"$TMP/multi.fio.json" 2>/dev/null
	check "several files: fio runs the file" test $? -eq 0
	BLK_DIR=$TMP/mf.blk "$BLKSTACK" bench --output-format=json "$TMP/multi.fio" \
		>"$TMP/multi.blk.json" 2>"$TMP/multi.blk.err"
	check "several files: blkstack runs the same file ($(head -c 200 "$TMP/multi.blk.err"))" test $? -eq 0
	tree() { (cd "$1" && find . -type f -printf '%p:%s\n' | sort | tr '\n' ' '); }
	want=$(tree "$TMP/mf.fio") got=$(tree "$TMP/mf.blk")
	check "several files: the files fio made, by name and size: $got" test "$got" = "$want"
	check "several files: 2 + 3 x 2 + 2 files" test "$(echo "$got" | wc -w)" -eq 10
	want=$(jq -c '[.jobs[] | [.jobname, .write.io_bytes]]' "$TMP/multi.fio.json")
	got=$(jq -c '[.jobs[] | [.jobname, .write.io_bytes]]' "$TMP/multi.blk.json")
	check "several files: bytes per job as fio: $got" test "$got" = "$want"
else
	fail "fio is not installed (scripts/install-deps.sh installs it)"
fi
# each file written whole: random data has a zero byte in 256, and
# scramble_buffers (fio's default) stamps each 512 bytes with the offset,
# at one of 8 places that add up as a buffer is reused, and a count, high
# bytes zero: 87 % of the bytes are not zero (fio's own file: 89 %)
written() {
	local f=$1 size nz
	size=$(stat -c %s "$f")
	nz=$(tr -d '\0' <"$f" | wc -c)
	[ "$nz" -ge $((size * 80 / 100)) ]
}
for f in $(cd "$TMP/mf.blk" && find . -type f | sort); do
	check "several files: $f written through" written "$TMP/mf.blk/$f"
done
# reads go to every file too: each file's blocks once, in turn
truncate -s 1m "$TMP/r1.img"
truncate -s 3m "$TMP/r2.img"
"$BLKSTACK" bench --name=rd --ioengine=libaio --iodepth=8 --rw=randread \
	--filename="$TMP/r1.img:$TMP/r2.img" --output-format=json >"$TMP/rd.json" 2>"$TMP/rd.err"
check "filename=a:b without size=: each file whole, 1 MiB + 3 MiB read, as fio ($(head -c 200 "$TMP/rd.err"))" \
	jq_true '.jobs[0].read.io_bytes == 4194304 and .disk_util[0].read_sectors == 8192' "$TMP/rd.json"
# a file of the list with a colon in its name: fio's \:
"$BLKSTACK" bench --name=esc --rw=write --size=64k --filename="$TMP/c\\:olon.img" >/dev/null 2>&1
check "filename=c\\:olon.img: one file, named c:olon.img" test "$(stat -c %s "$TMP/c:olon.img" 2>/dev/null)" = 65536
# two jobs with different files each write their own, whole
rm -f "$TMP/own-a.img" "$TMP/own-b.img"
printf '[a]\nrw=write\nsize=1m\nfilename=%s\n[b]\nrw=write\nsize=2m\nfilename=%s\n' \
	"$TMP/own-a.img" "$TMP/own-b.img" >"$TMP/own.fio"
"$BLKSTACK" bench --output-format=json "$TMP/own.fio" >"$TMP/own.json" 2>"$TMP/own.err"
check "two jobs, two files: 1 MiB and 2 MiB" \
	test "$(stat -c %s "$TMP/own-a.img" "$TMP/own-b.img" | tr '\n' ' ')" = "1048576 2097152 "
check "two jobs, two files: job a wrote a's" written "$TMP/own-a.img"
check "two jobs, two files: job b wrote b's" written "$TMP/own-b.img"
# --dev= on a driver without files names every file it overrides
"$BLKSTACK" bench --parse-only --dev=ram --nrfiles=3 --rw=read --size=1m 2>"$TMP/ovr.err"
check "--dev=ram with nrfiles=3: a note names the files it overrides" \
	grep -q "note: --dev=ram overrides job 'bench' files bench.0.0, bench.0.1 and 1 more" "$TMP/ovr.err"
expect_error "a list of files on a stack that opens one file: refused" \
	"filename=x:y: dev=nvme on uring opens one file; fio's list of files is a job's, on dev=uring" \
	bench --parse-only --dev=nvme --lower=uring --filename=x:y --rw=read

# The stock corpus: Debian's fio-examples (scripts/install-deps.sh).
EX=/usr/share/doc/fio/examples
if ! ls "$EX"/*.fio >/dev/null 2>&1; then
	fail "fio-examples is not installed (scripts/install-deps.sh installs it)"
	finish
	exit
fi
ok=0 refused=0 missed=0
: >"$TMP/accepted" ; : >"$TMP/refused"
for f in "$EX"/*.fio; do
	name=$(basename "$f")
	if "$BLKSTACK" bench --parse-only --dev=ram "$f" >/dev/null 2>"$TMP/one.err"; then
		ok=$((ok + 1))
		echo "$name" >>"$TMP/accepted"
		continue
	fi
	refused=$((refused + 1))
	echo "$name" >>"$TMP/refused"
	# every option line that fails on its own is named in the file's run
	# (as "file:LINE:"); section headers and comments are skipped
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		# as fio reads a line: cut at its first ';' or '#', blanks trimmed
		t=$(printf '%s' "$line" | sed 's/[;#].*//; s/^[[:space:]]*//; s/[[:space:]]*$//')
		case $t in '' | ';'* | '#'* | '['*) continue ;; esac
		# ${VAR}, include and wait_for= mean something only in their file
		case $t in *'${'* | include* | wait_for=*) continue ;; esac
		if ! "$BLKSTACK" bench --parse-only --dev=ram --name=x "--$t" >/dev/null 2>&1; then
			if ! grep -q "$name:$n:" "$TMP/one.err"; then
				missed=$((missed + 1))
				echo "# $name:$n: '$t' fails alone but is not named in the file's run"
			fi
		fi
	done <"$f"
done
total=$((ok + refused))
echo "# stock corpus: $ok of $total accepted: $(tr '\n' ' ' <"$TMP/accepted")"
echo "# refused: $(tr '\n' ' ' <"$TMP/refused")"
check "stock corpus: every job file read ($total)" test "$total" -ge 80
check "stock corpus: every refused line named in its file's one run" test "$missed" -eq 0
# what is accepted today: the floor only rises
check "stock corpus: at least 37 accepted ($ok)" test "$ok" -ge 37
# accepted stock files run for real, unchanged, pointed at a ram device
# (sized from the jobs, sparse); their runtime= is minutes, so SIGINT
# after a second ends them, and the report covers what ran
for name in fio-rand-read.fio fio-seq-write.fio null.fio; do
	timeout -s INT 1 "$BLKSTACK" bench --dev=ram --output-format=json \
		"$EX/$name" >"$TMP/run.json" 2>"$TMP/run.err"
	rc=$?
	check "stock $name runs on dev=ram until SIGINT (rc=$rc)" test $rc -eq 124
	check "stock $name: stopped by the signal, not by an error" \
		grep -q "interrupted by SIGINT" "$TMP/run.err"
	check "stock $name: I/O done" jq -e '[.jobs[] | .read.total_ios + .write.total_ios] | add > 0' "$TMP/run.json"
done
finish
