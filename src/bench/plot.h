/* SPDX-License-Identifier: MIT */
/*
 * --plot=DIR: SVG pictures of a run, drawn by gnuplot.  blkstack writes
 * the data (DIR/NAME.dat) and a gnuplot script (DIR/NAME.gp), then runs
 * `gnuplot NAME.gp` in DIR as a child; the .dat and .gp files stay, so a
 * picture can be redrawn or restyled by hand.
 */
#ifndef BLKSTACK_BENCH_PLOT_H
#define BLKSTACK_BENCH_PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

/**
 * bench_plot_check() - before a run: gnuplot is on PATH, and @dir exists
 * or can be made (one level, as mkdir).
 * Return: 0, or -errno with @err saying what is missing.
 */
int bench_plot_check(const char *dir, char *err, size_t errlen);

/**
 * bench_plot_run() - per job thread of @r: DIR/[PREFIX-]JOB.N-clat-hist.svg
 * (completion latency histogram), -clat-cdf.svg (its CDF), -iops.svg and
 * -lat.svg (IOPS and mean latencies over time, per direction).
 * @prefix: NULL, or the device when a run has several.
 * Return: 0, or -errno with @err set.
 */
int bench_plot_run(const char *dir, const struct bench_run_result *r,
		   const char *prefix, char *err, size_t errlen);

/**
 * bench_plot_matrix() - DIR/matrix-iops.svg and matrix-lat.svg: per
 * workload a group of bars, one per device.
 * @runs: nr_rows * nr_devs results, row-major (bench_report_matrix()).
 */
int bench_plot_matrix(const char *dir, const struct bench_run_result *runs,
		      unsigned int nr_rows, unsigned int nr_devs, char *err,
		      size_t errlen);

/**
 * bench_plot_sides() - the completion latency histogram and CDF of
 * several A/B sides on one chart each: DIR/NAME-clat-hist.svg and
 * NAME-clat-cdf.svg.
 * @name: the cell ("null-job"), used in the file names as is after
 *	characters other than [A-Za-z0-9._-] become '_'.
 * @titles: each side's legend.
 * @plat: each side's fio clat bins (BENCH_PLAT_NR counts, log.h).
 */
int bench_plot_sides(const char *dir, const char *name,
		     const char *const *titles, const uint64_t *const *plat,
		     unsigned int nr_sides, char *err, size_t errlen);

#endif /* BLKSTACK_BENCH_PLOT_H */
