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
check "corruption: dump keeps the header (fio's magic 0xacca)" test "$(od -An -tx1 -N 2 "$f" 2>/dev/null | tr -d ' ')" = caac
rm -f "$DUMP"/*

# Headers that do not match: written with bs=8k, checked with bs=4k.
"$BLKSTACK" bench --dev=ram --name=w --rw=write --bs=8k --size=64k --verify=crc32c \
	--do_verify=0 --name=v --stonewall --rw=read --bs=4k --size=64k \
	--verify=crc32c --verify_only --verify_dump_dir="$DUMP" >/dev/null 2>"$TMP/len.err"
check "bs mismatch: exit 1" test $? -eq 1
check "bs mismatch: header len named" \
	grep -qE "^verify: bad block at offset 0 \(job 0, len 4096\): header len expected 4096 found 8192 \(header numberio 0, " "$TMP/len.err"
check "bs mismatch: second half has no header" \
	grep -qE "^verify: bad block at offset 4096 \(job 0, len 4096\): header magic expected 0xacca found 0x[0-9a-f]{4} " "$TMP/len.err"
rm -f "$DUMP"/*

# Never written: every block is bad; 100 lines, 10 dumps, the rest counted.
"$BLKSTACK" bench --dev=ram --rw=read --size=1M --verify=crc32c --verify_only \
	--iodepth=16 --verify_dump_dir="$DUMP" --output-format=json >"$TMP/empty.json" 2>"$TMP/empty.err"
check "unwritten: exit 1" test $? -eq 1
check "unwritten: magic mismatch on zeros" \
	grep -qE "^verify: bad block at offset 0 \(job 0, len 4096\): header magic expected 0xacca found 0x0000 \(the header's 40 bytes all zero: never written\?\); received data in " "$TMP/empty.err"
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

# fio's other methods: each writes and reads back what it wrote, two
# threads side by side; a header per block or per 512 bytes (meta: the
# header alone; pattern: the pattern alone).
METHODS="md5 sha1 sha256 sha512 sha3-224 sha3-256 sha3-384 sha3-512 xxhash crc32c crc32 crc16 crc7 crc64 meta"
for m in $METHODS pattern; do
	for iv in 0 512; do
		name="verify=$m verify_interval=$iv"
		extra=()
		[ $m = pattern ] && extra=(--verify_pattern='0xa5%o"blk"')
		if ! "$BLKSTACK" bench --dev=ram --rw=randwrite --bs=4k --iodepth=16 --numjobs=2 \
			--size=1M --offset_increment=1M --verify=$m --verify_interval=$iv "${extra[@]}" \
			--verify_dump_dir="$DUMP" --output-format=json >"$TMP/m.json" 2>"$TMP/err"; then
			fail "$name: bench exited non-zero: $(head -c 300 "$TMP/err")"
			continue
		fi
		check "$name: every block read back, none bad" \
			jq_true "[.jobs[] | .error == 0 and .blkstack.verify == {\"type\": \"$m\", \"blocks_verified\": 256, \"mismatches\": 0} and .read.total_ios == 256] == [true, true]" "$TMP/m.json"
		check "$name: job options name the method" \
			jq_true ".jobs[0].\"job options\".verify == \"$m\"" "$TMP/m.json"
	done
done
check "methods: no dump files from good runs" test -z "$(ls -A "$DUMP")"

# A corrupted block, each method: a job without verify overwrites 512
# bytes inside the second block; the method names it and its offset.
# meta checks the header alone: there the bytes hit the header.
smash_job() { # METHOD SMASH_OFFSET [pattern]
	cat <<JOB
[global]
bs=4k
verify_dump_dir=$DUMP

[w]
rw=write
size=1M
verify=$1
${3:+verify_pattern=$3}
do_verify=0

[smash]
stonewall
rw=write
bs=512
offset=$2
size=512

[v]
stonewall
rw=read
size=1M
verify=$1
${3:+verify_pattern=$3}
JOB
}
for m in $METHODS pattern; do
	off=5120 pat=
	[ $m = meta ] && off=4096
	# fio's sha512 covers an interval's first 128 data bytes and its
	# last (n mod 128) alone (src/bench/verify.h): smash the block's end
	[ $m = sha512 ] && off=7680
	[ $m = pattern ] && pat=0x5a
	smash_job $m $off $pat >"$TMP/smash-$m.fio"
	"$BLKSTACK" bench --dev=ram --output-format=json "$TMP/smash-$m.fio" >"$TMP/s.json" 2>"$TMP/s.err"
	check "corrupt $m: exit 1" test $? -eq 1
	case $m in
	crc32c) what="crc32c expected 0x[0-9a-f]{8} found 0x[0-9a-f]{8} \(header numberio 1, " ;;
	crc32|xxhash) what="$m expected 0x[0-9a-f]{8} found 0x[0-9a-f]{8} \(header numberio 1, " ;;
	crc16) what="crc16 expected 0x[0-9a-f]{4} found 0x[0-9a-f]{4} \(header numberio 1, " ;;
	crc7) what="crc7 expected 0x[0-9a-f]{2} found 0x[0-9a-f]{2} \(header numberio 1, " ;;
	crc64) what="crc64 expected 0x[0-9a-f]{16} found 0x[0-9a-f]{16} \(header numberio 1, " ;;
	meta) what="header magic expected 0xacca found 0x[0-9a-f]{4} " ;;
	pattern) what="pattern byte 1024 expected 0x5a found 0x[0-9a-f]{2} \([1-8] bad bits\); " ;;
	*) what="$m expected [0-9a-f]+ found [0-9a-f]+ \(header numberio 1, " ;;
	esac
	check "corrupt $m: the line names the offset and the method's finding" \
		grep -qE "^verify: bad block at offset 4096 \(job 0, len 4096\): $what" "$TMP/s.err"
	check "corrupt $m: one bad block of 256" \
		jq_true ".jobs[2].blkstack.verify == {\"type\": \"$m\", \"blocks_verified\": 256, \"mismatches\": 1} and .jobs[2].error == 84" "$TMP/s.json"
	rm -f "$DUMP"/*
done

# verify_pattern=%o: each block holds its own offset, 8 bytes little-endian,
# repeated: seen in the file, and a block read back from elsewhere is bad.
IMG=$TMP/pat.img
"$BLKSTACK" bench --dev=uring --filename="$IMG" --dev_size=1M --rw=write --size=64k \
	--verify=pattern --verify_pattern=%o --output-format=json >"$TMP/p.json"
check "pattern %o: written and verified" \
	jq_true '.jobs[0].error == 0 and .jobs[0].blkstack.verify == {"type": "pattern", "blocks_verified": 16, "mismatches": 0}' "$TMP/p.json"
check "pattern %o: the block at 8192 is 8192, repeated" \
	test "$(od -An -tx1 -j 8200 -N 16 "$IMG" | tr -d ' \n')" = 00200000000000000020000000000000
check "pattern %o: the block at 61440 ends with 61440" \
	test "$(od -An -tx1 -j 65528 -N 8 "$IMG" | tr -d ' \n')" = 00f0000000000000
"$BLKSTACK" bench --dev=uring --filename="$IMG" --rw=read --offset=4k --size=60k \
	--verify=pattern --verify_pattern=0xff%o --verify_only --verify_dump=0 \
	--output-format=json >"$TMP/p2.json" 2>"$TMP/p2.err"
check "pattern: another pattern is bad, byte 0 named" \
	grep -qE '^verify: bad block at offset 4096 \(job 0, len 4096\): pattern byte 0 expected 0xff found 0x00 \(8 bad bits\); not written out \(verify_dump=0\)$' "$TMP/p2.err"
check "pattern: every block bad" jq_true '.jobs[0].blkstack.verify.mismatches == 15' "$TMP/p2.json"

# verify_interval and verify_offset: a header every 512 bytes, 100 bytes
# into its interval (fio's magic 0xacca, the interval's own offset at +16).
IMG=$TMP/iv.img
"$BLKSTACK" bench --dev=uring --filename="$IMG" --dev_size=1M --rw=randwrite --iodepth=8 --size=64k \
	--verify=md5 --verify_interval=512 --verify_offset=100 --output-format=json >"$TMP/iv.json"
check "interval+offset: verified" \
	jq_true '.jobs[0].error == 0 and .jobs[0].blkstack.verify.mismatches == 0 and .jobs[0].blkstack.verify.blocks_verified == 16' "$TMP/iv.json"
check "interval+offset: a header 100 bytes into the interval at 9728" \
	test "$(od -An -tx1 -j $((9728 + 100)) -N 2 "$IMG" | tr -d ' ')" = caac
check "interval+offset: that header has the interval's offset" \
	test "$(od -An -tu8 -j $((9728 + 116)) -N 8 "$IMG" | tr -d ' ')" = 9728
check "interval+offset: no header at the interval's start" \
	test "$(od -An -tx1 -j 9728 -N 2 "$IMG" | tr -d ' ')" != caac
# read back with one header per block: the header is not where it says
"$BLKSTACK" bench --dev=uring --filename="$IMG" --rw=read --size=4k --verify=md5 \
	--verify_interval=512 --verify_only --verify_dump=0 >/dev/null 2>"$TMP/iv.err"
check "interval without the offset: the magic is not at the start" \
	grep -qE '^verify: bad block at offset 0 \(job 0, len 4096\): interval at byte 0 \(512 bytes\): header magic expected 0xacca ' "$TMP/iv.err"

# The surface-scan example's verify: meta, a pattern, 512-byte intervals.
cat >"$TMP/scan.fio" <<JOB
[global]
bs=64k
verify=meta
verify_pattern=0xaa555aa5
verify_interval=512
verify_dump_dir=$DUMP

[write-phase]
rw=write
size=4m
do_verify=0

[verify-phase]
stonewall
rw=read
size=4m
do_verify=1
JOB
"$BLKSTACK" bench --dev=ram --output-format=json "$TMP/scan.fio" >"$TMP/scan.json"
check "meta+pattern+interval: the read job checks every block" \
	jq_true '.jobs[1].error == 0 and .jobs[1].blkstack.verify == {"type": "meta", "blocks_verified": 64, "mismatches": 0}' "$TMP/scan.json"

# Written with one method, read with another.
"$BLKSTACK" bench --dev=ram --name=w --rw=write --size=64k --verify=md5 --do_verify=0 \
	--name=v --stonewall --rw=read --size=64k --verify=sha1 --verify_dump=0 >/dev/null 2>"$TMP/mm.err"
check "method mismatch: named" \
	grep -qE '^verify: bad block at offset 0 \(job 0, len 4096\): header method expected sha1 found md5 ' "$TMP/mm.err"

# verify_fatal=1: the first bad block ends the job; without it all are read.
"$BLKSTACK" bench --dev=ram --rw=read --size=1M --iodepth=16 --verify=crc64 --verify_only \
	--verify_fatal=1 --verify_dump=0 --output-format=json >"$TMP/f.json" 2>"$TMP/f.err"
check "verify_fatal: exit 1" test $? -eq 1
check "verify_fatal: one bad block checked, one line" \
	test "$(grep -c '^verify: bad block' "$TMP/f.err")" -eq 1
check "verify_fatal: the job's error says why it ended" \
	grep -qE '^blkstack bench: bench \(ram, job 0\): verify: bad block at offset 0; verify_fatal=1 ends the job$' "$TMP/f.err"
check "verify_fatal: JSON counts one" \
	jq_true '.jobs[0].blkstack.verify.mismatches == 1 and .jobs[0].blkstack.verify.blocks_verified == 1 and .jobs[0].error == 84' "$TMP/f.json"

# verify_dump=1: the block as read and as it should have been; =0: neither.
smash_job sha256 5120 >"$TMP/dump.fio"
sed -i 's/^\[v\]$/[v]\nverify_dump=1/' "$TMP/dump.fio"
"$BLKSTACK" bench --dev=ram "$TMP/dump.fio" >/dev/null 2>"$TMP/d.err"
check "verify_dump=1: both files named" \
	grep -qF "; received data in $DUMP/blkstack-verify.ram.4096.received; expected data in $DUMP/blkstack-verify.ram.4096.expected" "$TMP/d.err"
# cmp -l counts bytes from 1: the smash covered bytes 1024..1535 of the block
dump_diff_outside() {
	[ -s "$DUMP/blkstack-verify.ram.4096.received" ] &&
		[ -s "$DUMP/blkstack-verify.ram.4096.expected" ] &&
		test "$(cmp -l "$DUMP/blkstack-verify.ram.4096.received" "$DUMP/blkstack-verify.ram.4096.expected" |
			awk '$1 < 1025 || $1 > 1536' | wc -l)" -eq 0
}
check "verify_dump=1: they differ in the 512 bytes smashed, at most" dump_diff_outside
check "verify_dump=1: and they do differ" \
	test "$(cmp -l "$DUMP/blkstack-verify.ram.4096.received" "$DUMP/blkstack-verify.ram.4096.expected" | wc -l)" -gt 256
rm -f "$DUMP"/*
sed -i 's/^verify_dump=1$/verify_dump=0/' "$TMP/dump.fio"
"$BLKSTACK" bench --dev=ram "$TMP/dump.fio" >/dev/null 2>"$TMP/d.err"
check "verify_dump=0: nothing written out" test -z "$(ls -A "$DUMP")"
check "verify_dump=0: the line says so" grep -qF "; not written out (verify_dump=0)" "$TMP/d.err"

# verify_backlog: read back during the workload, each block once in all.
"$BLKSTACK" bench --dev=ram --rw=randwrite --size=1M --iodepth=1 --verify=xxhash \
	--verify_backlog=16 --output-format=json >"$TMP/b.json"
check "verify_backlog=16: every block read back during the workload" \
	jq_true '.jobs[0].error == 0 and .jobs[0].blkstack.verify == {"type": "xxhash", "blocks_verified": 256, "mismatches": 0, "backlog_blocks": 256} and .jobs[0].read.total_ios == 256' "$TMP/b.json"
"$BLKSTACK" bench --dev=ram --rw=randwrite --size=1M --iodepth=8 --verify=xxhash \
	--verify_backlog=16 --verify_backlog_batch=4 --output-format=json >"$TMP/b.json"
check "verify_backlog_batch=4: 4 of every 16 then, the rest after" \
	jq_true '.jobs[0].error == 0 and .jobs[0].blkstack.verify == {"type": "xxhash", "blocks_verified": 256, "mismatches": 0, "backlog_blocks": 64} and .jobs[0].read.total_ios == 256' "$TMP/b.json"
"$BLKSTACK" bench --dev=ram --rw=randwrite --size=1M --verify=xxhash --output-format=json >"$TMP/b.json"
check "no verify_backlog: none read back during the workload" \
	jq_true '.jobs[0].blkstack.verify | has("backlog_blocks") | not' "$TMP/b.json"

# verify=null: fio's for its null engine: nothing checked, any device.
"$BLKSTACK" bench --dev=null --rw=randwrite --size=1M --verify=null --output-format=json >"$TMP/n.json"
check "verify=null on null: runs, reads back, checks nothing" \
	jq_true '.jobs[0].error == 0 and .jobs[0].blkstack.verify == {"type": "null", "blocks_verified": 256, "mismatches": 0}' "$TMP/n.json"

# Devices and values that cannot verify.
expect_error "plain null cannot verify" \
	"^blkstack bench: verify=crc32c: the null device does not store data; use dev=ram, dev=uring, or null with memory_backed=1$" \
	bench --dev=null --rw=write --size=1M --verify=crc32c
# verify_async: taken (the job's thread checks), tests/func/test_jobfile_errors_fio.sh
# trim_*, verify_state_*, experimental_verify: tests/func/test_verify_trim.sh
expect_error "verify_only without verify" "verify_only=1 needs verify= \\(crc32c, md5, \.\.\.\)" \
	bench --dev=ram --rw=read --verify_only
expect_error "offset_increment past the device" "offset_increment.*past the end" \
	bench --dev=ram --dev_size=8M --rw=write --size=4M --numjobs=3 --offset_increment=4M
"$BLKSTACK" bench --dev=ram --rw=write --size=1M --verify=crc32c-intel >/dev/null
check "crc32c-intel is crc32c" test $? -eq 0
expect_error "verify=pattern without a pattern" "verify=pattern needs verify_pattern=" \
	bench --dev=ram --rw=write --verify=pattern
expect_error "verify_offset past the interval" "verify_offset=4060: allowed 44\\.\\.4052 \\(the 44-byte header of verify=crc32c moves there" \
	bench --dev=ram --rw=write --verify=crc32c --verify_offset=4060
expect_error "a bad pattern" "verify_pattern=0xff\"ab: a string without its closing quote" \
	bench --dev=ram --rw=write --verify=meta '--verify_pattern=0xff"ab'
if command -v fio >/dev/null; then
	# verify_dump_dir is blkstack's own; the rest is fio's
	for f in later scan smash-md5 smash-pattern dump; do
		grep -v '^verify_dump_dir=' "$TMP/$f.fio" >"$TMP/$f-fio.fio"
		check "fio --parse-only accepts the verify job file $f" fio --parse-only "$TMP/$f-fio.fio"
	done
fi
finish
