#!/usr/bin/env bash
# Stopping blkstack serve under load: SIGTERM while fio writes to a uring
# (file) export and another client sits in the handshake.  The server must
# exit with status 0 within a bound, log the stop, and every write fio saw
# acknowledged must be in the file (fio's verify_only pass over the file
# afterwards, through a new server, finds no bad block).
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
need fio jq python3
fio --enghelp 2>/dev/null | grep -w nbd >/dev/null || { echo "SKIP: fio without the nbd engine"; exit 77; }

start_server --dev=uring --filename="$TMP/disk.img" --size=64M || exit 1
# one complete pass first: every block then holds a valid verify header,
# and the interrupted passes below only ever replace one with another
timeout 120 fio --verify_state_save=0 --ioengine=nbd --uri="$URI" --name=w --rw=write --bs=64k --iodepth=16 \
	--size=64M --verify=crc32c --do_verify=0 >/dev/null 2>&1
check "first full pass written" test $? -eq 0

# a client that connects and never finishes the handshake
python3 -c "
import socket, time
s = socket.create_connection(('127.0.0.1', $PORT)); s.recv(18)
open('$TMP/lurker.ready', 'w').close(); time.sleep(60)" &
LURKER=$!
# python3 can take seconds to start on a loaded machine: the lurker must be
# in the handshake before the stop, or the check below tests nothing
for i in $(seq 200); do [ -e "$TMP/lurker.ready" ] && break; sleep 0.05; done
check "the lurker is in the handshake" test -e "$TMP/lurker.ready"
# fio: sequential 64k writes with verify headers, runs until the server goes
timeout 120 fio --verify_state_save=0 --ioengine=nbd --uri="$URI" --name=w --rw=write --bs=64k --iodepth=16 \
	--size=64M --loops=1000 --time_based --runtime=60 --verify=crc32c --do_verify=0 \
	--output-format=json >"$TMP/fio.out" 2>&1 &
FIO=$!
sleep 2
check "fio is writing" alive
t0=$(date +%s%N)
kill -TERM "$SRV_PID"
wait "$SRV_PID"
rc=$?
SRV_PID=
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "SIGTERM under load: status 0" test $rc -eq 0
check "stopped within 5 s (took $ms ms)" test $ms -lt 5000
check "stop logged" grep -q "stopped (signal 15)" "$TMP/server.log"
check "device flushed at stop" grep -q "nbd: export '': flushed" "$TMP/server.log"
check "the writing connection ended because the server stopped" grep -q "server stopping" "$TMP/server.log"
check "the handshake lurker was let go" grep -qE "handshake failed|handshake ended" "$TMP/server.log"
wait "$FIO"
kill "$LURKER" 2>/dev/null
wait "$LURKER" 2>/dev/null

# whatever fio wrote and saw acknowledged carries a valid verify header:
# read the whole file back through a new server and count blocks that
# have a header (written) and check them
start_server --dev=uring --filename="$TMP/disk.img" --read-only || exit 1
timeout 120 fio --verify_state_save=0 --ioengine=nbd --uri="$URI" --name=w --rw=write --bs=64k --iodepth=16 \
	--size=64M --verify=crc32c --verify_only=1 --output-format=json 2>/dev/null |
	sed -n '/^{/,$p' >"$TMP/verify.json"
# an interrupted write could only show up as a torn or stale block
check "acknowledged data verifies after the stop" jq -e '.jobs[0].error == 0' "$TMP/verify.json"
stop_server
check "second server stops with status 0" test $? -eq 0
finish
