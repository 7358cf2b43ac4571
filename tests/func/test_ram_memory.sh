#!/usr/bin/env bash
# Regression: spaced writes commit 2 MiB each.  2048 writes of 4 KiB spaced
# 2 MiB apart (8 MiB of data) to `blkstack serve --dev=ram --size=4G` took
# the server to 4 GiB resident: the old page store committed a whole 2 MiB
# chunk on the first write into it.  The server's resident set must now grow
# by at most 1.25x the data plus one 2 MiB slab (the page store populates
# pages a slab at a time; docs/design-block-core.md, "ram").
#
# The client is fio's nbd engine: rw=write:2044k moves the offset on by
# 2044 KiB after each 4 KiB write (fio's rw offset modifier), so write i
# lands at i * 2 MiB; number_ios=2048 stops after 2048 writes.  nbdinfo
# --map checks that the data went where the test says.  The baseline RSS is
# taken after the same pattern as reads (holes: no data) on a connection of
# its own, so that it includes what a connection costs the server.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
need fio nbdinfo
# resident memory is what this test measures; ThreadSanitizer's shadow
# memory grows with every page touched (ASan's stays within the bound)
if [ "$(sanitizer)" = tsan ]; then
	echo "SKIP: a ThreadSanitizer build: its shadow memory is resident too"
	exit 77
fi
fio --enghelp 2>/dev/null | grep -w nbd >/dev/null || { echo "SKIP: fio without the nbd engine"; exit 77; }

start_server --dev=ram --size=4G || exit 1
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$SRV_PID/status"; }
spaced() { # spaced read|write
	timeout 120 fio --name="spaced-$1" --ioengine=nbd --uri="$UURI" \
		--rw="$1:2044k" --bs=4k --number_ios=2048 --size=4G --iodepth=32 \
		--output-format=json 2>"$TMP/fio.err" | sed -n '/^{/,$p' >"$TMP/fio.json"
}

spaced read
check "2048 spaced reads of holes" jq -e '.jobs[0].error == 0 and .jobs[0].read.total_ios == 2048' "$TMP/fio.json"
base=$(rss_kib)
spaced write
check "2048 spaced writes" jq -e '.jobs[0].error == 0 and .jobs[0].write.total_ios == 2048' "$TMP/fio.json"
after=$(rss_kib)

nbdinfo --map "$UURI" >"$TMP/map"
check "8 MiB of data on the device" \
	test "$(awk '$4 == "data" { s += $2 } END { print s + 0 }' "$TMP/map")" -eq $((8 << 20))
check "in 2048 separate 4 KiB extents, 2 MiB apart" \
	awk '$4 == "data" { if ($2 != 4096 || $1 % 2097152) bad = 1; n++ }
	     END { exit !(n == 2048 && !bad) }' "$TMP/map"

data_kib=$((2048 * 4))
limit=$((data_kib * 5 / 4 + 2048))
echo "# server VmRSS: ${base} KiB before, ${after} KiB after ${data_kib} KiB of spaced writes (limit +${limit} KiB)"
if [ $((after - base)) -le $limit ]; then
	pass "resident set grew $((after - base)) KiB <= 1.25 x data + 2 MiB"
else
	fail "spaced writes commit 2 MiB each: resident set grew $((after - base)) KiB for ${data_kib} KiB of data (limit ${limit} KiB)"
fi
check "server still alive" alive
finish
