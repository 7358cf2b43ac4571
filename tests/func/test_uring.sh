#!/usr/bin/env bash
# dev=uring on real files: file creation and sizing,
# buffered and O_DIRECT I/O, and every setup error with its message.
source "$(dirname "$0")/lib.sh" "$@"
J="--output-format=json"

# a missing file is created with size=, and sized exactly
"$BLKSTACK" bench --dev=uring --filename="$TMP/a.img" --size=8M --rw=write --bs=64k $J >"$TMP/w.json"
check "create: exit 0" test $? -eq 0
check "create: file sized to size=" test "$(stat -c %s "$TMP/a.img")" -eq $((8 << 20))
check "create: 128 writes of 64k" jq -e '.jobs[0].write.total_ios == 128' "$TMP/w.json"
# an existing file keeps its size; no size= means the whole file
"$BLKSTACK" bench --dev=uring --filename="$TMP/a.img" --rw=randread --bs=4k --iodepth=16 $J >"$TMP/r.json"
check "existing file: whole file read once (2048 x 4k)" jq -e '.jobs[0].read.total_ios == 2048' "$TMP/r.json"
check "existing file: size unchanged" test "$(stat -c %s "$TMP/a.img")" -eq $((8 << 20))
# O_DIRECT, several queues, merges into readv/writev
for mode in "--direct=1" "--direct=0 --numjobs=2" "--direct=1 --rw=write --bs=4k --iodepth=32" \
	"--fixedbufs=0 --registerfiles=0"; do
	# shellcheck disable=SC2086
	"$BLKSTACK" bench --dev=uring --filename="$TMP/a.img" --rw=randrw --bs=4k --iodepth=8 \
		--runtime=300ms --time_based $mode $J >"$TMP/m.json"
	check "uring $mode: runs without errors" jq -e '[.jobs[].error] | all(. == 0)' "$TMP/m.json"
	check "uring $mode: did I/O" jq -e '[.jobs[] | .read.total_ios + .write.total_ios] | add > 0' "$TMP/m.json"
done
# trim punches holes: the file's allocated blocks go down
"$BLKSTACK" bench --dev=uring --filename="$TMP/a.img" --rw=trim --bs=1M $J >"$TMP/t.json"
check "trim: exit 0" jq -e '.jobs[0].trim.total_ios == 8' "$TMP/t.json"
check "trim: the file is sparse again" test "$(stat -c %b "$TMP/a.img")" -lt 64

# Regression (issue 11: every request ends, with an error if it must): a
# ring request whose deadline passes twice is cancelled.  Reads sent
# straight to io-wq (force_async=1) behind a single worker
# (uring_iowq_max_workers=1): 1024 reads of 64 KiB queue for far longer
# than 2 x rq_timeout=1ms, the ones still queued end with -ECANCELED,
# reported as TIMEOUT, and the run ends.
timeout 60 "$BLKSTACK" bench --dev=uring --filename="$TMP/c.img" --size=64M --rw=randread --bs=64k \
	--iodepth=1024 --hw_queue_depth=1024 --rq_timeout=1ms --uring_inline=never \
	--force_async=1 --uring_iowq_max_workers=1 \
	--runtime=1 --time_based $J >"$TMP/c.json" 2>"$TMP/c.err"
rc=$?
check "late ring requests: the run ends (rc $rc, not timeout's 124)" test $rc -eq 1
check "late ring requests: cancelled (ASYNC_CANCEL sent, carried out)" \
	jq -e '.jobs[0].blkstack.uring | .cancels > 0 and .cancels_hit > 0 and .cancelled > 0' "$TMP/c.json"
check "late ring requests: every cancel's result counted" \
	jq -e '.jobs[0].blkstack.uring | .cancels == .cancels_hit + .cancels_running + .cancels_missed' "$TMP/c.json"
check "late ring requests: the job fails with TIMEOUT (ETIMEDOUT)" \
	bash -c "grep -q 'length 65536: TIMEOUT' '$TMP/c.err' && jq -e '.jobs[0].error == 110' '$TMP/c.json' >/dev/null"
# Buffered writes to one file: io-wq takes every queued one at once, so
# cancels mostly miss (-ENOENT) and whether any lands is up to timing; the
# run still ends, and fails exactly when a request was cancelled.
timeout 60 "$BLKSTACK" bench --dev=uring --filename="$TMP/c.img" --rw=randwrite --bs=4k \
	--iodepth=4096 --hw_queue_depth=4096 --rq_timeout=1ms --uring_inline=never \
	--runtime=1 --time_based $J >"$TMP/c.json" 2>"$TMP/c.err"
rc=$?
check "late buffered writes: the run ends (rc $rc, not timeout's 124)" test $rc -eq 0 -o $rc -eq 1
check "late buffered writes: fails (rc $rc) exactly when a request was cancelled" \
	jq -e --argjson rc $rc '.jobs[0] | (.blkstack.uring.cancelled > 0) == ($rc == 1) and (.error == 110) == ($rc == 1)' "$TMP/c.json"
check "late buffered writes: every cancel's result counted" \
	jq -e '.jobs[0].blkstack.uring | .cancels == .cancels_hit + .cancels_running + .cancels_missed' "$TMP/c.json"
# uring_iowq_max_workers is checked against the kernel; out of range is refused
expect_error "uring_iowq_max_workers out of range names the option" "uring_iowq_max_workers" \
	bench --dev=uring --filename="$TMP/c.img" --uring_iowq_max_workers=70000 --runtime=10ms
"$BLKSTACK" bench --dev=uring --filename="$TMP/c.img" --rw=randwrite --bs=4k --iodepth=32 \
	--uring_inline=never --runtime=300ms --time_based $J >"$TMP/c2.json"
check "on time: nothing cancelled, no error" \
	jq -e '.jobs[0].error == 0 and .jobs[0].blkstack.uring.cancels == 0' "$TMP/c2.json"
rm -f "$TMP/c.img"

# write then verify on a file: QD 1, 32 and 128, two jobs side by side,
# buffered and O_DIRECT
for direct in 0 1; do
	for qd in 1 32 128; do
		name="verify direct=$direct iodepth=$qd"
		rm -f "$TMP/v.img"
		"$BLKSTACK" bench --dev=uring --filename="$TMP/v.img" --rw=randwrite --bs=4k \
			--iodepth=$qd --numjobs=2 --size=2M --offset_increment=2M --direct=$direct \
			--verify=crc32c --verify_dump_dir="$TMP" $J >"$TMP/v.json" 2>"$TMP/err"
		check "$name: exit 0" test $? -eq 0
		check "$name: file holds both ranges" test "$(stat -c %s "$TMP/v.img")" -eq $((4 << 20))
		check "$name: 512 blocks verified per job, 0 mismatches" \
			jq -e '[.jobs[].blkstack.verify | [.blocks_verified, .mismatches]] == [[512, 0], [512, 0]]' "$TMP/v.json"
	done
done

# a byte flipped in the file between write and verify is caught at its offset
rm -f "$TMP/f.img"
"$BLKSTACK" bench --dev=uring --filename="$TMP/f.img" --rw=write --bs=4k --size=1M \
	--verify=crc32c --do_verify=0 >/dev/null
check "flip: written" test "$(stat -c %s "$TMP/f.img")" -eq $((1 << 20))
# byte 100 of the block at offset 81920 (block 20, inside the data after the header)
printf '\x5a' | dd of="$TMP/f.img" bs=1 seek=$((81920 + 100)) conv=notrunc status=none
orig=$(od -An -tx1 -j $((81920 + 100)) -N1 "$TMP/f.img" | tr -d ' ')
check "flip: the byte changed" test "$orig" = 5a
"$BLKSTACK" bench --dev=uring --filename="$TMP/f.img" --rw=read --bs=4k --verify=crc32c \
	--verify_only=1 --verify_dump_dir="$TMP" $J >"$TMP/flip.json" 2>"$TMP/flip.err"
check "flip: the run fails" test $? -eq 1
check "flip: reported at offset 81920 with the crc32c values" \
	grep -qE "^verify: bad block at offset 81920 \(job 0, len 4096\): crc32c expected 0x[0-9a-f]{8} found 0x[0-9a-f]{8}" "$TMP/flip.err"
check "flip: exactly one bad block of 256" \
	jq -e '.jobs[0].blkstack.verify == {"type": "crc32c", "blocks_verified": 256, "mismatches": 1}' "$TMP/flip.json"
check "flip: the bad block written out for inspection" \
	cmp -s "$TMP/blkstack-verify.uring.81920.received" <(dd if="$TMP/f.img" bs=4096 skip=20 count=1 status=none)

# errors, each with its cause and what to do
expect_error "no filename" "dev=uring needs filename=PATH" bench --dev=uring --rw=read
expect_error "missing file without size" "missing.img: no such file; give size= to create it" \
	bench --dev=uring --filename="$TMP/missing.img" --rw=read
check "missing file: nothing created" test ! -e "$TMP/missing.img"
expect_error "a directory" "filename=$TMP: a directory; dev=uring takes a regular file" bench --dev=uring --filename="$TMP" --rw=read
expect_error "a character device" "/dev/null: neither a regular file nor a block device" \
	bench --dev=uring --filename=/dev/null --rw=read
head -c 10000 /dev/zero >"$TMP/odd.img"
expect_error "a size past a file of 10000 bytes: the device's 9728 explained" \
	"size=65536: past the end of the 9728-byte device \\(.*/odd.img is 10000 bytes: the device is its whole 512-byte blocks\\)$" \
	bench --dev=uring --filename="$TMP/odd.img" --rw=read --size=64k
expect_error "no size= and a bs past a file of 10000 bytes: where the size came from" \
	"size=9728: smaller than bs=16384 \\(.*/odd.img is 10000 bytes: the device is its whole 512-byte blocks\\)$" \
	bench --dev=uring --filename="$TMP/odd.img" --rw=randread --bs=16k
: >"$TMP/empty.img"
expect_error "an empty file without size" "empty.img: empty" bench --dev=uring --filename="$TMP/empty.img" --rw=read
# permission denied, as an unprivileged user
if command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
	chmod 755 "$TMP"
	truncate -s 1M "$TMP/root-only.img"
	chmod 600 "$TMP/root-only.img"
	runuser -u nobody -- "$BLKSTACK" bench --dev=uring --filename="$TMP/root-only.img" --rw=read \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "root-only.img: Permission denied opening it for reading and writing; run as a user who may write it" "$TMP/err"; then
		pass "permission denied names the file and what to do"
	else
		fail "permission denied (rc=$rc: $(cat "$TMP/err"))"
	fi
else
	fail "runuser or user nobody missing: cannot test permission denied"
fi
# io_uring refused by the environment (a seccomp filter, as in containers)
# with uring_engine=io_uring: an error (the automatic thread-pool fallback
# is tests/func/test_uring_pool.sh)
if [ -n "${DENY_SYSCALL:-}" ]; then
	for e in EPERM ENOSYS; do
		"$DENY_SYSCALL" setup $e "$BLKSTACK" bench --dev=uring --filename="$TMP/a.img" --rw=read \
			--uring_engine=io_uring >"$TMP/out" 2>"$TMP/err"
		rc=$?
		if [ $rc -eq 1 ] && grep -qE "io_uring: .*(kernel.io_uring_disabled|seccomp)" "$TMP/err"; then
			pass "io_uring_setup refused ($e), uring_engine=io_uring: the message names the cause"
		else
			fail "io_uring_setup refused ($e), uring_engine=io_uring (rc=$rc: $(cat "$TMP/err"))"
		fi
	done
	# io_uring_register refused: no registered files or buffers, I/O still works
	"$DENY_SYSCALL" register EPERM "$BLKSTACK" bench --dev=uring --filename="$TMP/a.img" \
		--rw=randread --size=4M $J >"$TMP/reg.json"
	check "io_uring_register refused: falls back, reads all 1024 blocks" \
		jq -e '.jobs[0].read.total_ios == 1024 and .jobs[0].error == 0' "$TMP/reg.json"
else
	fail "DENY_SYSCALL not set (run through ctest)"
fi

finish
