#!/usr/bin/env bash
# verify=crc32c: written blocks are read back and checked after the writes
# (fio's verify phase); bad blocks are reported one line each, written out,
# counted, and fail the run.
source "$(dirname "$0")/lib.sh" "$@"

DUMP=$TMP/dump
mkdir -p "$DUMP"
BS=4096
SIZE=$((4 << 20))              # per thread
BLOCKS=$((SIZE / BS))

# Write then verify: two threads side by side (offset_increment), each
# verifying exactly the blocks it wrote.
for dev in ram "null --memory_backed=1"; do
	for rw in write randwrite randrw; do
		for qd in 1 32 128; do
			name="$dev $rw iodepth=$qd"
			out=$TMP/v.json
			# shellcheck disable=SC2086
			if ! "$BLKSTACK" bench --dev=$dev --rw=$rw --bs=$BS --iodepth=$qd \
				--numjobs=2 --size=$SIZE --offset_increment=$SIZE \
				--verify=crc32c --verify_dump_dir="$DUMP" \
				--output-format=json >"$out" 2>"$TMP/err"; then
				fail "$name: bench exited non-zero: $(head -c 300 "$TMP/err")"
				continue
			fi
			check "$name: no errors, 0 mismatches" \
				jq -e '[.jobs[] | (.error == 0) and (.blkstack.verify.mismatches == 0)] == [true, true]' "$out"
			check "$name: blocks_verified = blocks written" \
				jq -e '[.jobs[] | .blkstack.verify.blocks_verified == .write.total_ios and .write.total_ios > 0] == [true, true]' "$out"
			if [ $rw != randrw ]; then
				check "$name: every block of the region written and verified" \
					jq -e "[.jobs[].blkstack.verify.blocks_verified] == [$BLOCKS, $BLOCKS]" "$out"
				# as fio: the verify reads are the read statistics
				check "$name: verify reads counted as reads" \
					jq -e "[.jobs[].read.total_ios] == [$BLOCKS, $BLOCKS]" "$out"
			fi
			check "$name: verify object" \
				jq -e '.jobs[0].blkstack.verify.type == "crc32c" and .jobs[0]."job options".verify == "crc32c"' "$out"
		done
	done
done
check "no dump files from good runs" test -z "$(ls -A "$DUMP")"

# The text report's line.
"$BLKSTACK" bench --dev=ram --rw=write --size=1M --verify=crc32c >"$TMP/v.txt"
check "text: verify line" grep -qE "^  verify       : crc32c, 256 blocks verified, 0 mismatches$" "$TMP/v.txt"

# A time-based write job verifies what it wrote once the runtime is up.
"$BLKSTACK" bench --dev=ram --rw=randwrite --norandommap --iodepth=16 --size=1M \
	--runtime=200ms --time_based --verify=crc32c --output-format=json >"$TMP/tb.json"
check "time_based: exit 0" test $? -eq 0
check "time_based: every block rewritten and verified once" \
	jq -e '.jobs[0].blkstack.verify == {"type": "crc32c", "blocks_verified": 256, "mismatches": 0} and .jobs[0].write.total_ios > 256' "$TMP/tb.json"

# do_verify=0 writes the headers only; a later verify_only job, or a read
# job with verify set, checks them.
cat >"$TMP/later.fio" <<JOB
[global]
bs=4k
size=2M
numjobs=2
offset_increment=2M
verify=crc32c
verify_dump_dir=$DUMP

[write]
rw=randwrite
iodepth=8
do_verify=0

[check]
stonewall
rw=write
verify_only=1
iodepth=32

[read]
stonewall
rw=randread
iodepth=4
JOB
"$BLKSTACK" bench --dev=ram --output-format=json "$TMP/later.fio" >"$TMP/later.json"
check "verify later: exit 0" test $? -eq 0
check "do_verify=0: nothing read back" \
	jq -e '[.jobs[0,1] | .read.total_ios == 0 and .blkstack.verify.blocks_verified == 0] == [true, true]' "$TMP/later.json"
check "verify_only: each region read once, no writes" \
	jq -e '[.jobs[2,3] | .write.total_ios == 0 and .read.total_ios == 512 and .blkstack.verify.blocks_verified == 512 and .blkstack.verify.mismatches == 0] == [true, true]' "$TMP/later.json"
check "read job with verify: every read checked" \
	jq -e '[.jobs[4,5] | .read.total_ios == 512 and .blkstack.verify.blocks_verified == 512 and .error == 0] == [true, true]' "$TMP/later.json"

# A corrupted block: a job without verify overwrites 512 bytes inside the
# second block; the crc catches it, the block is written out.
cat >"$TMP/smash.fio" <<JOB
[global]
bs=4k
verify_dump_dir=$DUMP

[w]
rw=write
size=1M
verify=crc32c
do_verify=0

[smash]
stonewall
rw=write
bs=512
offset=5120
size=512

[v]
stonewall
rw=read
size=1M
verify=crc32c
JOB
"$BLKSTACK" bench --dev=ram --output-format=json "$TMP/smash.fio" >"$TMP/smash.json" 2>"$TMP/smash.err"
check "corruption: exit 1" test $? -eq 1
check "corruption: one crc32c line naming offset, job, len, header and dump" \
	grep -qE "^verify: bad block at offset 4096 \(job 0, len 4096\): crc32c expected 0x[0-9a-f]{8} found 0x[0-9a-f]{8} \(header numberio 1, seed 0x[0-9a-f]{16}\); received data in $DUMP/blkstack-verify\.ram\.4096\.received$" "$TMP/smash.err"
check "corruption: exactly one bad block reported" test "$(grep -c '^verify: bad block' "$TMP/smash.err")" -eq 1
check "corruption: job error names the first bad offset" \
	grep -qE "^blkstack bench: v \(ram, job 0\): verify: 1 of 256 blocks bad, the first at offset 4096$" "$TMP/smash.err"
check "corruption: JSON counts it, error EILSEQ" \
	jq -e '.jobs[2].blkstack.verify == {"type": "crc32c", "blocks_verified": 256, "mismatches": 1} and .jobs[2].error == 84' "$TMP/smash.json"
f=$DUMP/blkstack-verify.ram.4096.received
check "corruption: dump is the block as read" test "$(stat -c %s "$f" 2>/dev/null)" = 4096
check "corruption: dump keeps the header" test "$(head -c 4 "$f" 2>/dev/null)" = BLKV
rm -f "$DUMP"/*

# Headers that do not match: written with bs=8k, checked with bs=4k.
"$BLKSTACK" bench --dev=ram --name=w --rw=write --bs=8k --size=64k --verify=crc32c \
	--do_verify=0 --name=v --stonewall --rw=read --bs=4k --size=64k \
	--verify=crc32c --verify_only --verify_dump_dir="$DUMP" >/dev/null 2>"$TMP/len.err"
check "bs mismatch: exit 1" test $? -eq 1
check "bs mismatch: header len named" \
	grep -qE "^verify: bad block at offset 0 \(job 0, len 4096\): header len expected 4096 found 8192 \(header numberio 0, " "$TMP/len.err"
check "bs mismatch: second half has no header" \
	grep -qE "^verify: bad block at offset 4096 \(job 0, len 4096\): header magic expected 0x564b4c42 found 0x[0-9a-f]{8} " "$TMP/len.err"
rm -f "$DUMP"/*

# Never written: every block is bad; 100 lines, 10 dumps, the rest counted.
"$BLKSTACK" bench --dev=ram --rw=read --size=1M --verify=crc32c --verify_only \
	--iodepth=16 --verify_dump_dir="$DUMP" --output-format=json >"$TMP/empty.json" 2>"$TMP/empty.err"
check "unwritten: exit 1" test $? -eq 1
check "unwritten: magic mismatch on zeros" \
	grep -qE "^verify: bad block at offset 0 \(job 0, len 4096\): header magic expected 0x564b4c42 found 0x00000000 \(header numberio 0, seed 0x0000000000000000\); received data in " "$TMP/empty.err"
check "unwritten: 100 lines" test "$(grep -c '^verify: bad block' "$TMP/empty.err")" -eq 100
check "unwritten: the rest counted" grep -qF "verify: job 0: 156 more bad blocks not reported (at most 100 messages per thread)" "$TMP/empty.err"
check "unwritten: 10 dumps" test "$(ls "$DUMP" | wc -l)" -eq 10
check "unwritten: later lines say the block was not written out" \
	grep -qF "not written out (at most 10 per thread)" "$TMP/empty.err"
check "unwritten: every block checked and counted" \
	jq -e '.jobs[0].blkstack.verify.blocks_verified == 256 and .jobs[0].blkstack.verify.mismatches == 256' "$TMP/empty.json"
rm -f "$DUMP"/*

# A dump directory that is not there: said in the line, the run goes on.
"$BLKSTACK" bench --dev=ram --rw=read --size=8k --verify=crc32c --verify_only \
	--verify_dump_dir="$TMP/nonexistent" >/dev/null 2>"$TMP/nodir.err"
check "no dump dir: message says so" \
	grep -qE "; could not write $TMP/nonexistent/blkstack-verify\.ram\.0\.received: No such file or directory$" "$TMP/nodir.err"
check "no dump dir: both blocks checked" test "$(grep -c '^verify: bad block' "$TMP/nodir.err")" -eq 2

# Devices and values that cannot verify.
expect_error "plain null cannot verify" \
	"^blkstack bench: verify=crc32c: the null device does not store data; use dev=ram, dev=uring, or null with memory_backed=1$" \
	bench --dev=null --rw=write --size=1M --verify=crc32c
expect_error "verify_async unsupported" "option 'verify_async' is a fio option that blkstack bench does not support" \
	bench --dev=ram --rw=write --verify=crc32c --verify_async=2
expect_error "verify_only without verify" "verify_only=1 needs verify= \\(crc32c, md5, \.\.\.\)" \
	bench --dev=ram --rw=read --verify_only
expect_error "offset_increment past the device" "offset_increment.*past the end" \
	bench --dev=ram --dev_size=8M --rw=write --size=4M --numjobs=3 --offset_increment=4M
"$BLKSTACK" bench --dev=ram --rw=write --size=1M --verify=crc32c-intel >/dev/null
check "crc32c-intel is crc32c" test $? -eq 0
if command -v fio >/dev/null; then
	# verify_dump_dir is blkstack's own; the rest is fio's
	grep -v '^verify_dump_dir=' "$TMP/later.fio" >"$TMP/later-fio.fio"
	check "fio --parse-only accepts the verify job file" fio --parse-only "$TMP/later-fio.fio"
fi
finish
