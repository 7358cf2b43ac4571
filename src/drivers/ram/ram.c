// SPDX-License-Identifier: MIT
/*
 * ram driver - see blkstack/ram.h.  Completes every request inline, in
 * queue_rq(): the copy is the work.
 */
#include <errno.h>
#include <stdlib.h>

#include "blkstack/ram.h"
#include "page_store.h"

struct ram_dev {
	struct page_store ps;
};

static blk_status_t ram_queue_rq(struct blk_mq_hw_ctx *hctx,
				 const struct blk_mq_queue_data *bd)
{
	struct ram_dev *rd = blk_mq_hctx_driver_data(hctx);
	struct request *rq = bd->rq;
	blk_status_t st = BLK_STS_OK;

	blk_mq_stage(rq, BLK_STAGE_DEVICE);
	switch (rq->op) {
	case BLK_OP_READ:
	case BLK_OP_WRITE:
		if (ps_rq_rw(&rd->ps, rq))
			st = BLK_STS_NOSPC;
		break;
	case BLK_OP_DISCARD:
	case BLK_OP_WRITE_ZEROES:
		ps_zero(&rd->ps, rq->offset, rq->data_len);
		break;
	case BLK_OP_FLUSH:
		break; /* memory has no volatile cache to flush */
	default:
		st = BLK_STS_NOTSUPP;
	}
	blk_mq_stage(rq, BLK_STAGE_DEVICE_DONE);
	blk_mq_complete_request(rq, st);
	return BLK_STS_OK;
}

static int ram_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			 unsigned int idx)
{
	blk_mq_hctx_set_driver_data(hctx, data);
	return 0;
}

static void ram_free(void *data)
{
	struct ram_dev *rd = data;

	ps_destroy(&rd->ps);
	free(rd);
}

static int ram_block_status(void *data, uint64_t offset, uint64_t len,
			    struct blk_extent *ext, unsigned int nr_ext,
			    unsigned int flags)
{
	struct ram_dev *rd = data;

	return ps_block_status(&rd->ps, offset, len, ext, nr_ext);
}

static const struct blk_mq_ops ram_mq_ops = {
	.queue_rq = ram_queue_rq,
	.block_status = ram_block_status,
	.init_hctx = ram_init_hctx,
	.free = ram_free,
};

int blk_ram_create(const struct blk_ram_config *cfg, struct blk_dev **dev)
{
	struct blk_dev_config qc = cfg->queue;
	struct ram_dev *rd;
	int ret;

	rd = calloc(1, sizeof(*rd));
	if (!rd)
		return -ENOMEM;
	ret = ps_init(&rd->ps, qc.capacity);
	if (ret) {
		free(rd);
		return ret;
	}
	qc.name = "ram";
	qc.ops = &ram_mq_ops;
	qc.driver_data = rd;
	qc.cmd_size = 0;
	qc.can_flush = true;
	qc.can_discard = true;
	qc.can_write_zeroes = true;
	qc.stores_data = true;
	ret = blk_dev_create(&qc, dev);
	if (ret)
		ram_free(rd);
	return ret;
}

uint64_t blk_ram_allocated_bytes(struct blk_dev *dev)
{
	struct ram_dev *rd = blk_dev_driver_data(dev);

	return ps_data_bytes(&rd->ps);
}
