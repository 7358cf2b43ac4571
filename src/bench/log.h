/* SPDX-License-Identifier: MIT */
/*
 * fio's logs (write_lat_log, write_bw_log, write_iops_log, write_hist_log,
 * log_avg_msec, log_hist_msec, log_max_value, log_offset) and the
 * completion-latency bins of --output-format=json+.
 *
 * A job thread with any of them on has a struct bench_log: its reap hook
 * (engine.c, job_reap()'s unlikely branch, so nothing runs when they are
 * off) hands each completed I/O to bench_log_io(), which appends to
 * chunked buffers in memory, or adds to the current window's sums.  The
 * files are written by the main thread after the run
 * (bench_log_write()), never by a job thread.
 *
 * fio's histogram ("plat", fio's stat.h): values below 128 ns have a bin
 * each; above, every power of two [2^m, 2^(m+1)) is split into 64 bins of
 * width 2^(m-6), for 29 groups (1856 bins); values past the last bin fall
 * in it.  A bin is named by its midpoint (bench_plat_value()).
 */
#ifndef BLKSTACK_BENCH_LOG_H
#define BLKSTACK_BENCH_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

#define BENCH_PLAT_BITS 6
#define BENCH_PLAT_VAL (1u << BENCH_PLAT_BITS)	/* bins per group: 64 */
#define BENCH_PLAT_GROUPS 29
#define BENCH_PLAT_NR (BENCH_PLAT_GROUPS * BENCH_PLAT_VAL)	/* 1856 */

/** bench_plat_index() - fio's bin of a latency of @ns. */
static inline unsigned int bench_plat_index(uint64_t ns)
{
	unsigned int msb, shift, idx;

	if (ns < 2 * BENCH_PLAT_VAL)
		return (unsigned int)ns;
	msb = 63u - (unsigned int)__builtin_clzll(ns);
	shift = msb - BENCH_PLAT_BITS;	/* low bits the bin drops */
	idx = (shift + 1) * BENCH_PLAT_VAL +
	      (unsigned int)((ns >> shift) & (BENCH_PLAT_VAL - 1));
	return idx < BENCH_PLAT_NR ? idx : BENCH_PLAT_NR - 1;
}

/** bench_plat_value() - the midpoint fio names bin @idx by, ns. */
uint64_t bench_plat_value(unsigned int idx);

struct bench_log;

/**
 * bench_log_wanted() - whether job @j asks for a log file.
 */
bool bench_log_wanted(const struct bench_job_opts *j);

/**
 * bench_log_new() - the log state of one job thread.
 * @j: its job (log options).
 * @plat: keep fio's clat bins per direction (json+).
 * @plot_ns: keep IOPS and mean latencies per window this long, per
 *	direction, for --plot (bench_log_points()); 0: none.
 * Return: the state, or NULL when out of memory.
 */
struct bench_log *bench_log_new(const struct bench_job_opts *j, bool plat,
				uint64_t plot_ns);

/* One direction over one --plot window. */
struct bench_log_point {
	uint32_t t_ms;		/* the window's end, ms since the window started */
	unsigned int ddir;
	bool has_lat;		/* I/Os completed in it: the latencies are means */
	uint64_t iops;
	uint64_t clat_ns, lat_ns;
};

/**
 * bench_log_points() - call @fn for each --plot window record, in time
 * order (directions of one window together).  Nothing when @l is NULL.
 */
void bench_log_points(const struct bench_log *l,
		      void (*fn)(void *arg, const struct bench_log_point *p),
		      void *arg);

void bench_log_free(struct bench_log *l);

/**
 * bench_log_io() - one completed I/O of the measured window.
 * @t_ns: its completion, ns since the window started.
 * @ddir: enum bench_ddir.
 * @slat, @clat: its submission and completion latencies, ns.
 * Return: 0, or -ENOMEM (the log is then marked short, and the I/O lost).
 * Context: the job thread.
 */
int bench_log_io(struct bench_log *l, uint64_t t_ns, unsigned int ddir,
		 uint32_t bs, uint64_t offset, uint64_t slat, uint64_t clat);
/**
 * bench_log_io_prio() - bench_log_io() of an I/O of priority @prio
 * (bi_ioprio): the logs' last column, fio's (log_prio=1: 0x%04x of it,
 * else 1 for class RT, 0 for the others).
 * Return: 0, or -ENOMEM.  Context: the job thread.
 */
int bench_log_io_prio(struct bench_log *l, uint64_t t_ns, unsigned int ddir,
		      uint32_t bs, uint64_t offset, uint64_t slat,
		      uint64_t clat, uint16_t prio);

/**
 * bench_log_finish() - the window ended at @t_ns (since it started):
 * close the last, partial averaging windows.  Context: the job thread.
 */
void bench_log_finish(struct bench_log *l, uint64_t t_ns);

/**
 * bench_log_plat() - the thread's fio clat bins of direction @ddir
 * (BENCH_PLAT_NR counts), or NULL when json+ was not asked for.
 */
const uint64_t *bench_log_plat(const struct bench_log *l, unsigned int ddir);

/**
 * bench_log_write() - write the thread's log files, fio's names and
 * formats: PREFIX_lat.N.log, _clat, _slat, _bw, _iops, _clat_hist, where
 * PREFIX is the option's value (the job name when empty) and N the
 * thread's number over the run, 1 first.
 * @dev: appended to the prefix as PREFIX.DEV when not NULL (several
 *	devices in one run).
 * @err, @errlen: the file and the error on failure.
 * Return: 0, or -errno.
 */
int bench_log_write(const struct bench_log *l, const char *jobname,
		    unsigned int number, const char *dev, char *err,
		    size_t errlen);

#endif /* BLKSTACK_BENCH_LOG_H */
