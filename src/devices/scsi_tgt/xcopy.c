// SPDX-License-Identifier: MIT
/*
 * Third-party copy of the SCSI target core: EXTENDED COPY (LID1, SPC-4
 * 6.4) with block device to block device segment descriptors (type 02h,
 * 6.4.6.5) between the logical units of this target, each named by an
 * identification CSCD descriptor (type E4h, 6.4.5.2) carrying the NAA 6
 * designator the unit reports in VPD 0x83; RECEIVE COPY RESULTS (6.20)
 * with COPY STATUS and OPERATING PARAMETERS; VPD 0x8f (7.8.17) with the
 * supported commands, descriptors and limits.
 *
 * The copy runs inside the command, synchronously, on the queue's thread:
 * per segment, a read into a fixed buffer of XCOPY_CHUNK bytes and a write
 * from it, chunk after chunk, waiting for each bio (blk_wait()).  Memory
 * is bounded by that one buffer per command in progress; the queue's
 * thread does nothing else for the copy's time, which is bounded by
 * XCOPY_MAX_SEGMENTS segments of at most XCOPY_MAX_SEGMENT_BYTES.
 *
 * Errors (SPC-4 6.4.3.x): a malformed parameter list is ILLEGAL REQUEST
 * (PARAMETER LIST LENGTH ERROR, INVALID FIELD IN PARAMETER LIST, TOO MANY
 * TARGET/SEGMENT DESCRIPTORS, UNSUPPORTED TARGET/SEGMENT DESCRIPTOR TYPE
 * CODE), found before anything is copied.  What goes wrong while the
 * segments are processed is COPY ABORTED: a CSCD descriptor index past
 * the list or a designator that names no unit of this target: COPY
 * TARGET DEVICE NOT REACHABLE (0D/02); a range past a unit's end: NO
 * ADDITIONAL SENSE (00/00: libiscsi's iscsi-test-cu accepts only 00/00,
 * 08/04 and 0D/02 there); a device error: THIRD PARTY DEVICE FAILURE
 * (0D/01).  The segments before the failing one have been copied; COPY
 * STATUS reports how many.  A unit reserved against the command's nexus
 * (reading the source, writing the destination) gives RESERVATION
 * CONFLICT.  Source and destination must have the same logical block
 * size.  Overlapping ranges on one unit are copied front to back, a chunk
 * at a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tgt_int.h"

#define XCOPY_MAX_CSCD 16
#define XCOPY_MAX_SEGMENTS 64
#define XCOPY_CSCD_LEN 32  /* an identification descriptor */
#define XCOPY_B2B_LEN 28   /* a block to block segment descriptor */
#define XCOPY_MAX_DESC_LIST (XCOPY_MAX_CSCD * XCOPY_CSCD_LEN + \
			     XCOPY_MAX_SEGMENTS * XCOPY_B2B_LEN)
#define XCOPY_MAX_SEGMENT_BYTES (256u << 20) /* 65535 blocks of 4 KiB */
#define XCOPY_CHUNK (1u << 20)

/* SPC-4 6.4.5.1 / 6.4.6.1: descriptor type codes handled here */
#define CSCD_IDENTIFICATION 0xe4
#define SEG_BLOCK_TO_BLOCK 0x02

void tgt_xcopy_init(struct scsi_tgt *t)
{
	blk_mutex_init(&t->copy_lock, "&scsi_tgt->copy_lock", -1);
}

void tgt_xcopy_destroy(struct scsi_tgt *t)
{
	blk_mutex_destroy(&t->copy_lock);
}

/* As inquiry_vpd() builds it for page 0x83: NAA 6, no company ID, the
 * target's 24-bit id, the LUN */
void tgt_naa_designator(const struct scsi_tgt *t, uint64_t lun, uint8_t *b)
{
	memset(b, 0, 16);
	b[0] = 0x60;
	scsi_put_be32(b + 4, t->cfg.id & 0xffffff);
	scsi_put_be64(b + 8, lun);
}

/* SPC-4 7.8.17: third-party copy VPD page: supported commands (0001h),
 * parameter data (0004h) and supported descriptors (0008h) */
uint32_t tgt_vpd_third_party_copy(const struct scsi_lu *lu, uint8_t *b)
{
	uint32_t n = 4;

	(void)lu;
	/* supported commands: EXTENDED COPY SA 00h (LID1), RECEIVE COPY
	 * RESULTS SA 00h and 03h */
	scsi_put_be16(b + n, 0x0001);
	scsi_put_be16(b + n + 2, 8);
	b[n + 4] = 7;
	b[n + 5] = EXTENDED_COPY;
	b[n + 6] = 1;
	b[n + 7] = 0x00;
	b[n + 8] = RECEIVE_COPY_RESULTS;
	b[n + 9] = 2;
	b[n + 10] = RCR_COPY_STATUS;
	b[n + 11] = RCR_OPERATING_PARAMETERS;
	n += 12;
	/* parameter data: the LID1 limits */
	scsi_put_be16(b + n, 0x0004);
	scsi_put_be16(b + n + 2, 0x1c);
	memset(b + n + 4, 0, 0x1c);
	scsi_put_be16(b + n + 8, XCOPY_MAX_CSCD);
	scsi_put_be16(b + n + 10, XCOPY_MAX_SEGMENTS);
	scsi_put_be32(b + n + 12, XCOPY_MAX_DESC_LIST);
	n += 4 + 0x1c;
	/* supported descriptors */
	scsi_put_be16(b + n, 0x0008);
	scsi_put_be16(b + n + 2, 4);
	b[n + 4] = 2;
	b[n + 5] = SEG_BLOCK_TO_BLOCK;
	b[n + 6] = CSCD_IDENTIFICATION;
	b[n + 7] = 0;
	n += 8;
	return n;
}

/* ----------------------------------------------------- copy results */

static void record(struct scsi_tgt *t, const struct scsi_tgt_cmd *c,
		   uint8_t list_id, uint8_t status, uint16_t segments,
		   uint64_t bytes)
{
	struct tgt_copy_result *r = NULL;
	unsigned int i;

	blk_mutex_lock(&t->copy_lock);
	for (i = 0; i < TGT_COPY_RESULTS; i++) {
		struct tgt_copy_result *e = &t->copies[i];

		if (e->used && e->lun == c->lun && e->nexus == c->nexus &&
		    e->list_id == list_id)
			r = e;
	}
	if (!r) {
		r = &t->copies[t->copy_next];
		t->copy_next = (t->copy_next + 1) % TGT_COPY_RESULTS;
	}
	r->used = true;
	r->lun = c->lun;
	r->nexus = c->nexus;
	r->list_id = list_id;
	r->status = status;
	r->segments = segments;
	r->bytes = bytes;
	blk_mutex_unlock(&t->copy_lock);
}

/* SPC-4 6.20: RECEIVE COPY RESULTS (LID1): COPY STATUS, OPERATING
 * PARAMETERS */
int tgt_do_receive_copy_results(struct scsi_tgt_queue *q, struct scsi_lu *lu,
				struct scsi_tgt_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	struct scsi_tgt *t = q->tgt;
	uint32_t alloc = scsi_get_be32(cdb + 10), n;
	uint8_t b[64], sa = cdb[1] & 0x1f;
	unsigned int i;

	memset(b, 0, sizeof(b));
	if (cdb[1] & 0xe0) {
		tgt_cmd_bad_cdb(c, lu, 1, -1);
		return 0;
	}
	for (i = 3; i <= 9; i++) {
		if (cdb[i]) {
			tgt_cmd_bad_cdb(c, lu, i, -1);
			return 0;
		}
	}
	if (sa == RCR_OPERATING_PARAMETERS) { /* 6.20.4 */
		b[4] = 0x01; /* SNLID: LIST ID USAGE 11b is taken */
		scsi_put_be16(b + 8, XCOPY_MAX_CSCD);
		scsi_put_be16(b + 10, XCOPY_MAX_SEGMENTS);
		scsi_put_be32(b + 12, XCOPY_MAX_DESC_LIST);
		scsi_put_be32(b + 16, XCOPY_MAX_SEGMENT_BYTES);
		/* no inline data, held data nor streams: 0 */
		scsi_put_be16(b + 34, 1); /* TOTAL CONCURRENT COPIES */
		b[36] = 1;                /* MAXIMUM CONCURRENT COPIES */
		b[37] = (uint8_t)__builtin_ctz(lu->lbs); /* DATA SEGMENT GRANULARITY */
		b[43] = 2;                /* implemented descriptor type codes */
		b[44] = SEG_BLOCK_TO_BLOCK;
		b[45] = CSCD_IDENTIFICATION;
		n = 46;
	} else if (sa == RCR_COPY_STATUS) { /* 6.20.2 */
		struct tgt_copy_result r = { .used = false };

		blk_mutex_lock(&t->copy_lock);
		for (i = 0; i < TGT_COPY_RESULTS; i++) {
			const struct tgt_copy_result *e = &t->copies[i];

			if (e->used && e->lun == c->lun && e->nexus == c->nexus &&
			    e->list_id == cdb[2])
				r = *e;
		}
		blk_mutex_unlock(&t->copy_lock);
		if (!r.used) { /* no such copy from this nexus */
			tgt_cmd_bad_cdb(c, lu, 2, -1);
			return 0;
		}
		b[4] = r.status; /* HDD 0 */
		scsi_put_be16(b + 5, r.segments);
		if (r.bytes <= 0xffffffffull) {
			b[7] = 0x00; /* bytes */
			scsi_put_be32(b + 8, (uint32_t)r.bytes);
		} else {
			b[7] = 0x01; /* KiB */
			scsi_put_be32(b + 8, (uint32_t)(r.bytes >> 10));
		}
		n = 12;
	} else {
		tgt_cmd_bad_cdb(c, lu, 1, 4);
		return 0;
	}
	scsi_put_be32(b, n - 4);
	tgt_data_in(c, b, n, alloc);
	return 0;
}

/* ------------------------------------------------------------ copying */

struct wait_bio {
	struct blk_bio bio;
	bool done;
};

static void wait_end_io(struct blk_bio *bio)
{
	((struct wait_bio *)bio->bi_private)->done = true;
}

/* One bio on @lun's device through @q's ctx, waited for: its status. */
static blk_status_t bio_sync(struct scsi_tgt_queue *q, uint64_t lun, uint8_t op,
			     uint64_t off, void *buf, uint32_t len)
{
	struct blk_mq_ctx *ctx = q->ctx[lun];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct wait_bio w;
	int ret;

	/* waited for here: nothing may sit in a plug (scsi_tgt_plug()) */
	scsi_tgt_unplug(q);
	memset(&w, 0, sizeof(w));
	w.bio.bi_op = op;
	w.bio.bi_offset = off;
	w.bio.bi_size = len;
	w.bio.bi_io_vec = &iov;
	w.bio.bi_vcnt = 1;
	w.bio.bi_end_io = wait_end_io;
	w.bio.bi_private = &w;
	/* a full tag set empties as the queue's own bios complete */
	while ((ret = blk_submit(ctx, &w.bio)) == -EAGAIN)
		blk_poll(ctx);
	if (ret)
		return ret == -ERANGE || ret == -EINVAL ? BLK_STS_INVAL : BLK_STS_IOERR;
	while (!w.done)
		blk_wait(ctx, 0);
	return w.bio.bi_status;
}

/* A resolved CSCD descriptor: the unit, or -1 (none of this target's) */
struct cscd {
	int lun;
	uint32_t block_len;
};

/* COPY ABORTED with @asc_ascq; @c->status set */
static void copy_aborted(struct scsi_tgt_cmd *c, struct scsi_lu *lu,
			 uint16_t asc_ascq)
{
	tgt_cmd_check(c, lu, SK_COPY_ABORTED, asc_ascq);
}

/*
 * Segment @s (a block to block descriptor at parameter list offset @off):
 * check it against the units and copy.  Return: true, copied (*@bytes
 * added); false: @c answered.
 */
static bool do_segment(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		       struct scsi_tgt_cmd *c, const struct cscd *cs,
		       unsigned int ncs, const uint8_t *s, uint32_t off,
		       uint8_t *buf, uint64_t *bytes)
{
	struct scsi_tgt *t = q->tgt;
	uint16_t si = scsi_get_be16(s + 4), di = scsi_get_be16(s + 6);
	uint32_t nb = scsi_get_be16(s + 10), chunk;
	uint64_t slba = scsi_get_be64(s + 12), dlba = scsi_get_be64(s + 20), len, done;
	struct scsi_lu *src, *dst;

	if (si >= ncs || di >= ncs || cs[si].lun < 0 || cs[di].lun < 0) {
		copy_aborted(c, lu, ASC_COPY_TARGET_NOT_REACHABLE);
		return false;
	}
	src = &t->lus[cs[si].lun];
	dst = &t->lus[cs[di].lun];
	if (src->lbs != dst->lbs) {
		tgt_cmd_bad_param(c, lu, off + 6, -1);
		return false;
	}
	if (!tgt_pr_may_access(src, c->nexus, false) ||
	    !tgt_pr_may_access(dst, c->nexus, true)) {
		c->status = SAM_STAT_RESERVATION_CONFLICT;
		return false;
	}
	/* DC (byte 1 bit 1) says whose blocks NUMBER OF BLOCKS counts:
	 * the same size here */
	len = (uint64_t)nb * src->lbs;
	if (len > XCOPY_MAX_SEGMENT_BYTES) {
		tgt_cmd_bad_param(c, lu, off + 10, -1);
		return false;
	}
	if (slba > src->nr_blocks || nb > src->nr_blocks - slba ||
	    dlba > dst->nr_blocks || nb > dst->nr_blocks - dlba) {
		copy_aborted(c, lu, ASC_NO_ADDITIONAL_SENSE);
		return false;
	}
	chunk = XCOPY_CHUNK;
	if (chunk > tgt_media_max_bio(src, BLK_OP_READ))
		chunk = tgt_media_max_bio(src, BLK_OP_READ);
	if (chunk > tgt_media_max_bio(dst, BLK_OP_WRITE))
		chunk = tgt_media_max_bio(dst, BLK_OP_WRITE);
	chunk -= chunk % src->lbs;
	for (done = 0; done < len; done += chunk) {
		uint32_t n = len - done < chunk ? (uint32_t)(len - done) : chunk;
		blk_status_t st;

		st = bio_sync(q, cs[si].lun, BLK_OP_READ, slba * src->lbs + done, buf, n);
		if (!st)
			st = bio_sync(q, cs[di].lun, BLK_OP_WRITE,
				      dlba * dst->lbs + done, buf, n);
		if (st) {
			c->blk_status = st;
			copy_aborted(c, lu, ASC_THIRD_PARTY_DEVICE_FAILURE);
			*bytes += done;
			return false;
		}
		atomic_fetch_add_explicit(&t->read_blocks, n / src->lbs,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&t->write_blocks, n / dst->lbs,
					  memory_order_relaxed);
	}
	*bytes += len;
	return true;
}

/*
 * An identification CSCD descriptor (6.4.5.2) at parameter list offset
 * @off: the unit it names.  false: @c answered (a field this copy
 * manager refuses).
 */
static bool parse_cscd(struct scsi_tgt *t, struct scsi_lu *lu,
		       struct scsi_tgt_cmd *c, const uint8_t *d, uint32_t off,
		       struct cscd *cs)
{
	uint8_t naa[16];
	unsigned int i;

	cs->lun = -1;
	if (d[0] != CSCD_IDENTIFICATION) {
		struct scsi_sense s = {
			.key = SK_ILLEGAL_REQUEST,
			.asc_ascq = ASC_UNSUPPORTED_TARGET_DESC_TYPE,
			.sks_valid = true, .sks = scsi_sks_field(false, off, -1),
		};

		tgt_cmd_sense(c, lu, &s);
		return false;
	}
	/* LU ID TYPE and NUL: ignored (SPC-4: obsolete); the peripheral
	 * device type: direct access only */
	if (d[1] & 0x1f) {
		tgt_cmd_bad_param(c, lu, off + 1, 4);
		return false;
	}
	cs->block_len = (uint32_t)d[29] << 16 | (uint32_t)d[30] << 8 | d[31];
	/* the designation descriptor: binary, the logical unit, NAA, 16
	 * bytes; anything else names no unit here */
	if ((d[4] & 0x0f) != 0x01 || (d[5] & 0x30) != 0x00 ||
	    (d[5] & 0x0f) != 0x03 || d[7] != 16)
		return true;
	for (i = 0; i < t->nr_luns; i++) {
		tgt_naa_designator(t, i, naa);
		if (!memcmp(naa, d + 8, 16)) {
			if (cs->block_len != t->lus[i].lbs) {
				tgt_cmd_bad_param(c, lu, off + 29, -1);
				return false;
			}
			cs->lun = (int)i;
			break;
		}
	}
	return true;
}

/* ILLEGAL REQUEST with @asc_ascq, the field pointer at @off */
static void bad_list(struct scsi_tgt_cmd *c, struct scsi_lu *lu,
		     uint16_t asc_ascq, uint32_t off)
{
	struct scsi_sense s = {
		.key = SK_ILLEGAL_REQUEST, .asc_ascq = asc_ascq,
		.sks_valid = true, .sks = scsi_sks_field(false, off, -1),
	};

	tgt_cmd_sense(c, lu, &s);
}

/* SPC-4 6.4: EXTENDED COPY (LID1) */
int tgt_do_xcopy(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		 struct scsi_tgt_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	struct scsi_tgt *t = q->tgt;
	uint32_t plen = scsi_get_be32(cdb + 10), got, cscd_len, seg_len, inl;
	uint32_t off, nseg = 0, ncs, i;
	struct cscd cs[XCOPY_MAX_CSCD];
	uint8_t *p = NULL, *buf = NULL, list_id, usage;
	uint64_t bytes = 0;
	uint16_t done = 0;
	bool ok = true;

	if (cdb[1] & 0x1f) { /* LID4 and the ROD token SAs: not here */
		tgt_cmd_bad_cdb(c, lu, 1, 4);
		return 0;
	}
	if (cdb[1] & 0xe0) {
		tgt_cmd_bad_cdb(c, lu, 1, -1);
		return 0;
	}
	for (i = 2; i <= 9; i++) {
		if (cdb[i]) {
			tgt_cmd_bad_cdb(c, lu, i, -1);
			return 0;
		}
	}
	if (!plen)
		return 0; /* 6.4.1: nothing to do */
	if (plen < 16 || plen > 16 + XCOPY_MAX_DESC_LIST) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
		return 0;
	}
	p = malloc(plen);
	if (!p)
		return -ENOMEM;
	got = tgt_data_out(c, p, plen);
	if (got < plen) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
		goto out;
	}
	/* 6.4.3: the parameter list header */
	list_id = p[0];
	usage = (p[1] >> 3) & 0x03;
	cscd_len = scsi_get_be16(p + 2);
	seg_len = scsi_get_be32(p + 8);
	inl = scsi_get_be32(p + 12);
	if (usage == 0x01 || p[1] & 0xc0) { /* LIST ID USAGE 01b: reserved */
		tgt_cmd_bad_param(c, lu, 1, usage == 0x01 ? 4 : -1);
		goto out;
	}
	if (usage == 0x03 && list_id) {
		tgt_cmd_bad_param(c, lu, 0, -1);
		goto out;
	}
	for (i = 4; i < 8; i++) {
		if (p[i]) {
			tgt_cmd_bad_param(c, lu, i, -1);
			goto out;
		}
	}
	if (inl) { /* MAXIMUM INLINE DATA LENGTH is 0 */
		tgt_cmd_bad_param(c, lu, 12, -1);
		goto out;
	}
	if ((uint64_t)cscd_len + seg_len > XCOPY_MAX_DESC_LIST ||
	    16 + (uint64_t)cscd_len + seg_len > plen) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
		goto out;
	}
	if (cscd_len % XCOPY_CSCD_LEN) {
		tgt_cmd_bad_param(c, lu, 2, -1);
		goto out;
	}
	ncs = cscd_len / XCOPY_CSCD_LEN;
	if (ncs > XCOPY_MAX_CSCD) {
		bad_list(c, lu, ASC_TOO_MANY_TARGET_DESCRIPTORS, 2);
		goto out;
	}
	for (i = 0; i < ncs; i++) {
		off = 16 + i * XCOPY_CSCD_LEN;
		if (!parse_cscd(t, lu, c, p + off, off, &cs[i]))
			goto out;
	}
	/* the segment descriptors: all checked before any is processed */
	for (off = 16 + cscd_len; off < 16 + cscd_len + seg_len;) {
		const uint8_t *s = p + off;

		if (16 + cscd_len + seg_len - off < 4) {
			tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST,
				      ASC_PARAMETER_LIST_LENGTH_ERROR);
			goto out;
		}
		if (s[0] != SEG_BLOCK_TO_BLOCK) {
			bad_list(c, lu, ASC_UNSUPPORTED_SEGMENT_DESC_TYPE, off);
			goto out;
		}
		if (scsi_get_be16(s + 2) != XCOPY_B2B_LEN - 4) {
			tgt_cmd_bad_param(c, lu, off + 2, -1);
			goto out;
		}
		if (16 + cscd_len + seg_len - off < XCOPY_B2B_LEN) {
			tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST,
				      ASC_PARAMETER_LIST_LENGTH_ERROR);
			goto out;
		}
		if (s[1] & 0xfc || s[8] || s[9]) {
			tgt_cmd_bad_param(c, lu, s[1] & 0xfc ? off + 1 : off + 8, -1);
			goto out;
		}
		if (++nseg > XCOPY_MAX_SEGMENTS) {
			bad_list(c, lu, ASC_TOO_MANY_SEGMENT_DESCRIPTORS, 8);
			goto out;
		}
		off += XCOPY_B2B_LEN;
	}
	if (nseg && t->cfg.write_protect) {
		tgt_cmd_check(c, lu, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
		goto out;
	}
	buf = nseg ? malloc(XCOPY_CHUNK) : NULL;
	if (nseg && !buf) {
		free(p);
		return -ENOMEM;
	}
	for (i = 0, off = 16 + cscd_len; i < nseg; i++, off += XCOPY_B2B_LEN) {
		ok = do_segment(q, lu, c, cs, ncs, p + off, off, buf, &bytes);
		if (!ok)
			break;
		done++;
	}
	if (usage != 0x03)
		record(t, c, list_id, ok ? 0x01 : 0x02, done, bytes);
out:
	free(buf);
	free(p);
	return 0;
}
