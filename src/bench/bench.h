/* SPDX-License-Identifier: MIT */
/*
 * blkstack bench: workload engine and reports.
 */
#ifndef BLKSTACK_BENCH_H
#define BLKSTACK_BENCH_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "blkstack/blk.h"
#include "blkstack/hist.h"
#include "options.h"
#include "blkstack/nvme.h"
#include "blkstack/uring.h"

/* fio's data directions in its JSON: read, write, trim */
enum bench_ddir {
	DDIR_READ = 0,
	DDIR_WRITE,
	DDIR_TRIM,
	DDIR_NR,
};

/* Per direction, per job thread (or summed for group_reporting). */
struct bench_dir_stats {
	uint64_t ios;       /* completed I/Os (bios) */
	uint64_t bytes;     /* bytes completed */
	uint64_t errors;    /* completed with an error status */
	/*
	 * This direction's measured time, fio's per-direction runtime: the
	 * job's window, and for reads also the verify phase (verify=).  0 in
	 * results built without it means the job's runtime_ns.
	 */
	uint64_t runtime_ns;
	/*
	 * Where that time starts, in absolute bench-clock ns (bench_now_ns()):
	 * the direction's window is [start_ns, start_ns + runtime_ns].  Only
	 * meaningful when the job's window_end_ns is set.
	 */
	uint64_t start_ns;
	struct blk_hist slat; /* submission latency: prep -> submitted, ns */
	struct blk_hist clat; /* completion latency: submitted -> reaped, ns */
	struct blk_hist lat;  /* total: prep -> reaped, ns */
};

/* One job thread's results (numjobs expands a job into threads). */
struct bench_job_result {
	char name[BENCH_NAME_MAX];
	const struct bench_job_opts *opts;
	unsigned int groupid;      /* stonewall group */
	unsigned int jobnum;       /* 0..numjobs-1 */
	unsigned int nr_threads;   /* threads summed here (group_reporting) */
	struct bench_dir_stats dir[DDIR_NR];
	uint64_t runtime_ns;       /* measured window (after ramp), verify phase included */
	/*
	 * The measured window in absolute bench-clock ns (bench_now_ns()):
	 * from the end of the ramp (or the thread's start, for a job that
	 * ended within its ramp) to the end of the last counted I/O, verify
	 * phase included.  Aggregates over threads (group_reporting, the
	 * matrix) divide by the span of their windows, so that threads that
	 * ran one after another do not add up as if they ran at once.  Both
	 * 0 in results built without it: the window is then [0, runtime_ns].
	 */
	uint64_t window_start_ns;
	uint64_t window_end_ns;
	double usr_cpu_s;          /* thread CPU in the measured window */
	double sys_cpu_s;
	uint64_t ctx_switches;     /* voluntary + involuntary */
	uint64_t minf, majf;       /* page faults */
	int error;                 /* first error, -errno; 0 if none */
	char errmsg[160];
	bool lat_valid;            /* latencies were measured (no gtod_reduce) */
	/* verify= (verify.h): blocks read back and checked, and bad ones */
	bool verify;               /* verify was on for this thread */
	uint64_t verify_blocks;    /* blocks checked (verify phase, or every read of a read job) */
	uint64_t verify_mismatches; /* of those, blocks that failed a check */
	uint64_t verify_ns;        /* duration of the verify phase; in runtime_ns and dir[READ] */
	struct blk_wait_stats wait; /* what blk_wait() did (spins and sleeps summed over threads) */
};

/*
 * Set (to the signal number) by SIGINT/SIGTERM while `blkstack bench` runs:
 * job threads stop as if their runtime had ended, later stonewall groups,
 * devices and matrix cells do not start, and the report is still written.
 */
extern atomic_int bench_interrupted;

/* One device's run: all jobs, plus the device's view. */
struct bench_run_result {
	char dev[16];
	char workload[16];         /* matrix row, "" otherwise */
	char clocksource[16];      /* "cpu" or "clock_gettime" */
	struct bench_job_result *jobs;
	unsigned int nr_jobs;
	uint64_t wall_ns;          /* whole run, ramp included */
	double proc_usr_s;         /* whole process over the run */
	double proc_sys_s;
	struct blk_disk_stats disk; /* counters at the end of the run */
	struct blk_dev_info info;
	uint64_t core_lat_count;   /* requests in the core's histograms */
	double core_lat_mean_ns;   /* request latency seen by the core */
	bool has_nvme;             /* dev=nvme: the host driver's counters */
	bool has_uring;            /* dev=uring: how requests were issued */
	struct blk_uring_stats uring;
	struct blk_nvme_stats nvme;
};

/**
 * bench_run() - run every job of @o on device @devname.
 * @o: parsed options.
 * @devname: "null" or "ram".
 * @res: filled in; free with bench_run_result_free().
 * @err, @errlen: message for a setup failure.
 *
 * Return: 0 when the run happened (job errors are in @res), -errno when
 * the device or threads could not be set up.
 */
int bench_run(const struct bench_opts *o, const char *devname,
	      struct bench_run_result *res, char *err, size_t errlen);

void bench_run_result_free(struct bench_run_result *res);

/**
 * bench_dev_open() - create @devname from the device options.
 * @size: capacity for null and ram (dev_size= overrides), bytes.
 * @create_size: for uring, the size a missing file is created with: the
 *	jobs' explicit offset+size, or dev_size=; 0 when neither was given (a
 *	missing file is then an error).
 * @nr_threads: job threads that will attach at once.
 */
int bench_dev_open(const struct bench_dev_opts *d, const char *devname,
		   uint64_t size, uint64_t create_size, unsigned int nr_threads,
		   struct blk_dev **dev, char *err, size_t errlen);

/* report.c */

/**
 * bench_report_text() - fio-like text for one run (group_reporting honoured).
 */
void bench_report_text(FILE *f, const struct bench_opts *o,
		       const struct bench_run_result *r);

/**
 * bench_report_json() - fio's JSON layout for all runs: one document with
 * "fio version", "timestamp", "time", "global options" and "jobs", each
 * job with read/write/trim objects in fio's field names plus a "blkstack"
 * object (device, merges, requeues, timeouts, queue runs).
 * Return: 0 or -ENOMEM.
 */
int bench_report_json(FILE *f, const struct bench_opts *o,
		      const struct bench_run_result *runs, unsigned int nr_runs);

/**
 * bench_report_matrix() - seed 001's tables: IOPS(K), CPU(%), LAT(us),
 * MERGE(K), one row per workload, one column per device.
 * @runs: nr_rows * nr_devs results, row-major (workload, then device).
 */
void bench_report_matrix(FILE *f, const struct bench_run_result *runs,
			 unsigned int nr_rows, unsigned int nr_devs);

/**
 * Totals of a run over jobs and directions, for the matrix.  bench_run_iops()
 * is all I/Os over the span of the threads' windows, from the earliest
 * start to the latest end.
 */
double bench_run_iops(const struct bench_run_result *r);
double bench_run_cpu_pct(const struct bench_run_result *r);
double bench_run_lat_us(const struct bench_run_result *r);
double bench_run_merges(const struct bench_run_result *r);

/* bench.c */
int bench_main(int argc, char **argv);

#endif /* BLKSTACK_BENCH_H */
