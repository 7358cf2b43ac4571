#!/usr/bin/env bash
# What fio's report options and the IO depth counts cost in the I/O loop,
# in instructions per I/O under callgrind (deterministic, whole process),
# 4 KiB randread on null, QD32, size-based so the I/O count is exact:
#   base      another blkstack binary (BASE=), e.g. main's before the
#             depth counts and the report options
#   default   this build, fio's defaults
#   pct       lat_percentiles=1 slat_percentiles=1 percentile_list= of 20
#             (the report reads histograms the loop keeps anyway)
#   mixed     unified_rw_reporting=both
#   noslat    disable_slat=1 (the per-run path that skips a histogram)
# Each at two sizes (64k and 256k I/Os), so the fixed cost (options,
# report) and the per-I/O cost can be told apart.  Goal (issue 15): the
# default within 1 % of base per I/O.
#
# usage: bench/report-cost.sh
# env:   BLKSTACK=path (default build/blkstack), BASE=path (none: skipped)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BLKSTACK=${BLKSTACK:-build/blkstack}
BASE=${BASE:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
bench_need jq valgrind
[ -x "$BLKSTACK" ] || make build >/dev/null
bench_machine_start valgrind
[ -z "$BASE" ] || bench_field base "$BASE: $("$BASE" --version 2>/dev/null || echo "no --version")"

# per_io BIN SIZE [options...]: instructions per I/O of the whole process
per_io() {
	local bin=$1 size=$2 out=$TMP/cg.out ios total
	shift 2
	bench_cmd valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" bench --dev=null \
		--rw=randread --bs=4k --iodepth=32 --size="$size" --output-format=json "$@" \
		>"$TMP/cg.json" 2>/dev/null
	ios=$(jq '[.jobs[] | (.read // .mixed).total_ios] | add' "$TMP/cg.json")
	total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	calc "$total / $ios"
}

printf '%-10s %14s %14s %16s\n' "" "256M (64k I/Os)" "1G (256k I/Os)" "per-I/O part"
row() {
	local name=$1 bin=$2 a b
	shift 2
	a=$(per_io "$bin" 256M "$@")
	b=$(per_io "$bin" 1G "$@")
	# a = p + F/65536, b = p + F/262144: p = (4b - a) / 3
	printf '%-10s %14.2f %14.2f %16.2f\n' "$name" "$a" "$b" "$(calc "(4 * $b - $a) / 3")"
	echo "$name $a $b" >>"$TMP/rows"
}
[ -z "$BASE" ] || row base "$BASE"
row default "$BLKSTACK"
row pct "$BLKSTACK" --lat_percentiles=1 --slat_percentiles=1 \
	--percentile_list=1:2:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99:99.999:100
row mixed "$BLKSTACK" --unified_rw_reporting=both
row noslat "$BLKSTACK" --disable_slat=1
if [ -n "$BASE" ]; then
	awk '$1 == "base" { a = $2; b = $3 } $1 == "default" { c = $2; d = $3 }
	     END { printf "\ndefault vs base: %+.2f %% at 64k I/Os, %+.2f %% at 256k I/Os\n",
		   (c - a) * 100 / a, (d - b) * 100 / b }' "$TMP/rows"
fi
bench_machine_end
