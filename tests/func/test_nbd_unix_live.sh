#!/usr/bin/env bash
# Regression (issue 11): a second server took over a live Unix socket.
# `serve --unix=X --size=1M` then the same with --size=2M: nbdinfo saw
# 2 MiB, and when the second stopped it deleted the path, leaving the first
# unreachable.  Now: a live socket is "address in use"; only a stale one
# (its server gone) is replaced; a server removes the path at exit only if
# it is still its own socket.
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/nbd_lib.sh"
need nbdinfo

S=$TMP/x.sock
size() { nbdinfo --size "nbd+unix:///?socket=$1" 2>/dev/null; }

# wait_sock PID PATH: the server is listening, or it died
wait_sock() {
	local i
	for i in $(seq 100); do
		[ -S "$2" ] && nbdinfo --size "nbd+unix:///?socket=$2" >/dev/null 2>&1 && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

"$BLKSTACK" serve --unix="$S" --dev=ram --size=1M 2>"$TMP/a.log" &
A=$!
wait_sock $A "$S" || { cat "$TMP/a.log"; fail "first server did not start"; finish; }
check "first server serves 1 MiB" test "$(size "$S")" = 1048576

# the second server must refuse, not take over
timeout 10 "$BLKSTACK" serve --unix="$S" --dev=ram --size=2M 2>"$TMP/b.log"
rc=$?
check "second server on a live socket exits 1 (got $rc)" test $rc -eq 1
check "its error says address in use and names the path" \
	grep -q -- "--unix=$S: address in use" "$TMP/b.log"
check "the first still answers, with its 1 MiB" test "$(size "$S")" = 1048576

# a stale socket (its server killed, the file left behind) is replaced
kill -9 $A
wait $A 2>/dev/null
check "SIGKILL leaves the socket file behind" test -S "$S"
"$BLKSTACK" serve --unix="$S" --dev=ram --size=2M 2>"$TMP/c.log" &
C=$!
wait_sock $C "$S" || { cat "$TMP/c.log"; fail "server on a stale socket did not start"; }
check "a stale socket is replaced: 2 MiB now" test "$(size "$S")" = 2097152

# a server whose path was taken over (removed by hand, then another server
# bound it) leaves the new socket alone when it stops
rm -f "$S"
"$BLKSTACK" serve --unix="$S" --dev=ram --size=3M 2>"$TMP/d.log" &
D=$!
wait_sock $D "$S" || { cat "$TMP/d.log"; fail "server on a freed path did not start"; }
kill -TERM $C
wait $C
check "the older server stopped cleanly" test $? -eq 0
check "and left the newer server's socket in place" test -S "$S"
check "which still answers with 3 MiB" test "$(size "$S")" = 3145728
kill -TERM $D
wait $D
check "a server removes its own socket at exit" test ! -e "$S"
finish
