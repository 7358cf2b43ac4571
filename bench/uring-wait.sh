#!/usr/bin/env bash
# How a uring job should wait for its completions: the candidates of
# docs/uring.md ("Waiting for completions"), side by side on the same
# files in the same run, rounds alternating.  Every request goes through
# the ring (--uring_inline=never), since waiting is what is measured.
#   spin          poll the CQ ring until a CQE (completion_wait=spin,
#                 spin_max=1s: a pure spin)
#   spin 20us     spin up to 20 us, then sleep in io_uring_enter
#   sleep         io_uring_enter(GETEVENTS, min_complete=1) at once
#   adaptive      the default: a spin/sleep probe every 256 ms decides
#   spin signal   the old driver: pure spin, rings without COOP_TASKRUN (an
#                 IPI per task-work completion interrupts the spinner)
#   defer sleep   SINGLE_ISSUER|DEFER_TASKRUN rings, sleep
#   defer adapt   DEFER_TASKRUN rings, adaptive
#   sqpoll adapt  SQPOLL rings (a kernel thread per ring submits), adaptive
# Workloads: 4 KiB random reads of a 1 GiB /dev/shm file at QD1 and QD32
# (tmpfs: io-wq workers do every read), the same with 4 jobs, and 4 KiB
# random O_DIRECT writes at QD32 on a laid-out file on the main disk.
# IOPS and CPU per I/O (process user+system, io-wq workers included),
# medians.
#
# usage: bench/uring-wait.sh [runtime_s=2] [rounds=3] [disk_dir=/var/tmp]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
RUNTIME=${1:-2}
ROUNDS=${2:-3}
DISKDIR=${3:-/var/tmp}
BLKSTACK=${BLKSTACK:-build/blkstack}
TMP=$(mktemp -d)
SHM=$(mktemp -d /dev/shm/blkstack-bench.XXXXXX)
DISK=$(mktemp -d "$DISKDIR/blkstack-bench.XXXXXX")
trap 'rm -rf "$TMP" "$SHM" "$DISK"' EXIT

[ -x /usr/bin/time ] || { echo "/usr/bin/time is not installed: scripts/install-deps.sh" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null


NAMES=("spin" "spin 20us" "sleep" "adaptive" "spin signal" "defer sleep" "defer adapt" "sqpoll adapt")
OPTS=("--completion_wait=spin --spin_max=1s"
	"--completion_wait=spin --spin_max=20us"
	"--completion_wait=sleep"
	""
	"--completion_wait=spin --spin_max=1s --uring_taskrun=signal"
	"--completion_wait=sleep --uring_taskrun=defer"
	"--uring_taskrun=defer"
	"--sqthread_poll=1")

bench_machine_start

# run OUT ARGS...: one blkstack run, every request through the ring
run() {
	local out=$1
	shift
	bench_iops_cpu "$out" "$BLKSTACK" bench --dev=uring --uring_inline=never "$@"
}

# scenario NAME WORKLOAD...
scenario() {
	local name=$1 i line=
	shift
	for i in "${!NAMES[@]}"; do : >"$TMP/c$i"; done
	for _ in $(seq "$ROUNDS"); do
		for i in "${!NAMES[@]}"; do
			# shellcheck disable=SC2086
			run "$TMP/c$i" --bs=4k --size=1G --runtime="$RUNTIME" --time_based \
				"$@" ${OPTS[$i]}
		done
	done
	printf '%-22s' "$name"
	for i in "${!NAMES[@]}"; do
		line+=$(printf ' %7.0fk/%5.2f' \
			"$(awk '{print $1 / 1000}' "$TMP/c$i" | median)" \
			"$(awk '{print $2}' "$TMP/c$i" | median)")
	done
	echo "$line"
}

for f in "$SHM/file" "$DISK/file"; do
	bench_cmd "$BLKSTACK" bench --dev=uring --filename="$f" --size=1G --rw=write \
		--bs=1M --iodepth=8 >/dev/null
done
echo "rounds: $ROUNDS x ${RUNTIME}s, medians; each cell: IOPS / CPU us per I/O"
printf '%-22s' "workload"
for n in "${NAMES[@]}"; do printf ' %14s' "$n"; done
echo
scenario "shm randread QD1" --filename="$SHM/file" --rw=randread --iodepth=1
scenario "shm randread QD32" --filename="$SHM/file" --rw=randread --iodepth=32
scenario "shm randread 4x QD32" --filename="$SHM/file" --rw=randread --iodepth=32 --numjobs=4
scenario "direct randwrite QD32" --filename="$DISK/file" --rw=randwrite --iodepth=32 --direct=1
bench_machine_end
