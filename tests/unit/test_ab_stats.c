// SPDX-License-Identifier: MIT
/*
 * ab_stats: the Hodges-Lehmann estimate and its signed-rank interval
 * against hand-computed values and published critical values, the
 * interval's coverage and power on synthetic data with a known shift,
 * and the seeded generator.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "bench/ab_stats.h"

static void test_median(void **state)
{
	const double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 };

	(void)state;
	assert_true(ab_median(odd, 3) == 3.0);
	assert_true(ab_median(even, 4) == 2.5);
	assert_true(isnan(ab_median(odd, 0)));
	/* the input is not reordered */
	assert_true(odd[0] == 5 && odd[1] == 1);
}

/*
 * Hand-computed: d = {1, 2, 4}: Walsh averages 1, 1.5, 2, 2.5, 3, 4
 * (pairs i <= j), median (2 + 2.5) / 2 = 2.25; k = 1 gives [1, 4].
 * d = {-1, 3}: averages -1, 1, 3: median 1.
 */
static void test_hl_hand(void **state)
{
	const double d[] = { 1, 2, 4 }, e[] = { -1, 3 };
	struct ab_shift s;

	(void)state;
	assert_int_equal(ab_hl_paired(d, 3, 1, &s), 0);
	assert_true(s.estimate == 2.25);
	assert_true(s.has_ci);
	assert_true(s.low == 1.0 && s.high == 4.0);
	assert_int_equal(ab_hl_paired(d, 3, 2, &s), 0);
	assert_true(s.low == 1.5 && s.high == 3.0);
	assert_int_equal(ab_hl_paired(e, 2, 0, &s), 0);
	assert_true(s.estimate == 1.0);
	assert_false(s.has_ci);
	/* k past the middle, and no data */
	assert_int_equal(ab_hl_paired(d, 3, 4, &s), -EINVAL);
	assert_int_equal(ab_hl_paired(d, 0, 0, &s), -EINVAL);
}

/*
 * Critical values of the signed-rank test, two-sided alpha = 0.05, from
 * the published tables (T <= crit rejects): n=6: 0, n=8: 3, n=10: 8,
 * n=15: 25, n=20: 52, n=25: 89.  k is crit + 1.  With 5 pairs no
 * interval reaches 95 % (k = 1 covers 1 - 2/32 = 93.75 %).
 */
static void test_signed_rank_k(void **state)
{
	static const struct { size_t n, k; } tab[] = {
		{ 6, 1 }, { 8, 4 }, { 10, 9 }, { 15, 26 }, { 20, 53 }, { 25, 90 },
	};
	double cov;
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		assert_int_equal(ab_signed_rank_k(tab[i].n, 0.95, &k, &cov), 0);
		assert_int_equal(k, tab[i].k);
		assert_true(cov >= 0.95 && cov < 0.97);
	}
	/* n = 6: 1 - 2/64 exactly */
	assert_int_equal(ab_signed_rank_k(6, 0.95, &k, &cov), 0);
	assert_true(fabs(cov - (1.0 - 2.0 / 64.0)) < 1e-12);
	assert_int_equal(ab_signed_rank_k(5, 0.95, &k, &cov), -ERANGE);
	assert_int_equal(ab_signed_rank_k(5, 0.90, &k, &cov), 0);
	assert_int_equal(k, 1);
	assert_int_equal(ab_signed_rank_k(0, 0.95, &k, NULL), -EINVAL);
	assert_int_equal(ab_signed_rank_k(AB_MAX_PAIRS + 1, 0.95, &k, NULL), -EINVAL);
	assert_int_equal(ab_signed_rank_k(10, 1.0, &k, NULL), -EINVAL);
	assert_int_equal(ab_signed_rank_k(AB_MAX_PAIRS, 0.95, &k, &cov), 0);
	assert_true(cov >= 0.95 && cov < 0.951);
}

/* A standard normal from the seeded generator (Box-Muller). */
static double normal(struct ab_rng *r)
{
	double u1 = ((double)(ab_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
	double u2 = ((double)(ab_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/*
 * Coverage: rounds of A ~ 100 (1 + 0.02 N) and B = A's level shifted by
 * +3 %, noise independent; the interval of B - A in % must hold the true
 * 3 % in about 95 % of 2000 experiments of 10 rounds (exact coverage
 * 95.1 % for a symmetric difference; +-1.5 % is > 3 standard errors).
 */
static void test_coverage(void **state)
{
	const size_t n = 10, reps = 2000;
	double a[10], b[10], cov;
	struct ab_compare c;
	struct ab_rng r;
	size_t i, rep, k, hit = 0, worse = 0;

	(void)state;
	ab_rng_seed(&r, 42);
	assert_int_equal(ab_signed_rank_k(n, 0.95, &k, &cov), 0);
	for (rep = 0; rep < reps; rep++) {
		for (i = 0; i < n; i++) {
			a[i] = 100.0 * (1.0 + 0.02 * normal(&r));
			b[i] = 103.0 * (1.0 + 0.02 * normal(&r));
		}
		assert_int_equal(ab_compare_paired(a, b, n, k, false, 0.0, &c), 0);
		assert_true(c.has_pct && c.has_ci);
		/* the true difference in % of A's median is about 3 */
		if (c.ci_low_pct <= 3.0 && c.ci_high_pct >= 3.0)
			hit++;
		if (c.verdict == AB_WORSE)
			worse++;
	}
	assert_in_range(hit, 1850, 1940);
	/* higher is worse here: a +3 % shift at 2.8 % noise per difference
	 * and 10 rounds is found most of the time, never the other way */
	assert_true(worse > reps / 2);
}

/*
 * A/A: no shift: "within noise" in about 95 % of the experiments with no
 * floor, never less than 93 %, and in 98.5 % or more with a 1 % floor; a
 * planted 5 % at 1 % noise is found every time, 1 % floor or not, with
 * the right sign for each direction.
 */
static void test_null_and_power(void **state)
{
	const size_t n = 8, reps = 1000;
	double a[8], b[8], cov;
	struct ab_compare c;
	struct ab_rng r;
	size_t i, rep, k, noise = 0, floor = 0, better = 0, worse = 0;

	(void)state;
	ab_rng_seed(&r, 7);
	assert_int_equal(ab_signed_rank_k(n, 0.95, &k, &cov), 0);
	for (rep = 0; rep < reps; rep++) {
		for (i = 0; i < n; i++) {
			a[i] = 50.0 + normal(&r);
			b[i] = 50.0 + normal(&r);
		}
		assert_int_equal(ab_compare_paired(a, b, n, k, true, 0.0, &c), 0);
		noise += c.verdict == AB_WITHIN_NOISE;
		/* a 1 % floor: a false verdict needs the whole interval past it */
		assert_int_equal(ab_compare_paired(a, b, n, k, true, 1.0, &c), 0);
		floor += c.verdict == AB_WITHIN_NOISE;
	}
	assert_in_range(noise, 930, 980);
	assert_in_range(floor, 985, 1000);
	assert_true(floor >= noise);
	for (rep = 0; rep < 100; rep++) {
		for (i = 0; i < n; i++) {
			a[i] = 100.0 * (1.0 + 0.01 * normal(&r));
			b[i] = 95.0 * (1.0 + 0.01 * normal(&r));
		}
		assert_int_equal(ab_compare_paired(a, b, n, k, true, 1.0, &c), 0);
		worse += c.verdict == AB_WORSE;
		assert_true(c.diff_pct < -3.0 && c.diff_pct > -7.0);
		assert_int_equal(ab_compare_paired(a, b, n, k, false, 1.0, &c), 0);
		better += c.verdict == AB_BETTER;
	}
	assert_int_equal(worse, 100);
	assert_int_equal(better, 100);
}

/* Hand-computed comparison, and the zero-median and no-interval cases. */
static void test_compare_hand(void **state)
{
	const double a[] = { 100, 100, 100, 100, 100, 100 };
	const double b[] = { 110, 111, 112, 113, 114, 115 };
	const double z[] = { 0, 0, 0, 0, 0, 0 };
	const double one[] = { 0, 1, 0, 1, 0, 1 };
	struct ab_compare c;

	(void)state;
	/* differences 10..15 %: Walsh median 12.5, k = 1: [10, 15] */
	assert_int_equal(ab_compare_paired(a, b, 6, 1, true, 0.0, &c), 0);
	assert_true(c.median_a == 100 && c.median_b == 112.5);
	assert_true(fabs(c.diff_pct - 12.5) < 1e-9);
	assert_true(c.ci_low_pct == 10.0 && c.ci_high_pct == 15.0);
	assert_int_equal(c.verdict, AB_BETTER);
	assert_int_equal(ab_compare_paired(a, b, 6, 1, false, 0.0, &c), 0);
	assert_int_equal(c.verdict, AB_WORSE);
	assert_int_equal(ab_compare_paired(b, a, 6, 1, true, 0.0, &c), 0);
	assert_int_equal(c.verdict, AB_WORSE);
	/* identical sides: [0, 0] holds 0 */
	assert_int_equal(ab_compare_paired(a, a, 6, 1, true, 0.0, &c), 0);
	assert_int_equal(c.verdict, AB_WITHIN_NOISE);
	assert_true(c.diff_pct == 0.0);
	/* A's median is 0: no percentage, the unit's own figures */
	assert_int_equal(ab_compare_paired(z, one, 6, 1, true, 0.0, &c), 0);
	assert_false(c.has_pct);
	assert_int_equal(c.verdict, AB_WITHIN_NOISE);
	/* the noise floor: [10, 15] is beyond 9.9 but not beyond 10 */
	assert_int_equal(ab_compare_paired(a, b, 6, 1, true, 9.9, &c), 0);
	assert_int_equal(c.verdict, AB_BETTER);
	assert_int_equal(ab_compare_paired(a, b, 6, 1, true, 10.0, &c), 0);
	assert_int_equal(c.verdict, AB_WITHIN_NOISE);
	assert_int_equal(ab_compare_paired(b, a, 6, 1, true, 20.0, &c), 0);
	assert_int_equal(c.verdict, AB_WITHIN_NOISE);
	assert_int_equal(ab_compare_paired(a, b, 6, 1, true, -1.0, &c), -EINVAL);
	/* too few rounds for an interval */
	assert_int_equal(ab_compare_paired(a, b, 6, 0, true, 0.0, &c), 0);
	assert_int_equal(c.verdict, AB_NO_INTERVAL);
}

static void test_rng(void **state)
{
	struct ab_rng r1, r2;
	unsigned int v[6] = { 0, 1, 2, 3, 4, 5 }, seen[6] = { 0 };
	size_t i, counts[3] = { 0 };

	(void)state;
	ab_rng_seed(&r1, 1);
	ab_rng_seed(&r2, 1);
	for (i = 0; i < 100; i++)
		assert_true(ab_rng_next(&r1) == ab_rng_next(&r2));
	/* splitmix64's published first output for seed 0 */
	ab_rng_seed(&r1, 0);
	assert_true(ab_rng_next(&r1) == 0xe220a8397b1dcdafull);
	for (i = 0; i < 30000; i++)
		counts[ab_rng_below(&r1, 3)]++;
	for (i = 0; i < 3; i++)
		assert_in_range(counts[i], 9500, 10500);
	ab_shuffle(&r1, v, 6);
	for (i = 0; i < 6; i++)
		seen[v[i]]++;
	for (i = 0; i < 6; i++)
		assert_int_equal(seen[i], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_hl_hand),
		cmocka_unit_test(test_signed_rank_k),
		cmocka_unit_test(test_coverage),
		cmocka_unit_test(test_null_and_power),
		cmocka_unit_test(test_compare_hand),
		cmocka_unit_test(test_rng),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
