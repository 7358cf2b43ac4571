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
	uint64_t mask;  /* usable bits of this word */
	uint64_t depth; /* number of usable bits */
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
int __sbitmap_get(struct sbitmap *sb, unsigned int *hint);

static inline int sbitmap_get(struct sbitmap *sb, unsigned int *hint)
{
	/*
	 * Fast path for a private bitmap: a free bit at or after the hint in
	 * the hint's word.  Inlined: an out-of-line call cost 63 instructions
	 * per allocation under callgrind, this path about 15.
	 */
	if (__builtin_expect(!sb->atomic, 1)) {
		unsigned int h = *hint;
		struct sbitmap_word *w = &sb->map[h >> sb->shift];
		unsigned int from = h & ((1u << sb->shift) - 1);
		uint64_t free_bits = ~w->word & w->mask & (~0ull << from);

		if (__builtin_expect(free_bits != 0, 1)) {
			unsigned int bit = (unsigned int)__builtin_ctzll(free_bits);
			unsigned int nr = (h & ~((1u << sb->shift) - 1)) + bit;

			w->word |= 1ull << bit;
			*hint = nr + 1 < sb->depth ? nr + 1 : 0;
			return (int)nr;
		}
	}
	return __sbitmap_get(sb, hint);
}

/**
 * sbitmap_put() - free a bit and make it the caller's next hint.
 * @sb: the bitmap.
 * @bitnr: a bit returned by sbitmap_get().
 * @hint: the caller's hint.
 */
static inline void sbitmap_put(struct sbitmap *sb, unsigned int bitnr,
			       unsigned int *hint)
{
	struct sbitmap_word *w = &sb->map[bitnr >> sb->shift];
	uint64_t mask = 1ull << (bitnr & ((1u << sb->shift) - 1));

	if (sb->atomic)
		__atomic_fetch_and(&w->word, ~mask, __ATOMIC_RELEASE);
	else
		w->word &= ~mask;
	/* reuse the tag just freed: its request is still in cache */
	*hint = bitnr;
}

/** sbitmap_test_bit() - true when @bitnr is allocated. */
bool sbitmap_test_bit(const struct sbitmap *sb, unsigned int bitnr);

/** sbitmap_weight() - number of allocated bits. */
unsigned int sbitmap_weight(const struct sbitmap *sb);

#endif /* BLKSTACK_SBITMAP_H */
