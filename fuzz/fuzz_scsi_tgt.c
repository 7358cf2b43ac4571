// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the SCSI target core's command entry
 * (scsi_tgt_submit()), fed CDBs and Data-Out from memory, as the iSCSI
 * target will feed them from the network.  Input: commands back to back,
 * each
 *   byte 0: CDB length (6..16, taken modulo 11 plus 6)
 *   byte 1: LUN (modulo 3: units 0 and 1, and one that does not exist);
 *           bit 7: the second target, which injects scsi_debug's faults
 *           (every_nth 3, every opts bit but the never-completing timeout)
 *   byte 2: data direction (modulo 3) and the nexus (bits 2..7)
 *   bytes 3-4: expected transfer length, big-endian, bytes (at most 64 KiB)
 *   the CDB, then the Data-Out (what the input has left of it; the rest
 *   of the buffer is zeros).
 * Checked on every command: it ends exactly once, with a known status
 * (GOOD, CHECK CONDITION, RESERVATION CONFLICT, TASK SET FULL), sense that
 * decodes when it is CHECK CONDITION, and a residual within the expected
 * length.  The targets live across inputs, so do their unit attentions,
 * registrations and reservations (seeds pr, reserve and xcopy leave none
 * held; to give nexus N direction D, byte 2 is N << 2 | (D - N) mod 3).  Also built without libFuzzer by fuzz/replay_main.c to
 * replay the seed corpus in CI.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blkstack/ram.h"
#include "blkstack/scsi_tgt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned int ended;

static void done(struct scsi_tgt_cmd *c)
{
	(void)c;
	ended++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct blk_dev *dev[4];
	static struct scsi_tgt *tgts[2];
	static uint8_t buf[64 << 10];
	struct scsi_tgt_queue *qs[2];
	size_t p = 0;
	char err[256];

	if (!tgts[0]) {
		struct blk_ram_config rc = { .queue = { .capacity = 1 << 20,
							.queue_depth = 16 } };
		struct scsi_tgt_config tc = { .luns = dev, .nr_luns = 2 };

		if (blk_ram_create(&rc, &dev[0]) || blk_ram_create(&rc, &dev[1]) ||
		    scsi_tgt_create(&tc, &tgts[0], err, sizeof(err)))
			abort();
		/* units of its own: a device takes one ctx per hardware queue */
		tc.luns = dev + 2;
		tc.every_nth = 3;
		tc.opts = SCSI_TGT_OPTS_SUPPORTED & ~SCSI_TGT_OPT_TIMEOUT;
		if (blk_ram_create(&rc, &dev[2]) || blk_ram_create(&rc, &dev[3]) ||
		    scsi_tgt_create(&tc, &tgts[1], err, sizeof(err)))
			abort();
	}
	if (scsi_tgt_queue_attach(tgts[0], &qs[0]) ||
	    scsi_tgt_queue_attach(tgts[1], &qs[1]))
		abort();
	while (p + 5 <= size) {
		struct scsi_tgt_cmd c;
		struct scsi_tgt_queue *q = qs[data[p + 1] >> 7];
		struct iovec iov = { .iov_base = buf };
		uint8_t cdb[16];
		unsigned int cdb_len = 6 + data[p] % 11, before = ended;
		uint32_t xfer = (uint32_t)data[p + 3] << 8 | data[p + 4];
		size_t take;
		int ret;

		memset(&c, 0, sizeof(c));
		c.lun = (data[p + 1] & 0x7f) % 3;
		c.dir = data[p + 2] % 3;
		c.nexus = data[p + 2] >> 2;
		p += 5;
		if (p + cdb_len > size)
			break;
		memcpy(cdb, data + p, cdb_len);
		p += cdb_len;
		memset(buf, 0, xfer);
		if (c.dir == SCSI_DIR_TO_DEVICE) {
			take = size - p < xfer ? size - p : xfer;
			memcpy(buf, data + p, take);
			p += take;
		}
		iov.iov_len = xfer;
		c.cdb = cdb;
		c.cdb_len = (uint8_t)cdb_len;
		c.iov = &iov;
		c.iovcnt = 1;
		c.xfer_len = xfer;
		c.done = done;
		ret = scsi_tgt_submit(q, &c);
		if (ret == -EAGAIN || ret == -ENOMEM || ret == -EBUSY)
			continue;
		if (ret)
			abort();
		while (ended == before)
			scsi_tgt_poll(q);
		if (ended != before + 1)
			abort(); /* ended more than once */
		if (c.status != SAM_STAT_GOOD &&
		    c.status != SAM_STAT_CONDITION_MET && /* PRE-FETCH */
		    c.status != SAM_STAT_CHECK_CONDITION &&
		    c.status != SAM_STAT_RESERVATION_CONFLICT &&
		    c.status != SAM_STAT_TASK_SET_FULL)
			abort();
		if (c.status == SAM_STAT_CHECK_CONDITION) {
			struct scsi_sense s;

			if (!c.sense_len || scsi_parse_sense(c.sense, c.sense_len, &s))
				abort();
		}
		if (c.resid > xfer && !c.overflow)
			abort();
	}
	scsi_tgt_queue_detach(qs[0]);
	scsi_tgt_queue_detach(qs[1]);
	return 0;
}
