#!/usr/bin/env bash
# dev=uring on the pread/pwrite thread pool: chosen automatically when a
# seccomp filter refuses io_uring_setup (EPERM and ENOSYS), with one notice
# naming the cause, and forced with --uring_engine=pool; write then verify
# (crc32c) end to end, buffered and O_DIRECT, polling and sleeping waits;
# trim; and through `blkstack serve --uring_engine=pool` with real NBD
# clients: FUA writes, flush, discard and write zeroes keep their meaning
# (read back as zeros over NBD and in the file), fio's nbd engine verifies;
# serve under the filter picks the pool by itself; a thread limit the
# workers do not fit in, and bad option values, give errors saying why.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
need jq qemu-io nbdinfo fio
J="--output-format=json"
NOTICE="io_uring refused \(io_uring_setup: %s: a seccomp filter[^)]*\); using the pread/pwrite thread pool \(uring_engine=pool\)$"

# verify_run NAME FILE ARGS...: a 2-job randwrite + verify run (2 x 4 MiB
# at QD32), run through the command in the array PREFIX (deny_syscall) when
# set; output in $TMP/v.json, stderr in $TMP/v.err
PREFIX=()
verify_run() {
	local name=$1 file=$2
	shift 2
	rm -f "$file"
	"${PREFIX[@]}" "$BLKSTACK" bench --dev=uring --filename="$file" --rw=randwrite --bs=4k \
		--iodepth=32 --numjobs=2 --size=4M --offset_increment=4M --verify=crc32c \
		--verify_dump_dir="$TMP" "$@" $J >"$TMP/v.json" 2>"$TMP/v.err"
	check "$name: exit 0" test $? -eq 0
	check "$name: 1024 blocks verified per job, 0 mismatches" \
		jq -e '[.jobs[].blkstack.verify | [.blocks_verified, .mismatches]] == [[1024, 0], [1024, 0]]' \
		"$TMP/v.json"
}

# io_uring_setup refused by a seccomp filter: the pool, and one notice
if [ -z "${DENY_SYSCALL:-}" ]; then
	fail "DENY_SYSCALL not set (run through ctest)"
else
	for e in EPERM ENOSYS; do
		msg=$([ $e = EPERM ] && echo "Operation not permitted" || echo "Function not implemented")
		PREFIX=("$DENY_SYSCALL" setup $e)
		verify_run "refused ($e), automatic pool" "$TMP/r.img"
		# shellcheck disable=SC2059
		check "refused ($e): the notice names the errno and the cause" \
			grep -qE "^blkstack: uring: $TMP/r.img: $(printf "$NOTICE" "$msg")" "$TMP/v.err"
		check "refused ($e): one notice for the whole run" test "$(grep -c 'io_uring refused' "$TMP/v.err")" -eq 1
		check "refused ($e): nothing else on stderr" test "$(wc -l <"$TMP/v.err")" -eq 1
		# forcing io_uring keeps the error
		"$DENY_SYSCALL" setup $e "$BLKSTACK" bench --dev=uring --filename="$TMP/r.img" --rw=read \
			--uring_engine=io_uring >/dev/null 2>"$TMP/err"
		rc=$?
		if [ $rc -eq 1 ] && grep -qE "r.img: io_uring: $msg: .*(kernel.io_uring_disabled|seccomp)" "$TMP/err" &&
			! grep -q "thread pool" "$TMP/err"; then
			pass "refused ($e), uring_engine=io_uring: today's error, no pool"
		else
			fail "refused ($e), uring_engine=io_uring (rc=$rc: $(cat "$TMP/err"))"
		fi
	done
	# the sleeping wait (the pool's wait op) under the filter too
	verify_run "refused, completion_wait=sleep" "$TMP/r.img" --completion_wait=sleep
	PREFIX=()
fi

# forced: no notice; buffered and O_DIRECT; 1 worker; sleeping waits
verify_run "uring_engine=pool" "$TMP/p.img" --uring_engine=pool
check "uring_engine=pool: no notice" test ! -s "$TMP/v.err"
verify_run "uring_engine=pool direct=1" "$TMP/p.img" --uring_engine=pool --direct=1
verify_run "uring_engine=pool pool_threads=1" "$TMP/p.img" --uring_engine=pool --pool_threads=1
verify_run "uring_engine=pool completion_wait=sleep" "$TMP/p.img" --uring_engine=pool \
	--completion_wait=sleep
"$BLKSTACK" bench --dev=uring --filename="$TMP/p.img" --uring_engine=pool --rw=trim --bs=1M $J \
	>"$TMP/t.json" 2>"$TMP/t.err"
check "pool trim: 8 x 1M, no errors" jq -e '.jobs[0].trim.total_ios == 8 and .jobs[0].error == 0' "$TMP/t.json"
check "pool trim: the file is sparse again" test "$(stat -c %b "$TMP/p.img")" -lt 64

# NBD: serve on the pool; the operations keep their meaning
start_server --dev=uring --uring_engine=pool --filename="$TMP/nbd.img" --size=16M || exit 1
check "serve --uring_engine=pool: no notice" bash -c "! grep -q 'io_uring refused' '$TMP/server.log'"
QIO=(timeout 60 qemu-io -f raw)
check "qemu-io: pattern writes, one FUA, then flush" "${QIO[@]}" -c "write -P 0xab 0 4M" \
	-c "write -f -P 0xcd 4M 1M" -c "flush" "$URI"
check "qemu-io: discard 1M..2M, write zeroes 2M..2M+64k" "${QIO[@]}" -c "discard 1M 1M" \
	-c "write -z 2M 64k" -c "flush" "$URI"
check "qemu-io: reads back zeros where discarded and zeroed, the data elsewhere" "${QIO[@]}" \
	-c "read -P 0xab 0 1M" -c "read -P 0 1M 1M" -c "read -P 0 2M 64k" \
	-c "read -P 0xab 2112k 1984k" -c "read -P 0xcd 4M 1M" "$URI"
out=$("${QIO[@]}" -c "read -P 0xab 1M 4k" "$URI" 2>&1)
check "qemu-io: a wrong pattern is noticed (the check can fail)" grep -q "Pattern verification failed" <<<"$out"
check "nbdinfo --map: the discarded range is a hole" \
	bash -c "timeout 20 nbdinfo --map '$URI' | awk '\$1 <= 1048576 && \$1 + \$2 >= 2097152 && /hole/' | grep -q ."
timeout 120 fio --ioengine=nbd --output-format=json --verify_state_save=0 --name=vw --uri="$URI" \
	--rw=randwrite --bs=4k --iodepth=32 --size=4M --offset=8M --verify=crc32c --do_verify=1 \
	2>"$TMP/fio.err" | sed -n '/^{/,$p' >"$TMP/fio.json"
check "fio nbd randwrite + verify over the pool: no errors, 4 MiB read back" \
	jq -e '.jobs[0].error == 0 and .jobs[0].read.io_bytes == 4194304' "$TMP/fio.json"
stop_server
check "server stops with status 0" test $? -eq 0
# the file itself: what was written, zeros where discarded and zeroed
check "file: 0xab before the discard" cmp -s <(head -c 1M "$TMP/nbd.img") <(head -c 1M /dev/zero | tr '\0' '\253')
check "file: zeros over the discard and the write zeroes" \
	cmp -s <(dd if="$TMP/nbd.img" bs=64k skip=16 count=17 status=none) <(head -c $((17 * 65536)) /dev/zero)
check "file: the FUA write" cmp -s <(dd if="$TMP/nbd.img" bs=1M skip=4 count=1 status=none) \
	<(head -c 1M /dev/zero | tr '\0' '\315')
check "file: size unchanged" test "$(stat -c %s "$TMP/nbd.img")" -eq $((16 << 20))

# serve under the filter, engine not given: the pool, its notice in the log
if [ -n "${DENY_SYSCALL:-}" ]; then
	printf '#!/bin/sh\nexec "%s" setup EPERM "%s" "$@"\n' "$DENY_SYSCALL" "$BLKSTACK" >"$TMP/denied"
	chmod +x "$TMP/denied"
	REAL=$BLKSTACK
	BLKSTACK=$TMP/denied
	start_server --dev=uring --filename="$TMP/nbd.img" || exit 1
	BLKSTACK=$REAL
	check "serve, io_uring refused: the notice in the server's log" \
		grep -q "nbd.img: io_uring refused (io_uring_setup: Operation not permitted: a seccomp filter" "$TMP/server.log"
	check "serve, io_uring refused: the export serves the file's data" "${QIO[@]}" \
		-c "read -P 0xcd 4M 1M" -c "write -P 0x5a 8M 64k" -c "read -P 0x5a 8M 64k" "$URI"
	stop_server
	check "serve, io_uring refused: stops with status 0" test $? -eq 0
fi

# a thread limit (RLIMIT_NPROC, as a container's pids limit) that the
# workers do not fit in: an error naming what to lower
if command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
	chmod 755 "$TMP"
	truncate -s 1M "$TMP/nobody.img"
	chown nobody "$TMP/nobody.img"
	runuser -u nobody -- bash -c 'ulimit -u 30; exec "$0" "$@"' "$BLKSTACK" bench --dev=uring \
		--filename="$TMP/nobody.img" --rw=read --uring_engine=pool --numjobs=4 >/dev/null 2>"$TMP/err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "nobody.img: cannot start pool thread .*: Resource temporarily unavailable; lower pool_threads= or the number of hardware queues" "$TMP/err"; then
		pass "thread limit: the error names the file and what to lower"
	else
		fail "thread limit (rc=$rc: $(cat "$TMP/err"))"
	fi
else
	fail "runuser or user nobody missing: cannot test a thread limit"
fi

# bad values name what is allowed
expect_error "uring_engine=foo: the allowed values" "uring_engine=foo: .*allowed auto\|io_uring\|pool" \
	bench --dev=uring --filename="$TMP/p.img" --rw=read --uring_engine=foo
expect_error "pool_threads=0: the range" "pool_threads=0: .*allowed 1\.\.256" \
	bench --dev=uring --filename="$TMP/p.img" --rw=read --pool_threads=0
finish
