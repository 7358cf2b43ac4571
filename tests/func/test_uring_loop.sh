#!/usr/bin/env bash
# dev=uring on a loop device (a real block device): capacity and logical
# block size from the device, write then verify buffered and O_DIRECT,
# BLKDISCARD, on both engines (io_uring and the thread pool); over NBD on
# the pool, write zeroes (BLKZEROOUT) reads back as zeros.  Exits 77
# (skipped) where no loop device can be set up.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
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
trap 'if [ -n "$SRV_PID" ]; then { kill -9 "$SRV_PID"; wait "$SRV_PID"; } 2>/dev/null; fi
	losetup -d "$LOOP" 2>/dev/null; rm -rf "$TMP"' EXIT
check "loop device: 4096-byte sectors" test "$(blockdev --getss "$LOOP")" -eq 4096

"$BLKSTACK" bench --dev=uring --filename="$LOOP" --rw=randwrite --bs=4k --iodepth=16 $J >"$TMP/l.json"
check "loop device: whole device written (4096 x 4k)" jq -e '.jobs[0].write.total_ios == 4096' "$TMP/l.json"
for engine in io_uring pool; do
	E="--uring_engine=$engine"
	for direct in 0 1; do
		"$BLKSTACK" bench --dev=uring --filename="$LOOP" --rw=randwrite --bs=8k --iodepth=32 \
			--numjobs=2 --size=8M --offset_increment=8M --direct=$direct --verify=crc32c \
			--verify_dump_dir="$TMP" $E $J >"$TMP/lv.json"
		check "loop device $engine direct=$direct: write then verify, 2 jobs" \
			jq -e '[.jobs[].blkstack.verify | [.blocks_verified, .mismatches]] == [[1024, 0], [1024, 0]]' "$TMP/lv.json"
	done
	expect_error "loop device with 4k sectors refuses bs=512 ($engine)" "bs=512.*4096" \
		bench --dev=uring --filename="$LOOP" --rw=read --bs=512 $E
	"$BLKSTACK" bench --dev=uring --filename="$LOOP" --rw=trim --bs=1M --direct=1 $E $J >"$TMP/lt.json"
	check "loop device $engine: BLKDISCARD trims" \
		jq -e '.jobs[0].trim.total_ios == 16 and .jobs[0].error == 0' "$TMP/lt.json"
done

# NBD over the pool on the block device: write zeroes is BLKZEROOUT
if command -v qemu-io >/dev/null; then
	start_server --dev=uring --filename="$LOOP" --uring_engine=pool || exit 1
	QIO=(timeout 60 qemu-io -f raw)
	check "loop device over NBD (pool): pattern, write zeroes, discard, flush" "${QIO[@]}" \
		-c "write -P 0x77 0 1M" -c "write -z 256k 64k" -c "discard 512k 256k" -c "flush" "$URI"
	check "loop device over NBD (pool): zeros where zeroed, the data around it" "${QIO[@]}" \
		-c "read -P 0x77 0 256k" -c "read -P 0 256k 64k" -c "read -P 0x77 320k 192k" \
		-c "read -P 0x77 768k 256k" "$URI"
	stop_server
	check "loop device over NBD (pool): server stops with status 0" test $? -eq 0
	check "loop device: BLKZEROOUT left zeros on the device" \
		cmp -s <(dd if="$LOOP" bs=64k skip=4 count=1 status=none) <(head -c 65536 /dev/zero)
else
	echo "skip: qemu-io is not installed (scripts/install-deps.sh): no NBD check on the loop device"
fi
finish
