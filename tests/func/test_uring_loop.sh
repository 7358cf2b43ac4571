#!/usr/bin/env bash
# dev=uring on a loop device (a real block device): capacity and logical
# block size from the device, write then verify buffered and O_DIRECT,
# BLKDISCARD.  Exits 77 (skipped) where no loop device can be set up.
source "$(dirname "$0")/lib.sh" "$@"
J="--output-format=json"

if [ "$(id -u)" -ne 0 ] || ! command -v losetup >/dev/null; then
	echo "skip: loop devices need root and losetup"
	exit 77
fi
truncate -s 16M "$TMP/loop.img"
if ! LOOP=$(losetup --find --show --sector-size 4096 "$TMP/loop.img" 2>"$TMP/losetup.err"); then
	echo "skip: losetup cannot attach a loop device here: $(cat "$TMP/losetup.err")"
	exit 77
fi
trap 'losetup -d "$LOOP" 2>/dev/null; rm -rf "$TMP"' EXIT
check "loop device: 4096-byte sectors" test "$(blockdev --getss "$LOOP")" -eq 4096

"$BLKSTACK" bench --dev=uring --filename="$LOOP" --rw=randwrite --bs=4k --iodepth=16 $J >"$TMP/l.json"
check "loop device: whole device written (4096 x 4k)" jq -e '.jobs[0].write.total_ios == 4096' "$TMP/l.json"
for direct in 0 1; do
	"$BLKSTACK" bench --dev=uring --filename="$LOOP" --rw=randwrite --bs=8k --iodepth=32 \
		--numjobs=2 --size=8M --offset_increment=8M --direct=$direct --verify=crc32c \
		--verify_dump_dir="$TMP" $J >"$TMP/lv.json"
	check "loop device direct=$direct: write then verify, 2 jobs" \
		jq -e '[.jobs[].blkstack.verify | [.blocks_verified, .mismatches]] == [[1024, 0], [1024, 0]]' "$TMP/lv.json"
done
expect_error "loop device with 4k sectors refuses bs=512" "bs=512.*4096" \
	bench --dev=uring --filename="$LOOP" --rw=read --bs=512
"$BLKSTACK" bench --dev=uring --filename="$LOOP" --rw=trim --bs=1M --direct=1 $J >"$TMP/lt.json"
check "loop device: BLKDISCARD trims" jq -e '.jobs[0].trim.total_ios == 16 and .jobs[0].error == 0' "$TMP/lt.json"
finish
