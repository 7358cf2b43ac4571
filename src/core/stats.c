// SPDX-License-Identifier: MIT
/*
 * Device statistics in the shape of /proc/diskstats
 * (Documentation/admin-guide/iostats.rst).
 */
#include <stdio.h>
#include <string.h>

#include "blk-mq.h"

void blk_dev_get_stats(const struct blk_dev *dev, struct blk_disk_stats *st)
{
	struct blk_mq_ctx_stats s;
	unsigned int i;

	blk_dev_sum_stats(dev, &s);
	memset(st, 0, sizeof(*st));
	for (i = 0; i < BLK_STAT_NR_DIRS; i++) {
		st->ios[i] = s.ios[i];
		st->sectors[i] = s.sectors[i];
		st->merges[i] = s.merges[i];
		st->ticks_ms[i] = s.ticks_ns[i] / 1000000;
	}
	for (i = 0; i < 2; i++)
		st->in_flight[i] = s.dispatched[i] - s.completed[i];
	st->io_ticks_ms = s.io_ticks_ns / 1000000;
	st->requeues = s.requeues;
	st->timeouts = s.timeouts;
	/* counted per hardware queue (dispatch may run another ctx's work) */
	st->queue_runs = s.queue_runs;
	for (i = 0; i < dev->cfg.nr_hw_queues; i++)
		st->queue_runs += STAT_READ(&dev->hctxs[i]->queue_runs);
	st->errors = s.errors;
}

int blk_dev_format_diskstats(const struct blk_dev *dev, const char *name,
			     char *buf, size_t len)
{
	struct blk_disk_stats st;
	uint64_t weighted = 0;
	unsigned int i;

	blk_dev_get_stats(dev, &st);
	for (i = 0; i < BLK_STAT_NR_DIRS; i++)
		weighted += st.ticks_ms[i];
	/*
	 * Fields 1-11 as the kernel prints them, then discards (12-15) and
	 * flushes (16-17).  Major 259 is the kernel's block extended major.
	 */
	return snprintf(buf, len,
			"259 0 %s %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu "
			"%lu %lu %lu %lu %lu %lu\n",
			name, st.ios[0], st.merges[0], st.sectors[0],
			st.ticks_ms[0], st.ios[1], st.merges[1], st.sectors[1],
			st.ticks_ms[1], st.in_flight[0] + st.in_flight[1],
			st.io_ticks_ms, weighted, st.ios[2], st.merges[2],
			st.sectors[2], st.ticks_ms[2], st.ios[3], st.ticks_ms[3]);
}
