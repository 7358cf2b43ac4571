#!/usr/bin/env bash
# verify= across the two tools, both ways, on one file: fio 3.33 writes
# with verify=M and blkstack bench checks every block (verify_only=1, the
# same options), then blkstack writes and fio checks every block.  Every
# method fio has, with verify_interval, verify_offset, verify_pattern
# (alone, with meta, %o) and pattern; then a byte changed in a block each
# tool wrote is found by the other, in the block where it was changed.
source "$(dirname "$0")/lib.sh" "$@"
BLKSTACK=$(realpath "$BLKSTACK")
# fio saves its verify state in the current directory: keep it in $TMP
cd "$TMP" || exit 1
command -v fio >/dev/null || { fail "fio is not installed (scripts/install-deps.sh installs it)"; finish; }

F=$TMP/v.dat

# fio_run ARGS...: fio on $F, JSON on stdout (its warnings go there too:
# the JSON starts at the first '{')
fio_run() {
	fio --name=v --filename="$F" "$@" --output-format=json 2>"$TMP/fio.err" | sed -n '/^{/,$p'
}

# bs_check WHAT ARGS...: blkstack bench reads $F back with ARGS and
# verify_only=1: every block verified, none bad
bs_check() {
	local what=$1 n
	shift
	"$BLKSTACK" bench --name=v --filename="$F" --verify_only=1 "$@" --output-format=json \
		>"$TMP/bs.json" 2>"$TMP/bs.err"
	check "$what: exit 0 (stderr: $(head -c 200 "$TMP/bs.err"))" test $? -eq 0
	n=$(jq '[.jobs[].blkstack.verify.blocks_verified] | add' "$TMP/bs.json" 2>/dev/null)
	check "$what: $n blocks checked, none bad" \
		jq -e --argjson n "$WANT" '([.jobs[].blkstack.verify.blocks_verified] | add) == $n and
			([.jobs[].blkstack.verify.mismatches] | add) == 0' "$TMP/bs.json"
}

# fio_check WHAT ARGS...: fio reads $F back with ARGS and verify_only=1:
# no error, every byte read
fio_check() {
	local what=$1
	shift
	fio_run --verify_only=1 "$@" >"$TMP/fio.json"
	check "$what: fio err=0 and read all $SIZE bytes ($(grep -m1 -i 'verify' "$TMP/fio.err" | head -c 200))" \
		jq -e --argjson s "$SIZE" '([.jobs[].error] | all(. == 0)) and ([.jobs[].read.io_bytes] | add) == $s' "$TMP/fio.json"
}

# both WHAT BLOCKS ARGS...: fio writes, blkstack checks; blkstack writes,
# fio checks; BLOCKS: how many blocks blkstack checks
both() {
	local what=$1
	WANT=$2
	shift 2
	rm -f "$F"
	fio_run --do_verify=0 "$@" >"$TMP/w.json"
	check "$what: fio wrote it" jq -e '[.jobs[].error] | all(. == 0)' "$TMP/w.json"
	bs_check "fio -> blkstack, $what" "$@"
	rm -f "$F"
	"$BLKSTACK" bench --name=v --filename="$F" --do_verify=0 "$@" >/dev/null 2>"$TMP/bw.err"
	check "$what: blkstack wrote it (stderr: $(head -c 200 "$TMP/bw.err"))" test $? -eq 0
	fio_check "blkstack -> fio, $what" "$@"
}

SIZE=$((1024 * 1024))
R=(--size=1m --bs=4k --rw=randwrite)
for m in md5 sha1 sha256 sha512 sha3-224 sha3-256 sha3-384 sha3-512 xxhash \
	crc32c crc32c-intel crc32 crc64 crc16 crc7 meta; do
	both "verify=$m, randwrite 4k" 256 "${R[@]}" --verify=$m
done

both "md5, bs=8k, verify_interval=512" 128 --size=1m --bs=8k --rw=write --verify=md5 --verify_interval=512
both "sha256, bs=16k, verify_interval=1k" 64 --size=1m --bs=16k --rw=randwrite --verify=sha256 --verify_interval=1k
both "sha1, verify_offset=1024" 256 "${R[@]}" --verify=sha1 --verify_offset=1024
both "crc32c, bs=512" 2048 --size=1m --bs=512 --rw=randwrite --verify=crc32c
both "sha512, bs=64k" 16 --size=1m --bs=64k --rw=randwrite --verify=sha512
both "verify_pattern alone (header and pattern)" 256 "${R[@]}" --verify_pattern=0xdeadbeef
both "meta with verify_pattern" 256 "${R[@]}" --verify=meta --verify_pattern=0x1234567
both "pattern, a string" 256 "${R[@]}" --verify=pattern '--verify_pattern="abc"'
both "pattern %o, the block's offset" 256 "${R[@]}" --verify=pattern --verify_pattern=%o
both "meta, 0xff%o" 256 "${R[@]}" --verify=meta --verify_pattern=0xff%o
both "md5 with verify_pattern data" 256 "${R[@]}" --verify=md5 --verify_pattern=0x55
SIZE=$((2 * 512 * 1024))
both "crc32c, 2 jobs, each its half" 256 --size=512k --numjobs=2 --offset_increment=512k \
	--bs=4k --rw=randwrite --verify=crc32c

# --- a changed byte: the other tool finds it, in that block ---
SIZE=$((1024 * 1024))
flip() { printf '\xff' | dd of="$F" bs=1 seek="$1" conv=notrunc status=none; }

rm -f "$F"
fio_run --do_verify=0 "${R[@]}" --verify=crc32c >/dev/null
flip $((7 * 4096 + 100))
"$BLKSTACK" bench --name=v --filename="$F" --verify_only=1 "${R[@]}" --verify=crc32c \
	--verify_dump=0 --output-format=json >"$TMP/bad.json" 2>"$TMP/bad.err"
check "fio's block changed: blkstack exits 1" test $? -eq 1
check "fio's block changed: blkstack names block 28672 and the crc32c" \
	grep -qE '^verify: bad block at offset 28672 \(job 0, len 4096\): crc32c expected 0x[0-9a-f]{8} found 0x[0-9a-f]{8} \(header numberio [0-9]+, seed 0x[0-9a-f]{16}\)' "$TMP/bad.err"
check "fio's block changed: one of 256 bad" \
	jq -e '.jobs[0].blkstack.verify == {"type": "crc32c", "blocks_verified": 256, "mismatches": 1}' "$TMP/bad.json"

rm -f "$F"
"$BLKSTACK" bench --name=v --filename="$F" --do_verify=0 "${R[@]}" --verify=md5 >/dev/null 2>&1
flip $((9 * 4096 + 2000))
fio --name=v --filename="$F" --verify_only=1 "${R[@]}" --verify=md5 >"$TMP/fbad.out" 2>&1
check "blkstack's block changed: fio fails" test $? -ne 0
check "blkstack's block changed: fio names md5 at offset 36864" \
	grep -qE '^md5: verify failed at file .* offset 36864, length 4096' "$TMP/fbad.out"

# a header field changed: fio's header crc and blkstack's agree on it
rm -f "$F"
"$BLKSTACK" bench --name=v --filename="$F" --do_verify=0 "${R[@]}" --verify=sha1 >/dev/null 2>&1
flip $((3 * 4096 + 33))	# the thread field: only the header's crc32 covers it
fio --name=v --filename="$F" --verify_only=1 "${R[@]}" --verify=sha1 >"$TMP/fhdr.out" 2>&1
check "header changed: fio reports a bad header crc at 12288" \
	grep -qE 'verify: bad header crc [0-9a-f]+, calculated [0-9a-f]+ at file .* offset 12288' "$TMP/fhdr.out"
"$BLKSTACK" bench --name=v --filename="$F" --verify_only=1 "${R[@]}" --verify=sha1 \
	--verify_dump=0 >/dev/null 2>"$TMP/hdr.err"
check "header changed: blkstack reports the header crc32c at 12288" \
	grep -qE '^verify: bad block at offset 12288 \(job 0, len 4096\): header crc32c expected 0x[0-9a-f]{8} found 0x[0-9a-f]{8}' "$TMP/hdr.err"

# written with one method, read with another: named by fio's names
rm -f "$F"
fio_run --do_verify=0 "${R[@]}" --verify=crc64 >/dev/null
"$BLKSTACK" bench --name=v --filename="$F" --verify_only=1 "${R[@]}" --verify=xxhash \
	--verify_dump=0 >/dev/null 2>"$TMP/mm.err"
check "fio's crc64 read as xxhash: the method named" \
	grep -qE '^verify: bad block at offset [0-9]+ \(job 0, len 4096\): header method expected xxhash found crc64 ' "$TMP/mm.err"

finish
