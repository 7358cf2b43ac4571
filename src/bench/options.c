// SPDX-License-Identifier: MIT
/*
 * blkstack bench options: one table of every option, shared by the command
 * line and by job files.
 *
 * Names, value syntax and defaults follow the fio HOWTO ("Job file
 * parameters", "Parameter types") so that a fio job file means the same
 * thing here.  fio options that blkstack does not implement are named in
 * their own list so that a user gets "not supported" rather than "unknown"
 * and knows the file is fine for fio itself.
 */
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/fio_opts.h"
#include "bench/iolog.h"
#include "bench/options.h"
#include "blkstack/dev.h"
#include "blkstack/nvme_ctrl.h"
#include "blkstack/uring.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

#define USAGE_COL 28	/* column of the help text in bench_usage() */

/* Value types and flags: the registry's (include/blkstack/dev.h). */
#define OPT_UINT BLK_OPT_UINT
#define OPT_SIZE BLK_OPT_SIZE
#define OPT_TIME BLK_OPT_TIME
#define OPT_BOOL BLK_OPT_BOOL
#define OPT_STR BLK_OPT_STR
#define OPT_CHOICE BLK_OPT_CHOICE

enum opt_where {
	OPT_JOB,	/* struct bench_job_opts */
	OPT_DEV,	/* struct bench_dev_opts: applies to the whole run */
	OPT_IGNORED,	/* accepted so fio job files run, no effect */
};

/* Groups only decide where bench_usage() lists an option: the job's, the
 * device's (dev= and every driver's queue options), then one per registry
 * driver, GRP_DRIVER + its index in blk_drivers(). */
enum opt_group {
	GRP_JOB,
	GRP_DEV,
	GRP_DRIVER,
};

#define OPT_F_ALIGN512	BLK_OPT_F_ALIGN512
#define OPT_F_POW2	BLK_OPT_F_POW2
#define OPT_F_CHOICE_STR BLK_OPT_F_CHOICE_STR
#define OPT_F_PRINTABLE	BLK_OPT_F_PRINTABLE
/* bench's own: "N%" is taken, as fio takes it for this size (set_pct()) */
#define OPT_F_PERCENT	0x100
/* bench's own: the option may be given bare (write_lat_log): value "" */
#define OPT_F_BARE	0x200
/*
 * bench's own: fio's read,write[,trim] list (rate=): the field is a
 * uint64_t[3] (set_ddir_list())
 */
#define OPT_F_DDIR	0x400

#define opt_choice blk_opt_choice

struct opt_def;

/* Everything a value parser or an apply hook needs to do its work. */
struct opt_ctx {
	const struct opt_def *d;
	const char *name;	/* as the user spelled it (may be an alias) */
	const char *val;
	struct bench_opts *o;
	struct bench_job_opts *j;
	char *err;
	size_t errlen;
	char one[80];	/* fio's "v,v[,v]": the one value all of them are */
	bool in_ddir;	/* per_ddir(): parsing one direction's part */
	/* a read,write[,trim] list being parsed part by part: the list as
	 * given and the part's direction (0 read, 1 write, 2 trim), which
	 * val_err() names; NULL: a plain value */
	const char *whole;
	unsigned int part;
};

struct opt_def {
	const char *name;
	const char *alias[3];	/* NULL-terminated */
	enum blk_opt_type type;
	int group;		/* enum opt_group, GRP_DRIVER + n */
	enum opt_where where;
	size_t off;		/* offset in the job or dev struct */
	size_t len;		/* size of that field */
	uint64_t min, max;	/* OPT_TIME: in ns */
	uint64_t unit_ns;	/* OPT_TIME: unit of a bare number */
	uint64_t store_ns;	/* OPT_TIME: unit of the stored field */
	unsigned int flags;
	const struct opt_choice *choices;	/* NULL-name terminated */
	const struct opt_choice *hidden;	/* also accepted, not listed */
	const char *const *unsupported;		/* fio values we reject */
	const char *unsupported_why;	/* why those values are refused, or NULL */
	/* Replaces the plain store; @v is the parsed number (choice: ->val). */
	int (*apply)(struct opt_ctx *c, uint64_t v);
	const char *metavar;	/* usage placeholder when the type's is wrong */
	const char *def;	/* default, parsed at init; NULL: zero */
	const char *help;
	const struct blk_opt_desc *reg;	/* a registry option: its descriptor */
	const struct opt_choice *bits;	/* a bit mask's bits (blk_opt_desc) */
};

#define JOBF(f) .where = OPT_JOB, .group = GRP_JOB, \
	.off = offsetof(struct bench_job_opts, f), \
	.len = sizeof(((struct bench_job_opts *)0)->f)
#define DEVF(f) .where = OPT_DEV, .group = GRP_DEV, \
	.off = offsetof(struct bench_dev_opts, f), \
	.len = sizeof(((struct bench_dev_opts *)0)->f)

static const struct opt_choice rw_choices[] = {
	{ "read", RW_READ },
	{ "write", RW_WRITE },
	{ "randread", RW_RANDREAD },
	{ "randwrite", RW_RANDWRITE },
	{ "rw", RW_RW },
	{ "readwrite", RW_RW },
	{ "randrw", RW_RANDRW },
	{ "trim", RW_TRIM },
	{ "randtrim", RW_RANDTRIM },
	{ NULL, 0 },
};

static const char *const rw_unsupported[] = {
	"trimwrite", "randtrimwrite", NULL,
};

static const struct opt_choice kb_base_choices[] = {
	{ "1024", 1024 },
	{ "1000", 1000 },
	{ NULL, 0 },
};

static const struct opt_choice rate_process_choices[] = {
	{ "linear", 0 },
	{ "poisson", 1 },
	{ NULL, 0 },
};

static const struct opt_choice clock_choices[] = {
	{ "clock_gettime", CLK_GETTIME },
	{ "cpu", CLK_CPU },
	{ NULL, 0 },
};

static const char *const clock_unsupported[] = { "gettimeofday", NULL };

static const struct opt_choice verify_choices[] = {
	{ "md5", VERIFY_MD5 },
	{ "crc64", VERIFY_CRC64 },
	{ "crc32c", VERIFY_CRC32C },
	{ "crc32c-intel", VERIFY_CRC32C },
	{ "crc32", VERIFY_CRC32 },
	{ "crc16", VERIFY_CRC16 },
	{ "crc7", VERIFY_CRC7 },
	{ "xxhash", VERIFY_XXHASH },
	{ "sha512", VERIFY_SHA512 },
	{ "sha256", VERIFY_SHA256 },
	{ "sha1", VERIFY_SHA1 },
	{ "sha3-224", VERIFY_SHA3_224 },
	{ "sha3-256", VERIFY_SHA3_256 },
	{ "sha3-384", VERIFY_SHA3_384 },
	{ "sha3-512", VERIFY_SHA3_512 },
	{ "meta", VERIFY_META },
	{ "pattern", VERIFY_PATTERN },
	{ "null", VERIFY_NULL },
	{ "none", VERIFY_NONE },
	{ NULL, 0 },
};

/* fio's own spelling of off, verify=0: accepted, none is what is listed */
static const struct opt_choice verify_hidden[] = {
	{ "0", VERIFY_NONE },
	{ NULL, 0 },
};

static int apply_rw(struct opt_ctx *c, uint64_t v);
static int apply_rwmixwrite(struct opt_ctx *c, uint64_t v);
static int apply_dev(struct opt_ctx *c, uint64_t v);
static int apply_reg_str(struct opt_ctx *c, uint64_t v);
static int apply_ioengine(struct opt_ctx *c, uint64_t v);
static int apply_startdelay(struct opt_ctx *c, uint64_t v);
static int apply_bsrange(struct opt_ctx *c, uint64_t v);
static int apply_rand_dist(struct opt_ctx *c, uint64_t v);
static int apply_profile_opt(struct opt_ctx *c, uint64_t v);
static int apply_bssplit(struct opt_ctx *c, uint64_t v);
static int apply_ioprio(struct opt_ctx *c, uint64_t v);
static int apply_cmdprio_bssplit(struct opt_ctx *c, uint64_t v);
static int apply_nrfiles(struct opt_ctx *c, uint64_t v);
static int apply_buffered(struct opt_ctx *c, uint64_t v);
static int apply_filesize(struct opt_ctx *c, uint64_t v);
static int apply_verify(struct opt_ctx *c, uint64_t v);
static int apply_verify_pattern(struct opt_ctx *c, uint64_t v);
static int apply_verify_dump(struct opt_ctx *c, uint64_t v);
static int apply_log_name(struct opt_ctx *c, uint64_t v);
static int apply_cpus_allowed(struct opt_ctx *c, uint64_t v);
static int apply_cpumask(struct opt_ctx *c, uint64_t v);
static int apply_numa_cpu_nodes(struct opt_ctx *c, uint64_t v);
static int apply_numa_mem_policy(struct opt_ctx *c, uint64_t v);
static int apply_create_serialize(struct opt_ctx *c, uint64_t v);
static int apply_fill_device(struct opt_ctx *c, uint64_t v);
static int apply_ignore_error(struct opt_ctx *c, uint64_t v);
static int apply_verify_async(struct opt_ctx *c, uint64_t v);
static int apply_experimental_verify(struct opt_ctx *c, uint64_t v);
static int apply_verify_async_cpus(struct opt_ctx *c, uint64_t v);
static int apply_ss(struct opt_ctx *c, uint64_t v);
static int apply_ss_dur(struct opt_ctx *c, uint64_t v);
static int apply_buf_bool(struct opt_ctx *c, uint64_t v);
static int apply_buf_uint(struct opt_ctx *c, uint64_t v);
static int apply_buffer_pattern(struct opt_ctx *c, uint64_t v);
static int apply_mem(struct opt_ctx *c, uint64_t v);
static int apply_sync_file_range(struct opt_ctx *c, uint64_t v);

static const struct opt_choice dedupe_mode_choices[] = {
	{ "repeat", BENCH_DEDUPE_REPEAT },
	{ "working_set", BENCH_DEDUPE_WORKING_SET },
	{ NULL, 0 },
};
static int apply_latency_percentile(struct opt_ctx *c, uint64_t v);
static int parse_number(struct opt_ctx *c, uint64_t *v);
static int apply_batch_complete(struct opt_ctx *c, uint64_t v);
static int apply_percentile_list(struct opt_ctx *c, uint64_t v);
static int apply_inverted(struct opt_ctx *c, uint64_t v);

static const struct opt_choice unified_choices[] = {
	{ "none", BENCH_UNIFIED_NONE },
	{ "mixed", BENCH_UNIFIED_MIXED },
	{ "both", BENCH_UNIFIED_BOTH },
	{ NULL, 0 },
};
/* fio's former boolean spellings, and 2 for both */
static const struct opt_choice unified_hidden[] = {
	{ "0", BENCH_UNIFIED_NONE },
	{ "1", BENCH_UNIFIED_MIXED },
	{ "2", BENCH_UNIFIED_BOTH },
	{ NULL, 0 },
};
/* unit_base=: fio's 0 (auto: bytes for every engine blkstack maps), 8, 1 */
static const struct opt_choice unit_base_choices[] = {
	{ "0", 0 },
	{ "8", 8 },
	{ "1", 1 },
	{ NULL, 0 },
};
static int apply_perc_rand(struct opt_ctx *c, uint64_t v);
static int apply_fst(struct opt_ctx *c, uint64_t v);
static int apply_think_blocks(struct opt_ctx *c, uint64_t v);

/* fallocate=: what blkstack does to a file it creates is fio's none/truncate */
static const struct opt_choice fallocate_choices[] = {
	{ "none", 0 },
	{ "truncate", 0 },
	{ "0", 0 },
	{ NULL, 0 },
};
static const char *const fallocate_unsupported[] = {
	"native", "posix", "keep", "1", NULL,
};
/*
 * io_submit_mode=: both of fio's values.  offload buys, in fio, submission
 * at the rate's times whatever the device's completions do (a pool of
 * submitting threads); blkstack's job thread already does that: paced, it
 * waits for completions only until the next I/O is due (job_pace_wait()),
 * and is held back only by a full iodepth, as fio's offloaded job is.
 * docs/bench.md, "io_submit_mode=offload", has the alternatives rejected.
 */
static const struct opt_choice submit_mode_choices[] = {
	{ "inline", 0 },
	{ "offload", 0 },
	{ NULL, 0 },
};

static const struct opt_choice zonemode_choices[] = {
	{ "none", BENCH_ZONE_NONE },
	{ "strided", BENCH_ZONE_STRIDED },
	{ "zbd", BENCH_ZONE_ZBD },
	{ NULL, 0 },
};
static int apply_zone_frac(struct opt_ctx *c, uint64_t v);

static const struct opt_choice randgen_choices[] = {
	{ "tausworthe", 0 },
	{ "lfsr", 1 },
	{ "tausworthe64", 2 },
	{ NULL, 0 },
};

static const struct opt_choice coe_choices[] = {
	{ "none", 0 },
	{ "read", 1 },
	{ "write", 2 },
	{ "io", 3 },
	{ "verify", 4 },
	{ "all", 7 },
	{ "0", 0 },
	{ "1", 7 },
	{ NULL, 0 },
};

static const struct opt_choice exit_what_choices[] = {
	{ "group", BENCH_EXIT_GROUP },
	{ "stonewall", BENCH_EXIT_STONEWALL },
	{ "all", BENCH_EXIT_ALL },
	{ NULL, 0 },
};

static const struct opt_choice cpus_policy_choices[] = {
	{ "shared", CPUS_SHARED },
	{ "split", CPUS_SPLIT },
	{ NULL, 0 },
};

/* bench's own options; the registry's device options join at init */
static const struct opt_def bench_opts_table[] = {
	/* Job options, fio's names and defaults. */
	{ .name = "name", .type = OPT_STR, JOBF(name), .flags = OPT_F_PRINTABLE,
	  .help = "job name; on the command line --name= starts a new job, --name=global a global section" },
	{ .name = "description", .type = OPT_STR, JOBF(description),
	  .flags = OPT_F_PRINTABLE,
	  .help = "the job's description, printed as fio's: a Description line in the text report, \"desc\" in JSON, the last terse field" },
	{ .name = "ioengine", .type = OPT_STR, JOBF(ioengine),
	  .apply = apply_ioengine, .metavar = "ENGINE",
	  .help = "fio's engine: libaio, io_uring run on dev=uring at iodepth; posixaio there on the pool, one worker per thread; sync, psync, vsync, pvsync, pvsync2 there at iodepth=1, each I/O issued by the job's thread; null, cpp_null on dev=null; the others are refused (--fio-options)" },
	{ .name = "kb_base", .type = OPT_CHOICE, JOBF(kb_base),
	  .choices = kb_base_choices, .def = "1024",
	  .help = "unit prefixes of the sizes that follow in the job: 1024 (fio's default: k, kb are 1024, ki, kib 1000) or 1000 (k, kb are 1000, ki, kib 1024)" },
	{ .name = "directory", .type = OPT_STR, JOBF(directory), .metavar = "PATH",
	  .help = "directory of the job's files (dev=uring): directory/filename, or directory/filename_format; fio's a:b spreads the threads' generated files over several" },
	{ .name = "filename_format", .type = OPT_STR, JOBF(filename_format),
	  .metavar = "FORMAT", .def = "$jobname.$jobnum.$filenum",
	  .help = "name of the job's files without filename= (dev=uring): $jobname, $jobnum (thread), $filenum (0 .. nrfiles-1)" },
	{ .name = "nrfiles", .alias = { "nr_files" }, .type = OPT_UINT,
	  JOBF(nrfiles), .min = 1, .max = BENCH_MAX_FILES, .def = "1",
	  .apply = apply_nrfiles,
	  .help = "files per job thread without filename= (dev=uring), used in turn, one I/O each (fio's file_service_type=roundrobin; file_service_type= picks others); size= is shared among them" },
	{ .name = "filesize", .type = OPT_SIZE, JOBF(filesize),
	  .max = UINT64_MAX, .def = "0", .apply = apply_filesize,
	  .help = "size of each of the job's files (a missing file is created so); without it each file is size / files; size= defaults to their sum" },
	{ .name = "buffered", .type = OPT_BOOL, JOBF(direct), .max = 1,
	  .apply = apply_buffered,
	  .help = "fio's inverse of direct=: buffered=0 is direct=1" },
	{ .name = "bsrange", .alias = { "blocksize_range" }, .type = OPT_STR,
	  JOBF(bs_min), .apply = apply_bsrange, .metavar = "MIN-MAX",
	  .help = "block sizes per I/O from MIN to MAX (multiples of 512), drawn as fio draws them: MIN + MAX x uniform, aligned down to MIN, at most MAX; fio's R,W[,T] form: a range per direction" },
	{ .name = "bssplit", .type = OPT_STR, JOBF(bssplit_nr),
	  .apply = apply_bssplit, .metavar = "SIZE/PCT:...",
	  .help = "block sizes per I/O in these shares (4k/50:64k/50); a size without a share takes an equal part of what is left; fio's R,W[,T] form: a split per direction" },
	{ .name = "random_distribution", .type = OPT_STR, JOBF(rand_dist),
	  .apply = apply_rand_dist, .metavar = "DIST",
	  .help = "random offsets: random (uniform), zipf:THETA[:CENTER], pareto:H[:CENTER], normal:DEV%[:CENTER], zoned:PCT/RANGE%:..., zoned_abs:PCT/SIZE:...; all but random turn the random map off, as in fio" },
	{ .name = "number_ios", .type = OPT_UINT, JOBF(number_ios),
	  .max = UINT64_MAX, .def = "0",
	  .help = "I/Os per loop at most, before the region is done (no effect with time_based, as in fio); 0: no limit" },
	{ .name = "startdelay", .type = OPT_STR, JOBF(startdelay_ns),
	  .apply = apply_startdelay, .metavar = "TIME[-TIME]",
	  .help = "start the job's threads this late (a bare number is in s); a range a-b: each thread picks a delay in it" },
	{ .name = "rate", .type = OPT_SIZE, JOBF(rate), .max = UINT64_MAX,
	  .def = "0", .flags = OPT_F_DDIR, .metavar = "R[,W[,T]]",
	  .help = "bytes per second per thread and direction, fio's read,write[,trim] list: one value caps reads and writes each, R, reads only, ,W writes and trims (0: no cap)" },
	{ .name = "rate_iops", .type = OPT_SIZE, JOBF(rate_iops),
	  .max = UINT64_MAX, .def = "0", .flags = OPT_F_DDIR,
	  .metavar = "IOPS[,IOPS[,IOPS]]",
	  .help = "I/Os per second per thread and direction, a list as rate= (0: no cap); not with rate=" },
	{ .name = "rate_process", .type = OPT_CHOICE, JOBF(rate_poisson),
	  .choices = rate_process_choices, .def = "linear",
	  .help = "how rate= and rate_iops= space I/Os: linear (evenly, fio's default) or poisson (fio's: each gap drawn from an exponential of the rate's mean, 1e6 / IOPS us, whole us)" },
	{ .name = "thinktime", .type = OPT_TIME, JOBF(thinktime_ns),
	  .max = UINT64_MAX, .unit_ns = NSEC_PER_USEC, .store_ns = 1,
	  .def = "0",
	  .help = "after every thinktime_blocks I/Os have completed, stall this long before the next (a bare number is in us)" },
	{ .name = "thinktime_spin", .type = OPT_TIME, JOBF(thinktime_spin_ns),
	  .max = UINT64_MAX, .unit_ns = NSEC_PER_USEC, .store_ns = 1,
	  .def = "0",
	  .help = "of each thinktime stall, this much is spent spinning on the CPU, the rest asleep (a bare number is in us)" },
	{ .name = "thinktime_blocks", .type = OPT_UINT, JOBF(thinktime_blocks),
	  .min = 1, .max = UINT32_MAX, .def = "1", .apply = apply_think_blocks,
	  .help = "I/Os issued between thinktime stalls; they complete first, so it caps the depth" },
	{ .name = "thinktime_iotime", .type = OPT_TIME, JOBF(thinktime_iotime_ns),
	  .max = 4294967295ull * 1000, .unit_ns = NSEC_PER_SEC, .store_ns = 1,
	  .def = "0",
	  .help = "with thinktime, a stall also once I/O has run this long since the last (fio's; a bare number is in s; then thinktime_blocks counts only when given)" },
	{ .name = "rate_min", .alias = { "ratemin" }, .type = OPT_SIZE,
	  JOBF(rate_min), .max = UINT64_MAX, .def = "0", .flags = OPT_F_DDIR,
	  .metavar = "R[,W[,T]]",
	  .help = "the job fails (EIO, as fio's) when a direction moved fewer bytes per second than its minimum over a rate_cycle, after the first 2 s (a list as rate=; 0: no check)" },
	{ .name = "rate_iops_min", .type = OPT_SIZE, JOBF(rate_iops_min),
	  .max = UINT64_MAX, .def = "0", .flags = OPT_F_DDIR,
	  .metavar = "IOPS[,IOPS[,IOPS]]",
	  .help = "as rate_min=, in I/Os per second; not with rate_min=" },
	{ .name = "rate_cycle", .alias = { "ratecycle" }, .type = OPT_UINT,
	  JOBF(rate_cycle_ms), .min = 1, .max = 86400000, .def = "1000",
	  .help = "rate_min= and rate_iops_min= average over this many ms" },
	{ .name = "max_latency", .type = OPT_TIME, JOBF(max_latency_ns),
	  .max = UINT64_MAX, .unit_ns = NSEC_PER_USEC, .store_ns = 1,
	  .def = "0", .flags = OPT_F_DDIR, .metavar = "R[,W[,T]]",
	  .help = "a read or write whose total latency exceeds this ends the job with ETIMEDOUT (fio's; a bare number is in us; a read,write[,trim] list as rate=; 0: no limit)" },
	{ .name = "latency_target", .type = OPT_TIME, JOBF(latency_target_ns),
	  .max = UINT64_MAX, .unit_ns = NSEC_PER_USEC, .store_ns = 1,
	  .def = "0",
	  .help = "search the deepest queue, up to iodepth, at which latency_percentile of the I/Os of each latency_window complete within this total latency (fio's; a bare number is in us; 0: off)" },
	{ .name = "latency_window", .type = OPT_TIME, JOBF(latency_window_ns),
	  .max = UINT64_MAX, .unit_ns = NSEC_PER_USEC, .store_ns = 1,
	  .def = "0",
	  .help = "latency_target=: each depth is tried over this long (a bare number is in us)" },
	{ .name = "latency_percentile", .type = OPT_STR,
	  JOBF(latency_percentile), .apply = apply_latency_percentile,
	  .def = "100", .metavar = "PCT",
	  .help = "latency_target=: the share of the window's I/Os, 0..100 (decimals allowed), that must be within the target; at 100 one late I/O lowers the depth at once (fio's)" },
	{ .name = "latency_run", .type = OPT_BOOL, JOBF(latency_run), .max = 1,
	  .def = "0",
	  .help = "latency_target=: 0 (fio's default): once the depth is found, run one more window at it, counted alone, and end the job; 1: keep adjusting the depth until the job ends" },
	{ .name = "steadystate", .alias = { "ss" }, .type = OPT_STR,
	  JOBF(ss_spec), .apply = apply_ss, .def = "iops_slope:0.01%",
	  .metavar = "iops|bw|iops_slope|bw_slope:LIMIT[%]",
	  .help = "steady state criterion (fio's; on with ss_dur): the max deviation of the per-second IOPS or bandwidth from its mean, or their slope, below LIMIT (I/Os per second, bytes per second, or % of the mean)" },
	{ .name = "steadystate_duration", .alias = { "ss_dur" }, .type = OPT_TIME,
	  JOBF(ss_dur_ns), .max = 86400ull * NSEC_PER_SEC, .unit_ns = NSEC_PER_SEC,
	  .store_ns = 1, .def = "0", .apply = apply_ss_dur,
	  .help = "end the job when ss= holds over this window of one-second samples (whole seconds, 1 s..1 d; 2 s at least for a slope); 0: off" },
	{ .name = "steadystate_ramp_time", .alias = { "ss_ramp" }, .type = OPT_TIME,
	  JOBF(ss_ramp_ns), .max = UINT64_MAX, .unit_ns = NSEC_PER_SEC,
	  .store_ns = 1, .def = "0",
	  .help = "steady state sampling starts this long after the job starts" },
	{ .name = "cpus_allowed", .type = OPT_STR, JOBF(cpus),
	  .apply = apply_cpus_allowed, .metavar = "CPUS",
	  .help = "the job's threads run on these CPUs only: 0,5,8-15 (numbered from 0, below the CPUs configured); set with sched_setaffinity(2) before the thread attaches to its device" },
	{ .name = "cpumask", .type = OPT_UINT, JOBF(cpus), .min = 1,
	  .max = UINT32_MAX, .apply = apply_cpumask, .metavar = "MASK",
	  .help = "as cpus_allowed=, a bit mask of CPUs 0-31: 34 (or 0x22) is CPUs 1 and 5" },
	{ .name = "cpus_allowed_policy", .type = OPT_CHOICE, JOBF(cpus_policy),
	  .choices = cpus_policy_choices, .def = "shared",
	  .help = "shared: every thread on every CPU of cpus_allowed/cpumask; split: thread N (counted over all jobs, from 0) on CPU N mod count of the set alone" },
	{ .name = "numa_cpu_nodes", .type = OPT_STR, JOBF(numa_cpus),
	  .apply = apply_numa_cpu_nodes, .metavar = "NODES",
	  .help = "the job's threads run on the CPUs of these online NUMA nodes: 0,2-3 or all (after cpus_allowed=, which it replaces, as in fio)" },
	{ .name = "numa_mem_policy", .type = OPT_STR, JOBF(mem_policy),
	  .apply = apply_numa_mem_policy, .metavar = "MODE[:NODES]",
	  .help = "the job thread's memory policy (set_mempolicy(2)), its I/O buffers moved to it (mbind(2)): default, prefer:N, bind:NODES, interleave[:NODES] (all online nodes), local" },
	{ .name = "blockalign", .alias = { "ba" }, .type = OPT_SIZE, JOBF(ba),
	  .min = 512, .max = 16 << 20, .flags = OPT_F_ALIGN512,
	  .help = "random offsets are multiples of this (default: the smallest bs); as in fio, any other value turns the random map off, and a sequential job ignores it" },
	{ .name = "bs_unaligned", .alias = { "blocksize_unaligned" },
	  .type = OPT_BOOL, JOBF(bs_unaligned), .max = 1, .def = "0",
	  .help = "bsrange= sizes any multiple of the device's logical block size in the range, bssplit= sizes as given, not cut to multiples of the smallest (fio's; its byte granularity is the sector here, as with O_DIRECT); sequential I/Os then start where the last ended" },
	{ .name = "percentage_random", .type = OPT_STR, JOBF(pct_seq),
	  .apply = apply_perc_rand, .metavar = "R[,W[,T]]",
	  .help = "of a random job's I/Os per direction, this % at random offsets, the others where that direction's last I/O ended (fio's; 0..100, default 100; a list as rate=)" },
	{ .name = "file_service_type", .type = OPT_STR, JOBF(fst),
	  .apply = apply_fst, .metavar = "roundrobin[:N]|sequential|random[:N]",
	  .help = "with several files, the file of each next I/O (fio's): roundrobin (in turn, the default), sequential (each file's region whole, then the next), random (any file not done this pass); :N, I/Os to a file before the next pick (1)" },
	{ .name = "lockmem", .type = OPT_SIZE, JOBF(lockmem), .max = UINT64_MAX,
	  .def = "0",
	  .help = "each thread locks this much memory with mlock(2) for its run, as fio does to leave the rest less (at most the machine's memory less 128 MiB, as fio); RLIMIT_MEMLOCK applies (0: none)" },
	{ .name = "iodepth_low", .type = OPT_UINT, JOBF(iodepth_low),
	  .max = 65536, .def = "0",
	  .help = "once iodepth I/Os are in flight, reap completions until at most this many are, then refill (fio's low-water mark; 0 or above iodepth: iodepth)" },
	{ .name = "flow", .type = OPT_UINT, JOBF(flow), .max = 1000, .def = "0",
	  .help = "weight in its flow_id: the jobs of a flow issue I/Os in the ratio of their weights (fio's token counts); 0: no flow" },
	{ .name = "flow_id", .type = OPT_UINT, JOBF(flow_id), .max = UINT32_MAX,
	  .def = "0", .help = "the flow the job's flow= weight is in" },
	{ .name = "flow_sleep", .type = OPT_TIME, JOBF(flow_sleep_ns),
	  .max = UINT64_MAX, .unit_ns = NSEC_PER_USEC, .store_ns = 1,
	  .def = "0",
	  .help = "a thread its flow holds back waits for its I/Os in flight, then sleeps this long (a bare number is in us); 0: it tries again at once" },
	{ .name = "io_submit_mode", .type = OPT_CHOICE, .group = GRP_JOB,
	  .where = OPT_IGNORED, .choices = submit_mode_choices,
	  .help = "inline (fio's default): the job's thread submits its own I/Os, as blkstack's always do; offload (fio: a pool of submitting threads, so that a rate is held whatever the completions do) is taken as the same thread: paced, it submits at the rate's times, waiting for completions only until the next is due, held back only by a full iodepth" },
	/* the job's files (dev=uring) */
	{ .name = "allow_file_create", .type = OPT_BOOL, JOBF(allow_file_create),
	  .max = 1, .def = "1",
	  .help = "0: a file of the job that does not exist is an error, not created (fio's)" },
	{ .name = "zonemode", .type = OPT_CHOICE, JOBF(zonemode),
	  .choices = zonemode_choices,
	  .help = "none; strided (fio's, the default when zonesize= is given): zonesize bytes from each zone of zonerange bytes, then on by zonerange + zoneskip; zbd: fio's zones emulated on a device that is not zoned, writes only at a zone's write pointer" },
	{ .name = "zonesize", .type = OPT_SIZE, JOBF(zonesize), .max = UINT64_MAX,
	  .def = "0", .flags = OPT_F_ALIGN512,
	  .help = "zonemode=strided: bytes transferred in a zone before the job skips to the next (more than zonerange: the zone again, from its start); zonemode=zbd: the size of the emulated zones (mandatory)" },
	{ .name = "zonecapacity", .type = OPT_SIZE, JOBF(zonecapacity), .max = UINT64_MAX,
	  .def = "0", .flags = OPT_F_ALIGN512,
	  .help = "zonemode=zbd: bytes of each zone that can be written (0: zonesize)" },
	{ .name = "zonerange", .type = OPT_SIZE, JOBF(zonerange), .max = UINT64_MAX,
	  .def = "0", .flags = OPT_F_ALIGN512,
	  .help = "zonemode=strided: the size of a zone (0: zonesize)" },
	{ .name = "zoneskip", .type = OPT_SIZE, JOBF(zoneskip), .max = UINT64_MAX,
	  .def = "0", .flags = OPT_F_ALIGN512,
	  .help = "zonemode=strided: bytes skipped after each zone" },
	{ .name = "read_beyond_wp", .type = OPT_BOOL, JOBF(read_beyond_wp), .max = 1,
	  .def = "0",
	  .help = "zonemode=zbd: 1: reads go where the offsets say; 0 (fio's default): only to data written, past an empty zone to one that holds some" },
	{ .name = "max_open_zones", .type = OPT_UINT, JOBF(max_open_zones),
	  .max = BENCH_ZBD_MAX_OPEN, .def = "0",
	  .help = "zonemode=zbd: zones of the device written at once, every job together; a full zone closes and another opens (0: no limit)" },
	{ .name = "job_max_open_zones", .type = OPT_UINT, JOBF(job_max_open_zones),
	  .max = BENCH_ZBD_MAX_OPEN, .def = "0",
	  .help = "zonemode=zbd: zones one thread writes at once (0: no limit; needs max_open_zones)" },
	{ .name = "ignore_zone_limits", .type = OPT_BOOL, JOBF(ignore_zone_limits),
	  .max = 1, .def = "0",
	  .help = "zonemode=zbd: ignore the device's open-zone limit (accepted: emulated zones have none, as in fio)" },
	{ .name = "zone_reset_threshold", .type = OPT_STR, JOBF(zrt_spec),
	  .apply = apply_zone_frac, .def = "0", .metavar = "0..1",
	  .help = "zonemode=zbd: with zone_reset_frequency, resets happen once this share of the region holds data" },
	{ .name = "zone_reset_frequency", .type = OPT_STR, JOBF(zrf_spec),
	  .apply = apply_zone_frac, .def = "0", .metavar = "0..1",
	  .help = "zonemode=zbd: one write in 1/F resets its zone first (0: only full zones are reset)" },
	{ .name = "random_generator", .type = OPT_CHOICE, JOBF(random_generator),
	  .choices = randgen_choices, .def = "tausworthe",
	  .help = "tausworthe, lfsr, tausworthe64: blkstack's own generator draws the offsets in every case (not fio's sequence); uniform random offsets are without repeats in a pass (the random map), as lfsr's are, and with lfsr the map stays on under norandommap (a note says so)" },
	{ .name = "continue_on_error", .type = OPT_CHOICE,
	  JOBF(continue_on_error), .choices = coe_choices, .def = "none",
	  .help = "errors that do not end the job (fio's): none, read, write, io (both), verify, all; 0 is none, 1 all.  EIO and EILSEQ (fio's non-fatal errors), or the class's ignore_error= list, are taken, at completion or at submission: the I/O is not counted, the job goes on; JSON total_err and first_error, text 'errors: total=N'" },
	{ .name = "ignore_error", .type = OPT_STR, .group = GRP_JOB,
	  .where = OPT_IGNORED, .apply = apply_ignore_error,
	  .metavar = "READ,WRITE,VERIFY",
	  .help = "fio's: per class (reads, writes and trims, verify), ':'-separated errno names (EPERM..ERANGE, fio's list) or numbers the job goes on past; a class given replaces EIO:EILSEQ for it and turns its continue_on_error on (ignore_error=,ENOSPC)" },
	{ .name = "error_dump", .type = OPT_BOOL, JOBF(error_dump), .max = 1,
	  .def = "0",
	  .help = "1: print every error, also those the job goes on past (fio's 'io_u error' line); 0: only those that end it" },
	{ .name = "exitall", .type = OPT_BOOL, JOBF(exitall), .max = 1,
	  .def = "0",
	  .help = "1 in any job: as in fio, whenever a job's thread ends it stops the jobs exit_what= names (their I/O ends as at the end of a runtime; jobs not started yet run none)" },
	{ .name = "exit_what", .type = OPT_CHOICE, JOBF(exit_what),
	  .choices = exit_what_choices, .def = "group",
	  .help = "what a job's end stops under exitall or exitall_on_error: group (its reporting group), stonewall (every job of the running stonewall group), all (those and every later one)" },
	{ .name = "exitall_on_error", .type = OPT_BOOL, JOBF(exitall_on_error),
	  .max = 1, .def = "0",
	  .help = "1: when the job ends in error it stops the jobs exit_what= names (fio's)" },
	{ .name = "fill_device", .alias = { "fill_fs" }, .type = OPT_BOOL,
	  JOBF(fill_device), .max = 1, .def = "0", .apply = apply_fill_device,
	  .help = "1: write until the device is full: ENOSPC or EDQUOT ends the job, not as an error (fio's); without size= the job's region is the device or block device from offset, and a regular file without size= is refused (fio would write until its file system is full)" },
	{ .name = "unlink", .type = OPT_BOOL, JOBF(unlink), .max = 1, .def = "0",
	  .help = "1: remove the job's regular files after the run (block devices stay)" },
	{ .name = "fsync", .type = OPT_UINT, JOBF(fsync_blocks),
	  .max = UINT32_MAX, .def = "0",
	  .help = "N: once N writes have been issued since the last sync, wait for them and send a FLUSH (fio's fsync; on a uring file fdatasync); its latency is fio's sync line; 0: none" },
	{ .name = "fdatasync", .type = OPT_UINT, JOBF(fdatasync_blocks),
	  .max = UINT32_MAX, .def = "0",
	  .help = "N: as fsync=N (a block device has one FLUSH: on a uring file it is fdatasync for both)" },
	{ .name = "sync_file_range", .type = OPT_STR, JOBF(sfr_blocks),
	  .apply = apply_sync_file_range, .metavar = "FLAGS[:N]",
	  .help = "FLAGS wait_before,write,wait_after (fio's) and N (1): as fsync=N, a FLUSH (on a uring file fdatasync, a superset of sync_file_range(2)'s flags; a note says so)" },
	{ .name = "write_barrier", .type = OPT_UINT, JOBF(barrier_blocks),
	  .max = UINT32_MAX, .def = "0",
	  .help = "N: every Nth write is a barrier write, sent with FUA (fio's sg engine sets the SCSI FUA bit); 0: none" },
	{ .name = "end_fsync", .type = OPT_BOOL, JOBF(end_fsync), .max = 1,
	  .def = "0",
	  .help = "1: after the workload, with its writes complete, a FLUSH (fio's fsync of each file; not in the sync statistics, as fio's)" },
	{ .name = "invalidate", .type = OPT_BOOL, JOBF(invalidate), .max = 1,
	  .def = "1",
	  .help = "1 (fio's default): before the job, drop its regular files' page cache (posix_fadvise DONTNEED; clean pages only); null and ram devices have none" },
	{ .name = "pre_read", .type = OPT_BOOL, JOBF(pre_read), .max = 1,
	  .def = "0",
	  .help = "1: before the job, read its regular files' regions into the page cache (no invalidate then, as fio's)" },
	{ .name = "overwrite", .type = OPT_BOOL, JOBF(overwrite), .max = 1,
	  .def = "0",
	  .help = "1: a missing (or short) file is laid out by writing it, zeros, before the jobs, not made sparse (fio's)" },
	{ .name = "create_only", .type = OPT_BOOL, JOBF(create_only), .max = 1,
	  .def = "0",
	  .help = "1: the job's files are created (laid out) and no I/O is done (fio's)" },
	{ .name = "write_iolog", .type = OPT_STR, JOBF(write_iolog),
	  .metavar = "PATH",
	  .help = "append fio's iolog (version 3: microseconds, file, read/write/trim/sync offset length, and the file's add/open/close) of every I/O the job issues, which fio's read_iolog= replays" },
	{ .name = "file_append", .type = OPT_BOOL, JOBF(file_append), .max = 1,
	  .def = "0",
	  .help = "1: the job's I/O starts at its file's end, as if offset= were the file's size when the run starts (fio's); one file per job" },
	{ .name = "read_iolog", .type = OPT_STR, JOBF(read_iolog),
	  .metavar = "PATH",
	  .help = "replay fio's iolog (version 2 or 3) instead of the workload: its reads, writes, trims and syncs at its offsets, lengths and times; the job's size, bs, rw and file come from it" },
	{ .name = "replay_no_stall", .type = OPT_BOOL, JOBF(replay_no_stall),
	  .max = 1, .def = "0",
	  .help = "1: replay the log as fast as the iodepth allows, not at its times" },
	{ .name = "replay_redirect", .type = OPT_STR, JOBF(replay_redirect),
	  .metavar = "PATH",
	  .help = "replay every file's I/O of the log on this file (or device)" },
	{ .name = "replay_scale", .type = OPT_UINT, JOBF(replay_scale),
	  .min = 1, .max = UINT64_MAX, .def = "1",
	  .help = "divide the log's offsets by this" },
	{ .name = "replay_align", .type = OPT_SIZE, JOBF(replay_align),
	  .max = UINT64_MAX, .def = "0",
	  .help = "align the log's offsets down to this many bytes (0: as logged)" },
	{ .name = "replay_time_scale", .type = OPT_UINT, JOBF(replay_time_scale),
	  .min = 1, .max = UINT32_MAX, .def = "100",
	  .help = "replay the log's times at this percentage of their speed (200: twice as fast)" },
	{ .name = "read_iolog_chunked", .type = OPT_BOOL, JOBF(read_iolog_chunked),
	  .max = 1, .def = "0",
	  .help = "accepted: blkstack reads the whole log before the job (fio reads it in chunks to save memory)" },
	{ .name = "cgroup_nodelete", .type = OPT_BOOL, .group = GRP_JOB,
	  .where = OPT_IGNORED, .max = 1, .def = "0",
	  .help = "accepted: blkstack makes no cgroup (cgroup= is refused), as fio with cgroup unset" },
	{ .name = "fsync_on_close", .type = OPT_BOOL, JOBF(fsync_on_close),
	  .max = 1, .def = "0",
	  .help = "1: as end_fsync=1 (fio syncs each file before closing it, once, at the job's end)" },
	{ .name = "create_serialize", .type = OPT_STR, .group = GRP_JOB,
	  .where = OPT_IGNORED, .flags = OPT_F_BARE,
	  .apply = apply_create_serialize, .metavar = "0|1",
	  .help = "1 (fio's default) is what blkstack does: every file is created, one after another, before any job starts; 0 is taken with a note saying so" },
	{ .name = "fallocate", .type = OPT_CHOICE, .group = GRP_JOB,
	  .where = OPT_IGNORED, .choices = fallocate_choices,
	  .unsupported = fallocate_unsupported,
	  .help = "how a missing file is created: none or truncate (the same here: ftruncate(2) to its size, sparse, nothing preallocated)" },
	{ .name = "create_on_open", .type = OPT_BOOL, JOBF(create_on_open),
	  .max = 1, .def = "0",
	  .help = "1: a missing file is not laid out: it is created empty when it is opened (writes make it grow, a read past its end fails with EIO), as fio's; 0: created at its size (ftruncate(2), sparse) before the jobs start" },
	/* fio's profiles' options: fio takes them in any job file and
	 * ignores them without --profile= */
#define PROFILE_OPT(n, prof) \
	{ .name = n, .type = OPT_STR, .group = GRP_JOB, .where = OPT_IGNORED, \
	  .apply = apply_profile_opt, .metavar = prof, \
	  .help = "an option of fio's " prof " profile: no effect without fio's --profile=, so none here (noted)" }
	PROFILE_OPT("threads", "tiobench"),
	PROFILE_OPT("block", "tiobench"),
	PROFILE_OPT("numruns", "tiobench"),
	PROFILE_OPT("dir", "tiobench"),
	PROFILE_OPT("device-names", "act"),
	PROFILE_OPT("load", "act"),
	PROFILE_OPT("test-duration", "act"),
	PROFILE_OPT("threads-per-queue", "act"),
	PROFILE_OPT("read-req-num-512-blocks", "act"),
	PROFILE_OPT("large-block-op-kbytes", "act"),
	PROFILE_OPT("prep", "act"),
#undef PROFILE_OPT
	{ .name = "thread", .type = OPT_BOOL, .group = GRP_JOB,
	  .where = OPT_IGNORED,
	  .help = "accepted and ignored: jobs always run as threads" },
	{ .name = "rw", .alias = { "readwrite" }, .type = OPT_CHOICE, JOBF(rw),
	  .choices = rw_choices, .unsupported = rw_unsupported,
	  .apply = apply_rw, .def = "read", .help = "I/O pattern" },
	{ .name = "bs", .alias = { "blocksize" }, .type = OPT_SIZE, JOBF(bs),
	  .min = 512, .max = 16 << 20, .flags = OPT_F_ALIGN512, .def = "4k",
	  .help = "block size, a multiple of 512; fio's R,W[,T] form: a size per direction (\"4k,64k\": 4k reads, 64k writes and trims)" },
	{ .name = "iodepth", .type = OPT_UINT, JOBF(iodepth),
	  .min = 1, .max = 65536, .def = "1",
	  .help = "requests kept in flight per thread" },
	{ .name = "iodepth_batch", .alias = { "iodepth_batch_submit" },
	  .type = OPT_UINT, JOBF(iodepth_batch), .min = 0, .max = 65536,
	  .def = "0",
	  .help = "requests submitted at once; 0 or more than iodepth: iodepth" },
	{ .name = "iodepth_batch_complete_min",
	  .alias = { "iodepth_batch_complete" }, .type = OPT_UINT,
	  JOBF(iodepth_batch_complete_min), .max = 65536, .def = "1",
	  .apply = apply_batch_complete,
	  .help = "completions reaped at least per wait when the queue is full (fio's); 0: never sleep, poll the device; given (this or _max), reaping follows fio's, else every ready completion is reaped at once" },
	{ .name = "iodepth_batch_complete_max", .type = OPT_UINT,
	  JOBF(iodepth_batch_complete_max), .max = 65536, .def = "0",
	  .apply = apply_batch_complete,
	  .help = "completions reaped at most per wait (fio's; below _min, or 0: _min)" },
	{ .name = "numjobs", .type = OPT_UINT, JOBF(numjobs),
	  .min = 1, .max = 1024, .def = "1",
	  .help = "threads running this job" },
	{ .name = "size", .type = OPT_SIZE, JOBF(size), .max = UINT64_MAX,
	  .def = "0", .flags = OPT_F_PERCENT,
	  .help = "range of the device each thread covers; 0: the device, or 1G; N% (1..100): that share of the device" },
	{ .name = "offset", .alias = { "fileoffset" }, .type = OPT_SIZE, JOBF(offset), .max = UINT64_MAX,
	  .def = "0", .flags = OPT_F_PERCENT,
	  .help = "start of the range; N% (0..100): that share of the device, aligned down to bs" },
	{ .name = "offset_increment", .type = OPT_SIZE,
	  JOBF(offset_increment), .max = UINT64_MAX, .def = "0",
	  .help = "thread N of the job (0..numjobs-1) starts at offset + N * offset_increment" },
	{ .name = "io_size", .alias = { "io_limit" }, .type = OPT_SIZE,
	  JOBF(io_size), .max = UINT64_MAX, .def = "0", .flags = OPT_F_PERCENT,
	  .help = "bytes each thread transfers per loop; 0: size; N% (1..100): that share of size" },
	{ .name = "runtime", .alias = { "timeout" }, .type = OPT_TIME,
	  JOBF(runtime_ns), .max = UINT64_MAX, .unit_ns = NSEC_PER_SEC,
	  .store_ns = 1, .def = "0", .help = "stop after this long; 0: no limit" },
	{ .name = "ramp_time", .type = OPT_TIME, JOBF(ramp_time_ns),
	  .max = UINT64_MAX, .unit_ns = NSEC_PER_SEC, .store_ns = 1,
	  .def = "0", .help = "run this long before statistics are kept" },
	{ .name = "stop_deadline", .type = OPT_TIME, JOBF(stop_deadline_ns),
	  .min = 100 * NSEC_PER_MSEC, .max = 3600 * NSEC_PER_SEC,
	  .unit_ns = NSEC_PER_SEC, .store_ns = 1, .def = "30s",
	  .help = "blkstack's: after SIGINT/SIGTERM, wait this long for requests in flight, then give them up: the job fails and the run exits 1" },
	{ .name = "time_based", .type = OPT_BOOL, JOBF(time_based), .max = 1,
	  .def = "0", .help = "repeat the workload until runtime has passed" },
	{ .name = "rwmixread", .type = OPT_UINT, JOBF(rwmixread),
	  .min = 0, .max = 100, .def = "50",
	  .help = "percent of reads in rw and randrw" },
	{ .name = "rwmixwrite", .type = OPT_UINT, JOBF(rwmixread),
	  .min = 0, .max = 100, .apply = apply_rwmixwrite,
	  .help = "percent of writes in rw and randrw; sets rwmixread to 100 - N (default 50)" },
	{ .name = "norandommap", .type = OPT_BOOL, JOBF(norandommap), .max = 1,
	  .def = "0",
	  .help = "random offsets may repeat before every block was hit" },
	{ .name = "randrepeat", .type = OPT_BOOL, JOBF(randrepeat), .max = 1,
	  .def = "1", .help = "the same random sequence on every run" },
	{ .name = "allrandrepeat", .type = OPT_BOOL, JOBF(allrandrepeat),
	  .max = 1, .def = "0",
	  .help = "every random generator (offsets, directions, sizes, buffers, gaps) seeded from randseed, so that runs repeat even with randrepeat=0 (fio's)" },
	{ .name = "randseed", .type = OPT_UINT, JOBF(randseed),
	  .max = UINT64_MAX, .def = "0x89",
	  .help = "seed of the random offsets (fio's default)" },
	{ .name = "loops", .type = OPT_UINT, JOBF(loops),
	  .min = 1, .max = UINT32_MAX, .def = "1",
	  .help = "run the workload this many times" },
	{ .name = "gtod_reduce", .type = OPT_BOOL, JOBF(gtod_reduce), .max = 1,
	  .def = "0", .help = "no per-request timestamps, so no latencies" },
	{ .name = "disable_lat", .type = OPT_BOOL, JOBF(disable_lat), .max = 1,
	  .def = "0", .help = "keep no total latency (lat); with disable_clat and disable_slat no timestamps at all" },
	{ .name = "disable_clat", .type = OPT_BOOL, JOBF(disable_clat), .max = 1,
	  .def = "0", .help = "keep no completion latency (clat), nor fio's latency distribution" },
	{ .name = "disable_slat", .type = OPT_BOOL, JOBF(disable_slat), .max = 1,
	  .def = "0", .help = "keep no submission latency (slat)" },
	{ .name = "disable_bw_measurement", .alias = { "disable_bw" },
	  .type = OPT_BOOL, JOBF(disable_bw), .max = 1, .def = "0",
	  .help = "no per-I/O entries in write_bw_log (without log_avg_msec), as in fio 3.33" },
	{ .name = "group_reporting", .type = OPT_BOOL, JOBF(group_reporting),
	  .max = 1, .def = "0",
	  .help = "report the threads of a job as one" },
	{ .name = "clat_percentiles", .type = OPT_BOOL, JOBF(clat_pct_off),
	  .max = 1, .def = "1", .apply = apply_inverted,
	  .help = "list completion latency percentiles (clat_ns.percentile)" },
	{ .name = "lat_percentiles", .type = OPT_BOOL, JOBF(lat_percentiles),
	  .max = 1, .def = "0",
	  .help = "list total latency percentiles (lat_ns.percentile)" },
	{ .name = "slat_percentiles", .type = OPT_BOOL, JOBF(slat_percentiles),
	  .max = 1, .def = "0",
	  .help = "list submission latency percentiles (slat_ns.percentile)" },
	{ .name = "percentile_list", .type = OPT_STR, JOBF(percentile_list),
	  .apply = apply_percentile_list,
	  .def = "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9:99.95:99.99",
	  .metavar = "P[:P...]",
	  .help = "the percentiles listed, fio's colon list of up to 20, each in (0, 100]" },
	{ .name = "significant_figures", .type = OPT_UINT, JOBF(sig_figs),
	  .min = 1, .max = 10, .def = "4",
	  .help = "significant figures of the normal output's rates and sizes" },
	{ .name = "unified_rw_reporting", .type = OPT_CHOICE, JOBF(unified_rw),
	  .choices = unified_choices, .hidden = unified_hidden, .def = "none",
	  .help = "none: each direction; mixed: the directions summed as one, \"mixed\"; both: each, then mixed" },
	{ .name = "unit_base", .type = OPT_CHOICE, JOBF(unit_base),
	  .choices = unit_base_choices, .def = "0",
	  .help = "the normal output's rates: 0 or 8 in bytes (B/s), 1 in bits (bit/s)" },
	{ .name = "stats", .type = OPT_BOOL, JOBF(stats_off), .max = 1,
	  .def = "1", .apply = apply_inverted,
	  .help = "0: the job runs but keeps no statistics and is left out of the report" },
	{ .name = "bwavgtime", .type = OPT_UINT, JOBF(bw_avg_ms),
	  .min = 1, .max = 86400000, .def = "500",
	  .help = "ms: the window of each bandwidth sample (bw_min, bw_max, bw_mean, bw_dev, bw_samples)" },
	{ .name = "iopsavgtime", .type = OPT_UINT, JOBF(iops_avg_ms),
	  .min = 1, .max = 86400000, .def = "500",
	  .help = "ms: the window of each IOPS sample (iops_min, iops_max, iops_mean, iops_stddev, iops_samples)" },
	{ .name = "disk_util", .type = OPT_BOOL, JOBF(disk_util_off), .max = 1,
	  .def = "1", .apply = apply_inverted,
	  .help = "the device's disk stats (blkstack's own device: its I/Os, merges, ticks, util) in the report" },
	{ .name = "clocksource", .type = OPT_CHOICE, JOBF(clocksource),
	  .choices = clock_choices, .unsupported = clock_unsupported,
	  .help = "timestamp clock (default: cpu when the TSC is invariant, else clock_gettime)" },
	{ .name = "stonewall", .alias = { "wait_for_previous" },
	  .type = OPT_BOOL, JOBF(stonewall), .max = 1, .def = "0",
	  .help = "start only after every earlier job has finished" },
	{ .name = "wait_for", .type = OPT_STR, JOBF(wait_for),
	  .flags = OPT_F_PRINTABLE, .metavar = "JOB",
	  .help = "start once every thread of the named earlier job is done (its name must be unique)" },
	{ .name = "new_group", .type = OPT_BOOL, JOBF(new_group), .max = 1,
	  .def = "0",
	  .help = "start a new reporting group (groupid) while running with the jobs before it" },
	{ .name = "verify", .type = OPT_CHOICE, JOBF(verify),
	  .choices = verify_choices, .hidden = verify_hidden, .def = "none",
	  .apply = apply_verify,
	  .help = "written blocks carry a header with the method's checksum of the data (meta: the header alone; pattern: no header, verify_pattern's bytes; null: nothing); reads check them" },
	{ .name = "do_verify", .type = OPT_BOOL, JOBF(do_verify), .max = 1,
	  .def = "1",
	  .help = "with verify: read back and check every written block after the writes" },
	{ .name = "verify_only", .type = OPT_BOOL, JOBF(verify_only), .max = 1,
	  .def = "0",
	  .help = "with verify: no workload; read and check every block of the range once" },
	{ .name = "verify_pattern", .type = OPT_STR, JOBF(verify_pattern),
	  .apply = apply_verify_pattern, .metavar = "PATTERN",
	  .help = "the data of written blocks: fio's 0xHEX, decimal, \"string\" and %o (the block's offset, 8 bytes) in a row, repeated; alone it means verify=meta" },
	{ .name = "verify_interval", .type = OPT_SIZE, JOBF(verify_interval),
	  .max = 16 << 20, .def = "0",
	  .help = "a header every this many bytes of a block (0: one per block); bs must be a multiple, as in fio" },
	{ .name = "verify_offset", .type = OPT_SIZE, JOBF(verify_offset),
	  .max = 16 << 20, .def = "0",
	  .help = "store each header this many bytes into its interval, swapped with the data there (0: at the start)" },
	{ .name = "verify_fatal", .type = OPT_BOOL, JOBF(verify_fatal), .max = 1,
	  .def = "0",
	  .help = "the first bad block ends the job (0: the whole range is checked)" },
	{ .name = "verify_dump", .type = OPT_BOOL, JOBF(verify_dump), .max = 1,
	  .apply = apply_verify_dump,
	  .help = "1: write bad blocks out as read and as expected; 0: write nothing out (not given: as read, blkstack's default)" },
	{ .name = "verify_backlog", .type = OPT_UINT, JOBF(verify_backlog),
	  .max = 1 << 24, .def = "0",
	  .help = "with do_verify: read back and check the written blocks every this many writes, not only after the workload (0: after it)" },
	{ .name = "verify_backlog_batch", .type = OPT_UINT,
	  JOBF(verify_backlog_batch), .max = 1 << 24, .def = "0",
	  .help = "of every verify_backlog blocks written, read back this many, the oldest (0: all); the rest wait for the verify phase" },
	{ .name = "trim_percentage", .type = OPT_UINT, JOBF(trim_percentage),
	  .max = 100, .def = "0",
	  .help = "with verify and do_verify: this share of the blocks written is queued to be trimmed (discarded) after the write, by trim_backlog" },
	{ .name = "trim_verify_zero", .type = OPT_BOOL, JOBF(trim_verify_zero),
	  .max = 1, .def = "1",
	  .help = "a trimmed block is read back and must be zeros (0: it is not read back)" },
	{ .name = "trim_backlog", .type = OPT_UINT, JOBF(trim_backlog),
	  .max = 1 << 24, .def = "0",
	  .help = "every this many blocks written, trim the blocks queued by trim_percentage, oldest first (0: no trims)" },
	{ .name = "trim_backlog_batch", .type = OPT_UINT,
	  JOBF(trim_backlog_batch), .max = 1 << 24, .def = "0",
	  .help = "blocks trimmed each time (0: every block queued); the rest wait for the next time" },
	{ .name = "verify_state_save", .type = OPT_BOOL,
	  JOBF(verify_state_save), .max = 1, .def = "0",
	  .help = "with verify on a write job: when the writes end (done, runtime, or SIGINT/SIGTERM), write the blocks written to local-NAME-THREAD-verify.state in the working directory (0: nothing; fio's default is 1)" },
	{ .name = "verify_state_load", .type = OPT_BOOL,
	  JOBF(verify_state_load), .max = 1, .def = "0",
	  .help = "with verify_only: read back and check only the blocks of the state file an earlier run's verify_state_save=1 wrote" },
	{ .name = "experimental_verify", .type = OPT_BOOL,
	  JOBF(experimental_verify), .max = 1, .def = "0",
	  .apply = apply_experimental_verify,
	  .help = "fio's verify by replaying the offsets: taken; blkstack checks the blocks its map of written blocks holds, the same blocks (a note says so)" },
	{ .name = "verify_async", .type = OPT_UINT, JOBF(verify_async),
	  .max = 1 << 16, .def = "0", .apply = apply_verify_async,
	  .help = "fio's verify offload threads: taken, but blocks are checked in the job's thread (a note says so); the blocks checked and the errors found are the same" },
	{ .name = "verify_async_cpus", .type = OPT_STR, .group = GRP_JOB,
	  .where = OPT_IGNORED, .apply = apply_verify_async_cpus,
	  .metavar = "CPUS",
	  .help = "fio's CPUs of the verify offload threads: checked as cpus_allowed=, with no effect (no offload threads; noted)" },
	{ .name = "verify_dump_dir", .type = OPT_STR, JOBF(verify_dump_dir),
	  .metavar = "PATH", .def = ".",
	  .help = "blkstack's: directory verify writes bad blocks to (at most 10 per thread)" },

	/* write buffers' contents and memory (fio's; engine.c job_buf_*()) */
	{ .name = "zero_buffers", .type = OPT_BOOL, JOBF(zero_buffers),
	  .max = 1, .apply = apply_buf_bool,
	  .help = "the write buffers are all zeros (fio's; buffer_pattern= wins)" },
	{ .name = "refill_buffers", .type = OPT_BOOL, JOBF(refill_buffers),
	  .max = 1, .apply = apply_buf_bool,
	  .help = "fill each write's buffer afresh before it goes (fio's; on by itself with buffer_compress_percentage, dedupe_percentage or verify=)" },
	{ .name = "scramble_buffers", .type = OPT_BOOL, JOBF(scramble_buffers),
	  .max = 1, .def = "1", .apply = apply_buf_bool,
	  .help = "each write's offset and sequence number in every 512 bytes of it, so that blocks do not dedupe (fio's, default 1: off under refill_buffers, compression, dedupe, verify, buffer_pattern, zero_buffers=1)" },
	{ .name = "buffer_pattern", .type = OPT_STR, .group = GRP_JOB,
	  .where = OPT_JOB, .apply = apply_buffer_pattern, .metavar = "PATTERN",
	  .help = "the write buffers' bytes, repeated: fio's 0xHEX, decimal and \"string\" in a row (no %o)" },
	{ .name = "buffer_compress_percentage", .type = OPT_UINT,
	  JOBF(compress_pct), .max = 100, .apply = apply_buf_uint,
	  .help = "of each chunk of a write, this share zeros (or buffer_pattern), the rest random: compresses to about 100 - N % (fio's)" },
	{ .name = "buffer_compress_chunk", .type = OPT_SIZE,
	  JOBF(compress_chunk), .max = 1u << 30, .def = "512",
	  .help = "the chunk buffer_compress_percentage shares out, bytes (0 or above bs: the smallest bs)" },
	{ .name = "dedupe_percentage", .type = OPT_UINT, JOBF(dedupe_pct),
	  .max = 100, .apply = apply_buf_uint,
	  .help = "this share of the writes repeat a buffer written before, whole (fio's)" },
	{ .name = "dedupe_mode", .type = OPT_CHOICE, JOBF(dedupe_mode),
	  .choices = dedupe_mode_choices, .def = "repeat",
	  .help = "repeat: a dedupe write repeats the unique one next to it; working_set: one of the first dedupe_working_set_percentage of size= worth of unique buffers, at random (fio's)" },
	{ .name = "dedupe_working_set_percentage", .type = OPT_UINT,
	  JOBF(dedupe_ws_pct), .max = 100, .def = "5",
	  .help = "dedupe_mode=working_set: the working set, % of size= (fio's)" },
	{ .name = "dedupe_global", .type = OPT_BOOL, JOBF(dedupe_global),
	  .max = 1, .def = "0",
	  .help = "dedupe_mode=working_set: the working set is shared out over every thread of the run's first unique buffers, so that jobs dedupe against each other (fio's)" },
	{ .name = "mem", .alias = { "iomem" }, .type = OPT_STR, .group = GRP_JOB,
	  .where = OPT_JOB, .apply = apply_mem, .metavar = "TYPE[:FILE]",
	  .help = "where each thread's I/O buffers come from: malloc (posix_memalign), shm, shmhuge (shmget, SHM_HUGETLB), mmap, mmaphuge, mmapshared (anonymous, or FILE after ':'); cudamalloc is refused" },
	{ .name = "iomem_align", .alias = { "mem_align" }, .type = OPT_SIZE,
	  JOBF(mem_align), .max = 1u << 30, .def = "0",
	  .help = "the buffers start this many bytes past a page boundary (fio's)" },
	{ .name = "hugepage-size", .type = OPT_SIZE, JOBF(hugepage_size),
	  .min = 4096, .max = 1ull << 30, .def = "2m", .flags = OPT_F_POW2,
	  .help = "mem=shmhuge, mmaphuge: the buffers' memory is a multiple of this (fio's)" },

	/* fio's logs (log.h) */
#define LOG_NAME_OPT(n, f, what) \
	{ .name = n, .type = OPT_STR, JOBF(f), .apply = apply_log_name, \
	  .flags = OPT_F_BARE, .metavar = "PREFIX", \
	  .help = "write " what " (fio's names and format: PREFIX_TYPE.N.log, N the thread, 1 first; bare: the job name)" }
	LOG_NAME_OPT("write_lat_log", lat_log,
		     "latency logs: PREFIX_lat, _clat, _slat, ns"),
	LOG_NAME_OPT("write_bw_log", bw_log, "a bandwidth log: PREFIX_bw, KiB/s"),
	LOG_NAME_OPT("write_iops_log", iops_log, "an IOPS log: PREFIX_iops"),
	LOG_NAME_OPT("write_hist_log", hist_log,
		     "a clat histogram log: PREFIX_clat_hist, fio's bins, one line per log_hist_msec window"),
#undef LOG_NAME_OPT
	{ .name = "log_avg_msec", .type = OPT_UINT, JOBF(log_avg_msec),
	  .max = 86400000, .def = "0",
	  .help = "lat, bw and iops logs: one entry per direction per window of this many ms, the mean (or log_max_value's maximum); 0: an entry per I/O" },
	{ .name = "log_hist_msec", .type = OPT_UINT, JOBF(log_hist_msec),
	  .max = 86400000, .def = "0",
	  .help = "write_hist_log: one line of clat bins per direction per window of this many ms (0: the file stays empty, as in fio)" },
	{ .name = "log_hist_coarseness", .type = OPT_UINT,
	  JOBF(log_hist_coarseness), .max = 6, .def = "0",
	  .help = "write_hist_log: sum 2^N neighbouring bins (0: fio's 1856 bins per line)" },
	{ .name = "log_max_value", .type = OPT_BOOL, JOBF(log_max_value),
	  .max = 1, .def = "0",
	  .help = "with log_avg_msec: log each window's largest value, not its mean" },
	{ .name = "log_offset", .type = OPT_BOOL, JOBF(log_offset), .max = 1,
	  .def = "0", .help = "log entries carry the I/O's offset (bytes)" },
	{ .name = "log_prio", .type = OPT_BOOL, JOBF(log_prio), .max = 1,
	  .def = "0",
	  .help = "log entries carry each I/O's priority, fio's 0x%04x (class << 13 | level); 0: 1 for class RT, else 0" },
	{ .name = "prio", .type = OPT_UINT, JOBF(ioprio), .max = 7,
	  .apply = apply_ioprio,
	  .help = "the job's I/O priority level, 0 (highest) to 7, on every bio (prioclass= without one: best effort)" },
	{ .name = "prioclass", .type = OPT_UINT, JOBF(ioprio_class), .max = 3,
	  .apply = apply_ioprio,
	  .help = "the job's I/O priority class on every bio: 1 real time, 2 best effort, 3 idle (0: best effort)" },
	{ .name = "cmdprio_percentage", .type = OPT_UINT, JOBF(cmdprio_pct),
	  .max = 100, .def = "0", .flags = OPT_F_DDIR, .metavar = "R[,W]",
	  .help = "this % of the reads, writes take the priority cmdprio_class/cmdprio (fio's engines/cmdprio.c); not with cmdprio_bssplit" },
	{ .name = "cmdprio_class", .type = OPT_UINT, JOBF(cmdprio_class),
	  .min = 1, .max = 3, .flags = OPT_F_DDIR, .metavar = "R[,W]",
	  .help = "the class of cmdprio_percentage's and cmdprio_bssplit's priority per direction: 1 real time (the default), 2 best effort, 3 idle" },
	{ .name = "cmdprio", .type = OPT_UINT, JOBF(cmdprio_level), .max = 7,
	  .def = "0", .flags = OPT_F_DDIR, .metavar = "R[,W]",
	  .help = "the level of cmdprio_percentage's and cmdprio_bssplit's priority per direction, 0..7" },
	{ .name = "cmdprio_bssplit", .type = OPT_STR, JOBF(cmdprio_bs_nr),
	  .apply = apply_cmdprio_bssplit, .metavar = "BS/PCT[/CLASS/LEVEL]:...[,...]",
	  .help = "per block size, the share of the I/Os that take a priority (CLASS/LEVEL, or cmdprio_class/cmdprio); reads,writes lists as fio's" },
	{ .name = "per_job_logs", .type = OPT_BOOL, JOBF(per_job_logs),
	  .max = 1, .def = "1",
	  .help = "0: log names without the thread's number (threads of a job then write the same file, the last one's entries)" },
	{ .name = "log_entries", .type = OPT_UINT, .group = GRP_JOB,
	  .where = OPT_IGNORED, .min = 1, .max = UINT32_MAX,
	  .help = "accepted and ignored: log buffers grow in 1 MiB chunks" },

	/* The drivers to run; their options come from the registry. */
	{ .name = "dev", .type = OPT_STR, DEVF(devs), .apply = apply_dev,
	  .metavar = "LIST",
	  .help = "drivers to run in turn, comma-separated: the dev=NAME sections below (default null,ram for the matrix)" },
};

/*
 * Every option: bench's own, then the registry's queue options and each
 * driver's (include/blkstack/dev.h), built once.  A registry descriptor's
 * field is in struct blk_dev_params, which starts struct bench_dev_opts.
 */
#define MAX_OPTS BENCH_MAX_OPTS
static struct opt_def opts[MAX_OPTS];
static size_t nr_opts;
static pthread_once_t opts_once = PTHREAD_ONCE_INIT;

_Static_assert(offsetof(struct bench_dev_opts, p) == 0,
	       "registry offsets are relative to struct blk_dev_params");

static void opt_from_reg(struct opt_def *o, const struct blk_opt_desc *r,
			 int group)
{
	memset(o, 0, sizeof(*o));
	o->name = r->name;
	memcpy(o->alias, r->alias, sizeof(o->alias));
	o->type = r->type;
	o->group = group;
	o->where = OPT_DEV;
	o->off = offsetof(struct bench_dev_opts, p) + r->off;
	o->len = r->len;
	o->min = r->min;
	o->max = r->max;
	o->unit_ns = r->unit_ns;
	o->store_ns = r->store_ns;
	o->flags = r->flags & ~BLK_OPT_F_LIST;
	o->choices = r->choices;
	o->hidden = r->hidden;
	o->unsupported = r->unsupported;
	o->metavar = r->metavar;
	o->def = r->def;
	o->help = r->help;
	o->reg = r;
	o->bits = r->bits;
	if (r->type == BLK_OPT_STR && (r->check || (r->flags & BLK_OPT_F_LIST)))
		o->apply = apply_reg_str;
}

static void opts_build(void)
{
	const struct blk_driver *drv;
	const struct blk_opt_desc *q;
	unsigned int nq, nd, i, k;

	memcpy(opts, bench_opts_table, sizeof(bench_opts_table));
	nr_opts = ARRAY_SIZE(bench_opts_table);
	q = blk_queue_opts(&nq);
	drv = blk_drivers(&nd);
	if (nr_opts + nq > MAX_OPTS)
		abort(); /* raise MAX_OPTS */
	for (i = 0; i < nq; i++)
		opt_from_reg(&opts[nr_opts++], &q[i], GRP_DEV);
	for (k = 0; k < nd; k++) {
		if (nr_opts + drv[k].nr_opts > MAX_OPTS)
			abort();
		for (i = 0; i < drv[k].nr_opts; i++)
			opt_from_reg(&opts[nr_opts++], &drv[k].opts[i],
				     GRP_DRIVER + (int)k);
	}
}

static void opts_ready(void)
{
	pthread_once(&opts_once, opts_build);
}

/* fio command-line switches with no blkstack equivalent. */
static const char *const fio_cli_unsupported[] = {
	"append-terse", "eta-newline",
	"eta-interval", "readonly",
	"client", "server", "daemonize", "showcmd", "cmdhelp",
	"enghelp", "debug", "max-jobs", "warnings-fatal", "bandwidth-log",
	"latency-log", "trigger", "trigger-file", "trigger-timeout",
	"trigger-remote", "aux-path", "crctest", "alloc-size",
	"cpuclock-test", "idle-prof", "inflate-log", "version",
};

/* Options only the command line takes (bench_parse_args handles them). */
static const struct cli_opt {
	const char *name;
	const char *metavar;	/* NULL: takes no value */
	const char *help;
} cli_opts[] = {
	{ "output-format", "normal|json|json+|terse",
	  "report format (default normal; json+ adds fio's clat bins; terse: fio's semicolon lines; fio's comma list writes each: terse, JSON, normal)" },
	{ "minimal", NULL, "--output-format=terse, as fio's" },
	{ "terse-version", "3|4|5",
	  "fields of the terse lines, fio's versions: 3 (default), 4 adds trim, 5 the bw and iops samples" },
	{ "output", "FILE", "write the report to FILE (default stdout)" },
	{ "plot", "DIR",
	  "draw SVG pictures into DIR with gnuplot: latency histogram and CDF, IOPS and latency over time per job thread; the matrix as grouped bars" },
	{ "eta", "auto|always|never",
	  "progress line: auto shows it on a terminal (default auto)" },
	{ "status-interval", "TIME",
	  "the report so far (each --output-format) every TIME, s without a unit, as fio's; 0: none (default)" },
	{ "parse-only", NULL,
	  "check the options and job files, list every problem, run nothing" },
	{ "section", "NAME",
	  "run only this section of the job files (and [global]); repeat it for more, as fio's --section" },
	{ "fio-options", NULL,
	  "print the table of every fio option and engine: supported, mapped (to what) or refused (why)" },
	{ "matrix", NULL,
	  "run the workload matrix (the default when no rw= and no job file is given)" },
	{ "count_instructions", "perf|callgrind",
	  "instructions per I/O: alone or =perf, the hardware counter (perf_event_open; JSON blkstack.instructions_per_io); =callgrind, this run again under valgrind's callgrind, per layer (core, each driver, bench engine, libc), where there is no hardware counter; docs/stages.md" },
	{ "lock_stats", "0|1",
	  "the lock profile (seed 003): every named lock's acquisitions, contentions and time waited, printed like /proc/lock_stat at the end (JSON: lock_stat[]); docs/stages.md" },
	{ "help", NULL, "print this list" },
};

/*
 * Text from the user in a message: at most SHOW_MAX characters and then
 * "...", control bytes and bytes that are not UTF-8 as \xNN, so that
 * an error never sends a terminal escape or a page of text.
 */
#define SHOW_MAX 64
#define SHOW_LEN (SHOW_MAX * 4 + 4)	/* every character escaped, "...", NUL */

/* Bytes in the visible UTF-8 character at @p, 0 when it is not one. */
static size_t utf8_char(const unsigned char *p, size_t n)
{
	size_t need, i;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;	/* ASCII, a continuation, overlong, past U+10FFFF */
	need = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (n < need)
		return 0;
	for (i = 1; i < need; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((p[0] == 0xc2 && p[1] < 0xa0) ||	/* C1 controls */
	    (p[0] == 0xe0 && p[1] < 0xa0) ||	/* overlong */
	    (p[0] == 0xed && p[1] >= 0xa0) ||	/* surrogates */
	    (p[0] == 0xf0 && p[1] < 0x90) ||	/* overlong */
	    (p[0] == 0xf4 && p[1] >= 0x90))	/* past U+10FFFF */
		return 0;
	if (need == 3) {
		unsigned int cp = (p[0] & 0x0f) << 12 | (p[1] & 0x3f) << 6 |
				  (p[2] & 0x3f);

		/* Invisible, or moving the text around it: zero widths,
		 * line and paragraph separators, bidi controls, the BOM. */
		if ((cp >= 0x200b && cp <= 0x200f) ||
		    (cp >= 0x2028 && cp <= 0x202e) ||
		    (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff)
			return 0;
	}
	return need;
}

const char *bench_show(char *buf, size_t len, const char *s, size_t n,
		       size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, i = 0, chars;

	for (chars = 0; i < n && chars < max_chars; chars++) {
		size_t k = p[i] >= 0x20 && p[i] < 0x7f ? 1 : utf8_char(p + i, n - i);
		size_t w = k ? k : 4;

		if (o + w + 4 > len)	/* keep room for "..." */
			break;
		if (k)
			memcpy(buf + o, p + i, k);
		else
			snprintf(buf + o, 5, "\\x%02x", p[i]);
		o += w;
		i += k ? k : 1;
	}
	if (i < n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

static const char *show_n(char *buf, size_t len, const char *s, size_t n)
{
	return bench_show(buf, len, s, n, SHOW_MAX);
}

/* @s shown in a message; @buf has SHOW_LEN bytes. */
static const char *show(char *buf, const char *s)
{
	return show_n(buf, SHOW_LEN, s, strlen(s));
}

static __attribute__((format(printf, 3, 4)))
void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Error about the current value: "name=value: <what>". */
static __attribute__((format(printf, 3, 4)))
int val_err(struct opt_ctx *c, int rc, const char *fmt, ...)
{
	char what[512], name[SHOW_LEN], val[SHOW_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (c->whole && c->val != c->whole) {
		static const char *const dir[] = { "read", "write", "trim" };
		char part[SHOW_LEN];

		/* "bs=4k,3000: the write value 3000: not a multiple of 512" */
		set_err(c->err, c->errlen, "%s=%s: the %s value %s: %s",
			show(name, c->name), show(val, c->whole),
			dir[c->part < 3 ? c->part : 2], show(part, c->val), what);
		return rc;
	}
	set_err(c->err, c->errlen, "%s=%s: %s", show(name, c->name),
		show(val, c->val), what);
	return rc;
}

static bool in_list(const char *const *list, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/*
 * Decimal digits, or hex digits after 0x; at least one.  A number past 64
 * bits is read to its end all the same, so that the caller can still tell
 * a bad suffix (-EINVAL) from a good one on too large a number (-ERANGE).
 */
static int parse_digits(const char *s, uint64_t *v, const char **end,
			bool *hex)
{
	unsigned int base = 10;
	uint64_t r = 0;
	const char *p = s;
	bool overflow = false;

	*hex = false;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
		*hex = true;
	}
	s = p;
	for (;; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (__builtin_mul_overflow(r, base, &r) ||
		    __builtin_add_overflow(r, d, &r))
			overflow = true;
	}
	if (p == s)
		return -EINVAL;
	*v = r;
	*end = p;
	return overflow ? -ERANGE : 0;
}

/*
 * fio's unit prefixes with its default kb_base=1024: "k", "kb" are 1024
 * and the IEC spellings "ki", "kib" are 1000.  That is backwards from the
 * standards, but it is what fio does for old scripts, and a job file must
 * mean the same here.
 */
static int size_mult(const char *s, uint64_t *mult, uint32_t kb_base)
{
	static const char prefixes[] = "kmgtp";
	const char *p;
	/* kb_base=1000 (fio): SI prefixes are powers of 1000, IEC of 1024 */
	uint64_t base = kb_base == 1000 ? 1000 : 1024, m = 1;
	int i, n;

	if (!s[0] || ((s[0] == 'b' || s[0] == 'B') && !s[1])) {
		*mult = 1;
		return 0;
	}
	p = strchr(prefixes, s[0] | 0x20);
	if (!p || !*p)
		return -EINVAL;
	n = p - prefixes + 1;
	s++;
	if (*s == 'i' || *s == 'I') {
		base = kb_base == 1000 ? 1024 : 1000;
		s++;
	}
	if (*s == 'b' || *s == 'B')
		s++;
	if (*s)
		return -EINVAL;
	for (i = 0; i < n; i++)
		m *= base;
	*mult = m;
	return 0;
}

/*
 * bench_parse_size(), also giving the multiplier of the suffix and the
 * suffix as written ("" for none), for the message about an overflow.
 */
static int parse_size(const char *s, uint64_t *out, uint64_t *mult,
		      const char **sfx, uint32_t kb_base)
{
	const char *end;
	uint64_t v;
	bool hex;
	int rc;

	if (!s)
		return -EINVAL;
	rc = parse_digits(s, &v, &end, &hex);
	if (rc == -EINVAL)
		return rc;
	*mult = 1;
	*sfx = end;
	/* "0x1b" would be ambiguous: hex takes no suffix. */
	if (hex ? *end != '\0' : size_mult(end, mult, kb_base) != 0)
		return -EINVAL;
	if (rc || __builtin_mul_overflow(v, *mult, &v))
		return -ERANGE;
	*out = v;
	return 0;
}

int bench_parse_size(const char *s, uint64_t *out)
{
	uint64_t mult;
	const char *sfx;

	return parse_size(s, out, &mult, &sfx, 1024);
}

/*
 * fio's time units; "ns" is a blkstack addition for the nanosecond null_blk
 * options.  Matched whole and without case, so "m" is minutes and "ms"
 * milliseconds.
 */
static const struct {
	const char *name;
	uint64_t ns;
} time_units[] = {
	{ "ns", 1 }, { "nsec", 1 },
	{ "us", NSEC_PER_USEC }, { "usec", NSEC_PER_USEC },
	{ "ms", NSEC_PER_MSEC }, { "msec", NSEC_PER_MSEC },
	{ "s", NSEC_PER_SEC }, { "sec", NSEC_PER_SEC },
	{ "m", 60 * NSEC_PER_SEC }, { "min", 60 * NSEC_PER_SEC },
	{ "h", 3600 * NSEC_PER_SEC },
	{ "d", 86400 * NSEC_PER_SEC },
};

/* bench_parse_time(), also giving the unit in ns and as written. */
static int parse_time(const char *s, uint64_t def_unit_ns, uint64_t *out_ns,
		      uint64_t *unit, const char **sfx)
{
	const char *end;
	uint64_t v;
	bool hex;
	size_t i;
	int rc;

	if (!s || !def_unit_ns)
		return -EINVAL;
	rc = parse_digits(s, &v, &end, &hex);
	if (rc == -EINVAL || hex)
		return -EINVAL;
	*unit = def_unit_ns;
	*sfx = end;
	if (*end) {
		for (i = 0; i < ARRAY_SIZE(time_units); i++)
			if (!strcasecmp(end, time_units[i].name))
				break;
		if (i == ARRAY_SIZE(time_units))
			return -EINVAL;
		*unit = time_units[i].ns;
	}
	if (rc || __builtin_mul_overflow(v, *unit, &v))
		return -ERANGE;
	*out_ns = v;
	return 0;
}

int bench_parse_time(const char *s, uint64_t def_unit_ns, uint64_t *out_ns)
{
	uint64_t unit;
	const char *sfx;

	return parse_time(s, def_unit_ns, out_ns, &unit, &sfx);
}

/* 16777216 -> "16M": the largest power-of-1024 suffix that is exact. */
static void fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char sfx[] = "KMGTP";
	int i = -1;

	while (v && !(v % 1024) && i < 4) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, sfx[i]);
}

/* 3600e9 -> "1h": the largest unit that is exact. */
static void fmt_time(char *buf, size_t len, uint64_t ns)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} u[] = {
		{ "d", 86400 * NSEC_PER_SEC }, { "h", 3600 * NSEC_PER_SEC },
		{ "m", 60 * NSEC_PER_SEC }, { "s", NSEC_PER_SEC },
		{ "ms", NSEC_PER_MSEC }, { "us", NSEC_PER_USEC }, { "ns", 1 },
	};
	size_t i;

	if (!ns) {
		snprintf(buf, len, "0");
		return;
	}
	/* The last unit, 1ns, always divides. */
	for (i = 0; i < ARRAY_SIZE(u) - 1; i++)
		if (!(ns % u[i].ns))
			break;
	snprintf(buf, len, "%" PRIu64 "%s", ns / u[i].ns, u[i].name);
}

static void fmt_val(const struct opt_def *d, char *buf, size_t len, uint64_t v)
{
	/* The bound of an unbounded option: shorter than 20 digits. */
	if (v == UINT64_MAX)
		snprintf(buf, len, "2^64-1%s", d->type == OPT_TIME ? "ns" : "");
	else if (d->bits)
		snprintf(buf, len, "0x%" PRIx64, v);
	else if (d->type == OPT_SIZE)
		fmt_size(buf, len, v);
	else if (d->type == OPT_TIME)
		fmt_time(buf, len, v);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

/* "1..65536", the form both errors and usage show. */
static void fmt_range(const struct opt_def *d, char *buf, size_t len)
{
	char lo[32], hi[32];

	fmt_val(d, lo, sizeof(lo), d->min);
	fmt_val(d, hi, sizeof(hi), d->max);
	snprintf(buf, len, "%s..%s", lo, hi);
}

/* A bit mask's bits: "0x2 medium error, 0x4 timeout, ..." */
static void fmt_bits(const struct opt_def *d, char *buf, size_t len)
{
	const struct opt_choice *b;
	size_t n = 0;

	buf[0] = '\0';
	for (b = d->bits; b->name && n < len; b++)
		n += snprintf(buf + n, len - n, "%s0x%x %s",
			      b == d->bits ? "" : ", ", (unsigned int)b->val,
			      b->name);
}

/* "read|write|..." */
static void fmt_choices(const struct opt_def *d, char *buf, size_t len)
{
	const struct opt_choice *ch;
	size_t n = 0;

	buf[0] = '\0';
	for (ch = d->choices; ch->name && n < len; ch++)
		n += snprintf(buf + n, len - n, "%s%s",
			      ch == d->choices ? "" : "|", ch->name);
}

/*
 * What a number of @d's type looks like, for "not <form>" and "needs a
 * value: <form>"; NULL for the types whose allowed values say it all.
 */
static const char *fmt_form(const struct opt_def *d, char *buf, size_t len)
{
	char unit[16];

	switch (d->type) {
	case OPT_UINT:
		return "a number (a whole number with an optional k/m/g/t/p suffix)";
	case OPT_SIZE:
		return "a size (a whole number with an optional k/m/g/t/p suffix)";
	case OPT_TIME:
		fmt_time(unit, sizeof(unit), d->unit_ns);
		snprintf(buf, len,
			 "a time (a whole number with an optional unit ns/us/ms/s/m/h/d, %s without one)",
			 unit + 1);
		return buf;
	case OPT_STR:
		if (d->apply)
			return NULL;	/* --dev: the list says it */
		return d->metavar && !strcmp(d->metavar, "PATH") ? "a path" :
		       "text";
	default:
		return NULL;
	}
}

/* What @d allows: "allowed 1..65536", "allowed 0|1"; "" when anything. */
static void fmt_allowed(const struct opt_def *d, char *buf, size_t len)
{
	char what[160];

	switch (d->type) {
	case OPT_UINT:
	case OPT_SIZE:
	case OPT_TIME:
		fmt_range(d, what, sizeof(what));
		snprintf(buf, len, "allowed %s", what);
		return;
	case OPT_BOOL:
		snprintf(buf, len, "allowed 0|1");
		return;
	case OPT_CHOICE:
		fmt_choices(d, what, sizeof(what));
		snprintf(buf, len, "allowed %s", what);
		return;
	case OPT_STR:
		if (d->apply == apply_dev)
			snprintf(buf, len,
				 "allowed a comma-separated list of null|ram|uring|nvme");
		else if (d->apply)
			buf[0] = '\0';
		else if (d->len)
			snprintf(buf, len, "at most %zu characters", d->len - 1);
		else
			buf[0] = '\0';
		return;
	}
	buf[0] = '\0';
}

/* The option's field in the job or in the device options. */
static char *field(const struct opt_ctx *c)
{
	char *base = c->d->where == OPT_JOB ? (char *)c->j : (char *)&c->o->dev;

	return base + c->d->off;
}

static void store(const struct opt_ctx *c, uint64_t v)
{
	char *p = field(c);

	/* memcpy of the right width: the fields are bool, enum, u32 or u64. */
	switch (c->d->len) {
	case 1: {
		uint8_t x = v;

		memcpy(p, &x, 1);
		break;
	}
	case 4: {
		uint32_t x = v;

		memcpy(p, &x, 4);
		break;
	}
	case 8:
		memcpy(p, &v, 8);
		break;
	default:
		abort();	/* a table entry with a field we cannot store */
	}
}

static int apply_rw(struct opt_ctx *c, uint64_t v)
{
	c->j->rw = v;
	if (!strchr(c->val, ':'))
		c->j->rw_mod = 0;
	/* Only an explicit rw= turns the matrix off. */
	c->j->has_rw = true;
	return 0;
}

/*
 * fio's rw=<pattern>:<N>: for a sequential pattern a size, the bytes
 * skipped after each I/O (negative: backwards; "read:-8k" with bs=4k reads
 * each block before the last); for a random one a count, the I/Os from one
 * random offset on (the others follow it in order, rw_sequencer's default).
 */
static int rw_modifier(struct opt_ctx *c, uint64_t rw, const char *mod)
{
	bool neg = *mod == '-';
	uint64_t v;
	int rc;

	if (bench_rw_is_random((enum bench_rw)rw)) {
		rc = neg ? -EINVAL : bench_parse_size(mod, &v);
		if (rc || !v || v > UINT32_MAX)
			return val_err(c, -EINVAL,
				       "the ':N' of a random pattern is the I/Os per random offset, allowed 1..%u",
				       UINT32_MAX);
		c->j->rw_mod = (int64_t)v;
	} else {
		rc = parse_size(mod + neg, &v, &(uint64_t){ 0 },
				&(const char *){ NULL }, c->j->kb_base);
		if (rc || v > INT64_MAX)
			return val_err(c, -EINVAL,
				       "the ':N' of a sequential pattern is the bytes skipped after each I/O, a size, negative to go backwards");
		c->j->rw_mod = neg ? -(int64_t)v : (int64_t)v;
	}
	return 0;	/* apply_rw() stores the pattern */
}

static int apply_rwmixwrite(struct opt_ctx *c, uint64_t v)
{
	c->j->rwmixread = 100 - v;
	return 0;
}

static int apply_nrfiles(struct opt_ctx *c, uint64_t v)
{
	c->j->nrfiles = (uint32_t)v;
	return 0;
}

static int apply_buffered(struct opt_ctx *c, uint64_t v)
{
	c->j->direct = !v;
	if (c->o)
		c->o->dev.p.direct = !v;
	return 0;
}

/* verify=: the method, and that it was given (see bench_opts_check()) */
static int apply_verify(struct opt_ctx *c, uint64_t v)
{
	c->j->verify = (enum bench_verify)v;
	c->j->verify_given = true;
	return 0;
}

/* verify_pattern=: fio's syntax, parsed now so that a bad one is named */
/* write_lat_log=PREFIX and its kin: the prefix, and the log on */
static int apply_log_name(struct opt_ctx *c, uint64_t unused)
{
	struct bench_job_opts *j = c->j;
	const char *p;

	(void)unused;
	if (strlen(c->val) >= sizeof(j->lat_log))
		return val_err(c, -EINVAL, "too long, at most %zu characters",
			       sizeof(j->lat_log) - 1);
	for (p = c->val; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return val_err(c, -EINVAL,
				       "control characters are not allowed in a file name prefix");
	memcpy(field(c), c->val, strlen(c->val) + 1);
	if (!strcmp(c->d->name, "write_lat_log"))
		j->lat_log_on = true;
	else if (!strcmp(c->d->name, "write_bw_log"))
		j->bw_log_on = true;
	else if (!strcmp(c->d->name, "write_iops_log"))
		j->iops_log_on = true;
	else
		j->hist_log_on = true;
	return 0;
}

static int apply_verify_pattern(struct opt_ctx *c, uint64_t unused)
{
	char why[256];
	int rc;

	(void)unused;
	if (strlen(c->val) >= sizeof(c->j->verify_pattern))
		return val_err(c, -EINVAL, "too long, at most %zu characters",
			       sizeof(c->j->verify_pattern) - 1);
	rc = bench_verify_pattern_parse(c->val, &c->j->verify_pat, why,
					sizeof(why));
	if (rc)
		return val_err(c, rc, "%s", why);
	memcpy(c->j->verify_pattern, c->val, strlen(c->val) + 1);
	return 0;
}

/* verify_dump=: kept apart from not given (blkstack's default) */
static int apply_verify_dump(struct opt_ctx *c, uint64_t v)
{
	c->j->verify_dump = (uint8_t)(1 + v);
	return 0;
}

/* The buffer options' bit in buf_given (fio_option_is_set()). */
static uint8_t buf_bit(const char *name)
{
	if (!strcmp(name, "zero_buffers"))
		return BENCH_BUF_ZERO;
	if (!strcmp(name, "refill_buffers"))
		return BENCH_BUF_REFILL;
	if (!strcmp(name, "scramble_buffers"))
		return BENCH_BUF_SCRAMBLE;
	if (!strcmp(name, "buffer_compress_percentage"))
		return BENCH_BUF_COMPRESS;
	return BENCH_BUF_DEDUPE;
}

/* zero_buffers, refill_buffers, scramble_buffers: the value, and given */
static int apply_buf_bool(struct opt_ctx *c, uint64_t v)
{
	store(c, v);
	c->j->buf_given |= buf_bit(c->d->name);
	return 0;
}

/* buffer_compress_percentage, dedupe_percentage: the value, and given */
static int apply_buf_uint(struct opt_ctx *c, uint64_t v)
{
	store(c, v);
	c->j->buf_given |= buf_bit(c->d->name);
	return 0;
}

/* buffer_pattern=: fio's parse_and_fill_pattern() without formats */
static int apply_buffer_pattern(struct opt_ctx *c, uint64_t unused)
{
	struct bench_verify_pattern p;
	char why[256];
	int rc;

	(void)unused;
	rc = bench_verify_pattern_parse(c->val, &p, why, sizeof(why));
	if (rc)
		return val_err(c, rc, "%s", why);
	if (p.nr_off)
		return val_err(c, -EINVAL,
			       "%%o is a verify_pattern= format; fio's buffer_pattern= takes none (0x hex, decimal, \"string\")");
	c->j->buf_pat = p;
	c->j->buf_given |= BENCH_BUF_PATTERN;
	return 0;
}

/* mem= / iomem=: fio's types, mmap ones with an optional ":FILE" */
static int apply_mem(struct opt_ctx *c, uint64_t unused)
{
	static const struct opt_choice types[] = {
		{ "malloc", BENCH_MEM_MALLOC },
		{ "shm", BENCH_MEM_SHM },
		{ "shmhuge", BENCH_MEM_SHMHUGE },
		{ "mmap", BENCH_MEM_MMAP },
		{ "mmaphuge", BENCH_MEM_MMAPHUGE },
		{ "mmapshared", BENCH_MEM_MMAPSHARED },
		{ NULL, 0 },
	};
	const char *colon = strchr(c->val, ':');
	size_t n = colon ? (size_t)(colon - c->val) : strlen(c->val);
	const struct opt_choice *t;

	(void)unused;
	for (t = types; t->name; t++)
		if (strlen(t->name) == n && !strncmp(t->name, c->val, n))
			break;
	if (!t->name) {
		if (n == 10 && !strncmp(c->val, "cudamalloc", n))
			return val_err(c, -EOPNOTSUPP,
				       "cudamalloc (GPU memory for GPUDirect RDMA) is not supported: blkstack has no GPU engine; allowed malloc, shm, shmhuge, mmap, mmaphuge, mmapshared");
		return val_err(c, -EINVAL,
			       "unknown type, allowed malloc, shm, shmhuge, mmap[:FILE], mmaphuge[:FILE], mmapshared[:FILE]");
	}
	c->j->mem_type = (uint8_t)t->val;
	c->j->mem_file[0] = '\0';
	/* fio takes the file of the mmap types and ignores any other's */
	if (colon && (t->val == BENCH_MEM_MMAP || t->val == BENCH_MEM_MMAPHUGE ||
		      t->val == BENCH_MEM_MMAPSHARED)) {
		if (!colon[1])
			return val_err(c, -EINVAL, "an empty file name after ':'");
		if (strlen(colon + 1) >= sizeof(c->j->mem_file))
			return val_err(c, -EINVAL,
				       "the file name is too long, at most %zu characters",
				       sizeof(c->j->mem_file) - 1);
		memcpy(c->j->mem_file, colon + 1, strlen(colon + 1) + 1);
	}
	return 0;
}

/*
 * sync_file_range=FLAGS[:N]: fio's flags (wait_before, write, wait_after,
 * ','-separated), then the number of writes between syncs (1).  The sync is
 * a FLUSH: the block layer has nothing narrower; a note says so.
 */
static int apply_sync_file_range(struct opt_ctx *c, uint64_t unused)
{
	static const char *const flags[] = { "wait_before", "write", "wait_after" };
	const char *p = c->val, *colon = strchr(c->val, ':');
	const char *end = colon ? colon : p + strlen(p);
	uint64_t n = 1;
	char *e;

	(void)unused;
	while (p < end) {
		const char *q = memchr(p, ',', (size_t)(end - p));
		size_t len = q ? (size_t)(q - p) : (size_t)(end - p), i;

		for (i = 0; i < ARRAY_SIZE(flags); i++)
			if (strlen(flags[i]) == len && !strncmp(flags[i], p, len))
				break;
		if (i == ARRAY_SIZE(flags))
			return val_err(c, -EINVAL,
				       "unknown flag '%.*s', allowed wait_before, write, wait_after (','-separated), then :N",
				       (int)len, p);
		p = q ? q + 1 : end;
	}
	if (colon) {
		errno = 0;
		n = strtoull(colon + 1, &e, 10);
		if (!colon[1] || *e || errno || n < 1 || n > UINT32_MAX)
			return val_err(c, -EINVAL,
				       "N after ':' must be a number of writes, 1..%u",
				       UINT32_MAX);
	}
	c->j->sfr_blocks = (uint32_t)n;
	return 0;
}

/* fio's filesize=a-b (a random size per file) is not taken. */
static int apply_filesize(struct opt_ctx *c, uint64_t v)
{
	c->j->filesize = v;
	return 0;
}

/* One block size of bsrange= or bssplit=: a size, a multiple of 512. */
static int parse_one_bs(struct opt_ctx *c, const char *s, size_t n,
			uint32_t *out)
{
	char buf[32];
	uint64_t v;

	if (!n || n >= sizeof(buf))
		return val_err(c, -EINVAL, "a block size is missing or too long");
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (parse_size(buf, &v, &(uint64_t){ 0 }, &(const char *){ NULL },
		       c->j->kb_base) || v < 512 || v > (16 << 20) || v % 512)
		return val_err(c, -EINVAL,
			       "block size '%s': a size from 512 to 16M, a multiple of 512",
			       buf);
	*out = (uint32_t)v;
	return 0;
}

/*
 * Split c->val, fio's read,write[,trim] list, at its commas into @buf
 * (sizeof(c->one) bytes): @part[0..*n-1] the parts, empty ones "".
 * -EINVAL (the error set): too long, or more than 3 parts.
 */
static int split_ddir(struct opt_ctx *c, char *buf, char *part[3],
		      unsigned int *n)
{
	char *p;

	*n = 0;
	if (strlen(c->val) >= sizeof(c->one))
		return val_err(c, -EINVAL, "too long");
	strcpy(buf, c->val);
	for (p = buf; *n < 3; (*n)++) {
		part[*n] = p;
		p = strchr(p, ',');
		if (!p) {
			(*n)++;
			break;
		}
		*p++ = '\0';
	}
	if (p)
		return val_err(c, -EINVAL, "more than 3 values (read,write,trim)");
	return 0;
}

/*
 * fio's read,write[,trim] lists (options.c str_split_parse()): one value
 * for all, "a,b": reads a, writes and trims b; "a,b,c"; an empty part
 * leaves that direction to the plain value.  Each part goes through
 * @one (which parses c->val into the plain fields); @keep copies them
 * into direction d's slot.
 */
static int per_ddir(struct opt_ctx *c, int (*one)(struct opt_ctx *, uint64_t),
		    void (*keep)(struct bench_job_opts *, unsigned int))
{
	char buf[sizeof(c->one)], *part[3] = { NULL, NULL, NULL };
	const char *saved = c->val;
	unsigned int n, d;
	int rc = 0;

	if (split_ddir(c, buf, part, &n))
		return -EINVAL;
	for (d = 0; d < 3 && !rc; d++) {
		const char *v = part[d < n ? d : n - 1];

		if (!*v) {
			keep(c->j, d | 0x100);	/* the plain value */
			continue;
		}
		c->val = v;
		c->whole = saved;
		c->part = d;
		c->in_ddir = true;
		rc = one(c, 0);
		c->in_ddir = false;
		if (!rc)
			keep(c->j, d);
	}
	c->val = saved;
	c->whole = NULL;
	c->j->bs_ddir = true;
	return rc;
}

static void keep_range(struct bench_job_opts *j, unsigned int d)
{
	bool none = d & 0x100;

	d &= 0xff;
	j->bsd_min[d] = none ? 0 : j->bs_min;
	j->bsd_max[d] = none ? 0 : j->bs_max;
	j->bsd_nr[d] = 0;
	j->bs_min = j->bs_max = 0;
}

static void keep_split(struct bench_job_opts *j, unsigned int d)
{
	bool none = d & 0x100;

	d &= 0xff;
	j->bsd_nr[d] = none ? 0 : j->bssplit_nr;
	memcpy(j->bsd_bs[d], j->bssplit_bs, sizeof(j->bsd_bs[d]));
	memcpy(j->bsd_pct[d], j->bssplit_pct, sizeof(j->bsd_pct[d]));
	j->bsd_min[d] = j->bsd_max[d] = 0;
	j->bssplit_nr = 0;
}

static int apply_bssplit(struct opt_ctx *c, uint64_t unused);

/* bsrange=MIN-MAX, or fio's per-direction MIN-MAX,MIN-MAX[,MIN-MAX]. */
static int apply_bsrange(struct opt_ctx *c, uint64_t unused)
{
	const char *dash = strchr(c->val, '-');
	uint32_t lo, hi;
	int rc;

	(void)unused;
	if (strchr(c->val, ','))
		return per_ddir(c, apply_bsrange, keep_range);
	if (!dash)
		return val_err(c, -EINVAL, "not a range MIN-MAX");
	rc = parse_one_bs(c, c->val, dash - c->val, &lo);
	if (!rc)
		rc = parse_one_bs(c, dash + 1, strlen(dash + 1), &hi);
	if (rc)
		return rc;
	if (hi < lo)
		return val_err(c, -EINVAL, "the range's end is below its start");
	if (!c->in_ddir) {
		/* a plain value replaces each direction's */
		memset(c->j->bsd_min, 0, sizeof(c->j->bsd_min));
		memset(c->j->bsd_max, 0, sizeof(c->j->bsd_max));
		memset(c->j->bsd_nr, 0, sizeof(c->j->bsd_nr));
	}
	c->j->bs_min = lo;
	c->j->bs_max = hi;
	c->j->bssplit_nr = 0;
	return 0;
}

/*
 * bssplit=SIZE/PCT:SIZE/PCT:...: as fio, an entry without a share takes
 * an equal part of what the others leave; the shares must come to 100.
 */
static int apply_bssplit(struct opt_ctx *c, uint64_t unused)
{
	uint32_t bs[BENCH_BSSPLIT_MAX], pct[BENCH_BSSPLIT_MAX];
	unsigned int n = 0, missing = 0, i, sum = 0;
	const char *p = c->val;
	int rc;

	(void)unused;
	if (strchr(c->val, ','))
		return per_ddir(c, apply_bssplit, keep_split);
	while (*p) {
		const char *e = strchr(p, ':'), *slash;
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (n == BENCH_BSSPLIT_MAX)
			return val_err(c, -EINVAL, "more than %d block sizes",
				       BENCH_BSSPLIT_MAX);
		slash = memchr(p, '/', len);
		rc = parse_one_bs(c, p, slash ? (size_t)(slash - p) : len, &bs[n]);
		if (rc)
			return rc;
		pct[n] = 0;
		if (slash && (size_t)(slash - p) + 1 < len) {
			uint64_t v;
			char num[16];
			size_t k = len - (size_t)(slash - p) - 1;
			const char *end;
			bool hex;

			if (k >= sizeof(num))
				return val_err(c, -EINVAL, "bad share");
			memcpy(num, slash + 1, k);
			num[k] = '\0';
			if (parse_digits(num, &v, &end, &hex) || *end || hex || v > 100)
				return val_err(c, -EINVAL,
					       "share '%s': a whole percentage 0..100", num);
			pct[n] = (uint32_t)v;
			sum += pct[n];
		} else {
			missing++;
			pct[n] = UINT32_MAX;
		}
		n++;
		if (!e)
			break;
		p = e + 1;
	}
	if (!n)
		return val_err(c, -EINVAL, "no block size");
	if (sum > 100)
		return val_err(c, -EINVAL, "the shares add up to %u%%, more than 100%%", sum);
	for (i = 0; i < n; i++) {
		if (pct[i] != UINT32_MAX)
			continue;
		/* the last one missing takes the rounding */
		pct[i] = (100 - sum) / missing;
		if (!--missing)
			pct[i] = 100 - sum;
		sum += pct[i];
	}
	if (sum != 100)
		return val_err(c, -EINVAL, "the shares add up to %u%%, not 100%%", sum);
	if (!c->in_ddir) {
		/* a plain value replaces each direction's */
		memset(c->j->bsd_min, 0, sizeof(c->j->bsd_min));
		memset(c->j->bsd_max, 0, sizeof(c->j->bsd_max));
		memset(c->j->bsd_nr, 0, sizeof(c->j->bsd_nr));
	}
	memcpy(c->j->bssplit_bs, bs, sizeof(bs[0]) * n);
	memcpy(c->j->bssplit_pct, pct, sizeof(pct[0]) * n);
	c->j->bssplit_nr = n;
	c->j->bs_min = c->j->bs_max = 0;
	return 0;
}

/* prio=, prioclass=: the value, and that the job's priority was given. */
static int apply_ioprio(struct opt_ctx *c, uint64_t v)
{
	store(c, v);
	c->j->ioprio_given = true;
	return 0;
}

/*
 * One direction's list of cmdprio_bssplit= (fio's split_parse_prio_ddir()):
 * BS/, BS/PCT or BS/PCT/CLASS/LEVEL entries, ':' apart; class and level
 * are capped at 3 and 7, shares at 100, as fio caps them; entries with
 * no share are dropped, the rest sorted by size (stable: the order of
 * one size's entries is the order of its draws).
 */
static int cmdprio_bssplit_dir(struct opt_ctx *c, const char *p, size_t len,
			       unsigned int d)
{
	uint32_t bs[BENCH_CMDPRIO_MAX], pct[BENCH_CMDPRIO_MAX];
	int32_t prio[BENCH_CMDPRIO_MAX];
	unsigned int n = 0, i, k;
	const char *end = p + len;

	while (p < end) {
		const char *e = memchr(p, ':', (size_t)(end - p));
		size_t l = e ? (size_t)(e - p) : (size_t)(end - p);
		const char *slash = memchr(p, '/', l);
		unsigned long f[3] = { 0, 0, 0 };
		char tmp[48], *q;
		int nf = 0, rc;
		bool whole = true;

		if (!l)
			break;	/* fio stops at an empty entry */
		if (n == BENCH_CMDPRIO_MAX)
			return val_err(c, -EINVAL, "more than %d entries per direction",
				       BENCH_CMDPRIO_MAX);
		rc = parse_one_bs(c, p, slash ? (size_t)(slash - p) : l, &bs[n]);
		if (rc)
			return rc;
		if (slash && (size_t)(slash - p) + 1 < l) {
			size_t m = l - (size_t)(slash - p) - 1;

			if (m >= sizeof(tmp))
				return val_err(c, -EINVAL, "entry too long");
			memcpy(tmp, slash + 1, m);
			tmp[m] = '\0';
			whole = false;
			for (q = tmp; nf < 3;) {
				char *x;

				if (*q < '0' || *q > '9')
					return val_err(c, -EINVAL,
						       "'%s': BS/PCT or BS/PCT/CLASS/LEVEL with whole numbers",
						       tmp);
				f[nf++] = strtoul(q, &x, 10);
				if (!*x) {
					whole = true;
					break;
				}
				if (*x != '/')
					return val_err(c, -EINVAL,
						       "'%s': BS/PCT or BS/PCT/CLASS/LEVEL with whole numbers",
						       tmp);
				q = x + 1;
			}
			if (nf == 2 || !whole)
				return val_err(c, -EINVAL,
					       "'%s': BS/PCT or BS/PCT/CLASS/LEVEL (a class needs a level)",
					       tmp);
		}
		pct[n] = f[0] > 100 ? 100 : (uint32_t)f[0];
		prio[n] = nf == 3 ? (int32_t)IOPRIO_PRIO_VALUE(
					f[1] > 3 ? 3 : f[1] ? f[1] : IOPRIO_CLASS_BE,
					f[2] > 7 ? 7 : f[2]) : -1;
		if (pct[n])
			n++;
		if (!e)
			break;
		p = e + 1;
	}
	/* insertion sort by size: stable, as fio's qsort() of a few entries */
	for (i = 1; i < n; i++)
		for (k = i; k > 0 && bs[k - 1] > bs[k]; k--) {
			uint32_t tb = bs[k], tp = pct[k];
			int32_t tr = prio[k];

			bs[k] = bs[k - 1];
			pct[k] = pct[k - 1];
			prio[k] = prio[k - 1];
			bs[k - 1] = tb;
			pct[k - 1] = tp;
			prio[k - 1] = tr;
		}
	for (i = 0; i < n; i++) {
		unsigned int sum = 0;

		for (k = 0; k < n; k++)
			if (bs[k] == bs[i])
				sum += pct[k];
		if (sum > 100)
			return val_err(c, -EINVAL,
				       "the shares of block size %u add up to %u%%, more than 100%%",
				       bs[i], sum);
	}
	memcpy(c->j->cmdprio_bs[d], bs, sizeof(bs[0]) * n);
	memcpy(c->j->cmdprio_bs_pct[d], pct, sizeof(pct[0]) * n);
	memcpy(c->j->cmdprio_bs_prio[d], prio, sizeof(prio[0]) * n);
	c->j->cmdprio_bs_nr[d] = n;
	return 0;
}

/*
 * cmdprio_bssplit=: fio's str_split_parse(): "R,W[,T]" lists per
 * direction, one list for all (trims take no priority).
 */
static int apply_cmdprio_bssplit(struct opt_ctx *c, uint64_t unused)
{
	const char *v = c->val, *comma = strchr(v, ',');
	int rc;

	(void)unused;
	if (!comma) {
		rc = cmdprio_bssplit_dir(c, v, strlen(v), 0);
		if (!rc)
			rc = cmdprio_bssplit_dir(c, v, strlen(v), 1);
	} else {
		const char *w = comma + 1, *c2 = strchr(w, ',');

		rc = cmdprio_bssplit_dir(c, v, (size_t)(comma - v), 0);
		if (!rc)
			rc = cmdprio_bssplit_dir(c, w, c2 ? (size_t)(c2 - w) :
							    strlen(w), 1);
	}
	if (!rc)
		c->j->cmdprio_bssplit_on = true;
	return rc;
}

/* A float of random_distribution=: whole text, in [lo, hi]. */
static bool dist_float(const char *s, size_t n, double lo, double hi,
		       double *out)
{
	char buf[32], *end;
	double v;

	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	if (errno || *end || end == buf || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/*
 * random_distribution=: fio's models and their parameters (HOWTO,
 * random_distribution): zipf:theta (> 0, not 1), pareto:h (0 < h < 1),
 * normal:dev (0..100), each with an optional center in [0, 1];
 * zoned:PCT/RANGE%:... and zoned_abs:PCT/SIZE:..., shares adding to 100.
 * fio's read,write split is refused.
 */
static int apply_rand_dist(struct opt_ctx *c, uint64_t unused)
{
	static const char *const names[] = {
		[DIST_RANDOM] = "random", [DIST_ZIPF] = "zipf",
		[DIST_PARETO] = "pareto", [DIST_NORMAL] = "normal",
		[DIST_ZONED] = "zoned", [DIST_ZONED_ABS] = "zoned_abs",
	};
	const char *colon = strchr(c->val, ':'), *p;
	size_t nl = colon ? (size_t)(colon - c->val) : strlen(c->val);
	struct bench_job_opts *j = c->j;
	unsigned int d, n = 0, sum = 0;

	(void)unused;
	if (strchr(c->val, ','))
		return val_err(c, -EOPNOTSUPP,
			       "separate read,write[,trim] distributions are a fio feature that blkstack bench does not support");
	for (d = 0; d < ARRAY_SIZE(names); d++)
		if (strlen(names[d]) == nl && !strncmp(names[d], c->val, nl))
			break;
	if (d == ARRAY_SIZE(names))
		return val_err(c, -EINVAL,
			       "bad value, allowed random|zipf:THETA|pareto:H|normal:DEV|zoned:PCT/RANGE:...|zoned_abs:PCT/SIZE:...");
	j->dist_center = -1;
	j->dist_param = 0;
	j->dist_zones = 0;
	if (d == DIST_RANDOM) {
		if (colon)
			return val_err(c, -EINVAL, "random takes no parameter");
		j->rand_dist = d;
		return 0;
	}
	if (!colon || !colon[1])
		return val_err(c, -EINVAL, "%s needs its parameter after ':'",
			       names[d]);
	p = colon + 1;
	if (d == DIST_ZIPF || d == DIST_PARETO || d == DIST_NORMAL) {
		const char *c2 = strchr(p, ':');
		size_t pl = c2 ? (size_t)(c2 - p) : strlen(p);
		double lo = d == DIST_NORMAL ? 0 : 1e-9, hi = d == DIST_ZIPF ? 1e9 :
			    d == DIST_PARETO ? 1 - 1e-9 : 100;

		if (!dist_float(p, pl, lo, hi, &j->dist_param) ||
		    (d == DIST_ZIPF && j->dist_param == 1.0))
			return val_err(c, -EINVAL, "%s", d == DIST_ZIPF ?
				       "zipf's theta: a number above 0, not 1" :
				       d == DIST_PARETO ?
				       "pareto's h: a number between 0 and 1" :
				       "normal's deviation: a percentage 0..100");
		if (c2 && !dist_float(c2 + 1, strlen(c2 + 1), 0, 1,
				      &j->dist_center))
			return val_err(c, -EINVAL, "the center: a number 0..1");
		j->rand_dist = d;
		return 0;
	}
	/* zoned, zoned_abs */
	while (*p) {
		const char *e = strchr(p, ':'), *slash;
		size_t len = e ? (size_t)(e - p) : strlen(p);
		uint64_t pct, size;
		char a[32], b[32];
		const char *end;
		bool hex;

		slash = memchr(p, '/', len);
		if (n == BENCH_ZONES_MAX)
			return val_err(c, -EINVAL, "more than %d zones",
				       BENCH_ZONES_MAX);
		if (!slash || (size_t)(slash - p) >= sizeof(a) ||
		    len - (size_t)(slash - p) - 1 >= sizeof(b))
			return val_err(c, -EINVAL, "a zone is PCT/%s",
				       d == DIST_ZONED ? "RANGE%" : "SIZE");
		memcpy(a, p, slash - p);
		a[slash - p] = '\0';
		memcpy(b, slash + 1, len - (size_t)(slash - p) - 1);
		b[len - (size_t)(slash - p) - 1] = '\0';
		if (b[0] && b[strlen(b) - 1] == '%')
			b[strlen(b) - 1] = '\0';
		/* fio: the last zone without a range takes the rest (zoned) */
		if (!b[0] && d == DIST_ZONED && !e) {
			uint64_t r = 0;
			unsigned int i;

			for (i = 0; i < n; i++)
				r += j->zone_size[i];
			if (r > 100)
				r = 100;
			snprintf(b, sizeof(b), "%" PRIu64, 100 - r);
		}
		if (parse_digits(a, &pct, &end, &hex) || *end || hex || pct > 100)
			return val_err(c, -EINVAL, "zone share '%s': 0..100", a);
		if (d == DIST_ZONED ?
		    (parse_digits(b, &size, &end, &hex) || *end || hex || size > 100) :
		    (parse_size(b, &size, &(uint64_t){ 0 }, &(const char *){ NULL },
				j->kb_base) || !size))
			return val_err(c, -EINVAL, "zone %s '%s'",
				       d == DIST_ZONED ? "range: a percentage 0..100" :
				       "size: a size above 0", b);
		j->zone_pct[n] = (uint32_t)pct;
		j->zone_size[n] = size;
		sum += (uint32_t)pct;
		n++;
		if (!e)
			break;
		p = e + 1;
	}
	if (sum != 100)
		return val_err(c, -EINVAL, "the zones' shares add up to %u%%, not 100%%",
			       sum);
	if (d == DIST_ZONED) {
		uint64_t r = 0;
		unsigned int i;

		for (i = 0; i < n; i++)
			r += j->zone_size[i];
		if (r > 100)
			return val_err(c, -EINVAL,
				       "the zones' ranges add up to %" PRIu64 "%%, more than 100%%", r);
	}
	j->dist_zones = n;
	j->rand_dist = d;
	return 0;
}

/* A profile's option: as fio without --profile=, no effect; said so. */
static int apply_profile_opt(struct opt_ctx *c, uint64_t unused)
{
	char note[256], shown[SHOW_LEN];

	(void)unused;
	if (!c->o)
		return 0;
	snprintf(note, sizeof(note),
		 "%s=%s: an option of fio's %s profile, which has no effect without fio's --profile=: none here either",
		 c->d->name, show(shown, c->val), c->d->metavar);
	bench_err_add(c->o->notes, sizeof(c->o->notes), note);
	return 0;
}

/* startdelay=TIME or TIME-TIME (fio's irange of times, unit s). */
/*
 * ss=: fio's steadystate criterion, "iops|bw|iops_slope|bw_slope:LIMIT",
 * LIMIT a decimal number with an optional %, or for bw a size per second
 * (k/m/g suffixes as bs= takes them).
 */
static int apply_ss(struct opt_ctx *c, uint64_t unused)
{
	static const char *const kinds[] = { "iops", "bw", "iops_slope", "bw_slope" };
	const char *colon = strchr(c->val, ':');
	size_t klen = colon ? (size_t)(colon - c->val) : strlen(c->val);
	const char *lim = colon ? colon + 1 : "";
	size_t llen = strlen(lim);
	unsigned int k;
	bool pct = false;
	double v;
	char num[40], *end;

	(void)unused;
	for (k = 0; k < 4; k++)
		if (strlen(kinds[k]) == klen && !strncmp(c->val, kinds[k], klen))
			break;
	if (k == 4)
		return val_err(c, -EINVAL,
			       "not a criterion: iops, bw, iops_slope or bw_slope, then :LIMIT");
	if (!colon || !llen)
		return val_err(c, -EINVAL,
			       "the criterion needs a limit, as fio's does: %s:LIMIT[%%]",
			       kinds[k]);
	if (lim[llen - 1] == '%') {
		pct = true;
		llen--;
	}
	if (!llen || llen >= sizeof(num))
		return val_err(c, -EINVAL, "the limit is not a number");
	memcpy(num, lim, llen);
	num[llen] = '\0';
	if (!pct && (k & 1)) {
		uint64_t b;

		if (bench_parse_size(num, &b))
			return val_err(c, -EINVAL,
				       "the bw limit is not a size in bytes per second (k/m/g suffixes) nor a percentage");
		v = (double)b;
	} else {
		v = strtod(num, &end);
		if (end == num || *end || !(v >= 0.0) || v > 1e18)
			return val_err(c, -EINVAL,
				       "the limit is not a number from 0 to 1e18 (%% optional)");
	}
	if (strlen(c->val) >= sizeof(c->j->ss_spec))
		return val_err(c, -EINVAL, "too long");
	strcpy(c->j->ss_spec, c->val);
	c->j->ss_bw = k & 1;
	c->j->ss_slope = k >= 2;
	c->j->ss_pct = pct;
	c->j->ss_limit = v;
	return 0;
}

/* A boolean whose fio default is 1, kept as its *_off field (options.h). */
static int apply_inverted(struct opt_ctx *c, uint64_t v)
{
	*(bool *)field(c) = !v;
	return 0;
}

/*
 * percentile_list=: fio's colon list of up to 20 percentiles, each in
 * (0, 100], listed in ascending order as fio sorts them.  fio stops at an
 * entry of 0 (its list ends at the first 0.0), so 0 is refused here rather
 * than cutting the list short unseen.  The text output's labels have as
 * many decimals as the entry with the most (fio's percentile_precision).
 */
static int apply_percentile_list(struct opt_ctx *c, uint64_t unused)
{
	struct bench_job_opts *j = c->j;
	double v[BENCH_PCT_MAX];
	unsigned int nr = 0, prec = 0, i, k;
	const char *p = c->val;

	(void)unused;
	if (strlen(c->val) >= sizeof(j->percentile_list))
		return val_err(c, -EINVAL, "too long (at most %zu characters)",
			       sizeof(j->percentile_list) - 1);
	for (;;) {
		size_t len = strcspn(p, ":");
		const char *dot;
		char num[64], *end;
		double x;

		if (!len || len >= sizeof(num))
			return val_err(c, -EINVAL,
				       "entry %u is empty or too long: a colon list of percentiles, 1:50:99.9",
				       nr + 1);
		if (nr == BENCH_PCT_MAX)
			return val_err(c, -EINVAL,
				       "more than %d percentiles (fio's limit)",
				       BENCH_PCT_MAX);
		memcpy(num, p, len);
		num[len] = '\0';
		x = strtod(num, &end);
		/* blanks around an entry, as fio's strtod() takes them */
		while (end != num && (*end == ' ' || *end == '\t'))
			end++;
		if (end == num || *end || !(x > 0.0) || x > 100.0)
			return val_err(c, -EINVAL,
				       "entry %u (%s) is not a percentile in (0, 100]",
				       nr + 1, num);
		dot = strchr(num, '.');
		if (dot && strspn(dot + 1, "0123456789") > prec)
			prec = (unsigned int)strspn(dot + 1, "0123456789");
		/* insertion sort: at most 20 */
		for (i = nr; i > 0 && v[i - 1] > x; i--)
			v[i] = v[i - 1];
		v[i] = x;
		nr++;
		if (!p[len])
			break;
		p += len + 1;
	}
	for (k = 0; k < nr; k++)
		j->pct[k] = v[k];
	j->pct_nr = nr;
	j->pct_precision = prec;
	strcpy(j->percentile_list, c->val);
	return 0;
}

/* ss_dur=: whole seconds, as fio counts its one-second samples */
static int apply_ss_dur(struct opt_ctx *c, uint64_t v)
{
	if (v && v < NSEC_PER_SEC)
		return val_err(c, -EINVAL,
			       "below 1 s: steady state samples once a second (0 turns it off)");
	c->j->ss_dur_ns = v / NSEC_PER_SEC * NSEC_PER_SEC;
	return 0;
}

/* latency_percentile=: fio's float, 0..100 */
static int apply_latency_percentile(struct opt_ctx *c, uint64_t unused)
{
	char *end;
	double v;

	(void)unused;
	errno = 0;
	v = strtod(c->val, &end);
	if (end == c->val || *end || errno || v != v)
		return val_err(c, -EINVAL, "not a number, allowed 0..100 (decimals allowed)");
	if (v < 0.0 || v > 100.0)
		return val_err(c, -EINVAL, "out of range, allowed 0..100");
	c->j->latency_percentile = v;
	return 0;
}

/*
 * percentage_random=R[,W[,T]]: fio's int list (perc_rand[]), 0..100 each;
 * as rate=, the last value given sets the directions after it, an empty
 * one leaves fio's default, 100.  Stored as 100 - R (j->pct_seq).
 */
static int apply_perc_rand(struct opt_ctx *c, uint64_t unused)
{
	const char *p = c->val;
	uint8_t *seq = c->j->pct_seq;
	unsigned int i = 0, k;

	(void)unused;
	memset(seq, 0, 3);
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (i == 3)
			return val_err(c, -EINVAL,
				       "more than 3 values, allowed read,write,trim");
		if (n) {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(p, &end, 10);
			if (end != p + n || errno || v > 100 || *p == '-' || *p == '+')
				return val_err(c, -EINVAL,
					       "value %u: not a percentage, allowed 0..100",
					       i + 1);
			for (k = i; k < (comma ? i + 1 : 3); k++)
				seq[k] = (uint8_t)(100 - v);
		}
		if (!comma)
			break;
		p = comma + 1;
		i++;
		if (!*p)
			break;
	}
	return 0;
}

/*
 * file_service_type=TYPE[:N] (fio's str_fst_cb()): roundrobin, sequential
 * or random, :N the I/Os per pick (0 is 1, as fio); fio's normal, gauss,
 * zipf and pareto file choices are refused.
 */
static int apply_fst(struct opt_ctx *c, uint64_t unused)
{
	static const char *const names[] = { "roundrobin", "sequential", "random" };
	const char *colon = strchr(c->val, ':');
	size_t n = colon ? (size_t)(colon - c->val) : strlen(c->val);
	unsigned int i;
	uint64_t nr = 1;

	(void)unused;
	for (i = 0; i < 3; i++)
		if (strlen(names[i]) == n && !strncmp(c->val, names[i], n))
			break;
	if (i == 3) {
		static const char *const other[] = { "normal", "gauss", "zipf", "pareto" };
		unsigned int k;

		for (k = 0; k < 4; k++)
			if (strlen(other[k]) == n && !strncmp(c->val, other[k], n))
				return val_err(c, -EOPNOTSUPP,
					       "fio's %s file choice is not implemented, allowed roundrobin[:N]|sequential|random[:N]",
					       other[k]);
		return val_err(c, -EINVAL,
			       "allowed roundrobin[:N]|sequential|random[:N]");
	}
	if (colon) {
		const char *end;
		bool hex;

		if (parse_digits(colon + 1, &nr, &end, &hex) || *end || hex ||
		    nr > UINT32_MAX)
			return val_err(c, -EINVAL,
				       "':%s': a count of I/Os, allowed 0..4294967295",
				       colon + 1);
		if (!nr)
			nr = 1;
	}
	c->j->fst = (uint8_t)i;
	c->j->fst_nr = (uint32_t)nr;
	return 0;
}

/* thinktime_blocks=: stored, and noted as given (thinktime_iotime=) */
static int apply_think_blocks(struct opt_ctx *c, uint64_t v)
{
	store(c, v);
	c->j->think_blocks_set = true;
	return 0;
}

/* iodepth_batch_complete_min=, _max=: stored, and reaping follows them */
static int apply_batch_complete(struct opt_ctx *c, uint64_t v)
{
	store(c, v);
	c->j->batch_complete_set = true;
	return 0;
}

/*
 * fio's read,write[,trim] list (parse.c handle_option()): value i sets
 * direction i; the last value, unless a comma ends the list, also sets
 * the directions after it; an empty value leaves its direction at 0.
 * "500k" caps all three, "500k," reads only, ",500k" writes and trims.
 */
static int set_ddir_list(struct opt_ctx *c)
{
	const char *all = c->val, *p = all;
	uint64_t vals[3] = { 0, 0, 0 };
	unsigned int i = 0, k;
	char tok[80];
	int rc;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (i == 3)
			return val_err(c, -EINVAL,
				       "more than 3 values, allowed read,write,trim");
		if (n >= sizeof(tok))
			return val_err(c, -EINVAL, "value %u too long", i + 1);
		memcpy(tok, p, n);
		tok[n] = '\0';
		if (n) {
			c->val = tok;
			c->whole = all;
			c->part = i;
			rc = parse_number(c, &vals[i]);
			c->val = all;
			c->whole = NULL;
			if (rc)
				return rc;
			/* the last value sets the directions after it */
			if (!comma)
				for (k = i + 1; k < 3; k++)
					vals[k] = vals[i];
		}
		if (!comma)
			break;
		p = comma + 1;
		i++;
		if (!*p)
			break;	/* "R,": no more values, none copied */
	}
	memcpy(field(c), vals, sizeof(vals));
	return 0;
}

/* zone_reset_threshold=, zone_reset_frequency=: fio's float from 0 to 1 */
static int apply_zone_frac(struct opt_ctx *c, uint64_t unused)
{
	bool zrt = c->d->off == offsetof(struct bench_job_opts, zrt_spec);
	char *end;
	double v;

	(void)unused;
	v = strtod(c->val, &end);
	if (end == c->val || *end || !(v >= 0.0 && v <= 1.0))
		return val_err(c, -EINVAL, "a number from 0 to 1");
	if (strlen(c->val) >= sizeof(c->j->zrt_spec))
		return val_err(c, -EINVAL, "too long");
	strcpy(zrt ? c->j->zrt_spec : c->j->zrf_spec, c->val);
	if (zrt)
		c->j->zone_reset_threshold = v;
	else
		c->j->zone_reset_frequency = v;
	return 0;
}

static int apply_startdelay(struct opt_ctx *c, uint64_t unused)
{
	const char *dash = strchr(c->val, '-');
	char lo[64];
	uint64_t a, b = 0;

	(void)unused;
	if (dash && (size_t)(dash - c->val) >= sizeof(lo))
		return val_err(c, -EINVAL, "not a time or a range of times a-b");
	if (dash) {
		memcpy(lo, c->val, dash - c->val);
		lo[dash - c->val] = '\0';
	}
	if (bench_parse_time(dash ? lo : c->val, NSEC_PER_SEC, &a) ||
	    (dash && bench_parse_time(dash + 1, NSEC_PER_SEC, &b)))
		return val_err(c, -EINVAL,
			       "not a time or a range of times a-b (a whole number with an optional unit ns/us/ms/s/m/h/d, s without one)");
	if (dash && b < a)
		return val_err(c, -EINVAL, "the range's end is before its start");
	c->j->startdelay_ns = a;
	c->j->startdelay_max_ns = dash ? b : 0;
	return 0;
}

/*
 * A list of ids as fio's cpus_allowed= and libnuma's node strings take
 * them: "0,5,8-15"; "all" when @all is set (every id of @all).  Each id
 * below @max.  0, or -EINVAL with the reason in @why.
 */
static int parse_id_list(const char *s, unsigned long max, const cpu_set_t *all,
			 const char *what, cpu_set_t *set, char *why,
			 size_t whylen)
{
	const char *p = s;

	CPU_ZERO(set);
	if (all && !strcmp(s, "all")) {
		CPU_OR(set, set, all);
		return 0;
	}
	for (;;) {
		unsigned long a, b;
		char *end;

		if (*p < '0' || *p > '9')
			goto bad;
		a = strtoul(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				goto bad;
			b = strtoul(p, &end, 10);
			p = end;
			if (b < a) {
				snprintf(why, whylen, "the range %lu-%lu ends before it starts", a, b);
				return -EINVAL;
			}
		}
		if (b >= max || b >= CPU_SETSIZE) {
			snprintf(why, whylen, "%s %lu too large (max=%lu)", what,
				 b, (max < CPU_SETSIZE ? max : CPU_SETSIZE) - 1);
			return -EINVAL;
		}
		for (; a <= b; a++) {
			if (all && !CPU_ISSET(a, all)) {
				snprintf(why, whylen, "%s %lu is not online", what, a);
				return -EINVAL;
			}
			CPU_SET(a, set);
		}
		if (!*p)
			return 0;
		if (*p++ != ',')
			goto bad;
	}
bad:
	snprintf(why, whylen, "not a list of %ss, allowed N, A-B, comma-separated%s",
		 what, all ? ", or all" : "");
	return -EINVAL;
}

static long cpus_configured(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? n : 1;
}

/* fio's cpus_allowed=: the CPUs by number. */
static int apply_cpus_allowed(struct opt_ctx *c, uint64_t unused)
{
	char why[128];

	(void)unused;
	if (parse_id_list(c->val, (unsigned long)cpus_configured(), NULL, "CPU",
			  &c->j->cpus, why, sizeof(why)))
		return val_err(c, -EINVAL, "%s", why);
	c->j->cpus_on = true;
	return 0;
}

/* fio's cpumask=: the CPUs as bits of an int. */
static int apply_cpumask(struct opt_ctx *c, uint64_t v)
{
	long max = cpus_configured();
	unsigned int i;

	CPU_ZERO(&c->j->cpus);
	for (i = 0; i < 32; i++) {
		if (!(v & (1ull << i)))
			continue;
		if (i >= max)
			return val_err(c, -EINVAL, "CPU %u too large (max=%ld)",
				       i, max - 1);
		CPU_SET(i, &c->j->cpus);
	}
	c->j->cpus_on = true;
	return 0;
}

/* "0-1,3" (a sysfs list) from @path into @set; 0 or -errno. */
static int read_id_list(const char *path, cpu_set_t *set)
{
	char buf[4096], why[128];
	FILE *f = fopen(path, "r");
	size_t n;

	CPU_ZERO(set);
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (!n)
		return 0;	/* a node without CPUs */
	return parse_id_list(buf, CPU_SETSIZE, NULL, "id", set, why, sizeof(why));
}

/*
 * The online NUMA nodes; a kernel without NUMA has node 0 alone.  @why
 * names the problem when it fails.
 */
static int numa_online(cpu_set_t *nodes)
{
	int rc = read_id_list("/sys/devices/system/node/online", nodes);

	if (rc == -ENOENT) {
		CPU_ZERO(nodes);
		CPU_SET(0, nodes);
		return 0;
	}
	return rc;
}

/* A node list of numa_cpu_nodes= or numa_mem_policy=, online nodes only. */
static int parse_nodes(struct opt_ctx *c, const char *list, cpu_set_t *nodes)
{
	cpu_set_t online;
	char why[128];
	int rc = numa_online(&online);

	if (rc)
		return val_err(c, rc, "cannot read the online NUMA nodes: %s",
			       strerror(-rc));
	if (parse_id_list(list, CPU_SETSIZE, &online, "node", nodes, why,
			  sizeof(why))) {
		char on[64] = "";
		size_t n = 0;
		unsigned int i;

		for (i = 0; i < CPU_SETSIZE && n < sizeof(on) - 8; i++)
			if (CPU_ISSET(i, &online))
				n += (size_t)snprintf(on + n, sizeof(on) - n,
						      "%s%u", n ? "," : "", i);
		return val_err(c, -EINVAL, "%s (online: %s)", why, on);
	}
	return 0;
}

/* fio's numa_cpu_nodes=: the CPUs of those nodes (libnuma's numa_run_on_node_mask()). */
static int apply_numa_cpu_nodes(struct opt_ctx *c, uint64_t unused)
{
	cpu_set_t nodes, cpus;
	unsigned int n;
	char path[80];
	int rc;

	(void)unused;
	rc = parse_nodes(c, c->val, &nodes);
	if (rc)
		return rc;
	CPU_ZERO(&c->j->numa_cpus);
	for (n = 0; n < CPU_SETSIZE; n++) {
		if (!CPU_ISSET(n, &nodes))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%u/cpulist", n);
		rc = read_id_list(path, &cpus);
		if (rc == -ENOENT && n == 0) {
			/* no NUMA in the kernel: node 0 is every CPU */
			long i, max = cpus_configured();

			CPU_ZERO(&cpus);
			for (i = 0; i < max && i < CPU_SETSIZE; i++)
				CPU_SET(i, &cpus);
			rc = 0;
		}
		if (rc)
			return val_err(c, rc, "cannot read %s: %s", path,
				       strerror(-rc));
		CPU_OR(&c->j->numa_cpus, &c->j->numa_cpus, &cpus);
	}
	if (!CPU_COUNT(&c->j->numa_cpus))
		return val_err(c, -EINVAL, "these nodes have no CPUs");
	c->j->numa_cpus_on = true;
	return 0;
}

/* fio's numa_mem_policy=MODE[:NODES], with fio's rules for each mode. */
static int apply_numa_mem_policy(struct opt_ctx *c, uint64_t unused)
{
	static const char *const modes[] = {
		[MEMPOL_DEFAULT] = "default", [MEMPOL_PREFER] = "prefer",
		[MEMPOL_BIND] = "bind", [MEMPOL_INTERLEAVE] = "interleave",
		[MEMPOL_LOCAL] = "local",
	};
	const char *colon = strchr(c->val, ':'), *list = colon ? colon + 1 : NULL;
	size_t len = colon ? (size_t)(colon - c->val) : strlen(c->val);
	unsigned int m, n;
	cpu_set_t nodes;
	int rc;

	(void)unused;
	for (m = MEMPOL_DEFAULT; m <= MEMPOL_LOCAL; m++)
		if (strlen(modes[m]) == len && !strncmp(c->val, modes[m], len))
			break;
	if (m > MEMPOL_LOCAL)
		return val_err(c, -EINVAL,
			       "not a memory policy, allowed default|prefer:NODE|bind:NODES|interleave[:NODES]|local");
	if ((m == MEMPOL_DEFAULT || m == MEMPOL_LOCAL) && list)
		return val_err(c, -EINVAL, "%s takes no node list", modes[m]);
	if ((m == MEMPOL_PREFER || m == MEMPOL_BIND) && (!list || !*list))
		return val_err(c, -EINVAL, "%s needs %s", modes[m],
			       m == MEMPOL_PREFER ? "one node: prefer:N" :
						    "a node list: bind:NODES");
	if (m == MEMPOL_PREFER && strspn(list, "0123456789") != strlen(list))
		return val_err(c, -EINVAL, "one node only for prefer");
	c->j->mem_nodes = 0;
	if (list || m == MEMPOL_INTERLEAVE) {
		rc = parse_nodes(c, list ? list : "all", &nodes);
		if (rc)
			return rc;
		for (n = 0; n < CPU_SETSIZE; n++) {
			if (!CPU_ISSET(n, &nodes))
				continue;
			if (n >= 64)
				return val_err(c, -EINVAL,
					       "node %u: blkstack takes nodes 0-63", n);
			c->j->mem_nodes |= 1ull << n;
		}
	}
	c->j->mem_policy = (uint8_t)m;
	return 0;
}

/* create_serialize=0: taken, with a note of what happens instead. */
static int apply_create_serialize(struct opt_ctx *c, uint64_t unused)
{
	(void)unused;
	if (*c->val && strcmp(c->val, "0") && strcmp(c->val, "1"))
		return val_err(c, -EINVAL, "bad boolean, allowed 0|1");
	if (c->o && !strcmp(c->val, "0"))
		bench_err_add(c->o->notes, sizeof(c->o->notes),
			      "create_serialize=0: blkstack creates every job's files one after another before any job starts (fio's create_serialize=1); the I/O is the same, only where the file system puts the files' blocks may differ");
	return 0;
}

/*
 * fio's str2error(): the errno names ignore_error= takes, EPERM (1) to
 * ERANGE (34) in Linux's order; other errors are given as numbers.
 */
static const char *const ignore_names[] = {
	"EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG",
	"ENOEXEC", "EBADF", "ECHILD", "EAGAIN", "ENOMEM", "EACCES", "EFAULT",
	"ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV", "ENOTDIR", "EISDIR",
	"EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
	"ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE",
};

/*
 * ignore_error=READ,WRITE,VERIFY (fio's str_ignore_error_cb()): each
 * class a ':' list of errno names or numbers (a negative number is taken
 * as positive; an empty name ends the list); a class with a list replaces
 * fio's EIO:EILSEQ for it and sets its continue_on_error bit, an empty
 * one is left as it was.
 */
static int apply_ignore_error(struct opt_ctx *c, uint64_t unused)
{
	char buf[1024], shown[SHOW_LEN], *p, *cls, *name;
	unsigned int type = 0, n, i;

	(void)unused;
	if (strlen(c->val) >= sizeof(buf))
		return val_err(c, -EINVAL, "too long, at most %zu characters",
			       sizeof(buf) - 1);
	snprintf(buf, sizeof(buf), "%s", c->val);
	for (p = buf; p; type++) {
		uint16_t errs[BENCH_IGNORE_MAX];

		cls = strsep(&p, ",");
		if (type >= 3)
			return val_err(c, -EINVAL,
				       "more than 3 classes, allowed READ,WRITE,VERIFY (each a ':' list of errors)");
		n = 0;
		while ((name = strsep(&cls, ":")) != NULL) {
			long v = 0;
			char *end;

			while (*name == ' ' || *name == '\t')
				name++;
			end = name + strlen(name);
			while (end > name && (end[-1] == ' ' || end[-1] == '\t'))
				*--end = '\0';
			if (!*name)
				break;
			if (name[0] == 'E') {
				for (i = 0; i < ARRAY_SIZE(ignore_names); i++)
					if (!strcmp(ignore_names[i], name))
						v = i + 1;
			} else {
				errno = 0;
				v = strtol(name, &end, 10);
				if (errno || *end || v < -4095 || v > 4095)
					v = 0;
				if (v < 0)
					v = -v;
			}
			if (!v)
				return val_err(c, -EINVAL,
					       "unknown error '%s' in the %s list: fio's names EPERM..ERANGE (errno 1..34), or an errno number 1..4095",
					       show(shown, name),
					       type == 0 ? "read" : type == 1 ? "write" : "verify");
			if (n == BENCH_IGNORE_MAX)
				return val_err(c, -EINVAL,
					       "more than %d errors in the %s list",
					       BENCH_IGNORE_MAX,
					       type == 0 ? "read" : type == 1 ? "write" : "verify");
			errs[n++] = (uint16_t)v;
		}
		if (!n || !c->j)
			continue;
		c->j->ignore_nr[type] = (uint8_t)n;
		memcpy(c->j->ignore_err[type], errs, n * sizeof(errs[0]));
		c->j->continue_on_error |= 1u << type;
	}
	return 0;
}

/* verify_async=N: the number, and a note that the job's thread checks. */
static int apply_verify_async(struct opt_ctx *c, uint64_t v)
{
	char note[320];

	store(c, v);
	if (!v || !c->o)
		return 0;
	snprintf(note, sizeof(note),
		 "verify_async=%" PRIu64 ": blkstack has no verify offload threads; each job's thread checks its blocks itself: the same blocks are checked, with the same results, only the CPU time of the checks falls on the job's thread",
		 v);
	bench_err_add(c->o->notes, sizeof(c->o->notes), note);
	return 0;
}

/*
 * experimental_verify=1: fio then keeps no log of the offsets written and
 * replays the job's random sequence to find them.  blkstack never logs
 * offsets either: one bit per block written, read back in offset order.
 */
static int apply_experimental_verify(struct opt_ctx *c, uint64_t v)
{
	store(c, v);
	if (!v || !c->o)
		return 0;
	bench_err_add(c->o->notes, sizeof(c->o->notes),
		      "experimental_verify=1: blkstack does not replay the random sequence; it reads back the blocks its map of written blocks (one bit per block, no log of offsets) holds, in offset order: the same blocks fio's replay reads, in another order");
	return 0;
}

/* verify_async_cpus=CPUS: a CPU list as cpus_allowed= takes; no effect. */
static int apply_verify_async_cpus(struct opt_ctx *c, uint64_t unused)
{
	char why[128], note[320], shown[SHOW_LEN];
	cpu_set_t set;

	(void)unused;
	if (parse_id_list(c->val, (unsigned long)cpus_configured(), NULL, "CPU",
			  &set, why, sizeof(why)))
		return val_err(c, -EINVAL, "%s", why);
	if (c->o) {
		snprintf(note, sizeof(note),
			 "verify_async_cpus=%s: no effect: blkstack has no verify offload threads (the job's threads check, on the job's CPUs)",
			 show(shown, c->val));
		bench_err_add(c->o->notes, sizeof(c->o->notes), note);
	}
	return 0;
}

/* fill_device=: the flag, and where it was given, for the run's refusal */
static int apply_fill_device(struct opt_ctx *c, uint64_t v)
{
	store(c, v);
	if (c->j)
		snprintf(c->j->fill_device_at, sizeof(c->j->fill_device_at),
			 "%s", c->o && c->o->parse_at ? c->o->parse_at : "");
	return 0;
}

/* ioengine=: an engine blkstack maps onto a driver, or refused by name. */
static int apply_ioengine(struct opt_ctx *c, uint64_t unused)
{
	const struct fio_engine *e = fio_engine_find(c->val), *all;
	char allowed[256];
	size_t n, i, k = 0;

	(void)unused;
	if (e && e->status == FIO_REFUSED)
		return val_err(c, -EOPNOTSUPP,
			       "a fio engine blkstack bench does not support: %s",
			       e->what);
	if (!e) {
		all = fio_engines(&n);
		allowed[0] = '\0';
		for (i = 0; i < n && k < sizeof(allowed); i++)
			if (all[i].status == FIO_MAPPED)
				k += snprintf(allowed + k, sizeof(allowed) - k,
					      "%s%s", k ? "|" : "", all[i].name);
		return val_err(c, -EINVAL, "not a fio engine, allowed %s",
			       allowed);
	}
	snprintf(c->j->ioengine, sizeof(c->j->ioengine), "%s", e->name);
	c->j->engine_sync = e->sync;
	return 0;
}

/*
 * A registry text option with a check or a list (nvme_fault=): checked
 * now, kept as text; a list takes one more entry per use.
 */
static int apply_reg_str(struct opt_ctx *c, uint64_t unused)
{
	const struct blk_opt_desc *r = c->d->reg;
	char *base = (char *)&c->o->dev.p;
	char why[400];

	(void)unused;
	if (strlen(c->val) >= r->len)
		return val_err(c, -EINVAL, "too long, at most %zu characters",
			       r->len - 1);
	if (r->check && r->check(c->val, why, sizeof(why)))
		return val_err(c, -EINVAL, "%s", why);
	if (r->flags & BLK_OPT_F_LIST) {
		unsigned int *n = (unsigned int *)(base + r->count_off);

		if (*n == r->list_max)
			return val_err(c, -EINVAL, "more than %u rules",
				       r->list_max);
		memcpy(base + r->off + *n * r->len, c->val, strlen(c->val) + 1);
		(*n)++;
		return 0;
	}
	memcpy(base + r->off, c->val, strlen(c->val) + 1);
	return 0;
}

static int apply_dev(struct opt_ctx *c, uint64_t unused)
{
	char devs[BENCH_MAX_DEVS][16];
	unsigned int n = 0, i;
	const char *p = c->val;

	for (;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const struct blk_driver *drv;
		const char *known;
		char shown[SHOW_LEN], one[16], names[64];

		if (!len)
			return val_err(c, -EINVAL,
				       "empty device name in the list, allowed %s",
				       blk_driver_names(names, sizeof(names), "|"));
		drv = NULL;
		if (len < sizeof(one)) {
			memcpy(one, p, len);
			one[len] = '\0';
			drv = blk_driver_find(one);
		}
		if (!drv)
			return val_err(c, -EINVAL,
				       "unknown device '%s', allowed %s",
				       show_n(shown, sizeof(shown), p, len),
				       blk_driver_names(names, sizeof(names), "|"));
		known = drv->name;
		for (i = 0; i < n; i++)
			if (!strcmp(devs[i], known))
				return val_err(c, -EINVAL,
					       "device '%s' listed twice", known);
		if (n == BENCH_MAX_DEVS)
			return val_err(c, -EINVAL, "more than %d devices",
				       BENCH_MAX_DEVS);
		snprintf(devs[n++], sizeof(devs[0]), "%s", known);
		if (!e)
			break;
		p = e + 1;
	}
	memcpy(c->o->dev.devs, devs, sizeof(devs[0]) * n);
	c->o->dev.nr_devs = n;
	return 0;
}

static int parse_choice(struct opt_ctx *c, uint64_t *v)
{
	const struct opt_def *d = c->d;
	const struct opt_choice *ch;
	char allowed[160];
	const char *colon;

	fmt_choices(d, allowed, sizeof(allowed));
	for (ch = d->choices; ch->name; ch++) {
		if (!strcmp(ch->name, c->val)) {
			*v = ch->val;
			return 0;
		}
	}
	for (ch = d->hidden; ch && ch->name; ch++) {
		if (!strcmp(ch->name, c->val)) {
			*v = ch->val;
			return 0;
		}
	}
	/* fio's rw=randread:8 (a hole every 8 I/Os) and rw=read:4k. */
	colon = strchr(c->val, ':');
	if (colon)
		for (ch = d->choices; ch->name; ch++)
			if (strlen(ch->name) == (size_t)(colon - c->val) &&
			    !strncmp(ch->name, c->val, colon - c->val)) {
				if (d->apply == apply_rw) {
					*v = ch->val;
					return rw_modifier(c, ch->val, colon + 1);
				}
				return val_err(c, -EINVAL, "bad value, allowed %s",
					       allowed);
			}
	if (d->unsupported) {
		const char *const *u;

		for (u = d->unsupported; *u; u++)
			if (!strcmp(*u, c->val))
				return val_err(c, -EOPNOTSUPP,
					       "a value blkstack bench does not support%s%s%s, allowed %s",
					       d->unsupported_why ? " (" : "",
					       d->unsupported_why ? d->unsupported_why : "",
					       d->unsupported_why ? ")" : "", allowed);
	}
	return val_err(c, -EINVAL, "bad value, allowed %s", allowed);
}

/* "not a size (...), allowed 512..16M": what a value that fails to parse gets. */
static int not_err(struct opt_ctx *c)
{
	char form[160], allowed[200];

	/* "-1": a number, just not one of these */
	if (c->val[0] == '-' && c->val[1] >= '0' && c->val[1] <= '9') {
		fmt_range(c->d, allowed, sizeof(allowed));
		return val_err(c, -EINVAL, "negative, allowed %s", allowed);
	}
	fmt_allowed(c->d, allowed, sizeof(allowed));
	return val_err(c, -EINVAL, "not %s, %s",
		       fmt_form(c->d, form, sizeof(form)), allowed);
}

/*
 * A number past 2^64-1 once its suffix (@sfx as written, @unit its
 * multiplier; "" for the default @unit) is applied.
 */
static int overflow_err(struct opt_ctx *c, uint64_t unit, const char *sfx)
{
	const struct opt_def *d = c->d;
	char buf[80];

	if (d->max != UINT64_MAX) {
		fmt_range(d, buf, sizeof(buf));
		return val_err(c, -EINVAL, "out of range, allowed %s", buf);
	}
	if (!*sfx && d->type == OPT_TIME) {
		fmt_time(buf, sizeof(buf), unit);	/* "1s" */
		sfx = buf + 1;
	}
	return val_err(c, -EINVAL,
		       "overflows 64 bits, the maximum is %" PRIu64 "%s",
		       UINT64_MAX / unit, sfx);
}

/* Parse c->val into a number and check it; strings are handled by caller. */
/*
 * fio's "v,v" and "v,v,v" (read, write, trim) with every value the same:
 * what one v sets in fio, so @c's value becomes that one.
 */
static bool same_values(struct opt_ctx *c)
{
	const char *p = c->val, *comma = strchr(p, ',');
	size_t n = (size_t)(comma - p);
	unsigned int parts = 1;

	if (!n || n >= sizeof(c->one))
		return false;
	for (p = comma; *p == ','; p += n + 1, parts++)
		if (strncmp(p + 1, c->val, n) || (p[n + 1] && p[n + 1] != ','))
			return false;
	if (*p || parts > 3)
		return false;
	memcpy(c->one, c->val, n);
	c->one[n] = '\0';
	c->val = c->one;
	return true;
}

static int parse_number(struct opt_ctx *c, uint64_t *v);

/*
 * bs=R,W[,T] (fio's per-direction block sizes): each direction's size
 * in bsd_fixed (an empty part: the default 4k, as fio's); *v, the plain
 * bs, is the read size.
 */
static int per_ddir_bs(struct opt_ctx *c, uint64_t *v)
{
	char buf[sizeof(c->one)], *part[3] = { NULL, NULL, NULL };
	const char *saved = c->val;
	uint32_t got[3];
	unsigned int n, d;
	int rc = 0;

	if (split_ddir(c, buf, part, &n))
		return -EINVAL;
	for (d = 0; d < 3 && !rc; d++) {
		const char *s = part[d < n ? d : n - 1];
		uint64_t x = 4096;

		if (*s) {
			c->val = s;
			c->whole = saved;
			c->part = d;
			rc = parse_number(c, &x);
		}
		got[d] = (uint32_t)x;
	}
	c->val = saved;
	c->whole = NULL;
	if (rc)
		return rc;
	memcpy(c->j->bsd_fixed, got, sizeof(got));
	c->j->bs_ddir = true;
	*v = got[0];
	return 0;
}

static int parse_number(struct opt_ctx *c, uint64_t *v)
{
	const struct opt_def *d = c->d;
	const char *sfx;
	uint64_t unit;
	char range[80];
	int rc;

	switch (d->type) {
	case OPT_BOOL:
		if (strcmp(c->val, "0") && strcmp(c->val, "1"))
			return val_err(c, -EINVAL, "bad boolean, allowed 0|1");
		*v = c->val[0] == '1';
		return 0;
	case OPT_CHOICE:
		return parse_choice(c, v);
	case OPT_SIZE:
		if (strchr(c->val, '%'))
			return val_err(c, -EOPNOTSUPP,
				       "a percentage is a fio form blkstack bench takes for size, offset and io_size only");
		if (c->j && d->off == offsetof(struct bench_job_opts, bs) &&
		    d->where == OPT_JOB)
			memset(c->j->bsd_fixed, 0, sizeof(c->j->bsd_fixed));
		if (strchr(c->val, ',') && !same_values(c)) {
			if (c->j && d->off == offsetof(struct bench_job_opts, bs) &&
			    d->where == OPT_JOB)
				return per_ddir_bs(c, v);
			return val_err(c, -EOPNOTSUPP,
				       "separate read,write[,trim] values are a fio feature that blkstack bench does not support (the same value for each is taken)");
		}
		/* An int has the syntax of a size. */
		__attribute__((fallthrough));
	case OPT_UINT:
		rc = parse_size(c->val, v, &unit, &sfx,
				c->j ? c->j->kb_base : 1024);
		if (rc == -ERANGE)
			return overflow_err(c, unit, sfx);
		if (rc)
			return not_err(c);
		break;
	case OPT_TIME:
		rc = parse_time(c->val, d->unit_ns, v, &unit, &sfx);
		if (rc == -ERANGE)
			return overflow_err(c, unit, sfx);
		if (rc)
			return not_err(c);
		break;
	case OPT_STR:
		abort();
	}
	if (d->bits) {
		/* a bit mask: the bits it has, named */
		const struct opt_choice *b;
		uint64_t mask = 0;
		char names[400];

		for (b = d->bits; b->name; b++)
			mask |= (uint64_t)b->val;
		if (*v & ~mask) {
			fmt_range(d, range, sizeof(range));
			fmt_bits(d, names, sizeof(names));
			if (*v > d->max)
				return val_err(c, -EINVAL,
					       "out of range, allowed %s, the bits %s",
					       range, names);
			return val_err(c, -EINVAL,
				       "bits 0x%" PRIx64 " are not implemented, allowed %s, the bits %s",
				       *v & ~mask, range, names);
		}
	}
	if (*v < d->min || *v > d->max) {
		fmt_range(d, range, sizeof(range));
		return val_err(c, -EINVAL, "out of range, allowed %s", range);
	}
	if ((d->flags & OPT_F_ALIGN512) && (*v % 512))
		return val_err(c, -EINVAL, "not a multiple of 512");
	if ((d->flags & OPT_F_POW2) && (*v & (*v - 1)))
		return val_err(c, -EINVAL, "not a power of 2");
	if (d->type == OPT_TIME) {
		char unit_name[16];

		if (*v % d->store_ns) {
			fmt_time(unit_name, sizeof(unit_name), d->store_ns);
			fmt_range(d, range, sizeof(range));
			return val_err(c, -EINVAL,
				       "not a whole number of %s, allowed %s",
				       unit_name + 1, range);
		}
		*v /= d->store_ns;
	}
	return 0;
}

/*
 * size=, offset=, io_size=: bytes, or fio's "N%" (size: 1..100 of the
 * device, offset: 0..100 of it, io_size: 1..100 of size), kept as a
 * share that job_setup() applies once the device's size is known.  The
 * form set last wins.
 */
static int set_size_or_pct(struct opt_ctx *c)
{
	uint32_t *pct = !strcmp(c->d->name, "size") ? &c->j->size_pct :
			!strcmp(c->d->name, "offset") ? &c->j->offset_pct :
			&c->j->io_size_pct;
	uint64_t lo = pct == &c->j->offset_pct ? 0 : 1;
	uint64_t hi = 100;	/* fio 3.33 refuses io_size past 100% too */
	size_t len = strlen(c->val);
	const char *end;
	uint64_t v;
	bool hex;
	int rc;

	if (len && c->val[len - 1] == '%') {
		rc = parse_digits(c->val, &v, &end, &hex);
		if (rc || hex || end != c->val + len - 1 || v < lo || v > hi)
			return val_err(c, -EINVAL,
				       "bad percentage, allowed %" PRIu64 "%%..%" PRIu64 "%%",
				       lo, hi);
		*pct = (uint32_t)v;
		store(c, 0);
		return 0;
	}
	rc = parse_number(c, &v);
	if (rc)
		return rc;
	*pct = 0;
	store(c, v);
	return 0;
}

/* "option 'bs' needs a value: a size (...), allowed 512..16M" */
static int needs_value_err(const struct opt_def *d, const char *name,
			   char *err, size_t errlen)
{
	char shown[SHOW_LEN], form_buf[160], allowed[200];
	const char *form = fmt_form(d, form_buf, sizeof(form_buf));

	fmt_allowed(d, allowed, sizeof(allowed));
	set_err(err, errlen, "option '%s' needs a value%s%s%s%s",
		show(shown, name), form ? ": " : "", form ? form : "",
		allowed[0] ? ", " : "", allowed);
	return -EINVAL;
}

/* Apply @val to the option @d found under the spelling @name. */
static int set_one(const struct opt_def *d, const char *name,
		   struct bench_opts *o, struct bench_job_opts *j,
		   const char *val, char *err, size_t errlen)
{
	struct opt_ctx c = {
		.d = d, .name = name, .val = val, .o = o, .j = j,
		.err = err, .errlen = errlen,
	};
	uint64_t v = 0;
	int rc;

	if ((d->where == OPT_JOB && !j) || (d->where == OPT_DEV && !o)) {
		char shown[SHOW_LEN];

		set_err(err, errlen, "option '%s' cannot be set here",
			show(shown, name));
		return -EINVAL;
	}
	if (!val && d->type == OPT_BOOL)
		c.val = "1";
	else if (!val && (d->flags & OPT_F_BARE))
		c.val = "";
	else if (!val || !*val)
		return needs_value_err(d, name, err, errlen);

	if (d->type == OPT_STR) {
		if (d->where == OPT_IGNORED)
			return d->apply ? d->apply(&c, 0) : 0;
		if (d->apply)
			return d->apply(&c, 0);
		if (strlen(c.val) >= d->len)
			return val_err(&c, -EINVAL,
				       "too long, at most %zu characters",
				       d->len - 1);
		/* A job name goes to reports and terminals as it is. */
		if (d->flags & OPT_F_PRINTABLE) {
			const char *p;

			for (p = c.val; *p; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					return val_err(&c, -EINVAL,
						       "control characters are not allowed");
		}
		memcpy(field(&c), c.val, strlen(c.val) + 1);
		return 0;
	}

	if ((d->flags & OPT_F_PERCENT) && j)
		return set_size_or_pct(&c);
	if (d->flags & OPT_F_DDIR)
		return d->where == OPT_IGNORED ? 0 : set_ddir_list(&c);
	rc = parse_number(&c, &v);
	if (rc)
		return rc;
	if (d->where == OPT_IGNORED)
		return 0;
	if (d->apply)
		return d->apply(&c, v);
	if (d->flags & OPT_F_CHOICE_STR) {
		snprintf(field(&c), d->len, "%s", c.val);
		return 0;
	}
	store(&c, v);
	return 0;
}

static const struct opt_def *opt_find(const char *name)
{
	size_t i, k;

	opts_ready();
	for (i = 0; i < nr_opts; i++) {
		if (!strcmp(opts[i].name, name))
			return &opts[i];
		for (k = 0; opts[i].alias[k]; k++)
			if (!strcmp(opts[i].alias[k], name))
				return &opts[i];
	}
	return NULL;
}

/* Equal when '-' and '_' are taken as the same character. */
static bool same_but_dashes(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a == '-' ? '_' : *a, y = *b == '-' ? '_' : *b;

		if (x != y)
			return false;
	}
	return !*a && !*b;
}

/* fio only takes its own spelling; point at it instead of guessing. */
static const char *spelling_hint(const char *name)
{
	size_t i, k;

	for (i = 0; i < nr_opts; i++) {
		if (same_but_dashes(opts[i].name, name))
			return opts[i].name;
		for (k = 0; opts[i].alias[k]; k++)
			if (same_but_dashes(opts[i].alias[k], name))
				return opts[i].alias[k];
	}
	for (i = 0; i < ARRAY_SIZE(cli_opts); i++)
		if (same_but_dashes(cli_opts[i].name, name))
			return cli_opts[i].name;
	return NULL;
}

static const struct cli_opt *find_cli_opt(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cli_opts); i++)
		if (!strcmp(cli_opts[i].name, name))
			return &cli_opts[i];
	return NULL;
}

static bool is_cli_opt(const char *name)
{
	return find_cli_opt(name) != NULL;
}

/*
 * Edit distance with transpositions (optimal string alignment): "iodpeth"
 * is one edit from "iodepth".  Names are short; past 63 characters the
 * name is no typo of an option anyway.
 */
static unsigned int edit_distance(const char *a, const char *b)
{
	unsigned int d[64][64], i, j;
	size_t la = strlen(a), lb = strlen(b);

	if (la >= 64 || lb >= 64)
		return 64;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			unsigned int cost = a[i - 1] != b[j - 1], v;

			v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

static void nearest_try(const char *name, const char *cand,
			const char **best, unsigned int *best_d)
{
	unsigned int d;

	if (!cand)
		return;
	d = edit_distance(name, cand);
	if (d < *best_d) {
		*best_d = d;
		*best = cand;
	}
}

/*
 * The known name nearest to @name: blkstack's options, every fio option
 * and the command-line switches; NULL when none is close enough to be
 * the one meant (1 edit for names of up to 4 characters, 2 up to 8, 3
 * beyond).
 */
static const char *nearest_name(const char *name)
{
	size_t len = strlen(name), i, n, k;
	unsigned int best_d = 64, max = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	const struct fio_opt *f = fio_opts(&n);
	const char *best = NULL;

	for (i = 0; i < nr_opts; i++) {
		nearest_try(name, opts[i].name, &best, &best_d);
		for (k = 0; opts[i].alias[k]; k++)
			nearest_try(name, opts[i].alias[k], &best, &best_d);
	}
	for (i = 0; i < n; i++) {
		nearest_try(name, f[i].name, &best, &best_d);
		nearest_try(name, f[i].alias, &best, &best_d);
	}
	for (i = 0; i < ARRAY_SIZE(cli_opts); i++)
		nearest_try(name, cli_opts[i].name, &best, &best_d);
	return best_d <= max ? best : NULL;
}

/*
 * filename= and direct= in a job (or [global], or the command line's
 * global options): the job's own, and the device's as before (the matrix
 * and the stacks on uring read o->dev.p).  fio's "a:b" list of files is
 * the job's; the device gets the one name unescaped ("a\:b" is "a:b"),
 * and a list as it is, which bench_pick_devs() refuses for a run that
 * opens one file.
 */
static int set_file_opt(const struct opt_def *d, const char *name,
			struct bench_opts *o, struct bench_job_opts *j,
			const char *val, char *err, size_t errlen)
{
	char shown[SHOW_LEN], one[4096];
	int rc, n;

	if (!strcmp(d->name, "filename") && val && *val) {
		n = bench_name_list(val, 0, one, sizeof(one));
		if (n == -ENAMETOOLONG || strlen(val) >= sizeof(j->filename)) {
			set_err(err, errlen, "filename=%s: longer than %zu bytes",
				show(shown, val), sizeof(j->filename) - 1);
			return -EINVAL;
		}
		if (n == 0) {
			set_err(err, errlen,
				"filename=%s: names no file (fio's list is a:b, '\\:' a colon in a name)",
				show(shown, val));
			return -EINVAL;
		}
		if (n > BENCH_MAX_FILES) {
			set_err(err, errlen,
				"filename=%s: %d files, more than the %d a job thread may have",
				show(shown, val), n, BENCH_MAX_FILES);
			return -EINVAL;
		}
		rc = set_one(d, name, o, j, n == 1 ? one : val, err, errlen);
		if (!rc)
			snprintf(j->filename, sizeof(j->filename), "%s", val);
		return rc;
	}
	rc = set_one(d, name, o, j, val, err, errlen);
	if (rc)
		return rc;
	j->direct = o->dev.p.direct;
	return 0;
}

int bench_name_list(const char *list, unsigned int idx, char *buf, size_t len)
{
	const char *p = list, *end;
	size_t k = 0;
	int n = 0;
	bool over = false;

	if (buf && len)
		buf[0] = '\0';
	/* fio takes the blanks off both ends of the value */
	while (*p == ' ' || *p == '\t')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	for (; p <= end; p++) {
		char c = p < end ? *p : '\0';

		if (c == '\\' && p + 1 < end && p[1] == ':') {
			c = ':';
			p++;
		} else if (c == ':' || !c) {
			/* the end of a name; an empty one is skipped */
			if (k)
				n++;
			k = 0;
			continue;
		}
		if ((unsigned int)n == idx && buf) {
			if (k + 1 < len) {
				buf[k] = c;
				buf[k + 1] = '\0';
			} else {
				over = true;
			}
		}
		k++;
	}
	return over ? -ENAMETOOLONG : n;
}

unsigned int bench_job_nr_files(const struct bench_job_opts *j)
{
	int n;

	if (!j->filename[0])
		return j->nrfiles ? j->nrfiles : 1;
	n = bench_name_list(j->filename, 0, NULL, 0);
	return n > 0 ? (unsigned int)n : 1;
}

bool bench_job_has_file(const struct bench_job_opts *j)
{
	const struct fio_engine *e;

	if (j->filename[0] || j->directory[0] || j->nrfiles > 1 ||
	    j->filesize || strcmp(j->filename_format, "$jobname.$jobnum.$filenum"))
		return true;
	e = j->ioengine[0] ? fio_engine_find(j->ioengine) : NULL;
	return e && e->dev && !strcmp(e->dev, "uring");
}

int bench_job_file(const struct bench_job_opts *j, unsigned int jobnum,
		   unsigned int filenum, char *buf, size_t len)
{
	char name[4096], dir[1024];
	const char *f = j->filename_format;
	unsigned int diridx = jobnum;
	size_t n = 0;
	int nd;

	if (j->filename[0]) {
		if (bench_name_list(j->filename, filenum, name, sizeof(name)) < 0)
			return -ENAMETOOLONG;
		diridx = 0;	/* fio adds filename='s files as job 0's */
	} else {
		/* fio's tokens; anything else is copied as it is */
		name[0] = '\0';
		while (*f && n < sizeof(name) - 1) {
			if (!strncmp(f, "$jobname", 8)) {
				n += snprintf(name + n, sizeof(name) - n, "%s", j->name);
				f += 8;
			} else if (!strncmp(f, "$jobnum", 7)) {
				n += snprintf(name + n, sizeof(name) - n, "%u", jobnum);
				f += 7;
			} else if (!strncmp(f, "$filenum", 8)) {
				n += snprintf(name + n, sizeof(name) - n, "%u", filenum);
				f += 8;
			} else {
				name[n++] = *f++;
				name[n] = '\0';
			}
		}
		if (n >= sizeof(name) - 1)
			return -ENAMETOOLONG;
	}
	/*
	 * fio puts every file under directory=, an absolute name too
	 * (directory=/d filename=/x is /d/x); a list of directories takes
	 * the threads' generated files in turn
	 */
	nd = j->directory[0] ? bench_name_list(j->directory, 0, NULL, 0) : 0;
	if (nd > 0) {
		if (bench_name_list(j->directory, diridx % (unsigned int)nd,
				    dir, sizeof(dir)) < 0)
			return -ENAMETOOLONG;
		if ((size_t)snprintf(buf, len, "%s%s%s", dir,
				     dir[strlen(dir) - 1] == '/' ? "" : "/",
				     name[0] == '/' ? name + 1 : name) >= len)
			return -ENAMETOOLONG;
	} else if ((size_t)snprintf(buf, len, "%s", name) >= len) {
		return -ENAMETOOLONG;
	}
	return 0;
}

bool bench_option_known(const char *name)
{
	return opt_find(name) != NULL;
}

int bench_set_option(struct bench_opts *o, struct bench_job_opts *job,
		     const char *name, const char *value, char *err,
		     size_t errlen)
{
	const struct opt_def *d;
	const struct fio_opt *f;
	char shown[SHOW_LEN], why[256];
	const char *hint;

	if (!name)
		name = "";
	d = opt_find(name);
	/*
	 * filename= and direct= in a job are fio's job options first: the
	 * notes of bench_pick_devs() say when the device has no use for
	 * them; they are not marked as the device's options given.
	 */
	if (d && job && o && d->reg && (!strcmp(d->name, "filename") ||
					 !strcmp(d->name, "direct")))
		return set_file_opt(d, name, o, job, value, err, errlen);
	if (d) {
		int rc = set_one(d, name, o, job, value, err, errlen);

		/* what the user gave, and where, for check_dev_opts() */
		if (!rc && d->reg && o) {
			char *at = o->given_at[d - opts];
			size_t n = strlen(at);
			bool first = !blk_dev_is_given(&o->dev.p, d->reg);

			blk_dev_set_given(&o->dev.p, d->reg);
			snprintf(at + n, sizeof(o->given_at[0]) - n, "%s%s",
				 first ? "" : "\n", o->parse_at ? o->parse_at : "");
		}
		return rc;
	}

	if (is_cli_opt(name)) {
		set_err(err, errlen,
			"option '%s' is only valid on the command line (--%s)",
			name, name);
		return -ENOENT;
	}
	f = fio_opt_find(name);
	if (f) {
		set_err(err, errlen,
			"option '%s' is a fio option that blkstack bench does not support: %s",
			name, fio_opt_why(f, why, sizeof(why)));
		return -EOPNOTSUPP;
	}
	hint = spelling_hint(name);
	if (!hint)
		hint = nearest_name(name);
	if (hint)
		set_err(err, errlen, "unknown option '%s' (did you mean '%s'?)",
			show(shown, name), hint);
	else
		set_err(err, errlen, "unknown option '%s'", show(shown, name));
	return -ENOENT;
}

void bench_job_defaults(struct bench_job_opts *j)
{
	char err[256];
	size_t i;

	opts_ready();
	memset(j, 0, sizeof(*j));
	for (i = 0; i < nr_opts; i++) {
		if (opts[i].where != OPT_JOB || !opts[i].def)
			continue;
		if (set_one(&opts[i], opts[i].name, NULL, j, opts[i].def, err,
			    sizeof(err)))
			abort();	/* the table's own default is invalid */
	}
	/* The default rw= is not a user's choice; see bench_opts.matrix. */
	j->has_rw = false;
	j->verify_given = false;
	j->buf_given = 0;
	j->batch_complete_set = false;	/* only a user's value */
	j->think_blocks_set = false;	/* only a user's value */
}

void bench_opts_init(struct bench_opts *o)
{
	char err[256];
	size_t i;

	opts_ready();
	/*
	 * Everything but jobs[]: a job is written whole when it is added
	 * (from [global] or the defaults), and jobs[] is 64 jobs of 6 KiB;
	 * zeroing it cost 2.6% of the instructions of a 16384-I/O null run
	 * (callgrind counts each byte of memset's rep stosb).
	 */
	memset(o, 0, offsetof(struct bench_opts, jobs));
	memset((char *)o + offsetof(struct bench_opts, nr_jobs), 0,
	       sizeof(*o) - offsetof(struct bench_opts, nr_jobs));
	for (i = 0; i < nr_opts; i++) {
		if (opts[i].where != OPT_DEV || !opts[i].def)
			continue;
		if (set_one(&opts[i], opts[i].name, o, NULL, opts[i].def, err,
			    sizeof(err)))
			abort();
	}
	/* nr_devs stays 0: the caller picks null,ram for the matrix. */
	o->output_format = OUT_NORMAL;
	o->out_mask = BENCH_OUT_NORMAL;
	o->terse_version = 3;
}

/*
 * verify_interval=, verify_offset=, verify_backlog= against the method
 * and bs, as fio takes them: an interval past bs, or one that does not
 * divide it, is bs (with a note for the latter); the header must fit.
 */
/* dedupe_mode=working_set: fio's fixup_options() checks */
static int check_dedupe(const struct bench_job_opts *j, char *err,
			size_t errlen)
{
	char name[SHOW_LEN];

	if (j->dedupe_mode != BENCH_DEDUPE_WORKING_SET)
		return 0;
	if (!j->size && !j->size_pct) {
		set_err(err, errlen,
			"job '%s': dedupe_mode=working_set needs size= (the working set is a share of it), as in fio",
			show(name, j->name));
		return -EINVAL;
	}
	if (bench_job_nr_files(j) != 1) {
		set_err(err, errlen,
			"job '%s': dedupe_mode=working_set with %u files: one file per job only, as in fio",
			show(name, j->name), bench_job_nr_files(j));
		return -EINVAL;
	}
	if (j->dedupe_ws_pct + j->dedupe_pct > 100) {
		set_err(err, errlen,
			"job '%s': dedupe_percentage=%u with dedupe_working_set_percentage=%u: the two add up to more than 100 (the working set is unique buffers), as fio refuses",
			show(name, j->name), j->dedupe_pct, j->dedupe_ws_pct);
		return -EINVAL;
	}
	return 0;
}

static int check_verify(struct bench_opts *o, struct bench_job_opts *j,
			char *err, size_t errlen)
{
	uint32_t hl = bench_verify_hdr_len(j->verify), iv = j->verify_interval;
	char name[SHOW_LEN], note[256];

	/* the threads would write from one buffer: each other's data */
	if (j->numjobs > 1 && j->mem_file[0] &&
	    (j->mem_type == BENCH_MEM_MMAPSHARED ||
	     j->mem_type == BENCH_MEM_MMAPHUGE)) {
		char file[SHOW_LEN];

		set_err(err, errlen,
			"job '%s': mem=%s:%s with verify= and numjobs=%" PRIu32 ": the threads would share one buffer (a thread's writes carry another's data, verify then fails); allowed numjobs=1, mem=mmap:FILE or no file",
			show(name, j->name),
			j->mem_type == BENCH_MEM_MMAPSHARED ? "mmapshared" : "mmaphuge",
			show(file, j->mem_file), j->numjobs);
		return -EINVAL;
	}

	if (iv && iv < j->bs && j->bs % iv) {
		snprintf(note, sizeof(note),
			 "job '%s': verify_interval=%" PRIu32 " does not divide bs=%" PRIu32 ": one header per block, as fio takes it",
			 show(name, j->name), iv, j->bs);
		bench_err_add(o->notes, sizeof(o->notes), note);
	}
	if (!iv || iv > j->bs || j->bs % iv)
		iv = j->bs;
	j->verify_interval = iv;
	if (hl && iv < hl) {
		set_err(err, errlen,
			"job '%s': verify_interval=%" PRIu32 " is smaller than the %" PRIu32 "-byte header of verify=%s",
			show(name, j->name), iv, hl, bench_verify_name(j->verify));
		return -EINVAL;
	}
	if (!hl)
		j->verify_offset = 0;	/* no header to move */
	if (j->verify_offset && iv < 2 * hl) {
		set_err(err, errlen,
			"job '%s': verify_offset=%" PRIu32 ": no offset fits: the %" PRIu32 "-byte header of verify=%s needs an interval of at least %" PRIu32 " bytes to move in, this one is %" PRIu32,
			show(name, j->name), j->verify_offset, hl,
			bench_verify_name(j->verify), 2 * hl, iv);
		return -EINVAL;
	}
	if (j->verify_offset &&
	    (j->verify_offset < hl || j->verify_offset > iv - hl)) {
		set_err(err, errlen,
			"job '%s': verify_offset=%" PRIu32 ": allowed %" PRIu32 "..%" PRIu32 " (the %" PRIu32 "-byte header of verify=%s moves there, inside the %" PRIu32 "-byte interval and past its own place)",
			show(name, j->name), j->verify_offset, hl, iv - hl, hl,
			bench_verify_name(j->verify), iv);
		return -EINVAL;
	}
	/*
	 * fio's sha512 value is its 128-byte input buffer (verify.h): with
	 * fewer data bytes part of it is whatever the buffer held, which
	 * fio then fails on its own blocks
	 */
	if (j->verify == VERIFY_SHA512 && iv < hl + 128) {
		set_err(err, errlen,
			"job '%s': verify=sha512 with %" PRIu32 "-byte intervals: fio's sha512 takes 128 data bytes after its %" PRIu32 "-byte header, so intervals of at least %" PRIu32 " bytes (fio fails its own blocks below that); allowed verify_interval=%" PRIu32 " or more, or another method",
			show(name, j->name), iv, hl, hl + 128, hl + 128);
		return -EINVAL;
	}
	if (j->verify_backlog && j->verify_backlog_batch > j->verify_backlog) {
		set_err(err, errlen,
			"job '%s': verify_backlog_batch=%" PRIu64 " past verify_backlog=%" PRIu64 ": fio then checks some blocks twice, which blkstack bench does not do",
			show(name, j->name), j->verify_backlog_batch,
			j->verify_backlog);
		return -EINVAL;
	}
	if ((j->verify_state_save || j->verify_state_load) &&
	    (j->verify_backlog || (j->trim_percentage && j->trim_backlog) ||
	     bench_job_nr_files(j) > 1)) {
		set_err(err, errlen,
			"job '%s': verify_state_save/verify_state_load with %s: not supported (the state is the map of blocks written and not checked or trimmed yet, of one file)",
			show(name, j->name),
			j->verify_backlog ? "verify_backlog=" :
			bench_job_nr_files(j) > 1 ? "several files" :
						   "trim_percentage=");
		return -EINVAL;
	}
	if (j->verify_state_load && !j->verify_only) {
		set_err(err, errlen,
			"job '%s': verify_state_load=1 needs verify_only=1: blkstack loads the state to check what an earlier run wrote, and nothing else",
			show(name, j->name));
		return -EINVAL;
	}
	if (j->trim_percentage && j->trim_backlog && j->verify_backlog) {
		set_err(err, errlen,
			"job '%s': trim_percentage= with verify_backlog=: not supported (a block could be read back while its trim is in flight); use one of them",
			show(name, j->name));
		return -EINVAL;
	}
	if (j->trim_percentage && j->trim_backlog &&
	    bench_job_nr_files(j) > 1) {
		set_err(err, errlen,
			"job '%s': trim_percentage= with several files is not supported (one file per thread)",
			show(name, j->name));
		return -EINVAL;
	}
	if (j->trim_percentage && j->trim_backlog &&
	    j->zonemode == BENCH_ZONE_ZBD) {
		set_err(err, errlen,
			"job '%s': trim_percentage= with zonemode=zbd is not supported (a trim inside a zone is not a zone reset)",
			show(name, j->name));
		return -EINVAL;
	}
	if (j->verify_backlog && bench_job_nr_files(j) > 1) {
		set_err(err, errlen,
			"job '%s': verify_backlog= with several files is not supported (one file per thread)",
			show(name, j->name));
		return -EINVAL;
	}
	return 0;
}

/*
 * zonemode=zbd: fio's emulated zones (engine.c, job_prep_zbd()) on plain
 * jobs: one file per thread, one block size, reads and writes.  What
 * fio checks when it sets the zones up (zonesize= given, zonecapacity=
 * within it, the device at least a zone) is checked when the run opens
 * its device, as fio does, so that --parse-only takes what fio's takes.
 */
static int check_zbd(struct bench_job_opts *j, char *err, size_t errlen)
{
	char name[SHOW_LEN];
	const char *with = NULL;

	if (j->bssplit_nr || j->bs_max)
		with = "bssplit= or bsrange=";
	else if (j->rw_mod)
		with = "rw=<pattern>:N";
	else if (j->ba)
		with = "blockalign=";
	else if (j->rand_dist != DIST_RANDOM)
		with = "random_distribution=";
	else if (j->pct_seq[0] || j->pct_seq[1] || j->pct_seq[2])
		with = "percentage_random=";
	else if (j->nrfiles > 1 || strchr(j->filename, ':'))
		with = "several files";
	else if (j->rw == RW_TRIM || j->rw == RW_RANDTRIM)
		with = "rw=trim (fio's zone resets by trim)";
	else if (j->zoneskip)
		with = "zoneskip=";
	if (with) {
		set_err(err, errlen,
			"job '%s': zonemode=zbd with %s: not supported (emulated zones work on plain jobs: reads and writes, one file and one block size)",
			show(name, j->name), with);
		return -EINVAL;
	}
	return 0;
}

/* Checks that need more than one option, once everything is parsed. */
/*
 * zonemode=, fio's rules (init.c fixup_options()): none with zonesize= is
 * an error, strided needs zonesize=, not given it is strided when
 * zonesize= is; zonerange= defaults to zonesize=.  Strided works here on
 * plain jobs: one file per thread, one block size, no verify=,
 * blockalign=, rw=<pattern>:N or random_distribution=.
 */
static int check_zonemode(struct bench_job_opts *j, char *err, size_t errlen)
{
	char name[SHOW_LEN];
	const char *with = NULL;

	if (j->zonemode == BENCH_ZONE_NONE && j->zonesize) {
		set_err(err, errlen,
			"job '%s': zonemode=none and zonesize= are not compatible (as fio says)",
			show(name, j->name));
		return -EINVAL;
	}
	if (j->zonemode == BENCH_ZONE_STRIDED && !j->zonesize) {
		set_err(err, errlen,
			"job '%s': zonemode=strided needs zonesize= (as fio says)",
			show(name, j->name));
		return -EINVAL;
	}
	if (j->zonemode == BENCH_ZONE_UNSET)
		j->zonemode = j->zonesize ? BENCH_ZONE_STRIDED : BENCH_ZONE_NONE;
	if (j->zonemode == BENCH_ZONE_ZBD)
		return check_zbd(j, err, errlen);
	if (j->zonemode != BENCH_ZONE_STRIDED)
		return 0;
	if (!j->zonerange)
		j->zonerange = j->zonesize;
	if (j->verify != VERIFY_NONE)
		with = "verify=";
	else if (j->bssplit_nr || j->bs_max)
		with = "bssplit= or bsrange=";
	else if (j->rw_mod)
		with = "rw=<pattern>:N";
	else if (j->ba)
		with = "blockalign=";
	else if (j->rand_dist != DIST_RANDOM)
		with = "random_distribution=";
	else if (j->pct_seq[0] || j->pct_seq[1] || j->pct_seq[2])
		with = "percentage_random=";
	else if (j->nrfiles > 1 || strchr(j->filename, ':'))
		with = "several files";
	if (with) {
		set_err(err, errlen,
			"job '%s': zonemode=strided with %s: not supported (strided zones work on plain jobs, one file and one block size)",
			show(name, j->name), with);
		return -EINVAL;
	}
	if (j->zonerange < j->bs) {
		set_err(err, errlen,
			"job '%s': zonerange=%" PRIu64 " is smaller than bs=%" PRIu32,
			show(name, j->name), j->zonerange, j->bs);
		return -EINVAL;
	}
	return 0;
}

/*
 * read_iolog=: the job's region, sizes, direction and file from the log,
 * as fio takes them (its read_iolog() adds the log's files and sizes).
 */
static int replay_job(struct bench_opts *o, struct bench_job_opts *j,
		      char *err, size_t errlen)
{
	struct bench_iolog log;
	char name[SHOW_LEN], note[512];
	const char *file;
	uint64_t bs;

	if (bench_iolog_read(j->read_iolog, j->replay_scale, j->replay_align,
			     j->replay_time_scale, j->replay_redirect, &log,
			     err, errlen))
		return -EINVAL;
	free(log.ents);
	if (j->write_iolog[0]) {
		snprintf(note, sizeof(note), "job '%s': read_iolog overrides write_iolog, as in fio",
			 show(name, j->name));
		bench_err_add(o->notes, sizeof(o->notes), note);
		j->write_iolog[0] = '\0';
	}
	file = j->replay_redirect[0] ? j->replay_redirect : log.file;
	if (file[0] && strcmp(file, j->filename)) {
		if (j->filename[0]) {
			snprintf(note, sizeof(note), "job '%s': read_iolog: the I/O goes to the log's file %.200s, not filename=, as in fio",
				 show(name, j->name), file);
			bench_err_add(o->notes, sizeof(o->notes), note);
		}
		snprintf(j->filename, sizeof(j->filename), "%s", file);
	}
	bs = (log.max_len + 511) / 512 * 512;
	if (bs > j->bs)
		j->bs = (uint32_t)bs;
	j->size = (log.end + j->bs - 1) / j->bs * j->bs;
	j->offset = 0;
	j->offset_increment = 0;
	j->io_size = 0;
	j->time_based = false;
	j->rw = log.writes ? (log.reads ? RW_RW : RW_WRITE) :
		log.reads ? RW_READ : RW_TRIM;
	j->replay_bytes = log.bytes;
	j->has_rw = true;	/* a workload: no matrix on the command line */
	return 0;
}

/*
 * file_append=1: fio's file_offset = the file's size; here offset= grows
 * by the size the job's file has now (a missing file: 0).
 */
static int append_job(struct bench_job_opts *j, char *err, size_t errlen)
{
	char name[SHOW_LEN], path[4096];
	struct stat st;

	if (bench_job_nr_files(j) != 1) {
		set_err(err, errlen, "job '%s': file_append=1 with %u files: blkstack appends to one file per job",
			show(name, j->name), bench_job_nr_files(j));
		return -EINVAL;
	}
	if (bench_job_file(j, 0, 0, path, sizeof(path)) || stat(path, &st) ||
	    !S_ISREG(st.st_mode))
		return 0;
	j->offset += (uint64_t)st.st_size;
	return 0;
}

/*
 * fio's per-direction block sizes (bs_ddir): each direction to a split
 * (a fixed size: one entry of 100) or a range, from its own value or the
 * plain one (bssplit= over bsrange= over bs=, as fio's).  Directions all
 * alike fold back to the plain fields (the plain paths run); else
 * bs_min..bs_max is the smallest and largest of any direction (blocks of
 * the smallest, buffers of the largest) and bs the smallest.
 */
static void resolve_bs_ddir(struct bench_job_opts *j)
{
	uint32_t lo = UINT32_MAX, hi = 0;
	unsigned int d, k;
	bool same = true;

	for (d = 0; d < 3; d++) {
		if (j->bsd_nr[d]) {
			j->bsd_min[d] = j->bsd_max[d] = 0;
		} else if (j->bsd_max[d]) {
			/* a range of its own */
		} else if (j->bssplit_nr) {
			j->bsd_nr[d] = j->bssplit_nr;
			memcpy(j->bsd_bs[d], j->bssplit_bs, sizeof(j->bsd_bs[d]));
			memcpy(j->bsd_pct[d], j->bssplit_pct, sizeof(j->bsd_pct[d]));
		} else if (j->bs_max) {
			j->bsd_min[d] = j->bs_min;
			j->bsd_max[d] = j->bs_max;
		} else {
			j->bsd_nr[d] = 1;
			j->bsd_bs[d][0] = j->bsd_fixed[d] ? j->bsd_fixed[d] : j->bs;
			j->bsd_pct[d][0] = 100;
		}
		if (j->bsd_nr[d] == 1 && j->bsd_pct[d][0] == 100) {
			/* one size: a range of it */
			j->bsd_min[d] = j->bsd_max[d] = j->bsd_bs[d][0];
			j->bsd_nr[d] = 0;
		}
		for (k = 0; k < j->bsd_nr[d]; k++) {
			lo = j->bsd_bs[d][k] < lo ? j->bsd_bs[d][k] : lo;
			hi = j->bsd_bs[d][k] > hi ? j->bsd_bs[d][k] : hi;
		}
		if (!j->bsd_nr[d]) {
			lo = j->bsd_min[d] < lo ? j->bsd_min[d] : lo;
			hi = j->bsd_max[d] > hi ? j->bsd_max[d] : hi;
		}
		if (d && (j->bsd_nr[d] != j->bsd_nr[0] ||
			  j->bsd_min[d] != j->bsd_min[0] ||
			  j->bsd_max[d] != j->bsd_max[0] ||
			  memcmp(j->bsd_bs[d], j->bsd_bs[0],
				 sizeof(j->bsd_bs[0][0]) * j->bsd_nr[0]) ||
			  memcmp(j->bsd_pct[d], j->bsd_pct[0],
				 sizeof(j->bsd_pct[0][0]) * j->bsd_nr[0])))
			same = false;
	}
	j->bs_ddir = !same;
	if (same && j->bsd_nr[0]) {
		j->bssplit_nr = j->bsd_nr[0];
		memcpy(j->bssplit_bs, j->bsd_bs[0], sizeof(j->bssplit_bs));
		memcpy(j->bssplit_pct, j->bsd_pct[0], sizeof(j->bssplit_pct));
		j->bs_min = j->bs_max = 0;
	} else if (same && j->bsd_min[0] == j->bsd_max[0]) {
		j->bs = j->bsd_min[0];
		j->bssplit_nr = 0;
		j->bs_min = j->bs_max = 0;
	} else if (same) {
		j->bssplit_nr = 0;
		j->bs_min = j->bsd_min[0];
		j->bs_max = j->bsd_max[0];
	} else {
		j->bssplit_nr = 0;
		j->bs = j->bs_min = lo;
		j->bs_max = hi;
	}
}

static int finish_jobs(struct bench_opts *o, char *err, size_t errlen)
{
	uint32_t lbs = o->dev.p.logical_block_size;
	char name[SHOW_LEN];
	unsigned int i, ss_group = 0;

	if (lbs && o->dev.p.dev_size % lbs) {
		set_err(err, errlen,
			"dev_size=%" PRIu64 ": not a multiple of logical_block_size=%" PRIu32,
			o->dev.p.dev_size, lbs);
		return -EINVAL;
	}
	/*
	 * lower= against the drivers that will run (the default ones when
	 * --dev= is not given: null, ram), before any of them does: it is
	 * for the stacking ones, and each of those must be able to use it.
	 */
	if (o->dev.p.lower[0]) {
		static const char *const dflt[] = { "null", "ram" };
		const struct blk_driver *first = NULL, *drv;
		unsigned int n = o->dev.nr_devs ? o->dev.nr_devs : 2;
		const char *lower;
		bool stacks = false;

		for (i = 0; i < n; i++) {
			drv = blk_driver_find(o->dev.nr_devs ? o->dev.devs[i] : dflt[i]);
			if (!drv)
				continue;
			if (!first)
				first = drv;
			if (!drv->lowers)
				continue;
			stacks = true;
			if (blk_dev_lower(drv, &o->dev.p, &lower, err, errlen))
				return -EINVAL;
		}
		if (!stacks && first) {
			/* the registry's message: which drivers stack */
			blk_dev_lower(first, &o->dev.p, &lower, err, errlen);
			return -EINVAL;
		}
	}
	for (i = 0; i < o->nr_jobs; i++) {
		struct bench_job_opts *j = &o->jobs[i];

		if (j->bs_ddir)
			resolve_bs_ddir(j);
		if (lbs && j->bs % lbs) {
			set_err(err, errlen,
				"job '%s': bs=%" PRIu32 " is not a multiple of logical_block_size=%" PRIu32,
				show(name, j->name), j->bs, lbs);
			return -EINVAL;
		}
		/* fio: a synchronous engine has one I/O in flight */
		if (j->engine_sync && j->iodepth > 1) {
			char note[256];

			snprintf(note, sizeof(note),
				 "job '%s': ioengine=%s is synchronous: iodepth=%u runs as iodepth=1, as in fio",
				 show(name, j->name), j->ioengine, j->iodepth);
			bench_err_add(o->notes, sizeof(o->notes), note);
			j->iodepth = 1;
		}
		if (j->read_iolog[0] && replay_job(o, j, err, errlen))
			return -EINVAL;
		if (j->file_append && append_job(j, err, errlen))
			return -EINVAL;
		/* fio: filename= names the files; nrfiles= then counts nothing */
		if (j->filename[0] && j->nrfiles > 1 &&
		    j->nrfiles != bench_job_nr_files(j)) {
			char note[256];

			snprintf(note, sizeof(note),
				 "job '%s': nrfiles=%u is not the number of files filename= names (%u): they are the job's files, as in fio",
				 show(name, j->name), j->nrfiles,
				 bench_job_nr_files(j));
			bench_err_add(o->notes, sizeof(o->notes), note);
		}
		if (j->wait_for[0]) {
			unsigned int k, found = 0, later = 0;

			for (k = 0; k < o->nr_jobs; k++) {
				if (strcmp(o->jobs[k].name, j->wait_for))
					continue;
				if (k < i)
					found++;
				else
					later++;
			}
			if (found != 1) {
				char w[SHOW_LEN];

				set_err(err, errlen,
					"job '%s': wait_for=%s: %s (as in fio, the waitee is an earlier job with a name of its own)",
					show(name, j->name), show(w, j->wait_for),
					found > 1 ? "more than one earlier job has that name" :
					later ? "that job comes later" : "no job has that name");
				return -EINVAL;
			}
		}
		if (j->verify_pattern[0] && j->verify == VERIFY_NONE) {
			if (j->verify_given) {
				set_err(err, errlen,
					"job '%s': verify_pattern= with verify=none: fio then fills the writes with the pattern and checks nothing, which blkstack bench does not do (verify=meta or verify=pattern check it)",
					show(name, j->name));
				return -EINVAL;
			}
			/* fio: verify_pattern= alone checks headers and pattern */
			j->verify = VERIFY_META;
		}
		if (j->verify == VERIFY_PATTERN && !j->verify_pattern[0]) {
			set_err(err, errlen,
				"job '%s': verify=pattern needs verify_pattern=",
				show(name, j->name));
			return -EINVAL;
		}
		if (j->verify != VERIFY_NONE && check_verify(o, j, err, errlen))
			return -EINVAL;
		if (j->dedupe_pct && check_dedupe(j, err, errlen))
			return -EINVAL;
		if (j->cmdprio_bssplit_on && (j->cmdprio_pct[0] || j->cmdprio_pct[1])) {
			set_err(err, errlen,
				"job '%s': cmdprio_percentage and cmdprio_bssplit options are mutually exclusive (as in fio)",
				show(name, j->name));
			return -EINVAL;
		}
		if (j->bs_ddir && j->verify != VERIFY_NONE) {
			set_err(err, errlen,
				"job '%s': verify= with separate read,write[,trim] block sizes (bs=, bsrange= or bssplit= with commas) is not supported: blkstack's verify checks blocks of one size (fio verifies by the write sizes)",
				show(name, j->name));
			return -EINVAL;
		}
		if ((j->bssplit_nr || j->bs_max) && j->verify != VERIFY_NONE) {
			set_err(err, errlen,
				"job '%s': verify= with bssplit= or bsrange= is not supported: verify checks blocks of one size",
				show(name, j->name));
			return -EINVAL;
		}
		if ((j->lat_log_on || j->bw_log_on || j->iops_log_on ||
		     j->hist_log_on) && (j->gtod_reduce ||
					 (j->disable_lat && j->disable_clat &&
					  j->disable_slat))) {
			set_err(err, errlen,
				"job '%s': %s: the logs need the I/Os' timestamps, which %s turns off (allowed: %s)",
				show(name, j->name),
				j->lat_log_on ? "write_lat_log" :
				j->bw_log_on ? "write_bw_log" :
				j->iops_log_on ? "write_iops_log" : "write_hist_log",
				j->gtod_reduce ? "gtod_reduce=1" :
				"disable_lat=1 with disable_clat=1 and disable_slat=1",
				j->gtod_reduce ? "gtod_reduce=0" :
				"one of them =0");
			return -EINVAL;
		}
		if (check_zonemode(j, err, errlen))
			return -EINVAL;
		if (j->random_generator == 1 && j->norandommap && !j->ba &&
		    j->rand_dist == DIST_RANDOM) {
			/* fio's lfsr: every block once a pass, map or not */
			char note[256];

			j->norandommap = false;
			snprintf(note, sizeof(note),
				 "job '%s': random_generator=lfsr: offsets without repeats in a pass, as lfsr's: the random map stays on (norandommap ignored)",
				 show(name, j->name));
			bench_err_add(o->notes, sizeof(o->notes), note);
		}
		if ((j->rate[0] | j->rate[1] | j->rate[2]) &&
		    (j->rate_iops[0] | j->rate_iops[1] | j->rate_iops[2])) {
			set_err(err, errlen,
				"job '%s': rate= and rate_iops= are mutually exclusive (as in fio)",
				show(name, j->name));
			return -EINVAL;
		}
		if (j->ba) {
			uint32_t lo = j->bs;
			unsigned int k;

			if (j->bssplit_nr)
				for (k = 0, lo = j->bssplit_bs[0]; k < j->bssplit_nr; k++)
					lo = j->bssplit_bs[k] < lo ? j->bssplit_bs[k] : lo;
			else if (j->bs_max)
				lo = j->bs_min;
			/* fio: a sequential job's alignment is its smallest bs */
			if (!bench_rw_is_random(j->rw) || j->ba == lo) {
				j->ba = 0;
			} else if (j->rw_mod || j->verify != VERIFY_NONE) {
				set_err(err, errlen,
					"job '%s': blockalign=%" PRIu32 " with %s: not supported (blockalign= works on plain random jobs)",
					show(name, j->name), j->ba,
					j->rw_mod ? "rw=<pattern>:N" : "verify=");
				return -EINVAL;
			} else if (!j->norandommap) {
				char note[256];

				j->norandommap = true;
				snprintf(note, sizeof(note),
					 "job '%s': blockalign=%" PRIu32 " turns the random map off (norandommap), as fio does",
					 show(name, j->name), j->ba);
				bench_err_add(o->notes, sizeof(o->notes), note);
			}
		}
		if (!i || j->stonewall || j->new_group)
			ss_group = i;
		if (o->jobs[ss_group].group_reporting &&
		    (j->ss_dur_ns != o->jobs[ss_group].ss_dur_ns ||
		     j->ss_ramp_ns != o->jobs[ss_group].ss_ramp_ns ||
		     (j->ss_dur_ns && strcmp(j->ss_spec, o->jobs[ss_group].ss_spec)))) {
			set_err(err, errlen,
				"job '%s': ss=, ss_dur= and ss_ramp= differ from job '%s''s in its group_reporting group: fio rejects that (they must be consistent within reporting groups)",
				show(name, j->name), o->jobs[ss_group].name);
			return -EINVAL;
		}
		/* fio's verify_per_group_options(): one lat_percentiles a group */
		if (!j->stats_off && j->lat_percentiles !=
				o->jobs[ss_group].lat_percentiles) {
			set_err(err, errlen,
				"job '%s': lat_percentiles=%d differs from job '%s''s in its group: fio rejects that (it must be the same within a group)",
				show(name, j->name), j->lat_percentiles,
				o->jobs[ss_group].name);
			return -EINVAL;
		}
		if (j->ss_dur_ns && j->ss_slope && j->ss_dur_ns < 2 * NSEC_PER_SEC) {
			set_err(err, errlen,
				"job '%s': ss_dur=1s with ss=%s: a slope needs 2 samples at least (ss_dur=2s or more)",
				show(name, j->name), j->ss_spec);
			return -EINVAL;
		}
		if ((j->rate_min[0] | j->rate_min[1] | j->rate_min[2]) &&
		    (j->rate_iops_min[0] | j->rate_iops_min[1] | j->rate_iops_min[2])) {
			set_err(err, errlen,
				"job '%s': rate_min= and rate_iops_min= are mutually exclusive (as in fio)",
				show(name, j->name));
			return -EINVAL;
		}
		for (unsigned int k = 0; k < 3; k++) {
			static const char *const dn[3] = { "read", "write", "trim" };
			bool bytes = j->rate[k] != 0;
			uint64_t cap = bytes ? j->rate[k] : j->rate_iops[k];
			uint64_t min = bytes ? j->rate_min[k] : j->rate_iops_min[k];

			if (cap && cap < min) {
				set_err(err, errlen,
					"job '%s': %s=%" PRIu64 " is above %s=%" PRIu64 " for %ss: the minimum exceeds the cap (as fio says)",
					show(name, j->name),
					bytes ? "rate_min" : "rate_iops_min", min,
					bytes ? "rate" : "rate_iops", cap, dn[k]);
				return -EINVAL;
			}
		}
		if (j->rw_mod && !bench_rw_is_random(j->rw) &&
		    (uint64_t)(j->rw_mod < 0 ? -j->rw_mod : j->rw_mod) % j->bs) {
			set_err(err, errlen,
				"job '%s': rw=%s:%" PRId64 ": the bytes skipped must be a multiple of bs=%" PRIu32,
				show(name, j->name), bench_rw_name(j->rw),
				j->rw_mod, j->bs);
			return -EINVAL;
		}
		/* fio caps the batch at the depth rather than failing. */
		if (j->iodepth_batch > j->iodepth)
			j->iodepth_batch = j->iodepth;
		/* fio's fixup: _max below _min (or not given) is _min */
		if (j->iodepth_batch_complete_min > j->iodepth_batch_complete_max)
			j->iodepth_batch_complete_max = j->iodepth_batch_complete_min;
		if (j->verify_only && j->verify == VERIFY_NONE) {
			set_err(err, errlen,
				"job '%s': verify_only=1 needs verify= (crc32c, md5, ...)",
				show(name, j->name));
			return -EINVAL;
		}
		if (j->verify != VERIFY_NONE && !j->verify_only &&
		    (j->rw == RW_TRIM || j->rw == RW_RANDTRIM)) {
			set_err(err, errlen,
				"job '%s': verify=%s with rw=%s: a trim job writes no data to verify",
				show(name, j->name), bench_verify_name(j->verify),
				bench_rw_name(j->rw));
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * The registry's check of the driver options given (blk_dev_check_opt())
 * against the drivers of o->dev.devs: each one no stack of the run takes
 * is a problem in @err, once for each place it was given, after
 * "file:line: " for a job file's.  The message has the value the run
 * would use, the last one given.
 * Return: the number of problems.
 */
static unsigned int check_dev_opts(struct bench_opts *o, char *err,
				   size_t errlen)
{
	const char *names[BENCH_MAX_DEVS];
	char msg[1024], line[BENCH_AT_LEN + 1024];
	unsigned int i, nerr = 0;

	for (i = 0; i < o->dev.nr_devs; i++)
		names[i] = o->dev.devs[i];
	for (i = 0; i < nr_opts; i++) {
		const struct blk_opt_desc *r = opts[i].reg;
		const char *at = o->given_at[i], *prev = NULL, *nl;
		int len, prev_len = 0;

		if (!r || !blk_dev_is_given(&o->dev.p, r) ||
		    !blk_dev_check_opt(names, o->dev.nr_devs, &o->dev.p, r, msg,
				       sizeof(msg)))
			continue;
		for (;; at = nl + 1) {
			nl = strchr(at, '\n');
			len = nl ? (int)(nl - at) : (int)strlen(at);
			/* the same place twice (the command line's) once */
			if (!prev || len != prev_len || strncmp(at, prev, (size_t)len)) {
				snprintf(line, sizeof(line), "%.*s%s%s", len, at,
					 len ? ": " : "", msg);
				bench_err_add(err, errlen, line);
				nerr++;
			}
			prev = at;
			prev_len = len;
			if (!nl)
				break;
		}
	}
	return nerr;
}

static int parse_cli_opt(struct bench_opts *o, const char *name,
			 const char *val, char *err, size_t errlen)
{
	const struct cli_opt *c = find_cli_opt(name);
	char shown[SHOW_LEN];

	if (!c->metavar) {
		/* --help=1, --matrix=0: a switch, not a 0|1 option */
		if (val) {
			set_err(err, errlen, "option '%s' takes no value", name);
			return -EINVAL;
		}
		if (!strcmp(name, "help"))
			o->help = true;
		else if (!strcmp(name, "parse-only"))
			o->parse_only = true;
		else if (!strcmp(name, "minimal")) {
			o->output_format = OUT_TERSE;
			o->out_mask = BENCH_OUT_TERSE;
		}
		else if (!strcmp(name, "fio-options"))
			o->fio_table = true;
		else
			o->matrix = true;
		return 0;
	}
	if (!strcmp(name, "section")) {
		if (!val || !*val || strlen(val) >= BENCH_NAME_MAX) {
			set_err(err, errlen, "--section: a section name of 1 to %d characters",
				BENCH_NAME_MAX - 1);
			return -EINVAL;
		}
		if (o->nr_sections >= BENCH_MAX_SECTIONS) {
			set_err(err, errlen, "--section: at most %d", BENCH_MAX_SECTIONS);
			return -EINVAL;
		}
		snprintf(o->sections[o->nr_sections++], BENCH_NAME_MAX, "%s", val);
		return 0;
	}
	if (!strcmp(name, "count_instructions")) {
		if (!val || !strcmp(val, "perf") || !strcmp(val, "1")) {
			o->count_insn = BENCH_INSN_PERF;
		} else if (!strcmp(val, "callgrind")) {
			o->count_insn = BENCH_INSN_CALLGRIND;
		} else if (!strcmp(val, "0")) {
			o->count_insn = BENCH_INSN_OFF;
		} else {
			set_err(err, errlen,
				"count_instructions=%s: bad value, allowed perf|callgrind (alone: perf; 0: off)",
				show(shown, val));
			return -EINVAL;
		}
		return 0;
	}
	if (!val || !*val) {
		/* "normal|json" lists the values, "FILE" names the kind */
		set_err(err, errlen, "option '%s' needs a value%s%s%s", name,
			strchr(c->metavar, '|') ? ", allowed " : " (",
			c->metavar, strchr(c->metavar, '|') ? "" : ")");
		return -EINVAL;
	}
	if (!strcmp(name, "output-format")) {
		/* fio's comma list: each report, in fio's order */
		unsigned int mask = 0;
		bool plus = false;
		const char *p = val;

		for (;;) {
			size_t len = strcspn(p, ",");

			if (len == 6 && !strncmp(p, "normal", 6)) {
				mask |= BENCH_OUT_NORMAL;
			} else if (len == 4 && !strncmp(p, "json", 4)) {
				mask |= BENCH_OUT_JSON;
			} else if (len == 5 && !strncmp(p, "json+", 5)) {
				mask |= BENCH_OUT_JSON;
				plus = true;
			} else if (len == 5 && !strncmp(p, "terse", 5)) {
				mask |= BENCH_OUT_TERSE;
			} else {
				set_err(err, errlen,
					"output-format=%s: bad value, allowed normal|json|json+|terse, or a comma list of them",
					show(shown, val));
				return -EINVAL;
			}
			if (!p[len])
				break;
			p += len + 1;
		}
		o->out_mask = mask;
		o->output_format = (mask & BENCH_OUT_JSON) ?
			(plus ? OUT_JSON_PLUS : OUT_JSON) :
			(mask & BENCH_OUT_TERSE) ? OUT_TERSE : OUT_NORMAL;
		return 0;
	}
	if (!strcmp(name, "status-interval")) {
		uint64_t ns;

		if (bench_parse_time(val, NSEC_PER_SEC, &ns) ||
		    (ns && ns < NSEC_PER_MSEC) || ns > 24 * 3600 * NSEC_PER_SEC) {
			set_err(err, errlen,
				"status-interval=%s: not a time, allowed 0 or 1ms..24h (s without a unit)",
				show(shown, val));
			return -EINVAL;
		}
		o->status_interval_ns = ns;
		return 0;
	}
	if (!strcmp(name, "terse-version")) {
		if (!strcmp(val, "3") || !strcmp(val, "4") || !strcmp(val, "5")) {
			o->terse_version = (unsigned int)(val[0] - '0');
		} else if (!strcmp(val, "2")) {
			set_err(err, errlen,
				"terse-version=2: fio's old layout (no version field, no disk stats) is not supported, allowed 3|4|5");
			return -EINVAL;
		} else {
			set_err(err, errlen,
				"terse-version=%s: bad value, allowed 3|4|5",
				show(shown, val));
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(name, "plot")) {
		if (strlen(val) >= sizeof(o->plot_dir)) {
			set_err(err, errlen,
				"plot=%s: too long, at most %zu characters",
				show(shown, val), sizeof(o->plot_dir) - 1);
			return -EINVAL;
		}
		snprintf(o->plot_dir, sizeof(o->plot_dir), "%s", val);
		return 0;
	}
	if (!strcmp(name, "lock_stats")) {
		if (strcmp(val, "0") && strcmp(val, "1")) {
			set_err(err, errlen, "lock_stats=%s: bad value, allowed 0|1",
				show(shown, val));
			return -EINVAL;
		}
		o->lock_stats = val[0] == '1';
		return 0;
	}
	if (!strcmp(name, "output")) {
		if (strlen(val) >= sizeof(o->output)) {
			set_err(err, errlen,
				"output=%s: too long, at most %zu characters",
				show(shown, val), sizeof(o->output) - 1);
			return -EINVAL;
		}
		snprintf(o->output, sizeof(o->output), "%s", val);
		return 0;
	}
	/* eta */
	if (!strcmp(val, "auto")) {
		o->quiet_progress = false;
		o->eta_always = false;
	} else if (!strcmp(val, "always")) {
		o->quiet_progress = false;
		o->eta_always = true;
	} else if (!strcmp(val, "never")) {
		o->quiet_progress = true;
		o->eta_always = false;
	} else {
		set_err(err, errlen, "eta=%s: bad value, allowed auto|always|never",
			show(shown, val));
		return -EINVAL;
	}
	return 0;
}

/*
 * fio's command line: options before the first --name= are global; each
 * --name= starts a job that begins as a copy of the global options
 * (--name=global makes the following options global again, for later jobs
 * only).  Options are taken in order wherever the job files sit among them,
 * as getopt does for fio, and the job files are read afterwards with the
 * global options as their [global].
 */
void bench_err_add(char *err, size_t errlen, const char *msg)
{
	static const char more[] = "(more problems not shown)";
	size_t used, need;

	if (!err || !errlen)
		return;
	used = strnlen(err, errlen);
	if (used == errlen)
		return;
	/* already cut: the note is the last line */
	if (used >= sizeof(more) - 1 &&
	    !strcmp(err + used - (sizeof(more) - 1), more))
		return;
	need = (used ? 1 : 0) + strlen(msg) + 1;
	/* keep room for the note after this line */
	if (used + need + sizeof(more) + 1 > errlen) {
		if (used + (used ? 1 : 0) + sizeof(more) <= errlen)
			snprintf(err + used, errlen - used, "%s%s",
				 used ? "\n" : "", more);
		return;
	}
	snprintf(err + used, errlen - used, "%s%s", used ? "\n" : "", msg);
}

/*
 * fio's command line: options before the first --name= are global; each
 * --name= starts a job that begins as a copy of the global options
 * (--name=global makes the following options global again, for later jobs
 * only).  Options are taken in order wherever the job files sit among them,
 * as getopt does for fio, and the job files are read afterwards with the
 * global options as their [global].  Every problem is listed, the
 * command line's and then each job file's, before the parse fails.
 */
int bench_parse_args(struct bench_opts *o, int argc, char **argv, char *err,
		     size_t errlen)
{
	struct bench_job_opts global, *cur = &global;
	char name[128], shown[SHOW_LEN], msg[1024];
	int i, nr_files = 0, rc, nerr = 0;
	bool dashdash = false;

	if (err && errlen)
		err[0] = '\0';
	bench_job_defaults(&global);
	snprintf(global.name, sizeof(global.name), "global");

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val, *eq;
		size_t len;

		if (!dashdash && !strcmp(a, "--")) {
			dashdash = true;
			continue;
		}
		/* "-" is a job file read from stdin, as in fio. */
		if (dashdash || a[0] != '-' || !a[1]) {
			nr_files++;
			continue;
		}
		msg[0] = '\0';
		if (a[1] != '-') {
			set_err(msg, sizeof(msg),
				"unknown argument '%s': options are --name=value",
				show(shown, a));
			goto bad;
		}
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		val = eq ? eq + 1 : NULL;
		if (!len || len >= sizeof(name)) {
			set_err(msg, sizeof(msg), "unknown option '%s'",
				show(shown, argv[i]));
			goto bad;
		}
		memcpy(name, a, len);
		name[len] = '\0';

		if (is_cli_opt(name)) {
			rc = parse_cli_opt(o, name, val, msg, sizeof(msg));
			if (rc)
				goto bad;
			/* Usage is all that will run; the rest may be wrong. */
			if (o->help && !nerr)
				return 0;
			continue;
		}
		if (in_list(fio_cli_unsupported, ARRAY_SIZE(fio_cli_unsupported),
			    name)) {
			set_err(msg, sizeof(msg),
				"option '--%s' is a fio command-line option that blkstack bench does not support",
				name);
			goto bad;
		}
		if (!strcmp(name, "name")) {
			if (!val || !*val) {
				needs_value_err(opt_find("name"), name, msg,
						sizeof(msg));
				goto bad;
			}
			if (!strcmp(val, "global")) {
				cur = &global;
				continue;
			}
			if (o->nr_jobs >= BENCH_MAX_JOBS) {
				set_err(msg, sizeof(msg),
					"more than %d jobs (blkstack bench's limit)",
					BENCH_MAX_JOBS);
				goto bad;
			}
			cur = &o->jobs[o->nr_jobs++];
			*cur = global;
		}
		rc = bench_set_option(o, cur, name, val, msg, sizeof(msg));
		if (!rc)
			continue;
bad:
		bench_err_add(err, errlen, msg);
		nerr++;
	}

	if (nr_files) {
		dashdash = false;
		for (i = 1; i < argc; i++) {
			const char *a = argv[i];
			char *fmsg;

			if (!dashdash && !strcmp(a, "--")) {
				dashdash = true;
				continue;
			}
			if (!dashdash && a[0] == '-' && a[1])
				continue;
			bool sep = false;

			/* a file's own list of problems, appended to ours */
			fmsg = err ? err + strnlen(err, errlen) : NULL;
			if (fmsg && fmsg != err && (size_t)(fmsg - err) + 1 < errlen) {
				*fmsg++ = '\n';
				*fmsg = '\0';
				sep = true;
			}
			rc = bench_parse_jobfile(o, a, &global, fmsg,
						 fmsg ? errlen - (size_t)(fmsg - err) : 0);
			if (rc)
				nerr++;
			else if (sep)
				fmsg[-1] = '\0';	/* no problem: no separator */
		}
	} else if (!o->nr_jobs) {
		/* No --name=: the options given make one job. */
		o->jobs[0] = global;
		snprintf(o->jobs[0].name, sizeof(o->jobs[0].name), "bench");
		o->nr_jobs = 1;
	}
	/*
	 * With --dev= given, a driver option no stack of the run takes is
	 * one more problem of the list (bench_pick_devs() checks again
	 * once the drivers are chosen, for runs without --dev=).
	 */
	if (o->dev.nr_devs && err)
		nerr += (int)check_dev_opts(o, err, errlen);
	if (nerr)
		return -EINVAL;

	if (finish_jobs(o, err, errlen))
		return -EINVAL;

	if (!nr_files && !o->matrix) {
		unsigned int k;

		o->matrix = true;
		for (k = 0; k < o->nr_jobs; k++)
			if (o->jobs[k].has_rw)
				o->matrix = false;
	}
	return 0;
}

static const char *const rw_names[] = {
	[RW_READ] = "read",
	[RW_WRITE] = "write",
	[RW_RANDREAD] = "randread",
	[RW_RANDWRITE] = "randwrite",
	[RW_RW] = "rw",
	[RW_RANDRW] = "randrw",
	[RW_TRIM] = "trim",
	[RW_RANDTRIM] = "randtrim",
};

const char *bench_rw_name(enum bench_rw rw)
{
	if ((unsigned int)rw >= ARRAY_SIZE(rw_names))
		return "unknown";
	return rw_names[rw];
}

bool bench_rw_is_random(enum bench_rw rw)
{
	return rw == RW_RANDREAD || rw == RW_RANDWRITE || rw == RW_RANDRW ||
	       rw == RW_RANDTRIM;
}

bool bench_rw_reads(enum bench_rw rw)
{
	return rw == RW_READ || rw == RW_RANDREAD || rw == RW_RW ||
	       rw == RW_RANDRW;
}

bool bench_rw_writes(enum bench_rw rw)
{
	return rw == RW_WRITE || rw == RW_RANDWRITE || rw == RW_RW ||
	       rw == RW_RANDRW;
}

/* Start a usage line: "  --name=META", help text in a column. */
static void usage_left(FILE *f, const char *left, const char *help)
{
	if (strlen(left) < USAGE_COL)
		fprintf(f, "%-*s%s\n", USAGE_COL, left, help);
	else
		fprintf(f, "%s\n%-*s%s\n", left, USAGE_COL, "", help);
}

/*
 * One option: name and help on the first line, then what the value may be:
 * unit, range, default and the other names fio knows it by.
 */
static void usage_opt(FILE *f, const struct opt_def *d)
{
	static const char *const metavars[] = {
		[OPT_UINT] = "INT", [OPT_SIZE] = "SIZE", [OPT_TIME] = "TIME",
		[OPT_BOOL] = "0|1", [OPT_STR] = "STR", [OPT_CHOICE] = "",
	};
	char meta[160], left[200], buf[80], more[400];
	size_t n = 0;
	int k;

	if (d->metavar)
		snprintf(meta, sizeof(meta), "%s", d->metavar);
	else if (d->type == OPT_CHOICE)
		fmt_choices(d, meta, sizeof(meta));
	else
		snprintf(meta, sizeof(meta), "%s", metavars[d->type]);
	snprintf(left, sizeof(left), d->type == OPT_BOOL ? "  --%s[=%s]" :
		 "  --%s=%s", d->name, meta);
	usage_left(f, left, d->help);

	more[0] = '\0';
	if (d->type == OPT_SIZE)
		n += snprintf(more + n, sizeof(more) - n, "; bytes");
	if (d->type == OPT_TIME) {
		fmt_time(buf, sizeof(buf), d->unit_ns);
		n += snprintf(more + n, sizeof(more) - n,
			      "; a bare number is in %s", buf + 1);
	}
	if ((d->type == OPT_UINT || d->type == OPT_SIZE ||
	     d->type == OPT_TIME) && !(d->min == 0 && d->max == UINT64_MAX)) {
		fmt_range(d, buf, sizeof(buf));
		n += snprintf(more + n, sizeof(more) - n, "; %s", buf);
	}
	if (d->def)
		n += snprintf(more + n, sizeof(more) - n, "; default %s",
			      d->def);
	for (k = 0; d->alias[k] && n < sizeof(more); k++)
		n += snprintf(more + n, sizeof(more) - n, "%s%s",
			      k ? ", " : "; also ", d->alias[k]);
	if (more[0])
		fprintf(f, "%-*s%s\n", USAGE_COL, "", more + 2);
}

/* @title: ends with its own colon where options follow */
static void usage_group(FILE *f, int g, const char *title)
{
	size_t i;

	fprintf(f, "\n%s\n", title);
	for (i = 0; i < nr_opts; i++)
		if (opts[i].group == g)
			usage_opt(f, &opts[i]);
}

void bench_usage(FILE *f)
{
	const struct blk_driver *drv;
	unsigned int nd, k;
	size_t i;

	fprintf(f,
		"usage: blkstack bench [--option=value ...] [jobfile ...]\n"
		"\n"
		"Options take fio's names and value syntax, on the command line as\n"
		"--name=value (a bare --option sets a 0|1 option) and in fio job files\n"
		"as name=value.  Sizes: bytes, k/m/g/t/p suffixes are powers of 1024\n"
		"(fio's kb_base=1024: ki/mi/gi are powers of 1000), 0x for hex.\n"
		"Times: a number with ns, us, ms, s, m, h or d.\n"
		"Command-line job options before the first --name= apply to every job\n"
		"and act as [global] for job files.  Without rw= on the command line\n"
		"and without job files, the workload matrix runs.\n");
	opts_ready();
	usage_group(f, GRP_JOB, "Job options:");
	usage_group(f, GRP_DEV,
		    "Device options, every driver (whole run; job files may set them too):");
	drv = blk_drivers(&nd);
	for (k = 0; k < nd; k++) {
		char title[256];

		snprintf(title, sizeof(title), "dev=%s: %s%s", drv[k].name,
			 drv[k].summary, drv[k].nr_opts ? ":" : " (no options of its own)");
		usage_group(f, GRP_DRIVER + (int)k, title);
	}
	fprintf(f, "\nOutput options (command line only):\n");
	for (i = 0; i < ARRAY_SIZE(cli_opts); i++) {
		char left[64];

		snprintf(left, sizeof(left), cli_opts[i].metavar ? "  --%s=%s" :
			 "  --%s", cli_opts[i].name, cli_opts[i].metavar);
		usage_left(f, left, cli_opts[i].help);
	}
	bench_ab_usage(f);
}

/* Whether dev=@dev keeps its data in a file: uring, or a stack on uring. */
static bool dev_on_file(const struct bench_opts *o, const char *dev)
{
	const struct blk_driver *drv = blk_driver_find(dev);
	const char *lower;
	char unused[256];

	if (!strcmp(dev, "uring"))
		return true;
	return drv && drv->lowers &&
	       !blk_dev_lower(drv, &o->dev.p, &lower, unused, sizeof(unused)) &&
	       lower && !strcmp(lower, "uring");
}

/* Whether the user gave device option @name (bench_set_option()). */
static bool dev_opt_given(const struct bench_opts *o, const char *name)
{
	const struct opt_def *d = opt_find(name);

	return d && d->reg && blk_dev_is_given(&o->dev.p, d->reg);
}

/*
 * A job's files for a message: "a" or "a, b and 3 more" (bench_job_file()
 * of thread 0).
 */
static const char *job_files_shown(const struct bench_job_opts *j,
				   char *buf, size_t len)
{
	unsigned int nf = bench_job_nr_files(j), k;
	char file[4096], fshown[SHOW_LEN];
	size_t n = 0;

	buf[0] = '\0';
	for (k = 0; k < nf && k < 2 && n < len; k++) {
		if (bench_job_file(j, 0, k, file, sizeof(file)))
			snprintf(file, sizeof(file), "(a name too long)");
		n += (size_t)snprintf(buf + n, len - n, "%s%s", k ? ", " : "",
				      show(fshown, file));
	}
	if (nf > 2 && n < len)
		snprintf(buf + n, len - n, " and %u more", nf - 2);
	return buf;
}

/*
 * What each job's ioengine= asks of the devices of its files on
 * dev=uring, unless the user gave the option (then a note): fio's sync
 * engines make each I/O a system call of the job's thread, so inline
 * issue; posixaio is glibc's POSIX AIO, whose one helper thread per file
 * descriptor does the requests one after another (glibc aio_misc.c), so
 * the pool with one worker.
 */
static void engine_dev_opts(struct bench_opts *o, bool uring)
{
	char note[512], shown[SHOW_LEN];
	unsigned int i;

	for (i = 0; i < o->nr_jobs; i++) {
		struct bench_job_opts *j = &o->jobs[i];
		const struct fio_engine *e = j->ioengine[0] ?
			fio_engine_find(j->ioengine) : NULL;

		j->dev_inline = 0;
		j->dev_engine = 0;
		j->dev_pool_threads = 0;
		if (!e || !e->dev || strcmp(e->dev, "uring"))
			continue;
		if (e->sync) {
			if (!dev_opt_given(o, "uring_inline")) {
				j->dev_inline = 1 + BLK_URING_INLINE_ALWAYS;
				continue;
			}
			snprintf(note, sizeof(note),
				 "job '%s': ioengine=%s makes each I/O a system call of the job's thread (uring_inline=always); the uring_inline= given wins",
				 show(shown, j->name), j->ioengine);
		} else if (!strcmp(e->name, "posixaio")) {
			bool ge = dev_opt_given(o, "uring_engine");
			bool gp = dev_opt_given(o, "pool_threads");

			if (!ge)
				j->dev_engine = 1 + BLK_URING_ENGINE_POOL;
			if (!gp)
				j->dev_pool_threads = 1;
			if (!ge && !gp)
				continue;
			snprintf(note, sizeof(note),
				 "job '%s': ioengine=posixaio is glibc's helper thread per file, one request at a time (uring_engine=pool, pool_threads=1); the %s given wins",
				 show(shown, j->name),
				 ge && gp ? "uring_engine= and pool_threads=" :
				 ge ? "uring_engine=" : "pool_threads=");
		} else {
			continue;
		}
		if (uring)
			bench_err_add(o->notes, sizeof(o->notes), note);
	}
}

/*
 * The drivers that open the one file of o->dev.p (the matrix's uring, a
 * stack on uring): fio's list of files is a job's, for dev=uring.
 */
static int check_one_file(struct bench_opts *o, const char *dev, char *err,
			  size_t errlen)
{
	char shown[SHOW_LEN];

	if (bench_name_list(o->dev.p.filename, 0, NULL, 0) <= 1)
		return 0;
	set_err(err, errlen,
		"filename=%s: dev=%s%s opens one file; fio's list of files is a job's, on dev=uring",
		show(shown, o->dev.p.filename), dev,
		strcmp(dev, "uring") ? " on uring" : " in the matrix");
	return -EINVAL;
}

static int pick_devs(struct bench_opts *o, char *err, size_t errlen)
{
	const char *want = NULL, *want_job = NULL, *why = NULL;
	char note[1024], shown[SHOW_LEN], files[1024], fshown[SHOW_LEN];
	bool uring = false, file_used = false;
	unsigned int i, d;

	/* a file some device of the list opens is that device's: the others
	 * ignore it without a note (make run: --dev=null,ram,uring
	 * --filename=F noted twice that null and ram keep no file) */
	for (d = 0; d < o->dev.nr_devs; d++)
		file_used |= !strcmp(o->dev.devs[d], "uring") ||
			     dev_on_file(o, o->dev.devs[d]);
	if (o->dev.nr_devs) {
		for (d = 0; d < o->dev.nr_devs; d++) {
			const char *dev = o->dev.devs[d];

			uring |= !strcmp(dev, "uring");
			for (i = 0; i < o->nr_jobs; i++) {
				const struct bench_job_opts *j = &o->jobs[i];
				const struct fio_engine *e;

				if (!j->ioengine[0])
					continue;
				e = fio_engine_find(j->ioengine);
				if (e && e->dev && !strcmp(e->dev, dev))
					continue;
				snprintf(note, sizeof(note),
					 "--dev=%s overrides job '%s' ioengine=%s (dev=%s)",
					 dev, show(shown, j->name), j->ioengine,
					 e && e->dev ? e->dev : "?");
				bench_err_add(o->notes, sizeof(o->notes), note);
			}
			/* dev=uring: each job on its own files; the matrix on one */
			if (!strcmp(dev, "uring")) {
				if (o->matrix && check_one_file(o, dev, err, errlen))
					return -EINVAL;
				continue;
			}
			if (dev_on_file(o, dev)) {
				/* a stack on uring: one file, the device's */
				if (check_one_file(o, dev, err, errlen))
					return -EINVAL;
				for (i = 0; i < o->nr_jobs; i++) {
					const struct bench_job_opts *j = &o->jobs[i];
					char file[4096];

					if (!bench_job_has_file(j) ||
					    (bench_job_nr_files(j) == 1 &&
					     !bench_job_file(j, 0, 0, file, sizeof(file)) &&
					     !strcmp(file, o->dev.p.filename)))
						continue;
					snprintf(note, sizeof(note),
						 "--dev=%s runs every job on the one file %s: it overrides job '%s' file%s %s",
						 dev, show(fshown, o->dev.p.filename),
						 show(shown, j->name),
						 bench_job_nr_files(j) > 1 ? "s" : "",
						 job_files_shown(j, files, sizeof(files)));
					bench_err_add(o->notes, sizeof(o->notes), note);
				}
				continue;
			}
			/* the stacks that open no file (nvme on ram, too) */
			for (i = 0; i < o->nr_jobs; i++) {
				const struct bench_job_opts *j = &o->jobs[i];

				if (bench_job_has_file(j) && !file_used) {
					snprintf(note, sizeof(note),
						 "--dev=%s overrides job '%s' file%s %s: dev=%s keeps its data in memory or nowhere",
						 dev, show(shown, j->name),
						 bench_job_nr_files(j) > 1 ? "s" : "",
						 job_files_shown(j, files, sizeof(files)),
						 dev);
					bench_err_add(o->notes, sizeof(o->notes), note);
				}
				if (j->direct) {
					snprintf(note, sizeof(note),
						 "job '%s': direct=1 has no effect on dev=%s: there is no page cache to bypass",
						 show(shown, j->name), dev);
					bench_err_add(o->notes, sizeof(o->notes), note);
				}
			}
		}
		engine_dev_opts(o, uring);
		return 0;
	}
	for (i = 0; i < o->nr_jobs; i++) {
		const struct bench_job_opts *j = &o->jobs[i];
		const struct fio_engine *e = j->ioengine[0] ?
			fio_engine_find(j->ioengine) : NULL;
		const char *dev, *jwhy;

		if (e && e->dev) {
			dev = e->dev;
			jwhy = "ioengine=";
		} else if (bench_job_has_file(j)) {
			dev = "uring";
			jwhy = "its file";
		} else {
			dev = "null";
			jwhy = "no ioengine= and no file";
		}
		if (want && strcmp(want, dev)) {
			set_err(err, errlen,
				"job '%s' runs on dev=%s (%s%s) and job '%s' on dev=%s (%s): one run has one driver; choose it with --dev=",
				show(shown, j->name), dev, jwhy,
				!strcmp(jwhy, "ioengine=") ? j->ioengine : "",
				want_job, want, why);
			return -EINVAL;
		}
		want = dev;
		want_job = j->name;
		why = jwhy;
	}
	if (!want)
		want = "null";
	snprintf(o->dev.devs[0], sizeof(o->dev.devs[0]), "%s", want);
	o->dev.nr_devs = 1;
	for (i = 0; i < o->nr_jobs && !strcmp(want, "null"); i++) {
		if (!o->jobs[i].direct)
			continue;
		snprintf(note, sizeof(note),
			 "job '%s': direct=1 has no effect on dev=null: there is no page cache to bypass",
			 show(shown, o->jobs[i].name));
		bench_err_add(o->notes, sizeof(o->notes), note);
	}
	engine_dev_opts(o, !strcmp(want, "uring"));
	return 0;
}

int bench_pick_devs(struct bench_opts *o, char *err, size_t errlen)
{
	int rc;

	if (!o->dev.nr_devs && o->matrix) {
		snprintf(o->dev.devs[0], sizeof(o->dev.devs[0]), "null");
		snprintf(o->dev.devs[1], sizeof(o->dev.devs[1]), "ram");
		o->dev.nr_devs = 2;
	} else {
		rc = pick_devs(o, err, errlen);
		if (rc)
			return rc;
	}
	/* every driver option given is for a device of the run */
	err[0] = '\0';
	return check_dev_opts(o, err, errlen) ? -EINVAL : 0;
}

/* A table cell: '|' would end the cell early. */
static void md_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", f);
		else
			fputc(*s, f);
	}
}

void bench_fio_table(FILE *f)
{
	const struct fio_engine *e;
	const struct fio_opt *t;
	size_t n, i;
	char why[256];

	fprintf(f, "| fio option | also | engine | blkstack | to what, or why not |\n");
	fprintf(f, "|---|---|---|---|---|\n");
	t = fio_opts(&n);
	for (i = 0; i < n; i++) {
		fprintf(f, "| %s | %s | %s | %s | ", t[i].name,
			t[i].alias ? t[i].alias : "",
			t[i].engines ? t[i].engines : "",
			fio_status_name(t[i].status));
		if (t[i].status != FIO_SUPPORTED)
			md_cell(f, fio_opt_why(&t[i], why, sizeof(why)));
		fprintf(f, " |\n");
	}
	fprintf(f, "\n| fio ioengine= | blkstack | to what, or why not |\n");
	fprintf(f, "|---|---|---|\n");
	e = fio_engines(&n);
	for (i = 0; i < n; i++) {
		fprintf(f, "| %s | %s | ", e[i].name,
			fio_status_name(e[i].status));
		md_cell(f, e[i].what);
		fprintf(f, " |\n");
	}
}
