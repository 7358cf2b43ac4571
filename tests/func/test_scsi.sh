#!/usr/bin/env bash
# dev=scsi end to end (issue 12): the SCSI disk driver over the SCSI target
# core through the loopback LLD, on ram and on a file (uring): write and
# verify (crc32c) at QD 1, 32 and 128 with two jobs side by side, trim
# punching the file's blocks, scsi on null, and `blkstack serve --dev=scsi`
# read and written by nbdcopy and qemu-img.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
J="--output-format=json"

for lower in ram uring; do
	for qd in 1 32 128; do
		name="scsi on $lower, verify, iodepth=$qd, 2 jobs"
		rm -f "$TMP/s.img"
		file=()
		[ $lower = uring ] && file=(--filename="$TMP/s.img")
		"$BLKSTACK" bench --dev=scsi --lower=$lower "${file[@]}" --rw=randwrite --bs=4k \
			--iodepth=$qd --numjobs=2 --size=2M --offset_increment=2M --verify=crc32c \
			--verify_dump_dir="$TMP" $J >"$TMP/v.json" 2>"$TMP/v.err"
		check "$name: exit 0" test $? -eq 0
		check "$name: 512 blocks verified per job, 0 mismatches" \
			jq -e '[.jobs[].blkstack.verify | [.blocks_verified, .mismatches]] == [[512, 0], [512, 0]]' "$TMP/v.json"
		if [ $lower = uring ]; then
			check "$name: the file holds both ranges" test "$(stat -c %s "$TMP/s.img")" -eq $((4 << 20))
		fi
	done
done
# trim through the disk: UNMAP, a hole punched in the file
"$BLKSTACK" bench --dev=scsi --filename="$TMP/s.img" --rw=trim --bs=1M --size=4M $J >"$TMP/t.json"
check "trim: exit 0, 4 trims" jq -e '.jobs[0].trim.total_ios == 4' "$TMP/t.json"
check "trim: the file is sparse again" test "$(stat -c %b "$TMP/s.img")" -lt 64
# on null: commands complete, nothing is kept (verify is refused)
"$BLKSTACK" bench --dev=scsi --lower=null --rw=randread --bs=4k --size=1M $J >"$TMP/n.json"
check "scsi on null: 256 reads" jq -e '.jobs[0].read.total_ios == 256' "$TMP/n.json"
expect_error "scsi on null: verify refused" "dev=scsi on lower=null stores no data" \
	bench --dev=scsi --lower=null --rw=write --size=1M --verify=crc32c
expect_error "scsi_max_retries out of range" "scsi_max_retries=300: .*0\.\.255" \
	bench --dev=scsi --scsi_max_retries=300 --rw=read --size=1M

# scsi_debug's faults at the emulated disk, each with its outcome: retried
# and good (verify passes), or failed with the right status, and the run ends
for f in "0x8 recovered error: completes good" "0x10 transport error: retried" \
	"0x800 task set full: retried" "0x8000 host busy: requeued"; do
	o=${f%% *}
	timeout 60 "$BLKSTACK" bench --dev=scsi --scsi_every_nth=10 --scsi_opts="$o" --rw=randwrite --bs=4k \
		--iodepth=16 --size=4M --verify=crc32c $J >"$TMP/f.json" 2>"$TMP/f.err"
	check "scsi_opts=${f}, verify passes" \
		jq -e '.jobs[0].error == 0 and .jobs[0].blkstack.verify.blocks_verified == 1024 and .jobs[0].blkstack.verify.mismatches == 0' "$TMP/f.json"
	if [ "$o" != 0x8 ]; then
		check "scsi_opts=$o: requests sent again (requeues > 0)" jq -e '.jobs[0].blkstack.requeues > 0' "$TMP/f.json"
	fi
	check "scsi_opts=$o: JSON counts the injected faults" jq -e '.jobs[0].blkstack.scsi.injected > 0' "$TMP/f.json"
	case $o in
	0x8) check "scsi_opts=0x8: sense key RECOVERED ERROR counted, no retry" \
		jq -e '.jobs[0].blkstack.scsi | .sense_keys["RECOVERED ERROR"] == .injected and .retries == 0' "$TMP/f.json" ;;
	0x10) check "scsi_opts=0x10: ABORTED COMMAND counted and each retried" \
		jq -e '.jobs[0].blkstack.scsi | .sense_keys["ABORTED COMMAND"] == .injected and .retries == .injected' "$TMP/f.json" ;;
	0x8000) check "scsi_opts=0x8000: host busy counted as busy" \
		jq -e '.jobs[0].blkstack.scsi | .busy >= .injected' "$TMP/f.json" ;;
	esac
done
timeout 60 "$BLKSTACK" bench --dev=scsi --scsi_opts=0x2 --rw=read --bs=4k --size=4M >"$TMP/m.out" 2>&1
rc=$?
check "scsi_opts=0x2: a read of LBA 4660 fails with MEDIUM (rc $rc)" \
	bash -c "test $rc -eq 1 && grep -q 'read error at offset 2383872, length 4096: MEDIUM' '$TMP/m.out'"
# with no retry allowed, the aborted command fails TIMEOUT (retried and
# escalated: test_scsi_eh.sh)
timeout 60 "$BLKSTACK" bench --dev=scsi --scsi_every_nth=100 --scsi_opts=0x4 --rq_timeout=300ms --rw=randread \
	--bs=4k --iodepth=8 --size=4M --scsi_max_retries=0 >"$TMP/d.out" 2>&1
rc=$?
check "scsi_opts=0x4, scsi_max_retries=0: a dropped command times out, fails TIMEOUT, the run ends (rc $rc)" \
	bash -c "test $rc -eq 1 && grep -q 'TIMEOUT' '$TMP/d.out'"
expect_error "scsi_opts out of range: the range in hex, the bits named" \
	"scsi_opts=0x100000: out of range, allowed 0x0\.\.0x891e, the bits 0x2 medium error, 0x4 timeout, 0x8 recovered error, 0x10 transport error, 0x100 short transfer, 0x800 task set full, 0x8000 host busy$" \
	bench --dev=scsi --scsi_opts=0x100000 --rw=read --size=1M
expect_error "scsi_opts with a bit not implemented (DIF error)" \
	"opts=0x20: bits 0x20 are not implemented, allowed 0x0\.\.0x891e, the bits 0x2 medium error" \
	bench --dev=scsi --scsi_opts=0x20 --rw=read --size=1M

# serve --dev=scsi with real clients
need nbdcopy qemu-img nbdinfo
head -c $((8 << 20)) /dev/urandom >"$TMP/src.img"
start_server --dev=scsi --size=8M || exit 1
# regression: the probe read WCE from the wrong byte: no flush, no FUA
check "the scsi export takes flush and FUA (WCE seen)" \
	bash -c "nbdinfo '$UURI' | grep -q 'can_flush: true' && nbdinfo '$UURI' | grep -q 'can_fua: true'"
check "nbdcopy writes 8 MiB into the scsi disk" nbdcopy "$TMP/src.img" "$UURI"
check "qemu-img compare: the disk holds what was written" \
	qemu-img compare -f raw -F raw "$TMP/src.img" "nbd+unix:///?socket=$SOCK"
check "nbdcopy reads it back" nbdcopy "$UURI" "$TMP/back.img"
check "read back byte for byte" cmp "$TMP/src.img" "$TMP/back.img"
stop_server
check "serve stops cleanly" test $? -eq 0
finish
