#!/usr/bin/env bash
# fio's sync options on a job's own file (dev=uring) and on ram, beside fio
# doing the same: fsync=N, fdatasync=N and sync_file_range=FLAGS:N send a
# FLUSH through the block layer once N writes have been issued (fio's
# count: none after the last write, so 256 writes at fsync=4 make 63), the
# device's flush counter says so, and the report has fio's sync statistics
# (the JSON "sync" object's keys as fio's, total_ios only for fsync=, as
# fio's); end_fsync=1 and fsync_on_close=1 send one FLUSH at the end, not
# counted in the sync statistics (fio's); write_barrier=N is taken.
# The page cache and layout options on a file: invalidate=1 (fio's default)
# drops the file's cache before the job (fincore), pre_read=1 fills it,
# overwrite=1 writes a new file out, create_only=1 makes it and does no
# I/O, cgroup_nodelete is taken.  write_iolog= writes fio's iolog
# (version 3): the same lines as fio's for a sequential job, and fio's
# read_iolog= replays blkstack's log of a random mix with its counts;
# blkstack's read_iolog= replays fio's log (version 3: its counts, at its
# times, or at once with replay_no_stall) and a version 2 log with a wait,
# replay_redirect, replay_scale and replay_align.
source "$(dirname "$0")/lib.sh" "$@"

command -v jq >/dev/null || { echo "ok - # SKIP jq missing"; finish; }

job() { # file extra-options...: a job file writing 1 MiB in 4 KiB blocks
	printf '[t]\nrw=write\nbs=4k\nsize=1m\nioengine=psync\nfilename=%s\n' "$1"
	shift
	printf '%s\n' "$@"
}
# run JOBFILE [bench options]: "sync.total_ios sync.lat_ns.N write.total_ios flushes"
run() {
	local f=$1
	shift
	"$BLKSTACK" bench "$f" "$@" --output-format=json 2>"$TMP/err" |
		jq -r '.jobs[0] | "\(.sync.total_ios) \(.sync.lat_ns.N) \(.write.total_ios) \(.blkstack.requests.flush)"'
}
fiorun() {
	fio "$1" --output-format=json 2>/dev/null |
		jq -r '.jobs[0] | "\(.sync.total_ios) \(.sync.lat_ns.N) \(.write.total_ios)"'
}

# fsync=4: 63 FLUSHes counted by the device, 63 sync latencies
job "$TMP/a.dat" fsync=4 >"$TMP/a.fio"
r=$(run "$TMP/a.fio")
check "fsync=4, 256 writes: 63 syncs, 63 latencies, 63 device flushes ($r)" test "$r" = "63 63 256 63"
if command -v fio >/dev/null; then
	f=$(fiorun "$TMP/a.fio")
	check "fsync=4: fio's counts the same ($f)" test "$f" = "${r% *}"
	b=$("$BLKSTACK" bench "$TMP/a.fio" --output-format=json 2>/dev/null | jq -c '.jobs[0].sync | [keys, (.lat_ns | keys)]')
	f=$(fio "$TMP/a.fio" --output-format=json 2>/dev/null | jq -c '.jobs[0].sync | [keys, (.lat_ns | keys)]')
	check "fsync=4: the JSON sync object's keys are fio's ($b)" test "$b" = "$f"
fi
"$BLKSTACK" bench "$TMP/a.fio" >"$TMP/a.out" 2>&1
check "fsync=4: fio's sync lines in the text report" \
	bash -c 'grep -q "^  fsync/fdatasync/sync_file_range:$" "$1" && grep -q "^    sync (.sec): min=" "$1" && grep -q "^    sync percentiles" "$1" && grep -q "issued rwts: total=0,256,0,63 " "$1"' _ "$TMP/a.out"

# at iodepth=8 the writes in flight complete before each FLUSH: still 63
job "$TMP/a.dat" fsync=4 ioengine=io_uring iodepth=8 >"$TMP/q.fio"
r=$(run "$TMP/q.fio")
check "fsync=4 at iodepth=8: 63 flushes ($r)" test "${r##* }" = 63

# fdatasync=8 and sync_file_range=write:16: flushes, not in total_ios (fio's)
job "$TMP/a.dat" fdatasync=8 >"$TMP/d.fio"
r=$(run "$TMP/d.fio")
check "fdatasync=8: 31 flushes and latencies, total_ios 0 as fio's ($r)" test "$r" = "0 31 256 31"
job "$TMP/a.dat" sync_file_range=wait_before,write,wait_after:16 >"$TMP/s.fio"
r=$(run "$TMP/s.fio")
check "sync_file_range=...:16: 15 flushes ($r)" test "$r" = "0 15 256 15"
if command -v fio >/dev/null; then
	f=$(fiorun "$TMP/d.fio")
	check "fdatasync=8: fio's counts the same ($f)" test "$f" = "0 31 256"
	f=$(fiorun "$TMP/s.fio")
	check "sync_file_range=...:16: fio's counts the same ($f)" test "$f" = "0 15 256"
fi
expect_error "sync_file_range: a bad flag named" "sync_file_range=bogus:4: unknown flag 'bogus', allowed wait_before, write, wait_after" \
	bench --parse-only --sync_file_range=bogus:4
expect_error "sync_file_range: N 0 refused with its range" "N after ':' must be a number of writes, 1\\.\\." \
	bench --parse-only --sync_file_range=write:0

# end_fsync=1, fsync_on_close=1: one FLUSH, no sync statistics (fio's)
for o in end_fsync fsync_on_close; do
	job "$TMP/a.dat" "$o=1" >"$TMP/e.fio"
	r=$(run "$TMP/e.fio")
	check "$o=1: one flush at the end, none in the statistics ($r)" test "$r" = "0 0 256 1"
done
# a read job: no sync (fio's should_fsync())
printf '[t]\nrw=read\nbs=4k\nsize=1m\nioengine=psync\nfilename=%s\nend_fsync=1\nfsync=4\n' "$TMP/a.dat" >"$TMP/r.fio"
r=$(run "$TMP/r.fio")
check "a read job with fsync=4, end_fsync=1: no flush ($r)" test "$r" = "0 0 0 0"

# on ram, through the block layer as well
r=$("$BLKSTACK" bench --dev=ram --size=1m --rw=randwrite --bs=4k --fsync=16 --output-format=json 2>/dev/null |
	jq -r '.jobs[0] | "\(.sync.total_ios) \(.blkstack.requests.flush)"')
check "ram, randwrite fsync=16: 15 syncs, 15 device flushes ($r)" test "$r" = "15 15"

# write_barrier=4: taken, the writes all done
job "$TMP/a.dat" write_barrier=4 >"$TMP/b.fio"
r=$(run "$TMP/b.fio")
check "write_barrier=4: 256 writes ($r)" test "$r" = "0 0 256 0"

# invalidate: a cached file, read with O_DIRECT (which leaves the cache as
# it is): invalidate=1 and the default leave none of it cached, 0 all of it
if command -v fincore >/dev/null; then
	dd if=/dev/urandom of="$TMP/c.dat" bs=1M count=4 status=none
	cached() { fincore -b -n -o RES "$TMP/c.dat" | tr -d ' '; }
	rd() { "$BLKSTACK" bench --name=r --filename="$TMP/c.dat" --rw=randread --bs=4k \
		--size=4m --direct=1 --ioengine=psync "$@" >/dev/null 2>&1; }
	for v in 0 1 default; do
		cat "$TMP/c.dat" >/dev/null
		before=$(cached)
		if [ $v = default ]; then rd; else rd --invalidate=$v; fi
		rc=$? after=$(cached)
		if [ $v = 0 ]; then want=4194304; else want=0; fi
		check "invalidate=$v: exit 0, $before bytes cached before, $after after (want $want)" \
			test "$rc" = 0 -a "$before" = 4194304 -a "$after" = "$want"
	done
	rd --pre_read=1
	check "pre_read=1 on an uncached file: the file cached after an O_DIRECT read job ($(cached))" \
		test "$(cached)" = 4194304
	if command -v fio >/dev/null; then
		cat "$TMP/c.dat" >/dev/null
		fio --name=r --filename="$TMP/c.dat" --rw=randread --bs=4k --size=4m --direct=1 \
			--ioengine=psync >/dev/null 2>&1
		check "fio's default invalidate drops it too ($(cached))" test "$(cached)" = 0
	fi
else
	echo "ok - # SKIP invalidate, pre_read: fincore (util-linux) missing"
fi

# overwrite=1: a new file written out (all its blocks allocated); without, sparse
"$BLKSTACK" bench --name=o --filename="$TMP/o.dat" --rw=randwrite --bs=4k --size=1m \
	--io_size=4k --overwrite=1 >/dev/null 2>&1
check "overwrite=1: exit 0, a new 1 MiB file with 1024 KiB allocated ($(du -k "$TMP/o.dat" | cut -f1))" \
	test "$?" = 0 -a "$(du -k "$TMP/o.dat" | cut -f1)" -ge 1024
"$BLKSTACK" bench --name=o --filename="$TMP/p.dat" --rw=randwrite --bs=4k --size=1m \
	--io_size=4k >/dev/null 2>&1
check "overwrite=0: the new file sparse ($(du -k "$TMP/p.dat" | cut -f1) KiB)" \
	test "$(du -k "$TMP/p.dat" | cut -f1)" -lt 1024
# create_only=1: the file made, no I/O (fio's)
r=$("$BLKSTACK" bench --name=o --filename="$TMP/co.dat" --rw=write --bs=4k --size=1m \
	--create_only=1 --end_fsync=1 --output-format=json 2>/dev/null |
	jq -c '[.jobs[0].write.total_ios, .jobs[0].blkstack.requests.write, .jobs[0].blkstack.requests.flush]')
check "create_only=1: a 1 MiB file, no request ($r)" \
	test "$r" = "[0,0,0]" -a "$(stat -c %s "$TMP/co.dat" 2>/dev/null)" = 1048576
if command -v fio >/dev/null; then
	r=$(fio --name=o --filename="$TMP/fco.dat" --rw=write --bs=4k --size=1m --create_only=1 \
		--output-format=json 2>/dev/null | jq '.jobs[0].write.total_ios')
	check "create_only=1: fio the same ($r, $(stat -c %s "$TMP/fco.dat" 2>/dev/null))" \
		test "$r" = 0 -a "$(stat -c %s "$TMP/fco.dat" 2>/dev/null)" = 1048576
fi
# file_append=1: the job writes after the file's end, the file's data kept (fio's)
head -c 65536 /dev/urandom >"$TMP/ap.dat"
cp "$TMP/ap.dat" "$TMP/ap.orig"
r=$("$BLKSTACK" bench --name=a --filename="$TMP/ap.dat" --rw=write --bs=4k --size=64k \
	--file_append=1 --output-format=json 2>/dev/null | jq -c '.jobs[0] | [.error, .write.io_bytes]')
check "file_append=1: 64 KiB written after a 64 KiB file ($r): 128 KiB, the first 64 KiB kept, the rest written" \
	bash -c '[ "$1" = "[0,65536]" ] && [ "$(stat -c %s "$2")" = 131072 ] && cmp -s -n 65536 "$2" "$3" &&
		! cmp -s -n 65536 -i 65536 "$2" /dev/zero' _ "$r" "$TMP/ap.dat" "$TMP/ap.orig"
if command -v fio >/dev/null; then
	cp "$TMP/ap.orig" "$TMP/fap.dat"
	fio --name=a --filename="$TMP/fap.dat" --rw=write --bs=4k --size=64k --file_append=1 >/dev/null 2>&1
	check "file_append=1: fio's file 128 KiB too ($(stat -c %s "$TMP/fap.dat"))" test "$(stat -c %s "$TMP/fap.dat")" = 131072
fi
"$BLKSTACK" bench --parse-only --cgroup_nodelete=1 >/dev/null 2>&1
check "cgroup_nodelete=1: taken" test $? = 0

# write_iolog=: fio's iolog version 3
"$BLKSTACK" bench --name=w --filename="$TMP/l.dat" --rw=write --bs=4k --size=64k --fsync=8 \
	--write_iolog="$TMP/b.log" >/dev/null 2>&1
check "write_iolog: the header, add, open, 16 writes, 1 sync, close" \
	bash -c '[ "$(head -1 "$1")" = "fio version 3 iolog" ] && [ "$(grep -c " write " "$1")" = 16 ] &&
		[ "$(grep -c " sync 0 0$" "$1")" = 1 ] && tail -1 "$1" | grep -q " close$"' _ "$TMP/b.log"
if command -v fio >/dev/null; then
	fio --name=w --filename="$TMP/l.dat" --rw=write --bs=4k --size=64k --fsync=8 \
		--write_iolog="$TMP/f.log" >/dev/null 2>&1
	# the lines less their times; fio logs a sync's offset as the last I/O's
	strip() { cut -d' ' -f2- "$1" | sed 's/ sync [0-9]* 0$/ sync 0 0/'; }
	check "write_iolog: a sequential job's log is fio's, line for line but the times" \
		cmp <(strip "$TMP/b.log") <(strip "$TMP/f.log")
	# verify=: the verify phase's reads are logged, as fio's
	for p in "$BLKSTACK bench" fio; do
		$p --name=v --filename="$TMP/v.dat" --rw=write --bs=4k --size=32k --verify=crc32c --verify_state_save=0 \
			--write_iolog="$TMP/v.$(basename ${p% *}).log" >/dev/null 2>&1
		rm -f "$TMP/v.dat"
	done
	check "write_iolog with verify=crc32c: 8 writes and 8 verify reads, as fio's log" \
		bash -c '[ "$(grep -c " write " "$1")" = 8 ] && [ "$(grep -c " read " "$1")" = 8 ] &&
			[ "$(grep -c " read " "$2")" = 8 ]' _ "$TMP/v.blkstack.log" "$TMP/v.fio.log"
	# fio replays blkstack's log of a random mix: the same I/Os
	"$BLKSTACK" bench --name=m --filename="$TMP/m.dat" --rw=randrw --bs=4k --size=256k --fsync=4 \
		--write_iolog="$TMP/m.log" --output-format=json 2>/dev/null |
		jq -c '.jobs[0] | [.read.total_ios, .write.total_ios, .sync.total_ios]' >"$TMP/m.b"
	fio --name=r --read_iolog="$TMP/m.log" --output-format=json 2>/dev/null |
		jq -c '.jobs[0] | [.read.total_ios, .write.total_ios, .sync.total_ios]' >"$TMP/m.f"
	check "fio's read_iolog replays blkstack's log: $(cat "$TMP/m.f") reads, writes, syncs as blkstack's $(cat "$TMP/m.b")" \
		bash -c '[ -s "$1" ] && cmp "$1" "$2"' _ "$TMP/m.b" "$TMP/m.f"
fi

# read_iolog=: blkstack replays fio's log
if command -v fio >/dev/null; then
	fio --name=w --filename="$TMP/r.dat" --rw=randrw --bs=4k --size=256k --fsync=4 \
		--write_iolog="$TMP/r.log" --output-format=json 2>/dev/null |
		jq -c '.jobs[0] | [.read.total_ios, .write.total_ios, .sync.total_ios]' >"$TMP/r.f"
	last=$(tail -2 "$TMP/r.log" | head -1 | cut -d' ' -f1)
	first=$(sed -n 2p "$TMP/r.log" | cut -d' ' -f1)
	"$BLKSTACK" bench --name=r --read_iolog="$TMP/r.log" --output-format=json 2>/dev/null |
		jq -c '.jobs[0] | [.read.total_ios, .write.total_ios, .sync.total_ios], .job_runtime, .blkstack.requests.flush' >"$TMP/r.b"
	check "read_iolog: fio's log replayed: reads, writes, syncs $(head -1 "$TMP/r.b") as fio's $(cat "$TMP/r.f"), a flush each" \
		bash -c '[ -s "$2" ] && [ "$(head -1 "$1")" = "$(cat "$2")" ] && [ "$(sed -n 3p "$1")" = "$(jq ".[2]" "$2")" ]' _ "$TMP/r.b" "$TMP/r.f"
	ms=$(sed -n 2p "$TMP/r.b") want=$(( (last - first) / 1000 ))
	check "read_iolog: at the log's times: $ms ms for a log of $want ms" \
		test "$ms" -ge $((want * 9 / 10))
	# and blkstack's own log of it, replayed by fio
	"$BLKSTACK" bench --name=r --read_iolog="$TMP/r.log" --replay_no_stall=1 --write_iolog="$TMP/x.log" \
		>/dev/null 2>"$TMP/x.err"
	check "read_iolog overrides write_iolog (a note), as in fio" \
		bash -c 'grep -q "read_iolog overrides write_iolog" "$1" && [ ! -e "$2" ]' _ "$TMP/x.err" "$TMP/x.log"
fi
# a version 2 log: a wait of 200 ms, then replay_redirect, replay_scale, replay_align
printf 'fio version 2 iolog\n/nonexistent/a add\n/nonexistent/a open\n/nonexistent/a write 8192 4096\n/nonexistent/a wait 200000 0\n/nonexistent/a read 20480 4096\n/nonexistent/a sync 0 0\n/nonexistent/a close\n' >"$TMP/v2.log"
"$BLKSTACK" bench --name=v --read_iolog="$TMP/v2.log" --replay_redirect="$TMP/v2.dat" \
	--replay_scale=2 --replay_align=8k --write_iolog=/dev/null --output-format=json 2>/dev/null |
	jq -c '.jobs[0] | [.read.total_ios, .write.total_ios, .sync.total_ios, .job_runtime >= 190]' >"$TMP/v2.b"
check "read_iolog version 2, replay_redirect: 1 read, 1 write, 1 sync, after the 200 ms wait ($(cat "$TMP/v2.b"))" \
	test "$(cat "$TMP/v2.b")" = "[1,1,1,true]"
check "replay_redirect: the I/O on its file ($(stat -c %s "$TMP/v2.dat" 2>/dev/null) bytes)" test -s "$TMP/v2.dat"
# offsets 8192/2 = 4096 -> 0 aligned to 8k, 20480/2 = 10240 -> 8192: the write at 0
check "replay_scale=2, replay_align=8k: the write landed at offset 0" \
	bash -c '! cmp -s -n 4096 "$1" /dev/zero' _ "$TMP/v2.dat"
# version 3 times: 300 ms between two writes; replay_no_stall=1 does not wait
printf 'fio version 3 iolog\n0 %s add\n5 %s open\n10 %s write 0 4096\n300010 %s write 4096 4096\n300020 %s close\n' \
	"$TMP/t.dat" "$TMP/t.dat" "$TMP/t.dat" "$TMP/t.dat" "$TMP/t.dat" >"$TMP/t.log"
for ns in 0 1; do
	ms=$("$BLKSTACK" bench --name=t --read_iolog="$TMP/t.log" --replay_no_stall=$ns --output-format=json 2>/dev/null |
		jq '.jobs[0] | select(.write.total_ios == 2) | .job_runtime')
	if [ $ns = 0 ]; then
		check "read_iolog version 3: the second write 300 ms after the first (${ms:-no result} ms)" test "${ms:-0}" -ge 290
	else
		check "replay_no_stall=1: no wait (${ms:-no result} ms)" test -n "$ms" -a "${ms:-999}" -lt 100
	fi
done
printf 'not a log\n' >"$TMP/bad.log"
expect_error "read_iolog: not a log, named" "read_iolog=.*bad.log: not a fio iolog" \
	bench --parse-only --name=b --read_iolog="$TMP/bad.log"
printf 'fio version 3 iolog\n1 a add\n2 b add\n' >"$TMP/two.log"
expect_error "read_iolog: two files without replay_redirect refused, the line named" "two.log:3: a second file, b" \
	bench --parse-only --name=b --read_iolog="$TMP/two.log"
finish
