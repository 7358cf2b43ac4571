#!/usr/bin/env bash
# zonemode=zbd with verify=: a job whose writes end because no zone is
# left (io_size= beyond the region, time_based, jobs sharing the zones)
# still reads back every block it wrote.  It once ended with "0 blocks
# verified" and no read at all (the stop that ended the writes also
# ended the verify phase), where fio reads the 16 MiB back.
source "$(dirname "$0")/lib.sh" "$@"

for extra in "--io_size=32m" "--time_based --runtime=300ms" "--numjobs=2"; do
	# shellcheck disable=SC2086
	timeout 60 "$BLKSTACK" bench --dev=ram --dev_size=16m --rw=randwrite --bs=4k \
		--zonemode=zbd --zonesize=1m --verify=crc32c $extra >"$TMP/out" 2>&1
	rc=$?
	# two threads: each one's start resets the zones (verify=), so a
	# block written before the other started may be written twice
	strict=1
	case $extra in --numjobs=*) strict=0 ;; esac
	bad=$(awk -v strict=$strict '/issued rwts:/ { split($3, a, "[=,]"); w = a[3] }
		/verify *:/ { v = $4; if (v + 0 == 0 || v > w || (strict && v != w)) n++ }
		END { print n + 0 }' "$TMP/out")
	nv=$(grep -c 'blocks verified' "$TMP/out")
	if [ $rc -eq 0 ] && [ "$nv" -ge 1 ] && [ "$bad" -eq 0 ]; then
		pass "zbd verify after no zone left ($extra): the blocks written verified"
	else
		fail "zbd verify after no zone left ($extra): rc=$rc, $(grep -E 'issued|verified' "$TMP/out" | tr '\n' ' ')"
	fi
done
finish
