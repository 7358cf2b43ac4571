// SPDX-License-Identifier: MIT
/*
 * The device registry (include/blkstack/dev.h): the driver table, every
 * device option's descriptor, and the one function consumers build devices
 * with.  A new driver is one more entry in drivers[] below, with its
 * options and its create function.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "blkstack/blk.h"
#include "blkstack/blk_mq.h"
#include "blkstack/dev.h"
#include "blkstack/null.h"
#include "blkstack/nvme.h"
#include "blkstack/nvme_ctrl.h"
#include "blkstack/ram.h"
#include "blkstack/scsi.h"
#include "blkstack/scsi_iscsi.h"
#include "blkstack/scsi_tgt.h"
#include "blkstack/uring.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

#define P(f) .off = offsetof(struct blk_dev_params, f), \
	.len = sizeof(((struct blk_dev_params *)0)->f)

static const struct blk_opt_choice elevator_choices[] = {
	{ "none", 0 },
	{ "mq-deadline", 1 },
	{ NULL, 0 },
};

static const char *const elevator_unsupported[] = {
	"kyber", "bfq", "deadline", "cfq", "noop", NULL,
};

static const struct blk_opt_choice completion_wait_choices[] = {
	{ "adaptive", 0 },	/* BLK_WAIT_ADAPTIVE */
	{ "spin", 1 },		/* BLK_WAIT_SPIN */
	{ "sleep", 2 },		/* BLK_WAIT_SLEEP */
	{ NULL, 0 },
};

static const struct blk_opt_choice uring_taskrun_choices[] = {
	{ "coop", 0 },		/* BLK_URING_TASKRUN_COOP */
	{ "defer", 1 },		/* BLK_URING_TASKRUN_DEFER */
	{ "signal", 2 },	/* BLK_URING_TASKRUN_SIGNAL */
	{ NULL, 0 },
};

static const struct blk_opt_choice uring_inline_choices[] = {
	{ "auto", 0 },		/* BLK_URING_INLINE_AUTO */
	{ "never", 1 },		/* BLK_URING_INLINE_NEVER */
	{ "always", 2 },	/* BLK_URING_INLINE_ALWAYS */
	{ NULL, 0 },
};

static const struct blk_opt_choice uring_engine_choices[] = {
	{ "auto", 0 },		/* BLK_URING_ENGINE_AUTO */
	{ "io_uring", 1 },	/* BLK_URING_ENGINE_IO_URING */
	{ "pool", 2 },		/* BLK_URING_ENGINE_POOL */
	{ NULL, 0 },
};

/* a number's spelling, for the .def of an option whose default is a macro */
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static const struct blk_opt_choice nvme_ctrl_choices[] = {
	{ "thread", 0 },	/* NVME_CTRL_THREAD */
	{ "inline", 1 },	/* NVME_CTRL_INLINE */
	{ NULL, 0 },
};

static const struct blk_opt_choice nvme_sqe_init_choices[] = {
	{ "memset", 0 },	/* BLK_NVME_SQE_MEMSET */
	{ "fields", 1 },	/* BLK_NVME_SQE_FIELDS */
	{ NULL, 0 },
};

static const struct blk_opt_choice nvme_ns_choices[] = {
	{ "ram", 0 },
	{ "null", 1 },
	{ NULL, 0 },
};

/* nvme_fault=: checked when given, kept as text (nvme_ctrl_parse_fault()) */
static int nvme_fault_check(const char *val, char *why, size_t whylen)
{
	struct nvme_ctrl_fault f;

	return nvme_ctrl_parse_fault(val, &f, why, whylen) ? -EINVAL : 0;
}

/* scsi_error=: checked when given, kept as text (scsi_tgt_parse_error_rules()) */
static int scsi_error_check(const char *val, char *why, size_t whylen)
{
	struct scsi_tgt_error_rule r[SCSI_TGT_MAX_ERROR_RULES];
	unsigned int n;

	return scsi_tgt_parse_error_rules(val, r, SCSI_TGT_MAX_ERROR_RULES, &n,
					  why, whylen) ? -EINVAL : 0;
}

/*
 * fio's unit suffix on a count, as the option parser reads the other
 * counts (BLK_OPT_UINT, fio's int with its default kb_base=1024): k, m,
 * g, t, p are powers of 1024, with an "i" (ki, kib) powers of 1000, a
 * trailing "b" allowed; "" is 1.  -EINVAL: not one.
 */
static int count_suffix(const char *s, uint64_t *mult)
{
	static const char prefixes[] = "kmgtp";
	const char *p;
	uint64_t base = 1024, m = 1;
	int i, n;

	*mult = 1;
	if (!*s)
		return 0;
	p = strchr(prefixes, *s | 0x20);
	if (!p || !*p)
		return -EINVAL;
	n = (int)(p - prefixes) + 1;
	s++;
	if (*s == 'i' || *s == 'I') {
		base = 1000;
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
 * scsi_every_nth=: a signed 32-bit number (scsi_debug's negative
 * every_nth), decimal with the suffixes the other counts take (1k: 1024)
 * or 0x hex (no suffix: "0x1b" would be ambiguous, as for the others).
 */
#define EVERY_NTH_ALLOWED "allowed -2147483648..2147483647: a whole number, decimal with an optional k/m/g suffix as the other counts take (1k: 1024), or 0x hex"

static int scsi_every_nth_parse(const char *val, int32_t *n)
{
	bool neg = *val == '-';
	const char *d = neg ? val + 1 : val;
	bool hex = d[0] == '0' && (d[1] == 'x' || d[1] == 'X');
	uint64_t v, mult = 1;
	char *end;

	/* strtoull() would take a sign or blanks of its own */
	if (*d < '0' || *d > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(d, &end, hex ? 16 : 10);
	if (errno || end == d || (hex ? *end != '\0' : count_suffix(end, &mult)) ||
	    __builtin_mul_overflow(v, mult, &v) || v > (uint64_t)INT32_MAX + neg)
		return -EINVAL;
	*n = (int32_t)(neg ? -(int64_t)v : (int64_t)v);
	return 0;
}

static int scsi_every_nth_check(const char *val, char *why, size_t whylen)
{
	int32_t n;

	if (scsi_every_nth_parse(val, &n)) {
		snprintf(why, whylen, EVERY_NTH_ALLOWED);
		return -EINVAL;
	}
	return 0;
}

static const struct blk_opt_choice scsi_lbp_choices[] = {
	{ "auto", 0 },		/* SCSI_TGT_LBP_AUTO */
	{ "0", 1 },		/* SCSI_TGT_LBP_OFF */
	{ "1", 2 },		/* SCSI_TGT_LBP_ON */
	{ NULL, 0 },
};

/* lower=: a driver some stacking driver can sit on */
static int lower_check(const char *val, char *why, size_t whylen)
{
	unsigned int i, n = 0, nd;
	const struct blk_driver *drv = blk_drivers(&nd);
	const char *const *l;
	char allowed[128] = "";

	for (i = 0; i < nd; i++)
		for (l = drv[i].lowers; l && *l; l++) {
			if (!strcmp(*l, val))
				return 0;
			if (!strstr(allowed, *l) && n < sizeof(allowed))
				n += (unsigned int)snprintf(allowed + n, sizeof(allowed) - n,
							    "%s%s", n ? "|" : "", *l);
		}
	snprintf(why, whylen, "not a driver a device can stack on, allowed %s",
		 allowed);
	return -EINVAL;
}

static int stage_windows_check(const char *val, char *why, size_t whylen)
{
	uint8_t a, b;

	return blk_stage_window_parse(val, &a, &b, why, whylen);
}

/* Every driver: queue limits and attributes (null_blk's and sysfs's names). */
static const struct blk_opt_desc queue_opts[] = {
	{ .name = "dev_size", .type = BLK_OPT_SIZE, P(dev_size),
	  .max = UINT64_MAX, .flags = BLK_OPT_F_ALIGN512, .def = "0",
	  .help = "device capacity; 0: the largest offset+size of the jobs" },
	{ .name = "logical_block_size", .type = BLK_OPT_SIZE,
	  P(logical_block_size), .min = 512, .max = 65536,
	  .flags = BLK_OPT_F_POW2, .def = "512",
	  .help = "a power of 2; bs and dev_size must be multiples of it" },
	{ .name = "max_sectors", .type = BLK_OPT_UINT, P(max_sectors),
	  .min = 8, .max = 65536, .def = "2560",
	  .help = "largest request, in 512-byte sectors" },
	{ .name = "max_segments", .type = BLK_OPT_UINT, P(max_segments),
	  .min = 1, .max = 4096, .def = "128",
	  .help = "most data segments in one request" },
	{ .name = "nr_hw_queues", .alias = { "submit_queues" },
	  .type = BLK_OPT_UINT, P(nr_hw_queues), .min = 0, .max = 256,
	  .def = "0",
	  .help = "hardware queues; 0: one per job thread of the largest stonewall group" },
	{ .name = "hw_queue_depth", .type = BLK_OPT_UINT, P(hw_queue_depth),
	  .min = 1, .max = 65536, .def = "256",
	  .help = "tags per hardware queue" },
	{ .name = "shared_tags", .type = BLK_OPT_BOOL, P(shared_tags), .max = 1,
	  .def = "0", .help = "one tag set shared by all hardware queues" },
	{ .name = "elevator", .alias = { "ioscheduler" }, .type = BLK_OPT_CHOICE,
	  P(elevator), .flags = BLK_OPT_F_CHOICE_STR,
	  .choices = elevator_choices, .unsupported = elevator_unsupported,
	  .def = "none", .help = "I/O scheduler" },
	{ .name = "iostats", .type = BLK_OPT_BOOL, P(iostats), .max = 1,
	  .def = "1", .help = "keep the device's I/O statistics" },
	{ .name = "run_batch", .type = BLK_OPT_UINT, P(run_batch),
	  .min = 1, .max = 65536, .def = "1",
	  .help = "completions before a stopped queue is run again" },
	{ .name = "rq_timeout", .type = BLK_OPT_TIME, P(rq_timeout_ms),
	  .min = NSEC_PER_MSEC, .max = 3600 * NSEC_PER_SEC,
	  .unit_ns = NSEC_PER_MSEC, .store_ns = NSEC_PER_MSEC, .def = "30s",
	  .help = "time before a request is timed out, whole ms" },

	{ .name = "completion_wait", .type = BLK_OPT_CHOICE, P(completion_wait),
	  .choices = completion_wait_choices, .def = "adaptive",
	  .help = "a job with nothing to submit waits for completions: adaptive (spin while it buys completions, else sleep), spin, sleep; only drivers that can sleep (uring, both engines) on queues of their own: null, ram and nvme, and shared queues, are polled whatever this says" },
	{ .name = "spin_max", .type = BLK_OPT_TIME, P(spin_max_ns),
	  .min = 1000, .max = NSEC_PER_SEC, .unit_ns = 1000, .store_ns = 1,
	  .def = "200us",
	  .help = "longest spin of one wait before sleeping (adaptive and spin), us without a suffix" },
	{ .name = "lower", .type = BLK_OPT_STR, P(lower), .metavar = "DRIVER",
	  .check = lower_check,
	  .help = "a stacking driver's lower device (nvme: ram, null, uring); default: uring with filename=, else the driver's own (nvme_ns=); in a --dev= list, for the drivers that stack" },
	{ .name = "stage_timers", .type = BLK_OPT_BOOL, P(stage_timers), .max = 1,
	  .def = "0",
	  .help = "stamp each request's stages (submit, flush, dispatch, device, device_done, complete, end_io) and report each interval's mean and percentiles (docs/stages.md)" },
	{ .name = "stage_windows", .type = BLK_OPT_STR, P(stage_windows),
	  .metavar = "STAGE_A:STAGE_B", .check = stage_windows_check,
	  .help = "seed 000's print_timings lines (cum_time, count, avg per 100 ms window) of the interval STAGE_A to STAGE_B; turns stage_timers on" },
};

/* uring: fio's io_uring engine names. */
static const struct blk_opt_desc uring_opts[] = {
	{ .name = "filename", .type = BLK_OPT_STR, P(filename), .metavar = "PATH",
	  .help = "dev=uring, dev=nvme: a regular file (created with size= when missing) or a block device; for nvme the namespace's storage" },
	{ .name = "direct", .type = BLK_OPT_BOOL, P(direct), .max = 1, .def = "0",
	  .help = "dev=uring: O_DIRECT, bypassing the page cache" },
	{ .name = "registerfiles", .type = BLK_OPT_BOOL, P(registerfiles),
	  .max = 1, .def = "1",
	  .help = "dev=uring: register the file with each ring (falls back when refused)" },
	{ .name = "fixedbufs", .type = BLK_OPT_BOOL, P(fixedbufs), .max = 1,
	  .def = "1",
	  .help = "dev=uring: register I/O buffers with each ring (falls back when refused)" },
	{ .name = "sqthread_poll", .type = BLK_OPT_BOOL, P(sqthread_poll),
	  .max = 1, .def = "0",
	  .help = "dev=uring: IORING_SETUP_SQPOLL, a kernel thread per ring polls for submissions" },
	{ .name = "uring_inline", .type = BLK_OPT_CHOICE, P(uring_inline),
	  .choices = uring_inline_choices, .def = "auto",
	  .help = "dev=uring: issue requests with preadv2/pwritev2 in the submitting thread: auto (for files io_uring can only hand to io-wq workers, such as tmpfs, while the calls stay short), never, always" },
	{ .name = "uring_taskrun", .type = BLK_OPT_CHOICE, P(uring_taskrun),
	  .choices = uring_taskrun_choices, .def = "coop",
	  .help = "dev=uring: how the kernel runs completion work: coop (COOP_TASKRUN, no IPI), defer (SINGLE_ISSUER|DEFER_TASKRUN, at GETEVENTS), signal (the kernel's default: an IPI per completion)" },
	{ .name = "uring_engine", .alias = { "uring-engine" }, .type = BLK_OPT_CHOICE,
	  P(uring_engine), .choices = uring_engine_choices, .def = "auto",
	  .help = "dev=uring: what does the I/O: auto (io_uring; where io_uring_setup is refused, by kernel.io_uring_disabled or seccomp, the thread pool with a notice), io_uring (refused is an error), pool (worker threads doing preadv2/pwritev2)" },
	{ .name = "pool_threads", .alias = { "pool-threads" }, .type = BLK_OPT_UINT,
	  P(pool_threads), .min = 1, .max = BLK_URING_POOL_THREADS_MAX,
	  .def = STRINGIFY(BLK_URING_POOL_THREADS_DEFAULT),
	  .help = "dev=uring with the thread pool: workers per hardware queue, each with one I/O in the kernel (at most hw_queue_depth are started)" },
	{ .name = "force_async", .type = BLK_OPT_UINT, P(force_async),
	  .min = 0, .max = UINT32_MAX, .def = "0",
	  .help = "dev=uring: every Nth read or write is submitted with IOSQE_ASYNC (straight to an io-wq worker, no non-blocking try); 0: never" },
	{ .name = "uring_iowq_max_workers", .type = BLK_OPT_UINT,
	  P(uring_iowq_max_workers), .min = 0, .max = 65536, .def = "0",
	  .help = "dev=uring: at most N io-wq workers of each kind per submitting thread (IORING_REGISTER_IOWQ_MAX_WORKERS, Linux 5.15); 0: the kernel's default, 4 per CPU" },
};

/* null: null_blk's parameter names. */
static const struct blk_opt_desc null_opts[] = {
	{ .name = "irqmode", .type = BLK_OPT_UINT, P(irqmode),
	  .min = 0, .max = 2, .def = "0",
	  .help = "completion: 0 inline, 1 completion thread, 2 timer" },
	{ .name = "completion_nsec", .type = BLK_OPT_TIME, P(completion_nsec),
	  .min = 0, .max = NSEC_PER_SEC, .unit_ns = 1, .store_ns = 1,
	  .def = "10000", .help = "timer completion delay for irqmode=2" },
	{ .name = "spin_nsec", .type = BLK_OPT_TIME, P(spin_nsec),
	  .min = 0, .max = NSEC_PER_SEC, .unit_ns = 1, .store_ns = 1,
	  .def = "0", .help = "busy-wait this long in queue_rq for every request, on the submitting thread: a CPU cost per request, e.g. a planted difference for bench --ab; 0: off" },
	{ .name = "memory_backed", .type = BLK_OPT_BOOL, P(memory_backed),
	  .max = 1, .def = "0", .help = "keep written data and return it on reads" },
	{ .name = "fail_every", .type = BLK_OPT_UINT, P(fail_every),
	  .max = UINT64_MAX, .def = "0",
	  .help = "every Nth request fails with an I/O error; 0: off" },
	{ .name = "timeout_every", .type = BLK_OPT_UINT, P(timeout_every),
	  .max = UINT64_MAX, .def = "0",
	  .help = "every Nth request never completes (see rq_timeout); 0: off" },
	{ .name = "requeue_every", .type = BLK_OPT_UINT, P(requeue_every),
	  .max = UINT64_MAX, .def = "0",
	  .help = "every Nth request is answered busy once and requeued; 0: off" },
	{ .name = "discard_keeps_data", .type = BLK_OPT_BOOL,
	  P(discard_keeps_data), .max = 1, .def = "0",
	  .help = "with memory_backed=1: a discard completes and leaves the data (a device whose discard promises no zeros; a fault for trim_verify_zero); 0: discard zeroes" },
};

static const struct blk_opt_choice scsi_lld_choices[] = {
	{ "inline", 0 },
	{ "thread", 1 },
	{ NULL, 0 },
};

/* scsi_opts=, scsi_tmf_fail=: bit masks, named in their messages */
static const struct blk_opt_choice scsi_opts_bits[] = {
	{ "medium error", SCSI_TGT_OPT_MEDIUM_ERR },
	{ "timeout", SCSI_TGT_OPT_TIMEOUT },
	{ "recovered error", SCSI_TGT_OPT_RECOVERED_ERR },
	{ "transport error", SCSI_TGT_OPT_TRANSPORT_ERR },
	{ "short transfer", SCSI_TGT_OPT_SHORT_TRANSFER },
	{ "task set full", SCSI_TGT_OPT_RARE_TSF },
	{ "host busy", SCSI_TGT_OPT_HOST_BUSY },
	{ NULL, 0 },
};

static const struct blk_opt_choice scsi_tmf_fail_bits[] = {
	{ "ABORT TASK", SCSI_TGT_TMF_FAIL_ABORT },
	{ "LOGICAL UNIT RESET", SCSI_TGT_TMF_FAIL_LUN_RESET },
	{ "TARGET RESET", SCSI_TGT_TMF_FAIL_TARGET_RESET },
	{ NULL, 0 },
};

static const struct blk_opt_desc scsi_opts[] = {
	{ .name = "scsi_lld", .type = BLK_OPT_CHOICE, P(scsi_lld),
	  .choices = scsi_lld_choices, .def = "inline",
	  .help = "loopback LLD: hand each command to the emulated disk inline, on the submitting thread, or to a device thread per hardware queue (as nvme_ctrl=thread)" },
	{ .name = "scsi_max_retries", .type = BLK_OPT_UINT, P(scsi_max_retries),
	  .min = 0, .max = 255, .def = "5",
	  .help = "times a command is sent again after UNIT ATTENTION, NOT READY, ABORTED COMMAND, BUSY or TASK SET FULL, then it fails; sd's SD_MAX_RETRIES" },
	{ .name = "scsi_every_nth", .type = BLK_OPT_STR, P(scsi_every_nth),
	  .metavar = "N", .check = scsi_every_nth_check, .def = "0",
	  .help = "scsi_debug's every_nth, -2147483648..2147483647 (a k/m/g suffix as for the other counts: -1k is -1024): the scsi_opts faults hit every Nth READ or WRITE at the emulated disk; negative: the |N|th and every one after it; 0: none" },
	{ .name = "scsi_opts", .type = BLK_OPT_UINT, P(scsi_opts),
	  .min = 0, .max = SCSI_TGT_OPTS_SUPPORTED, .bits = scsi_opts_bits,
	  .metavar = "BITS", .def = "0",
	  .help = "scsi_debug's opts bits: 0x2 medium error on reads of LBA 4660..4669, 0x4 never complete (timeout), 0x8 recovered error, 0x10 transport error (ABORTED COMMAND), 0x100 short transfer (a read moves half, GOOD with a residual), 0x800 TASK SET FULL, 0x8000 host busy (docs/scsi-tgt.md)" },
	{ .name = "scsi_error", .type = BLK_OPT_STR,
	  .off = offsetof(struct blk_dev_params, scsi_errors),
	  .len = sizeof(((struct blk_dev_params *)0)->scsi_errors[0]),
	  .flags = BLK_OPT_F_LIST,
	  .count_off = offsetof(struct blk_dev_params, nr_scsi_errors),
	  .list_max = BLK_DEV_MAX_SCSI_ERRORS, .check = scsi_error_check,
	  .metavar = "RULE[;RULE]",
	  .help = "scsi_debug's per-device error injection, at most 16 rules: type:fail|timeout|busy (fail), opcode:0..0xff (0xff any), count:N (>0 always, <0 that many times, 0 off), status:SAM status (fail), sense:KEY/ASC/ASCQ hex (status 0x02); e.g. opcode:0x28,count:-3,status:0x02,sense:3/11/00 (docs/scsi-tgt.md)" },
	{ .name = "scsi_delay", .type = BLK_OPT_TIME, P(scsi_delay_ms),
	  .min = 0, .max = 10 * NSEC_PER_SEC, .unit_ns = NSEC_PER_MSEC,
	  .store_ns = NSEC_PER_MSEC, .def = "0",
	  .help = "scsi_debug's delay (there in jiffies): every command but INQUIRY, REPORT LUNS and REQUEST SENSE completes this much later, whole ms (ms without a suffix), at most 10s" },
	{ .name = "scsi_ndelay", .type = BLK_OPT_TIME, P(scsi_ndelay_ns),
	  .min = 0, .max = 10 * NSEC_PER_SEC, .unit_ns = 1, .store_ns = 1,
	  .def = "0",
	  .help = "scsi_debug's ndelay: as scsi_delay, in ns (ns without a suffix); when set, instead of scsi_delay" },
	{ .name = "scsi_tur_ms_to_ready", .type = BLK_OPT_TIME, P(scsi_tur_ms_to_ready),
	  .min = 0, .max = 60 * NSEC_PER_SEC, .unit_ns = NSEC_PER_MSEC,
	  .store_ns = NSEC_PER_MSEC, .def = "0",
	  .help = "scsi_debug's tur_ms_to_ready: NOT READY, BECOMING READY (04/01) on TEST UNIT READY and media commands for this long after the disk is made (the probe waits), ms without a suffix, at most 60s" },
	{ .name = "scsi_sector_size", .type = BLK_OPT_SIZE, P(scsi_sector_size),
	  .min = 0, .max = 4096, .def = "0",
	  .help = "scsi_debug's sector_size: the disk's logical block size, 512, 1k, 2k or 4k, a multiple of the lower device's (logical_block_size=); 0: the lower's" },
	{ .name = "scsi_physblk_exp", .type = BLK_OPT_UINT, P(scsi_physblk_exp),
	  .min = 0, .max = 15, .def = "0",
	  .help = "scsi_debug's physblk_exp: 2^N logical blocks per physical block (READ CAPACITY 16; VPD 0xb0 optimal transfer length granularity)" },
	{ .name = "scsi_opt_xferlen_exp", .type = BLK_OPT_UINT, P(scsi_opt_xferlen_exp),
	  .min = 0, .max = 15, .def = "0",
	  .help = "scsi_debug's opt_xferlen_exp: optimal transfer length granularity 2^N logical blocks (VPD 0xb0) when above scsi_physblk_exp" },
	{ .name = "scsi_opt_blks", .type = BLK_OPT_UINT, P(scsi_opt_blks),
	  .min = 0, .max = 65535, .def = "0",
	  .help = "scsi_debug's opt_blks: OPTIMAL TRANSFER LENGTH in VPD 0xb0, logical blocks; 0: the lower's largest request" },
	{ .name = "scsi_lbpu", .type = BLK_OPT_CHOICE, P(scsi_lbpu),
	  .choices = scsi_lbp_choices, .def = "auto",
	  .help = "scsi_debug's lbpu: VPD 0xb2 LBPU, UNMAP taken (0: refused; 1 needs a lower that discards); auto: as the lower" },
	{ .name = "scsi_lbpws", .type = BLK_OPT_CHOICE, P(scsi_lbpws),
	  .choices = scsi_lbp_choices, .def = "auto",
	  .help = "scsi_debug's lbpws: VPD 0xb2 LBPWS, WRITE SAME (16) with UNMAP taken (0: refused, and no WRITE_ZEROES from the disk); auto: as the lower" },
	{ .name = "scsi_lbpws10", .type = BLK_OPT_CHOICE, P(scsi_lbpws10),
	  .choices = scsi_lbp_choices, .def = "auto",
	  .help = "scsi_debug's lbpws10: VPD 0xb2 LBPWS10, WRITE SAME (10) with UNMAP taken (0: refused); auto: as the lower" },
	{ .name = "scsi_lbprz", .type = BLK_OPT_CHOICE, P(scsi_lbprz),
	  .choices = scsi_lbp_choices, .def = "auto",
	  .help = "scsi_debug's lbprz: LBPRZ in VPD 0xb2 and READ CAPACITY 16, unmapped blocks read zeros (1 needs a lower that keeps data); auto: as the lower" },
	{ .name = "scsi_unmap_max_blocks", .type = BLK_OPT_UINT, P(scsi_unmap_max_blocks),
	  .min = 1, .max = UINT32_MAX, .def = "4194304",
	  .help = "scsi_debug's unmap_max_blocks: MAXIMUM UNMAP LBA COUNT (VPD 0xb0), logical blocks per UNMAP" },
	{ .name = "scsi_unmap_max_desc", .type = BLK_OPT_UINT, P(scsi_unmap_max_desc),
	  .min = 1, .max = 4095, .def = "256",
	  .help = "scsi_debug's unmap_max_desc: MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT (VPD 0xb0)" },
	{ .name = "scsi_unmap_granularity", .type = BLK_OPT_UINT, P(scsi_unmap_granularity),
	  .min = 1, .max = UINT32_MAX, .def = "1",
	  .help = "scsi_debug's unmap_granularity: OPTIMAL UNMAP GRANULARITY (VPD 0xb0), logical blocks; reported only" },
	{ .name = "scsi_unmap_alignment", .type = BLK_OPT_UINT, P(scsi_unmap_alignment),
	  .min = 0, .max = UINT32_MAX, .def = "0",
	  .help = "scsi_debug's unmap_alignment: UNMAP GRANULARITY ALIGNMENT (VPD 0xb0, UGAVALID), logical blocks, below scsi_unmap_granularity; reported only" },
	{ .name = "scsi_write_same_length", .type = BLK_OPT_UINT, P(scsi_write_same_length),
	  .min = 1, .max = UINT32_MAX, .def = "4194304",
	  .help = "scsi_debug's write_same_length: MAXIMUM WRITE SAME LENGTH (VPD 0xb0), logical blocks; longer ones are refused" },
	{ .name = "scsi_removable", .type = BLK_OPT_BOOL, P(scsi_removable), .max = 1,
	  .def = "0",
	  .help = "scsi_debug's removable: RMB in INQUIRY; PREVENT ALLOW MEDIUM REMOVAL holds the medium against START STOP UNIT's eject" },
	{ .name = "scsi_wp", .type = BLK_OPT_BOOL, P(scsi_wp), .max = 1, .def = "0",
	  .help = "scsi_debug's wp: write protected (WP in the mode data; writes, UNMAP and WRITE SAME get DATA PROTECT 27/00)" },
	{ .name = "scsi_tmf_fail", .type = BLK_OPT_UINT, P(scsi_tmf_fail),
	  .min = 0, .max = 7, .bits = scsi_tmf_fail_bits, .metavar = "BITS",
	  .def = "0",
	  .help = "task management functions the emulated disk rejects, bits: 0x1 ABORT TASK, 0x2 LOGICAL UNIT RESET, 0x4 TARGET RESET; a timed-out command's error handling then goes on to the next step, up to a host reset (docs/scsi.md)" },
	{ .name = "scsi_tmf_timeout", .type = BLK_OPT_TIME, P(scsi_tmf_timeout_ms),
	  .min = NSEC_PER_MSEC, .max = 3600 * NSEC_PER_SEC,
	  .unit_ns = NSEC_PER_MSEC, .store_ns = NSEC_PER_MSEC, .def = "10s",
	  .help = "longest an abort or reset waits for the media access of the commands it ends, whole ms; past it the step fails and error handling goes on" },
	{ .name = "scsi_queue_depth", .type = BLK_OPT_UINT, P(scsi_queue_depth),
	  .min = 0, .max = 65536, .def = "0",
	  .help = "the logical unit's queue depth as budget tokens: commands outstanding at the disk over all queues, at most this many; 0: no budget (the tag sets bound it)" },
	{ .name = "scsi_host_lock", .type = BLK_OPT_BOOL, P(scsi_host_lock), .max = 1,
	  .def = "0",
	  .help = "seed 003's experiment: a host-wide spinlock around every submission and completion and a queue run on every completion, as before blk-mq; 0: no host lock" },
	{ .name = "scsi_use_10_for_rw", .type = BLK_OPT_BOOL, P(scsi_use_10_for_rw), .max = 1,
	  .def = "1",
	  .help = "sd's sdev->use_10_for_rw: READ/WRITE (10) (16 past 2^32 blocks); 0: (6) where the LBA fits 21 bits and the length 256 blocks, as sd does after a disk refused (10)" },
	{ .name = "scsi_stage_timers", .type = BLK_OPT_BOOL, P(scsi_stage_timers), .max = 1,
	  .def = "0",
	  .help = "time the completion path (entry to just before the request ends) and print seed 000's 100 ms windows (cum_time, count, avg) on stderr" },
};

static const struct blk_opt_choice iscsi_digest_choices[] = {
	{ "none", 0 },
	{ "crc32c", 1 },
	{ NULL, 0 },
};

/* target=: checked when given (the URL's fields) */
static int iscsi_target_check(const char *val, char *why, size_t whylen)
{
	struct scsi_iscsi_target t;
	char err[1400];

	if (!scsi_iscsi_parse_url(val, &t, err, sizeof(err)))
		return 0;
	/* the parser's message starts "target=VALUE: "; the caller says that */
	snprintf(why, whylen, "%s", strstr(err, ": ") ? strstr(err, ": ") + 2 : err);
	return -EINVAL;
}

/* iscsi: the SCSI disk over a remote iSCSI target (RFC 7143 names). */
static const struct blk_opt_desc iscsi_opts[] = {
	{ .name = "target", .type = BLK_OPT_STR, P(iscsi_target), .metavar = "URL",
	  .check = iscsi_target_check,
	  .help = "dev=iscsi: the target, iscsi://HOST[:PORT]/IQN/LUN (port 3260 when not given; HOST may be [IPv6]; LUN 0..16383)" },
	{ .name = "iscsi_initiator", .type = BLK_OPT_STR, P(iscsi_initiator),
	  .metavar = "IQN", .flags = BLK_OPT_F_PRINTABLE,
	  .def = SCSI_ISCSI_DEFAULT_INITIATOR,
	  .help = "dev=iscsi: our InitiatorName, at most 223 bytes" },
	{ .name = "iscsi_header_digest", .type = BLK_OPT_CHOICE, P(iscsi_header_digest),
	  .choices = iscsi_digest_choices, .def = "none",
	  .help = "dev=iscsi: HeaderDigest: crc32c asks for CRC32C and requires it (a target that refuses fails the login)" },
	{ .name = "iscsi_data_digest", .type = BLK_OPT_CHOICE, P(iscsi_data_digest),
	  .choices = iscsi_digest_choices, .def = "none",
	  .help = "dev=iscsi: DataDigest, as iscsi_header_digest" },
	{ .name = "iscsi_max_recv_dsl", .type = BLK_OPT_SIZE, P(iscsi_max_recv_dsl),
	  .min = 512, .max = 16777215, .def = "256k",
	  .help = "dev=iscsi: our MaxRecvDataSegmentLength, bytes: the largest Data-In segment the target may send us (declared)" },
	{ .name = "iscsi_first_burst", .type = BLK_OPT_SIZE, P(iscsi_first_burst),
	  .min = 512, .max = 16777215, .def = "256k",
	  .help = "dev=iscsi: FirstBurstLength offered, bytes: unsolicited data (immediate and Data-Out) per write, at most; the result is the smaller of ours and the target's, and at most MaxBurstLength" },
	{ .name = "iscsi_max_burst", .type = BLK_OPT_SIZE, P(iscsi_max_burst),
	  .min = 512, .max = 16777215, .def = "1m",
	  .help = "dev=iscsi: MaxBurstLength offered, bytes: one R2T's or one Data-In sequence's data, at most (min with the target's)" },
	{ .name = "iscsi_immediate_data", .type = BLK_OPT_BOOL, P(iscsi_immediate_data),
	  .max = 1, .def = "1",
	  .help = "dev=iscsi: offer ImmediateData=Yes: a write's first data in its SCSI Command PDU (the result is Yes only if both say Yes)" },
	{ .name = "iscsi_initial_r2t", .type = BLK_OPT_BOOL, P(iscsi_initial_r2t),
	  .max = 1, .def = "0",
	  .help = "dev=iscsi: offer InitialR2T=Yes: no unsolicited Data-Out, every byte past the immediate data waits for an R2T (Yes if either says Yes)" },
	{ .name = "iscsi_max_r2t", .type = BLK_OPT_UINT, P(iscsi_max_r2t),
	  .min = 1, .max = 65535, .def = "8",
	  .help = "dev=iscsi: MaxOutstandingR2T offered: R2Ts a write may have outstanding (min with the target's)" },
	{ .name = "iscsi_login_timeout", .type = BLK_OPT_TIME, P(iscsi_login_timeout_ms),
	  .min = NSEC_PER_MSEC, .max = 3600 * NSEC_PER_SEC,
	  .unit_ns = NSEC_PER_MSEC, .store_ns = NSEC_PER_MSEC, .def = "15s",
	  .help = "dev=iscsi: a connection and its login, at most, whole ms (ms without a suffix)" },
	{ .name = "iscsi_reconnect_timeout", .type = BLK_OPT_TIME, P(iscsi_reconnect_timeout_ms),
	  .min = NSEC_PER_MSEC, .max = 3600 * NSEC_PER_SEC,
	  .unit_ns = NSEC_PER_MSEC, .store_ns = NSEC_PER_MSEC, .def = "15s",
	  .help = "dev=iscsi: after a connection is lost, how long its commands wait for a new login (tried every second) before they fail, whole ms" },
	{ .name = "iscsi_tmf_timeout", .type = BLK_OPT_TIME, P(iscsi_tmf_timeout_ms),
	  .min = NSEC_PER_MSEC, .max = 3600 * NSEC_PER_SEC,
	  .unit_ns = NSEC_PER_MSEC, .store_ns = NSEC_PER_MSEC, .def = "10s",
	  .help = "dev=iscsi: the wait for a Task Management Function Response (ABORT TASK, LOGICAL UNIT RESET, TARGET WARM RESET) before error handling goes on to the next step, whole ms" },
	{ .name = "iscsi_noop_interval", .type = BLK_OPT_TIME, P(iscsi_noop_interval_ms),
	  .min = 0, .max = 3600 * NSEC_PER_SEC,
	  .unit_ns = NSEC_PER_MSEC, .store_ns = NSEC_PER_MSEC, .def = "5s",
	  .help = "dev=iscsi: keep-alive (RFC 7143 11.18): a connection that has received nothing for this long gets a NOP-Out ping; 0: no pings; whole ms (ms without a suffix), at most 1h" },
	{ .name = "iscsi_noop_timeout", .type = BLK_OPT_TIME, P(iscsi_noop_timeout_ms),
	  .min = NSEC_PER_MSEC, .max = 3600 * NSEC_PER_SEC,
	  .unit_ns = NSEC_PER_MSEC, .store_ns = NSEC_PER_MSEC, .def = "5s",
	  .help = "dev=iscsi: after a NOP-Out ping, nothing received for this long: the connection is dead, and its commands are sent again after a new login; whole ms" },
	{ .name = "iscsi_chap_file", .type = BLK_OPT_STR, P(iscsi_chap_file), .metavar = "PATH",
	  .help = "dev=iscsi: CHAP credentials, mode 600: 'initiator NAME SECRET' (ours) and, for mutual CHAP, 'target NAME SECRET' (what the target must answer); without it, BLKSTACK_ISCSI_CHAP_USER and _SECRET (and _TARGET_USER, _TARGET_SECRET) from the environment" },
};

static const struct blk_opt_desc nvme_opts[] = {
	/*
	 * nvme host driver over the emulated controller: blkstack's own
	 * options, so no fio name to follow.  Underscores as every other
	 * option here; the dashed spelling (--nvme-qd) is an alias.
	 */
	{ .name = "nvme_queues", .alias = { "nvme-queues" }, .type = BLK_OPT_UINT, P(nvme_queues),
	  .min = 0, .max = 256, .def = "0",
	  .help = "I/O SQ/CQ pairs (hardware queues); 0: as nr_hw_queues, one per job thread" },
	{ .name = "nvme_qd", .alias = { "nvme-qd" }, .type = BLK_OPT_UINT, P(nvme_qd),
	  .min = 2, .max = 65536, .def = "1024",
	  .help = "entries per I/O SQ and CQ; host tags: qd-1, or hw_queue_depth if smaller" },
	{ .name = "nvme_ctrl", .alias = { "nvme-ctrl" }, .type = BLK_OPT_CHOICE, P(nvme_ctrl),
	  .choices = nvme_ctrl_choices, .def = "thread",
	  .help = "controller: its own thread polling doorbells, or inline on the doorbell writer" },
	{ .name = "nvme_sqe_init", .alias = { "nvme-sqe-init" }, .type = BLK_OPT_CHOICE, P(nvme_sqe_init),
	  .choices = nvme_sqe_init_choices, .def = "fields",
	  .help = "SQE fill: memset then used fields, or every field once in order" },
	{ .name = "nvme_ns", .alias = { "nvme-ns" }, .type = BLK_OPT_CHOICE, P(nvme_ns),
	  .choices = nvme_ns_choices, .def = "ram",
	  .help = "namespace storage when neither lower= nor filename= is given: ram, or null (no data, protocol cost only); the older spelling of lower=ram|null" },
	{ .name = "nvme_max_retries", .alias = { "nvme-max-retries" }, .type = BLK_OPT_UINT,
	  P(nvme_max_retries), .min = 0, .max = 255, .def = "5",
	  .help = "times a request is sent again after an error status without DNR (after its Command Retry Delay) or a timeout, then it fails; Linux's nvme_core.max_retries" },
	{ .name = "nvme_fault", .alias = { "nvme-fault" }, .type = BLK_OPT_STR,
	  .off = offsetof(struct blk_dev_params, nvme_faults), .len = sizeof(((struct blk_dev_params *)0)->nvme_faults[0]), .flags = BLK_OPT_F_LIST, .count_off = offsetof(struct blk_dev_params, nr_nvme_faults),
	  .list_max = BLK_DEV_MAX_NVME_FAULTS, .check = nvme_fault_check, .metavar = "SPEC",
	  .help = "a fault rule of the emulated controller, given once per rule (at most 16): op=NAME, admin, qid=, nsid=, slba=, nlb=, status=NAME|SCT:SC, dnr, crd=1..3, delay=TIME, drop, count=N; e.g. op=write,status=write_fault,count=10 (docs/nvme-ctrl.md)" },
};

/* ------------------------------------------------------------- drivers */

/* The core's limit on hardware queues; nr_hw_queues=0 stops there. */
#define DEV_MAX_AUTO_HW_QUEUES 256u

static int null_create(const struct blk_driver *drv,
		       const struct blk_dev_params *p,
		       const struct blk_dev_config *q,
		       const struct blk_dev_open_args *a, struct blk_dev **dev,
		       char *err, size_t errlen)
{
	struct blk_null_config nc = { .queue = *q };

	(void)drv;
	(void)a;
	(void)err;
	(void)errlen;
	nc.irqmode = (enum blk_null_irqmode)p->irqmode;
	nc.completion_nsec = p->completion_nsec;
	nc.spin_nsec = p->spin_nsec;
	nc.memory_backed = p->memory_backed;
	nc.fail_every = p->fail_every;
	nc.timeout_every = p->timeout_every;
	nc.requeue_every = p->requeue_every;
	nc.discard_keeps_data = p->discard_keeps_data;
	return blk_null_create(&nc, dev);
}

static int ram_create(const struct blk_driver *drv,
		      const struct blk_dev_params *p,
		      const struct blk_dev_config *q,
		      const struct blk_dev_open_args *a, struct blk_dev **dev,
		      char *err, size_t errlen)
{
	struct blk_ram_config rc = { .queue = *q };
	int ret;

	(void)drv;
	(void)p;
	(void)a;
	ret = blk_ram_create(&rc, dev);
	if (ret == -EFBIG)
		snprintf(err, errlen,
			 "dev_size=%llu: a ram device holds at most 1 EiB (2^60 bytes)",
			 (unsigned long long)q->capacity);
	return ret;
}

static int uring_create(const struct blk_driver *drv,
			const struct blk_dev_params *p,
			const struct blk_dev_config *q,
			const struct blk_dev_open_args *a, struct blk_dev **dev,
			char *err, size_t errlen)
{
	struct blk_uring_config uc = { .queue = *q };

	(void)drv;
	if (!p->filename[0]) {
		snprintf(err, errlen,
			 "dev=uring needs filename=PATH (a file, created with size= when missing, or a block device)");
		return -EINVAL;
	}
	uc.path = p->filename;
	uc.create_size = p->dev_size ? p->dev_size : a->create_size;
	uc.create_empty = a->create_empty && !p->dev_size;
	uc.direct = p->direct;
	uc.register_files = p->registerfiles;
	uc.fixed_buffers = p->fixedbufs;
	uc.taskrun = (uint8_t)p->uring_taskrun;
	uc.inline_mode = (uint8_t)p->uring_inline;
	uc.sqpoll = p->sqthread_poll;
	uc.engine = (uint8_t)p->uring_engine;
	uc.pool_threads = p->pool_threads;
	uc.force_async = p->force_async;
	uc.iowq_max_workers = p->uring_iowq_max_workers;
	return blk_uring_create(&uc, dev, err, errlen);
}

/* dev=nvme out of memory: say which options size it (queues x entries x tags). */
static void nvme_enomem(char *err, size_t errlen, const char *what,
			uint32_t queues, uint32_t qd, uint32_t tags)
{
	snprintf(err, errlen,
		 "dev=nvme: out of memory for %s: nvme_queues=%u queues x nvme_qd=%u entries, %u tags per queue; lower nvme_queues or nvme_qd (host tags: also hw_queue_depth)",
		 what, queues, qd, tags);
}

/*
 * dev=nvme: the host driver over an emulated controller whose one
 * namespace is stored on the lower device (ram, null or uring).  The
 * namespace device gets one hardware queue per I/O queue pair, so that an
 * inline controller can attach one backend ctx per CQ.  Closing the nvme
 * device destroys the controller and the namespace device (own_ctrl,
 * own_ns).
 */
static int nvme_create(const struct blk_driver *drv,
		       const struct blk_dev_params *p,
		       const struct blk_dev_config *q,
		       const struct blk_dev_open_args *a, struct blk_dev **dev,
		       char *err, size_t errlen)
{
	struct blk_dev_config nq = *q;
	struct nvme_ctrl_config cc = { 0 };
	struct blk_nvme_config hc = { .queue = *q };
	struct nvme_ctrl *ctrl = NULL;
	struct blk_dev *ns = NULL;
	uint32_t queues = p->nvme_queues ? p->nvme_queues : q->nr_hw_queues;
	uint32_t qd = p->nvme_qd ? p->nvme_qd : 1024;
	uint32_t max_bytes = (q->max_sectors ? q->max_sectors : 2560) * 512u;
	uint32_t mdts = 0;
	const char *lower;
	unsigned int i;
	int ret;

	ret = blk_dev_lower(drv, p, &lower, err, errlen);
	if (ret)
		return ret;
	/*
	 * The namespace: as many queues as CQs, each deep enough for what
	 * the host can have in flight per queue (its tags), not for a full
	 * SQ: 256 queues x 65536 entries gave the namespace 16M requests
	 * (GBs) the host could never use.  Queues of its own: a shared hctx
	 * locks on every submit and poll (140 -> 96 ns per 4k read for a null
	 * namespace inline).
	 */
	nq.nr_hw_queues = queues;
	nq.shared_hctx = false;
	nq.queue_depth = q->queue_depth && q->queue_depth < qd - 1 ? q->queue_depth :
			 qd - 1 > 65536 ? 65536 : qd - 1;
	nq.nr_requests = 0;
	nq.shared_tags = false;
	nq.iostats = false;
	nq.stage_timers = false;
	nq.rq_timeout_ms = 0;
	ret = blk_dev_open_lower(lower, p, &nq, a, &ns, err, errlen);
	if (ret == -ENOMEM) {
		nvme_enomem(err, errlen, "the namespace device", queues, qd,
			    nq.queue_depth);
		return ret;
	}
	if (ret) {
		if (!err[0])
			snprintf(err, errlen, "dev=nvme: cannot create the namespace device (lower=%s): %s",
				 lower, strerror(-ret));
		return ret;
	}
	/* MDTS: the smallest power of two of 4 KiB pages holding max_sectors */
	while (mdts < 15 && (4096u << mdts) < max_bytes)
		mdts++;
	cc.mode = p->nvme_ctrl ? NVME_CTRL_INLINE : NVME_CTRL_THREAD;
	cc.nr_ns = 1;
	cc.ns = &ns;
	cc.own_ns = true;
	cc.mqes = 65536;
	cc.max_io_queues = queues;
	cc.mdts = mdts;
	ret = nvme_ctrl_create(&cc, &ctrl, err, errlen);
	if (ret) {
		if (ret == -ENOMEM)
			nvme_enomem(err, errlen, "the controller", queues, qd, qd - 1);
		blk_dev_close(ns);
		return ret;
	}
	/* before the host's bring-up, so that admin-command rules act on it */
	for (i = 0; i < p->nr_nvme_faults; i++) {
		struct nvme_ctrl_fault f;
		char why[400];

		ret = nvme_ctrl_parse_fault(p->nvme_faults[i], &f, why, sizeof(why));
		if (!ret)
			ret = nvme_ctrl_add_fault(ctrl, &f);
		if (ret) {
			snprintf(err, errlen, "nvme_fault=%s", ret == -EINVAL ? why :
				 "more rules than the controller holds");
			nvme_ctrl_destroy(ctrl);
			return ret;
		}
	}
	hc.ctrl = ctrl;
	hc.own_ctrl = true;
	hc.io_queue_entries = qd;
	hc.queue.nr_hw_queues = queues;
	hc.queue.shared_hctx = a->nr_threads > queues;
	hc.queue.queue_depth = q->queue_depth && q->queue_depth < qd - 1 ?
			       q->queue_depth : qd - 1;
	hc.sqe_init = p->nvme_sqe_init ? BLK_NVME_SQE_FIELDS : BLK_NVME_SQE_MEMSET;
	hc.max_retries = p->nvme_max_retries ? p->nvme_max_retries :
					       BLK_NVME_RETRIES_NONE;
	ret = blk_nvme_create(&hc, dev, err, errlen);
	if (ret) {
		if (ret == -ENOMEM)
			nvme_enomem(err, errlen, "the host queues", queues, qd,
				    hc.queue.queue_depth);
		/* the controller is left to us on failure; it owns ns */
		nvme_ctrl_destroy(ctrl);
		return ret;
	}
	return 0;
}

/* The target's knobs from the scsi_* options; @rules holds the rules. */
static int scsi_tgt_config_from(const struct blk_dev_params *p,
				struct scsi_tgt_config *tc,
				struct scsi_tgt_error_rule *rules, char *err,
				size_t errlen)
{
	unsigned int i, n;
	char why[300];

	memset(tc, 0, sizeof(*tc));
	if (p->scsi_every_nth[0] && scsi_every_nth_parse(p->scsi_every_nth, &tc->every_nth)) {
		snprintf(err, errlen, "scsi_every_nth=%s: " EVERY_NTH_ALLOWED,
			 p->scsi_every_nth);
		return -EINVAL;
	}
	tc->opts = p->scsi_opts;
	tc->write_protect = p->scsi_wp;
	tc->max_unmap_blocks = p->scsi_unmap_max_blocks;
	tc->max_unmap_descriptors = p->scsi_unmap_max_desc;
	tc->max_write_same_blocks = p->scsi_write_same_length;
	tc->sector_size = p->scsi_sector_size;
	tc->physblk_exp = (uint8_t)p->scsi_physblk_exp;
	tc->opt_xferlen_exp = (uint8_t)p->scsi_opt_xferlen_exp;
	tc->opt_blks = p->scsi_opt_blks;
	tc->lbpu = (uint8_t)p->scsi_lbpu;
	tc->lbpws = (uint8_t)p->scsi_lbpws;
	tc->lbpws10 = (uint8_t)p->scsi_lbpws10;
	tc->lbprz = (uint8_t)p->scsi_lbprz;
	tc->unmap_granularity = p->scsi_unmap_granularity;
	tc->unmap_alignment = p->scsi_unmap_alignment;
	tc->removable = p->scsi_removable;
	tc->delay_ms = p->scsi_delay_ms;
	tc->ndelay_ns = p->scsi_ndelay_ns;
	tc->tur_ms_to_ready = p->scsi_tur_ms_to_ready;
	tc->error_rules = rules;
	for (i = 0; i < p->nr_scsi_errors; i++) {
		if (scsi_tgt_parse_error_rules(p->scsi_errors[i], rules + tc->nr_error_rules,
					       SCSI_TGT_MAX_ERROR_RULES - tc->nr_error_rules,
					       &n, why, sizeof(why))) {
			snprintf(err, errlen, "scsi_error=%s: %s", p->scsi_errors[i], why);
			return -EINVAL;
		}
		tc->nr_error_rules += n;
	}
	return 0;
}

/*
 * dev=scsi: sd's role and the midlayer over the SCSI target core, through
 * the loopback LLD; LUN 0 is the lower device, with a hardware queue of
 * its own for each of the disk's, as deep.
 */
/*
 * The target core names its configuration's fields ("sector_size=256");
 * the user gave them as this driver's options: say "scsi_sector_size=256"
 * and "scsi_error rule 1: ...".
 */
static void scsi_err_option_names(char *err, size_t errlen)
{
	static const char *const fields[] = {
		"opts=", "every_nth=", "sector_size=", "physblk_exp=",
		"opt_xferlen_exp=", "opt_blks=", "lbpu=", "lbpws=", "lbpws10=",
		"lbprz=", "unmap_alignment=", "unmap_granularity=", "error rule",
	};
	char tmp[512];
	unsigned int i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strncmp(err, fields[i], strlen(fields[i]))) {
			snprintf(tmp, sizeof(tmp), "scsi_%s", err);
			snprintf(err, errlen, "%s", tmp);
			return;
		}
}

static int scsi_create(const struct blk_driver *drv,
		       const struct blk_dev_params *p,
		       const struct blk_dev_config *q,
		       const struct blk_dev_open_args *a, struct blk_dev **dev,
		       char *err, size_t errlen)
{
	struct blk_dev_config lq = *q;
	struct blk_scsi_config sc = { .queue = q };
	struct scsi_tgt_error_rule rules[SCSI_TGT_MAX_ERROR_RULES];
	struct scsi_tgt_config tc;
	const char *lower;
	int ret;

	ret = blk_dev_lower(drv, p, &lower, err, errlen);
	if (ret)
		return ret;
	lq.shared_hctx = false;
	lq.nr_requests = 0;
	lq.shared_tags = false;
	lq.iostats = false;
	lq.stage_timers = false;
	lq.rq_timeout_ms = 0;
	ret = blk_dev_open_lower(lower, p, &lq, a, &sc.lower, err, errlen);
	if (ret)
		return ret;
	sc.max_retries = p->scsi_max_retries;
	ret = scsi_tgt_config_from(p, &tc, rules, err, errlen);
	if (ret) {
		blk_dev_close(sc.lower);
		return ret;
	}
	sc.tgt = &tc;
	if (p->scsi_tmf_fail)
		tc.tmf_fail = p->scsi_tmf_fail;
	tc.tmf_timeout_ms = p->scsi_tmf_timeout_ms;
	sc.queue_depth = p->scsi_queue_depth;
	sc.host_lock = p->scsi_host_lock;
	sc.lld_thread = p->scsi_lld == 1;
	sc.no_10_for_rw = !p->scsi_use_10_for_rw;
	sc.stage_timers = p->scsi_stage_timers;
	ret = blk_scsi_create(&sc, dev, err, errlen); /* owns sc.lower */
	if (ret == -EINVAL)
		scsi_err_option_names(err, errlen);
	return ret;
}

/*
 * dev=iscsi: sd's role and the midlayer (blk_scsi_create()) over the iscsi
 * LLD instead of the loopback one: the disk is LUN LUN of a remote target.
 * The LLD logs in here (errors name the address and the target's words);
 * each hardware queue then has a session of its own.
 */
static int iscsi_create(const struct blk_driver *drv,
			const struct blk_dev_params *p,
			const struct blk_dev_config *q,
			const struct blk_dev_open_args *a, struct blk_dev **dev,
			char *err, size_t errlen)
{
	struct blk_scsi_config sc = { .queue = q };
	struct scsi_iscsi_config ic;
	int ret;

	(void)drv;
	(void)a;
	if (!p->iscsi_target[0]) {
		snprintf(err, errlen, "dev=iscsi needs target=iscsi://HOST[:PORT]/IQN/LUN");
		return -EINVAL;
	}
	scsi_iscsi_config_default(&ic);
	ret = scsi_iscsi_parse_url(p->iscsi_target, &ic.target, err, errlen);
	if (ret)
		return ret;
	ic.initiator_name = p->iscsi_initiator;
	ic.header_digest = p->iscsi_header_digest == 1;
	ic.data_digest = p->iscsi_data_digest == 1;
	ic.max_recv_dsl = p->iscsi_max_recv_dsl;
	ic.first_burst_length = p->iscsi_first_burst;
	ic.max_burst_length = p->iscsi_max_burst;
	ic.immediate_data = p->iscsi_immediate_data;
	ic.initial_r2t = p->iscsi_initial_r2t;
	ic.max_outstanding_r2t = p->iscsi_max_r2t;
	ic.login_timeout_ms = p->iscsi_login_timeout_ms;
	ic.reconnect_timeout_ms = p->iscsi_reconnect_timeout_ms;
	ic.tmf_timeout_ms = p->iscsi_tmf_timeout_ms;
	ic.noop_interval_ms = p->iscsi_noop_interval_ms;
	ic.noop_timeout_ms = p->iscsi_noop_timeout_ms;
	ic.chap_file = p->iscsi_chap_file[0] ? p->iscsi_chap_file : NULL;
	ret = scsi_iscsi_create(&ic, &sc.hostt, &sc.hostdata, err, errlen);
	if (ret)
		return ret;
	sc.max_retries = 5; /* sd's SD_MAX_RETRIES */
	return blk_scsi_create(&sc, dev, err, errlen); /* owns the host */
}

static const char *const nvme_lowers[] = { "ram", "null", "uring", NULL };
static const char *const scsi_lowers[] = { "ram", "null", "uring", NULL };

static const struct blk_driver drivers[] = {
	{ .name = "null", .summary = "no storage: completes requests (null_blk)",
	  .opts = null_opts, .nr_opts = ARRAY_SIZE(null_opts),
	  .create = null_create },
	{ .name = "ram", .summary = "memory; holds what was written, memory grows with the data",
	  .create = ram_create },
	{ .name = "uring", .summary = "a regular file or a block device through io_uring (filename=)",
	  .opts = uring_opts, .nr_opts = ARRAY_SIZE(uring_opts),
	  .create = uring_create },
	{ .name = "nvme", .summary = "NVMe host over an emulated controller; namespace on lower=",
	  .opts = nvme_opts, .nr_opts = ARRAY_SIZE(nvme_opts),
	  .lowers = nvme_lowers, .create = nvme_create },
	{ .name = "scsi", .summary = "SCSI disk (sd, midlayer) over the SCSI target core; LUN 0 on lower=",
	  .opts = scsi_opts, .nr_opts = ARRAY_SIZE(scsi_opts),
	  .lowers = scsi_lowers, .create = scsi_create },
	{ .name = "iscsi", .summary = "SCSI disk (sd, midlayer) over a remote iSCSI target (target=iscsi://HOST[:PORT]/IQN/LUN)",
	  .opts = iscsi_opts, .nr_opts = ARRAY_SIZE(iscsi_opts),
	  .create = iscsi_create },
};


/* ------------------------------------------------------------ registry */

const struct blk_opt_desc *blk_queue_opts(unsigned int *n)
{
	*n = ARRAY_SIZE(queue_opts);
	return queue_opts;
}

const struct blk_driver *blk_drivers(unsigned int *n)
{
	*n = ARRAY_SIZE(drivers);
	return drivers;
}

const struct blk_driver *blk_driver_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(drivers); i++)
		if (!strcmp(drivers[i].name, name))
			return &drivers[i];
	return NULL;
}

const char *blk_driver_names(char *buf, size_t len, const char *sep)
{
	size_t i, n = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(drivers) && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? sep : "",
				      drivers[i].name);
	return buf;
}

static bool in_lowers(const struct blk_driver *drv, const char *name)
{
	const char *const *l;

	for (l = drv->lowers; l && *l; l++)
		if (!strcmp(*l, name))
			return true;
	return false;
}

static const char *lowers_text(const struct blk_driver *drv, char *buf,
			       size_t len)
{
	const char *const *l;
	size_t n = 0;

	buf[0] = '\0';
	for (l = drv->lowers; l && *l && n < len; l++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s",
				      l == drv->lowers ? "" : ", ", *l);
	return buf;
}

int blk_dev_lower(const struct blk_driver *drv, const struct blk_dev_params *p,
		  const char **lower, char *err, size_t errlen)
{
	char allowed[128];

	*lower = NULL;
	if (!drv->lowers) {
		if (p->lower[0]) {
			size_t i, n = 0;

			allowed[0] = '\0';
			for (i = 0; i < ARRAY_SIZE(drivers) && n < sizeof(allowed); i++)
				if (drivers[i].lowers)
					n += (size_t)snprintf(allowed + n, sizeof(allowed) - n,
							      "%s%s", n ? ", " : "",
							      drivers[i].name);
			snprintf(err, errlen,
				 "lower=%s: dev=%s does not stack on another device (drivers that do: %s)",
				 p->lower, drv->name, allowed);
			return -EINVAL;
		}
		return 0;
	}
	if (p->lower[0]) {
		if (!in_lowers(drv, p->lower) || !strcmp(p->lower, drv->name)) {
			snprintf(err, errlen, "lower=%s: dev=%s stacks on %s",
				 p->lower, drv->name,
				 lowers_text(drv, allowed, sizeof(allowed)));
			return -EINVAL;
		}
		*lower = blk_driver_find(p->lower)->name;
	} else if (p->filename[0] && in_lowers(drv, "uring")) {
		*lower = "uring";
	} else if (!strcmp(drv->name, "nvme")) {
		*lower = p->nvme_ns == 1 ? "null" : "ram"; /* nvme_ns= */
	} else {
		*lower = drv->lowers[0];
	}
	if (!strcmp(*lower, "uring") && !p->filename[0]) {
		snprintf(err, errlen,
			 "lower=uring: needs filename=PATH (a file, created with size= when missing, or a block device)");
		return -EINVAL;
	}
	return 0;
}

/* ---------------------------------------------------- options the user gave */

_Static_assert(ARRAY_SIZE(queue_opts) + ARRAY_SIZE(uring_opts) +
	       ARRAY_SIZE(null_opts) + ARRAY_SIZE(nvme_opts) +
	       ARRAY_SIZE(scsi_opts) + ARRAY_SIZE(iscsi_opts) <= 64 * BLK_DEV_GIVEN_WORDS,
	       "raise BLK_DEV_GIVEN_WORDS: struct blk_dev_params.given has a bit per registry option");

/*
 * The registry's number of @d: the queue options first, then each
 * driver's in table order; -1 for a descriptor that is not the registry's.
 * @owner: when set, the driver whose option it is (NULL: a queue option).
 */
static int opt_index(const struct blk_opt_desc *d,
		     const struct blk_driver **owner)
{
	size_t i, k, base = ARRAY_SIZE(queue_opts);

	if (owner)
		*owner = NULL;
	for (k = 0; k < ARRAY_SIZE(queue_opts); k++)
		if (d == &queue_opts[k])
			return (int)k;
	for (i = 0; i < ARRAY_SIZE(drivers); i++) {
		for (k = 0; k < drivers[i].nr_opts; k++) {
			if (d != &drivers[i].opts[k])
				continue;
			if (owner)
				*owner = &drivers[i];
			return (int)(base + k);
		}
		base += drivers[i].nr_opts;
	}
	return -1;
}

void blk_dev_set_given(struct blk_dev_params *p, const struct blk_opt_desc *d)
{
	int i = opt_index(d, NULL);

	if (i >= 0)
		p->given[i / 64] |= 1ull << (i % 64);
}

bool blk_dev_is_given(const struct blk_dev_params *p,
		      const struct blk_opt_desc *d)
{
	int i = opt_index(d, NULL);

	return i >= 0 && ((p->given[i / 64] >> (i % 64)) & 1);
}

/* A number option's field (bool, uint32_t or uint64_t) in @p. */
static uint64_t opt_get(const struct blk_opt_desc *d,
			const struct blk_dev_params *p)
{
	const char *f = (const char *)p + d->off;
	uint32_t v32;
	uint64_t v64;
	bool b;

	switch (d->len) {
	case sizeof(bool):
		memcpy(&b, f, sizeof(b));
		return b;
	case sizeof(uint32_t):
		memcpy(&v32, f, sizeof(v32));
		return v32;
	default:
		memcpy(&v64, f, sizeof(v64));
		return v64;
	}
}

static void opt_put(const struct blk_opt_desc *d, struct blk_dev_params *p,
		    uint64_t v)
{
	char *f = (char *)p + d->off;
	uint32_t v32 = (uint32_t)v;
	bool b = v;

	switch (d->len) {
	case sizeof(bool):
		memcpy(f, &b, sizeof(b));
		break;
	case sizeof(uint32_t):
		memcpy(f, &v32, sizeof(v32));
		break;
	default:
		memcpy(f, &v, sizeof(v));
		break;
	}
}

/* @d's value in @p for a message: "64", "20us", "defer", a list's first. */
static const char *opt_text(const struct blk_opt_desc *d,
			    const struct blk_dev_params *p, char *buf,
			    size_t len)
{
	static const struct { uint64_t ns; const char *unit; } units[] = {
		{ NSEC_PER_SEC, "s" }, { NSEC_PER_MSEC, "ms" }, { 1000, "us" },
	};
	const char *f = (const char *)p + d->off;
	const struct blk_opt_choice *c;
	size_t i, n;
	uint64_t v;

	if (d->type == BLK_OPT_STR || (d->flags & BLK_OPT_F_CHOICE_STR)) {
		/* the user's text: at most 64 bytes of it, no control bytes */
		for (n = 0; n < d->len && f[n] && n < 64 && n + 4 < len; n++)
			buf[n] = (unsigned char)f[n] < 0x20 || f[n] == 0x7f ? '?' : f[n];
		snprintf(buf + n, len - n, "%s", n < d->len && f[n] ? "..." : "");
		return buf;
	}
	v = opt_get(d, p);
	for (c = d->type == BLK_OPT_CHOICE ? d->choices : NULL; c && c->name; c++)
		if ((uint64_t)c->val == v) {
			snprintf(buf, len, "%s", c->name);
			return buf;
		}
	if (d->type == BLK_OPT_TIME && v) {
		v *= d->store_ns;
		for (i = 0; i < ARRAY_SIZE(units); i++)
			if (!(v % units[i].ns)) {
				snprintf(buf, len, "%llu%s",
					 (unsigned long long)(v / units[i].ns),
					 units[i].unit);
				return buf;
			}
		snprintf(buf, len, "%lluns", (unsigned long long)v);
		return buf;
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/*
 * What a lower device cannot take beneath a stacking driver (nvme, scsi),
 * and why.  lower_params() gives the lower @forced instead of a value
 * refused here, and blk_dev_check_opt() refuses the option when the user
 * gave it that value: an option taken and then dropped is an option
 * silently ignored.  A lower takes all its other options as given: a null
 * lower's irqmode, completion_nsec, spin_nsec, fail_every and
 * requeue_every (latency, CPU cost and errors beneath an NVMe or SCSI
 * disk, which its host driver handles as a device's: nvme retries the
 * errors nvme_max_retries times, sd reports MEDIUM ERROR), a uring
 * lower's sqthread_poll and uring_taskrun=signal.  Their defaults are the
 * same off, inline values the lower had before it took them.
 */
static const struct lower_rule {
	const char *lower;	/* the lower driver */
	const char *opt;	/* its option */
	bool any;		/* every value but @forced is refused, */
	uint64_t refused;	/* else only this one */
	uint64_t forced;	/* what the lower gets instead */
	const char *why;
} lower_rules[] = {
	{ "uring", "fixedbufs", .any = true, .forced = 0,
	  .why = "registered buffers are the submitter's (bench's), and a stacking driver hands its lower the buffers of its own requests, which nothing registers with the lower's rings: it would do nothing there; allowed 0" },
	{ "uring", "uring_taskrun", .refused = BLK_URING_TASKRUN_DEFER,
	  .forced = BLK_URING_TASKRUN_COOP,
	  .why = "DEFER_TASKRUN ties a ring to one submitting thread, and a lower's queues are submitted to by the upper driver's threads, the jobs', the controller's or the LLD's (nvme_ctrl=inline hung on it); allowed coop, signal" },
	{ "null", "timeout_every", .any = true, .forced = 0,
	  .why = "a request the lower never completes ends only at the lower's own timeout (30 s) while the upper driver's error handling waits for it: nvme's controller reset fails and the controller is declared dead, scsi's stalls the run; lose commands in the upper device instead: nvme_fault=op=read,drop (nvme), scsi_opts=0x4 with scsi_every_nth=N (scsi); allowed 0" },
};

static const struct blk_opt_desc *drv_opt(const struct blk_driver *drv,
					  const char *name)
{
	unsigned int i;

	for (i = 0; i < drv->nr_opts; i++)
		if (!strcmp(drv->opts[i].name, name))
			return &drv->opts[i];
	return NULL;
}

/* The rule by which a @lower lower refuses @d's value in @p, or NULL. */
static const struct lower_rule *lower_refuses(const struct blk_driver *lower,
					      const struct blk_opt_desc *d,
					      const struct blk_dev_params *p)
{
	const struct lower_rule *r;
	uint64_t v;

	for (r = lower_rules; r < lower_rules + ARRAY_SIZE(lower_rules); r++) {
		if (strcmp(r->lower, lower->name) || strcmp(r->opt, d->name))
			continue;
		v = opt_get(d, p);
		if (r->any ? v != r->forced : v == r->refused)
			return r;
	}
	return NULL;
}

/* What a stacking driver's lower device @lower is built with (see lower_rules). */
static void lower_params(const struct blk_dev_params *p,
			 const struct blk_driver *lower,
			 struct blk_dev_params *lp)
{
	const struct lower_rule *r;
	const struct blk_opt_desc *d;

	*lp = *p;
	for (r = lower_rules; r < lower_rules + ARRAY_SIZE(lower_rules); r++) {
		if (strcmp(r->lower, lower->name))
			continue;
		d = drv_opt(lower, r->opt);
		if (d && lower_refuses(lower, d, p))
			opt_put(d, lp, r->forced);
	}
}

/* One more line of @err ('\n' before all but the first). */
static void err_line(char *err, size_t errlen, const char *line)
{
	size_t n = strnlen(err, errlen);

	if (n + 1 < errlen)
		snprintf(err + n, errlen - n, "%s%s", n ? "\n" : "", line);
}

/*
 * The lower device of a stack of the run whose top is @top: none when
 * @top stacks on nothing (lower= is for the stacking drivers of a list).
 */
static int stack_lower(const struct blk_driver *top,
		       const struct blk_dev_params *p, const char **lower,
		       char *err, size_t errlen)
{
	*lower = NULL;
	return top->lowers ? blk_dev_lower(top, p, lower, err, errlen) : 0;
}

/* "this stack is scsi on ram", "the stacks are null, nvme on null" */
static void stacks_text(const char *const *names, unsigned int n,
			const struct blk_dev_params *p, char *buf, size_t len)
{
	const struct blk_driver *drv;
	const char *lower;
	char unused[256];
	unsigned int i;
	size_t k;

	k = (size_t)snprintf(buf, len, "%s", n == 1 ? "this stack is" :
			     "the stacks are");
	for (i = 0; i < n && k < len; i++) {
		drv = blk_driver_find(names[i]);
		if (!drv || stack_lower(drv, p, &lower, unused, sizeof(unused)))
			lower = NULL;
		k += (size_t)snprintf(buf + k, len - k, "%s %s%s%s",
				      i ? "," : "", names[i],
				      lower ? " on " : "", lower ? lower : "");
	}
}

/*
 * Whether a stack of @names takes @owner's option @d with its value in @p:
 * @owner is on top, or is the lower and does not refuse it.  When only
 * lowers that refuse it have it, @rule and @upper say the first one.
 */
static bool stacks_take(const char *const *names, unsigned int n,
			const struct blk_dev_params *p,
			const struct blk_driver *owner,
			const struct blk_opt_desc *d,
			const struct lower_rule **rule,
			const struct blk_driver **upper)
{
	const struct blk_driver *top;
	const struct lower_rule *r;
	const char *lower;
	char unused[256];
	unsigned int s;

	*rule = NULL;
	for (s = 0; s < n; s++) {
		top = blk_driver_find(names[s]);
		if (!top)
			continue;
		if (top == owner)
			return true;
		if (stack_lower(top, p, &lower, unused, sizeof(unused)) ||
		    !lower || strcmp(lower, owner->name))
			continue;
		r = lower_refuses(owner, d, p);
		if (!r)
			return true;
		if (!*rule) {
			*rule = r;
			*upper = top;
		}
	}
	return false;
}

int blk_dev_check_opt(const char *const *names, unsigned int n,
		      const struct blk_dev_params *p,
		      const struct blk_opt_desc *d, char *err, size_t errlen)
{
	const struct blk_driver *owner, *upper = NULL;
	const struct lower_rule *rule;
	char stacks[512], val[80], also[128];
	unsigned int s;
	size_t m = 0;

	err[0] = '\0';
	if (opt_index(d, &owner) < 0 || !owner ||
	    stacks_take(names, n, p, owner, d, &rule, &upper))
		return 0;
	stacks_text(names, n, p, stacks, sizeof(stacks));
	opt_text(d, p, val, sizeof(val));
	if (rule) {
		snprintf(err, errlen, "%s=%s: not for a %s lower (dev=%s on lower=%s): %s",
			 d->name, val, owner->name, upper->name, owner->name,
			 rule->why);
		return -EINVAL;
	}
	/* the stacking drivers it would be taken beneath */
	also[0] = '\0';
	for (s = 0; s < ARRAY_SIZE(drivers) && m < sizeof(also); s++)
		if (in_lowers(&drivers[s], owner->name) &&
		    !lower_refuses(owner, d, p))
			m += (size_t)snprintf(also + m, sizeof(also) - m, "%s%s",
					      m ? ", " : "", drivers[s].name);
	if (m)
		snprintf(err, errlen, "%s=%s: an option of dev=%s, and of lower=%s under %s; %s",
			 d->name, val, owner->name, owner->name, also, stacks);
	else
		snprintf(err, errlen, "%s=%s: an option of dev=%s; %s", d->name,
			 val, owner->name, stacks);
	return -EINVAL;
}

int blk_dev_check_given(const char *const *names, unsigned int n,
			const struct blk_dev_params *p, char *err,
			size_t errlen)
{
	const struct blk_driver *top;
	char line[1024], known[64];
	const char *lower;
	unsigned int i, s, k;
	int ret = 0;

	err[0] = '\0';
	for (s = 0; s < n; s++) {
		top = blk_driver_find(names[s]);
		if (!top) {
			snprintf(err, errlen, "dev=%s: unknown device, allowed %s",
				 names[s], blk_driver_names(known, sizeof(known), ", "));
			return -EINVAL;
		}
		if (stack_lower(top, p, &lower, err, errlen))
			return -EINVAL;
	}
	for (k = 0; k < ARRAY_SIZE(drivers); k++)
		for (i = 0; i < drivers[k].nr_opts; i++) {
			const struct blk_opt_desc *d = &drivers[k].opts[i];

			if (!blk_dev_is_given(p, d) ||
			    !blk_dev_check_opt(names, n, p, d, line, sizeof(line)))
				continue;
			err_line(err, errlen, line);
			ret = -EINVAL;
		}
	return ret;
}

/* The queue limits @p asks for, for @a's threads. */
static int queue_config(const struct blk_dev_params *p,
			const struct blk_dev_open_args *a,
			struct blk_dev_config *q, char *err, size_t errlen)
{
	memset(q, 0, sizeof(*q));
	q->capacity = p->dev_size ? p->dev_size : a->size;
	q->logical_block_size = p->logical_block_size;
	q->max_sectors = p->max_sectors;
	q->max_segments = p->max_segments;
	/* automatic: one per thread, at most the core's 256 (threads then share) */
	q->nr_hw_queues = p->nr_hw_queues ? p->nr_hw_queues :
		a->nr_threads > DEV_MAX_AUTO_HW_QUEUES ? DEV_MAX_AUTO_HW_QUEUES :
							 a->nr_threads;
	if (!q->nr_hw_queues)
		q->nr_hw_queues = 1;
	q->queue_depth = p->hw_queue_depth;
	q->shared_tags = p->shared_tags;
	q->shared_hctx = a->nr_threads > q->nr_hw_queues;
	q->iostats = p->iostats;
	q->rq_timeout_ms = p->rq_timeout_ms;
	q->run_batch = p->run_batch;
	q->wait_mode = (uint8_t)p->completion_wait;
	q->spin_max_ns = (uint32_t)p->spin_max_ns;
	q->stage_timers = p->stage_timers || p->stage_windows[0];
	if (p->stage_windows[0] &&
	    blk_stage_window_parse(p->stage_windows, &q->stage_win_from,
				   &q->stage_win_to, err, errlen))
		return -EINVAL;
#ifndef BLK_STAGE_TIMERS
	if (q->stage_timers) {
		snprintf(err, errlen, "%s: this build has no stage timers (cmake -DBLK_STAGE_TIMERS=ON)",
			 p->stage_timers ? "stage_timers=1" : "stage_windows");
		return -EINVAL;
	}
#endif
	if (q->logical_block_size && q->capacity % q->logical_block_size) {
		snprintf(err, errlen,
			 "dev_size=%llu: not a multiple of logical_block_size=%u",
			 (unsigned long long)q->capacity, q->logical_block_size);
		return -EINVAL;
	}
	return 0;
}

static int dev_create(const struct blk_driver *drv,
		      const struct blk_dev_params *p,
		      const struct blk_dev_config *q,
		      const struct blk_dev_open_args *a, struct blk_dev **dev,
		      char *err, size_t errlen)
{
	int ret;

	err[0] = '\0';
	ret = drv->create(drv, p, q, a, dev, err, errlen);
	if (ret && !err[0])
		snprintf(err, errlen, "%s: cannot create device: %s", drv->name,
			 strerror(-ret));
	return ret;
}

int blk_dev_open_lower(const char *name, const struct blk_dev_params *p,
		       const struct blk_dev_config *q,
		       const struct blk_dev_open_args *a, struct blk_dev **dev,
		       char *err, size_t errlen)
{
	const struct blk_driver *drv = blk_driver_find(name);
	struct blk_dev_params lp;

	if (!drv) {
		snprintf(err, errlen, "lower=%s: unknown driver", name);
		return -EINVAL;
	}
	lower_params(p, drv, &lp);
	return dev_create(drv, &lp, q, a, dev, err, errlen);
}

int blk_dev_open(const char *name, const struct blk_dev_params *p,
		 const struct blk_dev_open_args *a, struct blk_dev **dev,
		 char *err, size_t errlen)
{
	const struct blk_driver *drv = blk_driver_find(name);
	enum blk_elevator elv = BLK_ELV_NONE;
	struct blk_dev_config q;
	const char *lower;
	char names[64];
	int ret;

	if (!drv) {
		snprintf(err, errlen, "dev=%s: unknown device, allowed %s", name,
			 blk_driver_names(names, sizeof(names), ", "));
		return -EINVAL;
	}
	ret = blk_dev_lower(drv, p, &lower, err, errlen);
	if (ret)
		return ret;
	ret = queue_config(p, a, &q, err, errlen);
	if (ret)
		return ret;
	if (p->elevator[0] && blk_elevator_parse(p->elevator, &elv)) {
		snprintf(err, errlen, "elevator=%s: allowed none, mq-deadline",
			 p->elevator);
		return -EINVAL;
	}
	ret = dev_create(drv, p, &q, a, dev, err, errlen);
	if (ret)
		return ret;
	if (elv != BLK_ELV_NONE) {
		ret = blk_dev_set_elevator(*dev, elv);
		if (ret) {
			snprintf(err, errlen, "elevator=%s: %s", p->elevator,
				 strerror(-ret));
			blk_dev_close(*dev);
			*dev = NULL;
			return ret;
		}
	}
	return 0;
}
