#!/usr/bin/env bash
# description=: fio prints a job's description in each report (stat.c):
# "  Description  : [TEXT]" under the job's header line, "desc" in its
# JSON object, and the last terse field.  The same job through fio's
# null engine and blkstack's shows it in the same three places.
source "$(dirname "$0")/lib.sh" "$@"

cat >"$TMP/d.fio" <<'EOF'
[d]
description=4k reads, a description with spaces
rw=randread
bs=4k
size=4m
EOF
sed '1a ioengine=null' "$TMP/d.fio" >"$TMP/f.fio"
for who in blk fio; do
	for fmt in normal json terse; do
		if [ $who = fio ]; then
			fio --output-format=$fmt "$TMP/f.fio" >"$TMP/$who.$fmt" 2>/dev/null
		else
			"$BLKSTACK" bench --dev=null --output-format=$fmt "$TMP/d.fio" >"$TMP/$who.$fmt" 2>/dev/null
		fi
	done
done
for who in blk fio; do
	check "$who text: the Description line under the header" \
		grep -qx '  Description  : \[4k reads, a description with spaces\]' "$TMP/$who.normal"
	check "$who json: desc" \
		jq -e '.jobs[0].desc == "4k reads, a description with spaces"' "$TMP/$who.json"
	check "$who terse: the last field" \
		awk -F';' '$NF == "4k reads, a description with spaces" { ok = 1 } END { exit !ok }' "$TMP/$who.terse"
done
check "json: desc comes after latency_window, as in fio" \
	jq -e '.jobs[0] | keys_unsorted | index("desc") > index("latency_window")' "$TMP/blk.json"

# without one, none of the three
"$BLKSTACK" bench --dev=null --name=n --rw=read --size=1m --output-format=json >"$TMP/n.json" 2>/dev/null
check "no description: no desc key" jq -e '.jobs[0] | has("desc") | not' "$TMP/n.json"
"$BLKSTACK" bench --dev=null --name=n --rw=read --size=1m >"$TMP/n.txt" 2>/dev/null
check "no description: no Description line" bash -c "! grep -q Description '$TMP/n.txt'"
finish
