#!/usr/bin/env bash
# blkstack bench --ab: two or more sides in rounds, each side a process of
# its own; per metric the medians, the difference with its interval and a
# verdict.  Quick versions of bench/ab-validate.sh's promises on null: an
# A/A run says "within noise" for every headline metric, a planted 5 %
# CPU cost per request (null's spin_nsec) is found as "worse" (the A/A in 2 of 3
# short runs, the planted one in 2 of at most 5; the 20-run version is
# the script's).  Then the
# report's shape (text, JSON, three sides, the matrix), the stop reasons,
# a side that crashes, and the errors for bad input.
source "$(dirname "$0")/lib.sh" "$@"
BLKSTACK=$(realpath "$BLKSTACK")

# The planted difference: 5 % more spin per request.  The spin must
# dominate the stack's own cost per I/O and its noise: 10 us does in a
# plain and an ASan build (0.4 and 0.5-0.8 us of stack), 40 us under
# TSan (3.7 us of stack).
SPIN=10000
[ "$(sanitizer)" = tsan ] && SPIN=40000
SPIN5=$((SPIN * 105 / 100))
SPIN10=$((SPIN * 110 / 100))
WL=(--dev=null --rw=randread --iodepth=32 --runtime=50ms --time_based)
# the A/A and planted runs: rounds of 100 ms, up to 16 (about 5 s each)
WL100=(--dev=null --rw=randread --iodepth=32 --runtime=100ms --time_based)
SHORT=(--ab_max_rounds=16 --ab_budget=20)

# ab OUT ARGS...: an A/B run with JSON into OUT; fails the test on a non-zero exit
ab() {
	local out=$1
	shift
	if ! "$BLKSTACK" bench "$@" --output-format=json >"$out" 2>"$TMP/ab.err"; then
		fail "bench $*: exit non-zero: $(head -c 300 "$TMP/ab.err")"
		return 1
	fi
}

# --- A/A: the same configuration twice, once through binary= ---
aa=0
for i in 1 2 3; do
	side_b=--spin_nsec=$SPIN
	[ $i -eq 2 ] && side_b="binary=$BLKSTACK --spin_nsec=$SPIN"
	ab "$TMP/aa$i.json" --ab=--spin_nsec=$SPIN --ab="$side_b" "${WL100[@]}" "${SHORT[@]}" || continue
	jq -e '[.ab.metrics[] | select(.headline) | .verdict == "within noise"] | all' \
		"$TMP/aa$i.json" >/dev/null && aa=$((aa + 1))
done
check "A/A: every headline metric within noise in at least 2 of 3 runs (got $aa)" test $aa -ge 2
check "A/A: side B ran the binary it was given" \
	jq -e --arg b "$BLKSTACK" --arg o "--spin_nsec=$SPIN" '.ab.sides[1].binary == $b and .ab.sides[1].options == [$o]' "$TMP/aa2.json"

# --- the JSON's shape ---
J=$TMP/aa1.json
check "json: the metrics, each once" \
	jq -e '[.ab.metrics[].name] == ["iops", "cpu_per_io", "lat_mean", "clat_p50", "clat_p99", "clat_p99.9", "merges"]' "$J"
check "json: each metric has two medians, diff_pct inside [ci_low_pct, ci_high_pct], a verdict" \
	jq -e '[.ab.metrics[] | (.medians | length == 2) and (.ci_low_pct <= .diff_pct) and (.diff_pct <= .ci_high_pct)
		and (.verdict | IN("better", "worse", "within noise"))] | all' "$J"
check "json: IOPS, CPU per I/O and mean latency are headline metrics, directions right" \
	jq -e '[.ab.metrics[] | select(.headline) | "\(.name):\(.higher_is_better)"] == ["iops:true", "cpu_per_io:false", "lat_mean:false"]' "$J"
check "json: rounds between 6 and 16, values per round per side, why it stopped" \
	jq -e '.ab | (.rounds >= 6) and (.rounds <= 16) and (.metrics[0].values | length == 2) and
		(.metrics[0].values[0] | length) == .rounds and (.stopped | IN("ci", "max_rounds", "budget")) and (.stop_reason | length > 0)' "$J"
m0=$(jq '.ab.metrics[0] | .values[0] | sort | (if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end)' "$J")
check "json: median A of IOPS ($m0) is the median of its rounds" \
	jq -e --argjson m "$m0" '(.ab.metrics[0].medians[0] - $m | fabs) < 1e-9' "$J"

# --- a planted difference: one side spins 5 % longer per request ---
# Odd runs: B is the costlier side (worse); even runs: A is (B better).
# Up to 5 runs; it stops once $need have found it and both orderings ran.
# Each run's headline verdicts go to the log, so a miss can be read.
need=2
[ "$(sanitizer)" = none ] || need=1
pl=0 sign=0 runs=0
for i in 1 2 3 4 5; do
	a=$SPIN b=$SPIN5 want=worse other=better cmp='> 1'
	[ $((i % 2)) -eq 0 ] && a=$SPIN5 b=$SPIN want=better other=worse cmp='< -1'
	runs=$i
	ab "$TMP/pl$i.json" --ab=--spin_nsec=$a --ab=--spin_nsec=$b "${WL100[@]}" "${SHORT[@]}" || continue
	echo "# planted run $i (B $want): $(jq -c '[.ab.rounds, (.ab.metrics[] | select(.headline) |
		"\(.name) \(.verdict) \(.diff_pct * 100 | round / 100) [\(.ci_low_pct * 100 | round / 100), \(.ci_high_pct * 100 | round / 100)]")]' "$TMP/pl$i.json")"
	jq -e --arg w $want --arg o $other \
		'(.ab.metrics[] | select(.name == "cpu_per_io") | .verdict == $w) and
		([.ab.metrics[] | select(.headline) | .verdict != $o] | all)' "$TMP/pl$i.json" >/dev/null && pl=$((pl + 1))
	jq -e ".ab.metrics[] | select(.name == \"cpu_per_io\") | .diff_pct $cmp" "$TMP/pl$i.json" >/dev/null && sign=$((sign + 1))
	[ $i -ge 2 ] && [ $pl -ge $need ] && break
done
# Under the full suite's load (2 vCPUs, ctest -j2) one plain-build CI run
# found it in 1 of 3 where a quiet machine finds it in every run; under a
# sanitizer the stack's cost per I/O varies by +-2.5 % run to run (ASan,
# 10 us spin: 10.9 to 11.9 us per I/O) and 16 rounds do not always
# resolve 5 % past the 1 % floor.  So: 2 of at most 5 runs (plain), 1 of
# at most 5 (sanitizers); the raw sign must hold in all but one run.
check "planted 5 % CPU per request: found (worse; swapped: better), nothing the wrong way, in at least $need of $runs runs (got $pl)" test $pl -ge $need
check "planted: CPU per I/O moves more than 1 % the right way in all but one of $runs runs (got $sign)" test $sign -ge $((runs - 1))

# --- text: seed 001's tables with the difference, interval and verdict ---
if "$BLKSTACK" bench --ab=--spin_nsec=$SPIN --ab=--spin_nsec=$SPIN5 "${WL[@]}" --ab_max_rounds=6 >"$TMP/text" 2>"$TMP/err"; then
	check "text: the A/B line, sides and why it stopped" grep -qE '^A/B: 2 sides, 6 rounds after 1 warm-up, order alternate, .*stopped: ' "$TMP/text"
	check "text: IOPS(K) table header with both sides, the difference and verdict" \
		grep -qE '^IOPS\(K\) +\| +A \| +B \| +B-A % 95 % interval +verdict' "$TMP/text"
	check "text: a row per job: medians, difference, [low, high], verdict" \
		grep -qE '^bench +\| +[0-9.]+ \| +[0-9.]+ \| +[-+][0-9.]+ \[[-+][0-9.]+, [-+][0-9.]+\] +(better|worse|within noise)' "$TMP/text"
	for t in 'CPU\(ns/IO\)' 'LAT\(us\)' 'P99.9\(us\)' 'MERGE\(K\)'; do
		check "text: table $t" grep -qE "^$t +\|" "$TMP/text"
	done
else
	fail "text run exited non-zero: $(head -c 300 "$TMP/err")"
fi

# --- an empty side: the workload's options alone ---
if ab "$TMP/empty.json" --ab= --ab=--spin_nsec=1000 "${WL[@]}" --ab_max_rounds=6; then
	check "--ab= is a side with no options of its own" \
		jq -e '.ab.sides[0].options == [] and .ab.sides[0].ab == "" and .ab.rounds == 6' "$TMP/empty.json"
fi

# --- three sides, random order with a seed ---
if ab "$TMP/three.json" --ab=--spin_nsec=$SPIN --ab=--spin_nsec=$SPIN --ab=--spin_nsec=$SPIN10 "${WL[@]}" \
	--ab_max_rounds=6 --ab_order=random --ab_seed=7; then
	check "three sides: B and C each against A, three medians" \
		jq -e '[.ab.metrics[] | select(.name == "iops") | "\(.side)/\(.medians | length)"] == ["B/3", "C/3"]' "$TMP/three.json"
	check "three sides: random order, seed 7, sides A B C" \
		jq -e '.ab | (.order == "random") and (.seed == 7) and ([.sides[].name] == ["A", "B", "C"])' "$TMP/three.json"
	check "three sides: C (+10 % spin) costs more CPU per I/O than A" \
		jq -e '.ab.metrics[] | select(.name == "cpu_per_io" and .side == "C") | .diff_pct > 3' "$TMP/three.json"
fi

# --- the matrix: no workload given, every cell compared ---
if ab "$TMP/matrix.json" --ab=--elevator=none --ab=--elevator=mq-deadline --dev=null --runtime=30ms \
	--ab_max_rounds=6; then
	check "matrix: the four workloads, each with its metrics" \
		jq -e '[.ab.metrics[] | select(.name == "iops") | .job] == ["read", "randread", "write", "randwrite"]' "$TMP/matrix.json"
	check "matrix: sequential rows merge, so merges are a headline metric there only" \
		jq -e '[.ab.metrics[] | select(.name == "merges") | "\(.job):\(.headline)"] == ["read:true", "randread:false", "write:true", "randwrite:false"]' "$TMP/matrix.json"
fi

# --- stop reasons ---
if ab "$TMP/max.json" --ab=--spin_nsec=$SPIN --ab=--spin_nsec=$SPIN "${WL[@]}" --ab_ci=0.1 --ab_max_rounds=6; then
	check "stop: ab_max_rounds=6 with an unreachable ab_ci ends after 6 rounds" \
		jq -e '.ab | (.stopped == "max_rounds") and (.rounds == 6)' "$TMP/max.json"
fi
if ab "$TMP/budget.json" --ab=--spin_nsec=$SPIN --ab=--spin_nsec=$SPIN --dev=null --rw=randread --runtime=300ms \
	--ab_ci=0.1 --ab_budget=1; then
	check "stop: a 1 s budget ends it before 6 rounds: no interval, said so" \
		jq -e '.ab | (.stopped == "budget") and (.rounds < 6) and ([.metrics[] | .verdict == "no interval" and .ci_low_pct == null] | all)' "$TMP/budget.json"
fi

# --- SIGINT: the side that runs stops too, the report covers the rounds that ran ---
timeout --preserve-status -s INT 3 "$BLKSTACK" bench --ab= --ab=--elevator=none "${WL[@]}" \
	--ab_max_rounds=200 --ab_ci=0.1 --ab_budget=60 --output-format=json >"$TMP/int.json" 2>"$TMP/int.err"
rc=$?
check "SIGINT: exit status 130 (got $rc)" test $rc -eq 130
check "SIGINT: the report says interrupted, with the rounds that ran" \
	jq -e '.ab | (.stopped == "interrupted") and (.stop_reason == "interrupted by SIGINT") and
		(.rounds < 200) and ([.metrics[] | .values[0] | length] | all(. == $r))' --argjson r \
	"$(jq '.ab.rounds' "$TMP/int.json")" "$TMP/int.json"
check "SIGINT: stderr says so" grep -q "interrupted by SIGINT: the report covers the rounds that ran" "$TMP/int.err"

# --- a side that crashes is reported, naming the side, the round and the signal ---
cat >"$TMP/crash" <<EOF
#!/bin/sh
[ "\$1" = --version ] && exec "$BLKSTACK" --version
kill -SEGV \$\$
EOF
chmod +x "$TMP/crash"
expect_error "crash: side B killed by SIGSEGV is reported" \
	"side B \(warm-up\): .*crash crashed, killed by signal 11" \
	bench --ab=--spin_nsec=$SPIN --ab="binary=$TMP/crash" "${WL[@]}"
check "crash: the report still says why it stopped" grep -q 'stopped: a side failed: side B' "$TMP/out"
# a side that fails (exit 1) in a later round: its own message comes through
cat >"$TMP/fail3" <<EOF
#!/bin/sh
[ "\$1" = --version ] && exec "$BLKSTACK" --version
n=\$(cat "$TMP/count" 2>/dev/null || echo 0); echo \$((n + 1)) >"$TMP/count"
[ "\$n" -ge 3 ] && { echo "blkstack bench: planted failure" >&2; exit 1; }
exec "$BLKSTACK" "\$@"
EOF
chmod +x "$TMP/fail3"
expect_error "a side exiting 1 in round 3: its status and message" \
	"side B \(round 3\): .*fail3 exited with status 1: blkstack bench: planted failure" \
	bench --ab=--spin_nsec=$SPIN --ab="binary=$TMP/fail3" "${WL[@]}"

# --- bad input: one line naming the field and what is allowed ---
expect_error "one side" "ab: 1 side given, allowed 2\.\.8" bench --ab=--elevator=none --rw=randread
expect_error "an A/B option without --ab" "ab: 0 sides given, allowed 2\.\.8" bench --ab_ci=5 --rw=randread
expect_error "unknown option in a side names the side" \
	"ab='--elevatr=none' \(side A\): unknown option 'elevatr'" \
	bench --ab=--elevatr=none --ab=--elevator=none --rw=randread
expect_error "bad value in a side" "\(side B\): elevator=fast: .*allowed" \
	bench --ab=--elevator=none --ab=--elevator=fast --rw=randread
expect_error "unknown common option" "unknown option 'foo'" bench --ab=--elevator=none --ab=--elevator=none --foo=1
expect_error "missing binary" "binary=/nonexistent/blkstack: No such file or directory, allowed the path of a blkstack build" \
	bench --ab=--elevator=none --ab=binary=/nonexistent/blkstack --rw=read
expect_error "a binary that is not blkstack" "binary=/bin/true: not blkstack" \
	bench --ab=--elevator=none --ab=binary=/bin/true --rw=read
expect_error "a directory as binary" "binary=/tmp: not an executable file" \
	bench --ab=--elevator=none --ab=binary=/tmp --rw=read
for v in 0 0.05 101 abc -1; do
	expect_error "ab_ci=$v" "ab_ci=$v: allowed 0\.1\.\.100" bench --ab=--elevator=none --ab=--elevator=none --ab_ci=$v --rw=read
done
expect_error "ab_noise=60" "ab_noise=60: allowed 0\.\.50" bench --ab=--elevator=none --ab=--elevator=none --ab_noise=60 --rw=read
expect_error "ab_order" "ab_order=zigzag: bad value, allowed alternate\|random" \
	bench --ab=--elevator=none --ab=--elevator=none --ab_order=zigzag --rw=read
expect_error "ab_min_rounds below 6" "ab_min_rounds=3: allowed 6\.\.200" \
	bench --ab=--elevator=none --ab=--elevator=none --ab_min_rounds=3 --rw=read
expect_error "ab_max_rounds below ab_min_rounds" "ab_max_rounds=7: allowed 8\.\.200" \
	bench --ab=--elevator=none --ab=--elevator=none --ab_min_rounds=8 --ab_max_rounds=7 --rw=read
expect_error "ab_budget=0" "ab_budget=0: allowed 1s\.\.24h" \
	bench --ab=--elevator=none --ab=--elevator=none --ab_budget=0 --rw=read
expect_error "unknown ab_ option" "unknown option 'ab_foo', allowed ab, ab_order" \
	bench --ab=--elevator=none --ab=--elevator=none --ab_foo=1 --rw=read
expect_error "a side may not set the output format" "'--output-format=normal' belongs beside the --ab options" \
	bench --ab=--elevator=none --ab='--elevator=none --output-format=normal' --rw=read
expect_error "shell syntax in a side" "cannot split it as a shell would \(command substitution is not allowed\)" \
	bench --ab=--elevator=none --ab='--elevator=$(echo none)' --rw=read
check "--help lists the A/B options" sh -c "'$BLKSTACK' bench --help | grep -q -- '--ab_ci=PCT'"
finish
