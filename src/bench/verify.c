// SPDX-License-Identifier: MIT
/*
 * blkstack bench data verification: block headers, seeded data, CRC-32C.
 * See verify.h for the format.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <isa-l/crc.h>

#include "bench/verify.h"

#define HDR_LEN ((uint32_t)sizeof(struct bench_verify_hdr))
#define CRC_OFF ((uint32_t)offsetof(struct bench_verify_hdr, crc32c))

uint32_t bench_verify_crc32c(const void *buf, uint32_t len)
{
	/* crc32_iscsi() takes a non-const pointer but only reads it */
	unsigned char *p = (unsigned char *)(uintptr_t)buf;
	uint32_t crc;

	/* crc32_iscsi() neither inverts its input nor its result */
	crc = crc32_iscsi(p, (int)CRC_OFF, 0xffffffffu);
	if (len > HDR_LEN)
		crc = crc32_iscsi(p + HDR_LEN, (int)(len - HDR_LEN), crc);
	return ~crc;
}

/* splitmix64 (Steele, Lea and Flood): one multiply-xorshift per word */
static inline uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void bench_verify_fill(void *buf, uint32_t len, uint64_t offset, uint32_t job,
		       uint64_t seed, uint64_t numberio)
{
	struct bench_verify_hdr h = {
		.magic = htole32(BENCH_VERIFY_MAGIC),
		.version = htole16(BENCH_VERIFY_VERSION),
		.hdr_len = htole16(HDR_LEN),
		.len = htole32(len),
		.job = htole32(job),
		.offset = htole64(offset),
		.seed = htole64(seed),
		.numberio = htole64(numberio),
	};
	unsigned char *p = buf, *end = p + len;
	uint64_t x = seed, v;

	memcpy(p, &h, HDR_LEN);
	for (p += HDR_LEN; p + 8 <= end; p += 8) {
		v = htole64(splitmix64(&x));
		memcpy(p, &v, 8);
	}
	if (p < end) {
		v = htole64(splitmix64(&x));
		memcpy(p, &v, (size_t)(end - p));
	}
	h.crc32c = htole32(bench_verify_crc32c(buf, len));
	memcpy((unsigned char *)buf + CRC_OFF, &h.crc32c, sizeof(h.crc32c));
}

static int fail(struct bench_verify_result *res, enum bench_verify_err err,
		uint64_t expected, uint64_t found)
{
	res->err = err;
	res->expected = expected;
	res->found = found;
	return -EILSEQ;
}

int bench_verify_check(const void *buf, uint32_t len, uint64_t offset,
		       struct bench_verify_result *res)
{
	struct bench_verify_hdr h;
	uint32_t crc;

	memset(res, 0, sizeof(*res));
	if (len < HDR_LEN)
		return fail(res, BENCH_VERIFY_SHORT, HDR_LEN, len);
	memcpy(&h, buf, HDR_LEN);
	res->job = le32toh(h.job);
	res->seed = le64toh(h.seed);
	res->numberio = le64toh(h.numberio);
	if (le32toh(h.magic) != BENCH_VERIFY_MAGIC)
		return fail(res, BENCH_VERIFY_MAGIC_BAD, BENCH_VERIFY_MAGIC,
			    le32toh(h.magic));
	if (le16toh(h.version) != BENCH_VERIFY_VERSION)
		return fail(res, BENCH_VERIFY_VERSION_BAD, BENCH_VERIFY_VERSION,
			    le16toh(h.version));
	if (le16toh(h.hdr_len) != HDR_LEN)
		return fail(res, BENCH_VERIFY_HDR_LEN_BAD, HDR_LEN,
			    le16toh(h.hdr_len));
	if (le32toh(h.len) != len)
		return fail(res, BENCH_VERIFY_LEN_BAD, len, le32toh(h.len));
	if (le64toh(h.offset) != offset)
		return fail(res, BENCH_VERIFY_OFFSET_BAD, offset,
			    le64toh(h.offset));
	crc = bench_verify_crc32c(buf, len);
	if (crc != le32toh(h.crc32c))
		return fail(res, BENCH_VERIFY_CRC_BAD, le32toh(h.crc32c), crc);
	return 0;
}

int bench_verify_describe(const struct bench_verify_result *res, char *buf,
			  size_t len)
{
	static const struct {
		const char *what;
		bool hex;
	} fields[] = {
		[BENCH_VERIFY_SHORT] = { "block length at least", false },
		[BENCH_VERIFY_MAGIC_BAD] = { "header magic", true },
		[BENCH_VERIFY_VERSION_BAD] = { "header version", false },
		[BENCH_VERIFY_HDR_LEN_BAD] = { "header hdr_len", false },
		[BENCH_VERIFY_LEN_BAD] = { "header len", false },
		[BENCH_VERIFY_OFFSET_BAD] = { "header offset", false },
		[BENCH_VERIFY_CRC_BAD] = { "crc32c", true },
	};
	unsigned int e = (unsigned int)res->err;

	if (e == BENCH_VERIFY_OK)
		return snprintf(buf, len, "ok");
	if (e >= sizeof(fields) / sizeof(fields[0]) || !fields[e].what)
		return snprintf(buf, len, "unknown verify error %u", e);
	return snprintf(buf, len,
			fields[e].hex ? "%s expected 0x%08" PRIx64 " found 0x%08" PRIx64 :
					"%s expected %" PRIu64 " found %" PRIu64,
			fields[e].what, res->expected, res->found);
}
