#!/usr/bin/env bash
# Clients that keep the handshake going by sending slowly ("slowloris"):
# they are never idle, so the idle timeout alone never ends them.  The
# handshake as a whole is bounded (30 s), and at SIGTERM a handshake still
# trickling bytes is ended within about a second, not waited for: it used
# to hold the stop (and its connection slot) for as long as it kept sending.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
need python3

# drip ADDRESS SECONDS_PER_BYTE READYFILE: greeting, client flags, then an
# NBD_OPT_GO one byte at a time, forever (until the server hangs up)
drip() {
	python3 -c "
import socket, struct, sys, time
s = socket.create_connection(('127.0.0.1', $PORT)); s.recv(18)
s.sendall(struct.pack('>I', 3))
open('$3', 'w').close()
msg = struct.pack('>QII', 0x49484156454F5054, 7, 1 << 20) * 1000
t0 = time.time()
def hung_up():
    try:
        return s.recv(4096, socket.MSG_DONTWAIT) == b''
    except BlockingIOError:
        return False
    except OSError:
        return True
try:
    for b in msg:
        if time.time() - t0 > 50:
            break  # the server never hung up: give up (the check fails)
        s.send(bytes([b]))
        time.sleep($2)
        if hung_up():
            break
except OSError:
    pass
while time.time() - t0 < 50:
    try:
        if s.recv(4096) == b'':
            break
    except BlockingIOError:
        time.sleep(0.1)
    except OSError:
        break
print('%.1f' % (time.time() - t0))
" 2>/dev/null
}

start_server --size=1M || exit 1
# 1: a byte every 0.5 s: never idle, dropped at the 30 s handshake limit
drip "$PORT" 0.5 "$TMP/slow.ready" >"$TMP/slow.out" &
SLOW=$!
for i in $(seq 200); do [ -e "$TMP/slow.ready" ] && break; sleep 0.05; done
check "the slow client is in the handshake" test -e "$TMP/slow.ready"
wait "$SLOW"
check "a client trickling its handshake is dropped by the 30 s limit (took $(cat "$TMP/slow.out") s)" \
	awk -v t="$(cat "$TMP/slow.out")" 'BEGIN { exit !(t != "" && t >= 25 && t < 45) }'
check "logged as a timeout" grep -q "handshake failed: Connection timed out" "$TMP/server.log"
check "the server still serves" raw alive
# 2: a byte every 20 ms, then SIGTERM: the stop must not wait for it
drip "$PORT" 0.02 "$TMP/fast.ready" >/dev/null &
FAST=$!
for i in $(seq 200); do [ -e "$TMP/fast.ready" ] && break; sleep 0.05; done
check "the trickling client is in the handshake" test -e "$TMP/fast.ready"
sleep 1
t0=$(date +%s%N)
kill -TERM "$SRV_PID"
( sleep 20; kill -9 "$SRV_PID" 2>/dev/null ) &
WD=$!
wait "$SRV_PID"
rc=$?
SRV_PID=
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill "$WD" 2>/dev/null
kill "$FAST" 2>/dev/null
wait "$FAST" 2>/dev/null
check "SIGTERM with a handshake still trickling: status 0" test $rc -eq 0
check "stopped within 5 s (took $ms ms)" test $ms -lt 5000
finish
