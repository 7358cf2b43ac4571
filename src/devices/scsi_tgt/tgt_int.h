/* SPDX-License-Identifier: MIT */
/*
 * The SCSI target core's own header: what the files of
 * src/devices/scsi_tgt/ share (the target, its logical units and queues,
 * the helpers that answer a command).  Not installed; the interface is
 * blkstack/scsi_tgt.h.
 *
 * A command function (scsi_cmd_fn) runs on the queue's thread.  It either
 * answers at once (sets @c->status and sense through the helpers below,
 * or data through tgt_data_in(), and returns 0), starts media access
 * (tgt_media_alloc(), tgt_media_bio()..., tgt_media_submit(), returns its
 * result: the command then ends from its bios), or returns -EAGAIN,
 * -EBUSY or -ENOMEM without answering (scsi_tgt_submit() returns it).
 */
#ifndef BLKSTACK_SCSI_TGT_INT_H
#define BLKSTACK_SCSI_TGT_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "blkstack/lock.h"
#include "blkstack/scsi_tgt.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Unit attention conditions (SPC-4 5.14, 6.39), in the order they are
 * reported when several are pending for one nexus.
 */
enum tgt_ua {
	TGT_UA_POWER_ON,        /* 29/00 POWER ON, RESET, OR BUS DEVICE RESET */
	TGT_UA_LUN_RESET,       /* 29/03 BUS DEVICE RESET FUNCTION OCCURRED */
	TGT_UA_NEXUS_LOSS,      /* 29/07 I_T NEXUS LOSS OCCURRED */
	TGT_UA_MODE_CHANGED,    /* 2A/01 MODE PARAMETERS CHANGED */
	TGT_UA_RES_PREEMPTED,   /* 2A/03 RESERVATIONS PREEMPTED */
	TGT_UA_RES_RELEASED,    /* 2A/04 RESERVATIONS RELEASED */
	TGT_UA_REG_PREEMPTED,   /* 2A/05 REGISTRATIONS PREEMPTED */
	TGT_UA_CMDS_CLEARED,    /* 2F/00 COMMANDS CLEARED BY ANOTHER INITIATOR */
	TGT_UA_CAPACITY_CHANGED, /* 2A/09 CAPACITY DATA HAS CHANGED */
	TGT_UA_LUNS_CHANGED,    /* 3F/0E REPORTED LUNS DATA HAS CHANGED */
	TGT_UA_NR
};

/*
 * Reservations of one logical unit (pr.c): SPC-2 RESERVE/RELEASE and
 * SPC-4 5.9 persistent reservations.  Everything here is under @lock,
 * which only the reservation commands and the conflict check of a
 * reserved unit take; scsi_lu.reserved tells the fast path whether any
 * reservation is held without it.
 */
struct tgt_pr {
	struct blk_mutex lock;
	uint64_t registered;    /* a bit per nexus with a registration */
	uint64_t key[SCSI_TGT_MAX_NEXUS]; /* each registered nexus's key */
	uint32_t generation;    /* PRgeneration */
	uint8_t type;           /* enum scsi_pr_type; 0: no persistent reservation */
	unsigned int holder;    /* the holding nexus (not for the AR types) */
	bool spc2;              /* an SPC-2 reservation is held ... */
	unsigned int spc2_holder; /* ... by this nexus */
};

struct scsi_lu {
	struct blk_dev *dev;
	struct blk_dev_info info;
	uint32_t lbs;
	uint8_t lbs_shift;      /* lbs == 1 << lbs_shift: no division per command */
	uint32_t max_rw_bio;    /* tgt_media_max_bio() of READ and WRITE, bytes */
	uint64_t nr_blocks;
	/* unit attention conditions pending: per kind (enum tgt_ua), a bit
	 * per nexus; reported highest priority (lowest kind) first */
	_Atomic uint64_t ua[TGT_UA_NR];
	_Atomic uint64_t ua_any; /* per nexus: some kind may be pending */
	/* tasks started before this target epoch end aborted (LUN reset,
	 * CLEAR TASK SET) */
	_Atomic uint32_t reset_epoch;
	/* tasks aborted per nexus (tmf.c: PREEMPT AND ABORT, CLEAR TASK
	 * SET, resets): set once a function has aborted a nexus's tasks
	 * here; then a task of nexus N that started (c->epoch) before
	 * pa_epoch[N] ends TASK ABORTED, without a response where N's bit is
	 * in pa_quiet (TAS was 0, another nexus asked), and with COMMANDS
	 * CLEARED BY ANOTHER INITIATOR for N where it is in pa_cleared.
	 * Written masks, epochs (release), pa_any (release); read from
	 * pa_any, acquire, where a task ends. */
	_Atomic bool pa_any;
	_Atomic uint64_t pa_quiet;
	_Atomic uint64_t pa_cleared;
	_Atomic uint32_t pa_epoch[SCSI_TGT_MAX_NEXUS];
	/* mode parameters (mode.c): the pages' current values, under
	 * mode_lock, which only MODE SELECT and MODE SENSE take; what other
	 * commands read of them is mirrored in d_sense and wflags, loaded
	 * relaxed (a MODE SELECT is seen by the commands that start after it) */
	struct blk_mutex mode_lock;
	uint8_t mode_caching[20], mode_control[12], mode_ie[12];
	_Atomic bool d_sense;   /* control mode page D_SENSE */
	_Atomic bool tas;       /* control mode page TAS */
	_Atomic uint8_t wflags; /* TGT_WF_*: read once per write command */
	/* held by COMPARE AND WRITE and ORWRITE across their read, compare
	 * or merge, and write (sbc.c); never taken by READ or WRITE */
	struct blk_mutex rmw_lock;
	/* ORWRITE's generation codes and current processing policy (SBC-4
	 * 4.27.2), under rmw_lock: 0, 0 and 7h at power on (create), kept
	 * across resets */
	uint32_t orw_gen, orw_prev_gen;
	uint8_t orw_policy;
	/* a reservation (SPC-2 or persistent) is held: the conflict check's
	 * one relaxed load (written under pr.lock) */
	_Atomic uint32_t reserved;
	struct tgt_pr pr;
	bool lbpu, lbpws, lbpws10, lbprz; /* VPD 0xb2, resolved */
	/* removable: the nexuses holding a PREVENT ALLOW MEDIUM REMOVAL (a
	 * bit each: the medium stays while any does), medium ejected */
	_Atomic uint64_t prevent;
	_Atomic bool ejected;
};

/* EXTENDED COPY results kept for RECEIVE COPY RESULTS (xcopy.c) */
#define TGT_COPY_RESULTS 16
struct tgt_copy_result {
	bool used;
	uint8_t list_id;
	uint8_t status;         /* COPY MANAGER STATUS: 1 good, 2 error */
	uint16_t segments;      /* segments processed */
	unsigned int nexus;
	uint64_t lun;
	uint64_t bytes;         /* bytes copied */
};

#define TGT_WF_WP 0x1 /* write protected: cfg.write_protect or SWP */
#define TGT_WF_WT 0x2 /* WCE cleared: every write with FUA (write through) */

static inline uint8_t tgt_lu_wflags(const struct scsi_lu *lu)
{
	return atomic_load_explicit(&lu->wflags, memory_order_relaxed);
}

/* A unit's error rules (scsi_tgt_add_error_rule()), under the target's
 * rules_lock; apart from struct scsi_lu, which the fast path indexes. */
struct tgt_lu_rules {
	struct scsi_tgt_error_rule r[SCSI_TGT_MAX_ERROR_RULES];
	unsigned int n;
};

/*
 * Faults that act before a command runs (t->pre_faults): one relaxed load
 * on the fast path when none is set.
 */
#define TGT_PRE_RULES     0x1 /* some unit has error rules */
#define TGT_PRE_NOT_READY 0x2 /* tur_ms_to_ready not yet over */
#define TGT_PRE_REMOVABLE 0x4 /* a removable medium's state to check */
#define TGT_PRE_DELAY     0x8 /* delay_ms / ndelay_ns */

struct scsi_tgt {
	struct scsi_tgt_config cfg;
	char vendor[9], product[17], serial[33];
	struct scsi_lu *lus;
	unsigned int nr_luns;
	/* cmds .. write_blocks: of the detached queues, and of the rare
	 * paths that count from anywhere (WRITE SAME, EXTENDED COPY) */
	_Atomic uint64_t cmds, check_conditions, read_blocks, write_blocks,
		unit_attentions, injected;
	struct blk_mutex queues_lock;
	struct scsi_tgt_queue *queues; /* attached */
	_Atomic uint64_t media_cmds; /* READ/WRITE commands, for every_nth */
	/* TransportIDs set by scsi_tgt_set_nexus_id() (NULL: the default
	 * one), under nexus_lock */
	struct blk_mutex nexus_lock;
	uint8_t *nexus_id[SCSI_TGT_MAX_NEXUS];
	uint16_t nexus_id_len[SCSI_TGT_MAX_NEXUS];
	/* the last copies' results, under copy_lock; next slot to reuse */
	struct blk_mutex copy_lock;
	struct tgt_copy_result copies[TGT_COPY_RESULTS];
	unsigned int copy_next;
	_Atomic uint32_t epoch;      /* bumped by each function that aborts
				      * tasks (tmf.c) */
	_Atomic uint64_t aborts, lun_resets, target_resets, tmf_failed,
		tasks_aborted, clear_task_sets;
	_Atomic uint32_t pre_faults; /* TGT_PRE_* */
	bool rw_faults;         /* opts or every_nth: inject() on READ/WRITE */
	uint64_t delay_ns;      /* delay_ms or ndelay_ns */
	uint64_t ready_ns;      /* CLOCK_MONOTONIC: tur_ms_to_ready is over */
	struct blk_mutex rules_lock;
	struct tgt_lu_rules *rules; /* [nr_luns] */
	_Atomic unsigned int nr_rules; /* all units' */
};

/* struct scsi_tgt_cmd's tstate */
enum tgt_task_state {
	TGT_TASK_IDLE = 0,      /* not started, or ended */
	TGT_TASK_MEDIA,         /* its bios are in flight */
	TGT_TASK_DROPPED,       /* SCSI_TGT_OPT_TIMEOUT: never answered */
};

struct scsi_tgt_queue {
	struct scsi_tgt *tgt;
	struct blk_mq_ctx **ctx; /* one per logical unit */
	char *ws_buf;           /* WRITE SAME's repeated block */
	uint32_t *lun_busy;     /* per logical unit: tasks in TGT_TASK_MEDIA */
	struct scsi_tgt_cmd *dropped; /* tasks in TGT_TASK_DROPPED */
	/* delayed commands, due in order (one delay per target), and how
	 * many */
	struct scsi_tgt_cmd *delay_head, *delay_tail;
	unsigned int delay_n;
	/* scsi_tgt_plug(): media I/O held in plugs; lun_plugged[lun] for the
	 * units whose ctx has one started */
	bool plugging;
	bool any_plugged;
	bool *lun_plugged;
	/* the counters every command moves, this queue's share: written by
	 * its thread alone (q_count(): a load and a store, no locked
	 * read-modify-write, which after a 4 KiB copy waited for the copy's
	 * stores to drain, and bounced one line between the queues of a
	 * target), summed by scsi_tgt_get_stats() over the attached queues
	 * (tgt->queues, under queues_lock) and folded into the target's at
	 * detach */
	_Atomic uint64_t cmds, check_conditions, read_blocks, write_blocks;
	struct scsi_tgt_queue *qnext, *qprev;
};

/* Add @n to a counter of the queue's own (see struct scsi_tgt_queue). */
static inline void q_count(_Atomic uint64_t *ctr, uint64_t n)
{
	atomic_store_explicit(ctr, atomic_load_explicit(ctr, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* A media command's bios: in the command (io_space) or one allocation,
 * freed when the command ends. */
struct media_io {
	struct scsi_tgt_queue *q;
	struct scsi_lu *lu;
	struct iovec *iov;      /* its bios' iovecs */
	bool read;
	bool recovered;         /* SCSI_TGT_OPT_RECOVERED_ERR on this one */
	bool rw;                /* READ/WRITE: the data is the blocks; else
				 * the Data-Out is a parameter list or a block
				 * to repeat, taken whole */
	unsigned int nr;        /* bios prepared */
	/* its bios follow (media_bios()): 32 bytes here, so that a READ's
	 * media command, bio and two iovecs (120 bytes) fit the command's
	 * io_space in two cache lines */
};

/* The bios of @io, right behind it. */
static inline struct blk_bio *media_bios(struct media_io *io)
{
	return (struct blk_bio *)(io + 1);
}

typedef int (*scsi_cmd_fn)(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			   struct scsi_tgt_cmd *c);

/* The highest bit set in @v (not 0): a field pointer's bit */
static inline int tgt_top_bit(uint8_t v)
{
	return 31 - __builtin_clz(v);
}

/* MAXIMUM COMPARE AND WRITE LENGTH (VPD 0xb0 byte 5), logical blocks */
static inline uint8_t tgt_caw_max(const struct scsi_tgt *t)
{
	return t->cfg.max_xfer_blocks < 255 ? (uint8_t)t->cfg.max_xfer_blocks : 255;
}

/* ------------------------------------------- mode parameters (mode.c) */

/* A unit's mode pages at their defaults, its locks; tgt_mode_fini()
 * destroys the locks. */
void tgt_mode_init(struct scsi_tgt *t, struct scsi_lu *lu);
void tgt_mode_fini(struct scsi_lu *lu);
/* SPC-4 6.11/6.12 MODE SENSE (6)/(10), 6.9/6.10 MODE SELECT (6)/(10) */
int tgt_mode_sense(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		   struct scsi_tgt_cmd *c);
int tgt_mode_select(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		    struct scsi_tgt_cmd *c);

/* ------------------------------------------------ SBC-3 (sbc.c) */

/* VERIFY 10/12/16, WRITE AND VERIFY 10/12/16, COMPARE AND WRITE,
 * ORWRITE (16) and (32), PRE-FETCH 10/16, GET LBA STATUS (from SERVICE
 * ACTION IN) */
int tgt_verify(struct scsi_tgt_queue *q, struct scsi_lu *lu,
	       struct scsi_tgt_cmd *c);
int tgt_write_verify(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		     struct scsi_tgt_cmd *c);
int tgt_compare_and_write(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			  struct scsi_tgt_cmd *c);
int tgt_orwrite(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		struct scsi_tgt_cmd *c);
int tgt_pre_fetch(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		  struct scsi_tgt_cmd *c);
int tgt_get_lba_status(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		       struct scsi_tgt_cmd *c);

/* Additional sense codes only the target core uses (SPC-4 annex D). */
#define ASC_LUN_BECOMING_READY          0x0401
#define ASC_MEDIUM_NOT_PRESENT          0x3a00
#define ASC_MEDIUM_REMOVAL_PREVENTED    0x5302
#define ASC_I_T_NEXUS_LOSS              0x2907

/* ------------------------------------------------ answers (tgt.c) */

/* CHECK CONDITION with @s, fixed or descriptor format as @lu's D_SENSE
 * says (@lu may be NULL: fixed). */
void tgt_cmd_sense(struct scsi_tgt_cmd *c, const struct scsi_lu *lu,
		   const struct scsi_sense *s);
/* CHECK CONDITION, @key and @asc_ascq, no sense-key specific data. */
void tgt_cmd_check(struct scsi_tgt_cmd *c, const struct scsi_lu *lu,
		   uint8_t key, uint16_t asc_ascq);
/* ILLEGAL REQUEST, INVALID FIELD IN CDB, the field pointer at @byte and
 * @bit (-1: the whole byte). */
void tgt_cmd_bad_cdb(struct scsi_tgt_cmd *c, const struct scsi_lu *lu,
		     unsigned int byte, int bit);
/* ILLEGAL REQUEST, INVALID FIELD IN PARAMETER LIST, pointer as above
 * into the parameter list. */
void tgt_cmd_bad_param(struct scsi_tgt_cmd *c, const struct scsi_lu *lu,
		       unsigned int byte, int bit);
/* Copy @len bytes of @src to the Data-In buffer, at most @alloc (the
 * CDB's allocation length) and @c->xfer_len; sets resid/overflow. */
void tgt_data_in(struct scsi_tgt_cmd *c, const void *src, uint32_t len,
		 uint32_t alloc);
/* Copy up to @len bytes of the Data-Out buffer to @dst; bytes copied. */
uint32_t tgt_data_out(const struct scsi_tgt_cmd *c, void *dst, uint32_t len);

/* ------------------------------------------ unit attention (tgt.c) */

/* Raise @kind on @lu for every nexus but @except (-1: every nexus). */
void tgt_ua_raise(struct scsi_tgt *t, struct scsi_lu *lu, enum tgt_ua kind,
		  int except);
/* Take the highest-priority condition pending for @nexus on @lu, clearing
 * it; its ASC/ASCQ in *@asc_ascq.  false: none pending. */
bool tgt_ua_take(struct scsi_tgt *t, struct scsi_lu *lu, unsigned int nexus,
		 uint16_t *asc_ascq);
/* Whether a condition may be pending for @nexus on @lu (tgt_ua_take()'s
 * first test, one relaxed load, inline: no call per command while none
 * is).  A nexus past the bit mask has none. */
static inline bool tgt_ua_pending(struct scsi_lu *lu, unsigned int nexus)
{
	return nexus < SCSI_TGT_MAX_NEXUS &&
	       (atomic_load_explicit(&lu->ua_any, memory_order_relaxed) >> nexus & 1);
}

/* ------------------------------------------ task management (tmf.c) */

/* End @c as aborted by a task management function (done is called). */
void tgt_task_end_aborted(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c);
/* Delayed tasks (delay_ms/ndelay_ns, faults.c) held on @q's list: @only,
 * or (@only NULL) those of @lun (UINT64_MAX: all) from the nexuses in
 * @nexuses (a bit per nexus; UINT64_MAX: every nexus, those of 64 and
 * over too) end TASK ABORTED now, marked as the function that aborted
 * their nexus's tasks says (tgt_task_mark_if_preempted()); one that had
 * ended aborted is answered as it is, not counted again.  Return how
 * many. */
unsigned int tgt_delay_abort(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *only,
			     uint64_t lun, uint64_t nexuses);

/*
 * PERSISTENT RESERVE OUT's PREEMPT AND ABORT (SPC-4 5.9.11.5), after
 * pr.c removed the registrations of @victims (a bit per nexus) on @lu and
 * let go of pr.lock: every task of those nexuses on @lu that started
 * before now ends TASK ABORTED (without a response where @quiet, TAS 0).
 * On @q at once (dropped and delayed tasks); on @q and the other queues,
 * the ones in flight when their bios end (media_put()), the delayed ones
 * when due (tgt_delay_poll()).
 */
void tgt_preempt_abort(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		       uint64_t victims, bool quiet);
/* Whether @c, ending on @lu, started before a PREEMPT AND ABORT that
 * preempted its nexus there.  Call where @lu->pa_any was seen set. */
static inline bool tgt_task_preempted(struct scsi_lu *lu,
				      const struct scsi_tgt_cmd *c)
{
	return c->nexus < SCSI_TGT_MAX_NEXUS &&
	       (int32_t)(c->epoch - atomic_load_explicit(&lu->pa_epoch[c->nexus],
							 memory_order_acquire)) < 0;
}
/* @c ends aborted by a PREEMPT AND ABORT, CLEAR TASK SET or reset: without a
 * response (@c->no_response) where its nexus is in pa_quiet (TAS 0), with
 * a COMMANDS CLEARED BY ANOTHER INITIATOR unit attention for its nexus
 * where it is in pa_cleared.  The caller ends it. */
void tgt_task_mark_preempted(struct scsi_lu *lu, struct scsi_tgt_cmd *c);
/* @c ends aborted on @lu, whatever aborted it: marked as the function
 * that aborted its nexus's tasks says, where one did after it started. */
static inline void tgt_task_mark_if_preempted(struct scsi_lu *lu,
					      struct scsi_tgt_cmd *c)
{
	if (atomic_load_explicit(&lu->pa_any, memory_order_acquire) &&
	    tgt_task_preempted(lu, c))
		tgt_task_mark_preempted(lu, c);
}
/* Put a dropped task on @q's list, or take it off. */
void tgt_task_drop(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c);
/* Count a command, then call its done (tgt.c). */
void tgt_cmd_end(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c);

/* Raise @kind on @lu for the nexuses in @mask (a bit per nexus). */
void tgt_ua_raise_mask(struct scsi_lu *lu, enum tgt_ua kind, uint64_t mask);

/* ------------------------------------------ reservations (pr.c) */

/* Set up and free the reservation state of @t's units and its nexus
 * names (scsi_tgt_create() / scsi_tgt_destroy()). */
void tgt_pr_init(struct scsi_tgt *t);
void tgt_pr_destroy(struct scsi_tgt *t);
/*
 * Whether @c conflicts with the reservation held on @lu (SPC-2 7.21's
 * rules, SPC-4 5.9.1 table 63 and SBC-3 4.17 table 13).  Called only when
 * @lu->reserved was seen set; takes @lu->pr.lock.
 */
bool tgt_pr_conflict(struct scsi_lu *lu, const struct scsi_tgt_cmd *c);
/* Whether @nexus may read (@write false) or write @lu under its
 * reservation: EXTENDED COPY's check of the units it copies between. */
bool tgt_pr_may_access(struct scsi_lu *lu, unsigned int nexus, bool write);
/* LOGICAL UNIT RESET's effect: the SPC-2 reservation goes (persistent
 * ones stay). */
void tgt_pr_lun_reset(struct scsi_lu *lu);
/* I_T nexus loss's (scsi_tgt_nexus_loss()): an SPC-2 reservation @nexus
 * holds goes (persistent ones and registrations stay). */
void tgt_pr_nexus_loss(struct scsi_lu *lu, unsigned int nexus);
int tgt_do_reserve(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		   struct scsi_tgt_cmd *c);
int tgt_do_release(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		   struct scsi_tgt_cmd *c);
int tgt_do_pr_in(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		 struct scsi_tgt_cmd *c);
int tgt_do_pr_out(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		  struct scsi_tgt_cmd *c);

/* ---------------------------------------- third-party copy (xcopy.c) */

void tgt_xcopy_init(struct scsi_tgt *t);
void tgt_xcopy_destroy(struct scsi_tgt *t);
/* The unit's NAA 6 designator (16 bytes), as VPD 0x83 reports it. */
void tgt_naa_designator(const struct scsi_tgt *t, uint64_t lun, uint8_t *b);
int tgt_do_xcopy(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		 struct scsi_tgt_cmd *c);
int tgt_do_receive_copy_results(struct scsi_tgt_queue *q, struct scsi_lu *lu,
				struct scsi_tgt_cmd *c);
/* VPD 0x8f, third-party copy (SPC-4 7.8.17), into @b; its length. */
uint32_t tgt_vpd_third_party_copy(const struct scsi_lu *lu, uint8_t *b);

/* ------------------------------------------- media access (tgt.c) */

/* The LBA and block count of a READ/WRITE/VERIFY/SYNC CACHE/WRITE SAME
 * CDB (6/10/12/16 by opcode); false: out of range, CHECK CONDITION set. */
bool tgt_media_range(struct scsi_tgt_cmd *c, struct scsi_lu *lu,
		     uint64_t *lba, uint32_t *nb);
/* The sense for a failed bio's status (@c->err, @c->err_lba in blocks). */
void tgt_media_error(struct scsi_tgt_cmd *c, struct scsi_lu *lu, bool write);
/* Room for @nr bios and @nr_iov iovecs, kept in @c->io (the media
 * command zeroed; each bio is written by tgt_media_bio()); NULL: -ENOMEM. */
struct media_io *tgt_media_alloc(struct scsi_tgt_queue *q, struct scsi_lu *lu,
				 struct scsi_tgt_cmd *c, unsigned int nr,
				 unsigned int nr_iov);
/* The next bio of @io: @op over [@off, @off + @size) bytes; the caller
 * sets its data (bi_io_vec, bi_vcnt) for READ/WRITE. */
struct blk_bio *tgt_media_bio(struct media_io *io, struct scsi_tgt_cmd *c,
			      uint8_t op, uint64_t off, uint32_t size);
/* Submit the prepared bios.  Return: 0 (the command ends from its
 * bios); -EAGAIN when no bio could be submitted (nothing started). */
int tgt_media_submit(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c);
/* The largest bio of @op the logical unit takes, bytes. */
uint32_t tgt_media_max_bio(const struct scsi_lu *lu, uint8_t op);
/* Bios of @op (no data) over [@off, @off + @len) bytes. */
void tgt_media_range_bios(struct media_io *io, struct scsi_tgt_cmd *c,
			  uint8_t op, uint64_t off, uint64_t len);
/* How many bios of @op cover @len bytes. */
unsigned int tgt_bios_for(const struct scsi_lu *lu, uint8_t op, uint64_t len);

/* ------------------------------------------------ faults (faults.c) */

/* CLOCK_MONOTONIC, ns. */
uint64_t tgt_now_ns(void);
/* Before @c runs, when t->pre_faults is set: error rules, not ready, the
 * medium, and the delay (which takes over @c->done).  Return 1: run it;
 * 0: answered (@c set; TGT_DROP: never answered); -EBUSY. */
int tgt_pre_faults(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		   struct scsi_tgt_cmd *c, bool media, bool delayable);
/* Undo tgt_pre_faults()' hold on @c->done (the command is not ending). */
void tgt_delay_cancel(struct scsi_tgt_cmd *c);
/* End the delayed commands that are due; how many. */
unsigned int tgt_delay_poll(struct scsi_tgt_queue *q);
/* The rules of @cfg into @t's units; -errno with @err set. */
int tgt_rules_init(struct scsi_tgt *t, const struct scsi_tgt_config *cfg,
		   char *err, size_t errlen);

#define TGT_DROP 0xff /* c->status of a command never answered (not a SAM
		       * status) */

#endif /* BLKSTACK_SCSI_TGT_INT_H */
