#!/usr/bin/env bash
# Request coalescing on and off, same run: blkstack serve --dev=ram with
# --coalesce-us=0 and with the default (1000), both with the default
# --spin-us, driven by fio --ioengine=nbd over a Unix socket (loopback TCP
# with --tcp): 4 KiB random
# reads and random writes at QD 1, 8 and 32 (one job).  Rounds alternate
# the two servers; medians.  Prints IOPS (on/off ratio), the share of a CPU
# the client (fio + libnbd) used, the servers' CPU per I/O, and the
# coalescing sleeps per second and I/Os per sleep (from the
# connection's log line).  Coalescing must not cost a client throughput
# (ratio near or above 1.00 where the client is the limit) and should cut
# the server's CPU per I/O at depth.
#
# usage: bench/nbd-coalesce.sh [runtime_s=3] [rounds=3] [size=256M] [--tcp]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNTIME=${1:-3}
ROUNDS=${2:-3}
SIZE=${3:-256M}
TCP=${4:-}
case "$TCP" in ""|--tcp) ;; *) echo "usage: $0 [runtime_s] [rounds] [size] [--tcp]" >&2; exit 2 ;; esac
BLKSTACK=${BLKSTACK:-build/blkstack}
TMP=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
for c in fio jq; do
	command -v "$c" >/dev/null || { echo "$c is not installed: scripts/install-deps.sh" >&2; exit 1; }
done
fio --enghelp 2>/dev/null | grep -w nbd >/dev/null || { echo "this fio has no nbd engine" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null
bench_machine_start fio libnbd

if [ "$TCP" = --tcp ]; then
	L1=(--nbd=127.0.0.1:0) L2=(--nbd=127.0.0.1:0)
else
	L1=(--unix="$TMP/off.sock") L2=(--unix="$TMP/on.sock")
fi
bench_exec "$BLKSTACK" serve "${L1[@]}" --dev=ram --size="$SIZE" --coalesce-us=0 2>"$TMP/off.log" &
PIDS+=($!)
OFF_PID=$!
bench_exec "$BLKSTACK" serve "${L2[@]}" --dev=ram --size="$SIZE" 2>"$TMP/on.log" &
PIDS+=($!)
ON_PID=$!
port() { sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/$1.log"; }
for _ in $(seq 50); do
	if [ "$TCP" = --tcp ]; then
		[ -n "$(port off)" ] && [ -n "$(port on)" ] && break
	else
		[ -S "$TMP/off.sock" ] && [ -S "$TMP/on.sock" ] && break
	fi
	sleep 0.1
done
uri() {
	if [ "$TCP" = --tcp ]; then
		echo "nbd://127.0.0.1:$(port "$1")/"
	else
		echo "nbd+unix:///?socket=$TMP/$1.sock"
	fi
}
for s in off on; do
	bench_cmd fio --name=fill --ioengine=nbd --uri="$(uri $s)" --rw=write --bs=1M --iodepth=8 --size="$SIZE" >/dev/null
done
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# round SERVER PID RW QD: one fio run, results appended to $TMP/SERVER.RW.QD.*
round() {
	local f="$TMP/$1.$3.$4" out t0 t1 ios n0 line
	n0=$(wc -l <"$TMP/$1.log")
	t0=$(ticks "$2")
	out=$(bench_cmd fio --name=j --ioengine=nbd --uri="$(uri "$1")" --rw="$3" --bs=4k --iodepth="$4" \
		--size="$SIZE" --runtime="$RUNTIME" --time_based --output-format=json 2>/dev/null |
		sed -n '/^{/,$p')
	t1=$(ticks "$2")
	ios=$(jq '.jobs[0].read.total_ios + .jobs[0].write.total_ios' <<<"$out")
	[ "$ios" -gt 0 ] || { echo "no I/O against $1 ($3 QD$4)" >&2; exit 1; }
	jq '.jobs[0].read.iops + .jobs[0].write.iops' <<<"$out" >>"$f.iops"
	jq '.jobs[0] | (.usr_cpu + .sys_cpu) / 100' <<<"$out" >>"$f.busy"
	awk "BEGIN { printf \"%.3f\\n\", ($t1 - $t0) * 1e6 / $(getconf CLK_TCK) / $ios }" >>"$f.scpu"
	# the job's connection: the one that moved the most bytes since n0
	for _ in $(seq 50); do
		line=$(sed -n "$((n0 + 1)),\$p" "$TMP/$1.log" | grep ' coalesced ' |
			awk '{for (i = 1; i <= NF; i++) if ($i == "rx") r = $(i + 1); print r, $0}' |
			sort -n | tail -1)
		[ -n "$line" ] && break
		sleep 0.1
	done
	sed -n 's/.* coalesced \([0-9]*\) .*/\1/p' <<<"$line" |
		awk -v t="$RUNTIME" -v n="$ios" '{ printf "%.0f %.1f\n", $1 / t, $1 ? n / $1 : 0 }' >>"$f.co"
}
echo "blkstack: $BLKSTACK serve --dev=ram --size=$SIZE, --coalesce-us=0 (off) and default (on)"
echo "fio --ioengine=nbd over $([ "$TCP" = --tcp ] && echo loopback TCP || echo a Unix socket), 4k, ${RUNTIME}s, $ROUNDS rounds"
printf '\n%-14s %10s %10s %7s %13s %15s %17s\n' "workload" "off IOPS" "on IOPS" "on/off" "client busy" "srv us/IO" "sleeps/s, I/O/sleep"
printf '%-14s %10s %10s %7s %13s %15s %17s\n' "" "" "" "" "off / on" "off / on" "(on)"
for rw in randread randwrite; do
	for qd in 1 8 32; do
		for _ in $(seq "$ROUNDS"); do
			round off "$OFF_PID" "$rw" "$qd"
			round on "$ON_PID" "$rw" "$qd"
		done
		o="$TMP/off.$rw.$qd" c="$TMP/on.$rw.$qd"
		OI=$(median <"$o.iops") CI=$(median <"$c.iops")
		printf '%-14s %10.0f %10.0f %6.2fx %6.2f / %4.2f %7.2f / %5.2f %17s\n' "$rw QD$qd" "$OI" "$CI" \
			"$(awk "BEGIN { print $CI / $OI }")" "$(median <"$o.busy")" "$(median <"$c.busy")" \
			"$(median <"$o.scpu")" "$(median <"$c.scpu")" \
			"$(cut -d' ' -f1 "$c.co" | median), $(cut -d' ' -f2 "$c.co" | median)"
	done
done
bench_machine_end
