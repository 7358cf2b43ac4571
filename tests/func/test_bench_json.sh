#!/usr/bin/env bash
# bench --output-format=json on each driver carries fio's JSON field names
# with values that agree with each other (io_bytes = total_ios * bs, ...).
source "$(dirname "$0")/lib.sh" "$@"

for dev in null ram; do
	for rw in randread write; do
		out=$TMP/$dev-$rw.json
		if ! "$BLKSTACK" bench --dev=$dev --rw=$rw --bs=4k --iodepth=16 \
			--size=64M --runtime=300ms --time_based --output-format=json >"$out"; then
			fail "$dev $rw: bench exited non-zero"
			continue
		fi
		dir=read
		[ $rw = write ] && dir=write
		check "$dev $rw: jobs[0].$dir.iops > 0" \
			jq -e ".jobs[0].$dir.iops > 0" "$out"
		check "$dev $rw: io_bytes = total_ios * 4096" \
			jq -e ".jobs[0].$dir.io_bytes == .jobs[0].$dir.total_ios * 4096" "$out"
		check "$dev $rw: bw is KiB/s of bw_bytes" \
			jq -e "(.jobs[0].$dir.bw - (.jobs[0].$dir.bw_bytes / 1024) | fabs) <= 1" "$out"
		check "$dev $rw: lat/clat/slat_ns fields" \
			jq -e ".jobs[0].$dir | (.lat_ns.mean > 0) and (.clat_ns.N == .total_ios) and (.slat_ns | has(\"min\", \"max\", \"mean\", \"stddev\"))" "$out"
		check "$dev $rw: clat percentiles in fio's keys, ordered" \
			jq -e ".jobs[0].$dir.clat_ns.percentile | (.[\"50.000000\"] <= .[\"99.000000\"]) and (.[\"99.000000\"] <= .[\"99.990000\"])" "$out"
		check "$dev $rw: cpu and ctx fields" \
			jq -e '.jobs[0] | has("usr_cpu", "sys_cpu", "ctx", "majf", "minf", "job_runtime")' "$out"
		check "$dev $rw: blkstack merges and device" \
			jq -e ".jobs[0].blkstack | (.dev == \"$dev\") and (.merges | has(\"read\", \"write\"))" "$out"
		check "$dev $rw: top-level fio keys" \
			jq -e 'has("fio version", "timestamp", "jobs", "global options")' "$out"
	done
done
# sequential reads merge in the plug: merges must be reported
"$BLKSTACK" bench --dev=null --rw=read --bs=4k --iodepth=32 --size=64M \
	--runtime=200ms --time_based --output-format=json >"$TMP/seq.json"
check "sequential read reports merges" jq -e '.jobs[0].blkstack.merges.read > 0' "$TMP/seq.json"
# two devices in one document
"$BLKSTACK" bench --dev=null,ram --rw=randread --size=16M --runtime=100ms \
	--time_based --output-format=json >"$TMP/two.json"
check "--dev=null,ram gives one job per device" \
	jq -e '[.jobs[].blkstack.dev] == ["null", "ram"]' "$TMP/two.json"

# The same job through fio's null engine and blkstack's (ioengine=null is
# dev=null), key by key: every key path fio writes for a job (its "job
# options" and blkstack's own object aside) must be blkstack's, in fio's
# order, and blkstack writes none of fio's kind that fio does not; for
# each report option set below.  The values of the percentile maps are
# under the keys percentile_list= asks for.
if command -v fio >/dev/null; then
	paths() { jq -r '.jobs[0] | del(.["job options"], .blkstack) | [paths(scalars)] | map(map(tostring) | join(".")) | unique[]' "$1"; }
	order() { jq -c '[.jobs[0] | keys_unsorted[] | select(. != "blkstack")], [.jobs[0][("read", "mixed")] // empty | keys_unsorted]' "$1"; }
	n=0
	while read -r opts; do
		n=$((n + 1))
		# shellcheck disable=SC2086
		set -- --name=cmp --ioengine=null --size=16m --bs=4k --iodepth=8 \
			--runtime=150ms --time_based $opts --output-format=json
		if ! fio "$@" >"$TMP/fio$n.json" 2>"$TMP/fio.err"; then
			fail "fio $opts: $(head -c 200 "$TMP/fio.err")"
			continue
		fi
		if ! "$BLKSTACK" bench "$@" >"$TMP/blk$n.json" 2>"$TMP/blk.err"; then
			fail "bench $opts: $(head -c 200 "$TMP/blk.err")"
			continue
		fi
		d=$(diff <(paths "$TMP/fio$n.json") <(paths "$TMP/blk$n.json") | grep '^[<>]' | head -5 | tr '\n' ' ')
		if [ -z "$d" ]; then
			pass "fio's JSON keys, key by key: $opts"
		else
			fail "fio's JSON keys, key by key: $opts: < fio only, > blkstack only: $d"
		fi
		check "fio's key order: $opts" \
			test "$(order "$TMP/fio$n.json")" = "$(order "$TMP/blk$n.json")"
	done <<'OPTS'
--rw=randread
--rw=randwrite --clat_percentiles=0
--rw=randread --lat_percentiles=1 --slat_percentiles=1 --percentile_list=10:50:99.5:99.999
--rw=randrw --unified_rw_reporting=mixed
--rw=randrw --unified_rw_reporting=both --lat_percentiles=1
--rw=randread --disable_slat=1 --disable_lat=1
--rw=randread --significant_figures=6 --unit_base=1 --disable_bw=1
OPTS
	# percentile_list's values are the keys fio writes (%f of each)
	check "percentile_list=10:50:99.5:99.999: fio's four keys in lat_ns, slat_ns, clat_ns" \
		jq -e '.jobs[0].read | [.lat_ns, .slat_ns, .clat_ns | .percentile | keys] == [range(3) | ["10.000000", "50.000000", "99.500000", "99.999000"]]' "$TMP/blk3.json"
	check "the same keys in fio's own JSON" \
		jq -e '.jobs[0].read.lat_ns.percentile | keys == ["10.000000", "50.000000", "99.500000", "99.999000"]' "$TMP/fio3.json"
	# shellcheck disable=SC2016 # $p is jq's
	check "lat_percentiles=1: a lat_ns percentile map, ordered, within min..max" \
		jq -e '.jobs[0].read.lat_ns | .percentile as $p | ($p["10.000000"] <= $p["50.000000"]) and ($p["50.000000"] <= $p["99.999000"]) and ($p["10.000000"] >= .min) and ($p["99.999000"] <= .max * 1.04)' "$TMP/blk3.json"
	check "no lat_ns percentile map without lat_percentiles" \
		jq -e '.jobs[0].read.lat_ns | has("percentile") | not' "$TMP/blk1.json"
	check "clat_percentiles=0: no clat_ns percentile map" \
		jq -e '.jobs[0].write.clat_ns | has("percentile") | not' "$TMP/blk2.json"
	check "unified_rw_reporting=mixed: fio's mixed object, the directions summed" \
		jq -e '.jobs[0] | (has("read") | not) and (.mixed.total_ios > 0) and (.mixed.total_ios == .mixed.clat_ns.N) and (.blkstack.requests.read + .blkstack.requests.write > 0)' "$TMP/blk4.json"
	check "unified_rw_reporting=both: mixed = read + write" \
		jq -e '.jobs[0] | .mixed.total_ios == .read.total_ios + .write.total_ios and .mixed.io_bytes == .read.io_bytes + .write.io_bytes' "$TMP/blk5.json"
	check "disable_slat, disable_lat: no slat, no lat, clat kept" \
		jq -e '.jobs[0].read | .slat_ns.N == 0 and .lat_ns.N == 0 and .clat_ns.N == .total_ios' "$TMP/blk6.json"
	check "iodepth_submit, iodepth_complete: real counts, 100 % in all" \
		jq -e '.jobs[0] | [.iodepth_level, .iodepth_submit, .iodepth_complete | [.[]] | add] | map(. > 99.8 and . < 100.5) | all' "$TMP/blk1.json"
	# text: the same options in fio's words
	"$BLKSTACK" bench --name=t --ioengine=null --size=16m --rw=randrw --iodepth=8 \
		--runtime=100ms --time_based --unified_rw_reporting=both --lat_percentiles=1 \
		--percentile_list=50:99.9 --unit_base=1 --disk_util=0 >"$TMP/t.txt"
	check "text: mixed line, MIXED group line, lat percentiles at the list, bits, no disk stats" \
		bash -c "grep -q '^  mixed: IOPS=' '$TMP/t.txt' && grep -q '^  MIXED: bw=.*bit/s' '$TMP/t.txt' && grep -q '^    lat percentiles' '$TMP/t.txt' && grep -q '| 50.0th=\[.*99.9th=\[' '$TMP/t.txt' && grep -q '^     submit    : 0=' '$TMP/t.txt' && ! grep -q 'Disk stats' '$TMP/t.txt'"
	# bw and iops samples, one per 500 ms window (fio's bwavgtime,
	# iopsavgtime): as many as fio's for the same 1.2 s, and consistent
	set -- --name=s --ioengine=null --size=16m --bs=4k --rw=randread --iodepth=8 \
		--runtime=1200ms --time_based --output-format=json
	fio "$@" >"$TMP/fs.json" 2>/dev/null
	"$BLKSTACK" bench "$@" >"$TMP/bs.json"
	check "bw_samples, iops_samples: fio's count for 1.2 s ($(jq .jobs[0].read.bw_samples "$TMP/fs.json"))" \
		test "$(jq -c '.jobs[0].read | [.bw_samples, .iops_samples]' "$TMP/fs.json")" = \
		"$(jq -c '.jobs[0].read | [.bw_samples, .iops_samples]' "$TMP/bs.json")"
	check "samples: min <= mean <= max, KiB/s = 4 x IOPS (bs=4k) within 1 %, bw_agg in (0, 100]" \
		jq -e '.jobs[0].read | .bw_samples == 2 and .bw_min <= .bw_mean and .bw_mean <= .bw_max and .iops_min <= .iops_mean and .iops_mean <= .iops_max and ((.bw_mean - 4 * .iops_mean) | fabs) <= .bw_mean / 100 and .bw_agg > 0 and .bw_agg <= 100 and .bw_dev >= 0' "$TMP/bs.json"
	"$BLKSTACK" bench --name=s --ioengine=null --size=16m --rw=read --runtime=1200ms \
		--time_based --bwavgtime=200 --iopsavgtime=1000 --output-format=json >"$TMP/bw.json"
	check "bwavgtime=200: 5 or 6 bw samples in 1.2 s; iopsavgtime=1000: 1" \
		jq -e '.jobs[0].read | (.bw_samples == 5 or .bw_samples == 6) and .iops_samples == 1' "$TMP/bw.json"
	"$BLKSTACK" bench --name=t --ioengine=null --size=16m --rw=read --runtime=50ms \
		--time_based --stats=0 --output-format=json >"$TMP/s.json"
	check "stats=0: the job is left out of the report" jq -e '.jobs == []' "$TMP/s.json"
else
	echo "# fio is not installed: the key-by-key comparison with fio is skipped"
fi
finish
