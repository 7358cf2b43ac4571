# Shared helpers for functional tests. Usage: source lib.sh "$@"
set -uo pipefail
BLKSTACK=${1:?usage: $0 path/to/blkstack}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
NFAIL=0
NPASS=0

pass() { NPASS=$((NPASS + 1)); echo "ok - $*"; }
fail() { NFAIL=$((NFAIL + 1)); echo "FAIL - $*"; }

# check NAME CMD...: pass if CMD succeeds
check() {
	local name=$1
	shift
	if "$@" >/dev/null; then pass "$name"; else fail "$name"; fi
}

# expect_error NAME PATTERN ARGS...: blkstack fails (exit 1) and stderr matches PATTERN
expect_error() {
	local name=$1 pattern=$2 rc
	shift 2
	"$BLKSTACK" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -eq 1 ] && grep -qE -- "$pattern" "$TMP/err"; then
		pass "$name"
	else
		fail "$name (rc=$rc, stderr: $(head -c 300 "$TMP/err"))"
	fi
}

# sanitizer: the sanitizer the blkstack under test was built with: asan,
# tsan or none (ctest sets BLK_SANITIZER; run by hand, ldd tells).
sanitizer() {
	local libs
	if [ -n "${BLK_SANITIZER:-}" ]; then
		echo "$BLK_SANITIZER"
		return
	fi
	libs=$(ldd "$BLKSTACK" 2>/dev/null)
	case $libs in
	*libasan*) echo asan ;;
	*libtsan*) echo tsan ;;
	*) echo none ;;
	esac
}

# jq_true FILTER FILE: FILE holds JSON and FILTER is true of it (jq 1.6's
# -e alone passes an empty FILE: a run that printed nothing)
jq_true() {
	[ -s "$2" ] && jq -e "$1" "$2" >/dev/null
}

finish() {
	echo "$NPASS passed, $NFAIL failed"
	[ "$NFAIL" -eq 0 ]
}

# --- tgt (tgtd from Debian's tgt; root): a target no one here wrote ---
# TGT_PID and TGT_CTL: the tgtd of tgt_test_start and its management
# socket number; empty when none.
TGT_PID='' TGT_CTL=''

# tgt_test_start PORT LOG [PORTAL_OPTS]: tgtd in the foreground (setsid),
# its iSCSI portal on 127.0.0.1:PORT (",PORTAL_OPTS" appended: e.g.
# nop_interval=1), output to LOG, a management socket no other tgtd has
# (-C N, N from PORT % 32767 + 1 up; 0 is the system one's).  Returns once
# tgtadm answers, 1 when it does not within 10 s.  The test's cleanup
# calls tgt_test_stop.
tgt_test_start() {
	local portal=127.0.0.1:$1${3:+,$3}
	TGT_CTL=$(($1 % 32767 + 1))
	while [ -e "/var/run/tgtd/socket.$TGT_CTL" ] || [ -e "/var/run/tgtd/socket.$TGT_CTL.lock" ]; do
		TGT_CTL=$((TGT_CTL % 32767 + 1))
	done
	setsid tgtd -f -C "$TGT_CTL" --iscsi portal="$portal" >"$2" 2>&1 &
	TGT_PID=$!
	for _ in $(seq 100); do
		tgtadm -C "$TGT_CTL" --op show --mode system >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# tadm ARG...: tgtadm --lld iscsi on tgt_test_start's tgtd
tadm() { tgtadm -C "$TGT_CTL" --lld iscsi "$@"; }

# tgt_test_lun TID IQN IMG: target TID named IQN, LUN 1 over the file IMG
# (backing store rdwr), ACL ALL
tgt_test_lun() {
	tadm --op new --mode target --tid "$1" -T "$2" &&
		tadm --op new --mode logicalunit --tid "$1" --lun 1 --bstype rdwr --backing-store "$3" &&
		tadm --op bind --mode target --tid "$1" -I ALL
}

# tgt_test_stop: stop tgt_test_start's tgtd, if any.  tgtd ignores
# SIGTERM: its targets (each one tgtadm lists), then the system, go
# first; SIGKILL after 5 s; its socket files removed.
tgt_test_stop() {
	local tid
	[ -n "$TGT_PID" ] || return 0
	for tid in $(timeout 5 tgtadm -C "$TGT_CTL" --lld iscsi --op show --mode target 2>/dev/null |
		sed -n 's/^Target \([0-9]*\):.*/\1/p'); do
		timeout 5 tgtadm -C "$TGT_CTL" --lld iscsi --op delete --force --mode target --tid "$tid" >/dev/null 2>&1
	done
	timeout 5 tgtadm -C "$TGT_CTL" --op delete --mode system >/dev/null 2>&1
	for _ in $(seq 50); do kill -0 "$TGT_PID" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$TGT_PID" 2>/dev/null
	rm -f "/var/run/tgtd/socket.$TGT_CTL" "/var/run/tgtd/socket.$TGT_CTL.lock"
	TGT_PID=''
}
