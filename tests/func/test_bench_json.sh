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
finish
