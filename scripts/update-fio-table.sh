#!/usr/bin/env bash
# Rewrite docs/bench.md's fio option table from the binary's
# `blkstack bench --fio-options` (tests/func/test_jobfile_fio.sh fails while
# the two differ).  Usage: scripts/update-fio-table.sh [path/to/blkstack]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/blkstack}
table=$(mktemp)
trap 'rm -f "$table"' EXIT
"$bin" bench --fio-options >"$table"
awk -v t="$table" '
	/<!-- fio-options table: begin -->/ { print; while ((getline l < t) > 0) print l; skip = 1; next }
	/<!-- fio-options table: end -->/ { skip = 0 }
	!skip' docs/bench.md >docs/bench.md.new
mv docs/bench.md.new docs/bench.md
