/* SPDX-License-Identifier: MIT */
/*
 * Emulated NVMe controller: an NVMe 2.0 I/O controller with one or more
 * namespaces, each stored on a blk_dev (ram, or uring over a file).
 *
 * It behaves like hardware: it sees only what the host writes into its
 * registers (BAR0: CAP..ACQ and the doorbells, through nvme_ctrl_read*() /
 * nvme_ctrl_write*()) and into queue memory (SQ entries, PRP lists), and it
 * answers only through completion queue entries and register reads.  There
 * is no other call from host to controller.
 *
 * Memory model: a "bus address" (ASQ, ACQ, PRP entries, Create I/O SQ/CQ
 * PRP1) is a virtual address in this process, an identity-mapped IOMMU.  The
 * controller reads and writes host memory through it directly.
 *
 * Two ways to run (enum nvme_ctrl_mode):
 *  - NVME_CTRL_THREAD: the controller has its own thread that polls the
 *    doorbells and the CC register.  Register writes only store the value
 *    (release); the thread acts on them.  Host and controller run
 *    concurrently, as with a real device.
 *  - NVME_CTRL_INLINE: no thread.  Every register write is processed on the
 *    writer's thread before the write returns: a SQ tail doorbell fetches
 *    and executes the new commands, a CQ head doorbell frees CQ slots and
 *    reaps finished namespace I/O (completing commands that waited for it or
 *    for a free CQ slot), a CC write enables, disables or shuts down.  A host
 *    that polls an empty CQ while commands are outstanding writes the CQ head
 *    doorbell again (same value) to let time pass for the controller; that
 *    write is legal on real hardware and a no-op there.  Processing of one
 *    CQ (and the SQs that post to it) is serialised by a per-CQ mutex.
 *
 * What is emulated, and the decisions where the spec leaves a choice, are
 * in docs/nvme-ctrl.md.  In short: PRPs only (no SGLs, no fused commands,
 * no metadata), one LBA format per namespace, polled queues (interrupt
 * fields are accepted and ignored), CAP.CQR = 1 (queues must be physically
 * contiguous), an unsupported configuration at enable sets CSTS.CFS.
 *
 * Spec references are to the NVM Express Base Specification 2.0 ("Base")
 * and the NVM Command Set Specification 1.0 ("NVM").
 */
#ifndef BLKSTACK_NVME_CTRL_H
#define BLKSTACK_NVME_CTRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk.h"
#include "nvme_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvme_ctrl;

enum nvme_ctrl_mode {
	NVME_CTRL_THREAD = 0,
	NVME_CTRL_INLINE = 1,
};

/* Most namespaces one controller holds (NN). */
#define NVME_CTRL_MAX_NS 32
/* Most I/O queue pairs (Number of Queues feature, 0's based + 1). */
#define NVME_CTRL_MAX_IO_QUEUES 256

/**
 * struct nvme_ctrl_config - a controller.  Zero fields take the default.
 * @mode: NVME_CTRL_THREAD (default) or NVME_CTRL_INLINE.
 * @nr_ns: namespaces, 1..NVME_CTRL_MAX_NS; NSID i+1 is stored on @ns[i].
 * @ns: the namespaces' devices.  Each needs as many hardware queues as the
 *	controller uses backend contexts (thread mode: 1; inline mode: one per
 *	I/O CQ the host creates, attached on the CQ's first command for that
 *	namespace and released when the CQ is deleted) or shared_hctx; an
 *	inline-mode command that finds no free hardware queue completes with
 *	Internal Error.  The namespace's LBA size is the device's logical block
 *	size and its size the device's capacity.  Transfers larger than the
 *	device's max_sectors or max_segments are split into several bios.
 * @own_ns: nvme_ctrl_destroy() closes the @ns devices (a failed
 *	nvme_ctrl_create() leaves them to the caller).
 * @mqes: CAP.MQES + 1, largest queue size in entries, 2..65536 (0: 4096).
 * @max_io_queues: I/O SQs and CQs granted by Number of Queues,
 *	1..NVME_CTRL_MAX_IO_QUEUES (0: 64).
 * @dstrd: CAP.DSTRD, doorbell stride 4 << @dstrd bytes, 0..8 (0: 0).
 * @mpsmin: CAP.MPSMIN, smallest page size 2^(12 + @mpsmin), 0..4 (0: 0 = 4 KiB).
 * @mpsmax: CAP.MPSMAX, 0..4 and >= @mpsmin (0: @mpsmin).
 * @timeout_ms: CAP.TO in ms, rounded up to 500 ms units, 500..127500
 *	(0: 2000): how long enable/disable may take.
 * @mdts: Identify MDTS, max transfer 2^@mdts min-pages, 0..15 (0: 8 = 1 MiB
 *	with 4 KiB pages).  Larger transfers fail with Invalid Field.
 * @vwc: report a volatile write cache (Identify VWC bit 0) and honour FUA
 *	and Flush by flushing the backend (default: when any namespace device
 *	can_flush).  Set features VWC enables/disables it.
 * @acl: Abort Command Limit, 0's based (0: 3 = 4 concurrent Aborts).
 * @aerl: Asynchronous Event Request Limit, 0's based (0: 3).
 * @serial: Identify SN, up to 20 ASCII characters (NULL: "BLKSTACK0001").
 * @model: Identify MN, up to 40 characters (NULL: "blkstack emulated NVMe").
 * @firmware: Identify FR, up to 8 characters (NULL: BLKSTACK_VERSION).
 */
struct nvme_ctrl_config {
	enum nvme_ctrl_mode mode;
	unsigned int nr_ns;
	struct blk_dev **ns;
	bool own_ns;
	uint32_t mqes;
	uint32_t max_io_queues;
	uint32_t dstrd;
	uint32_t mpsmin;
	uint32_t mpsmax;
	uint32_t timeout_ms;
	uint32_t mdts;
	int vwc;             /* -1 / 0: default, 1: on, 2: off */
	uint32_t acl;
	uint32_t aerl;
	const char *serial;
	const char *model;
	const char *firmware;
};

/**
 * nvme_ctrl_create() - power on a controller (CSTS.RDY = 0, CC = 0).
 * @cfg: configuration; copied (the @ns array too).
 * @ctrl: set on success.
 * @err: receives a message naming the field and its allowed range.
 * @errlen: size of @err.
 *
 * Thread mode attaches one context per namespace and starts the
 * controller thread here.  CAP is fixed from @cfg (Base 3.1.3.1): MQES,
 * CQR = 1, AMS = 0 (round robin only), TO, DSTRD, NSSRS = 0, CSS = NVM,
 * MPSMIN, MPSMAX.
 * Return: 0; -EINVAL (a field out of range, named in @err); -ENOMEM;
 * -EBUSY from blk_ctx_attach() (thread mode: a namespace device has no
 * free hardware queue); -errno from pthread_create.
 * Context: any thread.
 */
int nvme_ctrl_create(const struct nvme_ctrl_config *cfg,
		     struct nvme_ctrl **ctrl, char *err, size_t errlen);

/**
 * nvme_ctrl_destroy() - power off: stop the thread, drain namespace I/O,
 * free.  Closes the namespace devices when own_ns was set.
 * @ctrl: the controller, or NULL.
 *
 * Commands still outstanding end without a CQE, as in a Controller Reset
 * (Base 3.7.2); nothing is flushed (use a shutdown, CC.SHN, for that).
 * Context: any thread.  The controller no longer touches host memory after
 * this returns, so queue memory may then be freed.
 */
void nvme_ctrl_destroy(struct nvme_ctrl *ctrl);

/**
 * nvme_ctrl_read32() - read a 32-bit register of BAR0.
 * @ctrl: the controller.
 * @off: byte offset (enum nvme_reg), 4-byte aligned.
 *
 * Doorbells read as 0 (Base 3.1.3.25: reads are vendor specific).
 * Return: the register value; 0 for reserved or unknown offsets.
 * Context: any thread.
 */
uint32_t nvme_ctrl_read32(struct nvme_ctrl *ctrl, uint32_t off);

/**
 * nvme_ctrl_read64() - read CAP, ASQ or ACQ (Base 3.1.3.1, 3.1.3.9-10).
 * @ctrl: the controller.
 * @off: NVME_REG_CAP, NVME_REG_ASQ or NVME_REG_ACQ; any other 4-byte
 *	aligned offset reads as two nvme_ctrl_read32() calls (low first).
 * Return: the register value.
 * Context: any thread.
 */
uint64_t nvme_ctrl_read64(struct nvme_ctrl *ctrl, uint32_t off);

/**
 * nvme_ctrl_write32() - write a 32-bit register of BAR0.
 * @ctrl: the controller.
 * @off: byte offset: CC, AQA, INTMS, INTMC, NSSR, the halves of ASQ and
 *	ACQ, or a doorbell (Base 3.1.3.25, 3.1.3.26: 1000h + (2y [+ 1]) *
 *	(4 << CAP.DSTRD)).
 * @val: the value.
 *
 * Writes to read-only registers are ignored, and so are NSSR writes
 * (CAP.NSSRS = 0) and writes between doorbells when CAP.DSTRD > 0.  INTMS
 * sets and INTMC clears bits of the mask both read back (no interrupts are
 * raised: queues are polled).  CC (Base 3.1.3.5): EN 0 -> 1 checks MPS,
 * CSS, AMS, AQA, ASQ and ACQ and sets CSTS.RDY, or CSTS.CFS when they are
 * unsupported; EN 1 -> 0 is a Controller Reset; SHN starts a shutdown,
 * reported in CSTS.SHST (Base 3.6.2).  An invalid doorbell write (a
 * queue that does not exist, a tail past the queue size, a head that frees
 * entries the host was never given) is ignored and posts an asynchronous
 * event of type Error (Base 5.2, Invalid Doorbell Write Value / Register)
 * when an AER is outstanding.  In inline mode the write is processed before
 * returning (see the file comment).
 * Context: any thread; the doorbells of one queue from one thread at a time
 * (the host's queue owner).
 */
void nvme_ctrl_write32(struct nvme_ctrl *ctrl, uint32_t off, uint32_t val);

/**
 * nvme_ctrl_write64() - write ASQ or ACQ (Base 3.1.3.9, 3.1.3.10).
 * @ctrl: the controller.
 * @off: NVME_REG_ASQ or NVME_REG_ACQ; another offset is written as two
 *	nvme_ctrl_write32() calls (low first).
 * @val: the value; bits 11:0 are reserved and read as 0.
 *
 * Ignored while CC.EN = 1.
 * Context: any thread.
 */
void nvme_ctrl_write64(struct nvme_ctrl *ctrl, uint32_t off, uint64_t val);

/**
 * nvme_ctrl_dstrd() - CAP.DSTRD, for nvme_sq_tail_doorbell(); the same as
 * NVME_CAP_DSTRD(nvme_ctrl_read64(ctrl, NVME_REG_CAP)).
 */
uint32_t nvme_ctrl_dstrd(const struct nvme_ctrl *ctrl);

/* ------------------------------------------------------ fault injection */

/**
 * struct nvme_ctrl_fault - make matching commands fail, slow down or lose
 * their completion (to exercise the host's error and timeout paths).
 * @admin: match admin commands (else I/O commands).
 * @opcode: command opcode to match, or -1 for any.
 * @qid: SQ to match, or -1 for any.
 * @nsid: namespace to match, 0 for any.
 * @slba, @nlb: I/O commands only: match commands whose LBA range overlaps
 *	[@slba, @slba + @nlb); @nlb 0 matches any range.
 * @status: status field to complete with (NVME_SF(sct, sc), optionally
 *	| NVME_SF_DNR); 0 leaves the status alone.  The command is not
 *	executed when a status is injected.
 * @delay_us: added latency, microseconds: the fetched command waits this
 *	long before it executes (and so before its completion is posted).
 *	While it waits an Abort aborts it (Command Abort Requested).  Inline
 *	mode lets time pass only on doorbell writes of the command's CQ.
 * @drop: execute the command but never post its completion.
 * @count: matches to act on, then the fault is removed; 0: forever.
 */
struct nvme_ctrl_fault {
	bool admin;
	int opcode;
	int qid;
	uint32_t nsid;
	uint64_t slba;
	uint64_t nlb;
	uint16_t status;
	uint32_t delay_us;
	bool drop;
	uint32_t count;
};

/**
 * nvme_ctrl_add_fault() - add a fault rule; rules are checked in order and
 * the first match acts.
 * @ctrl: the controller.
 * @f: the rule; copied.
 * Return: 0, -ENOSPC when 16 rules exist, -EINVAL for a bad field (opcode
 * outside -1..255, qid outside -1..65535, an admin rule with a qid other
 * than -1 or 0, an I/O rule with qid 0, an LBA range that wraps, status
 * wider than 15 bits).
 * Context: any thread (rules are protected by a lock taken only when at
 * least one rule exists).
 */
int nvme_ctrl_add_fault(struct nvme_ctrl *ctrl, const struct nvme_ctrl_fault *f);

/* the longest delay= a fault rule written as text may ask for: 60 s */
#define NVME_CTRL_FAULT_MAX_DELAY_US 60000000u

/**
 * nvme_ctrl_parse_fault() - a fault rule from its text form, the one bench
 * and serve take (--nvme_fault=SPEC).
 * @spec: comma-separated items: "admin" (match admin commands), "op=NAME"
 *	(I/O: read, write, flush, compare, write_zeroes, dsm; admin: identify,
 *	abort, get_log_page, set_features, get_features, create_sq, create_cq,
 *	delete_sq, delete_cq, async_event, keep_alive; or an opcode 0..255),
 *	"qid=N" (0..65535), "nsid=N", "slba=N", "nlb=N" (logical blocks),
 *	"status=NAME" (read_error, write_fault, internal, ns_not_ready,
 *	lba_range, invalid_field, ... or "SCT:SC" in numbers, e.g. 2:0x81),
 *	"dnr" (Do Not Retry), "crd=1..3" (Command Retry Delay index),
 *	"delay=TIME" (ns, us, ms, s; us without a suffix; at most
 *	NVME_CTRL_FAULT_MAX_DELAY_US), "drop" (never post the completion),
 *	"count=N" (act on N matches, then go; 0 or absent: every match).
 *	At least one of status=, delay= and drop.
 *	Example: "op=write,status=write_fault,dnr,count=10".
 * @f: filled in, ready for nvme_ctrl_add_fault().
 * @err: receives "'SPEC': what is wrong, and what is allowed".
 * @errlen: size of @err.
 * Return: 0 or -EINVAL.
 * Context: any.
 */
int nvme_ctrl_parse_fault(const char *spec, struct nvme_ctrl_fault *f,
			  char *err, size_t errlen);

/** nvme_ctrl_clear_faults() - remove every rule.  Context: any thread. */
void nvme_ctrl_clear_faults(struct nvme_ctrl *ctrl);

/* ---------------------------------------------------------------- stats */

/**
 * struct nvme_ctrl_stats - controller counters (relaxed reads while running).
 * @commands: SQEs fetched, admin included.
 * @completions: CQEs posted.
 * @sq_doorbells, @cq_doorbells: doorbell writes seen.
 * @errors: completions with a status other than success.
 * @dropped: completions withheld by a drop fault.
 * @aborted: commands completed with Command Abort Requested.
 * @resets: CC.EN 1 -> 0 transitions (controller resets).
 * @shutdowns: completed shutdown notifications.
 * @invalid_doorbells: doorbell writes ignored as invalid.
 */
struct nvme_ctrl_stats {
	uint64_t commands;
	uint64_t completions;
	uint64_t sq_doorbells;
	uint64_t cq_doorbells;
	uint64_t errors;
	uint64_t dropped;
	uint64_t aborted;
	uint64_t resets;
	uint64_t shutdowns;
	uint64_t invalid_doorbells;
};

/** nvme_ctrl_get_stats() - read the counters.  Context: any thread. */
void nvme_ctrl_get_stats(const struct nvme_ctrl *ctrl,
			 struct nvme_ctrl_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_NVME_CTRL_H */
