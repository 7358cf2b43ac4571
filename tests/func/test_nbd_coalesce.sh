#!/usr/bin/env bash
# Request coalescing (--coalesce-us) with a real client: fio --ioengine=nbd
# at QD32 over the Unix socket and over TCP gets its requests gathered (the
# connection's log line counts the coalescing sleeps) and its data
# verified; a QD1 job and a server started with --coalesce-us=0 never
# sleep; bad values are refused naming the option and its range.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
need fio jq
fio --enghelp 2>/dev/null | grep -w nbd >/dev/null || { echo "SKIP: fio without the nbd engine"; exit 77; }

FIO=(timeout 120 fio --ioengine=nbd --output-format=json --verify_state_save=0)
run_fio() { "${FIO[@]}" "$@" 2>"$TMP/fio.err" | sed -n '/^{/,$p' >"$TMP/fio.json"; }
# sleeps FROM: wait for the log line of a connection that moved over 1 MB,
# among the lines after line FROM, and print the most coalescing sleeps
# any of those connections took (empty if none appeared within 10 s)
sleeps() {
	local i
	for i in $(seq 100); do
		if sed -n "$(($1 + 1)),\$p" "$TMP/server.log" |
			grep -qE 'rx [0-9]{7,} B|tx [0-9]{7,} B'; then
			sed -n "$(($1 + 1)),\$p" "$TMP/server.log" |
				sed -n 's/.* coalesced \([0-9]*\) .*/\1/p' | sort -n | tail -1
			return
		fi
		sleep 0.1
	done
}
lines() { wc -l <"$TMP/server.log"; }

start_server --dev=ram --size=256M || exit 1

n=$(lines)
run_fio --name=vw --uri="$UURI" --rw=randwrite --bs=4k --iodepth=32 --size=32M \
	--verify=crc32c --do_verify=1
check "QD32 over Unix: randwrite + verify, no errors" jq -e '.jobs[0].error == 0' "$TMP/fio.json"
check "QD32 over Unix: all 32 MiB read back" jq -e '.jobs[0].read.io_bytes == 33554432' "$TMP/fio.json"
s=$(sleeps "$n")
check "QD32 over Unix: the connection coalesced (sleeps: ${s:-none})" test "${s:-0}" -gt 0

n=$(lines)
run_fio --name=rr --uri="$UURI" --rw=randread --bs=4k --iodepth=32 --size=32M \
	--runtime=2 --time_based
check "QD32 randread over Unix runs" jq -e '.jobs[0].error == 0 and .jobs[0].read.iops > 0' "$TMP/fio.json"
s=$(sleeps "$n")
check "QD32 randread over Unix coalesced (sleeps: ${s:-none})" test "${s:-0}" -gt 0

n=$(lines)
run_fio --name=tcp --uri="$URI" --rw=randwrite --bs=4k --iodepth=32 --size=16M \
	--verify=crc32c --do_verify=1
check "QD32 over TCP: verified" jq -e '.jobs[0].error == 0' "$TMP/fio.json"
s=$(sleeps "$n")
check "QD32 over TCP: the connection coalesced (sleeps: ${s:-none})" test "${s:-0}" -gt 0

n=$(lines)
run_fio --name=qd1 --uri="$UURI" --rw=randread --bs=4k --iodepth=1 --size=32M \
	--runtime=2 --time_based
check "QD1 over Unix runs" jq -e '.jobs[0].error == 0 and .jobs[0].read.iops > 0' "$TMP/fio.json"
s=$(sleeps "$n")
check "QD1 over Unix: never made to wait (sleeps: ${s:-none})" test "${s:-x}" = 0
check "server still alive" alive
stop_server
check "server stops with status 0" test $? -eq 0

start_server --dev=ram --size=64M --coalesce-us=0 || exit 1
n=$(lines)
run_fio --name=off --uri="$UURI" --rw=randread --bs=4k --iodepth=32 --size=32M \
	--runtime=2 --time_based
check "--coalesce-us=0: QD32 runs" jq -e '.jobs[0].error == 0' "$TMP/fio.json"
s=$(sleeps "$n")
check "--coalesce-us=0: no coalescing (sleeps: ${s:-none})" test "${s:-x}" = 0
stop_server

expect_error "--coalesce-us=100001 refused with its range" 'coalesce-us=100001: allowed 0\.\.100000' \
	serve --unix="$TMP/x.sock" --coalesce-us=100001
expect_error "--coalesce-us=-1 refused" 'coalesce-us=-1: allowed' serve --unix="$TMP/x.sock" --coalesce-us=-1
expect_error "--coalesce-us=abc refused" 'coalesce-us=abc: allowed' serve --unix="$TMP/x.sock" --coalesce-us=abc
finish
