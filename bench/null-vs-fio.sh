#!/usr/bin/env bash
# blkstack bench --dev=null against fio --ioengine=null, same workload, same
# run: 4 KiB random reads at QD32, one job.  Rounds alternate the two so that
# machine noise hits both; the medians and their ratio are printed.  Then
# instructions per I/O under callgrind (stable across noisy machines): whole
# process, and the block core alone (blk_submit + blk_finish_plug + blk_poll,
# minus the driver's queue_rq and the bench's completion callback), with and
# without per-I/O latency accounting.
#
# usage: bench/null-vs-fio.sh [runtime_s=3] [rounds=5]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        BASE=path/to/another/blkstack: its instructions per I/O too, in the
#        same run (a change that must not cost the plain path)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNTIME=${1:-3}
ROUNDS=${2:-5}
BLKSTACK=${BLKSTACK:-build/blkstack}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for c in fio jq; do
	command -v "$c" >/dev/null || { echo "$c is not installed: scripts/install-deps.sh" >&2; exit 1; }
done
[ -x "$BLKSTACK" ] || make build >/dev/null
bench_machine_start fio valgrind

WL="--rw=randread --bs=4k --iodepth=32 --numjobs=1 --size=1G --runtime=$RUNTIME --time_based"


fio_iops() {
	# shellcheck disable=SC2086
	bench_cmd fio --name=null --ioengine=null $WL --output-format=json "$@" | jq '.jobs[0].read.iops'
}
blk_iops() {
	# shellcheck disable=SC2086
	bench_cmd "$BLKSTACK" bench --dev=null $WL --output-format=json "$@" | jq '.jobs[0].read.iops'
}

echo "workload: $WL"
echo "rounds: $ROUNDS, alternating fio and blkstack"
for _ in $(seq "$ROUNDS"); do
	fio_iops >>"$TMP/fio"
	blk_iops >>"$TMP/blk"
	fio_iops --gtod_reduce=1 >>"$TMP/fio_gr"
	blk_iops --gtod_reduce=1 >>"$TMP/blk_gr"
	blk_iops --gtod_reduce=1 --iostats=0 >>"$TMP/blk_nostat"
done
F=$(median <"$TMP/fio")
B=$(median <"$TMP/blk")
FG=$(median <"$TMP/fio_gr")
BG=$(median <"$TMP/blk_gr")
BN=$(median <"$TMP/blk_nostat")
printf '\n%-44s %14s %14s %8s\n' "median IOPS" "fio null" "blkstack null" "ratio"
printf '%-44s %14.0f %14.0f %7.2fx\n' "default (latency accounting on)" "$F" "$B" "$(calc "$B / $F")"
printf '%-44s %14.0f %14.0f %7.2fx\n' "gtod_reduce=1 (no timestamps)" "$FG" "$BG" "$(calc "$BG / $FG")"
printf '%-44s %14s %14.0f %7.2fx\n' "gtod_reduce=1 iostats=0 (no core stats)" "-" "$BN" "$(calc "$BN / $FG")"
printf 'cost of latency accounting, blkstack: %.2f ns per I/O; fio: %.2f ns per I/O\n' \
	"$(calc "1e9 / $B - 1e9 / $BG")" "$(calc "1e9 / $F - 1e9 / $FG")"

# --- instructions per I/O under callgrind -------------------------------
command -v valgrind >/dev/null || { echo "valgrind is not installed: scripts/install-deps.sh" >&2; exit 1; }
IOS_SIZE=256M # 65536 I/Os, size-based so the count is exact

# incl FUNC FILE: inclusive Ir of all calls to a function, summed over its
# call edges ("=> file:FUNC (Nx)" lines).  The per-function totals are not
# used: callgrind_annotate splits a function's cost by the file each inlined
# line came from, so they depend on where it runs.
incl() {
	(cd / && callgrind_annotate --threshold=100 --inclusive=yes --tree=calling "$2" 2>/dev/null) |
		awk -v f=":$1 [(]" '$0 ~ "=>" && $0 ~ f {gsub(",", "", $1); s += $1} END{print s + 0}'
}

cg_run() {
	local label=$1 out=$TMP/cg.$RANDOM
	shift
	# shellcheck disable=SC2086
	bench_cmd valgrind --tool=callgrind --callgrind-out-file="$out" "$BLKSTACK" bench --dev=null \
		--rw=randread --bs=4k --iodepth=32 --size=$IOS_SIZE --output-format=json "$@" \
		>"$TMP/cg.json" 2>/dev/null
	local ios total submit plug poll drv cb core
	ios=$(jq '.jobs[0].read.total_ios' "$TMP/cg.json")
	total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	submit=$(incl blk_submit "$out")
	plug=$(incl blk_finish_plug "$out")
	poll=$(incl blk_poll "$out")
	drv=$(incl null_queue_rq "$out")
	cb=$(incl job_end_io "$out")
	core=$((submit + plug + poll - drv - cb))
	echo "$total $ios" >"$TMP/cg.raw"	# BASE's comparison below
	printf '%-44s %10.0f %10.0f %10.0f\n' "$label" \
		"$(calc "$total / $ios")" "$(calc "($core + $drv) / $ios")" "$(calc "$core / $ios")"
}

printf '\n%-44s %10s %10s %10s\n' "instructions per I/O (callgrind)" "process" "core+null" "core"
cg_run "default"
cg_run "gtod_reduce=1" --gtod_reduce=1
cg_run "gtod_reduce=1 iostats=0" --gtod_reduce=1 --iostats=0
if [ -n "${BASE:-}" ]; then
	# the default row for BASE, then this binary's again, and their ratio
	SELF=$BLKSTACK
	BLKSTACK=$BASE
	cg_run "default, BASE ($BASE)"
	base=$(awk '{ printf "%.2f", $1 / $2 }' "$TMP/cg.raw")
	BLKSTACK=$SELF
	cg_run "default, this binary again"
	self=$(awk '{ printf "%.2f", $1 / $2 }' "$TMP/cg.raw")
	printf 'process instructions per I/O: %s, BASE %s: %.2f %%\n' "$self" "$base" \
		"$(calc "($self - $base) * 100 / $base")"
fi
echo
echo "process: everything, bench engine included (random map, job accounting)"
echo "core+null: blk_submit + blk_finish_plug + blk_poll, null_queue_rq included, bench callback excluded"
echo "core: the same without the driver's queue_rq"
bench_machine_end
