/* SPDX-License-Identifier: MIT */
/*
 * sbitmap - scalable bitmap tag allocator (after lib/sbitmap.c).
 *
 * The bitmap is split into words of (1 << shift) bits, each word in its own
 * cache line so that threads allocating from different words do not share
 * lines.  Each allocating thread keeps a hint (the bit after the last one it
 * got; the bit it last freed), so consecutive allocations stay in one word.
 *
 * Two modes, fixed at init:
 *  - atomic: words are changed with atomic fetch-or / fetch-and, for a
 *    bitmap shared between threads (shared tag set, shared hctx);
 *  - private: plain loads and stores, for a bitmap used by one thread only
 *    (the common case: one ctx per hctx).  This is what keeps the submit
 *    and poll paths free of atomic read-modify-writes.
 */
#ifndef BLKSTACK_SBITMAP_H
#define BLKSTACK_SBITMAP_H

#include <stdbool.h>
#include <stdint.h>

struct sbitmap_word {
	uint64_t word;  /* set bit = allocated */
	uint64_t depth; /* usable bits in this word */
} __attribute__((aligned(64)));

struct sbitmap {
	unsigned int depth;  /* total bits */
	unsigned int shift;  /* log2(bits per word) */
	unsigned int map_nr; /* number of words */
	bool atomic;
	struct sbitmap_word *map;
};

/**
 * sbitmap_init() - allocate a bitmap.
 * @sb: the bitmap.
 * @depth: bits, 1..65536.
 * @atomic: shared between threads.
 *
 * Bits per word are chosen so that there are at least 4 words when depth
 * allows (the kernel's sbitmap_calculate_shift()), at most 64.
 * Return: 0, -EINVAL for a depth out of range, -ENOMEM.
 */
int sbitmap_init(struct sbitmap *sb, unsigned int depth, bool atomic);

/** sbitmap_free() - free the words. */
void sbitmap_free(struct sbitmap *sb);

/**
 * sbitmap_get() - allocate a free bit.
 * @sb: the bitmap.
 * @hint: the caller's per-thread hint, 0..depth-1; updated.
 *
 * Return: the bit number, or -1 when all bits are set.
 * Context: any thread in atomic mode; the owning thread otherwise.
 */
int sbitmap_get(struct sbitmap *sb, unsigned int *hint);

/**
 * sbitmap_put() - free a bit and make it the caller's next hint.
 * @sb: the bitmap.
 * @bitnr: a bit returned by sbitmap_get().
 * @hint: the caller's hint.
 */
void sbitmap_put(struct sbitmap *sb, unsigned int bitnr, unsigned int *hint);

/** sbitmap_test_bit() - true when @bitnr is allocated. */
bool sbitmap_test_bit(const struct sbitmap *sb, unsigned int bitnr);

/** sbitmap_weight() - number of allocated bits. */
unsigned int sbitmap_weight(const struct sbitmap *sb);

#endif /* BLKSTACK_SBITMAP_H */
