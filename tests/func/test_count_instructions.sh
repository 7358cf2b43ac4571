#!/usr/bin/env bash
# --count_instructions: the hardware counter where the machine has one,
# else a clear message naming the callgrind way; --count_instructions=
# callgrind: instructions per I/O per layer (layers add up to the total,
# the core and the driver among them), JSON for the A/B; bad values named.
source "$(dirname "$0")/lib.sh" "$@"

WL=(--dev=null --rw=randread --bs=4k --iodepth=32 --size=16M)

# perf: a number where there is a PMU, the way out where there is none
"$BLKSTACK" bench "${WL[@]}" --count_instructions --output-format=json >"$TMP/perf.json" 2>"$TMP/perf.err"
rc=$?
if [ $rc -eq 0 ]; then
	check "perf: instructions_per_io in every job" jq_true \
		'[.jobs[].blkstack.instructions_per_io] | all(. > 50 and . < 100000)' "$TMP/perf.json"
else
	check "perf, no counter: exit 1" test $rc -eq 1
	check "perf, no counter: says why and names --count_instructions=callgrind" \
		grep -qE '^blkstack bench: count_instructions: no hardware instruction counter here \(perf_event_open\(PERF_COUNT_HW_INSTRUCTIONS\): .*--count_instructions=callgrind' "$TMP/perf.err"
fi
expect_error "count_instructions=x" "count_instructions=x: bad value, allowed perf\|callgrind" \
	bench "${WL[@]}" --count_instructions=x
expect_error "perf on the matrix" "count_instructions: a workload \(rw=, a job file\), not the matrix" \
	bench --dev=null --count_instructions

# callgrind: not under a sanitizer (valgrind and ASan/TSan do not mix)
if [ "$(sanitizer)" != none ] || ! command -v valgrind >/dev/null; then
	finish
	exit $?
fi
t=$TMP/cg.txt
"$BLKSTACK" bench "${WL[@]}" --count_instructions=callgrind >"$t"
check "callgrind: exit 0" test $? -eq 0
check "callgrind: header with the I/Os" grep -qE '^instructions per I/O by layer \(callgrind: .*; 4096 I/Os' "$t"
check "callgrind: the block core" grep -qE '^  block core \(src/core\) +[0-9]+\.[0-9] +[0-9.]+%$' "$t"
check "callgrind: the null driver" grep -qE '^  driver null \(src/drivers/null\) +[0-9]+\.[0-9]' "$t"
check "callgrind: the bench engine" grep -qE '^  bench engine \(src/bench\) +[0-9]+\.[0-9]' "$t"
check "callgrind: layers add up to the total (within rounding)" awk '
	/^  total / { total = $2; next }
	/^  [a-z].*%$/ && !/^  total/ { sum += $(NF - 1) }
	END { d = sum - total; if (d < 0) d = -d; exit !(total > 100 && d < 1) }' "$t"
check "callgrind: entry points, blk_submit and null_queue_rq" \
	bash -c "grep -qE '^  blk_submit +[0-9]' '$t' && grep -qE '^  null_queue_rq +[0-9]' '$t'"
j=$TMP/cg.json
"$BLKSTACK" bench "${WL[@]}" --count_instructions=callgrind --output-format=json >"$j"
check "callgrind JSON: jobs[].blkstack.instructions_per_io (what --ab reads)" jq_true \
	'.jobs[0].blkstack.instructions_per_io > 100' "$j"
check "callgrind JSON: layers sum to total_ir, ir_per_io = total / ios" jq_true \
	'.instructions | (([.layers[].ir] | add) == .total_ir) and .ios == 4096 and
	 ((.ir_per_io - .total_ir / .ios) | fabs < 0.01)' "$j"
check "callgrind JSON: the run's own report (fio's jobs[])" jq_true '.jobs[0].read.total_ios == 4096' "$j"
expect_error "callgrind: a failing run says so, with its error" \
	"count_instructions=callgrind: the run under valgrind failed \(status 1\): blkstack bench: .*read error at offset [0-9]+, length 4096: IOERR" \
	bench --dev=null --fail_every=1 --rw=randread --size=1M --count_instructions=callgrind
finish
