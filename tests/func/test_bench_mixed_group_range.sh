#!/usr/bin/env bash
# unified_rw_reporting=both: the Run status MIXED line's bandwidth range
# is fio's show_mixed_group_stats(): the lowest direction's lowest entry
# to the highest direction's highest (a job at rate=2m,1m: 1023KiB/s-
# 2046KiB/s).  blkstack printed the range of the sums (3072KiB/s-
# 3072KiB/s).  With =mixed fio prints the sums' range, as blkstack does.
source "$(dirname "$0")/lib.sh" "$@"

# range UNIFIED: "low high" of the MIXED line, KiB/s
range() {
	"$BLKSTACK" bench --name=x --rw=randrw --size=64m --rate=2m,1m --runtime=1s \
		--time_based --unified_rw_reporting="$1" 2>&1 |
		sed -n 's/.*MIXED: bw=[^,]*, \([0-9]*\)KiB\/s-\([0-9]*\)KiB\/s.*/\1 \2/p'
}
read -r lo hi <<<"$(range both)"
if [ -n "$lo" ] && [ "$lo" -ge 900 ] && [ "$lo" -le 1100 ] &&
   [ "$hi" -ge 1900 ] && [ "$hi" -le 2100 ]; then
	pass "both: MIXED range $lo-$hi KiB/s, the directions' (fio: 1023-2046)"
else
	fail "both: MIXED range '$lo-$hi' KiB/s, fio's 1023-2046"
fi
read -r lo hi <<<"$(range mixed)"
if [ -n "$lo" ] && [ "$lo" -ge 2900 ] && [ "$hi" -le 3200 ]; then
	pass "mixed: MIXED range $lo-$hi KiB/s, the sums' (fio: 3069-3069)"
else
	fail "mixed: MIXED range '$lo-$hi' KiB/s, fio's 3069-3069"
fi
finish
