/* SPDX-License-Identifier: MIT */
/*
 * Log-linear latency histogram.
 *
 * Values (ns) below 64 get one bucket each; above, every power of two is
 * split into 32 linear buckets, so a bucket's width is at most 1/32 of its
 * value (3.1% worst-case error on a percentile).  The same scheme as fio's
 * and HdrHistogram's.  Min, max, mean and standard deviation are exact.
 *
 * A histogram is written by one thread; merge per-thread histograms to
 * report.
 */
#ifndef BLKSTACK_HIST_H
#define BLKSTACK_HIST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BLK_HIST_SUB_BITS 5
#define BLK_HIST_LINEAR 64
/* 64 linear + 58 power-of-two groups of 32 covers all of uint64_t */
#define BLK_HIST_BUCKETS (BLK_HIST_LINEAR + 58 * (1 << BLK_HIST_SUB_BITS))

struct blk_hist {
	uint64_t count;
	uint64_t min;
	uint64_t max;
	double sum;
	double sum_sq;
	uint64_t buckets[BLK_HIST_BUCKETS];
};

/** blk_hist_init() - empty a histogram. Context: the owning thread. */
void blk_hist_init(struct blk_hist *h);

/** blk_hist_bucket() - bucket index of a value. */
static inline unsigned int blk_hist_bucket(uint64_t v)
{
	unsigned int msb, shift;

	if (v < BLK_HIST_LINEAR)
		return (unsigned int)v;
	msb = 63u - (unsigned int)__builtin_clzll(v);
	shift = msb - BLK_HIST_SUB_BITS;
	return BLK_HIST_LINEAR + (shift - 1) * (1u << BLK_HIST_SUB_BITS) +
	       (unsigned int)((v >> shift) & ((1u << BLK_HIST_SUB_BITS) - 1));
}

/**
 * blk_hist_add() - record @n samples of @v (ns).
 * Context: the owning thread.
 */
static inline void blk_hist_add_n(struct blk_hist *h, uint64_t v, uint64_t n)
{
	double d = (double)v;

	h->buckets[blk_hist_bucket(v)] += n;
	h->count += n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->sum += d * (double)n;
	h->sum_sq += d * d * (double)n;
}

static inline void blk_hist_add(struct blk_hist *h, uint64_t v)
{
	blk_hist_add_n(h, v, 1);
}

/** blk_hist_bucket_low() - smallest value that falls in bucket @b. */
uint64_t blk_hist_bucket_low(unsigned int b);

/** blk_hist_merge() - add @src into @dst. */
void blk_hist_merge(struct blk_hist *dst, const struct blk_hist *src);

/**
 * blk_hist_percentile() - value at percentile @p (0 < p <= 100).
 *
 * Return: the midpoint of the bucket holding the sample of rank
 * ceil(p/100 * count), clamped to [min, max]; 0 for an empty histogram.
 */
uint64_t blk_hist_percentile(const struct blk_hist *h, double p);

/** blk_hist_mean() - mean in ns; 0 when empty. */
double blk_hist_mean(const struct blk_hist *h);

/** blk_hist_stddev() - population standard deviation in ns; 0 when < 2 samples. */
double blk_hist_stddev(const struct blk_hist *h);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_HIST_H */
