#!/usr/bin/env bash
# What the stage timers and the lock profile cost, in instructions per I/O
# under callgrind (deterministic; whole process, and the core's entry
# points blk_submit + blk_poll inclusive: they overlap, a completion
# callback submits again), 4 KiB randread on null, QD32,
# 64 MiB once (16384 I/Os):
#   notimers  a build without the code (cmake -DBLK_STAGE_TIMERS=OFF
#             -DBLK_LOCK_STATS=OFF)
#   off       this build, switches off (the default)
#   stages    --stage_timers=1
#   windows   --stage_windows=submit:end_io
#   locks     --lock_stats=1 (this workload takes no lock: nothing)
# and the same for the lock profile where locks are taken: two jobs on one
# hardware queue (--numjobs=2 --nr_hw_queues=1, the hctx lock per batch).
# Goal (issue 14): off within 1 % of notimers.
#
# usage: bench/stage-cost.sh [dev=null] [extra bench options...]
# env:   BLKSTACK=path (default build/blkstack)
#        NOTIMERS=path to a blkstack built with -DBLK_STAGE_TIMERS=OFF
#        -DBLK_LOCK_STATS=OFF
#        (default build-notimers/blkstack, built when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
DEV=${1:-null}
shift || true
EXTRA=("$@")
BLKSTACK=${BLKSTACK:-build/blkstack}
NOTIMERS=${NOTIMERS:-build-notimers/blkstack}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
command -v jq >/dev/null || { echo "jq is not installed: scripts/install-deps.sh" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null
if [ ! -x "$NOTIMERS" ]; then
	cmake -S . -B "$(dirname "$NOTIMERS")" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DBLK_STAGE_TIMERS=OFF -DBLK_LOCK_STATS=OFF >/dev/null
	cmake --build "$(dirname "$NOTIMERS")" -j "$(nproc)" --target blkstack >/dev/null
fi
bench_machine_start valgrind

WL="--dev=$DEV --rw=randread --bs=4k --iodepth=32 --size=64M"
calc1() { awk "BEGIN { printf \"%.1f\", $1 }"; }
# ir NAME BINARY OPTIONS...: "whole core" instructions per I/O
ir() {
	local name=$1 bin=$2 out="$TMP/cg.$1"
	shift 2
	# shellcheck disable=SC2086
	bench_cmd valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" bench $WL \
		"${EXTRA[@]}" "$@" --output-format=json >"$TMP/$name.json" 2>/dev/null
	local ios total core
	ios=$(jq '[.jobs[].read.total_ios, .jobs[].write.total_ios] | add' "$TMP/$name.json")
	total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	core=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
		awk '/blk-mq.c:blk_submit |blk-mq.c:blk_poll / {gsub(",", "", $1); s += $1} END {print s + 0}')
	echo "$(calc1 "$total / $ios") $(calc1 "$core / $ios")"
}
declare -A W C
printf '\n%-44s %12s %12s\n' "instructions per I/O (callgrind, $DEV, QD32)" "process" "submit+poll"
for v in notimers off stages windows locks; do
	case $v in
	notimers) r=$(ir $v "$NOTIMERS") ;;
	off) r=$(ir $v "$BLKSTACK") ;;
	stages) r=$(ir $v "$BLKSTACK" --stage_timers=1) ;;
	windows) r=$(ir $v "$BLKSTACK" --stage_windows=submit:end_io) ;;
	locks) r=$(ir $v "$BLKSTACK" --lock_stats=1) ;;
	esac
	W[$v]=${r% *}
	C[$v]=${r#* }
	printf '%-44s %12s %12s\n' "$v" "${W[$v]}" "${C[$v]}"
done
pct() { calc1 "($1 - $2) / $2 * 100"; }
printf '%-44s %11s%% %11s%%\n' "off vs notimers (goal: within 1 %)" \
	"$(pct "${W[off]}" "${W[notimers]}")" "$(pct "${C[off]}" "${C[notimers]}")"
printf '%-44s %12s %12s\n' "stage_timers=1 adds (Ir/IO)" \
	"$(calc1 "${W[stages]} - ${W[off]}")" "$(calc1 "${C[stages]} - ${C[off]}")"
printf '%-44s %12s %12s\n' "stage_windows adds (Ir/IO)" \
	"$(calc1 "${W[windows]} - ${W[off]}")" "$(calc1 "${C[windows]} - ${C[off]}")"
printf '%-44s %12s %12s\n' "lock_stats=1 adds (Ir/IO)" \
	"$(calc1 "${W[locks]} - ${W[off]}")" "$(calc1 "${C[locks]} - ${C[off]}")"

# the lock profile where locks are taken: one queue shared by two jobs
EXTRA+=(--numjobs=2 --nr_hw_queues=1)
printf '\n%-44s %12s %12s\n' "the same, --numjobs=2 --nr_hw_queues=1" "process" "submit+poll"
for v in notimers off locks; do
	case $v in
	notimers) r=$(ir s$v "$NOTIMERS") ;;
	off) r=$(ir s$v "$BLKSTACK") ;;
	locks) r=$(ir s$v "$BLKSTACK" --lock_stats=1) ;;
	esac
	W[s$v]=${r% *}
	C[s$v]=${r#* }
	printf '%-44s %12s %12s\n' "$v" "${W[s$v]}" "${C[s$v]}"
done
printf '%-44s %11s%% %11s%%\n' "off vs notimers (goal: within 1 %)" \
	"$(pct "${W[soff]}" "${W[snotimers]}")" "$(pct "${C[soff]}" "${C[snotimers]}")"
printf '%-44s %12s %12s\n' "lock_stats=1 adds (Ir/IO)" \
	"$(calc1 "${W[slocks]} - ${W[soff]}")" "$(calc1 "${C[slocks]} - ${C[soff]}")"
bench_machine_end
