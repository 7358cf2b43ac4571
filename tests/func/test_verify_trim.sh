#!/usr/bin/env bash
# fio's trim verification (trim_percentage, trim_backlog,
# trim_backlog_batch, trim_verify_zero), verify_state_save /
# verify_state_load and experimental_verify.
source "$(dirname "$0")/lib.sh" "$@"

BLKSTACK=$(realpath "$BLKSTACK")
cd "$TMP" || exit 1
TRIM="--verify=md5 --trim_percentage=100 --trim_backlog=16"

# Every written block trimmed 16 at a time; trim_verify_zero=1 (fio's
# default) reads each back and checks it is zeros.
"$BLKSTACK" bench --dev=ram --rw=write --bs=4k --size=1M $TRIM \
	--output-format=json >t1.json 2>t1.err
check "trim 100%: exit 0" test $? -eq 0
check "trim 100%: 256 trims, 256 zero-checked reads, no mismatch" jq_true \
	'.jobs[0] | .trim.total_ios == 256 and .read.total_ios == 256 and .write.total_ios == 256 and .blkstack.verify == {"type": "md5", "blocks_verified": 256, "mismatches": 0, "trimmed_blocks": 256, "trimmed_zero_checked": 256}' t1.json

# trim_verify_zero=0: a trimmed block leaves the verify list (fio's
# get_next_trim()): nothing is read back.
"$BLKSTACK" bench --dev=ram --rw=write --bs=4k --size=1M $TRIM \
	--trim_verify_zero=0 --output-format=json >t2.json
check "trim_verify_zero=0: trimmed blocks are not read back" jq_true \
	'.jobs[0] | .trim.total_ios == 256 and .read.total_ios == 0 and .blkstack.verify.blocks_verified == 0 and .blkstack.verify.trimmed_blocks == 256' t2.json

# A share of the blocks, random, queued: those trimmed read back as zeros,
# the others as written; on ram and on a file (uring punches a hole).
for dev in ram "uring --filename=$TMP/u.img"; do
	# shellcheck disable=SC2086
	"$BLKSTACK" bench --dev=$dev --rw=randwrite --bs=4k --size=1M --iodepth=8 \
		--verify=crc32c --trim_percentage=50 --trim_backlog=8 \
		--output-format=json >t3.json 2>t3.err
	check "trim 50% ${dev%% *}: exit 0" test $? -eq 0
	check "trim 50% ${dev%% *}: some trimmed, each checked for zeros, every block verified" jq_true \
		'.jobs[0] | .blkstack.verify as $v | $v.trimmed_blocks > 30 and $v.trimmed_blocks < 226 and .trim.total_ios == $v.trimmed_blocks and $v.trimmed_zero_checked == $v.trimmed_blocks and $v.blocks_verified == 256 and $v.mismatches == 0' t3.json
	check "trim 50% ${dev%% *}: no zeros note on a device that zeroes" \
		test ! -s t3.err
done
# trim_backlog_batch: 2 of every 8 written
"$BLKSTACK" bench --dev=ram --rw=write --bs=4k --size=1M --verify=crc32c \
	--trim_percentage=100 --trim_backlog=8 --trim_backlog_batch=2 \
	--output-format=json >t4.json
check "trim_backlog_batch=2: 2 trims per 8 writes (64)" jq_true \
	'.jobs[0].blkstack.verify | .trimmed_blocks == 64 and .trimmed_zero_checked == 64 and .blocks_verified == 256 and .mismatches == 0' t4.json

# A device whose discard leaves the data (null's discard_keeps_data fault):
# every trimmed block fails the zeros check, and a note says the device
# does not promise zeros.
"$BLKSTACK" bench --dev=null --memory_backed=1 --discard_keeps_data=1 \
	--rw=write --bs=4k --size=1M $TRIM --output-format=json >t5.json 2>t5.err
check "discard keeps data: exit 1" test $? -eq 1
check "discard keeps data: 256 trimmed blocks bad" jq_true \
	'.jobs[0] | .error != 0 and .blkstack.verify.mismatches == 256 and .blkstack.verify.trimmed_zero_checked == 256' t5.json
check "discard keeps data: fio's trim message" \
	grep -q "^trim: verify failed at null offset 4096, length 4096, block offset 0" t5.err
check "discard keeps data: the note" grep -q "trim_verify_zero=1 on the null device: its discard does not promise zeros" t5.err
"$BLKSTACK" bench --dev=null --memory_backed=1 --discard_keeps_data=1 \
	--rw=write --bs=4k --size=1M $TRIM --trim_verify_zero=0 \
	--output-format=json >t6.json 2>/dev/null
check "discard keeps data, trim_verify_zero=0: passes, nothing read" jq_true \
	'.jobs[0] | .error == 0 and .read.total_ios == 0 and .blkstack.verify.trimmed_blocks == 256' t6.json

expect_error "trim with verify_backlog refused" "trim_percentage= with verify_backlog=" \
	bench --dev=ram --rw=write --size=1M $TRIM --verify_backlog=4

# fio on a loop device (root): rw=trimwrite (fio 3.33 asserts on trim
# verification without trims in rw=) trims each block before writing it
# (256), and trim verification trims the written blocks again and reads
# them back as zeros.  blkstack's rw=write does the second part: its
# trims are fio's less the workload's.
if [ "$(id -u)" = 0 ] && command -v fio >/dev/null && command -v losetup >/dev/null; then
	truncate -s 4M loop.img
	if LOOP=$(losetup -f --show loop.img 2>/dev/null); then
		fio --name=t --filename="$LOOP" --size=1M --bs=4k --rw=trimwrite \
			--ioengine=psync $TRIM --output-format=json >f.json 2>f.err
		losetup -d "$LOOP"
		"$BLKSTACK" bench --dev=uring --filename="$TMP/b.img" --size=1M --bs=4k \
			--rw=write $TRIM --output-format=json >b.json
		check "fio: trimwrite with trim verification passes" jq_true \
			'.jobs[0].error == 0 and .jobs[0].read.total_ios == 256' f.json
		# fio saved its state (verify_state_save=1 is fio's default)
		if [ -s local-t-0-verify.state ]; then
			expect_error "fio's state file: named as such" "local-t-0-verify.state: fio's verify state \\(version 3\\), not blkstack's" \
				bench --name=t --dev=uring --filename="$TMP/b.img" --size=1M --bs=4k \
				--rw=read --verify=md5 --verify_only=1 --verify_state_load=1
		else
			fail "fio left no local-t-0-verify.state"
		fi
		check "blkstack: trims = fio's trims - fio's workload trims, reads the same" \
			test "$(jq '.jobs[0] | [.trim.total_ios, .read.total_ios, .error]' b.json | tr -d ' \n')" = \
			"$(jq '.jobs[0] | [.trim.total_ios - .write.total_ios, .read.total_ios, .error]' f.json | tr -d ' \n')"
	else
		echo "# no loop device: fio comparison skipped"
	fi
fi

# verify_state_save: a write run cut short by its runtime saves its map
# of written blocks; a verify_only run with verify_state_load reads back
# those blocks only.
IMG=$TMP/s.img
RUN="bench --dev=uring --filename=$IMG --size=4M --bs=4k --verify=crc32c"
# shellcheck disable=SC2086
"$BLKSTACK" $RUN --rw=randwrite --rate_iops=2000 --runtime=150ms \
	--do_verify=0 --verify_state_save=1 --output-format=json >s1.json
check "state save: exit 0, the state file" test $? -eq 0 -a -s local-bench-0-verify.state
W=$(jq '.jobs[0].write.total_ios' s1.json)
check "state save: a part of the region written ($W of 1024)" test "$W" -gt 0 -a "$W" -lt 1024
# shellcheck disable=SC2086
"$BLKSTACK" $RUN --rw=read --verify_only=1 --verify_state_load=1 --output-format=json >s2.json
check "state load: exactly the $W written blocks verified, all good" jq_true \
	".jobs[0] | .error == 0 and .read.total_ios == $W and .blkstack.verify.blocks_verified == $W and .blkstack.verify.mismatches == 0" s2.json
# shellcheck disable=SC2086
"$BLKSTACK" $RUN --rw=read --verify_only=1 --output-format=json >s3.json 2>/dev/null
check "without the state: the unwritten blocks fail" jq_true \
	".jobs[0] | .blkstack.verify.mismatches == 1024 - $W" s3.json

# SIGINT ends a time_based write run: the state is saved all the same.
rm -f local-bench-0-verify.state
RUN="bench --dev=uring --filename=$TMP/s16.img --bs=4k --verify=crc32c"
# shellcheck disable=SC2086
"$BLKSTACK" $RUN --size=16M --rw=randwrite --rate_iops=3000 --runtime=30s --time_based \
	--do_verify=0 --verify_state_save=1 --output-format=json >s4.json 2>/dev/null &
PID=$!
sleep 1
kill -INT $PID
wait $PID
check "SIGINT: the state file" test -s local-bench-0-verify.state
W=$(jq '.jobs[0].write.total_ios' s4.json)
# shellcheck disable=SC2086
"$BLKSTACK" $RUN --size=16M --rw=read --verify_only=1 --verify_state_load=1 --output-format=json >s5.json
# the state holds every write that completed: the W counted in the
# window, and the one in flight at the SIGINT (iodepth=1), which the
# drain completes after the window closed (not counted: TSan under the
# suite's load saw W + 1 once)
check "SIGINT: the $W written blocks verified (and the one in flight at the signal, if any)" jq_true \
	".jobs[0] | $W > 0 and (.blkstack.verify.blocks_verified - $W | . == 0 or . == 1) and .blkstack.verify.mismatches == 0" s5.json

# shellcheck disable=SC2086
expect_error "state of another size refused" "local-bench-0-verify.state: size" \
	$RUN --size=8M --rw=read --verify_only=1 --verify_state_load=1
printf 'X' | dd of=local-bench-0-verify.state bs=1 seek=60 conv=notrunc 2>/dev/null
# shellcheck disable=SC2086
expect_error "damaged state refused" "crc32c: the file is damaged" \
	$RUN --size=16M --rw=read --verify_only=1 --verify_state_load=1
rm -f local-bench-0-verify.state
# shellcheck disable=SC2086
expect_error "missing state refused" "verify_state_load=1: local-bench-0-verify.state: No such file" \
	$RUN --size=16M --rw=read --verify_only=1 --verify_state_load=1
expect_error "verify_state_load without verify_only refused" "needs verify_only=1" \
	bench --dev=ram --rw=write --size=1M --verify=crc32c --verify_state_load=1
expect_error "verify_state_save with verify_backlog refused" "verify_state_save/verify_state_load with verify_backlog=" \
	bench --dev=ram --rw=write --size=1M --verify=crc32c --verify_state_save=1 --verify_backlog=4

# experimental_verify: taken, noted, the same blocks checked.
"$BLKSTACK" bench --dev=ram --rw=randwrite --bs=4k --size=1M --verify=crc32c \
	--experimental_verify=1 --output-format=json >e.json 2>e.err
check "experimental_verify: every block verified" jq_true \
	'.jobs[0].blkstack.verify.blocks_verified == 256 and .jobs[0].blkstack.verify.mismatches == 0' e.json
check "experimental_verify: the note" grep -q "experimental_verify=1: blkstack does not replay" e.err

# fio takes the options as written in a job file
cat >job.fio <<JOB
[t]
rw=write
size=1M
verify=md5
trim_percentage=100
trim_backlog=16
trim_backlog_batch=4
trim_verify_zero=1
experimental_verify=0
verify_state_save=0
JOB
check "blkstack parses the job file" "$BLKSTACK" bench --dev=ram --parse-only job.fio
if command -v fio >/dev/null; then
	check "fio parses the job file" fio --parse-only job.fio
fi
finish
