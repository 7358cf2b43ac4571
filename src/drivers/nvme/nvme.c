// SPDX-License-Identifier: MIT
/*
 * nvme host driver - see blkstack/nvme.h and docs/nvme.md.
 *
 * Fast path: queue_rq() writes the SQE straight into the SQ slot and builds
 * its PRPs, commit_rqs() rings the SQ tail doorbell once per dispatch batch,
 * poll() consumes CQEs by phase tag, completes their requests inline and
 * rings the CQ head doorbell once per batch.  No lock, no atomic
 * read-modify-write, no allocation per I/O: the queue belongs to the thread
 * that holds its hctx.  The one shared load is the controller state word
 * (reset generation), read-mostly.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvme_host.h"

/* -------------------------------------------------------------- status */

blk_status_t blk_nvme_status_to_blk(uint16_t sf)
{
	uint8_t sc = NVME_SF_SC(sf);

	switch (NVME_SF_SCT(sf)) {
	case NVME_SCT_GENERIC:
		switch (sc) {
		case NVME_SC_SUCCESS:
			return BLK_STS_OK;
		case NVME_SC_INVALID_OPCODE:
			return BLK_STS_NOTSUPP;
		case NVME_SC_INVALID_FIELD:
		case NVME_SC_LBA_RANGE:
			return BLK_STS_INVAL;
		case NVME_SC_CAP_EXCEEDED:
			return BLK_STS_NOSPC;
		case NVME_SC_NS_NOT_READY:
			/* as Linux: not EAGAIN, which asks the caller to resend */
			return BLK_STS_TARGET;
		default:
			return BLK_STS_IOERR;
		}
	case NVME_SCT_CMD_SPECIFIC:
		if (sc == NVME_SC_READ_ONLY)
			return BLK_STS_TARGET;
		return BLK_STS_IOERR;
	case NVME_SCT_MEDIA:
		switch (sc) {
		case NVME_SC_GUARD_CHECK:
		case NVME_SC_APPTAG_CHECK:
		case NVME_SC_REFTAG_CHECK:
			return BLK_STS_PROTECTION;
		case NVME_SC_ACCESS_DENIED:
			return BLK_STS_TARGET;
		default: /* write fault, read error, compare, unwritten block */
			return BLK_STS_MEDIUM;
		}
	case NVME_SCT_PATH:
		return BLK_STS_TRANSPORT;
	default:
		return BLK_STS_IOERR;
	}
}

uint16_t blk_nvme_rq_status(struct request *rq)
{
	return ((struct nvme_iod *)blk_mq_rq_to_pdu(rq))->status;
}

/* ---------------------------------------------------------------- PRPs */

/* Per-tag PRP list pages: @pages pages of 512 entries. */
static inline uint64_t *nvme_prp_list(struct nvme_queue *q, unsigned int tag)
{
	return q->prp_pages + (size_t)tag * q->nh->prp_pages_per_tag *
				      NVME_PRPS_PER_PAGE;
}

/*
 * Where the next PRP entry goes: a list page holds 512 entries; when a
 * 513th is needed the 512th moves to the next page and its slot becomes the
 * pointer to that page (Base 4.3.1: the last entry of a full list page
 * points to the next list page).
 */
struct prp_writer {
	uint64_t *page;         /* current list page */
	unsigned int idx;       /* entries used in it */
	unsigned int n;         /* data entries in all, PRP1 included */
	uint64_t prp1, first;   /* entries 0 and 1 */
};

static inline void prp_put(struct prp_writer *w, uint64_t addr)
{
	if (w->n == 0) {
		w->prp1 = addr;
	} else {
		if (w->n == 1)
			w->first = addr;
		if (w->idx == NVME_PRPS_PER_PAGE) {
			uint64_t *next = w->page + NVME_PRPS_PER_PAGE;

			next[0] = w->page[NVME_PRPS_PER_PAGE - 1];
			w->page[NVME_PRPS_PER_PAGE - 1] = (uint64_t)(uintptr_t)next;
			w->page = next;
			w->idx = 1;
		}
		w->page[w->idx++] = addr;
	}
	w->n++;
}

/* Every page of [addr, addr + len) after the first entry's. */
static inline void prp_put_range(struct prp_writer *w, uintptr_t addr,
				 size_t len)
{
	uintptr_t end = addr + len;

	prp_put(w, addr);
	for (addr = (addr | (NVME_HOST_PAGE - 1)) + 1; addr < end;
	     addr += NVME_HOST_PAGE)
		prp_put(w, addr);
}

/*
 * PRP rules for a scatter list (Base 4.3.1): the first segment may start
 * at any dword-aligned offset; every later one starts on a page boundary;
 * every one but the last ends on a page boundary.  Returns false when the
 * request's segments break them (then the bounce buffer is used).
 */
static bool nvme_build_prps(struct nvme_queue *q, struct request *rq,
			    struct nvme_command *c)
{
	uint64_t *list = nvme_prp_list(q, (unsigned int)rq->tag);
	struct prp_writer w = { .page = list };
	uintptr_t prev_end = 0;
	struct blk_bio *bio;
	unsigned int i;

	rq_for_each_bio(bio, rq) {
		for (i = 0; i < bio->bi_vcnt; i++) {
			uintptr_t a = (uintptr_t)bio->bi_io_vec[i].iov_base;
			size_t len = bio->bi_io_vec[i].iov_len;

			if (!len)
				continue;
			if (w.n == 0) {
				if (a & 3)
					return false;
			} else if ((prev_end | a) & (NVME_HOST_PAGE - 1)) {
				return false;
			}
			prp_put_range(&w, a, len);
			prev_end = a + len;
		}
	}
	c->prp1 = w.prp1;
	if (w.n <= 1) {
		c->prp2 = 0;
	} else if (w.n == 2) {
		c->prp2 = w.first;
	} else {
		c->prp2 = (uint64_t)(uintptr_t)list;
		NV_STAT_ADD(&q->st.prp_lists, 1);
	}
	return true;
}

/* A contiguous buffer of more than two pages: a PRP list. */
static __attribute__((noinline)) uint64_t nvme_prp_list_contig(struct nvme_queue *q,
							      struct request *rq,
							      uintptr_t a, uint32_t len)
{
	uint64_t *list = nvme_prp_list(q, (unsigned int)rq->tag);
	struct prp_writer w = { .page = list };

	prp_put_range(&w, a, len);
	NV_STAT_ADD(&q->st.prp_lists, 1);
	return (uint64_t)(uintptr_t)list;
}

/*
 * One contiguous buffer: the common case, no list walk.  Inlined: a call
 * here cost 11 instructions per 4 KiB I/O under callgrind.
 */
static inline __attribute__((always_inline)) void
nvme_prps_contig(struct nvme_queue *q, struct request *rq, uintptr_t a,
		 uint32_t len, struct nvme_command *c)
{
	uintptr_t first_end = (a | (NVME_HOST_PAGE - 1)) + 1;

	c->prp1 = a;
	if (a + len <= first_end)
		c->prp2 = 0;
	else if (a + len <= first_end + NVME_HOST_PAGE)
		c->prp2 = first_end;
	else
		c->prp2 = nvme_prp_list_contig(q, rq, a, len);
}

/* Copy the request's data into (@to_buf) or out of the bounce buffer. */
static void nvme_bounce_copy(struct request *rq, char *buf, bool to_buf)
{
	struct blk_bio *bio;
	unsigned int i;

	rq_for_each_bio(bio, rq) {
		for (i = 0; i < bio->bi_vcnt; i++) {
			const struct iovec *v = &bio->bi_io_vec[i];

			if (to_buf)
				memcpy(buf, v->iov_base, v->iov_len);
			else
				memcpy(v->iov_base, buf, v->iov_len);
			buf += v->iov_len;
		}
	}
}

/* ----------------------------------------------------------- fast path */

/* Fill the SQE: both modes store the same values (seed 002). */
static inline void nvme_sqe_write(struct nvme_command *sqe, uint8_t init,
				  const struct nvme_command *c)
{
	if (init == BLK_NVME_SQE_MEMSET) {
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = c->opcode;
		sqe->cid = c->cid;
		sqe->nsid = c->nsid;
		sqe->prp1 = c->prp1;
		sqe->prp2 = c->prp2;
		sqe->cdw10 = c->cdw10;
		sqe->cdw11 = c->cdw11;
		sqe->cdw12 = c->cdw12;
		return;
	}
	/* every field once, ascending: all 64 bytes, no read of the line */
	sqe->opcode = c->opcode;
	sqe->flags = 0;
	sqe->cid = c->cid;
	sqe->nsid = c->nsid;
	sqe->cdw2 = 0;
	sqe->cdw3 = 0;
	sqe->mptr = 0;
	sqe->prp1 = c->prp1;
	sqe->prp2 = c->prp2;
	sqe->cdw10 = c->cdw10;
	sqe->cdw11 = c->cdw11;
	sqe->cdw12 = c->cdw12;
	sqe->cdw13 = 0;
	sqe->cdw14 = 0;
	sqe->cdw15 = 0;
}

void nvme_fail_rq(struct nvme_queue *q, struct request *rq, blk_status_t st)
{
	struct nvme_iod *iod = blk_mq_rq_to_pdu(rq);

	iod->status = NVME_HOST_NO_STATUS;
	rq->native_status = NVME_HOST_ABORTED_SF;
	blk_mq_complete_request(rq, st);
}

/* the precise clock: a Command Retry Delay is a promise (off the fast path) */
static uint64_t nvme_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * An error status without Do Not Retry: send the request again, as Linux's
 * nvme_decide_disposition() does, at once or after the Command Retry Delay
 * its CRD field picks (Base 2.0 4.6.1.2.1: CRDT1-3 of Identify Controller,
 * in 100 ms), while it has retries left.  Returns true when the request
 * was taken (requeued now, or when its delay is over: nvme_retry_due()).
 */
bool nvme_retry_rq(struct nvme_queue *q, struct request *rq, uint16_t sf)
{
	struct nvme_host *nh = q->nh;
	struct nvme_iod *iod = blk_mq_rq_to_pdu(rq);
	unsigned int crd = NVME_SF_CRD(sf);

	if (sf & NVME_SF_DNR)
		return false;
	if (rq->retries >= nh->max_retries) {
		if (nh->max_retries)
			NV_STAT_ADD(&q->st.failed_retries, 1);
		return false;
	}
	rq->retries++;
	NV_STAT_ADD(&q->st.retried, 1);
	if (!crd || !nh->crdt[crd - 1]) {
		blk_mq_requeue_request(rq);
		return true;
	}
	iod->retry_at_ns = nvme_now_ns() + nh->crdt[crd - 1] * 100000000ull;
	iod->retry_next = NULL;
	if (q->retry_tail)
		((struct nvme_iod *)blk_mq_rq_to_pdu(q->retry_tail))->retry_next = rq;
	else
		q->retry_head = rq;
	q->retry_tail = rq;
	return true;
}

/* Requeue the delayed retries whose time has come (any order of due times). */
static void nvme_retry_due(struct nvme_queue *q)
{
	struct request *rq = q->retry_head, *prev = NULL, *next;
	uint64_t now = nvme_now_ns();

	for (; rq; rq = next) {
		struct nvme_iod *iod = blk_mq_rq_to_pdu(rq);

		next = iod->retry_next;
		if (iod->retry_at_ns > now) {
			prev = rq;
			continue;
		}
		if (prev)
			((struct nvme_iod *)blk_mq_rq_to_pdu(prev))->retry_next = next;
		else
			q->retry_head = next;
		if (q->retry_tail == rq)
			q->retry_tail = prev;
		blk_mq_requeue_request(rq);
	}
}

/* The controller is dead: the delayed retries fail too. */
void nvme_fail_retries(struct nvme_queue *q)
{
	struct request *rq = q->retry_head, *next;

	q->retry_head = q->retry_tail = NULL;
	for (; rq; rq = next) {
		next = ((struct nvme_iod *)blk_mq_rq_to_pdu(rq))->retry_next;
		nvme_fail_rq(q, rq, BLK_STS_IOERR);
	}
}

/* A request the driver refuses before it reaches the controller. */
static blk_status_t nvme_refuse(struct request *rq, blk_status_t st)
{
	struct nvme_iod *iod = blk_mq_rq_to_pdu(rq);

	iod->status = NVME_HOST_NO_STATUS;
	rq->native_status = NVME_HOST_ABORTED_SF;
	return st;
}

/* Claim SQ slot @tail for @rq and account it. */
static inline void nvme_sq_push(struct nvme_queue *q, struct request *rq,
				uint32_t next)
{
	q->rqs[rq->tag] = rq;
	q->inflight++;
	q->sq_tail = next;
	q->unrung++;
	/* the SQE is in the SQ: the controller's at the batch's doorbell */
	blk_mq_stage(rq, BLK_STAGE_DEVICE);
}

/*
 * READ/WRITE whose segments break the PRP rules: through the tag's bounce
 * buffer (allocated on first use, then kept).  Returns the PRPs in @c.
 */
static __attribute__((noinline)) blk_status_t
nvme_map_slow(struct nvme_queue *q, struct request *rq, struct nvme_command *c)
{
	struct nvme_iod *iod = blk_mq_rq_to_pdu(rq);
	void **b;

	if (nvme_build_prps(q, rq, c))
		return BLK_STS_OK;
	b = &q->bounce[rq->tag];
	if (!*b) {
		*b = nvme_alloc_pages(q->nh->max_bytes);
		if (!*b)
			return nvme_refuse(rq, BLK_STS_RESOURCE);
	}
	if (rq->op == BLK_OP_WRITE)
		nvme_bounce_copy(rq, *b, true);
	iod->bounced = 1;
	NV_STAT_ADD(&q->st.bounced, 1);
	nvme_prps_contig(q, rq, (uintptr_t)*b, rq->data_len, c);
	return BLK_STS_OK;
}

/* Flush, discard, write zeroes, and reads/writes off the fast path. */
static __attribute__((noinline)) blk_status_t
nvme_queue_slow(struct nvme_queue *q, struct request *rq, uint32_t tail,
		uint32_t next)
{
	struct nvme_iod *iod = blk_mq_rq_to_pdu(rq);
	struct nvme_command c;
	blk_status_t st;

	memset(&c, 0, sizeof(c));
	c.cid = (uint16_t)rq->tag;
	c.nsid = q->nsid;
	switch (rq->op) {
	case BLK_OP_READ:
	case BLK_OP_WRITE: {
		uint64_t slba = rq->offset >> q->lba_shift;

		if (unlikely(rq->data_len > q->max_bytes))
			return nvme_refuse(rq, BLK_STS_INVAL);
		c.opcode = rq->op == BLK_OP_WRITE ? nvme_cmd_write : nvme_cmd_read;
		c.cdw10 = (uint32_t)slba;
		c.cdw11 = (uint32_t)(slba >> 32);
		c.cdw12 = (rq->data_len >> q->lba_shift) - 1;
		if ((rq->cmd_flags & BLK_BIO_FUA) && rq->op == BLK_OP_WRITE)
			c.cdw12 |= NVME_RW_FUA;
		st = nvme_map_slow(q, rq, &c);
		if (st)
			return st;
		break;
	}
	case BLK_OP_FLUSH:
		if (!q->has_vwc) {
			/* no volatile cache: nothing to flush (NVM 3.2.2) */
			iod->status = 0;
			blk_mq_complete_request(rq, BLK_STS_OK);
			return BLK_STS_OK;
		}
		c.opcode = nvme_cmd_flush;
		break;
	case BLK_OP_DISCARD:
		iod->dsm.cattr = 0;
		iod->dsm.nlb = rq->data_len >> q->lba_shift;
		iod->dsm.slba = rq->offset >> q->lba_shift;
		c.opcode = nvme_cmd_dsm;
		c.prp1 = (uint64_t)(uintptr_t)&iod->dsm;
		c.cdw10 = 0;            /* NR: one range, 0's based */
		c.cdw11 = NVME_DSM_AD;
		break;
	case BLK_OP_WRITE_ZEROES: {
		uint64_t slba = rq->offset >> q->lba_shift;
		uint32_t nlb = rq->data_len >> q->lba_shift;

		if (nlb > 65536)
			return nvme_refuse(rq, BLK_STS_INVAL);
		c.opcode = nvme_cmd_write_zeroes;
		c.cdw10 = (uint32_t)slba;
		c.cdw11 = (uint32_t)(slba >> 32);
		c.cdw12 = nlb - 1;
		break;
	}
	default:
		return nvme_refuse(rq, BLK_STS_NOTSUPP);
	}
	iod->status = NVME_HOST_NO_STATUS;
	nvme_sqe_write(&q->sq[tail], q->sqe_init, &c);
	nvme_sq_push(q, rq, next);
	return BLK_STS_OK;
}

/*
 * The fast path: a READ or WRITE in one contiguous dword-aligned buffer.
 * The SQE is built from scalars straight into the slot; everything else
 * goes to nvme_queue_slow(), so that no command structure has its address
 * taken here (it was spilled to the stack and copied field by field).
 */
static blk_status_t nvme_queue_rq(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd)
{
	struct nvme_queue *q = blk_mq_hctx_driver_data(hctx);
	struct request *rq = bd->rq;
	struct nvme_iod *iod = blk_mq_rq_to_pdu(rq);
	const struct blk_bio *bio = rq->bio;
	uint32_t tail = q->sq_tail, next, cdw12;
	struct nvme_command *sqe;
	uint64_t slba, prp1, prp2;
	uintptr_t a, first_end;
	uint8_t opcode;

	if (unlikely(atomic_load_explicit(q->state, memory_order_relaxed) !=
		     q->gen_word)) {
		if (!nvme_queue_recover(q)) {
			if (atomic_load_explicit(q->state, memory_order_relaxed) &
			    NVME_ST_DEAD)
				return nvme_refuse(rq, BLK_STS_IOERR);
			return BLK_STS_RESOURCE;
		}
		tail = q->sq_tail;
	}
	next = tail + 1 == q->depth ? 0 : tail + 1;
	if (unlikely(next == q->sq_head))
		return BLK_STS_RESOURCE;        /* SQ full */
	iod->bounced = 0;
	if (unlikely(rq->op > BLK_OP_WRITE || rq->nr_segments != 1 ||
		     bio->bi_next || rq->data_len > q->max_bytes))
		return nvme_queue_slow(q, rq, tail, next);
	a = (uintptr_t)bio->bi_io_vec[0].iov_base;
	if (unlikely(a & 3))
		return nvme_queue_slow(q, rq, tail, next);

	opcode = rq->op == BLK_OP_WRITE ? nvme_cmd_write : nvme_cmd_read;
	slba = rq->offset >> q->lba_shift;
	cdw12 = (rq->data_len >> q->lba_shift) - 1;
	if ((rq->cmd_flags & BLK_BIO_FUA) && rq->op == BLK_OP_WRITE)
		cdw12 |= NVME_RW_FUA;
	first_end = (a | (NVME_HOST_PAGE - 1)) + 1;
	prp1 = a;
	if (a + rq->data_len <= first_end)
		prp2 = 0;
	else if (a + rq->data_len <= first_end + NVME_HOST_PAGE)
		prp2 = first_end;
	else
		prp2 = nvme_prp_list_contig(q, rq, a, rq->data_len);

	iod->status = NVME_HOST_NO_STATUS;
	sqe = &q->sq[tail];
	if (q->sqe_init == BLK_NVME_SQE_MEMSET) {
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = opcode;
		sqe->cid = (uint16_t)rq->tag;
		sqe->nsid = q->nsid;
		sqe->prp1 = prp1;
		sqe->prp2 = prp2;
		sqe->cdw10 = (uint32_t)slba;
		sqe->cdw11 = (uint32_t)(slba >> 32);
		sqe->cdw12 = cdw12;
	} else {
		/* every field once, ascending: all 64 bytes */
		sqe->opcode = opcode;
		sqe->flags = 0;
		sqe->cid = (uint16_t)rq->tag;
		sqe->nsid = q->nsid;
		sqe->cdw2 = 0;
		sqe->cdw3 = 0;
		sqe->mptr = 0;
		sqe->prp1 = prp1;
		sqe->prp2 = prp2;
		sqe->cdw10 = (uint32_t)slba;
		sqe->cdw11 = (uint32_t)(slba >> 32);
		sqe->cdw12 = cdw12;
		sqe->cdw13 = 0;
		sqe->cdw14 = 0;
		sqe->cdw15 = 0;
	}
	nvme_sq_push(q, rq, next);
	return BLK_STS_OK;
}

static inline void nvme_ring_sq(struct nvme_queue *q)
{
	q->unrung = 0;
	NV_STAT_ADD(&q->st.sq_doorbells, 1);
	nvme_ctrl_write32(q->ctrl, q->sq_db, q->sq_tail);
}

/*
 * The doorbell, once per batch.  blk-mq calls commit_rqs() after every
 * batch in which queue_rq() accepted a request (bd->last or not), so this
 * is the only place the SQ tail is written on the I/O path.
 */
static void nvme_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct nvme_queue *q = blk_mq_hctx_driver_data(hctx);

	if (q->unrung)
		nvme_ring_sq(q);
}

/*
 * Consume every new CQE (phase tag match, acquire load of DW3) and
 * complete its request.  Returns the number consumed; writes no doorbell.
 */
static inline int nvme_process_cq(struct nvme_queue *q)
{
	struct nvme_completion *cq = q->cq;
	uint32_t head = q->cq_head, depth = q->depth;
	uint8_t phase = q->cq_phase;
	int n = 0, ok = 0;

	for (;;) {
		struct nvme_completion *cqe = &cq[head];
		uint32_t dw3 = nvme_cqe_dw3(cqe);
		uint16_t st = (uint16_t)(dw3 >> 16), cid = (uint16_t)dw3, sf;
		struct request *rq;

		if ((st & NVME_CQE_PHASE) != phase)
			break;
		q->sq_head = cqe->sq_head;
		if (++head == depth) {
			head = 0;
			phase ^= 1;
		}
		n++;
		if (unlikely(cid >= q->nr_tags || !(rq = q->rqs[cid]))) {
			if (!q->warned_cid) {
				q->warned_cid = true;
				fprintf(stderr,
					"blkstack: nvme: queue %u: completion for CID %u that is not in flight; ignored (logged once)\n",
					q->qid, cid);
			}
			continue;
		}
		q->rqs[cid] = NULL;
		q->inflight--;
		blk_mq_stage(rq, BLK_STAGE_DEVICE_DONE);
		sf = nvme_cqe_sf(st);
		((struct nvme_iod *)blk_mq_rq_to_pdu(rq))->status = sf;
		if (unlikely(((struct nvme_iod *)blk_mq_rq_to_pdu(rq))->bounced) &&
		    !sf && rq->op == BLK_OP_READ)
			nvme_bounce_copy(rq, q->bounce[rq->tag], false);
		if (likely(!sf)) {
			ok++;
			blk_mq_complete_request(rq, BLK_STS_OK);
		} else {
			rq->native_status = sf;
			NV_STAT_ADD(&q->st.errors, 1);
			if (!nvme_retry_rq(q, rq, sf))
				blk_mq_complete_request(rq, blk_nvme_status_to_blk(sf));
		}
	}
	q->cq_head = head;
	q->cq_phase = phase;
	/* the controller makes progress: resets in a row start again */
	if (ok && unlikely(atomic_load_explicit(&q->nh->resets_no_progress,
						memory_order_relaxed)))
		atomic_store_explicit(&q->nh->resets_no_progress, 0,
				      memory_order_relaxed);
	return n;
}

int nvme_reap_cq(struct nvme_queue *q)
{
	int n = nvme_process_cq(q);

	if (n)
		NV_STAT_ADD(&q->st.cqes, (uint64_t)n);
	return n;
}

static int nvme_poll(struct blk_mq_hw_ctx *hctx)
{
	struct nvme_queue *q = blk_mq_hctx_driver_data(hctx);
	int n;

	if (unlikely(atomic_load_explicit(q->state, memory_order_relaxed) !=
		     q->gen_word) &&
	    !nvme_queue_recover(q))
		return 0;
	n = nvme_process_cq(q);
	if (n) {
		NV_STAT_ADD(&q->st.cqes, (uint64_t)n);
		NV_STAT_ADD(&q->st.cq_doorbells, 1);
		nvme_ctrl_write32(q->ctrl, q->cq_db, q->cq_head);
		q->empty_polls = 0;
	} else if (q->inflight) {
		/*
		 * Nothing new while commands are outstanding: write the same
		 * head again, which lets an inline controller reap its
		 * backend (nvme_ctrl.h); a no-op for real hardware.
		 */
		nvme_ctrl_write32(q->ctrl, q->cq_db, q->cq_head);
		/*
		 * A controller thread that shares this CPU (more threads
		 * than cores) cannot post while we spin: give up the CPU
		 * now and then.  Off the fast path: only empty polls count.
		 */
		if (unlikely(++q->empty_polls >= NVME_EMPTY_POLLS_YIELD)) {
			q->empty_polls = 0;
			sched_yield();
		}
	}
	if (unlikely(q->retry_head))
		nvme_retry_due(q);
	return n;
}

/* ------------------------------------------------------ hctx, device */

static int nvme_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			  unsigned int idx)
{
	struct nvme_host *nh = data;
	struct nvme_queue *q = &nh->queues[idx];

	q->nr_tags = nh->nr_tags;
	q->rqs = calloc(q->nr_tags, sizeof(*q->rqs));
	q->bounce = calloc(q->nr_tags, sizeof(*q->bounce));
	q->prp_pages = nvme_alloc_pages((size_t)q->nr_tags *
					nh->prp_pages_per_tag * NVME_HOST_PAGE);
	if (!q->rqs || !q->bounce || !q->prp_pages)
		return -ENOMEM; /* freed by nvme_host_free() */
	blk_mq_hctx_set_driver_data(hctx, q);
	return 0;
}

/*
 * Stop the controller touching host memory, then free it: a normal
 * shutdown (Base 3.6.1) when the device was up, then an owned controller
 * is destroyed and a borrowed one is left disabled.
 */
static void nvme_host_free(struct nvme_host *nh)
{
	unsigned int i;

	if (nh->ctrl) {
		/* as nvme-pci on removal: a normal shutdown flushes the cache */
		if (nh->dev && !(atomic_load(&nh->state) & NVME_ST_DEAD) &&
		    nvme_ctrl_shutdown(nh))
			fprintf(stderr, "blkstack: nvme: shutdown did not complete within CAP.TO (%u ms)\n",
				nh->timeout_ms);
		if (nh->cfg.own_ctrl && nh->dev)
			nvme_ctrl_destroy(nh->ctrl);
		else
			nvme_ctrl_disable(nh);
	}
	for (i = 0; nh->queues && i < nh->nr_io_queues; i++) {
		struct nvme_queue *q = &nh->queues[i];
		unsigned int t;

		nvme_free_pages(q->sq, (size_t)nh->io_depth * sizeof(struct nvme_command));
		nvme_free_pages(q->cq, (size_t)nh->io_depth * sizeof(struct nvme_completion));
		free(q->rqs);
		nvme_free_pages(q->prp_pages, (size_t)q->nr_tags *
				nh->prp_pages_per_tag * NVME_HOST_PAGE);
		for (t = 0; q->bounce && t < q->nr_tags; t++)
			nvme_free_pages(q->bounce[t], nh->max_bytes);
		free(q->bounce);
	}
	free(nh->queues);
	nvme_free_pages(nh->aq.sq, (size_t)nh->aq.depth * sizeof(struct nvme_command));
	nvme_free_pages(nh->aq.cq, (size_t)nh->aq.depth * sizeof(struct nvme_completion));
	blk_mutex_destroy(&nh->admin_lock);
	free(nh);
}

static void nvme_free(void *data)
{
	nvme_host_free(data);
}

static const struct blk_mq_ops nvme_mq_ops = {
	.queue_rq = nvme_queue_rq,
	.commit_rqs = nvme_commit_rqs,
	.poll = nvme_poll,
	.timeout = nvme_timeout,
	.init_hctx = nvme_init_hctx,
	.free = nvme_free,
};

static int nvme_check_config(const struct blk_nvme_config *cfg, uint64_t cap,
			     struct blk_nvme_config *c, char *err, size_t errlen)
{
	uint32_t mqes = NVME_CAP_MQES(cap) + 1;

	*c = *cfg;
	if (!c->ctrl) {
		snprintf(err, errlen, "nvme: ctrl: a controller is required");
		return -EINVAL;
	}
	if (!c->admin_queue_entries)
		c->admin_queue_entries = 32;
	if (!c->admin_timeout_ms)
		c->admin_timeout_ms = 5000;
	if (!c->io_queue_entries)
		c->io_queue_entries = mqes < 1024 ? mqes : 1024;
	if (c->admin_queue_entries < 2 || c->admin_queue_entries > 4096) {
		snprintf(err, errlen, "nvme: admin_queue_entries=%u: allowed 2..4096",
			 c->admin_queue_entries);
		return -EINVAL;
	}
	if (c->io_queue_entries < 2 || c->io_queue_entries > mqes) {
		snprintf(err, errlen,
			 "nvme: io_queue_entries=%u: allowed 2..%u (CAP.MQES+1)",
			 c->io_queue_entries, mqes);
		return -EINVAL;
	}
	if (!c->queue.queue_depth)
		c->queue.queue_depth = c->io_queue_entries - 1;
	if (c->queue.queue_depth > c->io_queue_entries - 1) {
		snprintf(err, errlen,
			 "nvme: queue_depth=%u: allowed 1..%u (io_queue_entries - 1)",
			 c->queue.queue_depth, c->io_queue_entries - 1);
		return -EINVAL;
	}
	if (c->sqe_init != BLK_NVME_SQE_MEMSET && c->sqe_init != BLK_NVME_SQE_FIELDS) {
		snprintf(err, errlen, "nvme: sqe_init=%d: allowed 0 (memset), 1 (fields)",
			 (int)c->sqe_init);
		return -EINVAL;
	}
	if (!c->queue.nr_hw_queues)
		c->queue.nr_hw_queues = 1;
	if (c->queue.nr_hw_queues > NVME_CTRL_MAX_IO_QUEUES) {
		snprintf(err, errlen, "nvme: nr_hw_queues=%u: allowed 1..%u",
			 c->queue.nr_hw_queues, NVME_CTRL_MAX_IO_QUEUES);
		return -EINVAL;
	}
	if (NVME_CAP_MPSMIN(cap) > 0) {
		snprintf(err, errlen,
			 "nvme: CAP.MPSMIN=%u: the controller does not take 4 KiB host pages",
			 NVME_CAP_MPSMIN(cap));
		return -EINVAL;
	}
	if (!(NVME_CAP_CSS(cap) & NVME_CAP_CSS_NVM)) {
		snprintf(err, errlen, "nvme: CAP.CSS: the NVM command set is not supported");
		return -EINVAL;
	}
	return 0;
}

int blk_nvme_create(const struct blk_nvme_config *cfg, struct blk_dev **dev,
		    char *err, size_t errlen)
{
	struct blk_dev_config qc;
	struct nvme_host *nh;
	uint32_t got = 0, i, entries, max_sectors;
	uint64_t cap;
	int ret;

	err[0] = '\0';
	if (!cfg->ctrl) {
		snprintf(err, errlen, "nvme: ctrl: a controller is required");
		return -EINVAL;
	}
	nh = calloc(1, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	blk_mutex_init(&nh->admin_lock, "&nvme_host->admin_lock", -1);
	cap = nvme_ctrl_read64(cfg->ctrl, NVME_REG_CAP);
	ret = nvme_check_config(cfg, cap, &nh->cfg, err, errlen);
	if (ret) {
		blk_mutex_destroy(&nh->admin_lock);
		free(nh);
		return ret;
	}
	nh->ctrl = cfg->ctrl;
	nh->max_retries = nh->cfg.max_retries == BLK_NVME_RETRIES_NONE ? 0 :
			  nh->cfg.max_retries ? nh->cfg.max_retries : 5;
	nh->cap = cap;
	nh->dstrd = NVME_CAP_DSTRD(cap);
	nh->timeout_ms = NVME_CAP_TO(cap) * 500u;
	if (!nh->timeout_ms)
		nh->timeout_ms = 500;
	nh->io_depth = nh->cfg.io_queue_entries;
	nh->nr_tags = nh->cfg.queue.queue_depth;
	atomic_init(&nh->state, NVME_ST_GEN_ONE);
	nh->aq.depth = (uint16_t)nh->cfg.admin_queue_entries;
	nh->aq.sq = nvme_alloc_pages((size_t)nh->aq.depth * sizeof(struct nvme_command));
	nh->aq.cq = nvme_alloc_pages((size_t)nh->aq.depth * sizeof(struct nvme_completion));
	if (!nh->aq.sq || !nh->aq.cq) {
		ret = -ENOMEM;
		goto fail;
	}

	blk_mutex_lock(&nh->admin_lock);
	ret = nvme_ctrl_enable(nh, err, errlen);
	if (!ret)
		ret = nvme_identify(nh, err, errlen);
	if (!ret)
		ret = nvme_set_queue_count(nh, nh->cfg.queue.nr_hw_queues, &got,
					   err, errlen);
	if (ret) {
		blk_mutex_unlock(&nh->admin_lock);
		goto fail;
	}
	nh->nr_io_queues = got;
	nh->queues = aligned_alloc(64, sizeof(*nh->queues) * got);
	if (!nh->queues) {
		blk_mutex_unlock(&nh->admin_lock);
		ret = -ENOMEM;
		goto fail;
	}
	memset(nh->queues, 0, sizeof(*nh->queues) * got);
	/* largest request: the caller's max_sectors within what the device takes */
	max_sectors = nh->cfg.queue.max_sectors ? nh->cfg.queue.max_sectors : 2560;
	if ((uint64_t)max_sectors << 9 > nh->max_bytes)
		max_sectors = nh->max_bytes >> 9;
	nh->max_bytes = max_sectors << 9;
	entries = nh->max_bytes / NVME_HOST_PAGE + 1;   /* + first-page offset */
	nh->prp_pages_per_tag = 1;
	if (entries - 1 > NVME_PRPS_PER_PAGE)
		nh->prp_pages_per_tag += (entries - 1 - NVME_PRPS_PER_PAGE +
					  NVME_PRPS_PER_PAGE - 2) /
					 (NVME_PRPS_PER_PAGE - 1);
	for (i = 0; i < got; i++) {
		struct nvme_queue *q = &nh->queues[i];

		q->nh = nh;
		q->ctrl = nh->ctrl;
		q->qid = (uint16_t)(i + 1);
		q->depth = nh->io_depth;
		q->sq = nvme_alloc_pages((size_t)nh->io_depth * sizeof(struct nvme_command));
		q->cq = nvme_alloc_pages((size_t)nh->io_depth * sizeof(struct nvme_completion));
		if (!q->sq || !q->cq) {
			ret = -ENOMEM;
			break;
		}
		q->sq_db = nvme_sq_tail_doorbell(q->qid, nh->dstrd);
		q->cq_db = nvme_cq_head_doorbell(q->qid, nh->dstrd);
		q->cq_phase = 1;
		q->nsid = nh->nsid;
		q->lba_shift = (uint8_t)nh->lba_shift;
		q->sqe_init = (uint8_t)nh->cfg.sqe_init;
		q->has_vwc = nh->vwc;
		q->gen_word = NVME_ST_GEN_ONE;
		q->state = &nh->state;
		q->max_bytes = nh->max_bytes;
		ret = nvme_create_io_queue_locked(nh, q, err, errlen);
		if (ret)
			break;
	}
	blk_mutex_unlock(&nh->admin_lock);
	if (ret)
		goto fail;

	qc = nh->cfg.queue;
	qc.name = "nvme";
	qc.capacity = nh->nsze << nh->lba_shift;
	qc.logical_block_size = 1u << nh->lba_shift;
	qc.max_sectors = max_sectors;
	qc.nr_hw_queues = got;
	qc.queue_depth = nh->nr_tags;
	qc.cmd_size = sizeof(struct nvme_iod);
	qc.can_flush = nh->vwc;
	qc.can_discard = nh->oncs & NVME_ONCS_DSM;
	qc.can_write_zeroes = nh->oncs & NVME_ONCS_WRITE_ZEROES;
	/* Write Zeroes NLB is 16 bits: 65536 blocks per command */
	qc.max_write_zeroes_sectors = 65536u << (nh->lba_shift - 9);
	qc.stores_data = true;
	qc.ops = &nvme_mq_ops;
	qc.driver_data = nh;
	ret = blk_dev_create(&qc, &nh->dev);
	if (ret) {
		snprintf(err, errlen, "nvme: cannot set up the block device: %s",
			 strerror(-ret));
		goto fail;
	}
	*dev = nh->dev;
	return 0;
fail:
	if (!err[0])
		snprintf(err, errlen, "nvme: %s", strerror(-ret));
	nh->dev = NULL;   /* nvme_host_free() then only disables the controller */
	nvme_host_free(nh);
	return ret;
}

static struct nvme_host *nvme_host_of(struct blk_dev *dev)
{
	return blk_dev_driver_data(dev);
}

struct nvme_ctrl *blk_nvme_ctrl(struct blk_dev *dev)
{
	return nvme_host_of(dev)->ctrl;
}

void blk_nvme_get_stats(struct blk_dev *dev, struct blk_nvme_stats *st)
{
	struct nvme_host *nh = nvme_host_of(dev);
	unsigned int i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < nh->nr_io_queues; i++) {
		const struct nvme_queue_stats *s = &nh->queues[i].st;

		st->sq_doorbells += NV_STAT_READ(&s->sq_doorbells);
		st->cq_doorbells += NV_STAT_READ(&s->cq_doorbells);
		st->cqes += NV_STAT_READ(&s->cqes);
		st->prp_lists += NV_STAT_READ(&s->prp_lists);
		st->bounced += NV_STAT_READ(&s->bounced);
		st->timeouts += NV_STAT_READ(&s->timeouts);
		st->requeued += NV_STAT_READ(&s->requeued);
		st->retried += NV_STAT_READ(&s->retried);
		st->failed_retries += NV_STAT_READ(&s->failed_retries);
		st->errors += NV_STAT_READ(&s->errors);
	}
	st->aborts = atomic_load_explicit(&nh->aborts, memory_order_relaxed);
	st->abort_ok = atomic_load_explicit(&nh->abort_ok, memory_order_relaxed);
	st->resets = atomic_load_explicit(&nh->resets, memory_order_relaxed);
}
