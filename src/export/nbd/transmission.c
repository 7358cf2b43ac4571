// SPDX-License-Identifier: MIT
/*
 * NBD transmission phase - see blkstack/nbd.h.  Written from doc/proto.md
 * ("Transmission", "Request types", "Structured reply types", "Error
 * values") and the WRITE_ZEROES, BLOCK_STATUS and FAST_ZERO extensions.
 *
 * The engine never touches a socket.  Bytes come in through rx_buf() /
 * rx_done(): small requests are parsed from one receive buffer (many
 * headers per recv() call); a large WRITE payload goes straight into its
 * request's buffer.  Each request takes a slot (at most max_inflight), is
 * submitted to the device as one or more bios inside a plug, and its reply
 * (headers in the slot, data in the slot's buffer) joins the tx queue,
 * which the caller drains with one sendmsg() per batch of replies.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "blkstack/metrics.h"
#include "blkstack/nbd.h"
#include "wire.h"

#define RX_CAP (256u << 10)      /* receive buffer */
#define RX_DIRECT_MIN (64u << 10) /* payload left to receive in place */
#define ZBUF_SIZE (1u << 20)     /* NO_HOLE zeroes: one write per MiB */
#define READ_EXTENTS 8           /* hole/data chunks per structured read */
#define BS_EXTENTS 64            /* descriptors per BLOCK_STATUS reply */
#define SLOT_HDR 384             /* reply headers per slot */
#define SLOT_TXV 24
#define KEEP_BUF (1u << 20)      /* larger buffers are freed after use */
#define BUF_ALIGN 4096           /* O_DIRECT media */
/*
 * READ and WRITE data held by one connection at once.  Without it a client
 * could pin max_inflight x 32 MiB (2 GiB at the default 64) per
 * connection; with it a connection stops parsing requests until replies
 * have gone out.  A single request of up to NBD_MAX_PAYLOAD always runs.
 */
#define DATA_BUDGET (64u << 20)

struct nbd_slot {
	struct blk_nbd_conn *conn;
	struct nbd_slot *next;          /* free list, tx queue, retry list */
	struct blk_nbd_request req;
	uint32_t err;                   /* wire error, 0 while fine */
	uint32_t reply_err;             /* the error the reply carries */
	uint64_t t0_ns;                 /* header arrived (metrics only) */
	blk_status_t status;            /* first failed bio */
	bool flush_after;               /* FUA on TRIM/WRITE_ZEROES */
	bool on_retry;
	/* device I/O */
	struct blk_bio bio;             /* the usual single bio */
	struct blk_bio *bios;           /* &bio, or an array */
	unsigned int nbios, next_submit, pending;
	struct iovec iov;
	uint8_t *buf;
	size_t cap;
	uint32_t got;                   /* WRITE payload bytes received */
	/* structured read: the allocation map taken before the read */
	struct blk_extent ext[READ_EXTENTS];
	int next_ext;
	/* reply */
	uint8_t hdr[SLOT_HDR];
	struct iovec txv[SLOT_TXV];
	int txn, txi;
};

struct blk_nbd_conn {
	const struct blk_nbd_export *exp;
	struct blk_nbd_session s;
	struct blk_dev_info info;
	struct blk_mq_ctx *ctx;
	struct nbd_slot *slots;
	struct nbd_slot *free;
	unsigned int nr_slots, nr_free;
	unsigned int dev_busy;          /* slots with bios not yet completed */
	uint64_t data_bytes;            /* READ/WRITE lengths of taken slots */
	uint64_t nr_requests;           /* request headers received */
	struct nbd_slot *tx_head, *tx_tail;
	struct nbd_slot *retry_head, *retry_tail;
	/* receive side */
	uint8_t *rx;
	size_t rx_start, rx_end;
	struct nbd_slot *payload;       /* WRITE whose data is arriving */
	uint64_t discard;               /* payload bytes to drop */
	struct nbd_slot *discard_slot;  /* its error reply, sent after */
	bool closing, shutdown, plugged;
	bool dying;                     /* destroy: complete, submit nothing */
	bool broken;                    /* bad request magic: framing lost */
	/* metrics (NULL: off); rx_ns: the clock at the rx_done() call that
	 * brought the headers being parsed, 0 until read */
	struct blk_metrics_conn *m;
	uint64_t rx_ns;
};

static uint8_t *zbuf; /* ZBUF_SIZE zeroes, shared, never written */
static pthread_once_t zbuf_once = PTHREAD_ONCE_INIT;

static void zbuf_init(void)
{
	zbuf = calloc(1, ZBUF_SIZE);
}

uint16_t blk_nbd_export_flags(const struct blk_nbd_export *exp,
			      bool structured)
{
	struct blk_dev_info info;
	uint16_t f = NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_CACHE;

	blk_dev_get_info(exp->dev, &info);
	if (exp->read_only)
		f |= NBD_FLAG_READ_ONLY;
	if (info.can_flush)
		f |= NBD_FLAG_SEND_FLUSH | NBD_FLAG_SEND_FUA;
	if (info.can_discard && !exp->read_only)
		f |= NBD_FLAG_SEND_TRIM;
	if (info.can_write_zeroes && !exp->read_only)
		f |= NBD_FLAG_SEND_WRITE_ZEROES | NBD_FLAG_SEND_FAST_ZERO;
	if (structured)
		f |= NBD_FLAG_SEND_DF;
	if (info.stores_data)
		f |= NBD_FLAG_CAN_MULTI_CONN;
	return f;
}

int blk_nbd_parse_request(const uint8_t *buf, struct blk_nbd_request *req)
{
	if (get_be32(buf) != NBD_REQUEST_MAGIC)
		return -EPROTO;
	req->flags = get_be16(buf + 4);
	req->type = get_be16(buf + 6);
	req->handle = get_be64(buf + 8);
	req->offset = get_be64(buf + 16);
	req->length = get_be32(buf + 24);
	return 0;
}

uint32_t blk_nbd_check_request(const struct blk_nbd_request *req,
			       const struct blk_nbd_session *s,
			       const struct blk_dev_info *info, bool read_only)
{
	uint16_t allowed = s->tflags & NBD_FLAG_SEND_FUA ? NBD_CMD_FLAG_FUA : 0;
	uint64_t cap = info->capacity, mask = info->logical_block_size - 1;
	bool past = req->offset > cap || req->length > cap - req->offset;
	bool aligned = !(req->offset & mask) && !(req->length & mask);

	switch (req->type) {
	case NBD_CMD_READ:
		if (s->structured)
			allowed |= NBD_CMD_FLAG_DF;
		break;
	case NBD_CMD_WRITE:
	case NBD_CMD_CACHE:
	case NBD_CMD_DISC:
		break;
	case NBD_CMD_FLUSH:
		if (!(s->tflags & NBD_FLAG_SEND_FLUSH))
			return NBD_EINVAL;
		break;
	case NBD_CMD_TRIM:
		if (read_only)
			return NBD_EPERM;
		if (!(s->tflags & NBD_FLAG_SEND_TRIM))
			return NBD_EINVAL;
		break;
	case NBD_CMD_WRITE_ZEROES:
		if (read_only)
			return NBD_EPERM;
		if (!(s->tflags & NBD_FLAG_SEND_WRITE_ZEROES))
			return NBD_EINVAL;
		allowed |= NBD_CMD_FLAG_NO_HOLE | NBD_CMD_FLAG_FAST_ZERO;
		break;
	case NBD_CMD_BLOCK_STATUS:
		if (!s->base_allocation)
			return NBD_EINVAL;
		allowed |= NBD_CMD_FLAG_REQ_ONE;
		break;
	default:
		return NBD_EINVAL;
	}
	if (req->flags & ~allowed)
		return NBD_EINVAL;

	switch (req->type) {
	case NBD_CMD_DISC:
	case NBD_CMD_FLUSH:
		return req->offset || req->length ? NBD_EINVAL : 0;
	case NBD_CMD_WRITE:
		if (read_only)
			return NBD_EPERM;
		if (req->length > NBD_MAX_PAYLOAD)
			return NBD_EOVERFLOW;
		/* fall through */
	case NBD_CMD_TRIM:
	case NBD_CMD_WRITE_ZEROES:
		if (!req->length || !aligned)
			return NBD_EINVAL;
		return past ? NBD_ENOSPC : 0;
	case NBD_CMD_READ:
		if (req->length > NBD_MAX_PAYLOAD)
			return NBD_EOVERFLOW;
		if (!req->length || !aligned)
			return NBD_EINVAL;
		return past ? NBD_EINVAL : 0;
	default: /* CACHE, BLOCK_STATUS */
		return !req->length || past ? NBD_EINVAL : 0;
	}
}

uint32_t blk_nbd_errno(blk_status_t status)
{
	switch (status) {
	case BLK_STS_NOSPC:
		return NBD_ENOSPC;
	case BLK_STS_INVAL:
		return NBD_EINVAL;
	case BLK_STS_NOTSUPP:
		return NBD_ENOTSUP;
	default:
		return NBD_EIO;
	}
}

/* ------------------------------------------------------------ replies */

static void tx_queue(struct blk_nbd_conn *c, struct nbd_slot *sl)
{
	sl->txi = 0;
	sl->next = NULL;
	if (c->tx_tail)
		c->tx_tail->next = sl;
	else
		c->tx_head = sl;
	c->tx_tail = sl;
}

static void txv_add(struct nbd_slot *sl, const void *p, size_t len)
{
	sl->txv[sl->txn].iov_base = (void *)p;
	sl->txv[sl->txn].iov_len = len;
	sl->txn++;
}

/* A structured chunk header at @h; returns the header length (20). */
static size_t chunk_hdr(uint8_t *h, const struct nbd_slot *sl, uint16_t flags,
			uint16_t type, uint32_t len)
{
	put_be32(h, NBD_STRUCTURED_REPLY_MAGIC);
	put_be16(h + 4, flags);
	put_be16(h + 6, type);
	put_be64(h + 8, sl->req.handle);
	put_be32(h + 16, len);
	return 20;
}

static void reply_simple(struct blk_nbd_conn *c, struct nbd_slot *sl,
			 uint32_t err, bool data)
{
	put_be32(sl->hdr, NBD_SIMPLE_REPLY_MAGIC);
	put_be32(sl->hdr + 4, err);
	put_be64(sl->hdr + 8, sl->req.handle);
	sl->txn = 0;
	txv_add(sl, sl->hdr, 16);
	if (data)
		txv_add(sl, sl->buf, sl->req.length);
	tx_queue(c, sl);
}

/* An error: a structured ERROR chunk when negotiated, else simple. */
static void reply_error(struct blk_nbd_conn *c, struct nbd_slot *sl,
			uint32_t err)
{
	size_t n;

	sl->reply_err = err;
	if (!c->s.structured) {
		reply_simple(c, sl, err, false);
		return;
	}
	n = chunk_hdr(sl->hdr, sl, NBD_REPLY_FLAG_DONE, NBD_REPLY_TYPE_ERROR, 6);
	put_be32(sl->hdr + n, err);
	put_be16(sl->hdr + n + 4, 0); /* no message */
	sl->txn = 0;
	txv_add(sl, sl->hdr, n + 6);
	tx_queue(c, sl);
}

static void reply_ok(struct blk_nbd_conn *c, struct nbd_slot *sl)
{
	reply_simple(c, sl, 0, false);
}

/* A successful read: simple reply, or hole/data chunks per the map. */
static void reply_read(struct blk_nbd_conn *c, struct nbd_slot *sl)
{
	uint64_t off = sl->req.offset, left = sl->req.length;
	size_t h = 0;
	int i;

	if (!c->s.structured) {
		reply_simple(c, sl, 0, true);
		return;
	}
	sl->txn = 0;
	for (i = 0; i < sl->next_ext && left; i++) {
		uint64_t len = sl->ext[i].length;
		bool last;

		if (len > left)
			len = left;
		last = len == left;
		if ((sl->ext[i].flags & BLK_EXTENT_ZERO) &&
		    !(sl->req.flags & NBD_CMD_FLAG_DF)) {
			h += chunk_hdr(sl->hdr + h, sl,
				       last ? NBD_REPLY_FLAG_DONE : 0,
				       NBD_REPLY_TYPE_OFFSET_HOLE, 12);
			put_be64(sl->hdr + h, off);
			put_be32(sl->hdr + h + 8, (uint32_t)len);
			txv_add(sl, sl->hdr + h - 20, 32);
			h += 12;
		} else {
			/* data: extend over following data extents */
			while (i + 1 < sl->next_ext &&
			       (!(sl->ext[i + 1].flags & BLK_EXTENT_ZERO) ||
				(sl->req.flags & NBD_CMD_FLAG_DF)) &&
			       len < left) {
				i++;
				len += sl->ext[i].length;
				if (len > left)
					len = left;
			}
			if (i + 1 >= sl->next_ext)
				len = left; /* the unmapped rest is data too */
			last = len == left;
			h += chunk_hdr(sl->hdr + h, sl,
				       last ? NBD_REPLY_FLAG_DONE : 0,
				       NBD_REPLY_TYPE_OFFSET_DATA,
				       (uint32_t)(8 + len));
			put_be64(sl->hdr + h, off);
			txv_add(sl, sl->hdr + h - 20, 28);
			h += 8;
			txv_add(sl, sl->buf + (off - sl->req.offset), len);
		}
		off += len;
		left -= len;
	}
	if (left) { /* no map (or it ran out): the rest as one data chunk */
		h += chunk_hdr(sl->hdr + h, sl, NBD_REPLY_FLAG_DONE,
			       NBD_REPLY_TYPE_OFFSET_DATA, (uint32_t)(8 + left));
		put_be64(sl->hdr + h, off);
		txv_add(sl, sl->hdr + h - 20, 28);
		txv_add(sl, sl->buf + (off - sl->req.offset), left);
	}
	tx_queue(c, sl);
}

/* NBD_CMD_BLOCK_STATUS: answered at once from the device's map. */
static void do_block_status(struct blk_nbd_conn *c, struct nbd_slot *sl)
{
	struct blk_extent ext[BS_EXTENTS];
	unsigned int max = sl->req.flags & NBD_CMD_FLAG_REQ_ONE ? 1 : BS_EXTENTS;
	int n, i;
	size_t h;

	n = blk_dev_block_status(c->exp->dev, sl->req.offset, sl->req.length,
				 ext, max, 0);
	if (n < 1) {
		/* spec: a status of 0 for the whole range is always safe */
		ext[0].length = sl->req.length;
		ext[0].flags = 0;
		n = 1;
	}
	h = chunk_hdr(sl->hdr, sl, NBD_REPLY_FLAG_DONE,
		      NBD_REPLY_TYPE_BLOCK_STATUS, (uint32_t)(4 + 8 * n));
	put_be32(sl->hdr + h, NBD_META_ID_BASE_ALLOCATION);
	h += 4;
	/* descriptors go in the data buffer: 64 of them pass SLOT_HDR */
	if (sl->cap < (size_t)8 * n) {
		free(sl->buf);
		sl->buf = NULL;
		if (posix_memalign((void **)&sl->buf, BUF_ALIGN, 8 * BS_EXTENTS)) {
			sl->cap = 0;
			reply_error(c, sl, NBD_ENOMEM);
			return;
		}
		sl->cap = 8 * BS_EXTENTS;
	}
	for (i = 0; i < n; i++) {
		put_be32(sl->buf + 8 * i, (uint32_t)ext[i].length);
		put_be32(sl->buf + 8 * i + 4,
			 ext[i].flags & (NBD_STATE_HOLE | NBD_STATE_ZERO));
	}
	sl->txn = 0;
	txv_add(sl, sl->hdr, h);
	txv_add(sl, sl->buf, (size_t)8 * n);
	tx_queue(c, sl);
}

/* ------------------------------------------------------------ device */

static void slot_finish(struct nbd_slot *sl);

static void slot_end_io(struct blk_bio *bio)
{
	struct nbd_slot *sl = bio->bi_private;

	if (bio->bi_status && !sl->status)
		sl->status = bio->bi_status;
	sl->pending--;
	if (!sl->pending && sl->next_submit == sl->nbios)
		slot_finish(sl);
}

static void retry_add(struct blk_nbd_conn *c, struct nbd_slot *sl)
{
	if (sl->on_retry)
		return;
	sl->on_retry = true;
	sl->next = NULL;
	if (c->retry_tail)
		c->retry_tail->next = sl;
	else
		c->retry_head = sl;
	c->retry_tail = sl;
}

/* Submit what is left of @sl's bios; false when out of tags. */
static bool slot_submit(struct blk_nbd_conn *c, struct nbd_slot *sl)
{
	while (sl->next_submit < sl->nbios) {
		struct blk_bio *b = &sl->bios[sl->next_submit];
		int ret = blk_submit(c->ctx, b);

		if (ret == -EAGAIN)
			return false;
		sl->next_submit++;
		if (ret) {
			if (!sl->status)
				sl->status = ret == -ENOSPC ? BLK_STS_NOSPC :
					     ret == -EOPNOTSUPP ? BLK_STS_NOTSUPP :
								  BLK_STS_INVAL;
			continue;
		}
		sl->pending++;
	}
	if (!sl->pending)
		slot_finish(sl);
	return true;
}

static void bio_init(struct blk_bio *b, struct nbd_slot *sl, uint8_t op,
		     uint64_t off, uint32_t len, const struct iovec *iov)
{
	memset(b, 0, sizeof(*b));
	b->bi_op = op;
	b->bi_offset = off;
	b->bi_size = len;
	b->bi_io_vec = iov;
	b->bi_vcnt = iov ? 1 : 0;
	b->bi_end_io = slot_end_io;
	b->bi_private = sl;
}

static void slot_start(struct blk_nbd_conn *c, struct nbd_slot *sl)
{
	c->dev_busy++;
	sl->next_submit = 0;
	sl->pending = 0;
	sl->status = BLK_STS_OK;
	if (!slot_submit(c, sl))
		retry_add(c, sl);
}

static void slot_finish(struct nbd_slot *sl)
{
	struct blk_nbd_conn *c = sl->conn;

	if (!sl->status && sl->flush_after && !c->dying) {
		sl->flush_after = false;
		if (sl->bios != &sl->bio)
			free(sl->bios);
		bio_init(&sl->bio, sl, BLK_OP_FLUSH, 0, 0, NULL);
		sl->bios = &sl->bio;
		sl->nbios = 1;
		sl->next_submit = 0;
		if (!slot_submit(c, sl))
			retry_add(c, sl);
		return;
	}
	c->dev_busy--;
	if (sl->bios != &sl->bio)
		free(sl->bios);
	sl->bios = NULL;
	if (sl->status) {
		reply_error(c, sl, blk_nbd_errno(sl->status));
		return;
	}
	if (sl->req.type == NBD_CMD_READ)
		reply_read(c, sl);
	else
		reply_ok(c, sl);
}

static int slot_buf(struct nbd_slot *sl, size_t len)
{
	if (sl->cap >= len)
		return 0;
	free(sl->buf);
	sl->buf = NULL;
	sl->cap = 0;
	if (posix_memalign((void **)&sl->buf, BUF_ALIGN, len ? len : 1))
		return -ENOMEM;
	sl->cap = len;
	return 0;
}

/*
 * Largest bio of @op the device takes, in bytes, a multiple of the logical
 * block size; 0: no limit.  The block core does not split bios (a driver
 * such as nvme fails one past its limits), so the server does.
 */
static uint64_t dev_bio_limit(const struct blk_dev_info *info, uint8_t op)
{
	uint64_t bytes;

	switch (op) {
	case BLK_OP_READ:
	case BLK_OP_WRITE:
		bytes = (uint64_t)info->max_sectors << 9;
		break;
	case BLK_OP_DISCARD:
		bytes = (uint64_t)info->max_discard_sectors << 9;
		break;
	case BLK_OP_WRITE_ZEROES:
		bytes = (uint64_t)info->max_write_zeroes_sectors << 9;
		break;
	default:
		return 0;
	}
	if (!bytes)
		return 0;
	bytes &= ~(uint64_t)(info->logical_block_size - 1);
	return bytes ? bytes : info->logical_block_size;
}

/*
 * Set up the request's bios, each at most @limit bytes (0: one bio).
 * @buf: the data of a READ or WRITE, advanced bio by bio; @zero: every bio
 * writes the shared zero buffer (NO_HOLE write zeroes; @limit is then at
 * most ZBUF_SIZE).  Return: 0 or -ENOMEM.
 */
static int slot_split(struct nbd_slot *sl, uint8_t op, uint8_t bflags,
		      uint64_t limit, uint8_t *buf, bool zero)
{
	uint64_t off = sl->req.offset, left = sl->req.length;
	bool data = op == BLK_OP_READ || op == BLK_OP_WRITE;
	struct iovec *iov = NULL;
	unsigned int n, i;

	if (!limit || limit >= left) {
		if (data) {
			sl->iov.iov_base = zero ? zbuf : buf;
			sl->iov.iov_len = left;
		}
		bio_init(&sl->bio, sl, op, off, (uint32_t)left,
			 data ? &sl->iov : NULL);
		sl->bio.bi_flags = bflags;
		sl->bios = &sl->bio;
		sl->nbios = 1;
		return 0;
	}
	n = (unsigned int)((left + limit - 1) / limit);
	sl->bios = calloc(n, sizeof(*sl->bios) + (data ? sizeof(*iov) : 0));
	if (!sl->bios)
		return -ENOMEM;
	if (data)
		iov = (struct iovec *)(sl->bios + n);
	for (i = 0; i < n; i++) {
		uint32_t len = left > limit ? (uint32_t)limit : (uint32_t)left;

		if (data) {
			iov[i].iov_base = zero ? zbuf : buf;
			iov[i].iov_len = len;
			if (!zero)
				buf += len;
		}
		bio_init(&sl->bios[i], sl, op, off, len, data ? &iov[i] : NULL);
		sl->bios[i].bi_flags = bflags;
		off += len;
		left -= len;
	}
	sl->nbios = n;
	return 0;
}

/* Run a validated request (WRITE with its payload in sl->buf). */
static void slot_run(struct blk_nbd_conn *c, struct nbd_slot *sl)
{
	const struct blk_nbd_request *r = &sl->req;
	bool fua = (r->flags & NBD_CMD_FLAG_FUA) && c->info.can_flush;
	uint8_t bflags = fua ? BLK_BIO_FUA : 0;

	sl->bios = &sl->bio;
	sl->nbios = 1;
	sl->flush_after = false;
	switch (r->type) {
	case NBD_CMD_READ:
		sl->next_ext = 0;
		if (c->s.structured && !(r->flags & NBD_CMD_FLAG_DF)) {
			/* the map only when it costs no system call */
			int n = blk_dev_block_status(c->exp->dev, r->offset,
						     r->length, sl->ext,
						     READ_EXTENTS,
						     BLK_STATUS_NOWAIT);

			if (n == 1 && (sl->ext[0].flags & BLK_EXTENT_ZERO)) {
				/* all zeroes: one hole chunk, no I/O */
				size_t h = chunk_hdr(sl->hdr, sl,
						     NBD_REPLY_FLAG_DONE,
						     NBD_REPLY_TYPE_OFFSET_HOLE, 12);

				put_be64(sl->hdr + h, r->offset);
				put_be32(sl->hdr + h + 8, r->length);
				sl->txn = 0;
				txv_add(sl, sl->hdr, h + 12);
				tx_queue(c, sl);
				return;
			}
			sl->next_ext = n > 0 ? n : 0;
		}
		if (slot_buf(sl, r->length)) {
			reply_error(c, sl, NBD_ENOMEM);
			return;
		}
		if (slot_split(sl, BLK_OP_READ, 0,
			       dev_bio_limit(&c->info, BLK_OP_READ), sl->buf,
			       false))
			goto nomem;
		break;
	case NBD_CMD_WRITE:
		if (slot_split(sl, BLK_OP_WRITE, bflags,
			       dev_bio_limit(&c->info, BLK_OP_WRITE), sl->buf,
			       false))
			goto nomem;
		break;
	case NBD_CMD_FLUSH:
		bio_init(&sl->bio, sl, BLK_OP_FLUSH, 0, 0, NULL);
		break;
	case NBD_CMD_TRIM:
		if (slot_split(sl, BLK_OP_DISCARD, 0,
			       dev_bio_limit(&c->info, BLK_OP_DISCARD), NULL,
			       false))
			goto nomem;
		sl->flush_after = fua;
		break;
	case NBD_CMD_WRITE_ZEROES:
		if (r->flags & NBD_CMD_FLAG_NO_HOLE) {
			uint64_t lim = dev_bio_limit(&c->info, BLK_OP_WRITE);

			/* writing zeroes is not fast: the client falls back */
			if (r->flags & NBD_CMD_FLAG_FAST_ZERO) {
				reply_error(c, sl, NBD_ENOTSUP);
				return;
			}
			if (!lim || lim > ZBUF_SIZE)
				lim = ZBUF_SIZE;
			if (!zbuf ||
			    slot_split(sl, BLK_OP_WRITE, bflags, lim, NULL, true))
				goto nomem;
		} else {
			if (slot_split(sl, BLK_OP_WRITE_ZEROES, 0,
				       dev_bio_limit(&c->info,
						     BLK_OP_WRITE_ZEROES),
				       NULL, false))
				goto nomem;
			sl->flush_after = fua;
		}
		break;
	case NBD_CMD_CACHE:
		reply_ok(c, sl); /* a hint; memory and page cache need none */
		return;
	case NBD_CMD_BLOCK_STATUS:
		do_block_status(c, sl);
		return;
	default:
		reply_error(c, sl, NBD_EINVAL);
		return;
	}
	slot_start(c, sl);
	return;
nomem:
	sl->bios = NULL;
	reply_error(c, sl, NBD_ENOMEM);
}

/* ------------------------------------------------------------ receive */

static struct nbd_slot *slot_get(struct blk_nbd_conn *c)
{
	struct nbd_slot *sl = c->free;

	if (!sl)
		return NULL;
	c->free = sl->next;
	c->nr_free--;
	sl->next = NULL;
	sl->err = 0;
	sl->reply_err = 0;
	sl->got = 0;
	sl->on_retry = false;
	sl->req.type = NBD_CMD_CACHE; /* no data charged until parsed */
	sl->req.length = 0;
	return sl;
}

static uint32_t slot_data(const struct nbd_slot *sl)
{
	return sl->req.type == NBD_CMD_READ || sl->req.type == NBD_CMD_WRITE ?
	       sl->req.length : 0;
}

static void slot_put(struct blk_nbd_conn *c, struct nbd_slot *sl)
{
	c->data_bytes -= slot_data(sl);
	if (sl->cap > KEEP_BUF) {
		free(sl->buf);
		sl->buf = NULL;
		sl->cap = 0;
	}
	sl->next = c->free;
	c->free = sl;
	c->nr_free++;
}

static void start_plug(struct blk_nbd_conn *c)
{
	if (!c->plugged) {
		blk_start_plug(c->ctx);
		c->plugged = true;
	}
}

static void finish_plug(struct blk_nbd_conn *c)
{
	if (c->plugged) {
		blk_finish_plug(c->ctx);
		c->plugged = false;
	}
}

/* A header has arrived: validate it and start it, or set up its payload. */
static int on_header(struct blk_nbd_conn *c, const uint8_t *p)
{
	struct nbd_slot *sl = slot_get(c);
	struct blk_nbd_request *r;

	if (blk_nbd_parse_request(p, &sl->req)) {
		slot_put(c, sl);
		c->broken = true;
		return -EPROTO;
	}
	r = &sl->req;
	c->nr_requests++;
	if (c->m) {
		if (!c->rx_ns)
			c->rx_ns = blk_metrics_now_ns();
		sl->t0_ns = c->rx_ns;
	}
	c->data_bytes += slot_data(sl);
	if (r->type == NBD_CMD_DISC) { /* no reply, even while stopping */
		c->closing = true;
		slot_put(c, sl);
		return 0;
	}
	sl->err = c->shutdown ? NBD_ESHUTDOWN :
		  blk_nbd_check_request(r, &c->s, &c->info, c->exp->read_only);
	if (r->type == NBD_CMD_WRITE) {
		if (!sl->err && slot_buf(sl, r->length))
			sl->err = NBD_ENOMEM;
		if (sl->err) {
			/* the payload still follows: drop it, then answer */
			c->discard = r->length;
			c->discard_slot = sl;
			if (!c->discard) {
				c->discard_slot = NULL;
				reply_error(c, sl, sl->err);
			}
			return 0;
		}
		c->payload = sl;
		return 0;
	}
	if (sl->err) {
		reply_error(c, sl, sl->err);
		return 0;
	}
	slot_run(c, sl);
	return 0;
}

/* Parse what sits in the receive buffer, as far as slots allow. */
static int rx_process(struct blk_nbd_conn *c)
{
	int ret = 0;

	if (c->broken)
		return -EPROTO;
	while (c->rx_start < c->rx_end && !c->closing) {
		size_t avail = c->rx_end - c->rx_start;
		uint8_t *p = c->rx + c->rx_start;

		if (c->discard) {
			size_t n = avail < c->discard ? avail : c->discard;

			c->discard -= n;
			c->rx_start += n;
			if (!c->discard) {
				reply_error(c, c->discard_slot,
					    c->discard_slot->err);
				c->discard_slot = NULL;
			}
			continue;
		}
		if (c->payload) {
			struct nbd_slot *sl = c->payload;
			size_t n = sl->req.length - sl->got;

			if (n > avail)
				n = avail;
			memcpy(sl->buf + sl->got, p, n);
			sl->got += n;
			c->rx_start += n;
			if (sl->got == sl->req.length) {
				c->payload = NULL;
				start_plug(c);
				slot_run(c, sl);
			}
			continue;
		}
		if (avail < NBD_REQUEST_SIZE || !c->nr_free)
			break;
		if (c->data_bytes) { /* over the budget: wait for replies */
			uint16_t type = get_be16(p + 6);
			uint32_t len = get_be32(p + 24);

			if ((type == NBD_CMD_READ || type == NBD_CMD_WRITE) &&
			    c->data_bytes + len > DATA_BUDGET)
				break;
		}
		start_plug(c);
		ret = on_header(c, p);
		c->rx_start += NBD_REQUEST_SIZE;
		if (ret)
			break;
	}
	finish_plug(c);
	if (c->rx_start == c->rx_end)
		c->rx_start = c->rx_end = 0;
	if (c->m)
		blk_metrics_set_inflight(c->m, c->nr_slots - c->nr_free);
	return ret;
}

size_t blk_nbd_conn_rx_buf(struct blk_nbd_conn *c, void **buf)
{
	struct nbd_slot *sl = c->payload;

	if (c->closing || c->broken)
		return 0;
	if (sl && c->rx_start == c->rx_end &&
	    sl->req.length - sl->got >= RX_DIRECT_MIN) {
		*buf = sl->buf + sl->got;
		return sl->req.length - sl->got;
	}
	if (!sl && !c->discard && !c->nr_free)
		return 0; /* at the in-flight limit: leave it in the socket */
	if (c->rx_start && RX_CAP - c->rx_end < NBD_REQUEST_SIZE * 16) {
		memmove(c->rx, c->rx + c->rx_start, c->rx_end - c->rx_start);
		c->rx_end -= c->rx_start;
		c->rx_start = 0;
	}
	*buf = c->rx + c->rx_end;
	return RX_CAP - c->rx_end;
}

int blk_nbd_conn_rx_done(struct blk_nbd_conn *c, size_t n)
{
	struct nbd_slot *sl = c->payload;

	if (c->broken)
		return -EPROTO;
	if (!n)
		return 0;
	c->rx_ns = 0; /* new bytes: their headers get a new arrival time */
	if (sl && c->rx_start == c->rx_end &&
	    sl->req.length - sl->got >= RX_DIRECT_MIN) {
		/* received in place (rx_buf() handed out the slot's buffer) */
		sl->got += n;
		if (sl->got == sl->req.length) {
			c->payload = NULL;
			start_plug(c);
			slot_run(c, sl);
			finish_plug(c);
		}
		return 0;
	}
	c->rx_end += n;
	return rx_process(c);
}

int blk_nbd_conn_poll(struct blk_nbd_conn *c)
{
	int n = 0;

	if (c->dev_busy)
		n = blk_poll(c->ctx);
	while (c->retry_head) {
		struct nbd_slot *sl = c->retry_head;

		if (!slot_submit(c, sl))
			break;
		c->retry_head = sl->next;
		if (!c->retry_head)
			c->retry_tail = NULL;
		sl->on_retry = false;
	}
	return n;
}

void blk_nbd_conn_idle_poll(struct blk_nbd_conn *c)
{
	if (!c->dev_busy)
		blk_poll(c->ctx);
}

/* ------------------------------------------------------------ transmit */

int blk_nbd_conn_tx_iov(struct blk_nbd_conn *c, struct iovec *iov, int max)
{
	struct nbd_slot *sl;
	int n = 0, i;

	for (sl = c->tx_head; sl && n < max; sl = sl->next)
		for (i = sl->txi; i < sl->txn && n < max; i++)
			iov[n++] = sl->txv[i];
	return n;
}

/* A reply went out in full: count its request. */
static void metrics_done(struct blk_nbd_conn *c, const struct nbd_slot *sl,
			 uint64_t now)
{
	enum blk_metrics_dir d = sl->req.type == NBD_CMD_READ ? BLK_METRICS_READ :
				 sl->req.type == NBD_CMD_WRITE ? BLK_METRICS_WRITE :
				 BLK_METRICS_OTHER;

	blk_metrics_record(c->m, d,
			   d != BLK_METRICS_OTHER && !sl->reply_err ? sl->req.length : 0,
			   sl->reply_err != 0, now - sl->t0_ns);
}

void blk_nbd_conn_tx_done(struct blk_nbd_conn *c, size_t n)
{
	uint64_t now = 0;

	while (n && c->tx_head) {
		struct nbd_slot *sl = c->tx_head;
		struct iovec *v = &sl->txv[sl->txi];

		if (n < v->iov_len) {
			/* not return: slots freed above must still be used */
			v->iov_base = (uint8_t *)v->iov_base + n;
			v->iov_len -= n;
			break;
		}
		n -= v->iov_len;
		sl->txi++;
		if (sl->txi == sl->txn) {
			if (c->m) {
				if (!now)
					now = blk_metrics_now_ns();
				metrics_done(c, sl, now);
			}
			c->tx_head = sl->next;
			if (!c->tx_head)
				c->tx_tail = NULL;
			slot_put(c, sl);
		}
	}
	/* slots came free: requests waiting in the buffer may go on */
	if (c->rx_start < c->rx_end)
		rx_process(c);
	else if (c->m)
		blk_metrics_set_inflight(c->m, c->nr_slots - c->nr_free);
}

void blk_nbd_conn_set_metrics(struct blk_nbd_conn *c, struct blk_metrics_conn *mc)
{
	c->m = mc;
}

unsigned int blk_nbd_conn_inflight(const struct blk_nbd_conn *c)
{
	return c->nr_slots - c->nr_free;
}

uint64_t blk_nbd_conn_requests(const struct blk_nbd_conn *c)
{
	return c->nr_requests;
}

unsigned int blk_nbd_conn_dev_busy(const struct blk_nbd_conn *c)
{
	return c->dev_busy;
}

bool blk_nbd_conn_closing(const struct blk_nbd_conn *c)
{
	return c->closing || c->shutdown || c->broken;
}

int blk_nbd_conn_error(const struct blk_nbd_conn *c)
{
	return c->broken ? -EPROTO : 0;
}

void blk_nbd_conn_shutdown(struct blk_nbd_conn *c)
{
	c->shutdown = true;
}

/* ------------------------------------------------------------ setup */

int blk_nbd_conn_create(const struct blk_nbd_export *exp,
			const struct blk_nbd_session *s,
			unsigned int max_inflight, struct blk_nbd_conn **conn)
{
	struct blk_nbd_conn *c;
	unsigned int i;
	int ret;

	if (!max_inflight || max_inflight > 1024)
		return -EINVAL;
	pthread_once(&zbuf_once, zbuf_init);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->exp = exp;
	c->s = *s;
	blk_dev_get_info(exp->dev, &c->info);
	c->slots = calloc(max_inflight, sizeof(*c->slots));
	c->rx = malloc(RX_CAP);
	if (!c->slots || !c->rx) {
		ret = -ENOMEM;
		goto err;
	}
	c->nr_slots = max_inflight;
	for (i = 0; i < max_inflight; i++) {
		c->slots[i].conn = c;
		slot_put(c, &c->slots[i]);
	}
	ret = blk_ctx_attach(exp->dev, &c->ctx);
	if (ret)
		goto err;
	*conn = c;
	return 0;
err:
	free(c->slots);
	free(c->rx);
	free(c);
	return ret;
}

void blk_nbd_conn_destroy(struct blk_nbd_conn *c)
{
	unsigned int i;

	if (!c)
		return;
	/*
	 * Slots waiting for a tag still owe bios: they are dropped, not
	 * acknowledged.  blk_ctx_detach() drains the submitted ones.
	 */
	c->retry_head = NULL;
	c->dying = true;
	blk_ctx_detach(c->ctx);
	for (i = 0; i < c->nr_slots; i++) {
		if (c->slots[i].bios && c->slots[i].bios != &c->slots[i].bio)
			free(c->slots[i].bios);
		free(c->slots[i].buf);
	}
	free(c->slots);
	free(c->rx);
	free(c);
}
