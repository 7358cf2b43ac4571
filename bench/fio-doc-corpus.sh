#!/usr/bin/env bash
# The job files of fio's own documentation through fio and blkstack bench,
# side by side: what each accepts (--parse-only, nothing runs), and for
# what blkstack refuses, its reasons.  The examples are read at run time
# from the HOWTO that Debian's fio package installs (nothing of fio's text
# is kept in this repository):
#   job files  every "; -- start job file [NAME] --" ... "; -- end job
#              file [NAME] --" block, written under NAME (or doc-LINE.fio);
#              blocks without a [section] are include files, written for
#              the files that include them and not run alone; a job file
#              after the text's "$ VAR=value ... fio jobfile.fio" runs with
#              those variables, and once more without them (fio's empty
#              string for each)
#   commands   every "$ fio --name=..." command line
#   options    every "name=value" literal (``rw=write``) and every
#              indented "name=value" line of an example block, each alone
#              in a one-job file ("[doc]", "rw=read", then the line: a job
#              file's keywords such as $mb_memory are replaced, the
#              command line's are not), placeholders such as <int> or
#              ERR_LIST left out
# fio --parse-only reads every option but runs none of its checks (fio's
# parse_dryrun()): "fio accepts" is an upper bound; fio's real run refuses
# some of them too (cpus_allowed=0,5 on a machine with two CPUs).
#
# usage: bench/fio-doc-corpus.sh [HOWTO.rst[.gz]]
# env:   BLKSTACK=path/to/blkstack (default build/blkstack)
#        DEV=ram: blkstack with --dev=ram (default: the jobs' own engines)
#        TSV=FILE: also one line per example, KIND<TAB>NAME<TAB>fio
#        ok|refused<TAB>blkstack ok|refused<TAB>blkstack's first reason
#        QUIET=1: the summary only, not every example
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HOWTO=${1:-/usr/share/doc/fio/HOWTO.rst.gz}
BLKSTACK=$(realpath "${BLKSTACK:-build/blkstack}")
DEV=${DEV:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

command -v fio >/dev/null || { echo "fio is not installed: scripts/install-deps.sh" >&2; exit 1; }
[ -f "$HOWTO" ] || { echo "no $HOWTO (Debian: apt-get install fio)" >&2; exit 1; }
[ -x "$BLKSTACK" ] || make build >/dev/null
bench_machine_start fio
case $HOWTO in *.gz) zcat "$HOWTO" ;; *) cat "$HOWTO" ;; esac >"$TMP/howto.rst"
mkdir -p "$TMP/doc" "$TMP/run"

# The job file blocks: each to its file, its indentation taken off; the
# list of those with a section (the ones to run), "LINE<TAB>FILE<TAB>ENV"
# with the variables of the "$ VAR=value fio jobfile.fio" before it
awk -v dir="$TMP/doc" '
	/^[ \t]*\$ ([A-Z_][A-Z_0-9]*=[^ ]+ +)+fio / {
		env = $0
		sub(/^[ \t]*\$ /, "", env)
		sub(/ +fio .*/, "", env)
		next
	}
	/; -- start job file/ {
		name = $0
		sub(/.*; -- start job file */, "", name)
		sub(/ *--.*/, "", name)
		if (name == "")
			name = "doc-" NR ".fio"
		match($0, /^[ \t]*/)
		indent = RLENGTH
		file = dir "/" name
		printf "" >file
		start = NR
		has_section = 0
		next
	}
	/; -- end job file/ && file != "" {
		close(file)
		if (has_section)
			print start "\t" file "\t" env
		file = ""
		env = ""
		next
	}
	file != "" {
		line = substr($0, indent + 1)
		if (line ~ /^[ \t]*\[/)
			has_section = 1
		print line >>file
	}' "$TMP/howto.rst" >"$TMP/jobfiles"

# The command lines: "$ fio --name=..." with their arguments
sed -n 's/^[[:space:]]*\$ fio \(--name=.*\)$/\1/p' "$TMP/howto.rst" >"$TMP/commands"

# The option examples: ``name=value`` literals, and name=value alone on an
# indented line outside the job file blocks; placeholders left out
awk '
	/; -- start job file/ { in_job = 1 }
	/; -- end job file/ { in_job = 0; next }
	in_job { next }
	{
		s = $0
		while (match(s, /``[a-z_]+=[^`]+``/)) {
			print NR "\t" substr(s, RSTART + 2, RLENGTH - 4)
			s = substr(s, RSTART + RLENGTH)
		}
		if ($0 ~ /^[ \t]+[a-z_]+=[^ \t]+[ \t]*$/) {
			t = $0
			gsub(/^[ \t]+|[ \t]+$/, "", t)
			print NR "\t" t
		}
	}' "$TMP/howto.rst" |
	awk -F'\t' '$2 !~ /<[a-z_]+>|[A-Z][A-Z_]*_[A-Z_]+|^[a-z_]+=(blocksize|percentage)\// && !seen[$2]++' >"$TMP/options"

# judge KIND NAME -- ARGS...: fio and blkstack on the same arguments, in
# the folder of the job files (their includes and relative names)
judge() {
	local kind=$1 name=$2 f b why
	shift 3
	if (cd "$TMP/doc" && fio --parse-only "$@" >/dev/null 2>"$TMP/fio.err"); then f=ok; else f=refused; fi
	if (cd "$TMP/doc" && "$BLKSTACK" bench --parse-only ${DEV:+--dev=$DEV} "$@" \
		>/dev/null 2>"$TMP/blk.err"); then b=ok; else b=refused; fi
	why=''
	[ $b = refused ] && why=$(grep -v -e '^Try ' -e ': note: ' -e 'problems; nothing ran' "$TMP/blk.err" |
		head -1 | sed -e 's/^blkstack bench: //' -e "s|$TMP/doc/||g" | cut -c1-240)
	printf '%s\t%s\t%s\t%s\t%s\n' "$kind" "$name" "$f" "$b" "$why"
}

# one line each for the whole corpus in the commands list
bench_show_cmd fio --parse-only EACH.fio
bench_show_cmd "$BLKSTACK" bench --parse-only ${DEV:+--dev=$DEV} EACH.fio
{
	while IFS=$'\t' read -r line file vars; do
		if [ -n "$vars" ]; then
			read -ra assign <<<"$vars"
			(export "${assign[@]}"; judge job "$vars $(basename "$file") (HOWTO line $line)" -- "$file")
		fi
		judge job "$(basename "$file") (HOWTO line $line)" -- "$file"
	done <"$TMP/jobfiles"
	while IFS= read -r args; do
		read -ra argv <<<"$args"
		judge command "fio $args" -- "${argv[@]}"
	done <"$TMP/commands"
	n=0
	while IFS=$'\t' read -r line opt; do
		n=$((n + 1))
		printf '[doc]\nrw=read\n%s\n' "$opt" >"$TMP/doc/option-$n.fio"
		judge option "$opt (HOWTO line $line)" -- "$TMP/doc/option-$n.fio"
	done <"$TMP/options"
} >"$TMP/results"
[ -n "${TSV:-}" ] && cp "$TMP/results" "$TSV"

echo "fio's documentation: $HOWTO ($(fio --version)); blkstack bench --parse-only${DEV:+ --dev=$DEV}"
for kind in job command option; do
	awk -F'\t' -v k=$kind '
		$1 == k { n++; f += $3 == "ok"; b += $4 == "ok"; both += $3 == "ok" && $4 == "ok" }
		END {
			printf "  %-8s %3d: fio accepts %d, blkstack %d, both %d; of those fio accepts, blkstack refuses %d\n",
				k "s", n, f, b, both, f - both
		}' "$TMP/results"
done
if [ -z "${QUIET:-}" ]; then
	echo
	echo "each example: fio, blkstack, and blkstack's reason when it refuses"
	awk -F'\t' '{ printf "  %-7s %-8s %-8s %s%s\n", $1, $3, $4, $2, $5 == "" ? "" : "\n                            " $5 }' "$TMP/results"
fi
echo
echo "fio accepts, blkstack refuses (the reasons, grouped):"
awk -F'\t' '$3 == "ok" && $4 == "refused" { print $5 }' "$TMP/results" |
	sed -E -e 's/^[^ ]*:[0-9]+: //' -e "s/^option '([^']*)' is a fio option that blkstack bench does not support: (.*)/\\2 (\\1)/" |
	sort | uniq -c | sort -rn | sed 's/^/  /'
echo "blkstack accepts, fio refuses:"
awk -F'\t' '$3 == "refused" && $4 == "ok" { print "  " $1 ": " $2 }' "$TMP/results"
bench_machine_end
