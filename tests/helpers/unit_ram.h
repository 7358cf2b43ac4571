/* SPDX-License-Identifier: MIT */
/*
 * A ram disk for the unit tests of the exports (tests/unit/test_nbd_proto.c,
 * test_metrics.c): one shared hardware queue, created or the test fails.
 * Include after <cmocka.h>.
 */
#ifndef BLKSTACK_UNIT_RAM_H
#define BLKSTACK_UNIT_RAM_H

#include <stdint.h>

#include "blkstack/ram.h"

/* A ram disk of @size bytes; blk_dev_close() it. */
static inline struct blk_dev *ram_dev(uint64_t size)
{
	struct blk_ram_config rc = { .queue = { .capacity = size,
						 .nr_hw_queues = 1,
						 .shared_hctx = true } };
	struct blk_dev *dev;

	assert_int_equal(blk_ram_create(&rc, &dev), 0);
	return dev;
}

#endif
