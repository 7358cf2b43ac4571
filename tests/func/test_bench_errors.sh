#!/usr/bin/env bash
# Bad flags get an error naming the option and what is allowed; I/O errors
# injected in the null driver fail the run with the offset.
source "$(dirname "$0")/lib.sh" "$@"

expect_error "iodepth=0 out of range" "iodepth=0.*1\.\.65536" bench --iodepth=0
expect_error "unknown option" "unknown option 'foo'" bench --foo=1
expect_error "unsupported fio option" "lockfile.*not support" bench --lockfile=1
expect_error "bad rw" "rw=sideways" bench --rw=sideways
expect_error "bad bs" "bs=" bench --bs=100
expect_error "bad size suffix" "size=4x" bench --size=4x
# a value that does not parse says what would: the form and the range
for v in abc 1.5 4kk; do
	expect_error "iodepth=$v: form and range" \
		"iodepth=$v: not a number \(a whole number with an optional k/m/g/t/p suffix\), allowed 1\.\.65536$" \
		bench --iodepth=$v
done
expect_error "iodepth=-1: negative, the range" "iodepth=-1: negative, allowed 1\.\.65536$" bench --iodepth=-1
expect_error "bs=4x: form and range" \
	"bs=4x: not a size \(a whole number with an optional k/m/g/t/p suffix\), allowed 512\.\.16M$" bench --bs=4x
expect_error "fail_every=4kk: what is allowed" \
	"fail_every=4kk: not a number \(.*k/m/g/t/p suffix\), allowed 0\.\.2\^64-1$" bench --fail_every=4kk
expect_error "runtime=abc: form and range" \
	"runtime=abc: not a time \(a whole number with an optional unit ns/us/ms/s/m/h/d, s without one\)" bench --runtime=abc
expect_error "empty --bs= says what it takes" \
	"option 'bs' needs a value: a size .*, allowed 512\.\.16M$" bench --bs=
expect_error "empty --rw= lists the values" \
	"option 'rw' needs a value, allowed read\|write\|" bench --rw=
expect_error "runtime past 64 bits: overflow and the maximum" \
	"runtime=99999999999d: overflows 64 bits, the maximum is 213503d$" bench --runtime=99999999999d
expect_error "--help takes no value" "option 'help' takes no value" bench --help=1
expect_error "--help= takes no value" "option 'help' takes no value" bench --help=
expect_error "control bytes in an option are escaped" "unknown option 'foo\\\\x1b\\[2J'" \
	bench "--foo$(printf '\033')[2J=1"
check "no raw escape byte in the message" bash -c '! grep -q "$(printf "\033")" "$1"' _ "$TMP/err"
expect_error "rwmixread > 100" "rwmixread=101" bench --rw=randrw --rwmixread=101
expect_error "unknown device" "dev=xyz.*null.*ram.*uring" bench --dev=xyz
expect_error "bad elevator" "elevator=cfq" bench --elevator=cfq
expect_error "bad irqmode" "irqmode=3" bench --irqmode=3
expect_error "bad uring_engine: the allowed values" "uring_engine=ring: bad value, allowed auto\|io_uring\|pool$" \
	bench --dev=uring --uring_engine=ring
for v in 0 257; do
	expect_error "pool_threads=$v: the range" "pool_threads=$v: out of range, allowed 1\.\.256$" \
		bench --dev=uring --pool_threads=$v
done
expect_error "output-format: a bad entry in the list" "output-format=normal,xml: bad value" bench --output-format=normal,xml
expect_error "size past the device" "past the end" bench --dev=null --dev_size=1M --size=2M --rw=read
expect_error "injected I/O error fails the run with its offset" \
	"read error at offset [0-9]+, length 4096: IOERR" \
	bench --dev=null --fail_every=100 --rw=randread --size=16M --runtime=1 --time_based
expect_error "injected timeout fails the run" "TIMEOUT" \
	bench --dev=null --timeout_every=50 --rq_timeout=20ms --rw=randread --size=16M --runtime=2 --time_based
# requeues are not errors
"$BLKSTACK" bench --dev=null --requeue_every=7 --rw=randread --size=16M --runtime=200ms \
	--time_based --output-format=json >"$TMP/rq.json"
check "requeue_every: run succeeds" test $? -eq 0
check "requeue_every: requeues reported" jq -e '.jobs[0].blkstack.requeues > 0' "$TMP/rq.json"
"$BLKSTACK" bench --help >"$TMP/help"
check "--help lists options with ranges" grep -q "iodepth" "$TMP/help"
finish
