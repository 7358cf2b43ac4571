/* SPDX-License-Identifier: MIT */
/*
 * SCSI constants and sense data, shared by the target core
 * (blkstack/scsi_tgt.h) and, later, the initiator side (sd's role and the
 * midlayer).  Values from SAM-5 (status), SPC-4 (sense data, opcodes,
 * ASC/ASCQ table in annex D) and SBC-3 (block commands).
 */
#ifndef BLKSTACK_SCSI_H
#define BLKSTACK_SCSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SAM-5 5.3.1: status codes */
enum scsi_status {
	SAM_STAT_GOOD = 0x00,
	SAM_STAT_CHECK_CONDITION = 0x02,
	SAM_STAT_CONDITION_MET = 0x04,
	SAM_STAT_BUSY = 0x08,
	SAM_STAT_RESERVATION_CONFLICT = 0x18,
	SAM_STAT_TASK_SET_FULL = 0x28,
	SAM_STAT_ACA_ACTIVE = 0x30,
	SAM_STAT_TASK_ABORTED = 0x40,
};

/* Data direction, from the initiator's point of view (SAM-5). */
enum scsi_data_dir {
	SCSI_DIR_NONE = 0,
	SCSI_DIR_TO_DEVICE = 1,   /* Data-Out: WRITE, UNMAP's parameter list */
	SCSI_DIR_FROM_DEVICE = 2, /* Data-In: READ, INQUIRY */
};

/* SPC-4 4.5.6: sense keys */
enum scsi_sense_key {
	SK_NO_SENSE = 0x0,
	SK_RECOVERED_ERROR = 0x1,
	SK_NOT_READY = 0x2,
	SK_MEDIUM_ERROR = 0x3,
	SK_HARDWARE_ERROR = 0x4,
	SK_ILLEGAL_REQUEST = 0x5,
	SK_UNIT_ATTENTION = 0x6,
	SK_DATA_PROTECT = 0x7,
	SK_BLANK_CHECK = 0x8,
	SK_COPY_ABORTED = 0xa,
	SK_ABORTED_COMMAND = 0xb,
	SK_VOLUME_OVERFLOW = 0xd,
	SK_MISCOMPARE = 0xe,
};

/* SPC-4 annex D: additional sense codes used here, ASC << 8 | ASCQ */
#define ASC_NO_ADDITIONAL_SENSE             0x0000
#define ASC_LUN_NOT_READY_INIT_REQUIRED     0x0402 /* initializing command required */
#define ASC_WRITE_ERROR                     0x0c00
#define ASC_UNRECOVERED_READ_ERROR          0x1100
#define ASC_PARAMETER_LIST_LENGTH_ERROR     0x1a00
#define ASC_MISCOMPARE_DURING_VERIFY        0x1d00
#define ASC_INVALID_OPCODE                  0x2000
#define ASC_LBA_OUT_OF_RANGE                0x2100
#define ASC_INVALID_FIELD_IN_CDB            0x2400
#define ASC_LUN_NOT_SUPPORTED               0x2500
#define ASC_INVALID_FIELD_IN_PARAM_LIST     0x2600
#define ASC_WRITE_PROTECTED                 0x2700
#define ASC_SPACE_ALLOC_FAILED_WP           0x2707
#define ASC_POWER_ON_RESET                  0x2900
#define ASC_LUN_RESET_OCCURRED              0x2903 /* bus device reset function occurred */
#define ASC_MODE_PARAMETERS_CHANGED         0x2a01
#define ASC_RESERVATIONS_PREEMPTED          0x2a03
#define ASC_RESERVATIONS_RELEASED           0x2a04
#define ASC_REGISTRATIONS_PREEMPTED         0x2a05
#define ASC_CAPACITY_DATA_CHANGED           0x2a09
#define ASC_REPORTED_LUNS_CHANGED           0x3f0e
#define ASC_SAVING_PARAMS_NOT_SUPPORTED     0x3900
#define ASC_INTERNAL_TARGET_FAILURE         0x4400
#define ASC_COMMAND_TIMEOUT                 0x2e02 /* insufficient time for operation */
#define ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR 0x2f00
#define ASC_ORWRITE_GENERATION_MISMATCH     0x2c0c /* ORWRITE GENERATION DOES NOT MATCH */
#define ASC_UNREACHABLE_COPY_TARGET         0x0804
#define ASC_THIRD_PARTY_DEVICE_FAILURE      0x0d01
#define ASC_COPY_TARGET_NOT_REACHABLE       0x0d02 /* copy target device not reachable */
#define ASC_INVALID_RELEASE_OF_PR           0x2604 /* invalid release of persistent reservation */
#define ASC_INSUFFICIENT_REG_RESOURCES      0x5504 /* insufficient registration resources */
#define ASC_TOO_MANY_TARGET_DESCRIPTORS     0x2606
#define ASC_UNSUPPORTED_TARGET_DESC_TYPE    0x2607
#define ASC_TOO_MANY_SEGMENT_DESCRIPTORS    0x2608
#define ASC_UNSUPPORTED_SEGMENT_DESC_TYPE   0x2609

/* SPC-4 / SBC-3 operation codes implemented by the target core */
enum scsi_opcode {
	TEST_UNIT_READY = 0x00,
	REQUEST_SENSE = 0x03,
	READ_6 = 0x08,
	WRITE_6 = 0x0a,
	INQUIRY = 0x12,
	MODE_SELECT_6 = 0x15,
	MODE_SENSE_6 = 0x1a,
	START_STOP_UNIT = 0x1b,
	PREVENT_ALLOW_MEDIUM_REMOVAL = 0x1e,
	RESERVE_6 = 0x16,            /* SPC-2 7.21 */
	RELEASE_6 = 0x17,            /* SPC-2 7.16 */
	READ_CAPACITY_10 = 0x25,
	READ_10 = 0x28,
	WRITE_10 = 0x2a,
	WRITE_VERIFY_10 = 0x2e,
	VERIFY_10 = 0x2f,
	PRE_FETCH_10 = 0x34,
	SYNCHRONIZE_CACHE_10 = 0x35,
	WRITE_SAME_10 = 0x41,
	UNMAP = 0x42,
	MODE_SELECT_10 = 0x55,
	RESERVE_10 = 0x56,           /* SPC-2 7.22 */
	RELEASE_10 = 0x57,           /* SPC-2 7.17 */
	MODE_SENSE_10 = 0x5a,
	PERSISTENT_RESERVE_IN = 0x5e,
	PERSISTENT_RESERVE_OUT = 0x5f,
	VARIABLE_LENGTH_CMD = 0x7f,  /* SPC-4 4.2.3: 8 + ADDITIONAL CDB LENGTH (byte 7) bytes, SA in bytes 8-9 */
	EXTENDED_COPY = 0x83,        /* LID1: SA 0x00 */
	RECEIVE_COPY_RESULTS = 0x84, /* LID1: SA 0x00 copy status, 0x03 operating parameters */
	READ_16 = 0x88,
	COMPARE_AND_WRITE = 0x89,
	WRITE_16 = 0x8a,
	ORWRITE_16 = 0x8b,
	WRITE_VERIFY_16 = 0x8e,
	VERIFY_16 = 0x8f,
	PRE_FETCH_16 = 0x90,
	SYNCHRONIZE_CACHE_16 = 0x91,
	WRITE_SAME_16 = 0x93,
	SERVICE_ACTION_IN_16 = 0x9e, /* READ CAPACITY (16): SA 0x10; GET LBA STATUS: 0x12 */
	REPORT_LUNS = 0xa0,
	MAINTENANCE_IN = 0xa3,       /* REPORT SUPPORTED OPERATION CODES: SA 0x0c */
	READ_12 = 0xa8,
	WRITE_12 = 0xaa,
	WRITE_VERIFY_12 = 0xae,
	VERIFY_12 = 0xaf,
};

/* VARIABLE_LENGTH_CMD service actions (bytes 8-9) */
#define VLC_ORWRITE_32 0x000e        /* SBC-4 5.11 */

#define SAI_READ_CAPACITY_16 0x10
#define SAI_GET_LBA_STATUS 0x12
#define MI_REPORT_SUPPORTED_OPCODES 0x0c

/* SPC-4 6.15 / 6.16: PERSISTENT RESERVE IN and OUT service actions */
enum scsi_pr_in_sa {
	PRIN_READ_KEYS = 0x00,
	PRIN_READ_RESERVATION = 0x01,
	PRIN_REPORT_CAPABILITIES = 0x02,
	PRIN_READ_FULL_STATUS = 0x03,
};

enum scsi_pr_out_sa {
	PROUT_REGISTER = 0x00,
	PROUT_RESERVE = 0x01,
	PROUT_RELEASE = 0x02,
	PROUT_CLEAR = 0x03,
	PROUT_PREEMPT = 0x04,
	PROUT_PREEMPT_AND_ABORT = 0x05,
	PROUT_REGISTER_AND_IGNORE = 0x06,
	PROUT_REGISTER_AND_MOVE = 0x07,
};

/* SPC-4 6.16.3 table 180: persistent reservation types */
enum scsi_pr_type {
	PR_TYPE_WE = 0x1,     /* write exclusive */
	PR_TYPE_EA = 0x3,     /* exclusive access */
	PR_TYPE_WE_RO = 0x5,  /* write exclusive, registrants only */
	PR_TYPE_EA_RO = 0x6,  /* exclusive access, registrants only */
	PR_TYPE_WE_AR = 0x7,  /* write exclusive, all registrants */
	PR_TYPE_EA_AR = 0x8,  /* exclusive access, all registrants */
};

/* RECEIVE COPY RESULTS service actions (SPC-4 6.20) */
#define RCR_COPY_STATUS 0x00
#define RCR_OPERATING_PARAMETERS 0x03

/* Sense data sizes: fixed format (SPC-4 4.5.3) as built here, and the
 * largest a transport carries (SPC-4: 252). */
#define SCSI_SENSE_FIXED_LEN 18
#define SCSI_SENSE_MAX 252

/**
 * struct scsi_sense - sense data, decoded: what the target core builds
 * from and what the initiator's completion decision reads.
 * @key: enum scsi_sense_key.
 * @asc_ascq: ASC << 8 | ASCQ.
 * @info_valid: @info holds the INFORMATION field (for a medium error: the
 *	first LBA in error).
 * @info: the INFORMATION field.
 * @sks_valid: @sks holds the sense-key specific field (SKSV).
 * @sks: its three bytes as read: for ILLEGAL REQUEST, bit 22 C/D (1: the
 *	CDB, 0: the parameter list), bit 19 BPV, bits 18-16 the bit pointer,
 *	bits 15-0 the field pointer (byte).
 */
struct scsi_sense {
	uint8_t key;
	uint16_t asc_ascq;
	bool info_valid;
	uint64_t info;
	bool sks_valid;
	uint32_t sks;
};

/* sense-key specific field for ILLEGAL REQUEST: byte @byte (bit @bit, or
 * -1 for the whole byte) of the CDB (@cdb) or of the parameter list */
static inline uint32_t scsi_sks_field(bool cdb, unsigned int byte, int bit)
{
	return (cdb ? 1u << 22 : 0) | (bit >= 0 ? 1u << 19 | (uint32_t)bit << 16 : 0) |
	       (byte & 0xffff);
}

/**
 * scsi_build_sense() - encode @s as current sense data (SPC-4 4.5).
 * @buf: at least SCSI_SENSE_FIXED_LEN bytes (descriptor format: 8 + 12 + 8).
 * @descriptor: descriptor format (response code 0x72, the control mode
 *	page's D_SENSE) instead of fixed (0x70).
 * Return: the length written, bytes: 18 (fixed) or 8 plus 12 per
 * information descriptor and 8 per sense-key specific descriptor.
 * Context: any.
 */
unsigned int scsi_build_sense(uint8_t *buf, const struct scsi_sense *s,
			      bool descriptor);

/**
 * scsi_parse_sense() - decode sense data in either format (0x70/0x71
 * fixed, 0x72/0x73 descriptor).
 * @buf, @len: the sense data as received, bytes.
 * @s: filled in.
 * Return: 0; -EINVAL when @len is too short for the response code's
 * format or the response code is none of those four.
 * Context: any.
 */
int scsi_parse_sense(const uint8_t *buf, size_t len, struct scsi_sense *s);

/* Big-endian field access, as every CDB and parameter field is. */
static inline uint16_t scsi_get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t scsi_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t scsi_get_be64(const uint8_t *p)
{
	return (uint64_t)scsi_get_be32(p) << 32 | scsi_get_be32(p + 4);
}

static inline void scsi_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void scsi_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void scsi_put_be64(uint8_t *p, uint64_t v)
{
	scsi_put_be32(p, (uint32_t)(v >> 32));
	scsi_put_be32(p + 4, (uint32_t)v);
}

/*
 * The SCSI disk driver (sd's role and the midlayer's completion decision)
 * over the SCSI target core through a loopback LLD: commands go to the
 * target in-process, on the submitting thread, with no data copy.
 */
struct blk_dev;
struct blk_dev_config;

struct scsi_tgt_config;

/**
 * struct blk_scsi_config - a SCSI disk.
 * @queue: queue limits and tag set; capacity, logical block size and the
 *	largest transfers come from the disk (READ CAPACITY, VPD 0xb0), the
 *	rest is as given.  name, ops, cmd_size and driver_data are set here.
 * @hostt, @hostdata: the LLD (blkstack/scsi_host.h) and its host, owned
 *	by the disk from the call on (destroyed on failure too); NULL: the
 *	loopback LLD over @lower with the target as @tgt, @every_nth, @opts,
 *	@tmf_fail, @tmf_timeout_ms and @lld_thread say (those are the
 *	loopback's, ignored with another LLD).
 * @lower: the device the target core serves as LUN 0; owned by the SCSI
 *	device from the call on (closed on failure too).  It needs one
 *	hardware queue per @queue.nr_hw_queues, not shared.
 * @every_nth, @opts: the target core's fault injection, scsi_debug's
 *	parameters (struct scsi_tgt_config, SCSI_TGT_OPT_*); when @tgt is
 *	NULL.
 * @tgt: NULL, or the target's configuration (scsi_debug's other knobs:
 *	sector_size, delays, error rules, ...) but its units (luns, nr_luns,
 *	own_luns and id are set here).
 * @max_retries: times a command is sent again after UNIT ATTENTION, NOT
 *	READY, ABORTED COMMAND, BUSY, TASK SET FULL, TASK ABORTED or a
 *	timeout before it fails (sd's SD_MAX_RETRIES is 5, the registry's
 *	default; 0: never).
 * @tmf_fail: the target's task management faults (SCSI_TGT_TMF_FAIL_*):
 *	error handling then escalates past the rejected function.
 * @tmf_timeout_ms: the target's wait for media access in a task
 *	management function (0: 10000).
 * @queue_depth: the logical unit's queue depth as budget tokens: commands
 *	outstanding at the disk over all hardware queues, at most this many
 *	(a request past it is requeued: sdev->budget_map's role); 0: no
 *	budget (the tag sets bound it), which saves two atomic operations
 *	per command.
 * @host_lock: seed 003's experiment: one host-wide spinlock around every
 *	submission and every completion, and the queue run on every
 *	completion, as the midlayer did before blk-mq.  Off: no host lock.
 * @lld_thread: the loopback LLD hands commands to a device thread per
 *	hardware queue (rings of pointers both ways, no data copied; the
 *	completion decision still runs on the queue's thread when it polls),
 *	as nvme_ctrl's thread mode; false: to the target core inline, on the
 *	submitting thread.
 * @no_10_for_rw: start with sdev->use_10_for_rw cleared: READ/WRITE (6)
 *	where they fit (what sd falls back to when a disk refuses (10)).
 * @stage_timers: time the completion path (scsi_done() from its entry to
 *	just before the request ends) and print seed 000's windows (100 ms:
 *	cum_time, count, avg) on stderr; needs a build with
 *	BLK_STAGE_TIMERS (the default).
 */
struct scsi_host_template;

struct blk_scsi_config {
	const struct blk_dev_config *queue;
	const struct scsi_host_template *hostt;
	void *hostdata;
	struct blk_dev *lower;
	uint32_t max_retries;
	int32_t every_nth;
	uint32_t opts;
	uint32_t tmf_fail;
	uint32_t tmf_timeout_ms;
	uint32_t queue_depth;
	bool host_lock;
	bool lld_thread;
	bool no_10_for_rw;
	bool stage_timers;
	const struct scsi_tgt_config *tgt;
};

/**
 * blk_scsi_create() - attach a disk: TEST UNIT READY (the power-on unit
 * attention is taken; NOT READY, BECOMING READY 04/01 is waited out, at
 * most 100 s, as sd_spinup_disk() does), INQUIRY (a direct-access device), VPD 0xb0 (block
 * limits), READ CAPACITY (16), MODE SENSE (WCE, WP); then the block device.
 * I/O: READ/WRITE (10) where the LBA and length fit, else (16), with FUA;
 * FLUSH as SYNCHRONIZE CACHE (10); DISCARD as UNMAP; WRITE_ZEROES as
 * WRITE SAME (16) with NDOB.  A failed request carries SAM status << 24 |
 * sense key << 16 | ASC << 8 | ASCQ in bi_native_status.
 * @err: a message naming what the disk answered, on failure.
 * Return: 0; -EIO (the disk failed a probe command); -ETIMEDOUT (a probe
 * command not answered within the request timeout plus the target's
 * longest delay); -EBUSY (busy for 100 s); -ENODEV (not a direct-access
 * device); -EINVAL; -ENOMEM.
 * Context: any thread; it runs the probe commands itself.
 */
int blk_scsi_create(const struct blk_scsi_config *cfg, struct blk_dev **dev,
		    char *err, size_t errlen);

/**
 * struct blk_scsi_stats - a SCSI disk's counters since creation (uint64_t
 * only).
 * @reads, @writes, @flushes, @unmaps, @write_sames: commands sent, by the
 *	request's operation (retries included).
 * @check_conditions: commands that ended with CHECK CONDITION.
 * @sense_keys: of those, by sense key (0..15).
 * @retries: commands sent again by the completion decision.
 * @busy: submissions the target refused for now (no tag, host busy):
 *	requeued by the block core.
 * @injected: faults the target injected (scsi_every_nth, scsi_opts).
 * @unit_attentions: unit attentions the target reported.
 * @partial: commands that moved part of their data (a residual, or a
 *	MEDIUM ERROR's INFORMATION past the first block): the part done ended,
 *	the rest sent again or failed.
 * @timeouts: requests whose deadline passed (error handling started).
 * @aborts, @lun_resets, @target_resets, @host_resets: error handling
 *	steps that succeeded; @aborts_failed, @lun_resets_failed,
 *	@target_resets_failed: the target rejected them (or timed out), and
 *	handling went one step further.
 * @tasks_aborted: commands that ended TASK ABORTED.
 * @blocked: dispatches refused while the host or the device was blocked
 *	(after a host busy, BUSY or TASK SET FULL: host_blocked,
 *	device_blocked).
 * @budget_busy: dispatches refused for want of a budget token.
 * @host_lock: host lock acquisitions; @host_lock_contended: of which the
 *	lock was held by another thread; @host_lock_wait_ns: time waited.
 * @queue_kicks: queue runs asked for on completion (host_lock).
 * @stage_count, @stage_ns: completions timed by stage_timers, and the
 *	sum of their times, ns.
 * @cdb_fallbacks: READ/WRITE (10) refused by the disk, prepared again
 *	with use_10_for_rw cleared.
 * @rw_cdb: READ/WRITE commands sent as 6-, 10- and 16-byte CDBs.
 * @delayed_retries: commands sent again after a delay (3 ms): NOT READY
 *	and UNIT ATTENTION.
 * @split: requests past the disk's limits (maximum transfer, unmap or
 *	write same length) that were sent in parts: parts ended early.
 * @refused_too_long: requests failed BLK_STS_TIMEOUT because the host or
 *	the device refused them for (max_retries + 1) request timeouts.
 */
struct blk_scsi_stats {
	uint64_t reads, writes, flushes, unmaps, write_sames;
	uint64_t check_conditions;
	uint64_t sense_keys[16];
	uint64_t retries;
	uint64_t busy;
	uint64_t injected;
	uint64_t unit_attentions;
	uint64_t partial;
	uint64_t timeouts;
	uint64_t aborts, aborts_failed;
	uint64_t lun_resets, lun_resets_failed;
	uint64_t target_resets, target_resets_failed;
	uint64_t host_resets;
	uint64_t tasks_aborted;
	uint64_t blocked;
	uint64_t budget_busy;
	uint64_t host_lock, host_lock_contended, host_lock_wait_ns;
	uint64_t queue_kicks;
	uint64_t stage_count, stage_ns;
	uint64_t cdb_fallbacks;
	uint64_t rw_cdb[3];
	uint64_t delayed_retries;
	uint64_t refused_too_long;
	uint64_t split;
};

/**
 * struct blk_scsi_info - what sd's probe read at attach.
 * @vendor, @product, @revision: standard INQUIRY data (SPC-4 6.6.2).
 * @serial: VPD 0x80; "" when the disk has none.
 * @naa: the unit's NAA designator from VPD 0x83 in hex (sd's wwid
 *	without the "naa." prefix); "" when none.
 * @rotation_rate: VPD 0xb1 MEDIUM ROTATION RATE (1: non-rotating).
 * @nr_luns: logical units REPORT LUNS listed (this disk is LUN 0).
 * @write_protected: WP in the mode data.
 */
struct blk_scsi_info {
	char vendor[9], product[17], revision[5];
	char serial[33];
	char naa[33];
	uint16_t rotation_rate;
	uint32_t nr_luns;
	bool write_protected;
};

/**
 * blk_scsi_get_info() - what the probe read.  Context: any thread.
 */
void blk_scsi_get_info(struct blk_dev *dev, struct blk_scsi_info *info);

/**
 * blk_scsi_get_stats() - sum the counters over the disk's queues.
 * @dev: a device from blk_scsi_create().
 * Context: any thread, no I/O in flight (the per-queue counters are plain).
 */
void blk_scsi_get_stats(struct blk_dev *dev, struct blk_scsi_stats *st);

/**
 * enum scsi_disposition - what the completion decision does with a
 * command (the midlayer's scsi_io_completion(), SPC-4 sense keys).
 */
enum scsi_disposition {
	SCSI_DONE = 0,   /* complete the request with the status given */
	SCSI_RETRY,      /* send it again (counts against max_retries) */
};

/**
 * scsi_decide() - the completion decision for a command that ended with
 * SAM @status and, for CHECK CONDITION, @sense (NULL when none decoded).
 * @retries: times it was sent again already; @max_retries: the bound.
 * @blk: set to the request's status when SCSI_DONE.
 * Return: enum scsi_disposition.  GOOD and CONDITION MET, and RECOVERED
 * ERROR, complete with BLK_STS_OK; UNIT ATTENTION, NOT READY, ABORTED
 * COMMAND, BUSY and TASK SET FULL are retried while @retries < @max_retries
 * (then BLK_STS_IOERR, or BLK_STS_TIMEOUT for ABORTED COMMAND / 2E/02);
 * TASK ABORTED (error handling ended it) likewise, then BLK_STS_TIMEOUT;
 * MEDIUM ERROR gives BLK_STS_MEDIUM; DATA PROTECT gives BLK_STS_NOSPC for
 * SPACE ALLOCATION FAILED (27/07), else BLK_STS_TARGET; ILLEGAL REQUEST
 * BLK_STS_TARGET; anything else BLK_STS_IOERR.
 * Context: any.
 */
enum scsi_disposition scsi_decide(uint8_t status, const struct scsi_sense *sense,
				  uint32_t retries, uint32_t max_retries,
				  blk_status_t *blk);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_SCSI_H */
