# shellcheck shell=bash
# Shared by every bench script: the machine a figure came from, and the
# exact commands that made it.  The same uring benchmark once read 1.12x
# fio on one machine and 0.22x on another, because fio itself ran 2.6x
# faster there; a figure without its machine misleads.
#
# Source it right after the script's `cd` to the repository root (with no
# arguments, so that it sees the script's own), then:
#   bench_machine_start [TOOL...]  before the first figure: date, kernel,
#                                  CPU, nproc, memory, virtualization,
#                                  load average, blkstack commit and build,
#                                  and the versions of the peers TOOL...
#                                  (fio, nbdkit, libnbd, libiscsi, valgrind,
#                                  perf...)
#   bench_cmd CMD [ARG...]         run CMD, recording its command line for
#                                  the "commands:" section
#   bench_exec CMD [ARG...]        the same, but exec: for `bench_exec
#                                  server ... &`, so that $! is the
#                                  server's pid (only in a subshell: `&`
#                                  or `$(...)`)
#   bench_machine_end              after the last figure: each distinct
#                                  command line once, in the order first
#                                  run, then the load average at the end
#                                  and the script's wall time
# Everything goes to stdout, with the figures, so that a saved run keeps
# its machine.  set -euo pipefail safe.

BENCH_SCRIPT=$0
BENCH_ARGS=("$@")
BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_T0=$(date +%s.%N)
# Command lines are recorded from subshells too (pipelines, $(...), &),
# so they go to a file, not an array.  The file is unlinked at once and
# read back through /dev/fd: nothing to clean up, whatever way the
# script exits.
BENCH_CMD_FILE=$(mktemp)
exec {BENCH_CMD_FD}>>"$BENCH_CMD_FILE"
rm -f "$BENCH_CMD_FILE"

# bench_need CMD...: exit 1, naming the first CMD not installed and the
# install script, unless all are
bench_need() {
	local c
	for c; do
		command -v "$c" >/dev/null || { echo "$c is not installed: scripts/install-deps.sh" >&2; exit 1; }
	done
}

# bench_field NAME VALUE: one "  name: value" line of a machine block
bench_field() { printf '  %-10s %s\n' "$1:" "$2"; }

# bench_loadavg WHEN: the 1, 5 and 15 minute load averages and the
# runnable/total scheduling entities now, from /proc/loadavg
bench_loadavg() {
	local l1 l5 l15 run _
	read -r l1 l5 l15 run _ </proc/loadavg
	echo "$l1 $l5 $l15 (1, 5, 15 min) at $1; $run runnable/threads"
}

# bench_cpu: the CPU model, with family/model/stepping where the
# hypervisor hides the name ("AMD EPYC")
bench_cpu() {
	local name
	name=$(awk -F': *' '$1 ~ /^model name/ { print $2; exit }' /proc/cpuinfo)
	[ -n "$name" ] || name=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
	[ -n "$name" ] || name=unknown
	echo "$name$(awk -F': *' '
		$1 ~ /^cpu family/ { f = $2 } $1 ~ /^model\t/ { m = $2 } $1 ~ /^stepping/ { s = $2 }
		/^$/ { exit }
		END { if (f != "") printf " (family %s, model %s, stepping %s)", f, m, s }' /proc/cpuinfo)"
}

# bench_virt: systemd-detect-virt's answer and lscpu's hypervisor, when known
bench_virt() {
	local v h
	v=$(systemd-detect-virt 2>/dev/null || true)
	h=$(lscpu 2>/dev/null | sed -n 's/^Hypervisor vendor: *//p' | head -1)
	echo "${v:-unknown}${h:+, hypervisor $h}"
}

# bench_version TOOL: the first line of TOOL's version, or "not installed"
bench_version() {
	case $1 in
	libnbd) # fio's nbd engine links libnbd; nbdinfo reports its version
		nbdinfo --version 2>/dev/null | grep '^libnbd' || echo "not installed (no nbdinfo)" ;;
	libiscsi) # iscsi-perf has no --version; the library's package has one
		dpkg-query -W -f='${Version}\n' libiscsi7 2>/dev/null ||
			pkg-config --modversion libiscsi 2>/dev/null || echo "not installed" ;;
	*)
		if command -v "$1" >/dev/null; then
			"$1" --version 2>&1 | head -1
		else
			echo "not installed"
		fi ;;
	esac
}

# bench_blkstack: the binary's version and its CMake build type (an ASan
# build is several times slower)
bench_blkstack() {
	local cache type=
	cache=$(dirname "$BLKSTACK")/CMakeCache.txt
	[ -f "$cache" ] && type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$cache") &&
		grep -q '^BLK_SANITIZE:BOOL=ON' "$cache" && type+=", sanitizers"
	echo "$BLKSTACK: $("$BLKSTACK" --version 2>/dev/null || echo "no --version")${type:+ ($type)}"
}

bench_machine_start() {
	local t online
	online=$(getconf _NPROCESSORS_ONLN)
	echo "machine:"
	bench_field date "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	bench_field kernel "$(uname -r) $(uname -m)"
	bench_field cpu "$(bench_cpu)"
	if [ "$(nproc)" = "$online" ]; then
		bench_field nproc "$(nproc)"
	else
		bench_field nproc "$(nproc) ($online online)"
	fi
	bench_field memory "$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
	bench_field virt "$(bench_virt)"
	bench_field load "$(bench_loadavg start)"
	bench_field commit "$(git -C "$BENCH_ROOT" describe --always --dirty 2>/dev/null || echo "not a git checkout")"
	[ -z "${BLKSTACK:-}" ] || bench_field blkstack "$(bench_blkstack)"
	for t; do
		bench_field "$t" "$(bench_version "$t")"
	done
	bench_field script "$BENCH_SCRIPT${BENCH_ARGS[*]:+ ${BENCH_ARGS[*]}}"
	echo
}

# bench_show_cmd CMD [ARG...]: record a command line, each argument quoted
# for a shell only where it needs it
bench_show_cmd() {
	local w q line=
	for w; do
		case $w in
		'' | *[!A-Za-z0-9_./:=,+@%-]*) q="'${w//\'/\'\\\'\'}'" ;;
		*) q=$w ;;
		esac
		line+="${line:+ }$q"
	done
	printf '%s\n' "$line" >&"$BENCH_CMD_FD"
}

bench_cmd() {
	bench_show_cmd "$@"
	"$@"
}

bench_exec() {
	bench_show_cmd "$@"
	exec "$@"
}

bench_machine_end() {
	echo
	echo "commands:"
	awk '!seen[$0]++ { print "  " $0 }' "/dev/fd/$BENCH_CMD_FD"
	echo "machine at the end:"
	bench_field load "$(bench_loadavg end)"
	bench_field wall "$(awk -v a="$BENCH_T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }')"
}

# median: the median of the numbers on stdin, one per line
median() { sort -g | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# calc EXPR: an awk expression's value, 6 decimals
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }

# bench_iops_cpu OUT CMD [ARG...]: run a fio-compatible command (fio or
# blkstack bench) with --output-format=json under /usr/bin/time, recording
# its command line; append "IOPS us_per_io" to OUT: all jobs, both
# directions, and the CPU time of the whole process tree (io-wq workers and
# fio's job processes included) over its I/Os
bench_iops_cpu() {
	local out=$1 t j
	shift
	t=$(mktemp)
	j=$(mktemp)
	bench_show_cmd "$@"
	/usr/bin/time -f "%U %S" -o "$t" "$@" --output-format=json >"$j"
	jq -r --arg t "$(cat "$t")" '
		([.jobs[] | .read.iops + .write.iops] | add) as $iops |
		([.jobs[] | .read.total_ios + .write.total_ios] | add) as $ios |
		($t | split(" ") | map(tonumber) | add) as $cpu |
		"\($iops) \($cpu / $ios * 1e6)"' "$j" >>"$out"
	rm -f "$t" "$j"
}

# --- processes and ports (the servers a script starts) ---

# free_port: a TCP port on 127.0.0.1 that nothing listens on now
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# gone PID: the process has exited (a zombie not yet reaped counts)
gone() {
	local st=
	[ -e "/proc/$1" ] || return 0
	read -r _ _ st _ <"/proc/$1/stat" 2>/dev/null || return 0
	[ "$st" = Z ]
}

# stop_pid PID SIGNAL: SIGNAL, up to 5 s, then SIGKILL (said on stderr);
# reaps it when it is the script's child.  Never fails.
stop_pid() {
	kill "-$2" "$1" 2>/dev/null || true
	for _ in $(seq 50); do
		gone "$1" && break
		sleep 0.1
	done
	if ! gone "$1"; then
		echo "$(basename "$BENCH_SCRIPT"): pid $1 ignored SIG$2 for 5 s: SIGKILL" >&2
		kill -KILL "$1" 2>/dev/null || true
	fi
	wait "$1" 2>/dev/null || true
}

# --- tgt (tgtd, Debian's tgt package; root) ---
# TGT_PID and TGT_CTL: the tgtd that tgt_start started and its management
# socket number (tgtadm -C "$TGT_CTL"); empty when none.
TGT_PID='' TGT_CTL=''

# tgt_start PORT LOG: tgtd in the foreground, its iSCSI portal on
# 127.0.0.1:PORT, its output to LOG, under setsid (a Ctrl-C, SIGINT to
# the terminal's process group, reaches the script and its clients, not
# the target: the clients end their runs against a live target and the
# cleanup stops it after them).  Its management socket,
# /var/run/tgtd/socket.N (-C N, 1..32767), is one no other tgtd has (0,
# the default, is the system one's): N from PORT % 32767 + 1 up.  Sets
# TGT_PID and TGT_CTL and returns once tgtadm answers; returns 1, LOG on
# stderr, when tgtd exits first or does not answer in 10 s.  The caller's
# cleanup calls tgt_stop.
tgt_start() {
	local port=$1 log=$2
	TGT_CTL=$((port % 32767 + 1))
	while [ -e "/var/run/tgtd/socket.$TGT_CTL" ] || [ -e "/var/run/tgtd/socket.$TGT_CTL.lock" ]; do
		TGT_CTL=$((TGT_CTL % 32767 + 1))
	done
	bench_exec setsid tgtd -f -C "$TGT_CTL" --iscsi portal=127.0.0.1:"$port" >"$log" 2>&1 &
	TGT_PID=$!
	for _ in $(seq 100); do
		tgtadm -C "$TGT_CTL" --op show --mode system >/dev/null 2>&1 && return 0
		gone "$TGT_PID" && break
		sleep 0.1
	done
	cat "$log" >&2
	return 1
}

# tgt_target TID IQN LUN IMG: target TID named IQN, LUN LUN over the file
# IMG (backing store rdwr: pread/pwrite by tgtd's worker threads, tgt's
# default), ACL ALL (any initiator)
tgt_target() {
	bench_cmd tgtadm -C "$TGT_CTL" --lld iscsi --op new --mode target --tid "$1" -T "$2"
	bench_cmd tgtadm -C "$TGT_CTL" --lld iscsi --op new --mode logicalunit --tid "$1" --lun "$3" \
		--bstype rdwr --backing-store "$4"
	bench_cmd tgtadm -C "$TGT_CTL" --lld iscsi --op bind --mode target --tid "$1" -I ALL
}

# tgt_del TID: delete target TID (--force: even with sessions); never fails
tgt_del() {
	timeout 5 tgtadm -C "$TGT_CTL" --lld iscsi --op delete --force --mode target --tid "$1" >/dev/null 2>&1 || true
}

# tgt_stop: stop the tgtd of tgt_start, if any.  tgtd ignores SIGTERM:
# its targets go first (each one tgtadm lists), then the system, and it
# exits by itself; SIGKILL after 5 s.  Removes its socket files, clears
# TGT_PID.  Never fails (for a cleanup under set -e or +e).
tgt_stop() {
	local tid
	[ -n "$TGT_PID" ] || return 0
	for tid in $(timeout 5 tgtadm -C "$TGT_CTL" --lld iscsi --op show --mode target 2>/dev/null |
		sed -n 's/^Target \([0-9]*\):.*/\1/p'); do
		tgt_del "$tid"
	done
	timeout 5 tgtadm -C "$TGT_CTL" --op delete --mode system >/dev/null 2>&1 || true
	for _ in $(seq 50); do
		gone "$TGT_PID" && break
		sleep 0.1
	done
	stop_pid "$TGT_PID" KILL
	rm -f "/var/run/tgtd/socket.$TGT_CTL" "/var/run/tgtd/socket.$TGT_CTL.lock"
	TGT_PID=''
}

# child_of PID: PID's first child (the client under timeout)
child_of() {
	local c='' f p
	read -r c _ <"/proc/$1/task/$1/children" 2>/dev/null || true
	if [ -z "$c" ]; then # no CONFIG_PROC_CHILDREN: look for it
		for f in /proc/[0-9]*/stat; do
			{ read -r c _ _ p _ <"$f"; } 2>/dev/null || continue
			[ "$p" = "$1" ] && break
			c=''
		done
	fi
	echo "$c"
}

# bench_sched_ns PID: the on-CPU ns of PID's threads (into REPLY; no
# fork; 0 once it has gone), from /proc/PID/task/*/schedstat
bench_sched_ns() {
	local f a s=0
	for f in /proc/"$1"/task/*/schedstat; do
		{ read -r a _ <"$f"; } 2>/dev/null || continue
		s=$((s + a))
	done
	REPLY=$s
}

# bench_progress_client STREAM TPID RUNTIME CMD [ARG...]: one run of a
# client that prints a progress record each second, each starting with
# "\r" (iscsi-perf's "iops current N" on stdout; blkstack bench's
# "[r=X,w=Y IOPS]" with --eta=always on stderr: STREAM is stdout or
# stderr, the other goes to $TMP/client.err), under timeout (RUNTIME +
# 30 s, then SIGINT: iscsi-perf stops by itself only at a progress line
# exactly RUNTIME in, which a descheduled client can miss; it drains
# and says "finished.").  Records are read as they come and at each the
# on-CPU time of TPID (a target; '' for none) and of the client is
# sampled; the steady window runs from the first record to the last.
# Sets PC_IOPS (I/Os per second over the window), PC_IOS_US (I/Os in it
# times 1e6: the records' rates times their us),
# PC_WIN_US (its length), PC_TGT_NS and PC_CL_NS (on-CPU ns in it),
# PC_N (records after the first), PC_RC (the client's exit status: 124
# when timeout stopped it) and PC_LOG (the records).  Uses $TMP/fifo;
# CL_PID and CL_CHILD name the client while it runs (for
# iscsi_bench_cleanup).
# shellcheck disable=SC2034 # the PC_ variables are the callers'
bench_progress_client() {
	local stream=$1 tpid=$2 runtime=$3 fd rc rec now ts cs cur m
	local pt='' pts='' pcs='' t0='' ts0='' cs0='' t1='' ts1='' cs1='' prev='' ios_us=0
	shift 3
	PC_N=0 PC_LOG='' PC_RC=0
	rm -f "$TMP/fifo"
	mkfifo "$TMP/fifo"
	if [ "$stream" = stderr ]; then
		bench_exec timeout -s INT -k 5 "$((runtime + 30))" "$@" 2>"$TMP/fifo" >"$TMP/client.err" &
	else
		bench_exec timeout -s INT -k 5 "$((runtime + 30))" "$@" >"$TMP/fifo" 2>"$TMP/client.err" &
	fi
	CL_PID=$!
	CL_CHILD=''
	exec {fd}<"$TMP/fifo"
	# Records end at "\r": the read that returns a line's predecessor
	# returns at that line's print, so the sample taken then belongs to
	# the next record.  (No read -t: a timeout that fires as the "\r"
	# comes loses it.)
	while :; do
		rc=0
		IFS= read -r -d $'\r' -u "$fd" rec || rc=$?
		now=${EPOCHREALTIME//[.,]/}
		ts=0
		if [ -n "$tpid" ]; then
			bench_sched_ns "$tpid"
			ts=$REPLY
		fi
		[ -n "$CL_CHILD" ] || CL_CHILD=$(child_of "$CL_PID")
		bench_sched_ns "$CL_CHILD"
		cs=$REPLY
		PC_LOG+=$rec$'\n'
		cur=
		if [[ $rec =~ iops\ current\ ([0-9]+) ]]; then
			cur=${BASH_REMATCH[1]}
		elif [[ $rec =~ \[r=([0-9.]+[kM]?),w=([0-9.]+[kM]?)\ IOPS\] ]]; then
			# blkstack bench: "[r=0,w=314.4k IOPS]", one decimal
			cur=0
			for m in "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"; do
				cur=$((cur + $(awk -v v="$m" 'BEGIN {
					u = substr(v, length(v)); s = (u == "k") ? 1e3 : (u == "M") ? 1e6 : 1
					printf "%.0f", v * s }')))
			done
		fi
		if [ -n "$cur" ]; then
			if [ -z "$t0" ]; then
				t0=$pt ts0=$pts cs0=$pcs
			else
				ios_us=$((ios_us + cur * (pt - prev)))
				t1=$pt ts1=$pts cs1=$pcs
				PC_N=$((PC_N + 1))
			fi
			prev=$pt
		fi
		pt=$now pts=$ts pcs=$cs
		[ "$rc" -eq 0 ] || break # end of file: the client has exited
	done
	exec {fd}<&-
	wait "$CL_PID" || PC_RC=$?
	CL_PID='' CL_CHILD=''
	PC_IOS_US=$ios_us
	PC_WIN_US=$((PC_N > 0 ? t1 - t0 : 0))
	PC_TGT_NS=$((PC_N > 0 ? ts1 - ts0 : 0))
	PC_CL_NS=$((PC_N > 0 ? cs1 - cs0 : 0))
	PC_IOPS=$((PC_WIN_US > 0 ? ios_us / PC_WIN_US : 0))
}

# iscsi_bench_cleanup: the iSCSI scripts' exit (bench/iscsi-vs-tgt.sh,
# iscsi-initiator.sh, iscsi-test-cu-vs-tgt.sh): the client under timeout
# (CL_PID, its child CL_CHILD: TERM, KILL after 3 s: a client whose
# target went first reconnects for ever), the blkstack target (BLK_PID),
# tgtd (tgt_stop), the image IMG and the folder TMP, each where set.
# iscsi_bench_traps installs it on EXIT and turns INT, TERM and HUP into
# exits that run it.
iscsi_bench_cleanup() {
	local _i
	set +e
	# a signal's trap runs with the interrupted command's IFS= (a
	# progress reader's): split words again
	IFS=$' \t\n'
	trap - INT TERM HUP
	if [ -n "${CL_PID:-}" ]; then
		[ -n "${CL_CHILD:-}" ] || CL_CHILD=$(child_of "$CL_PID")
		kill -TERM "$CL_PID" 2>/dev/null # passed on to the client
		for _i in $(seq 30); do
			gone "$CL_PID" && break
			sleep 0.1
		done
		[ -z "$CL_CHILD" ] || gone "$CL_CHILD" || kill -KILL "$CL_CHILD" 2>/dev/null
		stop_pid "$CL_PID" KILL
	fi
	[ -z "${BLK_PID:-}" ] || stop_pid "$BLK_PID" TERM
	tgt_stop
	[ -z "${IMG:-}" ] || rm -f "$IMG"
	[ -z "${TMP:-}" ] || rm -rf "$TMP"
}

iscsi_bench_traps() {
	trap iscsi_bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
}
