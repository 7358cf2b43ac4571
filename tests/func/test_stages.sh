#!/usr/bin/env bash
# Stage timers (--stage_timers=1, --stage_windows=A:B): every interval in
# the text and JSON output, counts equal to the requests the device saw,
# values in order; seed 000's print_timings lines; bad values named.
source "$(dirname "$0")/lib.sh" "$@"

if "$BLKSTACK" bench --help 2>&1 | grep -q 'stage_timers' &&
   ! "$BLKSTACK" bench --dev=null --rw=read --size=1M --stage_timers=1 >/dev/null 2>&1; then
	echo "skip: this build has no stage timers (cmake -DBLK_STAGE_TIMERS=OFF)"
	exit 77
fi

STAGES="submit->flush flush->dispatch dispatch->device device->device_done device_done->complete complete->end_io"
for dev in null ram; do
	j=$TMP/$dev.json
	"$BLKSTACK" bench --dev=$dev --rw=randread --bs=4k --iodepth=16 --size=16M \
		--stage_timers=1 --output-format=json >"$j"
	check "$dev: exit 0" test $? -eq 0
	check "$dev: six intervals, named in path order" jq_true \
		"[.jobs[0].stages[].name] == [$(printf '"%s",' $STAGES | sed 's/,$//')]" "$j"
	# a request per I/O but the bios the plug merged (4096 bios)
	check "$dev: every interval counts every request the device saw" jq_true \
		'.disk_util[0].read_ios as $n | $n > 3500 and
		 ($n + .disk_util[0].read_merges == 4096) and
		 ([.jobs[0].stages[].count] | all(. == $n))' "$j"
	check "$dev: min <= p50 <= p99 <= p99.9 <= max, mean within [min, max]" jq_true \
		'[.jobs[0].stages[] | .min_ns <= .p50_ns and .p50_ns <= .p99_ns and
		  .p99_ns <= ."p99.9_ns" and ."p99.9_ns" <= .max_ns and
		  .mean_ns >= .min_ns and .mean_ns <= .max_ns] | all' "$j"
	check "$dev: the stages add up to no more than the total latency" jq_true \
		'([.jobs[0].stages[].mean_ns] | add) <= .jobs[0].read.lat_ns.max' "$j"
	t=$TMP/$dev.txt
	"$BLKSTACK" bench --dev=$dev --rw=randread --bs=4k --iodepth=16 --size=16M \
		--stage_timers=1 >"$t"
	check "$dev: text header" grep -qE '^  stages \(ns\)  : interval +count +mean +min +p50 +p99 +p99.9 +max' "$t"
	n=$(sed -nE "s/^  $dev: ios=([0-9]+)\/.*/\1/p" "$t")
	for s in $STAGES; do
		check "$dev: text line $s with count $n (the disk's ios)" grep -qE "^ +$s +$n " "$t"
	done
done

# no switch, no stages
"$BLKSTACK" bench --dev=null --rw=randread --size=4M --output-format=json >"$TMP/off.json"
check "off: no stages in JSON" jq_true '.jobs[0] | has("stages") | not' "$TMP/off.json"

# seed 000's windows: 100 ms each, over a 350 ms run at least 2 closed
w=$TMP/w.txt
"$BLKSTACK" bench --dev=null --rw=randread --bs=4k --iodepth=8 --size=16M --runtime=350ms \
	--time_based --stage_windows=submit:end_io >"$w"
check "windows: exit 0" test $? -eq 0
check "windows: header names the interval" grep -qE '^  stage windows: submit->end_io, 100 ms windows, [0-9]+ closed' "$w"
n=$(grep -cE '^   print_timings: cum_time=[0-9]+ ns, count=[1-9][0-9]*, avg=[0-9]+ ns$' "$w")
check "windows: at least 2 print_timings lines ($n)" test "$n" -ge 2
check "windows: avg = cum_time / count" awk -F'[=, ]+' '/print_timings/ {
	# print_timings: cum_time=C ns, count=N, avg=A ns
	for (i = 1; i <= NF; i++) { if ($i == "cum_time") c = $(i + 1);
		if ($i == "count") n = $(i + 1); if ($i == "avg") a = $(i + 1) }
	if (n == 0 || int(c / n) != a) bad = 1 } END { exit bad }' "$w"
"$BLKSTACK" bench --dev=ram --rw=randread --size=16M --runtime=250ms --time_based \
	--stage_windows=device_done:complete --output-format=json >"$TMP/w.json"
check "windows JSON: from, to, window_ns, windows[]" jq_true \
	'.jobs[0].stage_windows | .from == "device_done" and .to == "complete" and
	 .window_ns == 100000000 and (.windows | length >= 1) and
	 (.windows | all(.count > 0 and .avg_ns == ((.cum_time_ns / .count) | floor)))' "$TMP/w.json"
check "windows turn the stage timers on" jq_true '.jobs[0].stages | length == 6' "$TMP/w.json"

# other drivers stamp their device stages
"$BLKSTACK" bench --dev=null --irqmode=1 --rw=randread --size=8M --stage_timers=1 \
	--output-format=json >"$TMP/irq.json"
check "null irqmode=1 (completion thread): every interval counted" jq_true \
	'[.jobs[0].stages[].count] | all(. == 2048)' "$TMP/irq.json"
"$BLKSTACK" bench --dev=nvme --nvme_ctrl=inline --rw=randread --size=8M --stage_timers=1 \
	--output-format=json >"$TMP/nvme.json"
check "nvme: every interval counted" jq_true '[.jobs[0].stages[].count] | all(. == 2048)' "$TMP/nvme.json"
"$BLKSTACK" bench --dev=scsi --rw=randread --size=8M --stage_timers=1 \
	--output-format=json >"$TMP/scsi.json"
check "scsi: every interval counted" jq_true '[.jobs[0].stages[].count] | all(. == 2048)' "$TMP/scsi.json"

# bad values: the option and what is allowed
expect_error "stage_timers=2" "stage_timers.*(allowed|0\.\.1|0 or 1)" bench --dev=null --rw=read --stage_timers=2
expect_error "stage_windows without ':'" "stage_windows.*no ':'.*allowed STAGE_A:STAGE_B" \
	bench --dev=null --rw=read --stage_windows=submit
expect_error "stage_windows unknown stage" "stage_windows.*unknown stage 'devic'.*submit\|flush\|dispatch" \
	bench --dev=null --rw=read --stage_windows=submit:devic
expect_error "stage_windows backwards" "stage_windows.*submit is not later than end_io" \
	bench --dev=null --rw=read --stage_windows=end_io:submit
finish
