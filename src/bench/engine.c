// SPDX-License-Identifier: MIT
/*
 * blkstack bench workload engine: one thread per job (numjobs threads per
 * job section), each with its own ctx on the device, keeping iodepth I/Os
 * in flight through plugged batches and reaping with blk_poll().
 *
 * Latency accounting follows fio: a timestamp when a batch of I/Os is
 * prepared (slat start), one when the batch has been submitted (issue
 * time), one per completion batch (reap time).  I/Os that share their
 * three timestamps are added to the histograms as one run (blk_hist_add_n),
 * so accounting costs per batch, not per I/O.  gtod_reduce=1 turns all of
 * it off.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <isa-l/crc.h>

#include "bench.h"
#include "clock.h"
#include "iolog.h"
#include "log.h"
#include "verify.h"
#include "zbd.h"
#include "blkstack/null.h"
#include "blkstack/nvme.h"
#include "blkstack/ram.h"
#include "blkstack/scsi.h"
#include "blkstack/uring.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

struct bench_clock bench_clk;

atomic_int bench_interrupted;

/* ---------------------------------------------------------------- clock */

static bool tsc_invariant(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	bool c = false, n = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		c = strstr(line, " constant_tsc") != NULL;
		n = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return c && n;
}

int bench_clock_init(enum bench_clocksource src)
{
	memset(&bench_clk, 0, sizeof(bench_clk));
#if defined(__x86_64__)
	if (src != CLK_GETTIME) {
		uint64_t t0, n0, t1, n1;
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		if (!tsc_invariant()) {
			if (src == CLK_CPU)
				return -ENOTSUP;
			return 0;
		}
		n0 = bench_gettime_ns();
		t0 = __rdtsc();
		nanosleep(&ts, NULL);
		n1 = bench_gettime_ns();
		t1 = __rdtsc();
		if (t1 <= t0 || n1 <= n0)
			return src == CLK_CPU ? -ENOTSUP : 0;
		bench_clk.mult = (uint64_t)(((unsigned __int128)(n1 - n0) << 32) /
					    (t1 - t0));
		bench_clk.tsc0 = t0;
		bench_clk.ns0 = n0;
		bench_clk.use_tsc = true;
	}
#else
	if (src == CLK_CPU)
		return -ENOTSUP;
#endif
	return 0;
}

const char *bench_clock_name(void)
{
	return bench_clk.use_tsc ? "cpu" : "clock_gettime";
}

/* --------------------------------------------------------------- device */

bool bench_dev_on_null(const struct bench_dev_opts *d, const char *devname)
{
	const struct blk_driver *drv = blk_driver_find(devname);
	const char *lower;
	char err[256];

	if (!drv || !drv->lowers ||
	    blk_dev_lower(drv, &d->p, &lower, err, sizeof(err)))
		return false;
	return lower && !strcmp(lower, "null") && !d->p.memory_backed;
}

/* The job trims blocks it wrote: trim_percentage= and trim_backlog=. */
static bool job_trim_verify(const struct bench_job_opts *j)
{
	return j->verify != VERIFY_NONE && j->do_verify && !j->verify_only &&
	       j->trim_percentage && j->trim_backlog &&
	       bench_rw_writes(j->rw);
}

/*
 * Trim verification needs a device that discards; trim_verify_zero=1 one
 * whose discarded blocks read back zeros.  ram, and null storing data,
 * zero on discard (page_store's ps_zero()); uring punches a hole in a file
 * (zeros by POSIX's fallocate semantics) but issues BLKDISCARD to a block
 * device, which promises nothing; nvme, scsi and iscsi depend on their
 * target.  Where zeros are not promised, a note says so and the run goes
 * on, as fio's does.
 */
static int trim_verify_dev(const struct bench_opts *o,
			   const struct bench_job_opts *j, const char *devname,
			   const struct blk_dev_info *info, char *err,
			   size_t errlen)
{
	const char *path = j->filename[0] ? j->filename : o->dev.p.filename;
	struct stat sb;
	bool zeroes;

	if (!info->can_discard) {
		snprintf(err, errlen,
			 "%s: trim_percentage=%u: the %s device does not discard; use dev=ram, dev=uring or dev=null",
			 j->name, j->trim_percentage, devname);
		return -EINVAL;
	}
	if (!j->trim_verify_zero)
		return 0;
	if (!strcmp(devname, "ram"))
		zeroes = true;
	else if (!strcmp(devname, "null"))
		zeroes = !o->dev.p.discard_keeps_data;
	else if (!strcmp(devname, "uring"))
		zeroes = !path[0] || stat(path, &sb) || !S_ISBLK(sb.st_mode);
	else
		zeroes = false;
	if (!zeroes)
		fprintf(stderr,
			"blkstack bench: note: %s: trim_verify_zero=1 on the %s device%s%s: its discard does not promise zeros, so a trimmed block may fail the check without a fault; trim_verify_zero=0 skips it\n",
			j->name, devname, path[0] ? " " : "", path);
	return 0;
}

/*
 * Devices come from the registry (include/blkstack/dev.h): the device
 * options are its parameters, the sizes and threads are the run's.
 */
int bench_dev_open(const struct bench_dev_opts *d, const char *devname,
		   uint64_t size, uint64_t create_size, unsigned int nr_threads,
		   struct blk_dev **dev, char *err, size_t errlen)
{
	struct blk_dev_open_args a = {
		.size = size, .create_size = create_size, .nr_threads = nr_threads,
	};
	const struct blk_driver *drv = blk_driver_find(devname);
	unsigned int i;

	/*
	 * lower= is for the stacking drivers of a --dev= list: the others in
	 * the same list (--dev=ram,nvme --lower=null) open without it.  Alone,
	 * or in a list with no stacking driver, the registry refuses it.
	 */
	if (d->p.lower[0] && drv && !drv->lowers) {
		for (i = 0; i < d->nr_devs; i++) {
			const struct blk_driver *o = blk_driver_find(d->devs[i]);

			if (o && o->lowers) {
				struct blk_dev_params p = d->p;

				p.lower[0] = '\0';
				return blk_dev_open(devname, &p, &a, dev, err, errlen);
			}
		}
	}
	return blk_dev_open(devname, &d->p, &a, dev, err, errlen);
}

/* ------------------------------------------------------------ job state */

struct io_u {
	struct blk_bio bio;
	struct iovec iov;
	uint64_t start_ns;      /* batch prepared */
	uint64_t issue_ns;      /* batch submitted */
	struct io_u *next;
	struct job_thread *td;
	uint8_t ddir;
	uint8_t vread;          /* a verify_backlog read: checked when reaped */
	uint16_t file;          /* the thread's file it went to (job_file) */
};

/* xoshiro256** (Blackman and Vigna, public domain algorithm) */
struct rng {
	uint64_t s[4];
};

/* randrepeat=, allrandrepeat=: the generators start from randseed */
static inline bool job_repeat(const struct bench_job_opts *o)
{
	return o->randrepeat || o->allrandrepeat;
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	unsigned int i;

	/* splitmix64 to spread one seed over the state */
	for (i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		r->s[i] = z ^ (z >> 31);
	}
}

/* Uniform in [0, n) by multiply-high (Lemire), no division. */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

struct job_progress {
	_Atomic uint64_t ios[DDIR_NR];
	_Atomic uint64_t bytes[DDIR_NR];
	_Atomic bool done;
	_Atomic uint64_t start_ns;	/* bench_now_ns() at its clock's start; 0 before */
};

/*
 * One file of a job thread with several (fio's nrfiles=, filename=a:b):
 * its device and ctx, and the state of its region, which the thread
 * holds in its own fields while the file is the current one
 * (job_file_next()); the I/Os go to the files in turn, one each, as
 * fio's default file_service_type=roundrobin sends them.
 */
struct job_file {
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	const char *path;
	uint64_t capacity;
	uint64_t nr_blocks;
	uint64_t seq_pos[DDIR_NR];
	uint64_t *randmap, *randmap_full;
	uint64_t randmap_words, randmap_full_words, randmap_used;
	uint64_t *written;
	uint64_t written_blocks;
	uint64_t verify_pos;
	uint64_t last_block;
	uint32_t rand_seq_left;
	uint64_t loop_bytes;         /* issued in this pass over the files */
	bool done;                   /* its region issued in this pass */
};

/*
 * fio's flows (flow.c): the jobs with flow= of one flow_id share a count
 * of the I/Os they issued (from 1) and the sum of their weights; a thread
 * whose own count is a larger share of the flow's than its weight is of
 * the weights waits.  Joined when a thread starts its workload, left when
 * it ends (its count and weight taken back out, as fio's flow_put()).
 */
struct bench_flow {
	uint32_t id;
	bool used;
	_Atomic uint64_t counter;
	_Atomic uint64_t total_weight;
	/*
	 * the clock its threads share (0: none started yet): the first
	 * one's start.  Each thread's ramp and runtime count from it, so
	 * they all end together: a thread the scheduler woke later would
	 * otherwise end later, and run outside the flow's ratio once the
	 * others had left it (2 vCPUs under load: flow=1 and flow=8 at
	 * 7.48).  Threads with startdelay= keep their own clock.
	 */
	_Atomic uint64_t t0;
};

/* one run at a time: the run's flows (bench_run_one() sets them up) */
static struct bench_flow bench_flows[BENCH_MAX_JOBS];

struct job_thread {
	const struct bench_job_opts *o;
	struct bench_job_result *res;
	struct blk_dev *dev;
	struct blk_mq_ctx *ctx;
	pthread_t thread;
	pthread_barrier_t *start_barrier;
	/*
	 * exitall, exit_what=: @terminate is set by another thread's end
	 * (job_exit_others()); @terminated: the loop saw it.  @all, @nr_all:
	 * every thread of the run; @phase_first, @phase_n: those of this
	 * thread's stonewall group; @exitall_any: a job has exitall
	 */
	atomic_bool terminate;
	bool terminated;
	bool exitall_any;
	struct job_thread *all;
	unsigned int nr_all, phase_first, phase_n;
	/* wait_for=: the waitee's threads, all done before this one starts */
	struct job_thread *waitee;
	unsigned int nr_waitee;
	struct io_u *ios;
	void *buf;
	struct io_u *free_list;
	unsigned int nr_free;
	/*
	 * An I/O job_prep() filled in (its block taken from the random map
	 * or the sequence, its write data seeded) that blk_submit() refused
	 * with -EAGAIN: off the free list, submitted as it is next time.
	 */
	struct io_u *retry;
	struct io_u *completed;      /* reaped by the last blk_poll() */
	struct io_u **batch;         /* I/Os of the batch being submitted */
	struct rng rng;
	uint64_t *randmap;           /* one bit per block (norandommap=0) */
	uint64_t *randmap_full;      /* one bit per randmap word: word is full */
	uint64_t randmap_words;
	uint64_t randmap_full_words;
	uint64_t randmap_used;
	bool random;                 /* random offsets (rw=rand*) */
	int fixed_ddir;              /* the one direction, or -1 for mixed */
	uint64_t nr_blocks;          /* bs-sized blocks in the region */
	uint64_t seq_pos[DDIR_NR];   /* next sequential block per direction */
	uint64_t bytes_issued;
	uint64_t bytes_limit;        /* 0: none (time_based) */
	bool measuring;              /* completions are counted */
	bool ramping;                /* in ramp_time: counted, reset when it ends */
	bool lat;                    /* latency timestamps */
	/*
	 * Some of slat, clat, lat are off (disable_slat=, disable_clat=,
	 * disable_lat=; not all three: then lat is false): job_account()
	 * checks each, off its path when all are kept
	 */
	bool lat_some;
	bool no_slat, no_clat, no_tlat;
	/*
	 * fio's bw and iops samples (job_sample()): the next time check at
	 * which a window may be due (UINT64_MAX: none while not measuring),
	 * each window's start and the counts at its start
	 */
	uint64_t sample_next;
	uint64_t bw_t, iops_t;
	uint64_t bw_bytes0[DDIR_NR], iops_ios0[DDIR_NR];
	bool stop;
	bool interrupted;            /* stopped by SIGINT/SIGTERM (bench_interrupted) */
	bool abandoned;              /* requests still in flight at the stop deadline */
	uint64_t t_start, t_measure;
	uint64_t t_loop_end;         /* end of job_loop()'s measured window */
	struct rusage ru_start;
	struct job_progress progress;
	/* the loop's time checks call job_tick_slow(): rate_min or ss= */
	bool tick_slow;
	/*
	 * --status-interval: the main thread asks for a copy of the results
	 * so far (snap_req one more than snap_ack); the thread makes it into
	 * @snap at its next time check and acknowledges (job_snapshot())
	 */
	_Atomic unsigned int snap_req;
	_Atomic unsigned int snap_ack;
	struct bench_job_result *snap;
	pthread_mutex_t snap_mu;     /* @snap: a late copy may meet the reader */
	uint64_t ios_done[DDIR_NR];  /* progress, thread-local */
	uint64_t bytes_done[DDIR_NR];
	uint64_t offset;             /* region start: offset + jobnum * offset_increment */
	unsigned int thread_idx;     /* over every job's threads, 0 first (fio's thread_number - 1) */
	/* rate_min=, rate_iops_min= (job_rate_min_check()) */
	uint64_t rmin_t[DDIR_NR];    /* last check, bench clock ns (0: none yet) */
	uint64_t rmin_bytes[DDIR_NR], rmin_ios[DDIR_NR]; /* done at the last check */
	/*
	 * Several files (nr_files > 1): the current one's state is in the
	 * fields above (ctx, nr_blocks, seq_pos, randmap, written, ...),
	 * the others' in files[]; job_prep() goes through job_prep_hooked()
	 */
	struct job_file *files;
	unsigned int nr_files;       /* 1: files is NULL, the fields are the file's */
	unsigned int cur_file;
	unsigned int files_done;     /* files whose region this pass issued */
	bool file_switch;            /* the next I/O goes to the next file */
	uint32_t fst_left;           /* file_service_type=...:N: I/Os left to this file */
	uint64_t file_loop_bytes;    /* the current file's job_file.loop_bytes */
	uint64_t region_bytes;       /* every file's region, summed */
	/* rate=, rate_iops=, thinktime= (job_pace_*()): off unless paced */
	bool paced;                  /* any of them: job_prep() asks job_pace_ok() first */
	bool pace_blocked;           /* this round stopped at the pace: job_pace_wait() */
	/*
	 * per direction, as fio's rate_next_io_time[]: a mixed job's I/O goes
	 * in a direction whose time has come (job_pace_rate())
	 */
	bool rate_on;                /* a direction has a cap */
	uint64_t rate_ns[DDIR_NR];   /* an I/O at most every rate_ns (0: no cap) */
	uint64_t rate_next[DDIR_NR]; /* when the next I/O may go, bench clock ns */
	uint64_t poisson_mean_ns[DDIR_NR]; /* rate_process=poisson: the gaps' mean (0: linear) */
	int pace_ddir;               /* mixed job: the direction job_pace_ok() chose for the next I/O (-1: none) */
	uint64_t rate_due;           /* held back by the rate: when the next I/O may go */
	/*
	 * latency_target= (fio's io_u.c lat_target_*(), job_lat_*()): the
	 * depth searched (lat_qd) between lat_qd_low and lat_qd_high; each
	 * window from lat_ts counts the I/Os completed (ios_done[] past
	 * lat_ios) and those over the target (lat_failed)
	 */
	bool lat_target;
	bool max_lat;                /* max_latency= (job_max_lat_reaped()) */
	bool lat_end_run;            /* the depth is found: the final window runs */
	bool lat_done;               /* ... and ran: the workload ended there */
	bool zbd_eof;                /* zonemode=zbd: no zone left ended the writes */
	uint8_t lat_quiesce;         /* waiting for the I/Os in flight: LAT_Q_* then */
	unsigned int lat_qd, lat_qd_high, lat_qd_low, lat_stable;
	uint64_t lat_ts, lat_ios, lat_failed;
	/*
	 * iodepth_batch_complete_min=, _max= (job_reap_batch()): completions
	 * polled but not reaped yet, oldest first
	 */
	bool lat_restart;            /* the found depth's window began: job_tick_slow() restarts the runtime */
	bool rate_min_on;            /* rate_min= or rate_iops_min= in a direction */
	bool reap_batch;
	/*
	 * iodepth_low= below iodepth (job_reap_batch()): a full queue is
	 * reaped down to @depth_low; @depth_seen: the I/Os held after the
	 * last reap, from which the submissions since counted their depths
	 */
	unsigned int depth_low;
	unsigned int depth_seen;
	struct io_u *pend_head, *pend_tail;
	unsigned int nr_pend;
	struct rng prng;             /* ... their draws (fio's poisson_state) */
	uint32_t think_left;         /* I/Os before the next thinktime stall */
	uint64_t think_since;        /* thinktime_iotime=: the last stall's start (fio's last_thinktime) */
	struct bench_flow *flow;     /* flow=: its flow (NULL: none) */
	uint64_t flow_counter;       /* I/Os this thread counted in it */
	bool flow_blocked;           /* the last job_pace_ok() said no for the flow */
	bool flow_clock;             /* its ramp and runtime count from the flow's t0 */
	/*
	 * blockalign= other than the smallest bs (a random job): the random
	 * draws are in units of ba (nr_blocks is fio's last_block()), and
	 * job_prep_hooked() turns the block drawn into an offset of ba units
	 */
	uint32_t ba;
	uint64_t ba_end;             /* the region's end, bytes (job_var_bs()) */
	/* bssplit=, bsrange= (job_var_bs()): td->o is then td->var_opts, the
	 * job's options with bs= the smallest size, the unit of blocks */
	bool var_bs;
	/* number_ios= with variable sizes: I/Os left (0: no such limit);
	 * the last one sets bytes_limit to the bytes issued (job_var_bs()) */
	uint64_t ios_left;
	uint32_t buf_bs;             /* bytes of each I/O's buffer: the largest size */
	struct bench_job_opts var_opts;
	/* random_distribution= other than random (job_dist_block()) */
	uint32_t dist;               /* enum bench_rand_dist */
	double zeta_n, zeta_2;       /* zipf: the sums over the ranks */
	double pareto_pow;
	uint64_t dist_off;           /* the scatter's offset, in blocks */
	uint64_t gauss_dev;          /* normal: the deviation, in blocks */
	uint64_t zone_start[BENCH_ZONES_MAX], zone_len[BENCH_ZONES_MAX];
	/*
	 * zonemode=strided (job_prep_strided()): @offset is the current
	 * zone's start, @nr_blocks a zone's blocks; @zone_bytes moved in it
	 */
	bool strided;
	uint64_t zone_bytes;
	uint64_t zone_first;         /* the first zone's start: offset= */
	uint64_t zone_dev_end;       /* the device's size: past it, back to zone_first */
	/*
	 * zonemode=zbd (job_prep_zbd()): @zbdj.zbd is the device's zones
	 * (NULL: off), @zbd_set them before job_setup(); @zbd_pos: the next
	 * sequential byte of the region per direction (fio's last_pos)
	 */
	struct bench_zbd_job zbdj;
	struct bench_zbd *zbd_set;
	uint64_t zbd_pos[DDIR_NR];
	/*
	 * percentage_random= (job_prep_pct()) and bs_unaligned= on a
	 * sequential job with several sizes (job_var_bs()): @next_pos is
	 * where each direction's last I/O ended, bytes from @offset (fio's
	 * f->last_pos); @seq_rng draws which I/Os follow it (fio's
	 * seq_rand_state); @bs_gran: the sizes' unit, the device's logical
	 * block size with bs_unaligned, else the smallest size
	 */
	bool pct_seq_on;
	bool track_pos;
	uint32_t bs_gran;
	/* bs_ddir (fio's per-direction sizes): each direction's unit, as
	 * @bs_gran (its smallest size, or the logical block size) */
	uint32_t bsd_gran[3];
	uint64_t next_pos[DDIR_NR];
	struct rng seq_rng;
	/* rw=<pattern>:N (job_prep_mod()) */
	int64_t seq_skip;            /* sequential: blocks skipped after each I/O */
	uint32_t rand_seq_left;      /* random: I/Os still to follow the last in order */
	uint64_t last_block;
	/* verify= (see verify.h and job_verify_*()) */
	const char *devname;         /* names the dump files */
	bool fill_writes;            /* writes carry a verify header and seeded data */
	bool check_reads;            /* completed reads are checked */
	bool prep_hook;              /* job_prep() goes through job_prep_hooked() */
	bool reap_hook;              /* job_reap() calls job_verify_reaped() first */
	bool verify_after;           /* a verify phase follows the workload */
	struct bench_log *log;       /* fio's logs, json+ bins (reap_hook): NULL when off */
	/*
	 * I/O priorities (options.h): @ioprio, the job's own, is every
	 * io_u's bi_ioprio; with @cmdprio (1 cmdprio_percentage, 2
	 * cmdprio_bssplit) job_prep() draws each read's and write's anew
	 * (prep_hook) and job_reap() adds its clat to @prio (reap_hook)
	 */
	uint16_t ioprio;
	uint8_t cmdprio;
	uint16_t cmdprio_val[2];     /* cmdprio_percentage's priority per direction */
	struct rng prio_rng;
	struct bench_prio_stats *prio;
	bool verify_phase;           /* reading back: job_prep() walks the blocks */
	uint64_t *written;           /* one bit per block written (do_verify=1) */
	uint64_t written_blocks;     /* bits set in @written */
	uint64_t verify_pos;         /* next block the verify phase considers */
	struct rng vrng;             /* per-write data seeds */
	uint64_t numberio;           /* writes prepared: the header's numberio */
	uint64_t verify_first_bad;   /* lowest offset of a bad block */
	unsigned int verify_msgs;    /* mismatch lines printed (at most VERIFY_MAX_MSGS) */
	unsigned int verify_dumps;   /* bad blocks written out (at most VERIFY_MAX_DUMPS) */
	struct bench_verify_spec vspec; /* the method, interval, offset, pattern */
	/* verify_backlog=: blocks written since the last read-back, oldest first */
	uint64_t *backlog;           /* a ring of blocks written, not read back yet */
	uint64_t backlog_cap;        /* verify_backlog + iodepth */
	uint64_t backlog_head, backlog_nr;
	uint64_t backlog_since;      /* writes noted since the last read-back began */
	uint64_t backlog_due;        /* read-backs job_prep_hooked() still issues */
	uint64_t backlog_skip;       /* then left to the verify phase (batch < backlog) */
	/* trim_percentage=, trim_backlog= (fio's trim verification) */
	uint64_t *trimq;             /* a ring of written blocks queued to be trimmed */
	uint64_t trimq_cap;          /* trim_backlog + iodepth */
	uint64_t trimq_head, trimq_nr;
	uint64_t trim_since;         /* blocks written since the last trim round began */
	uint64_t trim_due;           /* trims job_prep_hooked() still issues this round */
	uint64_t *trimmed;           /* trim_verify_zero: blocks trimmed, not written since */
	struct rng trng;             /* trim_percentage's draws */
	/*
	 * Write buffers (job_buf_*()): what a fill writes (@buf_kind), and
	 * whether each write is filled afresh (refill_buffers) or scrambled
	 * (scramble_buffers).  Each buffer a fill makes comes from one seed:
	 * unique buffers take the seeds of @buf_rng in turn (@buf_next is
	 * the next), dedupe_percentage of them repeat one (job_buf_seed()).
	 */
	bool buf_refill;
	bool buf_scramble;
	uint8_t buf_kind;            /* BUFK_* */
	uint32_t buf_pct;            /* BUFK_PCT: the zero (or pattern) share of a chunk, % */
	uint32_t buf_chunk;          /* BUFK_PCT: bytes of a chunk (0: bs) */
	struct rng buf_rng;
	uint64_t buf_next;
	struct rng dd_rng;           /* dedupe draws */
	uint64_t *dd_ws;             /* dedupe_mode=working_set: its seeds */
	uint64_t dd_nr_ws;
	uint64_t scramble_seq;       /* writes scrambled: stands for fio's start time */
	/* mem=: the memory @buf is in (@buf is @buf_mem + iomem_align) */
	void *buf_mem;
	size_t buf_mem_len;
	int buf_fd;                  /* mem=mmap*:FILE: its descriptor, or -1 */
	bool buf_unlink;             /* ... created here: removed at the end */
	const char *file_path;       /* the one file's path (error_dump), NULL: a device */
	void *pinned;                /* lockmem=: the locked memory (NULL: none) */
	size_t pinned_len;
	/*
	 * fsync=, fdatasync=, sync_file_range= (job_sync()): @sync_on, the
	 * job has one; @wr_issued, writes issued (fio's io_issues[WRITE]);
	 * @last_was_sync, the last I/O was a sync (fio's); @sync_due, set by
	 * job_prep_hooked() with @pace_blocked: job_loop() then syncs;
	 * @sync_kind: SYNC_* of the sync due.  write_barrier= FUA-flags writes.
	 */
	bool sync_on;
	bool last_was_sync;
	bool sync_due;
	uint8_t sync_kind;
	uint64_t wr_issued;
	struct blk_bio sync_bio;
	bool sync_done;
	/* write_iolog= (job_iolog_*()): the log, its time 0 (bench ns) */
	FILE *iolog;
	uint64_t iolog_t0;
	/*
	 * read_iolog= (job_prep_replay()): the log's entries, the next one,
	 * the replay's time 0 and the time job_loop() waits for (0: none)
	 */
	struct bench_iolog_ent *rp;
	size_t rp_n, rp_pos;
	uint64_t rp_t0, rp_wait;
};

enum { SYNC_FSYNC, SYNC_DATASYNC, SYNC_SFR, SYNC_END };

enum { BUFK_RANDOM, BUFK_ZERO, BUFK_PATTERN, BUFK_PCT };

#define VERIFY_MAX_MSGS 100
#define VERIFY_MAX_DUMPS 10

static void job_end_io(struct blk_bio *bio)
{
	struct io_u *u = (struct io_u *)bio;
	struct job_thread *td = u->td;

	u->next = td->completed;
	td->completed = u;
}

static void job_error(struct job_thread *td, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void job_error(struct job_thread *td, int err, const char *fmt, ...)
{
	va_list ap;

	if (td->res->error)
		return;
	td->res->error = err;
	va_start(ap, fmt);
	vsnprintf(td->res->errmsg, sizeof(td->res->errmsg), fmt, ap);
	va_end(ap);
	td->stop = true;
}

/*
 * Several files: the current file's state in and out of the thread's own
 * fields, which job_prep() uses as they are for a thread with one file.
 */
static void job_file_save(struct job_thread *td)
{
	struct job_file *f = &td->files[td->cur_file];

	f->nr_blocks = td->nr_blocks;
	memcpy(f->seq_pos, td->seq_pos, sizeof(f->seq_pos));
	f->randmap = td->randmap;
	f->randmap_full = td->randmap_full;
	f->randmap_words = td->randmap_words;
	f->randmap_full_words = td->randmap_full_words;
	f->randmap_used = td->randmap_used;
	f->written = td->written;
	f->written_blocks = td->written_blocks;
	f->verify_pos = td->verify_pos;
	f->last_block = td->last_block;
	f->rand_seq_left = td->rand_seq_left;
	f->loop_bytes = td->file_loop_bytes;
}

static void job_file_load(struct job_thread *td, unsigned int i)
{
	const struct job_file *f = &td->files[i];

	td->cur_file = i;
	td->ctx = f->ctx;
	td->nr_blocks = f->nr_blocks;
	memcpy(td->seq_pos, f->seq_pos, sizeof(td->seq_pos));
	td->randmap = f->randmap;
	td->randmap_full = f->randmap_full;
	td->randmap_words = f->randmap_words;
	td->randmap_full_words = f->randmap_full_words;
	td->randmap_used = f->randmap_used;
	td->written = f->written;
	td->written_blocks = f->written_blocks;
	td->verify_pos = f->verify_pos;
	td->last_block = f->last_block;
	td->rand_seq_left = f->rand_seq_left;
	td->file_loop_bytes = f->loop_bytes;
}

/*
 * fio's file_service_type=roundrobin (its default): the next file whose
 * region this pass has not issued yet; once every one has, the next pass
 * (loops=, an io_size= beyond the files, number_ios) starts them all again.
 */
static void job_file_next(struct job_thread *td)
{
	unsigned int i = td->cur_file, k;

	job_file_save(td);
	if (td->files_done >= td->nr_files) {
		for (k = 0; k < td->nr_files; k++) {
			td->files[k].done = false;
			td->files[k].loop_bytes = 0;
		}
		td->files_done = 0;
	}
	if (td->o->fst == BENCH_FST_RAND) {
		/* fio's get_next_file_rand(): any file not done this pass */
		do {
			i = (unsigned int)rng_below(&td->rng, td->nr_files);
		} while (td->files[i].done);
	} else {
		do {
			i = i + 1 < td->nr_files ? i + 1 : 0;
		} while (td->files[i].done);
	}
	job_file_load(td, i);
}

/*
 * file_service_type=: does the next I/O go to another file?  roundrobin
 * and random: after fst_nr I/Os to this one; sequential: once its region
 * is issued; any: once this file is done for the pass.
 */
static bool job_file_due(struct job_thread *td)
{
	if (td->files[td->cur_file].done)
		return true;
	if (td->o->fst == BENCH_FST_SEQ)
		return false;
	if (--td->fst_left)
		return false;
	td->fst_left = td->o->fst_nr ? td->o->fst_nr : 1;
	return true;
}

/* An I/O of the current file was prepared: its region may be done. */
static void job_file_issued(struct job_thread *td, struct io_u *u)
{
	struct job_file *f = &td->files[td->cur_file];

	u->file = (uint16_t)td->cur_file;
	/* time_based: a pass is whole regions only for sequential */
	if ((td->o->time_based && td->o->fst != BENCH_FST_SEQ) || f->done)
		return;
	td->file_loop_bytes += u->bio.bi_size;
	if (td->file_loop_bytes >= td->nr_blocks * td->o->bs) {
		f->done = true;
		td->files_done++;
	}
}

/* Plug (or unplug) every file's ctx: a batch may go to each of them. */
static void __attribute__((noinline))
job_files_plug(struct job_thread *td, bool start)
{
	unsigned int i;

	for (i = 0; i < td->nr_files; i++) {
		if (start)
			blk_start_plug(td->files[i].ctx);
		else
			blk_finish_plug(td->files[i].ctx);
	}
}

static unsigned int job_inflight(const struct job_thread *td)
{
	unsigned int i, n = 0;

	if (likely(td->nr_files <= 1))
		return blk_ctx_inflight(td->ctx);
	for (i = 0; i < td->nr_files; i++)
		n += blk_ctx_inflight(td->files[i].ctx);
	return n;
}

/*
 * Several files: reap every file's ctx; with @wait and nothing reaped,
 * wait on the file with the most in flight, at most 100 us while other
 * files have requests in flight too, so that their completions are not
 * left behind its.
 */
static int __attribute__((noinline))
job_files_reap(struct job_thread *td, bool wait, uint64_t timeout_ns)
{
	struct blk_mq_ctx *most = NULL;
	unsigned int i, busy = 0, max = 0;
	int n = 0;

	for (i = 0; i < td->nr_files; i++) {
		struct blk_mq_ctx *ctx = td->files[i].ctx;
		unsigned int in;

		n += blk_poll(ctx);
		in = blk_ctx_inflight(ctx);
		busy += in != 0;
		if (in > max) {
			max = in;
			most = ctx;
		}
	}
	if (n || !wait || !most)
		return n;
	if (busy > 1 && (!timeout_ns || timeout_ns > 100000))
		timeout_ns = 100000;
	return blk_wait(most, timeout_ns);
}

/*
 * fio's depth buckets (its io_u_mark_depth()): 1, 2-3, 4-7, 8-15, 16-31,
 * 32-63, >=64 I/Os in flight.
 */
static inline unsigned int depth_bucket(unsigned int depth)
{
	unsigned int b = 31 - (unsigned int)__builtin_clz(depth | 1);

	return b < 6 ? b : 6;
}

/*
 * fio's submit and complete buckets (its __io_u_mark_map()): 0, 1-4,
 * 5-8, 9-16, 17-32, 33-64, >64 I/Os.
 */
static inline unsigned int batch_bucket(unsigned int n)
{
	unsigned int b;

	if (n <= 4)
		return n != 0;
	b = 32 - (unsigned int)__builtin_clz(n - 1) - 1; /* ceil(log2 n) - 1 */
	return b < 6 ? b : 6;
}

/*
 * blk_poll(), or blk_wait() with @wait, on the thread's ctx (or files);
 * a reap that completed any counts in fio's "complete" buckets (with
 * iodepth_batch_complete_*, job_reap_batch() counts its batches instead,
 * as fio counts each getevents' min..max).
 */
static inline int job_reap_wait(struct job_thread *td, bool wait,
				uint64_t timeout_ns)
{
	int n;

	if (unlikely(td->nr_files > 1))
		n = job_files_reap(td, wait, timeout_ns);
	else
		n = wait ? blk_wait(td->ctx, timeout_ns) : blk_poll(td->ctx);
	if (n > 0 && !td->reap_batch)
		td->res->complete_map[batch_bucket((unsigned int)n)]++;
	return n;
}

/* Mark block @b used; keep the summary of full words. */
static inline void randmap_set(struct job_thread *td, uint64_t w, uint64_t bit)
{
	td->randmap[w] |= 1ull << bit;
	td->randmap_used++;
	if (td->randmap[w] == ~0ull)
		td->randmap_full[w >> 6] |= 1ull << (w & 63);
}

/* An empty map: no block used; a partial last word's missing blocks marked used. */
static void randmap_clear(struct job_thread *td)
{
	memset(td->randmap, 0, td->randmap_words * 8);
	memset(td->randmap_full, 0, td->randmap_full_words * 8);
	td->randmap_used = 0;
	if (td->nr_blocks & 63)
		td->randmap[td->randmap_words - 1] = ~0ull << (td->nr_blocks & 63);
}

/*
 * Pick the next block for a random direction, honouring the random map:
 * a block already done this pass is replaced by the next free one after
 * it.  A second level (one bit per full 64-block word) keeps that search
 * short as the pass fills up; without it, the scan cost 60 instructions
 * per I/O on average over a pass.
 */
static inline __attribute__((always_inline))
uint64_t job_rand_block(struct job_thread *td)
{
	uint64_t b = rng_below(&td->rng, td->nr_blocks);
	uint64_t w, bit, free_bits, fw, i;

	if (!td->randmap)
		return b;
	if (unlikely(td->randmap_used == td->nr_blocks)) {
		/*
		 * every block done once: start the next pass.  The first pass
		 * starts from the map job_setup() prepared, so this clear
		 * never runs before a whole pass of I/O has paid for it.
		 */
		randmap_clear(td);
	}
	w = b >> 6;
	bit = b & 63;
	free_bits = ~td->randmap[w] & (~0ull << bit);
	if (likely(free_bits & 1)) {
		randmap_set(td, w, bit);
		return b;
	}
	if (free_bits) {
		bit = (uint64_t)__builtin_ctzll(free_bits);
		randmap_set(td, w, bit);
		return (w << 6) | bit;
	}
	/* the next word that is not full, wrapping */
	w++;
	for (i = 0; i <= td->randmap_full_words; i++) {
		if (w >= td->randmap_words)
			w = 0;
		fw = ~td->randmap_full[w >> 6] & (~0ull << (w & 63));
		if (fw) {
			w = (w & ~63ull) | (uint64_t)__builtin_ctzll(fw);
			if (w < td->randmap_words)
				break;
		}
		w = (w | 63) + 1;
	}
	bit = (uint64_t)__builtin_ctzll(~td->randmap[w]);
	randmap_set(td, w, bit);
	return (w << 6) | bit;
}

static inline enum bench_ddir job_rwmix_ddir(struct job_thread *td)
{
	return rng_below(&td->rng, 100) < td->o->rwmixread ? DDIR_READ :
							     DDIR_WRITE;
}

static inline enum bench_ddir job_pick_ddir(struct job_thread *td)
{
	if (likely(td->fixed_ddir >= 0))
		return (enum bench_ddir)td->fixed_ddir;
	if (unlikely(td->pace_ddir >= 0)) {
		/* rate=: job_pace_ok() chose it (fio's rate_ddir()) */
		enum bench_ddir d = (enum bench_ddir)td->pace_ddir;

		td->pace_ddir = -1;
		return d;
	}
	return job_rwmix_ddir(td);
}

/* The first set bit at or after @b in a map of @nbits bits; @nbits if none. */
static uint64_t bitmap_next(const uint64_t *map, uint64_t nbits, uint64_t b)
{
	uint64_t w, bits, nwords = (nbits + 63) / 64;

	if (b >= nbits)
		return nbits;
	w = b >> 6;
	bits = map[w] & (~0ull << (b & 63));
	while (!bits) {
		if (++w >= nwords)
			return nbits;
		bits = map[w];
	}
	b = (w << 6) | (uint64_t)__builtin_ctzll(bits);
	return b < nbits ? b : nbits;
}

/*
 * The verify phase's next read: the next written block in offset order
 * (every block of the region for verify_only).
 */
static bool job_prep_verify(struct job_thread *td, struct io_u *u)
{
	uint64_t b = td->verify_pos;

	if (td->bytes_issued >= td->bytes_limit)
		return false;
	if (td->written)
		b = bitmap_next(td->written, td->nr_blocks, b);
	if (b >= td->nr_blocks)
		return false;
	td->verify_pos = b + 1;
	u->ddir = DDIR_READ;
	u->bio.bi_offset = td->offset + b * td->o->bs;
	u->bio.bi_size = td->o->bs;
	u->bio.bi_flags = 0;
	u->bio.bi_op = BLK_OP_READ;
	u->bio.bi_vcnt = 1;
	td->bytes_issued += td->o->bs;
	return true;
}

/*
 * The workload's next I/O; false when the job has issued all it should.
 * Inlined into both job_prep() and job_prep_hooked(), so that the plain
 * path stays one function, as it was before verify= existed.
 */
static inline __attribute__((always_inline))
bool job_prep_io(struct job_thread *td, struct io_u *u)
{
	const struct bench_job_opts *o = td->o;
	enum bench_ddir ddir;
	uint64_t block;

	if (td->bytes_limit && td->bytes_issued >= td->bytes_limit)
		return false;
	ddir = job_pick_ddir(td);
	if (td->random) {
		block = job_rand_block(td);
	} else {
		block = td->seq_pos[ddir];
		if (++td->seq_pos[ddir] >= td->nr_blocks)
			td->seq_pos[ddir] = 0;
	}
	u->ddir = (uint8_t)ddir;
	u->bio.bi_offset = td->offset + block * o->bs;
	u->bio.bi_size = o->bs;
	u->bio.bi_flags = 0;
	if (ddir == DDIR_TRIM) {
		u->bio.bi_op = BLK_OP_DISCARD;
		u->bio.bi_vcnt = 0;
	} else {
		u->bio.bi_op = ddir == DDIR_READ ? BLK_OP_READ : BLK_OP_WRITE;
		u->bio.bi_vcnt = 1;
	}
	td->bytes_issued += o->bs;
	return true;
}

/* Fill in @u for @block of direction @ddir (the hooked paths' job_prep_io()). */
static void job_fill(struct job_thread *td, struct io_u *u,
		     enum bench_ddir ddir, uint64_t block)
{
	const struct bench_job_opts *o = td->o;

	u->ddir = (uint8_t)ddir;
	u->bio.bi_offset = td->offset + block * o->bs;
	u->bio.bi_size = o->bs;
	u->bio.bi_flags = 0;
	if (ddir == DDIR_TRIM) {
		u->bio.bi_op = BLK_OP_DISCARD;
		u->bio.bi_vcnt = 0;
	} else {
		u->bio.bi_op = ddir == DDIR_READ ? BLK_OP_READ : BLK_OP_WRITE;
		u->bio.bi_vcnt = 1;
	}
	td->bytes_issued += o->bs;
}

/*
 * Spreads ranks over the region as fio does: a multiplication by the
 * 64-bit golden ratio (Linux's GOLDEN_RATIO_64), odd, so that modulo a
 * power-of-two region distinct ranks stay distinct blocks; a mixing hash
 * made colliding ranks share blocks (20 % fewer blocks hit than fio for
 * zipf:0.8).
 */
static inline uint64_t dist_hash(uint64_t x)
{
	return x * 0x61c8864680b583ebull;
}

static inline double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1p-53;
}

/*
 * random_distribution=, the models of fio's HOWTO: zipf by Gray et al.'s
 * method ("Quickly generating billion-record synthetic databases", 1994)
 * over zeta sums of at most 10M ranks; pareto as rank = (n-1) u^(log h /
 * log(1-h)); normal as the mean of 12 uniform draws plus a deviation of
 * DEV% of the region; each rank then scattered over the region by a hash
 * and an offset (the center's, or a random one), as fio scatters them.
 * zoned, zoned_abs: a zone by its share, a uniform block within it.
 */
static uint64_t job_dist_block(struct job_thread *td)
{
	const struct bench_job_opts *o = td->o;
	uint64_t n = td->nr_blocks, k = 0;
	double u = rng_unit(&td->rng);
	unsigned int i;

	switch (td->dist) {
	case DIST_ZIPF: {
		double theta = o->dist_param, uz = u * td->zeta_n;

		if (uz < 1.0)
			k = 0;
		else if (uz < 1.0 + pow(0.5, theta))
			k = 1;
		else {
			double eta = (1.0 - pow(2.0 / (double)n, 1.0 - theta)) /
				     (1.0 - td->zeta_2 / td->zeta_n);

			k = (uint64_t)((double)n *
				       pow(eta * u - eta + 1.0, 1.0 / (1.0 - theta)));
		}
		return (dist_hash(k) + td->dist_off) % n;
	}
	case DIST_PARETO:
		k = (uint64_t)((double)(n - 1) * pow(u, td->pareto_pow));
		return (dist_hash(k) + td->dist_off) % n;
	case DIST_NORMAL:
		for (i = 0; i < 12; i++)
			k += rng_below(&td->rng, n + 1);
		k = (k + 11) / 12;
		if (td->gauss_dev) {
			int64_t dev = (int64_t)rng_below(&td->rng, td->gauss_dev) -
				      (int64_t)(td->gauss_dev / 2);

			while (dev + (int64_t)k >= (int64_t)n || dev + (int64_t)k < 0)
				dev /= 2;
			k = (uint64_t)((int64_t)k + dev);
		}
		return (dist_hash(k) + td->dist_off) % n;
	default: {
		/* zoned: the zone whose share the draw falls in */
		double acc = 0;

		for (i = 0; i < o->dist_zones; i++) {
			acc += o->zone_pct[i] / 100.0;
			if (u < acc && td->zone_len[i])
				break;
		}
		if (i == o->dist_zones) {
			for (i = o->dist_zones; i-- > 0;)
				if (td->zone_len[i])
					break;
		}
		return td->zone_start[i] + rng_below(&td->rng, td->zone_len[i]);
	}
	}
}

/* A random I/O whose block comes from random_distribution=. */
static bool job_prep_dist(struct job_thread *td, struct io_u *u)
{
	uint64_t block;

	if (td->bytes_limit && td->bytes_issued >= td->bytes_limit)
		return false;
	block = job_dist_block(td);
	/* a file smaller than the first (whose region set the zones) */
	if (unlikely(block >= td->nr_blocks))
		block %= td->nr_blocks;
	job_fill(td, u, job_pick_ddir(td), block);
	return true;
}

/*
 * rw=<pattern>:N, fio's offset modifiers: a sequential job skips
 * seq_skip blocks after each I/O (backwards when negative, wrapping at the
 * region's ends); a random one issues N I/Os from each random offset, the
 * N-1 after the first in order (fio's rw_sequencer=sequential).
 */
static bool job_prep_mod(struct job_thread *td, struct io_u *u)
{
	const struct bench_job_opts *o = td->o;
	uint64_t block, n = td->nr_blocks;
	enum bench_ddir ddir;

	if (td->random && td->rand_seq_left) {
		if (td->bytes_limit && td->bytes_issued >= td->bytes_limit)
			return false;
		td->rand_seq_left--;
		ddir = job_pick_ddir(td);
		block = td->last_block + 1 < n ? td->last_block + 1 : 0;
		/* taken: the random picks of this pass go elsewhere */
		if (td->randmap &&
		    !(td->randmap[block >> 6] & (1ull << (block & 63)))) {
			if (unlikely(td->randmap_used == td->nr_blocks))
				randmap_clear(td);
			randmap_set(td, block >> 6, block & 63);
		}
		job_fill(td, u, ddir, block);
	} else {
		if (td->random && td->dist ? !job_prep_dist(td, u) :
		    !job_prep_io(td, u))
			return false;
		block = (u->bio.bi_offset - td->offset) / o->bs;
		if (td->random) {
			td->rand_seq_left = (uint32_t)(o->rw_mod - 1);
		} else {
			/*
			 * job_prep_io() moved on by one block: the skip too.
			 * As fio: past the end a forward skip starts again at
			 * the region's start; before it, a backward one goes to
			 * the region's end plus the (negative) skip.
			 */
			int64_t next = (int64_t)block + 1 + td->seq_skip;

			if (next < 0)
				next = (int64_t)n + td->seq_skip;
			else if (next >= (int64_t)n)
				next = 0;
			if (next < 0)
				next = 0;
			td->seq_pos[u->ddir] = (uint64_t)next;
		}
	}
	td->last_block = block;
	return true;
}

/*
 * percentage_random= (fio's get_next_block() and should_do_random()): a
 * random job's I/O in a direction goes where that direction's last one
 * ended with the chance 100 - percentage_random, a draw from 1 to 100
 * over it; past the region's end it is random again.  *@seq: it was
 * sequential (an offset in bytes, which blockalign= does not scale).
 */
static bool job_prep_pct(struct job_thread *td, struct io_u *u, bool *seq)
{
	const struct bench_job_opts *o = td->o;
	uint64_t end = td->ba ? td->ba_end - td->offset : td->nr_blocks * o->bs;
	enum bench_ddir ddir;
	uint64_t pos, b;

	if (td->bytes_limit && td->bytes_issued >= td->bytes_limit)
		return false;
	ddir = job_pick_ddir(td);
	pos = td->next_pos[ddir];
	if (o->pct_seq[ddir] &&
	    rng_below(&td->seq_rng, 100) >= 100u - o->pct_seq[ddir] &&
	    pos + o->bs <= end) {
		job_fill(td, u, ddir, 0);
		u->bio.bi_offset = td->offset + pos;
		*seq = true;
		/* as rw=<pattern>:N: taken, the random picks go elsewhere */
		b = pos / o->bs;
		if (td->randmap && !td->ba && pos % o->bs == 0 &&
		    !(td->randmap[b >> 6] & (1ull << (b & 63)))) {
			if (unlikely(td->randmap_used == td->nr_blocks))
				randmap_clear(td);
			randmap_set(td, b >> 6, b & 63);
		}
		return true;
	}
	job_fill(td, u, ddir, td->dist ? job_dist_block(td) % td->nr_blocks :
					 job_rand_block(td));
	return true;
}

/*
 * bssplit=, bsrange=: the I/O job_prep_io() made is one block of the
 * smallest size; it becomes one of the sizes, drawn as fio draws them
 * (io_u.c get_next_buflen()), cut at the region's end, and a sequential
 * job moves on past it.
 */
static void job_var_bs(struct job_thread *td, struct io_u *u)
{
	const struct bench_job_opts *o = td->o;
	uint64_t min = o->bs, len, gran = td->bs_gran;
	uint64_t end = td->ba ? td->ba_end : td->offset + td->nr_blocks * min;
	double r = (double)(rng_next(&td->rng) >> 11) * 0x1p-53;

	/*
	 * bs_unaligned: a sequential job goes on from where its last I/O
	 * ended, not from a multiple of the smallest size (fio's last_pos);
	 * past the region's end it starts again at its start
	 */
	if (td->track_pos && !td->random) {
		if (td->next_pos[u->ddir] >= end - td->offset)
			td->next_pos[u->ddir] = 0;
		u->bio.bi_offset = td->offset + td->next_pos[u->ddir];
	}

	const uint32_t *sbs = o->bssplit_bs, *spct = o->bssplit_pct;
	unsigned int nr = o->bssplit_nr;
	uint64_t lo = min, hi = o->bs_max;

	if (o->bs_ddir) {
		/* fio's get_next_buflen(): the I/O's direction's sizes */
		nr = o->bsd_nr[u->ddir];
		sbs = o->bsd_bs[u->ddir];
		spct = o->bsd_pct[u->ddir];
		lo = o->bsd_min[u->ddir];
		hi = o->bsd_max[u->ddir];
		gran = td->bsd_gran[u->ddir];
		/* fio's blockalign defaults to the direction's smallest size:
		 * without the random map, a random I/O's offset is so aligned */
		if (td->random && !td->randmap && !td->ba && !o->bs_unaligned)
			u->bio.bi_offset = td->offset + (u->bio.bi_offset -
				td->offset) / gran * gran;
	}
	if (nr) {
		unsigned int i, acc = 0;

		len = sbs[nr - 1];
		for (i = 0; i < nr; i++) {
			acc += spct[i];
			if (r * 100.0 < acc) {
				len = sbs[i];
				break;
			}
		}
		/* fio rounds a size down to the smallest's multiple unless
		 * bs_unaligned (get_next_buflen()) */
		len -= len % gran;
	} else {
		len = lo + (uint64_t)((double)hi * r);
		len -= len % gran;
		if (len > hi)
			len = hi;
	}
	if (u->bio.bi_offset + len > end)
		len = end - u->bio.bi_offset;
	/* the job's last I/O ends at its byte count, as fio's does */
	if (td->bytes_limit && td->bytes_issued - min + len > td->bytes_limit)
		len = td->bytes_limit - (td->bytes_issued - min);
	/*
	 * As fio's random map: the I/O covers only free blocks after its
	 * first, and marks them used (fio's mark_random_map() cuts it so).
	 */
	if (td->random && td->randmap && len > min) {
		uint64_t b = (u->bio.bi_offset - td->offset) / min, k;

		for (k = 1; k < (len + min - 1) / min; k++) {
			uint64_t x = b + k;

			if (td->randmap[x >> 6] & (1ull << (x & 63)))
				break;
			randmap_set(td, x >> 6, x & 63);
		}
		if (k * min < len)
			len = k * min;
	}
	td->bytes_issued += len - min;
	/* number_ios: this I/O is the last one */
	if (td->ios_left && !--td->ios_left)
		td->bytes_limit = td->bytes_issued;
	if (td->track_pos && !td->random) {
		td->next_pos[u->ddir] = u->bio.bi_offset + len - td->offset;
		if (td->next_pos[u->ddir] >= end - td->offset)
			td->next_pos[u->ddir] = 0;
	}
	/*
	 * rate= and rate_iops= pace blocks of the smallest size: fio takes
	 * rate_iops of a job with several sizes as that many of the
	 * smallest per second, a bandwidth (HOWTO, rate_iops)
	 */
	if (td->rate_ns[u->ddir] && !td->poisson_mean_ns[u->ddir])	/* poisson: a gap per I/O, as fio */
		td->rate_next[u->ddir] += td->rate_ns[u->ddir] * (len / min - 1);
	u->bio.bi_size = (uint32_t)len;
	u->iov.iov_len = len;
	if (!td->random && !td->track_pos) {
		uint64_t next = td->seq_pos[u->ddir] + len / min - 1;

		td->seq_pos[u->ddir] = next < td->nr_blocks ? next : 0;
	}
}

/* verify_backlog= writes since the last round: the next round is due. */
static void job_backlog_due(struct job_thread *td)
{
	uint64_t batch = td->o->verify_backlog_batch;

	if (td->backlog_since < td->o->verify_backlog || !td->backlog_nr)
		return;
	td->backlog_since = 0;
	td->backlog_due = batch && batch < td->backlog_nr ? batch :
							     td->backlog_nr;
	td->backlog_skip = td->backlog_nr - td->backlog_due;
}

/*
 * verify_backlog=: read back the oldest block written since the last
 * read-back.  Its bit in the written map is cleared as the read goes, so
 * that the verify phase does not read it again, unless it is written
 * again meanwhile (its completion sets the bit anew).  The read is not
 * the workload's: bytes_issued does not count it.
 */
static bool job_prep_backlog(struct job_thread *td, struct io_u *u)
{
	uint64_t cap = td->backlog_cap, b = td->backlog[td->backlog_head];

	td->backlog_head = (td->backlog_head + 1) % cap;
	td->backlog_nr--;
	if (!--td->backlog_due) {
		/* verify_backlog_batch < verify_backlog: the rest wait */
		td->backlog_head = (td->backlog_head + td->backlog_skip) % cap;
		td->backlog_nr -= td->backlog_skip;
		td->backlog_skip = 0;
		/* verify_backlog more written meanwhile: the next round */
		job_backlog_due(td);
	}
	if (td->written[b >> 6] & (1ull << (b & 63))) {
		td->written[b >> 6] &= ~(1ull << (b & 63));
		td->written_blocks--;
	}
	u->ddir = DDIR_READ;
	u->vread = 1;
	u->bio.bi_offset = td->offset + b * td->o->bs;
	u->bio.bi_size = td->o->bs;
	u->bio.bi_flags = 0;
	u->bio.bi_op = BLK_OP_READ;
	u->bio.bi_vcnt = 1;
	return true;
}

/*
 * trim_backlog=: trim the oldest block queued by trim_percentage.  With
 * trim_verify_zero=1 it stays in the written map and is marked trimmed:
 * the verify phase reads it back and checks that it is zeros (fio's
 * IP_F_TRIMMED); with 0 it leaves the written map, and is not read back
 * (fio's get_next_trim() drops it from its verify list).  The trim is not
 * the workload's: bytes_issued does not count it.
 */
static bool job_prep_trim(struct job_thread *td, struct io_u *u)
{
	uint64_t b = td->trimq[td->trimq_head], bit = 1ull << (b & 63);

	td->trimq_head = (td->trimq_head + 1) % td->trimq_cap;
	td->trimq_nr--;
	td->trim_due--;
	if (td->trimmed) {
		td->trimmed[b >> 6] |= bit;
	} else if (td->written[b >> 6] & bit) {
		td->written[b >> 6] &= ~bit;
		td->written_blocks--;
	}
	td->res->verify_trims++;
	u->ddir = DDIR_TRIM;
	u->bio.bi_offset = td->offset + b * td->o->bs;
	u->bio.bi_size = td->o->bs;
	u->bio.bi_flags = 0;
	u->bio.bi_op = BLK_OP_DISCARD;
	u->bio.bi_vcnt = 0;
	return true;
}

/* The verify phase over several files: each file's blocks in turn. */
static bool job_prep_verify_files(struct job_thread *td, struct io_u *u)
{
	while (!job_prep_verify(td, u)) {
		if (td->bytes_issued >= td->bytes_limit ||
		    td->cur_file + 1 >= td->nr_files)
			return false;
		job_file_save(td);
		job_file_load(td, td->cur_file + 1);
	}
	u->file = (uint16_t)td->cur_file;
	return true;
}

/*
 * zonemode=strided, as fio's setup_strided_zone_mode(): once zonesize
 * bytes have gone in a zone the job moves on by zonerange + zoneskip,
 * back to the first zone once past the device's end; every zonerange
 * bytes the zone starts afresh (sequential: from its start; random: a
 * new random map).  An I/O that would end past the device ends the job,
 * as fio's fill_io_u() does.
 */
static bool job_prep_strided(struct job_thread *td, struct io_u *u)
{
	const struct bench_job_opts *o = td->o;

	if (td->zone_bytes >= o->zonesize) {
		td->zone_bytes = 0;
		td->offset += o->zonerange + o->zoneskip;
		if (td->offset >= td->zone_dev_end)
			td->offset = td->zone_first;
	}
	if (td->zone_bytes % o->zonerange == 0) {
		memset(td->seq_pos, 0, sizeof(td->seq_pos));
		if (td->randmap && td->randmap_used)
			randmap_clear(td);
	}
	if (!job_prep_io(td, u))
		return false;
	if (u->bio.bi_offset + u->bio.bi_size > td->zone_dev_end) {
		td->bytes_issued -= o->bs;
		td->stop = true;	/* what is in flight is drained */
		return false;
	}
	td->zone_bytes += o->bs;
	return true;
}

/* ---------------------------------------------------------- write buffers */

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* @len bytes of random data from @seed: splitmix64's stream from it */
static void buf_random(char *p, size_t len, uint64_t seed)
{
	size_t i, n = len / 8;
	uint64_t v;

	for (i = 0; i < n; i++) {
		v = mix64(seed += 0x9e3779b97f4a7c15ull);
		memcpy(p + i * 8, &v, 8);
	}
	if (len % 8) {
		v = mix64(seed + 0x9e3779b97f4a7c15ull);
		memcpy(p + n * 8, &v, len % 8);
	}
}

/* @pat over @len bytes from its first byte on (fio's cpy_pattern()) */
static void buf_pattern(char *p, size_t len,
			const struct bench_verify_pattern *pat)
{
	size_t done = pat->len < len ? pat->len : len;

	memcpy(p, pat->bytes, done);
	while (done < len) {
		size_t n = done < len - done ? done : len - done;

		memcpy(p + done, p, n);
		done += n;
	}
}

/* The unique buffers' seeds of thread @idx of a job with @randseed. */
static void buf_rng_init(struct rng *r, uint64_t randseed, unsigned int idx)
{
	rng_seed(r, randseed ^ 0x6275666665727321ull ^ ((uint64_t)idx << 32));
}

/*
 * The seed of the next buffer (fio's get_buf_state()): dedupe_percentage
 * of them repeat one, the others are the next unique seed.  repeat: the
 * next unique one (fio replays the state the next unique buffer starts
 * from); working_set: one of the set's at random; 100: every buffer is
 * the first.
 */
static uint64_t job_buf_seed(struct job_thread *td)
{
	uint32_t d = td->o->dedupe_pct;
	uint64_t s;

	if (d == 100)
		return td->buf_next;
	if (d && rng_below(&td->dd_rng, 100) < d)
		return td->dd_ws ? td->dd_ws[rng_below(&td->dd_rng, td->dd_nr_ws)] :
				   td->buf_next;
	s = td->buf_next;
	td->buf_next = rng_next(&td->buf_rng);
	return s;
}

/*
 * Fill a write buffer of @len bytes (fio's fill_io_buffer()): with
 * compression or dedupe, chunks of the smallest bs (or
 * buffer_compress_chunk, smaller) each 100 - pct % random, then zeros or
 * the pattern; else the pattern, zeros, or random data.
 */
static void job_buf_fill(struct job_thread *td, char *p, size_t len)
{
	const struct bench_job_opts *o = td->o;
	uint64_t seed, k;

	switch (td->buf_kind) {
	case BUFK_PCT:
		for (seed = job_buf_seed(td), k = 0; len; k++) {
			size_t w = o->bs < len ? o->bs : len, r;

			if (td->buf_chunk && td->buf_chunk < w)
				w = td->buf_chunk;
			r = w * (100 - td->buf_pct) / 100;
			buf_random(p, r, mix64(seed + k * 0xd1b54a32d192ed03ull));
			if (o->buf_pat.len)
				buf_pattern(p + r, w - r, &o->buf_pat);
			else
				memset(p + r, 0, w - r);
			p += w;
			len -= w;
		}
		break;
	case BUFK_PATTERN:
		buf_pattern(p, len, &o->buf_pat);
		break;
	case BUFK_ZERO:
		memset(p, 0, len);
		break;
	default:
		buf_random(p, len, job_buf_seed(td));
		break;
	}
}

/*
 * scramble_buffers (fio's small_content_scramble()): in each 512 bytes of
 * the write, its device offset 8 bytes at one of the 8 cache lines, and
 * at bytes 48..63 the thread's write count and index where fio puts the
 * write's start time, so that no two writes' blocks are the same.
 */
static void job_buf_scramble(struct job_thread *td, struct io_u *u)
{
	char *p = u->iov.iov_base;
	uint64_t off = u->bio.bi_offset, seq = ++td->scramble_seq;
	uint64_t idx = td->thread_idx;
	uint32_t i, n = u->bio.bi_size >> 9;
	size_t at = (size_t)((seq ^ off) & 7) << 6;

	for (i = 0; i < n; i++, p += 512, off += 512) {
		memcpy(p + at, &off, 8);
		memcpy(p + 48, &seq, 8);
		memcpy(p + 56, &idx, 8);
	}
}

/*
 * zonemode=zbd, as fio's fill_io_u(): the direction (a mixed job writes
 * while no zone holds data), the offset as the job draws it (random, or
 * sequential from where the last I/O of the direction ended), then
 * zbd.c moves it: a write to its zone's write pointer, a read into data
 * written.  No zone for it ends the job, as in fio; a sequential job
 * past its region's end ends too, unless time_based or loops= start it
 * again.
 */
static bool job_prep_zbd(struct job_thread *td, struct io_u *u)
{
	const struct bench_job_opts *o = td->o;
	uint32_t len = o->bs;
	uint64_t off;
	int ddir, ret;

	if (td->bytes_limit && td->bytes_issued >= td->bytes_limit)
		return false;
	ddir = bench_zbd_ddir(&td->zbdj, (int)job_pick_ddir(td));
	if (td->random) {
		off = td->offset + job_rand_block(td) * o->bs;
	} else {
		td->zbd_pos[ddir] = bench_zbd_seq_pos(&td->zbdj, ddir,
						      td->offset + td->zbd_pos[ddir]) -
				    td->offset;
		if (td->zbd_pos[ddir] + o->bs > td->region_bytes) {
			/*
			 * Past the region (fio: the file is done): the loop
			 * is over, what it had left forfeited, and the next
			 * starts from the region's start; after the last, an
			 * io_size= beyond the region starts it again, else
			 * the job ends.  A loop that ends on its byte count
			 * goes on where it was, as fio's.
			 */
			if (!o->time_based) {
				uint64_t per = td->bytes_limit / o->loops;
				uint64_t b = (td->bytes_issued + per - 1) / per * per;

				if (b < td->bytes_limit)
					td->bytes_issued = b;
				else if (!o->io_size && !o->io_size_pct)
					goto eof;
				memset(td->zbd_pos, 0, sizeof(td->zbd_pos));
			}
			td->zbd_pos[ddir] = 0;
		}
		off = td->offset + td->zbd_pos[ddir];
	}
	ret = bench_zbd_adjust(&td->zbdj, ddir, &off, &len);
	if (ret < 0) {
		job_error(td, ret, "zonemode=zbd: %s", td->zbdj.err);
		return false;
	}
	if (ret)
		goto eof;
	if (!td->random)
		td->zbd_pos[ddir] = off + len - td->offset;
	u->ddir = (uint8_t)ddir;
	u->bio.bi_offset = off;
	u->bio.bi_size = len;
	u->iov.iov_len = len;
	u->bio.bi_flags = 0;
	u->bio.bi_op = ddir == DDIR_READ ? BLK_OP_READ : BLK_OP_WRITE;
	u->bio.bi_vcnt = 1;
	td->bytes_issued += len;
	return true;
eof:
	td->stop = true;	/* what is in flight is drained */
	td->zbd_eof = true;	/* ... and verify= still reads back */
	return false;
}

/* write_iolog=: the name of the file of @i (the device's when no file) */
static const char *job_iolog_name(const struct job_thread *td, unsigned int i)
{
	if (td->nr_files > 1)
		return td->files[i].path;
	return td->file_path ? td->file_path : td->devname;
}

/*
 * write_iolog=: one line of fio's iolog version 3 (log_io_u(), log_file()):
 * microseconds since the job's start, the file, the action, and for an
 * I/O its offset and length.
 */
static void __attribute__((noinline, cold))
job_iolog(struct job_thread *td, unsigned int file, const char *act,
	  bool io, uint64_t off, uint64_t len)
{
	unsigned long long us = (bench_now_ns() - td->iolog_t0) / 1000;

	if (io)
		fprintf(td->iolog, "%llu %s %s %llu %llu\n", us,
			job_iolog_name(td, file), act, (unsigned long long)off,
			(unsigned long long)len);
	else
		fprintf(td->iolog, "%llu %s %s\n", us, job_iolog_name(td, file), act);
}

/*
 * fio's get_rw_ddir(): before the next I/O, is a sync due?  Once
 * io_issues[WRITE] is a multiple of fsync= (then fdatasync=, then
 * sync_file_range='s N) and the last I/O was not a sync.  Not after the
 * job's last I/O: fio's loop ends on the bytes issued before asking.
 * True: job_loop() syncs (td->sync_due, through td->pace_blocked).
 */
static bool job_sync_check(struct job_thread *td)
{
	const struct bench_job_opts *o = td->o;
	uint64_t w = td->wr_issued;

	if (td->last_was_sync || !w ||
	    (td->bytes_limit && td->bytes_issued >= td->bytes_limit))
		return false;
	if (o->fsync_blocks && !(w % o->fsync_blocks))
		td->sync_kind = SYNC_FSYNC;
	else if (o->fdatasync_blocks && !(w % o->fdatasync_blocks))
		td->sync_kind = SYNC_DATASYNC;
	else if (o->sfr_blocks && !(w % o->sfr_blocks))
		td->sync_kind = SYNC_SFR;
	else
		return false;
	td->sync_due = true;
	td->pace_blocked = true;
	return true;
}

/*
 * read_iolog=: the log's next I/O.  A sync is job_loop()'s (td->sync_due),
 * as is the wait for an entry's time (td->rp_wait, unless
 * replay_no_stall); false then, and when the log is done.
 */
static bool job_prep_replay(struct job_thread *td, struct io_u *u)
{
	const struct bench_iolog_ent *e;
	uint64_t due;

	for (;;) {
		if (td->rp_pos == td->rp_n)
			return false;
		e = &td->rp[td->rp_pos];
		if (!td->o->replay_no_stall) {
			if (!td->rp_t0)
				td->rp_t0 = bench_now_ns();
			due = td->rp_t0 + e->t_us * 1000;
			if (bench_now_ns() < due) {
				td->rp_wait = due;
				td->pace_blocked = true;
				return false;
			}
		}
		td->rp_pos++;
		if (e->act == IOLOG_WAIT)
			continue;
		if (e->act == IOLOG_SYNC || e->act == IOLOG_DATASYNC) {
			td->sync_kind = e->act == IOLOG_SYNC ? SYNC_FSYNC : SYNC_DATASYNC;
			td->sync_due = true;
			td->pace_blocked = true;
			return false;
		}
		break;
	}
	u->ddir = e->act == IOLOG_READ ? DDIR_READ :
		  e->act == IOLOG_WRITE ? DDIR_WRITE : DDIR_TRIM;
	u->bio.bi_op = e->act == IOLOG_READ ? BLK_OP_READ :
		       e->act == IOLOG_WRITE ? BLK_OP_WRITE : BLK_OP_DISCARD;
	u->bio.bi_offset = e->off;
	u->bio.bi_size = e->len;
	u->iov.iov_len = e->len;
	u->bio.bi_vcnt = 1;
	td->bytes_issued += e->len;
	if (u->ddir == DDIR_WRITE && td->buf_refill)
		job_buf_fill(td, u->iov.iov_base, e->len);
	if (unlikely(td->iolog))
		job_iolog(td, 0, u->ddir == DDIR_READ ? "read" :
			  u->ddir == DDIR_WRITE ? "write" : "trim", true,
			  e->off, e->len);
	return true;
}

/*
 * job_prep() for a job with verify=, rw=<pattern>:N, bssplit=, bsrange=
 * or several files: the verify phase, the next file, the offset
 * modifiers, the sizes, headers on writes.
 */
static bool __attribute__((noinline))
job_prep_hooked(struct job_thread *td, struct io_u *u)
{
	bool seq = false;

	u->vread = 0;
	if (td->verify_phase || td->backlog_due) {
		bool ok = td->verify_phase ?
			  (td->nr_files > 1 ? job_prep_verify_files(td, u) :
					      job_prep_verify(td, u)) :
			  job_prep_backlog(td, u);

		if (ok && unlikely(td->iolog))	/* fio logs verify reads too */
			job_iolog(td, td->nr_files > 1 ? u->file : 0, "read", true,
				  u->bio.bi_offset, u->bio.bi_size);
		return ok;
	}
	if (td->trim_due)
		return job_prep_trim(td, u);
	if (unlikely(td->rp))
		return job_prep_replay(td, u);
	if (unlikely(td->sync_on) && job_sync_check(td))
		return false;
	if (td->nr_files > 1) {
		/* the first I/O goes to the first file, each next to the next */
		if (td->file_switch && job_file_due(td))
			job_file_next(td);
		td->file_switch = true;
	}
	if (unlikely(td->strided)) {
		if (!job_prep_strided(td, u))
			return false;
		if (u->ddir == DDIR_WRITE && td->buf_refill)
			job_buf_fill(td, u->iov.iov_base, u->bio.bi_size);
		else if (u->ddir == DDIR_WRITE && td->buf_scramble)
			job_buf_scramble(td, u);
		return true;
	}
	if (td->zbdj.zbd ? !job_prep_zbd(td, u) :
	    td->pct_seq_on ? !job_prep_pct(td, u, &seq) :
	    td->o->rw_mod ? !job_prep_mod(td, u) :
	    td->random && td->dist ? !job_prep_dist(td, u) : !job_prep_io(td, u))
		return false;
	if (td->ba && !seq)	/* fio's io_u->offset = b * ba */
		u->bio.bi_offset = td->offset +
			(u->bio.bi_offset - td->offset) / td->o->bs * td->ba;
	/* trims too: fio draws a trim's size from the trim direction's bs,
	 * bssplit or bsrange (bs=4k,4k,16k: 16 KiB trims) */
	if (td->var_bs)
		job_var_bs(td, u);
	if (td->pct_seq_on)
		td->next_pos[u->ddir] = u->bio.bi_offset + u->bio.bi_size - td->offset;
	/* every write gets a header and fresh seeded data */
	if (td->fill_writes && u->ddir == DDIR_WRITE)
		bench_verify_fill(&td->vspec, u->iov.iov_base, td->o->bs,
				  u->bio.bi_offset, td->res->jobnum,
				  rng_next(&td->vrng), td->numberio++);
	else if (td->buf_refill && u->ddir == DDIR_WRITE)
		job_buf_fill(td, u->iov.iov_base, u->bio.bi_size);
	else if (td->buf_scramble && u->ddir == DDIR_WRITE)
		job_buf_scramble(td, u);
	if (td->nr_files > 1)
		job_file_issued(td, u);
	if (unlikely(td->iolog))
		job_iolog(td, td->nr_files > 1 ? u->file : 0,
			  u->ddir == DDIR_READ ? "read" :
			  u->ddir == DDIR_WRITE ? "write" : "trim", true,
			  u->bio.bi_offset, u->bio.bi_size);
	if (unlikely(td->sync_on)) {
		/* fio's set_rw_ddir(): a barrier when io_issues[WRITE] is a multiple */
		if (td->o->barrier_blocks)
			u->bio.bi_flags = u->ddir == DDIR_WRITE && td->wr_issued &&
				!(td->wr_issued % td->o->barrier_blocks) ?
				BLK_BIO_FUA : 0;
		if (u->ddir == DDIR_WRITE)
			td->wr_issued++;
		td->last_was_sync = false;
	}
	return true;
}

/*
 * cmdprio_percentage=, cmdprio_bssplit=: the priority of a read or write,
 * fio's fio_cmdprio_set_ioprio(): a draw in 0..99 below the share (of
 * the direction, or of the I/O's block size) takes the cmdprio priority
 * (of the entry the draw falls in), else the job's own.
 */
static void __attribute__((noinline))
job_cmdprio(struct job_thread *td, struct io_u *u)
{
	const struct bench_job_opts *o = td->o;
	unsigned int d = u->ddir, i, n, tot = 0, r;

	u->bio.bi_ioprio = td->ioprio;
	if (d > DDIR_WRITE)
		return;
	if (td->cmdprio == 1) {
		tot = (unsigned int)o->cmdprio_pct[d];
		if (tot && (unsigned int)rng_below(&td->prio_rng, 100) < tot)
			u->bio.bi_ioprio = td->cmdprio_val[d];
		return;
	}
	n = o->cmdprio_bs_nr[d];
	for (i = 0; i < n; i++)
		if (o->cmdprio_bs[d][i] == u->bio.bi_size)
			tot += o->cmdprio_bs_pct[d][i];
	if (!tot)
		return;
	r = (unsigned int)rng_below(&td->prio_rng, 100);
	if (r >= tot)
		return;
	for (i = 0, tot = 0; i < n; i++) {
		if (o->cmdprio_bs[d][i] != u->bio.bi_size)
			continue;
		tot += o->cmdprio_bs_pct[d][i];
		if (r < tot) {
			int32_t p = o->cmdprio_bs_prio[d][i];

			u->bio.bi_ioprio = p >= 0 ? (uint16_t)p :
					   td->cmdprio_val[d];
			return;
		}
	}
}

/*
 * prio=, prioclass=, cmdprio_*=: the thread's priorities (fio's
 * backend.c td->ioprio and engines/cmdprio.c fio_cmdprio_init()), and
 * the per-priority stats of cmdprio, owned by @r.
 * Return: 0, or -ENOMEM.
 */
static int job_prio_setup(struct job_thread *td, struct bench_job_result *r,
			  char *err, size_t errlen)
{
	const struct bench_job_opts *o = td->o;
	bool dir_on[2] = { bench_rw_reads(o->rw), bench_rw_writes(o->rw) };
	unsigned int d, i, k;

	td->ioprio = o->ioprio_given ?
		IOPRIO_PRIO_VALUE(o->ioprio_class ? o->ioprio_class :
				  IOPRIO_CLASS_BE, o->ioprio) : 0;
	for (i = 0; i < o->iodepth; i++)
		td->ios[i].bio.bi_ioprio = td->ioprio;
	td->cmdprio = o->cmdprio_bssplit_on ? 2 :
		      o->cmdprio_pct[0] || o->cmdprio_pct[1] ? 1 : 0;
	if (!td->cmdprio)
		return 0;
	r->prio = calloc(1, sizeof(*r->prio));
	if (!r->prio) {
		snprintf(err, errlen, "%s: out of memory for the priority stats",
			 o->name);
		return -ENOMEM;
	}
	for (d = 0; d < 2; d++) {
		struct bench_prio_stats *ps = r->prio;
		/* fio: a cmdprio without a class is RT */
		unsigned int cls = o->cmdprio_class[d] ? (unsigned int)o->cmdprio_class[d] :
			IOPRIO_CLASS_RT;

		td->cmdprio_val[d] = IOPRIO_PRIO_VALUE(cls, o->cmdprio_level[d]);
		/* fio lists nothing for a direction the job does not do */
		if (!dir_on[d] || (td->cmdprio == 1 ? !o->cmdprio_pct[d] :
				   !o->cmdprio_bs_nr[d]))
			continue;
		ps->val[d][ps->nr[d]++] = td->ioprio;
		for (i = 0; i < (td->cmdprio == 1 ? 1 : o->cmdprio_bs_nr[d]); i++) {
			uint16_t v = td->cmdprio == 1 || o->cmdprio_bs_prio[d][i] < 0 ?
				td->cmdprio_val[d] : (uint16_t)o->cmdprio_bs_prio[d][i];

			for (k = 0; k < ps->nr[d] && ps->val[d][k] != v; k++)
				;
			if (k == ps->nr[d])
				ps->val[d][ps->nr[d]++] = v;
		}
		for (i = 0; i < ps->nr[d]; i++)
			blk_hist_init(&ps->clat[d][i]);
	}
	td->prio = r->prio;
	rng_seed(&td->prio_rng, o->randseed ^ 0x7072696f72697479ull ^
		 ((uint64_t)r->jobnum << 32));
	td->prep_hook = true;
	td->reap_hook = true;
	return 0;
}

/* Fill in an I/O; false when the job has issued all it should. */
static inline bool job_prep(struct job_thread *td, struct io_u *u)
{
	if (unlikely(td->prep_hook)) {
		if (!job_prep_hooked(td, u))
			return false;
		if (td->cmdprio)
			job_cmdprio(td, u);
		return true;
	}
	return job_prep_io(td, u);
}

/*
 * Write @len bytes at @p to
 * <verify_dump_dir>/blkstack-verify.<dev>.<offset>.<what>.
 */
static int job_verify_dump(struct job_thread *td, const struct io_u *u,
			   const char *what, const void *data, size_t len,
			   char *path, size_t pathlen)
{
	const char *p = data;
	size_t left = len;
	int fd, err = 0;

	if ((size_t)snprintf(path, pathlen, "%s/blkstack-verify.%s.%" PRIu64 ".%s",
			     td->o->verify_dump_dir, td->devname,
			     u->bio.bi_offset, what) >= pathlen)
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (left) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		left -= (size_t)n;
	}
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/*
 * verify_dump=1: the block as it should have been, from the bad
 * interval's header as read (its seed, job and numberio), as fio
 * regenerates it; "; expected data in PATH" or why not, into @where.
 */
static void job_verify_dump_expected(struct job_thread *td,
				     const struct io_u *u,
				     const struct bench_verify_result *vr,
				     char *where, size_t len)
{
	size_t used = strlen(where);
	char path[1200];
	void *exp;
	int err;

	exp = malloc(u->bio.bi_size);
	if (!exp) {
		snprintf(where + used, len - used,
			 "; expected data not written: out of memory");
		return;
	}
	bench_verify_fill(&td->vspec, exp, u->bio.bi_size, u->bio.bi_offset,
			  vr->job, vr->seed, vr->numberio);
	err = job_verify_dump(td, u, "expected", exp, u->bio.bi_size, path,
			      sizeof(path));
	free(exp);
	if (err)
		snprintf(where + used, len - used, "; could not write %s: %s",
			 path, strerror(-err));
	else
		snprintf(where + used, len - used, "; expected data in %s",
			 path);
}

/*
 * A block that failed its check: count it, and for the first ones print a
 * line to stderr and write the block out.  The phase goes on, so that the
 * whole region is checked, unless verify_fatal=1 ends the job.
 */
static void __attribute__((noinline, cold))
job_verify_bad(struct job_thread *td, const struct io_u *u,
	       const struct bench_verify_result *vr)
{
	const struct bench_job_opts *o = td->o;
	/* what: fio's sha512, 128 bytes each way in hex, is the longest */
	char what[700], hdr[96] = "", path[1200], where[2800];
	int err;

	if (!td->res->verify_mismatches++ ||
	    u->bio.bi_offset < td->verify_first_bad)
		td->verify_first_bad = u->bio.bi_offset;
	if (o->verify_fatal)
		job_error(td, -EILSEQ,
			  "verify: bad block at offset %" PRIu64 "; verify_fatal=1 ends the job",
			  u->bio.bi_offset);
	if (td->verify_msgs >= VERIFY_MAX_MSGS)
		return;
	td->verify_msgs++;
	bench_verify_describe(vr, what, sizeof(what));
	if (o->verify_dump == 1) {
		snprintf(where, sizeof(where), "not written out (verify_dump=0)");
	} else if (td->verify_dumps >= VERIFY_MAX_DUMPS) {
		snprintf(where, sizeof(where),
			 "not written out (at most %d per thread)",
			 VERIFY_MAX_DUMPS);
	} else {
		td->verify_dumps++;
		err = job_verify_dump(td, u, "received", u->iov.iov_base,
				      u->bio.bi_size, path, sizeof(path));
		if (err)
			snprintf(where, sizeof(where), "could not write %s: %s",
				 path, strerror(-err));
		else
			snprintf(where, sizeof(where), "received data in %s",
				 path);
		if (o->verify_dump == 2)
			job_verify_dump_expected(td, u, vr, where, sizeof(where));
	}
	if (vr->has_hdr && !vr->zero_hdr)
		snprintf(hdr, sizeof(hdr),
			 " (header numberio %" PRIu64 ", seed 0x%016" PRIx64 ")",
			 vr->numberio, vr->seed);
	/* one fprintf: stdio keeps the line whole among threads */
	fprintf(stderr,
		"verify: bad block at offset %" PRIu64 " (job %u, len %u): %s%s; %s\n",
		u->bio.bi_offset, td->res->jobnum, u->bio.bi_size, what, hdr,
		where);
}

/*
 * verify_backlog=: a write completed.  Every verify_backlog of them, the
 * blocks written and not read back yet are due, oldest first; with a
 * verify_backlog_batch, that many of them, and the others wait for the
 * verify phase.  The ring holds verify_backlog blocks and the writes in
 * flight: a block that finds it full waits for the verify phase too.
 */
static void job_backlog_add(struct job_thread *td, uint64_t b)
{
	if (td->backlog_nr == td->backlog_cap)
		return;
	td->backlog[(td->backlog_head + td->backlog_nr) % td->backlog_cap] = b;
	td->backlog_nr++;
	td->backlog_since++;
	if (!td->backlog_due)
		job_backlog_due(td);
}

/*
 * trim_percentage=: a write completed; queue its block to be trimmed with
 * that chance (fio's io_u_should_trim()).  Every trim_backlog writes, the
 * queued blocks are due, oldest first (trim_backlog_batch: that many; the
 * rest wait for the next round).  A block written again is no longer
 * trimmed; a full ring (trim_backlog plus the writes in flight) leaves the
 * block untrimmed, to the verify phase.
 */
static void job_trim_add(struct job_thread *td, uint64_t b)
{
	const struct bench_job_opts *o = td->o;

	if (td->trimmed)
		td->trimmed[b >> 6] &= ~(1ull << (b & 63));
	if (td->trimq_nr < td->trimq_cap &&
	    rng_next(&td->trng) % 100 < o->trim_percentage) {
		td->trimq[(td->trimq_head + td->trimq_nr) % td->trimq_cap] = b;
		td->trimq_nr++;
	}
	if (++td->trim_since < o->trim_backlog || td->trim_due)
		return;
	td->trim_since = 0;
	td->trim_due = o->trim_backlog_batch &&
		       o->trim_backlog_batch < td->trimq_nr ?
		       o->trim_backlog_batch : td->trimq_nr;
}

/*
 * trim_verify_zero=1: a block read back that was trimmed must be zeros
 * (fio's verify_trimmed_io_u(), and its message).  Return: true when @u
 * was such a block (checked here), false for a block to check as written.
 */
static bool job_trimmed_check(struct job_thread *td, const struct io_u *u)
{
	uint64_t b = (u->bio.bi_offset - td->offset) / td->o->bs;
	const uint8_t *p = u->iov.iov_base;
	uint32_t i;

	if (!(td->trimmed[b >> 6] & (1ull << (b & 63))))
		return false;
	td->res->verify_trim_zero++;
	for (i = 0; i < u->bio.bi_size && !p[i]; i++)
		;
	if (i == u->bio.bi_size)
		return true;
	if (!td->res->verify_mismatches++ ||
	    u->bio.bi_offset < td->verify_first_bad)
		td->verify_first_bad = u->bio.bi_offset;
	if (td->o->verify_fatal)
		job_error(td, -EILSEQ,
			  "trim: verify failed at offset %" PRIu64 "; verify_fatal=1 ends the job",
			  (uint64_t)u->bio.bi_offset);
	if (td->verify_msgs < VERIFY_MAX_MSGS) {
		td->verify_msgs++;
		fprintf(stderr,
			"trim: verify failed at %s offset %" PRIu64 ", length %u, block offset %u: a trimmed block is not zeros (trim_verify_zero=1)\n",
			td->devname, (uint64_t)u->bio.bi_offset, u->bio.bi_size, i);
	}
	return true;
}

/*
 * verify=, before job_reap() accounts a completion list: note the writes
 * done, check the reads.  It works outside the measured window too.  The
 * list comes newest first; it is turned round so that blocks are checked,
 * and reported, in submission order.
 */
static struct io_u * __attribute__((noinline))
job_verify_reaped(struct job_thread *td, struct io_u *u)
{
	struct bench_verify_result vr;
	struct io_u *rev = NULL, *next;

	for (; u; u = next) {
		next = u->next;
		u->next = rev;
		rev = u;
	}
	for (u = rev; u; u = u->next) {
		if (u->bio.bi_status)
			continue;
		if (u->ddir == DDIR_WRITE && td->written) {
			uint64_t b = (u->bio.bi_offset - td->offset) / td->o->bs;
			uint64_t bit = 1ull << (b & 63);
			uint64_t *map = td->written, *nr = &td->written_blocks;

			/* another file than the current one: its own map */
			if (td->nr_files > 1 && u->file != td->cur_file) {
				map = td->files[u->file].written;
				nr = &td->files[u->file].written_blocks;
			}
			if (!(map[b >> 6] & bit)) {
				map[b >> 6] |= bit;
				(*nr)++;
			}
			if (td->backlog && !td->verify_phase)
				job_backlog_add(td, b);
			if (td->trimq && !td->verify_phase)
				job_trim_add(td, b);
		} else if (u->ddir == DDIR_READ && (td->check_reads || u->vread)) {
			/* verify_fatal=1: the reads drained after it go unchecked */
			if (td->o->verify_fatal && td->res->verify_mismatches)
				continue;
			td->res->verify_blocks++;
			td->res->verify_backlog_blocks += u->vread;
			if (td->trimmed && job_trimmed_check(td, u))
				continue;
			if (unlikely(bench_verify_check(&td->vspec, u->iov.iov_base,
							u->bio.bi_size,
							u->bio.bi_offset, &vr)))
				job_verify_bad(td, u, &vr);
		}
	}
	return rev;
}

/*
 * fio's logs and json+ bins (log.h): each I/O of the measured window that
 * completed without error, after the ramp.  Only reached through
 * job_reap()'s reap_hook, so it costs nothing when they are off.
 */
static void __attribute__((noinline))
job_log_reaped(struct job_thread *td, const struct io_u *u, uint64_t now)
{
	if (!td->measuring || td->ramping)
		return;
	for (; u; u = u->next) {
		if (u->bio.bi_status)
			continue;
		bench_log_io_prio(td->log, now - td->t_measure, u->ddir,
				  u->bio.bi_size, u->bio.bi_offset,
				  u->issue_ns - u->start_ns, now - u->issue_ns,
				  u->bio.bi_ioprio);
	}
}

/*
 * cmdprio: each read's and write's clat into its priority's histogram
 * (fio's add_stat_prio_sample(); blkstack has no lat_percentiles=).
 */
static void __attribute__((noinline))
job_prio_reaped(struct job_thread *td, const struct io_u *u, uint64_t now)
{
	struct bench_prio_stats *ps = td->prio;

	if (!td->measuring || td->ramping || !td->lat)
		return;
	for (; u; u = u->next) {
		unsigned int d = u->ddir, i;

		if (u->bio.bi_status || d > DDIR_WRITE)
			continue;
		for (i = 0; i < ps->nr[d]; i++)
			if (ps->val[d][i] == u->bio.bi_ioprio)
				break;
		if (i == ps->nr[d])
			continue;	/* cannot happen: every value is listed */
		blk_hist_add(&ps->clat[d][i], now - u->issue_ns);
	}
}

/*
 * --plot's time series: windows of log_avg_msec when given, else about a
 * hundredth of the runtime (10 ms .. 1 s), 100 ms without one.
 */
static uint64_t plot_window_ns(const struct bench_job_opts *j)
{
	uint64_t ns = j->runtime_ns / 100;

	if (j->log_avg_msec)
		return j->log_avg_msec * 1000000ull;
	if (!j->runtime_ns)
		return 100000000ull;
	if (ns < 10000000ull)
		ns = 10000000ull;
	if (ns > 1000000000ull)
		ns = 1000000000ull;
	return ns / 1000000ull * 1000000ull;
}

/* disable_slat=, disable_clat=, disable_lat=: the histograms kept. */
static void __attribute__((noinline))
job_account_some(struct job_thread *td, struct bench_dir_stats *ds,
		 uint64_t n, uint64_t start, uint64_t issue, uint64_t now)
{
	if (!td->no_slat)
		blk_hist_add_n(&ds->slat, issue - start, n);
	if (!td->no_clat)
		blk_hist_add_n(&ds->clat, now - issue, n);
	if (!td->no_tlat)
		blk_hist_add_n(&ds->lat, now - start, n);
}

/* Account one run of I/Os that share their timestamps. */
static inline void job_account(struct job_thread *td, enum bench_ddir ddir,
			       uint64_t n, uint64_t start, uint64_t issue,
			       uint64_t now)
{
	struct bench_dir_stats *ds = &td->res->dir[ddir];

	if (unlikely(td->lat_some)) {
		job_account_some(td, ds, n, start, issue, now);
		return;
	}
	blk_hist_add_n(&ds->slat, issue - start, n);
	blk_hist_add_n(&ds->clat, now - issue, n);
	blk_hist_add_n(&ds->lat, now - start, n);
}

static void job_reset_stats(struct job_thread *td)
{
	unsigned int d;

	for (d = 0; d < DDIR_NR; d++) {
		struct bench_dir_stats *ds = &td->res->dir[d];

		ds->ios = ds->bytes = ds->errors = 0;
		blk_hist_init(&ds->slat);
		blk_hist_init(&ds->clat);
		blk_hist_init(&ds->lat);
		if (td->prio && d < 2) {
			unsigned int i;

			for (i = 0; i < td->prio->nr[d]; i++)
				blk_hist_init(&td->prio->clat[d][i]);
		}
	}
	memset(td->res->depth_map, 0, sizeof(td->res->depth_map));
	memset(td->res->bw_samples, 0, sizeof(td->res->bw_samples));
	memset(td->res->iops_samples, 0, sizeof(td->res->iops_samples));
	memset(td->res->submit_map, 0, sizeof(td->res->submit_map));
	memset(td->res->complete_map, 0, sizeof(td->res->complete_map));
	td->res->sync_ios = 0;
	/*
	 * sync_lat starts zeroed (calloc) and job_sync() sets its min before
	 * the first sample: 15 KB to clear only when it has samples (most
	 * jobs never sync; this runs twice per thread)
	 */
	if (td->res->sync_lat.count)
		blk_hist_init(&td->res->sync_lat);
}

/*
 * error_dump=1: an error the job goes on past is printed as fio's
 * __io_u_log_error() prints it (those that end the job are in its report).
 */
static void __attribute__((noinline, cold))
job_error_dump(const struct job_thread *td, const struct io_u *u, int err)
{
	const char *path = td->nr_files > 1 ? td->files[u->file].path :
			   td->file_path;

	fprintf(stderr,
		"blkstack bench: job '%s': io_u error%s%s: %s: %s offset=%llu, buflen=%u\n",
		td->o->name, path ? " on file " : "", path ? path : "",
		strerror(-err),
		u->ddir == DDIR_READ ? "read" : u->ddir == DDIR_WRITE ? "write" : "trim",
		(unsigned long long)u->bio.bi_offset, u->bio.bi_size);
}

/*
 * continue_on_error=, fio's td_non_fatal_error(): an error of a class the
 * option names (EILSEQ: verify; reads: read; the others: write) that is
 * on the class's ignore_error= list (by default EIO and EILSEQ, fio's
 * non-fatal errors) is counted and the job goes on; with error_dump=1 it
 * is printed too.  @err: -errno.
 */
static bool job_error_nonfatal(struct job_thread *td, const struct io_u *u,
			       int err)
{
	enum bench_ddir ddir = (enum bench_ddir)u->ddir;
	unsigned int type = err == -EILSEQ ? 2 : ddir == DDIR_READ ? 0 : 1;
	const struct bench_job_opts *o = td->o;
	unsigned int i, n = o->ignore_nr[type];
	bool hit = !n && (err == -EIO || err == -EILSEQ);

	if (!(o->continue_on_error & (1u << type)))
		return false;
	for (i = 0; i < n && !hit; i++)
		hit = o->ignore_err[type][i] == -err;
	if (!hit)
		return false;
	if (!td->res->total_err++)
		td->res->first_error = -err;
	if (o->error_dump)
		job_error_dump(td, u, err);
	return true;
}

/*
 * A submission error that continue_on_error= takes: counted, the io_u
 * back on the free list.  True: the job goes on.
 */
static bool __attribute__((noinline, cold))
job_submit_nonfatal(struct job_thread *td, struct io_u *u, int err)
{
	if (!job_error_nonfatal(td, u, err))
		return false;
	td->res->dir[u->ddir].errors++;
	u->next = td->free_list;
	td->free_list = u;
	td->nr_free++;
	return true;
}

/*
 * latency_target= (fio's io_u.c lat_target_*()).  The job starts at depth
 * 1 and doubles it after each window whose I/Os met the target (at least
 * latency_percentile % of those completed in the window had a total
 * latency within it), bisecting between the last depth that met it and
 * the last that failed once one has failed; a failed window (or, at
 * latency_percentile=100, any late I/O) lowers it at once, after the I/Os
 * in flight have completed (fio's io_u_quiesce()).  When a window leaves
 * the depth where it was, the statistics restart for one more window at
 * that depth (the job's runtime with them), and after it the job ends,
 * unless latency_run=1.
 */
enum { LAT_Q_NONE = 0, LAT_Q_CYCLE, LAT_Q_FINAL };

/* I/Os of the job completed so far, reads and writes (fio's io_blocks) */
static uint64_t job_lat_ios(const struct job_thread *td)
{
	return td->ios_done[DDIR_READ] + td->ios_done[DDIR_WRITE];
}

/* fio's lat_new_cycle(): a new window from @now */
static void job_lat_cycle(struct job_thread *td, uint64_t now)
{
	td->lat_ts = now;
	td->lat_ios = job_lat_ios(td);
	td->lat_failed = 0;
}

/* fio's lat_target_init(): the search from depth 1 */
static void job_lat_init(struct job_thread *td, uint64_t now)
{
	td->lat_end_run = false;
	td->lat_qd = 1;
	td->lat_qd_high = td->o->iodepth;
	td->lat_qd_low = 1;
	td->lat_ts = now;
	td->lat_ios = job_lat_ios(td);
}

/*
 * fio's __lat_target_failed(): a lower depth, entered once the I/Os in
 * flight have completed.  True at depth 1: there is no lower one.
 */
static bool job_lat_down(struct job_thread *td)
{
	if (td->lat_qd == 1)
		return true;
	td->lat_qd_high = td->lat_qd;
	if (td->lat_qd == td->lat_qd_low)
		td->lat_qd_low--;
	td->lat_qd = (td->lat_qd + td->lat_qd_low) / 2;
	td->lat_stable = 0;
	if (td->lat_quiesce != LAT_Q_FINAL)
		td->lat_quiesce = LAT_Q_CYCLE;
	return false;
}

/* fio's lat_target_success(): a deeper queue, or the end of the search */
static void job_lat_up(struct job_thread *td, uint64_t now)
{
	const unsigned int qd = td->lat_qd, depth = td->o->iodepth;

	td->lat_qd_low = qd;
	/* fio's heuristic: a depth one below the failing one, three times */
	if (qd + 1 == td->lat_qd_high && ++td->lat_stable >= 3) {
		td->lat_qd_high++;
		td->lat_stable = 0;
	}
	if (td->lat_qd_high != depth)
		td->lat_qd = (qd + td->lat_qd_high) / 2;
	else
		td->lat_qd = qd * 2;
	if (td->lat_qd > depth)
		td->lat_qd = depth;
	if (!td->o->latency_run && td->lat_qd == qd) {
		if (td->lat_end_run) {
			td->stop = true;	/* fio: td->done */
			td->lat_done = true;
			return;
		}
		td->lat_quiesce = LAT_Q_FINAL;
		return;
	}
	job_lat_cycle(td, now);
}

/* fio's lat_target_check(): at the end of a window, up or down */
static void job_lat_check(struct job_thread *td, uint64_t now)
{
	uint64_t ios;
	double ok;

	if (now - td->lat_ts < td->o->latency_window_ns)
		return;
	ios = job_lat_ios(td) - td->lat_ios;
	/* no I/O in the window: fio's 0/0 fails the comparison */
	ok = ios && td->lat_failed <= ios ?
		(double)(ios - td->lat_failed) / (double)ios * 100.0 : -1.0;
	if (ok >= td->o->latency_percentile)
		job_lat_up(td, now);
	else
		job_lat_down(td);	/* at depth 1 it stays there, as fio's */
}

/*
 * Completions over the target: counted, or at latency_percentile=100 the
 * depth lowered at once; at depth 1 that ends the job with ETIMEDOUT and
 * fio's message (lat_fatal()).
 */
static void __attribute__((noinline))
job_lat_reaped(struct job_thread *td, const struct io_u *u, uint64_t now)
{
	const struct bench_job_opts *o = td->o;

	for (; u; u = u->next) {
		uint64_t lat = now - u->start_ns;

		if (u->bio.bi_status || u->ddir == DDIR_TRIM ||
		    lat <= o->latency_target_ns)
			continue;
		if (o->latency_percentile < 100.0) {
			td->lat_failed++;
		} else if (job_lat_down(td)) {
			job_error(td, -ETIMEDOUT,
				  "latency of %" PRIu64 " nsec exceeds specified max (%" PRIu64 " nsec): %s %llu %u",
				  lat, o->latency_target_ns,
				  u->ddir == DDIR_READ ? "read" : "write",
				  (unsigned long long)u->bio.bi_offset,
				  u->bio.bi_size);
			return;
		}
	}
}

/* Reap what blk_poll() completed: account, recycle. */
/*
 * max_latency= (fio's account_io_completion() and lat_fatal()): a read or
 * write completed later than its direction's limit after it was started
 * ends the job with ETIMEDOUT; the I/Os in flight are drained.
 */
static void __attribute__((noinline))
job_max_lat_reaped(struct job_thread *td, const struct io_u *u, uint64_t now)
{
	const struct bench_job_opts *o = td->o;

	for (; u; u = u->next) {
		uint64_t lat = now - u->start_ns, max = o->max_latency_ns[u->ddir];

		if (u->ddir == DDIR_TRIM || !max || lat <= max)
			continue;
		job_error(td, -ETIMEDOUT,
			  "latency of %" PRIu64 " nsec exceeds specified max (%" PRIu64 " nsec): %s %llu %u",
			  lat, max, u->ddir == DDIR_READ ? "read" : "write",
			  (unsigned long long)u->bio.bi_offset, u->bio.bi_size);
		td->max_lat = false;	/* fio reports the first */
		return;
	}
}

static void job_reap(struct job_thread *td, uint64_t now)
{
	struct io_u *u = td->completed;
	uint64_t run_n = 0, run_start = 0, run_issue = 0;
	enum bench_ddir run_ddir = DDIR_READ;

	td->completed = NULL;
	if (unlikely(td->reap_hook)) {
		if (td->written || td->check_reads || td->backlog)
			u = job_verify_reaped(td, u);
		if (td->log)
			job_log_reaped(td, u, now);
		if (td->prio)
			job_prio_reaped(td, u, now);
		if (td->lat_target && td->lat && !td->ramping)
			job_lat_reaped(td, u, now);
		if (td->max_lat && td->lat)
			job_max_lat_reaped(td, u, now);
	}
	while (u) {
		struct io_u *next = u->next;
		enum bench_ddir ddir = (enum bench_ddir)u->ddir;

		if (unlikely(u->bio.bi_status)) {
			/* fio's order (io_completed(), then break_on_this_error()) */
			if (td->o->continue_on_error &&
			    job_error_nonfatal(td, u,
					       blk_status_to_errno(u->bio.bi_status))) {
				td->res->dir[ddir].errors++;
				goto recycle;
			}
			if (td->o->fill_device &&
			    u->bio.bi_status == BLK_STS_NOSPC) {
				/* fio: the device is full, the job done */
				td->stop = true;
				goto recycle;
			}
			td->res->dir[ddir].errors++;
			job_error(td, blk_status_to_errno(u->bio.bi_status),
				  "%s error at offset %llu, length %u%s%s: %s",
				  ddir == DDIR_READ ? "read" :
				  ddir == DDIR_WRITE ? "write" : "trim",
				  (unsigned long long)u->bio.bi_offset,
				  u->bio.bi_size,
				  td->nr_files > 1 ? " of " : "",
				  td->nr_files > 1 ? td->files[u->file].path : "",
				  blk_status_str(u->bio.bi_status));
		} else if (likely(td->measuring)) {
			td->res->dir[ddir].ios++;
			td->res->dir[ddir].bytes += u->bio.bi_size;
			if (td->lat) {
				if (run_n && (u->start_ns != run_start ||
					      u->issue_ns != run_issue ||
					      ddir != run_ddir)) {
					job_account(td, run_ddir, run_n,
						    run_start, run_issue, now);
					run_n = 0;
				}
				run_start = u->start_ns;
				run_issue = u->issue_ns;
				run_ddir = ddir;
				run_n++;
			}
		}
		td->ios_done[ddir]++;
		td->bytes_done[ddir] += u->bio.bi_size;
recycle:
		u->next = td->free_list;
		td->free_list = u;
		td->nr_free++;
		u = next;
	}
	if (run_n)
		job_account(td, run_ddir, run_n, run_start, run_issue, now);
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/*
 * Start (or restart, at the end of the ramp) the measured window: counters
 * and histograms from zero.
 */
static void job_measure_start(struct job_thread *td, uint64_t now)
{
	job_reset_stats(td);
	td->zbdj.resets = 0;	/* fio: reset_io_stats() at the ramp's end */
	td->measuring = true;
	td->ramping = false;
	td->t_measure = now;
	/* the sample windows start with the measured one, counts at 0 */
	td->bw_t = td->iops_t = now;
	memset(td->bw_bytes0, 0, sizeof(td->bw_bytes0));
	memset(td->iops_ios0, 0, sizeof(td->iops_ios0));
	td->sample_next = now;
	getrusage(RUSAGE_THREAD, &td->ru_start);
	/* fio's reset_all_stats(): the search starts again, unless found */
	if (td->lat_target && !td->lat_end_run)
		job_lat_init(td, now);
}

/* fio's add_stat_sample(): Welford's running mean and squares. */
static void sample_add(struct bench_sample_stat *s, uint64_t v)
{
	double delta = (double)v - s->mean;

	if (!s->n || v < s->min)
		s->min = v;
	if (!s->n || v > s->max)
		s->max = v;
	s->n++;
	s->mean += delta / (double)s->n;
	s->m2 += delta * ((double)v - s->mean);
}

/*
 * fio's __add_samples(): once a window of @avg_ms has passed (less fio's
 * 1 ms slack), each direction that did I/O in it gets a sample of its
 * rate over the window, in fio's integers (KiB/s for bytes); the next
 * window starts now.  Return: when the next window ends, bench ns.
 */
static uint64_t job_sample_one(struct job_thread *td, uint64_t now,
			       uint64_t *t, uint32_t avg_ms, uint64_t *base,
			       bool bytes, struct bench_sample_stat *stat)
{
	uint64_t spent = (now - *t) / 1000000, avg = avg_ms ? avg_ms : 500;
	unsigned int d;

	if (spent < avg && avg - spent > 1)
		return *t + avg * 1000000;
	for (d = 0; d < DDIR_NR; d++) {
		uint64_t cur = bytes ? td->res->dir[d].bytes : td->res->dir[d].ios;
		uint64_t delta = cur - base[d];

		if (!delta)
			continue;
		sample_add(&stat[d], !spent ? 0 : bytes ?
			   delta * 1000 / spent / 1024 : delta * 1000 / spent);
		base[d] = cur;
	}
	*t = now;
	return now + avg * 1000000;
}

/* The loop's time checks, once a sample window is due. */
static void __attribute__((noinline)) job_sample(struct job_thread *td,
						 uint64_t now)
{
	uint64_t a, b;

	if (!td->measuring || td->ramping) {
		td->sample_next = UINT64_MAX;
		return;
	}
	a = job_sample_one(td, now, &td->bw_t, td->o->bw_avg_ms,
			   td->bw_bytes0, true, td->res->bw_samples);
	b = job_sample_one(td, now, &td->iops_t, td->o->iops_avg_ms,
			   td->iops_ios0, false, td->res->iops_samples);
	/* fio's 1 ms slack: a window may close 1 ms early */
	td->sample_next = (a < b ? a : b) - 1000000;
}

static void job_publish_progress(struct job_thread *td)
{
	unsigned int d;

	for (d = 0; d < DDIR_NR; d++) {
		atomic_store_explicit(&td->progress.ios[d], td->ios_done[d],
				      memory_order_relaxed);
		atomic_store_explicit(&td->progress.bytes[d], td->bytes_done[d],
				      memory_order_relaxed);
	}
}

/*
 * The longest a job sleeps in blk_wait() before it looks at the clock and
 * at SIGINT again: the runtime ends at most this late on a device whose
 * completions take longer.
 */
#define BENCH_WAIT_NS 2000000ull

/* Sleep @ns (at most BENCH_WAIT_NS, so that SIGINT and the runtime are
 * seen); spin the first @spin_ns of it. */
static void job_pause(uint64_t ns, uint64_t spin_ns)
{
	uint64_t start = bench_now_ns();
	struct timespec ts;

	if (spin_ns > ns)
		spin_ns = ns;
	while (bench_now_ns() < start + spin_ns)
		;
	ns -= spin_ns;
	if (!ns)
		return;
	if (ns > BENCH_WAIT_NS)
		ns = BENCH_WAIT_NS;
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	nanosleep(&ts, NULL);
}

/*
 * iodepth_batch_complete_min=, _max= (fio's wait_for_completions() and
 * td_io_getevents()): what blk_poll() completes waits, oldest first, in
 * td->pend_*; with @wait (nothing more can be submitted) at least
 * iodepth_batch_complete_min of them are gathered (fewer when fewer are
 * in flight; 0: never sleep, poll once), then at most
 * iodepth_batch_complete_max go to td->completed for job_reap().  The
 * others still hold their place in the queue, as fio's unreaped events.
 * Return: I/Os handed to job_reap().
 */
static void job_pend_take(struct job_thread *td)
{
	struct io_u *u = td->completed, *rev = NULL, *next, *tail;

	if (!u)
		return;
	td->completed = NULL;
	tail = u;	/* newest first: reversed, the oldest leads */
	for (; u; u = next) {
		next = u->next;
		u->next = rev;
		rev = u;
		td->nr_pend++;
	}
	if (td->pend_tail)
		td->pend_tail->next = rev;
	else
		td->pend_head = rev;
	td->pend_tail = tail;
}

/*
 * iodepth_low=: the I/Os submitted since the last reap went at depths
 * depth_seen + 1 .. @held (fio's io_u_mark_depth()); counted in fio's
 * buckets.
 */
static void job_depth_note(struct job_thread *td, unsigned int held)
{
	unsigned int d, i;

	for (d = td->depth_seen + 1; d <= held; d++) {
		for (i = 0; i < 6 && d >= (2u << i); i++)
			;
		td->res->depth_hist[i]++;
	}
}

/*
 * iodepth_low= (fio's wait_for_completions(): reaping goes on while the
 * queue was full and more than iodepth_low are held): with the queue
 * full, completions are reaped until at most iodepth_low I/Os are held
 * (in flight, or completed and not reaped: fio's cur_depth), and go to
 * job_reap(); else as without it.  Each wait that returned completions
 * counts as one of fio's getevents in the "complete" buckets; with
 * iodepth_batch_complete_* given, fio's getevents return at most _max
 * each, so the reap stops at the first whole _max past iodepth_low (the
 * rest stay held for the next round) and counts _max at a time.
 */
static int job_reap_low(struct job_thread *td, bool wait, uint64_t timeout_ns)
{
	const struct bench_job_opts *o = td->o;
	unsigned int held = job_inflight(td) + td->nr_pend, need, n, k;
	struct io_u **pp;
	int ret;

	job_depth_note(td, held);
	td->depth_seen = held;
	if (!wait || td->nr_free || held <= td->depth_low) {
		if (o->batch_complete_set)
			return -1;	/* job_reap_batch() goes on */
		ret = job_reap_wait(td, wait, timeout_ns);
		if (ret > 0)
			td->res->complete_map[batch_bucket((unsigned int)ret)]++;
		/* what job_reap() frees is gone from the depth */
		td->depth_seen = held - (ret > 0 ? (unsigned int)ret : 0);
		return ret;
	}
	need = held - td->depth_low;
	/* fio's min_evts: the first getevents waits for _min (at most all) */
	if (o->batch_complete_set && o->iodepth_batch_complete_min > need)
		need = o->iodepth_batch_complete_min < held ?
		       o->iodepth_batch_complete_min : held;
	while (td->nr_pend < need) {
		/*
		 * none within the timeout: back to the loop's time checks,
		 * then again, the ones gathered kept (as job_reap_batch()
		 * for iodepth_batch_complete_min): handing over the few
		 * gathered refilled the queue above iodepth_low
		 */
		ret = job_reap_wait(td, true, timeout_ns);
		if (ret <= 0)
			return 0;
		if (!o->batch_complete_set)
			td->res->complete_map[batch_bucket((unsigned int)ret)]++;
		job_pend_take(td);
	}
	n = td->nr_pend;
	if (o->batch_complete_set) {
		unsigned int chunk = o->iodepth_batch_complete_max ?
				     o->iodepth_batch_complete_max : 1;

		/* whole getevents of _max each, the last one short */
		k = (need + chunk - 1) / chunk * chunk;
		if (n > k)
			n = k;
		for (k = n; k; k -= k < chunk ? k : chunk)
			td->res->complete_map[batch_bucket(k < chunk ? k : chunk)]++;
	} else if (job_inflight(td) && (ret = job_reap_wait(td, false, 0)) > 0) {
		/* the last getevents returns every completion ready */
		td->res->complete_map[batch_bucket((unsigned int)ret)]++;
		job_pend_take(td);
		n = td->nr_pend;
	}
	pp = &td->pend_head;
	for (k = 0; k < n; k++)
		pp = &(*pp)->next;
	td->completed = td->pend_head;
	td->pend_head = *pp;
	*pp = NULL;
	if (!td->pend_head)
		td->pend_tail = NULL;
	td->nr_pend -= n;
	td->depth_seen = held - n;
	return (int)n;
}

static int __attribute__((noinline))
job_reap_batch(struct job_thread *td, bool wait, uint64_t timeout_ns)
{
	const struct bench_job_opts *o = td->o;
	unsigned int min = o->iodepth_batch_complete_min;
	unsigned int max = o->iodepth_batch_complete_max ?
			   o->iodepth_batch_complete_max : 1;
	unsigned int n = 0;
	struct io_u **pp;
	int ret;

	if (td->depth_low && (ret = job_reap_low(td, wait, timeout_ns)) >= 0)
		return ret;
	if (job_inflight(td) && job_reap_wait(td, false, 0) > 0)
		job_pend_take(td);
	if (wait && min) {
		unsigned int need = td->nr_pend + job_inflight(td);

		if (need > min)
			need = min;
		while (td->nr_pend < need) {
			/*
			 * none within the timeout: back to the loop's time
			 * checks, then again, the ones gathered kept: fio's
			 * getevents waits for all @min (handing over the few
			 * gathered, under TSan and load, made batches of 5-8
			 * at iodepth_batch_complete_min=16)
			 */
			if (job_reap_wait(td, true, timeout_ns) <= 0)
				return 0;
			job_pend_take(td);
		}
	}
	if (!td->nr_pend)
		return 0;
	/* the oldest @max to job_reap() (iodepth_low: gone from the depth) */
	pp = &td->pend_head;
	while (*pp && n < max) {
		pp = &(*pp)->next;
		n++;
	}
	td->completed = td->pend_head;
	td->pend_head = *pp;
	*pp = NULL;
	if (!td->pend_head)
		td->pend_tail = NULL;
	td->nr_pend -= n;
	if (td->depth_low)
		td->depth_seen -= n < td->depth_seen ? n : td->depth_seen;
	if (n)
		td->res->complete_map[batch_bucket(n)]++;
	return (int)n;
}

/* job_reap_wait(), through job_reap_batch() when the job sets its batches */
static inline int job_reap_some(struct job_thread *td, bool wait,
				uint64_t timeout_ns)
{
	if (unlikely(td->reap_batch))
		return job_reap_batch(td, wait, timeout_ns);
	return job_reap_wait(td, wait, timeout_ns);
}

/*
 * latency_target=: may one more I/O go at the depth searched?  The I/Os
 * the job holds (in flight, or completed and not reaped) count, as fio's
 * cur_depth; a change of depth waits for all of them to complete first.
 */
static bool __attribute__((noinline)) job_lat_ok(struct job_thread *td)
{
	unsigned int held = td->o->iodepth - td->nr_free;

	if (td->lat_quiesce) {
		uint64_t now;

		if (held)
			return false;
		now = bench_now_ns();
		if (td->lat_quiesce == LAT_Q_FINAL) {
			/* fio: the found depth's window is counted alone */
			td->lat_end_run = true;
			job_measure_start(td, now);
			td->lat_restart = true;	/* and the runtime with it */
		}
		td->lat_quiesce = LAT_Q_NONE;
		job_lat_cycle(td, now);
	}
	return held < td->lat_qd;
}

/*
 * rate=, rate_iops= per direction, fio's rate_ddir(): a job of one
 * direction waits for that direction's time; a mixed one draws its
 * direction as rwmixread says and, when that one is ahead of its rate,
 * goes the other way if that one is behind; when both are ahead it waits
 * for the earlier and then goes that way.  A direction without a cap is
 * never ahead.  True with the direction in @dp.
 */
static bool job_pace_rate(struct job_thread *td, uint64_t now, int *dp)
{
	int d = td->fixed_ddir, od;
	unsigned int od_pct;

	if (d < 0)
		d = td->pace_ddir >= 0 ? td->pace_ddir : (int)job_rwmix_ddir(td);
	if (now >= td->rate_next[d]) {
		*dp = d;
		return true;
	}
	if (td->fixed_ddir < 0) {
		od = d ^ 1;
		od_pct = od == DDIR_READ ? td->o->rwmixread :
					   100 - td->o->rwmixread;
		if (od_pct && now >= td->rate_next[od]) {
			*dp = od;
			return true;
		}
		if (od_pct && td->rate_next[od] < td->rate_next[d])
			d = od;
		td->pace_ddir = d;	/* after the wait, this way */
	}
	td->rate_due = td->rate_next[d];
	return false;
}

/*
 * rate=, rate_iops=, thinktime=, flow=, latency_target=: may one more I/O
 * go now?  Linear rate as fio's default rate_process: I/O k of a
 * direction goes no earlier than start + k intervals, so a late wake-up
 * is made up for by the next I/Os.  thinktime: thinktime_blocks I/Os,
 * then they complete, then the stall.
 */
/*
 * I/Os between thinktime stalls: thinktime_blocks, except that with
 * thinktime_iotime= and no thinktime_blocks= only the time counts (fio)
 */
static uint32_t job_think_blocks(const struct bench_job_opts *o)
{
	if (o->thinktime_iotime_ns && !o->think_blocks_set)
		return UINT32_MAX;
	return o->thinktime_blocks;
}

static bool __attribute__((noinline)) job_pace_ok(struct job_thread *td)
{
	int d = 0;

	if (td->lat_target && !job_lat_ok(td))
		return false;
	/*
	 * thinktime_iotime= (fio's handle_thinktime()): a stall once I/O has
	 * run thinktime_iotime since the last stall began (its thinktime
	 * included), whatever the blocks' count
	 */
	if (td->o->thinktime_iotime_ns && td->o->thinktime_ns &&
	    td->think_left &&
	    bench_now_ns() - td->think_since >=
	    td->o->thinktime_iotime_ns + td->o->thinktime_ns)
		td->think_left = 0;
	if (td->o->thinktime_ns && !td->think_left)
		return false;
	if (td->rate_on && !job_pace_rate(td, bench_now_ns(), &d))
		return false;
	if (td->flow) {
		/* fio's flow_threshold_exceeded() */
		struct bench_flow *f = td->flow;
		double fc = (double)atomic_load_explicit(&f->counter, memory_order_relaxed);
		double tw = (double)atomic_load_explicit(&f->total_weight, memory_order_relaxed);

		if ((double)td->flow_counter / fc > (double)td->o->flow / tw) {
			td->flow_blocked = true;
			return false;
		}
		atomic_fetch_add_explicit(&f->counter, 1, memory_order_relaxed);
		td->flow_counter++;
	}
	if (td->rate_on) {
		if (td->fixed_ddir < 0)
			td->pace_ddir = d;	/* job_pick_ddir() takes it */
		if (td->poisson_mean_ns[d])
			/* fio's usec_for_io(): mean x -ln(u), u in (0, 1] */
			td->rate_next[d] += (uint64_t)((double)td->poisson_mean_ns[d] *
				-log((double)((rng_next(&td->prng) >> 11) + 1) * 0x1p-53));
		else
			td->rate_next[d] += td->rate_ns[d];
	}
	if (td->o->thinktime_ns)
		td->think_left--;
	return true;
}

/* Held back by its flow: fio quiesces and sleeps flow_sleep, or retries. */
static void job_flow_wait(struct job_thread *td)
{
	td->flow_blocked = false;
	if (td->o->flow_sleep_ns) {
		uint64_t end, now;

		while (job_inflight(td) || td->nr_pend)
			if (job_reap_some(td, true, BENCH_WAIT_NS) > 0)
				job_reap(td, td->lat ? bench_now_ns() : 0);
		/*
		 * all of it, as fio's usleep(): job_pause() sleeps at most
		 * BENCH_WAIT_NS at a time (so that SIGINT is seen), and a
		 * single call cut every flow_sleep to 2 ms
		 */
		end = bench_now_ns() + td->o->flow_sleep_ns;
		while (!atomic_load_explicit(&bench_interrupted, memory_order_relaxed) &&
		       !atomic_load_explicit(&td->terminate, memory_order_relaxed) &&
		       (now = bench_now_ns()) < end)
			job_pause(end - now, 0);
		return;
	}
	/*
	 * No flow_sleep: poll again at once, as fio's do_io() loop does.
	 * sched_yield() here gave the CPU away for a whole slice whenever
	 * anything else was runnable: with two busy loops on 2 vCPUs a
	 * flow of two null jobs fell from ~2 M to ~8 K I/Os/s.
	 */
	if ((job_inflight(td) || td->nr_pend) && job_reap_some(td, false, 0) > 0)
		job_reap(td, td->lat ? bench_now_ns() : 0);
	else
		__builtin_ia32_pause();
}

/* Waiting on the pace: for completions when I/Os are in flight, else for
 * the next I/O's time or the end of the stall. */
static void __attribute__((noinline)) job_pace_wait(struct job_thread *td)
{
	const struct bench_job_opts *o = td->o;
	uint64_t now;

	if (td->flow_blocked) {
		job_flow_wait(td);
		return;
	}
	if (job_inflight(td) || td->nr_pend) {
		uint64_t wait = BENCH_WAIT_NS;

		if (td->rate_on && !(o->thinktime_ns && !td->think_left)) {
			now = bench_now_ns();
			if (td->rate_due > now && td->rate_due - now < wait)
				wait = td->rate_due - now;
		}
		if (job_reap_some(td, true, wait) > 0)
			job_reap(td, td->lat ? bench_now_ns() : 0);
		return;
	}
	if (o->thinktime_ns && !td->think_left) {
		/*
		 * every I/O of the last blocks completed: the stall, all of
		 * it (job_pause() sleeps at most BENCH_WAIT_NS at a time, so
		 * that SIGINT is seen)
		 */
		uint64_t end = bench_now_ns() + o->thinktime_ns;

		td->think_since = end - o->thinktime_ns;
		job_pause(o->thinktime_ns, o->thinktime_spin_ns);
		while (!atomic_load_explicit(&bench_interrupted, memory_order_relaxed) &&
		       !atomic_load_explicit(&td->terminate, memory_order_relaxed) &&
		       (now = bench_now_ns()) < end)
			job_pause(end - now, 0);
		td->think_left = job_think_blocks(o);
		return;
	}
	now = bench_now_ns();
	if (td->rate_due > now)
		job_pause(td->rate_due - now, 0);
}

/*
 * rate_min=, rate_iops_min=: has a direction fallen below them?  fio's
 * check (backend.c __check_min_rate()): none in the first 2 s of the job
 * nor in its ramp; then, per direction that has done I/O, the bytes (or,
 * without rate_min=, the I/Os) completed since the last check over the
 * time since it, once rate_cycle ms have passed.  Below: the job fails
 * with EIO, as fio's does, and stops.
 */
static bool __attribute__((noinline)) job_rate_min_fail(struct job_thread *td,
							uint64_t now)
{
	const struct bench_job_opts *o = td->o;
	unsigned int d;

	if (now - td->t_start < 2000000000ull || td->ramping)
		return false;
	for (d = 0; d < DDIR_NR; d++) {
		uint64_t spent_ms, got;

		if (!td->bytes_done[d] ||
		    (!o->rate_min[d] && !o->rate_iops_min[d]))
			continue;
		if (td->rmin_t[d]) {
			spent_ms = (now - td->rmin_t[d]) / 1000000;
			if (spent_ms < o->rate_cycle_ms || !spent_ms)
				continue;
			if (o->rate_min[d]) {
				got = (td->bytes_done[d] - td->rmin_bytes[d]) * 1000 / spent_ms;
				if (got < o->rate_min[d]) {
					job_error(td, -EIO,
						  "rate_min=%" PRIu64 "B/s not met, got %" PRIu64 "B/s (%s)",
						  o->rate_min[d], got, d == DDIR_READ ? "read" :
						  d == DDIR_WRITE ? "write" : "trim");
					return true;
				}
			} else {
				got = (td->ios_done[d] - td->rmin_ios[d]) * 1000 / spent_ms;
				if (got < o->rate_iops_min[d]) {
					job_error(td, -EIO,
						  "rate_iops_min=%" PRIu64 " not met, got %" PRIu64 " IOPS (%s)",
						  o->rate_iops_min[d], got, d == DDIR_READ ? "read" :
						  d == DDIR_WRITE ? "write" : "trim");
					return true;
				}
			}
		}
		td->rmin_bytes[d] = td->bytes_done[d];
		td->rmin_ios[d] = td->ios_done[d];
		td->rmin_t[d] = now;
	}
	return false;
}

/*
 * One phase of a job: keep iodepth I/Os in flight, in batches, until
 * job_prep() has nothing more, the runtime deadline (0: none) passes, an
 * error stops the job or SIGINT/SIGTERM interrupts the run; then drain.
 * Statistics are reset at @ramp_end (job_measure_start()).
 *
 * The measured window ends at td->t_loop_end: when the loop stops, or,
 * when the drained I/Os are counted (no deadline, no interrupt), when the
 * drain ends.  Every counted I/O was reaped before it, so that I/Os
 * counted over the window's length is a true rate even when the last
 * batch completes well after the deadline (a large bs, inline completions
 * during a long submission).
 */

/*
 * The rarer checks of the loop's time checks: rate_min/rate_iops_min, and
 * with ss= the progress counters published at each check, so that the
 * steady state sampler (wait_group()) sees this second's I/Os, not those
 * of 1024 loops ago.  True: stop the job.
 */
/*
 * --status-interval: a copy of the thread's results as they stand at
 * @now, its window ending now, for the main thread's interim report; no
 * logs nor stage statistics (the thread keeps writing those).
 */
static void __attribute__((noinline))
job_snapshot(struct job_thread *td, uint64_t now)
{
	struct bench_job_result *s = td->snap;
	struct rusage ru;
	int d;

	pthread_mutex_lock(&td->snap_mu);
	memcpy(s, td->res, sizeof(*s));
	s->log = NULL;
	s->stages = NULL;
	if (now < td->t_measure)
		now = td->t_measure;
	for (d = 0; d < DDIR_NR; d++) {
		s->dir[d].runtime_ns = now - td->t_measure;
		s->dir[d].start_ns = td->t_measure;
	}
	s->runtime_ns = now - td->t_measure;
	s->window_start_ns = td->t_measure;
	s->window_end_ns = now;
	s->latency_depth = td->lat_qd;
	s->zone_resets = td->zbdj.resets;
	getrusage(RUSAGE_THREAD, &ru);
	s->usr_cpu_s = tv_s(ru.ru_utime) - tv_s(td->ru_start.ru_utime);
	s->sys_cpu_s = tv_s(ru.ru_stime) - tv_s(td->ru_start.ru_stime);
	pthread_mutex_unlock(&td->snap_mu);
	atomic_store_explicit(&td->snap_ack,
			      atomic_load_explicit(&td->snap_req, memory_order_acquire),
			      memory_order_release);
}

static bool job_tick_slow(struct job_thread *td, uint64_t now,
			  uint64_t *runtime_end)
{
	if (td->o->ss_dur_ns)
		job_publish_progress(td);
	if (td->snap &&
	    atomic_load_explicit(&td->snap_req, memory_order_acquire) !=
	    atomic_load_explicit(&td->snap_ack, memory_order_relaxed))
		job_snapshot(td, now);
	if (td->lat_target) {
		if (td->lat_restart) {
			/* the found depth's window: the runtime from now */
			td->lat_restart = false;
			if (*runtime_end &&
			    __builtin_add_overflow(now, td->o->runtime_ns,
						   runtime_end))
				*runtime_end = UINT64_MAX;
		}
		/* fio: after the ramp, once the job has completed I/O */
		if (!td->ramping && !td->lat_quiesce && !td->stop &&
		    job_lat_ios(td))
			job_lat_check(td, now);
		if (td->stop)
			return true;
	}
	return td->rate_min_on && job_rate_min_fail(td, now);
}

static void job_sync_end_io(struct blk_bio *bio)
{
	*(bool *)bio->bi_private = true;
}

/*
 * A sync: wait for every I/O in flight (reaped as usual), then a FLUSH
 * to the device, waited for.  As fio's libaio and sync engines, the
 * sync covers the writes issued before it; the FLUSH is the block
 * layer's (counted in the device's flush counter; on a uring file,
 * fdatasync).  Its latency is fio's sync statistics, except the one of
 * end_fsync=/fsync_on_close= (fio's TD_FSYNCING: not counted).  With
 * several files, the current file's device is flushed.
 */
static void __attribute__((noinline, cold)) job_sync(struct job_thread *td)
{
	struct blk_bio *b = &td->sync_bio;
	uint8_t kind = td->sync_kind;
	uint64_t t0;
	int ret;

	td->sync_due = false;
	while (job_inflight(td) || td->nr_pend) {
		if (job_reap_some(td, true, BENCH_WAIT_NS) > 0)
			job_reap(td, td->lat ? bench_now_ns() : 0);
		if (atomic_load_explicit(&bench_interrupted, memory_order_relaxed))
			return;
	}
	memset(b, 0, sizeof(*b));
	b->bi_op = BLK_OP_FLUSH;
	b->bi_end_io = job_sync_end_io;
	b->bi_private = &td->sync_done;
	td->sync_done = false;
	if (td->iolog)	/* fio logs fdatasync= as "datasync", the others "sync" */
		job_iolog(td, td->nr_files > 1 ? td->cur_file : 0,
			  kind == SYNC_DATASYNC ? "datasync" : "sync", true, 0, 0);
	t0 = bench_now_ns();
	while ((ret = blk_submit(td->ctx, b)) == -EAGAIN)
		blk_poll(td->ctx);
	if (ret) {
		job_error(td, ret, "sync: %s", strerror(-ret));
		return;
	}
	while (!td->sync_done)
		blk_wait(td->ctx, BENCH_WAIT_NS);
	td->last_was_sync = true;
	if (b->bi_status) {
		job_error(td, blk_status_to_errno(b->bi_status), "sync: %s",
			  blk_status_str(b->bi_status));
		return;
	}
	if (kind == SYNC_END || !td->measuring)
		return;
	/* empty: zeroed, as blk_hist_init() leaves it but for min */
	if (!td->res->sync_lat.count)
		td->res->sync_lat.min = UINT64_MAX;
	blk_hist_add(&td->res->sync_lat, bench_now_ns() - t0);
	if (kind == SYNC_FSYNC)	/* fio's total_io_u[DDIR_SYNC] */
		td->res->sync_ios++;
}

/* read_iolog=: until the log's next entry is due, reap what completes. */
static void __attribute__((noinline, cold)) job_replay_wait(struct job_thread *td)
{
	uint64_t now;

	while ((now = bench_now_ns()) < td->rp_wait &&
	       !atomic_load_explicit(&bench_interrupted, memory_order_relaxed)) {
		uint64_t left = td->rp_wait - now;

		if (job_inflight(td) || td->nr_pend) {
			if (job_reap_some(td, true, left < BENCH_WAIT_NS ? left : BENCH_WAIT_NS) > 0)
				job_reap(td, td->lat ? bench_now_ns() : 0);
		} else {
			job_pause(left, 0);
		}
	}
	td->rp_wait = 0;
}

static void job_loop(struct job_thread *td, uint64_t ramp_end,
		     uint64_t runtime_end)
{
	const struct bench_job_opts *o = td->o;
	uint64_t stop_deadline;
	unsigned int batch_max = o->iodepth_batch ? o->iodepth_batch : o->iodepth;
	unsigned int loops = 0;
	uint64_t now;
	int ret;

	while (!td->stop) {
		unsigned int n = 0;

		/* submit a batch */
		if (td->nr_free || td->retry) {
			uint64_t t0 = td->lat ? bench_now_ns() : 0;
			unsigned int i;

			if (unlikely(td->nr_files > 1))
				job_files_plug(td, true);
			else
				blk_start_plug(td->ctx);
			while ((td->nr_free || td->retry) && n < batch_max) {
				struct io_u *u = td->retry;

				if (unlikely(u)) {
					td->retry = NULL;
					if (td->nr_files > 1)
						td->ctx = td->files[u->file].ctx;
				} else {
					if (unlikely(td->paced) && !job_pace_ok(td)) {
						td->pace_blocked = true;
						break;
					}
					u = td->free_list;
					if (!job_prep(td, u))
						break;
					td->free_list = u->next;
					td->nr_free--;
				}
				u->start_ns = t0;
				ret = blk_submit(td->ctx, &u->bio);
				if (unlikely(ret)) {
					/*
					 * Busy: submit this very I/O again.  A new
					 * job_prep() would lose the block this one
					 * took: a random map pass then wrote some
					 * blocks twice and others never, and verify
					 * checked only the blocks written.
					 */
					if (ret == -EAGAIN) {
						td->retry = u;
						break;
					}
					/*
					 * fio's break_on_this_error(): an error
					 * continue_on_error takes is counted and
					 * the job goes on, past this block (after
					 * the loop's reap and time checks)
					 */
					if (o->continue_on_error &&
					    job_submit_nonfatal(td, u, ret))
						break;
					if (!u->vread)
						td->bytes_issued -= o->bs;
					/* the verify phase must not skip it */
					if (td->verify_phase)
						td->verify_pos = (u->bio.bi_offset -
								  td->offset) / o->bs;
					u->next = td->free_list;
					td->free_list = u;
					td->nr_free++;
					job_error(td, ret,
						  "submit at offset %llu, length %u: %s",
						  (unsigned long long)u->bio.bi_offset,
						  u->bio.bi_size, strerror(-ret));
					break;
				}
				td->batch[n++] = u;
			}
			if (unlikely(td->nr_files > 1))
				job_files_plug(td, false);
			else
				blk_finish_plug(td->ctx);
			if (td->lat) {
				uint64_t t1 = bench_now_ns();

				for (i = 0; i < n; i++)
					td->batch[i]->issue_ns = t1;
			}
			/* fio's IO depths and submit counts */
			if (n) {
				td->res->depth_map[depth_bucket(o->iodepth -
								td->nr_free)] += n;
				td->res->submit_map[batch_bucket(n)]++;
			}
		}
		/*
		 * reap: with nothing more to submit, wait for the device
		 * (blk_wait() spins or sleeps, as the device's wait mode says)
		 */
		if (unlikely(td->pace_blocked)) {
			td->pace_blocked = false;
			if (td->sync_due)
				job_sync(td);
			else if (td->rp_wait)
				job_replay_wait(td);
			else
				job_pace_wait(td);
		} else if (job_reap_some(td, !td->nr_free || td->retry ||
					 (td->bytes_limit &&
					  td->bytes_issued >= td->bytes_limit),
					 BENCH_WAIT_NS) > 0)
			job_reap(td, td->lat ? bench_now_ns() : 0);
		else if (!n && td->nr_free == o->iodepth &&
			 td->bytes_limit && td->bytes_issued >= td->bytes_limit)
			break; /* all issued and all back */

		/* SIGINT/SIGTERM: stop as if the runtime had ended */
		if (unlikely(atomic_load_explicit(&bench_interrupted,
						  memory_order_relaxed))) {
			td->interrupted = true;
			break;
		}

		/* time checks, once per 16 loops when timestamps are off */
		++loops;
		if (td->lat || (loops & 15) == 0) {
			now = bench_now_ns();
			if (unlikely(td->ramping) && now >= ramp_end) {
				job_measure_start(td, now);
				/*
				 * the runtime counts from the end of the ramp as
				 * seen here, so a late check does not shorten it
				 * (a flow's threads keep their common end)
				 */
				if (runtime_end && !td->flow_clock &&
				    __builtin_add_overflow(now, o->runtime_ns,
							   &runtime_end))
					runtime_end = UINT64_MAX;
			}
			if (runtime_end && now >= runtime_end)
				break;
			if (unlikely(now >= td->sample_next))
				job_sample(td, now);
			if (unlikely(atomic_load_explicit(&td->terminate,
							  memory_order_relaxed))) {
				td->terminated = true;	/* exitall */
				break;
			}
			if (unlikely(td->tick_slow) &&
			    job_tick_slow(td, now, &runtime_end))
				break;
		}
		if ((loops & 1023) == 0)
			job_publish_progress(td);
	}
	td->t_loop_end = bench_now_ns();
	if (td->retry) {
		/* stopped before it could go: it was never issued */
		if (!td->retry->vread)
			td->bytes_issued -= o->bs;
		td->retry->next = td->free_list;
		td->free_list = td->retry;
		td->nr_free++;
		td->retry = NULL;
	}
	/* drain what is in flight; not counted after a deadline or interrupt */
	td->measuring = td->measuring && !runtime_end && !td->interrupted &&
			!td->terminated;
	/*
	 * After SIGINT/SIGTERM the drain has a deadline: a device that does
	 * not complete (a dead controller, a hung file system) must not keep
	 * the process forever.  What is still in flight then is given up:
	 * its buffers and the device stay allocated until the process exits.
	 */
	stop_deadline = td->interrupted ? bench_now_ns() + o->stop_deadline_ns : 0;
	while (job_inflight(td) || td->nr_pend) {
		if (job_reap_some(td, true, BENCH_WAIT_NS) > 0)
			job_reap(td, td->lat ? bench_now_ns() : 0);
		if (unlikely(stop_deadline) && bench_now_ns() > stop_deadline) {
			td->abandoned = true;
			job_error(td, -ETIMEDOUT,
				  "%u requests still in flight %.1f s after the stop; given up",
				  job_inflight(td),
				  (double)o->stop_deadline_ns / 1e9);
			break;
		}
	}
	if (td->measuring)
		td->t_loop_end = bench_now_ns();
}

/*
 * verify=: read back every written block (verify_only: every block of the
 * region) in offset order, at the job's iodepth, checking each.  As in fio,
 * the reads count in the read statistics and the runtime does not cut the
 * phase short.
 */
static void job_verify_phase(struct job_thread *td)
{
	uint64_t blocks = td->written ? td->written_blocks : td->nr_blocks;
	unsigned int i;

	if (td->nr_files > 1) {
		/* every file's blocks, from the first file's on */
		job_file_save(td);
		for (i = 0, blocks = 0; i < td->nr_files; i++) {
			td->files[i].verify_pos = 0;
			blocks += td->files[i].written ? td->files[i].written_blocks :
							 td->files[i].nr_blocks;
		}
		job_file_load(td, 0);
	}
	td->verify_phase = true;
	td->check_reads = true;
	td->prep_hook = true;
	td->reap_hook = true;
	td->verify_pos = 0;
	td->bytes_issued = 0;
	td->bytes_limit = blocks * td->o->bs;
	td->measuring = true;
	td->ramping = false;
	/* the search is the workload's: the read-back runs at iodepth */
	if (td->lat_done || td->zbd_eof)
		td->stop = false;
	td->lat_target = false;
	if (blocks)
		job_loop(td, 0, 0);
	td->verify_phase = false;
}

/*
 * verify_state_save= / verify_state_load=: blkstack's state file (not
 * fio's, whose state is the last completions of a replayed sequence):
 * this header, then the thread's map of blocks written, one bit per block
 * from the region's first, in 64-bit little-endian words.  @crc32c is the
 * CRC-32C (ISA-L crc32_iscsi, from ~0) of the header up to it and of the
 * map.  Named as fio names its own, in the working directory:
 * local-<job name, '/' as '.'>-<thread index in the run>-verify.state.
 */
struct job_vstate {
	char magic[8];		/* "BLKVSTAT" */
	uint32_t version;	/* 1 */
	uint32_t bs;		/* block size, bytes */
	uint64_t offset;	/* device offset of block 0, bytes */
	uint64_t nr_blocks;	/* bits in the map */
	uint64_t written;	/* bits set */
	uint64_t numberio;	/* writes issued */
	uint32_t crc32c;
	uint32_t rsvd;		/* 0 */
};

_Static_assert(sizeof(struct job_vstate) == 56, "an on-disk format");

static void job_state_path(const struct job_thread *td, char *path,
			   size_t len)
{
	char name[256];
	size_t i;

	snprintf(name, sizeof(name), "%s", td->o->name);
	for (i = 0; name[i]; i++)
		if (name[i] == '/')
			name[i] = '.';
	snprintf(path, len, "local-%s-%u-verify.state", name, td->thread_idx);
}

static uint32_t job_state_crc(const struct job_vstate *h, const uint64_t *map,
			      uint64_t words)
{
	uint32_t crc = crc32_iscsi((unsigned char *)h,
				   offsetof(struct job_vstate, crc32c), ~0u);

	return ~crc32_iscsi((unsigned char *)map, (int)(words * 8), crc);
}

/* When the writes end: the map of blocks written, for a later verify_only. */
static void job_state_save(struct job_thread *td)
{
	uint64_t words = (td->nr_blocks + 63) / 64, i;
	struct job_vstate h = { .magic = "BLKVSTAT" };
	char path[512], tmp[520];
	uint64_t *map = NULL;
	FILE *f;
	int err = 0;

	job_state_path(td, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	h.version = htole32(1);
	h.bs = htole32(td->o->bs);
	h.offset = htole64(td->offset);
	h.nr_blocks = htole64(td->nr_blocks);
	h.written = htole64(td->written_blocks);
	h.numberio = htole64(td->numberio);
	map = malloc(words * 8);
	if (!map) {
		job_error(td, -ENOMEM, "verify_state_save: out of memory");
		return;
	}
	for (i = 0; i < words; i++)
		map[i] = htole64(td->written[i]);
	h.crc32c = htole32(job_state_crc(&h, map, words));
	f = fopen(tmp, "w");
	if (!f ||
	    fwrite(&h, sizeof(h), 1, f) != 1 ||
	    fwrite(map, 8, words, f) != words)
		err = -errno;
	if (f && fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	free(map);
	if (err) {
		unlink(tmp);
		job_error(td, err ? err : -EIO, "verify_state_save: %s: %s",
			  path, strerror(err ? -err : EIO));
	}
}

/* verify_only with verify_state_load=1: the blocks to read back. */
static int job_state_load(struct job_thread *td, char *err, size_t errlen)
{
	uint64_t words = (td->nr_blocks + 63) / 64, i, nr = 0;
	struct job_vstate h;
	char path[512];
	const char *why = NULL;
	FILE *f;
	int ret = -EINVAL;

	job_state_path(td, path, sizeof(path));
	td->written = calloc(words ? words : 1, 8);
	if (!td->written) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen,
			 "%s: verify_state_load=1: %s: %s (a write run with verify_state_save=1 and this job's name and thread writes it)",
			 td->o->name, path, strerror(errno));
		return ret;
	}
	if (fread(&h, sizeof(h), 1, f) != 1)
		why = "shorter than a blkstack verify state header (56 bytes)";
	else if (!memcmp(h.magic, "\3\0\0\0\0\0\0\0", 8))
		/* fio's struct verify_state_hdr: version 3 (VSTATE_HDR_VERSION) */
		why = "fio's verify state (version 3), not blkstack's: fio's is where its replayed sequence of offsets stopped, and blkstack neither replays fio's sequences nor reads fio's blocks; write the blocks with blkstack and verify_state_save=1";
	else if (memcmp(h.magic, "BLKVSTAT", 8))
		why = "not a blkstack verify state file (magic \"BLKVSTAT\")";
	else if (le32toh(h.version) != 1)
		why = "version: only 1 is known";
	else if (le32toh(h.bs) != td->o->bs)
		why = "bs: the state's differs from this job's";
	else if (le64toh(h.offset) != td->offset)
		why = "offset: the state's region starts elsewhere than this job's";
	else if (le64toh(h.nr_blocks) != td->nr_blocks)
		why = "size: the state's region has another number of blocks than this job's";
	else if (fread(td->written, 8, words, f) != words)
		why = "the map of blocks is short";
	else if (job_state_crc(&h, td->written, words) != le32toh(h.crc32c))
		why = "crc32c: the file is damaged";
	fclose(f);
	if (why) {
		snprintf(err, errlen, "%s: verify_state_load=1: %s: %s",
			 td->o->name, path, why);
		return ret;
	}
	for (i = 0; i < words; i++) {
		td->written[i] = le64toh(td->written[i]);
		nr += (uint64_t)__builtin_popcountll(td->written[i]);
	}
	if (nr != le64toh(h.written)) {
		snprintf(err, errlen,
			 "%s: verify_state_load=1: %s: written: %" PRIu64 " blocks in the header, %" PRIu64 " in the map",
			 td->o->name, path, (uint64_t)le64toh(h.written), nr);
		return ret;
	}
	td->written_blocks = nr;
	return 0;
}

/* After the job: one error naming the first bad block, and the rest. */
static void job_verify_finish(struct job_thread *td)
{
	struct bench_job_result *r = td->res;

	if (!r->verify_mismatches)
		return;
	if (r->verify_mismatches > td->verify_msgs)
		fprintf(stderr,
			"verify: job %u: %" PRIu64 " more bad blocks not reported (at most %d messages per thread)\n",
			r->jobnum, r->verify_mismatches - td->verify_msgs,
			VERIFY_MAX_MSGS);
	if (!r->error) {
		r->error = -EILSEQ;
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "verify: %" PRIu64 " of %" PRIu64 " blocks bad, the first at offset %" PRIu64,
			 r->verify_mismatches, r->verify_blocks,
			 td->verify_first_bad);
	}
}

static void job_files_detach(struct job_thread *td)
{
	unsigned int i;

	for (i = 0; i < td->nr_files; i++) {
		if (td->files[i].ctx)
			blk_ctx_detach(td->files[i].ctx);
		td->files[i].ctx = NULL;
	}
	td->ctx = NULL;
}

/* stage_timers=1: add @ctx's stage statistics to the thread's result. */
static void job_stages_add(struct job_thread *td, const struct blk_mq_ctx *ctx)
{
	struct bench_job_result *r = td->res;
	bool fresh = !r->stages;

	if (fresh) {
		r->stages = malloc(sizeof(*r->stages));
		if (!r->stages)
			return;
		blk_stage_stats_init(r->stages, 0, 0, 0);
	}
	if (blk_ctx_get_stage_stats(ctx, r->stages) == -ENODATA && fresh) {
		free(r->stages);
		r->stages = NULL;
	}
}

/* blk_wait() counters over every file's ctx (the last gain: the first's). */
static void job_files_wait_stats(struct job_thread *td)
{
	struct blk_wait_stats *w = &td->res->wait, one;
	unsigned int i;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < td->nr_files; i++) {
		if (!td->files[i].ctx)
			continue;
		blk_ctx_get_wait_stats(td->files[i].ctx, &one);
		job_stages_add(td, td->files[i].ctx);
		w->spins += one.spins;
		w->sleeps += one.sleeps;
		w->probes += one.probes;
		w->chose_spin += one.chose_spin;
		w->contended += one.contended;
		if (!i)
			w->last_gain = one.last_gain;
	}
}

/*
 * cpus_allowed=, cpumask=, numa_cpu_nodes=, numa_mem_policy=: the calling
 * job thread's CPUs and memory policy, in fio's order (backend.c
 * thread_main()): the CPU set (split: one CPU of it by the thread's
 * number), then the nodes' CPUs in its place, then the memory policy, to
 * which the thread's I/O buffers already allocated are moved.  0 or
 * -errno, with the job's error set.
 */
static int job_place(struct job_thread *td)
{
	const struct bench_job_opts *o = td->o;
	size_t buf_len = td->buf_mem_len;

	if (o->cpus_on) {
		cpu_set_t set = o->cpus;

		if (o->cpus_policy == CPUS_SPLIT) {
			unsigned int n = (unsigned int)CPU_COUNT(&o->cpus), k = 0, c;
			unsigned int want = td->thread_idx % n;

			CPU_ZERO(&set);
			for (c = 0; c < CPU_SETSIZE; c++) {
				if (!CPU_ISSET(c, &o->cpus))
					continue;
				if (k++ == want) {
					CPU_SET(c, &set);
					break;
				}
			}
		}
		if (sched_setaffinity(0, sizeof(set), &set)) {
			int err = -errno;

			job_error(td, err, "cpus_allowed/cpumask: sched_setaffinity: %s",
				  strerror(-err));
			return err;
		}
	}
	if (o->numa_cpus_on &&
	    sched_setaffinity(0, sizeof(o->numa_cpus), &o->numa_cpus)) {
		int err = -errno;

		job_error(td, err, "numa_cpu_nodes: sched_setaffinity: %s",
			  strerror(-err));
		return err;
	}
	if (o->mem_policy > MEMPOL_DEFAULT) {
		static const int mode[] = {
			[MEMPOL_PREFER] = MPOL_PREFERRED, [MEMPOL_BIND] = MPOL_BIND,
			[MEMPOL_INTERLEAVE] = MPOL_INTERLEAVE,
			[MEMPOL_LOCAL] = MPOL_LOCAL,
		};
		unsigned long mask = (unsigned long)o->mem_nodes;
		const unsigned long *m = o->mem_policy == MEMPOL_LOCAL ? NULL : &mask;
		unsigned long maxnode = m ? 65 : 0;

		if (syscall(SYS_set_mempolicy, mode[o->mem_policy], m, maxnode) ||
		    syscall(SYS_mbind, td->buf_mem, buf_len, mode[o->mem_policy], m,
			    maxnode, MPOL_MF_MOVE)) {
			int err = -errno;

			job_error(td, err, "numa_mem_policy: %s",
				  strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * fio's fio_terminate_threads() at a thread's end: with exitall in any
 * job (fio's is global), or exitall_on_error and an error, stop the
 * threads exit_what= names: group, those of its reporting group;
 * stonewall, every thread of the running stonewall group; all, those and
 * every later one, which then start and run none of their I/O.
 */
static void job_exit_others(struct job_thread *td)
{
	const struct bench_job_opts *o = td->o;
	unsigned int k, from = 0, to = td->nr_all;

	if (!td->exitall_any && !(o->exitall_on_error && td->res->error))
		return;
	if (o->exit_what == BENCH_EXIT_STONEWALL) {
		from = td->phase_first;
		to = td->phase_first + td->phase_n;
	}
	for (k = from; k < to; k++)
		if (&td->all[k] != td &&
		    (o->exit_what != BENCH_EXIT_GROUP ||
		     td->all[k].res->groupid == td->res->groupid))
			atomic_store(&td->all[k].terminate, true);
}
/*
 * fio's invalidate=1 (file_invalidate_cache(): posix_fadvise DONTNEED) and
 * pre_read=1 (pre_read_files(): the file read through once, which turns
 * invalidate off) on the job's regular files, before its clock starts.
 * Block devices are left alone (fio's BLKFLSBUF needs root and flushes
 * every user of the device); null and ram have no page cache.
 */
static void __attribute__((cold)) job_files_cache(struct job_thread *td)
{
	const struct bench_job_opts *o = td->o;
	unsigned int i, n = td->nr_files > 1 ? td->nr_files : 1;
	char *buf = NULL;

	for (i = 0; i < n; i++) {
		const char *path = td->nr_files > 1 ? td->files[i].path : td->file_path;
		uint64_t off = 0, end;
		struct stat st;
		ssize_t r;
		int fd;

		if (!path || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		if (!o->pre_read) {
			if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
				fprintf(stderr, "blkstack bench: invalidate=1: %s: cannot drop its cache\n",
					path);
			close(fd);
			continue;
		}
		/* one file: the job's region of it; several: each whole */
		end = (uint64_t)st.st_size;
		if (td->nr_files <= 1) {
			off = td->offset;
			if (td->nr_blocks * o->bs < end - (off < end ? off : end))
				end = off + td->nr_blocks * o->bs;
		}
		if (!buf && !(buf = malloc(1 << 20))) {
			close(fd);
			break;
		}
		while (off < end &&
		       (r = pread(fd, buf, end - off < (1 << 20) ? end - off : (1 << 20),
				  (off_t)off)) > 0)
			off += (uint64_t)r;
		close(fd);
	}
	free(buf);
}

/*
 * write_iolog=FILE: opened for appending, as fio's (init_iolog()), with
 * the header and each file's add and open; an error is the job's.
 */
static void __attribute__((cold)) job_iolog_open(struct job_thread *td)
{
	unsigned int i, n = td->nr_files > 1 ? td->nr_files : 1;

	td->iolog = fopen(td->o->write_iolog, "ae");
	if (!td->iolog) {
		job_error(td, -errno, "write_iolog=%s: %s", td->o->write_iolog,
			  strerror(errno));
		td->stop = true;
		return;
	}
	td->iolog_t0 = bench_now_ns();
	fputs("fio version 3 iolog\n", td->iolog);
	for (i = 0; i < n; i++)
		job_iolog(td, i, "add", false, 0, 0);
	for (i = 0; i < n; i++)
		job_iolog(td, i, "open", false, 0, 0);
	td->prep_hook = true;
}

static void __attribute__((cold)) job_iolog_close(struct job_thread *td)
{
	unsigned int i, n = td->nr_files > 1 ? td->nr_files : 1;

	for (i = 0; i < n; i++)
		job_iolog(td, i, "close", false, 0, 0);
	if (fclose(td->iolog))
		job_error(td, -errno, "write_iolog=%s: %s", td->o->write_iolog,
			  strerror(errno));
	td->iolog = NULL;
}

static void *job_thread_fn(void *arg)
{
	struct job_thread *td = arg;
	const struct bench_job_opts *o = td->o;
	uint64_t now, clock0, ramp_end, runtime_end = 0, work_ns, verify_ns = 0;
	uint64_t verify_start = 0, window_end;
	bool workload_reads;
	unsigned int d;
	struct rusage ru;
	int ret;

	/* placed first: the ctx and the device's queue follow the CPU */
	if (o->cpus_on || o->numa_cpus_on || o->mem_policy > MEMPOL_DEFAULT) {
		ret = job_place(td);
		if (ret) {
			pthread_barrier_wait(td->start_barrier);
			goto out;
		}
	}
	if (td->nr_files > 1) {
		/* a ctx on every file's device; the first file is current */
		for (d = 0, ret = 0; d < td->nr_files && !ret; d++) {
			ret = blk_ctx_attach(td->files[d].dev, &td->files[d].ctx);
			if (!ret)
				blk_ctx_register_buffer(td->files[d].ctx, td->buf,
							(size_t)o->iodepth * td->buf_bs);
		}
		td->ctx = td->files[td->cur_file].ctx;
	} else {
		ret = blk_ctx_attach(td->dev, &td->ctx);
		/* io_uring fixed buffers; drivers without the notion say -EOPNOTSUPP */
		if (!ret)
			blk_ctx_register_buffer(td->ctx, td->buf,
						(size_t)o->iodepth * td->buf_bs);
	}
	pthread_barrier_wait(td->start_barrier);
	if (ret) {
		job_error(td, ret, "cannot attach to the device: %s",
			  strerror(-ret));
		if (td->nr_files > 1)
			job_files_detach(td);
		goto out;
	}
	if (td->nr_waitee) {
		/* fio's wait_for: every thread of the waitee job has ended */
		unsigned int w = 0;

		while (w < td->nr_waitee &&
		       !atomic_load_explicit(&bench_interrupted, memory_order_relaxed) &&
		       !atomic_load(&td->terminate)) {
			if (atomic_load(&td->waitee[w].progress.done))
				w++;
			else
				job_pause(1000000, 0);
		}
	}
	if (o->startdelay_ns || o->startdelay_max_ns) {
		/* fio's startdelay: the job's clock starts after it */
		uint64_t delay = o->startdelay_ns, end;

		if (o->startdelay_max_ns > delay)
			delay += rng_below(&td->rng, o->startdelay_max_ns - delay + 1);
		end = bench_now_ns() + delay;
		while (!atomic_load_explicit(&bench_interrupted, memory_order_relaxed) &&
		       !atomic_load(&td->terminate) &&
		       (now = bench_now_ns()) < end)
			job_pause(end - now, 0);
	}
	if (o->invalidate || o->pre_read)
		job_files_cache(td);
	if (o->write_iolog[0])
		job_iolog_open(td);
	now = bench_now_ns();
	td->t_start = now;
	atomic_store(&td->progress.start_ns, now);
	for (d = 0; d < DDIR_NR; d++)
		td->rate_next[d] = now;
	clock0 = now;
	if (td->flow && !o->startdelay_ns && !o->startdelay_max_ns) {
		uint64_t first = 0;

		/* the flow's common clock: the first thread's start */
		if (!atomic_compare_exchange_strong(&td->flow->t0, &first, now))
			clock0 = first;
		td->flow_clock = true;
	}
	/* saturating: a huge ramp_time or runtime means no end */
	if (__builtin_add_overflow(clock0, o->ramp_time_ns, &ramp_end))
		ramp_end = UINT64_MAX;
	if (o->runtime_ns &&
	    __builtin_add_overflow(ramp_end, o->runtime_ns, &runtime_end))
		runtime_end = UINT64_MAX;
	/*
	 * Count from the start; the end of the ramp resets the statistics
	 * and starts the window again.  A job that ends within its ramp
	 * (size-based, an error, an interrupt) so reports its whole run.
	 */
	job_measure_start(td, now);
	td->ramping = o->ramp_time_ns != 0;
	if (td->zbdj.zbd)
		bench_zbd_job_start(&td->zbdj);
	td->t_loop_end = now;

	/* stopped by exitall before it started: fio runs none of it */
	if (unlikely(atomic_load(&td->terminate))) {
		td->terminated = true;
		td->stop = true;
	}
	if (!o->verify_only && !o->create_only)
		job_loop(td, ramp_end, runtime_end);
	/* fio's end_fsync=1 and fsync_on_close=1: should_fsync(), a write job */
	if ((o->end_fsync || o->fsync_on_close) && !o->create_only &&
	    !td->res->error &&
	    !td->interrupted && !td->abandoned && bench_rw_writes(o->rw)) {
		td->sync_kind = SYNC_END;
		job_sync(td);
	}
	if (td->flow) {	/* fio's flow_put() */
		atomic_fetch_sub(&td->flow->counter, td->flow_counter);
		atomic_fetch_sub(&td->flow->total_weight, o->flow);
	}
	work_ns = td->t_loop_end - td->t_measure;
	window_end = td->t_loop_end;
	/* fio saves when the writes end, however they end */
	if (o->verify_state_save && td->written && !o->verify_only)
		job_state_save(td);
	if (td->verify_after && !td->res->error && !td->interrupted &&
	    !td->terminated) {
		verify_start = bench_now_ns();
		job_verify_phase(td);
		window_end = bench_now_ns();
		verify_ns = window_end - verify_start;
	}
	job_verify_finish(td);
	if (td->iolog)
		job_iolog_close(td);
	/* fio's per-direction runtimes: the verify phase is the reads' */
	for (d = 0; d < DDIR_NR; d++) {
		td->res->dir[d].runtime_ns = work_ns;
		td->res->dir[d].start_ns = td->t_measure;
	}
	if (td->verify_after) {
		/* verify_backlog= reads back during the workload */
		workload_reads = !o->verify_only &&
				 (bench_rw_reads(o->rw) || td->backlog);
		td->res->verify_ns = verify_ns;
		td->res->dir[DDIR_READ].runtime_ns = verify_ns +
			(workload_reads ? work_ns : 0);
		if (!workload_reads && verify_start)
			td->res->dir[DDIR_READ].start_ns = verify_start;
	}
	td->res->runtime_ns = work_ns + verify_ns;
	td->res->latency_depth = td->lat_qd;
	td->res->zone_resets = td->zbdj.resets;
	if (td->log)
		bench_log_finish(td->log, window_end - td->t_measure);
	td->res->window_start_ns = td->t_measure;
	td->res->window_end_ns = window_end;
	getrusage(RUSAGE_THREAD, &ru);
	td->res->usr_cpu_s = tv_s(ru.ru_utime) - tv_s(td->ru_start.ru_utime);
	td->res->sys_cpu_s = tv_s(ru.ru_stime) - tv_s(td->ru_start.ru_stime);
	td->res->ctx_switches = (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw -
					   td->ru_start.ru_nvcsw -
					   td->ru_start.ru_nivcsw);
	td->res->minf = (uint64_t)(ru.ru_minflt - td->ru_start.ru_minflt);
	td->res->majf = (uint64_t)(ru.ru_majflt - td->ru_start.ru_majflt);
	job_publish_progress(td);
	if (td->nr_files > 1) {
		job_files_wait_stats(td);
		if (td->abandoned)
			goto out;
		job_files_detach(td);
		goto out;
	}
	blk_ctx_get_wait_stats(td->ctx, &td->res->wait);
	job_stages_add(td, td->ctx);
	if (td->abandoned)
		goto out; /* the ctx still has requests: detach would wait */
	blk_ctx_detach(td->ctx);
	td->ctx = NULL;
out:
	job_exit_others(td);
	atomic_store(&td->progress.done, true);
	return NULL;
}

/* Physical memory in bytes; UINT64_MAX when unknown (no limit). */
static uint64_t bench_phys_mem(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t b;

	if (pages <= 0 || psz <= 0 ||
	    __builtin_mul_overflow((uint64_t)pages, (uint64_t)psz, &b))
		return UINT64_MAX;
	return b;
}

const char *bench_fmt_bytes(char *buf, size_t len, uint64_t v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double d = (double)v;
	unsigned int u = 0;

	while (d >= 1024.0 && u < 6) {
		d /= 1024.0;
		u++;
	}
	if (d == floor(d))
		snprintf(buf, len, "%.0f %s", d, units[u]);
	else
		snprintf(buf, len, "%.2f %s", d, units[u]);
	return buf;
}

/* The largest random map (norandommap=0) a thread may have, bytes. */
#define BENCH_RANDMAP_MAX (1ull << 30)

/* Bytes of a random map of @nr_blocks bits and its summary of full words. */
static uint64_t randmap_bytes(uint64_t nr_blocks)
{
	uint64_t words = (nr_blocks + 63) / 64;

	return (words + (words + 63) / 64) * 8;
}

/*
 * An empty random map of @nr_blocks bits, the last word's missing blocks
 * marked used.  calloc'd: the pages stay untouched until picks reach
 * them, and the first pass needs no clear inside the measured loop.
 */
static int randmap_alloc(uint64_t nr_blocks, uint64_t **map, uint64_t **full,
			 uint64_t *words, uint64_t *full_words)
{
	*words = (nr_blocks + 63) / 64;
	*full_words = (*words + 63) / 64;
	*map = calloc(*words, 8);
	*full = calloc(*full_words, 8);
	if (!*map || !*full)
		return -ENOMEM;
	if (nr_blocks & 63)
		(*map)[*words - 1] = ~0ull << (nr_blocks & 63);
	return 0;
}

/*
 * fio's share of size= for file @i of @nr (filesetup.c setup_files()):
 * size / nr, and the first files one block (@bs, the smallest) more while
 * what is left lasts.
 */
static uint64_t job_file_share(uint64_t size, unsigned int nr, unsigned int i,
			       uint32_t bs)
{
	uint64_t share = size / nr;

	return share + (i < (size - share * nr) / bs ? bs : 0);
}

/*
 * Several files: each one's region, as fio's setup_files() sizes them:
 * filesize= (within the file), else size= shared out
 * (job_file_share()), else size=N% of each file, else the file from
 * offset on.  The job's bytes per loop are the regions' sum, or size=
 * when that is less (with filesize=).
 */
static int job_files_region(struct job_thread *td,
			    const struct bench_job_opts *o, char *err,
			    size_t errlen)
{
	unsigned int i;

	td->region_bytes = 0;
	for (i = 0; i < td->nr_files; i++) {
		struct job_file *f = &td->files[i];
		uint64_t cap = f->capacity, len;
		uint64_t room = td->offset < cap ? cap - td->offset : 0;

		if (o->filesize) {
			len = o->filesize > td->offset ? o->filesize - td->offset : 0;
			if (len > room)
				len = room;
		} else if (o->size_pct) {
			len = (uint64_t)((unsigned __int128)cap * o->size_pct / 100);
			if (len > room)
				len = room;
			len = len / o->bs * o->bs;
		} else if (o->size) {
			/* whole blocks of the share, as fio issues them */
			len = job_file_share(o->size, td->nr_files, i, o->bs);
			len -= len % o->bs;
		} else {
			len = room;
		}
		if (td->offset >= cap || len > room) {
			snprintf(err, errlen,
				 "%s: %s: offset=%llu size=%llu: past the end of the %llu-byte file",
				 o->name, f->path, (unsigned long long)td->offset,
				 (unsigned long long)len, (unsigned long long)cap);
			return -ERANGE;
		}
		f->nr_blocks = len / o->bs;
		if (!f->nr_blocks) {
			snprintf(err, errlen,
				 "%s: %s: its share of the job, %llu bytes, is smaller than bs=%u",
				 o->name, f->path, (unsigned long long)len, o->bs);
			return -EINVAL;
		}
		td->region_bytes += f->nr_blocks * o->bs;
	}
	if (o->size && o->filesize && !o->size_pct &&
	    o->size / o->bs * o->bs < td->region_bytes)
		td->region_bytes = o->size / o->bs * o->bs;
	td->nr_blocks = td->files[0].nr_blocks;
	return 0;
}

/*
 * mem=: the thread's I/O buffers, @len bytes, from where fio's memory.c
 * takes them: posix_memalign (page-aligned, as fio aligns for O_DIRECT),
 * a private System V segment (removed at once: it goes when detached),
 * or mmap, anonymous and private or of a file (shared for mmapshared and
 * mmaphuge, as fio maps them); huge types in whole hugepage-size units.
 * iomem_align= puts @td->buf that far into the page.
 */
static int job_buf_alloc(struct job_thread *td, size_t len, char *err,
			 size_t errlen)
{
	static const char *const names[] = {
		"malloc", "shm", "shmhuge", "mmap", "mmaphuge", "mmapshared",
	};
	const struct bench_job_opts *o = td->o;
	size_t total = len + o->mem_align;
	bool huge = o->mem_type == BENCH_MEM_SHMHUGE ||
		    o->mem_type == BENCH_MEM_MMAPHUGE;
	const char *what = "";
	void *mem = NULL;
	int rc = 0;

	td->buf_fd = -1;
	if (huge)
		total = (total + o->hugepage_size - 1) & ~(o->hugepage_size - 1);
	switch (o->mem_type) {
	case BENCH_MEM_MALLOC:
		rc = -posix_memalign(&mem, 4096, total);
		what = "posix_memalign";
		break;
	case BENCH_MEM_SHM:
	case BENCH_MEM_SHMHUGE: {
		int id = shmget(IPC_PRIVATE, total, IPC_CREAT | 0600 |
				(huge ? SHM_HUGETLB : 0));

		what = "shmget";
		if (id < 0) {
			rc = -errno;
			break;
		}
		mem = shmat(id, NULL, 0);
		what = "shmat";
		if (mem == (void *)-1) {
			rc = -errno;
			mem = NULL;
		}
		shmctl(id, IPC_RMID, NULL);
		break;
	}
	default: {
		int flags = MAP_PRIVATE | MAP_ANONYMOUS;

		if (o->mem_file[0]) {
			struct stat st;

			td->buf_unlink = access(o->mem_file, F_OK) != 0;
			td->buf_fd = open(o->mem_file, O_RDWR | O_CREAT | O_CLOEXEC,
					  0644);
			what = "open";
			if (td->buf_fd < 0) {
				rc = -errno;
				td->buf_unlink = false;
				break;
			}
			/* fio leaves a shared or huge file short: SIGBUS */
			what = "ftruncate";
			if (fstat(td->buf_fd, &st) ||
			    ((size_t)st.st_size < total &&
			     ftruncate(td->buf_fd, (off_t)total))) {
				rc = -errno;
				break;
			}
			flags = o->mem_type == BENCH_MEM_MMAP ? MAP_PRIVATE :
								MAP_SHARED;
		} else if (huge) {
			flags |= MAP_HUGETLB;
		}
		mem = mmap(NULL, total, PROT_READ | PROT_WRITE, flags,
			   td->buf_fd, 0);
		what = "mmap";
		if (mem == MAP_FAILED) {
			rc = -errno;
			mem = NULL;
		}
		break;
	}
	}
	if (!rc && !mem)
		rc = -ENOMEM;
	if (rc) {
		snprintf(err, errlen,
			 "%s: mem=%s%s%s: %s of %zu bytes for iodepth=%u bs=%u: %s%s",
			 o->name, names[o->mem_type], o->mem_file[0] ? ":" : "",
			 o->mem_file, what, total, o->iodepth, td->buf_bs,
			 strerror(-rc),
			 huge ? " (huge pages: see /proc/sys/vm/nr_hugepages and hugepage-size=)" : "");
		if (td->buf_fd >= 0) {
			close(td->buf_fd);
			if (td->buf_unlink)
				unlink(o->mem_file);
			td->buf_fd = -1;
			td->buf_unlink = false;
		}
		return rc;
	}
	td->buf_mem = mem;
	td->buf_mem_len = total;
	td->buf = (char *)mem + o->mem_align;
	return 0;
}

static void job_buf_free(struct job_thread *td)
{
	if (!td->buf_mem)
		return;
	switch (td->o->mem_type) {
	case BENCH_MEM_MALLOC:
		free(td->buf_mem);
		break;
	case BENCH_MEM_SHM:
	case BENCH_MEM_SHMHUGE:
		shmdt(td->buf_mem);
		break;
	default:
		munmap(td->buf_mem, td->buf_mem_len);
		if (td->buf_fd >= 0)
			close(td->buf_fd);
		if (td->buf_unlink)
			unlink(td->o->mem_file);
		break;
	}
	td->buf_mem = td->buf = NULL;
}

/*
 * What a job's writes carry, from its buffer options as fio's
 * fixup_options(), setup_td_flags() and the options' callbacks settle
 * them; then the buffers' first fill (fio's init_io_u()).
 */
static void job_buf_setup(struct job_thread *td)
{
	const struct bench_job_opts *o = td->o;
	uint8_t given = o->buf_given;
	bool writes = bench_rw_writes(o->rw) && !o->verify_only;
	bool zero = o->zero_buffers, refill, scramble;
	/* fio's TD_F_COMPRESS: either option given, even at 0 */
	bool compress = given & (BENCH_BUF_COMPRESS | BENCH_BUF_DEDUPE);
	uint32_t pct = o->compress_pct;
	char *p;
	unsigned int i;

	/* fio: fully compressible is zeros, filled once */
	if (pct == 100) {
		zero = true;
		pct = 0;
	}
	td->buf_pct = pct;
	td->buf_chunk = o->compress_chunk;
	td->buf_kind = pct || o->dedupe_pct ? BUFK_PCT :
		       o->buf_pat.len ? BUFK_PATTERN : zero ? BUFK_ZERO :
		       BUFK_RANDOM;
	refill = o->refill_buffers;
	if (!(given & BENCH_BUF_REFILL)) {
		/* buffer_pattern: refilled when reads could overwrite it */
		if (o->buf_pat.len)
			refill = pct || bench_rw_reads(o->rw);
		if (pct || o->verify != VERIFY_NONE)
			refill = true;
	}
	if (o->dedupe_pct)
		refill = true;
	scramble = o->scramble_buffers && !o->buf_pat.len &&
		   ((given & BENCH_BUF_SCRAMBLE) ||
		    !(o->zero_buffers && (given & BENCH_BUF_ZERO))) &&
		   !refill && !compress && o->verify == VERIFY_NONE;
	td->buf_refill = writes && refill;
	td->buf_scramble = writes && scramble;
	if (td->buf_refill || td->buf_scramble)
		td->prep_hook = true;
	buf_rng_init(&td->buf_rng, o->randseed, td->thread_idx);
	td->buf_next = rng_next(&td->buf_rng);
	rng_seed(&td->dd_rng, o->randseed ^ 0x6465647570652121ull ^
		 ((uint64_t)td->thread_idx << 32));
	if (writes && !td->buf_refill) {
		for (i = 0, p = td->buf; i < o->iodepth; i++, p += td->buf_bs)
			job_buf_fill(td, p, td->buf_bs);
		return;
	}
	/* refilled before each write, or never written: random once */
	rng_seed(&td->rng, o->randseed ^ 0x5bd1e995u);
	for (p = td->buf; p < (char *)td->buf + (size_t)o->iodepth * td->buf_bs; p += 8) {
		uint64_t v = rng_next(&td->rng);

		memcpy(p, &v, 8);
	}
}

/*
 * dedupe_mode=working_set (fio's init_dedupe_working_set_seeds()): the
 * set is the seeds of the first dedupe_working_set_percentage of the
 * region's blocks of unique buffers the thread writes; with
 * dedupe_global, shared out in turn over every thread of the run from
 * this one on, the first seeds of each.  After every thread's setup.
 */
static int job_dedupe_setup(struct job_thread *td, char *err, size_t errlen)
{
	const struct bench_job_opts *o = td->o;
	uint64_t i, n, per;
	unsigned int t = td->thread_idx;
	struct rng r;

	if (!td->buf_refill || !o->dedupe_pct || o->dedupe_pct == 100 ||
	    o->dedupe_mode != BENCH_DEDUPE_WORKING_SET)
		return 0;
	n = td->region_bytes / 100 * o->dedupe_ws_pct / o->bs +
	    td->region_bytes % 100 * o->dedupe_ws_pct / 100 / o->bs;
	if (!n) {
		snprintf(err, errlen,
			 "%s: dedupe_working_set_percentage=%u of %llu bytes is less than one block of bs=%u",
			 o->name, o->dedupe_ws_pct,
			 (unsigned long long)td->region_bytes, o->bs);
		return -EINVAL;
	}
	td->dd_ws = malloc(n * sizeof(*td->dd_ws));
	if (!td->dd_ws) {
		snprintf(err, errlen,
			 "%s: out of memory for a dedupe working set of %llu blocks",
			 o->name, (unsigned long long)n);
		return -ENOMEM;
	}
	td->dd_nr_ws = n;
	per = n / td->nr_all ? n / td->nr_all : 1;
	buf_rng_init(&r, o->randseed, t);
	for (i = 0; i < n; i++) {
		if (o->dedupe_global && i && i % per == 0) {
			const struct job_thread *x;

			t = (t + 1) % td->nr_all;
			x = &td->all[t];
			buf_rng_init(&r, x->o->randseed, x->thread_idx);
		}
		td->dd_ws[i] = rng_next(&r);
	}
	return 0;
}

/*
 * lockmem= (fio's fio_pin_memory()): @o->lockmem bytes of anonymous
 * memory, mlock(2)ed until the job's teardown; at most the machine's
 * memory less 128 MiB, as fio (noted).  0 or -errno, with @err naming
 * the option and RLIMIT_MEMLOCK when the lock is refused.
 */
static int job_pin_memory(struct job_thread *td, const struct bench_job_opts *o,
			  char *err, size_t errlen)
{
	uint64_t len = o->lockmem, phys = bench_phys_mem();
	struct rlimit rl;
	int e;

	if (!len)
		return 0;
	if (phys != UINT64_MAX && phys > (128ull << 20) &&
	    len + (128ull << 20) > phys) {
		len = phys - (128ull << 20);
		fprintf(stderr, "blkstack bench: note: %s: limiting mlocked memory to %" PRIu64 "MiB (as fio)\n",
			o->name, len >> 20);
	}
	td->pinned = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (td->pinned == MAP_FAILED) {
		e = errno;
		td->pinned = NULL;
		snprintf(err, errlen, "%s: lockmem=%" PRIu64 ": mmap: %s",
			 o->name, o->lockmem, strerror(e));
		return -e;
	}
	if (mlock(td->pinned, (size_t)len)) {
		e = errno;
		munmap(td->pinned, (size_t)len);
		td->pinned = NULL;
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			snprintf(err, errlen,
				 "%s: lockmem=%" PRIu64 ": mlock(2): %s (RLIMIT_MEMLOCK is %llu bytes: raise it, ulimit -l, or run with CAP_IPC_LOCK)",
				 o->name, o->lockmem, strerror(e),
				 (unsigned long long)rl.rlim_cur);
		else
			snprintf(err, errlen, "%s: lockmem=%" PRIu64 ": mlock(2): %s",
				 o->name, o->lockmem, strerror(e));
		return -e;
	}
	td->pinned_len = (size_t)len;
	return 0;
}

/*
 * The refusal's note when the device is a file whose size is not a whole
 * number of blocks: the device is the file rounded down, and its size
 * alone ("the 9728-byte device" for a 10000-byte file) reads as a mistake.
 */
static void dev_size_note(const struct bench_job_opts *o, uint64_t dev_size,
			  uint32_t lbs, char *note, size_t len)
{
	struct stat st;

	note[0] = '\0';
	if (o->filename[0] && !strchr(o->filename, ':') &&
	    !stat(o->filename, &st) && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size > dev_size)
		snprintf(note, len, " (%s is %llu bytes: the device is its whole %u-byte blocks)",
			 o->filename, (unsigned long long)st.st_size, lbs);
}

static int job_setup(struct job_thread *td, const struct bench_job_opts *o,
		     uint64_t dev_size, uint32_t lbs, unsigned int seed_idx,
		     char *err, size_t errlen)
{
	unsigned int jobnum = td->res->jobnum;
	uint64_t size, inc = 0;
	unsigned int i, d;
	int ret;

	uint64_t offset = o->offset, io_size = o->io_size;

	td->o = o;
	td->thread_idx = seed_idx;
	td->buf_bs = o->bs;
	if (o->bssplit_nr || o->bs_max) {
		/* blocks of the smallest size; buffers of the largest */
		uint32_t lo = o->bs_min, hi = o->bs_max;

		if (o->bssplit_nr) {
			lo = hi = o->bssplit_bs[0];
			for (i = 1; i < o->bssplit_nr; i++) {
				if (o->bssplit_bs[i] < lo)
					lo = o->bssplit_bs[i];
				if (o->bssplit_bs[i] > hi)
					hi = o->bssplit_bs[i];
			}
		}
		td->var_opts = *o;
		td->var_opts.bs = lo;
		td->o = o = &td->var_opts;
		td->buf_bs = hi;
		td->var_bs = true;
	}
	/* fio's offset=N%: that share of the device, aligned down to bs */
	if (o->offset_pct)
		offset = (uint64_t)((unsigned __int128)dev_size * o->offset_pct / 100) /
			 o->bs * o->bs;
	/* offset_increment: thread N of the job starts N increments further */
	if (__builtin_mul_overflow(o->offset_increment, (uint64_t)jobnum, &inc) ||
	    __builtin_add_overflow(offset, inc, &td->offset))
		td->offset = UINT64_MAX;
	if (td->nr_files > 1) {
		/* each file's region (the alignment: @lbs is the largest) */
		ret = job_files_region(td, o, err, errlen);
		if (ret)
			return ret;
		size = td->region_bytes;
		if (o->bs % lbs || td->offset % lbs)
			goto misaligned;
		goto region_set;
	}
	size = o->size ? o->size : td->offset < dev_size ? dev_size - td->offset : 0;
	/* fio: with filesize=, the I/O stays within the file, size= or not */
	if (o->filesize && td->offset < dev_size && size > dev_size - td->offset)
		size = dev_size - td->offset;
	/* fio's size=N%: that share of the device, within what offset leaves */
	if (o->size_pct && td->offset < dev_size) {
		size = (uint64_t)((unsigned __int128)dev_size * o->size_pct / 100);
		if (size > dev_size - td->offset)
			size = dev_size - td->offset;
		size = size / o->bs * o->bs;
	}
	if (td->offset >= dev_size || size > dev_size - td->offset) {
		char note[4096 + 96];

		dev_size_note(o, dev_size, lbs, note, sizeof(note));
		if (o->offset_increment)
			snprintf(err, errlen,
				 "%s: offset=%llu + %u * offset_increment=%llu, size=%llu: past the end of the %llu-byte device%s",
				 o->name, (unsigned long long)o->offset, jobnum,
				 (unsigned long long)o->offset_increment,
				 (unsigned long long)size,
				 (unsigned long long)dev_size, note);
		else
			snprintf(err, errlen,
				 "%s: offset=%llu size=%llu: past the end of the %llu-byte device%s",
				 o->name, (unsigned long long)o->offset,
				 (unsigned long long)size, (unsigned long long)dev_size,
				 note);
		return -ERANGE;
	}
	if (o->bs % lbs || td->offset % lbs) {
misaligned:
		snprintf(err, errlen,
			 "%s: bs=%u offset=%llu: must be multiples of the device's logical block size %u (a block device's sector size; with direct=1 the file system's O_DIRECT alignment)",
			 o->name, o->bs, (unsigned long long)td->offset, lbs);
		return -EINVAL;
	}
	td->nr_blocks = size / o->bs;
	if (!td->nr_blocks) {
		char note[4096 + 96] = "";

		/* no size= given: the size is the device's, say where from */
		if (!o->size && !o->size_pct) {
			dev_size_note(o, dev_size, lbs, note, sizeof(note));
			if (!note[0] && td->offset)
				snprintf(note, sizeof(note),
					 " (no size= given: the %llu-byte device from byte %llu)",
					 (unsigned long long)dev_size,
					 (unsigned long long)td->offset);
			else if (!note[0])
				snprintf(note, sizeof(note),
					 " (no size= given: the %llu-byte device)",
					 (unsigned long long)dev_size);
		}
		snprintf(err, errlen, "%s: size=%llu: smaller than bs=%u%s",
			 o->name, (unsigned long long)size, o->bs, note);
		return -EINVAL;
	}
	td->region_bytes = td->nr_blocks * o->bs;
region_set:
	/* as fio: io_size (or the region: every file's) per loop, loops times */
	if (!o->time_based)
	{
		/* fio's io_size=N%: that share of the region */
		uint64_t per_loop;

		if (o->io_size_pct)
			io_size = (uint64_t)((unsigned __int128)td->region_bytes *
					     o->io_size_pct / 100) / o->bs * o->bs;
		per_loop = io_size ? io_size : td->region_bytes;
		/*
		 * fio: number_ios ends each loop early, never extends it.  fio
		 * counts I/Os (exceeds_number_ios()): with one size that is
		 * number_ios blocks; with several, job_var_bs() counts them
		 */
		if (o->number_ios && td->var_bs)
			td->ios_left = o->number_ios * o->loops;
		else if (o->number_ios && o->number_ios < per_loop / o->bs)
			per_loop = o->number_ios * o->bs;
		td->bytes_limit = per_loop * o->loops;
	}
	if (o->read_iolog[0]) {
		/* read_iolog=: the log instead of the workload */
		struct bench_iolog log;

		if (bench_iolog_read(o->read_iolog, o->replay_scale, o->replay_align,
				     o->replay_time_scale, o->replay_redirect,
				     &log, err, errlen))
			return -EINVAL;
		td->rp = log.ents;
		td->rp_n = log.nr;
		td->bytes_limit = log.bytes;
		td->prep_hook = true;
	}
	/* rate= and rate_iops=, per direction: the stricter interval */
	td->pace_ddir = -1;
	for (d = 0; d < DDIR_NR; d++) {
		uint64_t ns = 0;

		if (o->rate_iops[d])
			ns = 1000000000ull / o->rate_iops[d];
		if (o->rate[d]) {
			uint64_t b = (uint64_t)((unsigned __int128)o->bs * 1000000000ull / o->rate[d]);

			if (b > ns)
				ns = b;
		}
		if (ns && o->rate_iops[d] > 1000000000ull)
			ns = 1;
		if (ns && o->rate_poisson) {
			/* fio: iops = rate / smallest bs; mean = 1e6 / iops in whole us */
			uint64_t iops = o->rate_iops[d] ? o->rate_iops[d] :
							  o->rate[d] / o->bs;

			td->poisson_mean_ns[d] = iops ? 1000000 / iops * 1000 : 0;
			if (!td->poisson_mean_ns[d])
				ns = 0;	/* past 1M IOPS: fio's gap is 0 us */
		}
		td->rate_ns[d] = ns;
		td->rate_on |= ns != 0;
	}
	if (td->rate_on && o->rate_poisson)
		rng_seed(&td->prng, (job_repeat(o) ? o->randseed : bench_gettime_ns()) ^
			 0x706f6973736f6eull ^ ((uint64_t)seed_idx << 32));
	td->think_left = job_think_blocks(o);
	td->think_since = bench_now_ns();	/* fio: the job's epoch */
	td->fst_left = o->fst_nr ? o->fst_nr : 1;
	td->lat_target = o->latency_target_ns != 0;
	td->lat_qd = o->iodepth;
	td->reap_batch = o->batch_complete_set;
	if (o->iodepth_low && o->iodepth_low < o->iodepth) {
		td->depth_low = o->iodepth_low;
		td->reap_batch = true;
		td->res->depth_hist_on = true;
	}
	td->rate_min_on = false;
	for (d = 0; d < DDIR_NR; d++)
		td->rate_min_on |= o->rate_min[d] || o->rate_iops_min[d];
	td->paced = td->rate_on || o->thinktime_ns || o->flow || td->lat_target;
	td->tick_slow = td->rate_min_on || o->ss_dur_ns || td->lat_target ||
			td->snap;
	if (td->var_bs)
		td->prep_hook = true;
	if (o->rw_mod) {
		td->prep_hook = true;
		td->seq_skip = o->rw_mod / (int64_t)o->bs;
	}
	/* stats=0: the job is left out of the report, so no timestamps */
	td->lat = !o->gtod_reduce && !o->stats_off &&
		  !(o->disable_lat && o->disable_clat && o->disable_slat);
	td->no_slat = o->disable_slat;
	td->no_clat = o->disable_clat;
	td->no_tlat = o->disable_lat;
	td->lat_some = td->lat && (td->no_slat || td->no_clat || td->no_tlat);
	td->res->lat_valid = td->lat;
	if (o->verify != VERIFY_NONE) {
		/*
		 * As fio: a job that writes fills every write with a header
		 * and seeded data and, with do_verify, reads them all back
		 * after the workload; a job that only reads checks every
		 * read; verify_only skips the workload and checks the region.
		 */
		bool writes = bench_rw_writes(o->rw) && !o->verify_only;

		td->res->verify = true;
		td->res->verify_method = (uint8_t)o->verify;
		td->vspec.method = o->verify;
		td->vspec.interval = o->verify_interval;
		td->vspec.hdr_off = o->verify_offset;
		td->vspec.pat = o->verify_pat.len ? &o->verify_pat : NULL;
		/* fio's verify=null writes the buffers as they are */
		td->fill_writes = writes && o->verify != VERIFY_NULL;
		td->check_reads = !writes && !o->verify_only;
		if (writes && (o->do_verify || o->verify_state_save)) {
			td->written = calloc((td->nr_blocks + 63) / 64, 8);
			if (!td->written)
				goto nomem;
			if (o->trim_percentage && o->trim_backlog) {
				td->trimq_cap = o->trim_backlog + o->iodepth;
				td->trimq = calloc(td->trimq_cap, 8);
				if (!td->trimq)
					goto nomem;
				if (o->trim_verify_zero) {
					td->trimmed = calloc((td->nr_blocks + 63) / 64, 8);
					if (!td->trimmed)
						goto nomem;
				}
			}
			if (o->verify_backlog) {
				td->backlog_cap = o->verify_backlog + o->iodepth;
				td->backlog = calloc(td->backlog_cap, 8);
				if (!td->backlog)
					goto nomem;
			}
		}
		if (o->verify_state_load) {
			ret = job_state_load(td, err, errlen);
			if (ret)
				return ret;
		}
		td->verify_after = (td->written && o->do_verify) ||
				   o->verify_only;
		td->prep_hook = td->fill_writes || td->backlog || td->trimq ||
				o->rw_mod ||
				td->var_bs;
		td->reap_hook = td->written || td->check_reads;
		rng_seed(&td->vrng, (job_repeat(o) ? o->randseed :
				     bench_gettime_ns()) ^ 0x76657269667931ull ^
			 ((uint64_t)seed_idx << 32));
		rng_seed(&td->trng, (o->randrepeat ? o->randseed :
				     bench_gettime_ns()) ^ 0x7472696d76657269ull ^
			 ((uint64_t)seed_idx << 32));
	}
	if (td->lat_target)
		td->reap_hook = true;	/* job_lat_reaped() */
	td->max_lat = o->max_latency_ns[DDIR_READ] || o->max_latency_ns[DDIR_WRITE];
	if (td->max_lat)
		td->reap_hook = true;	/* job_max_lat_reaped() */
	td->ios = calloc(o->iodepth, sizeof(*td->ios));
	td->batch = calloc(o->iodepth, sizeof(*td->batch));
	if (!td->ios || !td->batch)
		goto nomem;
	ret = job_buf_alloc(td, (size_t)o->iodepth * td->buf_bs, err, errlen);
	if (ret)
		return ret;
	job_buf_setup(td);
	ret = job_pin_memory(td, o, err, errlen);
	if (ret)
		return ret;
	td->random = bench_rw_is_random(o->rw);
	if (td->random && o->ba && o->ba != o->bs) {
		/*
		 * fio's last_block(): the region less what the smallest
		 * block overhangs ba, in ba units (the options made ba 0
		 * when it is the smallest bs, and turned the map off)
		 */
		uint64_t max = td->region_bytes;

		if (td->nr_files > 1) {
			snprintf(err, errlen,
				 "%s: blockalign=%u with several files: not supported",
				 o->name, o->ba);
			return -EINVAL;
		}
		if (o->bs > o->ba)
			max = max > o->bs - o->ba ? max - (o->bs - o->ba) : 0;
		if (!(max / o->ba)) {
			snprintf(err, errlen, "%s: size=%llu: no room for blockalign=%u",
				 o->name, (unsigned long long)td->region_bytes, o->ba);
			return -EINVAL;
		}
		if (o->ba % lbs) {
			snprintf(err, errlen,
				 "%s: blockalign=%u: must be a multiple of the device's logical block size %u",
				 o->name, o->ba, lbs);
			return -EINVAL;
		}
		td->ba = o->ba;
		td->ba_end = td->offset + td->region_bytes;
		td->nr_blocks = max / o->ba;
		td->prep_hook = true;
	}
	if (o->zonemode == BENCH_ZONE_STRIDED) {
		/*
		 * fio's strided zones: random offsets within a zone of
		 * zonerange bytes, sequential ones from its start again
		 * when they reach its end; the job's bytes are still size=
		 */
		td->strided = true;
		td->prep_hook = true;
		td->zone_first = td->offset;
		td->zone_dev_end = dev_size;
		td->nr_blocks = td->random ? o->zonerange / o->bs :
			(o->zonerange + o->bs - 1) / o->bs;
		if ((o->zonerange + o->zoneskip) % lbs) {
			snprintf(err, errlen,
				 "%s: zonerange=%llu + zoneskip=%llu: must be a multiple of the device's logical block size %u",
				 o->name, (unsigned long long)o->zonerange,
				 (unsigned long long)o->zoneskip, lbs);
			return -EINVAL;
		}
	}
	if (o->zonemode == BENCH_ZONE_ZBD) {
		/* fio's zones: a job that writes works on whole zones */
		uint64_t off = td->offset, len = td->region_bytes;

		ret = bench_zbd_job_init(td->zbd_set, &td->zbdj, o, &off, &len,
					 err, errlen);
		if (ret)
			return ret;
		td->offset = off;
		td->nr_blocks = len / o->bs;
		td->region_bytes = td->nr_blocks * o->bs;
		if (!td->nr_blocks) {
			snprintf(err, errlen, "%s: zonemode=zbd: the region (%llu bytes) is smaller than bs=%u",
				 o->name, (unsigned long long)len, o->bs);
			return -EINVAL;
		}
		td->prep_hook = true;
	}
	td->bs_gran = o->bs_unaligned ? lbs : o->bs;
	for (d = 0; d < 3 && o->bs_ddir; d++) {
		uint32_t lo = o->bsd_min[d];

		for (i = 0; i < o->bsd_nr[d]; i++)
			if (!i || o->bsd_bs[d][i] < lo)
				lo = o->bsd_bs[d][i];
		td->bsd_gran[d] = o->bs_unaligned ? lbs : lo;
	}
	td->track_pos = td->var_bs && o->bs_unaligned && !td->random;
	td->pct_seq_on = td->random &&
			 (o->pct_seq[0] || o->pct_seq[1] || o->pct_seq[2]);
	if (td->pct_seq_on)
		rng_seed(&td->seq_rng, (job_repeat(o) ? o->randseed : bench_gettime_ns()) ^
			 0x73657172616e64ull ^ ((uint64_t)seed_idx << 32));
	if (td->pct_seq_on)
		td->prep_hook = true;
	switch (o->rw) {
	case RW_READ:
	case RW_RANDREAD:
		td->fixed_ddir = DDIR_READ;
		break;
	case RW_WRITE:
	case RW_RANDWRITE:
		td->fixed_ddir = DDIR_WRITE;
		break;
	case RW_TRIM:
	case RW_RANDTRIM:
		td->fixed_ddir = DDIR_TRIM;
		break;
	default:
		td->fixed_ddir = -1;
	}
	if (td->random && o->rand_dist != DIST_RANDOM) {
		uint64_t n = td->nr_blocks, k, to_gen = n < 10000000 ? n : 10000000;
		double center = o->dist_center;

		td->dist = o->rand_dist;
		td->prep_hook = true;
		switch (td->dist) {
		case DIST_ZIPF:
			for (k = 0; k < to_gen; k++)
				td->zeta_n += pow(1.0 / (double)(k + 1), o->dist_param);
			td->zeta_2 = 1.0 + pow(0.5, o->dist_param);
			break;
		case DIST_PARETO:
			td->pareto_pow = log(o->dist_param) / log(1.0 - o->dist_param);
			break;
		case DIST_NORMAL:
			td->gauss_dev = (uint64_t)ceil((double)n * o->dist_param / 100.0);
			if (td->gauss_dev > n / 2)
				td->gauss_dev = n / 2;
			/* fio's normal is centred on the middle by default */
			if (center < 0)
				center = 0.5;
			break;
		case DIST_ZONED:
		case DIST_ZONED_ABS: {
			uint64_t start = 0;

			for (k = 0; k < o->dist_zones; k++) {
				uint64_t len = td->dist == DIST_ZONED ?
					n * o->zone_size[k] / 100 :
					o->zone_size[k] / (td->ba ? td->ba : o->bs);

				if (start + len > n)
					len = start < n ? n - start : 0;
				td->zone_start[k] = start;
				td->zone_len[k] = len;
				start += len;
			}
			if (!start) {
				snprintf(err, errlen,
					 "%s: random_distribution=%s: the zones hold no block of bs=%u",
					 o->name, td->dist == DIST_ZONED ? "zoned" : "zoned_abs",
					 o->bs);
				return -EINVAL;
			}
			break;
		}
		}
		if (td->dist == DIST_NORMAL)
			td->dist_off = (uint64_t)((double)n * (center - 0.5) + (double)n) % n;
		else if (center >= 0)
			td->dist_off = (uint64_t)((double)n * center) % n;
		else
			td->dist_off = rng_next(&td->rng) % n;
	}
	/* as fio: a distribution other than random has no random map */
	if (td->random && !o->norandommap && o->rand_dist == DIST_RANDOM) {
		uint64_t map_bytes = 0, one, half = bench_phys_mem() / 2;
		char need[32], avail[32];

		/* a map per file; each within the limit, all within memory */
		for (i = 0; i < td->nr_files || !i; i++) {
			uint64_t nb = td->nr_files > 1 ? td->files[i].nr_blocks :
							 td->nr_blocks;

			one = randmap_bytes(nb);
			map_bytes += one;
			/* as fio: a map this size is a mistake, not a benchmark */
			if (one > BENCH_RANDMAP_MAX) {
				snprintf(err, errlen,
					 "%s: size=%llu bs=%u: the random map needs %s (one bit per block), more than the %s allowed; set norandommap, or use a larger bs or a smaller size",
					 o->name, (unsigned long long)(nb * o->bs),
					 o->bs, bench_fmt_bytes(need, sizeof(need), one),
					 bench_fmt_bytes(avail, sizeof(avail),
							 BENCH_RANDMAP_MAX));
				return -ENOMEM;
			}
		}
		if (map_bytes * o->numjobs > half) {
			snprintf(err, errlen,
				 "%s: size=%llu bs=%u numjobs=%u: the random maps need %s per thread (one bit per block), more than half of physical memory (%s) in all; set norandommap, or use a larger bs or a smaller size",
				 o->name, (unsigned long long)size, o->bs,
				 o->numjobs, bench_fmt_bytes(need, sizeof(need), map_bytes),
				 bench_fmt_bytes(avail, sizeof(avail), half));
			return -ENOMEM;
		}
		if (randmap_alloc(td->nr_blocks, &td->randmap, &td->randmap_full,
				  &td->randmap_words, &td->randmap_full_words))
			goto nomem;
		td->randmap_used = 0;
	}
	/* the other files' maps; the first file's are the fields' */
	if (td->nr_files > 1) {
		td->cur_file = 0;
		job_file_save(td);
		for (i = 1; i < td->nr_files; i++) {
			struct job_file *f = &td->files[i];

			if (td->written) {
				f->written = calloc((f->nr_blocks + 63) / 64, 8);
				if (!f->written)
					goto nomem;
			}
			if (td->randmap &&
			    randmap_alloc(f->nr_blocks, &f->randmap, &f->randmap_full,
					  &f->randmap_words, &f->randmap_full_words))
				goto nomem;
		}
		td->prep_hook = true;
	}
	if (o->fsync_blocks || o->fdatasync_blocks || o->sfr_blocks ||
	    o->barrier_blocks) {
		td->sync_on = true;
		td->prep_hook = true;
	}
	rng_seed(&td->rng, job_repeat(o) ? o->randseed + seed_idx :
					   bench_gettime_ns() + seed_idx);
	for (i = 0; i < o->iodepth; i++) {
		struct io_u *u = &td->ios[i];

		u->td = td;
		u->iov.iov_base = (char *)td->buf + (size_t)i * td->buf_bs;
		u->iov.iov_len = o->bs;
		u->bio.bi_io_vec = &u->iov;
		u->bio.bi_end_io = job_end_io;
		u->bio.bi_private = u;
		u->next = td->free_list;
		td->free_list = u;
	}
	td->nr_free = o->iodepth;
	return 0;
nomem:
	snprintf(err, errlen, "%s: out of memory for iodepth=%u bs=%u",
		 o->name, o->iodepth, o->bs);
	return -ENOMEM;
}

static void job_teardown(struct job_thread *td)
{
	unsigned int i;

	if (td->snap)
		pthread_mutex_destroy(&td->snap_mu);
	free(td->snap);
	td->snap = NULL;
	if (td->pinned) {
		munlock(td->pinned, td->pinned_len);
		munmap(td->pinned, td->pinned_len);
		td->pinned = NULL;
	}
	free(td->rp);
	td->rp = NULL;
	if (td->abandoned)
		return; /* the device may still write into these buffers */
	/* several files: the fields hold one file's maps, files[] all */
	for (i = 0; td->files && i < td->nr_files; i++) {
		struct job_file *f = &td->files[i];

		if (f->written != td->written)
			free(f->written);
		if (f->randmap != td->randmap)
			free(f->randmap);
		if (f->randmap_full != td->randmap_full)
			free(f->randmap_full);
	}
	free(td->files);
	free(td->written);
	free(td->backlog);
	free(td->trimq);
	free(td->trimmed);
	free(td->ios);
	free(td->batch);
	job_buf_free(td);
	free(td->dd_ws);
	free(td->randmap);
	free(td->randmap_full);
}

/* -------------------------------------------------------------- progress */

static void fmt_rate(char *buf, size_t len, double v, const char *unit)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.1fM%s", v / 1e6, unit);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fk%s", v / 1e3, unit);
	else
		snprintf(buf, len, "%.0f%s", v, unit);
}

static void fmt_bw(char *buf, size_t len, double bytes_per_s)
{
	if (bytes_per_s >= 1024.0 * 1048576.0)
		snprintf(buf, len, "%.1fGiB/s", bytes_per_s / (1024.0 * 1048576.0));
	else if (bytes_per_s >= 1048576.0)
		snprintf(buf, len, "%.1fMiB/s", bytes_per_s / 1048576.0);
	else
		snprintf(buf, len, "%.0fKiB/s", bytes_per_s / 1024.0);
}

/* Sum the job threads' published counters; returns threads still running. */
static unsigned int progress_snapshot(struct job_thread *tds, unsigned int n,
				      uint64_t *ios, uint64_t *bytes)
{
	unsigned int i, d, running = 0;

	memset(ios, 0, sizeof(uint64_t) * DDIR_NR);
	memset(bytes, 0, sizeof(uint64_t) * DDIR_NR);
	for (i = 0; i < n; i++) {
		if (!atomic_load(&tds[i].progress.done))
			running++;
		for (d = 0; d < DDIR_NR; d++) {
			ios[d] += atomic_load_explicit(&tds[i].progress.ios[d],
						       memory_order_relaxed);
			bytes[d] += atomic_load_explicit(
				&tds[i].progress.bytes[d], memory_order_relaxed);
		}
	}
	return running;
}

static void progress_line(struct job_thread *tds, unsigned int n,
			  uint64_t elapsed_ns, uint64_t total_ns,
			  uint64_t *prev_ios, uint64_t *prev_bytes, double dt_s)
{
	uint64_t ios[DDIR_NR], bytes[DDIR_NR];
	unsigned int running;
	char r_iops[32], w_iops[32], r_bw[32], w_bw[32], eta[32] = "--";

	running = progress_snapshot(tds, n, ios, bytes);
	fmt_rate(r_iops, sizeof(r_iops), (double)(ios[0] - prev_ios[0]) / dt_s, "");
	fmt_rate(w_iops, sizeof(w_iops), (double)(ios[1] - prev_ios[1]) / dt_s, "");
	fmt_bw(r_bw, sizeof(r_bw), (double)(bytes[0] - prev_bytes[0]) / dt_s);
	fmt_bw(w_bw, sizeof(w_bw), (double)(bytes[1] - prev_bytes[1]) / dt_s);
	if (total_ns && total_ns > elapsed_ns) {
		uint64_t s = (total_ns - elapsed_ns) / 1000000000ull;

		snprintf(eta, sizeof(eta), "%02llum:%02llus",
			 (unsigned long long)(s / 60), (unsigned long long)(s % 60));
	}
	fprintf(stderr, "\rJobs: %u (f=%u): [%.1f%%][r=%s,w=%s][r=%s,w=%s IOPS][eta %s]   ",
		running, running,
		total_ns ? 100.0 * (double)elapsed_ns / (double)total_ns : 0.0,
		r_bw, w_bw, r_iops, w_iops, eta);
	fflush(stderr);
	memcpy(prev_ios, ios, sizeof(ios));
	memcpy(prev_bytes, bytes, sizeof(bytes));
}

/*
 * fio's steady state detection (ss=, ss_dur=, ss_ramp=) for one unit: a
 * job thread, or with group_reporting every thread of the stonewall group
 * (fio's reporting group), whose I/Os are summed.  The main thread samples
 * it (wait_group()): the job threads' per-I/O path is unchanged, they only
 * publish their counters at each time check while ss_dur is set.
 *
 * Sampling starts ss_ramp after the unit's first thread started; each
 * sample is the unit's I/Os and bytes over the last second (over the time
 * since the previous sample, as a rate).  When dur_s samples are in, each
 * new one is checked: deviation criteria take the largest |sample - mean|
 * of the window, slopes the least-squares slope over sample indexes
 * 0..dur_s-1; either as a percentage of the mean with %.  Below the limit
 * (|slope| below it) the unit is attained and its threads stop as exitall
 * stops them.  The window's samples stay in a ring, oldest at ->head.
 */
struct ss_unit {
	unsigned int first, n;          /* its threads: tds[first..first+n) */
	const struct bench_job_opts *o; /* its ss= settings (the first thread's) */
	uint64_t next_ns;               /* next sample due (0: not started yet) */
	uint64_t last_ns;               /* previous sample (or the ramp's end) */
	uint64_t prev_ios, prev_bytes;  /* the unit's counters then */
	uint64_t *iops, *bw;            /* rings of dur_s samples */
	unsigned int dur, nr, head;     /* size, samples in, oldest */
	bool attained;
	double criterion, deviation, slope;
};

static void ss_counters(struct job_thread *tds, const struct ss_unit *u,
			uint64_t *ios, uint64_t *bytes)
{
	unsigned int i, d;

	*ios = *bytes = 0;
	for (i = u->first; i < u->first + u->n; i++)
		for (d = 0; d < DDIR_NR; d++) {
			*ios += atomic_load_explicit(&tds[i].progress.ios[d],
						     memory_order_relaxed);
			*bytes += atomic_load_explicit(&tds[i].progress.bytes[d],
						       memory_order_relaxed);
		}
}

/* The criterion over the full window; true when it is met. */
static bool ss_check(struct ss_unit *u)
{
	const uint64_t *y = u->o->ss_bw ? u->bw : u->iops;
	double n = u->dur, sum = 0.0, sxy = 0.0, mean, v;
	unsigned int i;

	for (i = 0; i < u->dur; i++) {
		v = (double)y[(u->head + i) % u->dur];
		sum += v;
		sxy += (double)i * v;
	}
	mean = sum / n;
	if (u->o->ss_slope) {
		/* x = 0..n-1: sum x = n(n-1)/2, sum x^2 = (n-1)n(2n-1)/6 */
		double sx = n * (n - 1) / 2, sxx = (n - 1) * n * (2 * n - 1) / 6;

		u->slope = (sxy - sx * sum / n) / (sxx - sx * sx / n);
		u->criterion = u->o->ss_pct ? (mean > 0 ? 100.0 * u->slope / mean : 0.0)
					    : u->slope;
		return fabs(u->criterion) < u->o->ss_limit;
	}
	u->deviation = 0.0;
	for (i = 0; i < u->dur; i++) {
		v = fabs((double)y[i] - mean);
		if (v > u->deviation)
			u->deviation = v;
	}
	u->criterion = u->o->ss_pct ? (mean > 0 ? 100.0 * u->deviation / mean : 0.0)
				    : u->deviation;
	return u->criterion < u->o->ss_limit;
}

static void ss_poll(struct job_thread *tds, struct ss_unit *u, uint64_t now)
{
	uint64_t ios, bytes, t0 = 0, dt;
	unsigned int i, slot;

	if (u->attained)
		return;
	if (!u->next_ns) {
		/* the unit's clock: its first thread to start */
		for (i = u->first; i < u->first + u->n; i++) {
			uint64_t s = atomic_load(&tds[i].progress.start_ns);

			if (s && (!t0 || s < t0))
				t0 = s;
		}
		if (!t0)
			return;
		if (__builtin_add_overflow(t0, u->o->ss_ramp_ns, &t0))
			t0 = UINT64_MAX;
		if (now < t0)
			return;
		ss_counters(tds, u, &u->prev_ios, &u->prev_bytes);
		u->last_ns = now;
		u->next_ns = now + 1000000000ull;
		return;
	}
	if (now < u->next_ns)
		return;
	ss_counters(tds, u, &ios, &bytes);
	dt = now - u->last_ns;
	slot = (u->head + u->nr) % u->dur;
	if (u->nr == u->dur) {	/* full: the oldest goes */
		slot = u->head;
		u->head = (u->head + 1) % u->dur;
	} else {
		u->nr++;
	}
	u->iops[slot] = (uint64_t)((double)(ios - u->prev_ios) * 1e9 / (double)dt);
	u->bw[slot] = (uint64_t)((double)(bytes - u->prev_bytes) * 1e9 / (double)dt);
	u->prev_ios = ios;
	u->prev_bytes = bytes;
	u->last_ns = now;
	u->next_ns = now + 1000000000ull;
	if (u->nr == u->dur && ss_check(u)) {
		u->attained = true;
		for (i = u->first; i < u->first + u->n; i++)
			atomic_store(&tds[i].terminate, true);
	}
}

/*
 * The units of a stonewall group's threads; NULL with *nr_units 0 when no
 * job has ss_dur (or memory is short: steady state is then not checked,
 * which a note would not make clearer than the report's missing section).
 */
static struct ss_unit *ss_units(const struct bench_opts *o,
				struct job_thread *tds, unsigned int n,
				unsigned int *nr_units)
{
	struct ss_unit *units;
	unsigned int i, k = 0, u_n;

	*nr_units = 0;
	for (i = 0; i < n; i++)
		if (tds[i].o->ss_dur_ns)
			break;
	if (i == n || !(units = calloc(n, sizeof(*units))))
		return NULL;
	(void)o;
	for (i = 0; i < n; i += u_n) {
		struct ss_unit *u;

		u_n = 1;
		/* fio's reporting group: the groupid, its first job's setting */
		if (tds[i].o->group_reporting)
			while (i + u_n < n &&
			       tds[i + u_n].res->groupid == tds[i].res->groupid)
				u_n++;
		if (!tds[i].o->ss_dur_ns)
			continue;
		u = &units[k];
		u->first = i;
		u->n = u_n;
		u->o = tds[i].o;
		u->dur = (unsigned int)(u->o->ss_dur_ns / 1000000000ull);
		u->iops = calloc(u->dur, sizeof(uint64_t));
		u->bw = calloc(u->dur, sizeof(uint64_t));
		if (!u->iops || !u->bw) {
			free(u->iops);
			free(u->bw);
			continue;
		}
		k++;
	}
	*nr_units = k;
	return units;
}

/* The units' results into their threads' results; the rings move there. */
static void ss_finish(struct job_thread *tds, struct ss_unit *units,
		      unsigned int nr_units)
{
	unsigned int k, i;

	for (k = 0; k < nr_units; k++) {
		struct ss_unit *u = &units[k];

		for (i = u->first; i < u->first + u->n; i++) {
			struct bench_ss_result *r = &tds[i].res->ss;

			r->on = true;
			r->attained = u->attained;
			r->dur_s = u->dur;
			r->nr = u->nr;
			r->criterion = u->criterion;
			r->deviation = u->deviation;
			r->slope = u->slope;
		}
		/* oldest first */
		if (u->head) {
			uint64_t *a = calloc(u->dur, sizeof(uint64_t));
			uint64_t *b = calloc(u->dur, sizeof(uint64_t));

			if (a && b) {
				for (i = 0; i < u->nr; i++) {
					a[i] = u->iops[(u->head + i) % u->dur];
					b[i] = u->bw[(u->head + i) % u->dur];
				}
				free(u->iops);
				free(u->bw);
				u->iops = a;
				u->bw = b;
			} else {
				free(a);
				free(b);
			}
		}
		tds[u->first].res->ss.iops = u->iops;
		tds[u->first].res->ss.bw = u->bw;
	}
	free(units);
}

/*
 * --status-interval: the report so far.  Each running thread of the
 * group (@tds, @n) is asked for a copy of its results and given up to
 * 200 ms to make it at its next time check (a thread in a verify phase,
 * a startdelay or a wait_for makes none: its last copy shows, or nothing);
 * a finished thread shows its results, the jobs of earlier groups theirs.
 * @res: the run's results, its first @nr_jobs jobs started.  Printed as
 * the run's report is, in each --output-format, to o->status_out.
 */
static void status_report(const struct bench_opts *o, struct job_thread *tds,
			  unsigned int n, struct bench_run_result *res,
			  unsigned int nr_jobs, uint64_t t0)
{
	struct bench_run_result *sr = malloc(sizeof(*sr));
	struct bench_job_result *jobs = calloc(nr_jobs, sizeof(*jobs));
	unsigned int i, pending;
	uint64_t deadline = bench_gettime_ns() + 200000000ull;
	FILE *out = o->status_out ? o->status_out : stdout;

	if (!sr || !jobs)
		goto out;
	for (i = 0; i < n; i++)
		if (tds[i].snap && !atomic_load(&tds[i].progress.done))
			atomic_fetch_add_explicit(&tds[i].snap_req, 1,
						  memory_order_release);
	do {
		pending = 0;
		for (i = 0; i < n; i++)
			if (tds[i].snap && !atomic_load(&tds[i].progress.done) &&
			    atomic_load_explicit(&tds[i].snap_req, memory_order_relaxed) !=
			    atomic_load_explicit(&tds[i].snap_ack, memory_order_acquire))
				pending++;
		if (pending)
			usleep(1000);
	} while (pending && bench_gettime_ns() < deadline);
	memcpy(jobs, res->jobs, (size_t)(nr_jobs - n) * sizeof(*jobs));
	for (i = 0; i < n; i++) {
		struct bench_job_result *j = &jobs[nr_jobs - n + i];

		if (atomic_load(&tds[i].progress.done)) {
			*j = *tds[i].res;
		} else if (tds[i].snap &&
			   atomic_load_explicit(&tds[i].snap_ack, memory_order_acquire)) {
			/* a copy asked for earlier may be being made now */
			pthread_mutex_lock(&tds[i].snap_mu);
			*j = *tds[i].snap;
			pthread_mutex_unlock(&tds[i].snap_mu);
		} else {
			/* nothing yet: the job's name and place, no I/O */
			memcpy(j->name, tds[i].res->name, sizeof(j->name));
			j->opts = tds[i].res->opts;
			j->groupid = tds[i].res->groupid;
			j->jobnum = tds[i].res->jobnum;
			j->nr_threads = 1;
			for (int d = 0; d < DDIR_NR; d++) {
				blk_hist_init(&j->dir[d].slat);
				blk_hist_init(&j->dir[d].clat);
				blk_hist_init(&j->dir[d].lat);
			}
		}
	}
	*sr = *res;
	sr->jobs = jobs;
	sr->nr_jobs = nr_jobs;
	sr->wall_ns = bench_gettime_ns() - t0;
	if (o->out_mask & BENCH_OUT_TERSE)
		bench_report_terse(out, o, sr);
	if (o->out_mask & BENCH_OUT_JSON)
		bench_report_json(out, o, sr, 1);
	if (o->out_mask & BENCH_OUT_NORMAL)
		bench_report_text(out, o, sr);
	fflush(out);
out:
	free(jobs);
	free(sr);
}

/* Wait for a group's threads, printing progress once a second. */
static void wait_group(const struct bench_opts *o, struct job_thread *tds,
		       unsigned int n, uint64_t total_ns,
		       struct bench_run_result *res, unsigned int nr_jobs,
		       uint64_t t0)
{
	uint64_t start = bench_gettime_ns(), last = start;
	/* the run's intervals go on across groups: the next one from t0 */
	uint64_t status_next = o->status_interval_ns ?
		t0 + ((start - t0) / o->status_interval_ns + 1) *
		o->status_interval_ns : UINT64_MAX;
	uint64_t prev_ios[DDIR_NR] = { 0 }, prev_bytes[DDIR_NR] = { 0 };
	bool tty = o->eta_always || (!o->quiet_progress && isatty(2));
	bool printed = false;
	unsigned int i, nr_units;
	struct ss_unit *units = ss_units(o, tds, n, &nr_units);

	for (;;) {
		bool all_done = true;
		uint64_t now;

		for (i = 0; i < n; i++)
			if (!atomic_load(&tds[i].progress.done))
				all_done = false;
		if (all_done)
			break;
		usleep(nr_units ? 10000 : 20000);
		if (nr_units) {
			uint64_t t = bench_now_ns();

			for (i = 0; i < nr_units; i++)
				ss_poll(tds, &units[i], t);
		}
		now = bench_gettime_ns();
		if (now >= status_next) {
			status_report(o, tds, n, res, nr_jobs, t0);
			while (status_next <= now)
				status_next += o->status_interval_ns;
		}
		/* a progress line only for runs longer than 2 s */
		if (tty && now - last >= 1000000000ull &&
		    now - start > 2000000000ull) {
			progress_line(tds, n, now - start, total_ns, prev_ios,
				      prev_bytes, (double)(now - last) / 1e9);
			last = now;
			printed = true;
		} else if (tty && now - last >= 1000000000ull) {
			/* not printing yet: keep the rate window at one second */
			progress_snapshot(tds, n, prev_ios, prev_bytes);
			last = now;
		}
	}
	if (printed)
		fprintf(stderr, "\n");
	if (units)
		ss_finish(tds, units, nr_units);
}

/* ------------------------------------------------------------------ run */

/* End of the last thread's region: offset_increment moves each thread on. */
static uint64_t job_region_end(const struct bench_job_opts *j)
{
	uint64_t start = j->offset, inc, end;

	if (j->numjobs > 1 &&
	    (__builtin_mul_overflow(j->offset_increment,
				    (uint64_t)(j->numjobs - 1), &inc) ||
	     __builtin_add_overflow(start, inc, &start)))
		return UINT64_MAX;
	if (__builtin_add_overflow(start, j->size ? j->size : (1ull << 30), &end))
		return UINT64_MAX;
	return end;
}

/*
 * A job's range, before any device exists: offset, size and the last
 * thread's offset (offset_increment) must add up within 64 bits and be
 * multiples of the logical block size, so that errors name them and not
 * the device size derived from them.
 */
static int job_check_region(const struct bench_job_opts *j,
			    const struct bench_dev_opts *d, char *err,
			    size_t errlen)
{
	uint32_t lbs = d->p.logical_block_size ? d->p.logical_block_size : 512;
	/* size=0: the rest of the device, which dev_size=0 sizes from offset+1G */
	uint64_t size = j->size ? j->size : d->p.dev_size ? 0 : 1ull << 30;
	uint64_t start = j->offset, inc = 0, end;
	unsigned int last = j->numjobs ? j->numjobs - 1 : 0;
	const char *size_note = !j->size && !d->p.dev_size ?
		" (size=0 with dev_size=0 sizes the device as offset + 1G)" : "";

	if (last && j->offset_increment &&
	    (__builtin_mul_overflow(j->offset_increment, (uint64_t)last, &inc) ||
	     __builtin_add_overflow(start, inc, &start) ||
	     __builtin_add_overflow(start, size, &end))) {
		snprintf(err, errlen,
			 "%s: offset=%llu + %u * offset_increment=%llu + size=%llu%s: the last thread's range overflows 64 bits",
			 j->name, (unsigned long long)j->offset, last,
			 (unsigned long long)j->offset_increment,
			 (unsigned long long)size,
			 size_note);
		return -EINVAL;
	}
	if (__builtin_add_overflow(start, size, &end)) {
		snprintf(err, errlen,
			 "%s: offset=%llu size=%llu%s: offset + size overflows 64 bits",
			 j->name, (unsigned long long)j->offset,
			 (unsigned long long)size,
			 size_note);
		return -EINVAL;
	}
	if (j->offset % lbs) {
		snprintf(err, errlen,
			 "%s: offset=%llu: not a multiple of logical_block_size=%u",
			 j->name, (unsigned long long)j->offset, lbs);
		return -EINVAL;
	}
	if (j->size % lbs) {
		snprintf(err, errlen,
			 "%s: size=%llu: not a multiple of logical_block_size=%u",
			 j->name, (unsigned long long)j->size, lbs);
		return -EINVAL;
	}
	if (last && j->offset_increment % lbs) {
		snprintf(err, errlen,
			 "%s: offset_increment=%llu: not a multiple of logical_block_size=%u",
			 j->name, (unsigned long long)j->offset_increment, lbs);
		return -EINVAL;
	}
	return 0;
}

/*
 * Checks of every job before the device is created: the ranges, and the
 * I/O buffers, iodepth x bs per thread, all allocated (and filled) before
 * the first group starts; more than half of physical memory is an error.
 */
static int jobs_check(const struct bench_opts *o, char *err, size_t errlen)
{
	uint64_t half = bench_phys_mem() / 2, total = 0, need;
	char a[32], b[32], c[32];
	unsigned int i;
	int ret;

	for (i = 0; i < o->nr_jobs; i++) {
		const struct bench_job_opts *j = &o->jobs[i];

		ret = job_check_region(j, &o->dev, err, errlen);
		if (ret)
			return ret;
		/* at most 65536 x 16 MiB x 1024 x 64 jobs: 2^56 */
		need = (uint64_t)j->iodepth * j->bs * j->numjobs;
		total += need;
		if (total > half) {
			bench_fmt_bytes(a, sizeof(a), need);
			bench_fmt_bytes(b, sizeof(b), total);
			bench_fmt_bytes(c, sizeof(c), half);
			if (total == need)
				snprintf(err, errlen,
					 "%s: iodepth=%u x bs=%u x numjobs=%u needs %s of I/O buffers, more than half of physical memory (%s available)",
					 j->name, j->iodepth, j->bs, j->numjobs,
					 a, c);
			else
				snprintf(err, errlen,
					 "%s: iodepth=%u x bs=%u x numjobs=%u needs %s of I/O buffers, %s with the earlier jobs, more than half of physical memory (%s available)",
					 j->name, j->iodepth, j->bs, j->numjobs,
					 a, b, c);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Block (or restore) SIGINT and SIGTERM in the calling thread. */
static void stop_signals_block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

static void stop_signals_restore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/*
 * What the device needs for @o's jobs: the capacity of a null or ram
 * device (the largest region end), the size a missing file is created
 * with (regions with an explicit size= only), the job threads of the
 * largest stonewall group (one hardware queue each) and of all groups.
 */
static void jobs_geometry(const struct bench_opts *o, uint64_t *size,
			  uint64_t *explicit_size, unsigned int *max_group_threads,
			  unsigned int *nr_threads)
{
	unsigned int i, t;

	*size = *explicit_size = 0;
	*max_group_threads = *nr_threads = 0;
	for (i = 0, t = 0; i < o->nr_jobs; i++) {
		if (o->jobs[i].stonewall && i)
			t = 0;
		t += o->jobs[i].numjobs;
		if (t > *max_group_threads)
			*max_group_threads = t;
		*nr_threads += o->jobs[i].numjobs;
		if (job_region_end(&o->jobs[i]) > *size)
			*size = job_region_end(&o->jobs[i]);
		/* offset_increment included: the last thread's range */
		if (o->jobs[i].size && job_region_end(&o->jobs[i]) > *explicit_size)
			*explicit_size = job_region_end(&o->jobs[i]);
	}
}

int bench_open(const struct bench_opts *o, const char *devname,
	       struct blk_dev **dev, char *err, size_t errlen)
{
	unsigned int max_group_threads, nr_threads;
	uint64_t size, explicit_size;
	sigset_t sigs;
	int ret;

	*dev = NULL;
	jobs_geometry(o, &size, &explicit_size, &max_group_threads, &nr_threads);
	ret = jobs_check(o, err, errlen);
	if (ret)
		return ret;
	/*
	 * Threads the device starts (completion threads) and job threads
	 * inherit a mask without SIGINT and SIGTERM: the main thread takes
	 * them, and no device thread sees an EINTR.
	 */
	stop_signals_block(&sigs);
	ret = bench_dev_open(&o->dev, devname, size, explicit_size,
			     max_group_threads, dev, err, errlen);
	stop_signals_restore(&sigs);
	return ret;
}

/*
 * The device's cumulative counters at one moment.  A device that outlives
 * the run (the matrix's, laid out once for four rows) has counted earlier
 * runs too: the run reports the difference between two readings.
 */
struct dev_counters {
	struct blk_disk_stats disk;
	struct blk_nvme_stats nvme;
	struct blk_uring_stats uring;
	struct blk_scsi_stats scsi;
	uint64_t lat_count;        /* requests in the core's histograms */
	double lat_sum_ns;         /* their latency sum */
};

static void dev_counters_read(struct blk_dev *dev, bool nvme, bool uring,
			      bool scsi, struct dev_counters *c)
{
	struct blk_hist *h = malloc(sizeof(*h));
	unsigned int i;

	memset(c, 0, sizeof(*c));
	blk_dev_get_stats(dev, &c->disk);
	if (nvme)
		blk_nvme_get_stats(dev, &c->nvme);
	if (uring)
		blk_uring_get_stats(dev, &c->uring);
	if (scsi)
		blk_scsi_get_stats(dev, &c->scsi);
	if (!h)
		return;
	for (i = 0; i < 2; i++) {
		blk_hist_init(h);
		blk_dev_get_lat_hist(dev, (enum blk_stat_dir)i, h);
		c->lat_count += h->count;
		c->lat_sum_ns += h->sum;
	}
	free(h);
}

/* @a -= @b, field by field, for structs made of uint64_t counters only. */
static void counters_sub(uint64_t *a, const uint64_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] -= b[i];
}

/* What the run did: the counters after it less those before it. */
static void dev_counters_report(struct bench_run_result *res,
				const struct dev_counters *before,
				const struct dev_counters *after)
{
	struct blk_disk_stats *st = &res->disk;
	uint64_t n;
	int d;

	*st = after->disk;
	for (d = 0; d < BLK_STAT_NR_DIRS; d++) {
		st->ios[d] -= before->disk.ios[d];
		st->sectors[d] -= before->disk.sectors[d];
		st->merges[d] -= before->disk.merges[d];
		st->ticks_ms[d] -= before->disk.ticks_ms[d];
	}
	/* in_flight is a level, not a count: the value at the end */
	st->io_ticks_ms -= before->disk.io_ticks_ms;
	st->requeues -= before->disk.requeues;
	st->timeouts -= before->disk.timeouts;
	st->queue_runs -= before->disk.queue_runs;
	st->errors -= before->disk.errors;
	if (res->has_nvme) {
		_Static_assert(sizeof(struct blk_nvme_stats) % sizeof(uint64_t) == 0,
			       "blk_nvme_stats: uint64_t counters only");
		res->nvme = after->nvme;
		counters_sub((uint64_t *)&res->nvme, (const uint64_t *)&before->nvme,
			     sizeof(res->nvme) / sizeof(uint64_t));
	}
	if (res->has_scsi) {
		_Static_assert(sizeof(struct blk_scsi_stats) % sizeof(uint64_t) == 0,
			       "blk_scsi_stats: uint64_t counters only");
		res->scsi = after->scsi;
		counters_sub((uint64_t *)&res->scsi, (const uint64_t *)&before->scsi,
			     sizeof(res->scsi) / sizeof(uint64_t));
	}
	if (res->has_uring) {
		res->uring = after->uring; /* the flags: as at the end */
		res->uring.ring_rqs -= before->uring.ring_rqs;
		res->uring.inline_rqs -= before->uring.inline_rqs;
		res->uring.pool_rqs -= before->uring.pool_rqs;
		res->uring.inline_given_up -= before->uring.inline_given_up;
		res->uring.cancels -= before->uring.cancels;
		res->uring.cancels_hit -= before->uring.cancels_hit;
		res->uring.cancels_running -= before->uring.cancels_running;
		res->uring.cancels_missed -= before->uring.cancels_missed;
		res->uring.cancelled -= before->uring.cancelled;
	}
	n = after->lat_count - before->lat_count;
	res->core_lat_count = n;
	res->core_lat_mean_ns = n ? (after->lat_sum_ns - before->lat_sum_ns) /
				    (double)n : 0;
}

/*
 * dev=uring with files of the jobs' own (filename=, directory=,
 * filename_format=, nrfiles=, a file engine; fio's meaning): each job
 * thread runs on the files bench_job_file() names for it, one device per
 * distinct file (and per way the jobs' engines issue to it: a sync
 * engine's and an async engine's threads on one file get a device each,
 * as fio gives each thread a descriptor of its own), shared by the
 * threads that name it.
 */
struct run_target {
	char path[4096];
	struct blk_dev *dev;
	struct blk_dev_info info;
	unsigned int nr_threads;
	uint64_t create_size;      /* a missing file is created this big */
	bool lay_out;              /* a job without create_on_open=1 uses it */
	bool direct;
	uint8_t dev_inline, dev_engine; /* the job's engine's (options.h) */
	uint32_t dev_pool_threads;
	bool unlink;               /* a job with unlink=1 uses it: removed after the run */
	bool overwrite;            /* a job with overwrite=1 uses it: a missing file is written */
	bool append;               /* a job with file_append=1 uses it: grown to create_size */
	struct dev_counters before, after;
};

static bool run_uses_job_files(const struct bench_opts *o, const char *devname,
			       const struct blk_dev *shared)
{
	unsigned int i;

	if (shared || strcmp(devname, "uring"))
		return false;
	for (i = 0; i < o->nr_jobs; i++)
		if (bench_job_has_file(&o->jobs[i]))
			return true;
	return false;
}

/* The smallest block size of job @j: the unit of its regions. */
static uint32_t job_min_bs(const struct bench_job_opts *j)
{
	uint32_t lo = j->bs;
	unsigned int i;

	if (j->bssplit_nr) {
		for (i = 0, lo = j->bssplit_bs[0]; i < j->bssplit_nr; i++)
			if (j->bssplit_bs[i] < lo)
				lo = j->bssplit_bs[i];
	} else if (j->bs_max) {
		lo = j->bs_min;
	}
	return lo;
}

/*
 * fill_device=1 on a job's file without size= (or filesize=, size=N%):
 * fio writes until ENOSPC, which on a regular file is until its file
 * system is full.  blkstack bench does not fill a file system: refused,
 * naming where fill_device was set.  A block device bounds itself.
 */
static int job_fill_check(const struct bench_job_opts *j, const char *path,
			  char *err, size_t errlen)
{
	struct stat sb;

	if (!j->fill_device || j->size || j->filesize || j->size_pct ||
	    (!stat(path, &sb) && S_ISBLK(sb.st_mode)))
		return 0;
	snprintf(err, errlen,
		 "%s%sjob '%s': fill_device=1 on %s, %s, without size=: fio writes until the file system is full (ENOSPC); blkstack bench does not fill a file system: give size= to bound it (fill_device=1 then still ends the job at ENOSPC without an error, as fio), or a block device",
		 j->fill_device_at, j->fill_device_at[0] ? ": " : "", j->name, path,
		 access(path, F_OK) ? "a file that does not exist" : "a regular file");
	return -EINVAL;
}

int bench_check_job_files(const struct bench_opts *o, const char *devname,
			  char *err, size_t errlen)
{
	unsigned int i, k, f;
	char path[4096];
	int ret;

	if (!run_uses_job_files(o, devname, NULL))
		return 0;
	for (i = 0; i < o->nr_jobs; i++) {
		const struct bench_job_opts *j = &o->jobs[i];

		for (k = 0; k < j->numjobs && j->fill_device; k++) {
			for (f = 0; f < bench_job_nr_files(j); f++) {
				if (bench_job_file(j, k, f, path, sizeof(path))) {
					snprintf(err, errlen, "%s: the file name is longer than %zu bytes",
						 j->name, sizeof(path) - 1);
					return -ENAMETOOLONG;
				}
				ret = job_fill_check(j, path, err, errlen);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

/*
 * What file @f of thread @k of job @j must hold when it is missing, as
 * fio lays it out: filesize=, else the thread's region with its share of
 * size=; 0 (it must exist) when neither is given.
 */
static uint64_t job_file_need(const struct bench_job_opts *j, unsigned int k,
			      unsigned int f, unsigned int nf)
{
	uint64_t inc = 0, need;

	if (j->filesize)
		return j->filesize;
	if (!j->size ||
	    __builtin_mul_overflow(j->offset_increment, (uint64_t)k, &inc) ||
	    __builtin_add_overflow(j->offset, inc, &need) ||
	    __builtin_add_overflow(need, nf > 1 ?
				   job_file_share(j->size, nf, f, job_min_bs(j)) :
				   j->size, &need))
		return j->size ? UINT64_MAX : 0;
	return need;
}

/*
 * overwrite=1: a regular file shorter than @size (or missing) is written
 * with zeros from its end to @size, as fio lays out a file it will
 * overwrite (extend_file()); a block device or a long enough file is
 * left alone.  Return: 0 or -errno.
 */
static int file_write_out(const char *path, uint64_t size)
{
	static const char zero[65536];
	struct stat st;
	uint64_t off;
	ssize_t w;
	int fd, ret = 0;

	if (!stat(path, &st) && (!S_ISREG(st.st_mode) || (uint64_t)st.st_size >= size))
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	for (off = (uint64_t)st.st_size; off < size; off += (uint64_t)w) {
		w = pwrite(fd, zero, size - off < sizeof(zero) ? size - off : sizeof(zero),
			   (off_t)off);
		if (w <= 0) {
			ret = w < 0 ? -errno : -EIO;
			goto out;
		}
	}
out:
	close(fd);
	return ret;
}

/* mkdir -p of @path's directory, as fio makes a file's work directories. */
static int make_parent_dirs(const char *path)
{
	char dir[4096];
	char *p;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	p = strrchr(dir, '/');
	if (!p || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Open one device per distinct file of the jobs' threads; @file_tg gets
 * the target of each file of each thread, in job, thread, file order.
 */
static int targets_open(const struct bench_opts *o, struct run_target **out,
			unsigned int *nr_out, unsigned int *file_tg,
			char *err, size_t errlen)
{
	struct run_target *tg = NULL;
	unsigned int i, k, f, t, n = 0, cap = 0;
	uint64_t qsize, lbs;
	char path[4096];
	sigset_t sigs;
	int ret = 0;

	for (i = 0, t = 0; i < o->nr_jobs; i++) {
		const struct bench_job_opts *j = &o->jobs[i];
		unsigned int nf = bench_job_nr_files(j);

		for (k = 0; k < j->numjobs; k++) {
			for (f = 0; f < nf; f++, t++) {
				uint64_t need;
				unsigned int x;

				if (bench_job_file(j, k, f, path, sizeof(path))) {
					snprintf(err, errlen, "%s: the file name is longer than %zu bytes",
						 j->name, sizeof(path) - 1);
					ret = -ENAMETOOLONG;
					goto fail;
				}
				for (x = 0; x < n; x++)
					if (!strcmp(tg[x].path, path) &&
					    tg[x].direct == j->direct &&
					    tg[x].dev_inline == j->dev_inline &&
					    tg[x].dev_engine == j->dev_engine &&
					    tg[x].dev_pool_threads == j->dev_pool_threads)
						break;
				if (x == n && n == cap) {
					/* grown as files appear */
					unsigned int ncap = cap ? cap * 2 : 4;
					struct run_target *ntg = realloc(tg, ncap * sizeof(*tg));

					if (!ntg) {
						snprintf(err, errlen, "out of memory for %u files", ncap);
						ret = -ENOMEM;
						goto fail;
					}
					memset(ntg + cap, 0, (ncap - cap) * sizeof(*tg));
					tg = ntg;
					cap = ncap;
				}
				if (x == n) {
					snprintf(tg[n].path, sizeof(tg[n].path), "%s", path);
					tg[n].direct = j->direct;
					tg[n].dev_inline = j->dev_inline;
					tg[n].dev_engine = j->dev_engine;
					tg[n].dev_pool_threads = j->dev_pool_threads;
					n++;
				}
				/* fio's allow_file_create=0: its files must exist */
				if (!j->allow_file_create && access(path, F_OK)) {
					ret = -errno;
					snprintf(err, errlen,
						 "%s: %s: %s, and allow_file_create=0 forbids creating it (as fio does)",
						 j->name, path, strerror(-ret));
					goto fail;
				}
				ret = job_fill_check(j, path, err, errlen);
				if (ret)
					goto fail;
				tg[x].unlink |= j->unlink;
				tg[x].overwrite |= j->overwrite;
				tg[x].append |= j->file_append;
				tg[x].lay_out |= !j->create_on_open;
				need = job_file_need(j, k, f, nf);
				if (need > tg[x].create_size)
					tg[x].create_size = need;
				tg[x].nr_threads++;
				file_tg[t] = x;
			}
		}
	}
	stop_signals_block(&sigs);
	for (i = 0; i < n; i++) {
		struct bench_dev_opts d = o->dev;
		char msg[512];

		snprintf(d.p.filename, sizeof(d.p.filename), "%s", tg[i].path);
		d.p.direct = tg[i].direct;
		if (tg[i].dev_inline)
			d.p.uring_inline = tg[i].dev_inline - 1u;
		if (tg[i].dev_engine)
			d.p.uring_engine = tg[i].dev_engine - 1u;
		if (tg[i].dev_pool_threads)
			d.p.pool_threads = tg[i].dev_pool_threads;
		/* as fio: the directories of a file it lays out */
		if (tg[i].create_size && access(tg[i].path, F_OK)) {
			ret = make_parent_dirs(tg[i].path);
			if (ret) {
				snprintf(err, errlen, "%s: cannot make its directory: %s",
					 tg[i].path, strerror(-ret));
				break;
			}
		}
		/* file_append=1: the file grows past its end, as fio's writes there */
		if (tg[i].append && tg[i].create_size) {
			struct stat st;

			if (!stat(tg[i].path, &st) && S_ISREG(st.st_mode) &&
			    (uint64_t)st.st_size < tg[i].create_size &&
			    truncate(tg[i].path, (off_t)tg[i].create_size)) {
				snprintf(err, errlen, "%s: file_append=1: cannot grow it: %s",
					 tg[i].path, strerror(errno));
				ret = -errno;
				break;
			}
		}
		/* overwrite=1: fio's extend_file(), the file written to its size */
		if (tg[i].overwrite && tg[i].lay_out && tg[i].create_size) {
			ret = file_write_out(tg[i].path, tg[i].create_size);
			if (ret) {
				snprintf(err, errlen, "%s: overwrite=1: cannot lay it out: %s",
					 tg[i].path, strerror(-ret));
				break;
			}
		}
		/*
		 * a file is created as fio makes it (size / nrfiles need not
		 * be a multiple of the block size); the device is the file's
		 * whole blocks, whatever size the queue is told
		 */
		lbs = d.p.logical_block_size ? d.p.logical_block_size : 512;
		qsize = tg[i].create_size % lbs ?
			tg[i].create_size - tg[i].create_size % lbs : tg[i].create_size;
		if (tg[i].lay_out) {
			ret = bench_dev_open(&d, "uring", qsize, tg[i].create_size,
					     tg[i].nr_threads, &tg[i].dev, msg,
					     sizeof(msg));
		} else {
			/* create_on_open=1: created empty, not laid out */
			struct blk_dev_open_args a = {
				.size = qsize, .create_size = tg[i].create_size,
				.create_empty = true, .nr_threads = tg[i].nr_threads,
			};

			ret = blk_dev_open("uring", &d.p, &a, &tg[i].dev, msg,
					   sizeof(msg));
		}
		if (ret) {
			snprintf(err, errlen, "%s: %s", tg[i].path, msg);
			break;
		}
		blk_dev_get_info(tg[i].dev, &tg[i].info);
	}
	stop_signals_restore(&sigs);
	if (!ret) {
		*out = tg;
		*nr_out = n;
		return 0;
	}
fail:
	for (i = 0; i < n; i++)
		if (tg[i].dev)
			blk_dev_close(tg[i].dev);
	free(tg);
	return ret;
}

/* Counters of every file's device, summed. */
static void targets_counters(struct run_target *tg, unsigned int n,
			     bool after, struct dev_counters *sum)
{
	unsigned int i;
	size_t k;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < n; i++) {
		struct dev_counters *c = after ? &tg[i].after : &tg[i].before;

		dev_counters_read(tg[i].dev, false, true, false, c);
		for (k = 0; k < sizeof(c->disk) / sizeof(uint64_t); k++)
			((uint64_t *)&sum->disk)[k] += ((const uint64_t *)&c->disk)[k];
		/* the counters before the flags */
		for (k = 0; k < offsetof(struct blk_uring_stats, nowait) / sizeof(uint64_t); k++)
			((uint64_t *)&sum->uring)[k] += ((const uint64_t *)&c->uring)[k];
		if (!i) {
			sum->uring.nowait = c->uring.nowait;
			sum->uring.setup_flags = c->uring.setup_flags;
			sum->uring.pool = c->uring.pool;
		}
		sum->lat_count += c->lat_count;
		sum->lat_sum_ns += c->lat_sum_ns;
	}
}

int bench_run(const struct bench_opts *o, const char *devname,
	      struct bench_run_result *res, char *err, size_t errlen)
{
	return bench_run_on(o, devname, NULL, res, err, errlen);
}

int bench_run_on(const struct bench_opts *o, const char *devname,
		 struct blk_dev *shared, struct bench_run_result *res,
		 char *err, size_t errlen)
{
	unsigned int i, t, nr_threads = 0, max_group_threads = 0, group = 0;
	bool exitall_any = false;
	unsigned int gstart_job;
	struct job_thread *tds = NULL;
	struct blk_dev *dev = shared;
	struct run_target *tg = NULL;
	unsigned int nr_tg = 0, *file_tg = NULL, nr_files = 0, ft;
	struct bench_zbd **zsets = NULL;	/* zonemode=zbd: a zone set per device */
	unsigned int nr_zsets = 0;
	bool per_file = run_uses_job_files(o, devname, shared);
	struct blk_dev_info info;
	struct dev_counters before, after;
	struct rusage ru0, ru1;
	double busy0, busy1;
	uint64_t size, explicit_size, t0;
	sigset_t sigs;
	int ret;

	memset(res, 0, sizeof(*res));
	snprintf(res->dev, sizeof(res->dev), "%s", devname);
	snprintf(res->clocksource, sizeof(res->clocksource), "%s",
		 bench_clock_name());
	res->has_nvme = !strcmp(devname, "nvme");
	res->has_scsi = !strcmp(devname, "scsi");
	res->has_uring = !strcmp(devname, "uring");
	jobs_geometry(o, &size, &explicit_size, &max_group_threads, &nr_threads);
	if (per_file) {
		for (i = 0; i < o->nr_jobs; i++)
			nr_files += o->jobs[i].numjobs * bench_job_nr_files(&o->jobs[i]);
		file_tg = calloc(nr_files, sizeof(*file_tg));
		ret = file_tg ? jobs_check(o, err, errlen) : -ENOMEM;
		if (!ret)
			ret = targets_open(o, &tg, &nr_tg, file_tg, err, errlen);
		else if (ret == -ENOMEM)
			snprintf(err, errlen, "out of memory for %u job files",
				 nr_files);
		if (ret) {
			free(file_tg);
			return ret;
		}
		dev = tg[0].dev;
	} else if (shared) {
		ret = jobs_check(o, err, errlen);
	} else {
		ret = bench_open(o, devname, &dev, err, errlen);
	}
	if (ret)
		return ret;
	blk_dev_get_info(dev, &info);
	res->info = info;
	for (i = 0; i < o->nr_jobs; i++) {
		/* the host driver cannot know its namespace stores nothing */
		/* verify=null checks nothing: fio's for the null engine */
		if (o->jobs[i].verify != VERIFY_NONE &&
		    o->jobs[i].verify != VERIFY_NULL &&
		    bench_dev_on_null(&o->dev, devname)) {
			snprintf(err, errlen,
				 "verify=%s: dev=%s on lower=null%s stores no data; use lower=ram, or lower=uring with filename=",
				 bench_verify_name(o->jobs[i].verify), devname,
				 strcmp(devname, "nvme") ? "" : " (nvme_ns=null)");
			ret = -EINVAL;
			goto out;
		}
		if (o->jobs[i].verify != VERIFY_NONE &&
		    o->jobs[i].verify != VERIFY_NULL && !info.stores_data) {
			snprintf(err, errlen,
				 "verify=%s: the %s device does not store data; use dev=ram, dev=uring, or null with memory_backed=1",
				 bench_verify_name(o->jobs[i].verify), devname);
			ret = -EINVAL;
			goto out;
		}
		if (job_trim_verify(&o->jobs[i])) {
			ret = trim_verify_dev(o, &o->jobs[i], devname, &info,
					      err, errlen);
			if (ret)
				goto out;
		}
		/* NVMe commands are bounded by MDTS; the core does not split bios */
		if (!strcmp(devname, "nvme") &&
		    o->jobs[i].bs > (uint64_t)info.max_sectors * 512) {
			snprintf(err, errlen,
				 "%s: bs=%u: larger than the nvme device's largest transfer, %u bytes (max_sectors=%u); raise max_sectors= (the controller's MDTS follows it) or lower bs",
				 o->jobs[i].name, o->jobs[i].bs,
				 info.max_sectors * 512, info.max_sectors);
			ret = -EINVAL;
			goto out;
		}
	}
	res->jobs = calloc(nr_threads, sizeof(*res->jobs));
	tds = calloc(nr_threads, sizeof(*tds));
	if (!res->jobs || !tds) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory for %u job threads", nr_threads);
		goto out;
	}
	res->nr_jobs = nr_threads;
	zsets = calloc(nr_threads, sizeof(*zsets));
	if (!zsets) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory for %u job threads", nr_threads);
		goto out;
	}
	/* fio's flows: one per flow_id that a job with flow= names */
	memset(bench_flows, 0, sizeof(bench_flows));
	{
		unsigned int wall = 0, flow_wall[BENCH_MAX_JOBS];

		for (i = 0; i < o->nr_jobs; i++) {
			unsigned int f;

			wall += i && o->jobs[i].stonewall;
			if (!o->jobs[i].flow)
				continue;
			for (f = 0; bench_flows[f].used &&
				    bench_flows[f].id != o->jobs[i].flow_id; f++)
				;
			/*
			 * fio counts every job's weight from the start
			 * (flow_init_job() at parse time): a flow across
			 * stonewalls holds the earlier jobs back for ever
			 */
			if (bench_flows[f].used && flow_wall[f] != wall) {
				ret = -EINVAL;
				snprintf(err, errlen,
					 "%s: flow_id=%u has jobs on both sides of a stonewall: fio counts every job's flow= weight from the start, so the earlier ones would wait for ever",
					 o->jobs[i].name, o->jobs[i].flow_id);
				goto out;
			}
			flow_wall[f] = wall;
			bench_flows[f].used = true;
			bench_flows[f].id = o->jobs[i].flow_id;
			atomic_store(&bench_flows[f].counter, 1);
			/* fio's flow_init_job(), for each thread */
			atomic_fetch_add(&bench_flows[f].total_weight,
					 (uint64_t)o->jobs[i].flow * o->jobs[i].numjobs);
		}
		/*
		 * the same trap through wait_for= (fio 3.33 hangs on it too):
		 * a job of a flow that waits, directly or through other
		 * jobs' wait_for, for a job of the same flow
		 */
		for (i = 0; i < o->nr_jobs; i++) {
			const struct bench_job_opts *w = &o->jobs[i];
			unsigned int k, hops;

			if (!w->flow)
				continue;
			for (hops = 0; w->wait_for[0] && hops < o->nr_jobs; hops++) {
				for (k = 0; k < o->nr_jobs &&
					    strcmp(o->jobs[k].name, w->wait_for); k++)
					;
				if (k == o->nr_jobs)
					break;
				w = &o->jobs[k];
				if (w->flow && w->flow_id == o->jobs[i].flow_id) {
					ret = -EINVAL;
					snprintf(err, errlen,
						 "%s: wait_for=%s: %s is in the same flow (flow_id=%u): fio counts every job's flow= weight from the start, so %s would wait for ever for %s's share",
						 o->jobs[i].name, o->jobs[i].wait_for,
						 w->name, w->flow_id, w->name,
						 o->jobs[i].name);
					goto out;
				}
			}
		}
	}
	for (i = 0; i < o->nr_jobs; i++)
		exitall_any |= o->jobs[i].exitall;
	for (i = 0, t = 0, ft = 0; i < o->nr_jobs; i++) {
		unsigned int k, nf = per_file ? bench_job_nr_files(&o->jobs[i]) : 1;

		/* fio: a stonewall starts a new reporting group, as new_group does */
		if ((o->jobs[i].stonewall || o->jobs[i].new_group) && i)
			group++;
		for (k = 0; k < o->jobs[i].numjobs; k++, t++, ft += nf) {
			struct bench_job_result *r = &res->jobs[t];
			const struct blk_dev_info *ti =
				per_file ? &tg[file_tg[ft]].info : &info;
			uint32_t lbs = ti->logical_block_size;

			snprintf(r->name, sizeof(r->name), "%s", o->jobs[i].name);
			r->opts = &o->jobs[i];
			r->groupid = group;
			r->jobnum = k;
			r->nr_threads = 1;
			tds[t].res = r;
			/* no copy (ENOMEM): the interim reports show the thread empty */
			if (o->status_interval_ns) {
				tds[t].snap = calloc(1, sizeof(*tds[t].snap));
				if (tds[t].snap)
					pthread_mutex_init(&tds[t].snap_mu, NULL);
			}
			tds[t].all = tds;
			tds[t].nr_all = res->nr_jobs;
			tds[t].exitall_any = exitall_any;
			if (o->jobs[i].flow) {
				unsigned int f;

				for (f = 0; bench_flows[f].id != o->jobs[i].flow_id; f++)
					;
				tds[t].flow = &bench_flows[f];
			}
			tds[t].dev = per_file ? tg[file_tg[ft]].dev : dev;
			tds[t].file_path = per_file ? tg[file_tg[ft]].path : NULL;
			tds[t].devname = res->dev;
			tds[t].nr_files = 1;
			if (nf > 1) {
				unsigned int f;

				tds[t].files = calloc(nf, sizeof(*tds[t].files));
				if (!tds[t].files) {
					ret = -ENOMEM;
					snprintf(err, errlen, "out of memory for %u files",
						 nf);
					goto out;
				}
				tds[t].nr_files = nf;
				for (f = 0; f < nf; f++) {
					const struct run_target *x = &tg[file_tg[ft + f]];

					tds[t].files[f].dev = x->dev;
					tds[t].files[f].path = x->path;
					tds[t].files[f].capacity = x->info.capacity;
					if (x->info.logical_block_size > lbs)
						lbs = x->info.logical_block_size;
				}
			}
			job_reset_stats(&tds[t]);
			if (o->jobs[i].zonemode == BENCH_ZONE_ZBD) {
				/* fio: one zone set per file, the first job's */
				unsigned int zi;

				for (zi = 0; zi < nr_zsets &&
					     zsets[zi]->dev != tds[t].dev; zi++)
					;
				if (zi == nr_zsets) {
					ret = bench_zbd_new(tds[t].dev, ti->capacity,
							    &o->jobs[i],
							    per_file ? tg[file_tg[ft]].path :
								       res->dev,
							    &zsets[zi], err, errlen);
					if (ret)
						goto out;
					nr_zsets++;
				}
				tds[t].zbd_set = zsets[zi];
			}
			ret = job_setup(&tds[t], &o->jobs[i], ti->capacity, lbs, t,
					err, errlen);
			if (ret)
				goto out;
			ret = job_prio_setup(&tds[t], r, err, errlen);
			if (ret)
				goto out;
			if (bench_log_wanted(&o->jobs[i]) ||
			    o->output_format == OUT_JSON_PLUS ||
			    o->plot_dir[0]) {
				r->log = bench_log_new(&o->jobs[i],
						       o->output_format == OUT_JSON_PLUS,
						       o->plot_dir[0] ?
						       plot_window_ns(&o->jobs[i]) : 0);
				if (!r->log) {
					ret = -ENOMEM;
					snprintf(err, errlen,
						 "out of memory for the logs of job %s",
						 o->jobs[i].name);
					goto out;
				}
				tds[t].log = r->log;
				tds[t].reap_hook = true;
			}
		}
	}

	/* dedupe_mode=working_set: needs every thread's seeds */
	for (t = 0; t < res->nr_jobs; t++) {
		ret = job_dedupe_setup(&tds[t], err, errlen);
		if (ret)
			goto out;
	}

	/* wait_for=: the waitee's threads, an earlier job (finish_jobs()) */
	for (i = 0, t = 0; i < o->nr_jobs; t += o->jobs[i].numjobs, i++) {
		unsigned int k, w, first_w;

		if (!o->jobs[i].wait_for[0])
			continue;
		for (k = 0, first_w = 0; k < i; first_w += o->jobs[k].numjobs, k++)
			if (!strcmp(o->jobs[k].name, o->jobs[i].wait_for))
				break;
		if (k == i)
			continue;
		for (w = 0; w < o->jobs[i].numjobs; w++) {
			tds[t + w].waitee = &tds[first_w];
			tds[t + w].nr_waitee = o->jobs[k].numjobs;
		}
	}
	if (per_file)
		targets_counters(tg, nr_tg, false, &before);
	else
		dev_counters_read(dev, res->has_nvme, res->has_uring, res->has_scsi, &before);
	if (!per_file && res->has_scsi)
		blk_scsi_get_info(dev, &res->scsi_info);
	busy0 = bench_machine_busy_s();
	getrusage(RUSAGE_SELF, &ru0);
	t0 = bench_gettime_ns();
	/* run stonewall groups one after another */
	for (gstart_job = 0, t = 0; gstart_job < o->nr_jobs;) {
		unsigned int gend = gstart_job + 1, gthreads, first = t;
		pthread_barrier_t barrier;
		uint64_t total_ns = 0;

		while (gend < o->nr_jobs && !o->jobs[gend].stonewall)
			gend++;
		/* interrupted: later groups do not start nor appear in the report */
		if (atomic_load(&bench_interrupted)) {
			res->nr_jobs = first;
			break;
		}
		for (i = gstart_job, gthreads = 0; i < gend; i++) {
			const struct bench_job_opts *j = &o->jobs[i];
			uint64_t jt = j->runtime_ns ? j->ramp_time_ns + j->runtime_ns : 0;

			gthreads += j->numjobs;
			if (jt > total_ns)
				total_ns = jt;
		}
		pthread_barrier_init(&barrier, NULL, gthreads);
		stop_signals_block(&sigs);
		for (i = 0; i < gthreads; i++) {
			tds[first + i].phase_first = first;
			tds[first + i].phase_n = gthreads;
			tds[first + i].start_barrier = &barrier;
			if (pthread_create(&tds[first + i].thread, NULL,
					   job_thread_fn, &tds[first + i])) {
				/* threads already started wait at the barrier:
				 * let the rest of the count through as failures */
				unsigned int k;

				for (k = i; k < gthreads; k++) {
					job_error(&tds[first + k], -EAGAIN,
						  "cannot start the job thread");
					atomic_store(&tds[first + k].progress.done, true);
				}
				for (k = i; k < gthreads; k++)
					pthread_barrier_wait(&barrier);
				gthreads = i;
				break;
			}
		}
		stop_signals_restore(&sigs);
		wait_group(o, tds + first, gthreads, total_ns, res,
			   first + gthreads, t0);
		for (i = 0; i < gthreads; i++)
			pthread_join(tds[first + i].thread, NULL);
		pthread_barrier_destroy(&barrier);
		for (i = gstart_job; i < gend; i++)
			t += o->jobs[i].numjobs;
		gstart_job = gend;
	}
	res->wall_ns = bench_gettime_ns() - t0;
	getrusage(RUSAGE_SELF, &ru1);
	res->proc_usr_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	res->proc_sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
	busy1 = bench_machine_busy_s();
	res->others_cpus = -1.0;
	if (busy0 >= 0 && busy1 >= 0 && res->wall_ns) {
		double others = (busy1 - busy0 - res->proc_usr_s -
				 res->proc_sys_s) / ((double)res->wall_ns / 1e9);

		/* tick and rusage resolutions differ: never below none */
		res->others_cpus = others > 0 ? others : 0;
	}
	if (per_file)
		targets_counters(tg, nr_tg, true, &after);
	else
		dev_counters_read(dev, res->has_nvme, res->has_uring, res->has_scsi, &after);
	dev_counters_report(res, &before, &after);
	ret = 0;
out:
	for (i = 0; tds && i < nr_threads; i++) {
		res->abandoned |= tds[i].abandoned;
		job_teardown(&tds[i]);
	}
	/* abandoned: threads' requests are in flight; the structures stay */
	if (!res->abandoned) {
		free(tds);
		for (i = 0; i < nr_zsets; i++)
			bench_zbd_free(zsets[i]);
		free(zsets);
	}
	if (per_file) {
		for (i = 0; i < nr_tg && !res->abandoned; i++) {
			struct stat st;

			blk_dev_close(tg[i].dev);
			/* fio's unlink=1: regular files only, never a device */
			if (tg[i].unlink && !stat(tg[i].path, &st) &&
			    S_ISREG(st.st_mode) && unlink(tg[i].path))
				fprintf(stderr, "blkstack bench: unlink=1: cannot remove %s: %s\n",
					tg[i].path, strerror(errno));
		}
		free(tg);
		free(file_tg);
	} else if (!shared && !res->abandoned) {
		blk_dev_close(dev);
	}
	if (ret)
		bench_run_result_free(res);
	return ret;
}

void bench_run_result_free(struct bench_run_result *res)
{
	unsigned int i;

	for (i = 0; res->jobs && i < res->nr_jobs; i++) {
		free(res->jobs[i].prio);
		res->jobs[i].prio = NULL;
		bench_log_free(res->jobs[i].log);
		free(res->jobs[i].ss.iops);
		free(res->jobs[i].ss.bw);
	}
	for (i = 0; res->jobs && i < res->nr_jobs; i++) {
		if (!res->jobs[i].stages)
			continue;
		blk_stage_stats_free(res->jobs[i].stages);
		free(res->jobs[i].stages);
		res->jobs[i].stages = NULL;
	}
	free(res->jobs);
	res->jobs = NULL;
	res->nr_jobs = 0;
}
