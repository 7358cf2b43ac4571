/* SPDX-License-Identifier: MIT */
/* blkstack serve: the NBD server subcommand (src/cli/serve.c). */
#ifndef BLKSTACK_CLI_SERVE_H
#define BLKSTACK_CLI_SERVE_H

#include <stdio.h>

/** serve_main() - run `blkstack serve`; argv[0] is "serve".  Return: exit status. */
int serve_main(int argc, char **argv);
/** serve_usage() - print the subcommand's options to @f. */
void serve_usage(FILE *f);

#endif
