/* SPDX-License-Identifier: MIT */
/*
 * The SCSI midlayer's interface to low-level drivers (LLDs): what Linux's
 * struct scsi_host_template is to an HBA driver.  The midlayer (sd's role,
 * the completion decision, error handling: blkstack/scsi.h,
 * src/drivers/scsi/scsi.c) builds a struct scsi_cmnd per request and hands
 * it to the LLD's queuecommand(); the LLD only moves the command, its data
 * and its status (to the SCSI target core in-process: the loopback LLD;
 * over iSCSI: the iscsi LLD, blkstack/scsi_iscsi.h) and calls the
 * command's done once.
 *
 * Threads: the midlayer gives each hardware queue an LLD queue
 * (init_queue()).  queuecommand(), poll() and the eh_* handlers of a queue
 * are called from the thread that holds the hardware queue, one at a time;
 * done() must be called on that thread too (inside queuecommand() or
 * poll(), or inside an eh_* handler for what it ends), never on another.
 */
#ifndef BLKSTACK_SCSI_HOST_H
#define BLKSTACK_SCSI_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "scsi.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * How the command fared on the way, apart from its SAM status (Linux's
 * host byte): the midlayer requeues SCSI_HOST_BUSY (DID_BUS_BUSY /
 * DID_REQUEUE: the host could not take it after all; the host is blocked a
 * while) and fails SCSI_HOST_ERROR (DID_ERROR: not delivered).
 */
enum scsi_host_status {
	SCSI_HOST_OK = 0,
	SCSI_HOST_BUSY = 1,
	SCSI_HOST_ERROR = 2,
};

/*
 * Bytes in front of a struct scsi_cmnd where the midlayer that issues it
 * keeps its sense buffer (scsi_cmd_sense()): SCSI_SENSE_MAX, rounded up
 * to whole cache lines.
 */
#define SCSI_CMD_SENSE_ROOM 256

/**
 * struct scsi_cmnd - one command, the midlayer's, lent to the LLD from
 * queuecommand() until done().
 * @lun: the logical unit.
 * @cdb, @cdb_len: the CDB, 6..16 bytes, in the command itself (Linux's
 *	scsi_cmnd.cmnd), so that a READ's command is written in one line.
 * @dir: enum scsi_data_dir.
 * @iov, @iovcnt, @xfer_len: the data buffer and its length, bytes (the
 *	request's own memory: an LLD moves data from or into it, no copy
 *	is asked for).
 * @done: the midlayer's; the LLD calls it exactly once per queuecommand()
 *	that returned 0.
 * @ml_flags: the midlayer's own (as Linux's scsi_cmnd.flags): an LLD
 *	neither reads nor writes it.  Here, in the line the completion
 *	reads for the results anyway, so that a command that ends GOOD
 *	touches no other line of the midlayer's.
 * Results, set by the LLD before done: @host_status (enum
 *	scsi_host_status), @status (SAM status), the sense data at
 *	scsi_cmd_sense() and @sense_len (CHECK CONDITION), @resid (bytes of
 *	@xfer_len not moved), @overflow (the device would have moved more
 *	than @xfer_len).
 * The sense buffer, SCSI_SENSE_MAX bytes (Linux's sense_buffer), is the
 * SCSI_CMD_SENSE_ROOM bytes in front of the command (scsi_cmd_sense()):
 * the cold buffer is not between the command's fields and the LLD's area,
 * the lines every I/O touches, and the command holds no pointer to it.
 * The LLD's private area, cmd_size bytes of its template, is
 * scsi_cmd_priv(): it lives as long as the command.  The command is one
 * 64-byte cache line.
 */
struct scsi_cmnd {
	uint64_t lun;
	uint8_t cdb[16];
	uint8_t cdb_len;
	uint8_t dir;
	uint8_t host_status;
	uint8_t status;
	uint8_t sense_len;
	bool overflow;
	uint8_t ml_flags;
	const struct iovec *iov;
	unsigned int iovcnt;
	uint32_t xfer_len;
	uint32_t resid;
	void (*done)(struct scsi_cmnd *cmd);
} __attribute__((aligned(16)));

/**
 * scsi_cmd_sense() - the sense buffer of @cmd: SCSI_SENSE_MAX bytes the
 * midlayer placed right in front of it.  The LLD writes the sense data of
 * a CHECK CONDITION there (and @cmd->sense_len).
 */
static inline uint8_t *scsi_cmd_sense(struct scsi_cmnd *cmd)
{
	return (uint8_t *)cmd - SCSI_CMD_SENSE_ROOM;
}

/** scsi_cmd_priv() - the LLD's cmd_size bytes of @cmd (16-byte aligned). */
static inline void *scsi_cmd_priv(struct scsi_cmnd *cmd)
{
	return cmd + 1;
}

/**
 * struct scsi_host_template - an LLD.  Fill with designated initializers.
 * @name: for messages ("loopback", "iscsi").
 * @cmd_size: bytes of private data per command (scsi_cmd_priv()).
 * @init_queue: set up a queue for hardware queue @idx (UINT32_MAX: the
 *	probe's, used at attach by the creating thread) that has at most
 *	@depth commands outstanding; *@queue is handed to the other ops.
 *	Return 0 or -errno.  Context: blk_dev_create()'s thread.
 * @exit_queue: undo init_queue; nothing is outstanding.
 * @queuecommand: start @cmd.  Return 0: accepted (done is called once,
 *	maybe before it returns); -EAGAIN: the device has no room now
 *	(SCSI_MLQUEUE_DEVICE_BUSY: the request is requeued); -EBUSY: the host
 *	is busy (SCSI_MLQUEUE_HOST_BUSY: requeued, the host blocked a while);
 *	other -errno: the request fails.  Context: the queue's thread.
 * @commit_rqs: optional; the end of a dispatch batch (blk_mq_ops.commit_rqs,
 *	as Linux's scsi_host_template.commit_rqs): an LLD that held the
 *	batch's commands (a doorbell not yet rung, a plug) sends them now.
 *	Called once after every batch in which queuecommand() accepted a
 *	command.  Context: the queue's thread.
 * @poll: reap what ended, calling each command's done.  Return how many
 *	(>= 0).  Context: the queue's thread; never blocks.
 * @wait: optional; sleep until the queue may have something for poll()
 *	(a completion, a socket readable), at most @timeout_ns (ns, > 0), as
 *	blk_mq_ops.wait: return 0 when woken (spurious wake-ups allowed),
 *	-ETIME when the time passed, -EINTR, or another -errno when it
 *	cannot sleep now (the core then polls).  Without it the queue's
 *	thread polls while it waits.  Context: the queue's thread.
 * @eh_abort_handler: ABORT TASK for @cmd.  Return 0 (SUCCESS: the command
 *	ended through done, TASK ABORTED, before it returns, or had ended, or
 *	was not at the device and will end by itself) or -errno (FAILED:
 *	error handling goes on to a LUN reset).
 * @eh_device_reset_handler: LOGICAL UNIT RESET of @lun: 0 when every
 *	command of the unit on this queue ended through done; -errno.
 * @eh_target_reset_handler: TARGET RESET: as above for every unit.
 * @eh_host_reset_handler: the host's own reset: every command of the
 *	queue ends through done before it returns; it cannot fail.
 * @get_stats: optional; add the far side's counters to @st (injected
 *	faults, unit attentions).  Context: any thread, quiet queues.
 * @destroy: free the host data.  Context: the disk's close.
 * The eh_* handlers run on the queue's thread from the request timeout
 * (blk_mq_ops.timeout); each is bounded by a time the LLD states.
 */
struct scsi_host_template {
	const char *name;
	uint32_t cmd_size;
	int (*init_queue)(void *hostdata, uint32_t idx, uint32_t depth,
			  void **queue);
	void (*exit_queue)(void *queue);
	int (*queuecommand)(void *queue, struct scsi_cmnd *cmd);
	void (*commit_rqs)(void *queue);
	int (*poll)(void *queue);
	int (*wait)(void *queue, uint64_t timeout_ns);
	int (*eh_abort_handler)(void *queue, struct scsi_cmnd *cmd);
	int (*eh_device_reset_handler)(void *queue, uint64_t lun);
	int (*eh_target_reset_handler)(void *queue);
	void (*eh_host_reset_handler)(void *queue);
	void (*get_stats)(void *hostdata, struct blk_scsi_stats *st);
	void (*destroy)(void *hostdata);
};

struct scsi_tgt_config;

/**
 * struct scsi_loopback_config - the loopback LLD: a SCSI target core over
 * @lower, in this process.
 * @lower: LUN 0's device; owned by the host from the call on (closed on
 *	failure too).
 * @tgt: the target's configuration (scsi_debug's knobs); NULL: defaults.
 *	Its luns, nr_luns, own_luns and id are set here.
 * @thread: a device thread per queue (rings of command pointers each way;
 *	task management by mailbox), as nvme_ctrl's thread mode; false:
 *	inline, on the submitting thread.
 */
struct scsi_loopback_config {
	struct blk_dev *lower;
	const struct scsi_tgt_config *tgt;
	bool thread;
};

/**
 * scsi_loopback_create() - a loopback host.
 * @hostt, @hostdata: set on success, for struct blk_scsi_config.
 * @err: a message naming the field on failure.
 * Return: 0; -EINVAL (the target's configuration); -ENOMEM.
 * Context: any thread.
 */
int scsi_loopback_create(const struct scsi_loopback_config *cfg,
			 const struct scsi_host_template **hostt,
			 void **hostdata, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_SCSI_HOST_H */
