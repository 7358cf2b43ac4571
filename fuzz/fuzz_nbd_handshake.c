// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the NBD handshake engine (blk_nbd_handshake()) fed
 * client bytes from memory.  Two exports on a small ram device; the input
 * is everything the client sends (flags, options).  Also built without
 * libFuzzer by fuzz/replay_main.c to replay the seed corpus in CI.
 */
#include <stdint.h>
#include <stdlib.h>

#include "blkstack/nbd.h"
#include "blkstack/ram.h"
#include "../tests/helpers/nbd_memio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct blk_dev *dev;
	struct blk_nbd_export ex[2];
	struct memio m = { .in = data, .in_len = size };
	struct blk_nbd_io io = memio_io(&m);
	struct blk_nbd_session s;
	int ret;

	if (!dev) {
		struct blk_ram_config rc = { .queue = { .capacity = 1 << 20 } };

		if (blk_ram_create(&rc, &dev))
			abort();
	}
	ex[0] = (struct blk_nbd_export){ .name = "", .description = "default",
					 .dev = dev };
	ex[1] = (struct blk_nbd_export){ .name = "ro", .description = "",
					 .dev = dev, .read_only = true };
	ret = blk_nbd_handshake(ex, 2, &io, &s);
	if (ret == 0 && (s.export_idx > 1 || (s.base_allocation && !s.structured)))
		abort(); /* the session must be consistent */
	if (ret > 1)
		abort();
	free(m.out);
	return 0;
}
