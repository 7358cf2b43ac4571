// SPDX-License-Identifier: MIT
/*
 * uring_sync_rq(), minimal: until the thread-pool engine's sync_io.c
 * (short transfers, errno mapping, block devices) replaces it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/uio.h>
#include <unistd.h>

#include "uring_int.h"

blk_status_t uring_sync_rq(struct uring_dev *ud, struct request *rq)
{
	struct blk_bio *bio;

	switch (rq->op) {
	case BLK_OP_FLUSH:
		return fdatasync(ud->fd) ? BLK_STS_IOERR : BLK_STS_OK;
	case BLK_OP_DISCARD:
	case BLK_OP_WRITE_ZEROES:
		return fallocate(ud->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 (off_t)rq->offset, rq->data_len) ?
		       BLK_STS_IOERR : BLK_STS_OK;
	case BLK_OP_READ:
	case BLK_OP_WRITE:
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	rq_for_each_bio(bio, rq) {
		ssize_t r = rq->op == BLK_OP_WRITE ?
			pwritev2(ud->fd, bio->bi_io_vec, bio->bi_vcnt,
				 (off_t)bio->bi_offset,
				 (rq->cmd_flags & BLK_BIO_FUA) ? RWF_DSYNC : 0) :
			preadv2(ud->fd, bio->bi_io_vec, bio->bi_vcnt,
				(off_t)bio->bi_offset, 0);

		if (r != (ssize_t)bio->bi_size)
			return BLK_STS_IOERR;
	}
	return BLK_STS_OK;
}
