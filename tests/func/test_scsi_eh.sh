#!/usr/bin/env bash
# dev=scsi's midlayer under faults (issue 12): a timed-out command goes
# through the error-handling ladder (ABORT TASK, LOGICAL UNIT RESET, TARGET
# RESET, host reset: each step the target rejects with scsi_tmf_fail sends
# it to the next), at QD 128 with 2 jobs and verify=crc32c: every command
# ends once (every block verified, no error, the counters add up); host
# busy and TASK SET FULL block the host and the device; budget tokens
# (scsi_queue_depth) bound the commands at the disk; the host lock switch
# (seed 003) and the completion stage timers (seed 000) count what they
# say.
source "$(dirname "$0")/lib.sh" "$@"
J="--output-format=json"
S=".jobs[0].blkstack.scsi"

# eh LABEL TMF_FAIL STEP [LLD]: at QD 128, 2 jobs, every 64th READ/WRITE
# dropped; the loopback LLD inline, or on device threads
eh() {
	local label=$1 fail=$2 step=$3 lld=${4:-inline} rc
	timeout 120 "$BLKSTACK" bench --dev=scsi --scsi_lld="$lld" --scsi_every_nth=64 --scsi_opts=0x4 \
		--scsi_tmf_fail="$fail" --rq_timeout=100ms --rw=randwrite --bs=4k \
		--iodepth=128 --numjobs=2 --size=2M --offset_increment=2M --verify=crc32c \
		--group_reporting=0 $J >"$TMP/eh.json" 2>"$TMP/eh.err"
	rc=$?
	check "$label: exit 0 (rc $rc)" test $rc -eq 0
	check "$label: 512 blocks verified per job, 0 mismatches, 0 errors" \
		jq -e '[.jobs[].blkstack | [.verify.blocks_verified, .verify.mismatches, .errors]] == [[512, 0, 0], [512, 0, 0]]' "$TMP/eh.json"
	# the counters are the device's, the same in both jobs' reports
	check "$label: commands were dropped and timed out" \
		jq -e "$S.injected > 0 and $S.error_handling.timeouts > 0" "$TMP/eh.json"
	check "$label: $step ended them" \
		jq -e "$S.error_handling.$step > 0" "$TMP/eh.json"
	# each dropped command ended TASK ABORTED and was retried; a reset
	# also ends the commands other queues had in flight at the disk then
	# (their bios end, they end aborted): every aborted one retried once;
	# and a LUN or target reset's unit attention (29/03, which the nexus
	# that asked gets too) is taken by one command, retried once more
	check "$label: every dropped command ended TASK ABORTED, every aborted one retried once, and one per reset's unit attention" \
		jq -e "$S.error_handling.tasks_aborted >= $S.injected and $S.retries == $S.error_handling.tasks_aborted + $S.unit_attentions and $S.unit_attentions <= $S.error_handling.lun_resets + $S.error_handling.target_resets" "$TMP/eh.json"
}
eh "abort" 0 aborts
eh "abort rejected: LUN reset" 1 lun_resets
eh "abort and LUN reset rejected: target reset" 3 target_resets
eh "every TMF rejected: host reset" 7 host_resets
check "rejected steps are counted" \
	jq -e "$S.error_handling | .aborts_failed > 0 and .lun_resets_failed > 0 and .target_resets_failed > 0 and .aborts == 0" "$TMP/eh.json"
# the same through the device threads (task management by mailbox)
eh "lld=thread: abort" 0 aborts thread
eh "lld=thread: LUN reset" 1 lun_resets thread
eh "lld=thread: host reset" 7 host_resets thread

# regression: a command held by the disk's delay (scsi_delay) past the
# request timeout was "aborted" without being ended, timed out again at
# every scan and then completed GOOD; now the abort ends it TASK ABORTED.
# In thread mode the device thread sleeps until the held command is due
# (1 s): the abort must wake it (lb_wake()), not wait for that
for lld in inline thread; do
	timeout 60 "$BLKSTACK" bench --dev=scsi --scsi_lld=$lld --rw=randread --size=8k --bs=4k \
		--scsi_delay=1000 --rq_timeout=100ms --scsi_max_retries=0 $J >"$TMP/dl.json" 2>"$TMP/dl.err"
	check "lld=$lld: a delayed command past rq_timeout: aborted once, fails TIMEOUT" \
		jq -e ".jobs[0].error == 110 and $S.error_handling.timeouts == 1 and $S.error_handling.aborts == 1 and $S.error_handling.tasks_aborted == 1" "$TMP/dl.json"
done
# regression: a host that stays busy (every READ/WRITE from the 1500th on)
# held the requests for ever, never started, so never timed out; now they
# fail TIMEOUT after (max_retries + 1) request timeouts of refusals
for lld in inline thread; do
	timeout 60 "$BLKSTACK" bench --dev=scsi --scsi_lld=$lld --rw=randrw --bs=4k --iodepth=16 --size=8m \
		--scsi_every_nth=-1500 --scsi_opts=0x8000 --rq_timeout=100ms --scsi_max_retries=1 \
		$J >"$TMP/hb.json" 2>"$TMP/hb.err"
	rc=$?
	check "lld=$lld: a host busy for ever: the requests fail TIMEOUT, the run ends (rc $rc)" \
		jq -e ".jobs[0].error == 110 and $S.refused_too_long > 0" "$TMP/hb.json"
done

# regression: one transient answer to a probe command failed the attach;
# sd's probe sends them again
for rule in 'opcode:0xff,count:-1,status:0x08' 'opcode:0x00,count:-1,status:0x28' \
	'opcode:0x1a,count:-1,status:0x02,sense:b/4b/00' 'type:timeout,opcode:0x12,count:-1'; do
	timeout 60 "$BLKSTACK" bench --dev=scsi --rq_timeout=200ms --scsi_error="$rule" --rw=read \
		--bs=4k --size=64k $J >"$TMP/pr.json" 2>"$TMP/pr.err"
	rc=$?
	check "probe survives one '$rule' (rc $rc)" jq -e '.jobs[0].error == 0' "$TMP/pr.json"
done

# regression: a trim past the disk's MAXIMUM UNMAP LBA COUNT failed ILLEGAL
# REQUEST; it goes in parts now (16 MiB trims, 1 MiB per UNMAP)
"$BLKSTACK" bench --dev=scsi --rw=trim --bs=16m --iodepth=8 --size=256m --scsi_unmap_max_blocks=2048 \
	$J >"$TMP/tr.json" 2>"$TMP/tr.err"
check "trim past the unmap limit: 16 UNMAPs per trim, no error" \
	jq -e ".jobs[0].error == 0 and .jobs[0].trim.total_ios == 16 and $S.commands.unmap == 256 and $S.split == 240" "$TMP/tr.json"

# a retry budget of 0: the timed-out command fails TIMEOUT, once
timeout 60 "$BLKSTACK" bench --dev=scsi --scsi_every_nth=64 --scsi_opts=0x4 --scsi_max_retries=0 \
	--rq_timeout=100ms --rw=randread --bs=4k --iodepth=32 --size=1M >"$TMP/t.out" 2>&1
rc=$?
check "max_retries=0: fails with TIMEOUT (rc $rc)" \
	bash -c "test $rc -eq 1 && grep -q 'TIMEOUT' '$TMP/t.out'"

# host busy (0x8000) blocks the host, TASK SET FULL (0x800) the device
# (every_nth counts every command at the disk, so a requeued command can
# meet the 16th again and again when the queue's rhythm matches it: a CI
# run saw one TASK SET FULL command fail after 5 retries; the retry
# budget here is large, the point is the blocking and the data)
for lld in inline thread; do
	for o in 0x8000 0x800; do
		"$BLKSTACK" bench --dev=scsi --scsi_lld=$lld --scsi_every_nth=16 --scsi_opts=$o \
			--scsi_max_retries=100 \
			--rw=randwrite --bs=4k --iodepth=32 --size=2M --verify=crc32c $J >"$TMP/b.json" 2>"$TMP/b.err"
		why=$(jq -c '[.jobs[0].error, .jobs[0].blkstack.scsi.retries, .jobs[0].blkstack.scsi.refused_too_long]' "$TMP/b.json" 2>/dev/null; head -c 200 "$TMP/b.err")
		check "lld=$lld, opts=$o: exit 0, 512 blocks verified ([error, retries, refused] $why)" \
			jq -e '.jobs[0].blkstack.verify | .blocks_verified == 512 and .mismatches == 0' "$TMP/b.json"
		check "lld=$lld, opts=$o: dispatches refused while blocked" jq -e "$S.blocked > 0" "$TMP/b.json"
	done
done
expect_error "scsi_lld: a word it does not know" "scsi_lld=fast" \
	bench --dev=scsi --scsi_lld=fast --rw=read --size=1M

# budget tokens: at most 4 commands at the disk, over 2 jobs of QD 32
"$BLKSTACK" bench --dev=scsi --scsi_queue_depth=4 --rw=randwrite --bs=4k --iodepth=32 \
	--numjobs=2 --size=2M --offset_increment=2M --verify=crc32c $J >"$TMP/q.json" 2>"$TMP/q.err"
check "scsi_queue_depth=4: verified, requests waited for a budget token" \
	jq -e "[.jobs[].blkstack.verify.mismatches] == [0, 0] and $S.budget_busy > 0" "$TMP/q.json"
"$BLKSTACK" bench --dev=scsi --rw=randwrite --bs=4k --iodepth=32 --size=2M $J >"$TMP/q0.json"
check "scsi_queue_depth=0: no budget, none refused" jq -e "$S.budget_busy == 0" "$TMP/q0.json"
expect_error "scsi_queue_depth out of range" "scsi_queue_depth=70000: .*0\.\.65536" \
	bench --dev=scsi --scsi_queue_depth=70000 --rw=read --size=1M

# what sd's probe read: standard INQUIRY, VPD 0x80, 0x83, 0xb1, REPORT
# LUNS, WP in the mode data
"$BLKSTACK" bench --dev=scsi --scsi_wp=1 --rw=read --bs=4k --size=1M $J >"$TMP/in.json"
check "probe: vendor, product, serial, NAA name, non-rotating, 1 LUN, write protected" \
	jq -e "$S.inquiry | .vendor == \"BLKSTACK\" and .product == \"blkstack disk\" and (.serial | test(\"^BLK[0-9A-F]{6}$\")) and (.naa | test(\"^6[0-9a-f]{31}$\")) and .rotation_rate == 1 and .luns == 1 and .write_protected" "$TMP/in.json"

# sd's READ/WRITE CDBs: (10) by default; with use_10_for_rw cleared, (6)
# where the LBA fits 21 bits (under 1 GiB of 512-byte blocks) and the
# length 256 blocks, else (10); the data verifies either way
"$BLKSTACK" bench --dev=scsi --rw=randwrite --bs=4k --iodepth=16 --size=8M $J >"$TMP/c.json"
check "use_10_for_rw=1: every READ/WRITE a 10-byte CDB" \
	jq -e "$S.rw_cdb == {\"6\": 0, \"10\": $S.commands.write, \"16\": 0}" "$TMP/c.json"
"$BLKSTACK" bench --dev=scsi --dev_size=2G --scsi_use_10_for_rw=0 --rw=randwrite --bs=128k --size=64M \
	--iodepth=16 --verify=crc32c $J >"$TMP/c.json"
check "use_10_for_rw=0, 128 KiB under 1 GiB: READ/WRITE (6), verified" \
	jq -e "$S.rw_cdb[\"6\"] > 0 and .jobs[0].blkstack.verify.mismatches == 0 and .jobs[0].blkstack.verify.blocks_verified == 512" "$TMP/c.json"
"$BLKSTACK" bench --dev=scsi --dev_size=2G --scsi_use_10_for_rw=0 --rw=randwrite --bs=4k --size=8M \
	--offset=1G --iodepth=16 --verify=crc32c $J >"$TMP/c.json"
check "use_10_for_rw=0, past 1 GiB: (10), verified" \
	jq -e "$S.rw_cdb[\"6\"] == 0 and $S.rw_cdb[\"10\"] > 0 and .jobs[0].blkstack.verify.mismatches == 0" "$TMP/c.json"
"$BLKSTACK" bench --dev=scsi --dev_size=2G --scsi_use_10_for_rw=0 --rw=randwrite --bs=256k --size=64M \
	--iodepth=16 $J >"$TMP/c.json"
check "use_10_for_rw=0, 512 blocks per command: (10)" \
	jq -e "$S.rw_cdb[\"6\"] == 0 and $S.rw_cdb[\"10\"] == $S.commands.write" "$TMP/c.json"

# NOT READY, becoming ready (04/01), three times on READ: sent again after
# a delay, not counted; UNIT ATTENTION twice on WRITE: after a delay,
# counted as retries
for lld in inline thread; do
	"$BLKSTACK" bench --dev=scsi --scsi_lld=$lld --rw=randrw --bs=4k --size=1M \
		--scsi_error='opcode:0x28,count:-3,status:0x02,sense:2/04/01;opcode:0x2a,count:-2,status:0x02,sense:6/29/00' \
		$J >"$TMP/nr.json" 2>"$TMP/nr.err"
	check "lld=$lld: NOT READY x3 and UNIT ATTENTION x2: 5 delayed retries, 2 counted, no error" \
		jq -e ".jobs[0].error == 0 and $S.injected == 5 and $S.delayed_retries == 5 and $S.retries == 2" "$TMP/nr.json"
done
# NOT READY for ever: given up after (max_retries + 1) request timeouts
timeout 60 "$BLKSTACK" bench --dev=scsi --scsi_error='opcode:0x28,count:1,status:0x02,sense:2/04/01' \
	--scsi_max_retries=1 --rq_timeout=50ms --rw=read --bs=4k --size=16k $J >"$TMP/nr2.json" 2>"$TMP/nr2.err"
rc=$?
check "NOT READY for ever: the read fails after about 2 x 50 ms of delayed retries (rc $rc)" \
	jq -e ".jobs[0].error != 0 and $S.delayed_retries >= 10 and $S.delayed_retries <= 60" "$TMP/nr2.json"

# a disk that refuses READ/WRITE (10) (scsi_debug's error rule: ILLEGAL
# REQUEST, INVALID COMMAND OPERATION CODE): sd falls back to (6), once
"$BLKSTACK" bench --dev=scsi --rw=randwrite --bs=4k --iodepth=8 --size=4M --verify=crc32c \
	--scsi_error='opcode:0x28,count:1,status:0x02,sense:5/20/00;opcode:0x2a,count:1,status:0x02,sense:5/20/00' \
	$J >"$TMP/f.json" 2>"$TMP/f.err"
check "(10) refused: one fallback, then READ/WRITE (6), every block verified" \
	jq -e ".jobs[0].error == 0 and .jobs[0].blkstack.verify.blocks_verified == 1024 and .jobs[0].blkstack.verify.mismatches == 0 and $S.cdb_fallbacks == 1 and $S.rw_cdb[\"10\"] == 1 and $S.rw_cdb[\"6\"] >= 1024" "$TMP/f.json"

# seed 003's switch: the host lock taken per submission and per completion,
# a queue run per completion
"$BLKSTACK" bench --dev=scsi --scsi_host_lock=1 --rw=randread --bs=4k --iodepth=16 --numjobs=2 \
	--size=4M --group_reporting=0 $J >"$TMP/h.json"
# (on ram every completion comes from a poll, none inside the submission)
check "scsi_host_lock=1: 2 acquisitions and a queue kick per command" \
	jq -e "$S | .host_lock.acquisitions == 2 * .commands.read and .host_lock.queue_kicks == .commands.read and .commands.read >= 1024" "$TMP/h.json"
"$BLKSTACK" bench --dev=scsi --rw=randread --bs=4k --size=1M $J >"$TMP/h0.json"
check "scsi_host_lock=0: the lock is never taken" jq -e "$S.host_lock == null" "$TMP/h0.json"

# seed 000's stage timer: 100 ms windows on stderr, and the mean in JSON
"$BLKSTACK" bench --dev=scsi --scsi_stage_timers=1 --rw=randread --bs=4k --iodepth=8 --size=64M \
	--time_based --runtime=350ms $J >"$TMP/st.json" 2>"$TMP/st.err"
check "stage timers: print_timings windows on stderr" \
	grep -qE '^scsi_io_completion\[q0\]: print_timings: cum_time=[0-9]+ ns, count=[0-9]+, avg=[0-9]+ ns$' "$TMP/st.err"
check "stage timers: every command's completion timed" \
	jq -e "$S.completion_stage.count == $S.commands.read and $S.completion_stage.mean_ns > 0" "$TMP/st.json"
finish
