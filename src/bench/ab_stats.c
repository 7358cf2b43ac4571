// SPDX-License-Identifier: MIT
/*
 * Statistics of `blkstack bench --ab`: the Hodges-Lehmann estimate of a
 * paired difference and its signed-rank interval, medians, a seeded
 * generator for the randomised round order.  See ab_stats.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ab_stats.h"

void ab_rng_seed(struct ab_rng *r, uint64_t seed)
{
	r->s = seed;
}

uint64_t ab_rng_next(struct ab_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t ab_rng_below(struct ab_rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)ab_rng_next(r) * n;
	uint64_t low = (uint64_t)m;

	if (low < n) {
		uint64_t t = -n % n;

		while (low < t) {
			m = (unsigned __int128)ab_rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

void ab_shuffle(struct ab_rng *r, unsigned int *v, size_t n)
{
	size_t i;

	for (i = n; i > 1; i--) {
		size_t j = (size_t)ab_rng_below(r, i);
		unsigned int t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Median of @x, which it sorts. */
static double median_sorted_in_place(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2.0;
}

double ab_median(const double *x, size_t n)
{
	double *c, m;

	if (!n)
		return NAN;
	c = malloc(n * sizeof(*c));
	if (!c)
		return NAN;
	memcpy(c, x, n * sizeof(*c));
	m = median_sorted_in_place(c, n);
	free(c);
	return m;
}

int ab_signed_rank_k(size_t n, double conf, size_t *k, double *coverage)
{
	size_t m = n * (n + 1) / 2, i, t, kk;
	double alpha = 1.0 - conf, cum;
	double *p;

	if (!n || n > AB_MAX_PAIRS || !(conf > 0.0 && conf < 1.0))
		return -EINVAL;
	/*
	 * The null distribution of T+, the sum of the ranks of the positive
	 * differences: each rank 1..n is in the sum with probability 1/2,
	 * independently.  p[t] = P(T+ = t), built one rank at a time.
	 */
	p = calloc(m + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p[0] = 1.0;
	for (i = 1; i <= n; i++) {
		size_t top = i * (i + 1) / 2;

		for (t = top; t >= i; t--)
			p[t] = (p[t] + p[t - i]) / 2.0;
		for (t = i; t-- > 0;)
			p[t] /= 2.0;
	}
	/* the largest k with 2 P(T+ <= k-1) <= alpha */
	kk = 0;
	cum = 0.0;
	for (t = 0; t <= m; t++) {
		cum += p[t];
		/* a hair of slack for the rounding of the sums */
		if (2.0 * cum > alpha * (1.0 + 1e-12))
			break;
		kk = t + 1;
	}
	if (coverage) {
		double below = 0.0;

		for (t = 0; t + 1 <= kk; t++)
			below += p[t];
		*coverage = 1.0 - 2.0 * below;
	}
	free(p);
	if (!kk)
		return -ERANGE;
	*k = kk;
	return 0;
}

int ab_hl_paired(const double *d, size_t n, size_t k, struct ab_shift *out)
{
	size_t m = n * (n + 1) / 2, i, j, w = 0;
	double *walsh;

	if (!n || n > AB_MAX_PAIRS || k > (m + 1) / 2)
		return -EINVAL;
	walsh = malloc(m * sizeof(*walsh));
	if (!walsh)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		for (j = i; j < n; j++)
			walsh[w++] = (d[i] + d[j]) / 2.0;
	out->estimate = median_sorted_in_place(walsh, m);
	out->has_ci = k > 0;
	out->low = k ? walsh[k - 1] : NAN;
	out->high = k ? walsh[m - k] : NAN;
	free(walsh);
	return 0;
}

const char *ab_verdict_name(enum ab_verdict v)
{
	switch (v) {
	case AB_BETTER:
		return "better";
	case AB_WORSE:
		return "worse";
	case AB_NO_INTERVAL:
		return "no interval";
	case AB_WITHIN_NOISE:
	default:
		return "within noise";
	}
}

int ab_compare_paired(const double *a, const double *b, size_t n, size_t k,
		      bool higher_is_better, double noise_pct,
		      struct ab_compare *out)
{
	struct ab_shift s;
	double *d, scale, floor;
	size_t i;
	int ret;

	if (!n || n > AB_MAX_PAIRS || !(noise_pct >= 0.0))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->median_a = ab_median(a, n);
	out->median_b = ab_median(b, n);
	if (isnan(out->median_a) || isnan(out->median_b))
		return -ENOMEM;
	out->has_pct = out->median_a != 0.0;
	scale = out->has_pct ? 100.0 / fabs(out->median_a) : 1.0;
	d = malloc(n * sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		d[i] = (b[i] - a[i]) * scale;
	ret = ab_hl_paired(d, n, k, &s);
	free(d);
	if (ret)
		return ret;
	out->diff_pct = s.estimate;
	out->has_ci = s.has_ci;
	out->ci_low_pct = s.low;
	out->ci_high_pct = s.high;
	floor = out->has_pct ? noise_pct : 0.0;
	if (!s.has_ci)
		out->verdict = AB_NO_INTERVAL;
	else if (s.low > floor)
		out->verdict = higher_is_better ? AB_BETTER : AB_WORSE;
	else if (s.high < -floor)
		out->verdict = higher_is_better ? AB_WORSE : AB_BETTER;
	else
		out->verdict = AB_WITHIN_NOISE;
	return 0;
}
