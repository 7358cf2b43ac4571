#!/usr/bin/env bash
# The device registry from the command line (issue 12, "one device
# registry"): stacking is explicit (--lower=, default ram for nvme, uring
# with --filename), bad combinations are refused naming the option and
# what is allowed, and the driver list in messages and help comes from the
# registry's table.
source "$(dirname "$0")/lib.sh" "$@"
J="--output-format=json"

# nvme on null: runs, no data kept (verify would fail), protocol only
"$BLKSTACK" bench --dev=nvme --lower=null --rw=randread --bs=4k --size=1M $J >"$TMP/n.json"
check "nvme on lower=null: exit 0" test $? -eq 0
check "nvme on lower=null: 256 reads" jq -e '.jobs[0].read.total_ios == 256' "$TMP/n.json"
check "nvme on lower=null: lower in the JSON options" jq -e '.["global options"].lower == "null"' "$TMP/n.json"
expect_error "verify on nvme over lower=null: refused, stores no data" \
	"verify=crc32c: dev=nvme on lower=null \(nvme_ns=null\) stores no data; use lower=ram, or lower=uring with filename=" \
	bench --dev=nvme --lower=null --rw=write --size=1M --verify=crc32c
# nvme on a file: written through the emulated controller into the file
"$BLKSTACK" bench --dev=nvme --lower=uring --filename="$TMP/n.img" --dev_size=4M --rw=write \
	--bs=64k --size=4M --verify=crc32c $J >"$TMP/u.json" 2>"$TMP/u.err"
check "nvme on lower=uring: write and verify, exit 0" test $? -eq 0
check "nvme on lower=uring: the file holds the data" test "$(stat -c %b "$TMP/n.img")" -ge 8000
# the default lower with filename= is uring too (as before the registry)
"$BLKSTACK" bench --dev=nvme --filename="$TMP/n.img" --rw=read --bs=64k --size=4M --verify=crc32c \
	--verify_only=1 $J >"$TMP/d.json" 2>"$TMP/d.err"
check "nvme with filename= reads the same file back (verify_only)" test $? -eq 0

# in a list, lower= is for the drivers that stack
"$BLKSTACK" bench --dev=ram,nvme --lower=null --rw=randread --bs=4k --size=1M $J >"$TMP/l.json"
check "--dev=ram,nvme --lower=null: both run" \
	jq -e '[.jobs[] | select(.read.total_ios == 256)] | length == 2' "$TMP/l.json"
expect_error "lower= on a driver that stacks on nothing" \
	"^blkstack bench: lower=null: dev=ram does not stack on another device \(drivers that do: nvme, scsi\)" \
	bench --dev=ram --lower=null --rw=read --size=1M
expect_error "lower= a driver nothing stacks on" "lower=nvme: not a driver a device can stack on, allowed ram\\|null\\|uring" \
	bench --dev=nvme --lower=nvme --rw=read --size=1M
expect_error "lower=uring without filename=" "lower=uring: needs filename=PATH" \
	bench --dev=nvme --lower=uring --rw=read --size=1M
expect_error "an unknown driver: the registry's names" "unknown device 'bogus', allowed null\|ram\|uring\|nvme" \
	bench --dev=bogus --rw=read --size=1M
expect_error "lower= unknown: the drivers one can stack on" "lower=bogus: not a driver a device can stack on, allowed ram\|null\|uring" \
	bench --dev=nvme --lower=bogus --rw=read --size=1M
expect_error "lower= too long" "lower=.*too long, at most 15 characters" \
	bench --dev=nvme --lower=aaaaaaaaaaaaaaaaaaaaaaaa --rw=read --size=1M

# Regressions found by a break test of the registry:
# - lower= was checked only when the stacking driver opened, after the
#   drivers before it in the list had run (and JSON output was lost)
"$BLKSTACK" bench --dev=ram,nvme --lower=uring --rw=read --size=1M $J >"$TMP/o.json" 2>"$TMP/o.err"
check "lower=uring without filename=: refused before ram runs" \
	bash -c "grep -q 'lower=uring: needs filename=PATH' '$TMP/o.err' && test ! -s '$TMP/o.json'"
# - timeout_every= made nvme_ns=null runs fail (the controller is declared
#   dead when a namespace request never ends); it was then dropped for a
#   null namespace without a word, now it is refused
expect_error "timeout_every= on nvme's null namespace: refused, naming what loses commands" \
	"^blkstack bench: timeout_every=100: not for a null lower \(dev=nvme on lower=null\): .*nvme_fault=op=read,drop" \
	bench --dev=nvme --nvme_ns=null --timeout_every=100 --rq_timeout=2s --rw=randread --bs=4k --size=4M
# - the matrix laid nvme on ram out as if it were the file
"$BLKSTACK" bench --matrix --size=16M --runtime=200ms --dev=nvme --lower=ram \
	--filename="$TMP/unused.img" >"$TMP/m.out" 2>&1
check "matrix: nvme on lower=ram is a new device, the file untouched" \
	bash -c "grep -q 'layout: nvme: new device' '$TMP/m.out' && test ! -e '$TMP/unused.img'"
# - and it said nothing of the file (with lower= given, no note at all)
check "nvme on lower=ram with filename=: a note says the file is not used" \
	grep -qF "note: --dev=nvme overrides job 'bench' file $TMP/unused.img" "$TMP/m.out"
# - but where another device of the list opens the file, it is that
#   one's: no note for the others (make run, --dev=null,ram,uring
#   --filename=F, noted twice that null and ram keep no file)
check "matrix on null and uring with filename=: runs, and says nothing of null keeping no file (the file is uring's)" \
	bash -c "'$BLKSTACK' bench --matrix --size=16M --runtime=100ms --dev=null,uring \
		--filename='$TMP/used.img' --dev_size=16M >'$TMP/m2.out' 2>&1 &&
		grep -q 'layout: uring' '$TMP/m2.out' && ! grep -q 'overrides' '$TMP/m2.out'"

# A driver option given for no driver of the stack is refused, naming the
# option, the driver(s) it is for and the stack (defaults never count)
expect_error "nvme_qd= on dev=ram" \
	"^blkstack bench: nvme_qd=64: an option of dev=nvme; this stack is ram$" \
	bench --dev=ram --nvme_qd=64 --rw=read --size=1M
expect_error "scsi_every_nth= on dev=null" \
	"^blkstack bench: scsi_every_nth=5: an option of dev=scsi; this stack is null$" \
	bench --dev=null --scsi_every_nth=5 --rw=read --size=1M
expect_error "nvme_queues= (as --nvme-queues) on scsi over ram" \
	"^blkstack bench: nvme_queues=4: an option of dev=nvme; this stack is scsi on ram$" \
	bench --dev=scsi --lower=ram --nvme-queues=4 --rw=read --size=1M
expect_error "a null knob on ram: where it would be taken" \
	"^blkstack bench: irqmode=2: an option of dev=null, and of lower=null under nvme, scsi; this stack is ram$" \
	bench --dev=ram --irqmode=2 --rw=read --size=1M
expect_error "without --dev=: the stack the run picks (null)" \
	"^blkstack bench: nvme_qd=64: an option of dev=nvme; this stack is null$" \
	bench --nvme_qd=64 --rw=read --size=1M
expect_error "the matrix's null,ram" \
	"^blkstack bench: scsi_wp=1: an option of dev=scsi; the stacks are null, ram$" \
	bench --scsi_wp=1 --runtime=10ms
expect_error "every such option listed" "^blkstack bench: 2 problems; nothing ran$" \
	bench --dev=ram --nvme_qd=64 --scsi_wp=1 --rw=read --size=1M
printf '[global]\nrw=read\nsize=1M\nnvme_qd=64\n[a]\n' >"$TMP/qd.fio"
expect_error "from a job file too, with its line" \
	"^blkstack bench: $TMP/qd.fio:4: nvme_qd=64: an option of dev=nvme; this stack is ram$" \
	bench --dev=ram "$TMP/qd.fio"
expect_error "the job file's line without --dev= too" \
	"^blkstack bench: $TMP/qd.fio:4: nvme_qd=64: an option of dev=nvme; this stack is null$" \
	bench "$TMP/qd.fio"
# in a --dev= list an option is for the stacks that take it (as lower=)
"$BLKSTACK" bench --dev=ram,nvme --lower=null --irqmode=1 --nvme_qd=64 --rw=read --size=1M --parse-only
check "--dev=ram,nvme --lower=null --irqmode=1 --nvme_qd=64: taken" test $? -eq 0
"$BLKSTACK" bench --dev=null,nvme --lower=null --timeout_every=100 --rw=read --size=1M --parse-only
check "--dev=null,nvme --lower=null --timeout_every=100: for dev=null" test $? -eq 0
# serve: the same check, per export (options before --export count for each)
timeout 20 "$BLKSTACK" serve --nbd=127.0.0.1:0 --dev=ram --size=1M --nvme_qd=64 >/dev/null 2>"$TMP/s1.err"
rc=$?
check "serve --dev=ram --nvme_qd=64: refused (rc $rc)" bash -c "test $rc -eq 1 &&
	grep -qx \"blkstack serve: export '': nvme_qd=64: an option of dev=nvme; this stack is ram\" '$TMP/s1.err'"
timeout 20 "$BLKSTACK" serve --nbd=127.0.0.1:0 --size=1M --irqmode=2 --export=a --dev=null \
	--export=b --dev=scsi --lower=ram >/dev/null 2>"$TMP/s2.err"
rc=$?
check "serve: a default for every export, one of them not null: refused (rc $rc)" bash -c "test $rc -eq 1 &&
	grep -q \"^blkstack serve: export 'b': irqmode=2: an option of dev=null, and of lower=null under nvme, scsi; this stack is scsi on ram\\$\" '$TMP/s2.err'"

# A null lower takes null's knobs: latency (the timer is a lower bound on
# every request) and errors, which the upper driver handles as a disk's
for up in nvme scsi; do
	"$BLKSTACK" bench --dev=$up --lower=null --rw=randread --bs=4k --size=64k $J >"$TMP/l0.json"
	"$BLKSTACK" bench --dev=$up --lower=null --irqmode=2 --completion_nsec=10ms --rw=randread \
		--bs=4k --size=64k $J >"$TMP/l1.json"
	mins=$(jq -s -r '[.[].jobs[0].read.lat_ns.min] | join(" and ")' "$TMP/l0.json" "$TMP/l1.json")
	check "$up on lower=null: completion_nsec=10ms reaches the lower: fastest read without it, with it: $mins ns" \
		jq -e -s '.[0].jobs[0].read.lat_ns.min < 10000000 and .[1].jobs[0].read.lat_ns.min >= 10000000' \
		"$TMP/l0.json" "$TMP/l1.json"
done
"$BLKSTACK" bench --dev=nvme --lower=null --fail_every=10 --rw=randread --bs=4k --size=256k $J >"$TMP/f.json"
check "nvme on lower=null, fail_every=10: the host gets the errors and retries them ($(jq -c .jobs[0].blkstack.nvme "$TMP/f.json"))" \
	jq -e '.jobs[0].error == 0 and .jobs[0].read.total_ios == 64 and .jobs[0].blkstack.nvme.errors >= 6 and
		.jobs[0].blkstack.nvme.retried == .jobs[0].blkstack.nvme.errors' "$TMP/f.json"
expect_error "nvme on lower=null, fail_every=1: the retries fail as well: IOERR" \
	"read error at offset [0-9]+, length 4096: IOERR" \
	bench --dev=nvme --lower=null --fail_every=1 --rw=randread --bs=4k --size=64k
expect_error "scsi on lower=null, fail_every=4: MEDIUM ERROR" \
	"read error at offset [0-9]+, length 4096: MEDIUM" \
	bench --dev=scsi --lower=null --fail_every=4 --rw=randread --bs=4k --size=64k
expect_error "timeout_every= under scsi on null: refused" \
	"^blkstack bench: timeout_every=8: not for a null lower \(dev=scsi on lower=null\): .*scsi_opts=0x4 with scsi_every_nth=N" \
	bench --dev=scsi --lower=null --timeout_every=8 --rw=read --size=1M
# a uring lower: what it cannot take is refused, the rest it takes
expect_error "fixedbufs=1 under nvme on uring: refused" \
	"^blkstack bench: fixedbufs=1: not for a uring lower \(dev=nvme on lower=uring\): .*allowed 0$" \
	bench --dev=nvme --lower=uring --filename="$TMP/x.img" --fixedbufs=1 --rw=read --size=1M
expect_error "uring_taskrun=defer under scsi on uring: refused" \
	"^blkstack bench: uring_taskrun=defer: not for a uring lower \(dev=scsi on lower=uring\): .*allowed coop, signal$" \
	bench --dev=scsi --lower=uring --filename="$TMP/x.img" --uring_taskrun=defer --rw=read --size=1M
# SQPOLL (with uring_taskrun=signal: the kernel refuses it with COOP_TASKRUN)
# reaches the lower's rings: an iou-sqp thread while the run lasts
sqpoll_thread() {
	local pid i
	"$BLKSTACK" bench "$@" --filename="$TMP/sq.img" --dev_size=8M --sqthread_poll=1 \
		--uring_taskrun=signal --uring_inline=never --rw=randwrite --bs=4k --size=8M \
		--verify=crc32c >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 200); do
		if cat /proc/$pid/task/*/comm 2>/dev/null | grep -q '^iou-sqp'; then
			wait $pid
			return
		fi
		kill -0 $pid 2>/dev/null || break
		sleep 0.02
	done
	wait $pid
	return 1
}
if sqpoll_thread --dev=uring; then
	for up in nvme scsi; do
		check "$up on lower=uring, sqthread_poll=1: the lower's rings have SQPOLL, verify passes" \
			sqpoll_thread --dev=$up --lower=uring
	done
else
	echo "ok - SQPOLL not available here (no iou-sqp thread on dev=uring): skipped"
fi

# help: a section per driver, from the table
"$BLKSTACK" bench --help >"$TMP/help" 2>&1
for d in null ram uring nvme scsi; do
	check "bench --help has a dev=$d section" grep -q "^dev=$d: " "$TMP/help"
done
"$BLKSTACK" serve --help >"$TMP/shelp" 2>&1
check "serve --help lists nvme's options" grep -q "nvme: --nvme_queues" "$TMP/shelp"

# serve opens through the registry as well: nvme on null over NBD
source "$(dirname "$0")/nbd_lib.sh"
if command -v nbdinfo >/dev/null; then
	start_server --dev=nvme --lower=null --size=8M || exit 1
	check "serve --dev=nvme --lower=null: nbdinfo sees 8 MiB" \
		bash -c "nbdinfo --size '$UURI' | grep -qx 8388608"
	stop_server
	check "serve stops cleanly" test $? -eq 0
else
	fail "nbdinfo is not installed (scripts/install-deps.sh installs libnbd-bin)"
fi
finish
