// SPDX-License-Identifier: MIT
/*
 * Log-linear latency histogram - see blkstack/hist.h.
 */
#include <math.h>
#include <string.h>

#include "blkstack/hist.h"

void blk_hist_init(struct blk_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t blk_hist_bucket_low(unsigned int b)
{
	unsigned int group, sub, shift;

	if (b < BLK_HIST_LINEAR)
		return b;
	group = (b - BLK_HIST_LINEAR) >> BLK_HIST_SUB_BITS;
	sub = (b - BLK_HIST_LINEAR) & ((1u << BLK_HIST_SUB_BITS) - 1);
	shift = group + 1;
	return ((uint64_t)((1u << BLK_HIST_SUB_BITS) + sub)) << shift;
}

void blk_hist_merge(struct blk_hist *dst, const struct blk_hist *src)
{
	unsigned int i;

	if (!src->count)
		return;
	for (i = 0; i < BLK_HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->sum += src->sum;
	dst->sum_sq += src->sum_sq;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t blk_hist_percentile(const struct blk_hist *h, double p)
{
	uint64_t rank, seen = 0, lo, hi, v;
	unsigned int i;

	if (!h->count)
		return 0;
	if (p <= 0)
		return h->min;
	if (p >= 100)
		return h->max;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < BLK_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	if (i >= BLK_HIST_BUCKETS)
		return h->max;
	lo = blk_hist_bucket_low(i);
	hi = i + 1 < BLK_HIST_BUCKETS ? blk_hist_bucket_low(i + 1) - 1 : UINT64_MAX;
	v = lo + (hi - lo) / 2;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

double blk_hist_mean(const struct blk_hist *h)
{
	return h->count ? h->sum / (double)h->count : 0.0;
}

double blk_hist_stddev(const struct blk_hist *h)
{
	double mean, var;

	if (h->count < 2)
		return 0.0;
	mean = h->sum / (double)h->count;
	var = h->sum_sq / (double)h->count - mean * mean;
	return var > 0 ? sqrt(var) : 0.0;
}
