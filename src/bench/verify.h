/* SPDX-License-Identifier: MIT */
/*
 * blkstack bench data verification (verify=crc32c): the block format that
 * writes carry and the checks a read-back applies.
 *
 * Every written block of bs bytes starts with struct bench_verify_hdr and
 * continues with pseudo-random data generated from the header's seed.  The
 * header's crc32c is the standard CRC-32C (Castagnoli; initial value ~0,
 * final xor ~0, as iSCSI and ext4 use it) of the whole block with the
 * crc32c field itself left out: bytes [0, 44) and then [hdr_len, len).
 * Multi-byte fields are little-endian.
 */
#ifndef BLKSTACK_BENCH_VERIFY_H
#define BLKSTACK_BENCH_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_VERIFY_MAGIC 0x564b4c42u	/* "BLKV" in memory order */
#define BENCH_VERIFY_VERSION 1

/* The header at the start of every verified block; 48 bytes. */
struct bench_verify_hdr {
	uint32_t magic;		/* BENCH_VERIFY_MAGIC */
	uint16_t version;	/* BENCH_VERIFY_VERSION */
	uint16_t hdr_len;	/* sizeof(struct bench_verify_hdr) */
	uint32_t len;		/* block length, bs */
	uint32_t job;		/* writer's thread index within its job */
	uint64_t offset;	/* device offset the block was written to */
	uint64_t seed;		/* this write's data seed */
	uint64_t numberio;	/* the writer's write sequence number */
	uint32_t rsvd;		/* 0 */
	uint32_t crc32c;	/* CRC-32C of the block without this field */
};

_Static_assert(sizeof(struct bench_verify_hdr) == 48,
	       "bench_verify_hdr is an on-disk format");

/* What a check found wrong; the first failing check in this order. */
enum bench_verify_err {
	BENCH_VERIFY_OK = 0,
	BENCH_VERIFY_SHORT,	/* block shorter than a header */
	BENCH_VERIFY_MAGIC_BAD,
	BENCH_VERIFY_VERSION_BAD,
	BENCH_VERIFY_HDR_LEN_BAD,
	BENCH_VERIFY_LEN_BAD,
	BENCH_VERIFY_OFFSET_BAD,
	BENCH_VERIFY_CRC_BAD,
};

/**
 * struct bench_verify_result - outcome of bench_verify_check().
 * @err: BENCH_VERIFY_OK, or the first check that failed.
 * @expected: the value the failed field should have had; for the crc, the
 *	crc32c stored in the header (fio's "Expected CRC").
 * @found: the value read; for the crc, the crc32c computed over the data
 *	that was read (fio's "Received CRC").
 * @job, @seed, @numberio: the header's fields as read (garbage when the
 *	magic is wrong: the block holds no header).
 */
struct bench_verify_result {
	enum bench_verify_err err;
	uint64_t expected;
	uint64_t found;
	uint32_t job;
	uint64_t seed;
	uint64_t numberio;
};

/**
 * bench_verify_crc32c() - standard CRC-32C of a block without its crc32c
 * field (bytes [0, 44) and [48, len)), by ISA-L's crc32_iscsi().
 * @buf: the block, at least 48 bytes.
 * @len: block length.
 */
uint32_t bench_verify_crc32c(const void *buf, uint32_t len);

/**
 * bench_verify_fill() - write a header and seeded data into a block.
 * @buf: the block.
 * @len: block length, at least sizeof(struct bench_verify_hdr).
 * @offset: device offset the block will be written to.
 * @job: the writer's thread index within its job.
 * @seed: data seed (the data is splitmix64 output from it).
 * @numberio: the writer's write sequence number.
 */
void bench_verify_fill(void *buf, uint32_t len, uint64_t offset, uint32_t job,
		       uint64_t seed, uint64_t numberio);

/**
 * bench_verify_check() - check a block read from @offset.
 * @buf: the data read.
 * @len: its length (bs).
 * @offset: device offset it was read from.
 * @res: the outcome.
 *
 * Checks, in order: magic, version, hdr_len, len == @len, offset == @offset,
 * crc32c.  Return: 0 when the block is good, -EILSEQ otherwise.
 */
int bench_verify_check(const void *buf, uint32_t len, uint64_t offset,
		       struct bench_verify_result *res);

/**
 * bench_verify_describe() - what went wrong, as the mismatch message says
 * it: "header offset expected 1052672 found 8192" or "crc32c expected
 * 0x1234abcd found 0x99887766".
 * @res: a failed check.
 * @buf: output.
 * @len: its size.
 * Return: as snprintf().
 */
int bench_verify_describe(const struct bench_verify_result *res, char *buf,
			  size_t len);

#endif /* BLKSTACK_BENCH_VERIFY_H */
