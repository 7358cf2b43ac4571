#!/usr/bin/env bash
# dev=uring's inline issue (docs/uring.md, "Issue: through the ring, or
# inline"): a file io_uring can only hand to io-wq workers (tmpfs: no
# RWF_NOWAIT) is read and written with preadv2/pwritev2 by the submitting
# thread; a file that takes RWF_NOWAIT goes through the ring; every op keeps
# its meaning inline; calls that turn slow send the queue back to the ring.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
J="--output-format=json"
U='.jobs[0].blkstack.uring'

SHM=$(mktemp -d /dev/shm/blkstack-test.XXXXXX) || { echo "SKIP: no /dev/shm"; exit 77; }
trap 'rm -rf "$TMP" "$SHM"; if [ -n "$SRV_PID" ]; then kill -9 "$SRV_PID" 2>/dev/null; fi' EXIT
[ "$(stat -f -c %T "$SHM")" = tmpfs ] || { echo "SKIP: /dev/shm is not tmpfs"; exit 77; }
# a directory on a file system that takes RWF_NOWAIT (ext4, xfs, btrfs)
DISK=$TMP
[ "$(stat -f -c %T "$DISK")" != tmpfs ] || DISK=$(mktemp -d /var/tmp/blkstack-test.XXXXXX)

# verify NAME FILE ARGS...: randwrite with crc32c verify, two jobs, QD32
verify() {
	local name=$1 file=$2
	shift 2
	rm -f "$file"
	"$BLKSTACK" bench --dev=uring --filename="$file" --rw=randwrite --bs=4k --iodepth=32 \
		--numjobs=2 --size=4M --offset_increment=4M --verify=crc32c \
		--verify_dump_dir="$TMP" "$@" $J >"$TMP/v.json" 2>"$TMP/err"
	check "$name: exit 0 and every block verified" \
		jq -e '[.jobs[] | .error == 0 and .blkstack.verify.mismatches == 0 and
			.blkstack.verify.blocks_verified == 1024] | all' "$TMP/v.json"
}

verify "tmpfs, inline auto" "$SHM/a.img"
check "tmpfs: the file does not take RWF_NOWAIT" jq -e "$U.file_nowait == 0" "$TMP/v.json"
check "tmpfs: every request issued inline" \
	jq -e "$U.inline_requests > 2048 and $U.ring_requests == 0" "$TMP/v.json"

verify "tmpfs, uring_inline=never" "$SHM/a.img" --uring_inline=never
check "uring_inline=never: every request through the ring" \
	jq -e "$U.inline_requests == 0 and $U.ring_requests > 2048" "$TMP/v.json"

verify "disk file, inline auto" "$DISK/a.img"
check "disk file: takes RWF_NOWAIT" jq -e "$U.file_nowait == 1" "$TMP/v.json"
check "disk file: through the ring" \
	jq -e "$U.inline_requests == 0 and $U.ring_requests > 2048" "$TMP/v.json"

verify "disk file, uring_inline=always" "$DISK/a.img" --uring_inline=always
check "uring_inline=always: inline on a disk file too" \
	jq -e "$U.inline_requests > 2048 and $U.ring_requests == 0" "$TMP/v.json"

verify "tmpfs, inline, direct=0, fixedbufs=0, completion_wait=sleep" "$SHM/a.img" \
	--fixedbufs=0 --completion_wait=sleep

# trim inline punches holes
"$BLKSTACK" bench --dev=uring --filename="$SHM/a.img" --rw=trim --bs=1M $J >"$TMP/t.json"
check "inline trim: 8 x 1M" jq -e ".jobs[0].trim.total_ios == 8 and $U.inline_requests == 8" "$TMP/t.json"
check "inline trim: the file is sparse again" test "$(stat -c %b "$SHM/a.img")" -lt 64

# every op over NBD, inline: FUA write, flush, discard, write zeroes
if command -v qemu-io >/dev/null; then
	rm -f "$SHM/n.img"
	start_server --dev=uring --filename="$SHM/n.img" --size=8M || exit 1
	QIO=(qemu-io --image-opts "driver=nbd,path=$SOCK")
	"${QIO[@]}" -c "write -P 0xab 0 4M" -c "write -f -P 0xcd 4M 1M" -c flush \
		-c "discard 1M 1M" -c "write -z 2M 1M" >"$TMP/q.log" 2>&1
	check "qemu-io writes, FUA, flush, discard, write zeroes: exit 0" test $? -eq 0
	"${QIO[@]}" -c "read -P 0xab 0 1M" -c "read -P 0 1M 2M" -c "read -P 0xab 3M 1M" \
		-c "read -P 0xcd 4M 1M" -c "read -P 0 5M 3M" >"$TMP/r.log" 2>&1
	check "read back: data, zeros where discarded and zeroed, FUA data" \
		bash -c "! grep -q 'Pattern verification failed' '$TMP/r.log' && grep -c '^read' '$TMP/r.log' | grep -qx 5"
	"${QIO[@]}" -c "read -P 0xab 1M 1M" >"$TMP/bad.log" 2>&1
	check "a wrong pattern is caught (the check can fail)" \
		grep -q 'Pattern verification failed' "$TMP/bad.log"
	stop_server
	check "server stopped cleanly" test $? -eq 0
	check "the file holds the FUA data after the server stopped" \
		bash -c "cmp -s <(head -c 1048576 /dev/zero | tr '\\0' '\\315') <(dd if='$SHM/n.img' bs=1M skip=4 count=1 status=none)"
else
	echo "skip - qemu-io not installed: inline ops over NBD not checked"
fi

# slow calls (100 us each, as a network file system's) send the queue back
# to the ring; uring_inline=always keeps them inline
if [ -n "${SLOW_IO:-}" ] && [ -f "$SLOW_IO" ]; then
	"$BLKSTACK" bench --dev=uring --filename="$SHM/a.img" --size=8M --rw=write --bs=1M >/dev/null
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	LD_PRELOAD=$SLOW_IO SLOW_IO_US=100 SLOW_IO_COUNT="$TMP/slowed" \
		"$BLKSTACK" bench --dev=uring --filename="$SHM/a.img" --rw=randread --bs=4k \
		--iodepth=8 --runtime=500ms --time_based $J >"$TMP/s.json"
	check "slow calls: the shim slowed some calls" test "$(cat "$TMP/slowed")" -gt 0
	check "slow calls: inline given up, the rest through the ring" \
		jq -e "$U.inline_given_up >= 1 and $U.ring_requests > 0 and .jobs[0].error == 0" "$TMP/s.json"
	check "slow calls: the ring carried most of the I/O" \
		jq -e "$U.ring_requests > $U.inline_requests" "$TMP/s.json"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	LD_PRELOAD=$SLOW_IO SLOW_IO_US=100 \
		"$BLKSTACK" bench --dev=uring --filename="$SHM/a.img" --rw=randread --bs=4k \
		--iodepth=8 --runtime=300ms --time_based --uring_inline=always $J >"$TMP/s.json"
	check "slow calls, uring_inline=always: never given up" \
		jq -e "$U.inline_given_up == 0 and $U.ring_requests == 0 and $U.inline_requests > 0" "$TMP/s.json"
else
	fail "SLOW_IO not set (run through ctest)"
fi
[ "$DISK" = "$TMP" ] || rm -rf "$DISK"
finish
