// SPDX-License-Identifier: MIT
/*
 * SCSI target core: sense data in both formats, the unit attention after
 * power on, INQUIRY (standard, VPD pages, unknown page), READ CAPACITY,
 * MODE SENSE, REPORT LUNS and units that do not exist, READ/WRITE with
 * data through a ram unit, residuals both ways, range and reserved-field
 * errors with their field pointers, write protect, UNMAP and WRITE SAME,
 * SYNCHRONIZE CACHE, and a device's I/O error as MEDIUM ERROR with the LBA.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "blkstack/null.h"
#include "blkstack/ram.h"
#include "blkstack/scsi_tgt.h"

#define CAP (16u << 20) /* 32768 blocks of 512 */

struct fx {
	struct blk_dev *dev[2];
	struct scsi_tgt *t;
	struct scsi_tgt_queue *q;
};

static int ended;

static void done(struct scsi_tgt_cmd *c)
{
	(void)c;
	ended++;
}

static void setup_cfg(struct fx *f, bool wp, bool failing)
{
	struct blk_ram_config rc = { 0 };
	struct scsi_tgt_config tc = { 0 };
	char err[256];

	rc.queue.capacity = CAP;
	rc.queue.queue_depth = 64;
	assert_int_equal(blk_ram_create(&rc, &f->dev[0]), 0);
	if (failing) {
		struct blk_null_config nc = { 0 };

		nc.queue.capacity = CAP;
		nc.queue.queue_depth = 64;
		nc.fail_every = 1;
		assert_int_equal(blk_null_create(&nc, &f->dev[1]), 0);
	} else {
		assert_int_equal(blk_ram_create(&rc, &f->dev[1]), 0);
	}
	tc.luns = f->dev;
	tc.nr_luns = 2;
	tc.own_luns = true;
	tc.id = 0x123456;
	tc.write_protect = wp;
	assert_int_equal(scsi_tgt_create(&tc, &f->t, err, sizeof(err)), 0);
	assert_int_equal(scsi_tgt_queue_attach(f->t, &f->q), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	setup_cfg(f, false, false);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	scsi_tgt_queue_detach(f->q);
	scsi_tgt_destroy(f->t);
	free(f);
	return 0;
}

/* Run one command to its end; returns its status. */
static uint8_t run(struct fx *f, struct scsi_tgt_cmd *c, uint64_t lun,
		   unsigned int nexus, const uint8_t *cdb, uint8_t cdb_len,
		   uint8_t dir, void *buf, uint32_t xfer)
{
	static struct iovec iov;
	int n = ended;

	memset(c, 0, sizeof(*c));
	iov.iov_base = buf;
	iov.iov_len = xfer;
	c->lun = lun;
	c->nexus = nexus;
	c->cdb = cdb;
	c->cdb_len = cdb_len;
	c->dir = dir;
	c->iov = &iov;
	c->iovcnt = buf ? 1 : 0;
	c->xfer_len = xfer;
	c->done = done;
	assert_int_equal(scsi_tgt_submit(f->q, c), 0);
	while (ended == n)
		scsi_tgt_poll(f->q);
	assert_int_equal(ended, n + 1);
	return c->status;
}

/* Clear the power-on unit attention of @nexus on both units. */
static void clear_ua(struct fx *f, unsigned int nexus)
{
	static const uint8_t tur[6] = { TEST_UNIT_READY };
	struct scsi_tgt_cmd c;

	for (uint64_t lun = 0; lun < 2; lun++) {
		assert_int_equal(run(f, &c, lun, nexus, tur, 6, SCSI_DIR_NONE, NULL, 0),
				 SAM_STAT_CHECK_CONDITION);
		assert_int_equal(run(f, &c, lun, nexus, tur, 6, SCSI_DIR_NONE, NULL, 0),
				 SAM_STAT_GOOD);
	}
}

static void expect_sense(const struct scsi_tgt_cmd *c, uint8_t key,
			 uint16_t asc)
{
	struct scsi_sense s;

	assert_int_equal(c->status, SAM_STAT_CHECK_CONDITION);
	assert_int_equal(scsi_parse_sense(c->sense, c->sense_len, &s), 0);
	assert_int_equal(s.key, key);
	assert_int_equal(s.asc_ascq, asc);
}

/* ILLEGAL REQUEST, INVALID FIELD IN CDB, pointing at @byte/@bit */
static void expect_field(const struct scsi_tgt_cmd *c, unsigned int byte, int bit)
{
	struct scsi_sense s;

	expect_sense(c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	assert_int_equal(scsi_parse_sense(c->sense, c->sense_len, &s), 0);
	assert_true(s.sks_valid);
	assert_int_equal(s.sks, scsi_sks_field(true, byte, bit));
}

static void test_sense_formats(void **state)
{
	struct scsi_sense in = {
		.key = SK_MEDIUM_ERROR, .asc_ascq = ASC_UNRECOVERED_READ_ERROR,
		.info_valid = true, .info = 0x123456789aull,
		.sks_valid = true, .sks = scsi_sks_field(true, 7, 3),
	}, out;
	uint8_t b[SCSI_SENSE_MAX];
	unsigned int n;

	(void)state;
	/* descriptor: 64-bit INFORMATION and the field pointer survive */
	n = scsi_build_sense(b, &in, true);
	assert_int_equal(n, 8 + 12 + 8);
	assert_int_equal(b[0], 0x72);
	assert_int_equal(scsi_parse_sense(b, n, &out), 0);
	assert_int_equal(out.key, in.key);
	assert_int_equal(out.asc_ascq, in.asc_ascq);
	assert_true(out.info_valid);
	assert_true(out.info == in.info);
	assert_true(out.sks_valid);
	assert_int_equal(out.sks, in.sks);
	/* fixed: INFORMATION does not fit 32 bits: VALID is clear */
	n = scsi_build_sense(b, &in, false);
	assert_int_equal(n, 18);
	assert_int_equal(b[0], 0x70);
	assert_int_equal(b[7], 10);
	assert_int_equal(scsi_parse_sense(b, n, &out), 0);
	assert_false(out.info_valid);
	assert_int_equal(out.sks, in.sks);
	in.info = 4242;
	n = scsi_build_sense(b, &in, false);
	assert_int_equal(b[0], 0xf0);
	assert_int_equal(scsi_parse_sense(b, n, &out), 0);
	assert_true(out.info_valid);
	assert_true(out.info == 4242);
	/* too short, unknown response code */
	assert_int_equal(scsi_parse_sense(b, 10, &out), -EINVAL);
	b[0] = 0x7f;
	assert_int_equal(scsi_parse_sense(b, n, &out), -EINVAL);
	/* a descriptor whose length runs past the data is not read */
	n = scsi_build_sense(b, &in, true);
	b[9] = 0xf0;
	assert_int_equal(scsi_parse_sense(b, n, &out), 0);
	assert_false(out.info_valid);
}

static void test_unit_attention(void **state)
{
	struct fx *f = *state;
	static const uint8_t tur[6] = { TEST_UNIT_READY };
	static const uint8_t inq[6] = { INQUIRY, 0, 0, 0, 96, 0 };
	uint8_t rs[6] = { REQUEST_SENSE, 0, 0, 0, 252, 0 };
	uint8_t buf[256];
	struct scsi_tgt_cmd c;
	struct scsi_sense s;

	/* after power on, the first command of each nexus sees 29/00 once */
	assert_int_equal(run(f, &c, 0, 0, tur, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_CHECK_CONDITION);
	expect_sense(&c, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
	assert_int_equal(run(f, &c, 0, 0, tur, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	/* INQUIRY is not held by it; REQUEST SENSE returns and clears it */
	assert_int_equal(run(f, &c, 0, 1, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 96),
			 SAM_STAT_GOOD);
	rs[1] = 1; /* descriptor format */
	assert_int_equal(run(f, &c, 0, 1, rs, 6, SCSI_DIR_FROM_DEVICE, buf, 252),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[0], 0x72);
	assert_int_equal(scsi_parse_sense(buf, 252 - c.resid, &s), 0);
	assert_int_equal(s.key, SK_UNIT_ATTENTION);
	assert_int_equal(s.asc_ascq, ASC_POWER_ON_RESET);
	assert_int_equal(run(f, &c, 0, 1, tur, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	rs[1] = 0;
	assert_int_equal(run(f, &c, 0, 1, rs, 6, SCSI_DIR_FROM_DEVICE, buf, 252),
			 SAM_STAT_GOOD);
	assert_int_equal(c.resid, 252 - 18);
	assert_int_equal(buf[0], 0x70);
	assert_int_equal(buf[2], SK_NO_SENSE);
}

static void test_inquiry(void **state)
{
	struct fx *f = *state;
	uint8_t cdb[6] = { INQUIRY, 0, 0, 0, 255, 0 };
	uint8_t buf[512];
	struct scsi_tgt_cmd c;

	assert_int_equal(run(f, &c, 0, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(c.resid, 255 - 96);
	assert_int_equal(buf[0], 0x00);
	assert_int_equal(buf[2], 0x06); /* SPC-4 */
	assert_int_equal(buf[3] & 0x0f, 2);
	assert_int_equal(buf[4], 91);
	assert_memory_equal(buf + 8, "BLKSTACK", 8);
	assert_memory_equal(buf + 16, "blkstack disk   ", 16);
	assert_int_equal(scsi_get_be16(buf + 60), 0x0460); /* SPC-4 */
	/* allocation length: 36 bytes, the rest of the buffer untouched */
	memset(buf, 0xee, sizeof(buf));
	cdb[4] = 36;
	assert_int_equal(run(f, &c, 0, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, buf, 36),
			 SAM_STAT_GOOD);
	assert_int_equal(c.resid, 0);
	assert_int_equal(buf[36], 0xee);
	/* VPD 0x00: the pages; 0x83: NAA 6 with the target's id */
	cdb[1] = 1;
	cdb[4] = 255;
	assert_int_equal(run(f, &c, 0, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be16(buf + 2), 7);
	assert_memory_equal(buf + 4, "\x00\x80\x83\x8f\xb0\xb1\xb2", 7);
	cdb[2] = 0x83;
	assert_int_equal(run(f, &c, 1, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[5] & 0x0f, 3);  /* NAA */
	assert_int_equal(buf[8] >> 4, 6);    /* NAA 6 */
	assert_int_equal(scsi_get_be32(buf + 12), 0x123456);
	assert_true(scsi_get_be64(buf + 16) == 1); /* LUN 1 */
	/* 0xb0: WSNZ, MAXIMUM TRANSFER LENGTH; 0xb2: LBPU, LBPRZ on ram */
	cdb[2] = 0xb0;
	assert_int_equal(run(f, &c, 0, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be16(buf + 2), 0x3c);
	assert_int_equal(buf[4] & 1, 1);
	assert_int_equal(scsi_get_be32(buf + 8), 65535);
	cdb[2] = 0xb2;
	assert_int_equal(run(f, &c, 0, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[5] & 0x80, 0x80);
	assert_int_equal(buf[5] & 0x04, 0x04);
	/* an unknown page, a page code without EVPD, CMDDT */
	cdb[2] = 0xc7;
	run(f, &c, 0, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, buf, 255);
	expect_field(&c, 2, -1);
	cdb[1] = 0;
	cdb[2] = 0x80;
	run(f, &c, 0, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, buf, 255);
	expect_field(&c, 2, -1);
	cdb[1] = 2;
	cdb[2] = 0;
	run(f, &c, 0, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, buf, 255);
	expect_field(&c, 1, 1);
	/* a unit that does not exist: qualifier 3 */
	cdb[1] = 0;
	assert_int_equal(run(f, &c, 9, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[0], 0x7f);
}

static void test_capacity_luns_mode(void **state)
{
	struct fx *f = *state;
	uint8_t rc10[10] = { READ_CAPACITY_10 };
	uint8_t rc16[16] = { SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16 };
	uint8_t rl[12] = { REPORT_LUNS, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
	uint8_t ms[6] = { MODE_SENSE_6, 0, 0x3f, 0, 255, 0 };
	uint8_t ms10[10] = { MODE_SENSE_10, 0x10, 0x08, 0, 0, 0, 0, 1, 0, 0 };
	static const uint8_t tur[6] = { TEST_UNIT_READY };
	uint8_t buf[512];
	struct scsi_tgt_cmd c;

	clear_ua(f, 0);
	assert_int_equal(run(f, &c, 0, 0, rc10, 10, SCSI_DIR_FROM_DEVICE, buf, 8),
			 SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(buf), CAP / 512 - 1);
	assert_int_equal(scsi_get_be32(buf + 4), 512);
	rc10[2] = 1; /* an LBA without PMI */
	run(f, &c, 0, 0, rc10, 10, SCSI_DIR_FROM_DEVICE, buf, 8);
	expect_field(&c, 2, -1);
	rc16[13] = 32;
	assert_int_equal(run(f, &c, 0, 0, rc16, 16, SCSI_DIR_FROM_DEVICE, buf, 32),
			 SAM_STAT_GOOD);
	assert_true(scsi_get_be64(buf) == CAP / 512 - 1);
	assert_int_equal(buf[14] & 0xc0, 0xc0); /* LBPME, LBPRZ */
	rc16[1] = 0x11;
	run(f, &c, 0, 0, rc16, 16, SCSI_DIR_FROM_DEVICE, buf, 32);
	expect_field(&c, 1, 4);
	/* REPORT LUNS: both units; too small an allocation length */
	assert_int_equal(run(f, &c, 0, 0, rl, 12, SCSI_DIR_FROM_DEVICE, buf, 256),
			 SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(buf), 16);
	assert_int_equal(buf[8 + 8 + 1], 1);
	assert_int_equal(c.resid, 256 - 24);
	rl[9] = 8;
	rl[8] = 0;
	run(f, &c, 0, 0, rl, 12, SCSI_DIR_FROM_DEVICE, buf, 8);
	expect_field(&c, 6, -1);
	/* a command to a unit that does not exist */
	run(f, &c, 5, 0, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED);
	/* MODE SENSE (6), every page: header, block descriptor, 3 pages */
	assert_int_equal(run(f, &c, 0, 0, ms, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[0], 4 + 8 + 20 + 12 + 12 - 1);
	assert_int_equal(buf[2] & 0x80, 0); /* not write protected */
	assert_int_equal(buf[3], 8);
	assert_int_equal(scsi_get_be32(buf + 4 + 4) & 0xffffff, 512);
	assert_int_equal(buf[12], 0x08);
	/* MODE SENSE (10), caching page, LLBAA: long block descriptor */
	assert_int_equal(run(f, &c, 0, 0, ms10, 10, SCSI_DIR_FROM_DEVICE, buf, 256),
			 SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be16(buf + 6), 16);
	assert_true(scsi_get_be64(buf + 8) == CAP / 512);
	assert_int_equal(buf[24], 0x08);
	/* saved values: not supported; an unknown page */
	ms[2] = 0xc8;
	run(f, &c, 0, 0, ms, 6, SCSI_DIR_FROM_DEVICE, buf, 255);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_SAVING_PARAMS_NOT_SUPPORTED);
	ms[2] = 0x05;
	run(f, &c, 0, 0, ms, 6, SCSI_DIR_FROM_DEVICE, buf, 255);
	expect_field(&c, 2, 5);
}

static void test_read_write(void **state)
{
	struct fx *f = *state;
	uint8_t w10[10] = { WRITE_10, 0x08, 0, 0, 0x10, 0, 0, 0, 8, 0 };
	uint8_t r16[16] = { READ_16 };
	uint8_t r6[6] = { READ_6, 0, 0, 0, 0, 0 };
	static uint8_t wbuf[8 * 512 + 512], rbuf[256 * 512];
	struct scsi_tgt_cmd c;
	struct scsi_tgt_stats st;
	unsigned int i;

	clear_ua(f, 0);
	for (i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (uint8_t)(i * 7 + 1);
	/* WRITE (10) with FUA of 8 blocks at LBA 0x1000 */
	assert_int_equal(run(f, &c, 0, 0, w10, 10, SCSI_DIR_TO_DEVICE, wbuf, 4096),
			 SAM_STAT_GOOD);
	assert_int_equal(c.resid, 0);
	/* READ (16) of them, with 512 bytes more expected: underflow */
	scsi_put_be64(r16 + 2, 0x1000);
	scsi_put_be32(r16 + 10, 8);
	memset(rbuf, 0, sizeof(rbuf));
	assert_int_equal(run(f, &c, 0, 0, r16, 16, SCSI_DIR_FROM_DEVICE, rbuf, 4608),
			 SAM_STAT_GOOD);
	assert_int_equal(c.resid, 512);
	assert_false(c.overflow);
	assert_memory_equal(rbuf, wbuf, 4096);
	/* expected less than the CDB asks: overflow, half moved */
	memset(rbuf, 0, sizeof(rbuf));
	assert_int_equal(run(f, &c, 0, 0, r16, 16, SCSI_DIR_FROM_DEVICE, rbuf, 2048),
			 SAM_STAT_GOOD);
	assert_true(c.overflow);
	assert_int_equal(c.resid, 2048);
	assert_memory_equal(rbuf, wbuf, 2048);
	assert_int_equal(rbuf[2048], 0);
	/* READ (6) with length 0 reads 256 blocks */
	assert_int_equal(run(f, &c, 0, 0, r6, 6, SCSI_DIR_FROM_DEVICE, rbuf,
			     sizeof(rbuf)), SAM_STAT_GOOD);
	assert_int_equal(c.resid, 0);
	/* past the end, RDPROTECT, a reserved group bit, NACA, an unknown op */
	scsi_put_be64(r16 + 2, CAP / 512 - 4);
	run(f, &c, 0, 0, r16, 16, SCSI_DIR_FROM_DEVICE, rbuf, 4096);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	w10[1] = 0x20;
	run(f, &c, 0, 0, w10, 10, SCSI_DIR_TO_DEVICE, wbuf, 4096);
	expect_field(&c, 1, 7);
	w10[1] = 0;
	w10[6] = 0x80;
	run(f, &c, 0, 0, w10, 10, SCSI_DIR_TO_DEVICE, wbuf, 4096);
	expect_field(&c, 6, 7);
	w10[6] = 0;
	w10[9] = 0x04;
	run(f, &c, 0, 0, w10, 10, SCSI_DIR_TO_DEVICE, wbuf, 4096);
	expect_field(&c, 9, 2);
	{
		static const uint8_t op02[6] = { 0x02 };

		run(f, &c, 0, 0, op02, 6, SCSI_DIR_NONE, NULL, 0);
		expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
	}
	/* a CDB shorter than its group code says */
	run(f, &c, 0, 0, r16, 10, SCSI_DIR_FROM_DEVICE, rbuf, 4096);
	expect_field(&c, 9, -1);
	scsi_tgt_get_stats(f->t, &st);
	assert_true(st.read_blocks >= 8 + 4 + 256);
	assert_true(st.write_blocks >= 8);
}

static void test_unmap_write_same_sync(void **state)
{
	struct fx *f = *state;
	uint8_t w16[16] = { WRITE_16 };
	uint8_t r10[10] = { READ_10, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	uint8_t um[10] = { UNMAP, 0, 0, 0, 0, 0, 0, 0, 24, 0 };
	uint8_t ws[16] = { WRITE_SAME_16 };
	uint8_t sc[10] = { SYNCHRONIZE_CACHE_10 };
	uint8_t pl[24] = { 0 };
	static uint8_t buf[600 * 512], zero[600 * 512];
	struct scsi_tgt_cmd c;
	unsigned int i;

	clear_ua(f, 0);
	memset(buf, 0x5a, sizeof(buf));
	scsi_put_be64(w16 + 2, 100);
	scsi_put_be32(w16 + 10, 600);
	assert_int_equal(run(f, &c, 0, 0, w16, 16, SCSI_DIR_TO_DEVICE, buf,
			     sizeof(buf)), SAM_STAT_GOOD);
	/* UNMAP 600 blocks from 100: they read back as zeros (LBPRZ) */
	scsi_put_be16(pl, 22);
	scsi_put_be16(pl + 2, 16);
	scsi_put_be64(pl + 8, 100);
	scsi_put_be32(pl + 16, 600);
	assert_int_equal(run(f, &c, 0, 0, um, 10, SCSI_DIR_TO_DEVICE, pl, 24),
			 SAM_STAT_GOOD);
	/* regression: the parameter list counted as data not moved */
	assert_int_equal(c.resid, 0);
	scsi_put_be32(r10 + 2, 100);
	r10[7] = 600 >> 8;
	r10[8] = 600 & 0xff;
	assert_int_equal(run(f, &c, 0, 0, r10, 10, SCSI_DIR_FROM_DEVICE, buf,
			     sizeof(buf)), SAM_STAT_GOOD);
	assert_memory_equal(buf, zero, sizeof(buf));
	/* a parameter list too short; a descriptor length not a multiple of 16 */
	um[8] = 4;
	run(f, &c, 0, 0, um, 10, SCSI_DIR_TO_DEVICE, pl, 4);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	um[8] = 24;
	scsi_put_be16(pl + 2, 15);
	run(f, &c, 0, 0, um, 10, SCSI_DIR_TO_DEVICE, pl, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	/* WRITE SAME (16) of a patterned block over 600 blocks */
	for (i = 0; i < 512; i++)
		buf[i] = (uint8_t)i;
	scsi_put_be64(ws + 2, 100);
	scsi_put_be32(ws + 10, 600);
	assert_int_equal(run(f, &c, 0, 0, ws, 16, SCSI_DIR_TO_DEVICE, buf, 512),
			 SAM_STAT_GOOD);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(run(f, &c, 0, 0, r10, 10, SCSI_DIR_FROM_DEVICE, buf,
			     sizeof(buf)), SAM_STAT_GOOD);
	for (i = 0; i < 600; i++)
		assert_int_equal(buf[i * 512 + 300], (uint8_t)300);
	/* NDOB with UNMAP: zeros, no data sent */
	ws[1] = 0x09;
	assert_int_equal(run(f, &c, 0, 0, ws, 16, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 0, r10, 10, SCSI_DIR_FROM_DEVICE, buf,
			     sizeof(buf)), SAM_STAT_GOOD);
	assert_memory_equal(buf, zero, sizeof(buf));
	/* 0 blocks (WSNZ) is refused */
	ws[1] = 0;
	scsi_put_be32(ws + 10, 0);
	run(f, &c, 0, 0, ws, 16, SCSI_DIR_TO_DEVICE, buf, 512);
	expect_field(&c, 10, -1);
	assert_int_equal(run(f, &c, 0, 0, sc, 10, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
}

/* SPC-4 6.35: REPORT SUPPORTED OPERATION CODES */
static void test_report_supported_opcodes(void **state)
{
	struct fx *f = *state;
	uint8_t cdb[12] = { MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPCODES, 0, 0, 0, 0,
			    0, 0, 0x10, 0, 0, 0 };
	static uint8_t buf[4096];
	struct scsi_tgt_cmd c;
	uint32_t n, i;
	bool read10 = false, rc16 = false;

	clear_ua(f, 0);
	/* every command: 8-byte descriptors; READ (10) there, READ CAPACITY
	 * (16) with its service action */
	assert_int_equal(run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, buf, 4096),
			 SAM_STAT_GOOD);
	n = scsi_get_be32(buf);
	assert_int_equal(n % 8, 0);
	assert_true(n / 8 >= 27);
	for (i = 0; i < n / 8; i++) {
		const uint8_t *d = buf + 4 + 8 * i;

		if (d[0] == READ_10 && scsi_get_be16(d + 6) == 10 && !(d[5] & 1))
			read10 = true;
		if (d[0] == SERVICE_ACTION_IN_16 && (d[5] & 1) &&
		    scsi_get_be16(d + 2) == SAI_READ_CAPACITY_16)
			rc16 = true;
	}
	assert_true(read10);
	assert_true(rc16);
	/* with RCTD: 20 bytes each, the timeouts descriptor after */
	cdb[2] = 0x80;
	assert_int_equal(run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, buf, 4096),
			 SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(buf), n / 8 * 20);
	assert_int_equal(scsi_get_be16(buf + 4 + 8), 0x0a);
	/* one command: READ (10)'s CDB usage data; RDPROTECT is not set */
	cdb[2] = 0x01;
	cdb[3] = READ_10;
	assert_int_equal(run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, buf, 4096),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[1] & 0x07, 3);
	assert_int_equal(scsi_get_be16(buf + 2), 10);
	assert_int_equal(buf[4], READ_10);
	assert_int_equal(buf[5] & 0xe0, 0);
	assert_int_equal(c.resid, 4096 - 14);
	/* an opcode it does not support; one that needs its service action */
	cdb[3] = 0x02;
	assert_int_equal(run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, buf, 4096),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[1] & 0x07, 1);
	cdb[3] = SERVICE_ACTION_IN_16;
	run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, buf, 4096);
	expect_field(&c, 2, 2);
	cdb[2] = 0x02;
	cdb[5] = SAI_READ_CAPACITY_16;
	assert_int_equal(run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, buf, 4096),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[1] & 0x07, 3);
	assert_int_equal(scsi_get_be16(buf + 2), 16);
	/* a reporting option not defined */
	cdb[2] = 0x07;
	run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, buf, 4096);
	expect_field(&c, 2, 2);
}

static void test_write_protect(void **state)
{
	struct fx f;
	uint8_t w10[10] = { WRITE_10, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t ms[6] = { MODE_SENSE_6, 0x08, 0x3f, 0, 255, 0 };
	static uint8_t buf[512];
	struct scsi_tgt_cmd c;

	(void)state;
	setup_cfg(&f, true, false);
	clear_ua(&f, 3);
	run(&f, &c, 0, 3, w10, 10, SCSI_DIR_TO_DEVICE, buf, 512);
	expect_sense(&c, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	assert_int_equal(run(&f, &c, 0, 3, ms, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[2] & 0x80, 0x80); /* WP */
	assert_int_equal(buf[3], 0);          /* DBD: no block descriptor */
	scsi_tgt_queue_detach(f.q);
	scsi_tgt_destroy(f.t);
}

/* The device fails: MEDIUM ERROR with the LBA in INFORMATION */
static void test_medium_error(void **state)
{
	struct fx f;
	uint8_t r10[10] = { READ_10, 0, 0, 0, 0, 77, 0, 0, 2, 0 };
	uint8_t w10[10] = { WRITE_10, 0, 0, 0, 0, 78, 0, 0, 1, 0 };
	static uint8_t buf[1024];
	struct scsi_tgt_cmd c;
	struct scsi_sense s;

	(void)state;
	setup_cfg(&f, false, true);
	clear_ua(&f, 0);
	run(&f, &c, 1, 0, r10, 10, SCSI_DIR_FROM_DEVICE, buf, 1024);
	expect_sense(&c, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	assert_int_equal(scsi_parse_sense(c.sense, c.sense_len, &s), 0);
	assert_true(s.info_valid);
	assert_true(s.info == 77);
	assert_int_equal(c.blk_status, BLK_STS_IOERR);
	run(&f, &c, 1, 0, w10, 10, SCSI_DIR_TO_DEVICE, buf, 512);
	expect_sense(&c, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	scsi_tgt_queue_detach(f.q);
	scsi_tgt_destroy(f.t);
}

static void test_create_errors(void **state)
{
	struct scsi_tgt_config tc = { 0 };
	struct scsi_tgt *t;
	char err[256];

	(void)state;
	assert_int_equal(scsi_tgt_create(&tc, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nr_luns=0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sense_formats),
		cmocka_unit_test_setup_teardown(test_unit_attention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inquiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capacity_luns_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unmap_write_same_sync, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_supported_opcodes, setup,
						teardown),
		cmocka_unit_test(test_write_protect),
		cmocka_unit_test(test_medium_error),
		cmocka_unit_test(test_create_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
