#!/usr/bin/env bash
# fio's sync options on a job's own file (dev=uring) and on ram, beside fio
# doing the same: fsync=N, fdatasync=N and sync_file_range=FLAGS:N send a
# FLUSH through the block layer once N writes have been issued (fio's
# count: none after the last write, so 256 writes at fsync=4 make 63), the
# device's flush counter says so, and the report has fio's sync statistics
# (the JSON "sync" object's keys as fio's, total_ios only for fsync=, as
# fio's); end_fsync=1 and fsync_on_close=1 send one FLUSH at the end, not
# counted in the sync statistics (fio's); write_barrier=N is taken.
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
finish
