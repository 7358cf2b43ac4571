// SPDX-License-Identifier: MIT
/*
 * NVM command set I/O commands (NVM 3.2): Read, Write, Flush, Compare,
 * Write Zeroes, Dataset Management, executed as bios on the namespace's
 * blk_dev.
 *
 * A command runs as a chain of backend bios, one at a time: a transfer
 * larger than the backend's max_sectors or max_segments is split into
 * chunks (the uring driver, for one, sizes its per-request iovec array by
 * max_segments), DSM runs range by range, Flush of NSID FFFFFFFFh namespace
 * by namespace, Compare reads into a bounce buffer and compares at the end.
 * Each bio's completion continues the chain (struct nvme_cmd.cont).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl.h"

#define SF_GEN(sc) NVME_SF(NVME_SCT_GENERIC, (sc))
/* discard / write zeroes chunks: bi_size is 32 bits */
#define NONRW_CHUNK (1ull << 30)

/* Source of zeroes for Write Zeroes on a backend without the op. */
static char zero_buf[65536] __attribute__((aligned(4096)));

struct nvme_bctx *nvme_bctx_get(struct nvme_ctrl *ctrl, struct nvme_cq *cq,
				uint32_t nsidx)
{
	struct nvme_bctx *b;

	if (!ctrl->inline_mode)
		return &ctrl->tbctx[nsidx];
	/* inline: one ctx per (CQ, namespace), attached on first use */
	b = &cq->bctx[nsidx];
	if (!b->ctx && blk_ctx_attach(ctrl->ns[nsidx].dev, &b->ctx))
		return NULL;
	return b;
}

static uint16_t blk_to_sf(const struct blk_bio *bio)
{
	bool write = bio->bi_op != BLK_OP_READ;

	/* a backend that speaks NVMe gave its own status: pass it through */
	if (bio->bi_native_status)
		return (uint16_t)(bio->bi_native_status & 0x7fff);
	switch (bio->bi_status) {
	case BLK_STS_OK:
		return 0;
	case BLK_STS_MEDIUM:
		return NVME_SF(NVME_SCT_MEDIA, write ? NVME_SC_WRITE_FAULT :
			       NVME_SC_READ_ERROR);
	case BLK_STS_NOSPC:
		return SF_GEN(NVME_SC_CAP_EXCEEDED) | NVME_SF_DNR;
	case BLK_STS_NOTSUPP:
		return SF_GEN(NVME_SC_INVALID_OPCODE) | NVME_SF_DNR;
	case BLK_STS_INVAL:
		return SF_GEN(NVME_SC_INVALID_FIELD) | NVME_SF_DNR;
	case BLK_STS_PROTECTION:
		return NVME_SF(NVME_SCT_MEDIA, NVME_SC_GUARD_CHECK);
	case BLK_STS_AGAIN:
		return SF_GEN(NVME_SC_NS_NOT_READY);
	case BLK_STS_TRANSPORT:
		return SF_GEN(NVME_SC_DATA_XFER_ERROR);
	default:
		return SF_GEN(NVME_SC_INTERNAL);
	}
}

static void io_end(struct blk_bio *bio)
{
	struct nvme_cmd *c = bio->bi_private;
	struct nvme_ctrl *ctrl = c->sq->ctrl;

	if (atomic_load_explicit(&ctrl->resetting, memory_order_relaxed)) {
		nvme_cmd_free(c);
		return;
	}
	if (bio->bi_status) {
		nvme_cmd_complete(c, blk_to_sf(bio), 0);
		return;
	}
	c->cont(c);
}

/* Submit c->bio on c->bctx; a busy backend queues the command for retry. */
static void io_submit(struct nvme_cmd *c)
{
	struct nvme_bctx *b = c->bctx;
	int ret;

	c->bio.bi_end_io = io_end;
	c->bio.bi_private = c;
	c->bio.bi_next = NULL;
	/*
	 * Plug the bios of one fetch batch; a continuation submitted from a
	 * completion callback goes out at once instead.
	 */
	if (!b->plugged && !b->polling) {
		blk_start_plug(b->ctx);
		b->plugged = true;
	}
	ret = blk_submit(b->ctx, &c->bio);
	if (!ret)
		return;
	if (ret == -EAGAIN) {
		c->state = CMD_RETRY;
		c->next = NULL;
		if (b->retry_tail)
			b->retry_tail->next = c;
		else
			b->retry_head = c;
		b->retry_tail = c;
		return;
	}
	nvme_cmd_complete(c, ret == -EOPNOTSUPP ?
			  SF_GEN(NVME_SC_INVALID_OPCODE) | NVME_SF_DNR :
			  ret == -ERANGE ? SF_GEN(NVME_SC_LBA_RANGE) | NVME_SF_DNR :
			  SF_GEN(NVME_SC_INTERNAL), 0);
}

void nvme_bctx_retry(struct nvme_bctx *b)
{
	struct nvme_cmd *c;

	while ((c = b->retry_head)) {
		int ret;

		b->retry_head = c->next;
		if (!b->retry_head)
			b->retry_tail = NULL;
		c->next = NULL;
		c->state = CMD_EXEC;
		c->bio.bi_next = NULL;
		ret = blk_submit(b->ctx, &c->bio);
		if (ret == -EAGAIN) {
			c->state = CMD_RETRY;
			c->next = b->retry_head;
			b->retry_head = c;
			if (!b->retry_tail)
				b->retry_tail = c;
			return;
		}
		if (ret)
			nvme_cmd_complete(c, SF_GEN(NVME_SC_INTERNAL), 0);
	}
}

static struct nvme_bctx *bctx_array(struct nvme_ctrl *ctrl, struct nvme_cq *cq)
{
	return ctrl->inline_mode ? cq->bctx : ctrl->tbctx;
}

void nvme_bctx_finish_plugs(struct nvme_ctrl *ctrl, struct nvme_cq *cq)
{
	struct nvme_bctx *b = bctx_array(ctrl, cq);
	unsigned int i;

	if (!b)
		return;
	for (i = 0; i < ctrl->nr_ns; i++) {
		if (b[i].plugged) {
			b[i].plugged = false;
			blk_finish_plug(b[i].ctx);
		}
	}
}

unsigned int nvme_bctx_poll(struct nvme_ctrl *ctrl, struct nvme_cq *cq)
{
	struct nvme_bctx *b = bctx_array(ctrl, cq);
	unsigned int i, n = 0;
	int r;

	if (!b)
		return 0;
	for (i = 0; i < ctrl->nr_ns; i++) {
		if (!b[i].ctx)
			continue;
		b[i].polling = true;
		r = blk_poll(b[i].ctx);
		b[i].polling = false;
		if (r > 0)
			n += (unsigned int)r;
		if (b[i].retry_head) {
			nvme_bctx_retry(&b[i]);
			if (b[i].plugged) {
				b[i].plugged = false;
				blk_finish_plug(b[i].ctx);
			}
		}
	}
	return n;
}

/*
 * Wait for every backend bio of @cq's contexts (thread mode: of all
 * contexts).  With ctrl->resetting set their commands end silently.
 */
void nvme_cq_drain_backend(struct nvme_ctrl *ctrl, struct nvme_cq *cq,
			   bool silent)
{
	struct nvme_bctx *b = bctx_array(ctrl, cq);
	unsigned int i;
	bool again;

	if (!b)
		return;
	nvme_bctx_finish_plugs(ctrl, cq);
	do {
		again = false;
		for (i = 0; i < ctrl->nr_ns; i++) {
			if (!b[i].ctx)
				continue;
			b[i].polling = true;
			blk_drain(b[i].ctx, 0);
			b[i].polling = false;
			if (!b[i].retry_head)
				continue;
			if (silent) {
				struct nvme_cmd *c, *n;

				for (c = b[i].retry_head; c; c = n) {
					n = c->next;
					nvme_cmd_free(c);
				}
				b[i].retry_head = b[i].retry_tail = NULL;
				continue;
			}
			nvme_bctx_retry(&b[i]);
			if (b[i].plugged) {
				b[i].plugged = false;
				blk_finish_plug(b[i].ctx);
			}
			again = true;
		}
	} while (again);
}

/* ------------------------------------------------------------ helpers */

static void io_done(struct nvme_cmd *c)
{
	struct nvme_cq *cq = nvme_cmd_cq(c);

	switch (c->sqe.opcode) {
	case nvme_cmd_read:
	case nvme_cmd_compare:
		cq_ctr(cq, CTR_HOST_READS, 1);
		cq_ctr(cq, CTR_BYTES_READ, c->total);
		break;
	case nvme_cmd_write:
		cq_ctr(cq, CTR_HOST_WRITES, 1);
		cq_ctr(cq, CTR_BYTES_WRITTEN, c->total);
		break;
	default:
		break;
	}
	nvme_cmd_complete(c, 0, 0);
}

/*
 * The next chunk of a READ or WRITE over c->iov: at most max_segs iovecs
 * and max_chunk bytes, cut on a logical block boundary.  An iovec cut in
 * two keeps its rest for the next chunk (c->split_rest).
 */
static void rw_cont(struct nvme_cmd *c);

static void rw_next(struct nvme_cmd *c)
{
	struct nvme_ns *ns = &c->sq->ctrl->ns[c->nsidx];
	uint64_t limit = c->left < ns->max_chunk ? c->left : ns->max_chunk;
	uint64_t bytes = 0, acc = 0, lbs = ns->info.logical_block_size;
	uint32_t n = 0, k = 0;
	struct iovec *v = &c->iov[c->cur];

	while (n < ns->max_segs && c->cur + n < c->iov_cnt && bytes < limit) {
		uint64_t l = v[n].iov_len;

		bytes += l < limit - bytes ? l : limit - bytes;
		n++;
	}
	bytes &= ~(lbs - 1);
	if (!bytes) {
		/* max_segments too small for one block of these pages */
		nvme_cmd_complete(c, SF_GEN(NVME_SC_INTERNAL), 0);
		return;
	}
	while (acc + v[k].iov_len <= bytes) {
		acc += v[k].iov_len;
		k++;
		if (acc == bytes)
			break;
	}
	c->split_rest = 0;
	if (acc < bytes) {
		size_t part = bytes - acc;

		c->split_rest = v[k].iov_len - part;
		v[k].iov_len = part;
		k++;
	}
	memset(&c->bio, 0, sizeof(c->bio));
	c->bio.bi_op = c->op;
	c->bio.bi_flags = c->bflags;
	c->bio.bi_offset = c->off;
	c->bio.bi_size = (uint32_t)bytes;
	c->bio.bi_io_vec = v;
	c->bio.bi_vcnt = (uint16_t)k;
	c->step = k;
	c->cont = rw_cont;
	io_submit(c);
}

static void rw_cont(struct nvme_cmd *c)
{
	struct iovec *v = &c->iov[c->cur];
	uint32_t k = c->step;

	c->off += c->bio.bi_size;
	c->left -= c->bio.bi_size;
	if (c->split_rest) {
		struct iovec *last = &v[k - 1];

		last->iov_base = (char *)last->iov_base + last->iov_len;
		last->iov_len = c->split_rest;
		c->split_rest = 0;
		c->cur += k - 1;
	} else {
		c->cur += k;
	}
	if (!c->left) {
		io_done(c);
		return;
	}
	rw_next(c);
}

/*
 * Single-buffer chunks (Compare's buffer, zeroes, the bounce buffer of a
 * READ or WRITE): c->buf / zero_buf.
 */
static void buf_cont(struct nvme_cmd *c);

static void buf_next(struct nvme_cmd *c)
{
	struct nvme_ns *ns = &c->sq->ctrl->ns[c->nsidx];
	uint64_t n = c->left < ns->max_chunk ? c->left : ns->max_chunk;

	memset(&c->bio, 0, sizeof(c->bio));
	c->bio.bi_op = c->op;
	c->bio.bi_offset = c->off;
	if (c->bounce)
		c->bio.bi_flags = c->bflags;
	if (c->op == BLK_OP_WRITE && !c->bounce) {
		/* zeroes */
		if (n > sizeof(zero_buf))
			n = sizeof(zero_buf);
		c->biov[0].iov_base = zero_buf;
	} else {
		c->biov[0].iov_base = (char *)c->buf + (c->total - c->left);
	}
	c->biov[0].iov_len = n;
	c->bio.bi_size = (uint32_t)n;
	c->bio.bi_io_vec = c->biov;
	c->bio.bi_vcnt = 1;
	c->cont = buf_cont;
	io_submit(c);
}

static void compare_finish(struct nvme_cmd *c)
{
	const char *b = c->buf;
	uint32_t i;

	for (i = 0; i < c->iov_cnt; i++) {
		if (memcmp(c->iov[i].iov_base, b, c->iov[i].iov_len)) {
			nvme_cmd_complete(c, NVME_SF(NVME_SCT_MEDIA,
					  NVME_SC_COMPARE_FAILED) | NVME_SF_DNR, 0);
			return;
		}
		b += c->iov[i].iov_len;
	}
	io_done(c);
}

static void buf_cont(struct nvme_cmd *c)
{
	c->off += c->bio.bi_size;
	c->left -= c->bio.bi_size;
	if (c->left) {
		buf_next(c);
		return;
	}
	if (c->sqe.opcode == nvme_cmd_compare) {
		compare_finish(c);
		return;
	}
	if (c->bounce && c->op == BLK_OP_READ)
		nvme_iov_copy_to(c->iov, c->iov_cnt, c->buf, c->total);
	io_done(c);
}

/*
 * A buffer for backend bios: aligned as strictly as an O_DIRECT file
 * may ask (the uring driver's logical block size follows its alignment).
 */
static void *io_buf_alloc(struct nvme_cmd *c, uint64_t len)
{
	c->buf = aligned_alloc(4096, (len + 4095) & ~4095ull);
	c->buf_len = c->buf ? len : 0;
	return c->buf;
}

/* Data-less chunks (DISCARD, WRITE_ZEROES): c->off, c->left. */
static void range_cont(struct nvme_cmd *c);

static void range_next(struct nvme_cmd *c)
{
	uint64_t n = c->left < NONRW_CHUNK ? c->left : NONRW_CHUNK;

	memset(&c->bio, 0, sizeof(c->bio));
	c->bio.bi_op = c->op;
	c->bio.bi_offset = c->off;
	c->bio.bi_size = (uint32_t)n;
	c->cont = range_cont;
	io_submit(c);
}

static void dsm_next(struct nvme_cmd *c);

static void range_cont(struct nvme_cmd *c)
{
	c->off += c->bio.bi_size;
	c->left -= c->bio.bi_size;
	if (c->left) {
		range_next(c);
		return;
	}
	if (c->sqe.opcode == nvme_cmd_dsm) {
		c->step++;
		dsm_next(c);
		return;
	}
	io_done(c);
}

/* ------------------------------------------------------------ commands */

static uint16_t check_ns(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	uint32_t nsid = c->sqe.nsid;

	if (!nsid || nsid > ctrl->nr_ns)
		return SF_GEN(NVME_SC_INVALID_NS) | NVME_SF_DNR;
	c->nsidx = nsid - 1;
	return 0;
}

/* SLBA/NLB of Read, Write, Compare, Write Zeroes (NVM 3.2.4 Figure 60). */
static uint16_t check_range(struct nvme_ctrl *ctrl, struct nvme_cmd *c,
			    uint64_t *slba, uint32_t *nlb)
{
	struct nvme_ns *ns = &ctrl->ns[c->nsidx];

	*slba = (uint64_t)c->sqe.cdw10 | ((uint64_t)c->sqe.cdw11 << 32);
	*nlb = (c->sqe.cdw12 & NVME_RW_NLB_MASK) + 1;
	if (*slba >= ns->nsze || *nlb > ns->nsze - *slba)
		return SF_GEN(NVME_SC_LBA_RANGE) | NVME_SF_DNR;
	return 0;
}

static bool set_bctx(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	c->bctx = nvme_bctx_get(ctrl, nvme_cmd_cq(c), c->nsidx);
	if (!c->bctx) {
		nvme_cmd_complete(c, SF_GEN(NVME_SC_INTERNAL), 0);
		return false;
	}
	return true;
}

static void exec_rw(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	struct nvme_ns *ns = &ctrl->ns[c->nsidx];
	uint64_t slba;
	uint32_t nlb;
	uint16_t st;

	st = check_range(ctrl, c, &slba, &nlb);
	if (st)
		goto fail;
	c->total = (uint64_t)nlb << ns->lba_shift;
	if (ctrl->mdts_bytes && c->total > ctrl->mdts_bytes) {
		st = SF_GEN(NVME_SC_INVALID_FIELD) | NVME_SF_DNR;
		goto fail;
	}
	st = nvme_prp_map(ctrl, c, c->sqe.prp1, c->sqe.prp2, c->total);
	if (st)
		goto fail;
	if (!set_bctx(ctrl, c))
		return;
	c->off = slba << ns->lba_shift;
	c->left = c->total;
	c->cur = 0;
	c->split_rest = 0;
	c->bflags = 0;
	if (c->sqe.opcode == nvme_cmd_compare) {
		/* aligned: an O_DIRECT backend refuses malloc's 16 bytes */
		if (!io_buf_alloc(c, c->total)) {
			st = SF_GEN(NVME_SC_INTERNAL);
			goto fail;
		}
		c->op = BLK_OP_READ;
		buf_next(c);
		return;
	}
	if (c->sqe.opcode == nvme_cmd_write) {
		c->op = BLK_OP_WRITE;
		/* FUA, or every write when the volatile cache is switched off */
		if (ns->info.can_flush &&
		    ((c->sqe.cdw12 & NVME_RW_FUA) || !ctrl->vwc_on))
			c->bflags = BLK_BIO_FUA;
	} else {
		c->op = BLK_OP_READ;
	}
	/*
	 * PRP1 may start at any dword of its page (Base 4.1.1), so the host
	 * memory segments need not be aligned to the logical block, which an
	 * O_DIRECT backend requires of every buffer (EINVAL: a valid command
	 * failed).  Only PRP1's offset can break it: every other entry starts
	 * a page.  Such a transfer goes through an aligned buffer.
	 */
	if (__builtin_expect(!!(c->sqe.prp1 & ((ns->info.logical_block_size < ctrl->page_size ?
				     ns->info.logical_block_size : ctrl->page_size) - 1)), 0)) {
		if (!io_buf_alloc(c, c->total)) {
			st = SF_GEN(NVME_SC_INTERNAL);
			goto fail;
		}
		if (c->op == BLK_OP_WRITE)
			nvme_iov_copy_from(c->buf, c->iov, c->iov_cnt, c->total);
		c->bounce = true;
		buf_next(c);
		return;
	}
	rw_next(c);
	return;
fail:
	nvme_cmd_complete(c, st, 0);
}

static void exec_write_zeroes(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	struct nvme_ns *ns = &ctrl->ns[c->nsidx];
	uint64_t slba;
	uint32_t nlb;
	uint16_t st;

	st = check_range(ctrl, c, &slba, &nlb);
	if (st) {
		nvme_cmd_complete(c, st, 0);
		return;
	}
	if (!set_bctx(ctrl, c))
		return;
	c->total = 0;
	c->off = slba << ns->lba_shift;
	c->left = (uint64_t)nlb << ns->lba_shift;
	if ((c->sqe.cdw12 & NVME_WZ_DEAC) && ns->info.can_discard) {
		/* deallocated blocks read as zeroes (DLFEAT 001b) */
		c->op = BLK_OP_DISCARD;
		range_next(c);
	} else if (ns->info.can_write_zeroes) {
		c->op = BLK_OP_WRITE_ZEROES;
		range_next(c);
	} else {
		c->op = BLK_OP_WRITE;
		c->total = c->left;
		buf_next(c);
	}
}

/* DSM ranges one by one (NVM 3.2.3); c->buf holds the range list. */
static void dsm_next(struct nvme_cmd *c)
{
	struct nvme_ns *ns = &c->sq->ctrl->ns[c->nsidx];
	const struct nvme_dsm_range *r = c->buf;
	uint32_t nr = (c->sqe.cdw10 & 0xff) + 1;

	while (c->step < nr && !r[c->step].nlb)
		c->step++;
	if (c->step >= nr) {
		io_done(c);
		return;
	}
	c->op = BLK_OP_DISCARD;
	c->off = r[c->step].slba << ns->lba_shift;
	c->left = (uint64_t)r[c->step].nlb << ns->lba_shift;
	range_next(c);
}

static void exec_dsm(struct nvme_ctrl *ctrl, struct nvme_cmd *c)
{
	struct nvme_ns *ns = &ctrl->ns[c->nsidx];
	uint32_t nr = (c->sqe.cdw10 & 0xff) + 1, i;
	const struct nvme_dsm_range *r;
	uint16_t st;

	c->buf_len = nr * sizeof(struct nvme_dsm_range);
	c->buf = malloc(c->buf_len);
	if (!c->buf) {
		nvme_cmd_complete(c, SF_GEN(NVME_SC_INTERNAL), 0);
		return;
	}
	st = nvme_data_from_host(ctrl, c, c->buf, c->buf_len);
	if (st) {
		nvme_cmd_complete(c, st, 0);
		return;
	}
	r = c->buf;
	for (i = 0; i < nr; i++) {
		if (r[i].nlb && (r[i].slba >= ns->nsze || r[i].nlb > ns->nsze - r[i].slba)) {
			nvme_cmd_complete(c, SF_GEN(NVME_SC_LBA_RANGE) | NVME_SF_DNR, 0);
			return;
		}
	}
	/*
	 * Only AD does anything here; the IDR/IDW hints need no action.  A
	 * backend without discard keeps the data: deallocation is advisory
	 * and DLFEAT does not promise zeroes for such a namespace.
	 */
	if (!(c->sqe.cdw11 & NVME_DSM_AD) || !ns->info.can_discard) {
		io_done(c);
		return;
	}
	if (!set_bctx(ctrl, c))
		return;
	c->step = 0;
	dsm_next(c);
}

/* Flush (NVM 3.2.2): one namespace, or every one for NSID FFFFFFFFh. */
static void flush_cont(struct nvme_cmd *c);

static void flush_next(struct nvme_cmd *c)
{
	struct nvme_ctrl *ctrl = c->sq->ctrl;
	uint32_t last = c->sqe.nsid == 0xffffffffu ? ctrl->nr_ns : c->nsidx + 1;

	while (c->step < last && !ctrl->ns[c->step].info.can_flush)
		c->step++;
	if (c->step >= last) {
		io_done(c);
		return;
	}
	c->nsidx = c->step;
	if (!set_bctx(ctrl, c))
		return;
	memset(&c->bio, 0, sizeof(c->bio));
	c->bio.bi_op = BLK_OP_FLUSH;
	c->cont = flush_cont;
	io_submit(c);
}

static void flush_cont(struct nvme_cmd *c)
{
	c->step++;
	flush_next(c);
}

void nvme_io_exec(struct nvme_cmd *c)
{
	struct nvme_ctrl *ctrl = c->sq->ctrl;
	uint16_t st;

	/* no fused operations (FUSES = 0) and PRPs only (SGLS = 0) */
	if (c->sqe.flags & (NVME_CMD_FUSE_MASK | NVME_CMD_PSDT_MASK)) {
		nvme_cmd_complete(c, SF_GEN(NVME_SC_INVALID_FIELD) | NVME_SF_DNR, 0);
		return;
	}
	switch (c->sqe.opcode) {
	case nvme_cmd_flush:
		if (c->sqe.nsid == 0xffffffffu) {
			c->nsidx = 0;
			c->step = 0;
			flush_next(c);
			return;
		}
		st = check_ns(ctrl, c);
		if (st)
			break;
		c->step = c->nsidx;
		flush_next(c);
		return;
	case nvme_cmd_read:
	case nvme_cmd_write:
	case nvme_cmd_compare:
		st = check_ns(ctrl, c);
		if (st)
			break;
		exec_rw(ctrl, c);
		return;
	case nvme_cmd_write_zeroes:
		st = check_ns(ctrl, c);
		if (st)
			break;
		exec_write_zeroes(ctrl, c);
		return;
	case nvme_cmd_dsm:
		st = check_ns(ctrl, c);
		if (st)
			break;
		exec_dsm(ctrl, c);
		return;
	default:
		st = SF_GEN(NVME_SC_INVALID_OPCODE) | NVME_SF_DNR;
		break;
	}
	nvme_cmd_complete(c, st, 0);
}

/*
 * Shutdown (Base 3.6.2): make everything written durable.  Any context of
 * a namespace flushes the whole device; inline mode uses an attached one
 * (under its CQ lock) or attaches one for the purpose.
 */
static void flush_end(struct blk_bio *bio)
{
	(void)bio;
}

/* @b: the context's struct nvme_bctx, or NULL for a temporary one. */
static void flush_ctx(struct blk_mq_ctx *ctx, struct nvme_bctx *b)
{
	struct blk_bio bio;

	memset(&bio, 0, sizeof(bio));
	bio.bi_op = BLK_OP_FLUSH;
	bio.bi_end_io = flush_end;
	/* commands continued from these polls must not sit in a plug */
	if (b)
		b->polling = true;
	while (blk_submit(ctx, &bio) == -EAGAIN)
		blk_poll(ctx);
	blk_drain(ctx, 0);
	if (b)
		b->polling = false;
}

void nvme_io_flush_all(struct nvme_ctrl *ctrl)
{
	unsigned int i, q;

	for (i = 0; i < ctrl->nr_ns; i++) {
		struct blk_mq_ctx *ctx = NULL;
		bool done = false;

		if (!ctrl->ns[i].info.can_flush)
			continue;
		if (!ctrl->inline_mode) {
			flush_ctx(ctrl->tbctx[i].ctx, &ctrl->tbctx[i]);
			continue;
		}
		for (q = 1; q < ctrl->nr_qids && !done; q++) {
			struct nvme_cq *cq = &ctrl->cq[q];

			blk_mutex_lock(&cq->lock);
			if (cq->bctx && cq->bctx[i].ctx) {
				flush_ctx(cq->bctx[i].ctx, &cq->bctx[i]);
				done = true;
			}
			blk_mutex_unlock(&cq->lock);
		}
		if (!done && !blk_ctx_attach(ctrl->ns[i].dev, &ctx)) {
			flush_ctx(ctx, NULL);
			blk_ctx_detach(ctx);
		}
	}
}
