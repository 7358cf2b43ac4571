// SPDX-License-Identifier: MIT
/*
 * The blkstack command.
 */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "blkstack/version.h"
#include "serve.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blkstack <command> [options]\n"
		"\n"
		"commands:\n"
		"  bench [options] [jobfile...]  fio-compatible benchmark of the block core\n"
		"                                (no workload: the read/randread/write/randwrite\n"
		"                                matrix on null and ram)\n"
		"  serve [options]               export devices over NBD (qemu, nbdinfo,\n"
		"                                nbdcopy, fio --ioengine=nbd, nbd-client)\n"
		"  iscsi-discover iscsi://HOST[:PORT]\n"
		"                                the targets an iSCSI portal offers (SendTargets)\n"
		"  version                       print the version\n"
		"  help                          this text\n"
		"\n"
		"'blkstack bench --help' lists the benchmark's options,\n"
		"'blkstack serve --help' the NBD server's.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "bench"))
		return bench_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "serve"))
		return serve_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "iscsi-discover"))
		return iscsi_discover_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("blkstack %s\n", BLKSTACK_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "blkstack: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
