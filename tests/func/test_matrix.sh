#!/usr/bin/env bash
# The matrix (the main job's output): four tables, one row per workload,
# one column per device, numbers in every cell.
source "$(dirname "$0")/lib.sh" "$@"

"$BLKSTACK" bench --dev=null,ram --runtime=150ms >"$TMP/m.txt" 2>"$TMP/err"
check "matrix: exit 0" test $? -eq 0
for t in 'IOPS\(K\)' 'CPU\(%\)' 'LAT\(us\)' 'MERGE\(K\)'; do
	check "matrix: table $t with both devices" grep -qE "^$t +\| +null \| +ram" "$TMP/m.txt"
done
for w in read randread write randwrite; do
	check "matrix: 4 rows of $w" test "$(grep -cE "^$w +\| +[0-9.]+ \| +[0-9.]+$" "$TMP/m.txt")" -eq 4
done
# IOPS cells are non-zero
check "matrix: IOPS non-zero" awk '/^IOPS/{t=1;next} /^CPU/{t=0} t && /^(read|randread|write|randwrite) /{ if ($3 + 0 <= 0 || $5 + 0 <= 0) bad=1 } END{exit bad}' "$TMP/m.txt"
# JSON matrix: 8 runs, each labelled with its workload
"$BLKSTACK" bench --dev=null,ram --runtime=100ms --output-format=json >"$TMP/m.json"
check "matrix json: 8 jobs with workloads" \
	jq -e '[.jobs[].blkstack.workload] == ["read","read","randread","randread","write","write","randwrite","randwrite"]' "$TMP/m.json"
finish
