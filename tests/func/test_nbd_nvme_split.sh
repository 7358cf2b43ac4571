#!/usr/bin/env bash
# Regression: an nvme export failed NBD requests larger than the device's
# largest transfer (nbdcopy: "write at offset 8388608 failed: Invalid
# argument" when it zeroed a 56 MiB tail; reads and writes past MDTS too),
# because the block core does not split bios and nvme refuses a Write
# Zeroes past 65536 blocks or a read/write past max_sectors.  The server
# now splits each request by the device's limits (blk_dev_info
# max_sectors, max_write_zeroes_sectors, max_discard_sectors).
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
need nbdcopy qemu-io cmp

# max_sectors=256: 128 KiB per bio, so 32 MiB requests need 256 bios
start_server --dev=nvme --nvme_ctrl=inline --size=64M --max_sectors=256 || exit 1

head -c 8M /dev/urandom >"$TMP/src.img"
truncate -s 64M "$TMP/src.img"   # a 56 MiB zero tail: one write zeroes
check "nbdcopy of 32 MiB requests into the nvme export" \
	timeout 60 nbdcopy --request-size=33554432 "$TMP/src.img" "$UURI"
check "nbdcopy of 32 MiB requests back out" \
	timeout 60 nbdcopy --request-size=33554432 "$UURI" "$TMP/back.img"
check "round trip matches" cmp "$TMP/src.img" "$TMP/back.img"

QIO=(timeout 60 qemu-io -f raw)
check "a 64 MiB write zeroes (past 65536 blocks) succeeds and reads back zeroes" \
	"${QIO[@]}" -c "write -P 0x5a 0 32M" -c "write -z 0 64M" -c "read -P 0 0 64M" "$UURI"
check "a 64 MiB write zeroes without holes (NO_HOLE) succeeds" \
	"${QIO[@]}" -c "write -P 0x5a 0 2M" -c "write -z -u 0 64M" -c "read -P 0 0 64M" "$UURI"
check "a 64 MiB discard succeeds" "${QIO[@]}" -c "discard 0 64M" "$UURI"
check "a 32 MiB write and read with FUA" \
	"${QIO[@]}" -c "write -f -P 0x6b 1M 32M" -c "read -P 0x6b 1M 32M" "$UURI"
stop_server
check "server stops with status 0" test $? -eq 0
check "no request failed in the server log" bash -c "! grep -qi 'error\|fail' '$TMP/server.log'"
finish
