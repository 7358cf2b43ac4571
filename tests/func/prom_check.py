#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a Prometheus text exposition (format 0.0.4) as blkstack serve
--metrics writes it, beyond what promtool's `check metrics` lints:

- every line is a comment, "# HELP name text", "# TYPE name type" or a
  sample "name{label="value",...} value" with valid names, escapes and a
  float value; each family's HELP and TYPE come once, before its samples,
  and a family's samples are not interleaved with another's;
- counters are >= 0 (not NaN);
- each histogram series has buckets in increasing le order ending at
  +Inf, cumulative (never decreasing), and _count equals the +Inf bucket.

Usage: prom_check.py FILE.  Exit 0 when it holds, 1 with the reasons.
"""
import math
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'
SAMPLE = re.compile(r"^(" + NAME + r")(?:\{(.*)\})? (\S+)$")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def labels(s):
    out, pos = [], 0
    while pos < len(s):
        m = re.compile(LABEL).match(s, pos)
        if not m:
            raise ValueError("bad label at %r" % s[pos:])
        out.append((m.group(1), m.group(2)))
        pos = m.end()
        if pos < len(s):
            if s[pos] != ",":
                raise ValueError("expected ',' at %r" % s[pos:])
            pos += 1
    return out


def value(v):
    if v in ("+Inf", "-Inf", "NaN"):
        return float(v.replace("Inf", "inf").replace("NaN", "nan"))
    return float(v)


def family_of(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and types.get(name[: -len(suffix)]) == "histogram":
            return name[: -len(suffix)]
    return name


def main():
    errs = []
    help_seen, types, done = set(), {}, set()
    current = None
    hist = {}  # (family, labels without le) -> {"buckets": [(le, v)], "count": v}
    for no, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
        line = line.rstrip("\n")
        where = "line %d" % no
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not re.fullmatch(NAME, name):
                    errs.append("%s: bad name %r" % (where, name))
                if parts[1] == "HELP":
                    if name in help_seen:
                        errs.append("%s: second HELP for %s" % (where, name))
                    help_seen.add(name)
                else:
                    if name in types:
                        errs.append("%s: second TYPE for %s" % (where, name))
                    if len(parts) != 4 or parts[3] not in TYPES:
                        errs.append("%s: bad TYPE line" % where)
                    else:
                        types[name] = parts[3]
                if name != current:
                    if current is not None:
                        done.add(current)
                    if name in done:
                        errs.append("%s: family %s split" % (where, name))
                    current = name
            continue
        if not line:
            errs.append("%s: empty line" % where)
            continue
        m = SAMPLE.match(line)
        if not m:
            errs.append("%s: not a sample: %r" % (where, line))
            continue
        name, lab, val = m.group(1), m.group(2) or "", m.group(3)
        try:
            lab = labels(lab)
            v = value(val)
        except ValueError as e:
            errs.append("%s: %s" % (where, e))
            continue
        fam = family_of(name, types)
        if fam != current:
            errs.append("%s: sample of %s outside its family (in %s)" % (where, fam, current))
        if fam not in types:
            errs.append("%s: %s has no TYPE" % (where, fam))
            continue
        if types[fam] == "counter" and not v >= 0:
            errs.append("%s: counter %s = %s" % (where, name, val))
        if types[fam] == "histogram":
            rest = tuple(kv for kv in lab if kv[0] != "le")
            h = hist.setdefault((fam, rest), {"buckets": [], "count": None})
            if name.endswith("_bucket"):
                le = [v2 for k, v2 in lab if k == "le"]
                if len(le) != 1:
                    errs.append("%s: bucket without le" % where)
                    continue
                h["buckets"].append((value(le[0]), v))
            elif name.endswith("_count"):
                h["count"] = v
    for (fam, lab), h in hist.items():
        b = h["buckets"]
        what = "%s%s" % (fam, dict(lab))
        if not b or b[-1][0] != math.inf:
            errs.append("%s: no +Inf bucket" % what)
            continue
        for (le0, v0), (le1, v1) in zip(b, b[1:]):
            if le1 <= le0:
                errs.append("%s: le %s after %s" % (what, le1, le0))
            if v1 < v0:
                errs.append("%s: bucket le=%s (%s) below le=%s (%s)" % (what, le1, v1, le0, v0))
        if h["count"] != b[-1][1]:
            errs.append("%s: _count %s, +Inf bucket %s" % (what, h["count"], b[-1][1]))
    if not types:
        errs.append("no families")
    for e in errs[:20]:
        print(e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
