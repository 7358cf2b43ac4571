#!/usr/bin/env bash
# Fault injection from the command line (issue 11 item 5): the emulated NVMe
# controller's fault rules as --nvme_fault=SPEC, for bench and for serve
# (a faulty NVMe device exported over NBD); bad specs are refused naming
# the key and what is allowed; serve --help lists every driver.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
J="--output-format=json"

# a status for reads of one LBA range: reads there fail with the mapped
# status, reads elsewhere do not
"$BLKSTACK" bench --dev=nvme --rw=read --bs=4k --size=1M --iodepth=4 \
	--nvme_fault=op=read,slba=1024,nlb=8,status=read_error $J >"$TMP/r.json" 2>"$TMP/r.err"
check "read_error on LBAs 1024..1031: the job fails at byte 512 KiB" \
	jq -e '.jobs[0].error != 0 and .jobs[0].blkstack.errors >= 1' "$TMP/r.json"
check "... with MEDIUM (the media error's status)" grep -q "length 4096: MEDIUM" "$TMP/r.err"
check "... after reading everything before it" jq -e '.jobs[0].read.total_ios >= 128' "$TMP/r.json"
"$BLKSTACK" bench --dev=nvme --rw=read --bs=4k --size=512k --iodepth=4 \
	--nvme_fault=op=read,slba=1024,nlb=8,status=read_error $J >"$TMP/ok.json" 2>&1
check "reads that do not touch the range succeed" jq -e '.jobs[0].error == 0' "$TMP/ok.json"

# delay= slows every matching command: 20 ms per read at QD1
"$BLKSTACK" bench --dev=nvme --rw=read --bs=4k --size=64k --iodepth=1 \
	--nvme_fault=op=read,delay=20ms $J >"$TMP/d.json"
check "delay=20ms: 16 reads take at least 320 ms" \
	jq -e '.jobs[0].error == 0 and .jobs[0].read.lat_ns.mean >= 20000000' "$TMP/d.json"

# admin rules act on the host's bring-up
expect_error "admin identify failing stops the bring-up" "nvme" \
	bench --dev=nvme --rw=read --size=1M --nvme_fault=admin,op=identify,status=internal

# bad specs: named key, allowed values
expect_error "unknown key" "nvme_fault=op=read,frob=1: 'op=read,frob=1': unknown key 'frob'; keys: admin, op=" \
	bench --dev=nvme --nvme_fault=op=read,frob=1
expect_error "unknown op" "op=bogus: allowed flush\|write\|read" bench --dev=nvme --nvme_fault=op=bogus,status=internal
expect_error "unknown status" "status=oops: allowed invalid_opcode" bench --dev=nvme --nvme_fault=status=oops
expect_error "a rule that does nothing" "does nothing: give status=, delay= or drop" \
	bench --dev=nvme --nvme_fault=op=read
expect_error "qid 0 without admin" "qid=0 is the admin queue" bench --dev=nvme --nvme_fault=qid=0,drop
expect_error "crd out of range" "crd=4: allowed 1..3" bench --dev=nvme --nvme_fault=status=internal,crd=4
expect_error "delay too long" "delay=2h: a time" bench --dev=nvme --nvme_fault=delay=2h
expect_error "a seventeenth rule" "more than 16 rules" bench --dev=nvme \
	$(for i in $(seq 17); do printf -- '--nvme_fault=op=read,delay=%dus ' "$i"; done)

# serve: every driver in --help, and a faulty NVMe device over NBD
check "serve --help lists every registry driver" bash -c "'$BLKSTACK' serve --help | grep -Eq '^ +nvme +NVMe host over' && '$BLKSTACK' serve --help | grep -Eq '^ +uring +a regular file'"
check "serve --help names --nvme_fault" bash -c "'$BLKSTACK' serve --help | grep -q -- '--nvme_fault'"
if command -v qemu-io >/dev/null; then
	start_server --dev=nvme --size=64M --nvme_fault=op=write,slba=0,nlb=8,status=write_fault || exit 1
	qemu-io --image-opts "driver=nbd,path=$SOCK" -c "write -P 0x5a 0 4k" >"$TMP/q1" 2>&1
	check "a write to the faulty range fails over NBD (EIO)" grep -q "write failed: Input/output error" "$TMP/q1"
	qemu-io --image-opts "driver=nbd,path=$SOCK" -c "write -P 0x5a 8k 4k" -c "read -P 0x5a 8k 4k" >"$TMP/q2" 2>&1
	check "a write elsewhere succeeds and reads back" \
		bash -c "grep -q 'wrote 4096/4096' '$TMP/q2' && ! grep -q 'Pattern verification failed' '$TMP/q2'"
	stop_server
	check "the server stopped cleanly" test $? -eq 0
	# count=: two failures, then the rule goes (dnr: not retried)
	start_server --dev=nvme --size=64M --nvme_fault=op=write,status=write_fault,dnr,count=2 || exit 1
	for i in 1 2 3 4; do
		qemu-io --image-opts "driver=nbd,path=$SOCK" -c "write $((i * 4096)) 4k" 2>&1
	done >"$TMP/q3"
	check "count=2: the first two writes fail, the next two succeed" \
		bash -c "[ \$(grep -c 'write failed: Input/output error' '$TMP/q3') = 2 ] && [ \$(grep -c 'wrote 4096/4096' '$TMP/q3') = 2 ]"
	stop_server
	expect_error "serve refuses a bad rule" "nvme_fault=op=read: 'op=read': does nothing" \
		serve --dev=nvme --size=1M --nvme_fault=op=read
else
	echo "skip - qemu-io not installed: the NBD part not checked"
fi
finish
