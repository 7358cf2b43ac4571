#!/usr/bin/env bash
# bench --output-format=terse and --minimal: fio's semicolon lines.  The
# same job through fio's null engine and blkstack's has as many fields,
# for each terse version and report option set, and the fields hold what
# they name (fio's show_thread_status_terse_all(): version 3 is
# terse_version;fio_version;jobname;groupid;error, then READ and WRITE
# with 41 fields each, TRIM too from version 4, 8 more each in version 5).
source "$(dirname "$0")/lib.sh" "$@"

# field N (1-based) of the first line of FILE
field() { awk -F';' -v n="$2" 'NR == 1 { print $n }' "$1"; }
nfields() { awk -F';' 'NR == 1 { print NF }' "$1"; }

J=(--name=t --ioengine=null --bs=4k --iodepth=8)
# size-based, so the I/O count is exact: 16 MiB read once
"$BLKSTACK" bench "${J[@]}" --rw=read --size=16m --minimal >"$TMP/r.txt"
check "--minimal: one line" test "$(wc -l <"$TMP/r.txt")" -eq 1
check "version 3, blkstack's version, job name, group 0, no error" \
	test "$(cut -d';' -f1,3-5 "$TMP/r.txt")" = "3;t;0;0"
check "field 2 is blkstack's version" grep -q '^3;blkstack-[0-9]' "$TMP/r.txt"
check "READ: 16384 KiB" test "$(field "$TMP/r.txt" 6)" -eq 16384
# fio's integers: KiB/s = 1000 x bytes / runtime ms / 1024, IOPS = 1000 x
# I/Os / runtime ms (0 for a runtime under 0.5 ms)
# shellcheck disable=SC2016 # awk's fields
check "READ: KiB/s and IOPS from the KiB and the runtime, as fio computes them" \
	awk -F';' '{ r = $9; bw = r ? int(int(1000 * $6 * 1024 / r) / 1024) : 0;
		     io = r ? int(1000 * $6 / 4 / r) : 0; exit !($7 == bw && $8 == io) }' "$TMP/r.txt"
check "READ: the default percentile list from field 18 (1 .. 99.99, then 0%=0)" \
	test "$(cut -d';' -f18,34,35 "$TMP/r.txt" | sed 's/=[0-9]*/=/g')" = "1.000000%=;99.990000%=;0%="
check "WRITE: no I/O, zeros" test "$(cut -d';' -f47-50 "$TMP/r.txt")" = "0;0;0;0"
check "IO depths: 7 fields in percent, summing to 100" \
	test "$(cut -d';' -f93-99 "$TMP/r.txt" | tr -d '%' | tr ';' '\n' | awk '{s += $1} END {print (s > 99.5 && s < 100.5)}')" = 1
check "disk stats of blkstack's device after the latency fields" \
	test "$(field "$TMP/r.txt" 122)" = null
"$BLKSTACK" bench "${J[@]}" --rw=read --size=16m --minimal --disk_util=0 >"$TMP/nd.txt"
check "disk_util=0: no disk fields (121)" test "$(nfields "$TMP/nd.txt")" -eq 121
"$BLKSTACK" bench "${J[@]}" --rw=read --size=16m --output-format=terse \
	--lat_percentiles=1 --percentile_list=50:99.5 >"$TMP/p.txt"
check "percentile_list=50:99.5: the list's two, of lat, then 18 of 0%=0" \
	test "$(cut -d';' -f18-20,37 "$TMP/p.txt" | sed 's/=[0-9]*/=/g')" = "50.000000%=;99.500000%=;0%=;0%="

# field counts against fio's own terse output, key options and versions
if command -v fio >/dev/null; then
	while read -r opts; do
		# shellcheck disable=SC2086
		set -- "${J[@]}" --rw=randrw --size=16m --runtime=100ms --time_based $opts --minimal
		if ! fio "$@" >"$TMP/f.txt" 2>"$TMP/f.err"; then
			fail "fio $opts: $(head -c 200 "$TMP/f.err")"
			continue
		fi
		# fio's null engine has no disk: blkstack's disk fields left out
		if ! "$BLKSTACK" bench "$@" --disk_util=0 >"$TMP/b.txt" 2>"$TMP/b.err"; then
			fail "bench $opts: $(head -c 200 "$TMP/b.err")"
			continue
		fi
		check "fio's field count ($(nfields "$TMP/f.txt")): ${opts:-defaults}" \
			test "$(nfields "$TMP/f.txt")" -eq "$(nfields "$TMP/b.txt")"
		# the fields that are names, not numbers, in the same places
		shape() { tr ';' '\n' <"$1" | sed -n '1p;3,$p' | sed 's/[0-9.]*%=[0-9]*$/P/; s/^[0-9.]*%$/%/; s/^[0-9.]*$/N/' | tr '\n' ' '; }
		check "fio's field kinds (number, %, P%=v) in order: ${opts:-defaults}" \
			test "$(shape "$TMP/f.txt")" = "$(shape "$TMP/b.txt")"
	done <<'OPTS'

--terse-version=4
--terse-version=5
--unified_rw_reporting=mixed
--unified_rw_reporting=both --terse-version=5
--lat_percentiles=1 --percentile_list=50:99:99.999
--clat_percentiles=0
OPTS
else
	echo "# fio is not installed: the comparison with fio's terse lines is skipped"
fi
expect_error "terse-version=2: refused with why" "fio's old layout" \
	bench --minimal --terse-version=2
# fio's comma list: terse, JSON, normal, in fio's order, in one output
"$BLKSTACK" bench "${J[@]}" --rw=read --size=16m --output-format=normal,json,terse >"$TMP/all.txt"
check "--output-format=normal,json,terse: the terse line first" grep -q '^3;blkstack-' <(head -1 "$TMP/all.txt")
check "... then the JSON document, whole" \
	bash -c "sed -n '2,/^}/p' '$TMP/all.txt' | jq -e '.jobs[0].read.total_ios == 4096'"
check "... then the normal report" \
	bash -c "sed -n '/^}/,\$p' '$TMP/all.txt' | grep -q '^t: (groupid=0, jobs=1)'"
finish
