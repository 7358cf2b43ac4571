/* SPDX-License-Identifier: MIT */
/*
 * fio's iolog (fio 3.33 iolog.c), read for read_iolog=: version 2
 * ("fio version 2 iolog": FILE ACTION [OFFSET LENGTH]) and version 3
 * ("fio version 3 iolog": USEC FILE ACTION [OFFSET LENGTH]).  Actions:
 * add, open, close (files), read, write, trim, sync, datasync, and
 * version 2's wait (USEC in OFFSET).
 */
#ifndef BLKSTACK_BENCH_IOLOG_H
#define BLKSTACK_BENCH_IOLOG_H

#include <stddef.h>
#include <stdint.h>

/* struct bench_iolog_ent.act */
enum { IOLOG_READ = 0, IOLOG_WRITE, IOLOG_TRIM, IOLOG_SYNC, IOLOG_DATASYNC, IOLOG_WAIT };

/**
 * struct bench_iolog_ent - one I/O, sync or wait of a log.
 * @t_us: when it is due, microseconds from the job's start: version 3's
 *	time less the first entry's, scaled by replay_time_scale; version 2:
 *	the waits' sum before it.
 * @off: offset in bytes (replay_scale, replay_align applied).
 * @len: bytes (0 for syncs and waits).
 * @act: IOLOG_*.
 */
struct bench_iolog_ent {
	uint64_t t_us;
	uint64_t off;
	uint32_t len;
	uint8_t act;
};

/**
 * struct bench_iolog - a log read.
 * @ents, @nr: its I/Os, syncs and waits, in order (malloc'd; free()).
 * @file: the one file it names (add lines), "" when none.
 * @end: the largest offset + length.
 * @max_len: the longest I/O.
 * @bytes: the I/Os' lengths summed.
 * @reads, @writes: how many.
 */
struct bench_iolog {
	struct bench_iolog_ent *ents;
	size_t nr;
	char file[4096];
	uint64_t end;
	uint32_t max_len;
	uint64_t bytes;
	uint64_t reads, writes;
};

/**
 * bench_iolog_read() - read fio's iolog @path.
 * @scale: replay_scale= (0, 1: none): offsets divided by it.
 * @align: replay_align= (0: none): offsets aligned down to it.
 * @time_scale: replay_time_scale=, percent (100: as logged).
 * @redirect: replay_redirect= ("" or NULL: none): every file is it, so
 *	a log of several files is taken.
 * @log: filled in; free @log->ents.
 * @err, @errlen: why not, naming the line.
 * Return: 0, or -errno (-EINVAL: not a log, a bad line, several files
 *	without @redirect).  Context: any.
 */
int bench_iolog_read(const char *path, uint64_t scale, uint64_t align,
		     uint32_t time_scale, const char *redirect,
		     struct bench_iolog *log, char *err, size_t errlen);

#endif /* BLKSTACK_BENCH_IOLOG_H */
