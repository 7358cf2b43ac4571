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
# - null's knobs reached a null namespace (they are for dev=null only)
"$BLKSTACK" bench --dev=nvme --nvme_ns=null --timeout_every=100 --rq_timeout=2s --rw=randread \
	--bs=4k --size=4M $J >"$TMP/t.json"
check "timeout_every= does not reach nvme's null namespace" \
	jq -e '.jobs[0].error == 0 and .jobs[0].read.total_ios == 1024' "$TMP/t.json"
# - the matrix laid nvme on ram out as if it were the file
"$BLKSTACK" bench --matrix --size=16M --runtime=200ms --dev=nvme --lower=ram \
	--filename="$TMP/unused.img" >"$TMP/m.out" 2>&1
check "matrix: nvme on lower=ram is a new device, the file untouched" \
	bash -c "grep -q 'layout: nvme: new device' '$TMP/m.out' && test ! -e '$TMP/unused.img'"
# - and it said nothing of the file (with lower= given, no note at all)
check "nvme on lower=ram with filename=: a note says the file is not used" \
	grep -qF "note: --dev=nvme overrides job 'bench' file $TMP/unused.img" "$TMP/m.out"

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
