/* SPDX-License-Identifier: MIT */
/*
 * ram driver: a memory-backed block device.  4 KiB pages are allocated on
 * first write; discard and write-zeroes free whole pages and zero partial
 * ones, so reads of never-written or discarded blocks return zeros
 * (deterministic read zeroes after discard).
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
 * blk_ram_allocated_bytes() - memory the device's pages use, in bytes.
 * @dev: a device from blk_ram_create().
 * Context: any thread.
 */
uint64_t blk_ram_allocated_bytes(struct blk_dev *dev);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_RAM_H */
