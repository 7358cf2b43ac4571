// SPDX-License-Identifier: MIT
/*
 * SCSI target core: mode parameters.  MODE SENSE (6)/(10) (SPC-4 6.11,
 * 6.12) and MODE SELECT (6)/(10) (SPC-4 6.9, 6.10) over three pages per
 * logical unit: caching (SBC-3 6.4.5; WCE changeable where the device has
 * a volatile cache), control (SPC-4 7.5.8; D_SENSE, SWP and TAS
 * changeable) and informational exceptions control (SPC-4 7.5.11; nothing
 * changeable: nothing is ever reported).  No saved pages: SP and PC 3 are
 * refused.
 *
 * The current values live in the logical unit under its mode_lock, which
 * only these two commands take.  What other commands need of them is
 * mirrored in atomics that they load relaxed: D_SENSE (tgt_cmd_sense()),
 * the write flags (write protected by SWP, write through when WCE is
 * cleared) that READ/WRITE load once per write in place of the
 * configuration's write_protect, and TAS, which PERSISTENT RESERVE OUT's
 * PREEMPT AND ABORT reads (pr.c, tmf.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tgt_int.h"

/* Data MODE SENSE answers with: header, long block descriptor, the pages */
#define MODE_RESP_MAX 128

enum { PG_CACHING = 0x08, PG_CONTROL = 0x0a, PG_IE = 0x1c };

/* A page's length (bytes, header included) and its current values in @lu
 * (NULL for a page not implemented). */
static uint8_t *page_cur(struct scsi_lu *lu, uint8_t page, uint32_t *len)
{
	switch (page) {
	case PG_CACHING:
		*len = sizeof(lu->mode_caching);
		return lu->mode_caching;
	case PG_CONTROL:
		*len = sizeof(lu->mode_control);
		return lu->mode_control;
	case PG_IE:
		*len = sizeof(lu->mode_ie);
		return lu->mode_ie;
	default:
		*len = 0;
		return NULL;
	}
}

/* @page's default values (PC 2) into @b; its length, 0: no such page. */
static uint32_t page_default(const struct scsi_lu *lu, uint8_t page,
			     uint8_t *b)
{
	switch (page) {
	case PG_CACHING:
		memset(b, 0, 20);
		b[0] = PG_CACHING;
		b[1] = 0x12;
		if (lu->info.can_flush)
			b[2] = 0x04; /* WCE: a volatile cache SYNCHRONIZE CACHE empties */
		return 20;
	case PG_CONTROL:
		memset(b, 0, 12);
		b[0] = PG_CONTROL;
		b[1] = 0x0a;
		b[3] = 0x10; /* QUEUE ALGORITHM MODIFIER 1: unrestricted */
		/* TAS 0: tasks another nexus aborts end without a response */
		scsi_put_be16(b + 8, 0xffff); /* BUSY TIMEOUT PERIOD: unlimited */
		return 12;
	case PG_IE:
		memset(b, 0, 12);
		b[0] = PG_IE;
		b[1] = 0x0a;
		return 12;
	default:
		return 0;
	}
}

/* @page's changeable mask (PC 1) into @b; its length, 0: no such page. */
static uint32_t page_changeable(const struct scsi_lu *lu, uint8_t page,
				uint8_t *b)
{
	uint32_t n = page_default(lu, page, b);

	if (!n)
		return 0;
	memset(b + 2, 0, n - 2);
	if (page == PG_CACHING && lu->info.can_flush)
		b[2] = 0x04;            /* WCE */
	if (page == PG_CONTROL) {
		b[2] = 0x04;            /* D_SENSE */
		b[4] = 0x08;            /* SWP */
		b[5] = 0x40;            /* TAS */
	}
	return n;
}

/* Recompute what the other commands read from the current pages.
 * Context: mode_lock held (or the unit not yet shared). */
static void mode_publish(struct scsi_tgt *t, struct scsi_lu *lu)
{
	uint8_t wf = 0;

	if (t->cfg.write_protect || (lu->mode_control[4] & 0x08))
		wf |= TGT_WF_WP;
	if (lu->info.can_flush && !(lu->mode_caching[2] & 0x04))
		wf |= TGT_WF_WT;
	atomic_store_explicit(&lu->d_sense, (lu->mode_control[2] & 0x04) != 0,
			      memory_order_relaxed);
	atomic_store_explicit(&lu->tas, (lu->mode_control[5] & 0x40) != 0,
			      memory_order_relaxed);
	atomic_store_explicit(&lu->wflags, wf, memory_order_relaxed);
}

void tgt_mode_init(struct scsi_tgt *t, struct scsi_lu *lu)
{
	blk_mutex_init(&lu->mode_lock, "&scsi_lu->mode_lock", -1);
	blk_mutex_init(&lu->rmw_lock, "&scsi_lu->rmw_lock", -1);
	page_default(lu, PG_CACHING, lu->mode_caching);
	page_default(lu, PG_CONTROL, lu->mode_control);
	page_default(lu, PG_IE, lu->mode_ie);
	atomic_init(&lu->d_sense, false);
	atomic_init(&lu->tas, false);
	atomic_init(&lu->wflags, 0);
	mode_publish(t, lu);
}

void tgt_mode_fini(struct scsi_lu *lu)
{
	blk_mutex_destroy(&lu->mode_lock);
	blk_mutex_destroy(&lu->rmw_lock);
}

/* @page for @pc (0 current, 1 changeable, 2 default) into @b; its length,
 * 0: no such page.  Context: mode_lock held for PC 0. */
static uint32_t mode_page(struct scsi_lu *lu, uint8_t page, uint8_t pc,
			  uint8_t *b)
{
	uint32_t n;
	const uint8_t *cur;

	switch (pc) {
	case 0:
		cur = page_cur(lu, page, &n);
		if (cur)
			memcpy(b, cur, n);
		return n;
	case 1:
		return page_changeable(lu, page, b);
	default:
		return page_default(lu, page, b);
	}
}

/* SPC-4 6.11 / 6.12: MODE SENSE (6) and (10) */
int tgt_mode_sense(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		   struct scsi_tgt_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	bool ten = cdb[0] == MODE_SENSE_10;
	bool dbd = cdb[1] & 0x08, llbaa = ten && (cdb[1] & 0x10);
	uint8_t pc = cdb[2] >> 6, page = cdb[2] & 0x3f, sub = cdb[3];
	uint8_t b[MODE_RESP_MAX];
	uint32_t hdr = ten ? 8 : 4, n, k, bd;
	static const uint8_t all[] = { PG_CACHING, PG_CONTROL, PG_IE };
	bool wp;

	(void)q;
	if (cdb[1] & (ten ? 0xe7 : 0xf7)) {
		tgt_cmd_bad_cdb(c, lu, 1, -1);
		return 0;
	}
	if (pc == 3) {
		tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_SAVING_PARAMS_NOT_SUPPORTED);
		return 0;
	}
	if (sub && !(page == 0x3f && sub == 0xff)) {
		tgt_cmd_bad_cdb(c, lu, 3, -1);
		return 0;
	}
	memset(b, 0, sizeof(b));
	n = hdr;
	/* block descriptor (SPC-4 7.5.5): short, or long with LLBAA */
	if (!dbd) {
		bd = llbaa ? 16 : 8;
		if (llbaa) {
			scsi_put_be64(b + n, lu->nr_blocks);
			scsi_put_be32(b + n + 12, lu->lbs);
		} else {
			scsi_put_be32(b + n, lu->nr_blocks > 0xffffffffull ?
					     0xffffffff : (uint32_t)lu->nr_blocks);
			scsi_put_be32(b + n + 4, lu->lbs & 0xffffff);
		}
		n += bd;
	} else {
		bd = 0;
	}
	/* the pages and WP as of one moment: a MODE SELECT changes them
	 * together */
	blk_mutex_lock(&lu->mode_lock);
	wp = tgt_lu_wflags(lu) & TGT_WF_WP;
	if (page == 0x3f) {
		for (k = 0; k < ARRAY_SIZE(all); k++)
			n += mode_page(lu, all[k], pc, b + n);
	} else {
		k = mode_page(lu, page, pc, b + n);
		n += k;
	}
	blk_mutex_unlock(&lu->mode_lock);
	if (page != 0x3f && !k) {
		tgt_cmd_bad_cdb(c, lu, 2, 5);
		return 0;
	}
	/* header: mode data length, medium type 0, WP and DPOFUA, block
	 * descriptor length */
	if (ten) {
		scsi_put_be16(b, (uint16_t)(n - 2));
		b[3] = (wp ? 0x80 : 0) | 0x10;
		b[4] = llbaa && bd ? 0x01 : 0x00;
		scsi_put_be16(b + 6, (uint16_t)bd);
		tgt_data_in(c, b, n, scsi_get_be16(cdb + 7));
	} else {
		b[0] = (uint8_t)(n - 1);
		b[2] = (wp ? 0x80 : 0) | 0x10;
		b[3] = (uint8_t)bd;
		tgt_data_in(c, b, n, cdb[4]);
	}
	return 0;
}

static void param_length_error(struct scsi_tgt_cmd *c, struct scsi_lu *lu)
{
	tgt_cmd_check(c, lu, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
}

/*
 * SPC-4 7.5.5 (SBC-3 6.4.2): a block descriptor in MODE SELECT's parameter
 * list at @off, short (8 bytes) or long (16).  The capacity and block
 * length cannot change: NUMBER OF LOGICAL BLOCKS must be 0 (no change) or
 * what MODE SENSE reports, LOGICAL BLOCK LENGTH the unit's.  false: CHECK
 * CONDITION set.
 */
static bool check_block_descriptor(struct scsi_tgt_cmd *c, struct scsi_lu *lu,
				   const uint8_t *pl, uint32_t off, bool longlba)
{
	const uint8_t *d = pl + off;
	uint64_t nb = longlba ? scsi_get_be64(d) : scsi_get_be32(d);
	uint64_t cap = longlba || lu->nr_blocks <= 0xffffffffull ?
		       lu->nr_blocks : 0xffffffffull;
	uint32_t lbl = longlba ? scsi_get_be32(d + 12) :
			(uint32_t)d[5] << 16 | scsi_get_be16(d + 6);
	unsigned int i;

	if (nb && nb != cap) {
		tgt_cmd_bad_param(c, lu, off, -1);
		return false;
	}
	for (i = longlba ? 8 : 4; i < (longlba ? 12u : 5u); i++) {
		if (d[i]) { /* reserved (short: the density code's place) */
			tgt_cmd_bad_param(c, lu, off + i, -1);
			return false;
		}
	}
	if (lbl != lu->lbs) {
		tgt_cmd_bad_param(c, lu, off + (longlba ? 12 : 5), -1);
		return false;
	}
	return true;
}

/*
 * SPC-4 6.9 / 6.10: MODE SELECT (6) and (10).  The parameter list is
 * checked whole before anything changes: a header, at most one block
 * descriptor, then pages in page format (PF 1), each whole, at its own
 * length, with only its changeable bits differing from the current value.
 * Then the pages change together, under mode_lock, and every other nexus
 * gets MODE PARAMETERS CHANGED (SPC-4 5.14, 2A/01) if a value changed.
 */
int tgt_mode_select(struct scsi_tgt_queue *q, struct scsi_lu *lu,
		    struct scsi_tgt_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	bool ten = cdb[0] == MODE_SELECT_10, longlba = false, changed;
	uint32_t plen = ten ? scsi_get_be16(cdb + 7) : cdb[4];
	uint32_t hdr = ten ? 8 : 4, bdl, p, i;
	uint8_t caching[20], control[12], ie[12];
	uint8_t *pl;

	/* CDB: byte 1 PF (bit 4) and SP (bit 0), the rest reserved up to
	 * the parameter list length */
	if (cdb[1] & 0xee) {
		tgt_cmd_bad_cdb(c, lu, 1, tgt_top_bit(cdb[1] & 0xee));
		return 0;
	}
	for (i = 2; i < (ten ? 7u : 4u); i++) {
		if (cdb[i]) {
			tgt_cmd_bad_cdb(c, lu, i, -1);
			return 0;
		}
	}
	if (!(cdb[1] & 0x10)) { /* PF 0: vendor-specific pages: none here */
		tgt_cmd_bad_cdb(c, lu, 1, 4);
		return 0;
	}
	if (cdb[1] & 0x01) { /* SP: no saved pages */
		struct scsi_sense s = {
			.key = SK_ILLEGAL_REQUEST,
			.asc_ascq = ASC_SAVING_PARAMS_NOT_SUPPORTED,
			.sks_valid = true, .sks = scsi_sks_field(true, 1, 0),
		};

		tgt_cmd_sense(c, lu, &s);
		return 0;
	}
	if (!plen)
		return 0; /* nothing to change: not an error (6.9) */
	if (plen < hdr) {
		param_length_error(c, lu);
		return 0;
	}
	pl = malloc(plen);
	if (!pl)
		return -ENOMEM;
	if (tgt_data_out(c, pl, plen) < plen) {
		param_length_error(c, lu);
		goto out;
	}
	/* mode parameter header (SPC-4 7.5.5): MODE DATA LENGTH is reserved
	 * in MODE SELECT; MEDIUM TYPE 0; device-specific (SBC-3 6.4.1): WP
	 * and DPOFUA are ignored, the rest reserved; (10) LONGLBA */
	if (ten) {
		if (scsi_get_be16(pl)) {
			tgt_cmd_bad_param(c, lu, 0, -1);
			goto out;
		}
		if (pl[2]) {
			tgt_cmd_bad_param(c, lu, 2, -1);
			goto out;
		}
		if (pl[3] & 0x6f) {
			tgt_cmd_bad_param(c, lu, 3, tgt_top_bit(pl[3] & 0x6f));
			goto out;
		}
		if (pl[4] & 0xfe) {
			tgt_cmd_bad_param(c, lu, 4, tgt_top_bit(pl[4] & 0xfe));
			goto out;
		}
		if (pl[5]) {
			tgt_cmd_bad_param(c, lu, 5, -1);
			goto out;
		}
		longlba = pl[4] & 0x01;
		bdl = scsi_get_be16(pl + 6);
	} else {
		if (pl[0]) {
			tgt_cmd_bad_param(c, lu, 0, -1);
			goto out;
		}
		if (pl[1]) {
			tgt_cmd_bad_param(c, lu, 1, -1);
			goto out;
		}
		if (pl[2] & 0x6f) {
			tgt_cmd_bad_param(c, lu, 2, tgt_top_bit(pl[2] & 0x6f));
			goto out;
		}
		bdl = pl[3];
	}
	/* one block descriptor at most (there is one medium) */
	if (bdl && bdl != (longlba ? 16u : 8u)) {
		tgt_cmd_bad_param(c, lu, ten ? 6 : 3, -1);
		goto out;
	}
	if (hdr + bdl > plen) {
		param_length_error(c, lu);
		goto out;
	}
	if (bdl && !check_block_descriptor(c, lu, pl, hdr, longlba))
		goto out;

	blk_mutex_lock(&lu->mode_lock);
	memcpy(caching, lu->mode_caching, sizeof(caching));
	memcpy(control, lu->mode_control, sizeof(control));
	memcpy(ie, lu->mode_ie, sizeof(ie));
	for (p = hdr + bdl; p < plen;) {
		uint8_t mask[20], *cur, page = pl[p] & 0x3f;
		uint32_t len;

		if (plen - p < 2) {
			param_length_error(c, lu);
			goto unlock;
		}
		if (pl[p] & 0xc0) { /* PS: reserved here; SPF: no subpages */
			tgt_cmd_bad_param(c, lu, p, tgt_top_bit(pl[p] & 0xc0));
			goto unlock;
		}
		cur = page == PG_CACHING ? caching : page == PG_CONTROL ? control :
		      page == PG_IE ? ie : NULL;
		len = page_changeable(lu, page, mask);
		if (!cur) {
			tgt_cmd_bad_param(c, lu, p, 5);
			goto unlock;
		}
		if (p + 2 + pl[p + 1] > plen) {
			param_length_error(c, lu);
			goto unlock;
		}
		if (pl[p + 1] != len - 2) {
			tgt_cmd_bad_param(c, lu, p + 1, -1);
			goto unlock;
		}
		for (i = 2; i < len; i++) {
			uint8_t bad = (pl[p + i] ^ cur[i]) & ~mask[i];

			if (bad) {
				tgt_cmd_bad_param(c, lu, p + i, tgt_top_bit(bad));
				goto unlock;
			}
		}
		memcpy(cur + 2, pl + p + 2, len - 2);
		p += len;
	}
	changed = memcmp(caching, lu->mode_caching, sizeof(caching)) ||
		  memcmp(control, lu->mode_control, sizeof(control)) ||
		  memcmp(ie, lu->mode_ie, sizeof(ie));
	if (changed) {
		memcpy(lu->mode_caching, caching, sizeof(caching));
		memcpy(lu->mode_control, control, sizeof(control));
		memcpy(lu->mode_ie, ie, sizeof(ie));
		mode_publish(q->tgt, lu);
	}
	blk_mutex_unlock(&lu->mode_lock);
	if (changed)
		tgt_ua_raise(q->tgt, lu, TGT_UA_MODE_CHANGED, (int)c->nexus);
	goto out;
unlock:
	blk_mutex_unlock(&lu->mode_lock);
out:
	free(pl);
	return 0;
}
