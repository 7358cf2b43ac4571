/* SPDX-License-Identifier: MIT */
/*
 * An in-memory byte stream for the NBD engines (struct blk_nbd_io and the
 * transmission engine's rx/tx calls): input from a buffer, output into a
 * growing buffer.  Shared by tests/unit/test_nbd_proto.c and fuzz/.
 */
#ifndef BLKSTACK_NBD_MEMIO_H
#define BLKSTACK_NBD_MEMIO_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blkstack/nbd.h"

struct memio {
	const uint8_t *in;
	size_t in_len, in_pos;
	uint8_t *out;
	size_t out_len, out_cap;
};

static int memio_recv(void *opaque, void *buf, size_t len)
{
	struct memio *m = opaque;

	if (m->in_len - m->in_pos < len) {
		m->in_pos = m->in_len;
		return -EPIPE;
	}
	memcpy(buf, m->in + m->in_pos, len);
	m->in_pos += len;
	return 0;
}

static int memio_put(struct memio *m, const void *p, size_t len)
{
	if (m->out_len + len > m->out_cap) {
		size_t cap = (m->out_len + len) * 2 + 256;
		uint8_t *o = realloc(m->out, cap);

		if (!o)
			return -ENOMEM;
		m->out = o;
		m->out_cap = cap;
	}
	memcpy(m->out + m->out_len, p, len);
	m->out_len += len;
	return 0;
}

static int memio_send(void *opaque, const struct iovec *iov, int iovcnt)
{
	struct memio *m = opaque;
	int i;

	for (i = 0; i < iovcnt; i++)
		if (memio_put(m, iov[i].iov_base, iov[i].iov_len))
			return -ENOMEM;
	return 0;
}

static inline struct blk_nbd_io memio_io(struct memio *m)
{
	struct blk_nbd_io io = { .opaque = m, .recv = memio_recv,
				 .send = memio_send };
	return io;
}

/* Drain a transmission engine's replies into @m; returns bytes moved. */
static inline size_t memio_tx(struct memio *m, struct blk_nbd_conn *c)
{
	struct iovec iov[64];
	size_t total = 0;
	int n, i;

	while ((n = blk_nbd_conn_tx_iov(c, iov, 64)) > 0) {
		size_t sum = 0;

		for (i = 0; i < n; i++) {
			memio_put(m, iov[i].iov_base, iov[i].iov_len);
			sum += iov[i].iov_len;
		}
		blk_nbd_conn_tx_done(c, sum);
		total += sum;
	}
	return total;
}

/*
 * Feed @len bytes of @in to a transmission engine in pieces of at most
 * @chunk bytes, polling the device and draining replies as a server
 * would.  Returns 0 or the engine's -EPROTO.
 */
static inline int memio_feed(struct memio *m, struct blk_nbd_conn *c,
			     const uint8_t *in, size_t len, size_t chunk)
{
	size_t pos = 0;
	int spins = 0;

	while (pos < len && !blk_nbd_conn_closing(c)) {
		void *buf;
		size_t room = blk_nbd_conn_rx_buf(c, &buf), n;
		int ret;

		if (blk_nbd_conn_error(c))
			return blk_nbd_conn_error(c);
		if (!room) {
			blk_nbd_conn_poll(c);
			memio_tx(m, c);
			if (++spins > 1000000)
				return -EDEADLK;
			continue;
		}
		n = len - pos < room ? len - pos : room;
		if (n > chunk)
			n = chunk;
		memcpy(buf, in + pos, n);
		pos += n;
		ret = blk_nbd_conn_rx_done(c, n);
		if (ret)
			return ret;
		blk_nbd_conn_poll(c);
		memio_tx(m, c);
	}
	while (blk_nbd_conn_dev_busy(c) && ++spins < 1000000) {
		blk_nbd_conn_poll(c);
		memio_tx(m, c);
	}
	memio_tx(m, c);
	return blk_nbd_conn_error(c);
}

#endif /* BLKSTACK_NBD_MEMIO_H */
