/* SPDX-License-Identifier: MIT */
/*
 * blkstack bench options: fio's option names and meanings (fio HOWTO,
 * "Job file parameters"), parsed from the command line (--name=value) and
 * from fio job files ([global] and job sections).
 */
#ifndef BLKSTACK_BENCH_OPTIONS_H
#define BLKSTACK_BENCH_OPTIONS_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "blkstack/dev.h"
#include "bench/verify.h"

enum bench_rw {
	RW_READ = 0,    /* read */
	RW_WRITE,       /* write */
	RW_RANDREAD,    /* randread */
	RW_RANDWRITE,   /* randwrite */
	RW_RW,          /* rw, readwrite: sequential mixed */
	RW_RANDRW,      /* randrw */
	RW_TRIM,        /* trim */
	RW_RANDTRIM,    /* randtrim */
};

enum bench_rand_dist {
	DIST_RANDOM = 0, /* uniform */
	DIST_ZIPF,
	DIST_PARETO,
	DIST_NORMAL,
	DIST_ZONED,
	DIST_ZONED_ABS,
};

enum bench_output_format {
	OUT_NORMAL = 0,
	OUT_JSON,
	OUT_JSON_PLUS,  /* json+: json with fio's clat bins */
	OUT_TERSE,      /* terse (--minimal): fio's semicolon lines, terse_version 3..5 */
};

#define BENCH_OUT_NORMAL 1u
#define BENCH_OUT_JSON 2u	/* json or json+ (output_format says which) */
#define BENCH_OUT_TERSE 4u

enum bench_clocksource {
	CLK_AUTO = 0,   /* cpu when the TSC is invariant, else clock_gettime */
	CLK_GETTIME,    /* clock_gettime */
	CLK_CPU,        /* cpu (TSC) */
};

#define BENCH_MAX_DEVS 8
#define BENCH_MAX_NVME_FAULTS BLK_DEV_MAX_NVME_FAULTS
#define BENCH_NAME_MAX 64

/*
 * Device options: the registry's (include/blkstack/dev.h) in @p, first so
 * that its descriptors' offsets hold for this struct too; then the
 * consumer's own, which drivers to run.
 */
struct bench_dev_opts {
	struct blk_dev_params p;
	/* --dev=null,ram: drivers to run in turn */
	char devs[BENCH_MAX_DEVS][16];
	unsigned int nr_devs;
};

/* zonemode=: not given (strided if zonesize= is), none, strided, zbd */
enum { BENCH_ZONE_UNSET = 0, BENCH_ZONE_NONE, BENCH_ZONE_STRIDED, BENCH_ZONE_ZBD };

/* fio's ZBD_MAX_OPEN_ZONES: the most max_open_zones= may be */
#define BENCH_ZBD_MAX_OPEN 4096

/* bench_job_opts.buf_given: the buffer options given (fio's fio_option_is_set()) */
enum {
	BENCH_BUF_ZERO = 1, BENCH_BUF_REFILL = 2, BENCH_BUF_SCRAMBLE = 4,
	BENCH_BUF_COMPRESS = 8, BENCH_BUF_DEDUPE = 16, BENCH_BUF_PATTERN = 32,
};
/* dedupe_mode= */
enum { BENCH_DEDUPE_REPEAT = 0, BENCH_DEDUPE_WORKING_SET };
/* mem= / iomem=: where the I/O buffers come from (fio's memory.c) */
enum {
	BENCH_MEM_MALLOC = 0, BENCH_MEM_SHM, BENCH_MEM_SHMHUGE, BENCH_MEM_MMAP,
	BENCH_MEM_MMAPHUGE, BENCH_MEM_MMAPSHARED,
};

/* exit_what=: which jobs a job's end stops under exitall */
enum { BENCH_EXIT_GROUP = 0, BENCH_EXIT_STONEWALL, BENCH_EXIT_ALL };

#define BENCH_AT_LEN 256	/* "file:line" of each place an option was given */

/* One job, after [global] and the job's own options are applied. */
struct bench_job_opts {
	char name[BENCH_NAME_MAX];  /* section name or --name= */
	char description[256];      /* description=: printed as fio's (FIO_JOBDESC_SIZE) */
	enum bench_rw rw;           /* rw= / readwrite= (read) */
	uint32_t bs;                /* bs= / blocksize=, bytes (4096); bs=4k,8k read,write pair not supported */
	uint32_t iodepth;           /* iodepth=, 1..65536 (1) */
	uint32_t iodepth_batch;     /* iodepth_batch= / iodepth_batch_submit=, 0..iodepth (0: iodepth) */
	uint32_t numjobs;           /* numjobs=, 1..1024 (1) */
	uint64_t size;              /* size=, bytes (0: from device or 1 GiB) */
	uint64_t offset;            /* offset=, bytes (0) */
	uint64_t io_size;           /* io_size= / io_limit=, bytes per job (0: size) */
	uint64_t runtime_ns;        /* runtime= / timeout=, default unit s (0: no limit) */
	uint64_t ramp_time_ns;      /* ramp_time=, default unit s (0) */
	uint64_t stop_deadline_ns;  /* stop_deadline=, ns, 100 ms..1 h (30 s) */
	bool time_based;            /* time_based (0) */
	uint32_t rwmixread;         /* rwmixread=, 0..100 (50); rwmixwrite= sets 100 - it */
	bool norandommap;           /* norandommap (0) */
	bool randrepeat;            /* randrepeat=0|1 (1) */
	bool allrandrepeat;         /* allrandrepeat=0|1 (0): every generator seeded from randseed, whatever randrepeat says (fio's) */
	uint64_t randseed;          /* randseed= (fio's default seed) */
	uint32_t loops;             /* loops=, 1.. (1) */
	bool gtod_reduce;           /* gtod_reduce=0|1 (0): no latency timestamps */
	bool disable_lat;           /* disable_lat=0|1: no total latency (lat) (0) */
	bool group_reporting;       /* group_reporting (0) */
	enum bench_clocksource clocksource; /* clocksource=clock_gettime|cpu (auto) */
	uint32_t stonewall;         /* stonewall / wait_for_previous: start after earlier jobs end */
	bool new_group;             /* new_group: a new reporting group (groupid), run with the others */
	char wait_for[BENCH_NAME_MAX]; /* wait_for=JOB: start once every thread of that earlier job is done */
	uint64_t offset_increment;  /* offset_increment=: thread N of the job starts at offset + N * it (0) */
	enum bench_verify verify;   /* verify=: fio's methods (verify.h) or none (none) */
	bool verify_given;          /* verify= was given (verify_pattern= alone means meta) */
	bool do_verify;             /* do_verify=0|1: read back after the writes (1) */
	bool verify_only;           /* verify_only=0|1: no workload, only check the region (0) */
	char verify_dump_dir[1024]; /* verify_dump_dir=PATH: where bad blocks are written (.) */
	char verify_pattern[1024];  /* verify_pattern= as given ("": none) */
	struct bench_verify_pattern verify_pat; /* ... parsed */
	uint32_t verify_interval;   /* verify_interval=: bytes per header (0: bs) */
	uint32_t verify_offset;     /* verify_offset=: the header's place in each interval (0) */
	bool verify_fatal;          /* verify_fatal=0|1: the first bad block ends the job (0) */
	uint8_t verify_dump;        /* 0: not given (bad blocks written out), 1: verify_dump=0 (none), 2: =1 (and the expected data) */
	uint64_t verify_backlog;    /* verify_backlog=N: read back the writes every N blocks written (0: after the workload) */
	uint64_t verify_backlog_batch; /* verify_backlog_batch=: blocks read back each time (0: verify_backlog) */
	/* trim verification (fio's trim_*; engine.c job_prep_trim()) */
	uint32_t trim_percentage;   /* trim_percentage=: share of verified writes trimmed after writing (0) */
	bool trim_verify_zero;      /* trim_verify_zero=0|1: a trimmed block must read back zeros (1) */
	uint64_t trim_backlog;      /* trim_backlog=N: trim the queued blocks every N blocks written (0: never) */
	uint64_t trim_backlog_batch; /* trim_backlog_batch=: blocks trimmed each time (0: all queued) */
	bool experimental_verify;   /* experimental_verify=0|1: taken, noted (the written map is kept) */
	bool verify_state_save;     /* verify_state_save=0|1: write the map of written blocks at the end of the writes (0; fio's default is 1) */
	bool verify_state_load;     /* verify_state_load=0|1: verify_only reads back the blocks of the saved map only (0) */
	/*
	 * What writes carry and where the I/O buffers come from (fio's
	 * zero_buffers, refill_buffers, scramble_buffers, buffer_pattern,
	 * buffer_compress_*, dedupe_*, mem=, iomem_align=, hugepage-size=;
	 * engine.c's job_buf_*() and docs/bench.md "Write buffer contents").
	 * @buf_given: BENCH_BUF_* bits, which of them were given.
	 */
	uint8_t buf_given;
	bool zero_buffers;          /* zero_buffers: every buffer all zeros (0) */
	bool refill_buffers;        /* refill_buffers: filled again before each write (0) */
	bool scramble_buffers;      /* scramble_buffers=0|1: offset and sequence in each 512 bytes of a write (1) */
	struct bench_verify_pattern buf_pat; /* buffer_pattern=, parsed (len 0: none) */
	uint32_t compress_pct;      /* buffer_compress_percentage=, 0..100: zeros (or the pattern) in each chunk (0) */
	uint32_t compress_chunk;    /* buffer_compress_chunk=, bytes (512; 0: the smallest bs) */
	uint32_t dedupe_pct;        /* dedupe_percentage=, 0..100: writes that repeat an earlier buffer (0) */
	uint8_t dedupe_mode;        /* dedupe_mode=: BENCH_DEDUPE_* (repeat) */
	bool dedupe_global;         /* dedupe_global=0|1: the working set spans every job's threads (0) */
	uint32_t dedupe_ws_pct;     /* dedupe_working_set_percentage=, 0..100, of size= (5) */
	uint8_t mem_type;           /* mem= / iomem=: BENCH_MEM_* (malloc) */
	char mem_file[256];         /* mem=mmap:FILE and kin: the file mapped ("": anonymous) */
	uint32_t mem_align;         /* iomem_align= / mem_align=: bytes past a page start (0) */
	uint64_t hugepage_size;     /* hugepage-size=: huge buffers are a multiple of it (2 MiB) */
	bool has_rw;                /* rw= was given (matrix mode when no job sets it) */
	int64_t rw_mod;             /* rw=<pattern>:N: sequential: bytes skipped after each I/O
	                             * (negative: backwards); random: I/Os per random offset; 0: none */
	char ioengine[16];          /* ioengine=: fio's engine, "" when not given (fio_opts.h) */
	bool engine_sync;           /* a synchronous ioengine: one I/O in flight */
	/*
	 * What the job's ioengine= asks of the devices of its files on
	 * dev=uring (bench_pick_devs(), unless the user gave the option):
	 * a sync engine issues each I/O itself (uring_inline=always),
	 * posixaio through glibc's one helper thread per file descriptor
	 * (uring_engine=pool, pool_threads=1).  0: the device's.
	 */
	uint8_t dev_inline;         /* 1 + uring_inline= (enum blk_uring_inline), or 0 */
	uint8_t dev_engine;         /* 1 + uring_engine= (enum blk_uring_engine), or 0 */
	uint32_t dev_pool_threads;  /* pool_threads=, or 0 */
	uint32_t kb_base;           /* kb_base=1024|1000: unit prefixes of later sizes (1024) */
	/*
	 * The job's own files (fio's filename=, directory=, filename_format=,
	 * nrfiles=, filesize=, direct=/buffered=): on dev=uring each thread
	 * runs on the files bench_job_file() names, bench_job_nr_files() of
	 * them.  filename= and direct= are also device options (o->dev.p)
	 * for the matrix and the stacks on uring, which open one file.
	 */
	char filename[4096];        /* filename= as given, fio's a:b list ("": none) */
	char directory[1024];       /* directory=: where the job's files are, a:b ("": .) */
	char filename_format[256];  /* filename_format= ($jobname.$jobnum.$filenum) */
	uint32_t nrfiles;           /* nrfiles= / nr_files=: files per thread without filename= (1) */
	uint64_t filesize;          /* filesize=: bytes of each file (0: size / files) */
	bool direct;                /* direct=, or buffered= inverted (0) */
	uint64_t number_ios;        /* number_ios=: I/Os per loop at most, not time_based (0: none) */
	uint64_t startdelay_ns;     /* startdelay=, default unit s: the thread starts this late (0) */
	uint64_t startdelay_max_ns; /* startdelay=a-b: each thread picks in [a, b]; 0: not a range */
	/*
	 * rate=, rate_iops=, rate_min=, rate_iops_min=: per direction, read,
	 * write, trim (fio's read,write[,trim] lists: one value sets all
	 * three, "R," reads only, ",W" writes and trims); 0: none
	 */
	uint64_t rate[3];           /* rate=: bytes/s per thread and direction */
	uint64_t rate_iops[3];      /* rate_iops=: I/Os per second per thread and direction */
	bool rate_poisson;          /* rate_process=poisson (fio's): exponential gaps of the rate's mean (0: linear) */
	uint64_t thinktime_ns;      /* thinktime=, default unit us: stall after thinktime_blocks I/Os (0) */
	uint64_t thinktime_spin_ns; /* thinktime_spin=, default unit us: of the stall, spun not slept (0) */
	uint32_t thinktime_blocks;  /* thinktime_blocks=: I/Os between stalls (1) */
	bool think_blocks_set;      /* thinktime_blocks= was given (fio's fio_option_is_set()) */
	uint64_t thinktime_iotime_ns; /* thinktime_iotime= (fio's, default unit s): with thinktime, a stall once I/O has run this long (0: none) */
	/*
	 * Block sizes that vary per I/O, in multiples of the smallest:
	 * bsrange=a-b (fio's draw: a + b x uniform, aligned down to a, at
	 * most b), or bssplit=SIZE/PCT:... (0 entries: neither)
	 */
	uint32_t bs_min, bs_max;    /* bsrange= (0: not given) */
#define BENCH_BSSPLIT_MAX 16
	uint32_t bssplit_nr;
	uint32_t bssplit_bs[BENCH_BSSPLIT_MAX];
	uint32_t bssplit_pct[BENCH_BSSPLIT_MAX]; /* adding up to 100 */
	/*
	 * fio's read,write[,trim] forms of bs=, bsrange= and bssplit=
	 * ("a,b": reads a, writes and trims b; an empty one: the plain
	 * value).  While parsing, bsd_fixed/bsd_min/bsd_max/bsd_nr hold what
	 * each direction was given; finish_jobs() then resolves each
	 * direction to a split (bsd_nr entries; a fixed size or bs= is one
	 * entry of 100) or a range (bsd_nr 0, bsd_min..bsd_max), and sets
	 * bs_min..bs_max to the smallest and largest size of any direction.
	 * bs_ddir: the directions differ (job_var_bs() draws by the I/O's
	 * direction, as fio's get_next_buflen()).
	 */
	bool bs_ddir;
	uint32_t bsd_fixed[3];      /* bs= per direction (0: the plain bs=) */
	uint32_t bsd_min[3], bsd_max[3]; /* bsrange= per direction (0: none) */
	uint32_t bsd_nr[3];         /* bssplit= entries per direction (0: none) */
	uint32_t bsd_bs[3][BENCH_BSSPLIT_MAX];
	uint32_t bsd_pct[3][BENCH_BSSPLIT_MAX];
	/* random_distribution= (fio's): how random offsets are drawn */
	uint32_t rand_dist;         /* enum bench_rand_dist (uniform) */
	double dist_param;          /* zipf: theta; pareto: h; normal: deviation in % */
	double dist_center;         /* 0..1, or -1: fio's default (random; normal: 0.5) */
#define BENCH_ZONES_MAX 16
	uint32_t dist_zones;        /* zoned, zoned_abs: the zones */
	uint32_t zone_pct[BENCH_ZONES_MAX];   /* share of the accesses */
	uint64_t zone_size[BENCH_ZONES_MAX];  /* zoned: % of the region; zoned_abs: bytes */
	/* size=N%, offset=N% (of the device), io_size=N% (of size): N, 0 for none */
	uint32_t size_pct, offset_pct, io_size_pct;
	/*
	 * fio's logs (log.h): write_lat_log=, write_bw_log=, write_iops_log=,
	 * write_hist_log= give each file's prefix ("": the job name), and
	 * *_on says it was asked for
	 */
	char lat_log[256], bw_log[256], iops_log[256], hist_log[256];
	bool lat_log_on, bw_log_on, iops_log_on, hist_log_on;
	uint64_t log_avg_msec;      /* log_avg_msec=: average over windows this long (0: every I/O) */
	uint64_t log_hist_msec;     /* log_hist_msec=: histogram windows (0: no histogram entries) */
	uint32_t log_hist_coarseness; /* log_hist_coarseness=, 0..6: 2^N bins summed (0) */
	bool log_max_value;         /* log_max_value=0|1: windows log the maximum, not the mean (0) */
	bool log_offset;            /* log_offset=0|1: entries carry the offset (0) */
	bool per_job_logs;          /* per_job_logs=0|1: the thread's number in the names (1) */
	/*
	 * CPU and memory placement (fio's cpumask=, cpus_allowed=,
	 * cpus_allowed_policy=, numa_cpu_nodes=, numa_mem_policy=): applied
	 * by each job thread to itself before it attaches to its device
	 */
	bool cpus_on;               /* cpumask= or cpus_allowed= given (the last one counts) */
	uint8_t cpus_policy;        /* cpus_allowed_policy=: enum bench_cpus_policy (shared) */
	cpu_set_t cpus;             /* ... their CPUs */
	bool numa_cpus_on;          /* numa_cpu_nodes= given */
	cpu_set_t numa_cpus;        /* ... the CPUs of those nodes (sysfs cpulist) */
	uint8_t mem_policy;         /* numa_mem_policy=: enum bench_mem_policy (none) */
	/*
	 * I/O priorities (fio's prio=, prioclass=, engines/cmdprio.c): each
	 * bio carries one (bi_ioprio, Linux's IOPRIO_PRIO_VALUE).  The job's
	 * own is prioclass/prio when either is given (class 0: BE), else 0;
	 * cmdprio_percentage= or cmdprio_bssplit= give a share of the reads
	 * and writes another one, cmdprio_class/cmdprio (class 0: RT)
	 */
	uint32_t ioprio;            /* prio=, 0..7 (0) */
	uint32_t ioprio_class;      /* prioclass=, 0..3 (0) */
	bool ioprio_given;          /* prio= or prioclass= given */
	uint64_t cmdprio_pct[3];    /* cmdprio_percentage=, per direction, 0..100 */
	uint64_t cmdprio_class[3];  /* cmdprio_class=, 1..3; 0: not given (RT) */
	uint64_t cmdprio_level[3];  /* cmdprio=, 0..7 */
#define BENCH_CMDPRIO_MAX 16
	/*
	 * cmdprio_bssplit=, reads and writes: entries of one block size,
	 * sorted by size (fio's order), zero shares dropped; prio -1 takes
	 * cmdprio_class/cmdprio
	 */
	uint32_t cmdprio_bs_nr[2];
	uint32_t cmdprio_bs[2][BENCH_CMDPRIO_MAX];
	uint32_t cmdprio_bs_pct[2][BENCH_CMDPRIO_MAX];
	int32_t cmdprio_bs_prio[2][BENCH_CMDPRIO_MAX];
	bool cmdprio_bssplit_on;    /* cmdprio_bssplit= given */
	bool log_prio;              /* log_prio=1: logs carry the whole priority, hex (0: 1 for RT, else 0) */
	uint64_t mem_nodes;         /* ... its nodes, bit N for node N (0..63) */
	/* rate_min=, rate_iops_min=, rate_cycle= (fio's): the job fails below them */
	uint64_t rate_min[3];       /* rate_min= / ratemin=: bytes/s per direction (0: none) */
	uint64_t rate_iops_min[3];  /* rate_iops_min=: I/Os per second per direction (0: none) */
	uint32_t rate_cycle_ms;     /* rate_cycle= / ratecycle=: ms averaged over (1000) */
	/*
	 * latency_target= (fio's io_u.c lat_target_*()): the job searches the
	 * deepest queue, up to iodepth, at which latency_percentile % of the
	 * I/Os completed in each latency_window have a total latency (lat) of
	 * at most the target; latency_target_ns 0: off, the depth is iodepth
	 */
	uint64_t latency_target_ns; /* latency_target=, default unit us (0: off) */
	uint64_t latency_window_ns; /* latency_window=, default unit us (0) */
	double latency_percentile;  /* latency_percentile=, 0..100 (100) */
	bool latency_run;           /* latency_run=0|1: keep adjusting after the search (0) */
	/*
	 * iodepth_batch_complete_min= (iodepth_batch_complete=),
	 * iodepth_batch_complete_max= (fio's): completions reaped at least
	 * (when the queue is full; 0: never sleep, poll) and at most per
	 * wait.  Neither given (batch_complete_set 0): every completion that
	 * is ready is reaped at once, blkstack's default
	 */
	uint32_t iodepth_batch_complete_min; /* (1) */
	uint32_t iodepth_batch_complete_max; /* (0: as _min, fio's) */
	bool batch_complete_set;    /* either was given */
	/*
	 * fio's steady state (ss=, ss_dur=, ss_ramp=): once a second after
	 * ss_ramp, the job's (its group's, with group_reporting) IOPS or
	 * bandwidth of the last second is sampled; when the last ss_dur of
	 * samples stay within ss_limit of their mean (max deviation) or
	 * their least-squares slope is below it, the job ends (attained).
	 * Off while ss_dur_ns is 0.
	 */
	char ss_spec[48];           /* ss= as given (iops_slope:0.01%) */
	bool ss_bw;                 /* bw or bw_slope: bytes/s, else I/Os per second */
	bool ss_slope;              /* *_slope: the slope, else the max deviation */
	bool ss_pct;                /* limit has %: relative to the window's mean */
	double ss_limit;            /* the limit: %, I/Os per second or bytes/s */
	uint64_t ss_dur_ns;         /* ss_dur= / steadystate_duration=, whole s (0: off) */
	uint64_t ss_ramp_ns;        /* ss_ramp= / steadystate_ramp_time= (0) */
	bool allow_file_create;     /* allow_file_create=0|1: 0: a missing file is an error (1) */
	bool unlink;                /* unlink=0|1: remove the job's regular files after the run (0) */
	/*
	 * Syncs (engine.c job_sync()), fio's: a FLUSH to the device (fio's
	 * DDIR_SYNC, DDIR_DATASYNC, DDIR_SYNC_FILE_RANGE all become one) once
	 * N writes have been issued since the last, after they complete
	 */
	uint32_t fsync_blocks;      /* fsync=N (0: none) */
	uint32_t fdatasync_blocks;  /* fdatasync=N (0: none) */
	uint32_t sfr_blocks;        /* sync_file_range=FLAGS[:N] (0: none; N 1 when not given) */
	uint32_t barrier_blocks;    /* write_barrier=N: every Nth write FUA (0: none) */
	bool end_fsync;             /* end_fsync=0|1: a FLUSH after the workload (0) */
	bool fsync_on_close;        /* fsync_on_close=0|1: the same, fio's at file close (0) */
	bool invalidate;            /* invalidate=0|1: drop a regular file's page cache before the job (1) */
	bool pre_read;              /* pre_read=0|1: read the job's regular files into the page cache first (0) */
	bool overwrite;             /* overwrite=0|1: a missing file is written (laid out) before the jobs (0) */
	bool create_only;           /* create_only=0|1: files created, no I/O (0) */
	bool file_append;           /* file_append=0|1: offset= from the file's end (finish_jobs()) (0) */
	char write_iolog[256];      /* write_iolog=FILE: fio's iolog (version 3) of the I/O issued ("": none) */
	/*
	 * read_iolog=FILE: replay fio's iolog (iolog.h) instead of the
	 * workload; finish_jobs() sets size=, bs=, rw= and filename= from it
	 */
	char read_iolog[256];       /* ("": none) */
	bool replay_no_stall;       /* replay_no_stall=0|1: as fast as possible, not at the log's times (0) */
	char replay_redirect[256];  /* replay_redirect=FILE: every file of the log is this one ("": none) */
	uint64_t replay_scale;      /* replay_scale=N: offsets divided by N (1) */
	uint64_t replay_align;      /* replay_align=N: offsets aligned down to N (0: none) */
	uint32_t replay_time_scale; /* replay_time_scale=PCT: the log's times at this speed (100) */
	bool read_iolog_chunked;    /* read_iolog_chunked=0|1: accepted, the log is read whole (0) */
	uint64_t replay_bytes;      /* set by finish_jobs(): the log's I/O bytes */
	/*
	 * fill_device=0|1 (fill_fs): ENOSPC or EDQUOT ends the job, not as an
	 * error (fio's); without size= the region is the device from offset,
	 * and a regular file without size= is refused (fio would fill the
	 * file system).  @fill_device_at: "file:line" it was set at, "" for
	 * the command line.
	 */
	/*
	 * zonemode= (fio's): BENCH_ZONE_* ; strided: zonesize bytes are
	 * transferred in a zone of zonerange bytes (0: zonesize), then the
	 * job moves on by zonerange + zoneskip, back to offset past the end
	 */
	uint8_t zonemode;
	uint64_t zonesize, zonerange, zoneskip;
	/*
	 * zonemode=zbd (fio's zone emulation on a device that is not zoned,
	 * docs/bench.md): @zonecapacity bytes of each zone writable (0:
	 * zonesize); @read_beyond_wp: reads go anywhere, not only to written
	 * data; @max_open_zones: zones written at once on the device (0: no
	 * limit), @job_max_open_zones: by one thread; @ignore_zone_limits:
	 * accepted (emulated zones have no device limits);
	 * @zone_reset_threshold (0..1 of the region written) and
	 * @zone_reset_frequency (0..1: one write in 1/f resets its zone)
	 */
	uint64_t zonecapacity;
	bool read_beyond_wp, ignore_zone_limits;
	uint32_t max_open_zones, job_max_open_zones;
	char zrt_spec[24], zrf_spec[24];
	double zone_reset_threshold, zone_reset_frequency;
	/*
	 * exitall (fio's: any job with it makes every job's end stop
	 * others), exit_what= BENCH_EXIT_* (which: its reporting group, the
	 * running stonewall group, all, later ones too), exitall_on_error
	 * (the same, when the job ends in error)
	 */
	bool exitall, exitall_on_error;
	uint8_t exit_what;
	/* random_generator= (fio's): 0 tausworthe, 1 lfsr, 2 tausworthe64 */
	uint8_t random_generator;
	/* continue_on_error= (fio's): bit 0 read, 1 write, 2 verify errors
	 * (EIO, EILSEQ) counted and the job going on; 0: none */
	uint8_t continue_on_error;
	/*
	 * ignore_error= (fio's str_ignore_error_cb()): per class (0 read,
	 * 1 write, 2 verify; "READ,WRITE,VERIFY" lists of errno names or
	 * numbers separated by ':'), the errors that class goes on past; a
	 * class given replaces fio's default of EIO and EILSEQ, and sets its
	 * continue_on_error bit.  ignore_nr[c] 0: the default.
	 */
#define BENCH_IGNORE_MAX 16
	uint8_t ignore_nr[3];
	uint16_t ignore_err[3][BENCH_IGNORE_MAX]; /* positive errno values */
	bool error_dump;            /* error_dump=0|1: each error the job goes on past is printed too (0) */
	bool create_on_open;        /* create_on_open=0|1: a missing file is created empty when opened, not laid out (0) */
	uint32_t verify_async;      /* verify_async=N (fio's offload threads): taken, verified in the job's thread (noted) */
	bool fill_device;
	char fill_device_at[BENCH_AT_LEN];
	uint32_t ba;                /* blockalign= / ba=: random offsets' unit, bytes (0: the smallest bs) */
	/*
	 * blocksize_unaligned= / bs_unaligned= (fio's): bsrange= and
	 * bssplit= sizes any multiple of the device's logical block size
	 * within the range, not only of the smallest size; a sequential job's
	 * next I/O starts where the last ended
	 */
	bool bs_unaligned;
	/*
	 * percentage_random=R[,W[,T]] (fio's perc_rand[]), stored as the
	 * share that is sequential, 100 - R: of a random job's I/Os in a
	 * direction, that many % start where that direction's last ended
	 * (0: all random, fio's 100)
	 */
	uint8_t pct_seq[3];
	uint64_t max_latency_ns[3]; /* max_latency=R[,W[,T]] (fio's, default unit us): a read or write completing later than this ends the job with ETIMEDOUT (0: none) */
	/*
	 * file_service_type= (fio's): how a job with several files picks the
	 * file of its next I/O: BENCH_FST_RR (roundrobin, fio's default),
	 * _SEQ (sequential: a file's region whole, then the next), _RAND
	 * (random); @fst_nr: I/Os to a file before the next pick (the :N, 1)
	 */
#define BENCH_FST_RR 0
#define BENCH_FST_SEQ 1
#define BENCH_FST_RAND 2
	uint8_t fst;
	uint32_t fst_nr;
	uint64_t lockmem;           /* lockmem= (fio's): bytes each thread mlock(2)s for its run, less memory for the rest (0: none) */
	uint32_t iodepth_low;       /* iodepth_low= (fio's): a full queue is reaped down to it before refilling (0: iodepth) */
	/* fio's flows: jobs of one flow_id issue in the ratio of their flow= weights */
	uint32_t flow;              /* flow=, 0..1000: this job's weight (0: not in a flow) */
	uint32_t flow_id;           /* flow_id=: the flow (0) */
	uint64_t flow_sleep_ns;     /* flow_sleep=, default unit us: held back, wait for the I/Os in flight, then sleep this (0: retry at once) */
	/*
	 * fio's report options (docs/bench.md, "Output"): which latency
	 * percentiles are listed, at which percentiles, numbers' digits and
	 * units, directions summed, and which statistics are kept.  Zero is
	 * fio's default in each (so results built from zeroed options
	 * report as fio would): fio's 1s are kept inverted (*_off)
	 */
	bool clat_pct_off;          /* clat_percentiles=0 (fio's default 1) */
	bool lat_percentiles;       /* lat_percentiles=0|1 (0) */
	bool slat_percentiles;      /* slat_percentiles=0|1 (0) */
	char percentile_list[256];  /* percentile_list= as given (fio's default list) */
#define BENCH_PCT_MAX 20
	double pct[BENCH_PCT_MAX];  /* ... parsed, ascending, each in (0, 100] */
	uint32_t pct_nr;            /* ... how many (17; 0: fio's default list) */
	uint32_t pct_precision;     /* ... most decimals of an entry: the text's (2) */
	uint32_t sig_figs;          /* significant_figures=, 1..10: the text's numbers (4; 0: 4) */
	uint32_t unified_rw;        /* unified_rw_reporting=: BENCH_UNIFIED_* (none) */
	uint32_t unit_base;         /* unit_base=0|8|1: 1 the text's rates in bits (0: bytes) */
	bool stats_off;             /* stats=0: the job is left out of the report (fio's default 1) */
	bool disable_clat;          /* disable_clat=0|1: no completion latency (0) */
	bool disable_slat;          /* disable_slat=0|1: no submission latency (0) */
	bool disable_bw;            /* disable_bw_measurement= / disable_bw=0|1: no per-I/O bandwidth log entries (0) */
	bool disk_util_off;         /* disk_util=0: no disk stats of the device in the report (fio's default 1) */
	uint32_t bw_avg_ms;         /* bwavgtime=, ms: the bw samples' window (500; 0: 500) */
	uint32_t iops_avg_ms;       /* iopsavgtime=, ms: the iops samples' window (500; 0: 500) */
};

/* unified_rw_reporting= (fio's): each direction, their sum ("mixed"), or both */
enum { BENCH_UNIFIED_NONE = 0, BENCH_UNIFIED_MIXED, BENCH_UNIFIED_BOTH };

/* cpus_allowed_policy=: how a job's threads share its CPUs (fio's) */
enum bench_cpus_policy {
	CPUS_SHARED,	/* every thread may run on every CPU of the set */
	CPUS_SPLIT,	/* thread N (over all jobs, 0 first) gets CPU N mod count of the set */
};

/* numa_mem_policy=: the modes of set_mempolicy(2), as fio names them */
enum bench_mem_policy {
	MEMPOL_NONE,		/* not given */
	MEMPOL_DEFAULT,		/* default: the process's policy, as it is */
	MEMPOL_PREFER,		/* prefer:N */
	MEMPOL_BIND,		/* bind:NODES */
	MEMPOL_INTERLEAVE,	/* interleave[:NODES] (all online nodes) */
	MEMPOL_LOCAL,		/* local: the node of the CPU that allocates */
};

#define BENCH_MAX_JOBS 64
/* files of one job thread (nrfiles=, filename=a:b): each is a device */
#define BENCH_MAX_FILES 256
#define BENCH_MAX_OPTS 288	/* bench's options and the registry's */

/* --count_instructions: how instructions per I/O are counted */
enum bench_count_insn {
	BENCH_INSN_OFF = 0,
	BENCH_INSN_PERF,      /* perf_event_open(PERF_COUNT_HW_INSTRUCTIONS) */
	BENCH_INSN_CALLGRIND, /* re-run under valgrind's callgrind, per layer */
};

struct bench_opts {
	struct bench_dev_opts dev;
	struct bench_job_opts jobs[BENCH_MAX_JOBS]; /* [0, nr_jobs) are set */
	unsigned int nr_jobs;
	enum bench_output_format output_format; /* --output-format=normal|json|json+|terse */
	unsigned int terse_version; /* --terse-version=3|4|5 (3, fio's default) */
	/*
	 * --status-interval=TIME: the report so far every TIME (fio's), ns;
	 * 0: none.  status_out: where it goes (the run's report stream,
	 * set by bench_main())
	 */
	uint64_t status_interval_ns;
	FILE *status_out;
	/*
	 * The reports written, BENCH_OUT_* bits: fio's comma list
	 * (--output-format=normal,json), written in fio's order: terse,
	 * JSON, normal.  @output_format is then the list's JSON (json+ over
	 * json), else terse, else normal.
	 */
	unsigned int out_mask;
	char output[256];           /* --output=FILE, "" for stdout */
	char plot_dir[1024];        /* --plot=DIR: SVG pictures drawn by gnuplot (plot.h), "" for none */
	bool matrix;                /* --matrix or no workload given */
	bool quiet_progress;        /* --eta=never */
	bool eta_always;            /* --eta=always */
	bool help;                  /* --help */
	bool parse_only;            /* --parse-only: check, run nothing */
	bool fio_table;             /* --fio-options: print the fio option table */
	/* --section=NAME (fio's, repeatable): only these sections of the job files run */
#define BENCH_MAX_SECTIONS 16
	char sections[BENCH_MAX_SECTIONS][BENCH_NAME_MAX];
	unsigned int nr_sections;
	bool lock_stats;            /* --lock_stats=1: the lock profile at the end */
	/* --count_instructions[=perf|callgrind]: enum bench_count_insn */
	uint8_t count_insn;
	/* what the run does differently from what the jobs asked, one line
	 * each (bench_err_add()): printed before the run as notes */
	char notes[2048];
	/*
	 * Where each device option was given, by option, one place a line:
	 * "file:line" of a job file, "" for the command line (as many as
	 * fit); for the messages of the registry's check
	 * (bench_pick_devs()).  @parse_at: the job file's line being
	 * applied, NULL on the command line.
	 */
	char given_at[BENCH_MAX_OPTS][BENCH_AT_LEN];
	const char *parse_at;
};

/**
 * bench_opts_init() - defaults for everything; no jobs (jobs[] is left as
 * it is: a job is written whole when it is added).
 * @o: options to fill.
 */
void bench_opts_init(struct bench_opts *o);

/**
 * bench_job_defaults() - one job with fio's defaults.
 */
void bench_job_defaults(struct bench_job_opts *j);

/**
 * bench_parse_args() - parse `blkstack bench` arguments.
 * @o: initialised with bench_opts_init().
 * @argc: argument count (argv[0] is "bench").
 * @argv: arguments: --name=value options, and job file paths.
 * @err: receives one line naming the option and what is allowed.
 * @errlen: size of @err.
 *
 * Command-line job options before the first --name= form one job, as fio
 * does; with job files, command-line job options apply as [global] to every
 * job.  Device options may appear anywhere.
 * Return: 0, or -EINVAL with @err set.
 */
int bench_parse_args(struct bench_opts *o, int argc, char **argv, char *err,
		     size_t errlen);

/**
 * bench_parse_jobfile() - read a fio job file into @o.
 * @o: options; jobs are appended.
 * @path: file name.
 * @global: options from the command line that act as [global] defaults.
 * @err, @errlen: message naming file, line and option.
 *
 * Return: 0, -EINVAL with @err set, -errno when the file cannot be read.
 */
int bench_parse_jobfile(struct bench_opts *o, const char *path,
			const struct bench_job_opts *global, char *err,
			size_t errlen);

/**
 * bench_set_option() - apply one name=value pair.
 * @o: options (device options land in o->dev).
 * @job: job being built (job options land here).
 * @name: option name without leading dashes.
 * @value: value, or NULL for a bare option (time_based).
 * @err, @errlen: message on failure.
 *
 * Return: 0; -EINVAL for a bad value (message names option and range);
 * -ENOENT for an unknown option; -EOPNOTSUPP for a fio option blkstack
 * does not implement (message says so).
 */
int bench_set_option(struct bench_opts *o, struct bench_job_opts *job,
		     const char *name, const char *value, char *err,
		     size_t errlen);

/** bench_rw_name() - fio's name for @rw ("randread"). */
const char *bench_rw_name(enum bench_rw rw);

/** bench_rw_is_random(), bench_rw_reads(), bench_rw_writes() - classify. */
bool bench_rw_is_random(enum bench_rw rw);
bool bench_rw_reads(enum bench_rw rw);
bool bench_rw_writes(enum bench_rw rw);

/**
 * bench_parse_size() - fio size: integer with optional k/m/g/t/p suffix,
 * as fio reads it with its default kb_base=1024: k, kb, KB are 1024 and,
 * backwards from the standard, the IEC spellings ki, kib, KiB are 1000;
 * an optional trailing b; 0x hex without a suffix.
 * Return: 0; -EINVAL for bad syntax; -ERANGE when the value, suffix
 * applied, does not fit in 64 bits.
 */
int bench_parse_size(const char *s, uint64_t *out);

/**
 * bench_parse_time() - fio time: integer with optional unit us/ms/s/m/h/d
 * (also usec, msec, sec, min, and ns/nsec for nanosecond options);
 * @def_unit_ns applies without a unit (1e9 for runtime).
 * Return: 0; -EINVAL for bad syntax (or a zero @def_unit_ns); -ERANGE when
 * the value in ns does not fit in 64 bits.
 */
int bench_parse_time(const char *s, uint64_t def_unit_ns, uint64_t *out_ns);

/**
 * bench_show() - user text made safe for a message: at most @max_chars
 * characters then "...", control bytes, invisible characters and bytes
 * that are not UTF-8 as \xNN.
 * @buf: output; @len bytes, at least 4 (@max_chars * 4 + 4 holds any input).
 * @s, @n: the text and its length in bytes.
 * Return: @buf.
 */
const char *bench_show(char *buf, size_t len, const char *s, size_t n,
		       size_t max_chars);

/**
 * bench_err_add() - one more problem in a parse's message buffer: the
 * messages are lines, the first at @err[0], each later one after a '\n',
 * so that one run lists every problem.  When @err is full, its end says
 * "(more problems not shown)".
 * @err, @errlen: the buffer; "" before the first problem.
 * @msg: the problem, one line.
 */
void bench_err_add(char *err, size_t errlen, const char *msg);

/**
 * bench_option_known() - whether blkstack bench implements the option
 * @name (a name or an alias of its option table).
 */
bool bench_option_known(const char *name);

/**
 * bench_fio_table() - docs/bench.md's table of every fio option and every
 * fio engine, with what blkstack does with each (fio_opts.h), in Markdown.
 */
void bench_fio_table(FILE *f);

/**
 * bench_pick_devs() - the drivers to run when --dev= was not given: the
 * one the jobs' ioengine= maps to (fio_opts.h), dev=uring for jobs with
 * files (bench_job_has_file()) and no engine, dev=null otherwise (and
 * null,ram for the matrix).  With --dev= given, a note in o->notes for
 * each job option it overrides (ioengine=, the job's files on a stack
 * without files or on the one file of a stack on uring, direct= without
 * a page cache).  Each job's engine's way of issuing on dev=uring
 * (dev_inline, dev_engine, dev_pool_threads), with a note where a device
 * option the user gave wins.  Then the driver options given, on the
 * command line or in job files, must each be for a device of the run
 * (the registry's blk_dev_check_opt()).
 * Return: 0, or -EINVAL with @err naming the jobs whose engines map to
 * different drivers, a list of files on a driver that opens one file, or
 * each driver option no device of the run takes, one line each.
 */
int bench_pick_devs(struct bench_opts *o, char *err, size_t errlen);

/**
 * bench_name_list() - one name of fio's list of names (filename=a:b,
 * directory=a:b; fio's get_next_str()): ':' separates the names, "\:"
 * is a colon within one, and empty names are skipped.
 * @list: the option's value.
 * @idx: the name wanted.
 * @buf, @len: receives that name, unescaped ("" when there is none);
 *	@buf may be NULL to count only.
 * Return: the number of names in @list; -ENAMETOOLONG when name @idx does
 * not fit in @buf.
 */
int bench_name_list(const char *list, unsigned int idx, char *buf, size_t len);

/**
 * bench_job_nr_files() - the files each thread of job @j runs on, as fio
 * counts them: the names of filename= when it is given (every thread
 * shares them), else nrfiles=.
 */
unsigned int bench_job_nr_files(const struct bench_job_opts *j);

/**
 * bench_job_file() - file @filenum of thread @jobnum of job @j, as fio
 * names it (filesetup.c add_file(), init.c make_filename()): name
 * @filenum of filename= when it is given, else filename_format= with
 * $jobname, $jobnum and $filenum (fio's default
 * "$jobname.$jobnum.$filenum"); under directory= when it is given, even
 * an absolute name, as fio puts it: the first directory of a:b for
 * filename=, directory @jobnum modulo their number for the others.
 * @buf, @len: the path.
 * Return: 0; -ENAMETOOLONG.
 */
int bench_job_file(const struct bench_job_opts *j, unsigned int jobnum,
		   unsigned int filenum, char *buf, size_t len);

/**
 * bench_job_has_file() - whether job @j asks for files of its own:
 * filename=, directory=, filename_format=, nrfiles= above 1, filesize=
 * or an ioengine= that maps to dev=uring.
 */
bool bench_job_has_file(const struct bench_job_opts *j);

/** bench_usage() - print the option list to @f. */
void bench_usage(FILE *f);

/** bench_ab_usage() - the A/B options (src/bench/ab.c), for bench_usage(). */
void bench_ab_usage(FILE *f);

#endif /* BLKSTACK_BENCH_OPTIONS_H */
