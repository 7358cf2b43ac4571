#!/usr/bin/env bash
# fio's logs (write_lat_log, write_bw_log, write_iops_log, write_hist_log,
# log_avg_msec, log_max_value, log_offset, per_job_logs) and json+, checked
# against blkstack's own JSON summary, against the files fio itself writes
# for the same options (names and columns), and fed to Debian fio's tools:
# fio_jsonplus_clat2csv, fio2gnuplot, fio_generate_plots.
source "$(dirname "$0")/lib.sh" "$@"

command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
B=$(readlink -f "$BLKSTACK")
BLKSTACK=$B
cd "$TMP" || exit 1

# run DIR ARGS...: blkstack bench in DIR, JSON+ report in DIR/out.json
run() {
	local d=$1
	shift
	mkdir -p "$d"
	(cd "$d" && "$B" bench --dev=null --size=64M --eta=never \
		--output-format=json+ --output=out.json "$@" 2>err)
}

# --- per-I/O logs: one line per I/O, fio's columns ---------------------
if run pio --name=j --rw=randrw --bs=4k --iodepth=4 --runtime=300ms \
	--time_based --rate_iops=3000 --write_lat_log=j --write_bw_log \
	--write_iops_log=j --log_offset=1; then
	check "per-I/O: fio's file names" \
		test -s pio/j_lat.1.log -a -s pio/j_clat.1.log -a -s pio/j_slat.1.log \
		-a -s pio/j_bw.1.log -a -s pio/j_iops.1.log
	check "per-I/O: lines agree with the summary and with each other" python3 - pio <<'EOF'
import json, sys, os
d = sys.argv[1]
js = json.load(open(os.path.join(d, "out.json")))["jobs"][0]
n = {0: js["read"]["total_ios"], 1: js["write"]["total_ios"]}
rows = {}
for k in ("lat", "clat", "slat", "bw", "iops"):
    rows[k] = [[int(x) for x in l.split(",")] for l in open(os.path.join(d, "j_%s.1.log" % k))]
    assert all(len(r) == 6 for r in rows[k]), k          # time, value, ddir, bs, offset, prio
    for dd in (0, 1):
        assert sum(1 for r in rows[k] if r[2] == dd) == n[dd], (k, dd)
L, C, S, BW, IO = (rows[k] for k in ("lat", "clat", "slat", "bw", "iops"))
t = [r[0] for r in L]
assert t == sorted(t) and t[-1] <= js["job_runtime"] + 1
for l, c, s, b, i in zip(L, C, S, BW, IO):
    assert l[0] == c[0] == s[0] and l[2:] == c[2:] == s[2:] == b[2:] == i[2:]
    assert l[1] == c[1] + s[1]
    assert b[1] == 4096 * 10**6 // max(c[1], 1)
    assert i[1] == 1 and l[3] == 4096 and l[4] % 4096 == 0 and l[4] < 64 << 20 and l[5] == 0
# the clat log holds the summary's extremes exactly
for dd, name in ((0, "read"), (1, "write")):
    v = [r[1] for r in C if r[2] == dd]
    assert min(v) == js[name]["clat_ns"]["min"] and max(v) == js[name]["clat_ns"]["max"], name
EOF
else
	fail "per-I/O run: $(cat pio/err)"
fi

# --- the same options given to fio: the same files, the same columns ----
if command -v fio >/dev/null; then
	mkdir -p fioref
	for lo in 0 1; do
		rm -f fioref/*.log pio2/*.log
		(cd fioref && fio --name=j --ioengine=null --rw=randwrite --size=16M \
			--number_ios=100 --rate_iops=1000 --write_lat_log=j --write_bw_log=j \
			--write_iops_log=j --write_hist_log=j --log_hist_msec=20 --log_offset=$lo --numjobs=2 \
			>/dev/null 2>&1)
		run pio2 --name=j --rw=randwrite --size=16M --number_ios=100 \
			--rate_iops=1000 --write_lat_log=j --write_bw_log=j --write_iops_log=j \
			--write_hist_log=j --log_hist_msec=20 --log_offset=$lo --numjobs=2
		# shellcheck disable=SC2012
		f=$(cd fioref && ls ./*.log | sort) b=$(cd pio2 && ls ./*.log | sort)
		if [ -n "$f" ] && [ "$f" = "$b" ]; then
			pass "log_offset=$lo: fio's file names ($(echo "$b" | wc -l) files)"
		else
			fail "log_offset=$lo: file names differ: fio: $f; blkstack: $b"
		fi
		for x in j_lat.1 j_bw.2 j_iops.1 j_clat_hist.2; do
			nf=$(awk -F, 'NR == 1 {print NF}' "fioref/$x.log")
			nb=$(awk -F, 'NR == 1 {print NF}' "pio2/$x.log")
			if [ -n "$nf" ] && [ "$nf" = "$nb" ]; then
				pass "log_offset=$lo: $x.log: fio's $nf columns"
			else
				fail "log_offset=$lo: $x.log: fio has $nf columns, blkstack $nb"
			fi
		done
	done
fi

# --- windows: log_avg_msec, log_max_value; the hist log ----------------
for mx in 0 1; do
	if run win$mx --name=w --rw=randread --bs=4k --iodepth=2 --runtime=500ms \
		--time_based --rate_iops=4000 --write_lat_log=w --write_bw_log=w \
		--write_iops_log=w --log_avg_msec=50 --log_max_value=$mx \
		--write_hist_log=w --log_hist_msec=100 --log_hist_coarseness=1; then
		check "log_avg_msec=100 log_max_value=$mx: windows agree with the summary" \
			python3 - win$mx $mx <<'EOF'
import json, sys, os
d, mx = sys.argv[1], int(sys.argv[2])
js = json.load(open(os.path.join(d, "out.json")))["jobs"][0]["read"]
def rows(k):
    return [[int(x) for x in l.split(",")] for l in open(os.path.join(d, "w_%s.1.log" % k))]
io, bw, clat = rows("iops"), rows("bw"), rows("clat")
assert all(len(r) == 5 and r[2] == 0 and r[3] == 0 for r in io + bw + clat)
assert [r[0] for r in io[:9]] == list(range(50, 500, 50)), io[:9]
full = io[:-1]     # the last window may be partial: its own length
n = sum(r[1] * 0.05 for r in full) + io[-1][1] * (io[-1][0] - full[-1][0]) / 1000.0
assert abs(n - js["total_ios"]) <= 0.02 * js["total_ios"] + 2, (n, js["total_ios"])
for i, b in zip(io, bw):
    assert abs(b[1] - i[1] * 4) <= 1, (i, b)        # 4 KiB blocks
if mx:
    assert max(r[1] for r in clat) == js["clat_ns"]["max"]
else:
    assert all(js["clat_ns"]["min"] <= r[1] <= js["clat_ns"]["max"] for r in clat)
h = [[int(x) for x in l.split(",")] for l in open(os.path.join(d, "w_clat_hist.1.log"))]
assert all(len(r) == 3 + 1856 // 2 for r in h)
assert [r[0] for r in h[:4]] == [100, 200, 300, 400]
assert sum(sum(r[3:]) for r in h) == js["clat_ns"]["N"]
EOF
	else
		fail "log_max_value=$mx run: $(cat win$mx/err)"
	fi
done

# --- json+: fio's bins, and fio_jsonplus_clat2csv on them ---------------
if run jp --name=a --rw=randrw --bs=4k --iodepth=8 --runtime=300ms --time_based \
	--name=b --rw=randread --numjobs=2 --new_group --group_reporting; then
	check "json+: bins are fio's midpoints and add up to N" python3 - jp/out.json <<'EOF'
import json, sys
def mid(i):      # fio's bins: exact below 128, then 64 per power of two
    if i < 128:
        return i
    s = i // 64 - 1
    return (1 << (s + 6)) + (i % 64) * (1 << s) + (1 << (s - 1))
mids = {str(mid(i)) for i in range(29 * 64)}
jobs = json.load(open(sys.argv[1]))["jobs"]
assert len(jobs) == 2
for j in jobs:
    for dd in ("read", "write", "trim"):
        c = j[dd]["clat_ns"]
        if j[dd]["total_ios"] == 0:
            assert "bins" not in c
            continue
        assert set(c["bins"]) <= mids
        assert sum(c["bins"].values()) == c["N"] == j[dd]["total_ios"]
        lo = min(int(k) for k in c["bins"])
        assert lo <= c["min"] * 1.01 + 1 and max(int(k) for k in c["bins"]) >= c["max"] * 0.99 - 1
EOF
	if command -v fio_jsonplus_clat2csv >/dev/null; then
		if (cd jp && fio_jsonplus_clat2csv out.json lat.csv >/dev/null &&
			fio_jsonplus_clat2csv out.json lat.csv --validate >/dev/null); then
			pass "fio_jsonplus_clat2csv converts and validates"
		else
			fail "fio_jsonplus_clat2csv failed"
		fi
		check "fio_jsonplus_clat2csv: counts add up to the I/Os, the CDF ends at 1" \
			python3 - jp <<'EOF'
import json, sys, os
d = sys.argv[1]
jobs = json.load(open(os.path.join(d, "out.json")))["jobs"]
for n, j in enumerate(jobs):
    lines = open(os.path.join(d, "lat_job%d.csv" % n)).read().splitlines()
    cols = [c.strip() for c in lines[0].split(",")]
    for dd in ("read", "write"):
        if not j[dd]["total_ios"]:
            continue
        ci = cols.index(dd + "_clat_ns_count")
        vals = [l.split(",") for l in lines[1:]]
        cnt = [int(v[ci]) for v in vals if v[ci].strip()]
        cum = [int(v[ci + 1]) for v in vals if v[ci + 1].strip()]
        pct = [float(v[ci + 2]) for v in vals if v[ci + 2].strip()]
        assert sum(cnt) == j[dd]["total_ios"] == cum[-1], (n, dd)
        assert pct[-1] == 1.0 and pct == sorted(pct)
        # the CSV's median is within a bin of blkstack's p50
        med = next(int(v[0]) for v in vals if v[ci + 2].strip() and float(v[ci + 2]) >= 0.5)
        p50 = j[dd]["clat_ns"]["percentile"]["50.000000"]
        assert abs(med - p50) <= max(p50 / 16, 20), (med, p50)
EOF
	fi
else
	fail "json+ run: $(cat jp/err)"
fi

# --- fio2gnuplot and fio_generate_plots on blkstack's logs --------------
if command -v gnuplot >/dev/null && command -v fio2gnuplot >/dev/null; then
	if run gp --name=g --rw=randread --bs=4k --iodepth=2 --runtime=600ms --time_based \
		--rate_iops=2000 --write_bw_log=g --write_iops_log=g --write_lat_log=g \
		--log_avg_msec=50; then
		mkdir -p gp/out
		(cd gp && fio2gnuplot -b -g -k -d out/ -t blkstack >/dev/null 2>&1)
		check "fio2gnuplot: pictures from the bw log" test -s gp/out/result.average.png
		check "fio2gnuplot: its average is blkstack's bandwidth" python3 - gp <<'EOF'
import json, sys, os
d = sys.argv[1]
g = dict(l.strip().split("=") for l in open(os.path.join(d, "out", "result.global")) if "=" in l)
bw = json.load(open(os.path.join(d, "out.json")))["jobs"][0]["read"]["bw"]
assert abs(float(g["avg"]) - bw) <= 0.03 * bw, (g, bw)
assert int(g["disks_count"]) == 1 and int(g["values_count"]) >= 9
EOF
		(cd gp && fio_generate_plots blkstack >/dev/null 2>&1)
		for k in lat clat slat bw iops; do
			check "fio_generate_plots: blkstack-$k.svg" \
				grep -q "<svg" "gp/blkstack-$k.svg"
		done
	else
		fail "plot run: $(cat gp/err)"
	fi
else
	echo "# gnuplot or fio2gnuplot missing: their checks skipped"
fi

# --- names: per_job_logs=0, several devices, a job file -----------------
mkdir -p names && cd names || exit 1
"$B" bench --dev=null --name=n --rw=read --size=1M --write_iops_log=x \
	--per_job_logs=0 --eta=never >/dev/null 2>&1
check "per_job_logs=0: no thread number" test -s x_iops.log
"$B" bench --dev=null,ram --name=n --rw=read --size=1M --write_bw_log \
	--eta=never >/dev/null 2>&1
check "two devices: each its own file" test -s n.null_bw.1.log -a -s n.ram_bw.1.log
printf '[global]\nrw=read\nsize=1M\nwrite_lat_log=jf\nlog_avg_msec=50\n[a]\n[b]\n' >j.fio
"$B" bench --dev=null --eta=never j.fio >/dev/null 2>&1
check "job file: write_lat_log, threads numbered over the run" \
	test -s jf_clat.1.log -a -s jf_clat.2.log
"$B" bench --dev=null --name=n --rw=read --size=1M --write_hist_log=h \
	--eta=never >/dev/null 2>&1
check "write_hist_log without log_hist_msec: an empty file, as fio's" \
	test -f h_clat_hist.1.log -a ! -s h_clat_hist.1.log
cd .. || exit 1

# --- errors name the option and what is allowed -------------------------
expect_error "gtod_reduce with a log" "write_lat_log: .*gtod_reduce=1.*allowed: gtod_reduce=0" \
	bench --dev=null --rw=read --write_lat_log=x --gtod_reduce=1
expect_error "log_hist_coarseness range" "log_hist_coarseness.*0.*6" \
	bench --dev=null --rw=read --log_hist_coarseness=7
expect_error "log_avg_msec is a number" "log_avg_msec" \
	bench --dev=null --rw=read --log_avg_msec=x
mkdir -p mx
(cd mx && "$B" bench --dev=null --size=4M --runtime=50ms --write_bw_log=x \
	--eta=never >out 2>err)
check "the matrix: a note, no log files" \
	grep -q "note: .*write_bw_log.*no log files for the matrix" mx/err
check "the matrix: ran" test "$(find mx -name 'x_*' | wc -l)" -eq 0 -a -s mx/out
expect_error "a log in a missing directory" "log: /nonexistent/x_bw.1.log" \
	bench --dev=null --rw=read --size=1M --write_bw_log=/nonexistent/x

finish
