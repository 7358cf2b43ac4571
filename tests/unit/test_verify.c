// SPDX-License-Identifier: MIT
/*
 * Unit tests for blkstack bench's verify block format (src/bench/verify.c):
 * a filled block checks good; any flipped byte, a wrong offset, length or
 * magic is reported with the field, the expected and the found value.
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

static void test_crc_leaves_out_its_field(void **state)
{
	static const uint32_t lens[] = { 48, 49, 512, 4096, 65536 + 13 };
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned char *b = block(lens[i]);
		uint32_t want;
		size_t k;

		for (k = 0; k < lens[i]; k++)
			b[k] = (unsigned char)(k * 31 + 7);
		want = ref_crc32c(~0u, b, offsetof(struct bench_verify_hdr, crc32c));
		want = ~ref_crc32c(want, b + HDR_LEN, lens[i] - HDR_LEN);
		assert_int_equal(bench_verify_crc32c(b, lens[i]), want);
		/* the crc field itself does not count */
		b[offsetof(struct bench_verify_hdr, crc32c)] ^= 0xff;
		assert_int_equal(bench_verify_crc32c(b, lens[i]), want);
		free(b);
	}
}

static void test_fill_layout(void **state)
{
	unsigned char *b = block(4096), *c = block(4096);
	struct bench_verify_hdr h;

	(void)state;
	bench_verify_fill(b, 4096, 1052672, 3, 0x0123456789abcdefull, 17);
	/* "BLKV" in memory order, then the fields, little-endian */
	assert_memory_equal(b, "BLKV", 4);
	memcpy(&h, b, sizeof(h));
	assert_int_equal(h.magic, BENCH_VERIFY_MAGIC);
	assert_int_equal(h.version, 1);
	assert_int_equal(h.hdr_len, 48);
	assert_int_equal(h.len, 4096);
	assert_int_equal(h.job, 3);
	assert_int_equal(h.offset, 1052672);
	assert_int_equal(h.seed, 0x0123456789abcdefull);
	assert_int_equal(h.numberio, 17);
	assert_int_equal(h.rsvd, 0);
	assert_int_equal(h.crc32c, bench_verify_crc32c(b, 4096));

	/* the data depends on the seed alone */
	bench_verify_fill(c, 4096, 0, 0, 0x0123456789abcdefull, 0);
	assert_memory_equal(b + HDR_LEN, c + HDR_LEN, 4096 - HDR_LEN);
	bench_verify_fill(c, 4096, 1052672, 3, 0x0123456789abcdeeull, 17);
	assert_memory_not_equal(b + HDR_LEN, c + HDR_LEN, 4096 - HDR_LEN);
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

		bench_verify_fill(b, lens[i], off, i, 1000 + i, 5 * i);
		assert_int_equal(bench_verify_check(b, lens[i], off, &r), 0);
		assert_int_equal(r.err, BENCH_VERIFY_OK);
		assert_int_equal(r.job, i);
		assert_int_equal(r.seed, 1000 + i);
		assert_int_equal(r.numberio, 5 * i);
		free(b);
	}
}

/* Which check a flipped byte at @pos trips. */
static enum bench_verify_err err_at(size_t pos)
{
	if (pos < 4)
		return BENCH_VERIFY_MAGIC_BAD;
	if (pos < 6)
		return BENCH_VERIFY_VERSION_BAD;
	if (pos < 8)
		return BENCH_VERIFY_HDR_LEN_BAD;
	if (pos < 12)
		return BENCH_VERIFY_LEN_BAD;
	if (pos >= 16 && pos < 24)
		return BENCH_VERIFY_OFFSET_BAD;
	/* job, seed, numberio, rsvd, the crc itself and the data */
	return BENCH_VERIFY_CRC_BAD;
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
	bench_verify_fill(b, len, off, 1, 42, 9);
	stored = bench_verify_crc32c(b, len);
	for (pos = 0; pos < len; pos++) {
		b[pos] ^= 0x10;
		assert_int_equal(bench_verify_check(b, len, off, &r), -EILSEQ);
		if (r.err != err_at(pos))
			fail_msg("byte %zu: error %d, expected %d", pos, r.err,
				 err_at(pos));
		if (r.err == BENCH_VERIFY_CRC_BAD) {
			if (pos >= offsetof(struct bench_verify_hdr, crc32c) &&
			    pos < HDR_LEN) {
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
	assert_int_equal(bench_verify_check(b, len, off, &r), 0);
	free(b);
}

static void test_wrong_offset(void **state)
{
	unsigned char *b = block(4096);
	struct bench_verify_result r;
	char msg[128];

	(void)state;
	bench_verify_fill(b, 4096, 8192, 0, 7, 3);
	assert_int_equal(bench_verify_check(b, 4096, 1052672, &r), -EILSEQ);
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
	assert_int_equal(bench_verify_check(b, 4096, 0, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_MAGIC_BAD);
	assert_int_equal(r.expected, BENCH_VERIFY_MAGIC);
	assert_int_equal(r.found, 0);
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header magic expected 0x564b4c42 found 0x00000000");

	bench_verify_fill(b, 4096, 0, 0, 1, 1);
	memcpy(b, "BLKW", 4);
	assert_int_equal(bench_verify_check(b, 4096, 0, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_MAGIC_BAD);
	assert_int_equal(r.found, 0x574b4c42);
	free(b);
}

static void test_wrong_len(void **state)
{
	unsigned char *b = block(8192);
	struct bench_verify_result r;
	char msg[128];

	(void)state;
	/* written with bs=8k, read back with bs=4k */
	bench_verify_fill(b, 8192, 0, 0, 1, 1);
	assert_int_equal(bench_verify_check(b, 4096, 0, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_LEN_BAD);
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header len expected 4096 found 8192");
	/* too short for a header at all */
	assert_int_equal(bench_verify_check(b, 16, 0, &r), -EILSEQ);
	assert_int_equal(r.err, BENCH_VERIFY_SHORT);
	free(b);
}

static void test_describe_crc(void **state)
{
	struct bench_verify_result r = {
		.err = BENCH_VERIFY_CRC_BAD,
		.expected = 0x1234abcd,
		.found = 0x99887766,
	};
	char msg[128];

	(void)state;
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "crc32c expected 0x1234abcd found 0x99887766");
	r.err = BENCH_VERIFY_VERSION_BAD;
	r.expected = 1;
	r.found = 2;
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header version expected 1 found 2");
	r.err = BENCH_VERIFY_HDR_LEN_BAD;
	r.expected = 48;
	r.found = 0;
	bench_verify_describe(&r, msg, sizeof(msg));
	assert_string_equal(msg, "header hdr_len expected 48 found 0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_crc),
		cmocka_unit_test(test_crc_leaves_out_its_field),
		cmocka_unit_test(test_fill_layout),
		cmocka_unit_test(test_good_blocks),
		cmocka_unit_test(test_flip_any_byte),
		cmocka_unit_test(test_wrong_offset),
		cmocka_unit_test(test_wrong_magic),
		cmocka_unit_test(test_wrong_len),
		cmocka_unit_test(test_describe_crc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
