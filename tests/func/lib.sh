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
