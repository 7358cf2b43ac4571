#!/usr/bin/env bash
# fio's steady state detection (ss=, ss_dur=, ss_ramp=): a job whose IOPS
# or bandwidth settles ends before its runtime with attained=1; one whose
# limit cannot be met runs its runtime with attained=0; the JSON
# "steadystate" object has fio 3.33's fields (compared with fio's own on
# its null engine when fio is installed).
source "$(dirname "$0")/lib.sh" "$@"

ss_run() { "$BLKSTACK" bench --dev=null --name=x --rw=randread --size=16m --time_based "$@" --output-format=json; }
jq_ok() { jq -e "$1" "$TMP/ss.json"; }

# a steady null device: attained at the first full window, long before 10 s
ss_run --runtime=10s --ss=iops:50% --ss_dur=2s >"$TMP/ss.json"
check "ss=iops:50%: attained=1" jq_ok '.jobs[0].steadystate.attained == 1'
check "ss=iops:50%: ended before its runtime ($(jq .jobs[0].job_runtime "$TMP/ss.json") ms of 10000)" \
	jq_ok '.jobs[0].job_runtime < 5000'
check "ss=iops:50%: fio's ss string, duration and criterion in %" \
	jq_ok '.jobs[0].steadystate | .ss == "iops:50.000000%" and .duration == 2 and (.criterion | endswith("%")) and .slope == 0'
check "ss=iops:50%: 2 samples of IOPS and bw, means of them" \
	jq_ok '.jobs[0].steadystate.data | (.iops | length) == 2 and (.bw | length) == 2 and .iops[0] > 0 and .iops_mean == ((.iops | add) / 2 | floor) and (.bw[1] - .iops[1] * 4096 | fabs) <= .bw[1] / 1000'
check "job options: steadystate and its duration" \
	jq_ok '.jobs[0]["job options"] | .steadystate == "iops:50%" and .steadystate_duration == "2"'

# an unreachable limit: 0 % deviation never holds; the runtime ends the job
ss_run --runtime=3s --ss=iops:0% --ss_dur=2s >"$TMP/ss.json"
check "ss=iops:0%: attained=0" jq_ok '.jobs[0].steadystate.attained == 0'
check "ss=iops:0%: ran its runtime ($(jq .jobs[0].job_runtime "$TMP/ss.json") ms of 3000)" \
	jq_ok '.jobs[0].job_runtime >= 2900'
check "ss=iops:0%: a full window of samples" jq_ok '.jobs[0].steadystate.data.iops | length == 2 and all(. > 0)'

# IOPS that alternate: 1000 I/Os in a burst, then 2 s of thinktime; any 3
# one-second samples hold a burst and a second without I/O, whose largest
# deviation is 50 % of the mean at least (x,0,x), never below 40 %
ss_run --runtime=7s --thinktime=2s --thinktime_blocks=1000 \
	--ss=iops:40% --ss_dur=3s >"$TMP/ss.json"
check "alternating IOPS, ss=iops:40%: attained=0, ran its runtime ($(jq .jobs[0].job_runtime "$TMP/ss.json") ms of 7000)" \
	jq_ok '.jobs[0].steadystate.attained == 0 and .jobs[0].job_runtime >= 6900'
check "alternating IOPS: some samples 0, some not" \
	jq_ok '.jobs[0].steadystate.data.iops | any(. == 0) and any(. > 0)'

# a steady 1000 IOPS after a 1 s ss_ramp: attained once 3 samples are in
ss_run --runtime=20s --rate_iops=1000 --ss=iops:10% --ss_dur=3s --ss_ramp=1s >"$TMP/ss.json"
check "rate_iops=1000, ss=iops:10%, ss_ramp=1s: attained before 20 s ($(jq .jobs[0].job_runtime "$TMP/ss.json") ms)" \
	jq_ok '.jobs[0].steadystate.attained == 1 and .jobs[0].job_runtime < 8000 and .jobs[0].job_runtime >= 3900'
check "rate_iops=1000: the samples are 1000 IOPS within 5 %" \
	jq_ok '.jobs[0].steadystate.data.iops | all(. > 950 and . < 1050)'

# slopes: a flat rate has a slope near 0; 0 is never below 0 (unreachable)
ss_run --runtime=20s --rate_iops=1000 --ss=iops_slope:1% --ss_dur=3s >"$TMP/ss.json"
check "ss=iops_slope:1%: attained, slope set, no max deviation" \
	jq_ok '.jobs[0].steadystate | .attained == 1 and .ss == "iops_slope:1.000000%" and .max_deviation == 0'
ss_run --runtime=3s --ss=bw_slope:0 --ss_dur=2s >"$TMP/ss.json"
check "ss=bw_slope:0: attained=0 after its runtime, criterion without %" \
	jq_ok '.jobs[0].steadystate | .attained == 0 and .ss == "bw_slope:0.000000" and (.criterion | endswith("%") | not)'

# group_reporting: the group's summed IOPS; both threads stop, one object
ss_run --runtime=10s --numjobs=2 --group_reporting --ss=iops:50% --ss_dur=2s >"$TMP/ss.json"
check "group_reporting, numjobs=2: one job, attained, ended early" \
	jq_ok '(.jobs | length) == 1 and .jobs[0].steadystate.attained == 1 and .jobs[0].job_runtime < 5000'

# two reporting groups of one stonewall group (new_group): each its own
printf '[global]\ngroup_reporting\nrw=randread\nsize=16m\ntime_based\nruntime=10s\nss=iops:50%%\nss_dur=2s\n[a]\n[b]\nnew_group\n' >"$TMP/g.fio"
"$BLKSTACK" bench --dev=null --output-format=json "$TMP/g.fio" >"$TMP/ss.json"
check "new_group: two groups, each attained early with its own samples" \
	jq_ok '(.jobs | length) == 2 and all(.jobs[]; .steadystate.attained == 1 and .job_runtime < 5000 and (.steadystate.data.iops | all(. > 0)))'
# fio: "steadystate options must be consistent within reporting groups"
printf '[global]\ngroup_reporting\nrw=randread\nss_dur=2s\n[a]\nss=iops:50%%\n[b]\nss=iops:40%%\n' >"$TMP/g.fio"
expect_error "ss= differing in a group_reporting group: refused, as fio refuses it" \
	"job 'b': ss=, ss_dur= and ss_ramp= differ from job 'a''s" bench --dev=null --parse-only "$TMP/g.fio"

# fio's normal output line
"$BLKSTACK" bench --dev=null --name=x --rw=randread --size=16m --time_based --runtime=10s \
	--ss=iops:50% --ss_dur=2s >"$TMP/ss.txt"
check "text: fio's 'steadystate  : attained=yes, bw=..., iops=..., iops mean dev=...%' line" \
	grep -qE '^  steadystate  : attained=yes, bw=[0-9.]+[KMG]iB/s \([0-9.]+[kMG]B/s\), iops=[0-9.]+[kM]?, iops mean dev=[0-9]+\.[0-9]{3}%$' "$TMP/ss.txt"

# without ss_dur nothing is reported, as in fio
ss_run --runtime=200ms >"$TMP/ss.json"
check "no ss_dur: no steadystate object" jq_ok '.jobs[0] | has("steadystate") | not'

expect_error "ss=foo: refused, naming the criteria" "not a criterion: iops, bw, iops_slope or bw_slope" \
	bench --parse-only --ss=foo
expect_error "ss=iops: a limit is needed" "needs a limit" bench --parse-only --ss=iops
expect_error "ss_dur=500ms: below 1 s" "below 1 s" bench --parse-only --ss_dur=500ms
expect_error "a slope over 1 s: refused" "a slope needs 2 samples" \
	bench --parse-only --ss=iops_slope:1% --ss_dur=1s

# fio 3.33's own object for the same job: the same fields
if command -v fio >/dev/null; then
	fio --ioengine=null --name=x --rw=randread --size=16m --time_based --runtime=10s \
		--ss=iops:50% --ss_dur=2s --output-format=json 2>/dev/null >"$TMP/fio.json"
	ss_run --runtime=10s --ss=iops:50% --ss_dur=2s >"$TMP/ss.json"
	keys='.jobs[0].steadystate | [paths | map(tostring) | join(".")] | sort'
	f=$(jq -c "$keys" "$TMP/fio.json") b=$(jq -c "$keys" "$TMP/ss.json")
	check "the steadystate object's fields are fio's ($f)" test "$f" = "$b"
	f=$(jq -c '.jobs[0].steadystate | [.ss, .duration, .attained]' "$TMP/fio.json")
	b=$(jq -c '.jobs[0].steadystate | [.ss, .duration, .attained]' "$TMP/ss.json")
	check "ss, duration, attained as fio's ($f)" test "$f" = "$b"
fi
finish
