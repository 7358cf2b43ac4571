#!/usr/bin/env bash
# blkstack's iSCSI target against tgt (tgtd, the Linux SCSI target
# framework's user-space daemon), the same clients, in the same run:
#   randread    4 KiB random reads at QD32: libiscsi's iscsi-perf -r
#   randwrite   4 KiB random writes at QD32: blkstack's own initiator,
#               blkstack bench --dev=iscsi --rw=randwrite (WCLIENT=libiscsi:
#               build/iscsi-randwrite, iscsi-perf's write-side twin over
#               libiscsi's async API, bench/tools/iscsi-randwrite.c)
# Why blkstack's initiator writes: iscsi-perf only reads, and libiscsi's
# writes cost their client about 12 us of CPU each (a send() for the
# header, a writev() for the data, a recv() for the response: two TCP
# segments and three system calls per write, whose loopback receive runs
# on the client's CPU), so on 2 vCPUs that client kept a whole CPU busy
# and set blkstack's write IOPS, not the target.  blkstack's initiator
# (docs/iscsi-initiator.md) costs about 2 us a write: a window of PDUs per
# sendmsg(), one recv() taking what has arrived.  It drives both targets
# in the same run, with what each negotiates (tgt: ImmediateData=Yes,
# InitialR2T=Yes, FirstBurstLength 64 KiB; blkstack: ImmediateData=Yes,
# InitialR2T=No): a 4 KiB write is one PDU with immediate data on both.
# Targets, each on a port of its own on 127.0.0.1:
#   blkstack    blkstack serve --iscsi --dev=ram --size=1G (LUN 0 of
#               iqn.2026-12.org.blkstack:default)
#   tgt         tgtd in the foreground, one target, LUN 1 a 1 GiB file on
#               /dev/shm (backing store rdwr: pread/pwrite by tgtd's
#               worker threads), ACL ALL, configured with tgtadm
# Both LUNs are first written whole (one sequential pass, 1 MiB WRITEs),
# so that neither answers reads from holes.
#
# Each run of a client lasts runtime_s; rounds alternate the targets (the
# first one alternates too).  The script reads the client's once-a-second
# progress lines as they come and, at each, samples the on-CPU time of the
# target and of the client: the sum of the first field of
# /proc/PID/task/*/schedstat (ns, every thread).  The figures cover the
# steady window from the first progress line (1 s in, blkstack bench's 2 s
# in: login and ramp-up left out) to the last (logout left out); the I/Os
# in it are the lines' current rate ("iops current N"; blkstack bench's
# "w=N.Nk IOPS") times the time between lines.  So:
#   IOPS                  the client's I/Os in the window / its length
#   target CPU us per I/O the target's CPU time in the window / those I/Os
#   client CPU us per I/O the same for the client (context: a client that
#                         uses a whole CPU sets the IOPS, not the target)
#   CPUs busy             CPU time / window length (1.0: one CPU all along)
# Medians over the rounds; ratios blkstack / tgt against issue 13's goals:
# IOPS >= 2.5x tgt's (stretch 3x), target CPU per I/O <= 1/4 of tgt's.
#
# usage: bench/iscsi-vs-tgt.sh [runtime_s=10 (at least 4)] [rounds=5]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        WCLIENT=bench|libiscsi  the random-write client (and the fill
#               pass's): blkstack bench (default) or build/iscsi-randwrite
#        RANDWRITE=path/to/iscsi-randwrite (default: beside BLKSTACK)
#        QD=N   commands in flight (default 32; blkstack's CmdSN window
#               follows: --iscsi-max-cmds=max(QD, 32))
#        SIZE=S the LUNs' size (default 1G)
# Needs root for tgtd (scripts/install-deps.sh installs tgt, libiscsi-bin,
# libiscsi-dev).  Nothing is left running, whatever way the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
RUNTIME=${1:-10}
ROUNDS=${2:-5}
QD=${QD:-32}
SIZE=${SIZE:-1G}
BLKSTACK=${BLKSTACK:-build/blkstack}
RANDWRITE=${RANDWRITE:-$(dirname "$BLKSTACK")/iscsi-randwrite}
WCLIENT=${WCLIENT:-bench}
TGT_IQN=iqn.2026-12.org.blkstack.bench:tgt
BLK_IQN=iqn.2026-12.org.blkstack:default

die() { echo "iscsi-vs-tgt: $*" >&2; exit 1; }
isnum() { case $1 in '' | *[!0-9]*) return 1 ;; esac; }
# blkstack bench prints its first progress line 2 s in
if ! isnum "$RUNTIME" || [ "$RUNTIME" -lt 3 ] || { [ "${WCLIENT:-bench}" = bench ] && [ "$RUNTIME" -lt 4 ]; }; then
	die "runtime_s '$RUNTIME': at least 3, 4 with WCLIENT=bench (the window leaves out the first second, the first two with blkstack bench, and the last)"
fi
if ! isnum "$ROUNDS" || [ "$ROUNDS" -lt 1 ]; then die "rounds '$ROUNDS': at least 1"; fi
if ! isnum "$QD" || [ "$QD" -lt 1 ] || [ "$QD" -gt 256 ]; then die "QD=$QD: 1..256"; fi
case $WCLIENT in bench | libiscsi) ;; *) die "WCLIENT=$WCLIENT: bench or libiscsi" ;; esac
for c in iscsi-perf iscsi-readcapacity16 tgtd tgtadm; do
	command -v "$c" >/dev/null || die "$c is not installed: scripts/install-deps.sh"
done
[ "$(id -u)" -eq 0 ] || die "tgtd needs root"
if [ ! -x "$BLKSTACK" ] || { [ "$WCLIENT" = libiscsi ] && [ ! -x "$RANDWRITE" ]; }; then make build >/dev/null; fi
[ "$WCLIENT" = bench ] || [ -x "$RANDWRITE" ] || die "$RANDWRITE was not built: libiscsi-dev is missing (scripts/install-deps.sh, then make build)"

TMP=$(mktemp -d)
IMG=
BLK_PID='' CL_PID='' CL_CHILD=''

iscsi_bench_traps

P_BLK=$(free_port)
P_TGT=$(free_port)
[ "$P_TGT" != "$P_BLK" ] || P_TGT=$(free_port)

bench_machine_start tgtd libiscsi

# --- targets ---
IMG=$(mktemp /dev/shm/blkstack-bench-tgt.XXXXXX)
truncate -s "$SIZE" "$IMG"
# setsid (tgt_start too): a Ctrl-C (SIGINT to the terminal's process
# group) reaches the script and the client, not the targets, so that the
# client ends its run against a live target and the cleanup stops the
# targets after it
tgt_start "$P_TGT" "$TMP/tgt.log" || die "tgtd did not start"
bench_exec setsid "$BLKSTACK" serve --iscsi=127.0.0.1:"$P_BLK" --dev=ram --size="$SIZE" \
	--iscsi-max-cmds="$((QD > 32 ? QD : 32))" 2>"$TMP/blk.log" &
BLK_PID=$!
tgt_target 1 "$TGT_IQN" 1 "$IMG"
for _ in $(seq 100); do
	grep -q 'iscsi listening' "$TMP/blk.log" && break
	gone "$BLK_PID" && break
	sleep 0.1
done
gone "$BLK_PID" && { cat "$TMP/blk.log" >&2; die "blkstack serve did not start"; }
U_BLK=iscsi://127.0.0.1:$P_BLK/$BLK_IQN/0
U_TGT=iscsi://127.0.0.1:$P_TGT/$TGT_IQN/1

# block_size URL: the LUN's logical block length
block_size() {
	iscsi-readcapacity16 "$1" | sed -n 's/^LOGICAL BLOCK LENGTH IN BYTES: *//p'
}
declare -A URL PID BS
URL[blk]=$U_BLK URL[tgt]=$U_TGT
PID[blk]=$BLK_PID PID[tgt]=$TGT_PID
for t in blk tgt; do
	BS[$t]=$(block_size "${URL[$t]}")
	if ! isnum "${BS[$t]}" || [ "${BS[$t]}" -gt 4096 ] || [ $((4096 % BS[$t])) -ne 0 ]; then
		die "$t: logical block length '${BS[$t]}' does not divide 4096"
	fi
	if [ "$WCLIENT" = bench ]; then
		fill=("$BLKSTACK" bench --dev=iscsi --target="${URL[$t]}" --rw=write --bs=1M --iodepth=8 --eta=never)
	else
		fill=("$RANDWRITE" -m 8 -b $((1048576 / BS[$t])) -1 "${URL[$t]}")
	fi
	bench_cmd "${fill[@]}" >"$TMP/fill.$t" 2>&1 ||
		{ cat "$TMP/fill.$t" >&2; die "$t: the fill pass failed"; }
done

# measure WORKLOAD TARGET: one client run; appends
# "iops target_us_per_io client_us_per_io target_busy client_busy" to
# $TMP/WORKLOAD.TARGET
measure() {
	local wl=$1 t=$2 tpid=${PID[$2]} b=$((4096 / BS[$2])) cmd stream
	gone "$tpid" && { cat "$TMP/$t.log" >&2; die "$t has exited (its log above)"; }
	case $wl in
	randread) cmd=(iscsi-perf -m "$QD" -b "$b" -r -t "$RUNTIME" "${URL[$t]}") ;;
	randwrite)
		if [ "$WCLIENT" = bench ]; then
			cmd=("$BLKSTACK" bench --dev=iscsi --target="${URL[$t]}" --rw=randwrite --bs=4k
				--iodepth="$QD" --norandommap --time_based --runtime="$RUNTIME" --eta=always)
		else
			cmd=("$RANDWRITE" -m "$QD" -b "$b" -r -t "$RUNTIME" "${URL[$t]}")
		fi
		;;
	esac
	stream=stdout
	[ "${cmd[0]}" = "$BLKSTACK" ] && stream=stderr # its progress lines
	bench_progress_client "$stream" "$tpid" "$RUNTIME" "${cmd[@]}"
	printf '%s\n' "$PC_LOG" >>"$TMP/clients.log"
	if [ "$PC_RC" -eq 124 ]; then
		STOPPED=$((STOPPED + 1))
	elif [ "$PC_RC" -ne 0 ]; then
		printf '%s\n' "$PC_LOG" >&2
		cat "$TMP/client.err" >&2
		die "$wl against $t: ${cmd[0]} exited $PC_RC"
	fi
	if [ "$PC_N" -lt 1 ] || [ "$PC_IOS_US" -le 0 ]; then
		printf '%s\n' "$PC_LOG" >&2
		die "$wl against $t: fewer than two progress lines"
	fi
	awk -v io="$PC_IOS_US" -v w="$PC_WIN_US" -v tc="$PC_TGT_NS" -v cc="$PC_CL_NS" 'BEGIN {
		ios = io / 1e6
		printf "%.0f %.3f %.3f %.3f %.3f\n", io / w, tc / 1e3 / ios, cc / 1e3 / ios, tc / 1e3 / w, cc / 1e3 / w
	}' >>"$TMP/$wl.$t"
}
STOPPED=0

echo "workloads: randread  iscsi-perf -m $QD -b $((4096 / BS[blk])) -r (4 KiB random reads, QD$QD)"
if [ "$WCLIENT" = bench ]; then
	echo "           randwrite $BLKSTACK bench --dev=iscsi --rw=randwrite --bs=4k --iodepth=$QD --norandommap (blkstack's initiator)"
else
	echo "           randwrite $RANDWRITE -m $QD -b $((4096 / BS[blk])) -r (4 KiB random writes, aligned, QD$QD)"
fi
echo "targets:   blkstack serve --iscsi --dev=ram --size=$SIZE (LUN 0, block ${BS[blk]})"
echo "           tgtd $(tgtd --version 2>&1 | head -1), LUN 1 rdwr over a $SIZE file on /dev/shm (block ${BS[tgt]})"
echo "rounds:    $ROUNDS x ${RUNTIME} s per workload and target, alternating; figures over"
echo "           seconds 1..$((RUNTIME - 1)) of each run; CPU from /proc/PID/task/*/schedstat"
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then order="tgt blk"; else order="blk tgt"; fi
	for wl in randread randwrite; do
		for t in $order; do
			measure "$wl" "$t"
		done
	done
done

# col FILE N: the median of column N
col() { awk -v n="$2" '{ print $n }' "$1" | median; }
printf '\n%-28s %12s %12s %9s   %s\n' "median" "tgt" "blkstack" "blk/tgt" "goal (issue 13)"
for wl in randread randwrite; do
	echo "$wl 4k QD$QD"
	for row in "IOPS:1:.0f:>= 2.5x (stretch 3x)" "target CPU us per I/O:2:.2f:<= 0.25x" \
		"client CPU us per I/O:3:.2f:" "target CPUs busy:4:.2f:" "client CPUs busy:5:.2f:"; do
		IFS=: read -r label n fmt goal <<<"$row"
		T=$(col "$TMP/$wl.tgt" "$n")
		B=$(col "$TMP/$wl.blk" "$n")
		R=$(awk -v b="$B" -v t="$T" 'BEGIN { printf "%.2f", (t > 0) ? b / t : 0 }')
		verdict=
		case $n in
		1) verdict=$(awk -v r="$R" 'BEGIN { print (r >= 3) ? "met, stretch too" : (r >= 2.5) ? "met" : "not met" }') ;;
		2) verdict=$(awk -v r="$R" 'BEGIN { print (r <= 0.25) ? "met" : "not met" }') ;;
		esac
		printf "  %-26s %12$fmt %12$fmt %8sx   %s\n" "$label" "$T" "$B" "$R" "${goal:+$goal: $verdict}"
	done
done
echo "(ratios are blkstack / tgt: above 1 is better for blkstack in IOPS, below 1"
echo " in CPU per I/O; CPUs busy = CPU time / window, 1.0 = one CPU all along: a"
echo " client near 1.0 sets the IOPS, and then the IOPS ratio understates the targets')"
[ "$STOPPED" -eq 0 ] || echo "($STOPPED client runs missed their own stop and were stopped by timeout; their lines count)"
for wl in randread randwrite; do
	for t in tgt blk; do
		echo "rounds ($wl, $t): IOPS $(awk '{ printf "%s ", $1 }' "$TMP/$wl.$t")| target us/IO $(awk '{ printf "%s ", $2 }' "$TMP/$wl.$t")"
	done
done
bench_machine_end
