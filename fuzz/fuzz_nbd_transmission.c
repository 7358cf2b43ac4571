// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the NBD transmission engine (struct blk_nbd_conn) on
 * a 1 MiB ram device, fed client bytes from memory.  Input byte 0 picks
 * the session (bit 0 structured replies, bit 1 base:allocation, bit 2
 * read-only, bit 3 shutdown after the first piece), byte 1 the piece size
 * the stream is cut into and bits of the in-flight limit; the rest is the
 * client's request stream.  Every reply the engine queues must parse back
 * as a simple or structured reply.
 */
#include <stdint.h>
#include <stdlib.h>

#include "blkstack/nbd.h"
#include "blkstack/ram.h"
#include "export/nbd/wire.h"
#include "../tests/helpers/nbd_memio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walk the output: every message must be a well-formed reply. */
static void check_replies(const struct memio *m, bool structured)
{
	size_t p = 0;

	while (p < m->out_len) {
		uint32_t magic;

		if (m->out_len - p < 16)
			abort();
		magic = get_be32(m->out + p);
		if (magic == NBD_SIMPLE_REPLY_MAGIC) {
			/* data of successful simple reads follows: cannot be
			 * framed without the requests; stop here */
			return;
		}
		if (magic != NBD_STRUCTURED_REPLY_MAGIC || !structured)
			abort();
		if (m->out_len - p < 20)
			abort();
		p += 20 + get_be32(m->out + p + 16);
	}
	if (p != m->out_len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct blk_ram_config rc = { .queue = { .capacity = 1 << 20,
						 .queue_depth = 8 } };
	struct blk_dev *dev;
	struct blk_nbd_export ex = { .name = "", .description = "" };
	struct blk_nbd_session s = { 0 };
	struct blk_nbd_conn *c;
	struct memio m = { 0 };
	size_t chunk;

	if (size < 2)
		return 0;
	if (blk_ram_create(&rc, &dev))
		abort();
	ex.dev = dev;
	ex.read_only = data[0] & 4;
	s.structured = data[0] & 1;
	s.base_allocation = s.structured && (data[0] & 2);
	s.tflags = blk_nbd_export_flags(&ex, s.structured);
	chunk = (size_t)(data[1] & 0x3f) * 7 + 1;
	if (blk_nbd_conn_create(&ex, &s, 1 + (data[1] >> 6), &c))
		abort();
	if (data[0] & 8) {
		size_t first = size - 2 < chunk ? size - 2 : chunk;

		if (memio_feed(&m, c, data + 2, first, chunk) != -EPROTO) {
			blk_nbd_conn_shutdown(c);
			memio_feed(&m, c, data + 2 + first, size - 2 - first, chunk);
		}
	} else {
		if (memio_feed(&m, c, data + 2, size - 2, chunk) == -EDEADLK)
			abort(); /* the engine stopped making progress */
	}
	check_replies(&m, s.structured);
	blk_nbd_conn_destroy(c);
	blk_dev_close(dev);
	free(m.out);
	return 0;
}
