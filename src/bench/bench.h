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
#include "blkstack/scsi.h"
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

/*
 * Samples of a rate, as fio's io_stat keeps them (add_stat_sample()):
 * count, min, max, and Welford's running mean and sum of squared
 * deviations (stddev = sqrt(m2 / (n - 1))).
 */
struct bench_sample_stat {
	uint64_t n;
	uint64_t min, max;
	double mean, m2;
};

/*
 * fio 3.33's per-priority completion latencies (stat.c clat_prio): per
 * read and write, the job's own priority first, then each priority
 * cmdprio_percentage= or cmdprio_bssplit= gives, in the order fio's
 * engines/cmdprio.c lists them.  Only for jobs with either option, as in
 * fio; the report shows them when two or more had I/Os.
 */
#define BENCH_PRIO_MAX 17
struct bench_prio_stats {
	unsigned int nr[2];
	uint16_t val[2][BENCH_PRIO_MAX];	/* IOPRIO_PRIO_VALUE */
	struct blk_hist clat[2][BENCH_PRIO_MAX];	/* ns (lat with lat_percentiles) */
};

/* One job thread's results (numjobs expands a job into threads). */
/*
 * fio's steady state (ss=, ss_dur=) of a job thread's unit: the thread, or
 * with group_reporting its whole reporting group (one stonewall group),
 * whose I/Os are summed.  Samples are the unit's I/Os per second and
 * bytes per second over each second after ss_ramp, the last dur_s kept.
 */
struct bench_ss_result {
	bool on;                   /* ss_dur= was set: the report has it */
	bool attained;             /* the criterion held: the job ended early */
	unsigned int dur_s;        /* ss_dur in s: the window, in samples */
	unsigned int nr;           /* samples in iops[]/bw[] (<= dur_s), oldest first */
	double criterion;          /* last value checked: max deviation or slope, in % when ss= had % */
	double deviation;          /* max |sample - mean| of the window (deviation criteria; else 0) */
	double slope;              /* least-squares slope per sample (slope criteria; else 0) */
	uint64_t *iops, *bw;       /* owned by the first thread of the unit (NULL in the others) */
};

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
	/*
	 * fio's latency_depth: the depth latency_target= found (the last
	 * searched when the job ended), or iodepth without a target
	 */
	unsigned int latency_depth;
	uint64_t total_err;        /* continue_on_error: errors the job went on past */
	int first_error;           /* continue_on_error: the first of them, errno (positive) */
	char errmsg[160];
	bool lat_valid;            /* latencies were measured (no gtod_reduce) */
	/*
	 * iodepth_low=: the depths I/Os were submitted at, fio's IO depths
	 * buckets 1, 2, 4, 8, 16, 32, >=64 (a depth d counts in the highest
	 * bucket <= d); @depth_hist_on false: every I/O went at iodepth
	 */
	bool depth_hist_on;
	uint64_t depth_hist[7];
	/* verify= (verify.h): blocks read back and checked, and bad ones */
	bool verify;               /* verify was on for this thread */
	uint8_t verify_method;     /* its verify= (enum bench_verify) */
	uint64_t verify_blocks;    /* blocks checked (verify phase, or every read of a read job) */
	uint64_t verify_mismatches; /* of those, blocks that failed a check */
	uint64_t verify_backlog_blocks; /* of verify_blocks, read back by verify_backlog= during the workload */
	uint64_t verify_trims;     /* blocks trimmed by trim_percentage=/trim_backlog= (trim verification) */
	uint64_t verify_trim_zero; /* of verify_blocks, trimmed ones checked for zeros (trim_verify_zero=1) */
	uint64_t verify_ns;        /* duration of the verify phase; in runtime_ns and dir[READ] */
	uint64_t zone_resets;      /* zonemode=zbd: zones this thread reset (fio's nr_zone_resets) */
	struct blk_wait_stats wait; /* what blk_wait() did (spins and sleeps summed over threads) */
	/*
	 * fio's logs and json+ bins of this thread (log.h), NULL when none
	 * was asked for; owned by the run result (bench_run_result_free())
	 */
	struct bench_log *log;
	/* stage_timers=1: the thread's ctxs' stage statistics (owned by
	 * r->jobs[], freed by bench_run_result_free(); NULL when off) */
	struct blk_stage_stats *stages;
	/* cmdprio: per-priority clat (owned like @stages; NULL when off) */
	struct bench_prio_stats *prio;
	struct bench_ss_result ss; /* ss_dur=: steady state */
	/*
	 * fio's "IO depths", "submit" and "complete" counts of the measured
	 * window (its io_u_map, io_u_submit, io_u_complete), in fio's seven
	 * buckets (BENCH_DEPTH_NR): I/Os by the number in flight once their
	 * batch was submitted (1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64);
	 * submitted batches by their I/Os, and reaps by the I/Os they
	 * completed (0, 1-4, 5-8, 9-16, 17-32, 33-64, >64)
	 */
	uint64_t depth_map[7];
	uint64_t submit_map[7];
	uint64_t complete_map[7];
	/*
	 * fio's bw and iops samples: per direction, the rate of each window
	 * of bwavgtime= (KiB/s) and iopsavgtime= (I/Os per second) of the
	 * measured window in which the direction did I/O
	 */
	struct bench_sample_stat bw_samples[DDIR_NR];
	struct bench_sample_stat iops_samples[DDIR_NR];
	/*
	 * fsync=, fdatasync=, sync_file_range=: fio's sync statistics, the
	 * latency of each FLUSH (submitted to completed, ns) and the number
	 * of fsync='s alone (fio's JSON "sync" total_ios, total_io_u[DDIR_SYNC])
	 */
	struct blk_hist sync_lat;
	uint64_t sync_ios;
};
#define BENCH_DEPTH_NR 7

/*
 * Set (to the signal number) by SIGINT/SIGTERM while `blkstack bench` runs:
 * job threads stop as if their runtime had ended, later stonewall groups,
 * devices and matrix cells do not start, and the report is still written.
 */
extern atomic_int bench_interrupted;

/* A second SIGINT/SIGTERM within this of the first (ns) is the same
 * interrupt delivered twice (timeout(1) signals the command, then its
 * process group), not a request to stop at once. */
#define BENCH_STOP_DUP_NS 100000000ull

/**
 * bench_stop_reraise() - a second stop signal: SIGINT and SIGTERM back to
 * their default action, and @sig raised again, so the process ends killed
 * by it.  Context: a signal handler (async-signal-safe calls only).
 */
void bench_stop_reraise(int sig);

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
	bool has_scsi;             /* dev=scsi: the disk driver's counters */
	/*
	 * a job gave requests up at the stop deadline (stop_deadline=): the
	 * device and the jobs' buffers are left as they are, since the device
	 * may still complete into them; nothing more may run on it
	 */
	bool abandoned;
	struct blk_uring_stats uring;
	struct blk_nvme_stats nvme;
	struct blk_scsi_stats scsi;
	struct blk_scsi_info scsi_info; /* has_scsi: what the probe read */
	/* --count_instructions=perf: user-space instructions of the whole
	 * process during the run (has_insn) */
	bool has_insn;
	uint64_t instructions;
	/*
	 * CPUs other processes (and, in a VM, other guests: steal) kept busy
	 * on average over the run: the machine's busy CPU time less this
	 * process's, over wall time; -1 when /proc/stat cannot be read.
	 */
	double others_cpus;
};

/**
 * bench_run() - run every job of @o on a new device @devname, closed at
 * the end: bench_run_on() with no device.
 */
int bench_run(const struct bench_opts *o, const char *devname,
	      struct bench_run_result *res, char *err, size_t errlen);

/**
 * bench_run_on() - run every job of @o on device @devname.
 * @o: parsed options.
 * @devname: "null", "ram", "uring" or "nvme".
 * @dev: a device from bench_open() to run on and leave open, or NULL to
 *	open one for this run (bench_open()) and close it at the end.  A
 *	given device must have been opened for options with at least as many
 *	job threads per stonewall group as @o (one hardware queue each).
 * @res: filled in; free with bench_run_result_free().  Its device
 *	counters (disk stats, core latency, nvme counters) are what this run
 *	did: on a given device, the counters after the run less those before.
 * @err, @errlen: message for a setup failure.
 *
 * Return: 0 when the run happened (job errors are in @res), -errno when
 * the device or threads could not be set up (@err says why).
 * Context: the main thread; SIGINT/SIGTERM (bench_interrupted) stop it.
 */
int bench_run_on(const struct bench_opts *o, const char *devname,
		 struct blk_dev *dev, struct bench_run_result *res,
		 char *err, size_t errlen);

/**
 * bench_open() - check @o's jobs and open @devname sized for them, as
 * bench_run() does: capacity from the largest region end (or dev_size=),
 * one hardware queue per job thread of the largest stonewall group.
 * @dev: set on success; close with blk_dev_close().
 * Return: 0; -EINVAL, -ERANGE or -ENOMEM from the job checks, or
 * bench_dev_open()'s errors; @err says why.
 * Context: the main thread (device threads start with SIGINT/SIGTERM
 * blocked).
 */
int bench_open(const struct bench_opts *o, const char *devname,
	       struct blk_dev **dev, char *err, size_t errlen);

void bench_run_result_free(struct bench_run_result *res);

/**
 * bench_check_job_files() - what a run on @devname refuses in the jobs'
 * own files before it opens them, checked without opening them (for
 * --parse-only): fill_device=1 on a regular file without size=.
 * Return: 0; -EINVAL with @err naming the job, the file and where
 * fill_device was set; -ENAMETOOLONG.  Context: any.
 */
int bench_check_job_files(const struct bench_opts *o, const char *devname,
			  char *err, size_t errlen);

/**
 * bench_fmt_bytes() - @v bytes in binary units: "16 GiB", "512 MiB",
 * "3.50 GiB" (two decimals unless whole).
 * Return: @buf.  Context: any.
 */
const char *bench_fmt_bytes(char *buf, size_t len, uint64_t v);

/**
 * bench_dev_on_null() - whether @devname stacks on a null device (nvme
 * with lower=null or nvme_ns=null): its host driver cannot know that the
 * namespace keeps no data, the registry's choice of lower device says so.
 * Context: any.
 */
bool bench_dev_on_null(const struct bench_dev_opts *d, const char *devname);

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

/* layout.c */

/* What the matrix's layout step did for a device column. */
enum bench_layout_state {
	BENCH_LAYOUT_WRITTEN = 0, /* every block of the region written once */
	BENCH_LAYOUT_NO_DATA,     /* the device stores no data: nothing to lay out */
	BENCH_LAYOUT_KEPT,        /* a file or block device that holds data, read as it is */
};

/**
 * struct bench_layout - the layout of one matrix column.
 * @dev: the device ("ram").
 * @filename: the file or block device the data lives in, or NULL.
 * @new_file: the file was missing or empty before the device opened it
 *	(bench_layout_probe()).
 * @block_device: @filename is a block device.
 * @state: what was done.
 * @reason: why, a static string: "new device", "new file", "file has
 *	holes", "verify=METHOD", "stores no data", "block device", "file
 *	holds data".
 * @bytes: bytes written (BENCH_LAYOUT_WRITTEN), or the region's size
 *	(BENCH_LAYOUT_KEPT); 0 for BENCH_LAYOUT_NO_DATA.
 * @bs: block size written, bytes (the matrix's bs).
 * @verify: the blocks carry verify= headers (or the pattern).
 * @verify_method: which verify= (enum bench_verify).
 * @flushed: the file was fdatasync()ed after the writes.
 * @requests: requests the device completed for the layout.
 * @ns: wall time of the writes and the flush, ns.
 * @interrupted: SIGINT/SIGTERM stopped the writes: @bytes is what was
 *	written, less than the region.
 */
struct bench_layout {
	char dev[16];
	const char *filename;
	bool new_file;
	bool block_device;
	enum bench_layout_state state;
	const char *reason;
	uint64_t bytes;
	uint32_t bs;
	bool verify;
	uint8_t verify_method;
	bool flushed;
	uint64_t requests;
	uint64_t ns;
	bool interrupted;
	/* bench_layout_settle(): flushes after write rows, their time */
	unsigned int settles;
	uint64_t settle_ns;
};

/**
 * bench_layout_probe() - before the device opens: note whether its file
 * exists and holds anything (the driver creates a missing file).
 * @o: the matrix options (o->dev.filename).
 * @devname: the column's device.
 * @l: zeroed and filled in.
 * Context: the main thread.
 */
void bench_layout_probe(const struct bench_opts *o, const char *devname,
			struct bench_layout *l);

/**
 * bench_layout() - lay out @dev for the matrix's rows, as fio lays out
 * files: write every block of the region the rows use, once, in order, at
 * the template's bs and iodepth (each thread's region when offset_increment
 * moves them apart).  With verify=crc32c the blocks carry headers.  Not
 * written: a device that stores no data (null without memory_backed, nvme
 * with nvme_ns=null); a block device, and a file whose region has no hole
 * (SEEK_HOLE), unless verify= asks for headers.  A file is flushed
 * (fdatasync) after the writes.
 * @o: the matrix options; jobs[0] is the template of the rows.
 * @devname: the column's device.
 * @dev: the device, from bench_open() with @o.
 * @l: from bench_layout_probe(); the rest is filled in.
 * @err, @errlen: message on failure.
 *
 * Return: 0; the errors of bench_run_on(); a write's -errno (-EIO for a
 * failure without one) naming the job; fdatasync's -errno; -ENOMEM.
 * Context: the main thread.
 */
int bench_layout(const struct bench_opts *o, const char *devname,
		 struct blk_dev *dev, struct bench_layout *l, char *err,
		 size_t errlen);

/**
 * bench_layout_settle() - after a write row of the matrix, flush the
 * column's file (fdatasync), outside every cell's timed window, so that
 * the kernel's write-back of the row's dirty pages does not run beside the
 * cells after it (the next row, the next run's).  Nothing for a device
 * without a file.  Counts the flush and its time in @l.
 * @l: the column's layout (l->filename).
 * @err, @errlen: message on failure.
 *
 * Return: 0; fdatasync's or open's -errno.
 * Context: the main thread, between cells.
 */
int bench_layout_settle(struct bench_layout *l, char *err, size_t errlen);

/* machine.c */

/**
 * bench_machine_busy_s() - CPU time all CPUs of the machine have spent
 * busy since boot (user, nice, system, irq, softirq and steal, from the
 * first line of /proc/stat), in seconds, with the clock tick's resolution
 * (10 ms at USER_HZ=100).
 * Return: seconds, or -1.0 when /proc/stat cannot be read.
 * Context: any thread.
 */
double bench_machine_busy_s(void);

/* report.c */

/**
 * bench_report_text() - fio-like text for one run (group_reporting honoured).
 */
void bench_report_text(FILE *f, const struct bench_opts *o,
		       const struct bench_run_result *r);

/**
 * bench_report_terse() - fio's terse output (--output-format=terse,
 * --minimal) for one run: a line per report entry, fio's semicolon
 * fields of @o->terse_version (3, 4 with trim, 5 with the bw and iops
 * samples), group_reporting, stats= and unified_rw_reporting= honoured;
 * the run's disk stats at the end of each line (disk_util=).
 * Context: the main thread.
 */
void bench_report_terse(FILE *f, const struct bench_opts *o,
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
 * bench_report_json_layout() - bench_report_json() for the matrix: the
 * document also has "layout", one object per device column (@layouts,
 * @nr_layouts; none when @layouts is NULL), before "jobs".
 * Return: 0, -ENOMEM or -EIO.
 */
int bench_report_json_layout(FILE *f, const struct bench_opts *o,
			     const struct bench_run_result *runs,
			     unsigned int nr_runs,
			     const struct bench_layout *layouts,
			     unsigned int nr_layouts);

/**
 * bench_report_layout() - the matrix's layout lines, one per device column:
 * "layout: ram: new device, 1 GiB written before the read rows (4 KiB
 * blocks, 0.42 s)".
 */
void bench_report_layout(FILE *f, const struct bench_layout *l,
			 unsigned int nr);

/**
 * bench_report_matrix() - seed 001's tables: IOPS(K), REQS(K), CPU(%),
 * LAT(us), MERGE(K), and VERIFY(K) when a cell verified, one row per
 * workload, one column per device; a legend line under them.
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
/*
 * bench_run_reqs() - requests the device completed per second over the
 * IOPS window: bench_run_iops() x the device's requests per bio (requests
 * / (requests + merged bios), read, write and discard).
 */
double bench_run_reqs(const struct bench_run_result *r);
/* bench_run_verified() - blocks read back and checked (verify=), all threads. */
uint64_t bench_run_verified(const struct bench_run_result *r);

/* bench.c */
int bench_main(int argc, char **argv);

/**
 * bench_ab_wanted() - does the command line ask for an A/B comparison
 * (any --ab= or --ab_* option before "--")?
 */
bool bench_ab_wanted(int argc, char **argv);

/**
 * bench_ab_main() - `blkstack bench --ab=... --ab=... [options]`: run the
 * sides in rounds, each in a process of its own, and report the
 * differences with their intervals (src/bench/ab.c, docs/lab.md).
 * Return: the exit status: 0; 1 for bad options or a side that failed
 * (crashed, exited non-zero, reported no JSON); 128 + signal when stopped
 * by SIGINT/SIGTERM.
 */
int bench_ab_main(int argc, char **argv);

#endif /* BLKSTACK_BENCH_H */
