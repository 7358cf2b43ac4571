#!/usr/bin/env bash
# blkstack bench --dev=uring against fio --ioengine=io_uring on the same
# files, in the same run, rounds alternating, every tool in every round:
#   shm QD1, shm QD32   4 KiB random reads of a 1 GiB file on /dev/shm (tmpfs:
#                       no disk, the cost of the I/O path itself)
#   cached QD32         4 KiB random reads of a 1 GiB file on the main disk,
#                       in the page cache (buffered; fio --invalidate=0)
#   direct write QD32   4 KiB random writes, O_DIRECT, a laid-out file on the
#                       main disk
#   shm 4 jobs          4 jobs of 4 KiB random reads, QD32 each, /dev/shm
# fio runs with its defaults and with --fixedbufs=1 --registerfiles=1;
# blkstack with its defaults (adaptive completion waiting, inline issue
# where io_uring would hand every I/O to io-wq) and as "ring" (every
# request through the ring: --uring_inline=never).  IOPS and CPU per I/O
# (the process's user+system time, io-wq workers included, over its I/Os),
# medians over the rounds, ratios against both fio settings.
#
# usage: bench/uring-vs-fio.sh [runtime_s=3] [rounds=5] [disk_dir=/var/tmp]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
RUNTIME=${1:-3}
ROUNDS=${2:-5}
DISKDIR=${3:-/var/tmp}
BLKSTACK=${BLKSTACK:-build/blkstack}
TMP=$(mktemp -d)
SHM=$(mktemp -d /dev/shm/blkstack-bench.XXXXXX)
DISK=$(mktemp -d "$DISKDIR/blkstack-bench.XXXXXX")
trap 'rm -rf "$TMP" "$SHM" "$DISK"' EXIT

command -v fio >/dev/null || { echo "fio is not installed: scripts/install-deps.sh" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is not installed: scripts/install-deps.sh" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null


bench_machine_start fio

# scenario NAME FILE WORKLOAD...: every tool, ROUNDS times, interleaved
scenario() {
	local name=$1 file=$2
	shift 2
	local wl=(--filename="$file" --bs=4k --size=1G --runtime="$RUNTIME" --time_based "$@")
	local t
	for t in f ff b br; do : >"$TMP/$t"; done
	for _ in $(seq "$ROUNDS"); do
		[ "$name" = "${name#cached}" ] || cat "$file" >/dev/null
		bench_iops_cpu "$TMP/f" fio --name=u --ioengine=io_uring --invalidate=0 "${wl[@]}"
		bench_iops_cpu "$TMP/ff" fio --name=u --ioengine=io_uring --invalidate=0 \
			--fixedbufs=1 --registerfiles=1 "${wl[@]}"
		bench_iops_cpu "$TMP/b" "$BLKSTACK" bench --dev=uring --invalidate=0 "${wl[@]}"
		bench_iops_cpu "$TMP/br" "$BLKSTACK" bench --dev=uring --invalidate=0 --uring_inline=never "${wl[@]}"
	done
	local -A iops cpu
	for t in f ff b br; do
		iops[$t]=$(awk '{print $1}' "$TMP/$t" | median)
		cpu[$t]=$(awk '{print $2}' "$TMP/$t" | median)
	done
	printf '%-22s %9.0f %9.0f %9.0f %9.0f %7.2fx %7.2fx | %6.2f %6.2f %6.2f %6.2f %7.2fx\n' \
		"$name" "${iops[f]}" "${iops[ff]}" "${iops[b]}" "${iops[br]}" \
		"$(calc "${iops[b]} / ${iops[f]}")" "$(calc "${iops[b]} / ${iops[ff]}")" \
		"${cpu[f]}" "${cpu[ff]}" "${cpu[b]}" "${cpu[br]}" \
		"$(calc "${cpu[b]} / (${cpu[f]} < ${cpu[ff]} ? ${cpu[f]} : ${cpu[ff]})")" >>"$TMP/table"
}

# the files exist and are fully written before any tool reads them
for f in "$SHM/file" "$DISK/file"; do
	bench_cmd "$BLKSTACK" bench --dev=uring --filename="$f" --size=1G --rw=write \
		--bs=1M --iodepth=8 >/dev/null
done
: >"$TMP/table"
scenario "shm randread QD1" "$SHM/file" --rw=randread --iodepth=1
scenario "shm randread QD32" "$SHM/file" --rw=randread --iodepth=32
scenario "cached randread QD32" "$DISK/file" --rw=randread --iodepth=32
scenario "direct randwrite QD32" "$DISK/file" --rw=randwrite --iodepth=32 --direct=1
scenario "shm randread 4 jobs" "$SHM/file" --rw=randread --iodepth=32 --numjobs=4

echo
echo "rounds: $ROUNDS x ${RUNTIME}s, medians"
printf '%-22s %9s %9s %9s %9s %8s %8s | %6s %6s %6s %6s %8s\n' "" "IOPS" "" "" "" "" "" \
	"CPU us" "per" "I/O" "" ""
printf '%-22s %9s %9s %9s %9s %8s %8s | %6s %6s %6s %6s %8s\n' "workload (4 KiB)" \
	"fio" "fio fix" "blkstack" "bs ring" "vs fio" "vs fix" "fio" "fixed" "blk" "ring" "vs best"
cat "$TMP/table"
echo
echo "both with --invalidate=0 (cached files stay cached; fio's default and, since"
echo "fio's invalidate= came, blkstack's drop them).  fio: --ioengine=io_uring; fio fix:"
echo "--fixedbufs=1 --registerfiles=1.  blkstack: --dev=uring defaults (registered"
echo "file and buffers, COOP_TASKRUN, adaptive completion waiting, inline issue for"
echo "files io_uring hands to io-wq); bs ring: --uring_inline=never.  vs best: CPU"
echo "per I/O of blkstack over the lower of fio's two (below 1.00 is less CPU)."
bench_machine_end
