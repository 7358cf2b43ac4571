/* SPDX-License-Identifier: MIT */
/*
 * nvme driver: an NVMe host driver in the manner of Linux's nvme-pci, over
 * a controller reached through its registers and queue memory
 * (blkstack/nvme_ctrl.h).  Polled queues: no interrupts.
 *
 * Bring-up (Base 3.5.1): disable and wait for CSTS.RDY = 0, program AQA,
 * ASQ, ACQ, enable with CC.MPS/IOSQES/IOCQES, wait for CSTS.RDY = 1,
 * Identify Controller, Identify active namespace list, Identify Namespace,
 * Set Features Number of Queues, then one Create I/O CQ + Create I/O SQ pair
 * per hardware queue.
 *
 * Fast path: queue_rq() writes the SQE into the SQ slot (CID = the request's
 * tag) and builds PRPs from the request's segments; commit_rqs() writes the
 * SQ tail doorbell once per dispatch batch; poll() consumes CQEs by phase tag
 * and writes the CQ head doorbell once per batch.
 *
 * Timeouts send Abort, then reset the controller; a reset is published as a
 * new generation and each queue's owner thread recreates its own queue
 * (docs/nvme.md, "Timeouts and resets").
 */
#ifndef BLKSTACK_NVME_H
#define BLKSTACK_NVME_H

#include <stddef.h>
#include <stdint.h>

#include "blk_mq.h"
#include "nvme_ctrl.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * How queue_rq() fills a submission queue entry (seed 002's experiment):
 * zero the 64 bytes first and store the used fields, or store each of the
 * 16 fields exactly once in ascending order.
 */
enum blk_nvme_sqe_init {
	BLK_NVME_SQE_MEMSET = 0,
	BLK_NVME_SQE_FIELDS = 1,
};

/**
 * struct blk_nvme_config - an NVMe namespace as a block device.
 * @queue: tag set and limits.  nr_hw_queues: I/O queue pairs to create,
 *	1..NVME_CTRL_MAX_IO_QUEUES (0: 1; fewer when the controller grants
 *	fewer).  queue_depth: tags per
 *	queue, at most @io_queue_entries - 1 (0: @io_queue_entries - 1).
 *	max_sectors: capped by the controller's MDTS.  capacity and
 *	logical_block_size come from Identify Namespace.  name, ops, cmd_size,
 *	driver_data, the can_* flags and stores_data are set by the driver.
 * @ctrl: the controller (powered on, any state: the driver resets it).
 * @own_ctrl: blk_dev_close() destroys @ctrl.
 * @nsid: namespace to expose, 0: the first active one.
 * @io_queue_entries: entries per I/O SQ and CQ, 2..CAP.MQES+1 (0: 1024,
 *	or CAP.MQES+1 if smaller).
 * @admin_queue_entries: 2..4096 (0: 32).
 * @sqe_init: enum blk_nvme_sqe_init.
 * @admin_timeout_ms: admin command timeout, in ms (0: 5000).
 * @max_retries: times one request is sent again, as Linux's
 *	nvme_core.max_retries: after an error status without Do Not Retry
 *	(after the Command Retry Delay the status's CRD field picks from
 *	Identify Controller CRDT1-3, in 100 ms), and after a timeout and
 *	controller reset; then it fails (a timeout with BLK_STS_TIMEOUT).
 *	0: 5, Linux's default; BLK_NVME_RETRIES_NONE: never.
 *
 * Queue memory (SQs, CQs, PRP lists: max_sectors worth per tag, bounce
 * buffers: one per tag on first use) is page aligned and freed at
 * blk_dev_close(), after the controller is destroyed (own_ctrl) or
 * disabled.
 */
/* blk_nvme_config.max_retries: no retry at all */
#define BLK_NVME_RETRIES_NONE UINT32_MAX

struct blk_nvme_config {
	struct blk_dev_config queue;
	struct nvme_ctrl *ctrl;
	bool own_ctrl;
	uint32_t nsid;
	uint32_t io_queue_entries;
	uint32_t admin_queue_entries;
	enum blk_nvme_sqe_init sqe_init;
	uint32_t admin_timeout_ms;
	uint32_t max_retries;
};

/**
 * blk_nvme_create() - bring up the controller and expose one namespace.
 * @cfg: configuration; copied.
 * @dev: set on success.
 * @err: receives a message naming the step or field that failed.
 * @errlen: size of @err.
 *
 * Requests larger than the largest transfer (max_sectors, after MDTS and
 * the 65536-block NLB limit) fail with BLK_STS_INVAL: the block core does
 * not split bios, so consumers keep bi_size within max_sectors.
 *
 * Return: 0; -EINVAL (a field out of range, named with its allowed range in
 * @err: io_queue_entries against CAP.MQES+1, queue_depth against
 * io_queue_entries - 1, nr_hw_queues, admin_queue_entries, sqe_init; or a
 * controller without 4 KiB pages (CAP.MPSMIN) or the NVM command set
 * (CAP.CSS); or a queue limit blk_dev_create() refused); -ETIMEDOUT
 * (CSTS.RDY did not change within CAP.TO, or an admin command timed out);
 * -EIO (CSTS.CFS, or an admin command failed: its NVMe status is in @err);
 * -ENODEV (no active namespace, @nsid not active, or a namespace format
 * with metadata or an LBA size outside 512..65536); -ENOMEM.  On failure
 * @ctrl is left disabled and is not destroyed, even with own_ctrl.
 * Context: any thread.
 */
int blk_nvme_create(const struct blk_nvme_config *cfg, struct blk_dev **dev,
		    char *err, size_t errlen);

/**
 * blk_nvme_status_to_blk() - map an NVMe status field to a blk_status_t.
 * @sf: status field as kept by blkstack (NVME_SF_*: SC bits 7:0, SCT 10:8).
 *
 * Success -> OK; LBA Out of Range, Invalid Field, Invalid Opcode -> INVAL
 * or NOTSUPP (opcode); Capacity Exceeded -> NOSPC; media errors -> MEDIUM;
 * Compare Failure -> MEDIUM; protection checks -> PROTECTION; Write to read
 * only -> TARGET; path errors -> TRANSPORT; Namespace Not Ready -> AGAIN;
 * the rest -> IOERR.
 * Context: any.
 */
blk_status_t blk_nvme_status_to_blk(uint16_t sf);

/**
 * blk_nvme_rq_status() - the NVMe status field a request completed with
 * (kept beside its blk_status_t).
 * @rq: a request of an nvme device, in its bi_end_io or after.
 *
 * The whole 15-bit field (CQE DW3 bits 31:17: SC, SCT, CRD, M, DNR), as
 * rq->native_status and the bios' bi_native_status carry it on errors.
 * Requests the host fails itself (a dead controller, a request the driver
 * refuses) report 0xffff here and Command Aborted By Host (SCT 3h, SC 71h)
 * as native status.
 * Return: the status field (0: success), or 0xffff when the request never
 * reached the controller.
 * Context: the request's ctx thread.
 */
uint16_t blk_nvme_rq_status(struct request *rq);

/**
 * struct blk_nvme_stats - host driver counters.
 * @sq_doorbells, @cq_doorbells: doorbell writes (fast path: once per batch).
 * @cqes: completion entries consumed.
 * @prp_lists: commands that needed a PRP list.
 * @bounced: commands whose segments broke the PRP rules and were copied
 *	through a bounce buffer.
 * @timeouts: requests whose deadline passed.
 * @aborts: Abort commands sent; @abort_ok of them aborted the command.
 * @resets: controller resets; @requeued: requests requeued by resets.
 * @errors: completions with an NVMe error status.
 * @retried: requests sent again after an error status without DNR
 *	(max_retries).
 * @failed_retries: requests failed because they had used their retries
 *	(after error statuses or timeouts).
 */
struct blk_nvme_stats {
	uint64_t sq_doorbells;
	uint64_t cq_doorbells;
	uint64_t cqes;
	uint64_t prp_lists;
	uint64_t bounced;
	uint64_t timeouts;
	uint64_t aborts;
	uint64_t abort_ok;
	uint64_t resets;
	uint64_t requeued;
	uint64_t errors;
	uint64_t retried;
	uint64_t failed_retries;
};

/**
 * blk_nvme_get_stats() - read the counters, summed over the I/O queues
 * (relaxed reads while I/O runs).
 * @dev: an nvme device.
 * @st: filled in.
 * Context: any thread.
 */
void blk_nvme_get_stats(struct blk_dev *dev, struct blk_nvme_stats *st);

/**
 * blk_nvme_reset() - reset the controller as the timeout path does:
 * disable, re-enable with the admin queue, Set Features Number of Queues,
 * publish a new reset generation.  Each I/O queue is recreated by the
 * thread that owns it at its next blk_poll() or submission, which first
 * completes what the controller posted before it stopped and requeues the
 * rest: requests in flight complete exactly once.  docs/nvme.md describes
 * the design.
 * @dev: an nvme device.
 *
 * A reset that fails leaves the controller dead: every request then fails
 * with BLK_STS_IOERR.
 * Return: 0 (also when another thread reset it meanwhile); -ENODEV when
 * the controller is already dead; -ETIMEDOUT (CSTS.RDY did not change
 * within CAP.TO, or an admin command timed out); -EIO (CSTS.CFS, an admin
 * command failed, or the controller now grants fewer I/O queues).
 * Context: any thread (the ctx threads keep polling; each requeues its
 * queue's requests at its next blk_poll()).
 */
int blk_nvme_reset(struct blk_dev *dev);

/**
 * blk_nvme_ctrl() - the controller under a device (for fault injection and
 * its counters).
 * @dev: an nvme device.
 * Return: the controller given in blk_nvme_config.ctrl.
 * Context: any.
 */
struct nvme_ctrl *blk_nvme_ctrl(struct blk_dev *dev);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_NVME_H */
