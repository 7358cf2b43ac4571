#!/usr/bin/env bash
# Every bench/ script prints the machine with its figures (bench/lib.sh):
# kernel, CPU model, nproc, load average at start and end, and the exact
# commands it ran.  A figure without its machine misleads: the same uring
# benchmark read 1.12x fio on one machine and 0.22x on another.
#   - static: each bench/*.sh sources bench/lib.sh, calls
#     bench_machine_start before bench_machine_end, and runs something
#     through bench_cmd/bench_exec (or lists the one it runs per file of a
#     corpus with bench_show_cmd); so a new script without the block fails;
#   - shellcheck -x over bench/*.sh, where shellcheck is installed;
#   - bench/lib.sh itself: the fields hold this machine's values, each
#     command line is listed once and re-runs to the same arguments,
#     bench_exec leaves $! on the command;
#   - bench/nvme-sqe-init.sh 1 1 for real (the fastest script, ~8 s): the
#     start block, then the figures, the commands, the end block.
source "$(dirname "$0")/lib.sh" "$@"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BLKSTACK=$(realpath "$BLKSTACK")

# Scripts being rewritten elsewhere to source bench/lib.sh.  Once one does,
# this test fails until it is taken off the list, so the list cannot hide
# a script that loses its block later.
PENDING=()

# --- static: every script has the block ---
n=0
for f in "$ROOT"/bench/*.sh; do
	s=$(basename "$f")
	[ "$s" = lib.sh ] && continue
	n=$((n + 1))
	why=
	grep -Eq '^[[:space:]]*(\.|source)[[:space:]]+.*lib\.sh"?[[:space:]]*$' "$f" ||
		why+=" does not source bench/lib.sh;"
	a=$(grep -nE '^[[:space:]]*bench_machine_start([[:space:]]|$)' "$f" | head -1 | cut -d: -f1)
	b=$(grep -nE '^[[:space:]]*bench_machine_end([[:space:]]|$)' "$f" | tail -1 | cut -d: -f1)
	[ -n "$a" ] || why+=" no bench_machine_start;"
	[ -n "$b" ] || why+=" no bench_machine_end;"
	[ -z "$a" ] || [ -z "$b" ] || [ "$a" -lt "$b" ] || why+=" bench_machine_end before bench_machine_start;"
	# bench_show_cmd: one line for a command run per file of a corpus
	grep -Eq '(^|[[:space:]($])bench_(cmd|exec|show_cmd) ' "$f" ||
		why+=" no command run through bench_cmd/bench_exec (or listed by bench_show_cmd);"
	if [[ " ${PENDING[*]} " == *" $s "* ]]; then
		if [ -z "$why" ]; then
			fail "bench/$s: has the machine block now: take it off PENDING in $0 (and its note in docs/bench.md)"
		else
			pass "bench/$s: pending its rewrite (not checked)"
		fi
	elif [ -z "$why" ]; then
		pass "bench/$s: sources lib.sh, machine block at start and end, commands recorded"
	else
		fail "bench/$s:$why"
	fi
done
check "bench/ has scripts (found $n)" test "$n" -ge 5

if command -v shellcheck >/dev/null; then
	if (cd "$ROOT" && shellcheck -x bench/*.sh) >"$TMP/sc" 2>&1; then
		pass "shellcheck -x bench/*.sh"
	else
		fail "shellcheck -x bench/*.sh: $(head -c 1500 "$TMP/sc")"
	fi
else
	echo "skip - shellcheck is not installed (scripts/install-deps.sh)"
fi

# --- bench/lib.sh: the fields and the commands ---
cat >"$TMP/probe.sh" <<'EOF'
set -euo pipefail
. "$1/bench/lib.sh"
bench_machine_start bash no-such-tool-xyz
out=$(bench_cmd printf '<%s>' "a b" "it's" '' 'x?y' '$HOME' | tr '<' '[')
echo "probe output: $out"
bench_cmd printf '<%s>' "a b" "it's" '' 'x?y' '$HOME' >/dev/null
bench_cmd true
bench_exec sleep 30 &
p=$!
# $! is the subshell until it execs: the same pid must turn into sleep
for _ in $(seq 100); do
	[ "$(cat "/proc/$p/comm")" = sleep ] && break
	sleep 0.05
done
echo "probe comm: $(cat "/proc/$p/comm")"
kill "$p"
wait "$p" || true
bench_machine_end
EOF
BLKSTACK=$BLKSTACK bash "$TMP/probe.sh" "$ROOT" probe-arg >"$TMP/probe.out" 2>"$TMP/probe.err"
check "lib.sh: probe exits 0 under set -euo pipefail" test $? -eq 0
field() { sed -n "/^$1:\$/,/^\$/s/^  $2: *//p" "$TMP/probe.out"; }
check "lib.sh: kernel is uname -r" test "$(field machine kernel)" = "$(uname -r) $(uname -m)"
check "lib.sh: nproc is nproc" grep -Eq "^$(nproc)( |\$)" <<<"$(field machine nproc)"
check "lib.sh: cpu model named" grep -q . <<<"$(field machine cpu)"
check "lib.sh: load average at start" grep -Eq '^[0-9.]+ [0-9.]+ [0-9.]+ \(1, 5, 15 min\) at start' <<<"$(field machine load)"
check "lib.sh: memory" grep -Eq '^[0-9.]+ GiB$' <<<"$(field machine memory)"
check "lib.sh: date in UTC" grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC$' <<<"$(field machine date)"
check "lib.sh: commit" grep -q . <<<"$(field machine commit)"
check "lib.sh: blkstack version" grep -qF "$("$BLKSTACK" --version)" <<<"$(field machine blkstack)"
check "lib.sh: peer version" test "$(field machine bash)" = "$(bash --version | head -1)"
check "lib.sh: missing peer" test "$(field machine no-such-tool-xyz)" = "not installed"
check "lib.sh: script and its arguments" grep -qF "probe.sh $ROOT probe-arg" <<<"$(field machine script)"
check "lib.sh: load average at end" grep -Eq '^[0-9.]+ [0-9.]+ [0-9.]+ \(1, 5, 15 min\) at end' \
	<<<"$(field "machine at the end" load)"
check "lib.sh: wall time" grep -Eq '^[0-9]+\.[0-9] s$' <<<"$(field "machine at the end" wall)"
check "lib.sh: a command run twice is listed once" \
	test "$(sed -n '/^commands:$/,/^machine at the end:$/p' "$TMP/probe.out" | grep -c '^  printf ')" -eq 1
check "lib.sh: commands in the order first run" \
	test "$(sed -n '/^commands:$/,/^machine at the end:$/s/^  \([a-z]*\).*/\1/p' "$TMP/probe.out" | tr '\n' ' ')" = "printf true sleep "
# the listed line, run by a shell, passes the same arguments
line=$(sed -n 's/^  \(printf .*\)/\1/p' "$TMP/probe.out")
check "lib.sh: listed command re-runs to the same arguments" \
	test "$(eval "$line" | tr '<' '[')" = "$(sed -n 's/^probe output: //p' "$TMP/probe.out")"
# shellcheck disable=SC2016 # $HOME is an argument, not to be expanded
check "lib.sh: bench_cmd keeps stdout in the pipeline" grep -qF 'probe output: [a b>[it'"'"'s>[>[x?y>[$HOME>' "$TMP/probe.out"
check "lib.sh: bench_exec leaves \$! on the command" grep -qx 'probe comm: sleep' "$TMP/probe.out"
check "lib.sh: nothing on stderr" test ! -s "$TMP/probe.err"

# --- one script for real ---
if [ "$(sanitizer)" != none ]; then
	echo "skip - bench/nvme-sqe-init.sh: valgrind cannot run a sanitizer build"
elif ! command -v valgrind >/dev/null || ! command -v jq >/dev/null; then
	echo "skip - bench/nvme-sqe-init.sh: needs valgrind and jq (scripts/install-deps.sh)"
else
	BLKSTACK=$BLKSTACK timeout -k 10 120 "$ROOT/bench/nvme-sqe-init.sh" 1 1 >"$TMP/run.out" 2>"$TMP/run.err"
	rc=$? # before the check's name runs tail, which sets $? anew
	check "nvme-sqe-init.sh 1 1 exits 0 ($(tail -c 300 "$TMP/run.err"))" test $rc -eq 0
	lineno() { grep -nm1 -E "$1" "$TMP/run.out" | cut -d: -f1; }
	for k in date kernel cpu nproc memory virt load commit blkstack valgrind script; do
		check "nvme-sqe-init.sh: start block has $k" grep -Eq "^  $k: +[^ ]" "$TMP/run.out"
	done
	check "nvme-sqe-init.sh: nproc is this machine's" grep -Eq "^  nproc: +$(nproc)( |\$)" "$TMP/run.out"
	check "nvme-sqe-init.sh: order: machine, figures, commands, end" \
		test "$(lineno '^machine:$')" -lt "$(lineno '^median IOPS')" -a \
		"$(lineno '^median IOPS')" -lt "$(lineno '^commands:$')" -a \
		"$(lineno '^commands:$')" -lt "$(lineno '^machine at the end:$')"
	check "nvme-sqe-init.sh: commands list blkstack bench as run" \
		grep -qF "  timeout -k 10 61 $BLKSTACK bench --dev=nvme --nvme-ns=null" "$TMP/run.out"
	check "nvme-sqe-init.sh: commands list the callgrind runs" \
		grep -qE "^  valgrind --tool=callgrind .* --nvme-sqe-init=fields" "$TMP/run.out"
	check "nvme-sqe-init.sh: load average at end" grep -Eq '^  load: .* at end' "$TMP/run.out"
fi

finish
