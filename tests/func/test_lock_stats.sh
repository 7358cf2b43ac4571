#!/usr/bin/env bash
# The lock profile (--lock_stats=1): named locks listed like /proc/lock_stat
# with acquisitions on workloads that take them (a hardware queue shared by
# two jobs; scsi's host lock, seed 003), in text and JSON, for bench and
# serve; nothing without the switch; a bad value names the option.
source "$(dirname "$0")/lib.sh" "$@"

probe=$("$BLKSTACK" bench --dev=null --rw=read --size=1M --lock_stats=1 2>&1 >/dev/null)
if [[ $probe == *"no lock profile"* ]]; then
	echo "skip: this build has no lock profile (cmake -DBLK_LOCK_STATS=OFF)"
	exit 77
fi

# two jobs on one hardware queue: the hctx lock on every submit and poll
t=$TMP/shared.txt
"$BLKSTACK" bench --dev=null --rw=randread --size=8M --numjobs=2 --nr_hw_queues=1 \
	--iodepth=8 --lock_stats=1 >"$t"
check "shared hctx: exit 0" test $? -eq 0
check "text: /proc/lock_stat header" grep -qE '^ +class name +con-bounces +contentions +waittime-min +waittime-max +waittime-total +waittime-avg +acq-bounces +acquisitions$' "$t"
acq=$(awk '$1 == "&hctx->lock:" { print $9 }' "$t")
# taken per dispatch batch and per poll: at least once per 8 of the 4096 I/Os
check "text: &hctx->lock acquired at least once per batch (${acq:-none})" test "${acq:-0}" -ge 512
check "text: &blk_dev->ctx_lock listed" grep -qE '^ +&blk_dev->ctx_lock: +[0-9]+ +[0-9]+ +[0-9.]+' "$t"

j=$TMP/scsi.json
"$BLKSTACK" bench --dev=scsi --scsi_host_lock=1 --scsi_lld=thread --numjobs=2 --rw=randread \
	--size=8M --iodepth=8 --lock_stats=1 --output-format=json >"$j"
check "scsi host lock: exit 0" test $? -eq 0
check "JSON: lock_stat[] with every field" jq_true \
	'.lock_stat | length >= 3 and all(has("name") and has("con_bounces") and has("contentions") and
	 has("waittime_min_ns") and has("waittime_max_ns") and has("waittime_total_ns") and
	 has("acq_bounces") and has("acquisitions"))' "$j"
check "JSON: the host lock taken for each command (the driver's own count)" jq_true \
	'(.lock_stat[] | select(.name == "&scsi_disk->host_lock") | .acquisitions) as $a |
	 $a >= 4096 and $a == .jobs[0].blkstack.scsi.host_lock.acquisitions' "$j"
check "JSON: contentions agree with the driver's, waits ordered" jq_true \
	'(.lock_stat[] | select(.name == "&scsi_disk->host_lock")) as $l |
	 $l.contentions == .jobs[0].blkstack.scsi.host_lock.contended and
	 $l.con_bounces <= $l.contentions and $l.waittime_min_ns <= $l.waittime_max_ns and
	 $l.waittime_max_ns <= $l.waittime_total_ns' "$j"
check "JSON: the target's locks are named" jq_true \
	'[.lock_stat[].name] | index("&scsi_lu->mode_lock") != null' "$j"

"$BLKSTACK" bench --dev=null --rw=randread --size=4M --output-format=json >"$TMP/off.json"
check "off: no lock_stat in JSON" jq_true 'has("lock_stat") | not' "$TMP/off.json"
"$BLKSTACK" bench --dev=null --rw=randread --size=4M >"$TMP/off.txt"
check "off: no lock_stat in text" bash -c "! grep -q lock_stat '$TMP/off.txt'"

expect_error "lock_stats=2" "lock_stats=2: bad value, allowed 0\|1" bench --dev=null --rw=read --lock_stats=2

# serve: the profile on stderr at the stop
if [ "$(sanitizer)" = none ] && command -v nbdinfo >/dev/null; then
	sock=$TMP/nbd.sock
	"$BLKSTACK" serve --unix="$sock" --dev=ram --size=16M --lock_stats=1 2>"$TMP/serve.err" &
	pid=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
	nbdinfo "nbd+unix:///?socket=$sock" >/dev/null 2>&1
	kill -TERM $pid
	wait $pid
	check "serve: exit 0 at SIGTERM" test $? -eq 0
	check "serve: lock_stat printed at the stop" grep -q 'lock_stat version' "$TMP/serve.err"
	check "serve: the server's lock acquired" awk '$1 == "&nbd_server->lock:" && $9 > 0 { ok = 1 } END { exit !ok }' "$TMP/serve.err"
fi
expect_error "serve --lock_stats=x" "lock_stats=x: allowed 0\|1" serve --unix="$TMP/x.sock" --dev=ram --size=16M --lock_stats=x
finish
