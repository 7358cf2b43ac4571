#!/usr/bin/env bash
# dev=nvme: the host driver over the emulated controller, end to end with
# verify=crc32c on RAM and onto a file (namespace on the uring driver), in
# both controller modes and both SQE fill modes; --nvme-* errors name the
# option and the range; the JSON carries the driver's counters.
source "$(dirname "$0")/lib.sh" "$@"
J="--output-format=json"
T="timeout -k 10 120"
# bios merged in a plug share one command
CQE_PER_RQ='.jobs[0] | .blkstack.nvme.cqes == .read.total_ios + .write.total_ios - .blkstack.merges.read - .blkstack.merges.write'

# write + verify on RAM: every ctrl x sqe-init pair, QD 1, 32 and 128
for ctrl in thread inline; do
	for sqe in memset fields; do
		for qd in 1 32 128; do
			name="ram ctrl=$ctrl sqe=$sqe qd=$qd"
			$T "$BLKSTACK" bench --dev=nvme --nvme-ctrl=$ctrl --nvme-sqe-init=$sqe \
				--rw=randwrite --bs=4k --iodepth=$qd --size=4M --verify=crc32c \
				--verify_dump_dir="$TMP" $J >"$TMP/v.json" 2>"$TMP/err"
			check "$name: exit 0" test $? -eq 0
			check "$name: 1024 blocks verified, 0 mismatches" \
				jq -e '.jobs[0].blkstack.verify | .blocks_verified == 1024 and .mismatches == 0' "$TMP/v.json"
			check "$name: one CQE per request (I/Os less merges)" jq -e "$CQE_PER_RQ" "$TMP/v.json"
		done
	done
done

# fewer tags than iodepth (nvme_qd=2: one tag): submissions meet -EAGAIN;
# each busy I/O must be retried as prepared, or its random-map block is
# never written and verify checks fewer blocks (regression: fewer than 1024)
for ctrl in thread inline; do
	name="nvme_qd=2 iodepth=32 ctrl=$ctrl: busy retries keep their block"
	$T "$BLKSTACK" bench --dev=nvme --nvme-ctrl=$ctrl --nvme-qd=2 --rw=randwrite --bs=4k \
		--iodepth=32 --size=4M --verify=crc32c --verify_dump_dir="$TMP" $J >"$TMP/v.json" 2>"$TMP/err"
	check "$name: exit 0" test $? -eq 0
	check "$name: 1024 writes, 1024 blocks verified" \
		jq -e '.jobs[0] | .write.total_ios == 1024 and .blkstack.verify.blocks_verified == 1024 and .blkstack.verify.mismatches == 0' "$TMP/v.json"
done

# two jobs on two I/O queue pairs, then one queue pair shared by two jobs
for q in 0 1; do
	name="ram numjobs=2 nvme_queues=$q"
	$T "$BLKSTACK" bench --dev=nvme --nvme-queues=$q --rw=randwrite --bs=8k --iodepth=16 \
		--numjobs=2 --size=2M --offset_increment=2M --verify=crc32c \
		--verify_dump_dir="$TMP" $J >"$TMP/v.json" 2>"$TMP/err"
	check "$name: exit 0" test $? -eq 0
	check "$name: 256 blocks verified per job" \
		jq -e '[.jobs[].blkstack.verify | [.blocks_verified, .mismatches]] == [[256, 0], [256, 0]]' "$TMP/v.json"
done

# onto a file: the namespace is the uring driver over it, buffered and direct
for ctrl in thread inline; do
	for direct in 0 1; do
		name="file ctrl=$ctrl direct=$direct"
		rm -f "$TMP/n.img"
		$T "$BLKSTACK" bench --dev=nvme --filename="$TMP/n.img" --nvme-ctrl=$ctrl \
			--direct=$direct --rw=randwrite --bs=16k --iodepth=32 --size=4M \
			--verify=crc32c --verify_dump_dir="$TMP" $J >"$TMP/f.json" 2>"$TMP/err"
		check "$name: exit 0" test $? -eq 0
		check "$name: file created at size" test "$(stat -c %s "$TMP/n.img")" -eq $((4 << 20))
		check "$name: 256 blocks verified" \
			jq -e '.jobs[0].blkstack.verify | .blocks_verified == 256 and .mismatches == 0' "$TMP/f.json"
	done
done
# the data is really in the file: verify_only reads it back through nvme again
$T "$BLKSTACK" bench --dev=nvme --filename="$TMP/n.img" --rw=read --bs=16k --size=4M \
	--verify=crc32c --verify_only=1 --verify_dump_dir="$TMP" $J >"$TMP/f.json" 2>"$TMP/err"
check "file: verify_only after the run: exit 0" test $? -eq 0
check "file: verify_only checks 256 blocks" \
	jq -e '.jobs[0].blkstack.verify | .blocks_verified == 256 and .mismatches == 0' "$TMP/f.json"

# large blocks need PRP lists; trim and a mixed run
$T "$BLKSTACK" bench --dev=nvme --rw=randrw --bs=256k --iodepth=8 --size=16M $J >"$TMP/l.json" 2>"$TMP/err"
check "bs=256k: exit 0" test $? -eq 0
check "bs=256k: PRP lists used" jq -e '.jobs[0].blkstack.nvme.prp_lists > 0' "$TMP/l.json"
check "bs=256k: no bounce" jq -e '.jobs[0].blkstack.nvme.bounced == 0' "$TMP/l.json"
$T "$BLKSTACK" bench --dev=nvme --rw=trim --bs=64k --size=4M $J >"$TMP/t.json" 2>"$TMP/err"
check "trim: 64 DSM commands" jq -e '.jobs[0].trim.total_ios == 64 and .jobs[0].blkstack.nvme.errors == 0' "$TMP/t.json"
# nvme_ns=null: no data, the protocol only
$T "$BLKSTACK" bench --dev=nvme --nvme-ns=null --nvme-ctrl=inline --rw=randread --bs=4k \
	--iodepth=32 --runtime=200ms --time_based $J >"$TMP/n.json" 2>"$TMP/err"
check "nvme_ns=null: exit 0" test $? -eq 0
check "nvme_ns=null: did I/O" jq -e '.jobs[0].read.total_ios > 100' "$TMP/n.json"

# JSON sanity: fio's fields and the driver's counters agree
$T "$BLKSTACK" bench --dev=nvme --nvme-qd=64 --rw=randread --bs=4k --iodepth=32 --size=8M $J >"$TMP/j.json" 2>"$TMP/err"
check "json: dev is nvme" jq -e '.jobs[0].blkstack.dev == "nvme"' "$TMP/j.json"
check "json: 2048 reads" jq -e '.jobs[0].read.total_ios == 2048' "$TMP/j.json"
check "json: a CQE per request" jq -e "$CQE_PER_RQ" "$TMP/j.json"
check "json: doorbells batched (fewer SQ doorbells than I/Os)" \
	jq -e '.jobs[0].blkstack.nvme.sq_doorbells > 0 and .jobs[0].blkstack.nvme.sq_doorbells < 2048' "$TMP/j.json"
check "json: no resets, no errors" \
	jq -e '.jobs[0].blkstack.nvme | .resets == 0 and .errors == 0 and .timeouts == 0' "$TMP/j.json"

# text output and help
$T "$BLKSTACK" bench --dev=nvme --rw=read --bs=4k --size=1M >"$TMP/text" 2>&1
check "text output: exit 0" test $? -eq 0
"$BLKSTACK" bench --help >"$TMP/help"
check "help lists dev nvme" grep -q "nvme" "$TMP/help"
for o in nvme_queues nvme_qd nvme_ctrl nvme_sqe_init nvme_ns; do
	check "help lists $o" grep -q -- "--$o" "$TMP/help"
done

# bad values name the option and what is allowed
expect_error "nvme-qd=1" "nvme-qd=1.*allowed 2\.\.65536" bench --dev=nvme --nvme-qd=1
expect_error "nvme-qd=65537" "nvme-qd=65537.*allowed 2\.\.65536" bench --dev=nvme --nvme-qd=65537
expect_error "nvme-queues=257" "nvme-queues=257.*allowed 0\.\.256" bench --dev=nvme --nvme-queues=257
expect_error "nvme-ctrl=fast" "nvme-ctrl=fast.*allowed thread\|inline" bench --dev=nvme --nvme-ctrl=fast
expect_error "nvme-sqe-init=zero" "nvme-sqe-init=zero.*allowed memset\|fields" bench --dev=nvme --nvme-sqe-init=zero
expect_error "nvme-ns=disk" "nvme-ns=disk.*allowed ram\|null" bench --dev=nvme --nvme-ns=disk
expect_error "bs past the largest transfer" "bs=2097152: larger than the nvme device's largest transfer, 1048576 bytes \(max_sectors=2048\)" \
	bench --dev=nvme --max_sectors=2048 --bs=2m --rw=read --size=4m
expect_error "verify on a null namespace" "verify=crc32c: dev=nvme on lower=null \\(nvme_ns=null\\) stores no data" \
	bench --dev=nvme --nvme-ns=null --rw=write --size=1M --verify=crc32c
# out of memory names the options that size it (not under ASan or TSan:
# their shadow memory needs more address space than the limit)
if [ "$(sanitizer)" = none ]; then
	( ulimit -v 400000; $T "$BLKSTACK" bench --dev=nvme --nvme-queues=256 --nvme-qd=65536 \
		--rw=read --size=1M ) >"$TMP/out" 2>"$TMP/err"
	check "out of memory: exit 1" test $? -eq 1
	check "out of memory: names nvme_queues and nvme_qd" \
		grep -q "dev=nvme: out of memory for .*nvme_queues=256 queues x nvme_qd=65536 entries.*lower nvme_queues or nvme_qd" "$TMP/err"
fi
# regression (issue 11): 256 queues of 65536 entries took 9.4 GB resident
# for a 1 MiB read (every SQE slot, PRP page and namespace tag set up
# front); now memory follows what is used (not under sanitizers: their
# shadow memory)
if [ "$(sanitizer)" = none ] && [ -x /usr/bin/time ]; then
	/usr/bin/time -f "%M" -o "$TMP/rss" "$BLKSTACK" bench --dev=nvme --nvme_queues=256 \
		--nvme_qd=65536 --rw=read --size=1M >/dev/null 2>&1
	check "256 queues x 65536 entries: a 1 MiB read stays under 256 MiB resident ($(cat "$TMP/rss") KiB)" \
		test "$(cat "$TMP/rss")" -lt 262144
fi
expect_error "job-file spelling: nvme_qd=0" "nvme_qd=0.*allowed 2\.\.65536" bench --dev=nvme --nvme_qd=0

finish
