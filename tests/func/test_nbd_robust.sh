#!/usr/bin/env bash
# Bad input from NBD clients: garbage and truncated handshakes, unknown
# options, invalid commands, hang-ups mid-request.  Each gets the error the
# protocol names (or a hard disconnect where the stream cannot be
# resynchronised), the connection stays usable where the protocol allows,
# and the server keeps serving the next client.  Raw wire checks are in
# nbd_raw.py.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
need python3

start_server --dev=ram --size=64M --export=rw --export=ro --read-only --size=8M || exit 1

check "a client can read" raw alive
check "garbage handshakes are dropped" raw garbage_greeting
check "server alive after garbage" alive
check "truncated handshakes and requests" raw truncated
check "server alive after truncations" alive
check "option errors: UNSUP, POLICY, INVALID, UNKNOWN, TOO_BIG; session goes on" raw options
check "command errors: EINVAL, ENOSPC, EOVERFLOW, ENOTSUP; connection stays usable" raw commands
check "commands over the Unix socket" raw commands "unix:$SOCK"
check "read-only export: EPERM for writes, reads work" raw read_only "127.0.0.1:$PORT" ro
check "8 pipelined 32 MiB writes (over the 64 MiB per-connection budget)" raw big_pipeline
check "acknowledged writes, then a hang-up mid 16 MiB write" raw write_then_cut
check "server survives the hang-up" alive
check "acknowledged writes intact for the next client" raw acked_intact
check "half-closed client (TCP) gets every reply, with and without DISC" raw half_close
check "half-closed client (Unix socket) gets every reply" raw half_close "unix:$SOCK"

# many connections at once, some misbehaving, while others work
pids=()
for i in 1 2 3 4; do
	raw garbage_greeting &
	pids+=($!)
	NBD_BASE=$((i * 1048576)) raw commands >"$TMP/par$i" 2>&1 &
	pids+=($!)
done
wait "${pids[@]}"
ok=1
for i in 1 2 3 4; do [ -s "$TMP/par$i" ] && ok=0; done
check "parallel good clients unharmed by bad ones" test $ok -eq 1
check "a client can still read at the end" raw alive
check "server never crashed" alive
check "protocol violations are logged" grep -q "protocol" "$TMP/server.log"
stop_server
check "clean stop after all that (status 0)" test $? -eq 0
finish
