#!/usr/bin/env bash
# blkstack serve --metrics: NBD and iSCSI exports driven by real clients
# (qemu-io over nbd:// and iscsi://), scraped with curl; the counters move
# by what the clients did (requests, bytes, errors, latency buckets,
# in-flight, the block core's diskstats), connection series appear while a
# client is connected and fold into the export's when it leaves; the text
# passes promtool's `check metrics` and prom_check.py (cumulative
# buckets, _count = +Inf bucket); address errors; the stop with a scraper
# holding a connection open.
source "$(dirname "$0")/lib.sh" "$@"
CHECK="$(dirname "$0")/prom_check.py"
SRV_PID=
QIO_PID=
trap 'for p in $QIO_PID $SRV_PID; do { kill -9 "$p"; wait "$p"; } 2>/dev/null; done; rm -rf "$TMP"' EXIT

for c in curl qemu-io python3 ss; do
	if ! command -v "$c" >/dev/null; then
		echo "SKIP: $c is not installed (scripts/install-deps.sh)"
		exit 77
	fi
done
if ! qemu-io --help | grep -qw iscsi && ! qemu-img --help | grep -qw iscsi; then
	echo "SKIP: qemu without the iscsi block driver (qemu-block-extra)"
	exit 77
fi
HAVE_PROMTOOL=0
command -v promtool >/dev/null && HAVE_PROMTOOL=1
T=iqn.2026-12.org.blkstack

# --- option errors: named, with the allowed form ---------------------------
for v in abc 65536 -1 ::1 :9100 '[::1]' 1.2.3.4:0x50; do
	expect_error "--metrics=$v refused" "--metrics=.*: expected PORT or HOST:PORT" \
		serve --metrics="$v" --dev=ram --size=1M
done

# scrape URL: the metrics port from the log (port 0: a free one)
start() {
	local i
	"$BLKSTACK" serve "$@" 2>"$TMP/server.log" &
	SRV_PID=$!
	for i in $(seq 200); do
		MP=$(sed -n 's/.*metrics on http:\/\/127.0.0.1:\([0-9]*\)\/metrics$/\1/p' "$TMP/server.log")
		[ -n "$MP" ] && break
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.05
	done
	if [ -z "$MP" ]; then
		echo "server did not start:"; cat "$TMP/server.log"; exit 1
	fi
	NP=$(sed -n 's/.*serve: listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$TMP/server.log")
	IP=$(sed -n 's/.*iscsi listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$TMP/server.log")
}
scrape() { curl -sf "http://127.0.0.1:$MP/metrics" >"$TMP/$1"; }
# val FILE SERIES: the value of the sample named exactly SERIES (empty: none)
val() { awk -v s="$2" 'index($0, s " ") == 1 { print $NF; exit }' "$TMP/$1"; }
# eq NAME FILE SERIES WANT
eq() {
	local got
	got=$(val "$2" "$3")
	if [ "$got" = "$4" ]; then pass "$1"; else fail "$1 ($3 = '$got', want $4)"; fi
}
valid() {
	check "$1: prom_check.py (format, cumulative buckets, _count)" python3 "$CHECK" "$TMP/$1"
	if [ "$HAVE_PROMTOOL" = 1 ]; then
		check "$1: promtool check metrics" promtool check metrics <"$TMP/$1"
	fi
}

# --- the bound address -----------------------------------------------------
FREE=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start --nbd=127.0.0.1:0 --metrics="$FREE" --dev=ram --size=1M
check "a bare port is on 127.0.0.1" test "$MP" = "$FREE"
check "ss: listening on 127.0.0.1:$FREE only" bash -c "ss -Hltn 'sport = :$FREE' | awk '{print \$4}' | grep -qx '127.0.0.1:$FREE'"
expect_error "a port in use is refused, naming it" "--metrics=127.0.0.1:$FREE: cannot listen: Address already in use" \
	serve --nbd=127.0.0.1:0 --metrics="127.0.0.1:$FREE" --dev=ram --size=1M
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MP/nope")
check "another path: 404" test "$code" = 404
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$MP/metrics")
check "POST: 405" test "$code" = 405
ctype=$(curl -s -o /dev/null -w '%{content_type}' "http://127.0.0.1:$MP/metrics")
check "Content-Type: text format 0.0.4" test "$ctype" = "text/plain; version=0.0.4; charset=utf-8"
# the stop with a scraper that sent half a request and waits
exec 5<>"/dev/tcp/127.0.0.1/$MP"
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&5
t0=$(date +%s%N)
kill -TERM "$SRV_PID"
wait "$SRV_PID"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
SRV_PID=
exec 5>&-
check "stopped with a scraper connected: exit 0" test "$rc" = 0
check "... within 5 s of SIGTERM (${ms} ms)" test "$ms" -lt 5000
check "... the metrics port is free again" bash -c "! ss -Hltn 'sport = :$FREE' | grep -q ."

# --- the exports -----------------------------------------------------------
# a: ram (target a, LUN 0); b: ram, LUN 1 of target a; f: null failing
# every 2nd request; s: null completing after 1 s (long enough to be
# seen in flight by a scrape on a loaded machine)
start --nbd=127.0.0.1:0 --iscsi=127.0.0.1:0 --metrics=127.0.0.1:0 \
	--dev=ram --size=16M --export=a --export=b --size=8M --iscsi-lun-of=a \
	--export=f --dev=null --size=8M --fail_every=2 \
	--export=s --dev=null --size=8M --irqmode=2 --completion_nsec=1s
N="nbd://127.0.0.1:$NP"
I="iscsi://127.0.0.1:$IP/$T"
scrape s0
valid s0
eq "start: no NBD request on a" s0 'blkstack_export_requests_total{proto="nbd",export="a",dir="write"}' 0
eq "start: no iSCSI request on b" s0 'blkstack_export_requests_total{proto="iscsi",export="b",dir="read"}' 0
check "start: no connection series" bash -c "! grep -q '^blkstack_connection_' '$TMP/s0'"

# NBD: two writes (1 MiB + 64 KiB) and a read of 512 KiB on a
qemu-io -f raw -c 'write -P 0x11 0 1M' -c 'write -P 0x22 1M 64k' -c 'read -P 0x11 0 512k' "$N/a" >"$TMP/qio" 2>&1
check "qemu-io over NBD: wrote and read back" grep -q "read 524288/524288" "$TMP/qio"
# iSCSI: a write of 128 KiB to LUN 0 (a), a read of 256 KiB of LUN 1 (b)
qemu-io -f raw -c 'write -P 0x33 2M 128k' "$I:a/0" >"$TMP/qio" 2>&1
check "qemu-io over iSCSI: wrote" grep -q "wrote 131072/131072" "$TMP/qio"
qemu-io -f raw -c 'read 0 256k' "$I:a/1" >"$TMP/qio" 2>&1
check "qemu-io over iSCSI: read LUN 1" grep -q "read 262144/262144" "$TMP/qio"
# errors: four reads of f each way, every second one fails
qemu-io -f raw -c 'read 0 4k' -c 'read 0 4k' -c 'read 0 4k' -c 'read 0 4k' "$N/f" >/dev/null 2>&1
qemu-io -f raw -c 'read 0 4k' -c 'read 0 4k' -c 'read 0 4k' -c 'read 0 4k' "$I:f/0" >/dev/null 2>&1
scrape s1
valid s1
E='proto="nbd",export="a"'
eq "NBD a: 2 writes" s1 "blkstack_export_requests_total{$E,dir=\"write\"}" 2
eq "NBD a: bytes written = what qemu-io wrote" s1 "blkstack_export_bytes_total{$E,dir=\"write\"}" 1114112
eq "NBD a: 1 read" s1 "blkstack_export_requests_total{$E,dir=\"read\"}" 1
eq "NBD a: bytes read" s1 "blkstack_export_bytes_total{$E,dir=\"read\"}" 524288
eq "NBD a: no errors" s1 "blkstack_export_errors_total{$E,dir=\"write\"}" 0
eq "NBD a: write histogram _count = 2" s1 "blkstack_export_request_duration_seconds_count{$E,dir=\"write\"}" 2
eq "NBD a: +Inf bucket = 2" s1 "blkstack_export_request_duration_seconds_bucket{$E,dir=\"write\",le=\"+Inf\"}" 2
eq "NBD a: one connection opened, none open" s1 "blkstack_export_connections_opened_total{$E}" 1
eq "NBD a: none open now" s1 "blkstack_export_connections{$E}" 0
E='proto="iscsi",export="a"'
eq "iSCSI a: 1 write" s1 "blkstack_export_requests_total{$E,dir=\"write\"}" 1
eq "iSCSI a: bytes written" s1 "blkstack_export_bytes_total{$E,dir=\"write\"}" 131072
eq "iSCSI a: nothing read" s1 "blkstack_export_bytes_total{$E,dir=\"read\"}" 0
other=$(val s1 "blkstack_export_requests_total{$E,dir=\"other\"}")
check "iSCSI a: the login's INQUIRY, READ CAPACITY... as other ($other)" test "${other:-0}" -gt 0
eq "iSCSI b (LUN 1): 1 read" s1 'blkstack_export_requests_total{proto="iscsi",export="b",dir="read"}' 1
eq "iSCSI b: bytes read" s1 'blkstack_export_bytes_total{proto="iscsi",export="b",dir="read"}' 262144
eq "iSCSI b: read histogram _count" s1 'blkstack_export_request_duration_seconds_count{proto="iscsi",export="b",dir="read"}' 1
eq "NBD f: 4 reads" s1 'blkstack_export_requests_total{proto="nbd",export="f",dir="read"}' 4
eq "NBD f: 2 failed" s1 'blkstack_export_errors_total{proto="nbd",export="f",dir="read"}' 2
eq "NBD f: bytes of the 2 that did not" s1 'blkstack_export_bytes_total{proto="nbd",export="f",dir="read"}' 8192
eq "iSCSI f: 4 reads" s1 'blkstack_export_requests_total{proto="iscsi",export="f",dir="read"}' 4
eq "iSCSI f: 2 failed (MEDIUM ERROR)" s1 'blkstack_export_errors_total{proto="iscsi",export="f",dir="read"}' 2
# the block core saw the same data
eq "diskstats a: bytes written = NBD + iSCSI" s1 'blkstack_disk_bytes_total{export="a",dir="write"}' $((1114112 + 131072))
eq "diskstats a: 3 writes completed" s1 'blkstack_disk_completed_total{export="a",dir="write"}' 3
eq "diskstats b: bytes read" s1 'blkstack_disk_bytes_total{export="b",dir="read"}' 262144
eq "diskstats f: 4 errors" s1 'blkstack_disk_errors_total{export="f"}' 4

# --- a connection's series while it is connected ---------------------------
mkfifo "$TMP/cmd"
qemu-io -f raw "$N/a" <"$TMP/cmd" >"$TMP/qio.live" 2>&1 &
QIO_PID=$!
exec 6>"$TMP/cmd"
echo 'write -P 0x44 4M 4k' >&6
CONN='blkstack_connection_requests_total{proto="nbd",export="a",conn="[0-9]+",peer="127.0.0.1:[0-9]+",dir="write"} 1$'
for i in $(seq 100); do
	scrape s2
	grep -qE "^$CONN" "$TMP/s2" && break
	sleep 0.05
done
check "connected: its write in a connection series" grep -qE "^$CONN" "$TMP/s2"
check "connected: 4096 bytes in it" grep -qE '^blkstack_connection_bytes_total\{proto="nbd",export="a",conn="[0-9]+",peer="127.0.0.1:[0-9]+",dir="write"\} 4096$' "$TMP/s2"
eq "connected: the export counts it too" s2 'blkstack_export_requests_total{proto="nbd",export="a",dir="write"}' 3
eq "connected: one connection open" s2 'blkstack_export_connections{proto="nbd",export="a"}' 1
valid s2
echo quit >&6
exec 6>&-
wait "$QIO_PID"
QIO_PID=
scrape s3
check "gone: no connection series" bash -c "! grep -q '^blkstack_connection_requests_total{' '$TMP/s3'"
eq "gone: folded into the export" s3 'blkstack_export_requests_total{proto="nbd",export="a",dir="write"}' 3
eq "gone: bytes kept" s3 'blkstack_export_bytes_total{proto="nbd",export="a",dir="write"}' $((1114112 + 4096))
eq "gone: none open" s3 'blkstack_export_connections{proto="nbd",export="a"}' 0

# an iSCSI session has series for each LUN of its target
mkfifo "$TMP/cmd2"
qemu-io -f raw "$I:a/0" <"$TMP/cmd2" >"$TMP/qio.live" 2>&1 &
QIO_PID=$!
exec 6>"$TMP/cmd2"
echo 'read 0 4k' >&6
for i in $(seq 100); do
	scrape s4
	grep -qE '^blkstack_connection_requests_total\{proto="iscsi",export="a",.*dir="read"\} 1$' "$TMP/s4" && break
	sleep 0.05
done
check "iSCSI connected: LUN 0's read in its series" grep -qE '^blkstack_connection_requests_total\{proto="iscsi",export="a",conn="[0-9]+",peer="127.0.0.1:[0-9]+",dir="read"\} 1$' "$TMP/s4"
check "iSCSI connected: a series for LUN 1 (export b) too" grep -qE '^blkstack_connection_requests_total\{proto="iscsi",export="b",conn="[0-9]+",' "$TMP/s4"
echo quit >&6
exec 6>&-
wait "$QIO_PID"
QIO_PID=

# --- in flight and latency: a 1 s read on s --------------------------------
qemu-io -f raw -c 'read 0 4k' "$N/s" >/dev/null 2>&1 &
QIO_PID=$!
seen=0
for i in $(seq 100); do
	scrape s5
	if [ "$(val s5 'blkstack_export_inflight_requests{proto="nbd",export="s"}')" = 1 ]; then
		seen=1
		break
	fi
	sleep 0.02
done
check "a slow read is in flight while it runs" test "$seen" = 1
check "... in its connection's gauge" grep -qE '^blkstack_connection_inflight_requests\{proto="nbd",export="s",.*\} 1$' "$TMP/s5"
eq "... and the block core's" s5 'blkstack_disk_inflight_requests{export="s",dir="read"}' 1
wait "$QIO_PID"
QIO_PID=
scrape s6
eq "done: none in flight" s6 'blkstack_export_inflight_requests{proto="nbd",export="s"}' 0
eq "its latency is above 0.5 s" s6 'blkstack_export_request_duration_seconds_bucket{proto="nbd",export="s",dir="read",le="0.5"}' 0
eq "... and within 2 s" s6 'blkstack_export_request_duration_seconds_bucket{proto="nbd",export="s",dir="read",le="2"}' 1
valid s6

kill -TERM "$SRV_PID"
wait "$SRV_PID"
rc=$?
SRV_PID=
check "server stopped cleanly" test "$rc" = 0
finish
