/* SPDX-License-Identifier: MIT */
/*
 * SCSI target core: a direct-access block device (SBC-3) with the SPC-4
 * commands around it, over any blk_dev, one blk_dev per logical unit.  It
 * turns CDBs into bios and answers with a SAM status and sense data; the
 * transport (the loopback LLD of the SCSI driver, the iSCSI target) only
 * moves commands, data and status.
 *
 * Threads: each thread that submits commands attaches a queue
 * (scsi_tgt_queue_attach()), which holds one blk ctx per logical unit;
 * commands submitted on a queue complete on it, from scsi_tgt_submit()
 * (commands with no media access) or from scsi_tgt_poll().
 *
 * Implemented (opcode, spec section):
 *   TEST UNIT READY (SPC-4 6.47), REQUEST SENSE (6.39), INQUIRY (6.6:
 *   standard data with version descriptors; VPD 0x00, 0x80, 0x83 with an
 *   NAA 6 and a T10 vendor ID designator, 0x86 extended INQUIRY data
 *   (7.8.7), 0x8f third-party copy (7.8.17), 0xb0 block limits, 0xb1
 *   block device characteristics, 0xb2 logical block provisioning), MODE
 *   SENSE 6/10 (6.11/6.12: caching, control, informational exceptions
 *   pages, DBD, LLBAA, PC 0..2), MODE SELECT 6/10 (6.9/6.10: PF only, no
 *   saved pages; WCE, D_SENSE and SWP changeable, per logical unit; MODE
 *   PARAMETERS CHANGED for the other nexuses), REPORT LUNS (6.33), REPORT
 *   SUPPORTED OPERATION CODES (6.35, with CDB usage data and timeouts),
 *   START STOP UNIT (SBC-3 5.25; LOEJ ejects a removable medium), PREVENT
 *   ALLOW MEDIUM REMOVAL (SPC-4 6.13), READ CAPACITY 10/16 (SBC-3
 *   5.15/5.16), READ and WRITE 6/10/12/16 (5.7-5.10, 5.32-5.35), VERIFY
 *   10/12/16 with BYTCHK 00b, 01b and 11b (5.29-5.31), WRITE AND VERIFY
 *   10/12/16 with BYTCHK 00b and 01b (5.38-5.40), COMPARE AND WRITE (5.2),
 *   ORWRITE 16 (5.7 of r36) and 32 (SBC-4 5.11: variable-length CDB,
 *   set and change generation and clear, generation codes per unit),
 *   PRE-FETCH 10/16 (5.3/5.4), GET LBA STATUS
 *   (5.5), SYNCHRONIZE CACHE 10/16 (5.22/5.23), UNMAP (5.28), WRITE SAME
 *   10/16 with UNMAP and NDOB, not ANCHOR (5.41/5.42), RESERVE and RELEASE
 *   6/10 (SPC-2 7.16, 7.17, 7.21, 7.22), PERSISTENT RESERVE IN/OUT (SPC-4
 *   5.9, 6.15, 6.16: every type, REGISTER AND MOVE (5.9.8) to a nexus
 *   named by its TransportID; no APTPL, SPEC_I_PT, ALL_TG_PT nor REPLACE
 *   LOST RESERVATION), EXTENDED COPY (LID1, 6.4: block to block between
 *   this target's units) and RECEIVE COPY RESULTS (6.20).  Everything
 *   else: ILLEGAL REQUEST, INVALID COMMAND OPERATION CODE.
 *
 *   VERIFY and WRITE AND VERIFY with a compare, COMPARE AND WRITE and
 *   ORWRITE run synchronously on the submitting thread (they poll the
 *   queue's device contexts, so other commands of the queue may end
 *   meanwhile); COMPARE AND WRITE and ORWRITE are atomic against each
 *   other on a logical unit, not against a concurrent WRITE, and
 *   scsi_tgt_submit() answers -EAGAIN for one while another queue's holds
 *   the unit.  A reserved unit answers other nexuses RESERVATION CONFLICT
 *   as SPC-2 and SPC-4 5.9.1 say.  Reserved bits that are set and
 *   unsupported fields (RDPROTECT/WRPROTECT without protection
 *   information, NACA) get ILLEGAL REQUEST, INVALID FIELD IN CDB, with the
 *   sense-key specific field pointing at the byte and bit.  A unit
 *   attention (POWER ON, RESET 29/00, ...) is reported once per logical
 *   unit and nexus, as SPC-4 5.14 asks: INQUIRY, REPORT LUNS and REQUEST
 *   SENSE are not held by it.  Task management and the loss of an I_T
 *   nexus are calls of their own (scsi_tgt_abort_task() ...,
 *   scsi_tgt_nexus_loss()).
 */
#ifndef BLKSTACK_SCSI_TGT_H
#define BLKSTACK_SCSI_TGT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "blk.h"
#include "scsi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SCSI_TGT_MAX_LUNS 256
#define SCSI_TGT_MAX_NEXUS 64 /* I_T nexuses tracked for unit attentions */

/**
 * struct scsi_tgt_config - a target.
 * @luns: the logical units' devices, LUN 0 first; at least one.
 * @nr_luns: 1..SCSI_TGT_MAX_LUNS.
 * @own_luns: scsi_tgt_destroy() closes them.
 * @vendor: T10 vendor identification, at most 8 characters ("BLKSTACK").
 * @product: at most 16 characters ("blkstack disk").
 * @serial: unit serial number, at most 32 characters; "" gives one made
 *	from @id.
 * @id: 24 bits that make the NAA designators of this target's units
 *	unique (with the LUN).
 * @write_protect: every unit is write protected (WP in the mode data,
 *	DATA PROTECT / WRITE PROTECTED on writes).
 * @max_xfer_blocks: MAXIMUM TRANSFER LENGTH in VPD 0xb0, logical blocks;
 *	longer READ/WRITE are refused (INVALID FIELD IN CDB); 0: 65535.
 * @max_unmap_blocks: MAXIMUM UNMAP LBA COUNT (0: 4194304).
 * @max_unmap_descriptors: MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT (0: 256).
 * @max_write_same_blocks: MAXIMUM WRITE SAME LENGTH (0: 4194304).
 * @every_nth: scsi_debug's every_nth: the faults of @opts marked "nth"
 *	hit every Nth READ or WRITE command (counted per target; 0: none).
 *	Negative (scsi_debug before Linux 5.9): the |N|th and every one after
 *	it.  Only media commands count, so that an initiator's probe still
 *	works.
 * @opts: scsi_debug's opts bits (SCSI_TGT_OPT_*).
 * @tmf_fail: task management functions to reject (SCSI_TGT_TMF_FAIL_*).
 * @tmf_timeout_ms: longest a task management function waits for a task's
 *	media access to end, ms (0: 10000); past it the function fails.
 *
 * scsi_debug's other module parameters, same names; 0 is the default of
 * each (what the target did before they existed):
 * @sector_size: the logical block size every unit reports (READ
 *	CAPACITY), bytes: 512, 1024, 2048 or 4096, and a multiple of the
 *	unit's device's logical block size (each block is that many of the
 *	device's); 0: the device's.
 * @physblk_exp: LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT (READ CAPACITY
 *	16), 0..15; also the OPTIMAL TRANSFER LENGTH GRANULARITY (VPD 0xb0),
 *	2^@physblk_exp logical blocks.
 * @opt_xferlen_exp: OPTIMAL TRANSFER LENGTH GRANULARITY, 2^N logical
 *	blocks, when larger than @physblk_exp; 0..15.
 * @opt_blks: OPTIMAL TRANSFER LENGTH (VPD 0xb0), logical blocks; 0: the
 *	device's largest request, at most @max_xfer_blocks.
 * @lbpu, @lbpws, @lbpws10, @lbprz: enum scsi_tgt_lbp: what VPD 0xb2 says
 *	(LBPU: UNMAP; LBPWS, LBPWS10: WRITE SAME 16/10 with UNMAP; LBPRZ:
 *	unmapped blocks read zeros, also in READ CAPACITY 16, whose LBPME is
 *	any of the first three).  AUTO: from the device (discard, write
 *	zeroes, stores data).  A command whose bit is OFF is refused: UNMAP
 *	with INVALID COMMAND OPERATION CODE, WRITE SAME with UNMAP set with
 *	INVALID FIELD IN CDB (byte 1, bit 3).  ON where the device cannot:
 *	-EINVAL at create (LBPU without discard, LBPRZ on a device that
 *	keeps no data).
 * @unmap_granularity: OPTIMAL UNMAP GRANULARITY (VPD 0xb0), logical
 *	blocks; 0: 1.  Reported only (UNMAP frees what it is asked).
 * @unmap_alignment: UNMAP GRANULARITY ALIGNMENT (VPD 0xb0, UGAVALID set
 *	when not 0), logical blocks, below @unmap_granularity.
 * @removable: RMB in INQUIRY; PREVENT ALLOW MEDIUM REMOVAL then holds the
 *	medium: START STOP UNIT with LOEJ ejects it (then NOT READY, MEDIUM
 *	NOT PRESENT 3A/00 on media commands and TEST UNIT READY until LOEJ
 *	with START loads it); while removal is prevented both the eject and
 *	the load are refused (ILLEGAL REQUEST, MEDIUM REMOVAL PREVENTED 53/02).
 * @delay_ms, @ndelay_ns: scsi_debug's delay (there in jiffies, here ms)
 *	and ndelay: every command but INQUIRY, REPORT LUNS and REQUEST SENSE
 *	ends that long after it would have, from scsi_tgt_poll() on its
 *	queue's thread (@ndelay_ns, when not 0, instead of @delay_ms, as in
 *	scsi_debug).  At most 10 s.
 * @tur_ms_to_ready: for that many ms after scsi_tgt_create(), TEST UNIT
 *	READY and media commands get NOT READY, LOGICAL UNIT IS IN PROCESS OF
 *	BECOMING READY (04/01); TEST UNIT READY's INFORMATION field has the
 *	ms left (SPC-6, as scsi_debug).
 * @error_rules, @nr_error_rules: scsi_debug's per-device error injection
 *	(its debugfs "error" file): rules added at create, as by
 *	scsi_tgt_add_error_rule().
 */
struct scsi_tgt_config {
	struct blk_dev **luns;
	unsigned int nr_luns;
	bool own_luns;
	const char *vendor;
	const char *product;
	const char *serial;
	uint32_t id;
	bool write_protect;
	uint32_t max_xfer_blocks;
	uint32_t max_unmap_blocks;
	uint32_t max_unmap_descriptors;
	uint32_t max_write_same_blocks;
	int32_t every_nth;
	uint32_t opts;
	uint32_t tmf_fail;
	uint32_t tmf_timeout_ms;
	uint32_t sector_size;
	uint8_t physblk_exp;
	uint8_t opt_xferlen_exp;
	uint8_t lbpu, lbpws, lbpws10, lbprz;
	bool removable;
	uint32_t opt_blks;
	uint32_t unmap_granularity;
	uint32_t unmap_alignment;
	uint32_t delay_ms;
	uint64_t ndelay_ns;
	uint32_t tur_ms_to_ready;
	const struct scsi_tgt_error_rule *error_rules;
	unsigned int nr_error_rules;
};

/* enum scsi_tgt_lbp - a logical block provisioning bit of VPD 0xb2. */
enum scsi_tgt_lbp {
	SCSI_TGT_LBP_AUTO = 0, /* from the device's capabilities */
	SCSI_TGT_LBP_OFF = 1,
	SCSI_TGT_LBP_ON = 2,
};

#define SCSI_TGT_MAX_DELAY_NS 10000000000ull /* delay_ms, ndelay_ns: 10 s */

/*
 * scsi_debug's per-device error injection (Linux 6.6, drivers/scsi/
 * scsi_debug.c, its debugfs "error" file), per logical unit.  A command
 * is matched against the unit's TIMEOUT rules, then BUSY, then FAIL; in
 * each kind the first rule whose opcode matches decides (a rule with
 * count 0 then injects nothing).
 */
enum scsi_tgt_error_type {
	SCSI_TGT_ERR_TIMEOUT = 0, /* scsi_debug type 0: never answered */
	SCSI_TGT_ERR_BUSY = 1,    /* type 1 (queuecommand returns busy):
				   * scsi_tgt_submit() answers -EBUSY */
	SCSI_TGT_ERR_FAIL = 2,    /* type 2: not run; answered with @status
				   * (and sense, for CHECK CONDITION) */
};

#define SCSI_TGT_MAX_ERROR_RULES 16 /* per logical unit */
#define SCSI_TGT_ERR_ANY_OPCODE 0xff

/**
 * struct scsi_tgt_error_rule - one rule.
 * @lun: the logical unit.
 * @type: enum scsi_tgt_error_type.
 * @opcode: the CDB's operation code; SCSI_TGT_ERR_ANY_OPCODE: every one.
 * @count: as scsi_debug: 0: off; > 0: every matching command, for as long
 *	as the rule is there; < 0: the next -@count matching commands (it
 *	counts up to 0).
 * @status: SCSI_TGT_ERR_FAIL: the SAM status (enum scsi_status, not GOOD).
 * @sense_key, @asc, @ascq: SCSI_TGT_ERR_FAIL with CHECK CONDITION: the
 *	sense data.
 */
struct scsi_tgt_error_rule {
	uint64_t lun;
	uint8_t type;
	uint8_t opcode;
	int32_t count;
	uint8_t status;
	uint8_t sense_key, asc, ascq;
};

/*
 * Task management faults (@tmf_fail bits; scsi_debug's error injection
 * types ERR_ABORT_CMD_FAILED and ERR_LUN_RESET_FAILED, and a third for
 * the target reset): the function is rejected, nothing is done.
 */
#define SCSI_TGT_TMF_FAIL_ABORT        0x1
#define SCSI_TGT_TMF_FAIL_LUN_RESET    0x2
#define SCSI_TGT_TMF_FAIL_TARGET_RESET 0x4

/*
 * Fault injection, scsi_debug's opts bits and meanings (drivers/scsi/
 * scsi_debug.c): MEDIUM_ERR acts on its own, the others on every_nth.
 */
#define SCSI_TGT_OPT_MEDIUM_ERR    0x2    /* reads of LBA 4660..4669 (0x1234,
					   * 10 blocks): MEDIUM ERROR 11/00 with
					   * the first such LBA in INFORMATION */
#define SCSI_TGT_OPT_TIMEOUT       0x4    /* nth: never completed */
#define SCSI_TGT_OPT_RECOVERED_ERR 0x8    /* nth: done, then RECOVERED ERROR
					   * 5D/00 (threshold exceeded) */
#define SCSI_TGT_OPT_TRANSPORT_ERR 0x10   /* nth: ABORTED COMMAND 4B/03, not run */
#define SCSI_TGT_OPT_SHORT_TRANSFER 0x100 /* nth READ: half its blocks
					   * (rounded down) moved, GOOD with
					   * the residual in resid */
#define SCSI_TGT_OPT_RARE_TSF      0x800  /* nth: TASK SET FULL, not run */
#define SCSI_TGT_OPT_HOST_BUSY     0x8000 /* nth: scsi_tgt_submit() -EBUSY */
#define SCSI_TGT_OPTS_SUPPORTED    0x891e
#define SCSI_TGT_MEDIUM_ERR_LBA    0x1234
#define SCSI_TGT_MEDIUM_ERR_NUM    10

struct scsi_tgt;
struct scsi_tgt_queue;
struct scsi_tgt_error_rule;

/**
 * struct scsi_tgt_cmd - one command, owned by the caller until @done.
 * @lun: the logical unit (single-level LUN, 0..nr_luns-1).
 * @nexus: the I_T nexus (0..SCSI_TGT_MAX_NEXUS-1): unit attentions are
 *	kept per nexus.
 * @cdb, @cdb_len: the CDB, 6..16 bytes, or a variable-length one (7Fh)
 *	of 8 + its ADDITIONAL CDB LENGTH bytes (ORWRITE (32): 32).
 * @dir: enum scsi_data_dir of @iov.
 * @iov, @iovcnt: the data buffer: Data-In is written into it, Data-Out
 *	read from it.
 * @xfer_len: expected data transfer length, bytes (the transport's; the
 *	buffer holds at least this much).  A command that moves less sets
 *	@resid, one that would move more moves @xfer_len and sets @overflow.
 * @done: called once the command has ended, on the queue's thread; may
 *	be called before scsi_tgt_submit() returns.  While a delay holds the
 *	command the target keeps its own function here and puts @done back
 *	before calling it.
 * @priv: the caller's.
 * Results, set before @done: @status (enum scsi_status), @sense and
 * @sense_len (CHECK CONDITION only; descriptor format where the control
 * mode page's D_SENSE is set), @resid (bytes not moved of @xfer_len),
 * @overflow (the command would have moved more than @xfer_len), @blk_status
 * (what the device answered, BLK_STS_OK when it was not asked),
 * @no_response (status TASK ABORTED, and SAM-5 5.6 has the target send
 * nothing for it: another I_T nexus's PERSISTENT RESERVE OUT with PREEMPT
 * AND ABORT or CLEAR TASK SET aborted it while the control mode page's
 * TAS bit was 0; its nexus gets COMMANDS CLEARED BY ANOTHER INITIATOR,
 * 2F/00, instead.  The transport frees the command without answering it).
 * Private: the rest.
 */
struct scsi_tgt_cmd {
	/* what every command touches first: 88 bytes, two cache lines with
	 * a transport's 24-byte header in front (loopback's lb_cmd) */
	uint64_t lun;
	const uint8_t *cdb;
	const struct iovec *iov;
	void (*done)(struct scsi_tgt_cmd *cmd);
	void *priv;
	void *io;               /* private: its bios and their iovecs */
	unsigned int nexus;
	unsigned int iovcnt;
	uint32_t xfer_len;
	uint8_t cdb_len;
	uint8_t dir;
	/* results */
	uint8_t status;
	uint8_t sense_len;
	uint32_t resid;
	bool overflow;
	bool no_response;
	blk_status_t blk_status;
	/* private: media access in flight */
	uint8_t tstate;         /* enum: idle, media access, dropped */
	bool aborting;          /* ABORT TASK waits for its media access */
	blk_status_t err;
	uint32_t epoch;         /* the target's epoch at its start (resets,
				 * PREEMPT AND ABORT) */
	uint32_t pending;       /* bios not yet ended, + 1 while submitting */
	uint32_t moved;         /* bytes of data moved */
	/* one bio with up to 4 iovecs needs no allocation: kept here, next
	 * to the fields above (a READ's media command, its bio and iovecs
	 * fill the two lines after them) */
	uint64_t io_space[32];
	/* cold: errors, dropped tasks, delays */
	uint64_t err_lba;       /* first failed bio's offset (bytes, then LBA) */
	struct scsi_tgt_cmd *dnext, *dprev; /* the queue's dropped tasks */
	/* delay_ms/ndelay_ns: held on the queue's list until @due_ns */
	void (*delayed_done)(struct scsi_tgt_cmd *cmd);
	struct scsi_tgt_queue *delay_q;
	struct scsi_tgt_cmd *delay_next;
	uint64_t due_ns;
	/* last, results: cold, apart from the lines every command touches */
	uint8_t sense[SCSI_SENSE_MAX];
};



/**
 * scsi_tgt_create() - a target over @cfg->luns.
 * @err: a message naming the field on failure.
 * Return: 0; -EINVAL (no LUN, too many, a LUN whose logical block size is
 * under 512, text too long); -ENOMEM.
 * Context: any thread.
 */
int scsi_tgt_create(const struct scsi_tgt_config *cfg, struct scsi_tgt **tgt,
		    char *err, size_t errlen);

/** scsi_tgt_destroy() - free @tgt (no queue may be attached). */
void scsi_tgt_destroy(struct scsi_tgt *tgt);

/**
 * scsi_tgt_queue_attach() - a queue for the calling thread: a blk ctx on
 * each logical unit.
 * Return: 0; -ENOMEM; -errno from blk_ctx_attach().
 * Context: the thread that will submit on it.
 */
int scsi_tgt_queue_attach(struct scsi_tgt *tgt, struct scsi_tgt_queue **q);

/** scsi_tgt_queue_detach() - drain (delayed commands end in their time)
 * and free @q.  Context: its thread. */
void scsi_tgt_queue_detach(struct scsi_tgt_queue *q);

/**
 * scsi_tgt_submit() - run @cmd.
 * Return: 0: accepted, @cmd->done will be called (perhaps already; with
 * delay_ms/ndelay_ns from scsi_tgt_poll() once due; never, for a command
 * SCSI_TGT_OPT_TIMEOUT or a timeout error rule drops); -EAGAIN: the
 * device has no tag free: call scsi_tgt_poll() and submit again (done is
 * not called); -EBUSY: SCSI_TGT_OPT_HOST_BUSY or a busy error rule,
 * submit again later (not called either); -EAGAIN also for a COMPARE AND WRITE or ORWRITE while another
 * queue's holds the logical unit; -ENOMEM.  A PERSISTENT RESERVE OUT with
 * PREEMPT AND ABORT ends the preempted nexuses' dropped and delayed tasks
 * of @q (their done called, TASK ABORTED) before its own.
 * Context: @q's thread.
 */
int scsi_tgt_submit(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *cmd);

/**
 * scsi_tgt_poll() - reap the devices' completions; ends the commands whose
 * last bio ended, and the delayed commands that are due.
 * Return: bios reaped and delayed commands ended (>= 0).
 * Context: @q's thread.  Never blocks.
 */
int scsi_tgt_poll(struct scsi_tgt_queue *q);

/**
 * scsi_tgt_delay_pending() - the commands the delay (delay_ms, ndelay_ns)
 * holds on @q: ended, waiting to be answered by scsi_tgt_poll().
 * @due_ns: set, when it holds any, to when the first is due
 *	(CLOCK_MONOTONIC, ns): a transport thread with nothing else to do
 *	can sleep until then instead of polling.
 * Return: how many it holds.
 * Context: @q's thread.
 */
unsigned int scsi_tgt_delay_pending(const struct scsi_tgt_queue *q,
				    uint64_t *due_ns);

/**
 * scsi_tgt_plug() - hold the media I/O of the commands submitted from now
 * on in a plug on the backing devices (blk_start_plug() on each logical
 * unit's ctx of @q, started when a command first reaches that unit), so
 * that a batch of commands reaches a device as one dispatch, as an LLD's
 * batch reaches an HBA with one doorbell (blk_mq_ops.commit_rqs).
 * Idempotent.  What is held is dispatched by scsi_tgt_unplug(), by
 * scsi_tgt_poll() (which unplugs first), or by the core when the plug
 * holds the device's tags.
 * Context: @q's thread.
 */
void scsi_tgt_plug(struct scsi_tgt_queue *q);

/**
 * scsi_tgt_unplug() - dispatch what scsi_tgt_plug() held
 * (blk_finish_plug() on every plugged unit of @q) and stop holding.
 * Idempotent; nothing to do when not plugged.
 * Context: @q's thread.
 */
void scsi_tgt_unplug(struct scsi_tgt_queue *q);

/*
 * Task management (SAM-5 7; the functions iSCSI's Task Management Function
 * Request carries, RFC 7143 11.5).  Every task ends exactly once: the ones
 * a function terminates end through their @done with status TASK ABORTED
 * (SAM_STAT_TASK_ABORTED, no sense) before the function returns; a
 * transport that must send nothing for them (iSCSI) ignores that status.
 * The tasks of other nexuses that CLEAR TASK SET or a reset terminates
 * end TASK ABORTED as well, with @no_response set where the control mode
 * page's TAS bit is 0 (SAM-5 5.6: nothing is sent for them).
 * A task whose media access is in flight cannot be taken back from the
 * device: the function waits for it (polling the queue, at most
 * @tmf_timeout_ms) and ends it as aborted.
 */

/**
 * scsi_tgt_abort_task() - ABORT TASK (SAM-5 7.2) for @cmd, submitted on @q.
 * Return: 0 (FUNCTION COMPLETE): @cmd ended (TASK ABORTED) or had ended;
 * -ENOENT: no such task on @q (it had ended: its @done was called);
 * -EIO: rejected (SCSI_TGT_TMF_FAIL_ABORT); -ETIMEDOUT: its media access
 * did not end within tmf_timeout_ms (the task ends, aborted, when it does).
 * Context: @q's thread.
 */
int scsi_tgt_abort_task(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *cmd);

/**
 * scsi_tgt_clear_task_set() - CLEAR TASK SET (SAM-5 7.4) of @lun, asked on
 * @q by @nexus: every task of @lun, of every nexus, ends aborted (ABORT
 * TASK SET, the requesting nexus's tasks only, is the transport's ABORT
 * TASK of each).  The tasks of @lun on @q end before the call returns;
 * those of other queues where they end (in flight: when their media
 * access ends; held by delay_ms: when due; dropped: by that queue's own
 * abort or reset).  @nexus's own end TASK ABORTED; another nexus's as the
 * unit's control mode page's TAS bit says (SAM-5 5.6, SPC-4 7.5.8): TAS 1,
 * TASK ABORTED; TAS 0, TASK ABORTED with @no_response set (the transport
 * sends nothing) and a unit attention COMMANDS CLEARED BY ANOTHER
 * INITIATOR (2F/00) for that nexus, raised as its task ends.  Nothing else
 * changes: no unit attention for a nexus that had no task, reservations
 * and the prevention of medium removal stay.  A task the transport holds
 * before it reaches the core (waiting for its Data-Out) is the transport's.
 * Return: 0; -EINVAL: no such LUN; -ETIMEDOUT: media access on @q did not
 * end within tmf_timeout_ms (those tasks end aborted when it does).
 * Context: @q's thread.
 */
int scsi_tgt_clear_task_set(struct scsi_tgt_queue *q, uint64_t lun,
			    unsigned int nexus);

/**
 * scsi_tgt_lun_reset() - LOGICAL UNIT RESET (SAM-5 7.7) of @lun, asked on
 * @q by @nexus: the tasks of @lun on @q end (TASK ABORTED), those in
 * flight on other queues end aborted when their media access ends, those
 * held by delay_ms when due (tasks another queue dropped stay for that
 * queue's own abort or reset); another nexus's as the unit's control mode
 * page's TAS bit says (SAM-5 5.6): TAS 1 TASK ABORTED, TAS 0 TASK ABORTED
 * with @no_response set; a unit attention (29/03) for every nexus, the
 * one that asked included (SAM-5's logical unit reset);
 * an SPC-2 reservation of @lun is released and every nexus's prevention
 * of medium removal on it ends (SPC-4 6.13; persistent reservations stay).
 * Return: 0; -EINVAL: no such LUN; -EIO: rejected
 * (SCSI_TGT_TMF_FAIL_LUN_RESET); -ETIMEDOUT: media access on @q did not
 * end within tmf_timeout_ms.
 * Context: @q's thread.
 */
int scsi_tgt_lun_reset(struct scsi_tgt_queue *q, uint64_t lun,
		       unsigned int nexus);

/**
 * scsi_tgt_target_reset() - TARGET RESET (SAM-5 7.9; iSCSI TARGET WARM
 * RESET): scsi_tgt_lun_reset() of every logical unit.
 * Return: 0; -EIO: rejected (SCSI_TGT_TMF_FAIL_TARGET_RESET); -ETIMEDOUT.
 * Context: @q's thread.
 */
int scsi_tgt_target_reset(struct scsi_tgt_queue *q, unsigned int nexus);

/**
 * scsi_tgt_queue_reset() - end every task of @q (the transport lost its
 * connection, or the initiator resets its host adapter): dropped tasks
 * end TASK ABORTED, the others when their media access ends (waited for
 * without bound: the lower devices' own timeouts bound it).  Never fails.
 * Context: @q's thread.
 */
void scsi_tgt_queue_reset(struct scsi_tgt_queue *q);

/**
 * scsi_tgt_nexus_loss() - I_T nexus loss (SAM-5 6.3.4) of @nexus: the
 * transport lost it (its connection or session ended, a session was
 * reinstated).  On every logical unit: an SPC-2 reservation (RESERVE 6/10)
 * @nexus holds is released (SPC-2 5.5.1); the prevention of medium removal
 * @nexus established (PREVENT ALLOW MEDIUM REMOVAL, SPC-4 6.13) ends (the
 * medium stays while another nexus prevents its removal); a unit attention
 * condition I_T NEXUS LOSS OCCURRED (29/07) is established for @nexus
 * (SAM-5 6.3.4), in place of the conditions it had pending: the next
 * session of the same initiator port hears of the loss (its state may
 * have changed), not of what it missed before it.  Persistent
 * reservations and registrations stay (SPC-4 5.9.1), as do other
 * nexuses' conditions; a nexus that holds nothing only gets the unit
 * attention.
 * The nexus's tasks are not the core's to end here (it keeps no task list
 * per nexus): the transport ends them first (scsi_tgt_queue_reset() on the
 * queues that carried them), so that none of them sets state again after
 * the loss.
 * Return: 0; -EINVAL (@nexus not below SCSI_TGT_MAX_NEXUS).
 * Context: any thread, while other queues submit; takes each unit's
 * reservation lock.
 */
int scsi_tgt_nexus_loss(struct scsi_tgt *tgt, unsigned int nexus);

/**
 * scsi_tgt_add_error_rule() - add @rule to its logical unit; a rule of the
 * same type and opcode there is replaced (as scsi_debug does).
 * Return: 0; -EINVAL (no such LUN, a field out of range); -ENOSPC
 * (SCSI_TGT_MAX_ERROR_RULES already).
 * Context: any thread, while commands run.
 */
int scsi_tgt_add_error_rule(struct scsi_tgt *tgt,
			    const struct scsi_tgt_error_rule *rule);

/**
 * scsi_tgt_clear_error_rules() - remove every rule of logical unit @lun.
 * Return: 0; -EINVAL (no such LUN).
 * Context: any thread, while commands run.
 */
int scsi_tgt_clear_error_rules(struct scsi_tgt *tgt, uint64_t lun);

/**
 * scsi_tgt_get_error_rules() - copy up to @max of @lun's rules, counts as
 * they are now, into @rules.
 * Return: the number of rules the unit has (>= 0); -EINVAL (no such LUN).
 * Context: any thread.
 */
int scsi_tgt_get_error_rules(struct scsi_tgt *tgt, uint64_t lun,
			     struct scsi_tgt_error_rule *rules, unsigned int max);

/**
 * scsi_tgt_parse_error_rules() - rules from text: ';'-separated rules of
 * ','-separated NAME:VALUE fields: type:fail|timeout|busy (fail),
 * opcode:0..0xff (0xff: any; required), count:N (required), status:S
 * (fail: required, a SAM status but GOOD), sense:KEY/ASC/ASCQ in hex
 * (CHECK CONDITION: required), lun:N (0).  Numbers are decimal or 0x hex.
 * E.g. "opcode:0x28,count:-3,status:0x02,sense:3/11/00;type:busy,
 * opcode:0x2a,count:1".
 * @rules, @max: where to put them; *@nr: how many.
 * @why: on failure, the rule's number and the field, its value and the
 *	allowed range.
 * Return: 0; -EINVAL.
 * Context: any thread.
 */
int scsi_tgt_parse_error_rules(const char *text,
			       struct scsi_tgt_error_rule *rules,
			       unsigned int max, unsigned int *nr,
			       char *why, size_t whylen);

/**
 * struct scsi_tgt_stats - counters since creation, all queues.
 * @cmds: commands ended.  @check_conditions: of which CHECK CONDITION.
 * @read_blocks, @write_blocks: logical blocks moved.
 * @unit_attentions: unit attention conditions reported.
 * @injected: faults injected (opts, error rules).
 * @aborts, @lun_resets, @target_resets, @clear_task_sets: task
 * management functions done; @tmf_failed: rejected or timed out;
 * @tasks_aborted: tasks they, and PERSISTENT RESERVE OUT's PREEMPT AND
 * ABORT, ended.
 */
struct scsi_tgt_stats {
	uint64_t cmds;
	uint64_t check_conditions;
	uint64_t read_blocks;
	uint64_t write_blocks;
	uint64_t unit_attentions;
	uint64_t injected;
	uint64_t aborts, lun_resets, target_resets, tmf_failed, tasks_aborted;
	uint64_t clear_task_sets;
};

/* TransportIDs (SPC-4 7.6.4): at least 24 bytes, a multiple of 4. */
#define SCSI_TGT_TRANSPORT_ID_MIN 24
#define SCSI_TGT_TRANSPORT_ID_MAX 256

/**
 * scsi_tgt_set_nexus_id() - name the initiator port of I_T nexus @nexus
 * by its TransportID (SPC-4 7.6.4), as PERSISTENT RESERVE IN's READ FULL
 * STATUS reports it.  The target identifies a nexus by its index only (a
 * registration belongs to the index), so the transport must keep an
 * index for one I_T nexus and may name it.  A nexus never named reports
 * a made-up iSCSI TransportID (protocol identifier 5, format 00b) with
 * the name "iqn.2026-01.org.blkstack:nexus.N", N the index in decimal.
 * @id, @len: the TransportID, copied; NULL (and 0): back to the default.
 * Return: 0; -EINVAL (@nexus out of range, @len not a multiple of 4
 * within SCSI_TGT_TRANSPORT_ID_MIN..SCSI_TGT_TRANSPORT_ID_MAX); -ENOMEM.
 * Context: any thread.
 */
int scsi_tgt_set_nexus_id(struct scsi_tgt *tgt, unsigned int nexus,
			  const uint8_t *id, size_t len);

/** scsi_tgt_get_stats() - read the counters (relaxed). */
void scsi_tgt_get_stats(struct scsi_tgt *tgt, struct scsi_tgt_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_SCSI_TGT_H */
