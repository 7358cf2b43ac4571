/* SPDX-License-Identifier: MIT */
/* blkstack serve: the NBD server subcommand (src/cli/serve.c). */
#ifndef BLKSTACK_CLI_SERVE_H
#define BLKSTACK_CLI_SERVE_H

#include <stdio.h>

/** serve_main() - run `blkstack serve`; argv[0] is "serve".  Return: exit status. */
int serve_main(int argc, char **argv);
/** serve_usage() - print the subcommand's options to @f. */
void serve_usage(FILE *f);

/**
 * iscsi_discover_main() - run `blkstack iscsi-discover` (src/cli/discover.c);
 * argv[0] is "iscsi-discover".  Return: exit status (0; 1 the discovery
 * failed; 2 usage).
 */
int iscsi_discover_main(int argc, char **argv);

#endif
