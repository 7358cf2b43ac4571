/* SPDX-License-Identifier: MIT */
/*
 * The device registry: the one place consumers (bench, serve, later the
 * iSCSI target) get block devices from.  A table of drivers, each with a
 * name, a one-line summary, its option descriptors (units, ranges,
 * defaults, help) and a create function; a stacking driver (nvme) names
 * the drivers it can sit on and gets its lower device built by the
 * registry.  A consumer fills a struct blk_dev_params (from text through
 * the descriptors, or directly) and calls blk_dev_open() with a driver's
 * name; a driver added later is one more table entry in src/dev/registry.c.
 *
 * Stacking: a driver with ->lowers sits on a lower device.  Which one:
 * lower= when given (any of ->lowers), else uring when filename= is set,
 * else the driver's own default (nvme: nvme_ns=, ram unless null).
 */
#ifndef BLKSTACK_DEV_H
#define BLKSTACK_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk.h"

#ifdef __cplusplus
extern "C" {
#endif

/** enum blk_opt_type - how an option's text value is read. */
enum blk_opt_type {
	BLK_OPT_UINT = 0, /* number with optional k/m/g suffix (fio's int) */
	BLK_OPT_SIZE,     /* bytes, same syntax */
	BLK_OPT_TIME,     /* duration: a number with ns/us/ms/s/m/h/d */
	BLK_OPT_BOOL,     /* 0 | 1; a bare option means 1 */
	BLK_OPT_STR,      /* text copied into a char array */
	BLK_OPT_CHOICE,   /* one word out of ->choices */
};

#define BLK_OPT_F_ALIGN512   0x1  /* value must be a multiple of 512 */
#define BLK_OPT_F_POW2       0x2  /* value must be a power of two */
#define BLK_OPT_F_CHOICE_STR 0x4  /* a choice stored as its name */
#define BLK_OPT_F_PRINTABLE  0x8  /* text without control characters */
#define BLK_OPT_F_LIST       0x10 /* text, one more entry per use */

/** struct blk_opt_choice - one word a BLK_OPT_CHOICE option accepts. */
struct blk_opt_choice {
	const char *name;
	int val;
};

/**
 * struct blk_opt_desc - one device option.
 * @name: the option's name (fio's or null_blk's where one exists).
 * @alias: other spellings, NULL-terminated.
 * @type: enum blk_opt_type.
 * @off, @len: the field in struct blk_dev_params the value is stored in.
 * @min, @max: the allowed range (BLK_OPT_TIME: in ns).
 * @unit_ns: BLK_OPT_TIME: the unit of a bare number.
 * @store_ns: BLK_OPT_TIME: the unit of the stored field.
 * @flags: BLK_OPT_F_*.
 * @choices: BLK_OPT_CHOICE: the words, NULL-name terminated.
 * @hidden: also accepted, not listed.
 * @unsupported: words of fio's that are refused as unsupported.
 * @metavar: placeholder in usage texts when the type's is wrong.
 * @def: the default as text; NULL: zero.
 * @help: one line.
 * @count_off: BLK_OPT_F_LIST: the unsigned int counting the entries of the
 *	char[@list_max][@len] array at @off.
 * @list_max: BLK_OPT_F_LIST: entries at most.
 * @check: when set, called with the text before it is stored: 0, or
 *	-EINVAL with a reason in @why.
 * @bits: BLK_OPT_UINT that is a bit mask: its bits and their names,
 *	NULL-name terminated (@max is their OR).  Its range is shown in hex,
 *	and a value with another bit set is refused, the bits named.
 */
struct blk_opt_desc {
	const char *name;
	const char *alias[3];
	enum blk_opt_type type;
	size_t off, len;
	uint64_t min, max;
	uint64_t unit_ns, store_ns;
	unsigned int flags;
	const struct blk_opt_choice *choices;
	const struct blk_opt_choice *hidden;
	const char *const *unsupported;
	const char *metavar;
	const char *def;
	const char *help;
	size_t count_off;
	unsigned int list_max;
	int (*check)(const char *val, char *why, size_t whylen);
	const struct blk_opt_choice *bits;
};

#define BLK_DEV_MAX_NVME_FAULTS 16 /* the emulated controller's rule table */
#define BLK_DEV_MAX_SCSI_ERRORS 16  /* scsi_error= given that many times */
#define BLK_DEV_GIVEN_WORDS 2       /* 64 options each: every registry option */

/*
 * struct blk_dev_params - every device option's value; the descriptors'
 * @off and @len point into it.  Names follow Linux null_blk's module
 * parameters, queue sysfs attributes and fio's io_uring engine.
 */
struct blk_dev_params {
	/* the queue: every driver */
	uint64_t dev_size;          /* dev_size=, bytes; 0: the consumer's size */
	uint32_t logical_block_size; /* logical_block_size=, bytes, 512..65536 power of 2 (512) */
	uint32_t max_sectors;       /* max_sectors=, 512-byte sectors, 8..65536 (2560) */
	uint32_t max_segments;      /* max_segments=, 1..4096 (128) */
	uint32_t nr_hw_queues;      /* nr_hw_queues=, 0: one per submitting thread, 1..256 */
	uint32_t hw_queue_depth;    /* hw_queue_depth=, 1..65536 (256) */
	bool shared_tags;           /* shared_tags=0|1 (0) */
	char elevator[16];          /* elevator= or ioscheduler=: none | mq-deadline (none) */
	bool iostats;               /* iostats=0|1 (1) */
	uint32_t run_batch;         /* run_batch=, completions before a stopped queue re-runs (1) */
	uint32_t rq_timeout_ms;     /* rq_timeout=, ms, 1..3600000 (30000) */
	uint32_t completion_wait;   /* completion_wait=: enum blk_wait_mode (adaptive) */
	uint64_t spin_max_ns;       /* spin_max=, ns (200 us) */
	char lower[16];             /* lower=: a stacking driver's lower device ("": default) */
	bool stage_timers;          /* stage_timers=0|1 (0) */
	char stage_windows[32];     /* stage_windows=STAGE_A:STAGE_B ("": none) */
	/* uring */
	char filename[4096];        /* filename=: file or block device */
	bool direct;                /* direct=0|1: O_DIRECT (0) */
	bool registerfiles;         /* registerfiles=0|1 (1) */
	bool fixedbufs;             /* fixedbufs=0|1 (1) */
	bool sqthread_poll;         /* sqthread_poll=0|1 (0) */
	uint32_t uring_taskrun;     /* uring_taskrun=: enum blk_uring_taskrun (coop) */
	uint32_t uring_inline;      /* uring_inline=: enum blk_uring_inline (auto) */
	uint32_t uring_engine;      /* uring_engine=: enum blk_uring_engine (auto) */
	uint32_t pool_threads;      /* pool_threads=, 1..256 (16) */
	uint32_t force_async;       /* force_async=N, 0 off (0) */
	uint32_t uring_iowq_max_workers; /* uring_iowq_max_workers=, 0: kernel's (0) */
	/* null */
	uint32_t irqmode;           /* irqmode=0 inline, 1 thread, 2 timer (0) */
	uint64_t completion_nsec;   /* completion_nsec=, ns, for irqmode=2 (10000) */
	uint64_t spin_nsec;         /* spin_nsec=, ns of busy wait per request in queue_rq (0) */
	bool memory_backed;         /* memory_backed=0|1 (0) */
	uint64_t fail_every;        /* fail_every=N, 0 off */
	uint64_t timeout_every;     /* timeout_every=N, 0 off */
	uint64_t requeue_every;     /* requeue_every=N, 0 off */
	bool discard_keeps_data;    /* discard_keeps_data=0|1: discard leaves the data (0) */
	/* nvme */
	uint32_t nvme_queues;       /* nvme_queues=, 0..256 (0: as nr_hw_queues) */
	uint32_t nvme_qd;           /* nvme_qd=, 2..65536 (1024) */
	uint32_t nvme_ctrl;         /* nvme_ctrl=thread|inline (thread) */
	uint32_t nvme_sqe_init;     /* nvme_sqe_init=memset|fields (fields) */
	uint32_t nvme_ns;           /* nvme_ns=ram|null (ram) */
	uint32_t nvme_max_retries;  /* nvme_max_retries=, 0..255 (5) */
	char nvme_faults[BLK_DEV_MAX_NVME_FAULTS][256]; /* nvme_fault=SPEC */
	unsigned int nr_nvme_faults;
	/* scsi */
	uint32_t scsi_max_retries;  /* scsi_max_retries=, 0..255 (5) */
	char scsi_every_nth[16];    /* scsi_every_nth=N, -2^31..2^31-1, 0 off */
	uint32_t scsi_opts;         /* scsi_opts=, scsi_debug's bits (0) */
	uint32_t scsi_tmf_fail;     /* scsi_tmf_fail=, SCSI_TGT_TMF_FAIL_* (0) */
	uint32_t scsi_tmf_timeout_ms; /* scsi_tmf_timeout=, ms (10 s) */
	uint32_t scsi_queue_depth;  /* scsi_queue_depth=, budget tokens (0 none) */
	bool scsi_host_lock;        /* scsi_host_lock=0|1 (0) */
	uint32_t scsi_lld;          /* scsi_lld=inline|thread (inline) */
	bool scsi_use_10_for_rw;    /* scsi_use_10_for_rw=0|1 (1) */
	bool scsi_stage_timers;     /* scsi_stage_timers=0|1 (0) */
	/* scsi_debug's other parameters (struct scsi_tgt_config) */
	uint32_t scsi_sector_size;  /* scsi_sector_size=, bytes, 512..4096 (0: lower's) */
	uint32_t scsi_physblk_exp;  /* scsi_physblk_exp=, 0..15 (0) */
	uint32_t scsi_opt_xferlen_exp; /* scsi_opt_xferlen_exp=, 0..15 (0) */
	uint32_t scsi_opt_blks;     /* scsi_opt_blks=, logical blocks (0: derived) */
	uint32_t scsi_lbpu, scsi_lbpws, scsi_lbpws10, scsi_lbprz; /* auto|0|1: enum scsi_tgt_lbp */
	uint32_t scsi_unmap_max_blocks; /* scsi_unmap_max_blocks=, logical blocks (4194304) */
	uint32_t scsi_unmap_max_desc; /* scsi_unmap_max_desc= (256) */
	uint32_t scsi_unmap_granularity; /* scsi_unmap_granularity=, logical blocks (1) */
	uint32_t scsi_unmap_alignment; /* scsi_unmap_alignment=, logical blocks (0) */
	uint32_t scsi_write_same_length; /* scsi_write_same_length=, logical blocks (4194304) */
	bool scsi_removable;        /* scsi_removable=0|1 (0) */
	bool scsi_wp;               /* scsi_wp=0|1 (0) */
	uint32_t scsi_delay_ms;     /* scsi_delay=, ms (0) */
	uint64_t scsi_ndelay_ns;    /* scsi_ndelay=, ns (0) */
	uint32_t scsi_tur_ms_to_ready; /* scsi_tur_ms_to_ready=, ms (0) */
	char scsi_errors[BLK_DEV_MAX_SCSI_ERRORS][256]; /* scsi_error=RULE[;RULE...] */
	unsigned int nr_scsi_errors;
	/* iscsi: the SCSI disk over the iscsi LLD (blkstack/scsi_iscsi.h) */
	char iscsi_target[1024];    /* target=iscsi://HOST[:PORT]/IQN/LUN */
	char iscsi_initiator[224];  /* iscsi_initiator=IQN ("": the default) */
	uint32_t iscsi_header_digest; /* iscsi_header_digest=none|crc32c (none) */
	uint32_t iscsi_data_digest; /* iscsi_data_digest=none|crc32c (none) */
	uint32_t iscsi_max_recv_dsl; /* iscsi_max_recv_dsl=, bytes, 512..16M-1 (256k) */
	uint32_t iscsi_first_burst; /* iscsi_first_burst=, bytes (256k) */
	uint32_t iscsi_max_burst;   /* iscsi_max_burst=, bytes (1m) */
	bool iscsi_immediate_data;  /* iscsi_immediate_data=0|1 (1) */
	bool iscsi_initial_r2t;     /* iscsi_initial_r2t=0|1 (0) */
	uint32_t iscsi_max_r2t;     /* iscsi_max_r2t=, 1..65535 (8) */
	uint32_t iscsi_login_timeout_ms; /* iscsi_login_timeout=, ms (15 s) */
	uint32_t iscsi_reconnect_timeout_ms; /* iscsi_reconnect_timeout=, ms (15 s) */
	uint32_t iscsi_tmf_timeout_ms; /* iscsi_tmf_timeout=, ms (10 s) */
	uint32_t iscsi_noop_interval_ms; /* iscsi_noop_interval=, ms (5 s; 0: no pings) */
	uint32_t iscsi_noop_timeout_ms; /* iscsi_noop_timeout=, ms (5 s) */
	char iscsi_chap_file[1024]; /* iscsi_chap_file=PATH ("": environment) */
	/*
	 * The options the user gave, a bit per registry descriptor
	 * (blk_dev_set_given()): what blk_dev_check_given() judges.  A
	 * consumer that sets fields itself leaves it zero.
	 */
	uint64_t given[BLK_DEV_GIVEN_WORDS];
};

/**
 * struct blk_dev_open_args - what the consumer, not the user, decides.
 * @size: capacity in bytes when dev_size= is 0.
 * @create_size: bytes a missing uring file is created with when dev_size=
 *	is 0 (0: the file must exist).
 * @create_empty: dev=uring: a missing file is created empty, not sized
 *	to @create_size, which is the capacity all the same (blk_uring_config).
 * @nr_threads: threads that will submit; nr_hw_queues=0 gives one queue
 *	each (at most 256), and more threads than queues share them.
 */
struct blk_dev_open_args {
	uint64_t size;
	uint64_t create_size;
	bool create_empty;
	unsigned int nr_threads;
};

struct blk_dev_config;

/**
 * struct blk_driver - one registry entry.
 * @name: what --dev= takes.
 * @summary: one line for usage texts.
 * @opts, @nr_opts: the driver's own options (the queue's are shared:
 *	blk_queue_opts()).
 * @lowers: the drivers it can stack on, NULL-terminated, the default
 *	first; NULL: it stacks on nothing.
 * @create: build the device on the queue limits @q the registry computed
 *	from @p.  Return 0 or -errno with a message in @err.
 */
struct blk_driver {
	const char *name;
	const char *summary;
	const struct blk_opt_desc *opts;
	unsigned int nr_opts;
	const char *const *lowers;
	int (*create)(const struct blk_driver *drv,
		      const struct blk_dev_params *p,
		      const struct blk_dev_config *q,
		      const struct blk_dev_open_args *a, struct blk_dev **dev,
		      char *err, size_t errlen);
};

/**
 * blk_queue_opts() - the options every driver takes (queue limits, tags,
 * elevator, timeouts, waiting, lower=).
 * @n: set to their number.
 * Return: the descriptors (static).
 * Context: any thread.
 */
const struct blk_opt_desc *blk_queue_opts(unsigned int *n);

/**
 * blk_drivers() - the registry's table.
 * @n: set to the number of drivers.
 * Return: the entries (static), in the order usage texts list them.
 * Context: any thread.
 */
const struct blk_driver *blk_drivers(unsigned int *n);

/**
 * blk_driver_find() - the entry named @name.
 * Return: the entry, or NULL when no driver has that name.
 * Context: any thread.
 */
const struct blk_driver *blk_driver_find(const char *name);

/**
 * blk_driver_names() - the drivers' names joined by @sep, for messages
 * ("null|ram|uring|nvme").
 * Return: @buf.
 */
const char *blk_driver_names(char *buf, size_t len, const char *sep);

/**
 * blk_dev_lower() - the lower driver a stacking driver @drv sits on with
 * @p (lower=, else uring for filename=, else the driver's default).
 * @lower: set to its name, or NULL when @drv stacks on nothing.
 * Return: 0; -EINVAL with a message in @err when lower= names a driver @drv
 * cannot stack on, or lower= is given to a driver that stacks on nothing,
 * or lower=uring has no filename=.
 * Context: any thread.
 */
int blk_dev_lower(const struct blk_driver *drv, const struct blk_dev_params *p,
		  const char **lower, char *err, size_t errlen);

/**
 * blk_dev_set_given() - record in @p that the user gave option @d.
 * @d: one of the registry's descriptors (blk_queue_opts(), a driver's
 *	->opts); others are ignored.
 * Context: any thread; @p is the caller's.
 */
void blk_dev_set_given(struct blk_dev_params *p, const struct blk_opt_desc *d);

/** blk_dev_is_given() - whether blk_dev_set_given() recorded @d in @p. */
bool blk_dev_is_given(const struct blk_dev_params *p,
		      const struct blk_opt_desc *d);

/**
 * blk_dev_check_given() - refuse the driver options the user gave that no
 * device of the run takes.
 * @names, @n: the drivers that will run (each with its lower device, as
 *	blk_dev_lower() chooses it from @p).
 * @p: the parameters, with the options the user gave marked
 *	(blk_dev_set_given()); defaults never count.
 *
 * The queue options (blk_queue_opts()) are every driver's.  A driver's own
 * option is taken where that driver is in a stack of the run, on top or as
 * the lower device, except the few a lower device cannot take (lower_rules[]
 * in registry.c, each with its reason): those are refused there.  In
 * a list of several stacks an option is for the stacks that take it, as
 * lower= is; it is refused when none does.
 * Return: 0; -EINVAL with one line per refused option in @err ('\n'
 * between them), naming the option and its value, the driver(s) it
 * belongs to and the stacks of the run ("nvme_qd=64: an option of
 * dev=nvme; this stack is scsi on ram"); -EINVAL from blk_dev_lower() or
 * for an unknown driver, with its message.
 * Context: any thread.
 */
int blk_dev_check_given(const char *const *names, unsigned int n,
			const struct blk_dev_params *p, char *err,
			size_t errlen);

/**
 * blk_dev_check_opt() - blk_dev_check_given() for the one option @d, as
 * if the user gave it: for a consumer that says where each option came
 * from (bench: the job file's line).
 * Return: 0 (also for a queue option); -EINVAL with the line in @err.  A
 * stack whose lower= is wrong counts as one with no lower here.
 * Context: any thread.
 */
int blk_dev_check_opt(const char *const *names, unsigned int n,
		      const struct blk_dev_params *p,
		      const struct blk_opt_desc *d, char *err, size_t errlen);

/**
 * blk_dev_open() - build a device of driver @name with @p.
 * @name: a registry driver's name.
 * @p: option values (every field set: defaults included).
 * @a: the consumer's sizes and threads.
 * @dev: set on success; blk_dev_close() frees it and any lower device.
 * @err: a message naming the option and the allowed values on failure.
 * Return: 0; -EINVAL (unknown driver, bad combination of options); -ENOMEM;
 * -EFBIG (ram beyond 1 EiB); other -errno from the driver's create
 * (uring: from open() or io_uring_setup(), see blk_uring_create()).
 * Context: any thread.
 */
int blk_dev_open(const char *name, const struct blk_dev_params *p,
		 const struct blk_dev_open_args *a, struct blk_dev **dev,
		 char *err, size_t errlen);

/**
 * blk_dev_open_lower() - for a stacking driver's create: build its lower
 * device, driver @name, on the queue limits @q the stacking driver chose.
 * @p: the stacking device's parameters; the lower gets them all but the
 * few it cannot take, which get a value that works beneath a stacking
 * driver (a uring lower: no registered buffers, and COOP instead of
 * DEFER_TASKRUN; a null lower: no timeout_every).  blk_dev_check_given()
 * refuses those when the user gave them.  A null lower's other knobs
 * (irqmode, completion_nsec, spin_nsec, fail_every, requeue_every) and a
 * uring lower's sqthread_poll and uring_taskrun=signal are the user's.
 * Return and context: as blk_dev_open().
 */
int blk_dev_open_lower(const char *name, const struct blk_dev_params *p,
		       const struct blk_dev_config *q,
		       const struct blk_dev_open_args *a, struct blk_dev **dev,
		       char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_DEV_H */
