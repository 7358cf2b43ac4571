#!/usr/bin/env bash
# A direction that ran under 1 ms: fio rounds each runtime up (backend.c
# update_runtime()), so its terse line has runtime 1 and bw, iops of
# its integer divisions by it (64 KiB: 64;64000;16000;1).  blkstack's
# terse line had runtime 0 and so bw 0 and iops 0; its text 0msec and
# run=0-0msec, its JSON runtime 0.
source "$(dirname "$0")/lib.sh" "$@"

"$BLKSTACK" bench --name=x --rw=read --size=64k --output-format=terse,normal,json \
	>"$TMP/out" 2>&1 || fail "the run failed: $(head -3 "$TMP/out")"
t=$(head -1 "$TMP/out" | cut -d';' -f6-9)
IFS=';' read -r kib bw iops runt <<<"$t"
if [ "$kib" = 64 ] && [ "${runt:-0}" -ge 1 ] && [ "${bw:-0}" -gt 0 ] &&
   [ "${iops:-0}" -gt 0 ] && [ "$bw" -eq $((64 * 1000 / runt)) ] &&
   [ "$iops" -eq $((16 * 1000 / runt)) ]; then
	pass "terse read: KiB;bw;iops;runtime $t, fio's divisions"
else
	fail "terse read: KiB;bw;iops;runtime '$t' (fio: 64;64000;16000;1 under 1 ms)"
fi
if grep -qE '/0msec\)|run=0-|"runtime": 0,' <(sed -n '2,$p' "$TMP/out" | grep -E 'read:|READ:|"read"' -A7); then
	fail "a 0 ms runtime printed: $(grep -E '/0msec|run=0-' "$TMP/out")"
else
	pass "text and JSON runtimes at least 1 ms"
fi
if command -v fio >/dev/null; then
	f=$(fio --name=x --ioengine=null --rw=read --size=64k --minimal | cut -d';' -f6-9)
	if [ "$f" = "64;64000;16000;1" ] && [ "$runt" = 1 ]; then
		[ "$t" = "$f" ] && pass "fio's fields $f" || fail "fio $f, blkstack $t"
	else
		echo "# fio $f, blkstack $t: one ran over 1 ms, not compared"
	fi
fi
finish
