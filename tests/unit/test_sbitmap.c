// SPDX-License-Identifier: MIT
/*
 * sbitmap: word layout, exhaustion, hints, and no tag handed out twice
 * with two threads hammering one atomic bitmap.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/sbitmap.h"

static void test_layout(void **state)
{
	struct sbitmap sb;

	assert_int_equal(sbitmap_init(&sb, 0, false), -22);
	assert_int_equal(sbitmap_init(&sb, 65537, false), -22);
	assert_int_equal(sbitmap_init(&sb, 64, false), 0);
	assert_int_equal(sb.map_nr, 4); /* spread over four cache lines */
	assert_int_equal(1u << sb.shift, 16);
	assert_int_equal((uintptr_t)&sb.map[1] - (uintptr_t)&sb.map[0], 64);
	sbitmap_free(&sb);
	assert_int_equal(sbitmap_init(&sb, 1000, false), 0);
	assert_int_equal(1u << sb.shift, 64);
	assert_int_equal(sb.map_nr, 16);
	assert_int_equal(sb.map[15].depth, 1000 - 15 * 64);
	assert_int_equal(sb.map[15].mask, (1ull << (1000 - 15 * 64)) - 1);
	sbitmap_free(&sb);
}

static void test_exhaust_and_reuse(void **state)
{
	unsigned int depth, i, hint = 0;
	bool seen[300];

	for (depth = 1; depth <= 300; depth += 37) {
		struct sbitmap sb;
		int bit;

		assert_int_equal(sbitmap_init(&sb, depth, depth & 1), 0);
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < depth; i++) {
			bit = sbitmap_get(&sb, &hint);
			assert_true(bit >= 0 && (unsigned int)bit < depth);
			assert_false(seen[bit]);
			seen[bit] = true;
		}
		assert_int_equal(sbitmap_get(&sb, &hint), -1);
		assert_int_equal(sbitmap_weight(&sb), depth);
		sbitmap_put(&sb, depth / 2, &hint);
		assert_false(sbitmap_test_bit(&sb, depth / 2));
		/* the hint makes the freed tag the next one handed out */
		assert_int_equal(sbitmap_get(&sb, &hint), (int)(depth / 2));
		sbitmap_free(&sb);
	}
}

static void test_hint_stays_in_word(void **state)
{
	struct sbitmap sb;
	unsigned int hint = 70;

	assert_int_equal(sbitmap_init(&sb, 256, false), 0);
	assert_int_equal(sbitmap_get(&sb, &hint), 70);
	assert_int_equal(sbitmap_get(&sb, &hint), 71);
	assert_int_equal(hint, 72);
	sbitmap_free(&sb);
}

#define ROUNDS 200000
static struct sbitmap shared_sb;
static _Atomic unsigned char owner[128];
static _Atomic int dup_found;

static void *hammer(void *arg)
{
	unsigned int hint = (unsigned int)(uintptr_t)arg * 64, i;
	int held[8], n = 0;

	for (i = 0; i < ROUNDS; i++) {
		int bit = sbitmap_get(&shared_sb, &hint);

		if (bit >= 0) {
			unsigned char zero = 0;

			if (!atomic_compare_exchange_strong(&owner[bit], &zero, 1))
				atomic_store(&dup_found, 1);
			held[n++] = bit;
		}
		if (n == 8 || (bit < 0 && n)) {
			while (n) {
				bit = held[--n];
				atomic_store(&owner[bit], 0);
				sbitmap_put(&shared_sb, (unsigned int)bit, &hint);
			}
		}
	}
	while (n) {
		int bit = held[--n];

		atomic_store(&owner[bit], 0);
		sbitmap_put(&shared_sb, (unsigned int)bit, &hint);
	}
	return NULL;
}

static void test_two_threads_never_share_a_tag(void **state)
{
	pthread_t t[2];

	assert_int_equal(sbitmap_init(&shared_sb, 12, true), 0);
	pthread_create(&t[0], NULL, hammer, (void *)0);
	pthread_create(&t[1], NULL, hammer, (void *)1);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	assert_int_equal(atomic_load(&dup_found), 0);
	assert_int_equal(sbitmap_weight(&shared_sb), 0);
	sbitmap_free(&shared_sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_exhaust_and_reuse),
		cmocka_unit_test(test_hint_stays_in_word),
		cmocka_unit_test(test_two_threads_never_share_a_tag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
