/* SPDX-License-Identifier: MIT */
/*
 * --count_instructions (insn.c): instructions per I/O, from the hardware
 * counter or from callgrind.
 */
#ifndef BLKSTACK_BENCH_INSN_H
#define BLKSTACK_BENCH_INSN_H

#include <stdint.h>
#include <stdio.h>

#include "options.h"

/**
 * bench_insn_open() - a counter of this process's user-space
 * instructions, inherited by threads started later.
 * @fd: set to the counter's file descriptor on success (close(2) it).
 * @err: on failure, why and what to do instead (the callgrind way).
 * @errlen: bytes at @err.
 * Return: 0; -errno of perf_event_open(2) (-ENOENT, -EOPNOTSUPP where
 * there is no hardware counter, -EACCES).
 * Context: the main thread, before the job threads start.
 */
int bench_insn_open(int *fd, char *err, size_t errlen);

/**
 * bench_insn_read() - the counter's value: instructions so far, exited
 * threads included.
 * Return: 0; -EIO.
 */
int bench_insn_read(int fd, uint64_t *count);

/**
 * bench_insn_callgrind() - run this bench (@argc, @argv: the arguments
 * after "blkstack", argv[0] "bench") again under valgrind's callgrind,
 * without --count_instructions, and print instructions per I/O by layer
 * (text) or the run's JSON with blkstack.instructions_per_io in each job
 * and "instructions" (layers, entry points) (@o's output format) on @out.
 * Return: the exit status for the command (0, or 1 with a message on
 * stderr: valgrind missing, the run failed, no I/O).
 * Context: the main thread, nothing started.
 */
int bench_insn_callgrind(const struct bench_opts *o, int argc, char **argv,
			 FILE *out);

#endif /* BLKSTACK_BENCH_INSN_H */
