// SPDX-License-Identifier: MIT
/*
 * SCSI target core (blkstack/scsi_tgt.h): a table of commands indexed by
 * opcode, each a function from the CDB to a status, sense and data, the
 * media commands as bios on the logical unit's blk_dev.  Written from
 * SPC-4 (r37) and SBC-3 (r36); section numbers are given at each command.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tgt_int.h"


/* Version descriptors (SPC-4 table 32 / annex E): SAM-5, SPC-4, SBC-3. */
#define VD_SAM5 0x00a0
#define VD_SPC4 0x0460
#define VD_SBC3 0x04c0

/* Data INQUIRY answers with: standard data or a VPD page (MODE SENSE's
 * own bound is in mode.c). */
#define RESP_MAX 512

/* WRITE SAME without UNMAP writes its block from a buffer this large. */
#define WS_CHUNK (256u << 10)

/* ------------------------------------------------------------ results */

void tgt_cmd_sense(struct scsi_tgt_cmd *c, const struct scsi_lu *lu,
		      const struct scsi_sense *s)
{
	c->status = SAM_STAT_CHECK_CONDITION;
	c->sense_len = (uint8_t)scsi_build_sense(c->sense, s, lu &&
		atomic_load_explicit(&lu->d_sense, memory_order_relaxed));
}

void tgt_cmd_check(struct scsi_tgt_cmd *c, const struct scsi_lu *lu,
		      uint8_t key, uint16_t asc_ascq)
{
	struct scsi_sense s = { .key = key, .asc_ascq = asc_ascq };

	tgt_cmd_sense(c, lu, &s);
}

/* ILLEGAL REQUEST, INVALID FIELD IN CDB, pointing at byte @byte, bit @bit
 * (-1: the whole byte) */
void tgt_cmd_bad_cdb(struct scsi_tgt_cmd *c, const struct scsi_lu *lu,
			unsigned int byte, int bit)
{
	struct scsi_sense s = {
		.key = SK_ILLEGAL_REQUEST, .asc_ascq = ASC_INVALID_FIELD_IN_CDB,
		.sks_valid = true, .sks = scsi_sks_field(true, byte, bit),
	};

	tgt_cmd_sense(c, lu, &s);
}

void tgt_cmd_bad_param(struct scsi_tgt_cmd *c, const struct scsi_lu *lu,
			  unsigned int byte, int bit)
{
	struct scsi_sense s = {
		.key = SK_ILLEGAL_REQUEST,
		.asc_ascq = ASC_INVALID_FIELD_IN_PARAM_LIST,
		.sks_valid = true, .sks = scsi_sks_field(false, byte, bit),
	};

	tgt_cmd_sense(c, lu, &s);
}

void tgt_cmd_end(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c)
{
	q_count(&q->cmds, 1);
	if (unlikely(c->status == SAM_STAT_CHECK_CONDITION)) {
		q_count(&q->check_conditions, 1);
		/* a command that failed before (or while) moving its data:
		 * @resid is what it did not move, so that no transport sends
		 * the rest of the buffer (a reused one holds another
		 * command's data) */
		if (c->dir == SCSI_DIR_FROM_DEVICE && !c->overflow &&
		    c->xfer_len - c->resid > c->moved)
			c->resid = c->xfer_len - c->moved;
	}
	if (c->io != (void *)c->io_space)
		free(c->io);
	c->io = NULL;
	c->done(c);
}

/* Copy @len bytes of @src into the Data-In buffer, at most @alloc (the
 * CDB's allocation length) and @c->xfer_len; set the residual. */
void tgt_data_in(struct scsi_tgt_cmd *c, const void *src, uint32_t len,
		    uint32_t alloc)
{
	uint32_t n = len < alloc ? len : alloc, left, i;
	const char *p = src;

	if (n > c->xfer_len) {
		c->overflow = true;
		c->resid = n - c->xfer_len;
		n = c->xfer_len;
	} else {
		c->resid = c->xfer_len - n;
	}
	left = n;
	for (i = 0; i < c->iovcnt && left; i++) {
		uint32_t k = c->iov[i].iov_len < left ? (uint32_t)c->iov[i].iov_len : left;

		memcpy(c->iov[i].iov_base, p, k);
		p += k;
		left -= k;
	}
	c->moved = n - left;
}

/* Copy up to @len bytes of the Data-Out buffer into @dst; bytes copied. */
uint32_t tgt_data_out(const struct scsi_tgt_cmd *c, void *dst, uint32_t len)
{
	uint32_t left = len < c->xfer_len ? len : c->xfer_len, n = 0, i;
	char *p = dst;

	for (i = 0; i < c->iovcnt && left; i++) {
		uint32_t k = c->iov[i].iov_len < left ? (uint32_t)c->iov[i].iov_len : left;

		memcpy(p, c->iov[i].iov_base, k);
		p += k;
		left -= k;
		n += k;
	}
	return n;
}

/* ---------------------------------------------------- unit attention */

static const uint16_t ua_asc[TGT_UA_NR] = {
	[TGT_UA_POWER_ON] = ASC_POWER_ON_RESET,
	[TGT_UA_LUN_RESET] = ASC_LUN_RESET_OCCURRED,
	[TGT_UA_NEXUS_LOSS] = ASC_I_T_NEXUS_LOSS,
	[TGT_UA_MODE_CHANGED] = ASC_MODE_PARAMETERS_CHANGED,
	[TGT_UA_RES_PREEMPTED] = ASC_RESERVATIONS_PREEMPTED,
	[TGT_UA_RES_RELEASED] = ASC_RESERVATIONS_RELEASED,
	[TGT_UA_REG_PREEMPTED] = ASC_REGISTRATIONS_PREEMPTED,
	[TGT_UA_CMDS_CLEARED] = ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR,
	[TGT_UA_CAPACITY_CHANGED] = ASC_CAPACITY_DATA_CHANGED,
	[TGT_UA_LUNS_CHANGED] = ASC_REPORTED_LUNS_CHANGED,
};

void tgt_ua_raise(struct scsi_tgt *t, struct scsi_lu *lu, enum tgt_ua kind,
		  int except)
{
	uint64_t bits = ~0ull;

	(void)t;
	if (except >= 0 && except < SCSI_TGT_MAX_NEXUS)
		bits &= ~(1ull << except);
	atomic_fetch_or(&lu->ua[kind], bits);
	atomic_fetch_or(&lu->ua_any, bits); /* after the kind: see take */
}

void tgt_ua_raise_mask(struct scsi_lu *lu, enum tgt_ua kind, uint64_t mask)
{
	if (!mask)
		return;
	atomic_fetch_or(&lu->ua[kind], mask);
	atomic_fetch_or(&lu->ua_any, mask);
}

bool tgt_ua_take(struct scsi_tgt *t, struct scsi_lu *lu, unsigned int nexus,
		 uint16_t *asc_ascq)
{
	uint64_t bit;
	unsigned int k;

	if (nexus >= SCSI_TGT_MAX_NEXUS)
		return false;
	bit = 1ull << nexus;
	/* the fast path: one relaxed load, nothing written */
	if (likely(!(atomic_load_explicit(&lu->ua_any, memory_order_relaxed) & bit)))
		return false;
	for (int pass = 0; pass < 2; pass++) {
		for (k = 0; k < TGT_UA_NR; k++) {
			if (!(atomic_load(&lu->ua[k]) & bit))
				continue;
			if (atomic_fetch_and(&lu->ua[k], ~bit) & bit) {
				*asc_ascq = ua_asc[k];
				atomic_fetch_add_explicit(&t->unit_attentions, 1,
							  memory_order_relaxed);
				return true;
			}
		}
		/* none left: clear the summary, then look once more for a
		 * condition raised between the scan and the clear */
		if (pass == 0)
			atomic_fetch_and(&lu->ua_any, ~bit);
	}
	return false;
}

/* ---------------------------------------------------- I_T nexus loss */

/*
 * SAM-5 6.3.4: what the logical units keep for @nexus that its loss ends.
 * The nexus's tasks are the transport's to end first (its queue's
 * scsi_tgt_queue_reset()): the core keeps no task list per nexus.
 */
int scsi_tgt_nexus_loss(struct scsi_tgt *tgt, unsigned int nexus)
{
	uint64_t bit;
	unsigned int i, k;

	if (nexus >= SCSI_TGT_MAX_NEXUS)
		return -EINVAL;
	bit = 1ull << nexus;
	for (i = 0; i < tgt->nr_luns; i++) {
		struct scsi_lu *lu = &tgt->lus[i];

		tgt_pr_nexus_loss(lu, nexus);
		atomic_fetch_and(&lu->prevent, ~bit);
		/* the conditions it had not been told of go; the loss is the
		 * one its initiator port hears of next (29/07) */
		for (k = 0; k < TGT_UA_NR; k++)
			atomic_fetch_and(&lu->ua[k], ~bit);
		tgt_ua_raise_mask(lu, TGT_UA_NEXUS_LOSS, bit);
	}
	return 0;
}

/* ------------------------------------------------------------- SPC-4 */

static void pad_copy(uint8_t *dst, const char *src, size_t n)
{
	size_t l = strlen(src);

	memset(dst, ' ', n);
	memcpy(dst, src, l < n ? l : n);
}

/* SPC-4 6.6.2: standard INQUIRY data */
static uint32_t inquiry_std(struct scsi_tgt *t, const struct scsi_lu *lu,
			    uint8_t *b)
{
	memset(b, 0, 96);
	b[0] = lu ? 0x00 : 0x7f; /* direct access; no unit: qualifier 3 */
	b[1] = t->cfg.removable ? 0x80 : 0x00; /* RMB */
	b[2] = 0x06;             /* SPC-4 */
	b[3] = 0x12;             /* HISUP, response data format 2 */
	b[4] = 96 - 5;
	b[5] = 0x08;             /* 3PC: EXTENDED COPY (xcopy.c) */
	b[7] = 0x02;             /* CMDQUE */
	pad_copy(b + 8, t->vendor, 8);
	pad_copy(b + 16, t->product, 16);
	pad_copy(b + 32, "0001", 4);
	scsi_put_be16(b + 58, VD_SAM5);
	scsi_put_be16(b + 60, VD_SPC4);
	scsi_put_be16(b + 62, VD_SBC3);
	return 96;
}

static const uint8_t vpd_pages[] = { 0x00, 0x80, 0x83, 0x86, 0x8f, 0xb0, 0xb1, 0xb2 };

/* SPC-4 7.8: VPD pages; SBC-3 6.5: 0xb0, 0xb1, 0xb2.  0: no such page. */
static uint32_t inquiry_vpd(struct scsi_tgt *t, const struct scsi_lu *lu,
			    uint64_t lun, uint8_t page, uint8_t *b)
{
	uint32_t n = 4;
	const struct blk_dev_info *in = &lu->info;

	memset(b, 0, RESP_MAX);
	b[1] = page;
	switch (page) {
	case 0x00:
		memcpy(b + 4, vpd_pages, sizeof(vpd_pages));
		n += sizeof(vpd_pages);
		break;
	case 0x80: {
		size_t l = strlen(t->serial);

		memcpy(b + 4, t->serial, l);
		n += (uint32_t)l;
		break;
	}
	case 0x83:
		/* NAA 6 (IEEE registered extended), binary, the unit; no
		 * registered company ID: 0, made unique by the target's id
		 * and the LUN */
		b[4] = 0x01;
		b[5] = 0x03;
		b[7] = 16;
		b[8] = 0x60;
		scsi_put_be32(b + 12, t->cfg.id & 0xffffff);
		scsi_put_be64(b + 16, lun);
		n += 4 + 16;
		/* T10 vendor ID: ASCII, vendor and serial */
		b[n] = 0x02;
		b[n + 1] = 0x01;
		b[n + 3] = (uint8_t)(8 + strlen(t->serial));
		pad_copy(b + n + 4, t->vendor, 8);
		memcpy(b + n + 12, t->serial, strlen(t->serial));
		n += 4 + b[n + 3];
		break;
	case 0x86:
		/* SPC-4 7.8.7 Extended INQUIRY Data: no protection information
		 * (SPT, GRD_CHK, APP_CHK, REF_CHK 0); SIMPSUP only (every task
		 * is simple: no HEAD OF QUEUE or ORDERED handling); V_SUP where
		 * the device has a volatile cache; LUICLR 0: a REPORTED LUNS
		 * DATA HAS CHANGED condition is cleared per unit, not for
		 * every unit of the nexus */
		b[5] = 0x01;                            /* SIMPSUP */
		b[6] = in->can_flush ? 0x01 : 0x00;     /* V_SUP */
		n = 64;
		break;
	case 0x8f:
		n = tgt_vpd_third_party_copy(lu, b);
		break;
	case 0xb0: {
		uint32_t max_xfer = t->cfg.max_xfer_blocks;
		uint32_t opt = (uint32_t)((uint64_t)in->max_sectors * 512 / lu->lbs);
		unsigned int gran = t->cfg.opt_xferlen_exp > t->cfg.physblk_exp ?
				    t->cfg.opt_xferlen_exp : t->cfg.physblk_exp;

		if (t->cfg.opt_blks)
			opt = t->cfg.opt_blks;
		b[4] = 0x01; /* WSNZ: WRITE SAME of 0 blocks is refused */
		b[5] = tgt_caw_max(t); /* MAXIMUM COMPARE AND WRITE LENGTH */
		/* OPTIMAL TRANSFER LENGTH GRANULARITY: a physical block, or
		 * opt_xferlen_exp's when larger (scsi_debug's choice) */
		scsi_put_be16(b + 6, (uint16_t)(1u << gran));
		scsi_put_be32(b + 8, max_xfer);
		scsi_put_be32(b + 12, opt && opt < max_xfer ? opt : max_xfer);
		if (lu->lbpu) {
			scsi_put_be32(b + 20, t->cfg.max_unmap_blocks);
			scsi_put_be32(b + 24, t->cfg.max_unmap_descriptors);
			scsi_put_be32(b + 28, t->cfg.unmap_granularity);
			if (t->cfg.unmap_alignment) /* UGAVALID */
				scsi_put_be32(b + 32, 0x80000000u | t->cfg.unmap_alignment);
		}
		scsi_put_be64(b + 36, t->cfg.max_write_same_blocks);
		n = 64;
		break;
	}
	case 0xb1:
		scsi_put_be16(b + 4, 1); /* non-rotating medium */
		n = 64;
		break;
	case 0xb2:
		b[5] = (lu->lbpu ? 0x80 : 0) | (lu->lbpws ? 0x40 : 0) |
		       (lu->lbpws10 ? 0x20 : 0) | (lu->lbprz ? 0x04 : 0);
		/* ANC_SUP (bit 1) 0: no anchored state, so WRITE SAME and
		 * UNMAP refuse ANCHOR (SBC-3 5.28, 5.41, 5.42) */
		b[6] = lu->lbpu && in->stores_data ? 0x02 : 0x00; /* thin */
		n = 8;
		break;
	default:
		return 0;
	}
	scsi_put_be16(b + 2, (uint16_t)(n - 4));
	return n;
}

/* SPC-4 6.6 */
static int do_inquiry(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		      struct scsi_tgt_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	uint8_t b[RESP_MAX];
	uint32_t n;

	if (cdb[1] & 0xfe) {
		tgt_cmd_bad_cdb(c, lu, 1, cdb[1] & 0x02 ? 1 : -1); /* CMDDT, reserved */
		return 0;
	}
	if (!(cdb[1] & 0x01)) {
		if (cdb[2]) {
			tgt_cmd_bad_cdb(c, lu, 2, -1);
			return 0;
		}
		n = inquiry_std(q->tgt, lu, b);
	} else {
		if (!lu) { /* no such unit: only standard data */
			tgt_cmd_check(c, NULL, SK_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED);
			return 0;
		}
		n = inquiry_vpd(q->tgt, lu, c->lun, cdb[2], b);
		if (!n) {
			tgt_cmd_bad_cdb(c, lu, 2, -1);
			return 0;
		}
	}
	tgt_data_in(c, b, n, scsi_get_be16(cdb + 3));
	return 0;
}

/* SPC-4 6.39: the pending unit attention, else NO SENSE */
static int do_request_sense(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			    struct scsi_tgt_cmd *c)
{
	struct scsi_sense s = { .key = SK_NO_SENSE };
	uint8_t b[SCSI_SENSE_MAX];
	unsigned int n;

	if (c->cdb[1] & 0xfe) {
		tgt_cmd_bad_cdb(c, lu, 1, -1);
		return 0;
	}
	if (!lu) {
		s.key = SK_ILLEGAL_REQUEST;
		s.asc_ascq = ASC_LUN_NOT_SUPPORTED;
	} else if (tgt_ua_take(q->tgt, lu, c->nexus, &s.asc_ascq)) {
		s.key = SK_UNIT_ATTENTION;
	}
	n = scsi_build_sense(b, &s, c->cdb[1] & 0x01);
	tgt_data_in(c, b, n, c->cdb[4]);
	return 0;
}

/* SPC-4 6.33 */
static int do_report_luns(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			  struct scsi_tgt_cmd *c)
{
	struct scsi_tgt *t = q->tgt;
	uint32_t alloc = scsi_get_be32(c->cdb + 6), n, i;
	uint8_t *b;

	if (c->cdb[2] > 0x02) {
		tgt_cmd_bad_cdb(c, lu, 2, -1);
		return 0;
	}
	if (alloc < 16) {
		tgt_cmd_bad_cdb(c, lu, 6, -1);
		return 0;
	}
	n = 8 + 8 * t->nr_luns;
	b = calloc(1, n);
	if (!b)
		return -ENOMEM;
	scsi_put_be32(b, 8 * t->nr_luns);
	for (i = 0; i < t->nr_luns; i++) {
		/* SAM-5 4.7.7: peripheral (0..255) or flat (256..16383) */
		if (i < 256)
			b[8 + 8 * i + 1] = (uint8_t)i;
		else
			scsi_put_be16(b + 8 + 8 * i, (uint16_t)(0x4000 | i));
	}
	tgt_data_in(c, b, n, alloc);
	free(b);
	return 0;
}

/* TEST UNIT READY (ready unless tgt_pre_faults() said otherwise): GOOD */
static int do_nothing_good(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			   struct scsi_tgt_cmd *c)
{
	(void)q;
	(void)lu;
	(void)c;
	return 0;
}

/*
 * SPC-4 6.13: PREVENT ALLOW MEDIUM REMOVAL: held only for a removable
 * medium (RMB), else GOOD and nothing.  Per nexus: the medium stays while
 * any nexus that prevented its removal has not allowed it again (or been
 * lost, scsi_tgt_nexus_loss()).  A nexus out of range (a transport's
 * error) holds nothing.
 */
static int do_prevent_allow(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			    struct scsi_tgt_cmd *c)
{
	uint64_t bit;

	if (!q->tgt->cfg.removable || c->nexus >= SCSI_TGT_MAX_NEXUS)
		return 0;
	bit = 1ull << c->nexus;
	if (c->cdb[4] & 0x01)
		atomic_fetch_or(&lu->prevent, bit);
	else
		atomic_fetch_and(&lu->prevent, ~bit);
	return 0;
}

/*
 * SBC-3 5.25: START STOP UNIT: nothing spins; LOEJ ejects (START 0) or
 * loads (START 1) a removable medium.  While PREVENT ALLOW MEDIUM REMOVAL
 * holds it (SPC-4 6.13: the mechanism is locked) both are refused,
 * ILLEGAL REQUEST, MEDIUM REMOVAL PREVENTED: SBC-3 names the eject;
 * libiscsi's PreventAllow.Eject asks it of the load too.
 */
static int do_start_stop(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			 struct scsi_tgt_cmd *c)
{
	bool loej = c->cdb[4] & 0x02, start = c->cdb[4] & 0x01;

	if (!q->tgt->cfg.removable || !loej || (c->cdb[4] & 0xf0))
		return 0; /* a power condition: nothing to do */
	if (atomic_load(&lu->prevent)) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED);
		return 0;
	}
	atomic_store(&lu->ejected, !start);
	return 0;
}

/* ------------------------------------------------------------- SBC-3 */

/* SBC-3 5.15 */
static int do_read_capacity_10(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			       struct scsi_tgt_cmd *c)
{
	uint8_t b[8];

	(void)q;
	if (!(c->cdb[8] & 0x01) && scsi_get_be32(c->cdb + 2)) {
		tgt_cmd_bad_cdb(c, lu, 2, -1); /* LBA without PMI */
		return 0;
	}
	scsi_put_be32(b, lu->nr_blocks - 1 > 0xffffffffull ? 0xffffffff :
			 (uint32_t)(lu->nr_blocks - 1));
	scsi_put_be32(b + 4, lu->lbs);
	tgt_data_in(c, b, 8, 8);
	return 0;
}

/* SBC-3 5.16 */
static int do_service_action_in(struct scsi_tgt_queue *q, struct scsi_lu *lu,
				struct scsi_tgt_cmd *c)
{
	uint8_t b[32];

	(void)q;
	if ((c->cdb[1] & 0x1f) == SAI_GET_LBA_STATUS)
		return tgt_get_lba_status(q, lu, c);
	if ((c->cdb[1] & 0x1f) != SAI_READ_CAPACITY_16) {
		tgt_cmd_bad_cdb(c, lu, 1, 4);
		return 0;
	}
	memset(b, 0, sizeof(b));
	scsi_put_be64(b, lu->nr_blocks - 1);
	scsi_put_be32(b + 8, lu->lbs);
	b[13] = q->tgt->cfg.physblk_exp & 0x0f;
	/* LBPME: some provisioning command (scsi_debug: lbpu, lbpws or
	 * lbpws10); LBPRZ */
	b[14] = (lu->lbpu || lu->lbpws || lu->lbpws10 ? 0x80 : 0) |
		(lu->lbprz ? 0x40 : 0);
	tgt_data_in(c, b, 32, scsi_get_be32(c->cdb + 10));
	return 0;
}

/* The LBA and block count of a media command; false: CHECK CONDITION set. */
bool tgt_media_range(struct scsi_tgt_cmd *c, struct scsi_lu *lu,
			uint64_t *lba, uint32_t *nb)
{
	const uint8_t *cdb = c->cdb;
	switch (cdb[0]) {
	case READ_6:
	case WRITE_6:
		*lba = (uint64_t)(cdb[1] & 0x1f) << 16 | scsi_get_be16(cdb + 2);
		*nb = cdb[4] ? cdb[4] : 256; /* SBC-3 5.8: 0 means 256 */
		break;
	case READ_10:
	case WRITE_10:
	case VERIFY_10:
	case SYNCHRONIZE_CACHE_10:
	case WRITE_SAME_10:
		*lba = scsi_get_be32(cdb + 2);
		*nb = scsi_get_be16(cdb + 7);
		break;
	case READ_12:
	case WRITE_12:
	case VERIFY_12:
		*lba = scsi_get_be32(cdb + 2);
		*nb = scsi_get_be32(cdb + 6);
		break;
	default: /* the 16-byte ones */
		*lba = scsi_get_be64(cdb + 2);
		*nb = scsi_get_be32(cdb + 10);
		break;
	}
	if (*lba > lu->nr_blocks || *nb > lu->nr_blocks - *lba) {
		struct scsi_sense s = {
			.key = SK_ILLEGAL_REQUEST, .asc_ascq = ASC_LBA_OUT_OF_RANGE,
		};

		tgt_cmd_sense(c, lu, &s);
		return false;
	}
	return true;
}

/* Map the first failed bio's status to sense (SBC-3 4.18 / SPC-4 D). */
void tgt_media_error(struct scsi_tgt_cmd *c, struct scsi_lu *lu, bool write)
{
	struct scsi_sense s = { .info_valid = true, .info = c->err_lba };

	switch (c->err) {
	case BLK_STS_MEDIUM:
	case BLK_STS_IOERR:
		s.key = SK_MEDIUM_ERROR;
		s.asc_ascq = write ? ASC_WRITE_ERROR : ASC_UNRECOVERED_READ_ERROR;
		break;
	case BLK_STS_NOSPC:
		s.key = SK_DATA_PROTECT;
		s.asc_ascq = ASC_SPACE_ALLOC_FAILED_WP;
		break;
	case BLK_STS_TIMEOUT:
		s.key = SK_ABORTED_COMMAND;
		s.asc_ascq = ASC_COMMAND_TIMEOUT;
		s.info_valid = false;
		break;
	case BLK_STS_INVAL:
		s.key = SK_ILLEGAL_REQUEST;
		s.asc_ascq = ASC_LBA_OUT_OF_RANGE;
		s.info_valid = false;
		break;
	default:
		s.key = SK_HARDWARE_ERROR;
		s.asc_ascq = ASC_INTERNAL_TARGET_FAILURE;
		s.info_valid = false;
		break;
	}
	tgt_cmd_sense(c, lu, &s);
}

/* Drop one reference: the last ends the command. */
static void media_put(struct scsi_tgt_cmd *c)
{
	struct media_io *io = c->io;
	struct scsi_lu *lu = io->lu;

	if (--c->pending)
		return;
	c->blk_status = c->err;
	if (c->err) {
		c->err_lba /= lu->lbs;
		tgt_media_error(c, lu, !io->read);
	} else if (io->read) {
		q_count(&io->q->read_blocks, c->moved >> lu->lbs_shift);
	} else if (c->moved) {
		q_count(&io->q->write_blocks, c->moved >> lu->lbs_shift);
	}
	if (c->status == SAM_STAT_GOOD && io->rw && c->moved < c->xfer_len &&
	    !c->overflow)
		c->resid = c->xfer_len - c->moved;
	if (unlikely(io->recovered) && c->status == SAM_STAT_GOOD)
		tgt_cmd_check(c, lu, SK_RECOVERED_ERROR, 0x5d00); /* threshold exceeded */
	io->q->lun_busy[c->lun]--;
	c->tstate = TGT_TASK_IDLE;
	/* ABORT TASK waited for it, or a reset or CLEAR TASK SET came after
	 * it started (another nexus's: as TAS said, tmf.c) */
	if (unlikely(c->aborting ||
		     (int32_t)(c->epoch - atomic_load_explicit(&lu->reset_epoch,
							       memory_order_relaxed)) < 0)) {
		tgt_task_mark_if_preempted(lu, c);
		tgt_task_end_aborted(io->q, c);
		return;
	}
	/* a PREEMPT AND ABORT of its nexus came after it started (tmf.c):
	 * one load while none ever preempted a nexus of this unit */
	if (unlikely(atomic_load_explicit(&lu->pa_any, memory_order_acquire)) &&
	    tgt_task_preempted(lu, c)) {
		tgt_task_mark_preempted(lu, c);
		tgt_task_end_aborted(io->q, c);
		return;
	}
	tgt_cmd_end(io->q, c);
}

static void media_end_io(struct blk_bio *bio)
{
	struct scsi_tgt_cmd *c = bio->bi_private;

	if (bio->bi_status) {
		if (!c->err || bio->bi_offset < c->err_lba) {
			c->err = bio->bi_status;
			c->err_lba = bio->bi_offset;
		}
	} else if (bio->bi_op == BLK_OP_READ || bio->bi_op == BLK_OP_WRITE) {
		c->moved += bio->bi_size;
	}
	media_put(c);
}

/*
 * A media command with room for @nr bios and @nr_iov iovecs.  NULL: no
 * memory.
 */
struct media_io *tgt_media_alloc(struct scsi_tgt_queue *q,
				    struct scsi_lu *lu, struct scsi_tgt_cmd *c,
				    unsigned int nr, unsigned int nr_iov)
{
	size_t len = sizeof(struct media_io) + nr * sizeof(struct blk_bio) +
		     nr_iov * sizeof(struct iovec);
	struct media_io *io;

	/*
	 * The common command, one bio, lives in the command itself: a
	 * calloc and a free per READ/WRITE were 1/6 of what the SCSI path
	 * added at QD32 (bench/scsi-overhead.sh).
	 */
	if (likely(len <= sizeof(c->io_space))) {
		/*
		 * Only the media command's own fields: each bio is written
		 * whole where it is prepared (tgt_media_bio()), and no bio
		 * past io->nr is read.  A memset of the bios here, of a
		 * length known only at run time, was compiled to `rep
		 * stosq`, whose start-up costs more than the stores it makes
		 * (callgrind's branch model: one mispredict per READ).
		 */
		io = (struct media_io *)c->io_space;
		*io = (struct media_io){ 0 };
	} else {
		io = calloc(1, len);
		if (!io)
			return NULL;
	}
	io->q = q;
	io->lu = lu;
	io->iov = (struct iovec *)(media_bios(io) + nr);
	c->io = io;
	return io;
}

struct blk_bio *tgt_media_bio(struct media_io *io, struct scsi_tgt_cmd *c,
				 uint8_t op, uint64_t off, uint32_t size)
{
	struct blk_bio *b = &media_bios(io)[io->nr++];

	/* every field (tgt_media_alloc() leaves the bios as they were) */
	*b = (struct blk_bio){
		.bi_op = op, .bi_offset = off, .bi_size = size,
		.bi_end_io = media_end_io, .bi_private = c,
	};
	return b;
}

/*
 * Submit the prepared bios.  -EAGAIN only when none was submitted (the
 * command is not started: the caller retries it whole); after that, a
 * full tag set is waited out by polling, as completions free tags.
 */
int tgt_media_submit(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c)
{
	struct media_io *io = c->io;
	struct blk_mq_ctx *ctx = q->ctx[c->lun];
	unsigned int i;
	int ret;

	if (unlikely(q->plugging) && !q->lun_plugged[c->lun]) {
		/* scsi_tgt_plug(): this unit's bios wait for the batch */
		blk_start_plug(ctx);
		q->lun_plugged[c->lun] = true;
		q->any_plugged = true;
	}
	c->pending = io->nr + 1; /* + 1: held while submitting */
	c->tstate = TGT_TASK_MEDIA; /* c->epoch: read by submit() */
	q->lun_busy[c->lun]++;
	for (i = 0; i < io->nr; i++) {
		while ((ret = blk_submit(ctx, &media_bios(io)[i])) == -EAGAIN && i)
			blk_poll(ctx);
		if (ret == -EAGAIN) {
			if (c->io != (void *)c->io_space)
				free(io);
			c->io = NULL;
			c->pending = 0;
			c->tstate = TGT_TASK_IDLE;
			q->lun_busy[c->lun]--;
			return -EAGAIN;
		}
		if (ret) {
			/* refused by the core: ends as a failed bio */
			media_bios(io)[i].bi_status = ret == -ERANGE || ret == -EINVAL ?
						BLK_STS_INVAL : BLK_STS_IOERR;
			media_end_io(&media_bios(io)[i]);
		}
	}
	media_put(c);
	return 0;
}

/* Largest bio the device takes for @op, bytes (the core does not split). */
uint32_t tgt_media_max_bio(const struct scsi_lu *lu, uint8_t op)
{
	uint64_t s = op == BLK_OP_DISCARD ? lu->info.max_discard_sectors :
		     op == BLK_OP_WRITE_ZEROES ? lu->info.max_write_zeroes_sectors :
						lu->info.max_sectors;
	uint64_t b = s ? s * 512 : 1ull << 30;

	if (b > (1u << 30))
		b = 1u << 30;
	return (uint32_t)(b & ~(uint64_t)(lu->lbs - 1)); /* lbs: a power of two */
}

/* Bios of @op over [@off, @off + @len) bytes, no data. */
void tgt_media_range_bios(struct media_io *io, struct scsi_tgt_cmd *c,
			     uint8_t op, uint64_t off, uint64_t len)
{
	uint32_t max = tgt_media_max_bio(io->lu, op);

	while (len) {
		uint32_t n = len < max ? (uint32_t)len : max;

		tgt_media_bio(io, c, op, off, n);
		off += n;
		len -= n;
	}
}

unsigned int tgt_bios_for(const struct scsi_lu *lu, uint8_t op, uint64_t len)
{
	uint32_t max = tgt_media_max_bio(lu, op);

	return (unsigned int)((len + max - 1) / max);
}

/* every_nth: is this READ/WRITE the one?  Positive: every Nth; negative
 * (scsi_debug before Linux 5.9, which set every_nth to -1 on the first
 * hit): the |N|th and every one after it. */
static bool nth_hit(struct scsi_tgt *t)
{
	int64_t n = t->cfg.every_nth;
	uint64_t k;

	if (!n)
		return false;
	k = atomic_fetch_add_explicit(&t->media_cmds, 1, memory_order_relaxed) + 1;
	if (n > 0)
		return k % (uint64_t)n == 0;
	return k >= (uint64_t)-n;
}

/*
 * scsi_debug's faults for a READ or WRITE of @nb blocks at @lba.  Return 1:
 * run it (with *@recovered: then report RECOVERED ERROR; *@short_xfer: move
 * half of it); 0: the fault is the answer (@c is set, or left unanswered
 * for a dropped command); -EBUSY: host busy.
 */
static int inject(struct scsi_tgt *t, struct scsi_lu *lu,
		  struct scsi_tgt_cmd *c, bool write, uint64_t lba, uint32_t nb,
		  bool *recovered, bool *short_xfer)
{
	uint32_t o = t->cfg.opts;

	if ((o & SCSI_TGT_OPT_MEDIUM_ERR) && !write &&
	    lba < SCSI_TGT_MEDIUM_ERR_LBA + SCSI_TGT_MEDIUM_ERR_NUM &&
	    lba + nb > SCSI_TGT_MEDIUM_ERR_LBA) {
		struct scsi_sense s = {
			.key = SK_MEDIUM_ERROR, .asc_ascq = ASC_UNRECOVERED_READ_ERROR,
			.info_valid = true,
			.info = lba > SCSI_TGT_MEDIUM_ERR_LBA ? lba : SCSI_TGT_MEDIUM_ERR_LBA,
		};

		atomic_fetch_add_explicit(&t->injected, 1, memory_order_relaxed);
		tgt_cmd_sense(c, lu, &s);
		return 0;
	}
	if (!(o & ~(uint32_t)SCSI_TGT_OPT_MEDIUM_ERR) || !nth_hit(t))
		return 1;
	/* a short transfer is a read's only (scsi_debug's resp_read_dt0()
	 * halves its blocks; writes take all) */
	if (write && (o & ~(uint32_t)SCSI_TGT_OPT_MEDIUM_ERR) == SCSI_TGT_OPT_SHORT_TRANSFER)
		return 1;
	atomic_fetch_add_explicit(&t->injected, 1, memory_order_relaxed);
	if (o & SCSI_TGT_OPT_HOST_BUSY)
		return -EBUSY;
	if (o & SCSI_TGT_OPT_TIMEOUT) {
		c->status = TGT_DROP; /* scsi_tgt_submit() drops it */
		return 0;
	}
	if (o & SCSI_TGT_OPT_TRANSPORT_ERR) {
		tgt_cmd_check(c, lu, SK_ABORTED_COMMAND, 0x4b03); /* ACK/NAK timeout */
		return 0;
	}
	if (o & SCSI_TGT_OPT_RARE_TSF) {
		c->status = SAM_STAT_TASK_SET_FULL;
		return 0;
	}
	if (o & SCSI_TGT_OPT_RECOVERED_ERR)
		*recovered = true;
	if ((o & SCSI_TGT_OPT_SHORT_TRANSFER) && !write)
		*short_xfer = true;
	return 1;
}

/* SBC-3 5.7-5.10, 5.32-5.35: READ and WRITE (6/10/12/16) */
static int do_rw(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		 struct scsi_tgt_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	bool write = cdb[0] == WRITE_6 || cdb[0] == WRITE_10 ||
		     cdb[0] == WRITE_12 || cdb[0] == WRITE_16;
	struct media_io *io;
	uint64_t lba, bytes, off;
	uint32_t nb, max, vi = 0, voff = 0;

	_Static_assert(sizeof(struct media_io) + sizeof(struct blk_bio) +
			       2 * sizeof(struct iovec) <=
		       sizeof(((struct scsi_tgt_cmd *)0)->io_space),
		       "one bio with one segment fits in the command");
	unsigned int nr, i;
	bool recovered = false, short_xfer = false;
	uint8_t fua = 0;

	/* RDPROTECT/WRPROTECT (no protection information here); in the
	 * 6-byte CDBs the same bits are reserved */
	if (cdb[1] & 0xe0) {
		tgt_cmd_bad_cdb(c, lu, 1, 7);
		return 0;
	}
	/* 10-byte: GROUP NUMBER's reserved bits */
	if ((cdb[0] == READ_10 || cdb[0] == WRITE_10) && (cdb[6] & 0xe0)) {
		tgt_cmd_bad_cdb(c, lu, 6, 7);
		return 0;
	}
	if (!tgt_media_range(c, lu, &lba, &nb))
		return 0;
	if (nb > q->tgt->cfg.max_xfer_blocks) {
		tgt_cmd_bad_cdb(c, lu, cdb[0] == READ_6 || cdb[0] == WRITE_6 ? 4 :
				   cdb[0] == READ_10 || cdb[0] == WRITE_10 ? 7 :
				   cdb[0] == READ_12 || cdb[0] == WRITE_12 ? 6 : 10, -1);
		return 0;
	}
	if (write) {
		/* write protect and write through (mode.c): one relaxed
		 * load, where the configuration's write_protect was read */
		uint8_t wf = tgt_lu_wflags(lu);

		if (wf & TGT_WF_WP) {
			tgt_cmd_check(c, lu, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
			return 0;
		}
		if ((cdb[0] != WRITE_6 && (cdb[1] & 0x08)) || (wf & TGT_WF_WT))
			fua = BLK_BIO_FUA;
	}
	if (unlikely(q->tgt->rw_faults)) {
		int r = inject(q->tgt, lu, c, write, lba, nb, &recovered, &short_xfer);

		if (r <= 0)
			return r; /* the fault is the answer */
		if (short_xfer) /* GOOD, with the rest in resid (media_put()) */
			nb /= 2;
	}
	bytes = (uint64_t)nb * lu->lbs;
	if (!nb) {
		c->resid = c->xfer_len;
		return 0;
	}
	/* the transport's expected length rules: move at most that much */
	if (bytes > c->xfer_len) {
		c->overflow = true;
		c->resid = (uint32_t)(bytes - c->xfer_len);
		bytes = c->xfer_len - c->xfer_len % lu->lbs;
		if (!bytes)
			return 0;
	}
	max = lu->max_rw_bio;
	/* one bio, the common case: no 64-bit division */
	nr = likely(bytes <= max) ? 1 : (unsigned int)((bytes + max - 1) / max);
	io = tgt_media_alloc(q, lu, c, nr, nr * (c->iovcnt + 1));
	if (!io)
		return -ENOMEM;
	io->read = !write;
	io->rw = true;
	io->recovered = recovered;
	off = lba * lu->lbs;
	if (likely(nr == 1 && c->iovcnt == 1 && c->iov[0].iov_len == bytes)) {
		/* one bio over the command's one segment: its iovec as is */
		struct blk_bio *b = tgt_media_bio(io, c, write ? BLK_OP_WRITE :
								BLK_OP_READ, off,
						  (uint32_t)bytes);

		b->bi_io_vec = c->iov;
		b->bi_vcnt = 1;
		b->bi_flags = fua;
		return tgt_media_submit(q, c);
	}
	for (i = 0; i < nr; i++) {
		uint32_t n = bytes - (uint64_t)i * max < max ?
			     (uint32_t)(bytes - (uint64_t)i * max) : max, left = n;
		struct blk_bio *b = tgt_media_bio(io, c, write ? BLK_OP_WRITE : BLK_OP_READ,
					      off + (uint64_t)i * max, n);
		struct iovec *v = io->iov + i * (c->iovcnt + 1);

		/* the slice of the command's buffer this bio moves */
		b->bi_io_vec = v;
		while (left && vi < c->iovcnt) {
			uint32_t k = (uint32_t)c->iov[vi].iov_len - voff;

			if (k > left)
				k = left;
			v[b->bi_vcnt].iov_base = (char *)c->iov[vi].iov_base + voff;
			v[b->bi_vcnt].iov_len = k;
			b->bi_vcnt++;
			left -= k;
			voff += k;
			if (voff == c->iov[vi].iov_len) {
				vi++;
				voff = 0;
			}
		}
		b->bi_flags = fua;
	}
	return tgt_media_submit(q, c);
}

/* SBC-3 5.22 / 5.23: a flush of the whole cache (the range is checked) */
static int do_sync_cache(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			 struct scsi_tgt_cmd *c)
{
	struct media_io *io;
	uint64_t lba;
	uint32_t nb;

	if (!tgt_media_range(c, lu, &lba, &nb))
		return 0;
	if (!lu->info.can_flush)
		return 0;
	io = tgt_media_alloc(q, lu, c, 1, 0);
	if (!io)
		return -ENOMEM;
	tgt_media_bio(io, c, BLK_OP_FLUSH, 0, 0);
	return tgt_media_submit(q, c);
}

/* SBC-3 5.28: UNMAP and its parameter list */
static int do_unmap(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		    struct scsi_tgt_cmd *c)
{
	struct scsi_tgt *t = q->tgt;
	uint32_t plen = scsi_get_be16(c->cdb + 7), got, bdl, nd, i;
	uint64_t total = 0;
	unsigned int nr = 0;
	struct media_io *io;
	uint8_t *pl;

	if (!lu->lbpu) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
		return 0;
	}
	if (c->cdb[1] & 0xff) {
		tgt_cmd_bad_cdb(c, lu, 1, c->cdb[1] & 0x01 ? 0 : -1); /* ANCHOR: no */
		return 0;
	}
	if (tgt_lu_wflags(lu) & TGT_WF_WP) {
		tgt_cmd_check(c, lu, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
		return 0;
	}
	if (!plen)
		return 0;
	if (plen < 8) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
		return 0;
	}
	pl = malloc(plen);
	if (!pl)
		return -ENOMEM;
	got = tgt_data_out(c, pl, plen);
	if (got < 8) {
		free(pl);
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
		return 0;
	}
	bdl = scsi_get_be16(pl + 2);
	if (bdl % 16 || 8 + bdl > got) {
		free(pl);
		tgt_cmd_bad_param(c, lu, 2, -1);
		return 0;
	}
	nd = bdl / 16;
	if (nd > t->cfg.max_unmap_descriptors) {
		free(pl);
		tgt_cmd_bad_param(c, lu, 2, -1);
		return 0;
	}
	for (i = 0; i < nd; i++) {
		const uint8_t *d = pl + 8 + 16 * i;
		uint64_t lba = scsi_get_be64(d);
		uint32_t n = scsi_get_be32(d + 8);

		if (lba > lu->nr_blocks || n > lu->nr_blocks - lba) {
			free(pl);
			tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
			return 0;
		}
		total += n;
		nr += tgt_bios_for(lu, BLK_OP_DISCARD, (uint64_t)n * lu->lbs);
	}
	if (total > t->cfg.max_unmap_blocks) {
		free(pl);
		tgt_cmd_bad_param(c, lu, 8 + 8, -1);
		return 0;
	}
	if (!nr) {
		free(pl);
		return 0;
	}
	io = tgt_media_alloc(q, lu, c, nr, 0);
	if (!io) {
		free(pl);
		return -ENOMEM;
	}
	for (i = 0; i < nd; i++) {
		const uint8_t *d = pl + 8 + 16 * i;

		tgt_media_range_bios(io, c, BLK_OP_DISCARD, scsi_get_be64(d) * lu->lbs,
				 (uint64_t)scsi_get_be32(d + 8) * lu->lbs);
	}
	free(pl);
	return tgt_media_submit(q, c);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

/* SBC-3 5.41 / 5.42: WRITE SAME (10) and (16) */
static int do_write_same(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			 struct scsi_tgt_cmd *c)
{
	struct scsi_tgt *t = q->tgt;
	bool sixteen = c->cdb[0] == WRITE_SAME_16;
	bool unmap = c->cdb[1] & 0x08, ndob = sixteen && (c->cdb[1] & 0x01);
	struct media_io *io;
	uint64_t lba, off, len;
	uint32_t nb;
	uint8_t *blk;
	uint8_t op;

	if (c->cdb[1] & 0xe0) {
		tgt_cmd_bad_cdb(c, lu, 1, 7); /* WRPROTECT */
		return 0;
	}
	if (c->cdb[1] & (sixteen ? 0x16 : 0x17)) {
		/* ANCHOR: refused, ANC_SUP is 0 in VPD 0xb2 (SBC-3 5.41);
		 * LBDATA, PBDATA: obsolete */
		tgt_cmd_bad_cdb(c, lu, 1, c->cdb[1] & 0x10 ? 4 : -1);
		return 0;
	}
	/* UNMAP where VPD 0xb2 says WRITE SAME does not (lbpws, lbpws10) */
	if (unmap && !(sixteen ? lu->lbpws : lu->lbpws10)) {
		tgt_cmd_bad_cdb(c, lu, 1, 3);
		return 0;
	}
	if (!tgt_media_range(c, lu, &lba, &nb))
		return 0;
	if (!nb || nb > t->cfg.max_write_same_blocks) {
		tgt_cmd_bad_cdb(c, lu, sixteen ? 10 : 7, -1); /* WSNZ is set */
		return 0;
	}
	if (tgt_lu_wflags(lu) & TGT_WF_WP) {
		tgt_cmd_check(c, lu, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
		return 0;
	}
	off = lba * lu->lbs;
	len = (uint64_t)nb * lu->lbs;
	blk = (uint8_t *)q->ws_buf;
	if (!ndob && tgt_data_out(c, blk, lu->lbs) < lu->lbs) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
		return 0;
	}
	/* zeros (NDOB, or a zero block): the device's write zeroes, which
	 * frees the blocks where it can (LBPRZ: they read back as zeros) */
	if (ndob || all_zero(blk, lu->lbs)) {
		op = lu->info.can_write_zeroes ? BLK_OP_WRITE_ZEROES :
		     unmap && lu->info.can_discard && lu->info.stores_data ?
						  BLK_OP_DISCARD : BLK_OP_WRITE;
		if (ndob && op == BLK_OP_WRITE)
			memset(blk, 0, lu->lbs);
	} else {
		op = BLK_OP_WRITE;
	}
	if (op != BLK_OP_WRITE) {
		io = tgt_media_alloc(q, lu, c, tgt_bios_for(lu, op, len), 0);
		if (!io)
			return -ENOMEM;
		tgt_media_range_bios(io, c, op, off, len);
		return tgt_media_submit(q, c);
	}
	/* the block written over and over from a buffer filled with it */
	{
		uint32_t chunk = WS_CHUNK - WS_CHUNK % lu->lbs, i, max;
		unsigned int nr;

		for (i = lu->lbs; i + lu->lbs <= chunk; i += lu->lbs)
			memcpy(q->ws_buf + i, blk, lu->lbs);
		max = tgt_media_max_bio(lu, BLK_OP_WRITE);
		if (chunk > max)
			chunk = max;
		nr = (unsigned int)((len + chunk - 1) / chunk);
		io = tgt_media_alloc(q, lu, c, nr, nr);
		if (!io)
			return -ENOMEM;
		for (i = 0; i < nr; i++) {
			uint32_t n = len - (uint64_t)i * chunk < chunk ?
				     (uint32_t)(len - (uint64_t)i * chunk) : chunk;
			struct blk_bio *b = tgt_media_bio(io, c, BLK_OP_WRITE,
						      off + (uint64_t)i * chunk, n);

			io->iov[i].iov_base = q->ws_buf;
			io->iov[i].iov_len = n;
			b->bi_io_vec = &io->iov[i];
			b->bi_vcnt = 1;
			if (tgt_lu_wflags(lu) & TGT_WF_WT)
				b->bi_flags |= BLK_BIO_FUA;
		}
		return tgt_media_submit(q, c);
	}
}

/* -------------------------------------------------- supported opcodes */

/*
 * CDB USAGE DATA of each command (SPC-4 6.35.3): the operation code, then a
 * mask per CDB byte of the bits this target reads or accepts; reserved bits
 * and fields it refuses (RDPROTECT, SP, NACA) are clear.  The first
 * byte of an entry with a service action is the opcode, the SA is @sa:
 * do_maintenance_in() puts its code in the SERVICE ACTION field's place
 * (the table has the field's mask there).
 */
static const struct opcode_usage {
	uint8_t op;
	int32_t sa;             /* -1: no service action */
	uint8_t len;
	uint8_t usage[32];
} opcode_usage[] = {
	{ TEST_UNIT_READY, -1, 6, { 0x00, 0, 0, 0, 0, 0 } },
	{ REQUEST_SENSE, -1, 6, { 0x03, 0x01, 0, 0, 0xff, 0 } },
	{ READ_6, -1, 6, { 0x08, 0x1f, 0xff, 0xff, 0xff, 0 } },
	{ WRITE_6, -1, 6, { 0x0a, 0x1f, 0xff, 0xff, 0xff, 0 } },
	{ INQUIRY, -1, 6, { 0x12, 0x01, 0xff, 0xff, 0xff, 0 } },
	{ MODE_SELECT_6, -1, 6, { 0x15, 0x10, 0, 0, 0xff, 0 } },
	{ RESERVE_6, -1, 6, { 0x16, 0, 0, 0, 0, 0 } },
	{ RELEASE_6, -1, 6, { 0x17, 0, 0, 0, 0, 0 } },
	{ MODE_SENSE_6, -1, 6, { 0x1a, 0x08, 0xff, 0xff, 0xff, 0 } },
	{ START_STOP_UNIT, -1, 6, { 0x1b, 0x01, 0, 0x0f, 0xf7, 0 } },
	{ PREVENT_ALLOW_MEDIUM_REMOVAL, -1, 6, { 0x1e, 0, 0, 0, 0x03, 0 } },
	{ READ_CAPACITY_10, -1, 10, { 0x25, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x01, 0 } },
	{ READ_10, -1, 10, { 0x28, 0x1c, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, 0 } },
	{ WRITE_10, -1, 10, { 0x2a, 0x18, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, 0 } },
	{ WRITE_VERIFY_10, -1, 10, { 0x2e, 0x12, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, 0 } },
	{ VERIFY_10, -1, 10, { 0x2f, 0x16, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, 0 } },
	{ PRE_FETCH_10, -1, 10, { 0x34, 0x02, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, 0 } },
	{ SYNCHRONIZE_CACHE_10, -1, 10, { 0x35, 0x02, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, 0 } },
	{ WRITE_SAME_10, -1, 10, { 0x41, 0x08, 0xff, 0xff, 0xff, 0xff, 0x1f, 0xff, 0xff, 0 } },
	{ UNMAP, -1, 10, { 0x42, 0, 0, 0, 0, 0, 0x1f, 0xff, 0xff, 0 } },
	{ MODE_SELECT_10, -1, 10, { 0x55, 0x10, 0, 0, 0, 0, 0, 0xff, 0xff, 0 } },
	{ RESERVE_10, -1, 10, { 0x56, 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ RELEASE_10, -1, 10, { 0x57, 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ MODE_SENSE_10, -1, 10, { 0x5a, 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff, 0 } },
#define PRIN(sa) { PERSISTENT_RESERVE_IN, sa, 10, \
		   { 0x5e, 0x1f, 0, 0, 0, 0, 0, 0xff, 0xff, 0 } }
	PRIN(PRIN_READ_KEYS), PRIN(PRIN_READ_RESERVATION),
	PRIN(PRIN_REPORT_CAPABILITIES), PRIN(PRIN_READ_FULL_STATUS),
#define PROUT(sa) { PERSISTENT_RESERVE_OUT, sa, 10, \
		    { 0x5f, 0x1f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, 0 } }
	PROUT(PROUT_REGISTER), PROUT(PROUT_RESERVE), PROUT(PROUT_RELEASE),
	PROUT(PROUT_CLEAR), PROUT(PROUT_PREEMPT), PROUT(PROUT_PREEMPT_AND_ABORT),
	PROUT(PROUT_REGISTER_AND_IGNORE), PROUT(PROUT_REGISTER_AND_MOVE),
	/* SBC-4 5.11: CONTROL (byte 1) as the others' (NACA refused),
	 * BMOP, PREVIOUS GENERATION PROCESSING, GROUP NUMBER, ADDITIONAL
	 * CDB LENGTH (its value, 18h, as LIO reports it), DPO, FUA, the
	 * LBA, both generations and the length */
	{ VARIABLE_LENGTH_CMD, VLC_ORWRITE_32, 32,
	  { 0x7f, 0, 0x07, 0x0f, 0, 0, 0x1f, 0x18, 0xff, 0xff, 0x18, 0,
	    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } },
	{ EXTENDED_COPY, 0x00, 16, { 0x83, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0,
				     0xff, 0xff, 0xff, 0xff, 0, 0 } },
	{ RECEIVE_COPY_RESULTS, RCR_COPY_STATUS, 16,
	  { 0x84, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0 } },
	{ RECEIVE_COPY_RESULTS, RCR_OPERATING_PARAMETERS, 16,
	  { 0x84, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0 } },
	{ READ_16, -1, 16, { 0x88, 0x1c, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			     0xff, 0xff, 0xff, 0xff, 0x1f, 0 } },
	{ COMPARE_AND_WRITE, -1, 16, { 0x89, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0, 0, 0, 0xff, 0x1f, 0 } },
	{ WRITE_16, -1, 16, { 0x8a, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			      0xff, 0xff, 0xff, 0xff, 0x1f, 0 } },
	{ ORWRITE_16, -1, 16, { 0x8b, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				0xff, 0xff, 0xff, 0xff, 0x1f, 0 } },
	{ WRITE_VERIFY_16, -1, 16, { 0x8e, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				     0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0 } },
	{ VERIFY_16, -1, 16, { 0x8f, 0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			       0xff, 0xff, 0xff, 0xff, 0x1f, 0 } },
	{ PRE_FETCH_16, -1, 16, { 0x90, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				  0xff, 0xff, 0xff, 0xff, 0x1f, 0 } },
	{ SYNCHRONIZE_CACHE_16, -1, 16, { 0x91, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0 } },
	{ WRITE_SAME_16, -1, 16, { 0x93, 0x09, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				   0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0 } },
	{ SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16, 16,
	  { 0x9e, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0 } },
	{ SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS, 16,
	  { 0x9e, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0xff, 0, 0 } },
	{ REPORT_LUNS, -1, 12, { 0xa0, 0, 0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0 } },
	{ MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPCODES, 12,
	  { 0xa3, 0x1f, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0 } },
	{ READ_12, -1, 12, { 0xa8, 0x1c, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0 } },
	{ WRITE_12, -1, 12, { 0xaa, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0 } },
	{ WRITE_VERIFY_12, -1, 12, { 0xae, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				     0x1f, 0 } },
	{ VERIFY_12, -1, 12, { 0xaf, 0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0 } },
};

/* SPC-4 6.35.4: command timeouts descriptor: nominal and recommended, s */
static uint32_t put_timeouts(uint8_t *b)
{
	memset(b, 0, 12);
	scsi_put_be16(b, 0x0a);
	scsi_put_be32(b + 8, 30); /* the initiator's usual 30 s */
	return 12;
}

/* SPC-4 6.35: REPORT SUPPORTED OPERATION CODES (MAINTENANCE IN, SA 0x0c) */
static int do_maintenance_in(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			     struct scsi_tgt_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	bool rctd = cdb[2] & 0x80;
	uint8_t opt = cdb[2] & 0x07, rop = cdb[3];
	uint16_t rsa = scsi_get_be16(cdb + 4);
	uint32_t alloc = scsi_get_be32(cdb + 6), n, i;
	const struct opcode_usage *u = NULL;
	uint8_t *b;

	(void)q;
	if ((cdb[1] & 0x1f) != MI_REPORT_SUPPORTED_OPCODES) {
		tgt_cmd_bad_cdb(c, lu, 1, 4);
		return 0;
	}
	if (cdb[1] & 0xe0 || cdb[2] & 0x78) {
		tgt_cmd_bad_cdb(c, lu, cdb[1] & 0xe0 ? 1 : 2, -1);
		return 0;
	}
	b = calloc(1, 4 + ARRAY_SIZE(opcode_usage) * 20 + 4 + 32 + 12);
	if (!b)
		return -ENOMEM;
	if (opt == 0) {
		/* every command: a descriptor each (6.35.2) */
		n = 4;
		for (i = 0; i < ARRAY_SIZE(opcode_usage); i++) {
			const struct opcode_usage *e = &opcode_usage[i];

			b[n] = e->op;
			if (e->sa >= 0) {
				scsi_put_be16(b + n + 2, (uint16_t)e->sa);
				b[n + 5] |= 0x01; /* SERVACTV */
			}
			scsi_put_be16(b + n + 6, e->len);
			if (rctd) {
				b[n + 5] |= 0x02; /* CTDP */
				n += 8 + put_timeouts(b + n + 8);
			} else {
				n += 8;
			}
		}
		scsi_put_be32(b, n - 4);
	} else if (opt <= 3) {
		/* one command (6.35.3): by opcode (1), opcode and SA (2), or
		 * the SA where the opcode has one (3) */
		bool has_sa = false;

		for (i = 0; i < ARRAY_SIZE(opcode_usage); i++)
			if (opcode_usage[i].op == rop && opcode_usage[i].sa >= 0)
				has_sa = true;

		if ((opt == 1 && has_sa) || (opt == 2 && !has_sa)) {
			free(b);
			tgt_cmd_bad_cdb(c, lu, 2, 2);
			return 0;
		}
		for (i = 0; i < ARRAY_SIZE(opcode_usage); i++)
			if (opcode_usage[i].op == rop &&
			    (opcode_usage[i].sa < 0 || opcode_usage[i].sa == rsa))
				u = &opcode_usage[i];
		if (u) {
			b[1] = 0x03 | (rctd ? 0x80 : 0); /* SUPPORT: per the standard */
			scsi_put_be16(b + 2, u->len);
			memcpy(b + 4, u->usage, u->len);
			/* the service action's code where the CDB has it
			 * (6.35.3), not a usage mask: bytes 8-9 of a
			 * variable-length CDB, else byte 1's bits 4-0 */
			if (u->sa >= 0 && u->op == VARIABLE_LENGTH_CMD)
				scsi_put_be16(b + 4 + 8, (uint16_t)u->sa);
			else if (u->sa >= 0)
				b[4 + 1] = (uint8_t)((u->usage[1] & 0xe0) | u->sa);
			n = 4 + u->len;
			if (rctd)
				n += put_timeouts(b + n);
		} else {
			b[1] = 0x01; /* SUPPORT: not supported */
			n = 4;
		}
	} else {
		free(b);
		tgt_cmd_bad_cdb(c, lu, 2, 2);
		return 0;
	}
	tgt_data_in(c, b, n, alloc);
	free(b);
	return 0;
}

/*
 * SPC-4 4.2.3: a variable-length CDB (operation code 7Fh), by its service
 * action (bytes 8-9).  submit() has checked that the CDB is as long as its
 * ADDITIONAL CDB LENGTH says, and its CONTROL byte (byte 1).
 */
static int do_variable_length(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			      struct scsi_tgt_cmd *c)
{
	if (c->cdb[7] < 2) { /* too short to hold the service action */
		tgt_cmd_bad_cdb(c, lu, 7, -1);
		return 0;
	}
	switch (scsi_get_be16(c->cdb + 8)) {
	case VLC_ORWRITE_32:
		return tgt_orwrite(q, lu, c);
	default:
		tgt_cmd_bad_cdb(c, lu, 8, -1);
		return 0;
	}
}

/* ---------------------------------------------------------- dispatch */

#define F_NO_LUN  0x1 /* runs without a logical unit (REPORT LUNS, INQUIRY) */
#define F_NO_UA   0x2 /* not held by a unit attention (SPC-4 5.14); not
		       * delayed (scsi_debug's F_DELAY_OVERR) either */
#define F_MEDIA   0x4 /* medium access: NOT READY while the unit is not */
#define F_RESID   0x8 /* sets its own residual from the transport's
		       * expected length (READ/WRITE, WRITE AND VERIFY):
		       * kept when it ends without media access */

static const struct {
	scsi_cmd_fn fn;
	uint8_t flags;
} cmd_table[256] = {
	[TEST_UNIT_READY] = { do_nothing_good, 0 },
	[REQUEST_SENSE] = { do_request_sense, F_NO_LUN | F_NO_UA },
	[READ_6] = { do_rw, F_MEDIA | F_RESID },
	[WRITE_6] = { do_rw, F_MEDIA | F_RESID },
	[INQUIRY] = { do_inquiry, F_NO_LUN | F_NO_UA },
	[MODE_SELECT_6] = { tgt_mode_select, 0 },
	[MODE_SENSE_6] = { tgt_mode_sense, 0 },
	[RESERVE_6] = { tgt_do_reserve, 0 },
	[RELEASE_6] = { tgt_do_release, 0 },
	[START_STOP_UNIT] = { do_start_stop, 0 },
	[PREVENT_ALLOW_MEDIUM_REMOVAL] = { do_prevent_allow, 0 },
	[READ_CAPACITY_10] = { do_read_capacity_10, 0 },
	[READ_10] = { do_rw, F_MEDIA | F_RESID },
	[WRITE_10] = { do_rw, F_MEDIA | F_RESID },
	[WRITE_VERIFY_10] = { tgt_write_verify, F_MEDIA | F_RESID },
	[VERIFY_10] = { tgt_verify, F_MEDIA },
	[PRE_FETCH_10] = { tgt_pre_fetch, F_MEDIA },
	[SYNCHRONIZE_CACHE_10] = { do_sync_cache, F_MEDIA },
	[WRITE_SAME_10] = { do_write_same, F_MEDIA },
	[UNMAP] = { do_unmap, F_MEDIA },
	[MODE_SELECT_10] = { tgt_mode_select, 0 },
	[MODE_SENSE_10] = { tgt_mode_sense, 0 },
	[RESERVE_10] = { tgt_do_reserve, 0 },
	[RELEASE_10] = { tgt_do_release, 0 },
	[PERSISTENT_RESERVE_IN] = { tgt_do_pr_in, 0 },
	[PERSISTENT_RESERVE_OUT] = { tgt_do_pr_out, 0 },
	[VARIABLE_LENGTH_CMD] = { do_variable_length, F_MEDIA },
	[EXTENDED_COPY] = { tgt_do_xcopy, F_MEDIA },
	[RECEIVE_COPY_RESULTS] = { tgt_do_receive_copy_results, 0 },
	[READ_16] = { do_rw, F_MEDIA | F_RESID },
	[COMPARE_AND_WRITE] = { tgt_compare_and_write, F_MEDIA },
	[WRITE_16] = { do_rw, F_MEDIA | F_RESID },
	[ORWRITE_16] = { tgt_orwrite, F_MEDIA },
	[WRITE_VERIFY_16] = { tgt_write_verify, F_MEDIA | F_RESID },
	[VERIFY_16] = { tgt_verify, F_MEDIA },
	[PRE_FETCH_16] = { tgt_pre_fetch, F_MEDIA },
	[SYNCHRONIZE_CACHE_16] = { do_sync_cache, F_MEDIA },
	[WRITE_SAME_16] = { do_write_same, F_MEDIA },
	[SERVICE_ACTION_IN_16] = { do_service_action_in, 0 },
	[REPORT_LUNS] = { do_report_luns, F_NO_LUN | F_NO_UA },
	[MAINTENANCE_IN] = { do_maintenance_in, 0 },
	[READ_12] = { do_rw, F_MEDIA | F_RESID },
	[WRITE_12] = { do_rw, F_MEDIA | F_RESID },
	[WRITE_VERIFY_12] = { tgt_write_verify, F_MEDIA | F_RESID },
	[VERIFY_12] = { tgt_verify, F_MEDIA },
};

/*
 * SPC-4 4.2.5.1: the CDB's length from its group code; 0: reserved group,
 * and group 3's variable-length CDB (7Fh), whose length is in it:
 * var_cdb_length().
 */
static unsigned int cdb_length(uint8_t op)
{
	static const uint8_t len[8] = { 6, 10, 10, 0, 16, 12, 0, 0 };

	return len[op >> 5];
}

/* SPC-4 4.2.3: 8 + ADDITIONAL CDB LENGTH (byte 7); 8 when the CDB does
 * not reach byte 7 (too short either way) */
static unsigned int var_cdb_length(const struct scsi_tgt_cmd *c)
{
	return c->cdb_len < 8 ? 8 : 8u + c->cdb[7];
}

/*
 * tgt_pre_faults() for submit().  Return 1: run the command;
 * else what scsi_tgt_submit() returns (the command answered and ended,
 * dropped, or -EBUSY).
 */
static __attribute__((noinline, cold)) int
submit_faults(struct scsi_tgt_queue *q, struct scsi_lu *lu,
	      struct scsi_tgt_cmd *c, uint8_t flags)
{
	int ret = tgt_pre_faults(q, lu, c, flags & F_MEDIA, !(flags & F_NO_UA));

	if (ret > 0)
		return 1;
	if (!ret && c->status != TGT_DROP)
		tgt_cmd_end(q, c);
	return ret;
}

/* A command that does not end (not started, or dropped): done back. */
static __attribute__((noinline, cold)) int submit_undo(struct scsi_tgt_cmd *c,
							int ret)
{
	tgt_delay_cancel(c);
	return ret;
}

/*
 * The command's way through the target; @faults (a constant in each of its
 * two copies): the faults before a command (error rules, not ready, the
 * medium, the delay) are looked at.  Two copies, so that the one that
 * runs while none is configured is the code as it was before they existed:
 * a test inside it cost 9 instructions a command in register saves and
 * reloads, callgrind, bench/scsi-overhead.sh's QD32 workload on null.
 */
static inline __attribute__((always_inline)) int
submit(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c, const bool faults)
{
	struct scsi_tgt *t = q->tgt;
	struct scsi_lu *lu;
	unsigned int need;
	uint8_t op;
	int ret;

	c->status = SAM_STAT_GOOD;
	c->sense_len = 0;
	c->resid = 0;
	c->overflow = false;
	c->no_response = false;
	c->blk_status = BLK_STS_OK;
	c->pending = 0;
	c->tstate = TGT_TASK_IDLE;
	c->aborting = false;
	c->moved = 0;
	c->err = BLK_STS_OK;
	/* err_lba: set with the first error, read only after one (its cold
	 * line stays untouched on a command that does not fail) */
	c->io = NULL;
	/*
	 * The epoch the task starts in, before the unit attention and
	 * reservation checks (acquire: a reset or PREEMPT AND ABORT that
	 * bumped it is seen by those checks); a reset or preempt of a later
	 * epoch aborts it where it ends.
	 */
	c->epoch = atomic_load_explicit(&t->epoch, memory_order_acquire);
	lu = c->lun < t->nr_luns ? &t->lus[c->lun] : NULL;
	op = c->cdb_len ? c->cdb[0] : 0xff;
	need = c->cdb_len ? cdb_length(op) : 0;
	if (unlikely(!cmd_table[op].fn || !need)) {
		/* a variable-length CDB: the checks below, with its CONTROL
		 * byte at byte 1, here in the cold branch so that the other
		 * CDBs' path is as it was */
		if (op != VARIABLE_LENGTH_CMD || !cmd_table[op].fn) {
			tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
			goto end;
		}
		need = var_cdb_length(c);
		if (c->cdb_len < need) {
			tgt_cmd_bad_cdb(c, lu, c->cdb_len - 1u, -1);
			goto end;
		}
		if (!lu) {
			tgt_cmd_check(c, NULL, SK_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED);
			goto end;
		}
		if (c->cdb[1] & 0x04) {
			tgt_cmd_bad_cdb(c, lu, 1, 2);
			goto end;
		}
		goto checked;
	}
	if (c->cdb_len < need) {
		tgt_cmd_bad_cdb(c, lu, c->cdb_len - 1u, -1);
		goto end;
	}
	if (!lu && !(cmd_table[op].flags & F_NO_LUN)) {
		tgt_cmd_check(c, NULL, SK_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED);
		goto end;
	}
	/* CONTROL: NACA (bit 2) is not supported (no ACA) */
	if (c->cdb[need - 1] & 0x04) {
		tgt_cmd_bad_cdb(c, lu, need - 1, 2);
		goto end;
	}
checked:
	if (faults && (ret = submit_faults(q, lu, c, cmd_table[op].flags)) != 1) {
		if (!ret && c->status == TGT_DROP) {
			/* a timeout error rule: kept for an abort */
			submit_undo(c, 0);
			tgt_task_drop(q, c);
		}
		return ret;
	}
	if (lu && !(cmd_table[op].flags & F_NO_UA)) {
		uint16_t asc_ascq;

		if (unlikely(tgt_ua_pending(lu, c->nexus)) &&
		    tgt_ua_take(t, lu, c->nexus, &asc_ascq)) {
			tgt_cmd_check(c, lu, SK_UNIT_ATTENTION, asc_ascq);
			goto end;
		}
		/* reservations (pr.c): one relaxed load while none is held
		 * (what a unit attention does not hold, every reservation
		 * lets through) */
		if (unlikely(atomic_load_explicit(&lu->reserved, memory_order_relaxed)) &&
		    tgt_pr_conflict(lu, c)) {
			c->status = SAM_STAT_RESERVATION_CONFLICT;
			goto end;
		}
	}
	ret = cmd_table[op].fn(q, lu, c);
	if (ret) /* -EAGAIN, -EBUSY, -ENOMEM: done is not called */
		return faults ? submit_undo(c, ret) : ret;
	if (c->io)
		return 0; /* media access: ends from its bios */
	if (unlikely(c->status == TGT_DROP)) {
		/* SCSI_TGT_OPT_TIMEOUT: never answered; kept for an abort */
		if (faults)
			submit_undo(c, 0);
		tgt_task_drop(q, c);
		return 0;
	}
	/* Data-Out taken whole; an overflow keeps its count, and so do the
	 * commands that count their own residual (a WRITE of 0 blocks, or
	 * whose blocks the transport's length holds none of, moves nothing;
	 * WRITE AND VERIFY runs here, not from bios) */
	if (c->status == SAM_STAT_GOOD && c->dir == SCSI_DIR_TO_DEVICE &&
	    !c->overflow && !(cmd_table[op].flags & F_RESID))
		c->resid = 0;
end:
	tgt_cmd_end(q, c);
	return 0;
}

static __attribute__((noinline, cold)) int
submit_with_faults(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c)
{
	return submit(q, c, true);
}

int scsi_tgt_submit(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c)
{
	/* error rules, not ready, no medium, the delay: none set, one
	 * relaxed load */
	if (unlikely(atomic_load_explicit(&q->tgt->pre_faults, memory_order_relaxed)))
		return submit_with_faults(q, c);
	return submit(q, c, false);
}

void scsi_tgt_plug(struct scsi_tgt_queue *q)
{
	q->plugging = true;
}

void scsi_tgt_unplug(struct scsi_tgt_queue *q)
{
	unsigned int i;

	q->plugging = false;
	if (likely(!q->any_plugged))
		return;
	q->any_plugged = false;
	for (i = 0; i < q->tgt->nr_luns; i++)
		if (q->lun_plugged[i]) {
			q->lun_plugged[i] = false;
			blk_finish_plug(q->ctx[i]);
		}
}

int scsi_tgt_poll(struct scsi_tgt_queue *q)
{
	unsigned int i;
	int n = 0;

	/* what a plug holds cannot complete */
	if (unlikely(q->plugging || q->any_plugged))
		scsi_tgt_unplug(q);
	for (i = 0; i < q->tgt->nr_luns; i++)
		n += blk_poll(q->ctx[i]);
	if (unlikely(q->delay_head))
		n += (int)tgt_delay_poll(q);
	return n;
}

/* ------------------------------------------------------------ set up */

/* scsi_debug's knobs that need no unit to check. */
static int check_knobs(const struct scsi_tgt_config *cfg, char *err, size_t errlen)
{
	if (cfg->sector_size && cfg->sector_size != 512 && cfg->sector_size != 1024 &&
	    cfg->sector_size != 2048 && cfg->sector_size != 4096) {
		snprintf(err, errlen, "sector_size=%u: allowed 512, 1024, 2048, 4096 (0: the device's)",
			 cfg->sector_size);
		return -EINVAL;
	}
	if (cfg->physblk_exp > 15 || cfg->opt_xferlen_exp > 15) {
		snprintf(err, errlen, "%s=%u: allowed 0..15",
			 cfg->physblk_exp > 15 ? "physblk_exp" : "opt_xferlen_exp",
			 cfg->physblk_exp > 15 ? cfg->physblk_exp : cfg->opt_xferlen_exp);
		return -EINVAL;
	}
	if (cfg->lbpu > SCSI_TGT_LBP_ON || cfg->lbpws > SCSI_TGT_LBP_ON ||
	    cfg->lbpws10 > SCSI_TGT_LBP_ON || cfg->lbprz > SCSI_TGT_LBP_ON) {
		snprintf(err, errlen, "lbpu, lbpws, lbpws10, lbprz: allowed 0 (auto), 1 (off), 2 (on)");
		return -EINVAL;
	}
	if ((uint64_t)cfg->delay_ms * 1000000 > SCSI_TGT_MAX_DELAY_NS ||
	    cfg->ndelay_ns > SCSI_TGT_MAX_DELAY_NS) {
		snprintf(err, errlen, "%s: allowed 0..10 s",
			 cfg->ndelay_ns > SCSI_TGT_MAX_DELAY_NS ? "ndelay" : "delay");
		return -EINVAL;
	}
	if (cfg->nr_error_rules && !cfg->error_rules) {
		snprintf(err, errlen, "nr_error_rules=%u without error_rules",
			 cfg->nr_error_rules);
		return -EINVAL;
	}
	return 0;
}

/* What VPD 0xb2 says of @lu (lbpu, lbpws, lbpws10, lbprz). */
static int lbp_resolve(const struct scsi_tgt_config *cfg, struct scsi_lu *lu,
		       unsigned int i, char *err, size_t errlen)
{
	const struct blk_dev_info *in = &lu->info;

	if (cfg->lbpu == SCSI_TGT_LBP_ON && !in->can_discard) {
		snprintf(err, errlen, "lbpu=1: LUN %u's device cannot discard", i);
		return -EINVAL;
	}
	if (cfg->lbprz == SCSI_TGT_LBP_ON && !in->stores_data) {
		snprintf(err, errlen,
			 "lbprz=1: LUN %u's device keeps no data (reads are not zeros)", i);
		return -EINVAL;
	}
	/* AUTO: UNMAP where the device discards; WRITE SAME with UNMAP
	 * where it discards or writes zeroes (else it writes the zeros);
	 * zeros read back where it keeps data */
	lu->lbpu = cfg->lbpu ? cfg->lbpu == SCSI_TGT_LBP_ON : in->can_discard;
	lu->lbpws = cfg->lbpws ? cfg->lbpws == SCSI_TGT_LBP_ON :
		    in->can_discard || in->can_write_zeroes;
	lu->lbpws10 = cfg->lbpws10 ? cfg->lbpws10 == SCSI_TGT_LBP_ON :
		      in->can_discard || in->can_write_zeroes;
	lu->lbprz = cfg->lbprz ? cfg->lbprz == SCSI_TGT_LBP_ON : in->stores_data;
	return 0;
}

int scsi_tgt_create(const struct scsi_tgt_config *cfg, struct scsi_tgt **tgt,
		    char *err, size_t errlen)
{
	struct scsi_tgt *t;
	unsigned int i, k;
	int ret;

	if (!cfg->nr_luns || cfg->nr_luns > SCSI_TGT_MAX_LUNS || !cfg->luns) {
		snprintf(err, errlen, "nr_luns=%u: allowed 1..%u", cfg->nr_luns,
			 SCSI_TGT_MAX_LUNS);
		return -EINVAL;
	}
	if ((cfg->vendor && strlen(cfg->vendor) > 8) ||
	    (cfg->product && strlen(cfg->product) > 16) ||
	    (cfg->serial && strlen(cfg->serial) > 32)) {
		snprintf(err, errlen,
			 "vendor, product, serial: at most 8, 16 and 32 characters");
		return -EINVAL;
	}
	if (cfg->opts & ~(uint32_t)SCSI_TGT_OPTS_SUPPORTED) {
		snprintf(err, errlen,
			 "opts=0x%x: bits 0x%x are not implemented (supported: 0x%x: medium error 0x2, timeout 0x4, recovered error 0x8, transport error 0x10, short transfer 0x100, task set full 0x800, host busy 0x8000)",
			 cfg->opts, cfg->opts & ~(uint32_t)SCSI_TGT_OPTS_SUPPORTED,
			 SCSI_TGT_OPTS_SUPPORTED);
		return -EINVAL;
	}
	ret = check_knobs(cfg, err, errlen);
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->lus = calloc(cfg->nr_luns, sizeof(*t->lus));
	t->rules = calloc(cfg->nr_luns, sizeof(*t->rules));
	if (!t->lus || !t->rules) {
		free(t->lus);
		free(t->rules);
		free(t);
		return -ENOMEM;
	}
	blk_mutex_init(&t->rules_lock, "&scsi_tgt->rules_lock", -1);
	blk_mutex_init(&t->queues_lock, "&scsi_tgt->queues_lock", -1);
	t->cfg = *cfg;
	t->cfg.error_rules = NULL; /* the caller's; copied into the units */
	t->cfg.nr_error_rules = 0;
	t->nr_luns = cfg->nr_luns;
	snprintf(t->vendor, sizeof(t->vendor), "%s", cfg->vendor ? cfg->vendor : "BLKSTACK");
	snprintf(t->product, sizeof(t->product), "%s",
		 cfg->product ? cfg->product : "blkstack disk");
	if (cfg->serial && cfg->serial[0])
		snprintf(t->serial, sizeof(t->serial), "%s", cfg->serial);
	else
		snprintf(t->serial, sizeof(t->serial), "BLK%06X",
			 cfg->id & 0xffffff);
	if (!t->cfg.max_xfer_blocks)
		t->cfg.max_xfer_blocks = 65535;
	if (!t->cfg.max_unmap_blocks)
		t->cfg.max_unmap_blocks = 4194304;
	if (!t->cfg.max_unmap_descriptors)
		t->cfg.max_unmap_descriptors = 256;
	if (!t->cfg.max_write_same_blocks)
		t->cfg.max_write_same_blocks = 4194304;
	if (!t->cfg.unmap_granularity)
		t->cfg.unmap_granularity = 1;
	if (t->cfg.opt_blks > t->cfg.max_xfer_blocks) {
		snprintf(err, errlen, "opt_blks=%u: allowed 0..%u (max_xfer_blocks)",
			 t->cfg.opt_blks, t->cfg.max_xfer_blocks);
		ret = -EINVAL;
		goto fail;
	}
	if (t->cfg.unmap_alignment &&
	    t->cfg.unmap_alignment >= t->cfg.unmap_granularity) {
		snprintf(err, errlen,
			 "unmap_alignment=%u: allowed 0..%u (below unmap_granularity=%u)",
			 t->cfg.unmap_alignment, t->cfg.unmap_granularity - 1,
			 t->cfg.unmap_granularity);
		ret = -EINVAL;
		goto fail;
	}
	t->cfg.vendor = t->vendor;
	t->cfg.product = t->product;
	t->cfg.serial = t->serial;
	for (i = 0; i < cfg->nr_luns; i++) {
		struct scsi_lu *lu = &t->lus[i];

		lu->dev = cfg->luns[i];
		blk_dev_get_info(lu->dev, &lu->info);
		lu->lbs = lu->info.logical_block_size;
		if (lu->lbs < 512 || lu->info.capacity < lu->lbs) {
			snprintf(err, errlen,
				 "LUN %u: logical block size %u, capacity %llu: at least 512 and one block",
				 i, lu->lbs, (unsigned long long)lu->info.capacity);
			ret = -EINVAL;
			goto fail;
		}
		/* sector_size: a block of the unit is whole blocks of its
		 * device, so that every bio stays aligned for it */
		if (cfg->sector_size) {
			if (cfg->sector_size % lu->lbs ||
			    lu->info.capacity < cfg->sector_size) {
				snprintf(err, errlen,
					 "sector_size=%u: LUN %u's device has %u-byte blocks (and %llu bytes): allowed its multiples among 512, 1024, 2048, 4096",
					 cfg->sector_size, i, lu->lbs,
					 (unsigned long long)lu->info.capacity);
				ret = -EINVAL;
				goto fail;
			}
			lu->lbs = cfg->sector_size;
		}
		if (lu->lbs & (lu->lbs - 1)) {
			snprintf(err, errlen, "LUN %u: logical block size %u: a power of two",
				 i, lu->lbs);
			ret = -EINVAL;
			goto fail;
		}
		lu->lbs_shift = (uint8_t)__builtin_ctz(lu->lbs);
		lu->nr_blocks = lu->info.capacity / lu->lbs;
		lu->max_rw_bio = tgt_media_max_bio(lu, BLK_OP_READ);
		ret = lbp_resolve(cfg, lu, i, err, errlen);
		if (ret)
			goto fail;
		/* ORWRITE at power on (SBC-4 4.27.3): generations 0, policy 7h */
		lu->orw_policy = 7;
		for (k = 0; k < TGT_UA_NR; k++) /* POWER ON for every nexus */
			atomic_init(&lu->ua[k], k == TGT_UA_POWER_ON ? ~0ull : 0);
		atomic_init(&lu->ua_any, ~0ull);
	}
	/* every unit checked: nothing below fails but the rules */
	for (i = 0; i < cfg->nr_luns; i++)
		tgt_mode_init(t, &t->lus[i]);
	tgt_pr_init(t);
	tgt_xcopy_init(t);
	ret = tgt_rules_init(t, cfg, err, errlen);
	if (ret) {
		tgt_xcopy_destroy(t);
		tgt_pr_destroy(t);
		for (i = 0; i < cfg->nr_luns; i++)
			tgt_mode_fini(&t->lus[i]);
		goto fail;
	}
	t->rw_faults = cfg->opts != 0;
	t->delay_ns = cfg->ndelay_ns ? cfg->ndelay_ns :
				       (uint64_t)cfg->delay_ms * 1000000;
	if (t->delay_ns)
		atomic_fetch_or(&t->pre_faults, TGT_PRE_DELAY);
	if (cfg->removable)
		atomic_fetch_or(&t->pre_faults, TGT_PRE_REMOVABLE);
	if (cfg->tur_ms_to_ready) {
		t->ready_ns = tgt_now_ns() + (uint64_t)cfg->tur_ms_to_ready * 1000000;
		atomic_fetch_or(&t->pre_faults, TGT_PRE_NOT_READY);
	}
	*tgt = t;
	return 0;
fail:
	blk_mutex_destroy(&t->rules_lock);
	blk_mutex_destroy(&t->queues_lock);
	free(t->rules);
	free(t->lus);
	free(t);
	return ret;
}

void scsi_tgt_destroy(struct scsi_tgt *t)
{
	unsigned int i;

	if (!t)
		return;
	for (i = 0; i < t->nr_luns; i++)
		tgt_mode_fini(&t->lus[i]);
	if (t->cfg.own_luns)
		for (i = 0; i < t->nr_luns; i++)
			blk_dev_close(t->lus[i].dev);
	tgt_xcopy_destroy(t);
	tgt_pr_destroy(t);
	blk_mutex_destroy(&t->rules_lock);
	blk_mutex_destroy(&t->queues_lock);
	free(t->rules);
	free(t->lus);
	free(t);
}

int scsi_tgt_queue_attach(struct scsi_tgt *t, struct scsi_tgt_queue **qp)
{
	struct scsi_tgt_queue *q = calloc(1, sizeof(*q));
	unsigned int i;
	int ret;

	if (!q)
		return -ENOMEM;
	q->tgt = t;
	q->ctx = calloc(t->nr_luns, sizeof(*q->ctx));
	q->ws_buf = malloc(WS_CHUNK);
	q->lun_busy = calloc(t->nr_luns, sizeof(*q->lun_busy));
	q->lun_plugged = calloc(t->nr_luns, sizeof(*q->lun_plugged));
	if (!q->ctx || !q->ws_buf || !q->lun_busy || !q->lun_plugged) {
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < t->nr_luns; i++) {
		ret = blk_ctx_attach(t->lus[i].dev, &q->ctx[i]);
		if (ret)
			goto fail;
	}
	blk_mutex_lock(&t->queues_lock);
	q->qnext = t->queues;
	if (t->queues)
		t->queues->qprev = q;
	t->queues = q;
	blk_mutex_unlock(&t->queues_lock);
	*qp = q;
	return 0;
fail:
	for (i = 0; q->ctx && i < t->nr_luns; i++)
		if (q->ctx[i])
			blk_ctx_detach(q->ctx[i]);
	free(q->ctx);
	free(q->ws_buf);
	free(q->lun_busy);
	free(q->lun_plugged);
	free(q);
	return ret;
}

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)

/* @q off the target's list, its counts into the target's. */
static void queue_unlink(struct scsi_tgt_queue *q)
{
	struct scsi_tgt *t = q->tgt;

	blk_mutex_lock(&t->queues_lock);
	atomic_fetch_add_explicit(&t->cmds, LOAD(q->cmds), memory_order_relaxed);
	atomic_fetch_add_explicit(&t->check_conditions, LOAD(q->check_conditions),
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&t->read_blocks, LOAD(q->read_blocks),
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&t->write_blocks, LOAD(q->write_blocks),
				  memory_order_relaxed);
	if (q->qprev)
		q->qprev->qnext = q->qnext;
	else
		t->queues = q->qnext;
	if (q->qnext)
		q->qnext->qprev = q->qprev;
	blk_mutex_unlock(&t->queues_lock);
}

void scsi_tgt_queue_detach(struct scsi_tgt_queue *q)
{
	unsigned int i;

	/* every task ends before its queue goes: the delayed ones in their
	 * time, the dropped ones aborted */
	scsi_tgt_unplug(q);
	while (q->delay_head)
		scsi_tgt_poll(q);
	scsi_tgt_queue_reset(q);
	while (q->delay_head) /* what the reset's wait ended, delayed */
		scsi_tgt_poll(q);
	for (i = 0; i < q->tgt->nr_luns; i++)
		blk_ctx_detach(q->ctx[i]);
	queue_unlink(q);
	free(q->ctx);
	free(q->ws_buf);
	free(q->lun_busy);
	free(q->lun_plugged);
	free(q);
}

void scsi_tgt_get_stats(struct scsi_tgt *t, struct scsi_tgt_stats *st)
{
	const struct scsi_tgt_queue *q;

	blk_mutex_lock(&t->queues_lock);
	st->cmds = LOAD(t->cmds);
	st->check_conditions = LOAD(t->check_conditions);
	st->read_blocks = LOAD(t->read_blocks);
	st->write_blocks = LOAD(t->write_blocks);
	for (q = t->queues; q; q = q->qnext) {
		st->cmds += LOAD(q->cmds);
		st->check_conditions += LOAD(q->check_conditions);
		st->read_blocks += LOAD(q->read_blocks);
		st->write_blocks += LOAD(q->write_blocks);
	}
	blk_mutex_unlock(&t->queues_lock);
	st->unit_attentions = atomic_load_explicit(&t->unit_attentions,
						   memory_order_relaxed);
	st->injected = atomic_load_explicit(&t->injected, memory_order_relaxed);
	st->aborts = atomic_load_explicit(&t->aborts, memory_order_relaxed);
	st->lun_resets = atomic_load_explicit(&t->lun_resets, memory_order_relaxed);
	st->target_resets = atomic_load_explicit(&t->target_resets,
						 memory_order_relaxed);
	st->tmf_failed = atomic_load_explicit(&t->tmf_failed, memory_order_relaxed);
	st->tasks_aborted = atomic_load_explicit(&t->tasks_aborted,
						 memory_order_relaxed);
	st->clear_task_sets = atomic_load_explicit(&t->clear_task_sets,
						   memory_order_relaxed);
}
