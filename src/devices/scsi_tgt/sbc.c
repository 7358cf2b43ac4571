// SPDX-License-Identifier: MIT
/*
 * SCSI target core: the SBC-3 (r36) commands that read the medium to
 * answer, or read it before they write: VERIFY and WRITE AND VERIFY with
 * their byte-by-byte compare, COMPARE AND WRITE, ORWRITE (16) and (32,
 * SBC-4), and
 * PRE-FETCH and GET LBA STATUS, which move no block data.
 *
 * These run synchronously on the queue's thread: each bio is submitted on
 * the queue's ctx for the unit and the ctx is polled until it ends (other
 * commands of the queue may complete meanwhile, their done called from
 * inside this command's scsi_tgt_submit()).  They are not the fast path;
 * the data is staged through buffers of at most SBC_CHUNK bytes (COMPARE
 * AND WRITE: its whole Data-Out, at most 255 blocks of each half).
 *
 * Atomicity (SBC-3 5.2, 5.7): COMPARE AND WRITE and ORWRITE hold the unit's
 * rmw_lock from their read to the end of their write, so they exclude each
 * other on a logical unit, whatever queue they arrive on.  READ, WRITE,
 * WRITE SAME and UNMAP take no lock (the fast path stays lock-free), so a
 * plain WRITE from another queue to the same blocks is not held off.  A
 * command that finds the lock taken returns -EAGAIN from scsi_tgt_submit()
 * without starting (poll and submit again): a queue thread never sleeps on
 * it while its own bios, or tags they hold, wait to be polled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tgt_int.h"

/* Data staged per step of VERIFY, WRITE AND VERIFY and ORWRITE, bytes */
#define SBC_CHUNK (1u << 20)

/* ------------------------------------------------- synchronous I/O */

struct sync_wait {
	unsigned int pending;
	blk_status_t status;
};

static void sync_end_io(struct blk_bio *bio)
{
	struct sync_wait *w = bio->bi_private;

	w->status = bio->bi_status;
	w->pending = 0;
}

/*
 * @op (READ or WRITE, @flags) over [@off, @off + @len) bytes of @lu from or
 * into @buf, one bio at a time, each waited for by polling the queue's ctx.
 * Return: BLK_STS_OK, or the first failure with its byte offset in
 * *@err_off.
 */
static blk_status_t sync_io(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			    struct scsi_tgt_cmd *c, uint8_t op, uint8_t flags,
			    uint64_t off, uint8_t *buf, uint64_t len,
			    uint64_t *err_off)
{
	struct blk_mq_ctx *ctx = q->ctx[c->lun];
	uint32_t max = tgt_media_max_bio(lu, op);

	/* waited for here: nothing may sit in a plug (scsi_tgt_plug()) */
	scsi_tgt_unplug(q);
	while (len) {
		uint32_t n = len < max ? (uint32_t)len : max;
		struct iovec v = { .iov_base = buf, .iov_len = n };
		struct sync_wait w = { .pending = 1 };
		struct blk_bio b;
		int ret;

		memset(&b, 0, sizeof(b));
		b.bi_op = op;
		b.bi_flags = flags;
		b.bi_offset = off;
		b.bi_size = n;
		b.bi_io_vec = &v;
		b.bi_vcnt = 1;
		b.bi_end_io = sync_end_io;
		b.bi_private = &w;
		while ((ret = blk_submit(ctx, &b)) == -EAGAIN)
			blk_poll(ctx);
		if (ret) {
			*err_off = off;
			return ret == -ERANGE || ret == -EINVAL ? BLK_STS_INVAL :
								  BLK_STS_IOERR;
		}
		while (w.pending)
			blk_poll(ctx);
		if (w.status) {
			*err_off = off;
			return w.status;
		}
		buf += n;
		off += n;
		len -= n;
	}
	return BLK_STS_OK;
}

/* The sense for a failed sync_io() at byte @err_off. */
static void sync_fail(struct scsi_tgt_cmd *c, struct scsi_lu *lu,
		      blk_status_t st, uint64_t err_off, bool write)
{
	c->err = st;
	c->blk_status = st;
	c->err_lba = err_off / lu->lbs;
	tgt_media_error(c, lu, write);
}

/* ------------------------------------------------------------ helpers */

/* Copy @len bytes of the Data-Out buffer from byte @off into @dst (the
 * caller has checked that xfer_len covers them). */
static void data_out_at(const struct scsi_tgt_cmd *c, uint64_t off,
			uint8_t *dst, uint32_t len)
{
	unsigned int i;

	for (i = 0; i < c->iovcnt && len; i++) {
		uint64_t l = c->iov[i].iov_len;
		uint32_t k;

		if (off >= l) {
			off -= l;
			continue;
		}
		k = l - off < len ? (uint32_t)(l - off) : len;
		memcpy(dst, (const char *)c->iov[i].iov_base + off, k);
		dst += k;
		len -= k;
		off = 0;
	}
}

/* The offset of the first byte where @a and @b differ; -1: none. */
static int64_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	if (!memcmp(a, b, n))
		return -1;
	for (i = 0; a[i] == b[i]; i++)
		;
	return (int64_t)i;
}

/* MISCOMPARE, MISCOMPARE DURING VERIFY OPERATION, INFORMATION: @off, the
 * offset of the first differing byte from the start of the Data-Out. */
static void miscompare(struct scsi_tgt_cmd *c, struct scsi_lu *lu, uint64_t off)
{
	struct scsi_sense s = {
		.key = SK_MISCOMPARE, .asc_ascq = ASC_MISCOMPARE_DURING_VERIFY,
		.info_valid = true, .info = off,
	};

	tgt_cmd_sense(c, lu, &s);
}

/*
 * The LBA, length and where the length and GROUP NUMBER bytes are, for
 * the 10, 12 and 16-byte forms sharing the READ (10/12/16) layout.
 */
struct lba_len {
	uint64_t lba;
	uint32_t nb;
	unsigned int len_byte, group_byte;
};

static void get_lba_len(const uint8_t *cdb, struct lba_len *a)
{
	switch (cdb[0] >> 5) {
	case 1: /* 10-byte */
	case 2:
		a->lba = scsi_get_be32(cdb + 2);
		a->nb = scsi_get_be16(cdb + 7);
		a->len_byte = 7;
		a->group_byte = 6;
		break;
	case 5: /* 12-byte */
		a->lba = scsi_get_be32(cdb + 2);
		a->nb = scsi_get_be32(cdb + 6);
		a->len_byte = 6;
		a->group_byte = 10;
		break;
	default: /* 16-byte */
		a->lba = scsi_get_be64(cdb + 2);
		a->nb = scsi_get_be32(cdb + 10);
		a->len_byte = 10;
		a->group_byte = 14;
		break;
	}
}

/*
 * Byte 1's protection field (bits 7-5: no protection information) and
 * reserved bits @reserved, and GROUP NUMBER's reserved bits 7-5 in
 * @group_byte (0: none).  false: CHECK CONDITION set.
 */
static bool check_cdb_bits(struct scsi_tgt_cmd *c, struct scsi_lu *lu,
			   uint8_t reserved, unsigned int group_byte)
{
	const uint8_t *cdb = c->cdb;

	if (cdb[1] & 0xe0) {
		tgt_cmd_bad_cdb(c, lu, 1, 7);
		return false;
	}
	if (cdb[1] & reserved) {
		tgt_cmd_bad_cdb(c, lu, 1, tgt_top_bit(cdb[1] & reserved));
		return false;
	}
	if (group_byte && (cdb[group_byte] & 0xe0)) {
		tgt_cmd_bad_cdb(c, lu, group_byte, tgt_top_bit(cdb[group_byte] & 0xe0));
		return false;
	}
	return true;
}

/* LOGICAL BLOCK ADDRESS OUT OF RANGE unless [@lba, @lba + @nb) is on the
 * medium; false: CHECK CONDITION set. */
static bool check_range(struct scsi_tgt_cmd *c, struct scsi_lu *lu,
			uint64_t lba, uint64_t nb)
{
	if (lba > lu->nr_blocks || nb > lu->nr_blocks - lba) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
		return false;
	}
	return true;
}

static bool check_writable(struct scsi_tgt_cmd *c, struct scsi_lu *lu)
{
	if (tgt_lu_wflags(lu) & TGT_WF_WP) {
		tgt_cmd_check(c, lu, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
		return false;
	}
	return true;
}

/* The Data-Out must hold @need bytes: what the transport expects is less,
 * PARAMETER LIST LENGTH ERROR (as WRITE SAME's short block); false: set. */
static bool check_data_out(struct scsi_tgt_cmd *c, struct scsi_lu *lu,
			   uint64_t need)
{
	if (c->xfer_len < need) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
		return false;
	}
	return true;
}

static uint32_t chunk_bytes(const struct scsi_lu *lu)
{
	return SBC_CHUNK - SBC_CHUNK % lu->lbs;
}

/*
 * Read [@off, @off + @len) bytes of the medium and compare them with the
 * Data-Out from byte 0 (@one_block false) or, @one_block, with its first
 * logical block repeated.  GOOD, MISCOMPARE with the offset of the first
 * differing byte (counted over the repeated block for @one_block), or the
 * read's MEDIUM ERROR.  -ENOMEM: nothing answered.
 */
static int compare_medium(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			  struct scsi_tgt_cmd *c, uint64_t off, uint64_t len,
			  bool one_block)
{
	uint32_t chunk = chunk_bytes(lu), i;
	uint8_t *media = malloc(chunk), *ref = malloc(chunk);
	uint64_t done, err_off;
	blk_status_t st;
	int64_t d;

	if (!media || !ref) {
		free(media);
		free(ref);
		return -ENOMEM;
	}
	if (one_block) {
		data_out_at(c, 0, ref, lu->lbs);
		for (i = lu->lbs; i < chunk; i += lu->lbs)
			memcpy(ref + i, ref, lu->lbs);
	}
	for (done = 0; done < len; done += chunk) {
		uint32_t n = len - done < chunk ? (uint32_t)(len - done) : chunk;

		st = sync_io(q, lu, c, BLK_OP_READ, 0, off + done, media, n, &err_off);
		if (st) {
			sync_fail(c, lu, st, err_off, false);
			break;
		}
		if (!one_block)
			data_out_at(c, done, ref, n);
		d = first_diff(ref, media, n);
		if (d >= 0) {
			miscompare(c, lu, done + (uint64_t)d);
			break;
		}
	}
	free(media);
	free(ref);
	return 0;
}

/* ---------------------------------------------------------- commands */

/*
 * SBC-3 5.29-5.31: VERIFY (10/12/16).  BYTCHK 00b: a medium verification,
 * nothing to do on these devices beyond checking the range; 01b: the
 * Data-Out (the range's blocks) compared with the medium; 10b: reserved;
 * 11b: one block of Data-Out compared with every block of the range.
 * MISCOMPARE 1D/00 with the first differing byte's offset in INFORMATION.
 */
int tgt_verify(struct scsi_tgt_queue *q, struct scsi_lu *lu,
	       struct scsi_tgt_cmd *c)
{
	uint8_t bytchk = (c->cdb[1] >> 1) & 0x03;
	struct lba_len a;

	get_lba_len(c->cdb, &a);
	/* byte 1: VRPROTECT 7-5, DPO 4, reserved 3, BYTCHK 2-1, bit 0
	 * reserved (obsolete RELADR in the 10 and 12-byte forms) */
	if (!check_cdb_bits(c, lu, 0x09, a.group_byte))
		return 0;
	if (bytchk == 2) {
		tgt_cmd_bad_cdb(c, lu, 1, 2);
		return 0;
	}
	if (!check_range(c, lu, a.lba, a.nb))
		return 0;
	if (bytchk == 1 && a.nb > q->tgt->cfg.max_xfer_blocks) {
		tgt_cmd_bad_cdb(c, lu, a.len_byte, -1);
		return 0;
	}
	if (!bytchk || !a.nb)
		return 0;
	if (!check_data_out(c, lu, bytchk == 1 ? (uint64_t)a.nb * lu->lbs : lu->lbs))
		return 0;
	return compare_medium(q, lu, c, a.lba * lu->lbs, (uint64_t)a.nb * lu->lbs,
			      bytchk == 3);
}

/*
 * SBC-3 5.38-5.40: WRITE AND VERIFY (10/12/16).  The blocks are written
 * with FUA (on the medium before the verification), then BYTCHK 01b reads
 * them back and compares them with the Data-Out (MISCOMPARE as VERIFY);
 * BYTCHK 00b (a medium verification) stops after the write.  BYTCHK 10b
 * and 11b are refused: both are reserved for this command (10b as for
 * VERIFY; SBC-4 r22 5.44: "For a WRITE AND VERIFY (10) command, a BYTCHK
 * field set to 11b is reserved", and 5.45, 5.46 refer to it), unlike
 * VERIFY's 11b, which compares one block of Data-Out with every block.
 * The transport's expected length rules as for
 * WRITE: a shorter one writes (and verifies) the whole blocks it holds,
 * with the rest as an overflow residual; a longer one writes the CDB's
 * blocks, the excess an underflow residual.
 */
int tgt_write_verify(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		     struct scsi_tgt_cmd *c)
{
	uint8_t bytchk = (c->cdb[1] >> 1) & 0x03;
	uint64_t off, len, done, err_off;
	uint32_t chunk = chunk_bytes(lu);
	struct lba_len a;
	blk_status_t st;
	uint8_t *buf;

	get_lba_len(c->cdb, &a);
	/* byte 1: WRPROTECT 7-5, DPO 4, reserved 3, BYTCHK 2-1, bit 0
	 * reserved (obsolete in the 10-byte form) */
	if (!check_cdb_bits(c, lu, 0x09, a.group_byte))
		return 0;
	if (bytchk >= 2) {
		tgt_cmd_bad_cdb(c, lu, 1, 2);
		return 0;
	}
	if (!check_range(c, lu, a.lba, a.nb))
		return 0;
	if (a.nb > q->tgt->cfg.max_xfer_blocks) {
		tgt_cmd_bad_cdb(c, lu, a.len_byte, -1);
		return 0;
	}
	if (!check_writable(c, lu))
		return 0;
	off = a.lba * lu->lbs;
	len = (uint64_t)a.nb * lu->lbs;
	if (len > c->xfer_len) {
		c->overflow = true;
		c->resid = (uint32_t)(len - c->xfer_len);
		len = c->xfer_len - c->xfer_len % lu->lbs;
	}
	if (!len) {
		if (!c->overflow)
			c->resid = c->xfer_len;
		return 0;
	}
	buf = malloc(chunk);
	if (!buf)
		return -ENOMEM;
	for (done = 0; done < len; done += chunk) {
		uint32_t n = len - done < chunk ? (uint32_t)(len - done) : chunk;

		data_out_at(c, done, buf, n);
		st = sync_io(q, lu, c, BLK_OP_WRITE, BLK_BIO_FUA, off + done, buf, n,
			     &err_off);
		if (st) {
			sync_fail(c, lu, st, err_off, true);
			free(buf);
			return 0;
		}
	}
	free(buf);
	atomic_fetch_add_explicit(&q->tgt->write_blocks, len / lu->lbs,
				  memory_order_relaxed);
	if (bytchk == 1) {
		int r = compare_medium(q, lu, c, off, len, false);

		if (r)
			return r;
	}
	if (c->status == SAM_STAT_GOOD && !c->overflow)
		c->resid = c->xfer_len - (uint32_t)len;
	return 0;
}

/*
 * SBC-3 5.2: COMPARE AND WRITE.  NUMBER OF LOGICAL BLOCKS (byte 13) up to
 * the MAXIMUM COMPARE AND WRITE LENGTH of VPD 0xb0; the Data-Out holds the
 * verify data then the write data, that many blocks each, and no more
 * (INVALID FIELD IN CDB at byte 13 otherwise; less: PARAMETER LIST
 * LENGTH ERROR).  Under the
 * unit's rmw_lock: read the blocks, compare them with the verify data
 * (MISCOMPARE 1D/00, INFORMATION the offset of the first differing byte),
 * and only if equal write the write data (FUA as the CDB or WCE says).
 */
int tgt_compare_and_write(struct scsi_tgt_queue *q, struct scsi_lu *lu,
			  struct scsi_tgt_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	uint64_t lba = scsi_get_be64(cdb + 2), len, err_off;
	uint8_t nb = cdb[13], fua;
	unsigned int i;
	blk_status_t st;
	uint8_t *buf;
	int64_t d;

	/* byte 1: WRPROTECT 7-5, DPO 4, FUA 3, bits 2-0 reserved (FUA_NV
	 * obsolete); bytes 10-12 reserved */
	if (!check_cdb_bits(c, lu, 0x07, 14))
		return 0;
	for (i = 10; i < 13; i++) {
		if (cdb[i]) {
			tgt_cmd_bad_cdb(c, lu, i, -1);
			return 0;
		}
	}
	/*
	 * NUMBER OF LOGICAL BLOCKS past MAXIMUM COMPARE AND WRITE LENGTH, or
	 * a Data-Out longer than the two halves it says: the initiator meant
	 * more blocks than the field holds (256 encoded in its 8 bits is 0,
	 * which would compare and write nothing and answer GOOD).  A command
	 * that is all or nothing is not run on part of its data: refused,
	 * the field pointer at the count.  (A shorter Data-Out is a
	 * PARAMETER LIST LENGTH ERROR below.)
	 */
	if (nb > tgt_caw_max(q->tgt) ||
	    c->xfer_len > 2 * (uint64_t)nb * lu->lbs) {
		tgt_cmd_bad_cdb(c, lu, 13, -1);
		return 0;
	}
	if (!check_range(c, lu, lba, nb))
		return 0;
	if (!nb) /* nothing read, compared or written: not an error */
		return 0;
	if (!check_writable(c, lu))
		return 0;
	len = (uint64_t)nb * lu->lbs;
	if (!check_data_out(c, lu, 2 * len))
		return 0;
	fua = (cdb[1] & 0x08) || (tgt_lu_wflags(lu) & TGT_WF_WT) ? BLK_BIO_FUA : 0;
	buf = malloc(3 * len);
	if (!buf)
		return -ENOMEM;
	if (blk_mutex_trylock(&lu->rmw_lock)) {
		free(buf);
		return -EAGAIN; /* another queue's COMPARE AND WRITE or ORWRITE */
	}
	data_out_at(c, 0, buf, (uint32_t)(2 * len));
	st = sync_io(q, lu, c, BLK_OP_READ, 0, lba * lu->lbs, buf + 2 * len, len,
		     &err_off);
	if (st) {
		sync_fail(c, lu, st, err_off, false);
		goto out;
	}
	d = first_diff(buf, buf + 2 * len, len);
	if (d >= 0) {
		miscompare(c, lu, (uint64_t)d);
		goto out;
	}
	st = sync_io(q, lu, c, BLK_OP_WRITE, fua, lba * lu->lbs, buf + len, len,
		     &err_off);
	if (st) {
		sync_fail(c, lu, st, err_off, true);
		goto out;
	}
	atomic_fetch_add_explicit(&q->tgt->write_blocks, nb, memory_order_relaxed);
out:
	blk_mutex_unlock(&lu->rmw_lock);
	free(buf);
	return 0;
}

/* ORWRITE's operations (SBC-4 4.27): the BMOP field's codes, and what a
 * set operation does by the generation it names (table 29) */
#define ORW_SET         0 /* BMOP 000b: OR the Data-Out in */
#define ORW_CHANGE_GEN  1 /* BMOP 001b: AND it in, then a new generation */

enum orw_action {
	ORW_PA,         /* perform: read, OR (or AND), write */
	ORW_DN,         /* discard the Data-Out, GOOD */
	ORW_CCG,        /* ORWRITE GENERATION DOES NOT MATCH */
};

/*
 * SBC-4 4.27.2.2 and table 29: what an ORWRITE with @bmop and EXPECTED
 * ORWGENERATION @eog does on @lu.  A change generation and clear needs the
 * current generation; a set operation goes by the current processing
 * policy and which generation @eog names: the current one (always
 * performed), the previous one, or another.  Context: rmw_lock held.
 */
static enum orw_action orw_decide(const struct scsi_lu *lu, uint8_t bmop,
				  uint32_t eog)
{
	/* per policy 0h..7h (1h, 4h, 6h reserved: never set, see below):
	 * the previous generation's action, any other value's */
	static const uint8_t prev[8] = { ORW_PA, ORW_CCG, ORW_DN, ORW_PA,
					 ORW_CCG, ORW_DN, ORW_CCG, ORW_CCG };
	static const uint8_t other[8] = { ORW_CCG, ORW_CCG, ORW_CCG, ORW_PA,
					  ORW_CCG, ORW_DN, ORW_CCG, ORW_CCG };

	if (eog == lu->orw_gen)
		return ORW_PA;
	if (bmop == ORW_CHANGE_GEN)
		return ORW_CCG;
	if (eog == lu->orw_prev_gen)
		return (enum orw_action)prev[lu->orw_policy & 7];
	return (enum orw_action)other[lu->orw_policy & 7];
}

/* PREVIOUS GENERATION PROCESSING values table 29 defines: 0h, 2h, 3h,
 * 5h, 7h (the others are reserved) */
static bool orw_policy_ok(uint8_t pgp)
{
	return pgp < 8 && ((0xadu >> pgp) & 1);
}

/*
 * The 32-byte form's fields (SBC-4 5.11, table 69) and its reserved
 * bits; false: CHECK CONDITION set.  Byte 1 is CONTROL (checked by
 * submit()), 8-9 the service action.
 */
static bool orwrite32_cdb(struct scsi_tgt_cmd *c, struct scsi_lu *lu,
			  struct lba_len *a, uint8_t *bmop, uint8_t *pgp,
			  uint32_t *eog, uint32_t *nog, uint8_t *flags)
{
	const uint8_t *cdb = c->cdb;
	/* reserved bits of bytes 2-6, 10 and 11 (byte 2: BMOP 2-0; 3:
	 * PREVIOUS GENERATION PROCESSING 3-0; 6: GROUP NUMBER 4-0; 10:
	 * ORPROTECT 7-5, DPO 4, FUA 3) */
	static const struct {
		uint8_t byte, mask;
	} rsvd[] = {
		{ 2, 0xf8 }, { 3, 0xf0 }, { 4, 0xff }, { 5, 0xff }, { 6, 0xe0 },
		{ 10, 0x07 }, { 11, 0xff },
	};
	unsigned int i;

	if (cdb[7] != 0x18) { /* ADDITIONAL CDB LENGTH */
		tgt_cmd_bad_cdb(c, lu, 7, -1);
		return false;
	}
	if (cdb[10] & 0xe0) { /* ORPROTECT: no protection information */
		tgt_cmd_bad_cdb(c, lu, 10, 7);
		return false;
	}
	for (i = 0; i < ARRAY_SIZE(rsvd); i++) {
		uint8_t v = cdb[rsvd[i].byte] & rsvd[i].mask;

		if (v) {
			tgt_cmd_bad_cdb(c, lu, rsvd[i].byte,
					rsvd[i].mask == 0xff ? -1 : tgt_top_bit(v));
			return false;
		}
	}
	*bmop = cdb[2] & 0x07;
	*pgp = cdb[3] & 0x0f;
	if (*bmop > ORW_CHANGE_GEN) {
		tgt_cmd_bad_cdb(c, lu, 2, 2);
		return false;
	}
	/* a set operation ignores PREVIOUS GENERATION PROCESSING and NEW
	 * ORWGENERATION (table 70); a change of generation may not make a
	 * reserved policy current */
	if (*bmop == ORW_CHANGE_GEN && !orw_policy_ok(*pgp)) {
		tgt_cmd_bad_cdb(c, lu, 3, 3);
		return false;
	}
	a->lba = scsi_get_be64(cdb + 12);
	*eog = scsi_get_be32(cdb + 20);
	*nog = scsi_get_be32(cdb + 24);
	a->nb = scsi_get_be32(cdb + 28);
	a->len_byte = 28;
	a->group_byte = 6;
	*flags = cdb[10];
	return true;
}

/*
 * SBC-4 4.27, 5.10, 5.11: ORWRITE (16) and (32).  A set operation (the
 * 16-byte form, BMOP 000b) makes each block of the range the bitwise OR
 * of itself and the Data-Out; a change generation and clear (BMOP 001b)
 * their AND, and then establishes NEW ORWGENERATION as the current
 * generation, the old one as the previous, and PREVIOUS GENERATION
 * PROCESSING as the policy for later set operations.  Whether either
 * runs depends on EXPECTED ORWGENERATION (the 16-byte form's is 0, as
 * 4.27.2.2 says for a device server that has both forms): orw_decide().
 * A generation that does not match: ILLEGAL REQUEST, ORWRITE GENERATION
 * DOES NOT MATCH (2C/0C), nothing written; "discard": GOOD, nothing
 * written.  0 blocks: the generation is still checked and changed.
 * Under the unit's rmw_lock, read, merge and write a chunk at a time: a
 * failure part way leaves the chunks before it written, and the
 * generation as it was.
 */
int tgt_orwrite(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		struct scsi_tgt_cmd *c)
{
	uint32_t chunk = chunk_bytes(lu), i, eog = 0, nog = 0;
	uint8_t *media = NULL, *data = NULL, fua, bmop = ORW_SET, pgp = 0;
	uint8_t flags = c->cdb[1];
	uint64_t off, len, done, err_off;
	enum orw_action act;
	struct lba_len a;
	blk_status_t st;
	bool failed = false;

	if (c->cdb[0] == VARIABLE_LENGTH_CMD) {
		if (!orwrite32_cdb(c, lu, &a, &bmop, &pgp, &eog, &nog, &flags))
			return 0;
	} else {
		get_lba_len(c->cdb, &a);
		/* byte 1: ORPROTECT 7-5, DPO 4, FUA 3, bits 2-0 reserved */
		if (!check_cdb_bits(c, lu, 0x07, a.group_byte))
			return 0;
	}
	if (!check_range(c, lu, a.lba, a.nb))
		return 0;
	if (a.nb > q->tgt->cfg.max_xfer_blocks) {
		tgt_cmd_bad_cdb(c, lu, a.len_byte, -1);
		return 0;
	}
	off = a.lba * lu->lbs;
	len = (uint64_t)a.nb * lu->lbs;
	if (len && (!check_writable(c, lu) || !check_data_out(c, lu, len)))
		return 0;
	fua = (flags & 0x08) || (tgt_lu_wflags(lu) & TGT_WF_WT) ? BLK_BIO_FUA : 0;
	if (len) {
		media = malloc(chunk);
		data = malloc(chunk);
		if (!media || !data) {
			free(media);
			free(data);
			return -ENOMEM;
		}
	}
	if (blk_mutex_trylock(&lu->rmw_lock)) {
		free(media);
		free(data);
		return -EAGAIN;
	}
	act = orw_decide(lu, bmop, eog);
	if (act == ORW_CCG)
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST,
			      ASC_ORWRITE_GENERATION_MISMATCH);
	for (done = 0; act == ORW_PA && done < len; done += chunk) {
		uint32_t n = len - done < chunk ? (uint32_t)(len - done) : chunk;

		st = sync_io(q, lu, c, BLK_OP_READ, 0, off + done, media, n, &err_off);
		if (st) {
			sync_fail(c, lu, st, err_off, false);
			failed = true;
			break;
		}
		data_out_at(c, done, data, n);
		if (bmop == ORW_CHANGE_GEN)
			for (i = 0; i < n; i++)
				media[i] &= data[i];
		else
			for (i = 0; i < n; i++)
				media[i] |= data[i];
		st = sync_io(q, lu, c, BLK_OP_WRITE, fua, off + done, media, n, &err_off);
		if (st) {
			sync_fail(c, lu, st, err_off, true);
			failed = true;
			break;
		}
		atomic_fetch_add_explicit(&q->tgt->write_blocks, n / lu->lbs,
					  memory_order_relaxed);
	}
	if (act == ORW_PA && bmop == ORW_CHANGE_GEN && !failed) {
		lu->orw_policy = pgp;
		lu->orw_prev_gen = lu->orw_gen;
		lu->orw_gen = nog;
	}
	blk_mutex_unlock(&lu->rmw_lock);
	free(media);
	free(data);
	return 0;
}

/*
 * SBC-3 5.3 / 5.4: PRE-FETCH (10) and (16).  The target has no cache of
 * its own to load and reads nothing: the device below keeps its own.  The
 * range is checked (PREFETCH LENGTH 0: to the last block); the answer is
 * CONDITION MET when the range is at most the MAXIMUM TRANSFER LENGTH (the
 * most the target stages for one command, which is the cache this
 * answer assumes), GOOD when it is longer (SBC-3: not all of it fits),
 * with or without IMMED, which changes nothing here.
 */
int tgt_pre_fetch(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		  struct scsi_tgt_cmd *c)
{
	struct lba_len a;
	uint64_t n;

	get_lba_len(c->cdb, &a);
	/* byte 1: bits 7-2 reserved, IMMED 1, bit 0 reserved (obsolete) */
	if (c->cdb[1] & 0xfd) {
		tgt_cmd_bad_cdb(c, lu, 1, tgt_top_bit(c->cdb[1] & 0xfd));
		return 0;
	}
	if (!check_cdb_bits(c, lu, 0, a.group_byte))
		return 0;
	if (!check_range(c, lu, a.lba, a.nb) ||
	    (!a.nb && !check_range(c, lu, a.lba, 1)))
		return 0;
	n = a.nb ? a.nb : lu->nr_blocks - a.lba;
	if (n <= q->tgt->cfg.max_xfer_blocks)
		c->status = SAM_STAT_CONDITION_MET;
	return 0;
}

/* GET LBA STATUS descriptors, PROVISIONING STATUS (SBC-3 table 40) */
#define LBA_MAPPED 0x0
#define LBA_DEALLOCATED 0x1

struct lba_desc {
	uint64_t lba;
	uint64_t nb;
	uint8_t status;
};

/* Add [@lba, @lba + @nb) with @status: merged into the last descriptor
 * where it continues it; false: @max descriptors are full. */
static bool desc_add(struct lba_desc *d, unsigned int *nd, unsigned int max,
		     uint64_t lba, uint64_t nb, uint8_t status)
{
	if (!nb)
		return true;
	if (*nd && d[*nd - 1].status == status &&
	    d[*nd - 1].lba + d[*nd - 1].nb == lba) {
		d[*nd - 1].nb += nb;
		return true;
	}
	if (*nd == max)
		return false;
	d[*nd].lba = lba;
	d[*nd].nb = nb;
	d[*nd].status = status;
	(*nd)++;
	return true;
}

/*
 * SBC-3 5.5: GET LBA STATUS (SERVICE ACTION IN (16), SA 0x12): the
 * provisioning status of the blocks from STARTING LOGICAL BLOCK ADDRESS
 * on, as extents of mapped and deallocated blocks, from the device's
 * allocation map (blk_dev_block_status()): a block is deallocated when it
 * lies wholly in a hole, mapped otherwise (a device without a map answers
 * all data).  A unit without logical block provisioning management (LBPME
 * 0: lbpu, lbpws and lbpws10 off, as auto makes them on a device that
 * neither discards nor writes zeroes) is fully provisioned: every block
 * mapped, whatever the device's map says.  As many descriptors
 * as the allocation length holds (at least one, at most 256); no anchored
 * state.
 */
int tgt_get_lba_status(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		       struct scsi_tgt_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	uint64_t lba = scsi_get_be64(cdb + 2), cur, pos, end;
	uint32_t alloc = scsi_get_be32(cdb + 10), n;
	unsigned int max, nd = 0, i;
	struct blk_extent *ext = NULL;
	struct lba_desc *d;
	bool full = false;
	uint8_t *b;
	int r = 0;

	(void)q;
	if (cdb[1] & 0xe0) {
		tgt_cmd_bad_cdb(c, lu, 1, tgt_top_bit(cdb[1] & 0xe0));
		return 0;
	}
	if (cdb[14]) {
		tgt_cmd_bad_cdb(c, lu, 14, -1);
		return 0;
	}
	if (lba >= lu->nr_blocks) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
		return 0;
	}
	max = alloc >= 24 ? (alloc - 8) / 16 : 1;
	if (max > 256)
		max = 256;
	d = calloc(max, sizeof(*d));
	if (!d)
		return -ENOMEM;
	end = lu->nr_blocks;
	cur = lba;
	if (lu->lbpu || lu->lbpws || lu->lbpws10) {
		/* a hole may split a mapped run in two: room for both */
		ext = calloc(max + 1, sizeof(*ext));
		if (!ext) {
			free(d);
			return -ENOMEM;
		}
		r = blk_dev_block_status(lu->dev, lba * lu->lbs,
					 (end - lba) * lu->lbs, ext, max + 1, 0);
		if (r < 0) {
			free(ext);
			free(d);
			tgt_cmd_check(c, lu, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
			return 0;
		}
		pos = lba * lu->lbs;
		for (i = 0; i < (unsigned int)r; i++) {
			uint64_t s = pos, e = pos + ext[i].length;
			uint64_t hs = (s + lu->lbs - 1) / lu->lbs, he = e / lu->lbs;

			pos = e;
			if (!(ext[i].flags & BLK_EXTENT_HOLE) || he <= hs)
				continue;
			if (!desc_add(d, &nd, max, cur, hs - cur, LBA_MAPPED) ||
			    !desc_add(d, &nd, max, hs, he - hs, LBA_DEALLOCATED)) {
				full = true;
				break;
			}
			cur = he;
		}
		/* what the extents did not reach (ran out) is left for the
		 * initiator to ask again */
		if (r == (int)max + 1 && pos < end * lu->lbs)
			end = pos / lu->lbs > cur ? pos / lu->lbs : cur + 1;
	}
	if (!full)
		desc_add(d, &nd, max, cur, end - cur, LBA_MAPPED);
	free(ext);
	/* NUMBER OF LOGICAL BLOCKS is 32 bits: a longer run is reported in
	 * part and ends the list (the initiator asks again from there) */
	for (i = 0; i < nd; i++) {
		if (d[i].nb > 0xffffffffull) {
			d[i].nb = 0xffffffff;
			nd = i + 1;
		}
	}
	n = 8 + 16 * nd;
	b = calloc(1, n);
	if (!b) {
		free(d);
		return -ENOMEM;
	}
	scsi_put_be32(b, n - 4);
	for (i = 0; i < nd; i++) {
		uint8_t *p = b + 8 + 16 * i;

		scsi_put_be64(p, d[i].lba);
		scsi_put_be32(p + 8, (uint32_t)d[i].nb);
		p[12] = d[i].status;
	}
	tgt_data_in(c, b, n, alloc);
	free(b);
	free(d);
	return 0;
}
