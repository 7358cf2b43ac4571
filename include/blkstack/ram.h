/* SPDX-License-Identifier: MIT */
/*
 * ram driver: a memory-backed block device.  A 4 KiB page is allocated on
 * the first write into it, so memory follows the data written, whatever the
 * pattern: 4 KiB of data plus about 0.3 KiB of index per lone 4 KiB write,
 * plus at most one 2 MiB slab committed ahead (pages are taken from slabs
 * committed in one call each, so that a first write costs a copy, not a
 * page fault).  Discard and write-zeroes free whole pages, giving their
 * memory back to the kernel, and zero partial ones, so reads of
 * never-written or discarded blocks return zeros (deterministic read zeroes
 * after discard).  Design and measurements: src/drivers/ram/page_store.h.
 */
#ifndef BLKSTACK_RAM_H
#define BLKSTACK_RAM_H

#include "blk_mq.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct blk_ram_config - a ram device.
 * @queue: capacity (bytes) and queue limits; name, ops, cmd_size and
 *	driver_data are set by the driver.
 */
struct blk_ram_config {
	struct blk_dev_config queue;
};

/**
 * blk_ram_create() - create a ram device.
 * @cfg: configuration; copied.
 * @dev: set on success.
 *
 * Return: 0, -EINVAL for a bad limit (see blk_dev_create()), -ENOMEM.
 * Context: any thread.
 */
int blk_ram_create(const struct blk_ram_config *cfg, struct blk_dev **dev);

/**
 * blk_ram_allocated_bytes() - bytes of data pages the device holds: 4 KiB
 * per page written and not discarded since.  The memory the device commits
 * is this, plus its index (about 7% of it for isolated 4 KiB writes, 0.1%
 * for dense ones) and up to 2 MiB committed ahead.
 * @dev: a device from blk_ram_create().
 * Return: bytes, a multiple of 4096; exact when no I/O is in progress.
 * Context: any thread.
 */
uint64_t blk_ram_allocated_bytes(struct blk_dev *dev);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_RAM_H */
