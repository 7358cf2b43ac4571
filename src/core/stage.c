// SPDX-License-Identifier: MIT
/*
 * Stage timers: the names, the interval and window arithmetic (pure: no
 * clock but the caller's stamps), and the driver's stamp.  The core takes
 * the stamps in blk-mq.c; docs/stages.md says where and what they cost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk-mq.h"

static const char *const stage_names[BLK_STAGE_NR] = {
	[BLK_STAGE_SUBMIT] = "submit",
	[BLK_STAGE_FLUSH] = "flush",
	[BLK_STAGE_DISPATCH] = "dispatch",
	[BLK_STAGE_DEVICE] = "device",
	[BLK_STAGE_DEVICE_DONE] = "device_done",
	[BLK_STAGE_COMPLETE] = "complete",
	[BLK_STAGE_END_IO] = "end_io",
};

const char *blk_stage_name(unsigned int stage)
{
	return stage < BLK_STAGE_NR ? stage_names[stage] : "?";
}

static int stage_lookup(const char *s, size_t len)
{
	unsigned int i;

	for (i = 0; i < BLK_STAGE_NR; i++)
		if (strlen(stage_names[i]) == len && !strncmp(s, stage_names[i], len))
			return (int)i;
	return -1;
}

int blk_stage_window_parse(const char *spec, uint8_t *from, uint8_t *to,
			   char *why, size_t whylen)
{
	const char *colon = strchr(spec, ':');
	static const char allowed[] =
		"allowed STAGE_A:STAGE_B, STAGE_B later than STAGE_A, stages submit|flush|dispatch|device|device_done|complete|end_io";
	int a, b;

	if (!colon) {
		snprintf(why, whylen, "no ':', %s", allowed);
		return -EINVAL;
	}
	a = stage_lookup(spec, (size_t)(colon - spec));
	b = stage_lookup(colon + 1, strlen(colon + 1));
	if (a < 0 || b < 0) {
		snprintf(why, whylen, "unknown stage '%.*s', %s",
			 a < 0 ? (int)(colon - spec) : (int)strlen(colon + 1),
			 a < 0 ? spec : colon + 1, allowed);
		return -EINVAL;
	}
	if (b <= a) {
		snprintf(why, whylen, "%s is not later than %s, %s",
			 stage_names[b], stage_names[a], allowed);
		return -EINVAL;
	}
	*from = (uint8_t)a;
	*to = (uint8_t)b;
	return 0;
}

void blk_stage_stats_init(struct blk_stage_stats *st, uint8_t win_from,
			  uint8_t win_to, uint64_t window_ns)
{
	unsigned int i;

	for (i = 0; i < BLK_STAGE_NR_INTERVALS; i++)
		blk_hist_init(&st->interval[i]);
	st->has_window = win_to > win_from && win_to < BLK_STAGE_NR;
	st->win_from = st->has_window ? win_from : 0;
	st->win_to = st->has_window ? win_to : 0;
	st->window_ns = window_ns;
	st->win_start_ns = st->win_cum_ns = st->win_count = 0;
	st->windows = NULL;
	st->nr_windows = st->cap_windows = 0;
}

void blk_stage_stats_free(struct blk_stage_stats *st)
{
	free(st->windows);
	st->windows = NULL;
	st->nr_windows = st->cap_windows = 0;
}

static int window_push(struct blk_stage_stats *st,
		       const struct blk_stage_window *w)
{
	if (st->nr_windows == st->cap_windows) {
		size_t cap = st->cap_windows ? st->cap_windows * 2 : 64;
		struct blk_stage_window *n =
			realloc(st->windows, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		st->windows = n;
		st->cap_windows = cap;
	}
	st->windows[st->nr_windows++] = *w;
	return 0;
}

int blk_stage_account(struct blk_stage_stats *st, const uint64_t *ts)
{
	unsigned int i;
	uint64_t a, b, d;
	int ret = 0;

	for (i = 0; i < BLK_STAGE_NR_INTERVALS; i++) {
		a = ts[i];
		b = ts[i + 1];
		if (a && b)
			blk_hist_add(&st->interval[i], b >= a ? b - a : 0);
	}
	if (!st->has_window)
		return 0;
	a = ts[st->win_from];
	b = ts[st->win_to];
	if (!a || !b)
		return 0;
	d = b >= a ? b - a : 0;
	if (!st->win_count)
		st->win_start_ns = b;
	st->win_cum_ns += d;
	st->win_count++;
	/* seed 000's print_timings: the window closes with the sample that
	 * reaches its length */
	if (b >= st->win_start_ns && b - st->win_start_ns >= st->window_ns) {
		struct blk_stage_window w = {
			.start_ns = st->win_start_ns,
			.cum_ns = st->win_cum_ns,
			.count = st->win_count,
		};

		ret = window_push(st, &w);
		st->win_cum_ns = st->win_count = 0;
	}
	return ret;
}

int blk_stage_stats_merge(struct blk_stage_stats *dst,
			  const struct blk_stage_stats *src)
{
	unsigned int i;
	size_t k;

	for (i = 0; i < BLK_STAGE_NR_INTERVALS; i++)
		blk_hist_merge(&dst->interval[i], &src->interval[i]);
	if (!dst->has_window && src->has_window) {
		dst->has_window = true;
		dst->win_from = src->win_from;
		dst->win_to = src->win_to;
		dst->window_ns = src->window_ns;
	}
	for (k = 0; k < src->nr_windows; k++)
		if (window_push(dst, &src->windows[k]))
			return -ENOMEM;
	return 0;
}

void blk_mq_stage_stamp(struct request *rq, unsigned int stage)
{
#ifdef BLK_STAGE_TIMERS
	if (stage < BLK_STAGE_NR)
		rq->stage_ns[stage] = blk_time_ns();
#else
	(void)rq;
	(void)stage;
#endif
}
