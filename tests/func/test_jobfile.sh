#!/usr/bin/env bash
# A fio job file with [global] and two jobs runs both jobs with the right
# options; fio itself accepts the same file.
source "$(dirname "$0")/lib.sh" "$@"

cat >"$TMP/two.fio" <<'JOB'
; two jobs sharing [global]
[global]
bs=4k
size=32M
runtime=300ms
time_based
iodepth=8

[readers]
rw=randread
numjobs=2

# the second job overrides bs
[writers]
rw=write
bs=64k
JOB
"$BLKSTACK" bench --dev=ram --output-format=json "$TMP/two.fio" >"$TMP/out.json"
check "job file: exit 0" test $? -eq 0
check "job file: 3 job threads (2 readers, 1 writer)" \
	jq -e '[.jobs[].jobname] == ["readers", "readers", "writers"]' "$TMP/out.json"
check "job file: readers did reads only" \
	jq -e '.jobs[0].read.total_ios > 0 and .jobs[0].write.total_ios == 0' "$TMP/out.json"
check "job file: writers used bs=64k" \
	jq -e '.jobs[2].write.io_bytes == .jobs[2].write.total_ios * 65536 and .jobs[2].write.total_ios > 0' "$TMP/out.json"
check "job file: [global] iodepth reached both" \
	jq -e '[.jobs[]."job options".iodepth] == ["8", "8", "8"]' "$TMP/out.json"
if command -v fio >/dev/null; then
	check "fio --parse-only accepts the same job file" fio --parse-only "$TMP/two.fio"
else
	fail "fio is not installed (scripts/install-deps.sh installs it)"
fi

# group_reporting sums a reporting group into one entry, as fio does
sed -i 's/^iodepth=8/iodepth=8\ngroup_reporting/' "$TMP/two.fio"
"$BLKSTACK" bench --dev=null --output-format=json "$TMP/two.fio" >"$TMP/g.json"
check "group_reporting: one entry for the group, named after its first job" \
	jq -e '[.jobs[].jobname] == ["readers"] and .jobs[0].read.total_ios > 0 and .jobs[0].write.total_ios > 0' "$TMP/g.json"
# stonewall starts a new group: two entries
sed -i 's/^\[writers\]/[writers]\nstonewall/' "$TMP/two.fio"
"$BLKSTACK" bench --dev=null --output-format=json "$TMP/two.fio" >"$TMP/g2.json"
check "stonewall: a second group with its own entry" \
	jq -e '[.jobs[] | [.jobname, .groupid]] == [["readers", 0], ["writers", 1]]' "$TMP/g2.json"

# job file errors name the file, the line and the option
printf '[j]\nrw=randread\niodepth=0\n' >"$TMP/bad.fio"
expect_error "bad value in job file names file:line" "bad.fio:3: iodepth=0: .*1\.\.65536" bench "$TMP/bad.fio"
printf '[j]\nioengine=rbd\n' >"$TMP/unsup.fio"
expect_error "fio engine blkstack lacks is named unsupported" "ioengine=rbd: a fio engine blkstack bench does not support" bench "$TMP/unsup.fio"
expect_error "missing job file" "nonexistent.fio" bench "$TMP/nonexistent.fio"
expect_error "a directory as job file" "^blkstack bench: $TMP: Is a directory$" bench "$TMP"

# more jobs than blkstack bench takes: the limit is in the message
for i in $(seq 65); do printf '[j%d]\n' "$i"; done >"$TMP/many.fio"
expect_error "65 jobs: the limit of 64 is named" \
	"many.fio:65: more than 64 jobs \(blkstack bench's limit\)" bench "$TMP/many.fio"
# long names and values are cut at 64 characters in messages
long=$(printf 'x%.0s' $(seq 300))
printf '[%s]\n' "$long" >"$TMP/long.fio"
expect_error "long section name cut with ..." \
	"long.fio:1: section name 'x{64}\.\.\.' longer than 63 characters" bench "$TMP/long.fio"
printf '[j]\nrw=%s\n' "$long" >"$TMP/longval.fio"
expect_error "long value cut with ..." "longval.fio:2: rw=x{64}\.\.\.: bad value" bench "$TMP/longval.fio"
# control bytes are shown as \xNN, never sent to the terminal
printf '[j]\nrw=\033[2Jread\n' >"$TMP/ctl.fio"
expect_error "control byte escaped" 'ctl.fio:2: rw=\\x1b\[2Jread: bad value' bench "$TMP/ctl.fio"
check "no raw escape byte in the message" bash -c '! grep -q "$(printf "\033")" "$1"' _ "$TMP/err"
# a NUL byte in a line is an error, not the end of the line
printf '[j]\nrw=read\000junk\nsize=1m\n' >"$TMP/nul.fio"
expect_error "NUL byte names file:line" "nul.fio:2: NUL byte in the line" bench "$TMP/nul.fio"
# a UTF-8 byte order mark at the start of the file is skipped
printf '\357\273\277[bom]\nrw=read\nsize=1m\n' >"$TMP/bom.fio"
"$BLKSTACK" bench --dev=null --output-format=json "$TMP/bom.fio" >"$TMP/bom.json"
check "BOM: exit 0" test $? -eq 0
check "BOM: job named without it" jq -e '[.jobs[].jobname] == ["bom"]' "$TMP/bom.json"
# fio's --section: only the named sections run (and [global]); the others
# are skipped unread, so an unset ${VAR} in one is no error, as in fio
unset BLKSTACK_TEST_UNSET
printf '[global]\nrw=read\nsize=1m\n[a]\nbs=8k\n[b]\nbs=16k\n[c]\nrw=${BLKSTACK_TEST_UNSET}\n' >"$TMP/sec.fio"
"$BLKSTACK" bench --dev=null --section=b --section=a --output-format=json "$TMP/sec.fio" >"$TMP/sec.json"
check "--section=b --section=a: exit 0, jobs a and b in file order, c skipped unread" \
	jq -e '[.jobs[].jobname] == ["a", "b"] and .jobs[1]."job options".bs == "16k"' "$TMP/sec.json"
if command -v fio >/dev/null; then
	sed 's/^\[global\]/[global]\nioengine=null/' "$TMP/sec.fio" >"$TMP/secf.fio"
	check "--section: fio runs the same jobs" \
		bash -c 'fio --section=b --section=a --output-format=json "$1" 2>/dev/null | jq -e "[.jobs[].jobname] == [\"a\", \"b\"]"' _ "$TMP/secf.fio"
fi
expect_error "--section naming no section: no jobs" "sec.fio: no jobs defined" bench --dev=null --section=zz "$TMP/sec.fio"
finish
