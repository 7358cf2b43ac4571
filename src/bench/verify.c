// SPDX-License-Identifier: MIT
/*
 * blkstack bench data verification: headers, seeded or patterned data,
 * and fio's verify= methods in fio's block format.  See verify.h for the
 * format.
 *
 * The check values are the libraries': nettle for md5, sha1, sha3-* and
 * the SHA-256 compression under fio's sha256; ISA-L for crc32c
 * (crc32_iscsi), crc32 (crc32_ieee) and crc64 (crc64_jones_refl);
 * libxxhash for xxhash (XXH32, in its header-only form).  fio's crc16 and
 * crc7 are variants no C library on Debian computes: they are small
 * table-driven functions here (crc16(), crc7() below say which and why).
 * fio's sha256 and sha512 are not the standard digests (verify.h):
 * fio_sha256() and fio_sha512() below build fio's values.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>
#include <isa-l/crc64.h>
#include <nettle/base16.h>
#include <nettle/md5.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <nettle/sha3.h>
/* libxxhash's own code, inlined here rather than loaded (CMakeLists.txt) */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bench/verify.h"

#define HDR_LEN ((uint32_t)sizeof(struct bench_verify_hdr))
#define CRC_OFF ((uint32_t)offsetof(struct bench_verify_hdr, crc32))

/* fio seeds its XXH32 with 1 (verify.c, fill_xxhash()) */
#define XXHASH_SEED 1

/* fio's verify_type codes (verify.h) that have no method of their own */
#define FIO_VERIFY_CRC32C_INTEL 6
#define FIO_VERIFY_PATTERN_HDR 17	/* verify_pattern= without verify= */

static const struct verify_method {
	const char *name;
	uint8_t dlen;			/* check value bytes after the header */
	bool hdr;			/* blocks carry headers */
	uint16_t type;			/* fio's verify_type code */
} methods[VERIFY_NR] = {
	[VERIFY_NONE] = { "none", 0, false, 0 },
	[VERIFY_CRC32C] = { "crc32c", 4, true, 5 },
	[VERIFY_MD5] = { "md5", MD5_DIGEST_SIZE, true, 2 },
	[VERIFY_SHA1] = { "sha1", SHA1_DIGEST_SIZE, true, 16 },
	[VERIFY_SHA256] = { "sha256", 64, true, 9 },
	[VERIFY_SHA512] = { "sha512", 128, true, 10 },
	[VERIFY_SHA3_224] = { "sha3-224", SHA3_224_DIGEST_SIZE, true, 11 },
	[VERIFY_SHA3_256] = { "sha3-256", SHA3_256_DIGEST_SIZE, true, 12 },
	[VERIFY_SHA3_384] = { "sha3-384", SHA3_384_DIGEST_SIZE, true, 13 },
	[VERIFY_SHA3_512] = { "sha3-512", SHA3_512_DIGEST_SIZE, true, 14 },
	[VERIFY_XXHASH] = { "xxhash", 4, true, 15 },
	[VERIFY_CRC32] = { "crc32", 4, true, 4 },
	[VERIFY_CRC16] = { "crc16", 2, true, 7 },
	[VERIFY_CRC7] = { "crc7", 1, true, 8 },
	[VERIFY_CRC64] = { "crc64", 8, true, 3 },
	[VERIFY_META] = { "meta", 0, true, 1 },
	[VERIFY_PATTERN] = { "pattern", 0, false, 18 },
	[VERIFY_NULL] = { "null", 0, false, 19 },
};

_Static_assert(BENCH_VERIFY_DIGEST_MAX == 128,
	       "the largest check value (fio's sha512) fits after the header");

const char *bench_verify_name(enum bench_verify m)
{
	return (unsigned int)m < VERIFY_NR ? methods[m].name : "?";
}

uint16_t bench_verify_type(enum bench_verify m)
{
	return (unsigned int)m < VERIFY_NR ? methods[m].type : 0;
}

uint32_t bench_verify_hdr_len(enum bench_verify m)
{
	if ((unsigned int)m >= VERIFY_NR || !methods[m].hdr)
		return 0;
	return HDR_LEN + methods[m].dlen;
}

/*
 * fio's crc16 is CRC-16/ARC: polynomial 0x8005 reflected (0xa001),
 * initial value 0, no final xor; check value 0xbb3d.  ISA-L has only
 * CRC-16/T10-DIF (0x8bb7, not reflected), and Debian's one generic CRC
 * library, libcrcutil, is C++ templates: a 256-entry table does it.
 *
 * fio's crc7 is CRC-7/MMC: polynomial 0x09 (x^7 + x^3 + 1), not
 * reflected, initial value 0, no final xor; check value 0x75.  No
 * library on Debian has it (libcrcutil does reflected CRCs only): a
 * table indexed by the register kept in the top 7 bits of a byte.
 */
static uint16_t crc16_table[256];
static uint8_t crc7_table[256];
static pthread_once_t crc_tables_once = PTHREAD_ONCE_INIT;

static void crc_tables_init(void)
{
	unsigned int i, k;

	for (i = 0; i < 256; i++) {
		uint16_t c16 = (uint16_t)i;
		uint8_t c7 = (uint8_t)i;

		for (k = 0; k < 8; k++) {
			c16 = (c16 & 1) ? (uint16_t)((c16 >> 1) ^ 0xa001) :
					  (uint16_t)(c16 >> 1);
			c7 = (c7 & 0x80) ? (uint8_t)((c7 << 1) ^ (0x09 << 1)) :
					   (uint8_t)(c7 << 1);
		}
		crc16_table[i] = c16;
		crc7_table[i] = c7;
	}
}

static uint16_t crc16(const uint8_t *p, size_t len)
{
	uint16_t crc = 0;

	pthread_once(&crc_tables_once, crc_tables_init);
	while (len--)
		crc = (uint16_t)((crc >> 8) ^ crc16_table[(crc ^ *p++) & 0xff]);
	return crc;
}

static uint8_t crc7(const uint8_t *p, size_t len)
{
	uint8_t reg = 0;	/* the CRC in bits 7..1 */

	pthread_once(&crc_tables_once, crc_tables_init);
	while (len--)
		reg = crc7_table[reg ^ *p++];
	return reg >> 1;
}

/*
 * fio's sha256 (crc/sha256.c, verify.c fill_sha256()): the SHA-256
 * compression over the data, then 0x80 and zeros to 56 mod 64, then the
 * bit count as a little-endian 64-bit number (SHA-256 has it big-endian);
 * fio then stores its 64-byte block buffer, whose bytes 0..7 it has set
 * to the low byte of each state word and whose bytes 8..63 are those of
 * the last block compressed.  nettle's sha256_update() runs the same
 * compression and keeps the state in its public context.
 */
static void fio_sha256(const uint8_t *p, size_t len, uint8_t *out)
{
	static const uint8_t pad[64] = { 0x80 };
	uint8_t tail[64 + 64 + 8];
	struct sha256_ctx c;
	size_t idx = len & 63, padlen = idx < 56 ? 56 - idx : 120 - idx;
	uint64_t bits = htole64((uint64_t)(uint32_t)len << 3);
	unsigned int i;

	sha256_init(&c);
	sha256_update(&c, len, p);
	sha256_update(&c, padlen, pad);
	sha256_update(&c, 8, (const uint8_t *)&bits);
	/* the last block: the data's last idx bytes, the pad, the count */
	memcpy(tail, p + len - idx, idx);
	memcpy(tail + idx, pad, padlen);
	memcpy(tail + idx + padlen, &bits, 8);
	memcpy(out, tail + idx + padlen + 8 - 64, 64);
	for (i = 0; i < 8; i++)
		out[i] = (uint8_t)c.state[i];
}

/*
 * fio's sha512 (crc/sha512.c, verify.c fill_sha512()): fio never calls
 * the final step and stores its 128-byte input buffer: the data's first
 * 128 bytes (copied in to start the first compression), then the last
 * (len mod 128) bytes over their start.  No compression is needed to
 * reproduce it.  Data shorter than 128 bytes leave the rest of fio's
 * buffer as it was (the block's own bytes when fio writes, stack when it
 * reads: fio cannot check those); zeros here.
 */
static void fio_sha512(const uint8_t *p, size_t len, uint8_t *out)
{
	size_t r = len % 128;

	memset(out, 0, 128);
	memcpy(out, p, len < 128 ? len : 128);
	if (len >= 128)
		memcpy(out, p + len - r, r);
}

void bench_verify_digest(enum bench_verify m, const void *buf, size_t len,
			 uint8_t *out)
{
	/* ISA-L's CRCs take non-const pointers but only read them */
	uint8_t *p = (uint8_t *)(uintptr_t)buf;
	union {
		struct md5_ctx md5;
		struct sha1_ctx sha1;
		struct sha3_224_ctx sha3_224;
		struct sha3_256_ctx sha3_256;
		struct sha3_384_ctx sha3_384;
		struct sha3_512_ctx sha3_512;
	} c;
	uint32_t w;
	uint64_t v;
	unsigned int i;

	/*
	 * nettle's functions rather than its struct nettle_hash objects:
	 * data the binary points at are resolved when it starts, functions
	 * when first called (92k instructions more at every start-up)
	 */
	switch (m) {
	case VERIFY_MD5:
		md5_init(&c.md5);
		md5_update(&c.md5, len, p);
		md5_digest(&c.md5, MD5_DIGEST_SIZE, out);
		return;
	case VERIFY_SHA1:
		sha1_init(&c.sha1);
		sha1_update(&c.sha1, len, p);
		sha1_digest(&c.sha1, SHA1_DIGEST_SIZE, out);
		/* fio stores the words H[0..4] in host order: little-endian */
		for (i = 0; i < SHA1_DIGEST_SIZE; i += 4) {
			memcpy(&w, out + i, 4);
			w = htole32(be32toh(w));
			memcpy(out + i, &w, 4);
		}
		return;
	case VERIFY_SHA256:
		fio_sha256(p, len, out);
		return;
	case VERIFY_SHA512:
		fio_sha512(p, len, out);
		return;
	case VERIFY_SHA3_224:
		sha3_224_init(&c.sha3_224);
		sha3_224_update(&c.sha3_224, len, p);
		sha3_224_digest(&c.sha3_224, SHA3_224_DIGEST_SIZE, out);
		return;
	case VERIFY_SHA3_256:
		sha3_256_init(&c.sha3_256);
		sha3_256_update(&c.sha3_256, len, p);
		sha3_256_digest(&c.sha3_256, SHA3_256_DIGEST_SIZE, out);
		return;
	case VERIFY_SHA3_384:
		sha3_384_init(&c.sha3_384);
		sha3_384_update(&c.sha3_384, len, p);
		sha3_384_digest(&c.sha3_384, SHA3_384_DIGEST_SIZE, out);
		return;
	case VERIFY_SHA3_512:
		sha3_512_init(&c.sha3_512);
		sha3_512_update(&c.sha3_512, len, p);
		sha3_512_digest(&c.sha3_512, SHA3_512_DIGEST_SIZE, out);
		return;
	case VERIFY_CRC32C:
		v = bench_verify_crc32c(p, (uint32_t)len);
		break;
	case VERIFY_XXHASH:
		v = XXH32(p, len, XXHASH_SEED);
		break;
	case VERIFY_CRC32:
		/*
		 * fio's crc32: polynomial 0x04c11db7, not reflected, initial
		 * value 0, no final xor (CRC-32/CKSUM without its final xor
		 * or length; check value 0x89a1897f).  crc32_ieee() inverts
		 * both: invert them back.
		 */
		v = ~crc32_ieee(~0u, p, len) & 0xffffffffu;
		break;
	case VERIFY_CRC16:
		v = crc16(p, len);
		break;
	case VERIFY_CRC7:
		v = crc7(p, len);
		break;
	case VERIFY_CRC64:
		/*
		 * fio's crc64: Jones's polynomial 0xad93d23594c935a9,
		 * reflected, initial value 0, no final xor (Redis's crc64;
		 * check value 0xe9c6d914c4b8d9ca).  crc64_jones_refl()
		 * inverts both: invert them back.
		 */
		v = ~crc64_jones_refl(~0ull, p, len);
		break;
	default:
		return;
	}
	v = htole64(v);
	memcpy(out, &v, methods[m].dlen);
}

uint32_t bench_verify_crc32c(const void *buf, uint32_t len)
{
	/* crc32_iscsi() takes a non-const pointer but only reads it */
	unsigned char *p = (unsigned char *)(uintptr_t)buf;

	/* crc32_iscsi() neither inverts its input nor its result: fio's */
	return crc32_iscsi(p, (int)len, 0xffffffffu);
}

/* fio's verify_pattern= syntax (HOWTO, verify_pattern; lib/pattern.c's
 * comment for the forms) */

static int pattern_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int pattern_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool at_hex_prefix(const char *s)
{
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hexval(s[2]) >= 0;
}

int bench_verify_pattern_parse(const char *in, struct bench_verify_pattern *p,
			       char *err, size_t errlen)
{
	const char *s = in, *end;
	uint32_t n = 0;

	memset(p, 0, sizeof(*p));
	if (!*s)
		return pattern_err(err, errlen, "empty");
	while (*s) {
		if (*s == '"') {
			end = strchr(s + 1, '"');
			if (!end)
				return pattern_err(err, errlen,
						   "a string without its closing quote");
			if (end == s + 1)
				return pattern_err(err, errlen,
						   "an empty string");
			if ((size_t)(end - s - 1) > BENCH_VERIFY_PATTERN_MAX - n)
				goto too_long;
			memcpy(p->bytes + n, s + 1, (size_t)(end - s - 1));
			n += (uint32_t)(end - s - 1);
			s = end + 1;
		} else if (*s == '\'') {
			return pattern_err(err, errlen,
					   "fio's '...' (a file's bytes) is not supported");
		} else if (*s == '%') {
			if (s[1] != 'o')
				return pattern_err(err, errlen,
						   "unknown format %%%c (fio has %%o, the block's offset)",
						   s[1] ? s[1] : ' ');
			if (p->nr_off == BENCH_VERIFY_PATTERN_FMT_MAX)
				return pattern_err(err, errlen,
						   "more than %d %%o",
						   BENCH_VERIFY_PATTERN_FMT_MAX);
			if (8 > BENCH_VERIFY_PATTERN_MAX - n)
				goto too_long;
			p->off_at[p->nr_off++] = (uint16_t)n;
			n += 8;
			s += 2;
		} else if (at_hex_prefix(s)) {
			const char *d = s + 2;
			size_t digits;

			for (end = d; hexval(*end) >= 0; end++)
				;
			/* 0xff0x14: the last 0 starts the next number */
			if ((*end == 'x' || *end == 'X') && end[-1] == '0' &&
			    end - 1 > d)
				end--;
			digits = (size_t)(end - d);
			if ((digits + 1) / 2 > BENCH_VERIFY_PATTERN_MAX - n)
				goto too_long;
			/* an odd count: the first digit is a byte of its own */
			if (digits & 1)
				p->bytes[n++] = (uint8_t)hexval(*d++);
			for (; d < end; d += 2)
				p->bytes[n++] = (uint8_t)(hexval(d[0]) << 4 |
							  hexval(d[1]));
			s = end;
		} else if ((*s >= '0' && *s <= '9') || *s == '-' || *s == '+') {
			char num[24];
			const char *q = s + (*s == '-' || *s == '+');
			long long v;
			unsigned int u;
			char *e;

			/* a decimal ends where a 0x number starts */
			for (end = q; *end >= '0' && *end <= '9' &&
			     !at_hex_prefix(end); end++)
				;
			if (end == q || (size_t)(end - s) >= sizeof(num))
				return pattern_err(err, errlen,
						   "a bad number at '%s'",
						   s);
			memcpy(num, s, (size_t)(end - s));
			num[end - s] = '\0';
			errno = 0;
			v = strtoll(num, &e, 10);
			if (errno || *e || v < INT_MIN || v > INT_MAX)
				return pattern_err(err, errlen,
						   "%s is out of range (a decimal is an int: %d .. %d)",
						   num, INT_MIN, INT_MAX);
			/* the fewest bytes that hold it, as an unsigned int */
			u = (unsigned int)(int)v;
			do {
				if (n == BENCH_VERIFY_PATTERN_MAX)
					goto too_long;
				p->bytes[n++] = (uint8_t)u;
				u >>= 8;
			} while (u);
			s = end;
		} else {
			return pattern_err(err, errlen,
					   "unexpected '%c' (fio's forms: 0x hex, decimal, \"string\", %%o)",
					   *s);
		}
	}
	p->len = n;
	return 0;
too_long:
	return pattern_err(err, errlen,
			   "longer than %d bytes (fio's limit)",
			   BENCH_VERIFY_PATTERN_MAX);
}

/* The pattern with this block's offset in its %o places. */
static const uint8_t *pattern_for(const struct bench_verify_pattern *pat,
				  uint64_t offset, uint8_t *tmp)
{
	uint64_t le = htole64(offset);
	unsigned int i;

	if (!pat->nr_off)
		return pat->bytes;
	memcpy(tmp, pat->bytes, pat->len);
	for (i = 0; i < pat->nr_off; i++)
		memcpy(tmp + pat->off_at[i], &le, 8);
	return tmp;
}

/* @len bytes of the pattern repeated from its first byte */
static void pattern_fill(uint8_t *buf, uint32_t len, const uint8_t *pat,
			 uint32_t plen)
{
	uint32_t n = plen < len ? plen : len;

	memcpy(buf, pat, n);
	/* doubling: each copy starts at a multiple of plen */
	while (n < len) {
		uint32_t k = n < len - n ? n : len - n;

		memcpy(buf + n, buf, k);
		n += k;
	}
}

/*
 * Compare @len bytes at @buf with the pattern from its byte @phase on.
 * Return: the first bad byte's index, or @len when all are good.
 */
static uint32_t pattern_cmp(const uint8_t *buf, uint32_t len,
			    const uint8_t *pat, uint32_t plen, uint32_t phase)
{
	uint32_t i = 0, k;

	while (i < len) {
		k = plen - phase < len - i ? plen - phase : len - i;
		if (memcmp(buf + i, pat + phase, k)) {
			while (buf[i] == pat[phase]) {
				i++;
				phase++;
			}
			return i;
		}
		i += k;
		phase = 0;
	}
	return len;
}

/* splitmix64 (Steele, Lea and Flood): one multiply-xorshift per word */
static inline uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void seed_fill(uint8_t *p, uint32_t len, uint64_t seed)
{
	uint8_t *end = p + len;
	uint64_t x = seed, v;

	for (; p + 8 <= end; p += 8) {
		v = htole64(splitmix64(&x));
		memcpy(p, &v, 8);
	}
	if (p < end) {
		v = htole64(splitmix64(&x));
		memcpy(p, &v, (size_t)(end - p));
	}
}

/* verify_offset: the header and the bytes at @off trade places */
static void hdr_swap(uint8_t *p, uint32_t off, uint32_t hl)
{
	uint8_t t[BENCH_VERIFY_HDR_MAX];

	memcpy(t, p, hl);
	memcpy(p, p + off, hl);
	memcpy(p + off, t, hl);
}

void bench_verify_fill(const struct bench_verify_spec *s, void *buf,
		       uint32_t len, uint64_t offset, uint32_t job,
		       uint64_t seed, uint64_t numberio)
{
	enum bench_verify m = s->method;
	uint32_t hl = bench_verify_hdr_len(m);
	uint32_t iv = s->interval ? s->interval : len;
	uint8_t tmp[BENCH_VERIFY_PATTERN_MAX];
	uint8_t *b = buf, *p;

	if (m == VERIFY_NULL || m == VERIFY_NONE)
		return;
	if (s->pat && s->pat->len)
		pattern_fill(b, len, pattern_for(s->pat, offset, tmp),
			     s->pat->len);
	else
		seed_fill(b, len, seed);
	if (!hl)
		return;
	for (p = b; p + iv <= b + len; p += iv) {
		struct bench_verify_hdr h = {
			.magic = htole16(BENCH_VERIFY_MAGIC),
			.verify_type = htole16(methods[m].type),
			.len = htole32(iv),
			.rand_seed = htole64(seed),
			.offset = htole64(offset + (uint64_t)(p - b)),
			.thread = htole16((uint16_t)job),
			.numberio = htole16((uint16_t)numberio),
		};

		h.crc32 = htole32(bench_verify_crc32c(&h, CRC_OFF));
		memcpy(p, &h, HDR_LEN);
		if (methods[m].dlen)
			bench_verify_digest(m, p + hl, iv - hl, p + HDR_LEN);
		if (s->hdr_off)
			hdr_swap(p, s->hdr_off, hl);
	}
}

static int fail(struct bench_verify_result *res, enum bench_verify_err err,
		uint64_t expected, uint64_t found)
{
	res->err = err;
	res->expected = expected;
	res->found = found;
	return -EILSEQ;
}

/* the data of [@p, @p + @len), block byte @at on, against the pattern */
static int check_pattern(const struct bench_verify_spec *s, const uint8_t *p,
			 uint32_t len, uint32_t at, uint64_t offset,
			 struct bench_verify_result *res)
{
	uint8_t tmp[BENCH_VERIFY_PATTERN_MAX];
	const uint8_t *pat = pattern_for(s->pat, offset, tmp);
	uint32_t bad;

	bad = pattern_cmp(p, len, pat, s->pat->len, at % s->pat->len);
	if (bad == len)
		return 0;
	res->pos = at + bad;
	return fail(res, BENCH_VERIFY_PATTERN_BAD,
		    pat[(at + bad) % s->pat->len], p[bad]);
}

/* the header's method code: fio's, with its two aliases */
static bool type_ok(enum bench_verify m, uint16_t type)
{
	return type == methods[m].type ||
	       (m == VERIFY_CRC32C && type == FIO_VERIFY_CRC32C_INTEL) ||
	       (m == VERIFY_META && type == FIO_VERIFY_PATTERN_HDR);
}

/* one interval at @p, @at bytes into the block at @offset */
static int check_interval(const struct bench_verify_spec *s, uint8_t *p,
			  uint32_t iv, uint32_t at, uint64_t offset,
			  struct bench_verify_result *res)
{
	enum bench_verify m = s->method;
	uint32_t hl = bench_verify_hdr_len(m), crc, stored;
	uint8_t dlen = methods[m].dlen;
	struct bench_verify_hdr h;
	uint64_t v;

	memcpy(&h, p, HDR_LEN);
	res->pos = at;
	res->job = le16toh(h.thread);
	res->seed = le64toh(h.rand_seed);
	res->numberio = le16toh(h.numberio);
	stored = le32toh(h.crc32);
	/* fio's verify_header() order: magic, len, offset, crc */
	if (le16toh(h.magic) != BENCH_VERIFY_MAGIC) {
		static const uint8_t zero[HDR_LEN];

		res->zero_hdr = !memcmp(p, zero, HDR_LEN);
		return fail(res, BENCH_VERIFY_MAGIC_BAD, BENCH_VERIFY_MAGIC,
			    le16toh(h.magic));
	}
	if (le32toh(h.len) != iv)
		return fail(res, BENCH_VERIFY_LEN_BAD, iv, le32toh(h.len));
	if (le64toh(h.offset) != offset + at)
		return fail(res, BENCH_VERIFY_OFFSET_BAD, offset + at,
			    le64toh(h.offset));
	crc = bench_verify_crc32c(p, CRC_OFF);
	if (crc != stored)
		return fail(res, BENCH_VERIFY_HDR_CRC_BAD, stored, crc);
	if (!type_ok(m, le16toh(h.verify_type)))
		return fail(res, BENCH_VERIFY_METHOD_BAD, methods[m].type,
			    le16toh(h.verify_type));
	if (dlen) {
		bench_verify_digest(m, p + hl, iv - hl, res->got);
		if (memcmp(res->got, p + HDR_LEN, dlen)) {
			memcpy(res->want, p + HDR_LEN, dlen);
			res->dlen = dlen;
			if (dlen <= 8) {
				uint64_t w = 0;

				memcpy(&w, res->want, dlen);
				v = 0;
				memcpy(&v, res->got, dlen);
				return fail(res, BENCH_VERIFY_DIGEST_BAD,
					    le64toh(w), le64toh(v));
			}
			return fail(res, BENCH_VERIFY_DIGEST_BAD, 0, 0);
		}
	}
	if (m == VERIFY_META && s->pat && s->pat->len)
		return check_pattern(s, p + hl, iv - hl, at + hl, offset, res);
	return 0;
}

int bench_verify_check(const struct bench_verify_spec *s, void *buf,
		       uint32_t len, uint64_t offset,
		       struct bench_verify_result *res)
{
	enum bench_verify m = s->method;
	uint32_t hl = bench_verify_hdr_len(m);
	uint32_t iv = s->interval && s->interval <= len ? s->interval : len;
	uint8_t *b = buf;
	uint32_t at;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	res->method = m;
	res->has_hdr = hl != 0;
	if (iv < len)
		res->interval = iv;
	if (m == VERIFY_NULL || m == VERIFY_NONE)
		return 0;
	if (m == VERIFY_PATTERN)
		return check_pattern(s, b, len, 0, offset, res);
	if (iv < hl + s->hdr_off || (s->hdr_off && s->hdr_off < hl))
		return fail(res, BENCH_VERIFY_SHORT, hl + s->hdr_off, iv);
	for (at = 0; at + iv <= len && !ret; at += iv) {
		if (s->hdr_off)
			hdr_swap(b + at, s->hdr_off, hl);
		ret = check_interval(s, b + at, iv, at, offset, res);
		if (s->hdr_off)
			hdr_swap(b + at, s->hdr_off, hl);
	}
	return ret;
}

static void hex(char *out, const uint8_t *p, unsigned int n)
{
	base16_encode_update(out, n, p);
	out[2 * n] = '\0';
}

/* fio's verify_type codes by name (verify.h's enum, options.c's names) */
static const char *const fio_types[] = {
	"none", "meta", "md5", "crc64", "crc32", "crc32c", "crc32c-intel",
	"crc16", "crc7", "sha256", "sha512", "sha3-224", "sha3-256",
	"sha3-384", "sha3-512", "xxhash", "sha1",
	"verify_pattern (header and pattern)", "pattern", "null",
};

int bench_verify_describe(const struct bench_verify_result *res, char *buf,
			  size_t len)
{
	static const struct {
		const char *what;
		int hex;	/* hex digits, or 0: decimal */
	} fields[] = {
		[BENCH_VERIFY_SHORT] = { "block length at least", 0 },
		[BENCH_VERIFY_MAGIC_BAD] = { "header magic", 4 },
		[BENCH_VERIFY_LEN_BAD] = { "header len", 0 },
		[BENCH_VERIFY_OFFSET_BAD] = { "header offset", 0 },
		[BENCH_VERIFY_HDR_CRC_BAD] = { "header crc32c", 8 },
	};
	unsigned int e = (unsigned int)res->err;
	char pre[64] = "", w[2 * BENCH_VERIFY_DIGEST_MAX + 1];
	char g[2 * BENCH_VERIFY_DIGEST_MAX + 1];

	if (e == BENCH_VERIFY_OK)
		return snprintf(buf, len, "ok");
	if (res->interval && e != BENCH_VERIFY_PATTERN_BAD &&
	    e != BENCH_VERIFY_SHORT)
		snprintf(pre, sizeof(pre), "interval at byte %" PRIu32 " (%" PRIu32 " bytes): ",
			 res->pos, res->interval);
	switch (e) {
	case BENCH_VERIFY_METHOD_BAD:
		if (res->found < sizeof(fio_types) / sizeof(fio_types[0]))
			return snprintf(buf, len, "%sheader method expected %s found %s",
					pre, fio_types[res->expected],
					fio_types[res->found]);
		return snprintf(buf, len, "%sheader method expected %s found unknown code %" PRIu64,
				pre, fio_types[res->expected], res->found);
	case BENCH_VERIFY_DIGEST_BAD:
		if (res->dlen <= 8)
			return snprintf(buf, len, "%s%s expected 0x%0*" PRIx64 " found 0x%0*" PRIx64,
					pre, bench_verify_name(res->method),
					2 * res->dlen, res->expected,
					2 * res->dlen, res->found);
		hex(w, res->want, res->dlen);
		hex(g, res->got, res->dlen);
		return snprintf(buf, len, "%s%s expected %s found %s", pre,
				bench_verify_name(res->method), w, g);
	case BENCH_VERIFY_PATTERN_BAD:
		return snprintf(buf, len,
				"pattern byte %" PRIu32 " expected 0x%02" PRIx64 " found 0x%02" PRIx64 " (%d bad bits)",
				res->pos, res->expected, res->found,
				__builtin_popcountll(res->expected ^ res->found));
	case BENCH_VERIFY_MAGIC_BAD:
		if (res->zero_hdr)
			return snprintf(buf, len, "%sheader magic expected 0x%04" PRIx64 " found 0x%04" PRIx64 " (the header's %u bytes all zero: never written?)",
					pre, res->expected, res->found, HDR_LEN);
		break;
	default:
		break;
	}
	if (e >= sizeof(fields) / sizeof(fields[0]) || !fields[e].what)
		return snprintf(buf, len, "unknown verify error %u", e);
	if (fields[e].hex)
		return snprintf(buf, len, "%s%s expected 0x%0*" PRIx64 " found 0x%0*" PRIx64,
				pre, fields[e].what, fields[e].hex, res->expected,
				fields[e].hex, res->found);
	return snprintf(buf, len, "%s%s expected %" PRIu64 " found %" PRIu64,
			pre, fields[e].what, res->expected, res->found);
}
