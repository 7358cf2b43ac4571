#!/usr/bin/env bash
# The measured window and what ends a run: I/Os counted after the runtime
# deadline stretch the runtime with them, SIGINT/SIGTERM stop the jobs and
# still print the report, a size-based job that ends inside its ramp is
# reported whole.
source "$(dirname "$0")/lib.sh" "$@"

# --- runtime overshoot: counted I/Os and runtime agree ---
# The first batch, 16 x 16 MiB on a new ram device, completes inline during
# its submission, far past the 20 ms deadline.  It is counted, so the
# runtime must run to its end: before, the runtime was clamped to 20 ms and
# the rate inflated by the overshoot.
"$BLKSTACK" bench --dev=ram --rw=write --bs=16m --iodepth=16 --size=256m \
	--runtime=20ms --time_based --output-format=json >"$TMP/over.json"
check "runtime overshoot: run exits 0" test $? -eq 0
check "runtime overshoot: I/Os counted" jq -e '.jobs[0].write.total_ios >= 16' "$TMP/over.json"
check "runtime overshoot: runtime covers the late completions (>= half the wall time)" \
	jq -e '.jobs[0].write.runtime * 1000000 >= .jobs[0].blkstack.wall_ns * 0.5' "$TMP/over.json"
check "runtime overshoot: iops x runtime = total_ios" \
	jq -e '.jobs[0].write | ((.iops * .runtime / 1000) / .total_ios - 1 | fabs) < 0.05' "$TMP/over.json"

# --- SIGINT/SIGTERM: stop, report, exit 128 + the signal ---
# (regression: it exited 0, so bench scripts under set -e ran on past a
# Ctrl-C and counted the cut-short run)
# In the ASan build, LeakSanitizer's exit-time check (a ptrace-based stop of
# the process) was seen to hang now and then in a container after a handled
# signal, with the report already written; leaks are checked by every other
# run, so these runs skip it.  -k 10: a process still there 10 s after the
# signal is killed, and the test fails instead of hanging.
NOLEAKS=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
# time_based without runtime runs until interrupted
timeout -k 10 -s INT --preserve-status 1 "${NOLEAKS[@]}" "$BLKSTACK" bench --rw=read --size=1m --time_based \
	--output-format=json >"$TMP/int.json" 2>"$TMP/int.err"
rc=$?
check "SIGINT: exit status 130 (rc=$rc)" test $rc -eq 130
# -s: jq 1.6 -e passes on empty input; one document, with I/Os
check "SIGINT: the JSON report is printed and parses, with I/Os" \
	jq -se 'length == 1 and .[0].jobs[0].read.total_ios > 0 and .[0].jobs[0].read.runtime > 0' "$TMP/int.json"
check "SIGINT: stderr says the run was interrupted" grep -q "interrupted by SIGINT" "$TMP/int.err"
timeout -k 10 -s INT 1 "${NOLEAKS[@]}" "$BLKSTACK" bench --rw=read --size=1m --time_based --output-format=json \
	2>/dev/null | jq -se 'length == 1 and .[0].jobs[0].read.total_ios > 0' >/dev/null
check "SIGINT: report piped into jq" test "${PIPESTATUS[1]}" -eq 0
timeout -k 10 -s TERM --preserve-status 1 "${NOLEAKS[@]}" "$BLKSTACK" bench --rw=randread --size=16m --time_based \
	>"$TMP/term.txt" 2>/dev/null
rc=$?
check "SIGTERM: exit status 143 (rc=$rc)" test $rc -eq 143
check "SIGTERM: the text report is printed" grep -qE "read: IOPS=[0-9.]+[kM]?, " "$TMP/term.txt"
check "SIGTERM: the run status block is printed" grep -q "Run status group 0" "$TMP/term.txt"
# a later stonewall group does not start after the interrupt
timeout -k 10 -s INT --preserve-status 1 "${NOLEAKS[@]}" "$BLKSTACK" bench --size=1m --time_based \
	--name=first --rw=read --name=second --stonewall --rw=write \
	--output-format=json >"$TMP/sw.json" 2>/dev/null
rc=$?
check "SIGINT: stonewall run exits 130 (rc=$rc)" test $rc -eq 130
check "SIGINT: later stonewall group does not run" \
	jq -se 'length == 1 and (.[0].jobs | length) == 1 and .[0].jobs[0].jobname == "first"' "$TMP/sw.json"
# the matrix stops at the interrupted cell and still prints its tables
timeout -k 10 -s INT --preserve-status 1 "${NOLEAKS[@]}" "$BLKSTACK" bench --runtime=1s >"$TMP/mx.txt" 2>/dev/null
rc=$?
check "SIGINT: matrix exits 130 (rc=$rc)" test $rc -eq 130
check "SIGINT: matrix tables printed" grep -q "^MERGE(K)" "$TMP/mx.txt"

# --- a size-based job that ends inside its ramp reports the whole run ---
"$BLKSTACK" bench --rw=read --size=1m --ramp_time=200ms --output-format=json >"$TMP/ramp.json"
check "ramp_time longer than the job: exit 0" test $? -eq 0
check "ramp_time longer than the job: all 256 I/Os reported" \
	jq -e '.jobs[0].read.total_ios == 256 and .jobs[0].read.io_bytes == 1048576' "$TMP/ramp.json"
# a ramp that ends: only what follows it is counted
"$BLKSTACK" bench --rw=read --size=1m --ramp_time=50ms --runtime=100ms --time_based \
	--output-format=json >"$TMP/ramp2.json"
check "ramp_time then runtime: runtime is the part after the ramp" \
	jq -e '.jobs[0].read.runtime >= 100 and .jobs[0].read.runtime < 1000' "$TMP/ramp2.json"
finish
