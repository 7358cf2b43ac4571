#!/usr/bin/env bash
# --output-format=json+ with unified_rw_reporting=mixed|both: fio's
# "mixed" object has clat_ns "bins" (every direction's summed, adding up
# to clat_ns.N); blkstack's had none, so fio_jsonplus_clat2csv-style
# readers found no bins for a mixed job.
source "$(dirname "$0")/lib.sh" "$@"

for args in "--unified_rw_reporting=mixed" "--unified_rw_reporting=both" \
	"--unified_rw_reporting=both --numjobs=2 --group_reporting"; do
	# shellcheck disable=SC2086
	"$BLKSTACK" bench --name=x --rw=randrw --size=1m $args --output-format=json+ \
		>"$TMP/out.json" 2>"$TMP/err"
	r=$(python3 - "$TMP/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
for j in d["jobs"]:
    for k in ("read", "write", "mixed"):
        if k not in j:
            continue
        c = j[k]["clat_ns"]
        n = sum(c.get("bins", {}).values())
        if c["N"] and n != c["N"]:
            bad.append("%s N=%d bins=%d" % (k, c["N"], n))
    if "mixed" not in j:
        bad.append("no mixed")
print("; ".join(bad) or "ok")
PY
)
	[ "$r" = ok ] && pass "json+ mixed bins add up to N ($args)" ||
		fail "json+ ($args): $r"
done
if command -v fio >/dev/null; then
	fio --name=x --ioengine=null --rw=randrw --size=1m --unified_rw_reporting=mixed \
		--output-format=json+ >"$TMP/fio.json" 2>/dev/null
	if python3 -c "import json,sys; sys.exit(0 if 'bins' in json.load(open('$TMP/fio.json'))['jobs'][0]['mixed']['clat_ns'] else 1)"; then
		pass "fio's mixed clat_ns has bins too"
	else
		fail "fio's mixed clat_ns has no bins: the test's premise is wrong"
	fi
fi
finish
