// SPDX-License-Identifier: MIT
/* The pieces the NBD and iSCSI servers share (export.h). */
#include <errno.h>

#include "export.h"

static void flush_end_io(struct blk_bio *bio)
{
	*(int *)bio->bi_private = 1;
}

const char *export_dev_flush(struct blk_dev *dev)
{
	struct blk_dev_info info;
	struct blk_mq_ctx *ctx;
	int done = 0;
	struct blk_bio bio = { .bi_op = BLK_OP_FLUSH, .bi_end_io = flush_end_io,
			       .bi_private = &done };

	blk_dev_get_info(dev, &info);
	if (!info.can_flush)
		return "nothing to flush";
	if (blk_ctx_attach(dev, &ctx))
		return "flush failed: no queue";
	if (!blk_submit(ctx, &bio))
		blk_drain(ctx, 0);
	blk_ctx_detach(ctx);
	return !done ? "flush failed: not submitted" :
	       bio.bi_status ? "flush failed" : "flushed";
}

int export_sendmsg_all(int fd, struct msghdr *mh, uint64_t *tx_bytes)
{
	for (;;) {
		ssize_t n;

		while (mh->msg_iovlen && !mh->msg_iov->iov_len) {
			mh->msg_iov++;
			mh->msg_iovlen--;
		}
		if (!mh->msg_iovlen)
			return 0;
		n = sendmsg(fd, mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		*tx_bytes += (uint64_t)n;
		while (n && mh->msg_iovlen) {
			if ((size_t)n >= mh->msg_iov->iov_len) {
				n -= (ssize_t)mh->msg_iov->iov_len;
				mh->msg_iov++;
				mh->msg_iovlen--;
			} else {
				mh->msg_iov->iov_base = (uint8_t *)mh->msg_iov->iov_base + n;
				mh->msg_iov->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
}
