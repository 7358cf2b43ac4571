#!/usr/bin/env bash
# fio --ioengine=nbd against blkstack serve: random writes verified by
# reading back (crc32c), several connections at once (more than the
# device has hardware queues, so queues are shared), and a fio read of a
# region fio did not write, whose verify must fail (the check can fail).
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
need fio jq
fio --enghelp 2>/dev/null | grep -w nbd >/dev/null || { echo "SKIP: fio without the nbd engine"; exit 77; }

start_server --dev=ram --size=256M --nr_hw_queues=2 || exit 1

FIO=(timeout 120 fio --ioengine=nbd --output-format=json --verify_state_save=0)
run_fio() { "${FIO[@]}" "$@" 2>"$TMP/fio.err" | sed -n '/^{/,$p' >"$TMP/fio.json"; }

run_fio --name=vw --uri="$URI" --rw=randwrite --bs=4k --iodepth=32 --size=32M \
	--verify=crc32c --do_verify=1
check "fio randwrite + verify: no errors" jq -e '.jobs[0].error == 0' "$TMP/fio.json"
check "fio wrote 32 MiB" jq -e '.jobs[0].write.io_bytes == 33554432' "$TMP/fio.json"
check "fio read it all back" jq -e '.jobs[0].read.io_bytes == 33554432' "$TMP/fio.json"

run_fio --name=mix --uri="$UURI" --rw=randwrite --bs=64k --iodepth=8 --size=16M \
	--numjobs=4 --offset_increment=32M --offset=64M --verify=crc32c --do_verify=1
check "4 connections over 2 queues, verified" \
	jq -e '[.jobs[].error] | add == 0 and length == 4' "$TMP/fio.json"

run_fio --name=big --uri="$URI" --rw=write --bs=4M --iodepth=4 --size=64M \
	--offset=192M --verify=crc32c --do_verify=1
check "4 MiB writes (payload received in place), verified" jq -e '.jobs[0].error == 0' "$TMP/fio.json"

run_fio --name=rr --uri="$URI" --rw=randread --bs=4k --iodepth=32 --size=32M \
	--runtime=2 --time_based
check "fio randread QD32 runs" jq -e '.jobs[0].error == 0 and .jobs[0].read.iops > 0' "$TMP/fio.json"

# a verify over data fio never wrote (zeroes) must fail
run_fio --name=bad --uri="$URI" --rw=read --bs=4k --size=1M --offset=100M \
	--verify=crc32c --verify_only=1
check "verify of unwritten data fails (the check can fail)" \
	jq -e '.jobs[0].error != 0' "$TMP/fio.json"
check "server still alive" alive
stop_server
check "server stops with status 0" test $? -eq 0
finish
