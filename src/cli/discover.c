// SPDX-License-Identifier: MIT
/*
 * blkstack iscsi-discover: the targets an iSCSI portal offers
 * (SendTargets=All in a discovery session), one line per portal as
 * libiscsi's iscsi-ls prints them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkstack/scsi_iscsi.h"
#include "serve.h"

#define MAX_TARGETS 256

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blkstack iscsi-discover [options] iscsi://HOST[:PORT]\n"
		"\n"
		"Logs in to the portal with SessionType=Discovery, asks SendTargets=All\n"
		"and prints 'Target:NAME Portal:HOST:PORT,TPGT' for each address offered.\n"
		"\n"
		"options:\n"
		"  --iscsi_initiator=IQN      our InitiatorName (" SCSI_ISCSI_DEFAULT_INITIATOR ")\n"
		"  --iscsi_chap_file=PATH     CHAP credentials, mode 600 ('initiator NAME SECRET',\n"
		"                             'target NAME SECRET' for mutual CHAP); without it\n"
		"                             BLKSTACK_ISCSI_CHAP_USER, _SECRET, _TARGET_USER and\n"
		"                             _TARGET_SECRET from the environment\n"
		"  --iscsi_login_timeout=MS   the connection and login, at most (15000)\n");
}

int iscsi_discover_main(int argc, char **argv)
{
	struct scsi_iscsi_discovered *d;
	struct scsi_iscsi_config cfg;
	const char *url = NULL;
	char err[512];
	unsigned int j;
	int i, n;

	scsi_iscsi_config_default(&cfg);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strncmp(a, "--iscsi_initiator=", 18)) {
			cfg.initiator_name = a + 18;
		} else if (!strncmp(a, "--iscsi_chap_file=", 18)) {
			cfg.chap_file = a + 18;
		} else if (!strncmp(a, "--iscsi_login_timeout=", 22)) {
			char *end;
			unsigned long ms = strtoul(a + 22, &end, 10);

			if (end == a + 22 || *end || !ms || ms > 3600000) {
				fprintf(stderr, "blkstack iscsi-discover: %s: milliseconds, 1..3600000\n", a);
				return 2;
			}
			cfg.login_timeout_ms = (uint32_t)ms;
		} else if (a[0] == '-' || url) {
			fprintf(stderr, "blkstack iscsi-discover: unexpected '%s'\n", a);
			usage(stderr);
			return 2;
		} else {
			url = a;
		}
	}
	if (!url) {
		usage(stderr);
		return 2;
	}
	if (scsi_iscsi_parse_url(url, &cfg.target, err, sizeof(err))) {
		fprintf(stderr, "blkstack iscsi-discover: %s\n", err);
		return 2;
	}
	d = calloc(MAX_TARGETS, sizeof(*d));
	if (!d) {
		fprintf(stderr, "blkstack iscsi-discover: out of memory\n");
		return 1;
	}
	n = scsi_iscsi_discover(&cfg, d, MAX_TARGETS, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "blkstack iscsi-discover: %s\n", err);
		free(d);
		return 1;
	}
	for (i = 0; i < n && i < MAX_TARGETS; i++) {
		if (!d[i].nr_addresses)
			printf("Target:%s\n", d[i].name);
		for (j = 0; j < d[i].nr_addresses; j++)
			printf("Target:%s Portal:%s\n", d[i].name, d[i].address[j]);
	}
	if (n > MAX_TARGETS)
		fprintf(stderr, "blkstack iscsi-discover: %d targets, the first %d printed\n",
			n, MAX_TARGETS);
	free(d);
	return 0;
}
