#!/usr/bin/env bash
# dev=uring's two engines on the same file, in the same run, rounds
# alternating: io_uring against the pread/pwrite thread pool (the fallback
# when io_uring is refused, uring_engine=pool), at one or more pool_threads.
#   1. 4 KiB random reads, QD32 (QD=), one job, a 1 GiB file on /dev/shm, buffered
#      (no disk: the cost of the I/O path itself);
#   2. 4 KiB random reads, QD32 (QD=), one job, O_DIRECT, a 1 GiB file on the main
#      disk (the device's own latency; the pool's threads are its QD).
# Per engine: median IOPS and median CPU time per I/O (user + system time
# of the whole process, workers included, over the I/Os done), and the
# ratio to io_uring.
#
# usage: bench/uring-pool.sh [runtime_s=3] [rounds=5] [disk_dir=/var/tmp]
#        THREADS="2 8 32" bench/uring-pool.sh ...   pool_threads to compare
#        (default: the driver's default only); QD=8 ... another iodepth (32)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
RUNTIME=${1:-3}
ROUNDS=${2:-5}
DISKDIR=${3:-/var/tmp}
THREADS=${THREADS:-default}
QD=${QD:-32}
BLKSTACK=${BLKSTACK:-build/blkstack}
TMP=$(mktemp -d)
SHM=$(mktemp -d /dev/shm/blkstack-bench.XXXXXX)
DISK=$(mktemp -d "$DISKDIR/blkstack-bench.XXXXXX")
trap 'rm -rf "$TMP" "$SHM" "$DISK"' EXIT

[ -x "$BLKSTACK" ] || make build >/dev/null


bench_machine_start
echo "rounds: $ROUNDS x ${RUNTIME}s, engines alternating within each round; medians"

# engines: "io_uring" then one pool per THREADS entry
ENGINES=(io_uring)
for t in $THREADS; do ENGINES+=("pool:$t"); done

engine_args() {
	case $1 in
	io_uring) echo "--uring_engine=io_uring --uring_inline=never" ;;
	pool:default) echo "--uring_engine=pool" ;;
	pool:*) echo "--uring_engine=pool --pool_threads=${1#pool:}" ;;
	esac
}

# scenario NAME FILE EXTRA...
scenario() {
	local name=$1 file=$2 e
	shift 2
	local wl="--rw=randread --bs=4k --iodepth=$QD --numjobs=1 --size=1G --runtime=$RUNTIME --time_based $*"
	# the file exists and is fully written before anything reads it
	[ -e "$file" ] || bench_cmd "$BLKSTACK" bench --dev=uring --filename="$file" --size=1G \
		--rw=write --bs=1M --iodepth=8 >/dev/null
	echo
	echo "$name"
	for e in "${ENGINES[@]}"; do
		: >"$TMP/iops.$e"; : >"$TMP/cpu.$e"
	done
	for _ in $(seq "$ROUNDS"); do
		for e in "${ENGINES[@]}"; do
			# shellcheck disable=SC2046,SC2086
			bench_cmd "$BLKSTACK" bench --dev=uring --filename="$file" $wl $(engine_args "$e") \
				--output-format=json >"$TMP/o.json"
			jq '.jobs[0].read.iops' "$TMP/o.json" >>"$TMP/iops.$e"
			# CPU us per I/O: the process's (usr+sys)% of the wall time, over the I/Os
			jq '.jobs[0] | (.blkstack.proc_usr_cpu + .blkstack.proc_sys_cpu) / 100 * .blkstack.wall_ns / 1000 / .read.total_ios' \
				"$TMP/o.json" >>"$TMP/cpu.$e"
		done
	done
	local ring_iops ring_cpu iops cpu
	ring_iops=$(median <"$TMP/iops.io_uring")
	ring_cpu=$(median <"$TMP/cpu.io_uring")
	printf '  %-22s %12s %14s %10s %10s\n' "engine" "IOPS" "CPU us/IO" "IOPS x" "CPU x"
	for e in "${ENGINES[@]}"; do
		iops=$(median <"$TMP/iops.$e")
		cpu=$(median <"$TMP/cpu.$e")
		printf '  %-22s %12.0f %14.2f %9.2fx %9.2fx\n' "$e" "$iops" "$cpu" \
			"$(calc "$iops / $ring_iops")" "$(calc "$cpu / $ring_cpu")"
	done
}

scenario "4k randread QD$QD, 1 GiB file on /dev/shm, buffered" "$SHM/file"
scenario "4k randread QD$QD, 1 GiB file on $DISKDIR, direct=1" "$DISK/file" --direct=1

echo
echo "IOPS x, CPU x: relative to io_uring (CPU time per I/O: the process's user + system"
echo "time, the pool's workers included, over the I/Os completed)."
echo "io_uring: --uring_inline=never, so that every request goes through the ring."
bench_machine_end
