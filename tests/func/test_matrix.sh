#!/usr/bin/env bash
# The matrix (the main job's output): the layout lines, then the tables,
# one row per workload, one column per device, numbers in every cell.
source "$(dirname "$0")/lib.sh" "$@"

# small devices: the layout writes every block before the read rows
SMALL=(--dev_size=32m)

"$BLKSTACK" bench --dev=null,ram --runtime=150ms "${SMALL[@]}" >"$TMP/m.txt" 2>"$TMP/err"
check "matrix: exit 0" test $? -eq 0
for t in 'IOPS\(K\)' 'REQS\(K\)' 'CPU\(%\)' 'LAT\(us\)' 'MERGE\(K\)'; do
	check "matrix: table $t with both devices" grep -qE "^$t +\| +null \| +ram" "$TMP/m.txt"
done
for w in read randread write randwrite; do
	check "matrix: 5 rows of $w" test "$(grep -cE "^$w +\| +[0-9.]+ \| +[0-9.]+$" "$TMP/m.txt")" -eq 5
done
# IOPS cells are non-zero
check "matrix: IOPS non-zero" awk '/^IOPS/{t=1;next} /^REQS/{t=0} t && /^(read|randread|write|randwrite) /{ if ($3 + 0 <= 0 || $5 + 0 <= 0) bad=1 } END{exit bad}' "$TMP/m.txt"
# no verify: no VERIFY(K) table
check "matrix: no VERIFY(K) without verify" test "$(grep -c '^VERIFY' "$TMP/m.txt")" -eq 0

# --- the layout lines, above the tables ---
check "layout: null stores no data" \
	grep -qx 'layout: null: stores no data, not laid out: its reads return no written data' "$TMP/m.txt"
check "layout: ram written before the read rows" \
	grep -qE '^layout: ram: new device, 32 MiB written before the read rows \(4 KiB blocks, [0-9.]+ s\)$' "$TMP/m.txt"
check "layout: lines come before the first table" \
	awk '/^layout: ram/{l=NR} /^IOPS\(K\)/{t=NR} END{exit !(l && t && l < t)}' "$TMP/m.txt"

# --- REQS(K): the requests the device saw beside the bios ---
# cell TABLE ROW COL: the value in the matrix text (COL 1 = null, 2 = ram)
cell() {
	awk -v t="$1" -v r="$2" -v c="$3" '
		index($0, t) == 1 { in_t = 1; next }
		/^[A-Z]+\(/ { in_t = 0 }
		in_t && $1 == r { split($0, f, "|"); print f[c + 1] + 0; exit }' "$TMP/m.txt"
}
ni=$(cell 'IOPS(K)' read 1)
nr=$(cell 'REQS(K)' read 1)
ri=$(cell 'IOPS(K)' randread 1)
rr=$(cell 'REQS(K)' randread 1)
# sequential 4k bios merge in the plug: the device sees fewer requests
check "REQS: null read sees fewer requests than bios ($nr < $ni)" awk -v r="$nr" -v i="$ni" 'BEGIN{exit !(r > 0 && r < i / 2)}'
# random 4k bios hardly merge: a request each
check "REQS: null randread requests ~ bios ($rr vs $ri)" awk -v r="$rr" -v i="$ri" 'BEGIN{exit !(r > 0 && r <= i && r >= i * 0.95)}'
check "legend: REQS(K) defined" grep -q 'REQS(K): requests the device completed per second' "$TMP/m.txt"

# --- JSON matrix: 8 cells, each labelled; layout; requests ---
"$BLKSTACK" bench --dev=null,ram --runtime=100ms "${SMALL[@]}" --output-format=json >"$TMP/m.json"
check "matrix json: 8 jobs with workloads" \
	jq -e '[.jobs[].blkstack.workload] == ["read","read","randread","randread","write","write","randwrite","randwrite"]' "$TMP/m.json"
check "matrix json: layout of each column" \
	jq -e '.layout | length == 2 and .[0].dev == "null" and .[0].state == "no data"
		and .[1].dev == "ram" and .[1].state == "written" and .[1].bytes == 33554432
		and .[1].bs == 4096 and .[1].requests > 0 and .[1].time_ns > 0' "$TMP/m.json"
check "matrix json: requests, reqs_per_s and others_cpu in every cell" \
	jq -e '[.jobs[].blkstack | (.requests.read + .requests.write > 0) and .reqs_per_s > 0 and .others_cpu >= 0] | all' "$TMP/m.json"
# each cell reports its own counters, not the device's since the layout
check "matrix json: ram read cell counts no layout writes" \
	jq -e '[.jobs[] | select(.blkstack.dev == "ram" and .blkstack.workload == "read")][0].blkstack.requests.write == 0' "$TMP/m.json"
check "matrix json: ram disk_util of read cells has no writes" \
	jq -e '[.disk_util[] | select(.name == "ram")][0:2] | map(.write_ios == 0 and .read_ios > 0) | all' "$TMP/m.json"

# --- verify: the read rows read what the layout wrote ---
"$BLKSTACK" bench --dev=ram --runtime=100ms "${SMALL[@]}" --verify=crc32c >"$TMP/v.txt" 2>"$TMP/verr"
rc=$?
check "verify matrix: exit 0 (rc=$rc, $(head -c 200 "$TMP/verr"))" test $rc -eq 0
check "verify matrix: layout writes crc32c headers" \
	grep -qE '^layout: ram: new device, 32 MiB written before the read rows \(4 KiB blocks with crc32c headers, ' "$TMP/v.txt"
check "verify matrix: VERIFY(K) table, every cell checked blocks" \
	awk '/^VERIFY/{t=1;next} /^[A-Z]+\(/{t=0} t && /^(read|randread|write|randwrite) /{n++; if ($3 + 0 <= 0) bad=1} END{exit bad || n != 4}' "$TMP/v.txt"
"$BLKSTACK" bench --dev=ram --runtime=100ms "${SMALL[@]}" --verify=crc32c --output-format=json >"$TMP/v.json"
check "verify matrix json: read rows verified blocks, none bad" \
	jq -e '[.jobs[] | select(.blkstack.workload == "read" or .blkstack.workload == "randread") | .blkstack.verify
		| .blocks_verified > 0 and .mismatches == 0] | length == 2 and all' "$TMP/v.json"
# the same check on a device nothing was written to fails: the layout is what passes it
"$BLKSTACK" bench --dev=ram --rw=randread --runtime=100ms --time_based "${SMALL[@]}" \
	--verify=crc32c --verify_dump_dir="$TMP" >/dev/null 2>"$TMP/nolayout"
check "verify without a layout (plain randread of a new ram device) fails" test $? -eq 1
check "verify without a layout: bad magic reported" grep -q 'verify: bad block at offset' "$TMP/nolayout"
expect_error "verify matrix with null: stores no data" 'the null device does not store data' \
	bench --dev=null --runtime=100ms "${SMALL[@]}" --verify=crc32c

# --- uring: a new file is laid out and flushed; a full one is read as it is ---
IMG=$TMP/m.img
"$BLKSTACK" bench --dev=uring --filename="$IMG" --runtime=100ms --dev_size=8m >"$TMP/u1.txt" 2>&1
check "uring: new file exit 0" test $? -eq 0
check "uring: new file laid out and flushed" \
	grep -qE "^layout: uring $IMG: new file, 8 MiB written before the read rows \(4 KiB blocks, flushed, " "$TMP/u1.txt"
# the write rows' dirty pages are flushed after each, not left to write-back
# running beside the next cells
check "uring: flushed after each write row" \
	grep -qE "^layout: uring: flushed after each write row, outside the cells \(2, [0-9.]+ s\)$" "$TMP/u1.txt"
check "uring: no flush line for ram" bash -c "! grep -q '^layout: ram: flushed after' '$TMP/m.txt'"
"$BLKSTACK" bench --dev=uring --filename="$IMG" --runtime=100ms >"$TMP/u2.txt" 2>&1
check "uring: a file that holds data is not written" \
	grep -qx "layout: uring $IMG: file holds data, not laid out: the read rows read its 8 MiB as it is" "$TMP/u2.txt"
if fallocate --punch-hole --offset 4096 --length 65536 "$IMG" 2>/dev/null; then
	"$BLKSTACK" bench --dev=uring --filename="$IMG" --runtime=100ms >"$TMP/u3.txt" 2>&1
	check "uring: a file with a hole is laid out" \
		grep -qE "^layout: uring $IMG: file has holes, 8 MiB written before the read rows" "$TMP/u3.txt"
else
	echo "ok - uring hole punch not supported here: skipped"
fi
"$BLKSTACK" bench --dev=uring --filename="$IMG" --runtime=100ms --verify=crc32c >"$TMP/u4.txt" 2>&1
check "uring verify: headers written even to a full file, reads check them" \
	grep -qE "^layout: uring $IMG: verify=crc32c, 8 MiB written before the read rows \(4 KiB blocks with crc32c headers, flushed, " "$TMP/u4.txt"
# DEFER_TASKRUN rings serve one thread: each cell opens the file anew
"$BLKSTACK" bench --dev=uring --filename="$IMG" --runtime=100ms --verify=crc32c \
	--uring_taskrun=defer --output-format=json >"$TMP/u5.json" 2>"$TMP/u5err"
rc=$?
check "uring defer verify matrix: exit 0 (rc=$rc, $(head -c 200 "$TMP/u5err"))" test $rc -eq 0
check "uring defer verify matrix: read rows verified" \
	jq -e '[.jobs[] | select(.blkstack.workload == "read") | .blkstack.verify.blocks_verified > 0] | length == 1 and all' "$TMP/u5.json"
check "uring matrix json: two write-row flushes, their time" \
	jq -e '.layout[0].write_row_flushes == 2 and .layout[0].write_row_flush_ns > 0' "$TMP/u5.json"
finish
