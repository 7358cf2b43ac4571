#!/usr/bin/env bash
# blkstack's iSCSI initiator (`blkstack bench --dev=iscsi`, the SCSI
# midlayer over the iSCSI LLD: docs/iscsi-initiator.md) against libiscsi's
# iscsi-perf, 4 KiB random reads at QD32, both clients against the same
# two targets in the same run (issue 16's benchmark):
#   tgt       tgtd in the foreground, one target, LUN 1 a 1 GiB file on
#             /dev/shm (backing store rdwr), ACL ALL, configured with
#             tgtadm (bench/lib.sh's tgt_start)
#   blkstack  blkstack serve --iscsi=127.0.0.1:0 --dev=ram --size=1G
#             (LUN 0 of iqn.2026-12.org.blkstack:default)
# Both LUNs are first written whole (blkstack bench, 1 MiB sequential
# writes), so that neither answers reads from holes.
#
# Clients, one connection each (the fair pair):
#   iscsi-perf   iscsi-perf -m QD -b 4096/BLOCK -r -t runtime_s URL
#                (-b counts the LUN's logical blocks: 8 with 512-byte
#                blocks; -m is the commands in flight)
#   blkstack 1q  blkstack bench --dev=iscsi --target=URL --rw=randread
#                --bs=4k --iodepth=QD --numjobs=1 --nr_hw_queues=1: one
#                hardware queue, so one session and one TCP connection
#                (a session per hardware queue: docs/iscsi-initiator.md)
# and, unless Q2=0, a row beside them that is not the fair pair:
#   blkstack 2q  --numjobs=2 --iodepth=QD/2 --nr_hw_queues=2: the same QD
#                over two sessions (two connections, two job threads)
#
# What is measured, per run (runtime_s each; rounds alternate the clients
# and the targets, the first one alternating too):
#   IOPS     iscsi-perf: the I/Os of its once-a-second progress lines
#            ("iops current" times the time between lines) from the first
#            line (1 s in: login and ramp-up left out) to the last (logout
#            left out), over that window.  blkstack: bench's own IOPS
#            (its JSON: I/Os over the runtime, login not in it).
#   CPU us per I/O: the client process's user + system time over its
#            I/Os.  iscsi-perf: the on-CPU ns of its threads
#            (/proc/PID/task/*/schedstat, the same time as utime + stime,
#            to the ns), sampled at the window's two ends, over the
#            window's I/Os.  blkstack: getrusage's (wait4's) user + system time of
#            the whole process (/usr/bin/time: login, the probe's SCSI
#            commands, thread start and logout included, which only
#            counts against blkstack) over bench's total I/Os.  Both are
#            the kernel's process CPU time (every thread), not bench's
#            usr/sys %.
# Medians over the rounds; ratios blkstack 1q / iscsi-perf against issue
# 16's goals: more IOPS than iscsi-perf on both targets, CPU per I/O at
# most 1/2 of iscsi-perf's.
#
# usage: bench/iscsi-initiator.sh [runtime_s=8] [rounds=3]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        QD=N   commands in flight (default 32; blkstack's target's CmdSN
#               window follows: --iscsi-max-cmds=max(QD, 32))
#        SIZE=S the LUNs' size (default 1G)
#        Q2=0   no "blkstack 2q" row
#        BASE=path/to/another/blkstack  a "base 1q" row too: that build's
#               initiator, one queue, in the same rounds (an initiator
#               change against the build before it)
# Needs root for tgtd (scripts/install-deps.sh installs tgt and
# libiscsi-bin).  Nothing is left running, whatever way the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
RUNTIME=${1:-8}
ROUNDS=${2:-3}
QD=${QD:-32}
SIZE=${SIZE:-1G}
Q2=${Q2:-1}
BASE=${BASE:-}
BLKSTACK=${BLKSTACK:-build/blkstack}
TGT_IQN=iqn.2026-12.org.blkstack.bench:tgt
BLK_IQN=iqn.2026-12.org.blkstack:default

die() { echo "iscsi-initiator: $*" >&2; exit 1; }
isnum() { case $1 in '' | *[!0-9]*) return 1 ;; esac; }
if ! isnum "$RUNTIME" || [ "$RUNTIME" -lt 4 ]; then
	die "runtime_s '$RUNTIME': at least 4 (iscsi-perf's window leaves out the first and the last second)"
fi
if ! isnum "$ROUNDS" || [ "$ROUNDS" -lt 1 ]; then die "rounds '$ROUNDS': at least 1"; fi
if ! isnum "$QD" || [ "$QD" -lt 2 ] || [ "$QD" -gt 256 ]; then die "QD=$QD: 2..256"; fi
case $Q2 in 0 | 1) ;; *) die "Q2=$Q2: 0 or 1" ;; esac
for c in iscsi-perf iscsi-readcapacity16 tgtd tgtadm jq; do
	command -v "$c" >/dev/null || die "$c is not installed: scripts/install-deps.sh"
done
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (Debian: time)"
[ "$(id -u)" -eq 0 ] || die "tgtd needs root"
[ -x "$BLKSTACK" ] || make build >/dev/null
[ -z "$BASE" ] || [ -x "$BASE" ] || die "BASE=$BASE: not an executable"

TMP=$(mktemp -d)
IMG=
BLK_PID='' CL_PID='' CL_CHILD=''

iscsi_bench_traps

bench_machine_start tgtd libiscsi

# --- targets ---
IMG=$(mktemp /dev/shm/blkstack-bench-init.XXXXXX)
truncate -s "$SIZE" "$IMG"
P_TGT=$(free_port)
tgt_start "$P_TGT" "$TMP/tgt.log" || die "tgtd did not start"
tgt_target 1 "$TGT_IQN" 1 "$IMG"
# setsid: a Ctrl-C reaches the script and the client, not the target
bench_exec setsid "$BLKSTACK" serve --iscsi=127.0.0.1:0 --dev=ram --size="$SIZE" \
	--iscsi-max-cmds="$((QD > 32 ? QD : 32))" 2>"$TMP/blk.log" &
BLK_PID=$!
P_BLK=
for _ in $(seq 100); do
	P_BLK=$(sed -n 's/.*iscsi listening on [^ ]*:\([0-9]*\)$/\1/p' "$TMP/blk.log")
	[ -n "$P_BLK" ] && grep -q 'export .*bytes' "$TMP/blk.log" && break
	gone "$BLK_PID" && break
	sleep 0.1
done
if [ -z "$P_BLK" ] || gone "$BLK_PID"; then
	cat "$TMP/blk.log" >&2
	die "blkstack serve did not start"
fi

declare -A URL PID BS
URL[tgt]=iscsi://127.0.0.1:$P_TGT/$TGT_IQN/1
URL[blk]=iscsi://127.0.0.1:$P_BLK/$BLK_IQN/0
PID[tgt]=$TGT_PID PID[blk]=$BLK_PID
for t in tgt blk; do
	BS[$t]=$(iscsi-readcapacity16 "${URL[$t]}" | sed -n 's/^LOGICAL BLOCK LENGTH IN BYTES: *//p')
	if ! isnum "${BS[$t]}" || [ "${BS[$t]}" -gt 4096 ] || [ $((4096 % BS[$t])) -ne 0 ]; then
		die "$t: logical block length '${BS[$t]}' does not divide 4096"
	fi
	bench_cmd "$BLKSTACK" bench --dev=iscsi --target="${URL[$t]}" --name=fill --rw=write \
		--bs=1m --iodepth=4 >"$TMP/fill.$t" 2>&1 || { cat "$TMP/fill.$t" >&2; die "$t: the fill pass failed"; }
done

# perf TARGET: one iscsi-perf run; appends "iops us_per_io" to
# $TMP/perf.TARGET
perf() {
	local t=$1 b=$((4096 / BS[$1]))
	gone "${PID[$t]}" && die "$t has exited"
	bench_progress_client stdout '' "$RUNTIME" iscsi-perf -m "$QD" -b "$b" -r -t "$RUNTIME" "${URL[$t]}"
	printf '%s\n' "$PC_LOG" >>"$TMP/clients.log"
	if [ "$PC_RC" -eq 124 ]; then
		STOPPED=$((STOPPED + 1))
	elif [ "$PC_RC" -ne 0 ]; then
		printf '%s\n' "$PC_LOG" >&2
		cat "$TMP/client.err" >&2
		die "iscsi-perf against $t exited $PC_RC"
	fi
	if [ "$PC_N" -lt 1 ] || [ "$PC_IOS_US" -le 0 ]; then
		printf '%s\n' "$PC_LOG" >&2
		die "iscsi-perf against $t: fewer than two progress lines"
	fi
	awk -v io="$PC_IOS_US" -v w="$PC_WIN_US" -v c="$PC_CL_NS" 'BEGIN {
		ios = io / 1e6
		printf "%.0f %.3f\n", io / w, c / 1e3 / ios
	}' >>"$TMP/perf.$t"
}
STOPPED=0

# blk TARGET QUEUES OUT BINARY: one blkstack bench run with QUEUES hardware
# queues (and as many job threads, QD/QUEUES each); appends "iops
# us_per_io" to $TMP/OUT.TARGET
blk() {
	local t=$1 q=$2
	gone "${PID[$t]}" && die "$t has exited"
	bench_iops_cpu "$TMP/$3.$t" "$4" bench --dev=iscsi --target="${URL[$t]}" \
		--name=randread --rw=randread --bs=4k --iodepth=$((QD / q)) --numjobs="$q" \
		--nr_hw_queues="$q" --runtime="$RUNTIME" --time_based 2>>"$TMP/blk-client.log" ||
		{ tail -20 "$TMP/blk-client.log" >&2; die "blkstack bench against $t failed"; }
}

CLIENTS="perf blk1"
[ "$Q2" = 0 ] || CLIENTS+=" blk2"
[ -z "$BASE" ] || CLIENTS+=" base1"
run() {
	case $1 in
	perf) perf "$2" ;;
	blk1) blk "$2" 1 blk1 "$BLKSTACK" ;;
	blk2) blk "$2" 2 blk2 "$BLKSTACK" ;;
	base1) blk "$2" 1 base1 "$BASE" ;;
	esac
}
# last FILE: the last line's figures, "IOPS, us/IO"
last() { awk 'END { printf "IOPS %8.0f  CPU %6.2f us/IO", $1, $2 }' "$1"; }
declare -A NAME=([perf]=iscsi-perf [blk1]="blkstack 1q" [blk2]="blkstack 2q" [base1]="base 1q" [tgt]=tgt [blk]=blkstack)

echo "workload: 4 KiB random reads, QD$QD (iscsi-perf -m $QD -b $((4096 / BS[tgt])) on tgt's block ${BS[tgt]},"
echo "          -b $((4096 / BS[blk])) on blkstack's block ${BS[blk]})"
echo "targets:  tgt: tgtd $(tgtd --version 2>&1 | head -1), LUN 1 rdwr over a $SIZE file on /dev/shm"
echo "          blkstack: blkstack serve --iscsi --dev=ram --size=$SIZE"
echo "clients:  iscsi-perf (one connection); blkstack 1q: bench --dev=iscsi --nr_hw_queues=1"
echo "          (one session, one connection: the fair pair)$([ "$Q2" = 0 ] || echo "; blkstack 2q: --nr_hw_queues=2
          --numjobs=2 --iodepth=$((QD / 2)) (two sessions)")"
[ -z "$BASE" ] || echo "          base 1q: $BASE, as blkstack 1q ($("$BASE" --version 2>/dev/null || echo "no --version"))"
echo "rounds:   $ROUNDS x $RUNTIME s per client and target, alternating"
echo
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then targets="tgt blk" clients=$CLIENTS; else
		targets="blk tgt" clients=$(tr ' ' '\n' <<<"$CLIENTS" | tac | tr '\n' ' '); fi
	for t in $targets; do
		for c in $clients; do
			run "$c" "$t"
			printf 'round %d  %-8s %-12s %s  (load %s)\n' "$r" "${NAME[$t]}" "${NAME[$c]}" "$(last "$TMP/$c.$t")" \
				"$(cut -d' ' -f1 /proc/loadavg)"
		done
	done
done

# col FILE N: the median of column N
col() { awk -v n="$2" '{ print $n }' "$1" | median; }
echo
printf '%-26s %12s %12s %9s' "median of $ROUNDS" "iscsi-perf" "blkstack 1q" "1q/perf"
[ "$Q2" = 0 ] || printf ' %12s %9s' "blkstack 2q" "2q/perf"
[ -z "$BASE" ] || printf ' %12s %9s' "base 1q" "base/perf"
printf '   %s\n' "goal (issue 16, 1q)"
for t in tgt blk; do
	echo "target ${NAME[$t]}"
	for row in "IOPS:1:.0f" "CPU us per I/O:2:.2f"; do
		IFS=: read -r label n fmt <<<"$row"
		P=$(col "$TMP/perf.$t" "$n")
		B=$(col "$TMP/blk1.$t" "$n")
		R=$(awk -v b="$B" -v p="$P" 'BEGIN { printf "%.2f", (p > 0) ? b / p : 0 }')
		printf "  %-24s %12$fmt %12$fmt %8sx" "$label" "$P" "$B" "$R"
		for x in blk2 base1; do
			[ -f "$TMP/$x.$t" ] || continue
			B2=$(col "$TMP/$x.$t" "$n")
			printf " %12$fmt %8sx" "$B2" "$(awk -v b="$B2" -v p="$P" 'BEGIN { printf "%.2f", (p > 0) ? b / p : 0 }')"
		done
		case $n in
		1) printf '   > 1x: %s\n' "$(awk -v r="$R" 'BEGIN { print (r > 1) ? "met" : "not met" }')" ;;
		2) printf '   <= 0.5x: %s\n' "$(awk -v r="$R" 'BEGIN { print (r <= 0.5) ? "met" : "not met" }')" ;;
		esac
	done
done
echo "(ratios: blkstack / iscsi-perf; IOPS above 1 and CPU per I/O below 1 are"
echo " better for blkstack.  CPU: iscsi-perf over its steady window (schedstat),"
echo " blkstack over its whole process (getrusage, login and logout included))"
[ "$STOPPED" -eq 0 ] || echo "($STOPPED iscsi-perf runs missed their own stop and were stopped by timeout; their lines count)"
bench_machine_end
