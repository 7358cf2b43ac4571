#!/usr/bin/env bash
# Regressions (issue 11 items 1 and 2), NVMe retries and bounds:
# - "a command whose completion is lost every time is retried forever":
#   every write's completion dropped at QD128 x 2 jobs with rq_timeout=300ms
#   looped Abort -> reset -> requeue for minutes; now each request is sent
#   again at most nvme_max_retries (5) times and then fails with a timeout,
#   and the run ends within a bound;
# - "NVMe statuses meant to be retried are returned instead": Namespace Not
#   Ready reached the application as EAGAIN; statuses with DNR clear are
#   retried, after the Command Retry Delay that CRD picks;
# - a stop has a deadline (bench stop_deadline=, serve --stop-deadline-ms),
#   and a second SIGTERM ends serve at once.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
J="--output-format=json"
N='.jobs[0].blkstack.nvme'
RD=(bench --dev=nvme --rw=randread --bs=4k --size=16M --iodepth=4 --runtime=1 --time_based)

# lost completions: bounded, every bio ended once, each with an error
start=$(date +%s)
timeout 120 "$BLKSTACK" bench --dev=nvme --rw=randwrite --bs=4k --size=64M --iodepth=128 \
	--numjobs=2 --rq_timeout=300ms --runtime=60 --time_based --nvme_fault=op=write,drop \
	$J >"$TMP/lost.json" 2>"$TMP/lost.err"
rc=$?
took=$(($(date +%s) - start))
check "lost completions: the run ends with an error (rc $rc, not the 124 of timeout)" test $rc -eq 1
# bound: (nvme_max_retries + 1) rounds of rq_timeout (checked every 75 ms),
# an Abort and a reset each: ~2 s here; 30 s leaves room for a slow machine
check "lost completions: ended in $took s (bound: 30 s)" test "$took" -le 30
check "lost completions: each job fails with TIMEOUT" \
	bash -c "[ \$(grep -c 'write error at offset [0-9]*, length 4096: TIMEOUT' '$TMP/lost.err') -eq 2 ]"
check "lost completions: every one of the 256 bios failed once, after its retries (ETIMEDOUT)" \
	jq -e ".jobs[0].blkstack.nvme.failed_retries == 256 and ([.jobs[].error] | all(. == 110))" "$TMP/lost.json"
check "lost completions: resets are bounded (at most 8 in a row)" \
	jq -e ".jobs[0].blkstack.nvme.resets <= 8" "$TMP/lost.json"

# statuses with DNR clear are retried; with DNR they are not
"$BLKSTACK" "${RD[@]}" --nvme_fault=op=read,status=ns_not_ready,count=3 $J >"$TMP/s.json" 2>&1
check "Namespace Not Ready (DNR clear) x3: retried, the job succeeds" \
	jq -e ".jobs[0].error == 0 and $N.retried == 3 and $N.errors == 3" "$TMP/s.json"
"$BLKSTACK" "${RD[@]}" --nvme_fault=op=read,status=ns_not_ready,dnr,count=1 $J >"$TMP/d.json" 2>"$TMP/d.err"
check "Namespace Not Ready with DNR: not retried" jq -e "$N.retried == 0" "$TMP/d.json"
check "... and it fails as TARGET (EREMOTEIO), not EAGAIN" \
	bash -c "grep -q 'length 4096: TARGET' '$TMP/d.err' && jq -e '.jobs[0].error == 121' '$TMP/d.json' >/dev/null"
"$BLKSTACK" "${RD[@]}" --nvme_fault=op=read,status=internal $J >"$TMP/f.json" 2>/dev/null
check "a status that never clears: 5 retries per request, then it fails" \
	jq -e ".jobs[0].error != 0 and $N.retried == 5 * $N.failed_retries and $N.failed_retries >= 1" "$TMP/f.json"
"$BLKSTACK" "${RD[@]}" --nvme_max_retries=0 --nvme_fault=op=read,status=internal,count=1 $J >"$TMP/z.json" 2>/dev/null
check "nvme_max_retries=0: no retry" jq -e ".jobs[0].error != 0 and $N.retried == 0" "$TMP/z.json"
"$BLKSTACK" "${RD[@]}" --nvme_fault=op=read,status=internal,crd=2,count=1 $J >"$TMP/c.json" 2>&1
check "CRD=2: retried after CRDT2 (500 ms)" \
	jq -e ".jobs[0].error == 0 and $N.retried == 1 and .jobs[0].read.lat_ns.max >= 500000000" "$TMP/c.json"
expect_error "nvme_max_retries out of range" "nvme_max_retries=256: .*allowed 0..255" \
	bench --dev=nvme --nvme_max_retries=256

# bench: SIGINT while requests never complete: given up at the deadline
"$BLKSTACK" bench --dev=nvme --rw=randwrite --size=64M --iodepth=8 --runtime=60 --time_based \
	--nvme_fault=op=write,drop --stop_deadline=1s >"$TMP/b.out" 2>&1 &
B=$!
sleep 1
t0=$(date +%s%N)
kill -INT $B
wait $B
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "bench: SIGINT with requests that never complete exits 1 (rc $rc)" test $rc -eq 1
check "bench: within the stop deadline (1 s) and a little ($ms ms)" test $ms -lt 5000
check "bench: says what it gave up" grep -q "8 requests still in flight 1.0 s after the stop; given up" "$TMP/b.out"

# serve: a client's write to a controller that loses it fails, bounded
if command -v qemu-io >/dev/null; then
	start_server --dev=nvme --size=64M --rq_timeout=300ms --nvme_fault=op=write,drop \
		--stop-deadline-ms=1000 || exit 1
	t0=$(date +%s)
	timeout 60 qemu-io --image-opts "driver=nbd,path=$SOCK" -c "write 0 4k" >"$TMP/q" 2>&1
	check "serve: the client's write fails with EIO ($(($(date +%s) - t0)) s)" \
		grep -q "write failed: Input/output error" "$TMP/q"
	stop_server
	check "serve: then stops cleanly" test $? -eq 0

	# a write that never ends (default rq_timeout 30 s): the stop deadline
	start_server --dev=nvme --size=64M --nvme_fault=op=write,drop --stop-deadline-ms=1000 || exit 1
	qemu-io --image-opts "driver=nbd,path=$SOCK" -c "write 0 4k" >/dev/null 2>&1 &
	Q=$!
	sleep 0.5
	t0=$(date +%s%N)
	stop_server
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "serve: SIGTERM with a request stuck exits 1 at the stop deadline (rc $rc, $ms ms)" \
		bash -c "[ $rc -eq 1 ] && [ $ms -ge 900 ] && [ $ms -lt 5000 ]"
	check "serve: says so" grep -q "requests still in flight at the stop deadline" "$TMP/server.log"
	kill $Q 2>/dev/null
	wait $Q 2>/dev/null

	# a second SIGTERM (100 ms or more after the first) ends it at once
	start_server --dev=nvme --size=64M --nvme_fault=op=write,drop || exit 1
	qemu-io --image-opts "driver=nbd,path=$SOCK" -c "write 0 4k" >/dev/null 2>&1 &
	Q=$!
	sleep 0.5
	kill -TERM "$SRV_PID"
	sleep 0.3
	t0=$(date +%s%N)
	kill -TERM "$SRV_PID"
	wait "$SRV_PID"
	rc=$?
	SRV_PID=
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "serve: a second SIGTERM kills it at once (rc $rc, $ms ms)" \
		bash -c "[ $rc -eq 143 ] && [ $ms -lt 2000 ]"
	kill $Q 2>/dev/null
	wait $Q 2>/dev/null
else
	echo "skip - qemu-io not installed: the serve part not checked"
fi
finish
