#!/usr/bin/env bash
# blkstack serve (dev=ram) against nbdkit's memory plugin, same fio job, same
# run: fio --ioengine=nbd, 4 KiB random reads at QD32, one job (NUMJOBS=N:
# N jobs, one connection each, QD32 each, reported as a group), over a Unix
# socket (TCP with --tcp).  Both exports are first filled with data (one
# sequential 1 MiB write pass), so that neither server can answer from a
# hole.  Rounds alternate the servers; the medians and their ratio are
# printed, with per-I/O costs of both sides: server CPU time (from /proc,
# user + system), client (fio + libnbd) CPU time and context switches (from
# perf stat, else fio's own usr/sys), the share of a CPU the client used
# (near 1.0: the client, not the server, sets the IOPS), and system calls
# per I/O of client and server (perf's raw_syscalls tracepoint, when perf
# can use it).
#
# Two blkstack servers run: "plain" (--spin-us=0 --coalesce-us=0: every
# request wakes the connection thread) and the defaults (spinning 50 us,
# adaptive request coalescing up to 1000 us; see docs/nbd.md).
#
# usage: bench/nbd-vs-nbdkit.sh [runtime_s=5] [rounds=5] [size=512M] [--tcp]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        NBDKIT_THREADS=N nbdkit's --threads (default: nbdkit's own, 16)
#        SERVER_CPU=PCT  give every server the same CPU budget: PCT percent
#                 of one CPU (a cgroup of its own each, cpu.max / CFS
#                 quota, 10 ms period), so that the servers, not the
#                 client, limit the IOPS: IOPS per unit of server CPU.
#                 Needs root and a cpu cgroup controller (v2 or v1).
#        PIN=C,S  run every client on CPU C and every server on CPU S
#                 (taskset, the same for all servers; default: unpinned)
#        PERF=0   do not use perf (no syscall counts)
#        NUMJOBS=N fio jobs, one connection each, QD32 each (default 1)
#        SPIN_US=N, COALESCE_US=N  the default server's --spin-us and
#                 --coalesce-us (defaults 50 and 1000, blkstack's own)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNTIME=${1:-5}
ROUNDS=${2:-5}
SIZE=${3:-512M}
TCP=${4:-}
BLKSTACK=${BLKSTACK:-build/blkstack}
TMP=$(mktemp -d)
PIDS=()
CGROUPS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for c in "${CGROUPS[@]}"; do rmdir "$c" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT

for c in fio nbdkit jq; do
	command -v "$c" >/dev/null || { echo "$c is not installed: scripts/install-deps.sh" >&2; exit 1; }
done
fio --enghelp 2>/dev/null | grep -w nbd >/dev/null || { echo "this fio has no nbd engine" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null

CPIN=() SPIN=()
if [ -n "${PIN:-}" ]; then
	CPIN=(taskset -c "${PIN%,*}")
	SPIN=(taskset -c "${PIN#*,}")
fi
PERF=${PERF:-1}
SPIN_US=${SPIN_US:-50}
COALESCE_US=${COALESCE_US:-1000}
NUMJOBS=${NUMJOBS:-1}
case $NUMJOBS in
'' | *[!0-9]* | 0) echo "NUMJOBS=$NUMJOBS: fio jobs (one connection each), 1..64" >&2; exit 1 ;;
esac
[ "$NUMJOBS" -le 64 ] || { echo "NUMJOBS=$NUMJOBS: fio jobs (one connection each), 1..64" >&2; exit 1; }
SERVER_CPU=${SERVER_CPU:-}

# cgroup NAME: make a cgroup with the SERVER_CPU budget; prints its path
cgroup() {
	local d
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then # v2
		grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
			echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
		d=/sys/fs/cgroup/blkstack-bench-$$-$1
		mkdir "$d" 2>/dev/null || return 1
		echo "$((SERVER_CPU * 100)) 10000" >"$d/cpu.max" 2>/dev/null || { rmdir "$d"; return 1; }
	elif [ -d /sys/fs/cgroup/cpu ]; then # v1
		d=/sys/fs/cgroup/cpu/blkstack-bench-$$-$1
		mkdir "$d" 2>/dev/null || return 1
		{ echo 10000 >"$d/cpu.cfs_period_us" && echo "$((SERVER_CPU * 100))" >"$d/cpu.cfs_quota_us"; } ||
			{ rmdir "$d"; return 1; }
	else
		return 1
	fi
	echo "$d"
}
CG_KIT=() CG_BLK=() CG_SPIN=()
if [ -n "$SERVER_CPU" ]; then
	case $SERVER_CPU in
	'' | *[!0-9]*) echo "SERVER_CPU=$SERVER_CPU: a percentage of one CPU, 1..200" >&2; exit 1 ;;
	esac
	if [ "$SERVER_CPU" -lt 1 ] || [ "$SERVER_CPU" -gt 200 ]; then
		echo "SERVER_CPU=$SERVER_CPU: a percentage of one CPU, 1..200" >&2; exit 1
	fi
	for n in kit blk spin; do
		d=$(cgroup "$n") || { echo "SERVER_CPU needs a writable cpu cgroup (v2 /sys/fs/cgroup with the cpu controller, or v1 /sys/fs/cgroup/cpu): run as root" >&2; exit 1; }
		CGROUPS+=("$d")
	done
	# run "$@" inside the cgroup given first
	# shellcheck disable=SC2016
	IN_CG=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"')
	CG_KIT=("${IN_CG[@]}" "${CGROUPS[0]}")
	CG_BLK=("${IN_CG[@]}" "${CGROUPS[1]}")
	CG_SPIN=("${IN_CG[@]}" "${CGROUPS[2]}")
fi
EV=task-clock,context-switches,raw_syscalls:sys_enter
if [ "$PERF" = 1 ] && ! perf stat -x, -e "$EV" -o /dev/null -- true 2>/dev/null; then
	PERF=0
fi
if [ "$PERF" = 1 ]; then
	bench_machine_start fio libnbd nbdkit perf
else
	bench_machine_start fio libnbd nbdkit
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

KIT_ARGS=(-f ${NBDKIT_THREADS:+--threads=$NBDKIT_THREADS})
if [ "$TCP" = "--tcp" ]; then
	P1=$(free_port); P2=$(free_port); P3=$(free_port)
	B1=(--nbd=127.0.0.1:"$P1"); B3=(--nbd=127.0.0.1:"$P3")
	KIT_ARGS+=(-i 127.0.0.1 -p "$P2")
	U1="nbd://127.0.0.1:$P1/"
	U2="nbd://127.0.0.1:$P2/"
	U3="nbd://127.0.0.1:$P3/"
else
	B1=(--unix="$TMP/blk.sock"); B3=(--unix="$TMP/spin.sock")
	KIT_ARGS+=(-U "$TMP/kit.sock")
	U1="nbd+unix:///?socket=$TMP/blk.sock"
	U2="nbd+unix:///?socket=$TMP/kit.sock"
	U3="nbd+unix:///?socket=$TMP/spin.sock"
fi
KIT_ARGS+=(memory "$SIZE")
bench_exec "${CG_BLK[@]}" "${SPIN[@]}" "$BLKSTACK" serve "${B1[@]}" --dev=ram --size="$SIZE" --spin-us=0 \
	--coalesce-us=0 2>"$TMP/blk.log" &
BLK_PID=$!
bench_exec "${CG_SPIN[@]}" "${SPIN[@]}" "$BLKSTACK" serve "${B3[@]}" --dev=ram --size="$SIZE" --spin-us="$SPIN_US" \
	--coalesce-us="$COALESCE_US" 2>"$TMP/spin.log" &
SPIN_PID=$!
bench_exec "${CG_KIT[@]}" "${SPIN[@]}" nbdkit "${KIT_ARGS[@]}" 2>"$TMP/kit.log" &
KIT_PID=$!
PIDS+=("$BLK_PID" "$KIT_PID" "$SPIN_PID")
for _ in $(seq 50); do
	if nbdinfo --size "$U1" >/dev/null 2>&1 && nbdinfo --size "$U2" >/dev/null 2>&1 &&
		nbdinfo --size "$U3" >/dev/null 2>&1; then break; fi
	sleep 0.1
done
# a server that refused its options (SPIN_US=, COALESCE_US=...) says why
for s in blk:$BLK_PID spin:$SPIN_PID kit:$KIT_PID; do
	kill -0 "${s#*:}" 2>/dev/null ||
		{ echo "server '${s%:*}' did not start:" >&2; cat "$TMP/${s%:*}.log" >&2; exit 1; }
done

WL="--rw=randread --bs=4k --iodepth=32 --numjobs=$NUMJOBS --group_reporting --size=$SIZE --runtime=$RUNTIME --time_based"
fill() { bench_cmd fio --name=fill --ioengine=nbd --uri="$1" --rw=write --bs=1M --iodepth=8 --size="$SIZE" >/dev/null; }
# CPU ticks (user + system) of a process and its threads
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# a counter out of perf stat -x, output
pv() { awk -F, -v e="$2" '$3 == e {print $1}' "$1"; }
# one round against URI $1, server pid $2, results appended to $3.*
round() {
	local t0 t1 out ios hz sp=
	kill -0 "$2" 2>/dev/null || { echo "server $2 ($3) is gone: see its log in $TMP" >&2; exit 1; }
	hz=$(getconf CLK_TCK)
	t0=$(ticks "$2")
	if [ "$PERF" = 1 ]; then
		bench_exec perf stat -x, -e "$EV" -p "$2" -o "$TMP/srv.perf" &
		sp=$!
		sleep 0.2 # perf attaches
		# shellcheck disable=SC2086
		out=$(bench_cmd "${CPIN[@]}" perf stat -x, -e "$EV" -o "$TMP/cl.perf" -- \
			fio --name=rr --ioengine=nbd --uri="$1" $WL --output-format=json 2>/dev/null |
			sed -n "/^{/,\$p")
		kill -INT "$sp"
		wait "$sp" || true
	else
		# shellcheck disable=SC2086
		out=$(bench_cmd "${CPIN[@]}" fio --name=rr --ioengine=nbd --uri="$1" $WL --output-format=json 2>/dev/null |
			sed -n "/^{/,\$p")
	fi
	t1=$(ticks "$2")
	ios=$(jq '.jobs[0].read.total_ios' <<<"$out")
	[ "$ios" -gt 0 ] || { echo "no I/O against $1" >&2; exit 1; }
	jq '.jobs[0].read.iops' <<<"$out" >>"$3.iops"
	awk "BEGIN { printf \"%.3f\\n\", ($t1 - $t0) * 1e6 / $hz / $ios }" >>"$3.scpu"
	if [ "$PERF" = 1 ]; then
		awk -v c="$(pv "$TMP/cl.perf" task-clock)" -v n="$ios" 'BEGIN { printf "%.3f\n", c * 1000 / n }' >>"$3.ccpu"
		# job_runtime is summed over the jobs of a group
		awk -v c="$(pv "$TMP/cl.perf" task-clock)" -v r="$(jq '.jobs[0].job_runtime' <<<"$out")" \
			-v j="$NUMJOBS" 'BEGIN { printf "%.3f\n", c / (r / j) }' >>"$3.cbusy"
		awk -v c="$(pv "$TMP/cl.perf" context-switches)" -v n="$ios" 'BEGIN { printf "%.4f\n", c / n }' >>"$3.ccs"
		awk -v c="$(pv "$TMP/cl.perf" raw_syscalls:sys_enter)" -v n="$ios" 'BEGIN { printf "%.3f\n", c / n }' >>"$3.csys"
		awk -v c="$(pv "$TMP/srv.perf" raw_syscalls:sys_enter)" -v n="$ios" 'BEGIN { printf "%.3f\n", c / n }' >>"$3.ssys"
		awk -v c="$(pv "$TMP/srv.perf" context-switches)" -v n="$ios" 'BEGIN { printf "%.4f\n", c / n }' >>"$3.scs"
	else # fio's job process: usr/sys percent of its runtime; ctx is voluntary + involuntary
		jq --argjson n "$ios" '.jobs[0] | (.usr_cpu + .sys_cpu) / 100 * .job_runtime * 1000 / $n' <<<"$out" >>"$3.ccpu"
		jq --argjson n "$ios" '.jobs[0].ctx / $n' <<<"$out" >>"$3.ccs"
		jq --argjson j "$NUMJOBS" '.jobs[0] | (.usr_cpu + .sys_cpu) / 100 * $j' <<<"$out" >>"$3.cbusy"
	fi
}

fill "$U1"
fill "$U3"
fill "$U2"
echo "workload: fio --ioengine=nbd $WL${PIN:+ (client: ${CPIN[*]})}"
echo "servers: nbdkit memory $SIZE; blkstack serve --dev=ram --size=$SIZE: plain (--spin-us=0 --coalesce-us=0)"
echo "         and default (--spin-us=$SPIN_US --coalesce-us=$COALESCE_US; blkstack's own: 50, 1000)"
if [ -n "$SERVER_CPU" ]; then
	echo "server CPU budget: $SERVER_CPU% of one CPU for each server (${CGROUPS[0]%-kit}-*)"
else
	echo "server CPU budget: none (SERVER_CPU=PCT sets one)"
fi
echo "rounds: $ROUNDS, alternating the three"
for _ in $(seq "$ROUNDS"); do
	round "$U2" "$KIT_PID" "$TMP/kit"
	round "$U1" "$BLK_PID" "$TMP/blk"
	round "$U3" "$SPIN_PID" "$TMP/spin"
done
m() { median <"$1"; }
row() { # label fmt file-suffix ratio-direction(1: blk/kit, -1: kit/blk)
	local K B S
	[ -s "$TMP/kit.$3" ] || return 0
	K=$(m "$TMP/kit.$3"); B=$(m "$TMP/blk.$3"); S=$(m "$TMP/spin.$3")
	if [ "$4" = 1 ]; then
		printf "%-30s %14$2 %14$2 %7.2fx %14$2 %7.2fx\n" "$1" "$K" "$B" \
			"$(awk "BEGIN { print $B / $K }")" "$S" "$(awk "BEGIN { print $S / $K }")"
	else
		printf "%-30s %14$2 %14$2 %7.2fx %14$2 %7.2fx\n" "$1" "$K" "$B" \
			"$(awk "BEGIN { print ($B > 0) ? $K / $B : 0 }")" "$S" "$(awk "BEGIN { print ($S > 0) ? $K / $S : 0 }")"
	fi
}
printf '\n%-30s %14s %14s %8s %14s %8s\n' "median" "nbdkit memory" "ram plain" "ratio" "ram default" "ratio"
row "IOPS, 4k randread QD32 x$NUMJOBS" .0f iops 1
row "client CPUs busy (1.0: bound)" .2f cbusy 1
row "server CPU us per I/O" .2f scpu -1
row "client CPU us per I/O" .2f ccpu -1
row "client ctx switches per I/O" .3f ccs -1
row "client syscalls per I/O" .2f csys -1
row "server syscalls per I/O" .2f ssys -1
row "server ctx switches per I/O" .3f scs -1
echo "(IOPS ratio: blkstack / nbdkit; cost ratios: nbdkit / blkstack, so above 1"
echo " is better for blkstack everywhere; client = fio + libnbd, whose CPU per I/O"
echo " bounds the IOPS once it saturates a core: see 'client CPUs busy'; its"
echo " ratio is not a cost ratio but blkstack's share over nbdkit's)"
[ "$PERF" = 1 ] || echo "(no perf: client CPU and ctx switches from fio's job; no syscall counts)"
echo "rounds (nbdkit): $(tr '\n' ' ' <"$TMP/kit.iops")"
echo "rounds (blkstack plain): $(tr '\n' ' ' <"$TMP/blk.iops")"
echo "rounds (blkstack default): $(tr '\n' ' ' <"$TMP/spin.iops")"
bench_machine_end
