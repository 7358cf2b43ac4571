// SPDX-License-Identifier: MIT
/*
 * sbitmap - see sbitmap.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbitmap.h"

static unsigned int sbitmap_calculate_shift(unsigned int depth)
{
	unsigned int shift = 6; /* 64 bits per word */

	/*
	 * Spread small maps over at least four words (four cache lines) so
	 * that concurrent allocators start in different lines.
	 */
	if (depth >= 4) {
		while ((4u << shift) > depth)
			shift--;
	}
	return shift;
}

int sbitmap_init(struct sbitmap *sb, unsigned int depth, bool atomic)
{
	unsigned int i, bits_per_word;

	memset(sb, 0, sizeof(*sb));
	if (depth < 1 || depth > 65536)
		return -EINVAL;
	sb->shift = sbitmap_calculate_shift(depth);
	bits_per_word = 1u << sb->shift;
	sb->depth = depth;
	sb->map_nr = (depth + bits_per_word - 1) >> sb->shift;
	sb->atomic = atomic;
	sb->map = aligned_alloc(64, sizeof(*sb->map) * sb->map_nr);
	if (!sb->map)
		return -ENOMEM;
	memset(sb->map, 0, sizeof(*sb->map) * sb->map_nr);
	for (i = 0; i < sb->map_nr; i++) {
		unsigned int left = depth - i * bits_per_word;

		sb->map[i].depth = left < bits_per_word ? left : bits_per_word;
		sb->map[i].mask = sb->map[i].depth == 64 ?
					  ~0ull : (1ull << sb->map[i].depth) - 1;
	}
	return 0;
}

void sbitmap_free(struct sbitmap *sb)
{
	free(sb->map);
	sb->map = NULL;
}

/* First clear bit at or after @from in a word of @depth bits, or -1. */
static inline int find_zero(uint64_t word, unsigned int depth,
			    unsigned int from)
{
	uint64_t free_bits = ~word;

	if (depth < 64)
		free_bits &= (1ull << depth) - 1;
	free_bits &= ~0ull << from;
	if (!free_bits)
		return -1;
	return __builtin_ctzll(free_bits);
}

static int sbitmap_get_word(struct sbitmap *sb, struct sbitmap_word *w,
			    unsigned int from)
{
	int bit;

	if (!sb->atomic) {
		uint64_t word = w->word;

		bit = find_zero(word, (unsigned int)w->depth, from);
		if (bit < 0 && from)
			bit = find_zero(word, (unsigned int)w->depth, 0);
		if (bit >= 0)
			w->word = word | (1ull << bit);
		return bit;
	}
	for (;;) {
		uint64_t word = __atomic_load_n(&w->word, __ATOMIC_RELAXED);
		uint64_t old;

		bit = find_zero(word, (unsigned int)w->depth, from);
		if (bit < 0 && from)
			bit = find_zero(word, (unsigned int)w->depth, 0);
		if (bit < 0)
			return -1;
		old = __atomic_fetch_or(&w->word, 1ull << bit, __ATOMIC_ACQUIRE);
		if (!(old & (1ull << bit)))
			return bit;
		/* lost the race for this bit: look again in this word */
	}
}

int __sbitmap_get(struct sbitmap *sb, unsigned int *hint)
{
	unsigned int h = *hint, index, i, from;
	int bit;

	if (h >= sb->depth)
		h = 0;
	index = h >> sb->shift;
	from = h & ((1u << sb->shift) - 1);
	for (i = 0; i < sb->map_nr; i++) {
		bit = sbitmap_get_word(sb, &sb->map[index], from);
		if (bit >= 0) {
			unsigned int nr = (index << sb->shift) + (unsigned int)bit;

			*hint = nr + 1 < sb->depth ? nr + 1 : 0;
			return (int)nr;
		}
		from = 0;
		if (++index >= sb->map_nr)
			index = 0;
	}
	return -1;
}

bool sbitmap_test_bit(const struct sbitmap *sb, unsigned int bitnr)
{
	const struct sbitmap_word *w = &sb->map[bitnr >> sb->shift];

	return (__atomic_load_n(&w->word, __ATOMIC_RELAXED) >>
		(bitnr & ((1u << sb->shift) - 1))) & 1;
}

unsigned int sbitmap_weight(const struct sbitmap *sb)
{
	unsigned int i, n = 0;

	for (i = 0; i < sb->map_nr; i++)
		n += (unsigned int)__builtin_popcountll(
			__atomic_load_n(&sb->map[i].word, __ATOMIC_RELAXED));
	return n;
}
