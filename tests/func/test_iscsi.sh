#!/usr/bin/env bash
# blkstack serve --iscsi seen by real initiators: libiscsi's iscsi-ls
# (discovery), iscsi-inq, iscsi-readcapacity16, iscsi-swp, qemu-img over
# iscsi:// (write, compare, read back; header digests), a read-only
# target, a removable one, CHAP one-way and mutual, raw wire
# checks of bad input (iscsi_raw.py), CLEAR TASK SET and LOGICAL UNIT
# RESET across two sessions, several connections per session (raw),
# a subset of iscsi-test-cu's suites,
# the log lines, the stop with sessions logged in (asked to log out),
# the NOP-In keep-alive, two portals and --iscsi-thin
# (test_iscsi_conformance.sh runs the whole iscsi-test-cu).
source "$(dirname "$0")/lib.sh" "$@"
RAWPY="$(dirname "$0")/iscsi_raw.py"
SRV_PID=
trap 'if [ -n "$SRV_PID" ]; then { kill -9 "$SRV_PID"; wait "$SRV_PID"; } 2>/dev/null; fi; rm -rf "$TMP"' EXIT

for c in iscsi-ls iscsi-inq iscsi-readcapacity16 iscsi-swp iscsi-test-cu qemu-img python3; do
	if ! command -v "$c" >/dev/null; then
		echo "SKIP: $c is not installed (scripts/install-deps.sh)"
		exit 77
	fi
done
# qemu-img speaks iscsi:// only with Debian's qemu-block-extra
if ! qemu-img --help | grep -qw iscsi; then
	echo "SKIP: qemu-img without the iscsi block driver (qemu-block-extra)"
	exit 77
fi

"$BLKSTACK" serve --iscsi=127.0.0.1:0 --dev=ram --size=64M --export=a \
	--export=a1 --size=16M --iscsi-lun-of=a \
	--export=ro --read-only --size=8M \
	--export=rm --iscsi-removable --size=8M \
	--export=acl --size=8M --iscsi-acl=iqn.2026-12.org.blkstack:one,iqn.2026-12.org.blkstack:two \
	2>"$TMP/server.log" &
SRV_PID=$!
for i in $(seq 100); do
	PORT=$(sed -n 's/.*iscsi listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/server.log")
	[ -n "$PORT" ] && break
	sleep 0.05
done
if [ -z "$PORT" ]; then
	echo "server did not start:"; cat "$TMP/server.log"; exit 1
fi
P=127.0.0.1:$PORT
T=iqn.2026-12.org.blkstack
A=iscsi://$P/$T:a/0
RO=iscsi://$P/$T:ro/0
RM=iscsi://$P/$T:rm/0
raw() { timeout 60 python3 "$RAWPY" "$P" "$1" "$T:a"; }
alive() { kill -0 "$SRV_PID" 2>/dev/null; }

# discovery: both targets, our portal and group tag
timeout 20 iscsi-ls "iscsi://$P" >"$TMP/ls" 2>&1
check "iscsi-ls lists target a" grep -q "Target:$T:a Portal:$P,1" "$TMP/ls"
check "iscsi-ls lists target ro" grep -q "Target:$T:ro Portal:$P,1" "$TMP/ls"
check "iscsi-ls lists three targets (not the one its ACL hides)" test "$(grep -c '^Target:' "$TMP/ls")" -eq 3
check "an initiator in the ACL sees the third" grep -q "Target:$T:acl " <(timeout 20 iscsi-ls -i iqn.2026-12.org.blkstack:two "iscsi://$P" 2>&1)
check "ACL: an initiator not in it is refused" bash -c "! timeout 20 iscsi-inq 'iscsi://$P/$T:acl/0' >/dev/null 2>&1"
check "ACL: an initiator in it logs in" grep -q "Vendor:BLKSTACK" <(timeout 20 iscsi-inq -i iqn.2026-12.org.blkstack:one "iscsi://$P/$T:acl/0" 2>&1)
check "ACL: the refusal is an authorization failure" grep -q "login failed: .*authorization failure: initiator not in the target's ACL" "$TMP/server.log"
timeout 20 iscsi-ls -s "iscsi://$P" >"$TMP/lss" 2>&1
check "iscsi-ls -s finds LUN 0 on each target" test "$(grep -c 'Lun:0 .*DIRECT_ACCESS' "$TMP/lss")" -eq 3

# INQUIRY and READ CAPACITY (16)
timeout 20 iscsi-inq "$A" >"$TMP/inq" 2>&1
check "iscsi-inq: a direct-access device" grep -q "Peripheral Device Type:DIRECT_ACCESS" "$TMP/inq"
check "iscsi-inq: vendor BLKSTACK" grep -q "Vendor:BLKSTACK" "$TMP/inq"
timeout 20 iscsi-inq -e 1 -c 0x80 "$A" >"$TMP/inq80" 2>&1
check "iscsi-inq: unit serial number page" grep -qi "serial" "$TMP/inq80"
check "iscsi-readcapacity16: 64 MiB" grep -q "Total size:67108864" <(timeout 20 iscsi-readcapacity16 "$A" 2>&1)
check "LUN 1 of target a: the export given --iscsi-lun-of=a (16 MiB)" grep -q "Total size:16777216" <(timeout 20 iscsi-readcapacity16 "iscsi://$P/$T:a/1" 2>&1)
check "iscsi-ls -s: target a has LUNs 0 and 1" test "$(awk -v t="Target:$T:a " 'index($0, t) == 1 {f = 1; next} /^Target:/ {f = 0} f && /^Lun:/' "$TMP/lss" | wc -l)" -eq 2
check "no LUN 2 on target a" bash -c "! timeout 20 iscsi-readcapacity16 'iscsi://$P/$T:a/2' >/dev/null 2>&1"
check "iscsi-readcapacity16: ro is 8 MiB" grep -q "Total size:8388608" <(timeout 20 iscsi-readcapacity16 "$RO" 2>&1)
check "an unknown target is refused" bash -c "! timeout 20 iscsi-inq 'iscsi://$P/$T:nope/0' >/dev/null 2>&1"

# data through qemu-img: 4 MiB in, compared, and read back out
head -c 4M /dev/urandom >"$TMP/in.img"
check "qemu-img writes 4 MiB over iscsi://" timeout 60 qemu-img convert -n -f raw -O raw "$TMP/in.img" "$A"
check "qemu-img compare: identical" timeout 60 qemu-img compare -f raw -F raw "$TMP/in.img" "$A"
timeout 60 qemu-img convert -f raw -O raw "$A" "$TMP/out.img"
check "read back: 64 MiB" test "$(stat -c %s "$TMP/out.img" 2>/dev/null)" = 67108864
check "read back: the 4 MiB written" cmp -n 4194304 "$TMP/in.img" "$TMP/out.img"
check "read back: the rest is zeroes" cmp -i 4194304:0 -n 62914560 "$TMP/out.img" /dev/zero
head -c 1M /dev/urandom >"$TMP/other.img"
check "qemu-img compare tells a difference" bash -c "! timeout 60 qemu-img compare -f raw -F raw '$TMP/other.img' '$A' >/dev/null 2>&1"

# HeaderDigest=CRC32C with a real initiator (qemu's libiscsi driver)
J='json:{"driver":"raw","file":{"driver":"iscsi","transport":"tcp","portal":"'$P'","target":"'$T':a","lun":0,"header-digest":"crc32c"}}'
check "qemu-img with header digests: compare" timeout 60 qemu-img compare -f raw "$TMP/in.img" "$J"
check "the session used CRC32C header digests" grep -q "digests CRC32C/None" "$TMP/server.log"

# read-only target and software write protect (MODE SELECT, SWP)
check "read-only target refuses qemu-img writes" bash -c "! timeout 60 qemu-img convert -n -f raw -O raw '$TMP/other.img' '$RO' >/dev/null 2>&1"
check "iscsi-swp: off at start" grep -q "SWP:0" <(timeout 20 iscsi-swp "$A" 2>&1)
timeout 20 iscsi-swp --swp on "$A" >/dev/null 2>&1
check "iscsi-swp: on" grep -q "SWP:1" <(timeout 20 iscsi-swp "$A" 2>&1)
check "write protected: qemu-img write refused" bash -c "! timeout 60 qemu-img convert -n -f raw -O raw '$TMP/other.img' '$A' >/dev/null 2>&1"
timeout 20 iscsi-swp --swp off "$A" >/dev/null 2>&1
check "iscsi-swp: off again" grep -q "SWP:0" <(timeout 20 iscsi-swp "$A" 2>&1)
check "the data survived" timeout 60 qemu-img compare -f raw -F raw "$TMP/in.img" "$A"

# bad input on the wire
for c in login_missing_initiator login_unknown_target login_bad_version \
	login_not_login_pdu login_huge_text unknown_key nop data_over_max \
	unknown_opcode datasn_gap datasn_reversed data_digest_data_out cmdsn_outside_window \
	maxcmdsn_immediate read_error_no_stale_data abort_task_not_received \
	abort_task_set_no_lun \
	data_digest reinstate r2t_flow; do
	check "wire: $c" raw "$c"
done
check "server alive after bad input" alive

# several connections per session (MaxConnections > 1; libiscsi and qemu
# use one): negotiation, a WRITE on one connection read back on another,
# CmdSNs interleaved and one ahead of the session's ExpCmdSN (held, not
# dropped), the session's ExpCmdSN in every response, Logout of one
# connection (its own or another's CID) and of the session, a connection
# past MaxConnections (0206), a TSIH with another ISID (020a), the same
# CID again, reinstatement ending every connection
for c in mcs_io mcs_limits mcs_logout_session mcs_reinstate mcs_logout_other; do
	out=$(raw "$c" 2>&1)
	check "wire: $c ($out)" test $? -eq 0
done
check "a connection added to a session is logged" grep -q "login: .* cid 2 (a connection added to the session) target '$T:a'" "$TMP/server.log"
check "a reinstatement ends every connection of the session" grep -q "reinstated by a new login (tsih [0-9]*)" "$TMP/server.log"
check "a session Logout ends the other connections" grep -q "logout: .*: logout (session) on another connection of the session" "$TMP/server.log"
check "the refused connection is logged" grep -q "login failed: .*too many connections: the session has MaxConnections connections already" "$TMP/server.log"
check "server alive after the MC/S checks" alive

# iscsi-test-cu: suites that pass (docs/iscsi.md lists the others), on
# target a; and on the removable target PreventAllow whole (the
# prevention ends with its nexus, a LUN or target reset; the medium is
# neither ejected nor loaded while prevented) and StartStopUnit
cu() {
	local s=$1 url=$2 tests
	timeout 120 iscsi-test-cu -d -S -s ${3:-} -t "$s" "$url" >"$TMP/cu.$s" 2>&1
	tests=$(awk '$1 == "tests" {print $3 " " $4 " " $5}' "$TMP/cu.$s")
	set -- $tests
	if [ -n "$tests" ] && [ "${1:-0}" -gt 0 ] && [ "$1" = "${2:-x}" ] && [ "${3:-1}" = 0 ]; then
		pass "iscsi-test-cu $s: $2 of $1 tests"
	else
		fail "iscsi-test-cu $s (ran/passed/failed: ${tests:-none}): $(grep -m3 FAIL "$TMP/cu.$s")"
	fi
}
SUITES="ALL.iSCSIcmdsn ALL.iSCSITMF ALL.TestUnitReady ALL.Inquiry ALL.ReadCapacity16 ALL.Read10 ALL.Write16 ALL.Reserve6 ALL.ProutReserve ALL.Unmap ALL.ModeSense6 ALL.CompareAndWrite ALL.iSCSIResiduals ALL.WriteVerify16"
for s in $SUITES; do
	cu "$s" "$A"
done
for s in ALL.PreventAllow ALL.StartStopUnit; do
	cu "$s" "$RM"
done
# Data-Out with DataSN 0 twice, 27, -1, and 1 then 0 (--dataloss: it
# writes): each WRITE ends in CHECK CONDITION 0B/47/05 on the same
# connection (RFC 7143 7.8.1 b), which this test needs - a dropped
# connection makes libiscsi's reconnect lose the test's ImmediateData=No
cu ALL.iSCSIdatasn "$A" --dataloss
check "the removable target says so (RMB: PreventAllow is not skipped)" \
	grep -q "^Removable:1" <(timeout 20 iscsi-inq "$RM" 2>&1)

# one line per login and logout
check "a login line" grep -q "iscsi: conn [0-9]* .* login: initiator 'iqn.2007-10.com.github:sahlberg:libiscsi:iscsi-inq'" "$TMP/server.log"
check "a logout line for a session logout" grep -q "logout: .*: logout (session)" "$TMP/server.log"
check "a failed login logged with its status" grep -q "login failed: .*target not found" "$TMP/server.log"
check "session reinstatement logged" grep -q "logout: .*session reinstated by a new login" "$TMP/server.log"
check "logins and logouts pair up" test "$(grep -c ' login: ' "$TMP/server.log")" -eq "$(grep -c ' logout: ' "$TMP/server.log")"

# the stop with two sessions logged in: each is asked to log out (an
# Asynchronous Message, AsyncEvent 1, RFC 7143 11.9.1); one does and is
# answered, the other does not and is closed 2 s later; the server exits 0
raw hold >"$TMP/hold" 2>&1 &
HOLD=$!
raw stop_logout >"$TMP/stop_logout" 2>&1 &
STOPLO=$!
for i in $(seq 100); do
	[ "$(grep -c ' login: ' "$TMP/server.log")" -ge "$(( $(grep -c ' logout: ' "$TMP/server.log") + 2 ))" ] && break
	sleep 0.05
done
t0=$(date +%s%N)
kill -TERM "$SRV_PID"
wait "$SRV_PID"
rc=$?
took=$(( ($(date +%s%N) - t0) / 1000000 ))
SRV_PID=
check "SIGTERM stops the server with status 0" test $rc -eq 0
check "the stop ends within 4 s, the Logout awaited 2 s at most (took $took ms)" test "$took" -lt 4000
wait "$HOLD"
check "a session that does not log out: the Asynchronous Message, then the close ($(cat "$TMP/hold"))" test $? -eq 0
wait "$STOPLO"
check "a session that logs out when asked: answered, closed ($(cat "$TMP/stop_logout"))" test $? -eq 0
check "its logout line says why" grep -q "logout: .*server stopping: no Logout within 2000 ms of the Asynchronous Message" "$TMP/server.log"
check "the Logout asked for is logged" grep -q "logout: .*server stopping: logout (session) as the Asynchronous Message asked" "$TMP/server.log"
check "the device was flushed" grep -q "iscsi: target '$T:a' LUN 0: flushed" "$TMP/server.log"
check "the removable target flushed" grep -q "iscsi: target '$T:rm' LUN 0: flushed" "$TMP/server.log"
check "LUN 1 of target a flushed too" grep -q "iscsi: target '$T:a' LUN 1: flushed" "$TMP/server.log"
check "stop is logged" grep -q "stopped (signal 15)" "$TMP/server.log"

# task management across two sessions, on a unit whose reads take 1 s
# (null, timer completions): CLEAR TASK SET and LOGICAL UNIT RESET from
# one session end the other's READ in flight, without a response (TAS
# 0), and it hears of it by a unit attention (2F/00, 29/03)
"$BLKSTACK" serve --iscsi=127.0.0.1:0 --dev=null --size=8M --irqmode=2 \
	--completion_nsec=1000000000 2>"$TMP/slow.log" &
SRV_PID=$!
PORT=
for i in $(seq 100); do
	PORT=$(sed -n 's/.*iscsi listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/slow.log")
	[ -n "$PORT" ] && break
	sleep 0.05
done
for c in clear_task_set lun_reset_tas mcs_abort; do
	check "wire: $c" timeout 60 python3 "$RAWPY" "127.0.0.1:$PORT" "$c" "$T:default"
done
kill -TERM "$SRV_PID"
wait "$SRV_PID"
rc=$?
SRV_PID=
check "the slow server stops with status 0" test $rc -eq 0

# keep-alive (RFC 7143 11.19) on a server pinging after 1 s of silence,
# stop deadline 2 s (the Logout is awaited 500 ms): raw sessions answering
# the NOP-In, not answering it, busy; qemu (libiscsi) answering it while
# idle, copying data, and logging out when the stop asks
"$BLKSTACK" serve --iscsi=127.0.0.1:0 --dev=ram --size=8M --iscsi-nopin=1 \
	--stop-deadline-ms=2000 2>"$TMP/nopin.log" &
SRV_PID=$!
PORT=
for i in $(seq 100); do
	PORT=$(sed -n 's/.*iscsi listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/nopin.log")
	[ -n "$PORT" ] && break
	sleep 0.05
done
N=iscsi://127.0.0.1:$PORT/$T:default/0
for c in nopin_answer nopin_silent nopin_busy; do
	timeout 60 python3 "$RAWPY" "127.0.0.1:$PORT" "$c" "$T:default" >"$TMP/$c" 2>&1 &
	eval "KA_$c=\$!"
done
timeout 20 qemu-io -f raw -c 'write -P 0x5a 0 64k' -c 'sleep 3500' -c 'read -P 0x5a 0 64k' "$N" >"$TMP/qio" 2>&1
check "qemu-io: a session idle 3.5 s between its commands survives (libiscsi answers the NOP-Ins)" test $? -eq 0
check "... and its data reads back" grep -q "read 65536/65536 bytes" "$TMP/qio"
check "qemu-img writes 4 MiB with the keep-alive on" timeout 60 qemu-img convert -n -f raw -O raw "$TMP/in.img" "$N"
check "qemu-img compare with the keep-alive on: identical" timeout 60 qemu-img compare -f raw -F raw "$TMP/in.img" "$N"
for c in nopin_answer nopin_silent nopin_busy; do
	eval "wait \$KA_$c"
	check "wire: $c ($(cat "$TMP/$c"))" test $? -eq 0
done
check "qemu's idle session was pinged and logged out normally" grep -qE "logout: initiator 'iqn.2008-11.org.linux-kvm.* [1-9][0-9]* NOP-In pings, .*: logout \(session\)$" "$TMP/nopin.log"
check "the unanswered ping is logged as a dead initiator" grep -q "logout: .*no NOP-Out answered the NOP-In ping (TTT 0x[0-9a-f]*) within 1000 ms: initiator dead" "$TMP/nopin.log"
check "only that session was dropped" test "$(grep -c 'initiator dead' "$TMP/nopin.log")" -eq 1
timeout 20 qemu-io -f raw -c 'read -P 0x5a 0 64k' -c 'sleep 15000' "$N" >"$TMP/qio2" 2>&1 &
QIO=$!
raw_n() { timeout 60 python3 "$RAWPY" "127.0.0.1:$PORT" "$1" "$T:default"; }
raw_n hold >"$TMP/hold2" 2>&1 &
HOLD=$!
sleep 2.5  # qemu and the raw session idle: pinged, answering
t0=$(date +%s%N)
kill -TERM "$SRV_PID"
wait "$SRV_PID"
rc=$?
took=$(( ($(date +%s%N) - t0) / 1000000 ))
SRV_PID=
check "the keep-alive server stops with status 0, within its 2 s deadline ($took ms)" test $rc -eq 0
wait "$HOLD"
check "a session not logging out is closed 500 ms after the Asynchronous Message ($(cat "$TMP/hold2"))" test $? -eq 0
check "qemu (libiscsi) logged out as the Asynchronous Message asked" grep -qE "logout: initiator 'iqn.2008-11.org.linux-kvm.* [1-9][0-9]* NOP-In pings, .*: server stopping: logout \(session\) as the Asynchronous Message asked" "$TMP/nopin.log"
check "the other was closed after 500 ms" grep -q "server stopping: no Logout within 500 ms" "$TMP/nopin.log"
kill "$QIO" 2>/dev/null
wait "$QIO" 2>/dev/null

# CHAP: a secrets file others may read is refused; then one-way and
# mutual CHAP with libiscsi (which checks the target's answer)
printf '# who may log in\ninitiator alice secretsecret12\ntarget tgt targetsecret99\n' >"$TMP/chap"
chmod 644 "$TMP/chap"
expect_error "CHAP secrets readable by others refused" "chmod 600" \
	serve --iscsi=127.0.0.1:0 --iscsi-chap="$TMP/chap" --dev=ram --size=8M
chmod 600 "$TMP/chap"
expect_error "--iscsi-removable takes no value but 0 or 1" "takes no value" \
	serve --iscsi=127.0.0.1:0 --dev=ram --size=8M --iscsi-removable=2
expect_error "--iscsi-chap needs --iscsi" "without --iscsi" \
	serve --nbd=127.0.0.1:0 --iscsi-chap="$TMP/chap" --dev=ram --size=8M
"$BLKSTACK" serve --iscsi=127.0.0.1:0 --iscsi-chap="$TMP/chap" --dev=ram --size=8M 2>"$TMP/chap.log" &
SRV_PID=$!
PORT=
for i in $(seq 100); do
	PORT=$(sed -n 's/.*iscsi listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/chap.log")
	[ -n "$PORT" ] && break
	sleep 0.05
done
D=$T:default/0
check "CHAP: no credentials refused" bash -c "! timeout 20 iscsi-inq 'iscsi://127.0.0.1:$PORT/$D' >/dev/null 2>&1"
check "CHAP: a wrong secret refused" bash -c "! timeout 20 iscsi-inq 'iscsi://alice%wrongsecret12@127.0.0.1:$PORT/$D' >/dev/null 2>&1"
check "CHAP: an unknown user refused" bash -c "! timeout 20 iscsi-inq 'iscsi://bob%secretsecret12@127.0.0.1:$PORT/$D' >/dev/null 2>&1"
check "CHAP: the right secret logs in" grep -q "Vendor:BLKSTACK" <(timeout 20 iscsi-inq "iscsi://alice%secretsecret12@127.0.0.1:$PORT/$D" 2>&1)
check "CHAP: discovery too" grep -q "Target:$T:default" <(timeout 20 iscsi-ls "iscsi://alice%secretsecret12@127.0.0.1:$PORT" 2>&1)
check "mutual CHAP: the target proves its secret" grep -q "Vendor:BLKSTACK" \
	<(timeout 20 iscsi-inq "iscsi://alice%secretsecret12@127.0.0.1:$PORT/$D?target_user=tgt&target_password=targetsecret99" 2>&1)
check "mutual CHAP: an initiator expecting another target secret refuses" bash -c \
	"! timeout 20 iscsi-inq 'iscsi://alice%secretsecret12@127.0.0.1:$PORT/$D?target_user=tgt&target_password=othersecret99' >/dev/null 2>&1"
check "CHAP: failures logged" test "$(grep -c 'login failed: .*authentication failure' "$TMP/chap.log")" -ge 3
check "CHAP: the user is logged" grep -q "auth CHAP (user 'alice')" "$TMP/chap.log"
kill -TERM "$SRV_PID"
wait "$SRV_PID"
rc=$?
SRV_PID=
check "CHAP server stops with status 0" test $rc -eq 0

# two portals (multipath): the same target on each, SendTargets names
# both, the unit has the same identifiers through either; and logical
# block provisioning per target (--iscsi-thin): thin, fully provisioned,
# and ram's default (thin)
"$BLKSTACK" serve --iscsi=127.0.0.1:0 --iscsi=127.0.0.2:0 --dev=ram --size=8M \
	--export=thin --iscsi-thin --export=full --iscsi-thin=0 --export=auto 2>"$TMP/mp.log" &
SRV_PID=$!
P1=
P2=
for _ in $(seq 100); do
	P1=$(sed -n 's/.*iscsi listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/mp.log")
	P2=$(sed -n 's/.*iscsi listening on 127.0.0.2:\([0-9]*\).*/\1/p' "$TMP/mp.log")
	[ -n "$P1" ] && [ -n "$P2" ] && break
	sleep 0.05
done
for p in 127.0.0.1:$P1 127.0.0.2:$P2; do
	timeout 20 iscsi-ls "iscsi://$p" >"$TMP/mp.ls" 2>&1
	check "two portals: SendTargets on $p names both" \
		grep -q "Target:$T:thin Portal:127.0.0.1:$P1,1" "$TMP/mp.ls"
	check "two portals: ... the second too" grep -q "Target:$T:thin Portal:127.0.0.2:$P2,1" "$TMP/mp.ls"
done
timeout 20 iscsi-inq -e 1 -c 131 "iscsi://127.0.0.1:$P1/$T:thin/0" >"$TMP/id1" 2>&1
timeout 20 iscsi-inq -e 1 -c 131 "iscsi://127.0.0.2:$P2/$T:thin/0" >"$TMP/id2" 2>&1
check "two portals: the same device identifiers (VPD 0x83) through each" \
	bash -c "grep -q 'Designator Type:(3) NAA' '$TMP/id1' && cmp -s '$TMP/id1' '$TMP/id2'"
for t in thin:1 full:0 auto:1; do
	check "--iscsi-thin: target ${t%:*} has LBPME:${t#*:} LBPRZ:${t#*:}" grep -q "LBPME:${t#*:} LBPRZ:${t#*:}" \
		<(timeout 20 iscsi-readcapacity16 "iscsi://127.0.0.1:$P1/$T:${t%:*}/0" 2>&1)
done
kill -TERM "$SRV_PID"
wait "$SRV_PID"
rc=$?
SRV_PID=
check "two portals: the server stops with status 0" test $rc -eq 0
NINE=()
for _ in $(seq 9); do
	NINE+=(--iscsi=127.0.0.1:0)
done
# a login whose request comes in as the server stops: refused (0301,
# service unavailable), and the stop does not wait for it (regression: a
# login at the stop waited up to 5 s for the sessions ending around it,
# the reinstatement wait, before it was even asked to log out)
"$BLKSTACK" serve --iscsi=127.0.0.1:0 --dev=ram --size=8M 2>"$TMP/lstop.log" &
SRV_PID=$!
PORT=
for i in $(seq 100); do
	PORT=$(sed -n 's/.*iscsi listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/lstop.log")
	[ -n "$PORT" ] && break
	sleep 0.05
done
t0=$(date +%s%N)
STOP_PID=$SRV_PID timeout 30 python3 "$RAWPY" "127.0.0.1:$PORT" login_at_stop "iqn.2026-12.org.blkstack:default" >"$TMP/lstop.out" 2>&1
rc=$?
check "a login completed during the stop: refused ($(cat "$TMP/lstop.out"))" test $rc -eq 0
wait "$SRV_PID"
rc=$?
took=$(( ($(date +%s%N) - t0) / 1000000 ))
SRV_PID=
check "... the server stops with status 0 within 2 s of the signal (took $took ms)" test $rc -eq 0 -a "$took" -lt 2800
check "... its log names the cause" grep -q "login failed: .*service unavailable: the target is stopping" "$TMP/lstop.log"
expect_error "--iscsi at most 8 times" "at most 8 portals" serve --dev=ram --size=8M "${NINE[@]}"
expect_error "--iscsi-thin: auto, 0 or 1" "iscsi-thin=2: allowed auto, 0, 1" \
	serve --iscsi=127.0.0.1:0 --dev=ram --size=8M --iscsi-thin=2
expect_error "--iscsi-thin over a device that cannot discard refused" \
	"LUN 0: thin provisioning needs a device that discards \(scsi does not\)" \
	serve --iscsi=127.0.0.1:0 --dev=scsi --size=8M --scsi_lbpu=0 --scsi_lbpws=0 --iscsi-thin
finish
