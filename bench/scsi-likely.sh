#!/usr/bin/env bash
# Seed 000 rerun: what the likely()/unlikely() hints on the SCSI completion
# path buy.  Three builds of blkstack from this tree:
#   hints     the default (BLK_SCSI_HINTS=ON, BLK_STAGE_TIMERS=ON)
#   nohints   -DBLK_SCSI_HINTS=OFF: the same code without the hints
#   notimers  -DBLK_STAGE_TIMERS=OFF: no stage timer code at all
# For hints and nohints, alternating rounds (at least 5), medians and the
# range of the rounds:
#   the completion stage time, ns (--scsi_stage_timers=1: scsi_done() from
#   its entry to just before the request ends, as seed 000 timed
#   scsi_io_completion(); the two clock reads are inside it),
#   IOPS with the timers off,
# and instructions per I/O under callgrind (deterministic) for all three:
# hints - notimers is what the stage timers cost while switched off.
# A difference counts only where it exceeds the spread of the rounds.
#
# usage: bench/scsi-likely.sh [runtime_s=3] [rounds=5]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNTIME=${1:-3}
ROUNDS=${2:-5}
[ "$ROUNDS" -ge 5 ] || { echo "rounds: at least 5" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
command -v jq >/dev/null || { echo "jq is not installed: scripts/install-deps.sh" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "valgrind is not installed: scripts/install-deps.sh" >&2; exit 1; }

declare -A FLAGS=(
	[hints]=""
	[nohints]="-DBLK_SCSI_HINTS=OFF"
	[notimers]="-DBLK_STAGE_TIMERS=OFF"
)
for b in hints nohints notimers; do
	echo "building $b (build-likely-$b/) ..."
	# shellcheck disable=SC2086
	cmake -S . -B "build-likely-$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DBLK_SCSI_HINTS=ON -DBLK_STAGE_TIMERS=ON ${FLAGS[$b]} >/dev/null
	cmake --build "build-likely-$b" --target blkstack -j "$(nproc)" >"$TMP/build.$b" 2>&1 ||
		{ cat "$TMP/build.$b"; exit 1; }
done
BLKSTACK=build-likely-hints/blkstack
bench_machine_start valgrind

WL="--dev=scsi --lower=ram --rw=randread --bs=4k --iodepth=32 --numjobs=1 --size=1G --gtod_reduce=1 --iostats=0"
echo "workload: $WL, --runtime=$RUNTIME"
echo "rounds: $ROUNDS, alternating hints and nohints"
for _ in $(seq "$ROUNDS"); do
	for b in hints nohints; do
		# shellcheck disable=SC2086
		bench_cmd timeout -k 10 $((RUNTIME + 60)) "build-likely-$b/blkstack" bench $WL \
			--scsi_stage_timers=1 --runtime="$RUNTIME" --time_based --output-format=json \
			2>/dev/null | jq '.jobs[0].blkstack.scsi.completion_stage.mean_ns' >>"$TMP/stage.$b"
		# shellcheck disable=SC2086
		bench_cmd timeout -k 10 $((RUNTIME + 60)) "build-likely-$b/blkstack" bench $WL \
			--runtime="$RUNTIME" --time_based --output-format=json |
			jq '.jobs[0].read.iops' >>"$TMP/iops.$b"
	done
done

ipio() { # instructions per I/O, whole process, 64 MiB once
	local out=$TMP/cg.$1
	# shellcheck disable=SC2086
	bench_cmd valgrind --tool=callgrind --callgrind-out-file="$out" "build-likely-$1/blkstack" bench \
		$WL --size=64M --output-format=json >"$TMP/cg.json" 2>/dev/null
	local ios total
	ios=$(jq '.jobs[0].read.total_ios' "$TMP/cg.json")
	total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	calc "$total / $ios"
}
lo() { sort -g "$1" | head -1; }
hi() { sort -g "$1" | tail -1; }
verdict() { # verdict A_FILE B_FILE: "beyond the spread" when the ranges do not overlap
	if awk -v a="$(hi "$1")" -v b="$(lo "$2")" -v c="$(hi "$2")" -v d="$(lo "$1")" \
		'BEGIN { exit !(a < b || c < d) }'; then
		echo "beyond the run-to-run spread"
	else
		echo "within the run-to-run spread"
	fi
}

printf '\n%-10s %18s %22s %14s %22s %10s\n' build "stage ns (median)" "stage ns (rounds)" "IOPS (median)" "IOPS (rounds)" "Ir/IO"
declare -A IR SM IM
for b in hints nohints notimers; do
	IR[$b]=$(ipio "$b")
done
for b in hints nohints; do
	SM[$b]=$(median <"$TMP/stage.$b")
	IM[$b]=$(median <"$TMP/iops.$b")
	printf '%-10s %18.1f %10.1f..%-10.1f %14.0f %10.0f..%-10.0f %10.1f\n' "$b" "${SM[$b]}" \
		"$(lo "$TMP/stage.$b")" "$(hi "$TMP/stage.$b")" "${IM[$b]}" \
		"$(lo "$TMP/iops.$b")" "$(hi "$TMP/iops.$b")" "${IR[$b]}"
done
printf '%-10s %18s %22s %14s %22s %10.1f\n' notimers - - - - "${IR[notimers]}"
echo
printf 'stage time, nohints - hints: %+.1f ns (%s)\n' "$(calc "${SM[nohints]} - ${SM[hints]}")" \
	"$(verdict "$TMP/stage.hints" "$TMP/stage.nohints")"
printf 'IOPS, hints / nohints:       %.3fx (%s)\n' "$(calc "${IM[hints]} / ${IM[nohints]}")" \
	"$(verdict "$TMP/iops.hints" "$TMP/iops.nohints")"
printf 'instructions per I/O, nohints - hints: %+.1f\n' "$(calc "${IR[nohints]} - ${IR[hints]}")"
printf 'stage timers switched off (runtime) vs not built: %+.1f instructions per I/O\n' \
	"$(calc "${IR[hints]} - ${IR[notimers]}")"
bench_machine_end
