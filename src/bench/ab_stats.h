/* SPDX-License-Identifier: MIT */
/*
 * The statistics of `blkstack bench --ab`: pure functions, no I/O, no
 * hidden randomness (the one generator is seeded by the caller).
 *
 * The difference between two sides is estimated from paired rounds (side
 * A and side B measured one after the other in each round): the
 * Hodges-Lehmann estimate of the per-round differences (the median of
 * their Walsh averages) and its distribution-free confidence interval,
 * the one that inverts the Wilcoxon signed-rank test (Hollander & Wolfe,
 * "Nonparametric Statistical Methods", 3.2).  docs/lab.md says why this
 * and not a bootstrap or the two-sample interval.
 */
#ifndef BLKSTACK_BENCH_AB_STATS_H
#define BLKSTACK_BENCH_AB_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Rounds the exact signed-rank distribution is computed for: n(n+1)/2
 * sums, n passes, once per round.
 */
#define AB_MAX_PAIRS 200

/* splitmix64 (Steele, Lea, Flood 2014): small, seeded, reproducible. */
struct ab_rng {
	uint64_t s;
};

/** ab_rng_seed() - start @r at @seed; the same seed, the same sequence. */
void ab_rng_seed(struct ab_rng *r, uint64_t seed);

/** ab_rng_next() - the next 64 random bits. */
uint64_t ab_rng_next(struct ab_rng *r);

/**
 * ab_rng_below() - a uniform integer in 0..@n-1 (@n >= 1), without the
 * modulo bias (Lemire's multiply and reject).
 */
uint64_t ab_rng_below(struct ab_rng *r, uint64_t n);

/** ab_shuffle() - Fisher-Yates shuffle of @v[0..@n-1] with @r. */
void ab_shuffle(struct ab_rng *r, unsigned int *v, size_t n);

/**
 * ab_median() - the median of @x[0..@n-1] (the mean of the middle two for
 * an even @n); @x is not changed.
 * Return: the median; NaN for @n == 0 or out of memory.
 */
double ab_median(const double *x, size_t n);

/**
 * ab_signed_rank_k() - the order statistic of the Walsh averages that
 * bounds the distribution-free interval for @n pairs.
 * @n: pairs, 1..AB_MAX_PAIRS.
 * @conf: confidence wanted, 0 < @conf < 1 (0.95).
 * @k: set to the largest k (1-based) with 2 P(T+ <= k-1) <= 1 - @conf,
 *	T+ the signed-rank statistic under the null: the interval is
 *	[W(k), W(M+1-k)] of the M = n(n+1)/2 sorted Walsh averages.
 * @coverage: set to the interval's exact coverage, 1 - 2 P(T+ <= k-1)
 *	(>= @conf; the distribution is discrete); may be NULL.
 *
 * Return: 0; -ERANGE when @n pairs are too few for @conf (the widest
 * interval, k = 1, covers only 1 - 2^(1-n): 6 pairs for 95 %); -EINVAL
 * for @n or @conf out of range; -ENOMEM.
 */
int ab_signed_rank_k(size_t n, double conf, size_t *k, double *coverage);

/**
 * struct ab_shift - a location shift and its interval, in the data's unit.
 * @estimate: Hodges-Lehmann estimate, the median of the Walsh averages.
 * @low, @high: the interval's ends, [W(k), W(M+1-k)]; valid if @has_ci.
 * @has_ci: false when there were too few pairs (k == 0).
 */
struct ab_shift {
	double estimate;
	double low, high;
	bool has_ci;
};

/**
 * ab_hl_paired() - Hodges-Lehmann estimate of the centre of @d (per-pair
 * differences, B - A) and its signed-rank interval.
 * @d: differences, @n of them (1..AB_MAX_PAIRS).
 * @k: from ab_signed_rank_k() for @n; 0 for the estimate only.
 * @out: the result.
 * Return: 0; -EINVAL for @n or @k out of range; -ENOMEM.
 */
int ab_hl_paired(const double *d, size_t n, size_t k, struct ab_shift *out);

enum ab_verdict {
	AB_WITHIN_NOISE = 0,	/* the interval reaches into +-noise */
	AB_BETTER,		/* all of it beyond +-noise, on the good side */
	AB_WORSE,		/* all of it beyond +-noise, on the bad side */
	AB_NO_INTERVAL,		/* too few rounds for one */
};

/** ab_verdict_name() - "better", "worse", "within noise", "no interval". */
const char *ab_verdict_name(enum ab_verdict v);

/**
 * struct ab_compare - one metric, side B against side A.
 * @median_a, @median_b: each side's median over the rounds.
 * @diff_pct: Hodges-Lehmann estimate of B - A, in % of @median_a.
 * @ci_low_pct, @ci_high_pct: its interval, in % of @median_a.
 * @has_pct: false when @median_a is 0 (a percentage of nothing): then
 *	the three figures are in the metric's own unit.
 * @has_ci: false with too few rounds.
 * @verdict: from the interval and the metric's direction.
 */
struct ab_compare {
	double median_a, median_b;
	double diff_pct, ci_low_pct, ci_high_pct;
	bool has_pct, has_ci;
	enum ab_verdict verdict;
};

/**
 * ab_compare_paired() - compare side B with side A over @n paired rounds.
 * @a, @b: the metric in each round, @n values each, @a[i] and @b[i] from
 *	round i.
 * @k: from ab_signed_rank_k() for @n (0: no interval).
 * @higher_is_better: the metric's direction (IOPS: true; latency, CPU
 *	per I/O: false).
 * @noise_pct: the smallest difference that counts, in % of A's median
 *	(>= 0): the verdict is better or worse only when the whole interval
 *	lies beyond +-@noise_pct, i.e. the difference is at least that
 *	large with 95 % confidence; 0: whenever the interval excludes 0.
 *	Not used when A's median is 0 (the interval must exclude 0).
 * @out: the result.
 *
 * The differences b[i] - a[i] are scaled to % of A's median before the
 * estimate, so that the interval in % is the interval of the data scaled
 * by one constant.
 * Return: 0, -EINVAL, -ENOMEM.
 */
int ab_compare_paired(const double *a, const double *b, size_t n, size_t k,
		      bool higher_is_better, double noise_pct,
		      struct ab_compare *out);

#endif /* BLKSTACK_BENCH_AB_STATS_H */
