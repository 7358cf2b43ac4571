#!/usr/bin/env bash
# --plot=DIR: gnuplot's SVG pictures of a job (latency histogram and CDF,
# IOPS and latency over time), of the matrix (grouped bars) and of A/B
# sides (one chart each for all sides).  The data files behind them agree
# with blkstack's own report; the SVGs are gnuplot's and render to PNG
# (rsvg-convert); a missing gnuplot is a clear error before anything runs.
source "$(dirname "$0")/lib.sh" "$@"

BLKSTACK=$(realpath "$BLKSTACK")
B=$BLKSTACK
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot missing (scripts/install-deps.sh)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
cd "$TMP" || exit 1

# svg_ok FILE: gnuplot made it, and it renders (when rsvg-convert is there)
svg_ok() {
	grep -q "Produced by GNUPLOT" "$1" || return 1
	if command -v rsvg-convert >/dev/null; then
		rsvg-convert -o "$1.png" "$1" && [ "$(stat -c %s "$1.png")" -gt 5000 ]
	fi
}

# --- a job: histogram, CDF, over time ----------------------------------
if "$B" bench --dev=null --name=j --rw=randrw --bs=4k --iodepth=4 --size=16M \
	--runtime=500ms --time_based --rate_iops=4000 --plot=p1 --eta=never \
	--output-format=json >p1.json 2>p1.err; then
	for f in j.1-clat-hist j.1-clat-cdf j.1-iops j.1-lat; do
		check "job: $f.svg" svg_ok "p1/$f.svg"
	done
	check "job: the histogram's data add up to 100 % and agree with the summary" \
		python3 - p1 <<'EOF'
import json, sys, os
d = sys.argv[1]
js = json.load(open(os.path.join(d + ".json")))["jobs"][0]
rows = [[float(x) for x in l.split()] for l in open(os.path.join(d, "j.1-clat.dat"))
        if l.strip() and not l.startswith("#")]
assert abs(sum(r[2] for r in rows) - 100) < 1e-3
assert abs(rows[-1][3] - 100) < 1e-6
assert all(a[3] <= b[3] for a, b in zip(rows, rows[1:]))
# the bars span the summary's min..max clat (us), all directions
lo = min(js[k]["clat_ns"]["min"] for k in ("read", "write")) / 1e3
hi = max(js[k]["clat_ns"]["max"] for k in ("read", "write")) / 1e3
assert rows[0][0] <= lo * 1.001 and rows[-1][1] >= hi * 0.999, (rows[0], rows[-1], lo, hi)
# the CDF crosses 50 % near blkstack's median (a bar is 1/8 of an octave)
p50 = js["read"]["clat_ns"]["percentile"]["50.000000"] / 1e3
x50 = next(r[1] for r in rows if r[3] >= 50)
assert 0.7 * p50 <= x50 <= 1.5 * p50 + 0.01, (x50, p50)
EOF
	check "job: IOPS over time add up to the I/Os" python3 - p1 <<'EOF'
import json, sys, os
d = sys.argv[1]
js = json.load(open(os.path.join(d + ".json")))["jobs"][0]
blocks = open(os.path.join(d, "j.1-time.dat")).read().split("\n\n\n")
for name, b in zip(("read", "write"), blocks):
    pts = [[x for x in l.split()] for l in b.splitlines() if l.strip() and not l.startswith("#")]
    t = [float(p[0]) for p in pts]
    assert t == sorted(t) and len(pts) >= 20, name     # 10 ms windows over 500 ms
    lens = [t[0]] + [b - a for a, b in zip(t, t[1:])]
    n = sum(float(p[1]) * w for p, w in zip(pts, lens))
    tot = js[name]["total_ios"]
    assert abs(n - tot) <= 0.03 * tot + 3, (name, n, tot)
EOF
else
	fail "job run: $(cat p1.err)"
fi

# --- the matrix: grouped bars with the table's numbers -------------------
if "$B" bench --dev=null,ram --size=16M --runtime=100ms --plot=p2 --eta=never \
	>p2.txt 2>p2.err; then
	check "matrix: matrix-iops.svg" svg_ok p2/matrix-iops.svg
	check "matrix: matrix-lat.svg" svg_ok p2/matrix-lat.svg
	check "matrix: the bars are the IOPS(K) table" python3 - p2 <<'EOF'
import sys, os
d = sys.argv[1]
dat = [l.split() for l in open(os.path.join(d, "matrix-iops.dat"))]
assert dat[0] == ["workload", "null", "ram"], dat[0]
text = open(d + ".txt").read()
table = text.split("IOPS(K)")[1].split("REQS(K)")[0]
rows = {l.split("|")[0].strip(): [float(x) for x in l.split("|")[1:]]
        for l in table.splitlines() if "|" in l and l.split("|")[0].strip()}
assert len(dat) == 5
for r in dat[1:]:
    # the table prints two decimals of the same value
    assert all(abs(float(x) - y) <= 0.0051 for x, y in zip(r[1:], rows[r[0]])), (r, rows[r[0]])
EOF
else
	fail "matrix run: $(cat p2.err)"
fi

# --- A/B: both sides on one chart ---------------------------------------
if "$B" bench --ab= --ab='--completion_nsec=100000 --irqmode=2' --dev=null \
	--rw=randread --iodepth=4 --size=16M --runtime=50ms --time_based \
	--ab_min_rounds=6 --ab_max_rounds=6 --plot=p3 >p3.txt 2>p3.err; then
	check "A/B: ab-bench-clat-hist.svg" svg_ok p3/ab-bench-clat-hist.svg
	check "A/B: ab-bench-clat-cdf.svg" svg_ok p3/ab-bench-clat-cdf.svg
	check "A/B: a series per side, side B the slower" python3 - p3 <<'EOF'
import sys, os
d = sys.argv[1]
blocks = [b for b in open(os.path.join(d, "ab-bench-clat.dat")).read().split("\n\n\n") if b.strip()]
assert len(blocks) == 2
med = []
for b in blocks:
    rows = [[float(x) for x in l.split()] for l in b.splitlines() if l.strip() and not l.startswith("#")]
    assert abs(rows[-1][3] - 100) < 1e-6
    med.append(next(r[1] for r in rows if r[3] >= 50))
assert med[1] > 5 * med[0], med      # 100 us of completion_nsec against none
EOF
	check "A/B: the legend names each side's options" \
		grep -q "B: --completion_nsec=100000 --irqmode=2" p3/ab-bench.gp
else
	fail "A/B run: $(cat p3.err)"
fi

# --- errors --------------------------------------------------------------
mkdir -p nogp
# a PATH without gnuplot: said before the run, nothing made
PATH=$TMP/nogp "$B" bench --dev=null --rw=read --size=1M --plot=x >/dev/null 2>nogp.err
rc=$?
if [ $rc -eq 1 ] && grep -q "plot=x: gnuplot is not installed.*gnuplot-nox" nogp.err && [ ! -d x ]; then
	pass "gnuplot missing: exit 1, nothing made"
else
	fail "gnuplot missing: rc=$rc, $(cat nogp.err)"
fi
: >afile
expect_error "plot= on a file" "plot=afile: not a directory" \
	bench --dev=null --rw=read --size=1M --plot=afile

finish
