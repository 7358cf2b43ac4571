#!/usr/bin/env bash
# Install the Debian 12 packages blkstack needs to build, test and benchmark.
# Safe to run twice: it installs only what is missing.
set -euo pipefail

PKGS=(
	build-essential cmake pkg-config   # toolchain
	libcmocka-dev                      # unit tests
	libjansson-dev                     # JSON output
	libisal-dev                        # ISA-L crc32_iscsi: verify=crc32c, iSCSI digests; crc32_ieee, crc64_jones_refl: verify=crc32, crc64
	nettle-dev                         # MD5, hex, base64: iSCSI CHAP; md5, sha1, sha2, sha3: verify=
	libxxhash-dev                      # XXH32: verify=xxhash
	libbsd-dev                         # <bsd/sys/tree.h> red-black trees (mq-deadline)
	liburing-dev                       # io_uring (uring driver)
	liburcu-dev                        # RCU (liburcu-bp): ram page store
	libmicrohttpd-dev                  # serve --metrics: /metrics over HTTP (the header at build time; the library dlopen()ed)
	fio                                # peer for bench/ and job-file tests
	fio-examples                       # stock job files: the corpus of tests/func/test_jobfile_fio.sh
	python3-six                        # fio_jsonplus_clat2csv (package fio) imports it: tests/func/test_bench_logs.sh
	gnuplot-nox                        # bench --plot=DIR draws with it; fio_generate_plots, fio2gnuplot in tests/func/test_bench_logs.sh
	librsvg2-bin                       # rsvg-convert: tests render bench --plot's SVG files to check them
	valgrind                           # callgrind instruction counts in bench/
	jq                                 # JSON checks in functional tests
	curl                               # scrapes /metrics in tests/func/test_metrics.sh
	prometheus                         # promtool check metrics in tests/func/test_metrics.sh (with systemd, the package also starts a Prometheus server on port 9090)
	time                               # /usr/bin/time: CPU per I/O in bench/uring-*.sh
	python3                            # raw NBD wire client in tests/func/nbd_raw.py
	libnbd-bin                         # nbdinfo, nbdcopy: NBD clients in tests/func
	qemu-utils                         # qemu-img, qemu-io: NBD clients in tests/func
	qemu-block-extra                   # qemu-img's iscsi:// driver (libiscsi): tests/func/test_iscsi.sh
	libiscsi-bin                       # iscsi-ls, iscsi-inq, iscsi-swp, iscsi-test-cu: iSCSI initiators in tests/func; iscsi-perf in bench/iscsi-vs-tgt.sh
	libiscsi-dev                       # libiscsi headers: build/iscsi-randwrite, bench/iscsi-vs-tgt.sh's libiscsi write client (WCLIENT=libiscsi)
	tgt                                # tgtd, tgtadm: peer target in bench/iscsi-vs-tgt.sh (with systemd, the package also starts a system tgtd on port 3260)
	nbdkit                             # peer server in bench/nbd-vs-nbdkit.sh
	shellcheck                         # bench/*.sh lint in tests/func/test_bench_scripts.sh
	clang libclang-rt-14-dev           # libFuzzer targets in fuzz/ (make fuzz)
)

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all packages present"
	exit 0
fi
SUDO=
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
