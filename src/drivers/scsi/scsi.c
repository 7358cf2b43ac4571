// SPDX-License-Identifier: MIT
/*
 * SCSI disk driver (blkstack/scsi.h): sd's role (the probe at attach, CDBs
 * from requests), the midlayer's completion decision (scsi_decide()), and
 * a loopback LLD that hands each command to the SCSI target core on the
 * submitting thread.  No host lock: each hardware queue has its own target
 * queue, and the target core's own state is per queue or atomic.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blkstack/blk_mq.h"
#include "blkstack/scsi.h"
#include "blkstack/scsi_tgt.h"

#define unlikely(x) __builtin_expect(!!(x), 0)


struct scsi_hq;

struct scsi_disk {
	struct scsi_tgt *tgt;
	struct scsi_hq **hq;    /* each hardware queue's, for the counters */
	unsigned int nr_hq;
	uint32_t lbs;
	uint64_t nr_blocks;
	uint32_t max_retries;
};

struct scsi_hq {
	struct scsi_disk *sd;
	struct scsi_tgt_queue *tq;
	struct blk_scsi_stats st; /* this queue's; written by its thread */
};

/* Per request (cmd_size): the command, its CDB, UNMAP's parameter list,
 * and the data as one iovec array over all its bios. */
struct scsi_pdu {
	struct scsi_tgt_cmd cmd;
	struct request *rq;
	struct blk_mq_hw_ctx *hctx;
	bool in_submit;         /* done() inside scsi_tgt_submit() */
	bool retry_now;         /* ... and it wants the command sent again */
	uint8_t cdb[16];
	uint8_t param[24];
	struct iovec iov[];
};

/* ------------------------------------------------- completion decision */

enum scsi_disposition scsi_decide(uint8_t status, const struct scsi_sense *s,
				  uint32_t retries, uint32_t max_retries,
				  blk_status_t *blk)
{
	bool may_retry = retries < max_retries;

	*blk = BLK_STS_IOERR;
	switch (status) {
	case SAM_STAT_GOOD:
	case SAM_STAT_CONDITION_MET:
		*blk = BLK_STS_OK;
		return SCSI_DONE;
	case SAM_STAT_BUSY:
	case SAM_STAT_TASK_SET_FULL:
		return may_retry ? SCSI_RETRY : SCSI_DONE;
	case SAM_STAT_CHECK_CONDITION:
		break;
	default:
		return SCSI_DONE;
	}
	if (!s)
		return SCSI_DONE;
	switch (s->key) {
	case SK_NO_SENSE:
	case SK_RECOVERED_ERROR:
		*blk = BLK_STS_OK;
		return SCSI_DONE;
	case SK_UNIT_ATTENTION:
	case SK_NOT_READY:
		return may_retry ? SCSI_RETRY : SCSI_DONE;
	case SK_ABORTED_COMMAND:
		if (s->asc_ascq == ASC_COMMAND_TIMEOUT)
			*blk = BLK_STS_TIMEOUT;
		return may_retry ? SCSI_RETRY : SCSI_DONE;
	case SK_MEDIUM_ERROR:
		*blk = BLK_STS_MEDIUM;
		return SCSI_DONE;
	case SK_DATA_PROTECT:
		*blk = s->asc_ascq == ASC_SPACE_ALLOC_FAILED_WP ? BLK_STS_NOSPC :
								  BLK_STS_TARGET;
		return SCSI_DONE;
	case SK_ILLEGAL_REQUEST:
		*blk = BLK_STS_TARGET;
		return SCSI_DONE;
	default:
		return SCSI_DONE;
	}
}

static void scsi_done(struct scsi_tgt_cmd *c)
{
	struct scsi_pdu *pdu = (struct scsi_pdu *)c;
	struct request *rq = pdu->rq;
	struct scsi_hq *hq = blk_mq_hctx_driver_data(pdu->hctx);
	struct scsi_sense s, *sp = NULL;
	blk_status_t st;

	if (unlikely(c->status == SAM_STAT_CHECK_CONDITION)) {
		hq->st.check_conditions++;
		if (!scsi_parse_sense(c->sense, c->sense_len, &s)) {
			sp = &s;
			hq->st.sense_keys[s.key & 0x0f]++;
		}
	}
	if (scsi_decide(c->status, sp, rq->retries, hq->sd->max_retries, &st) ==
	    SCSI_RETRY) {
		rq->retries++;
		hq->st.retries++;
		if (pdu->in_submit)
			pdu->retry_now = true; /* queue_rq answers RESOURCE */
		else
			blk_mq_requeue_request(rq);
		return;
	}
	/* a data command that moved less than asked and says nothing */
	if (st == BLK_STS_OK && c->dir != SCSI_DIR_NONE && (c->resid || c->overflow))
		st = BLK_STS_IOERR;
	if (st != BLK_STS_OK)
		rq->native_status = (uint32_t)c->status << 24 |
				    (sp ? (uint32_t)sp->key << 16 | sp->asc_ascq : 0);
	blk_mq_complete_request(rq, st);
}

/* ------------------------------------------------------------- sd role */

static void cdb_rw(uint8_t *cdb, bool write, uint64_t lba, uint32_t nb,
		   bool fua, uint8_t *len)
{
	memset(cdb, 0, 16);
	if (lba <= 0xffffffffull && nb <= 0xffff) {
		cdb[0] = write ? WRITE_10 : READ_10;
		scsi_put_be32(cdb + 2, (uint32_t)lba);
		scsi_put_be16(cdb + 7, (uint16_t)nb);
		*len = 10;
	} else {
		cdb[0] = write ? WRITE_16 : READ_16;
		scsi_put_be64(cdb + 2, lba);
		scsi_put_be32(cdb + 10, nb);
		*len = 16;
	}
	if (fua)
		cdb[1] |= 0x08;
}

static blk_status_t scsi_queue_rq(struct blk_mq_hw_ctx *hctx,
				  const struct blk_mq_queue_data *bd)
{
	struct scsi_hq *hq = blk_mq_hctx_driver_data(hctx);
	struct request *rq = bd->rq;
	struct scsi_pdu *pdu = blk_mq_rq_to_pdu(rq);
	struct scsi_tgt_cmd *c = &pdu->cmd;
	uint64_t lba = rq->offset / hq->sd->lbs;
	uint32_t nb = rq->data_len / hq->sd->lbs;
	unsigned int n = 0, i;
	struct blk_bio *bio;
	int ret;

	/* only the inputs: scsi_tgt_submit() sets every result (no memset
	 * of the 252-byte sense buffer per I/O) */
	pdu->rq = rq;
	pdu->hctx = hctx;
	c->lun = 0;
	c->nexus = 0;
	c->cdb = pdu->cdb;
	c->done = scsi_done;
	c->dir = SCSI_DIR_NONE;
	c->iov = NULL;
	c->iovcnt = 0;
	c->xfer_len = 0;
	switch (rq->op) {
	case BLK_OP_READ:
	case BLK_OP_WRITE:
		cdb_rw(pdu->cdb, rq->op == BLK_OP_WRITE, lba, nb,
		       rq->cmd_flags & BLK_BIO_FUA, &c->cdb_len);
		rq_for_each_bio(bio, rq)
			for (i = 0; i < bio->bi_vcnt; i++)
				pdu->iov[n++] = bio->bi_io_vec[i];
		c->iov = pdu->iov;
		c->iovcnt = n;
		c->xfer_len = rq->data_len;
		c->dir = rq->op == BLK_OP_WRITE ? SCSI_DIR_TO_DEVICE :
						  SCSI_DIR_FROM_DEVICE;
		break;
	case BLK_OP_FLUSH:
		memset(pdu->cdb, 0, 10);
		pdu->cdb[0] = SYNCHRONIZE_CACHE_10;
		c->cdb_len = 10;
		break;
	case BLK_OP_DISCARD:
		/* UNMAP, one block descriptor (SBC-3 5.28) */
		memset(pdu->cdb, 0, 10);
		pdu->cdb[0] = UNMAP;
		scsi_put_be16(pdu->cdb + 7, 24);
		memset(pdu->param, 0, sizeof(pdu->param));
		scsi_put_be16(pdu->param, 22);
		scsi_put_be16(pdu->param + 2, 16);
		scsi_put_be64(pdu->param + 8, lba);
		scsi_put_be32(pdu->param + 16, nb);
		c->cdb_len = 10;
		pdu->iov[0].iov_base = pdu->param;
		pdu->iov[0].iov_len = sizeof(pdu->param);
		c->iov = pdu->iov;
		c->iovcnt = 1;
		c->xfer_len = sizeof(pdu->param);
		c->dir = SCSI_DIR_TO_DEVICE;
		break;
	case BLK_OP_WRITE_ZEROES:
		/* WRITE SAME (16) with NDOB: zeros, no data (SBC-3 5.42) */
		memset(pdu->cdb, 0, 16);
		pdu->cdb[0] = WRITE_SAME_16;
		pdu->cdb[1] = 0x01;
		scsi_put_be64(pdu->cdb + 2, lba);
		scsi_put_be32(pdu->cdb + 10, nb);
		c->cdb_len = 16;
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	switch (rq->op) {
	case BLK_OP_READ: hq->st.reads++; break;
	case BLK_OP_WRITE: hq->st.writes++; break;
	case BLK_OP_FLUSH: hq->st.flushes++; break;
	case BLK_OP_DISCARD: hq->st.unmaps++; break;
	default: hq->st.write_sames++; break;
	}
	pdu->in_submit = true;
	pdu->retry_now = false;
	ret = scsi_tgt_submit(hq->tq, c);
	pdu->in_submit = false;
	if (unlikely(ret == -EAGAIN || ret == -EBUSY))
		hq->st.busy++;
	/* no tag on the disk, host busy (the LLD's SCSI_MLQUEUE_HOST_BUSY),
	 * or a retry decided inline: the core requeues it */
	if (ret == -EAGAIN || ret == -EBUSY || pdu->retry_now)
		return BLK_STS_RESOURCE;
	if (ret)
		return BLK_STS_IOERR;
	return BLK_STS_OK;
}

static int scsi_poll(struct blk_mq_hw_ctx *hctx)
{
	struct scsi_hq *hq = blk_mq_hctx_driver_data(hctx);

	return scsi_tgt_poll(hq->tq);
}

static int scsi_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			  unsigned int idx)
{
	struct scsi_hq *hq = calloc(1, sizeof(*hq));
	int ret;

	if (!hq)
		return -ENOMEM;
	hq->sd = data;
	ret = scsi_tgt_queue_attach(hq->sd->tgt, &hq->tq);
	if (ret) {
		free(hq);
		return ret;
	}
	blk_mq_hctx_set_driver_data(hctx, hq);
	hq->sd->hq[idx] = hq;
	if (idx + 1 > hq->sd->nr_hq)
		hq->sd->nr_hq = idx + 1;
	return 0;
}

static void scsi_exit_hctx(struct blk_mq_hw_ctx *hctx, unsigned int idx)
{
	struct scsi_hq *hq = blk_mq_hctx_driver_data(hctx);

	if (!hq)
		return;
	hq->sd->hq[idx] = NULL;
	scsi_tgt_queue_detach(hq->tq);
	free(hq);
	blk_mq_hctx_set_driver_data(hctx, NULL);
}

static void scsi_free(void *data)
{
	struct scsi_disk *sd = data;

	scsi_tgt_destroy(sd->tgt); /* closes the lower device */
	free(sd->hq);
	free(sd);
}

static const struct blk_mq_ops scsi_mq_ops = {
	.queue_rq = scsi_queue_rq,
	.poll = scsi_poll,
	.init_hctx = scsi_init_hctx,
	.exit_hctx = scsi_exit_hctx,
	.free = scsi_free,
};

/* ------------------------------------------------------------- probe */

static void probe_done(struct scsi_tgt_cmd *c)
{
	*(bool *)c->priv = true;
}

#define PROBE_READY_NS (100ull * 1000000000) /* sd_spinup_disk()'s ~100 s */

static uint64_t probe_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * One probe command, to its end; GOOD after at most a few unit attentions.
 * NOT READY, BECOMING READY (04/01) and busy are waited out for up to
 * PROBE_READY_NS; a command not answered in @wait_ns is -ETIMEDOUT (the
 * target has dropped it: nothing refers to @c any more).
 */
static int probe(struct scsi_tgt_queue *q, const uint8_t *cdb, uint8_t len,
		 void *buf, uint32_t xfer, struct scsi_tgt_cmd *c, uint64_t wait_ns)
{
	struct iovec iov = { .iov_base = buf, .iov_len = xfer };
	uint64_t ready_by = probe_now() + PROBE_READY_NS;
	int tries = 0;

	for (;;) {
		bool ended = false;
		uint64_t end_by;
		int ret;

		memset(c, 0, sizeof(*c));
		c->cdb = cdb;
		c->cdb_len = len;
		c->iov = &iov;
		c->iovcnt = buf ? 1 : 0;
		c->xfer_len = xfer;
		c->dir = buf ? SCSI_DIR_FROM_DEVICE : SCSI_DIR_NONE;
		c->done = probe_done;
		c->priv = &ended;
		while ((ret = scsi_tgt_submit(q, c)) == -EAGAIN || ret == -EBUSY) {
			if (ret == -EBUSY && probe_now() > ready_by)
				return -EBUSY;
			scsi_tgt_poll(q);
		}
		if (ret)
			return ret;
		end_by = probe_now() + wait_ns;
		while (!ended) {
			scsi_tgt_poll(q);
			if (!ended && probe_now() > end_by)
				return -ETIMEDOUT;
		}
		if (c->status == SAM_STAT_GOOD)
			return 0;
		{
			struct scsi_sense s;

			if (c->status != SAM_STAT_CHECK_CONDITION ||
			    scsi_parse_sense(c->sense, c->sense_len, &s))
				return -EIO;
			/* a unit attention is expected once after power on */
			if (s.key == SK_UNIT_ATTENTION && ++tries < 4)
				continue;
			/* spinning up (tur_ms_to_ready): wait, as sd does */
			if (s.key == SK_NOT_READY && s.asc_ascq == 0x0401 &&
			    probe_now() < ready_by) {
				struct timespec ms = { 0, 1000000 };

				nanosleep(&ms, NULL);
				continue;
			}
			return -EIO;
		}
	}
}

static const char *probe_sense(int ret, const struct scsi_tgt_cmd *c, char *buf,
			       size_t len)
{
	struct scsi_sense s;

	if (ret == -ETIMEDOUT || ret == -EBUSY)
		snprintf(buf, len, "%s", ret == -EBUSY ? "busy (host busy) for 100 s" :
			 "no answer (the command timed out)");
	else if (c->status == SAM_STAT_CHECK_CONDITION &&
	    !scsi_parse_sense(c->sense, c->sense_len, &s))
		snprintf(buf, len, "CHECK CONDITION, sense key 0x%x, ASC/ASCQ %02x/%02x",
			 s.key, s.asc_ascq >> 8, s.asc_ascq & 0xff);
	else
		snprintf(buf, len, "status 0x%02x", c->status);
	return buf;
}

int blk_scsi_create(const struct blk_scsi_config *cfg, struct blk_dev **dev,
		    char *err, size_t errlen)
{
	static const uint8_t tur[6] = { TEST_UNIT_READY };
	static const uint8_t inq[6] = { INQUIRY, 0, 0, 0, 96, 0 };
	static const uint8_t vpd_b0[6] = { INQUIRY, 1, 0xb0, 0, 64, 0 };
	static const uint8_t vpd_b2[6] = { INQUIRY, 1, 0xb2, 0, 8, 0 };
	static const uint8_t rc16[16] = { SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16,
					  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0 };
	static const uint8_t ms[6] = { MODE_SENSE_6, 0x08, 0x08, 0, 32, 0 };
	struct scsi_tgt_config tc = { 0 };
	uint64_t wait_ns;
	struct blk_dev_config qc = *cfg->queue;
	struct blk_dev *lower = cfg->lower;
	struct scsi_tgt_queue *q = NULL;
	struct scsi_tgt_cmd c;
	struct scsi_disk *sd;
	uint8_t b[96], b0[64], b2[8], cap[32], mode[32];
	uint32_t max_xfer, max_unmap, max_ws;
	char what[128];
	int ret;

	sd = calloc(1, sizeof(*sd));
	if (!sd) {
		blk_dev_close(lower);
		return -ENOMEM;
	}
	sd->max_retries = cfg->max_retries;
	if (cfg->tgt) {
		tc = *cfg->tgt;
	} else {
		tc.every_nth = cfg->every_nth;
		tc.opts = cfg->opts;
	}
	tc.luns = &lower;
	tc.nr_luns = 1;
	tc.own_luns = true;
	tc.id = 1;
	/* a probe command's answer: the request timeout, and the longest
	 * completion delay the target has */
	wait_ns = (uint64_t)(qc.rq_timeout_ms ? qc.rq_timeout_ms : 30000) * 1000000 +
		  SCSI_TGT_MAX_DELAY_NS;
	ret = scsi_tgt_create(&tc, &sd->tgt, err, errlen);
	if (ret) {
		blk_dev_close(lower);
		free(sd);
		return ret;
	}
	ret = scsi_tgt_queue_attach(sd->tgt, &q);
	if (ret) {
		snprintf(err, errlen, "scsi: cannot attach a queue to the target: %s",
			 strerror(-ret));
		goto fail;
	}
	/* sd_probe()'s order: ready, what it is, its limits, its size, its cache */
	if ((ret = probe(q, tur, 6, NULL, 0, &c, wait_ns)) ||
	    (ret = probe(q, inq, 6, b, sizeof(b), &c, wait_ns))) {
		snprintf(err, errlen, "scsi: %s: %s", tur[0] == c.cdb[0] ?
			 "TEST UNIT READY" : "INQUIRY",
			 probe_sense(ret, &c, what, sizeof(what)));
		goto fail;
	}
	if ((b[0] & 0x1f) != 0x00) {
		snprintf(err, errlen, "scsi: LUN 0 is not a direct-access device (type 0x%02x)",
			 b[0] & 0x1f);
		ret = -ENODEV;
		goto fail;
	}
	if ((ret = probe(q, vpd_b0, 6, b0, sizeof(b0), &c, wait_ns)) ||
	    (ret = probe(q, vpd_b2, 6, b2, sizeof(b2), &c, wait_ns)) ||
	    (ret = probe(q, rc16, 16, cap, sizeof(cap), &c, wait_ns)) ||
	    (ret = probe(q, ms, 6, mode, sizeof(mode), &c, wait_ns))) {
		snprintf(err, errlen, "scsi: probe command 0x%02x: %s", c.cdb[0],
			 probe_sense(ret, &c, what, sizeof(what)));
		goto fail;
	}
	scsi_tgt_queue_detach(q);
	q = NULL;
	sd->lbs = scsi_get_be32(cap + 8);
	sd->nr_blocks = scsi_get_be64(cap) + 1;
	max_xfer = scsi_get_be32(b0 + 8);
	max_unmap = scsi_get_be32(b0 + 20);
	max_ws = (uint32_t)scsi_get_be64(b0 + 36);
	qc.name = "scsi";
	qc.capacity = sd->nr_blocks * sd->lbs;
	qc.logical_block_size = sd->lbs;
	if (max_xfer) {
		uint64_t s = (uint64_t)max_xfer * sd->lbs / 512;

		if (!qc.max_sectors || qc.max_sectors > s)
			qc.max_sectors = (uint32_t)(s > 65536 ? 65536 : s);
	}
	/* LBPME and LBPU: UNMAP; LBPWS: WRITE SAME (16) */
	qc.can_discard = (cap[14] & 0x80) && (b2[5] & 0x80) && max_unmap;
	qc.max_discard_sectors = (uint32_t)((uint64_t)max_unmap * sd->lbs / 512 >
					    0xffffffffu ? 0xffffffffu :
					    (uint64_t)max_unmap * sd->lbs / 512);
	qc.can_write_zeroes = (b2[5] & 0x40) && max_ws;
	qc.max_write_zeroes_sectors = (uint32_t)((uint64_t)max_ws * sd->lbs / 512 >
						 0xffffffffu ? 0xffffffffu :
						 (uint64_t)max_ws * sd->lbs / 512);
	/* WCE: the caching page follows the 4-byte header (DBD: no block
	 * descriptor; regression: reading past one never saw WCE, so the disk
	 * took no flush and no FUA) */
	qc.can_flush = mode[4 + 2] & 0x04;
	/* LBPRZ: what it unmaps reads as zeros, so it keeps what it is
	 * written (the loopback's disk is the target core's) */
	{
		struct blk_dev_info li;

		blk_dev_get_info(lower, &li);
		qc.stores_data = li.stores_data;
	}
	if (!qc.max_segments)
		qc.max_segments = 128;
	qc.cmd_size = (uint32_t)(sizeof(struct scsi_pdu) +
				 qc.max_segments * sizeof(struct iovec));
	qc.ops = &scsi_mq_ops;
	qc.driver_data = sd;
	sd->hq = calloc(qc.nr_hw_queues ? qc.nr_hw_queues : 1, sizeof(*sd->hq));
	if (!sd->hq) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = blk_dev_create(&qc, dev);
	if (ret) {
		snprintf(err, errlen, "scsi: cannot create the block device: %s",
			 strerror(-ret));
		goto fail;
	}
	return 0;
fail:
	if (q)
		scsi_tgt_queue_detach(q);
	scsi_tgt_destroy(sd->tgt);
	free(sd->hq);
	free(sd);
	return ret;
}

void blk_scsi_get_stats(struct blk_dev *dev, struct blk_scsi_stats *st)
{
	struct scsi_disk *sd = blk_dev_driver_data(dev);
	struct scsi_tgt_stats ts;
	unsigned int i, k;

	_Static_assert(sizeof(*st) % sizeof(uint64_t) == 0,
		       "blk_scsi_stats: uint64_t counters only");
	memset(st, 0, sizeof(*st));
	for (i = 0; i < sd->nr_hq; i++) {
		const uint64_t *q = (const uint64_t *)&sd->hq[i]->st;

		for (k = 0; k < sizeof(*st) / sizeof(uint64_t); k++)
			((uint64_t *)st)[k] += q[k];
	}
	scsi_tgt_get_stats(sd->tgt, &ts);
	st->injected = ts.injected;
	st->unit_attentions = ts.unit_attentions;
}
