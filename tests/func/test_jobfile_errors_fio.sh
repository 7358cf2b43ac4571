#!/usr/bin/env bash
# fio's error options as fio has them: ignore_error= (per class lists of
# errno names or numbers, which turn the class's continue_on_error on),
# error_dump=, continue_on_error= at submission too, create_on_open=1,
# verify_async= (taken, noted); fio-examples/enospc-pressure.fio run by
# fio and by blkstack on the same small file system, ENOSPC gone past;
# an unset ${VAR} as fio's empty string (fio-examples/xnvme-compare.fio);
# --parse-only refusing what the run refuses (surface-scan.fio).
source "$(dirname "$0")/lib.sh" "$@"
EX=/usr/share/doc/fio/examples
BIN=$(realpath "$BLKSTACK")
command -v fio >/dev/null || fail "fio is not installed (scripts/install-deps.sh installs it)"

# ignore_error=: fio's forms, and its refusals (fio's str2error() names)
"$BLKSTACK" bench --parse-only --name=x --rw=read --ignore_error=EIO:ENXIO,ENOSPC:28,5 2>"$TMP/ie.err"
check "ignore_error=EIO:ENXIO,ENOSPC:28,5: taken" test $? -eq 0
expect_error "ignore_error: a name fio does not know, with the class" \
	"ignore_error=,EOPNOTSUPP: unknown error 'EOPNOTSUPP' in the write list: fio's names EPERM..ERANGE \(errno 1..34\), or an errno number" \
	bench --parse-only --name=x --rw=read --ignore_error=,EOPNOTSUPP
expect_error "ignore_error: a fourth class" "more than 3 classes, allowed READ,WRITE,VERIFY" \
	bench --parse-only --name=x --rw=read --ignore_error=EIO,EIO,EIO,EIO

# continue_on_error at submission (fio's break_on_this_error()): a SCSI
# disk without UNMAP refuses each trim as it is submitted (EOPNOTSUPP, 95)
trim() { "$BLKSTACK" bench --dev=scsi --scsi_lbpu=0 --name=t --rw=randtrim --size=64k \
	--output-format=json "$@" 2>"$TMP/trim.err" |
	jq -c '.jobs[0] | [.error, .trim.total_ios, .total_err, .first_error]'; }
b=$(trim)
check "trim refused at submission: the job ends with EOPNOTSUPP ($b)" test "$(echo "$b" | cut -d, -f1)" = "[95"
b=$(trim --continue_on_error=write)
check "continue_on_error=write: EOPNOTSUPP is not fio's EIO or EILSEQ: it still ends the job ($b)" \
	test "$(echo "$b" | cut -d, -f1)" = "[95"
b=$(trim --ignore_error=,95)
check "ignore_error=,95: every submission error gone past, counted, reported as fio's ($b)" \
	test "$b" = "[95,16,16,95]"
check "... printed nowhere (error_dump=0)" test ! -s "$TMP/trim.err"
b=$(trim --ignore_error=,95 --error_dump=1)
check "error_dump=1: one 'io_u error' line per error ($(grep -c 'io_u error' "$TMP/trim.err"))" \
	test "$(grep -c "job 't': io_u error: Operation not supported: trim offset=[0-9]*, buflen=4096" "$TMP/trim.err")" -eq 16
b=$(trim --ignore_error=,95 --continue_on_error=none)
check "continue_on_error=none after ignore_error: the classes set again, as fio's ($b)" \
	test "$(echo "$b" | cut -d, -f1)" = "[95"

# verify_async: taken, verified in the job's thread, said so
"$BLKSTACK" bench --dev=ram --name=v --rw=write --size=1m --verify=crc32c --verify_async=4 \
	--verify_async_cpus=0 --output-format=json >"$TMP/va.json" 2>"$TMP/va.err"
check "verify_async=4: runs and verifies" jq_true '.jobs[0].error == 0 and .jobs[0].read.io_bytes == 1048576' "$TMP/va.json"
check "verify_async=4: a note says the job's thread verifies" \
	grep -q "note: verify_async=4: blkstack has no verify offload threads; each job's thread checks its blocks itself" "$TMP/va.err"
check "verify_async_cpus=0: a note says it has no effect" grep -q "note: verify_async_cpus=0: no effect" "$TMP/va.err"

# create_on_open=1: the file is created empty, not laid out, by fio and
# by blkstack; reads past its end read nothing (fio's libaio: 0 bytes,
# no error; blkstack: zeros, no error)
for who in fio blk; do
	mkdir -p "$TMP/coo.$who"
	if [ $who = fio ]; then cmd=(fio); else cmd=("$BLKSTACK" bench); fi
	for c in 0 1; do
		"${cmd[@]}" --name=c --ioengine=libaio --rw=randread --size=1m \
			--filename="$TMP/coo.$who/f$c" --create_on_open=$c \
			--output-format=json >"$TMP/coo.json" 2>"$TMP/coo.err"
		check "$who create_on_open=$c: runs ($(head -c 200 "$TMP/coo.err"))" \
			jq_true '.jobs[0].error == 0 and .jobs[0].read.total_ios == 256' "$TMP/coo.json"
	done
done
for c in 0 1; do
	want=$(stat -c %s "$TMP/coo.fio/f$c" 2>/dev/null) got=$(stat -c %s "$TMP/coo.blk/f$c" 2>/dev/null)
	check "create_on_open=$c: the file's size as fio leaves it ($got, fio $want)" test -n "$got" -a "$got" = "$want"
done
check "create_on_open=1: fio leaves the file empty" test "$(stat -c %s "$TMP/coo.fio/f1")" = 0

# An unset ${VAR}: the empty string, as fio's; a note names it
if [ -f "$EX/xnvme-compare.fio" ]; then
	env -u FIO_RW -u FIO_BS -u FIO_IODEPTH fio --parse-only "$EX/xnvme-compare.fio" >/dev/null 2>&1
	f=$?
	env -u FIO_RW -u FIO_BS -u FIO_IODEPTH "$BLKSTACK" bench --parse-only "$EX/xnvme-compare.fio" \
		>/dev/null 2>"$TMP/x.err"
	b=$?
	check "xnvme-compare.fio without --section: refused by fio ($f) and by blkstack ($b)" test $f -ne 0 -a $b -ne 0
	check "... rw= empty, its own error, naming the variable" \
		grep -q "xnvme-compare.fio:70: option 'rw' needs a value, allowed read|.* (the environment variable 'FIO_RW' is not set)" "$TMP/x.err"
	check "... a note names the unset variable" \
		grep -q "note: .*xnvme-compare.fio:71: environment variable 'FIO_IODEPTH' is not set: '\${FIO_IODEPTH}' has the empty string in its place, as in fio" "$TMP/x.err"
	env -u FIO_RW fio --parse-only --section=default "$EX/xnvme-compare.fio" >/dev/null 2>&1
	f=$?
	env -u FIO_RW "$BLKSTACK" bench --parse-only --section=default "$EX/xnvme-compare.fio" >/dev/null 2>&1
	b=$?
	check "xnvme-compare.fio --section=default: accepted by fio ($f) and by blkstack ($b)" test $f -eq 0 -a $b -eq 0
	FIO_RW=randread FIO_BS=4k FIO_IODEPTH=8 "$BLKSTACK" bench --parse-only --section=override \
		"$EX/xnvme-compare.fio" >/dev/null 2>&1
	check "xnvme-compare.fio --section=override with the variables set: accepted" test $? -eq 0
	printf '[j]\nrw=write\nsize=64k\nfilename=%s/env${BLK_UNSET_X}.img\n' "$TMP" >"$TMP/env.fio"
	env -u BLK_UNSET_X "$BLKSTACK" bench "$TMP/env.fio" >/dev/null 2>&1
	check "\${VAR} unset inside a value: the rest kept (env.img written)" test "$(stat -c %s "$TMP/env.img" 2>/dev/null)" = 65536
else
	fail "fio-examples is not installed (scripts/install-deps.sh installs it)"
fi

# --parse-only refuses what the run refuses: fill_device=1 on a regular
# file without size= (fio fills the file system; blkstack does not)
if [ -f "$EX/surface-scan.fio" ]; then
	(cd "$TMP" && "$BIN" bench --parse-only "$EX/surface-scan.fio" >/dev/null 2>"$TMP/ss.po")
	po=$?
	(cd "$TMP" && timeout 20 "$BIN" bench "$EX/surface-scan.fio" >/dev/null 2>"$TMP/ss.run")
	run=$?
	check "surface-scan.fio on files: --parse-only ($po) and the run ($run) both refuse it" test $po -eq 1 -a $run -eq 1
	check "... with the same reason" cmp <(grep -v note: "$TMP/ss.po") <(grep -v note: "$TMP/ss.run")
	check "... naming fill_device's line" grep -q "surface-scan.fio:15: job 'write-phase': fill_device=1 on datafile.tmp" "$TMP/ss.po"
fi

# fio-examples/enospc-pressure.fio on a small file system, run by fio and
# by blkstack: the writes meet ENOSPC, which ignore_error=,ENOSPC (with
# continue_on_error=write) goes past until the runtime ends.  The copy
# has its directory= on the small file system and runtime=2; its
# punch_hole-raicer job is left out, because fio 3.33's libaio trims a
# regular file with BLKDISCARD, which fails (ENOTTY) and, with exitall,
# ends every job at once.
MNT=$TMP/mnt
mkdir -p "$MNT"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=24m tmpfs "$MNT" 2>/dev/null; then
	echo "# skipped: enospc-pressure.fio needs a small file system (root: mount -t tmpfs)"
	finish
	exit
fi
# io_uring closes a ring's files after the process is gone: umount retries
unmount() { for _ in $(seq 50); do umount "$MNT" 2>/dev/null && return; sleep 0.1; done; umount "$MNT"; }
trap 'unmount; rm -rf "$TMP"' EXIT
sed -e "s|^directory=.*|directory=$MNT|" -e 's|^runtime=100|runtime=2|' "$EX/enospc-pressure.fio" |
	awk '/^\[punch_hole-raicer\]/ { skip = 1 } /^\[aio-dio-verifier\]/ { skip = 0 } !skip' >"$TMP/enospc.fio"
for who in fio blk; do
	rm -f "$MNT"/*
	if [ $who = fio ]; then cmd=(fio); else cmd=("$BIN" bench); fi
	# in $TMP: fio leaves its verify state files in the current folder
	(cd "$TMP" && timeout 60 "${cmd[@]}" --output-format=json "$TMP/enospc.fio" \
		>"$TMP/enospc.$who.out" 2>"$TMP/enospc.$who.err")
	rc=$?
	sed -n '/^{/,$p' "$TMP/enospc.$who.out" >"$TMP/enospc.$who.json"
	check "enospc-pressure $who: exit 0 ($rc; $(head -c 300 "$TMP/enospc.$who.err"))" test $rc -eq 0
	check "enospc-pressure $who: both jobs went past ENOSPC to the runtime: error 28 (the first gone past), total_err > 0, first_error 28" \
		jq_true '[.jobs[] | .error == 28 and .total_err > 0 and .first_error == 28 and .elapsed >= 2] == [true, true]' "$TMP/enospc.$who.json"
	check "enospc-pressure $who: the verifier both read and wrote" \
		jq_true '.jobs[1].read.io_bytes > 0 and .jobs[1].write.io_bytes > 0' "$TMP/enospc.$who.json"
	check "enospc-pressure $who: the file system is full" test "$(df --output=avail "$MNT" | tail -1)" -lt 1024
done
check "enospc-pressure blkstack: the verify_async note" grep -q "note: verify_async=4" "$TMP/enospc.blk.err"
# the stock file, unchanged but for its directory and runtime, runs too
sed -e "s|^directory=.*|directory=$MNT|" -e 's|^runtime=100|runtime=1|' "$EX/enospc-pressure.fio" >"$TMP/enospc3.fio"
rm -f "$MNT"/*
timeout 60 "$BLKSTACK" bench --output-format=json "$TMP/enospc3.fio" >"$TMP/enospc3.json" 2>"$TMP/enospc3.err"
check "enospc-pressure.fio, all three jobs: runs, the writers past ENOSPC ($(head -c 300 "$TMP/enospc3.err"))" \
	jq_true '[.jobs[] | .error] == [28, 0, 28] and .jobs[0].total_err > 0 and .jobs[2].total_err > 0' "$TMP/enospc3.json"
# (fio fails that trim job with ENOTTY; blkstack punches holes in the file)
check "enospc-pressure.fio: punch_hole-raicer's trims punch holes" jq_true '.jobs[1].trim.total_ios > 0' "$TMP/enospc3.json"
finish
