#!/usr/bin/env bash
# blkstack serve (dev=ram) against nbdkit's memory plugin, same fio job, same
# run: fio --ioengine=nbd, 4 KiB random reads at QD32, one job, over a Unix
# socket (TCP with --tcp).  Both exports are first filled with data (one
# sequential 1 MiB write pass), so that neither server can answer from a
# hole.  Rounds alternate the two servers; the medians and their ratio are
# printed, and each server's CPU time per I/O (from /proc, user + system).
#
# usage: bench/nbd-vs-nbdkit.sh [runtime_s=5] [rounds=5] [size=512M] [--tcp]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        NBDKIT_THREADS=N nbdkit's --threads (default: nbdkit's own, 16)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNTIME=${1:-5}
ROUNDS=${2:-5}
SIZE=${3:-512M}
TCP=${4:-}
BLKSTACK=${BLKSTACK:-build/blkstack}
TMP=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

for c in fio nbdkit jq; do
	command -v "$c" >/dev/null || { echo "$c is not installed: scripts/install-deps.sh" >&2; exit 1; }
done
fio --enghelp 2>/dev/null | grep -qw nbd || { echo "this fio has no nbd engine" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

if [ "$TCP" = "--tcp" ]; then
	P1=$(free_port); P2=$(free_port)
	P3=$(free_port)
	"$BLKSTACK" serve --nbd=127.0.0.1:"$P1" --dev=ram --size="$SIZE" --spin-us=0 2>"$TMP/blk.log" &
	BLK_PID=$!
	"$BLKSTACK" serve --nbd=127.0.0.1:"$P3" --dev=ram --size="$SIZE" --spin-us=50 2>"$TMP/spin.log" &
	SPIN_PID=$!
	U3="nbd://127.0.0.1:$P3/"
	nbdkit -f -i 127.0.0.1 -p "$P2" ${NBDKIT_THREADS:+--threads=$NBDKIT_THREADS} memory "$SIZE" 2>"$TMP/kit.log" &
	KIT_PID=$!
	U1="nbd://127.0.0.1:$P1/"
	U2="nbd://127.0.0.1:$P2/"
else
	"$BLKSTACK" serve --unix="$TMP/blk.sock" --dev=ram --size="$SIZE" --spin-us=0 2>"$TMP/blk.log" &
	BLK_PID=$!
	"$BLKSTACK" serve --unix="$TMP/spin.sock" --dev=ram --size="$SIZE" --spin-us=50 2>"$TMP/spin.log" &
	SPIN_PID=$!
	U3="nbd+unix:///?socket=$TMP/spin.sock"
	nbdkit -f -U "$TMP/kit.sock" ${NBDKIT_THREADS:+--threads=$NBDKIT_THREADS} memory "$SIZE" 2>"$TMP/kit.log" &
	KIT_PID=$!
	U1="nbd+unix:///?socket=$TMP/blk.sock"
	U2="nbd+unix:///?socket=$TMP/kit.sock"
fi
for i in $(seq 50); do
	if nbdinfo --size "$U1" >/dev/null 2>&1 && nbdinfo --size "$U2" >/dev/null 2>&1 &&
		nbdinfo --size "$U3" >/dev/null 2>&1; then break; fi
	sleep 0.1
done

WL="--rw=randread --bs=4k --iodepth=32 --numjobs=1 --size=$SIZE --runtime=$RUNTIME --time_based"
median() { sort -n | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
fill() { fio --name=fill --ioengine=nbd --uri="$1" --rw=write --bs=1M --iodepth=8 --size="$SIZE" >/dev/null; }
# CPU ticks (user + system) of a process and its threads
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# one round: IOPS to stdout, server CPU microseconds per I/O to file $3
iops() {
	local t0 t1 out ios hz
	hz=$(getconf CLK_TCK)
	t0=$(ticks "$2")
	# shellcheck disable=SC2086
	out=$(fio --name=rr --ioengine=nbd --uri="$1" $WL --output-format=json 2>/dev/null | sed -n "/^{/,\$p")
	t1=$(ticks "$2")
	ios=$(jq '.jobs[0].read.total_ios' <<<"$out")
	awk "BEGIN { printf \"%.3f\\n\", ($t1 - $t0) * 1e6 / $hz / $ios }" >>"$3"
	jq '.jobs[0].read.iops' <<<"$out"
}

PIDS+=("$BLK_PID" "$KIT_PID" "$SPIN_PID")
fill "$U1"
fill "$U3"
fill "$U2"
echo "workload: fio --ioengine=nbd $WL"
echo "rounds: $ROUNDS, alternating nbdkit memory, blkstack serve --dev=ram --spin-us=0, and --spin-us=50 (the default)"
for i in $(seq "$ROUNDS"); do
	iops "$U2" "$KIT_PID" "$TMP/kit_cpu" >>"$TMP/kit"
	iops "$U1" "$BLK_PID" "$TMP/blk_cpu" >>"$TMP/blk"
	iops "$U3" "$SPIN_PID" "$TMP/spin_cpu" >>"$TMP/spin"
done
K=$(median <"$TMP/kit")
B=$(median <"$TMP/blk")
S=$(median <"$TMP/spin")
printf '\n%-30s %14s %14s %8s %14s %8s\n' "median" "nbdkit memory" "ram spin=0" "ratio" "ram (default)" "ratio"
printf '%-30s %14.0f %14.0f %7.2fx %14.0f %7.2fx\n' "IOPS, 4k randread QD32" "$K" "$B" \
	"$(awk "BEGIN { printf \"%.6f\", $B / $K }")" "$S" "$(awk "BEGIN { printf \"%.6f\", $S / $K }")"
KC=$(median <"$TMP/kit_cpu")
BC=$(median <"$TMP/blk_cpu")
SC=$(median <"$TMP/spin_cpu")
printf '%-30s %14.2f %14.2f %7.2fx %14.2f %7.2fx\n' "server CPU us per I/O" "$KC" "$BC" \
	"$(awk "BEGIN { printf \"%.6f\", $KC / $BC }")" "$SC" "$(awk "BEGIN { printf \"%.6f\", $KC / $SC }")"
echo "(CPU ratios are nbdkit / blkstack: above 1 means blkstack spends less)"
echo "(the client, fio + libnbd, makes ~6 system calls per I/O and saturates one"
echo " core on small machines: IOPS then measure the client; CPU per I/O, the server)"
echo "rounds (nbdkit): $(tr '\n' ' ' <"$TMP/kit")"
echo "rounds (blkstack): $(tr '\n' ' ' <"$TMP/blk")"
echo "rounds (blkstack spin): $(tr '\n' ' ' <"$TMP/spin")"
