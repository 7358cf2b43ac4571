#!/usr/bin/env bash
# Real NBD clients against blkstack serve: nbdcopy round trips of a random
# image (checksums compared), qemu-img convert and compare, qemu-io
# pattern writes and checked reads, write zeroes and discard; then a uring
# (file) export written over NBD and stopped with SIGTERM: the file holds
# the data afterwards.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
need nbdcopy nbdinfo qemu-img qemu-io sha256sum

start_server --dev=ram --size=64M || exit 1

head -c 48M /dev/urandom >"$TMP/src.img"
# a sparse tail: zeroes the copy may send as holes
truncate -s 64M "$TMP/src.img"
SUM=$(sha256sum <"$TMP/src.img" | cut -d' ' -f1)

check "nbdcopy to the server (TCP)" timeout 60 nbdcopy "$TMP/src.img" "$URI"
check "nbdcopy back (Unix socket)" timeout 60 nbdcopy "$UURI" "$TMP/back.img"
check "round trip checksum matches" test "$(sha256sum <"$TMP/back.img" | cut -d' ' -f1)" = "$SUM"
check "nbdcopy with 4 connections and 64 requests each" \
	timeout 60 nbdcopy --connections=4 --requests=64 "$URI" "$TMP/back4.img"
check "multi-connection copy matches" cmp "$TMP/src.img" "$TMP/back4.img"

check "qemu-img compare with the source" timeout 60 qemu-img compare -f raw -F raw "$TMP/src.img" "$URI"
head -c 64M /dev/urandom >"$TMP/src2.img"
check "qemu-img convert into the export" timeout 60 qemu-img convert -n -f raw -O raw "$TMP/src2.img" "$URI"
check "qemu-img compare after convert" timeout 60 qemu-img compare -f raw -F raw "$TMP/src2.img" "$URI"
check "qemu-img convert out of the export" timeout 60 qemu-img convert -f raw -O raw "$URI" "$TMP/out2.img"
check "converted image matches" cmp "$TMP/src2.img" "$TMP/out2.img"

QIO=(timeout 60 qemu-io -f raw)
check "qemu-io pattern writes" "${QIO[@]}" -c "write -P 0x11 0 1M" -c "write -P 0x22 1M 64k" \
	-c "write -P 0x33 -f 2M 4k" "$URI"
check "qemu-io pattern reads" "${QIO[@]}" -c "read -P 0x11 0 1M" -c "read -P 0x22 1M 64k" \
	-c "read -P 0x33 2M 4k" "$URI"
out=$("${QIO[@]}" -c "read -P 0x44 0 4k" "$URI" 2>&1)
check "qemu-io notices a wrong pattern (the check can fail)" grep -q "Pattern verification failed" <<<"$out"
check "qemu-io write zeroes and read zeroes" "${QIO[@]}" -c "write -z 0 512k" -c "read -P 0 0 512k" \
	-c "read -P 0x11 512k 512k" "$URI"
check "qemu-io discard and flush" "${QIO[@]}" -c "discard 3M 1M" -c "flush" "$URI"
check "qemu-io unaligned read (bounced by qemu to 512)" "${QIO[@]}" -c "read -P 0x22 1M 4k" "$URI"

# uring export on a file; data must be in the file after SIGTERM
check "ram server stops cleanly" stop_server
start_server --dev=uring --filename="$TMP/disk.img" --size=32M || exit 1
head -c 32M /dev/urandom >"$TMP/src3.img"
check "nbdcopy into a uring file export" timeout 60 nbdcopy "$TMP/src3.img" "$URI"
check "uring export compares equal over NBD" timeout 60 qemu-img compare -f raw -F raw "$TMP/src3.img" "$URI"
stop_server
check "uring server stops with status 0" test $? -eq 0
check "the file holds what was written" cmp "$TMP/src3.img" "$TMP/disk.img"
start_server --dev=uring --filename="$TMP/disk.img" --read-only || exit 1
check "file export reopened read-only, size from the file" \
	test "$(timeout 20 nbdinfo --size "$URI")" = 33554432
check "read-only file export reads the data" timeout 60 qemu-img compare -f raw -F raw "$TMP/src3.img" "$URI"
check "read-only file export refuses writes" bash -c "! ${QIO[*]} -c 'write 0 4k' '$URI' >/dev/null 2>&1"
finish
