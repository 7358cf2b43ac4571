#!/usr/bin/env bash
# Seed 003 rerun: the SCSI host lock and a queue run per completion (the
# midlayer before blk-mq) against none (blkstack's default, Linux since
# then), 4 KiB randread on scsi over ram, QD32, 1 and 2 jobs (one hardware
# queue each), alternating rounds, medians:
#   IOPS (all jobs), CPU us per I/O (the whole process), and per I/O the
#   host lock's acquisitions, contended acquisitions (the lock was held by
#   the other job) and ns waited for it.
# Seed 003's claim: with one lock per host, completions and submissions of
# different CPUs serialise on it, and the cost grows with the jobs.
#
# usage: bench/scsi-host-lock.sh [runtime_s=3] [rounds=5]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNTIME=${1:-3}
ROUNDS=${2:-5}
BLKSTACK=${BLKSTACK:-build/blkstack}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
command -v jq >/dev/null || { echo "jq is not installed: scripts/install-deps.sh" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null
bench_machine_start

WL="--dev=scsi --lower=ram --rw=randread --bs=4k --iodepth=32 --size=1G --gtod_reduce=1 --iostats=0"

run() { # run LOCK JOBS: append "IOPS cpu_us/IO acq/IO contended/IO wait_ns/IO"
	local t=$TMP/time j=$TMP/j.json
	# shellcheck disable=SC2086
	bench_cmd /usr/bin/time -f "%U %S" -o "$t" timeout -k 10 $((RUNTIME + 60)) "$BLKSTACK" bench $WL \
		--scsi_host_lock="$1" --numjobs="$2" --runtime="$RUNTIME" --time_based \
		--group_reporting=0 --output-format=json >"$j"
	jq -r --arg t "$(cat "$t")" '
		([.jobs[] | .read.iops] | add) as $iops |
		([.jobs[] | .read.total_ios] | add) as $ios |
		($t | split(" ") | map(tonumber) | add) as $cpu |
		(.jobs[0].blkstack.scsi.host_lock // {acquisitions: 0, contended: 0, wait_ns: 0}) as $l |
		"\($iops) \($cpu / $ios * 1e6) \($l.acquisitions / $ios) \($l.contended / $ios) \($l.wait_ns / $ios)"' \
		"$j" >>"$TMP/$1.$2"
}

echo "workload: $WL, --runtime=$RUNTIME"
echo "rounds: $ROUNDS, alternating host lock 0 and 1, at 1 and 2 jobs"
for _ in $(seq "$ROUNDS"); do
	for jobs in 1 2; do
		for lock in 0 1; do
			run "$lock" "$jobs"
		done
	done
done

col() { awk -v c="$1" '{print $c}' "$2" | median; }
printf '\n%-6s %-10s %12s %10s %10s %12s %12s\n' jobs host_lock IOPS "CPU us/IO" "acq/IO" "contended/IO" "wait ns/IO"
declare -A IOPS
for jobs in 1 2; do
	for lock in 0 1; do
		f=$TMP/$lock.$jobs
		IOPS[$lock.$jobs]=$(col 1 "$f")
		printf '%-6s %-10s %12.0f %10.3f %10.2f %12.3f %12.1f\n' "$jobs" "$lock" \
			"${IOPS[$lock.$jobs]}" "$(col 2 "$f")" "$(col 3 "$f")" "$(col 4 "$f")" "$(col 5 "$f")"
	done
	printf '%-6s %-10s %11.3fx   (IOPS, host lock on / off; rounds of off: %.0f..%.0f, of on: %.0f..%.0f)\n' \
		"$jobs" "on/off" "$(calc "${IOPS[1.$jobs]} / ${IOPS[0.$jobs]}")" \
		"$(awk '{print $1}' "$TMP/0.$jobs" | sort -g | head -1)" \
		"$(awk '{print $1}' "$TMP/0.$jobs" | sort -g | tail -1)" \
		"$(awk '{print $1}' "$TMP/1.$jobs" | sort -g | head -1)" \
		"$(awk '{print $1}' "$TMP/1.$jobs" | sort -g | tail -1)"
done
bench_machine_end
