#!/usr/bin/env bash
# blkstack bench --dev=uring against fio --ioengine=io_uring on the same file,
# in the same run, rounds alternating:
#   1. 4 KiB random reads, QD32, one job, a 1 GiB file on /dev/shm (no disk:
#      the cost of the I/O path itself);
#   2. 4 KiB random writes, QD32, one job, O_DIRECT, a file on the main disk.
# fio runs twice per round: its defaults, and with registered files and fixed
# buffers (what blkstack's uring driver uses by default).  Medians and ratios.
#
# usage: bench/uring-vs-fio.sh [runtime_s=3] [rounds=5] [disk_dir=/var/tmp]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNTIME=${1:-3}
ROUNDS=${2:-5}
DISKDIR=${3:-/var/tmp}
BLKSTACK=${BLKSTACK:-build/blkstack}
TMP=$(mktemp -d)
SHM=$(mktemp -d /dev/shm/blkstack-bench.XXXXXX)
DISK=$(mktemp -d "$DISKDIR/blkstack-bench.XXXXXX")
trap 'rm -rf "$TMP" "$SHM" "$DISK"' EXIT

command -v fio >/dev/null || { echo "fio is not installed: scripts/install-deps.sh" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null

median() { sort -n | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }

# scenario NAME FILE SIZE DIR RW EXTRA...
scenario() {
	local name=$1 file=$2 size=$3 dir=$4 rw=$5
	shift 5
	local wl="--rw=$rw --bs=4k --iodepth=32 --numjobs=1 --size=$size --runtime=$RUNTIME --time_based $*"
	# the file exists and is fully written before either tool reads it
	[ -e "$file" ] || "$BLKSTACK" bench --dev=uring --filename="$file" --size="$size" \
		--rw=write --bs=1M --iodepth=8 >/dev/null
	: >"$TMP/f"; : >"$TMP/ff"; : >"$TMP/b"
	for _ in $(seq "$ROUNDS"); do
		# shellcheck disable=SC2086
		fio --name=u --ioengine=io_uring --filename="$file" $wl --output-format=json |
			jq ".jobs[0].$dir.iops" >>"$TMP/f"
		# shellcheck disable=SC2086
		fio --name=u --ioengine=io_uring --fixedbufs=1 --registerfiles=1 --filename="$file" $wl \
			--output-format=json | jq ".jobs[0].$dir.iops" >>"$TMP/ff"
		# shellcheck disable=SC2086
		"$BLKSTACK" bench --dev=uring --filename="$file" $wl --output-format=json |
			jq ".jobs[0].$dir.iops" >>"$TMP/b"
	done
	local f ff b
	f=$(median <"$TMP/f")
	ff=$(median <"$TMP/ff")
	b=$(median <"$TMP/b")
	printf '%-34s %12.0f %12.0f %12.0f %8.2fx %8.2fx\n' "$name" "$f" "$ff" "$b" \
		"$(calc "$b / $f")" "$(calc "$b / $ff")"
}

echo "rounds: $ROUNDS x ${RUNTIME}s, medians; fio $(fio --version)"
printf '\n%-34s %12s %12s %12s %9s %9s\n' "median IOPS" "fio" "fio fixed" "blkstack" "vs fio" "vs fixed"
scenario "4k randread QD32, /dev/shm" "$SHM/file" 1G read randread
scenario "4k randwrite QD32 direct, $DISKDIR" "$DISK/file" 1G write randwrite --direct=1
echo
echo "fio: --ioengine=io_uring defaults; fio fixed: --fixedbufs=1 --registerfiles=1;"
echo "blkstack: --dev=uring (registered file and fixed buffers when the kernel allows)."
