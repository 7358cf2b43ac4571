#!/usr/bin/env bash
# The stock fio job files (Debian's fio-examples) through blkstack bench,
# unchanged.  First how many it accepts (--parse-only, nothing runs),
# pointed at blkstack media two ways: --dev=ram, and on files (no --dev:
# each job's ioengine= and files choose the driver, and --directory= a
# temporary folder for the jobs without one of their own); for the files
# refused, every reason named in their one run, grouped, with how many
# files each reason refuses and how many it alone refuses.  Then a handful
# of the accepted files run for real, each from a copy whose sizes and
# runtime are cut to RUN_SIZE and RUN_TIME and whose files are in the
# temporary folder: per job the driver, engine, iodepth, I/Os and bytes.
#
# usage: bench/fio-corpus.sh [corpus_dir] [run_size=16m] [run_time_s=1]
#        corpus_dir: /usr/share/doc/fio/examples (fio-examples) by default
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        BASE=path/to/another/blkstack: its acceptance too (before/after)
#        RUN="a.fio b.fio": the files to run (default: the list below)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
CORPUS=${1:-/usr/share/doc/fio/examples}
RUN_SIZE=${2:-16m}
RUN_TIME=${3:-1}
BLKSTACK=$(realpath "${BLKSTACK:-build/blkstack}")
BASE=${BASE:-}
RUN=${RUN:-aio-read.fio ssd-test.fio fio-rand-RW.fio fio-seq-write.fio backwards-read.fio basic-verify.fio iometer-file-access-server.fio waitfor.fio cpp_null.fio zipf.fio}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

command -v jq >/dev/null || { echo "jq is not installed: scripts/install-deps.sh" >&2; exit 1; }
ls "$CORPUS"/*.fio >/dev/null 2>&1 ||
	{ echo "no job files in $CORPUS (Debian: apt-get install fio-examples)" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null
bench_machine_start fio

# accept BIN MODE DIR: per file, "name ok" or "name refused"; its
# messages in DIR/name.err
accept() {
	local bin=$1 mode=$2 out=$3 f name
	mkdir -p "$out"
	if [ "$mode" = ram ]; then
		set -- --dev=ram
	else
		set -- --directory="$TMP/files"
	fi
	# one line for the whole corpus in the commands list
	bench_show_cmd "$bin" bench --parse-only "$@" "$CORPUS/EACH.fio"
	for f in "$CORPUS"/*.fio; do
		name=$(basename "$f")
		if "$bin" bench --parse-only "$@" "$f" >/dev/null 2>"$out/$name.err"; then
			echo "$name ok"
		else
			echo "$name refused"
		fi
	done
}

# reasons DIR: each refused file's reasons, one "file<TAB>reason" a line:
# the engine, the kind of option (fio_opts.c's words), the value refused
reasons() {
	local e name
	for e in "$1"/*.err; do
		name=$(basename "$e" .err)
		sed -n 's/^blkstack bench: [^ ]*:[0-9]*: //p' "$e" |
			sed -E \
				-e "s/^ioengine=([^:]*): a fio engine blkstack bench does not support: (.*)/engine: \\2 (\\1)/" \
				-e "s/^ioengine=([^:]*): not a fio engine.*/engine: not a fio 3.33 engine (\\1)/" \
				-e "s/^option '([^']*)' is a fio option that blkstack bench does not support: an option of ioengine=.*, an engine blkstack refuses/engine's own option (of a refused engine)/" \
				-e "s/^option '([^']*)' is a fio option that blkstack bench does not support: (.*)/option: \\2 (\\1)/" \
				-e "s/^.* \(the environment variable '([^']*)' is not set\)$/value: \${VAR} not set in the environment: the value empty, as fio makes it (\1)/" \
				-e "s/^unknown option '([^']*)'.*/unknown option (\\1)/" \
				-e "s/^([a-z_]*)=[^:]*: (.*)/value: \\1= \\2/" |
			awk -v n="$name" '{ print n "\t" $0 }'
	done
}

declare -A OK
for mode in ram files; do
	accept "$BLKSTACK" $mode "$TMP/$mode" >"$TMP/$mode.list"
	OK[$mode]=$(grep -c ' ok$' "$TMP/$mode.list" || true)
	if [ -n "$BASE" ]; then
		accept "$BASE" $mode "$TMP/base.$mode" >"$TMP/base.$mode.list"
		OK[base.$mode]=$(grep -c ' ok$' "$TMP/base.$mode.list" || true)
	fi
done
total=$(wc -l <"$TMP/ram.list")

echo "corpus: $CORPUS, $total job files"
echo "accepted (--parse-only):"
printf '  %-34s %s of %s\n' "--dev=ram" "${OK[ram]}" "$total"
printf '  %-34s %s of %s\n' "on files (no --dev, --directory=)" "${OK[files]}" "$total"
if [ -n "$BASE" ]; then
	printf '  %-34s %s of %s\n' "BASE, --dev=ram" "${OK[base.ram]}" "$total"
	printf '  %-34s %s of %s\n' "BASE, on files" "${OK[base.files]}" "$total"
fi
echo "  accepted: $(awk '$2 == "ok" { printf "%s ", $1 }' "$TMP/files.list")"
if ! cmp -s <(awk '$2 == "ok"' "$TMP/ram.list") <(awk '$2 == "ok"' "$TMP/files.list"); then
	echo "  accepted one way only: $(diff <(awk '$2 == "ok" { print $1 }' "$TMP/ram.list") \
		<(awk '$2 == "ok" { print $1 }' "$TMP/files.list") | sed -n 's/^[<>] //p' | tr '\n' ' ')"
fi

# fio's own verdict on each file (--parse-only, nothing runs), and which
# files blkstack refuses for an engine it cannot run: the files left are
# those a user could point at blkstack's media
mkdir -p "$TMP/fio"
bench_show_cmd fio --parse-only "$CORPUS/EACH.fio"
for f in "$CORPUS"/*.fio; do
	name=$(basename "$f")
	if (cd "$TMP/fio" && fio --parse-only "$f") >/dev/null 2>&1; then
		echo "$name ok"
	else
		echo "$name refused"
	fi
done >"$TMP/fio.list"
reasons "$TMP/files" | sort -u >"$TMP/reasons"
reasons "$TMP/ram" | sort -u >"$TMP/reasons.ram"
engine_files() { awk -F'\t' '$2 ~ /^engine/ { print $1 }' "$@" | sort -u; }
fio_ok=$(awk '$2 == "ok" { print $1 }' "$TMP/fio.list" | sort)
applies=$(comm -23 <(echo "$fio_ok") <(engine_files "$TMP/reasons" "$TMP/reasons.ram"))
n_fio=$(echo "$fio_ok" | grep -c . || true)
n_app=$(echo "$applies" | grep -c . || true)
echo "fio 3.33 (--parse-only) accepts $n_fio of $total; of those, $n_app name no engine blkstack cannot run:"
for mode in ram files; do
	got=$(comm -12 <(echo "$applies") <(awk '$2 == "ok" { print $1 }' "$TMP/$mode.list" | sort) | grep -c . || true)
	printf "  %-34s %s of %s (%s %%)\n" "$(if [ $mode = ram ]; then echo "with --dev=ram"; else echo "on files"; fi)" "$got" "$n_app" \
		"$(awk -v a="$got" -v b="$n_app" 'BEGIN { printf "%.0f", b ? 100 * a / b : 0 }')"
	miss=$(comm -23 <(echo "$applies") <(awk '$2 == "ok" { print $1 }' "$TMP/$mode.list" | sort) | tr '\n' ' ')
	[ -z "$miss" ] || echo "    refused by blkstack only: $miss"
done
echo "  refused by fio too: $(awk '$2 != "ok" { print $1 }' "$TMP/fio.list" | sort |
	comm -12 - <(awk '$2 != "ok" { print $1 }' "$TMP/files.list" | sort) |
	comm -23 - <(engine_files "$TMP/reasons") | tr '\n' ' ')(their engines apart)"
echo
echo "refused on files, by reason: files it refuses, files it alone refuses, reason"
# group each reason's detail (the option or engine name) under its kind
awk -F'\t' '
	{
		kind = $2; detail = ""
		if (match(kind, / \(([^()]*)\)$/)) {
			detail = substr(kind, RSTART + 2, RLENGTH - 3)
			kind = substr(kind, 1, RSTART - 1)
		}
		if (!(($1, kind) in seen)) {
			seen[$1, kind] = 1
			files[kind]++
			kinds[$1] = kinds[$1] "\n" kind
			nk[$1]++
		}
		if (detail != "" && !((kind, detail) in dseen)) {
			dseen[kind, detail] = 1
			details[kind] = details[kind] (details[kind] == "" ? "" : ", ") detail
		}
	}
	END {
		for (f in nk)
			if (nk[f] == 1) {
				k = substr(kinds[f], 2)
				alone[k]++
			}
		for (k in files)
			printf "%5d %5d  %s%s\n", files[k], alone[k], k,
				details[k] == "" ? "" : " [" details[k] "]"
	}' "$TMP/reasons" | sort -k1,1nr -k3

# the representative files, run for real from copies cut to size
echo
echo "run for real (copies: size= and filesize= $RUN_SIZE, runtime= ${RUN_TIME}s, files in a temporary folder; no --dev):"
mkdir -p "$TMP/run"
for name in $RUN; do
	src=$CORPUS/$name
	[ -f "$src" ] || { echo "  $name: not in the corpus"; continue; }
	sed -E \
		-e "s|^([[:space:]]*directory[[:space:]]*=).*|\\1$TMP/run|" \
		-e "s|^([[:space:]]*filename[[:space:]]*=)[[:space:]]*/.*/([^/]*)$|\\1$TMP/run/\\2|" \
		-e "s|^([[:space:]]*(file)?size[[:space:]]*=)[[:space:]]*[0-9]+[kKmMgGtT]?[iI]?[bB]?|\\1$RUN_SIZE|" \
		-e "s|^([[:space:]]*(runtime\|timeout)[[:space:]]*=)[[:space:]]*[0-9]+[a-z]*|\\1$RUN_TIME|" \
		"$src" >"$TMP/run/$name"
	if (cd "$TMP/run" && bench_cmd "$BLKSTACK" bench --size="$RUN_SIZE" --runtime="$RUN_TIME" \
		--output-format=json "$name" >"$name.json" 2>"$name.err"); then
		rc=0
	else
		rc=$?
	fi
	echo "  $name: exit $rc$(grep -q . "$TMP/run/$name.err" && printf '; stderr: %s' "$(tr '\n' ' ' <"$TMP/run/$name.err" | cut -c1-300)")"
	[ -s "$TMP/run/$name.json" ] || continue
	jq -r '.jobs[] | "    \(.jobname): dev=\(.blkstack.dev) iodepth=\(."job options".iodepth) read \(.read.total_ios) I/Os \(.read.io_bytes) B, write \(.write.total_ios) I/Os \(.write.io_bytes) B, err=\(.error)\(if .blkstack.uring then "; requests: ring \(.blkstack.uring.ring_requests), inline \(.blkstack.uring.inline_requests), pool \(.blkstack.uring.pool_requests)" else "" end)"' \
		"$TMP/run/$name.json"
done
echo "  files laid out: $(cd "$TMP/run" && find . -type f ! -name '*.fio' ! -name '*.json' ! -name '*.err' -printf '%P:%s ' | sort)"
bench_machine_end
