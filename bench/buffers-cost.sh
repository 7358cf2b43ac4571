#!/usr/bin/env bash
# What fio's write buffer options cost blkstack bench, in instructions per
# I/O under callgrind (stable on a busy machine), on dev=null so that the
# fill is most of what changes:
#  - 4 KiB random reads at QD32, the simple path, for this binary and a
#    base one (BASE=path, e.g. main's build before the options came):
#    reads never fill, so the two must agree;
#  - 4 KiB random writes at QD32 for each way of filling, this binary,
#    the base one's default (no scramble then), and fio --ioengine=null
#    --thread with the same options, so that each cost has fio's beside it.
#
# usage: bench/buffers-cost.sh
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        BASE=path/to/blkstack before the change (optional)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BLKSTACK=${BLKSTACK:-build/blkstack}
BASE=${BASE:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

bench_need fio jq valgrind callgrind_annotate
[ -x "$BLKSTACK" ] || make build >/dev/null
bench_machine_start fio valgrind

# cg BIN DIR SIZE ARGS...: instructions per I/O of a whole blkstack process
cg() {
	local bin=$1 dir=$2 size=$3 out=$TMP/cg.$RANDOM ios total
	shift 3
	bench_cmd valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" bench --dev=null \
		--rw="$dir" --bs=4k --iodepth=32 --size="$size" --output-format=json "$@" \
		>"$TMP/cg.json" 2>/dev/null
	ios=$(jq ".jobs[0].$([ "${dir#rand}" = read ] && echo read || echo write).total_ios" "$TMP/cg.json")
	total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	calc "$total / $ios"
}
# busiest OUT: the instructions of the busiest thread of a
# --separate-threads=yes run (OUT-01, OUT-02, ...): the job's thread
busiest() {
	local f max=0 n
	for f in "$1"-*; do
		n=$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
		[ "${n:-0}" -le "$max" ] || max=$n
	done
	echo "$max"
}
# cgw BIN SIZE ARGS...: random writes, instructions per I/O of the job's
# thread; BIN "fio": fio's null engine, --thread (its main thread waits in
# usleep loops, whose count depends on the run's length: left out, as the
# thread that runs blkstack's main is)
cgw() {
	local bin=$1 size=$2 out=$TMP/cgw.$RANDOM ios
	shift 2
	if [ "$bin" = fio ]; then
		bench_cmd valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out" \
			fio --name=w --thread --ioengine=null --rw=randwrite --bs=4k --iodepth=32 \
			--size="$size" --output-format=json "$@" >"$TMP/cgw.json" 2>/dev/null
	else
		bench_cmd valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out" \
			"$bin" bench --dev=null --rw=randwrite --bs=4k --iodepth=32 \
			--size="$size" --output-format=json "$@" >"$TMP/cgw.json" 2>/dev/null
	fi
	ios=$(jq '.jobs[0].write.total_ios' "$TMP/cgw.json")
	calc "$(busiest "$out") / $ios"
}

echo "null randread 4 KiB QD32, 65536 I/Os: instructions per I/O (whole process)"
if [ -n "$BASE" ]; then
	for r in 1 2; do
		b=$(cg "$BASE" randread 256M)
		n=$(cg "$BLKSTACK" randread 256M)
		printf '  round %d: base %.2f  this %.2f  (%+.3f %%)\n' "$r" "$b" "$n" "$(calc "($n - $b) / $b * 100")"
	done
else
	printf '  this %.2f (BASE= not given: nothing to compare)\n' "$(cg "$BLKSTACK" randread 256M)"
fi

echo
echo "null randwrite 4 KiB QD32, 16384 I/Os: instructions per I/O of the job's thread"
printf '  %-46s %10s %10s\n' "buffers" "blkstack" "fio"
row() {
	local label=$1
	shift
	printf '  %-46s %10.0f %10.0f\n' "$label" "$(cgw "$BLKSTACK" 64M "$@")" "$(cgw fio 64M "$@")"
}
[ -z "$BASE" ] || printf '  %-46s %10.0f %10s\n' "base binary (filled once, no scramble)" "$(cgw "$BASE" 64M)" "-"
row "default (filled once, scramble_buffers=1)"
row "scramble_buffers=0" --scramble_buffers=0
row "zero_buffers" --zero_buffers
row "refill_buffers (random each write)" --refill_buffers
row "buffer_compress_percentage=50" --buffer_compress_percentage=50
row "dedupe_percentage=30" --dedupe_percentage=30
row "buffer_pattern=0xdeadbeef refill_buffers" --buffer_pattern=0xdeadbeef --refill_buffers
bench_machine_end
