/* SPDX-License-Identifier: MIT */
/*
 * blkstack bench data verification (verify=): the block format that
 * writes carry and the checks a read-back applies, for each of fio's
 * verify= methods.
 *
 * The format is fio's (fio 3.33, verify.h and verify.c), so that blocks
 * fio wrote are checked here and blocks written here are checked by fio
 * (docs/bench.md, "Data verification").  A written block of bs bytes is
 * cut into intervals of verify_interval bytes (bs by default).  Its data
 * is the splitmix64 stream of the write's seed from the block's first
 * byte (fio: its own generator; neither side regenerates the other's),
 * or the verify_pattern bytes repeated from it; each interval then
 * starts with struct bench_verify_hdr (fio's struct verify_header),
 * followed by the method's check value (fio's struct vhdr_*) of the rest
 * of the interval, bytes [hdr_len, len):
 *
 *   md5, sha3-*	the standard digest, as its bytes.
 *   sha1	the standard digest's five 32-bit words, each stored
 *		little-endian (fio stores its uint32_t H[5] in host order).
 *   sha256	fio's variant, 64 bytes: SHA-256 over the data padded with
 *		0x80, zeros and the bit length as a little-endian (not
 *		big-endian) 64-bit number; then the low byte of each of the
 *		eight state words, then bytes 8..63 of the last 64-byte
 *		block hashed (fio's sha256_final() and fill_sha256()).
 *   sha512	fio's variant, 128 bytes: fio's fill_sha512() never
 *		finishes the hash; what it stores is its 128-byte input
 *		buffer: the data's first 128 bytes with its last (n mod 128)
 *		bytes over their start.  Only those bytes are checked.
 *   crc32c	CRC-32C (Castagnoli) with initial value ~0 and no final
 *		xor (fio's crc32c); crc32c-intel is the same.
 *   crc32, crc64, crc16, crc7, xxhash	fio's (bench_verify_digest()).
 *   meta	no check value: the header alone (fio's VERIFY_HDR_ONLY);
 *		with verify_pattern the data is compared with the pattern.
 *   pattern	no header: the block is the pattern, compared byte by byte
 *		(fio's VERIFY_PATTERN_NO_HDR).
 *   null	nothing is written into the block and nothing is checked.
 *
 * The header's own crc32 is fio's crc32c of its bytes [0, 36).  With
 * verify_offset the header and check value of each interval are swapped
 * with the bytes at that offset in the interval before the write, and
 * back before the check.  Multi-byte fields are little-endian (fio: the
 * host's order; x86 and arm64 are little-endian).
 */
#ifndef BLKSTACK_BENCH_VERIFY_H
#define BLKSTACK_BENCH_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_VERIFY_MAGIC 0xaccau	/* fio's FIO_HDR_MAGIC */

/*
 * verify= methods.  The code a header carries is fio's (bench_verify_type()),
 * not this order.
 */
enum bench_verify {
	VERIFY_NONE = 0,	/* verify=none (or fio's 0) */
	VERIFY_CRC32C,		/* crc32c, crc32c-intel */
	VERIFY_MD5,
	VERIFY_SHA1,
	VERIFY_SHA256,		/* fio's variant (above) */
	VERIFY_SHA512,		/* fio's variant (above) */
	VERIFY_SHA3_224,
	VERIFY_SHA3_256,
	VERIFY_SHA3_384,
	VERIFY_SHA3_512,
	VERIFY_XXHASH,		/* fio's xxhash: XXH32, seed 1 */
	VERIFY_CRC32,		/* fio's crc32 */
	VERIFY_CRC16,		/* fio's crc16: CRC-16/ARC */
	VERIFY_CRC7,		/* fio's crc7: CRC-7/MMC */
	VERIFY_CRC64,		/* fio's crc64 */
	VERIFY_META,		/* header only */
	VERIFY_PATTERN,		/* no header: the verify_pattern bytes */
	VERIFY_NULL,		/* write nothing, check nothing */
	VERIFY_NR,
};

/*
 * fio's struct verify_header: at the start of every interval; 40 bytes,
 * then the method's check value.
 */
struct bench_verify_hdr {
	uint16_t magic;		/* BENCH_VERIFY_MAGIC */
	uint16_t verify_type;	/* fio's code of the method (bench_verify_type()) */
	uint32_t len;		/* interval length: bs, or verify_interval */
	uint64_t rand_seed;	/* this write's data seed */
	uint64_t offset;	/* device offset of the interval */
	uint32_t time_sec;	/* fio: the write's start time; 0 here */
	uint32_t time_nsec;	/* 0 here */
	uint16_t thread;	/* writer: fio's thread number, here the
				 * thread's index within its job */
	uint16_t numberio;	/* the writer's write sequence number, low 16
				 * bits */
	uint32_t crc32;		/* crc32c (fio's) of bytes [0, 36) */
};

_Static_assert(sizeof(struct bench_verify_hdr) == 40,
	       "bench_verify_hdr is fio's on-disk verify_header");

#define BENCH_VERIFY_DIGEST_MAX 128	/* fio's vhdr_sha512 */
#define BENCH_VERIFY_HDR_MAX (40 + BENCH_VERIFY_DIGEST_MAX)
#define BENCH_VERIFY_PATTERN_MAX 512	/* fio's MAX_PATTERN_SIZE */
#define BENCH_VERIFY_PATTERN_FMT_MAX 8

/**
 * struct bench_verify_pattern - a parsed verify_pattern=.
 * @bytes: the pattern; %o's 8 bytes are zeros here.
 * @len: its length, 1 .. BENCH_VERIFY_PATTERN_MAX (0: no pattern).
 * @off_at: where each %o is: the I/O's offset goes there, 8 bytes,
 *	little-endian (fio pastes the offset in the machine's order).
 * @nr_off: how many %o.
 */
struct bench_verify_pattern {
	uint8_t bytes[BENCH_VERIFY_PATTERN_MAX];
	uint32_t len;
	uint16_t off_at[BENCH_VERIFY_PATTERN_FMT_MAX];
	unsigned int nr_off;
};

/**
 * struct bench_verify_spec - how a job's blocks are written and checked.
 * @method: VERIFY_CRC32C .. VERIFY_NULL.
 * @interval: bytes under one header (bs, or verify_interval dividing bs).
 * @hdr_off: verify_offset: where each interval's header is stored (0:
 *	at its start).
 * @pat: verify_pattern, or NULL: the data are the seed's stream.
 */
struct bench_verify_spec {
	enum bench_verify method;
	uint32_t interval;
	uint32_t hdr_off;
	const struct bench_verify_pattern *pat;
};

/* What a check found wrong; the first failing check in this order. */
enum bench_verify_err {
	BENCH_VERIFY_OK = 0,
	BENCH_VERIFY_SHORT,	/* interval shorter than its header */
	BENCH_VERIFY_MAGIC_BAD,
	BENCH_VERIFY_LEN_BAD,
	BENCH_VERIFY_OFFSET_BAD,
	BENCH_VERIFY_HDR_CRC_BAD,	/* the header's crc32 */
	BENCH_VERIFY_METHOD_BAD,	/* written with another method */
	BENCH_VERIFY_DIGEST_BAD,	/* the method's check value of the data */
	BENCH_VERIFY_PATTERN_BAD,	/* a byte is not the pattern's */
};

/**
 * struct bench_verify_result - outcome of bench_verify_check().
 * @err: BENCH_VERIFY_OK, or the first check that failed.
 * @method: the method checked (names the digest).
 * @expected: the value the failed field should have had; for a CRC or
 *	digest, the one stored in the header (fio's "Expected CRC"); for
 *	the pattern, the pattern's byte.
 * @found: the value read; for a CRC or digest, the one computed over the
 *	data read (fio's "Received CRC"); for the pattern, the byte read.
 * @want, @got, @dlen: BENCH_VERIFY_DIGEST_BAD: the digests, @dlen bytes
 *	(as stored: numbers little-endian, md5 and sha as their bytes).
 * @pos: byte of the block where the bad interval starts, or for the
 *	pattern the bad byte.
 * @interval: the interval length, when the block has more than one.
 * @zero_hdr: BENCH_VERIFY_MAGIC_BAD: the 40 header bytes read are all
 *	zero (a block never written reads so from ram, a new file's hole
 *	or a zeroed device).
 * @has_hdr: the block has headers (not pattern, null); then
 * @job, @seed, @numberio: the bad interval's header fields as read
 *	(thread, rand_seed, numberio; garbage when the magic is wrong: the
 *	block holds no header).
 */
struct bench_verify_result {
	enum bench_verify_err err;
	enum bench_verify method;
	uint64_t expected;
	uint64_t found;
	uint8_t want[BENCH_VERIFY_DIGEST_MAX];
	uint8_t got[BENCH_VERIFY_DIGEST_MAX];
	uint8_t dlen;
	uint32_t pos;
	uint32_t interval;
	bool has_hdr;
	bool zero_hdr;
	uint32_t job;
	uint64_t seed;
	uint64_t numberio;
};

/** bench_verify_name() - fio's name of @m ("crc32c", "md5", ...). */
const char *bench_verify_name(enum bench_verify m);

/**
 * bench_verify_hdr_len() - bytes of @m's header: 40 plus its check value
 * (fio's __hdr_size(): md5 16, sha1 20, sha256 64, sha512 128, sha3-N
 * N/8, crc64 8, crc32c/crc32/xxhash 4, crc16 2, crc7 1, meta 0), or 0 for
 * the methods without a header (pattern, null, none).
 */
uint32_t bench_verify_hdr_len(enum bench_verify m);

/**
 * bench_verify_type() - fio's verify_type code for @m (verify.h's enum:
 * meta 1, md5 2, crc64 3, crc32 4, crc32c 5, crc16 7, crc7 8, sha256 9,
 * sha512 10, sha3-224..512 11..14, xxhash 15, sha1 16, pattern 18,
 * null 19; 0 for none).
 */
uint16_t bench_verify_type(enum bench_verify m);

/**
 * bench_verify_digest() - @m's check value of @len bytes at @buf into
 * @out, as fio stores it (bench_verify_hdr_len(@m) - 40 bytes; CRCs and
 * xxhash as little-endian numbers; sha1, sha256 and sha512 in fio's
 * forms, see the top of this file), by the library that has the method:
 * nettle (md5, sha1, sha256's compression, sha3), ISA-L (crc32c, crc32,
 * crc64), libxxhash (xxhash); crc16 and crc7 are computed here (see
 * verify.c).
 */
void bench_verify_digest(enum bench_verify m, const void *buf, size_t len,
			 uint8_t *out);

/**
 * bench_verify_crc32c() - fio's crc32c: CRC-32C with initial value ~0
 * and no final xor (the standard CRC-32C inverted), by ISA-L's
 * crc32_iscsi().  The header's crc32 is this over its bytes [0, 36).
 * @buf: the bytes.
 * @len: how many.
 */
uint32_t bench_verify_crc32c(const void *buf, uint32_t len);

/**
 * bench_verify_pattern_parse() - parse fio's verify_pattern= syntax: a
 * sequence of hex numbers (0x..., any length, bytes in the order
 * written), decimal numbers (INT_MIN .. INT_MAX, the fewest bytes that
 * hold them, little-endian; 0 is one byte), double-quoted strings (no
 * escapes) and %o (the block's offset, 8 bytes), e.g. 0xff%o"abcd"-12.
 * fio's '...' (a file's bytes) is refused.
 * @in: the value.
 * @p: the result.
 * @err: why not, @errlen bytes.
 * Return: 0, or -EINVAL.
 */
int bench_verify_pattern_parse(const char *in, struct bench_verify_pattern *p,
			       char *err, size_t errlen);

/**
 * bench_verify_fill() - write a block's data and headers.
 * @s: the job's verify spec.
 * @buf: the block.
 * @len: block length, a multiple of @s->interval.
 * @offset: device offset the block will be written to.
 * @job: the writer's thread index within its job.
 * @seed: data seed (the data is splitmix64 output from it, unless @s has
 *	a pattern).
 * @numberio: the writer's write sequence number.
 */
void bench_verify_fill(const struct bench_verify_spec *s, void *buf,
		       uint32_t len, uint64_t offset, uint32_t job,
		       uint64_t seed, uint64_t numberio);

/**
 * bench_verify_check() - check a block read from @offset.
 * @s: the job's verify spec.
 * @buf: the data read; with verify_offset its headers are swapped in
 *	place for the check and back after it (it ends as it was read).
 * @len: its length.
 * @offset: device offset it was read from.
 * @res: the outcome.
 *
 * Checks each interval in turn, stopping at the first bad one, in fio's
 * order (verify_header()): magic, len == the interval, offset == the
 * interval's, the header's crc32; then the method (fio's code; crc32c
 * and crc32c-intel are one, as are meta and fio's header-and-pattern
 * code 17), the check value, and (meta with a pattern, or pattern) the
 * data against the pattern.  rand_seed and numberio are not checked
 * (fio checks them only against its own log in the run that wrote).
 * Return: 0 when the block is good, -EILSEQ otherwise.
 */
int bench_verify_check(const struct bench_verify_spec *s, void *buf,
		       uint32_t len, uint64_t offset,
		       struct bench_verify_result *res);

/**
 * bench_verify_describe() - what went wrong, as the mismatch message says
 * it: "header offset expected 1052672 found 8192", "crc32c expected
 * 0x1234abcd found 0x99887766", "md5 expected 0123... found 4567...",
 * "pattern byte 100 expected 0xaa found 0x55 (4 bad bits)"; for a block
 * of several intervals, after "interval at byte N (M bytes): ".
 * @res: a failed check.
 * @buf: output.
 * @len: its size.
 * Return: as snprintf().
 */
int bench_verify_describe(const struct bench_verify_result *res, char *buf,
			  size_t len);

#endif /* BLKSTACK_BENCH_VERIFY_H */
