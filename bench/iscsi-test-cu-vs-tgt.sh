#!/usr/bin/env bash
# libiscsi's iscsi-test-cu, the whole ALL family with --dataloss and
# --allow-sanitize, against blkstack's iSCSI target and against tgt
# (tgtd) on this machine, in the same run: what each passes, fails and
# skips (docs/iscsi.md, "Conformance").  Every suite meets a fresh
# target; runs:
#   blkstack-full   blkstack serve --iscsi --dev=ram --size=1G
#                   --iscsi-thin=0 (fully provisioned)
#   blkstack-thin   the same with --iscsi-thin (what ram gets by default)
#   tgt             tgtd, one target, LUN 1 rdwr over a 1 GiB file on
#                   /dev/shm (fully provisioned, tgt's default); the
#                   target and its file are made anew for each suite
#   tgt-thin        the same with thin_provisioning=1
#   blkstack-mp     MultipathIO through two portals (127.0.0.1 and
#   tgt-mp          127.0.0.2, thin), one session through each
# For each run: tests, passed, failed, skipped (a test that prints
# "[SKIPPED]", which CUnit counts as passed), the failures, the skip
# reasons; then the tests whose outcome differs between blkstack-thin and
# tgt-thin.  tests/func/iscsi_cu.awk reads iscsi-test-cu's output, as
# tests/func/test_iscsi_conformance.sh does (which checks blkstack alone
# on every make test).
#
# usage: bench/iscsi-test-cu-vs-tgt.sh
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        SUITES="ALL.Read10 ALL.Unmap": only these (default: every ALL one)
# Needs root for tgtd (scripts/install-deps.sh installs tgt and
# libiscsi-bin).  About 4 minutes on a 2-vCPU VM.  Nothing is left
# running, whatever way the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
BLKSTACK=${BLKSTACK:-build/blkstack}
AWK=tests/func/iscsi_cu.awk
TGT_IQN=iqn.2026-12.org.blkstack.bench:tgt
BLK_IQN=iqn.2026-12.org.blkstack:default

die() { echo "iscsi-test-cu-vs-tgt: $*" >&2; exit 1; }
for c in iscsi-test-cu tgtd tgtadm; do
	command -v "$c" >/dev/null || die "$c is not installed: scripts/install-deps.sh"
done
[ "$(id -u)" -eq 0 ] || die "tgtd needs root"
[ -x "$BLKSTACK" ] || make build >/dev/null

TMP=$(mktemp -d)
IMG=
BLK_PID=''

iscsi_bench_traps

P_TGT=$(free_port)
SUITES=${SUITES:-$(iscsi-test-cu --list | grep -E '^ALL\.[A-Za-z0-9]+$')}

bench_machine_start tgtd libiscsi

# cu RUN SUITE URL...: iscsi-test-cu, its results appended to TMP/RUN.res
# (the commands list shows it once per run, with SUITE for the suite and
# PORT for blkstack's port, which changes with each server)
cu() {
	local run=$1 s=$2 out
	shift 2
	out=$TMP/$run.$s.out
	timeout 300 iscsi-test-cu -d -S -v -t "$s" "$@" >"$out" 2>&1 || true
	awk -f "$AWK" "$out" >>"$TMP/$run.res"
	grep -q '^ *tests ' "$out" || echo "  $run $s: no summary: $(head -c 300 "$out")"
}

# blk_start LOG ARGS...: blkstack serve; its ports in BLK_PORTS
blk_start() {
	local log=$1
	shift
	: >"$log"
	bench_exec setsid "$BLKSTACK" serve --dev=ram --size=1G "$@" 2>"$log" &
	BLK_PID=$!
	BLK_PORTS=
	for _ in $(seq 200); do
		BLK_PORTS=$(sed -n 's/.*iscsi listening on [^ ]*:\([0-9]*\)$/\1/p' "$log")
		grep -q 'export .*bytes' "$log" && [ -n "$BLK_PORTS" ] && return 0
		gone "$BLK_PID" && break
		sleep 0.05
	done
	cat "$log" >&2
	die "blkstack serve did not start"
}
blk_stop() {
	stop_pid "$BLK_PID" TERM
	BLK_PID=
}

# tgt_new THIN: target 1 with LUN 1 over a fresh 1 GiB file (sparse)
tgt_new() {
	: >"$IMG"
	truncate -s 1G "$IMG"
	bench_cmd tgtadm -C "$TGT_CTL" --lld iscsi --op new --mode target --tid 1 -T "$TGT_IQN"
	bench_cmd tgtadm -C "$TGT_CTL" --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 \
		--bstype rdwr --backing-store "$IMG"
	[ "$1" = 0 ] || bench_cmd tgtadm -C "$TGT_CTL" --lld iscsi --op update --mode logicalunit \
		--tid 1 --lun 1 --params thin_provisioning=1
	bench_cmd tgtadm -C "$TGT_CTL" --lld iscsi --op bind --mode target --tid 1 -I ALL
}

tgt_start "$P_TGT" "$TMP/tgt.log" || die "tgtd did not start"

IMG=$(mktemp /dev/shm/blkstack-cu-tgt.XXXXXX)
for run in blkstack-full blkstack-thin tgt tgt-thin; do
	: >"$TMP/$run.res"
	thin=0
	case $run in *-thin) thin=1 ;; esac
	case $run in
	blkstack-*) bench_show_cmd iscsi-test-cu -d -S -v -t SUITE "iscsi://127.0.0.1:PORT/$BLK_IQN/0" ;;
	tgt*) bench_show_cmd iscsi-test-cu -d -S -v -t SUITE "iscsi://127.0.0.1:$P_TGT/$TGT_IQN/1" ;;
	esac
	for s in $SUITES; do
		case $run in
		blkstack-*)
			blk_start "$TMP/blk.log" --iscsi=127.0.0.1:0 "--iscsi-thin=$thin"
			cu "$run" "$s" "iscsi://127.0.0.1:$BLK_PORTS/$BLK_IQN/0"
			blk_stop
			;;
		tgt*)
			tgt_new "$thin"
			cu "$run" "$s" "iscsi://127.0.0.1:$P_TGT/$TGT_IQN/1"
			tgt_del 1
			;;
		esac
	done
done

# MultipathIO through two portals of each
: >"$TMP/blkstack-mp.res"
blk_start "$TMP/blk.log" --iscsi=127.0.0.1:0 --iscsi=127.0.0.2:0 --iscsi-thin
U1="iscsi://127.0.0.1:$(echo "$BLK_PORTS" | sed -n 1p)/$BLK_IQN/0"
U2="iscsi://127.0.0.2:$(echo "$BLK_PORTS" | sed -n 2p)/$BLK_IQN/0"
bench_show_cmd iscsi-test-cu -d -S -v -t ALL.MultipathIO "$U1" "$U2"
cu blkstack-mp ALL.MultipathIO "$U1" "$U2"
blk_stop
: >"$TMP/tgt-mp.res"
bench_cmd tgtadm -C "$TGT_CTL" --lld iscsi --op new --mode portal --param portal=127.0.0.2:"$P_TGT"
tgt_new 1
U1="iscsi://127.0.0.1:$P_TGT/$TGT_IQN/1"
U2="iscsi://127.0.0.2:$P_TGT/$TGT_IQN/1"
bench_show_cmd iscsi-test-cu -d -S -v -t ALL.MultipathIO "$U1" "$U2"
cu tgt-mp ALL.MultipathIO "$U1" "$U2"
tgt_del 1

for run in blkstack-full blkstack-thin tgt tgt-thin blkstack-mp tgt-mp; do
	res=$TMP/$run.res
	total=$(wc -l <"$res")
	f=$(grep -c ' FAILED$' "$res" || true)
	s=$(grep -c ' SKIPPED' "$res" || true)
	echo "== $run: $total tests, $((total - f - s)) passed, $f failed, $s skipped"
	grep ' FAILED$' "$res" | sed 's/^/   failed: /; s/ FAILED$//' || true
	grep ' SKIPPED' "$res" | cut -f2 | sort | uniq -c | sort -rn |
		sed 's/^ *\([0-9]*\) /   skipped (\1): /' || true
done
echo
echo "== outcome differs, blkstack-thin | tgt-thin:"
join -a1 -a2 -e none -o 0,1.2,2.2 \
	<(cut -f1 "$TMP/blkstack-thin.res" | sort) <(cut -f1 "$TMP/tgt-thin.res" | sort) |
	awk '$2 != $3 { printf "   %-45s %-8s | %s\n", $1, $2, $3 }'
bench_machine_end
