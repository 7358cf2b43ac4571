// SPDX-License-Identifier: MIT
/*
 * NBD fixed newstyle negotiation, server side - see blkstack/nbd.h.
 * Written from the protocol document (doc/proto.md): "Fixed newstyle
 * negotiation", "Option types", "Option reply types", the INFO extension
 * (NBD_OPT_INFO/GO, NBD_REP_INFO) and "Metadata querying".
 *
 * No sockets here: the stream is two callbacks, so that fuzz/ and the unit
 * tests drive this file from memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blkstack/nbd.h"
#include "wire.h"

#define BASE_ALLOCATION "base:allocation"

struct hs {
	const struct blk_nbd_export *exports;
	unsigned int nr_exports;
	const struct blk_nbd_io *io;
	bool structured;
	bool meta_set;          /* SET_META_CONTEXT selected base:allocation */
	unsigned int meta_export; /* ... for this export */
};

static int hs_send(struct hs *h, const void *a, size_t alen, const void *b,
		   size_t blen)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)a, .iov_len = alen },
		{ .iov_base = (void *)b, .iov_len = blen },
	};

	return h->io->send(h->io->opaque, iov, blen ? 2 : 1);
}

/* One option reply: header and @len bytes of @data (spec: fixed newstyle). */
static int hs_reply(struct hs *h, uint32_t opt, uint32_t type,
		    const void *data, uint32_t len)
{
	uint8_t hdr[20];

	put_be64(hdr, NBD_REP_MAGIC);
	put_be32(hdr + 8, opt);
	put_be32(hdr + 12, type);
	put_be32(hdr + 16, len);
	return hs_send(h, hdr, sizeof(hdr), data, len);
}

static int hs_error(struct hs *h, uint32_t opt, uint32_t type, const char *msg)
{
	return hs_reply(h, opt, type, msg, (uint32_t)strlen(msg));
}

static int hs_find(const struct hs *h, const uint8_t *name, uint32_t len)
{
	unsigned int i;

	for (i = 0; i < h->nr_exports; i++)
		if (strlen(h->exports[i].name) == len &&
		    !memcmp(h->exports[i].name, name, len))
			return (int)i;
	/* "" is the first export, unless an export is named "" */
	return len ? -1 : 0;
}

static uint32_t hs_min_block(const struct blk_nbd_export *e)
{
	struct blk_dev_info info;

	blk_dev_get_info(e->dev, &info);
	return info.logical_block_size;
}

static int hs_info(struct hs *h, uint32_t opt, uint16_t type,
		   const struct blk_nbd_export *e)
{
	uint8_t buf[2 + 12];
	struct blk_dev_info info;
	const char *s;

	put_be16(buf, type);
	switch (type) {
	case NBD_INFO_EXPORT:
		blk_dev_get_info(e->dev, &info);
		put_be64(buf + 2, info.capacity);
		put_be16(buf + 10, blk_nbd_export_flags(e, h->structured));
		return hs_reply(h, opt, NBD_REP_INFO, buf, 12);
	case NBD_INFO_BLOCK_SIZE: {
		uint32_t min = hs_min_block(e);

		put_be32(buf + 2, min);
		put_be32(buf + 6, min > 4096 ? min : 4096);
		put_be32(buf + 10, NBD_MAX_PAYLOAD);
		return hs_reply(h, opt, NBD_REP_INFO, buf, 14);
	}
	case NBD_INFO_NAME:
	case NBD_INFO_DESCRIPTION: {
		uint8_t rep[2 + NBD_MAX_STRING];
		size_t n;

		s = type == NBD_INFO_NAME ? e->name : e->description;
		n = strlen(s);
		if (n > NBD_MAX_STRING)
			n = NBD_MAX_STRING;
		if (type == NBD_INFO_DESCRIPTION && !n)
			return 0;
		put_be16(rep, type);
		memcpy(rep + 2, s, n);
		return hs_reply(h, opt, NBD_REP_INFO, rep, (uint32_t)(2 + n));
	}
	default:
		return 0; /* unknown requests are ignored (INFO extension) */
	}
}

/*
 * NBD_OPT_INFO / NBD_OPT_GO: 32-bit name length, name, 16-bit count of
 * info requests, that many 16-bit types.  Return 0 (answered), 1 (GO
 * acknowledged: transmission), -errno.
 */
static int hs_info_go(struct hs *h, uint32_t opt, const uint8_t *d,
		      uint32_t len, struct blk_nbd_session *s)
{
	uint32_t namelen, nreq, i;
	const struct blk_nbd_export *e;
	bool want_name = false, want_desc = false;
	int idx, ret;

	if (len < 6)
		return hs_error(h, opt, NBD_REP_ERR_INVALID, "option too short");
	namelen = get_be32(d);
	if (namelen > len - 6)
		return hs_error(h, opt, NBD_REP_ERR_INVALID,
				"name length past the option");
	nreq = get_be16(d + 4 + namelen);
	if (len != 4 + namelen + 2 + 2 * nreq)
		return hs_error(h, opt, NBD_REP_ERR_INVALID,
				"option length does not match its requests");
	idx = hs_find(h, d + 4, namelen);
	if (idx < 0)
		return hs_error(h, opt, NBD_REP_ERR_UNKNOWN, "no such export");
	e = &h->exports[idx];
	for (i = 0; i < nreq; i++) {
		uint16_t t = get_be16(d + 4 + namelen + 2 + 2 * i);

		want_name |= t == NBD_INFO_NAME;
		want_desc |= t == NBD_INFO_DESCRIPTION;
	}
	ret = hs_info(h, opt, NBD_INFO_EXPORT, e);
	if (!ret)
		ret = hs_info(h, opt, NBD_INFO_BLOCK_SIZE, e);
	if (!ret && want_name)
		ret = hs_info(h, opt, NBD_INFO_NAME, e);
	if (!ret && want_desc)
		ret = hs_info(h, opt, NBD_INFO_DESCRIPTION, e);
	if (!ret)
		ret = hs_reply(h, opt, NBD_REP_ACK, NULL, 0);
	if (ret || opt != NBD_OPT_GO)
		return ret;
	s->export_idx = (unsigned int)idx;
	return 1;
}

static int hs_list(struct hs *h, uint32_t len)
{
	unsigned int i;
	int ret;

	if (len)
		return hs_error(h, NBD_OPT_LIST, NBD_REP_ERR_INVALID,
				"NBD_OPT_LIST takes no data");
	for (i = 0; i < h->nr_exports; i++) {
		const struct blk_nbd_export *e = &h->exports[i];
		size_t nl = strlen(e->name), dl = strlen(e->description);
		uint8_t *rep = malloc(4 + nl + dl);

		if (!rep)
			return -ENOMEM;
		put_be32(rep, (uint32_t)nl);
		memcpy(rep + 4, e->name, nl);
		memcpy(rep + 4 + nl, e->description, dl);
		ret = hs_reply(h, NBD_OPT_LIST, NBD_REP_SERVER, rep,
			       (uint32_t)(4 + nl + dl));
		free(rep);
		if (ret)
			return ret;
	}
	return hs_reply(h, NBD_OPT_LIST, NBD_REP_ACK, NULL, 0);
}

/*
 * LIST_META_CONTEXT / SET_META_CONTEXT: 32-bit export name length, name,
 * 32-bit query count, then per query a 32-bit length and the string.
 * Only base:allocation exists; "base:" lists it too on LIST, and an empty
 * query list on LIST means all contexts.
 */
static int hs_meta(struct hs *h, uint32_t opt, const uint8_t *d, uint32_t len)
{
	bool set = opt == NBD_OPT_SET_META_CONTEXT, match = false;
	uint32_t namelen, nq, i, pos;
	int idx;

	if (!h->structured)
		return hs_error(h, opt, NBD_REP_ERR_INVALID,
				"negotiate NBD_OPT_STRUCTURED_REPLY first");
	if (len < 8)
		return hs_error(h, opt, NBD_REP_ERR_INVALID, "option too short");
	namelen = get_be32(d);
	if (namelen > len - 8)
		return hs_error(h, opt, NBD_REP_ERR_INVALID,
				"name length past the option");
	nq = get_be32(d + 4 + namelen);
	pos = 8 + namelen;
	for (i = 0; i < nq; i++) {
		uint32_t ql;

		if (len - pos < 4)
			return hs_error(h, opt, NBD_REP_ERR_INVALID,
					"query count past the option");
		ql = get_be32(d + pos);
		pos += 4;
		if (ql > len - pos)
			return hs_error(h, opt, NBD_REP_ERR_INVALID,
					"query length past the option");
		if ((ql == strlen(BASE_ALLOCATION) &&
		     !memcmp(d + pos, BASE_ALLOCATION, ql)) ||
		    (!set && ql == 5 && !memcmp(d + pos, "base:", 5)))
			match = true;
		pos += ql;
	}
	if (pos != len)
		return hs_error(h, opt, NBD_REP_ERR_INVALID,
				"trailing bytes after the queries");
	idx = hs_find(h, d + 4, namelen);
	if (idx < 0)
		return hs_error(h, opt, NBD_REP_ERR_UNKNOWN, "no such export");
	if (!set && !nq)
		match = true;
	if (set) {
		h->meta_set = match;
		h->meta_export = (unsigned int)idx;
	}
	if (match) {
		uint8_t rep[4 + sizeof(BASE_ALLOCATION) - 1];
		int ret;

		put_be32(rep, set ? NBD_META_ID_BASE_ALLOCATION : 0);
		memcpy(rep + 4, BASE_ALLOCATION, sizeof(BASE_ALLOCATION) - 1);
		ret = hs_reply(h, opt, NBD_REP_META_CONTEXT, rep, sizeof(rep));
		if (ret)
			return ret;
	}
	return hs_reply(h, opt, NBD_REP_ACK, NULL, 0);
}

/* Read and drop @len bytes of an option too large to hold. */
static int hs_skip(struct hs *h, uint32_t len)
{
	uint8_t junk[4096];

	while (len) {
		uint32_t n = len > sizeof(junk) ? sizeof(junk) : len;
		int ret = h->io->recv(h->io->opaque, junk, n);

		if (ret)
			return ret;
		len -= n;
	}
	return 0;
}

static int hs_export_name(struct hs *h, const uint8_t *d, uint32_t len,
			  bool no_zeroes, struct blk_nbd_session *s)
{
	static const uint8_t zeroes[124];
	struct blk_dev_info info;
	uint8_t rep[10];
	int idx = hs_find(h, d, len);

	if (idx < 0)
		return -ENOENT; /* cannot be answered: end the session */
	blk_dev_get_info(h->exports[idx].dev, &info);
	put_be64(rep, info.capacity);
	put_be16(rep + 8, blk_nbd_export_flags(&h->exports[idx], h->structured));
	s->export_idx = (unsigned int)idx;
	return hs_send(h, rep, sizeof(rep), zeroes, no_zeroes ? 0 : 124);
}

int blk_nbd_handshake(const struct blk_nbd_export *exports,
		      unsigned int nr_exports, const struct blk_nbd_io *io,
		      struct blk_nbd_session *s)
{
	struct hs h = { .exports = exports, .nr_exports = nr_exports, .io = io };
	uint8_t greet[18], cflags[4], opt_hdr[16];
	uint8_t *data = NULL;
	bool no_zeroes;
	uint32_t flags;
	int ret;

	if (!nr_exports)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	put_be64(greet, NBD_MAGIC);
	put_be64(greet + 8, NBD_IHAVEOPT);
	put_be16(greet + 16, NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
	ret = hs_send(&h, greet, sizeof(greet), NULL, 0);
	if (ret)
		return ret;
	ret = io->recv(io->opaque, cflags, sizeof(cflags));
	if (ret)
		return ret == -EPIPE ? 1 : ret;
	flags = get_be32(cflags);
	if (flags & ~(NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES))
		return -EPROTO; /* spec: MUST drop the connection */
	no_zeroes = flags & NBD_FLAG_C_NO_ZEROES;
	s->no_zeroes = no_zeroes;

	for (;;) {
		uint32_t opt, len;

		free(data);
		data = NULL;
		ret = io->recv(io->opaque, opt_hdr, sizeof(opt_hdr));
		if (ret) {
			if (ret == -EPIPE)
				ret = 1; /* hung up between options */
			break;
		}
		if (get_be64(opt_hdr) != NBD_IHAVEOPT) {
			ret = -EPROTO;
			break;
		}
		opt = get_be32(opt_hdr + 8);
		len = get_be32(opt_hdr + 12);
		if (len > NBD_MAX_OPTION_LEN) {
			if (opt == NBD_OPT_EXPORT_NAME) {
				ret = -EPROTO;
				break;
			}
			ret = hs_skip(&h, len);
			if (!ret)
				ret = hs_error(&h, opt, NBD_REP_ERR_TOO_BIG,
					       "option data too large");
			if (ret)
				break;
			continue;
		}
		data = malloc(len ? len : 1);
		if (!data) {
			ret = -ENOMEM;
			break;
		}
		if (len) {
			ret = io->recv(io->opaque, data, len);
			if (ret)
				break;
		}
		if (io->stopping && io->stopping(io->opaque) &&
		    opt != NBD_OPT_ABORT) {
			if (opt == NBD_OPT_EXPORT_NAME) {
				ret = -ESHUTDOWN;
				break;
			}
			ret = hs_error(&h, opt, NBD_REP_ERR_SHUTDOWN,
				       "server shutting down");
			if (ret)
				break;
			continue;
		}
		switch (opt) {
		case NBD_OPT_EXPORT_NAME:
			ret = hs_export_name(&h, data, len, no_zeroes, s);
			if (!ret)
				goto transmission;
			goto out;
		case NBD_OPT_ABORT:
			/* the client may already have hung up: ignore errors */
			hs_reply(&h, opt, NBD_REP_ACK, NULL, 0);
			ret = 1;
			goto out;
		case NBD_OPT_LIST:
			ret = hs_list(&h, len);
			break;
		case NBD_OPT_INFO:
		case NBD_OPT_GO:
			ret = hs_info_go(&h, opt, data, len, s);
			if (ret == 1)
				goto transmission;
			break;
		case NBD_OPT_STRUCTURED_REPLY:
			if (len) {
				ret = hs_error(&h, opt, NBD_REP_ERR_INVALID,
					       "NBD_OPT_STRUCTURED_REPLY takes no data");
				break;
			}
			h.structured = true;
			ret = hs_reply(&h, opt, NBD_REP_ACK, NULL, 0);
			break;
		case NBD_OPT_LIST_META_CONTEXT:
		case NBD_OPT_SET_META_CONTEXT:
			ret = hs_meta(&h, opt, data, len);
			break;
		case NBD_OPT_STARTTLS:
			ret = hs_error(&h, opt, NBD_REP_ERR_POLICY,
				       "TLS is not offered by this server");
			break;
		default:
			ret = hs_error(&h, opt, NBD_REP_ERR_UNSUP,
				       "option not supported");
			break;
		}
		if (ret)
			break;
	}
	goto out;

transmission:
	ret = 0;
	s->structured = h.structured;
	s->base_allocation = h.structured && h.meta_set &&
			     h.meta_export == s->export_idx;
	s->tflags = blk_nbd_export_flags(&exports[s->export_idx], h.structured);
out:
	free(data);
	return ret;
}
