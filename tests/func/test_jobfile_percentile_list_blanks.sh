#!/usr/bin/env bash
# percentile_list with blanks around its entries (`percentile_list = 50 : 90`
# in a job file): fio's strtod() takes them and reports 50 and 90;
# blkstack refused the job ("entry 1 (50 ) is not a percentile").
source "$(dirname "$0")/lib.sh" "$@"

printf '[x]\nsize=64k\nrw=randread\npercentile_list = 50 : 90\n' >"$TMP/p.fio"
"$BLKSTACK" bench --output-format=json "$TMP/p.fio" >"$TMP/out" 2>"$TMP/err"
k=$(python3 -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['jobs'][0]['read']['clat_ns']['percentile']))" "$TMP/out" 2>/dev/null)
[ "$k" = "50.000000 90.000000" ] && pass "blanks around entries taken: $k" ||
	fail "percentile_list = 50 : 90: '$k' $(head -1 "$TMP/err")"
expect_error "a blank entry is still refused, naming it" \
	"percentile_list=50: :90: entry 2" bench --name=x --size=64k --rw=read "--percentile_list=50: :90"
expect_error "a blank inside a number is still refused" \
	"percentile_list=5 0: entry 1" bench --name=x --size=64k --rw=read "--percentile_list=5 0"
finish
