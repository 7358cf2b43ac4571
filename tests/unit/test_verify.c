// SPDX-License-Identifier: MIT
/*
 * Unit tests for blkstack bench's verify block format (src/bench/verify.c),
 * fio's: a filled block checks good; any flipped byte, a wrong offset,
 * length or magic is reported with the field, the expected and the found
 * value; the check values are fio's (known answers, some computed by an
 * independent SHA-256 in Python checked against blocks fio 3.33 wrote).
 * That fio itself reads these blocks, and blkstack fio's, is
 * tests/func/test_verify_fio.sh's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/verify.h"

#define HDR_LEN sizeof(struct bench_verify_hdr)

/* crc32c, one header per block */
static const struct bench_verify_spec crc = { .method = VERIFY_CRC32C };

/* Bitwise reference CRC-32C (reflected polynomial 0x82f63b78). */
static uint32_t ref_crc32c(uint32_t crc, const unsigned char *p, size_t n)
{
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return crc;
}

static void *block(size_t len)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, 4096, len), 0);
	memset(p, 0xa5, len);
	return p;
}

static void test_reference_crc(void **state)
{
	(void)state;
	/* the CRC-32C check value of "123456789" */
	assert_int_equal(~ref_crc32c(~0u, (const unsigned char *)"123456789", 9),
			 0xe3069283u);
}

/* fio's crc32c is the register: no final xor */
static void test_crc32c_is_fios(void **state)
{
	static const uint32_t lens[] = { 0, 1, 36, 512, 4096, 65536 + 13 };
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned char *b = block(lens[i] + 1);
		size_t k;

		for (k = 0; k < lens[i]; k++)
			b[k] = (unsigned char)(k * 31 + 7);
		assert_int_equal(bench_verify_crc32c(b, lens[i]),
				 ref_crc32c(~0u, b, lens[i]));
		free(b);
	}
}

static void test_fill_layout(void **state)
{
	unsigned char *b = block(4096), *c = block(4096);
	struct bench_verify_hdr h;
	uint32_t v;

	(void)state;
	bench_verify_fill(&crc, b, 4096, 1052672, 3, 0x0123456789abcdefull, 17);
	/* fio's FIO_HDR_MAGIC 0xacca, little-endian, then the fields */
	assert_int_equal(b[0], 0xca);
	assert_int_equal(b[1], 0xac);
	memcpy(&h, b, sizeof(h));
	assert_int_equal(h.magic, BENCH_VERIFY_MAGIC);
	assert_int_equal(h.verify_type, 5);	/* fio's VERIFY_CRC32C */
	assert_int_equal(h.len, 4096);
	assert_int_equal(h.rand_seed, 0x0123456789abcdefull);
	assert_int_equal(h.offset, 1052672);
	assert_int_equal(h.time_sec | h.time_nsec, 0);
	assert_int_equal(h.thread, 3);
	assert_int_equal(h.numberio, 17);
	assert_int_equal(h.crc32, bench_verify_crc32c(b, 36));
	/* fio's vhdr_crc32 after it: the crc32c of the rest */
	assert_int_equal(bench_verify_hdr_len(VERIFY_CRC32C), 44);
	memcpy(&v, b + 40, 4);
	assert_int_equal(v, bench_verify_crc32c(b + 44, 4096 - 44));

	/* the data depends on the seed alone */
	bench_verify_fill(&crc, c, 4096, 0, 0, 0x0123456789abcdefull, 0);
	assert_memory_equal(b + 44, c + 44, 4096 - 44);
	bench_verify_fill(&crc, c, 4096, 1052672, 3, 0x0123456789abcdeeull, 17);
	assert_memory_not_equal(b + 44, c + 44, 4096 - 44);
	/* numberio is fio's 16 bits */
	bench_verify_fill(&crc, c, 4096, 0, 0, 1, 0x12345);
	memcpy(&h, c, sizeof(h));
	assert_int_equal(h.numberio, 0x2345);
	free(b);
	free(c);
}

static void test_good_blocks(void **state)
{
	static const uint32_t lens[] = { 512, 4096, 8192, 1 << 20 };
	struct bench_verify_result r;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned char *b = block(lens[i]);
		uint64_t off = (uint64_t)i * lens[i] * 7;

		bench_verify_fill(&crc, b, lens[i], off, i, 1000 + i, 5 * i);
		assert_int_equal(bench_verify_check(&crc, b, lens[i], off, &r), 0);
		assert_int_equal(r.err, BENCH_VERIFY_OK);
		assert_int_equal(r.job, i);
		assert_int_equal(r.seed, 1000 + i);
		assert_int_equal(r.numberio, 5 * i);
		free(b);
	}
}

/* Which check a flipped byte at @pos trips (crc32c: 40 + 4 bytes). */
static enum bench_verify_err err_at(size_t pos)
{
	if (pos < 2)
		return BENCH_VERIFY_MAGIC_BAD;
	if (pos >= 4 && pos < 8)
		return BENCH_VERIFY_LEN_BAD;
	if (pos >= 16 && pos < 24)
		return BENCH_VERIFY_OFFSET_BAD;
	/* verify_type, rand_seed, time, thread, numberio, the crc itself */
	if (pos < 40)
		return BENCH_VERIFY_HDR_CRC_BAD;
	/* the stored crc32c and the data */
	return BENCH_VERIFY_DIGEST_BAD;
}

static void test_flip_any_byte(void **state)
{
	const uint32_t len = 4096;
	const uint64_t off = 8192;
	unsigned char *b = block(len);
	struct bench_verify_result r;
	uint32_t stored;
	size_t pos;

	(void)state;
	bench_verify_fill(&crc, b, len, off, 1, 42, 9);
	memcpy(&stored, b + 40, 4);
	for (pos = 0; pos < len; pos++) {
		b[pos] ^= 0x10;
		assert_int_equal(bench_verify_check(&crc, b, len, off, &r), -EILSEQ);
		if (r.err != err_at(pos))
			fail_msg("byte %zu: error %d, expected %d", pos, r.err,
				 err_at(pos));
		if (r.err == BENCH_VERIFY_DIGEST_BAD) {
			if (pos < 44) {
				/* the stored crc changed, the data did not */
				assert_int_not_equal(r.expected, stored);
				assert_int_equal(r.found, stored);
			} else {
				assert_int_equal(r.expected, stored);
				assert_int_not_equal(r.found, stored);
			}
		}
		b[pos] ^= 0x10;
	}
	assert_int_equal(bench_verify_check(&crc, b, len, off, &r), 0);
	free(b);
}

static void test_wrong_offset(void **state)
{
	unsigned char *b = block(4096);
	struct bench_verify_result r;
	char msg[128];

	(void)state;
	bench_verify_fill(&crc, b, 4096, 8192, 0, 7, 3);
	assert_int_equal(bench_verify_check(&crc, b, 4096, 1052672, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_OFFSET_BAD);
	assert_int_equal(r.expected, 1052672);
	assert_int_equal(r.found, 8192);
	assert_int_equal(r.seed, 7);
	assert_int_equal(r.numberio, 3);
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header offset expected 1052672 found 8192");
	free(b);
}

static void test_wrong_magic(void **state)
{
	unsigned char *b = block(4096);
	struct bench_verify_result r;
	char msg[128];

	(void)state;
	/* a block never written: zeros */
	memset(b, 0, 4096);
	assert_int_equal(bench_verify_check(&crc, b, 4096, 0, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_MAGIC_BAD);
	assert_int_equal(r.expected, BENCH_VERIFY_MAGIC);
	assert_int_equal(r.found, 0);
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header magic expected 0xacca found 0x0000 (the header's 40 bytes all zero: never written?)");

	bench_verify_fill(&crc, b, 4096, 0, 0, 1, 1);
	b[0] = 0xcb;
	assert_int_equal(bench_verify_check(&crc, b, 4096, 0, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_MAGIC_BAD);
	assert_int_equal(r.found, 0xaccb);
	free(b);
}

static void test_wrong_len(void **state)
{
	unsigned char *b = block(8192);
	struct bench_verify_result r;
	char msg[128];

	(void)state;
	/* written with bs=8k, read back with bs=4k */
	bench_verify_fill(&crc, b, 8192, 0, 0, 1, 1);
	assert_int_equal(bench_verify_check(&crc, b, 4096, 0, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_LEN_BAD);
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header len expected 4096 found 8192");
	/* too short for a header at all */
	assert_int_equal(bench_verify_check(&crc, b, 16, 0, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_SHORT);
	free(b);
}

static void test_describe_crc(void **state)
{
	struct bench_verify_result r = {
		.err = BENCH_VERIFY_DIGEST_BAD,
		.method = VERIFY_CRC32C,
		.dlen = 4,
		.expected = 0x1234abcd,
		.found = 0x99887766,
	};
	char msg[128];

	(void)state;
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "crc32c expected 0x1234abcd found 0x99887766");
	r.err = BENCH_VERIFY_HDR_CRC_BAD;
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header crc32c expected 0x1234abcd found 0x99887766");
}

/*
 * Known answers.  CRCs: the check value of "123456789" of the variant
 * fio computes (catalogued as CRC-16/ARC, CRC-7/MMC; fio's crc32c is
 * CRC-32C/iSCSI 0xe3069283 without its final xor, fio's crc32 is
 * CRC-32/CKSUM 0x765e7680 without its final xor, fio's crc64 is Jones's
 * polynomial from 0, Redis's crc64 test vector).  xxhash: XXH32 with
 * fio's seed 1, the value fio 3.33's own crc/xxhash.c gives.  md5: RFC
 * 1321's test suite; sha1: FIPS 180's "abc" examples, each 32-bit word
 * little-endian as fio stores it; sha256: fio's form (verify.h) from an
 * independent SHA-256 in Python, which gave the values in blocks fio
 * wrote; sha512: fio's form, its input buffer ("abc", then zeros); sha3:
 * FIPS 202's "abc" examples.
 */
static void test_known_answers(void **state)
{
	static const struct {
		enum bench_verify m;
		const char *in;
		const char *hex;	/* the digest bytes as stored */
	} kat[] = {
		{ VERIFY_CRC32C, "123456789", "7c6df91c" },
		{ VERIFY_CRC32, "123456789", "7f89a189" },
		{ VERIFY_CRC16, "123456789", "3dbb" },
		{ VERIFY_CRC7, "123456789", "75" },
		{ VERIFY_CRC64, "123456789", "cad9b8c414d9c6e9" },
		{ VERIFY_XXHASH, "123456789", "8c9161f2" },
		{ VERIFY_MD5, "", "d41d8cd98f00b204e9800998ecf8427e" },
		{ VERIFY_MD5, "abc", "900150983cd24fb0d6963f7d28e17f72" },
		{ VERIFY_MD5, "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
		{ VERIFY_MD5, "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
		  "57edf4a22be3c955ac49da2e2107b67a" },
		{ VERIFY_SHA1, "abc", "363e99a96a81064771253eba6cc250789dd8d09c" },
		{ VERIFY_SHA1, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "443e98846ed23b1ca14aaebae52951f9f17046e5" },
		{ VERIFY_SHA256, "abc", "ecd746f40a9bf568"	/* the state's low bytes */
		  "000000000000000000000000000000000000000000000000"	/* the pad */
		  "000000000000000000000000000000000000000000000000"
		  "1800000000000000" },	/* 24 bits, little-endian */
		{ VERIFY_SHA512, "abc", "616263" },
		{ VERIFY_SHA3_224, "abc", "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf" },
		{ VERIFY_SHA3_256, "abc", "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532" },
		{ VERIFY_SHA3_384, "abc", "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25" },
		{ VERIFY_SHA3_512, "abc", "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0" },
	};
	unsigned int i, k;

	(void)state;
	for (i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
		uint8_t out[BENCH_VERIFY_DIGEST_MAX], want[BENCH_VERIFY_DIGEST_MAX];
		const char *h = kat[i].hex;
		unsigned int n = 0;

		for (k = 0; h[k]; k += 2) {
			unsigned int v;

			assert_int_equal(sscanf(h + k, "%2x", &v), 1);
			want[n++] = (uint8_t)v;
		}
		/* sha512's zeros after "abc" are not spelled out */
		if (kat[i].m == VERIFY_SHA512) {
			memset(want + n, 0, 128 - n);
			n = 128;
		}
		assert_int_equal(n, bench_verify_hdr_len(kat[i].m) - HDR_LEN);
		memset(out, 0xee, sizeof(out));
		bench_verify_digest(kat[i].m, kat[i].in, strlen(kat[i].in), out);
		if (memcmp(out, want, n))
			fail_msg("%s(\"%s\"): wrong digest", bench_verify_name(kat[i].m),
				 kat[i].in);
	}
}

/*
 * fio's sha256 where the pad takes a second block (56 or more bytes past
 * the last whole block), and fio's sha512 of data longer than 128 bytes:
 * the first 128 with the last (n mod 128) over their start.
 */
static void test_fio_sha_forms(void **state)
{
	/* the Python reference's value for bytes 0..255 twice, then 60 'x' */
	static const char sha256_572[] = "676df8fae1a17b01"
		"000000000000000000000000000000000000000000000000"
		"000000000000000000000000000000000000000000000000"
		"e011000000000000";	/* 4576 bits */
	uint8_t in[572], out[128], want[64];
	unsigned int i, v;

	(void)state;
	for (i = 0; i < 512; i++)
		in[i] = (uint8_t)i;
	memset(in + 512, 'x', 60);
	for (i = 0; i < 64; i++) {
		assert_int_equal(sscanf(sha256_572 + 2 * i, "%2x", &v), 1);
		want[i] = (uint8_t)v;
	}
	bench_verify_digest(VERIFY_SHA256, in, sizeof(in), out);
	assert_memory_equal(out, want, 64);

	/* 300 bytes: 300 mod 128 = 44, bytes 256..299 over 0..43 */
	bench_verify_digest(VERIFY_SHA512, in, 300, out);
	assert_memory_equal(out, in + 256, 44);
	assert_memory_equal(out + 44, in + 44, 128 - 44);
	/* a multiple of 128: the first 128 bytes alone */
	bench_verify_digest(VERIFY_SHA512, in, 512, out);
	assert_memory_equal(out, in, 128);
}

/* The CRCs by their definitions, bit by bit, over a block of every byte. */
static void test_crcs_bitwise(void **state)
{
	unsigned char b[4096 + 7];
	uint8_t out[8];
	uint64_t c64 = 0, got;
	uint32_t c32 = 0;
	uint16_t c16 = 0;
	uint8_t c7 = 0;
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < sizeof(b); i++)
		b[i] = (unsigned char)(i * 131 + (i >> 8));
	for (i = 0; i < sizeof(b); i++) {
		c32 ^= (uint32_t)b[i] << 24;
		c16 ^= b[i];
		c64 ^= b[i];
		for (k = 0; k < 8; k++) {
			c32 = (c32 & 0x80000000u) ? (c32 << 1) ^ 0x04c11db7u : c32 << 1;
			c16 = (c16 & 1) ? (uint16_t)((c16 >> 1) ^ 0xa001) : (uint16_t)(c16 >> 1);
			c64 = (c64 & 1) ? (c64 >> 1) ^ 0x95ac9329ac4bc9b5ull : c64 >> 1;
			/* CRC-7: the register in the low 7 bits, message bit in at the top */
			c7 = (uint8_t)((((c7 >> 6) ^ (b[i] >> (7 - k))) & 1) ?
				       ((c7 << 1) ^ 0x09) & 0x7f : (c7 << 1) & 0x7f);
		}
	}
	memset(out, 0, sizeof(out));
	bench_verify_digest(VERIFY_CRC32, b, sizeof(b), out);
	memcpy(&got, out, 8);
	assert_int_equal(got & 0xffffffffu, c32);
	memset(out, 0, sizeof(out));
	bench_verify_digest(VERIFY_CRC16, b, sizeof(b), out);
	memcpy(&got, out, 8);
	assert_int_equal(got & 0xffff, c16);
	memset(out, 0, sizeof(out));
	bench_verify_digest(VERIFY_CRC7, b, sizeof(b), out);
	assert_int_equal(out[0], c7);
	bench_verify_digest(VERIFY_CRC64, b, sizeof(b), out);
	memcpy(&got, out, 8);
	assert_int_equal(got, c64);
}

static const enum bench_verify every_method[] = {
	VERIFY_CRC32C, VERIFY_MD5, VERIFY_SHA1, VERIFY_SHA256, VERIFY_SHA512,
	VERIFY_SHA3_224, VERIFY_SHA3_256, VERIFY_SHA3_384, VERIFY_SHA3_512,
	VERIFY_XXHASH, VERIFY_CRC32, VERIFY_CRC16, VERIFY_CRC7, VERIFY_CRC64,
	VERIFY_META,
};

/*
 * Every method with a header: a filled block checks good, with one header
 * per block, per 512 bytes, and with the header moved (verify_offset); a
 * byte flipped in the data (the interval's last, which fio's sha512 also
 * covers) is the check value's (meta: unseen), in the header the header
 * crc's.
 */
static void test_methods_round_trip(void **state)
{
	static const struct {
		uint32_t interval, hdr_off;
	} layouts[] = { { 0, 0 }, { 512, 0 }, { 4096, 1000 }, { 512, 200 } };
	const uint32_t len = 4096;
	const uint64_t off = 1 << 20;
	struct bench_verify_result r;
	unsigned int i, l;

	(void)state;
	for (i = 0; i < sizeof(every_method) / sizeof(every_method[0]); i++) {
		for (l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++) {
			struct bench_verify_spec s = {
				.method = every_method[i],
				.interval = layouts[l].interval,
				.hdr_off = layouts[l].hdr_off,
			};
			uint32_t iv = s.interval ? s.interval : len;
			uint32_t hl = bench_verify_hdr_len(s.method);
			uint32_t hdr_at = s.hdr_off;
			unsigned char *b = block(len), *c = block(len);
			struct bench_verify_hdr h;
			const char *name = bench_verify_name(s.method);

			bench_verify_fill(&s, b, len, off, 2, 99, 7);
			memcpy(c, b, len);
			if (bench_verify_check(&s, b, len, off, &r))
				fail_msg("%s interval %u offset %u: good block bad (%d)",
					 name, iv, s.hdr_off, r.err);
			/* the check leaves the block as it was read */
			assert_memory_equal(b, c, len);
			/* the last interval's header, where verify_offset put it */
			memcpy(&h, b + len - iv + hdr_at, sizeof(h));
			assert_int_equal(h.magic, BENCH_VERIFY_MAGIC);
			assert_int_equal(h.verify_type, bench_verify_type(s.method));
			assert_int_equal(h.len, iv);
			assert_int_equal(h.offset, off + len - iv);
			/* the data's last byte: past any moved header */
			assert_true(hdr_at + hl < iv);
			b[len - 1] ^= 0x01;
			if (s.method == VERIFY_META) {
				assert_int_equal(bench_verify_check(&s, b, len, off, &r), 0);
			} else {
				assert_int_equal(bench_verify_check(&s, b, len, off, &r), -EILSEQ);
				assert_int_equal(r.err, BENCH_VERIFY_DIGEST_BAD);
				assert_int_equal(r.pos, len - iv);
				assert_int_equal(r.interval, iv < len ? iv : 0);
			}
			memcpy(b, c, len);
			/* the header's thread field: only its crc sees it */
			b[len - iv + hdr_at + 32] ^= 0x01;
			assert_int_equal(bench_verify_check(&s, b, len, off, &r), -EILSEQ);
			assert_int_equal(r.err, BENCH_VERIFY_HDR_CRC_BAD);
			free(b);
			free(c);
		}
	}
}

/* A block written with one method and read with another says so. */
static void test_method_mismatch(void **state)
{
	struct bench_verify_spec md5 = { .method = VERIFY_MD5 };
	struct bench_verify_spec sha = { .method = VERIFY_SHA256 };
	unsigned char *b = block(4096);
	struct bench_verify_result r;
	char msg[256];

	(void)state;
	bench_verify_fill(&md5, b, 4096, 0, 0, 1, 1);
	assert_int_equal(bench_verify_check(&sha, b, 4096, 0, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_METHOD_BAD);
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header method expected sha256 found md5");
	assert_int_equal(bench_verify_check(&crc, b, 4096, 0, &r), -EILSEQ);
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header method expected crc32c found md5");
	free(b);
}

/* set a filled block's verify_type, its header crc made good again */
static void set_type(unsigned char *b, uint16_t type)
{
	uint32_t c;

	memcpy(b + 2, &type, 2);
	c = bench_verify_crc32c(b, 36);
	memcpy(b + 36, &c, 4);
}

/*
 * fio's two codes that are one method here: crc32c-intel (6) is crc32c,
 * verify_pattern= without verify= (17) is meta with the pattern.
 */
static void test_method_aliases(void **state)
{
	struct bench_verify_pattern p;
	struct bench_verify_spec meta = { .method = VERIFY_META, .pat = &p };
	unsigned char *b = block(4096);
	struct bench_verify_result r;
	char err[256], msg[256];

	(void)state;
	bench_verify_fill(&crc, b, 4096, 0, 0, 1, 1);
	set_type(b, 6);
	assert_int_equal(bench_verify_check(&crc, b, 4096, 0, &r), 0);
	set_type(b, 7);
	assert_int_equal(bench_verify_check(&crc, b, 4096, 0, &r), -EILSEQ);
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header method expected crc32c found crc16");
	set_type(b, 300);
	assert_int_equal(bench_verify_check(&crc, b, 4096, 0, &r), -EILSEQ);
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header method expected crc32c found unknown code 300");

	assert_int_equal(bench_verify_pattern_parse("0x5a", &p, err, sizeof(err)), 0);
	bench_verify_fill(&meta, b, 4096, 0, 0, 1, 1);
	assert_int_equal(bench_verify_check(&meta, b, 4096, 0, &r), 0);
	set_type(b, 17);
	assert_int_equal(bench_verify_check(&meta, b, 4096, 0, &r), 0);
	free(b);
}

static void test_describe_digests(void **state)
{
	struct bench_verify_spec s = { .method = VERIFY_MD5, .interval = 512 };
	unsigned char *b = block(4096);
	struct bench_verify_result r;
	const char *pre;
	char msg[512];

	(void)state;
	bench_verify_fill(&s, b, 4096, 0, 0, 1, 1);
	b[1024 + 100] ^= 0xff;
	assert_int_equal(bench_verify_check(&s, b, 4096, 0, &r), -EILSEQ);
	bench_verify_describe(&r, msg, sizeof(msg));
	/* the third interval; the stored digest, then the one computed */
	pre = "interval at byte 1024 (512 bytes): md5 expected ";
	if (strncmp(msg, pre, strlen(pre)) ||
	    strlen(msg) != strlen(pre) + 32 + strlen(" found ") + 32)
		fail_msg("%s", msg);
	s.method = VERIFY_CRC16;
	s.interval = 0;
	bench_verify_fill(&s, b, 4096, 0, 0, 1, 1);
	b[1000] ^= 0xff;
	assert_int_equal(bench_verify_check(&s, b, 4096, 0, &r), -EILSEQ);
	bench_verify_describe(&r, msg, sizeof(msg));
	if (strncmp(msg, "crc16 expected 0x", 17) || strlen(msg) != 17 + 4 + 9 + 4)
		fail_msg("%s", msg);
	assert_int_not_equal(r.expected, r.found);
	s.method = VERIFY_CRC7;
	bench_verify_fill(&s, b, 4096, 0, 0, 1, 1);
	b[1000] ^= 0xff;
	assert_int_equal(bench_verify_check(&s, b, 4096, 0, &r), -EILSEQ);
	bench_verify_describe(&r, msg, sizeof(msg));
	if (strncmp(msg, "crc7 expected 0x", 16) || strlen(msg) != 16 + 2 + 9 + 2)
		fail_msg("%s", msg);
	free(b);
}

static void expect_pattern(const char *in, const char *hex, unsigned int nr_off,
			   unsigned int off0)
{
	struct bench_verify_pattern p;
	uint8_t want[BENCH_VERIFY_PATTERN_MAX];
	char err[256];
	unsigned int n = 0, v;

	for (; *hex; hex += 2) {
		assert_int_equal(sscanf(hex, "%2x", &v), 1);
		want[n++] = (uint8_t)v;
	}
	if (bench_verify_pattern_parse(in, &p, err, sizeof(err)))
		fail_msg("%s: %s", in, err);
	if (p.len != n || memcmp(p.bytes, want, n))
		fail_msg("%s: %u bytes, not the %u expected", in, p.len, n);
	assert_int_equal(p.nr_off, nr_off);
	if (nr_off)
		assert_int_equal(p.off_at[0], off0);
}

/* fio's examples of its pattern syntax (lib/pattern.c, HOWTO) */
static void test_pattern_parse(void **state)
{
	struct bench_verify_pattern p;
	char err[256];

	(void)state;
	expect_pattern("\"abcd\"", "61626364", 0, 0);
	expect_pattern("-1024", "00fcffff", 0, 0);
	expect_pattern("66", "42", 0, 0);
	expect_pattern("0", "00", 0, 0);
	expect_pattern("0xFF0X1", "ff01", 0, 0);
	expect_pattern("0x123", "0123", 0, 0);
	expect_pattern("%o", "0000000000000000", 1, 0);
	expect_pattern("\"123\"0xFFeeCC", "313233ffeecc", 0, 0);
	expect_pattern("-100xab\"1\"%o\"2\"", "f6ffffffab31000000000000000032", 1, 6);
	expect_pattern("%o0xdeadbeef%o", "0000000000000000deadbeef0000000000000000", 2, 0);
	expect_pattern("0xaa555aa5", "aa555aa5", 0, 0);
	expect_pattern("0xff%o\"abcd\"-12", "ff000000000000000061626364f4ffffff", 1, 1);
	assert_int_equal(bench_verify_pattern_parse("\"abc", &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "a string without its closing quote");
	assert_int_equal(bench_verify_pattern_parse("%d", &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(bench_verify_pattern_parse("4294967296", &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(bench_verify_pattern_parse("'file'", &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(bench_verify_pattern_parse("0xzz", &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(bench_verify_pattern_parse("", &p, err, sizeof(err)), -EINVAL);
}

/* verify=pattern: the block is the pattern, %o the block's offset. */
static void test_pattern_blocks(void **state)
{
	struct bench_verify_pattern p;
	struct bench_verify_spec s = { .method = VERIFY_PATTERN, .pat = &p };
	unsigned char *b = block(4096);
	struct bench_verify_result r;
	uint64_t le = 0x123400;	/* little-endian on the machines blkstack runs on */
	char err[256], msg[256];

	(void)state;
	assert_int_equal(bench_verify_pattern_parse("\"ab\"%o", &p, err, sizeof(err)), 0);
	bench_verify_fill(&s, b, 4096, 0x123400, 0, 1, 1);
	assert_memory_equal(b, "ab", 2);
	assert_memory_equal(b + 2, &le, 8);
	assert_memory_equal(b + 10, "ab", 2);
	assert_memory_equal(b + 4090, "ab", 2);
	assert_memory_equal(b + 4092, &le, 4);
	assert_int_equal(bench_verify_check(&s, b, 4096, 0x123400, &r), 0);
	assert_false(r.has_hdr);
	/* read back from elsewhere: the offset in the data differs */
	assert_int_equal(bench_verify_check(&s, b, 4096, 0x124400, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_PATTERN_BAD);
	assert_int_equal(r.pos, 3);	/* 0x34 where 0x44 is expected */
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "pattern byte 3 expected 0x44 found 0x34 (3 bad bits)");
	b[4000] ^= 0x80;
	assert_int_equal(bench_verify_check(&s, b, 4096, 0x123400, &r), -EILSEQ);
	assert_int_equal(r.pos, 4000);
	free(b);
}

/* verify=meta with a pattern: headers, the pattern between them. */
static void test_meta_pattern(void **state)
{
	struct bench_verify_pattern p;
	struct bench_verify_spec s = { .method = VERIFY_META, .interval = 512,
				       .pat = &p };
	unsigned char *b = block(8192);
	struct bench_verify_result r;
	char err[256];
	uint32_t i;

	(void)state;
	assert_int_equal(bench_verify_pattern_parse("0xaa555aa5", &p, err, sizeof(err)), 0);
	bench_verify_fill(&s, b, 8192, 65536, 0, 1, 1);
	/* after each 40-byte header, the pattern in its phase from the block's start */
	for (i = 40; i < 512; i++)
		assert_int_equal(b[512 + i], p.bytes[i % 4]);
	assert_int_equal(bench_verify_check(&s, b, 8192, 65536, &r), 0);
	b[512 * 9 + 100] = 0;
	assert_int_equal(bench_verify_check(&s, b, 8192, 65536, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_PATTERN_BAD);
	assert_int_equal(r.pos, 512 * 9 + 100);
	assert_int_equal(r.expected, p.bytes[100 % 4]);
	free(b);
}

/* verify=null writes nothing and checks nothing. */
static void test_null(void **state)
{
	struct bench_verify_spec s = { .method = VERIFY_NULL };
	unsigned char *b = block(4096), *c = block(4096);
	struct bench_verify_result r;

	(void)state;
	bench_verify_fill(&s, b, 4096, 0, 0, 1, 1);
	assert_memory_equal(b, c, 4096);
	assert_int_equal(bench_verify_check(&s, b, 4096, 0, &r), 0);
	assert_int_equal(bench_verify_hdr_len(VERIFY_NULL), 0);
	assert_int_equal(bench_verify_hdr_len(VERIFY_SHA512), 40 + 128);
	free(b);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_crc),
		cmocka_unit_test(test_crc32c_is_fios),
		cmocka_unit_test(test_fill_layout),
		cmocka_unit_test(test_good_blocks),
		cmocka_unit_test(test_flip_any_byte),
		cmocka_unit_test(test_wrong_offset),
		cmocka_unit_test(test_wrong_magic),
		cmocka_unit_test(test_wrong_len),
		cmocka_unit_test(test_describe_crc),
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_fio_sha_forms),
		cmocka_unit_test(test_crcs_bitwise),
		cmocka_unit_test(test_methods_round_trip),
		cmocka_unit_test(test_method_mismatch),
		cmocka_unit_test(test_method_aliases),
		cmocka_unit_test(test_describe_digests),
		cmocka_unit_test(test_pattern_parse),
		cmocka_unit_test(test_pattern_blocks),
		cmocka_unit_test(test_meta_pattern),
		cmocka_unit_test(test_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
