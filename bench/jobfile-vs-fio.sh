#!/usr/bin/env bash
# One fio job file, unchanged, through fio and through blkstack bench:
# block sizes from bssplit, offsets from random_distribution=zipf, a rate
# cap (rate_iops), on each one's null engine (ioengine=null: blkstack's
# dev=null).  Printed: each tool's bandwidth against the cap (held within
# 1 %; with several sizes fio takes rate_iops as that many of the smallest
# per second, a bandwidth), the bytes per I/O the split gives; then a
# mixed job (randrw, rwmixread=70) under rate= per direction, fio's
# read,write list and one value for both, each direction's bandwidth
# against its cap for each tool; and whether blkstack's JSON has the
# shape of fio's: every key fio writes for a job's read direction and its
# latency objects, and the names of the top-level keys.
#
# usage: bench/jobfile-vs-fio.sh [runtime_s=5] [rate_iops=20000]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNTIME=${1:-5}
RATE=${2:-20000}
BLKSTACK=${BLKSTACK:-build/blkstack}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for c in fio jq; do
	command -v "$c" >/dev/null || { echo "$c is not installed: scripts/install-deps.sh" >&2; exit 1; }
done
[ -x "$BLKSTACK" ] || make build >/dev/null
bench_machine_start fio

cat >"$TMP/job.fio" <<JOB
[global]
ioengine=null
size=1g
runtime=$RUNTIME
time_based
iodepth=16

[skewed]
rw=randread
bssplit=4k/60:16k/30:64k/10
random_distribution=zipf:1.1
rate_iops=$RATE
JOB
echo "job file:"
sed 's/^/  /' "$TMP/job.fio"

bench_cmd fio --output-format=json "$TMP/job.fio" >"$TMP/fio.json"
bench_cmd "$BLKSTACK" bench --output-format=json "$TMP/job.fio" >"$TMP/blk.json"

CAP=$((RATE * 4)) # KiB/s: rate_iops blocks of the smallest size, 4 KiB
printf '\n%-10s %12s %12s %12s %10s %14s\n' "" "IOPS" "KiB/s" "cap KiB/s" "off cap" "bytes per I/O"
for t in fio blk; do
	iops=$(jq '.jobs[0].read.iops' "$TMP/$t.json")
	bw=$(jq '.jobs[0].read.bw' "$TMP/$t.json")
	bpi=$(jq '.jobs[0].read.io_bytes / .jobs[0].read.total_ios' "$TMP/$t.json")
	printf '%-10s %12.1f %12.0f %12d %9.2f%% %14.0f\n' "$t" "$iops" "$bw" "$CAP" \
		"$(calc "($bw - $CAP) * 100 / $CAP")" "$bpi"
done
echo "bytes per I/O expected from the split: $(calc "0.6 * 4096 + 0.3 * 16384 + 0.1 * 65536")"

# rate= per direction on a mixed job: fio's rate_ddir() lets the rate,
# not rwmixread, decide the split when both directions are capped
printf '\n%-22s %-5s %12s %12s %12s %10s\n' "randrw rwmixread=70" "" "read KiB/s" "write KiB/s" "caps KiB/s" "blk/fio"
for rate in 8m,2m 4m; do
	sed -e 's/^rw=randread/rw=randrw\nrwmixread=70/' -e '/^bssplit=/d' -e '/^random_distribution=/d' \
		-e "s/^rate_iops=.*/rate=$rate/" -e 's/^\[skewed\]/[mixed]/' "$TMP/job.fio" >"$TMP/mixed.fio"
	bench_cmd fio --output-format=json "$TMP/mixed.fio" >"$TMP/fio-mixed.json"
	bench_cmd "$BLKSTACK" bench --output-format=json "$TMP/mixed.fio" >"$TMP/blk-mixed.json"
	case $rate in
	8m,2m) caps="8192,2048" ;;
	*) caps="4096,4096" ;;
	esac
	for t in fio blk; do
		printf '%-22s %-5s %12.0f %12.0f %12s %10s\n' "rate=$rate" "$t" \
			"$(jq '.jobs[0].read.bw' "$TMP/$t-mixed.json")" \
			"$(jq '.jobs[0].write.bw' "$TMP/$t-mixed.json")" "$caps" \
			"$([ $t = blk ] && calc "($(jq '.jobs[0].read.bw + .jobs[0].write.bw' "$TMP/blk-mixed.json")) / ($(jq '.jobs[0].read.bw + .jobs[0].write.bw' "$TMP/fio-mixed.json"))" || echo)"
	done
done

# the shape: fio's keys that blkstack lacks (none expected)
shape() { jq -r "$2 | keys[]" "$1" | sort; }
missing=0
for path in '.' '.jobs[0]' '.jobs[0].read' '.jobs[0].read.clat_ns' '.jobs[0].read.lat_ns'; do
	m=$(comm -23 <(shape "$TMP/fio.json" "$path") <(shape "$TMP/blk.json" "$path") | tr '\n' ' ')
	if [ -n "$m" ]; then
		echo "shape: $path: fio has, blkstack lacks: $m"
		missing=$((missing + 1))
	else
		echo "shape: $path: every key fio writes is there"
	fi
done
bench_machine_end
