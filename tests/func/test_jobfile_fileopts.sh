#!/usr/bin/env bash
# fio's file management options on a job's own files (dev=uring), each
# beside fio doing the same: allow_file_create=0 refuses a missing file,
# unlink=1 removes the job's files after the run, fallocate=none|truncate
# create a sparse file, create_serialize=0 is taken with a note, and the
# values blkstack cannot honour (fallocate=native) are refused by name
# (create_on_open=1: test_jobfile_errors_fio.sh).  fill_device=1 ends a write at ENOSPC as fio's does
# (a 4 MiB tmpfs, as root) and is refused on a regular file without size=.
source "$(dirname "$0")/lib.sh" "$@"

job() { # name extra-options...: a job file on $TMP/name
	local n=$1
	shift
	printf '[%s]\nrw=write\nbs=4k\nsize=64k\nioengine=psync\nfilename=%s\n' "$n" "$TMP/$n.dat"
	printf '%s\n' "$@"
}

# allow_file_create=0: a missing file is an error in both, naming it
job a allow_file_create=0 >"$TMP/a.fio"
"$BLKSTACK" bench "$TMP/a.fio" >"$TMP/a.out" 2>&1
rc=$?
check "allow_file_create=0, file missing: exit 1 (got $rc), the file and the option named" \
	bash -c '[ "$1" = 1 ] && grep -q "a.dat: No such file or directory, and allow_file_create=0" "$2"' _ "$rc" "$TMP/a.out"
check "allow_file_create=0: nothing created" test ! -e "$TMP/a.dat"
if command -v fio >/dev/null; then
	fio "$TMP/a.fio" >"$TMP/fa.out" 2>&1
	check "allow_file_create=0: fio refuses it too ($(grep -o 'file creation disallowed[^"]*' "$TMP/fa.out" | head -1))" \
		grep -q "file creation disallowed by allow_file_create=0" "$TMP/fa.out"
fi
# with the file there, it runs on it
truncate -s 64k "$TMP/a.dat"
"$BLKSTACK" bench "$TMP/a.fio" >"$TMP/a.out" 2>&1
check "allow_file_create=0, file there: exit 0, 64 KiB written into it" \
	bash -c '[ $? = 0 ] && ! cmp -s -n 65536 "$1" /dev/zero' _ "$TMP/a.dat"

# unlink=1: gone after the run (fio too); unlink=0: kept
job u unlink=1 >"$TMP/u.fio"
"$BLKSTACK" bench "$TMP/u.fio" >/dev/null 2>&1
check "unlink=1: exit 0 and the file removed after the run" bash -c '[ $? = 0 ] && [ ! -e "$1" ]' _ "$TMP/u.dat"
job k unlink=0 >"$TMP/k.fio"
"$BLKSTACK" bench "$TMP/k.fio" >/dev/null 2>&1
check "unlink=0: the file kept" test -s "$TMP/k.dat"
if command -v fio >/dev/null; then
	sed "s|u.dat|fu.dat|" "$TMP/u.fio" >"$TMP/fu.fio"
	fio "$TMP/fu.fio" >/dev/null 2>&1
	check "unlink=1: fio removes it too" test ! -e "$TMP/fu.dat"
fi

# fallocate=none and truncate: the file created sparse, as fio's none
for v in none truncate; do
	printf '[f]\nrw=read\nbs=4k\nsize=1m\nioengine=psync\nfilename=%s\nfallocate=%s\n' "$TMP/f$v.dat" "$v" >"$TMP/f.fio"
	"$BLKSTACK" bench "$TMP/f.fio" >/dev/null 2>&1
	check "fallocate=$v: exit 0, a 1 MiB file" test "$(stat -c %s "$TMP/f$v.dat" 2>/dev/null)" = 1048576
done
expect_error "fallocate=native: refused by value" "fallocate=native: a value blkstack bench does not support, allowed none\\|truncate\\|0" \
	bench --parse-only --fallocate=native
"$BLKSTACK" bench --parse-only --create_on_open=0 --create_serialize=1 >/dev/null 2>"$TMP/cs.err"
check "create_on_open=0, create_serialize=1: taken, no note" bash -c '[ $? = 0 ] && ! grep -q create_serialize "$1"' _ "$TMP/cs.err"
"$BLKSTACK" bench --parse-only --create_serialize=0 >/dev/null 2>"$TMP/cs.err"
check "create_serialize=0: taken, with a note saying what happens instead" grep -q "create_serialize=0: blkstack creates every job's files one after another" "$TMP/cs.err"
# fill_device=1: on a regular file without size= fio fills the file
# system; refused, naming the file and line
printf '[w]\nrw=write\nfill_device=1\nfilename=%s\n' "$TMP/fill.dat" >"$TMP/fill.fio"
expect_error "fill_device=1 on a regular file without size=: refused at its line" \
	"fill.fio:3: job 'w': fill_device=1 on .*fill.dat, a file that does not exist, without size=: fio writes until the file system is full" \
	bench "$TMP/fill.fio"
check "fill_device=1 on --dev=ram: the device bounds it (accepted)" \
	"$BLKSTACK" bench --parse-only --dev=ram "$TMP/fill.fio" 2>/dev/null
# ENOSPC ends the job without an error: 16m asked of a 4 MiB tmpfs
mkdir "$TMP/fill"
if mount -t tmpfs -o size=4m tmpfs "$TMP/fill" 2>/dev/null; then
	fill() { "$@" --name=w --filename="$TMP/fill/f" --rw=write --bs=64k --size=16m \
		--fill_device=1 --ioengine=psync --output-format=json 2>/dev/null |
		jq -c '.jobs[0] | [.error, .write.io_bytes]'; rm -f "$TMP/fill/f"; }
	b=$(fill "$BLKSTACK" bench) f=$(fill fio)
	check "fill_device=1 on a full tmpfs: error 0 and 4 MiB written ($b), as fio ($f)" \
		test "$b" = "[0,4194304]" -a "$f" = "$b"
	b=$("$BLKSTACK" bench --name=w --filename="$TMP/fill/f" --rw=write --bs=64k --size=16m \
		--ioengine=psync --output-format=json 2>/dev/null | jq '.jobs[0].error')
	check "without fill_device ENOSPC is the job's error ($b)" test "$b" = 28
	rm -f "$TMP/fill/f"
	for _ in 1 2 3 4 5; do umount "$TMP/fill" 2>/dev/null && break; sleep 1; done
else
	echo "ok - # SKIP fill_device on tmpfs: mounting one needs root"
fi
finish
