#!/usr/bin/env bash
# bench --status-interval=TIME: the report so far every TIME, in each
# --output-format, then the final one, as fio's --status-interval.  The
# interim reports count the I/Os up to their time (more each time, the
# runtime at the interval), jobs of groups not started are not in them,
# a job in its verify phase does not hold them up, and the same job
# through fio's null engine prints as many reports.
source "$(dirname "$0")/lib.sh" "$@"

J=(--name=st --rw=randread --bs=4k --runtime=2500ms --time_based --status-interval=1)

# --- JSON: one document per interval, then the final one ---
"$BLKSTACK" bench --dev=null "${J[@]}" --output-format=json >"$TMP/s.json" 2>"$TMP/s.err"
check "json: exit 0 ($(head -c 200 "$TMP/s.err"))" test $? -eq 0
check "json: three documents (1 s, 2 s, the end of 2.5 s)" \
	test "$(jq -s length "$TMP/s.json")" -eq 3
check "json: I/Os grow from report to report" \
	jq -se '[.[].jobs[0].read.total_ios] | .[0] > 0 and .[0] < .[1] and .[1] < .[2]' "$TMP/s.json"
check "json: interim runtimes at the intervals (0.9-1.3 s, 1.9-2.3 s), the last 2.5 s" \
	jq -se '[.[].jobs[0].read.runtime] | .[0] >= 900 and .[0] <= 1300 and
		.[1] >= 1900 and .[1] <= 2300 and .[2] >= 2450 and .[2] <= 2700' "$TMP/s.json"
fio --ioengine=null --size=1g "${J[@]}" --output-format=json >"$TMP/f.json" 2>/dev/null
check "json: fio prints as many ($(jq -s length "$TMP/f.json"))" \
	test "$(jq -s length "$TMP/f.json")" -eq 3

# --- normal: the text report each time ---
"$BLKSTACK" bench --dev=null "${J[@]}" >"$TMP/s.txt" 2>/dev/null
check "normal: three reports" test "$(grep -c '^Run status group 0' "$TMP/s.txt")" -eq 3
check "normal: each with the job's read line" test "$(grep -c '^  read: IOPS=' "$TMP/s.txt")" -eq 3

# --- a stonewall: the second group's job is in no report before it starts ---
cat >"$TMP/g.fio" <<EOF
[a]
rw=randread
runtime=1400ms
time_based
[b]
stonewall
rw=randwrite
runtime=1400ms
time_based
EOF
"$BLKSTACK" bench --dev=null --status-interval=1 --output-format=json "$TMP/g.fio" >"$TMP/g.json" 2>/dev/null
check "groups: 2 interim reports (1 s, 2 s) and the final one (2.8 s)" test "$(jq -s length "$TMP/g.json")" -eq 3
check "groups: the first (1 s, group a running) has job a only" \
	jq -se '.[0].jobs | length == 1 and .[0].jobname == "a"' "$TMP/g.json"
check "groups: the one at 2 s has a's final I/Os and b's so far" \
	jq -se '.[1].jobs | length == 2 and .[1].jobname == "b" and .[1].write.total_ios > 0' "$TMP/g.json"
check "groups: a's I/Os in the second report are its final ones" \
	jq -se '.[1].jobs[0].read.total_ios == .[2].jobs[0].read.total_ios' "$TMP/g.json"

# --- a thread in its verify phase makes no copy: the run still ends, on time ---
start=$(date +%s%N)
timeout 60 "$BLKSTACK" bench --dev=ram --size=64m --name=v --rw=write --bs=4k \
	--verify=crc32c --status-interval=100ms --output-format=json >"$TMP/v.json" 2>"$TMP/v.err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "verify job with 100 ms reports: exit 0 in $ms ms ($(head -c 200 "$TMP/v.err"))" test $rc -eq 0
check "verify job: the final report verified every block" \
	jq -se '.[-1].jobs[0].blkstack.verify.blocks_verified == 16384' "$TMP/v.json"

# --- bad values ---
expect_error "status-interval=abc refused, naming the field and the range" \
	'status-interval=abc: not a time, allowed 0 or 1ms..24h' \
	bench --dev=null --status-interval=abc --runtime=10ms
expect_error "status-interval=100us refused" 'allowed 0 or 1ms..24h' \
	bench --dev=null --status-interval=100us --runtime=10ms
"$BLKSTACK" bench --dev=null --name=z --rw=read --runtime=200ms --status-interval=0 \
	--output-format=json >"$TMP/z.json" 2>/dev/null
check "status-interval=0: the final report only" test "$(jq -s length "$TMP/z.json")" -eq 1
finish
