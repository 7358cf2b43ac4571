# Helpers for the NBD functional tests; source after lib.sh.
# start_server ARGS...: run `blkstack serve` on a Unix socket in $TMP and a
#   free TCP port; sets SRV_PID, PORT, SOCK, URI (TCP) and UURI (Unix).
#   The server is killed when the test exits.
# stop_server: SIGTERM, wait; returns the server's exit status.
RAW="$(dirname "${BASH_SOURCE[0]}")/nbd_raw.py"
SRV_PID=
trap 'if [ -n "$SRV_PID" ]; then { kill -9 "$SRV_PID"; wait "$SRV_PID"; } 2>/dev/null; fi; rm -rf "$TMP"' EXIT

need() {
	local c
	for c in "$@"; do
		if ! command -v "$c" >/dev/null; then
			echo "SKIP: $c is not installed (scripts/install-deps.sh)"
			exit 77
		fi
	done
}

start_server() {
	local i
	SOCK=$TMP/nbd.$RANDOM.sock
	"$BLKSTACK" serve --nbd=127.0.0.1:0 --unix="$SOCK" "$@" 2>"$TMP/server.log" &
	SRV_PID=$!
	for i in $(seq 100); do
		PORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/server.log")
		if [ -n "$PORT" ] && [ -S "$SOCK" ]; then break; fi
		if ! kill -0 "$SRV_PID" 2>/dev/null; then
			echo "server did not start:"; cat "$TMP/server.log"; SRV_PID=; return 1
		fi
		sleep 0.05
	done
	URI="nbd://127.0.0.1:$PORT"
	UURI="nbd+unix:///?socket=$SOCK"
}

stop_server() {
	local rc
	kill -TERM "$SRV_PID"
	wait "$SRV_PID"
	rc=$?
	SRV_PID=
	return $rc
}

# raw CHECK [ADDRESS [EXPORT]]: run one nbd_raw.py check (default: the TCP port)
raw() {
	timeout 60 python3 "$RAW" "${2:-127.0.0.1:$PORT}" "$1" "${3:-}"
}

alive() { kill -0 "$SRV_PID" 2>/dev/null; }
