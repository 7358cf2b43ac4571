#!/usr/bin/env bash
# Is `blkstack bench --ab` right?  RUNS A/B runs of the same configuration
# twice (A/A: every headline metric must say "within noise") and RUNS of a
# planted difference (B spins 5 % longer per request in null's queue_rq,
# --spin_nsec=10000 against 10500: CPU per I/O must say "worse", and no
# headline metric "better").  The promise (docs/lab.md): at least 19 of 20
# of each.  Prints each run's verdicts, then the counts.
#
# usage: bench/ab-validate.sh [runs=20] [runtime=100ms] [budget_s=20]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        AB_EXTRA="--ab_order=random" (added to every A/B command)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNS=${1:-20}
RUNTIME=${2:-100ms}
BUDGET=${3:-20}
BLKSTACK=${BLKSTACK:-build/blkstack}
AB_EXTRA=${AB_EXTRA:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
command -v jq >/dev/null || { echo "jq is not installed: scripts/install-deps.sh" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null
bench_machine_start jq

WL="--dev=null --rw=randread --bs=4k --iodepth=32 --runtime=$RUNTIME --time_based"
BASE=--spin_nsec=10000
PLANT=--spin_nsec=10500
echo "workload: $WL"
echo "A/A: --ab=$BASE twice; planted: --ab=$BASE --ab=$PLANT; ab_budget=$BUDGET s${AB_EXTRA:+; $AB_EXTRA}"

# ab OUT SIDE_B: one A/B run, its JSON in OUT
ab() {
	# shellcheck disable=SC2086
	bench_cmd timeout -k 10 $((BUDGET * 2 + 60)) "$BLKSTACK" bench --ab="$BASE" --ab="$2" $WL \
		--ab_budget="$BUDGET" $AB_EXTRA --output-format=json >"$1"
}

# verdicts FILE: "metric=verdict(diff [lo, hi])" for every metric, headline ones marked *
verdicts() {
	jq -r '.ab as $a | [$a.metrics[] |
		"\(.name)\(if .headline then "*" else "" end)=\(.verdict)(\(.diff_pct * 100 | round / 100) [\(.ci_low_pct // "-" | if type == "number" then (. * 100 | round / 100) else . end), \(.ci_high_pct // "-" | if type == "number" then (. * 100 | round / 100) else . end)])"] |
		"rounds=\($a.rounds) stopped=\($a.stopped) " + join(" ")' "$1"
}

aa_ok=0 aa_all=0 pl_ok=0 pl_iops=0 pl_lat=0 pl_wrong=0
for i in $(seq "$RUNS"); do
	ab "$TMP/aa.json" "$BASE"
	echo "A/A $i: $(verdicts "$TMP/aa.json")"
	jq -e '[.ab.metrics[] | select(.headline) | .verdict == "within noise"] | all' "$TMP/aa.json" >/dev/null &&
		aa_ok=$((aa_ok + 1))
	jq -e '[.ab.metrics[] | .verdict == "within noise"] | all' "$TMP/aa.json" >/dev/null &&
		aa_all=$((aa_all + 1))
	ab "$TMP/pl.json" "$PLANT"
	echo "planted $i: $(verdicts "$TMP/pl.json")"
	v() { jq -r --arg m "$1" '.ab.metrics[] | select(.name == $m) | .verdict' "$TMP/pl.json"; }
	wrong=$(jq '[.ab.metrics[] | select(.headline) | select(.verdict == "better")] | length' "$TMP/pl.json")
	[ "$wrong" -eq 0 ] || pl_wrong=$((pl_wrong + 1))
	[ "$(v cpu_per_io)" = worse ] && [ "$wrong" -eq 0 ] && pl_ok=$((pl_ok + 1))
	[ "$(v iops)" = worse ] && pl_iops=$((pl_iops + 1))
	[ "$(v lat_mean)" = worse ] && pl_lat=$((pl_lat + 1))
done

echo
echo "A/A, every headline metric within noise:         $aa_ok of $RUNS (promise: 19 of 20)"
echo "A/A, every metric (percentiles too) within noise: $aa_all of $RUNS"
echo "planted, CPU per I/O worse, no headline better:   $pl_ok of $RUNS (promise: 19 of 20)"
echo "planted, IOPS worse:                              $pl_iops of $RUNS"
echo "planted, mean latency worse:                      $pl_lat of $RUNS"
echo "planted, some headline metric better (wrong way): $pl_wrong of $RUNS"
bench_machine_end
