// SPDX-License-Identifier: MIT
/*
 * NBD protocol engines without sockets: request parsing and validation,
 * advertised flags, the handshake over an in-memory stream, and the
 * transmission engine on a ram device; plus blk_dev_block_status() of the
 * drivers it relies on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "blkstack/nbd.h"
#include "blkstack/null.h"
#include "blkstack/ram.h"
#include "blkstack/uring.h"
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "export/nbd/wire.h"
#include "../helpers/nbd_memio.h"
#include "../helpers/unit_ram.h"

#define MiB (1024u * 1024u)

static void put_req(uint8_t *p, uint16_t flags, uint16_t type, uint64_t handle,
		    uint64_t off, uint32_t len)
{
	put_be32(p, NBD_REQUEST_MAGIC);
	put_be16(p + 4, flags);
	put_be16(p + 6, type);
	put_be64(p + 8, handle);
	put_be64(p + 16, off);
	put_be32(p + 24, len);
}

/* ------------------------------------------------------------ parsing */

static void test_parse_request(void **state)
{
	uint8_t b[NBD_REQUEST_SIZE];
	struct blk_nbd_request r;

	put_req(b, NBD_CMD_FLAG_FUA, NBD_CMD_WRITE, 0x1122334455667788ull,
		0x100000000ull, 4096);
	assert_int_equal(blk_nbd_parse_request(b, &r), 0);
	assert_int_equal(r.flags, NBD_CMD_FLAG_FUA);
	assert_int_equal(r.type, NBD_CMD_WRITE);
	assert_true(r.handle == 0x1122334455667788ull);
	assert_true(r.offset == 0x100000000ull);
	assert_int_equal(r.length, 4096);
	b[0] ^= 1;
	assert_int_equal(blk_nbd_parse_request(b, &r), -EPROTO);
}

static void test_check_request(void **state)
{
	struct blk_dev_info info = { .capacity = 1 * MiB,
				     .logical_block_size = 512 };
	struct blk_nbd_session s = { .structured = true, .base_allocation = true,
				     .tflags = NBD_FLAG_HAS_FLAGS |
					       NBD_FLAG_SEND_FLUSH |
					       NBD_FLAG_SEND_FUA |
					       NBD_FLAG_SEND_TRIM |
					       NBD_FLAG_SEND_WRITE_ZEROES };
	struct blk_nbd_request r = { .type = NBD_CMD_READ, .length = 4096 };

	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), 0);
	r.flags = NBD_CMD_FLAG_DF;
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), 0);
	r.flags = NBD_CMD_FLAG_NO_HOLE; /* not a READ flag */
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), NBD_EINVAL);
	r.flags = 0;
	r.offset = MiB - 512; /* past the end */
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), NBD_EINVAL);
	r.offset = 0;
	r.length = NBD_MAX_PAYLOAD + 512;
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), NBD_EOVERFLOW);
	r.length = 100; /* unaligned */
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), NBD_EINVAL);
	r.length = 0;
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), NBD_EINVAL);

	r = (struct blk_nbd_request){ .type = NBD_CMD_WRITE, .offset = MiB,
				      .length = 512 };
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), NBD_ENOSPC);
	r.offset = 0;
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, true), NBD_EPERM);
	r.flags = NBD_CMD_FLAG_FUA;
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), 0);

	r = (struct blk_nbd_request){ .type = NBD_CMD_TRIM, .length = 512 };
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, true), NBD_EPERM);
	r = (struct blk_nbd_request){ .type = NBD_CMD_FLUSH, .offset = 1 };
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), NBD_EINVAL);
	r = (struct blk_nbd_request){ .type = NBD_CMD_WRITE_ZEROES, .length = 512,
				      .flags = NBD_CMD_FLAG_NO_HOLE |
					       NBD_CMD_FLAG_FAST_ZERO };
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), 0);
	r = (struct blk_nbd_request){ .type = NBD_CMD_BLOCK_STATUS, .length = 1,
				      .flags = NBD_CMD_FLAG_REQ_ONE };
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), 0);
	s.base_allocation = false;
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), NBD_EINVAL);
	r = (struct blk_nbd_request){ .type = 99 };
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), NBD_EINVAL);
	/* FLUSH is refused when not advertised */
	s.tflags = NBD_FLAG_HAS_FLAGS;
	r = (struct blk_nbd_request){ .type = NBD_CMD_FLUSH };
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), NBD_EINVAL);
	r = (struct blk_nbd_request){ .type = NBD_CMD_WRITE, .length = 512,
				      .flags = NBD_CMD_FLAG_FUA };
	assert_int_equal(blk_nbd_check_request(&r, &s, &info, false), NBD_EINVAL);
}

static void test_errno_map(void **state)
{
	assert_int_equal(blk_nbd_errno(BLK_STS_NOSPC), NBD_ENOSPC);
	assert_int_equal(blk_nbd_errno(BLK_STS_INVAL), NBD_EINVAL);
	assert_int_equal(blk_nbd_errno(BLK_STS_NOTSUPP), NBD_ENOTSUP);
	assert_int_equal(blk_nbd_errno(BLK_STS_MEDIUM), NBD_EIO);
}

static void test_export_flags(void **state)
{
	struct blk_dev *ram = ram_dev(MiB), *nul;
	struct blk_null_config nc = { .queue = { .capacity = MiB } };
	struct blk_nbd_export e = { .name = "", .description = "", .dev = ram };
	uint16_t f = blk_nbd_export_flags(&e, true);

	assert_true(f & NBD_FLAG_HAS_FLAGS);
	assert_true(f & NBD_FLAG_SEND_FLUSH && f & NBD_FLAG_SEND_FUA);
	assert_true(f & NBD_FLAG_SEND_TRIM && f & NBD_FLAG_SEND_WRITE_ZEROES);
	assert_true(f & NBD_FLAG_CAN_MULTI_CONN && f & NBD_FLAG_SEND_DF);
	assert_false(f & NBD_FLAG_READ_ONLY);
	assert_false(blk_nbd_export_flags(&e, false) & NBD_FLAG_SEND_DF);
	e.read_only = true;
	f = blk_nbd_export_flags(&e, true);
	assert_true(f & NBD_FLAG_READ_ONLY);
	assert_false(f & (NBD_FLAG_SEND_TRIM | NBD_FLAG_SEND_WRITE_ZEROES));
	/* null without memory_backed: no flush, no multi-conn (no data) */
	assert_int_equal(blk_null_create(&nc, &nul), 0);
	e.dev = nul;
	e.read_only = false;
	f = blk_nbd_export_flags(&e, true);
	assert_false(f & (NBD_FLAG_SEND_FLUSH | NBD_FLAG_CAN_MULTI_CONN));
	blk_dev_close(nul);
	blk_dev_close(ram);
}

/* ------------------------------------------------------------ handshake */

struct opt_buf {
	uint8_t b[8192];
	size_t n;
};

static void opt_add(struct opt_buf *o, uint32_t opt, const void *d, uint32_t len)
{
	put_be64(o->b + o->n, NBD_IHAVEOPT);
	put_be32(o->b + o->n + 8, opt);
	put_be32(o->b + o->n + 12, len);
	if (len)
		memcpy(o->b + o->n + 16, d, len);
	o->n += 16 + len;
}

/* Walk the option replies after the greeting; count by type. */
static unsigned int count_replies(const struct memio *m, uint32_t type)
{
	size_t p = 18;
	unsigned int n = 0;

	while (p + 20 <= m->out_len && get_be64(m->out + p) == NBD_REP_MAGIC) {
		if (get_be32(m->out + p + 12) == type)
			n++;
		p += 20 + get_be32(m->out + p + 16);
	}
	return n;
}

static void test_handshake_go(void **state)
{
	struct blk_dev *dev = ram_dev(MiB);
	struct blk_nbd_export ex[2] = {
		{ .name = "a", .description = "first", .dev = dev },
		{ .name = "b", .description = "", .dev = dev, .read_only = true },
	};
	struct opt_buf o = { .n = 4 };
	struct memio m = { 0 };
	struct blk_nbd_io io = memio_io(&m);
	struct blk_nbd_session s;
	uint8_t d[64];

	put_be32(o.b, NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	opt_add(&o, 77, NULL, 0);                           /* ERR_UNSUP */
	opt_add(&o, NBD_OPT_LIST, NULL, 0);                 /* 2 SERVER + ACK */
	opt_add(&o, NBD_OPT_STRUCTURED_REPLY, NULL, 0);     /* ACK */
	put_be32(d, 1);
	memcpy(d + 4, "b", 1);
	put_be32(d + 5, 1);
	put_be32(d + 9, 15);
	memcpy(d + 13, "base:allocation", 15);
	opt_add(&o, NBD_OPT_SET_META_CONTEXT, d, 28);       /* META + ACK */
	put_be16(d + 5, 0);
	opt_add(&o, NBD_OPT_GO, d, 7);                      /* INFO x2 + ACK */
	m.in = o.b;
	m.in_len = o.n;
	assert_int_equal(blk_nbd_handshake(ex, 2, &io, &s), 0);
	assert_true(get_be64(m.out) == NBD_MAGIC);
	assert_true(get_be64(m.out + 8) == NBD_IHAVEOPT);
	assert_int_equal(get_be16(m.out + 16), 3);
	assert_int_equal(count_replies(&m, NBD_REP_ERR_UNSUP), 1);
	assert_int_equal(count_replies(&m, NBD_REP_SERVER), 2);
	assert_int_equal(count_replies(&m, NBD_REP_META_CONTEXT), 1);
	assert_int_equal(count_replies(&m, NBD_REP_INFO), 2);
	assert_int_equal(count_replies(&m, NBD_REP_ACK), 4);
	assert_int_equal(s.export_idx, 1);
	assert_true(s.structured && s.base_allocation && s.no_zeroes);
	assert_true(s.tflags & NBD_FLAG_READ_ONLY);
	free(m.out);
	blk_dev_close(dev);
}

/*
 * An export named "" that is not the first is reached by the empty name:
 * "" used to mean the first export whatever the names, so such an export
 * was listed but could never be opened.
 */
static void test_handshake_empty_name(void **state)
{
	struct blk_dev *dev = ram_dev(MiB);
	struct blk_nbd_export ex[2] = {
		{ .name = "a", .description = "", .dev = dev },
		{ .name = "", .description = "", .dev = dev },
	};
	struct opt_buf o = { .n = 4 };
	struct memio m = { 0 };
	struct blk_nbd_io io = memio_io(&m);
	struct blk_nbd_session s;
	uint8_t d[8];

	put_be32(o.b, NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	put_be32(d, 0);
	put_be16(d + 4, 0);
	opt_add(&o, NBD_OPT_GO, d, 6);
	m.in = o.b;
	m.in_len = o.n;
	assert_int_equal(blk_nbd_handshake(ex, 2, &io, &s), 0);
	assert_int_equal(s.export_idx, 1);
	free(m.out);
	/* without an export named "", "" is still the first one */
	memset(&m, 0, sizeof(m));
	m.in = o.b;
	m.in_len = o.n;
	assert_int_equal(blk_nbd_handshake(ex, 1, &io, &s), 0);
	assert_int_equal(s.export_idx, 0);
	free(m.out);
	blk_dev_close(dev);
}

static void test_handshake_errors(void **state)
{
	struct blk_dev *dev = ram_dev(MiB);
	struct blk_nbd_export ex = { .name = "x", .description = "", .dev = dev };
	struct memio m = { 0 };
	struct blk_nbd_io io = memio_io(&m);
	struct blk_nbd_session s;
	struct opt_buf o = { .n = 4 };
	uint8_t big[70000] = { 0 };

	/* unknown client flag: hard disconnect */
	put_be32(o.b, 0x80);
	m.in = o.b;
	m.in_len = 4;
	assert_int_equal(blk_nbd_handshake(&ex, 1, &io, &s), -EPROTO);
	free(m.out);
	/* hang-up right after the flags: a clean end */
	put_be32(o.b, 1);
	m = (struct memio){ .in = o.b, .in_len = 4 };
	assert_int_equal(blk_nbd_handshake(&ex, 1, &io, &s), 1);
	free(m.out);
	/* ABORT */
	o.n = 4;
	opt_add(&o, NBD_OPT_ABORT, NULL, 0);
	m = (struct memio){ .in = o.b, .in_len = o.n };
	assert_int_equal(blk_nbd_handshake(&ex, 1, &io, &s), 1);
	assert_int_equal(count_replies(&m, NBD_REP_ACK), 1);
	free(m.out);
	/* unknown EXPORT_NAME cannot be answered */
	o.n = 4;
	opt_add(&o, NBD_OPT_EXPORT_NAME, "nope", 4);
	m = (struct memio){ .in = o.b, .in_len = o.n };
	assert_int_equal(blk_nbd_handshake(&ex, 1, &io, &s), -ENOENT);
	free(m.out);
	/* bad option magic */
	o.n = 4;
	opt_add(&o, NBD_OPT_LIST, NULL, 0);
	o.b[4] ^= 0xff;
	m = (struct memio){ .in = o.b, .in_len = o.n };
	assert_int_equal(blk_nbd_handshake(&ex, 1, &io, &s), -EPROTO);
	free(m.out);
	/* an oversized option is skipped and refused; then EXPORT_NAME "" */
	{
		uint8_t *in = malloc(4 + 16 + sizeof(big) + 16);
		size_t n = 0;

		put_be32(in, NBD_FLAG_C_FIXED_NEWSTYLE); /* zeroes wanted */
		n = 4;
		put_be64(in + n, NBD_IHAVEOPT);
		put_be32(in + n + 8, NBD_OPT_INFO);
		put_be32(in + n + 12, sizeof(big));
		memcpy(in + n + 16, big, sizeof(big));
		n += 16 + sizeof(big);
		put_be64(in + n, NBD_IHAVEOPT);
		put_be32(in + n + 8, NBD_OPT_EXPORT_NAME);
		put_be32(in + n + 12, 0);
		n += 16;
		m = (struct memio){ .in = in, .in_len = n };
		assert_int_equal(blk_nbd_handshake(&ex, 1, &io, &s), 0);
		assert_int_equal(get_be32(m.out + 18 + 12), NBD_REP_ERR_TOO_BIG);
		/* greeting 18 + TOO_BIG reply (20 + message) + 10 + 124 zeroes */
		assert_int_equal(m.out_len,
				 18 + 20 + get_be32(m.out + 18 + 16) + 10 + 124);
		assert_false(s.structured);
		free(in);
		free(m.out);
	}
	blk_dev_close(dev);
}

/* ------------------------------------------------------------ transmission */

struct reply {
	uint32_t magic, err;
	uint16_t flags, type;
	uint64_t handle;
	size_t len;          /* payload length (structured) */
	const uint8_t *payload;
};

/* Parse the reply at *pos (simple replies carry @data bytes). */
static struct reply next_reply(const struct memio *m, size_t *pos, size_t data)
{
	struct reply r = { 0 };
	const uint8_t *p = m->out + *pos;

	assert_true(*pos + 16 <= m->out_len);
	r.magic = get_be32(p);
	if (r.magic == NBD_SIMPLE_REPLY_MAGIC) {
		r.err = get_be32(p + 4);
		r.handle = get_be64(p + 8);
		r.payload = p + 16;
		r.len = r.err ? 0 : data;
		*pos += 16 + r.len;
		return r;
	}
	assert_int_equal(r.magic, NBD_STRUCTURED_REPLY_MAGIC);
	r.flags = get_be16(p + 4);
	r.type = get_be16(p + 6);
	r.handle = get_be64(p + 8);
	r.len = get_be32(p + 16);
	r.payload = p + 20;
	if (r.type & 0x8000)
		r.err = get_be32(r.payload);
	*pos += 20 + r.len;
	return r;
}

static void test_transmission(void **state)
{
	struct blk_dev *dev = ram_dev(4 * MiB);
	struct blk_nbd_export ex = { .name = "", .description = "", .dev = dev };
	struct blk_nbd_session s = { .structured = true, .base_allocation = true };
	struct blk_nbd_conn *c;
	struct memio m = { 0 };
	static uint8_t in[5 * MiB];
	size_t n = 0, pos = 0;
	struct reply r;
	unsigned int i;

	s.tflags = blk_nbd_export_flags(&ex, true);
	assert_int_equal(blk_nbd_conn_create(&ex, &s, 4, &c), 0);
	/* 1: write 8 KiB at 64 KiB; 2: read it (data); 3: read a hole */
	put_req(in + n, NBD_CMD_FLAG_FUA, NBD_CMD_WRITE, 1, 65536, 8192);
	n += 28;
	for (i = 0; i < 8192; i++)
		in[n + i] = (uint8_t)(i * 7);
	n += 8192;
	put_req(in + n, 0, NBD_CMD_READ, 2, 65536, 8192);
	n += 28;
	put_req(in + n, 0, NBD_CMD_READ, 3, MiB, 4096);
	n += 28;
	/* 4: block status; 5: bad flag; 6: write past the end (payload dropped) */
	put_req(in + n, 0, NBD_CMD_BLOCK_STATUS, 4, 0, 2 * MiB);
	n += 28;
	put_req(in + n, 0x40, NBD_CMD_READ, 5, 0, 512);
	n += 28;
	put_req(in + n, 0, NBD_CMD_WRITE, 6, 4 * MiB - 512, 4096);
	n += 28 + 4096;
	/* 7: a 4 MiB write, received partly in place; 8: flush */
	put_req(in + n, 0, NBD_CMD_WRITE, 7, 0, 4 * MiB);
	n += 28;
	memset(in + n, 0xab, 4 * MiB);
	n += 4 * MiB;
	put_req(in + n, 0, NBD_CMD_FLUSH, 8, 0, 0);
	n += 28;
	assert_true(n <= sizeof(in));
	/* small pieces: headers and payloads split at every boundary */
	assert_int_equal(memio_feed(&m, c, in, 3 * 28 + 8192, 13), 0);
	assert_int_equal(memio_feed(&m, c, in + 3 * 28 + 8192, n - 3 * 28 - 8192,
				    100000), 0);

	r = next_reply(&m, &pos, 0);
	assert_int_equal(r.magic, NBD_SIMPLE_REPLY_MAGIC);
	assert_int_equal(r.err, 0);
	assert_true(r.handle == 1);
	r = next_reply(&m, &pos, 0);
	assert_int_equal(r.type, NBD_REPLY_TYPE_OFFSET_DATA);
	assert_true(r.flags & NBD_REPLY_FLAG_DONE);
	assert_int_equal(r.len, 8 + 8192);
	assert_true(get_be64(r.payload) == 65536);
	for (i = 0; i < 8192; i++)
		assert_int_equal(r.payload[8 + i], (uint8_t)(i * 7));
	r = next_reply(&m, &pos, 0);
	assert_int_equal(r.type, NBD_REPLY_TYPE_OFFSET_HOLE);
	assert_true(r.handle == 3);
	assert_int_equal(get_be32(r.payload + 8), 4096);
	r = next_reply(&m, &pos, 0);
	assert_int_equal(r.type, NBD_REPLY_TYPE_BLOCK_STATUS);
	assert_int_equal(get_be32(r.payload), NBD_META_ID_BASE_ALLOCATION);
	assert_int_equal(r.len, 4 + 3 * 8); /* hole, data, hole */
	assert_int_equal(get_be32(r.payload + 4), 65536);
	assert_int_equal(get_be32(r.payload + 8), NBD_STATE_HOLE | NBD_STATE_ZERO);
	assert_int_equal(get_be32(r.payload + 12), 8192);
	assert_int_equal(get_be32(r.payload + 16), 0);
	assert_int_equal(get_be32(r.payload + 20), 2 * MiB - 65536 - 8192);
	r = next_reply(&m, &pos, 0);
	assert_true(r.handle == 5);
	assert_int_equal(r.type, NBD_REPLY_TYPE_ERROR);
	assert_int_equal(r.err, NBD_EINVAL);
	r = next_reply(&m, &pos, 0);
	assert_true(r.handle == 6);
	assert_int_equal(r.err, NBD_ENOSPC);
	r = next_reply(&m, &pos, 0);
	assert_true(r.handle == 7);
	assert_int_equal(r.err, 0);
	r = next_reply(&m, &pos, 0);
	assert_true(r.handle == 8);
	assert_int_equal(r.err, 0);
	assert_int_equal(pos, m.out_len);
	assert_int_equal(blk_nbd_conn_inflight(c), 0);

	/* DISC closes; bad magic is a protocol error */
	put_req(in, 0, NBD_CMD_DISC, 9, 0, 0);
	assert_int_equal(memio_feed(&m, c, in, 28, 28), 0);
	assert_true(blk_nbd_conn_closing(c));
	assert_int_equal(pos, m.out_len); /* DISC has no reply */
	blk_nbd_conn_destroy(c);
	assert_int_equal(blk_nbd_conn_create(&ex, &s, 4, &c), 0);
	memset(in, 0, 28);
	assert_int_equal(memio_feed(&m, c, in, 28, 28), -EPROTO);
	blk_nbd_conn_destroy(c);
	free(m.out);
	blk_dev_close(dev);
}

/* After shutdown, new requests get ESHUTDOWN (the payload of a WRITE is dropped). */
static void test_shutdown(void **state)
{
	struct blk_dev *dev = ram_dev(MiB);
	struct blk_nbd_export ex = { .name = "", .description = "", .dev = dev };
	struct blk_nbd_session s = { 0 };
	struct blk_nbd_conn *c;
	struct memio m = { 0 };
	uint8_t in[28 + 512 + 28];
	size_t pos = 0;
	struct reply r;
	void *buf;

	s.tflags = blk_nbd_export_flags(&ex, false);
	assert_int_equal(blk_nbd_conn_create(&ex, &s, 2, &c), 0);
	blk_nbd_conn_shutdown(c);
	assert_true(blk_nbd_conn_closing(c));
	put_req(in, 0, NBD_CMD_WRITE, 1, 0, 512);
	memset(in + 28, 1, 512);
	put_req(in + 28 + 512, 0, NBD_CMD_READ, 2, 0, 512);
	assert_true(blk_nbd_conn_rx_buf(c, &buf) >= sizeof(in));
	memcpy(buf, in, sizeof(in));
	assert_int_equal(blk_nbd_conn_rx_done(c, sizeof(in)), 0);
	memio_tx(&m, c);
	r = next_reply(&m, &pos, 512);
	assert_true(r.handle == 1 && r.err == NBD_ESHUTDOWN);
	r = next_reply(&m, &pos, 512);
	assert_true(r.handle == 2 && r.err == NBD_ESHUTDOWN);
	assert_int_equal(pos, m.out_len);
	blk_nbd_conn_destroy(c);
	free(m.out);
	blk_dev_close(dev);
}

/*
 * A send that ends inside a later reply still frees the replies before it,
 * and requests left in the receive buffer for want of a slot must then be
 * parsed at once: they were left unparsed until more bytes arrived (or a
 * send ended exactly between iovecs), so a DISC queued behind a full set
 * of slots was never seen before the client's EOF.
 */
static void test_partial_send_frees_slots(void **state)
{
	struct blk_dev *dev = ram_dev(MiB);
	struct blk_nbd_export ex = { .name = "", .description = "", .dev = dev };
	struct blk_nbd_session s = { 0 };
	struct blk_nbd_conn *c;
	uint8_t in[4 * 28];
	struct iovec v[8];
	void *buf;
	int i;

	s.tflags = blk_nbd_export_flags(&ex, false);
	assert_int_equal(blk_nbd_conn_create(&ex, &s, 2, &c), 0);
	for (i = 0; i < 3; i++)
		put_req(in + 28 * i, 0, NBD_CMD_READ, (uint64_t)i + 1, 0, 4096);
	put_req(in + 3 * 28, 0, NBD_CMD_DISC, 4, 0, 0);
	assert_true(blk_nbd_conn_rx_buf(c, &buf) >= sizeof(in));
	memcpy(buf, in, sizeof(in));
	assert_int_equal(blk_nbd_conn_rx_done(c, sizeof(in)), 0);
	while (blk_nbd_conn_dev_busy(c))
		blk_nbd_conn_poll(c);
	assert_int_equal(blk_nbd_conn_inflight(c), 2); /* both slots taken */
	assert_false(blk_nbd_conn_closing(c));
	/* send reply 1 (16 + 4096 bytes) and 100 bytes of reply 2 */
	assert_true(blk_nbd_conn_tx_iov(c, v, 8) >= 3);
	blk_nbd_conn_tx_done(c, 16 + 4096 + 100);
	/* request 3 took the freed slot; the DISC waits for a slot */
	while (blk_nbd_conn_dev_busy(c))
		blk_nbd_conn_poll(c);
	assert_int_equal(blk_nbd_conn_inflight(c), 2);
	assert_false(blk_nbd_conn_closing(c));
	blk_nbd_conn_tx_done(c, 16 + 4096 - 100 + 10);
	assert_true(blk_nbd_conn_closing(c)); /* the DISC was parsed */
	blk_nbd_conn_destroy(c);
	blk_dev_close(dev);
}

/* A DISC after shutdown still gets no reply (the spec has none for it). */
static void test_disc_while_stopping(void **state)
{
	struct blk_dev *dev = ram_dev(MiB);
	struct blk_nbd_export ex = { .name = "", .description = "", .dev = dev };
	struct blk_nbd_session s = { 0 };
	struct blk_nbd_conn *c;
	struct memio m = { 0 };
	uint8_t in[28];
	void *buf;

	s.tflags = blk_nbd_export_flags(&ex, false);
	assert_int_equal(blk_nbd_conn_create(&ex, &s, 2, &c), 0);
	blk_nbd_conn_shutdown(c);
	put_req(in, 0, NBD_CMD_DISC, 1, 0, 0);
	assert_true(blk_nbd_conn_rx_buf(c, &buf) >= sizeof(in));
	memcpy(buf, in, sizeof(in));
	assert_int_equal(blk_nbd_conn_rx_done(c, sizeof(in)), 0);
	memio_tx(&m, c);
	assert_int_equal(m.out_len, 0);
	assert_int_equal(blk_nbd_conn_inflight(c), 0);
	blk_nbd_conn_destroy(c);
	free(m.out);
	blk_dev_close(dev);
}

/* ------------------------------------------------------------ block status */

static void end_io(struct blk_bio *bio)
{
	*(int *)bio->bi_private = 1;
}

static void test_block_status_ram(void **state)
{
	int done = 0;
	struct blk_dev *dev = ram_dev(8 * MiB);
	struct blk_mq_ctx *ctx;
	struct blk_extent e[8];
	static uint8_t buf[3 * 4096];
	struct iovec iov = { buf, sizeof(buf) };
	struct blk_bio bio = { .bi_op = BLK_OP_WRITE, .bi_offset = 3 * MiB,
			       .bi_size = sizeof(buf), .bi_vcnt = 1,
			       .bi_io_vec = &iov };

	assert_int_equal(blk_dev_block_status(dev, 0, 8 * MiB, e, 8, 0), 1);
	assert_true(e[0].length == 8 * MiB);
	assert_int_equal(e[0].flags, BLK_EXTENT_HOLE | BLK_EXTENT_ZERO);
	assert_int_equal(blk_ctx_attach(dev, &ctx), 0);
	bio.bi_end_io = end_io;
	bio.bi_private = &done;
	assert_int_equal(blk_submit(ctx, &bio), 0);
	assert_int_equal(blk_drain(ctx, 0), 0);
	assert_int_equal(done, 1);
	blk_ctx_detach(ctx);
	assert_int_equal(blk_dev_block_status(dev, 0, 8 * MiB, e, 8, 0), 3);
	assert_true(e[0].length == 3 * MiB && e[0].flags == 3);
	assert_true(e[1].length == 3 * 4096 && e[1].flags == 0);
	assert_true(e[2].length == 5 * MiB - 3 * 4096 && e[2].flags == 3);
	/* extents run out: lengths add up to less than asked */
	assert_int_equal(blk_dev_block_status(dev, 0, 8 * MiB, e, 2, 0), 2);
	assert_true(e[0].length + e[1].length < 8 * MiB);
	/* unaligned start inside the data */
	assert_int_equal(blk_dev_block_status(dev, 3 * MiB + 100, 4000, e, 8, 0), 1);
	assert_true(e[0].length == 4000 && e[0].flags == 0);
	assert_int_equal(blk_dev_block_status(dev, 8 * MiB, 1, e, 8, 0), -ERANGE);
	assert_int_equal(blk_dev_block_status(dev, 0, 0, e, 8, 0), -EINVAL);
	assert_int_equal(blk_dev_block_status(dev, 0, 1, e, 0, 0), -EINVAL);
	assert_int_equal(blk_dev_block_status(dev, 0, 1, e, 1, 0x80), -EINVAL);
	/* ram answers from memory: NOWAIT works */
	assert_int_equal(blk_dev_block_status(dev, 0, 8 * MiB, e, 8,
					      BLK_STATUS_NOWAIT), 3);
	blk_dev_close(dev);
}

static void test_block_status_null(void **state)
{
	struct blk_null_config nc = { .queue = { .capacity = MiB } };
	struct blk_dev *dev;
	struct blk_extent e[2];

	assert_int_equal(blk_null_create(&nc, &dev), 0);
	assert_int_equal(blk_dev_block_status(dev, 0, MiB, e, 2, 0), 1);
	assert_true(e[0].length == MiB && e[0].flags == 0);
	blk_dev_close(dev);
	nc.memory_backed = true;
	assert_int_equal(blk_null_create(&nc, &dev), 0);
	assert_int_equal(blk_dev_block_status(dev, 0, MiB, e, 2, 0), 1);
	assert_int_equal(e[0].flags, BLK_EXTENT_HOLE | BLK_EXTENT_ZERO);
	blk_dev_close(dev);
}

/* uring over a sparse file: SEEK_DATA/SEEK_HOLE; NOWAIT refuses. */
static void test_block_status_uring(void **state)
{
	char path[] = "/var/tmp/blkstack-bs-XXXXXX", err[256];
	struct blk_uring_config uc = { .path = path };
	struct blk_dev *dev;
	struct blk_extent e[8];
	static char buf[65536];
	int fd = mkstemp(path), n, i;
	uint64_t sum = 0;

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 16 * MiB), 0);
	memset(buf, 1, sizeof(buf));
	assert_int_equal(pwrite(fd, buf, sizeof(buf), 4 * MiB), (ssize_t)sizeof(buf));
	close(fd);
	assert_int_equal(blk_uring_create(&uc, &dev, err, sizeof(err)), 0);
	n = blk_dev_block_status(dev, 0, 16 * MiB, e, 8, 0);
	unlink(path);
	assert_true(n >= 1);
	for (i = 0; i < n; i++)
		sum += e[i].length;
	assert_true(sum == 16 * MiB);
	/* the written range is data; a file system without holes says all data */
	n = blk_dev_block_status(dev, 4 * MiB, 65536, e, 8, 0);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].flags, 0);
	n = blk_dev_block_status(dev, 0, 4096, e, 8, 0);
	assert_int_equal(n, 1);
	assert_true(e[0].flags == 0 || e[0].flags == (BLK_EXTENT_HOLE | BLK_EXTENT_ZERO));
	assert_int_equal(blk_dev_block_status(dev, 0, 4096, e, 8, BLK_STATUS_NOWAIT),
			 -EAGAIN);
	blk_dev_close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_request),
		cmocka_unit_test(test_check_request),
		cmocka_unit_test(test_errno_map),
		cmocka_unit_test(test_export_flags),
		cmocka_unit_test(test_handshake_go),
		cmocka_unit_test(test_handshake_empty_name),
		cmocka_unit_test(test_handshake_errors),
		cmocka_unit_test(test_transmission),
		cmocka_unit_test(test_shutdown),
		cmocka_unit_test(test_partial_send_frees_slots),
		cmocka_unit_test(test_disc_while_stopping),
		cmocka_unit_test(test_block_status_ram),
		cmocka_unit_test(test_block_status_null),
		cmocka_unit_test(test_block_status_uring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
