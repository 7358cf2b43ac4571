#!/usr/bin/env bash
# zonemode=zbd: fio 3.33's zones emulated on a device that is not zoned,
# compared with fio itself on regular files (which fio zones the same
# way): the offsets of every I/O (latency logs with log_offset=1) and
# the zone resets of sequential jobs, identical; random writes always at
# a write pointer and within max_open_zones (zbd_check.awk, run on fio's
# logs too); reads of written data only; the stock fio-examples
# zbd-rand-write, zbd-seq-read and xnvme-zoned, on dev=ram and on files.
source "$(dirname "$0")/lib.sh" "$@"

if ! command -v fio >/dev/null; then
	fail "fio is not installed (scripts/install-deps.sh installs it)"
	finish
	exit
fi
ZC=$(dirname "$0")/zbd_check.awk
EX=/usr/share/doc/fio/examples
MiB=1048576

# zcheck LOG ZONESIZE CAPACITY: "writes reads bad resets max-partly-written"
zcheck() { awk -v zs="$2" -v cap="$3" -f "$ZC" "$1"; }
# the "N zone resets" of a text report
resets() { grep -o '[0-9]* zone resets' "$1" | awk '{ s += $1 } END { print s + 0 }'; }
# ddir, length and offset of every I/O of a latency log
offs() { awk -F', *' '{ print $3, $4, $5 }' "$1"; }

# pair NAME ARGS...: one job on an 8 MiB file, psync, by fio and blkstack;
# leaves $TMP/{fio,blk}.txt and the logs $TMP/{f,b}_lat.1.log
pair() {
	rm -f "$TMP"/f.img "$TMP"/b.img "$TMP"/[fb]_lat.*.log
	truncate -s 8m "$TMP/f.img" "$TMP/b.img"
	fio --name=x --filename="$TMP/f.img" --ioengine=psync --write_lat_log="$TMP/f" \
		--log_offset=1 --zonemode=zbd --zonesize=1m --bs=64k "$@" >"$TMP/fio.txt" 2>&1
	"$BLKSTACK" bench --name=x --filename="$TMP/b.img" --ioengine=psync \
		--write_lat_log="$TMP/b" --log_offset=1 --zonemode=zbd --zonesize=1m --bs=64k \
		"$@" >"$TMP/blk.txt" 2>&1
}

# sequential writes: every offset and each zone reset as fio's
for args in "--rw=write --size=8m --loops=2" \
	    "--rw=write --size=8m --zonecapacity=768k" \
	    "--rw=write --size=8m --zonecapacity=768k --loops=2" \
	    "--rw=write --size=8m --zonecapacity=700k" \
	    "--rw=write --size=8m --io_size=20m --zonecapacity=768k" \
	    "--rw=write --size=4m --io_size=1536k --loops=3" \
	    "--rw=write --offset=100k --size=4m" \
	    "--rw=write --size=4m --zone_reset_frequency=0.25"; do
	# shellcheck disable=SC2086
	pair $args
	n=$(offs "$TMP/b_lat.1.log" | wc -l)
	check "seq ($args): the offsets of fio's $(offs "$TMP/f_lat.1.log" | wc -l) I/Os ($n)" \
		test "$n" -gt 0 -a "$(offs "$TMP/b_lat.1.log")" = "$(offs "$TMP/f_lat.1.log")"
	check "seq ($args): fio's $(resets "$TMP/fio.txt") zone resets ($(resets "$TMP/blk.txt"))" \
		test "$(resets "$TMP/blk.txt")" = "$(resets "$TMP/fio.txt")"
done
pair --rw=write --offset=100k --size=4m
check "offset=100k: rounded up to the zone, as fio says" \
	grep -q "rounded up offset from 102400 to 1048576" "$TMP/blk.txt"
pair --rw=write --size=4m --zone_reset_frequency=0.25
check "zone_reset_frequency=0.25: 16 resets in 64 writes ($(resets "$TMP/blk.txt"))" \
	test "$(resets "$TMP/blk.txt")" = 16

# random writes: always at a write pointer, at most max_open_zones zones
# partly written; the checker passes fio's own log, and the resets it
# counts are the ones blkstack reports
for mo in 0 3; do
	pair --rw=randwrite --size=8m --io_size=64m --max_open_zones=$mo
	read -r fw _ fbad _ fopen <<<"$(zcheck "$TMP/f_lat.1.log" $MiB $MiB)"
	read -r bw _ bbad bres bopen <<<"$(zcheck "$TMP/b_lat.1.log" $MiB $MiB)"
	check "randwrite max_open_zones=$mo: fio's log checks out ($fw writes, $fbad off a write pointer)" \
		test "$fw" = 1024 -a "$fbad" = 0
	check "randwrite max_open_zones=$mo: every one of blkstack's $bw writes at a write pointer ($bbad not)" \
		test "$bw" = 1024 -a "$bbad" = 0
	if [ "$mo" = 3 ]; then
		check "randwrite max_open_zones=3: at most 3 zones written at once (fio $fopen, blkstack $bopen)" \
			test "$bopen" -le 3 -a "$fopen" -le 3
	fi
	check "randwrite max_open_zones=$mo: the $bres resets in the log are the report's" \
		test "$bres" = "$(resets "$TMP/blk.txt")" -a "$bres" -gt 0
done
# zonecapacity: never written past
pair --rw=randwrite --size=8m --io_size=32m --zonecapacity=640k --max_open_zones=2
read -r bw _ bbad _ bopen <<<"$(zcheck "$TMP/b_lat.1.log" $MiB 655360)"
check "randwrite zonecapacity=640k: $bw writes, each at a write pointer within the capacity ($bbad not), $bopen zones open at most" \
	test "$bw" = 512 -a "$bbad" = 0 -a "$bopen" -le 2

# write, then read: read_beyond_wp=0 reads only what was written
cat >"$TMP/wr.fio" <<'EOF'
[global]
filename=${F}
ioengine=psync
zonemode=zbd
zonesize=1m
bs=64k
size=4m
write_lat_log=${L}
log_offset=1

[w]
rw=write
io_size=1536k

[r]
stonewall
rw=read

[rr]
stonewall
rw=randread

[rw]
stonewall
rw=randwrite
io_size=2m
EOF
rm -f "$TMP"/[fb]_lat.*.log
truncate -s 4m "$TMP/f.img" "$TMP/b.img"
F=$TMP/f.img L=$TMP/f fio "$TMP/wr.fio" --output-format=json >"$TMP/fio.json" 2>/dev/null
F=$TMP/b.img L=$TMP/b "$BLKSTACK" bench "$TMP/wr.fio" --output-format=json >"$TMP/blk.json" 2>"$TMP/blk.err"
bytes() { jq -c '[.jobs[] | [.write.io_bytes, .read.io_bytes]]' "$1"; }
check "write then read: each job's bytes as fio's ($(bytes "$TMP/blk.json"))" \
	test "$(bytes "$TMP/blk.json")" = "$(bytes "$TMP/fio.json")"
check "sequential read after 1.5 MiB written: fio's offsets (the written data, then the end)" \
	test "$(offs "$TMP/b_lat.2.log")" = "$(offs "$TMP/f_lat.2.log")"
read -r _ br bbad _ _ <<<"$(cat "$TMP"/b_lat.[1234].log | zcheck /dev/stdin $MiB $MiB)"
check "random reads only of written data ($br reads, $bbad not), and the later writes at write pointers" \
	test "$br" = 88 -a "$bbad" = 0

# capacities below the zone: write 2 zones from the second, read them,
# write at the pointers the first left, read beyond them: fio's offsets
cat >"$TMP/wr2.fio" <<'EOF'
[global]
filename=${F}
ioengine=psync
zonemode=zbd
zonesize=1m
zonecapacity=640k
bs=64k
size=4m
write_lat_log=${L}
log_offset=1

[w]
rw=write
offset=1m
size=2m

[r]
stonewall
rw=read

[w2]
stonewall
rw=write
io_size=1m

[r2]
stonewall
rw=read
read_beyond_wp=1
EOF
rm -f "$TMP"/[fb]_lat.*.log
truncate -s 4m "$TMP/f.img" "$TMP/b.img"
F=$TMP/f.img L=$TMP/f fio "$TMP/wr2.fio" --output-format=json >"$TMP/fio.json" 2>/dev/null
F=$TMP/b.img L=$TMP/b "$BLKSTACK" bench "$TMP/wr2.fio" --output-format=json >"$TMP/blk.json" 2>"$TMP/blk.err"
for k in 1 2 3 4; do
	check "zonecapacity=640k, job $k of 4: fio's $(offs "$TMP/f_lat.$k.log" | wc -l) offsets" \
		test -s "$TMP/b_lat.$k.log" -a "$(offs "$TMP/b_lat.$k.log")" = "$(offs "$TMP/f_lat.$k.log")"
done

# queued I/O (libaio, iodepth=8; blkstack's uring): the same offsets, in
# the order completions come, and the same resets
rm -f "$TMP"/[fb]_lat.*.log
truncate -s 8m "$TMP/f.img" "$TMP/b.img"
zq="--name=x --ioengine=libaio --iodepth=8 --log_offset=1 --rw=write --zonemode=zbd --zonesize=1m --bs=64k --size=8m --loops=2 --zonecapacity=768k"
# shellcheck disable=SC2086
fio $zq --filename="$TMP/f.img" --write_lat_log="$TMP/f" >"$TMP/fio.txt" 2>&1
# shellcheck disable=SC2086
"$BLKSTACK" bench $zq --filename="$TMP/b.img" --write_lat_log="$TMP/b" >"$TMP/blk.txt" 2>&1
check "iodepth=8 sequential writes: fio's $(wc -l <"$TMP/f_lat.1.log") offsets (sorted)" \
	test -s "$TMP/b_lat.1.log" -a "$(offs "$TMP/b_lat.1.log" | sort)" = "$(offs "$TMP/f_lat.1.log" | sort)"
check "iodepth=8 sequential writes: fio's $(resets "$TMP/fio.txt") zone resets" \
	test "$(resets "$TMP/blk.txt")" = "$(resets "$TMP/fio.txt")"

# several threads on one device, queued I/O, one open zone each: every
# byte written (fio's threads, sharing its open-zone counts, sometimes
# find no zone and end early: its bytes are printed, not compared)
fio --name=x --filename="$TMP/f.img" --ioengine=libaio --iodepth=8 --numjobs=4 \
	--rw=randwrite --zonemode=zbd --zonesize=1m --bs=64k --size=4m --io_size=8m \
	--max_open_zones=4 --job_max_open_zones=1 --group_reporting --output-format=json \
	>"$TMP/fio.json" 2>/dev/null
"$BLKSTACK" bench --dev=ram --name=x --iodepth=8 --numjobs=4 --dev_size=4m \
	--rw=randwrite --zonemode=zbd --zonesize=1m --bs=64k --size=4m --io_size=8m \
	--max_open_zones=4 --job_max_open_zones=1 --group_reporting --output-format=json \
	>"$TMP/blk.json" 2>"$TMP/blk.err"
check "numjobs=4 iodepth=8 job_max_open_zones=1: 4 x 8 MiB written, zones reset (fio: $(jq .jobs[0].write.io_bytes "$TMP/fio.json") bytes)" \
	jq -e '.jobs[0].error == 0 and .jobs[0].write.io_bytes == 33554432 and .jobs[0].blkstack.zone_resets > 0' "$TMP/blk.json"

# fio's set-up errors
expect_error "zonecapacity above zonesize: fio's error" "zonecapacity 2097152 is larger than zone size 1048576" \
	bench --dev=ram --rw=write --size=4m --zonemode=zbd --zonesize=1m --zonecapacity=2m
expect_error "job_max_open_zones without max_open_zones: fio's error" \
	"'job_max_open_zones' cannot be used without a global open zones limit" \
	bench --dev=ram --rw=write --size=4m --zonemode=zbd --zonesize=1m --job_max_open_zones=2
expect_error "a device smaller than a zone: fio's error" "file/device size 1048576 is smaller than zone size 4194304" \
	bench --dev=ram --rw=write --size=1m --zonemode=zbd --zonesize=4m
expect_error "bs above zonesize: fio's error" "I/O buflen exceeds zone size" \
	bench --dev=ram --rw=write --size=4m --zonemode=zbd --zonesize=64k --bs=128k
expect_error "zonemode=zbd in the matrix: refused (each cell's zones would be empty)" \
	"zonemode=zbd: not with the matrix" bench --matrix --dev=ram --zonemode=zbd --zonesize=1m
expect_error "zonemode=zbd with bssplit: not supported" "zonemode=zbd with bssplit= or bsrange=: not supported" \
	bench --parse-only --rw=write --zonemode=zbd --zonesize=1m --bsrange=4k-64k

# the stock job files
timeout -s INT 2 "$BLKSTACK" bench --dev=ram --output-format=json "$EX/zbd-rand-write.fio" \
	>"$TMP/run.json" 2>"$TMP/run.err"
rc=$?
check "stock zbd-rand-write.fio on dev=ram: runs until SIGINT (rc=$rc)" test $rc -eq 124
check "stock zbd-rand-write.fio on dev=ram: 16 threads wrote, zones reset" \
	jq -e '.jobs[0].error == 0 and .jobs[0].write.io_bytes > 0 and .jobs[0].blkstack.threads == 16' "$TMP/run.json"
sed "s#^filename=.*#filename=$TMP/zrw.img#; s/^runtime=.*/runtime=1/" "$EX/zbd-rand-write.fio" >"$TMP/zrw.fio"
truncate -s 2g "$TMP/zrw.img"
"$BLKSTACK" bench "$TMP/zrw.fio" >"$TMP/blk.txt" 2>&1
rc=$?
check "zbd-rand-write.fio on a 2 GiB file (runtime=1): runs (rc=$rc), reporting zone resets" \
	grep -qE "write: IOPS=.*; [0-9]+ zone resets" "$TMP/blk.txt"
rm -f "$TMP/zrw.img"
"$BLKSTACK" bench --dev=ram --output-format=json "$EX/zbd-seq-read.fio" >"$TMP/run.json" 2>"$TMP/run.err"
rc=$?
check "stock zbd-seq-read.fio on dev=ram: nothing written, nothing read, done (rc=$rc), as fio" \
	jq -e '.jobs[0].error == 0 and .jobs[0].read.io_bytes == 0' "$TMP/run.json"
sed "s#^filename=.*#filename=$TMP/zsr.img#" "$EX/zbd-seq-read.fio" >"$TMP/zsr.fio"
truncate -s 151397597184 "$TMP/zsr.img"
fio "$TMP/zsr.fio" --output-format=json >"$TMP/fio.json" 2>/dev/null
"$BLKSTACK" bench "$TMP/zsr.fio" --output-format=json >"$TMP/blk.json" 2>"$TMP/blk.err"
check "zbd-seq-read.fio on an empty 141 GiB sparse file: fio's 0 bytes read ($(jq .jobs[0].read.io_bytes "$TMP/blk.json"))" \
	test "$(jq .jobs[0].read.io_bytes "$TMP/blk.json")" = "$(jq .jobs[0].read.io_bytes "$TMP/fio.json")"
rm -f "$TMP/zsr.img"
# xnvme-zoned.fio, as its README runs it: no zonesize=, fio's error
truncate -s 1g "$TMP/x.img"
fio "$EX/xnvme-zoned.fio" --section=default --ioengine=io_uring --filename="$TMP/x.img" >"$TMP/fio.txt" 2>&1
frc=$?
expect_error "xnvme-zoned.fio --section=default: fio's error (fio: rc=$frc)" \
	"Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd" \
	bench "$EX/xnvme-zoned.fio" --section=default --ioengine=io_uring --filename="$TMP/x.img"
check "xnvme-zoned.fio --section=default: fio fails the same way" grep -q "Specifying the zone size is mandatory" "$TMP/fio.txt"
rm -f "$TMP/x.img"
# with a zone size: 1 GiB written at QD1 and read back checked (crc32c)
"$BLKSTACK" bench "$EX/xnvme-zoned.fio" --section=default --dev=ram --zonesize=64m \
	--output-format=json >"$TMP/run.json" 2>"$TMP/run.err"
# (ramp_time=1: what the report counts of the writes depends on the speed)
check "xnvme-zoned.fio --zonesize=64m on dev=ram: 1 GiB written in zones, verified" \
	jq -e '.jobs[0].error == 0 and .jobs[0].blkstack.zone_resets == 0 and .jobs[0].blkstack.verify.mismatches == 0 and .jobs[0].blkstack.verify.blocks_verified == 262144' "$TMP/run.json"
finish
