#!/usr/bin/env bash
# mem=mmapshared:FILE (or mmaphuge:FILE) is one buffer for every thread
# of the job: with verify= and numjobs=2 each thread's writes carried
# the other's data and verify reported hundreds of false mismatches
# (exit 1).  The combination is refused, naming the fields; one thread,
# or mem=mmap:FILE (private), still verifies cleanly.
source "$(dirname "$0")/lib.sh" "$@"

F=$TMP/membuf
common=(bench --dev=ram --dev_size=64m --rw=randwrite --size=4m --iodepth=8
	--offset_increment=4m --verify=crc32c)
expect_error "mmapshared:FILE with verify= and numjobs=2 refused" \
	"mem=mmapshared:.*verify=.*numjobs=2.*allowed numjobs=1" \
	"${common[@]}" --numjobs=2 --mem=mmapshared:"$F"
[ ! -e "$F" ] && pass "the refused job created no buffer file" ||
	fail "the refused job left $F"
for args in "--numjobs=1 --mem=mmapshared:$F" "--numjobs=2 --mem=mmap:$F"; do
	# shellcheck disable=SC2086
	"$BLKSTACK" "${common[@]}" $args >"$TMP/out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q ' 0 mismatches' "$TMP/out" &&
	   ! grep -qv ' 0 mismatches' <(grep mismatches "$TMP/out"); then
		pass "verify clean with $args"
	else
		fail "verify with $args: rc=$rc $(grep -m2 -E 'mismatch|error' "$TMP/out")"
	fi
done
finish
