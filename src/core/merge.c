// SPDX-License-Identifier: MIT
/*
 * Merge decisions (the kernel's blk-merge.c, for contiguous READ/WRITE).
 *
 * Only reads and writes merge: a flush is a barrier, and discards and
 * write-zeroes go to drivers that may not take multi-range commands.
 * Requests with different FUA flags never merge: FUA applies to a whole
 * request.  Nor do requests of different I/O priorities (Linux's
 * blk_rq_merge_ok() and attempt_merge() compare rq->ioprio; here the
 * first bios', blk_rq_ioprio()):
 * a merged request could carry only one of them.
 */
#include "blk-mq.h"

static inline bool blk_op_mergeable(unsigned int op)
{
	return op == BLK_OP_READ || op == BLK_OP_WRITE;
}

enum elv_merge blk_try_merge(const struct blk_dev *dev,
			     const struct request *rq,
			     const struct blk_bio *bio)
{
	uint64_t max_bytes = (uint64_t)dev->cfg.max_sectors << 9;

	if (rq->op != bio->bi_op || !blk_op_mergeable(bio->bi_op) ||
	    rq->cmd_flags != bio->bi_flags || !rq->bio ||
	    rq->bio->bi_ioprio != bio->bi_ioprio)
		return ELEVATOR_NO_MERGE;
	/*
	 * Only into the submitting ctx's own requests: a request is ended on
	 * its ctx's thread, which calls every bio's bi_end_io and counts
	 * them in its in-flight total (regression: mq-deadline on a queue
	 * shared by several threads merged one thread's bio into another's
	 * request; in-flight counts went negative and jobs never drained).
	 */
	if (rq->mq_ctx != blk_current_ctx)
		return ELEVATOR_NO_MERGE;
	if ((uint64_t)rq->data_len + bio->bi_size > max_bytes ||
	    (unsigned int)rq->nr_segments + bio->bi_vcnt > dev->cfg.max_segments)
		return ELEVATOR_NO_MERGE;
	if (rq->offset + rq->data_len == bio->bi_offset)
		return ELEVATOR_BACK_MERGE;
	if (bio->bi_offset + bio->bi_size == rq->offset)
		return ELEVATOR_FRONT_MERGE;
	return ELEVATOR_NO_MERGE;
}

void blk_rq_merge_bio(struct request *rq, struct blk_bio *bio,
		      enum elv_merge how)
{
	if (how == ELEVATOR_BACK_MERGE) {
		bio->bi_next = NULL;
		rq->biotail->bi_next = bio;
		rq->biotail = bio;
	} else {
		bio->bi_next = rq->bio;
		rq->bio = bio;
		rq->offset = bio->bi_offset;
	}
	rq->data_len += bio->bi_size;
	rq->nr_segments += bio->bi_vcnt;
}

bool blk_rq_merge_ok_rq(const struct blk_dev *dev, const struct request *rq,
			const struct request *next)
{
	uint64_t max_bytes = (uint64_t)dev->cfg.max_sectors << 9;

	if (rq->op != next->op || !blk_op_mergeable(rq->op) ||
	    rq->cmd_flags != next->cmd_flags ||
	    !rq->bio || !next->bio || rq->bio->bi_ioprio != next->bio->bi_ioprio ||
	    rq->mq_ctx != next->mq_ctx)
		return false;
	if (rq->offset + rq->data_len != next->offset)
		return false;
	if ((uint64_t)rq->data_len + next->data_len > max_bytes ||
	    (unsigned int)rq->nr_segments + next->nr_segments >
		    dev->cfg.max_segments)
		return false;
	return true;
}
