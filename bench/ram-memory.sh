#!/usr/bin/env bash
# The ram driver's memory and first-write speed, in one run.
#
# 1. Memory: 2048 writes of 4 KiB spaced 2 MiB apart (8 MiB of data; fio
#    --ioengine=nbd, rw=write:2044k) to `blkstack serve --dev=ram --size=4G`
#    and to `nbdkit memory 4G`, both over a Unix socket.  Prints each
#    server's resident set (VmRSS) before and after the writes, and the data
#    the server reports (nbdinfo --map).  "Before" is after the same pattern
#    as reads, on a connection of its own, so it includes a connection.
# 2. Speed: `blkstack bench --dev=ram` 4 KiB randwrite and randread at QD32:
#    randwrite of every block once, in random order, on a NEW device (each
#    write a first write: the random map gives each block once a pass),
#    randread of a NEW device (it reads holes: zeros copied from nowhere),
#    and randwrite and randread over
#    a device filled first (a job file: sequential 1 MiB fill, then each),
#    where randread copies written data.  Rounds interleaved, medians.  The
#    goal, "writes at memory speed from the first write": first writes
#    (randwrite on a new device) at >= 0.8x the speed of reading written
#    data (randread on the filled device).  A read of holes is no memory
#    speed to compare with: it touches no memory.
#
# usage: bench/ram-memory.sh [runtime_s=3] [rounds=5] [size=1G]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        BASE=path/to/another/blkstack  run it too, in the same rounds, and
#             print it beside (e.g. a build of an older commit)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
RUNTIME=${1:-3}
ROUNDS=${2:-5}
SIZE=${3:-1G}
BLKSTACK=${BLKSTACK:-build/blkstack}
BASE=${BASE:-}
TMP=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

for c in fio nbdkit nbdinfo jq; do
	command -v "$c" >/dev/null || { echo "$c is not installed: scripts/install-deps.sh" >&2; exit 1; }
done
fio --enghelp 2>/dev/null | grep -w nbd >/dev/null || { echo "this fio has no nbd engine" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "BASE=$BASE: not an executable" >&2; exit 1; }
case $RUNTIME$ROUNDS in *[!0-9]*) echo "usage: $0 [runtime_s=3] [rounds=5] [size=1G]" >&2; exit 1 ;; esac

bench_machine_start fio nbdkit libnbd

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# --- 1. resident memory after spaced writes -------------------------------
SPACED="--bs=4k --number_ios=2048 --size=4G --iodepth=32"
echo
echo "spaced writes: fio --name=spaced --ioengine=nbd --uri=nbd+unix:///?socket=SOCK --rw=write:2044k $SPACED"
echo "  (before: the same with --rw=read:2044k)"
# memory NAME CMD...: start the server CMD on $TMP/NAME.sock, run the
# pattern, print a row
memory() {
	local name=$1 sock=$TMP/$1.sock pid base after data
	shift
	echo "  $name: $* (socket $sock)"
	bench_exec "$@" >"$TMP/$name.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	[ -S "$sock" ] || { echo "$name did not start:" >&2; cat "$TMP/$name.log" >&2; exit 1; }
	# shellcheck disable=SC2086
	bench_cmd fio --name=spaced --ioengine=nbd --uri="nbd+unix:///?socket=$sock" --rw=read:2044k $SPACED >/dev/null
	base=$(rss_kib "$pid")
	# shellcheck disable=SC2086
	bench_cmd fio --name=spaced --ioengine=nbd --uri="nbd+unix:///?socket=$sock" --rw=write:2044k $SPACED >/dev/null
	after=$(rss_kib "$pid")
	data=$(nbdinfo --map "nbd+unix:///?socket=$sock" | awk '$4 == "data" { s += $2 } END { print s / 1024 }')
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	printf '%-10s %10s %10s %10s %14s %12s\n' "$name" "$(mib "$base")" "$(mib "$after")" \
		"$(mib $((after - base)))" \
		"$(awk -v g=$((after - base)) 'BEGIN { printf "%.2fx", g / 8192 }')" \
		"$(mib "$data")" >>"$TMP/mem.rows"
}
: >"$TMP/mem.rows"
memory blkstack "$BLKSTACK" serve --unix="$TMP/blkstack.sock" --dev=ram --size=4G
memory nbdkit nbdkit -f -U "$TMP/nbdkit.sock" memory 4G
[ -z "$BASE" ] || memory base "$BASE" serve --unix="$TMP/base.sock" --dev=ram --size=4G
printf '\n%-10s %10s %10s %10s %14s %12s\n' "VmRSS MiB" "before" "after" "growth" "growth/8 MiB" "map: data"
cat "$TMP/mem.rows"
echo "(data written: 2048 x 4 KiB = 8 MiB; 'map: data' is what the server's block status"
echo " calls data, at its own allocation granularity)"

# --- 2. randwrite vs randread ------------------------------------------------
WL="--dev=ram --dev_size=$SIZE --bs=4k --iodepth=32 --output-format=json"
# first writes: every block once (size-based); holes: for the runtime
WL_randwrite="--size=$SIZE"
WL_randread="--runtime=${RUNTIME}s --time_based"
cat >"$TMP/filled.fio" <<EOF
[global]
iodepth=32
bs=4k
[fill]
rw=write
bs=1m
[randwrite]
stonewall
rw=randwrite
runtime=${RUNTIME}s
time_based
[randread]
stonewall
rw=randread
runtime=${RUNTIME}s
time_based
EOF
echo
echo "new device each run: BIN bench $WL --rw=randwrite $WL_randwrite | --rw=randread $WL_randread"
echo "filled device:       BIN bench --dev=ram --dev_size=$SIZE --output-format=json $TMP/filled.fio"
echo "  (jobs: fill rw=write bs=1m; then randwrite; then randread; bs=4k iodepth=32 runtime=${RUNTIME}s)"
echo "rounds: $ROUNDS, interleaved"
# speed TAG BIN: one round of each measurement for BIN into $TMP/TAG.*
speed() {
	local rw
	for rw in randwrite randread; do
		# shellcheck disable=SC2086
		local extra=WL_$rw
		# shellcheck disable=SC2086
		bench_cmd "$2" bench $WL ${!extra} --rw=$rw | jq '.jobs[0] | .read.iops + .write.iops' >>"$TMP/$1.$rw"
	done
	bench_cmd "$2" bench --dev=ram --dev_size="$SIZE" --output-format=json "$TMP/filled.fio" |
		jq -r '.jobs[1].write.iops, .jobs[2].read.iops' | paste - - >>"$TMP/$1.filled"
}
for _ in $(seq "$ROUNDS"); do
	speed blk "$BLKSTACK"
	[ -z "$BASE" ] || speed base "$BASE"
done
# row TAG LABEL
row() {
	local w r fw fr
	w=$(median <"$TMP/$1.randwrite"); r=$(median <"$TMP/$1.randread")
	fw=$(cut -f1 "$TMP/$1.filled" | median); fr=$(cut -f2 "$TMP/$1.filled" | median)
	printf '%-10s %12.0f %12.0f %12.0f %12.0f | %8.2fx %8.2fx\n' "$2" "$w" "$fw" "$fr" "$r" \
		"$(awk "BEGIN { print $w / $fr }")" "$(awk "BEGIN { print $fw / $fr }")"
}
printf '\n%-10s %12s %12s %12s %12s | %9s %9s\n' "median" "randwrite" "randwrite" "randread" \
	"randread" "first w /" "w / r"
printf '%-10s %12s %12s %12s %12s | %9s %9s\n' "IOPS" "new device" "filled" "filled" \
	"holes" "filled r" "filled"
row blk blkstack
[ -z "$BASE" ] || row base base
echo "(4 KiB at QD32.  Goal: first writes (randwrite, new device) >= 0.8x reads of"
echo " written data (randread, filled device).  'holes': randread of a new device,"
echo " zeros from no memory, shown for what it is.)"
rounds() { awk '{ printf "%.0fk ", $1 / 1000 } END { print "" }' "$1"; }
echo "rounds, blkstack randwrite (new): $(rounds "$TMP/blk.randwrite")"
echo "rounds, blkstack randread (filled): $(cut -f2 "$TMP/blk.filled" | rounds /dev/stdin)"
if [ -n "$BASE" ]; then
	echo "rounds, base randwrite (new):     $(rounds "$TMP/base.randwrite")"
	echo "rounds, base randread (filled):   $(cut -f2 "$TMP/base.filled" | rounds /dev/stdin)"
fi
bench_machine_end
