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
#include <pthread.h>
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

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define CAP (16u << 20) /* 32768 blocks of 512 */

struct fx {
	struct blk_dev *dev[2];
	struct scsi_tgt *t;
	struct scsi_tgt_queue *q;
};

static int ended;
static uint32_t cfg_max_xfer; /* the next setup_cfg()'s max_xfer_blocks */
static bool cfg_removable;    /* ... and removable */

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
	tc.max_xfer_blocks = cfg_max_xfer;
	tc.removable = cfg_removable;
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

/* Clear the power-on unit attention of @nexus on unit @lun. */
static void clear_ua_lun(struct fx *f, uint64_t lun, unsigned int nexus)
{
	static const uint8_t tur[6] = { TEST_UNIT_READY };
	struct scsi_tgt_cmd c;

	assert_int_equal(run(f, &c, lun, nexus, tur, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_CHECK_CONDITION);
	assert_int_equal(run(f, &c, lun, nexus, tur, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
}

/* ... on both units. */
static void clear_ua(struct fx *f, unsigned int nexus)
{
	for (uint64_t lun = 0; lun < 2; lun++)
		clear_ua_lun(f, lun, nexus);
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

/* ILLEGAL REQUEST, INVALID FIELD IN PARAMETER LIST, at @byte/@bit */
static void expect_param(const struct scsi_tgt_cmd *c, unsigned int byte, int bit)
{
	struct scsi_sense s;

	expect_sense(c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	assert_int_equal(scsi_parse_sense(c->sense, c->sense_len, &s), 0);
	assert_true(s.sks_valid);
	assert_int_equal(s.sks, scsi_sks_field(false, byte, bit));
}

/* MISCOMPARE DURING VERIFY OPERATION with INFORMATION @off */
static void expect_miscompare(const struct scsi_tgt_cmd *c, uint64_t off)
{
	struct scsi_sense s;

	expect_sense(c, SK_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY);
	assert_int_equal(scsi_parse_sense(c->sense, c->sense_len, &s), 0);
	assert_true(s.info_valid);
	assert_true(s.info == off);
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
	assert_int_equal(scsi_get_be16(buf + 2), 8);
	assert_memory_equal(buf + 4, "\x00\x80\x83\x86\x8f\xb0\xb1\xb2", 8);
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
	/* nothing moved: the whole length is the residual (a transport
	 * sends xfer_len - resid bytes of its buffer as the data) */
	assert_int_equal(c.resid, 4096);
	assert_false(c.overflow);
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
	assert_int_equal(c.resid, 1024); /* the failed READ moved nothing */
	assert_int_equal(scsi_parse_sense(c.sense, c.sense_len, &s), 0);
	assert_true(s.info_valid);
	assert_true(s.info == 77);
	assert_int_equal(c.blk_status, BLK_STS_IOERR);
	run(&f, &c, 1, 0, w10, 10, SCSI_DIR_TO_DEVICE, buf, 512);
	expect_sense(&c, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	scsi_tgt_queue_detach(f.q);
	scsi_tgt_destroy(f.t);
}

/* MODE SENSE (6) without block descriptor of @page at @pc, into @buf */
static void mode_sense(struct fx *f, unsigned int nexus, uint64_t lun,
		       uint8_t page, uint8_t pc, uint8_t *buf)
{
	uint8_t ms[6] = { MODE_SENSE_6, 0x08, (uint8_t)(pc << 6 | page), 0, 255, 0 };
	struct scsi_tgt_cmd c;

	assert_int_equal(run(f, &c, lun, nexus, ms, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
}

/* SPC-4 6.9-6.12: MODE SELECT round trips, D_SENSE, SWP, WCE, and the
 * unit attention the other nexus sees */
static void test_mode_select(void **state)
{
	struct fx *f = *state;
	static const uint8_t tur[6] = { TEST_UNIT_READY };
	uint8_t sel[6] = { MODE_SELECT_6, 0x10, 0, 0, 16, 0 };
	uint8_t sel10[10] = { MODE_SELECT_10, 0x10, 0, 0, 0, 0, 0, 0, 8 + 8 + 12, 0 };
	uint8_t r10[10] = { READ_10, 0, 0xff, 0xff, 0xff, 0xf0, 0, 0, 1, 0 };
	uint8_t w10[10] = { WRITE_10, 0, 0, 0, 0, 9, 0, 0, 1, 0 };
	uint8_t buf[512], pl[64], ctl[12], cache[20];
	static uint8_t blk[512];
	struct scsi_tgt_cmd c;

	clear_ua(f, 0);
	clear_ua(f, 1);
	/* changeable values: D_SENSE, SWP and TAS, WCE (ram has a cache),
	 * no IE */
	mode_sense(f, 0, 0, 0x0a, 1, buf);
	assert_int_equal(buf[4], 0x0a);
	assert_int_equal(buf[4 + 2], 0x04);
	assert_int_equal(buf[4 + 3], 0x00);
	assert_int_equal(buf[4 + 4], 0x08);
	assert_int_equal(buf[4 + 5], 0x40);
	mode_sense(f, 0, 0, 0x08, 1, buf);
	assert_int_equal(buf[4 + 2], 0x04);
	mode_sense(f, 0, 0, 0x1c, 1, buf);
	assert_int_equal(buf[4 + 2], 0);
	assert_int_equal(buf[4 + 3], 0);
	/* D_SENSE on through MODE SELECT (6), read back */
	mode_sense(f, 0, 0, 0x0a, 0, buf);
	memcpy(ctl, buf + 4, 12);
	assert_int_equal(ctl[2] & 0x04, 0);
	memset(pl, 0, sizeof(pl));
	memcpy(pl + 4, ctl, 12);
	pl[4 + 2] |= 0x04;
	assert_int_equal(run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16),
			 SAM_STAT_GOOD);
	mode_sense(f, 0, 0, 0x0a, 0, buf);
	assert_int_equal(buf[4 + 2] & 0x04, 0x04);
	mode_sense(f, 0, 0, 0x0a, 2, buf); /* the default stays */
	assert_int_equal(buf[4 + 2] & 0x04, 0);
	/* sense data is now in descriptor format on that unit only */
	run(f, &c, 0, 0, r10, 10, SCSI_DIR_FROM_DEVICE, buf, 512);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	assert_int_equal(c.sense[0], 0x72);
	run(f, &c, 1, 0, r10, 10, SCSI_DIR_FROM_DEVICE, buf, 512);
	assert_int_equal(c.sense[0], 0x70);
	/* the other nexus sees MODE PARAMETERS CHANGED once; the issuer not */
	run(f, &c, 0, 1, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_UNIT_ATTENTION, ASC_MODE_PARAMETERS_CHANGED);
	assert_int_equal(c.sense[0], 0x72);
	assert_int_equal(run(f, &c, 0, 1, tur, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 0, tur, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 1, 1, tur, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	/* the same values again change nothing: no unit attention */
	assert_int_equal(run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 1, tur, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	/* back to fixed format */
	pl[4 + 2] &= (uint8_t)~0x04;
	assert_int_equal(run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16),
			 SAM_STAT_GOOD);
	run(f, &c, 0, 0, r10, 10, SCSI_DIR_FROM_DEVICE, buf, 512);
	assert_int_equal(c.sense[0], 0x70);
	run(f, &c, 0, 1, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_UNIT_ATTENTION, ASC_MODE_PARAMETERS_CHANGED);

	/* SWP through MODE SELECT (10) with a short block descriptor: the
	 * unit is write protected (WP in the header, writes refused) */
	memset(pl, 0, sizeof(pl));
	pl[7] = 8;
	pl[8 + 6] = 0x02; /* LOGICAL BLOCK LENGTH 512 */
	memcpy(pl + 16, ctl, 12);
	pl[16 + 4] |= 0x08;
	assert_int_equal(run(f, &c, 0, 0, sel10, 10, SCSI_DIR_TO_DEVICE, pl, 28),
			 SAM_STAT_GOOD);
	mode_sense(f, 0, 0, 0x0a, 0, buf);
	assert_int_equal(buf[2] & 0x80, 0x80);
	assert_int_equal(buf[4 + 4] & 0x08, 0x08);
	run(f, &c, 0, 0, w10, 10, SCSI_DIR_TO_DEVICE, blk, 512);
	expect_sense(&c, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	assert_int_equal(run(f, &c, 1, 0, w10, 10, SCSI_DIR_TO_DEVICE, blk, 512),
			 SAM_STAT_GOOD);
	pl[16 + 4] &= (uint8_t)~0x08;
	assert_int_equal(run(f, &c, 0, 0, sel10, 10, SCSI_DIR_TO_DEVICE, pl, 28),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 0, w10, 10, SCSI_DIR_TO_DEVICE, blk, 512),
			 SAM_STAT_GOOD);
	mode_sense(f, 0, 0, 0x0a, 0, buf);
	assert_int_equal(buf[2] & 0x80, 0);

	/* WCE off (writes through with FUA), data still right; then on */
	mode_sense(f, 0, 0, 0x08, 0, buf);
	memcpy(cache, buf + 4, 20);
	assert_int_equal(cache[2] & 0x04, 0x04);
	memset(pl, 0, sizeof(pl));
	memcpy(pl + 4, cache, 20);
	pl[4 + 2] &= (uint8_t)~0x04;
	sel[4] = 24;
	assert_int_equal(run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 24),
			 SAM_STAT_GOOD);
	mode_sense(f, 0, 0, 0x08, 0, buf);
	assert_int_equal(buf[4 + 2] & 0x04, 0);
	memset(blk, 0x3c, sizeof(blk));
	assert_int_equal(run(f, &c, 0, 0, w10, 10, SCSI_DIR_TO_DEVICE, blk, 512),
			 SAM_STAT_GOOD);
	r10[2] = r10[3] = r10[4] = 0;
	r10[5] = 9;
	assert_int_equal(run(f, &c, 0, 0, r10, 10, SCSI_DIR_FROM_DEVICE, buf, 512),
			 SAM_STAT_GOOD);
	assert_memory_equal(buf, blk, 512);
	pl[4 + 2] |= 0x04;
	assert_int_equal(run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 24),
			 SAM_STAT_GOOD);

	/* a parameter list length of 0 is not an error */
	sel[4] = 0;
	assert_int_equal(run(f, &c, 0, 0, sel, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);

	/* the CDB: PF 0, SP, reserved bits and bytes */
	sel[4] = 16;
	memset(pl, 0, sizeof(pl));
	memcpy(pl + 4, ctl, 12);
	sel[1] = 0x00;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_field(&c, 1, 4);
	sel[1] = 0x11;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_SAVING_PARAMS_NOT_SUPPORTED);
	sel[1] = 0x12;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_field(&c, 1, 1);
	sel[1] = 0x90;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_field(&c, 1, 7);
	sel[1] = 0x10;
	sel[2] = 1;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_field(&c, 2, -1);
	sel[2] = 0;
	sel10[3] = 1;
	run(f, &c, 0, 0, sel10, 10, SCSI_DIR_TO_DEVICE, pl, 28);
	expect_field(&c, 3, -1);
	sel10[3] = 0;
	/* lengths: under the header, more than the Data-Out, a page cut */
	sel[4] = 2;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 2);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	sel[4] = 16;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 8);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	sel[4] = 10;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 10);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	sel[4] = 16;
	/* the header: MODE DATA LENGTH, MEDIUM TYPE, device-specific */
	pl[0] = 1;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_param(&c, 0, -1);
	pl[0] = 0;
	pl[1] = 1;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_param(&c, 1, -1);
	pl[1] = 0;
	pl[2] = 0x90; /* WP and DPOFUA are ignored */
	assert_int_equal(run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16),
			 SAM_STAT_GOOD);
	pl[2] = 0x01;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_param(&c, 2, 0);
	pl[2] = 0;
	/* a page: a field that is not changeable (QAM), an unknown page,
	 * PS, SPF, a wrong page length */
	pl[4 + 3] = 0x00;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_param(&c, 4 + 3, 4);
	pl[4 + 3] = ctl[3];
	pl[4 + 8] = 0x12; /* BUSY TIMEOUT PERIOD */
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_param(&c, 4 + 8, 7);
	pl[4 + 8] = ctl[8];
	pl[4] = 0x05;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_param(&c, 4, 5);
	pl[4] = 0x8a;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_param(&c, 4, 7);
	pl[4] = 0x4a;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_param(&c, 4, 6);
	pl[4] = 0x0a;
	pl[5] = 0x08;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16);
	expect_param(&c, 5, -1);
	pl[5] = 0x0a;
	/* all or nothing: a good page then a bad one changes nothing */
	memcpy(pl + 16, ctl, 12);
	pl[4 + 2] |= 0x04;
	pl[16 + 3] = 0;
	sel[4] = 28;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 28);
	expect_param(&c, 16 + 3, 4);
	mode_sense(f, 0, 0, 0x0a, 0, buf);
	assert_int_equal(buf[4 + 2] & 0x04, 0);
	pl[4 + 2] &= (uint8_t)~0x04;
	/* block descriptors: a bad length, a wrong block length, a wrong
	 * block count, a reserved byte; the right ones pass */
	memset(pl, 0, sizeof(pl));
	pl[3] = 4;
	sel[4] = 12;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 12);
	expect_param(&c, 3, -1);
	pl[3] = 8;
	pl[4 + 6] = 0x10; /* 4096 */
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 12);
	expect_param(&c, 4 + 5, -1);
	pl[4 + 6] = 0x02;
	scsi_put_be32(pl + 4, 7);
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 12);
	expect_param(&c, 4, -1);
	scsi_put_be32(pl + 4, CAP / 512);
	pl[4 + 4] = 1;
	run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 12);
	expect_param(&c, 4 + 4, -1);
	pl[4 + 4] = 0;
	assert_int_equal(run(f, &c, 0, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 12),
			 SAM_STAT_GOOD);
	/* (10): a long descriptor with LONGLBA; the block descriptor cut */
	memset(pl, 0, sizeof(pl));
	pl[4] = 0x01;
	pl[7] = 16;
	scsi_put_be64(pl + 8, CAP / 512);
	scsi_put_be32(pl + 8 + 12, 512);
	sel10[8] = 24;
	assert_int_equal(run(f, &c, 0, 0, sel10, 10, SCSI_DIR_TO_DEVICE, pl, 24),
			 SAM_STAT_GOOD);
	scsi_put_be32(pl + 8 + 12, 1024);
	run(f, &c, 0, 0, sel10, 10, SCSI_DIR_TO_DEVICE, pl, 24);
	expect_param(&c, 8 + 12, -1);
	sel10[8] = 20;
	run(f, &c, 0, 0, sel10, 10, SCSI_DIR_TO_DEVICE, pl, 20);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	pl[4] = 0x02;
	sel10[8] = 24;
	run(f, &c, 0, 0, sel10, 10, SCSI_DIR_TO_DEVICE, pl, 24);
	expect_param(&c, 4, 1);
}

/* Write @nb blocks at @lba from @buf with WRITE (16). */
static void write16(struct fx *f, uint64_t lun, uint64_t lba, uint32_t nb,
		    uint8_t *buf)
{
	uint8_t w16[16] = { WRITE_16 };
	struct scsi_tgt_cmd c;

	scsi_put_be64(w16 + 2, lba);
	scsi_put_be32(w16 + 10, nb);
	assert_int_equal(run(f, &c, lun, 0, w16, 16, SCSI_DIR_TO_DEVICE, buf,
			     nb * 512), SAM_STAT_GOOD);
}

static void read16(struct fx *f, uint64_t lun, uint64_t lba, uint32_t nb,
		   uint8_t *buf)
{
	uint8_t r16[16] = { READ_16 };
	struct scsi_tgt_cmd c;

	scsi_put_be64(r16 + 2, lba);
	scsi_put_be32(r16 + 10, nb);
	assert_int_equal(run(f, &c, lun, 0, r16, 16, SCSI_DIR_FROM_DEVICE, buf,
			     nb * 512), SAM_STAT_GOOD);
}

/*
 * scsi_tgt_plug(): the media I/O of a batch reaches the backing device as
 * one dispatch.  Adjacent READs in a plug merge there (the plug's merge),
 * without a plug they do not; a command that waits for its own I/O inside
 * the plug (COMPARE AND WRITE) still ends, and so does everything before.
 */
static void submit_read10(struct fx *f, struct scsi_tgt_cmd *c, struct iovec *iov,
			  uint8_t *cdb, uint32_t lba, uint8_t *buf)
{
	memset(c, 0, sizeof(*c));
	memset(cdb, 0, 10);
	cdb[0] = READ_10;
	scsi_put_be32(cdb + 2, lba);
	cdb[8] = 8;
	iov->iov_base = buf;
	iov->iov_len = 4096;
	c->cdb = cdb;
	c->cdb_len = 10;
	c->dir = SCSI_DIR_FROM_DEVICE;
	c->iov = iov;
	c->iovcnt = 1;
	c->xfer_len = 4096;
	c->done = done;
	assert_int_equal(scsi_tgt_submit(f->q, c), 0);
}

static void test_plug_batches_media_io(void **state)
{
	struct fx *f = *state;
	static uint8_t wbuf[16 * 512], rbuf[4][4096], caw_data[1024];
	uint8_t cdb[4][10], caw[16] = { COMPARE_AND_WRITE };
	struct scsi_tgt_cmd c[4], cw;
	struct iovec iov[4];
	struct blk_disk_stats st0, st1;
	unsigned int i;
	int n;

	clear_ua(f, 0);
	for (i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (uint8_t)(i * 13 + 5);
	write16(f, 0, 64, 16, wbuf);

	/* not plugged: two adjacent READs are two requests */
	blk_dev_get_stats(f->dev[0], &st0);
	n = ended;
	submit_read10(f, &c[0], &iov[0], cdb[0], 64, rbuf[0]);
	submit_read10(f, &c[1], &iov[1], cdb[1], 72, rbuf[1]);
	while (ended < n + 2)
		scsi_tgt_poll(f->q);
	blk_dev_get_stats(f->dev[0], &st1);
	assert_int_equal(st1.merges[BLK_STAT_READ] - st0.merges[BLK_STAT_READ], 0);

	/* plugged: the second merges into the first; nothing ends before
	 * the unplug, both end GOOD with their own data after it */
	st0 = st1;
	n = ended;
	scsi_tgt_plug(f->q);
	scsi_tgt_plug(f->q); /* idempotent */
	submit_read10(f, &c[2], &iov[2], cdb[2], 64, rbuf[2]);
	submit_read10(f, &c[3], &iov[3], cdb[3], 72, rbuf[3]);
	assert_int_equal(ended, n);
	scsi_tgt_unplug(f->q);
	scsi_tgt_unplug(f->q); /* idempotent */
	while (ended < n + 2)
		scsi_tgt_poll(f->q);
	blk_dev_get_stats(f->dev[0], &st1);
	assert_int_equal(st1.merges[BLK_STAT_READ] - st0.merges[BLK_STAT_READ], 1);
	for (i = 0; i < 4; i++) {
		assert_int_equal(c[i].status, SAM_STAT_GOOD);
		assert_memory_equal(rbuf[i], wbuf + (i % 2) * 4096, 4096);
	}

	/* a READ held in the plug, then COMPARE AND WRITE, which waits for
	 * its own bios: it unplugs, the READ is not stranded */
	n = ended;
	scsi_tgt_plug(f->q);
	memset(rbuf[0], 0xff, 4096);
	submit_read10(f, &c[0], &iov[0], cdb[0], 80, rbuf[0]);
	memcpy(caw_data, wbuf + 15 * 512, 512); /* block 79: 64 + 15 */
	memset(caw_data + 512, 0xee, 512);
	caw[13] = 1;
	scsi_put_be64(caw + 2, 79);
	{
		static struct iovec civ;

		memset(&cw, 0, sizeof(cw));
		civ.iov_base = caw_data;
		civ.iov_len = 1024;
		cw.cdb = caw;
		cw.cdb_len = 16;
		cw.dir = SCSI_DIR_TO_DEVICE;
		cw.iov = &civ;
		cw.iovcnt = 1;
		cw.xfer_len = 1024;
		cw.done = done;
		assert_int_equal(scsi_tgt_submit(f->q, &cw), 0);
	}
	while (ended < n + 2)
		scsi_tgt_poll(f->q);
	assert_int_equal(cw.status, SAM_STAT_GOOD);
	assert_int_equal(c[0].status, SAM_STAT_GOOD);
	for (i = 0; i < 4096; i++) /* blocks 80..87: never written */
		assert_int_equal(rbuf[0][i], 0);
	read16(f, 0, 79, 1, rbuf[1]);
	assert_memory_equal(rbuf[1], caw_data + 512, 512);
}

/* SBC-3 5.29-5.31: VERIFY with BYTCHK 01b and 11b */
static void test_verify_bytchk(void **state)
{
	struct fx *f = *state;
	uint8_t v10[10] = { VERIFY_10, 0x02, 0, 0, 0, 40, 0, 0, 8, 0 };
	uint8_t v12[12] = { VERIFY_12, 0x02, 0, 0, 0, 40, 0, 0, 0, 8, 0, 0 };
	uint8_t v16[16] = { VERIFY_16, 0x06 };
	static uint8_t data[8 * 512], pat[8 * 512];
	struct scsi_tgt_cmd c;
	unsigned int i;

	clear_ua(f, 0);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 5);
	write16(f, 0, 40, 8, data);
	/* 01b: equal; one byte off at 1000: MISCOMPARE, INFORMATION 1000 */
	assert_int_equal(run(f, &c, 0, 0, v10, 10, SCSI_DIR_TO_DEVICE, data,
			     sizeof(data)), SAM_STAT_GOOD);
	assert_int_equal(c.resid, 0);
	data[1000] ^= 0x40;
	run(f, &c, 0, 0, v10, 10, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_miscompare(&c, 1000);
	assert_int_equal(run(f, &c, 0, 0, v12, 12, SCSI_DIR_TO_DEVICE, data,
			     sizeof(data)), SAM_STAT_CHECK_CONDITION);
	expect_miscompare(&c, 1000);
	data[1000] ^= 0x40;
	data[4095] ^= 1;
	run(f, &c, 0, 0, v12, 12, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_miscompare(&c, 4095);
	data[4095] ^= 1;
	/* 11b: one block against each of the range */
	for (i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i % 512);
	write16(f, 0, 100, 8, pat);
	scsi_put_be64(v16 + 2, 100);
	scsi_put_be32(v16 + 10, 8);
	assert_int_equal(run(f, &c, 0, 0, v16, 16, SCSI_DIR_TO_DEVICE, pat, 512),
			 SAM_STAT_GOOD);
	pat[3 * 512 + 77] = 0;
	write16(f, 0, 100, 8, pat);
	run(f, &c, 0, 0, v16, 16, SCSI_DIR_TO_DEVICE, pat, 512);
	expect_miscompare(&c, 3 * 512 + 77);
	/* 00b: the range only; 0 blocks: nothing to compare */
	v16[1] = 0;
	assert_int_equal(run(f, &c, 0, 0, v16, 16, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	v10[1] = 0x02;
	v10[8] = 0;
	assert_int_equal(run(f, &c, 0, 0, v10, 10, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	v10[8] = 8;
	/* BYTCHK 10b, VRPROTECT, reserved bits, GROUP NUMBER's reserved bits */
	v10[1] = 0x04;
	run(f, &c, 0, 0, v10, 10, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 1, 2);
	v10[1] = 0x22;
	run(f, &c, 0, 0, v10, 10, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 1, 7);
	v10[1] = 0x0a;
	run(f, &c, 0, 0, v10, 10, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 1, 3);
	v10[1] = 0x03;
	run(f, &c, 0, 0, v10, 10, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 1, 0);
	v10[1] = 0x12; /* DPO is accepted */
	assert_int_equal(run(f, &c, 0, 0, v10, 10, SCSI_DIR_TO_DEVICE, data,
			     sizeof(data)), SAM_STAT_GOOD);
	v10[6] = 0x20;
	run(f, &c, 0, 0, v10, 10, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 6, 5);
	v10[6] = 0;
	v16[1] = 0x02;
	v16[14] = 0x80;
	run(f, &c, 0, 0, v16, 16, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 14, 7);
	v16[14] = 0;
	/* past the end; less Data-Out than the blocks */
	scsi_put_be64(v16 + 2, CAP / 512 - 4);
	run(f, &c, 0, 0, v16, 16, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	run(f, &c, 0, 0, v10, 10, SCSI_DIR_TO_DEVICE, data, 4 * 512);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
}

/* SBC-3 5.38-5.40: WRITE AND VERIFY */
static void test_write_verify(void **state)
{
	struct fx *f = *state;
	uint8_t wv10[10] = { WRITE_VERIFY_10, 0x02, 0, 0, 0x02, 0, 0, 0, 4, 0 };
	uint8_t wv12[12] = { WRITE_VERIFY_12, 0x00, 0, 0, 0x02, 0x10, 0, 0, 0, 4, 0, 0 };
	uint8_t wv16[16] = { WRITE_VERIFY_16, 0x12 };
	static uint8_t data[4 * 512], back[4 * 512];
	struct scsi_tgt_cmd c;
	unsigned int i;

	clear_ua(f, 0);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 3 + 1);
	/* BYTCHK 01b: written, compared, read back */
	assert_int_equal(run(f, &c, 0, 0, wv10, 10, SCSI_DIR_TO_DEVICE, data,
			     sizeof(data)), SAM_STAT_GOOD);
	read16(f, 0, 0x200, 4, back);
	assert_memory_equal(back, data, sizeof(data));
	/* BYTCHK 0: written only */
	data[0] = 0xaa;
	assert_int_equal(run(f, &c, 0, 0, wv12, 12, SCSI_DIR_TO_DEVICE, data,
			     sizeof(data)), SAM_STAT_GOOD);
	read16(f, 0, 0x210, 4, back);
	assert_memory_equal(back, data, sizeof(data));
	scsi_put_be64(wv16 + 2, 0x220);
	scsi_put_be32(wv16 + 10, 4);
	assert_int_equal(run(f, &c, 0, 0, wv16, 16, SCSI_DIR_TO_DEVICE, data,
			     sizeof(data)), SAM_STAT_GOOD);
	read16(f, 0, 0x220, 4, back);
	assert_memory_equal(back, data, sizeof(data));
	/* BYTCHK 10b and 11b, WRPROTECT, reserved bits, the group byte */
	wv10[1] = 0x04;
	run(f, &c, 0, 0, wv10, 10, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 1, 2);
	wv10[1] = 0x06;
	run(f, &c, 0, 0, wv10, 10, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 1, 2);
	wv10[1] = 0x40;
	run(f, &c, 0, 0, wv10, 10, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 1, 7);
	wv10[1] = 0x08;
	run(f, &c, 0, 0, wv10, 10, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 1, 3);
	wv10[1] = 0x01;
	run(f, &c, 0, 0, wv10, 10, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 1, 0);
	wv10[1] = 0x02;
	wv12[10] = 0x40;
	run(f, &c, 0, 0, wv12, 12, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_field(&c, 10, 6);
	wv12[10] = 0;
	/* past the end, 0 blocks (the expected length's cases: below) */
	scsi_put_be64(wv16 + 2, CAP / 512 - 2);
	run(f, &c, 0, 0, wv16, 16, SCSI_DIR_TO_DEVICE, data, sizeof(data));
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	wv10[8] = 0;
	assert_int_equal(run(f, &c, 0, 0, wv10, 10, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(c.resid, 0);
}

/* A WRITE AND VERIFY CDB with BYTCHK 01b (and a WRITE (10), if @op is
 * WRITE_10) of @nb blocks at @lba; its length. */
static uint8_t wv_cdb(uint8_t *cdb, uint8_t op, uint32_t lba, uint32_t nb)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	cdb[1] = op == WRITE_10 ? 0 : 0x02;
	if (op == WRITE_VERIFY_10 || op == WRITE_10) {
		scsi_put_be32(cdb + 2, lba);
		scsi_put_be16(cdb + 7, (uint16_t)nb);
		return 10;
	}
	if (op == WRITE_VERIFY_12) {
		scsi_put_be32(cdb + 2, lba);
		scsi_put_be32(cdb + 6, nb);
		return 12;
	}
	scsi_put_be64(cdb + 2, lba);
	scsi_put_be32(cdb + 10, nb);
	return 16;
}

/*
 * SBC-4 r22 5.44-5.46: for WRITE AND VERIFY a BYTCHK of 11b is reserved
 * (VERIFY's 11b, one block of Data-Out compared with every block, is not
 * carried over), so all three forms refuse it, INVALID FIELD IN CDB at
 * byte 1 bit 2, before anything is written: the blocks keep their data,
 * whether the Data-Out is the one block 11b would send or every block.
 */
static void test_write_verify_bytchk3(void **state)
{
	static const uint8_t ops[] = { WRITE_VERIFY_10, WRITE_VERIFY_12,
				       WRITE_VERIFY_16 };
	static uint8_t old[4 * 512], data[4 * 512], back[4 * 512];
	struct fx *f = *state;
	struct scsi_tgt_cmd c;
	unsigned int i, k;
	uint8_t cdb[16], n;

	clear_ua(f, 0);
	memset(old, 0x5a, sizeof(old));
	memset(data, 0xa5, sizeof(data));
	for (i = 0; i < sizeof(ops); i++) {
		uint32_t lba = 0x600 + 8 * i;

		write16(f, 0, lba, 4, old);
		n = wv_cdb(cdb, ops[i], lba, 4);
		cdb[1] = 0x06; /* BYTCHK 11b */
		for (k = 0; k < 2; k++) {
			uint32_t len = k ? sizeof(data) : 512;

			run(f, &c, 0, 0, cdb, n, SCSI_DIR_TO_DEVICE, data, len);
			expect_field(&c, 1, 2);
			read16(f, 0, lba, 4, back);
			assert_memory_equal(back, old, sizeof(old));
		}
		/* the same CDB with BYTCHK 01b writes: the refusal was 11b's */
		cdb[1] = 0x02;
		assert_int_equal(run(f, &c, 0, 0, cdb, n, SCSI_DIR_TO_DEVICE, data,
				     sizeof(data)), SAM_STAT_GOOD);
		read16(f, 0, lba, 4, back);
		assert_memory_equal(back, data, sizeof(data));
	}
}

/*
 * WRITE AND VERIFY (10/12/16) whose expected length is not the CDB's run
 * as WRITE does (libiscsi's iSCSIResiduals.WriteVerify{10,12,16}Residuals):
 * a shorter one writes and verifies the whole blocks it holds, the rest an
 * overflow residual; a longer one writes the CDB's blocks, the excess an
 * underflow residual.  The blocks past what was written keep their data.
 * Then the same for a WRITE (10) of 0 blocks with data: an underflow of
 * all of it (it was counted as taken whole before).
 */
static void test_write_verify_residuals(void **state)
{
	static const uint8_t ops[] = { WRITE_VERIFY_10, WRITE_VERIFY_12,
				       WRITE_VERIFY_16 };
	static uint8_t data[10000], back[2 * 512], old[2 * 512];
	struct fx *f = *state;
	struct scsi_tgt_cmd c;
	unsigned int i;
	uint8_t cdb[16], n;

	clear_ua(f, 0);
	memset(data, 'b', sizeof(data));
	memset(old, 'a', sizeof(old));
	for (i = 0; i < sizeof(ops); i++) {
		uint32_t lba = 0x400 + 8 * i;

		write16(f, 0, lba, 2, old);
		/* 1 block, nothing expected: nothing written, overflow */
		n = wv_cdb(cdb, ops[i], lba, 1);
		assert_int_equal(run(f, &c, 0, 0, cdb, n, SCSI_DIR_TO_DEVICE,
				     NULL, 0), SAM_STAT_GOOD);
		assert_true(c.overflow);
		assert_int_equal(c.resid, 512);
		/* 200 bytes: no whole block, nothing written, overflow 312 */
		assert_int_equal(run(f, &c, 0, 0, cdb, n, SCSI_DIR_TO_DEVICE,
				     data, 200), SAM_STAT_GOOD);
		assert_true(c.overflow);
		assert_int_equal(c.resid, 312);
		read16(f, 0, lba, 2, back);
		assert_memory_equal(back, old, sizeof(old));
		/* 2 blocks, 1 expected: the first written, overflow 512 */
		n = wv_cdb(cdb, ops[i], lba, 2);
		assert_int_equal(run(f, &c, 0, 0, cdb, n, SCSI_DIR_TO_DEVICE,
				     data, 512), SAM_STAT_GOOD);
		assert_true(c.overflow);
		assert_int_equal(c.resid, 512);
		read16(f, 0, lba, 2, back);
		assert_memory_equal(back, data, 512);
		assert_memory_equal(back + 512, old, 512);
		/* 1 block, 2 expected: the first written, underflow 512 */
		write16(f, 0, lba, 2, old);
		n = wv_cdb(cdb, ops[i], lba, 1);
		assert_int_equal(run(f, &c, 0, 0, cdb, n, SCSI_DIR_TO_DEVICE,
				     data, 1024), SAM_STAT_GOOD);
		assert_false(c.overflow);
		assert_int_equal(c.resid, 512);
		read16(f, 0, lba, 2, back);
		assert_memory_equal(back, data, 512);
		assert_memory_equal(back + 512, old, 512);
		/* 1 block, 10000 bytes expected: underflow 9488 */
		assert_int_equal(run(f, &c, 0, 0, cdb, n, SCSI_DIR_TO_DEVICE,
				     data, sizeof(data)), SAM_STAT_GOOD);
		assert_false(c.overflow);
		assert_int_equal(c.resid, sizeof(data) - 512);
		/* as long as the blocks: no residual */
		assert_int_equal(run(f, &c, 0, 0, cdb, n, SCSI_DIR_TO_DEVICE,
				     data, 512), SAM_STAT_GOOD);
		assert_false(c.overflow);
		assert_int_equal(c.resid, 0);
		/* 0 blocks with 512 bytes: nothing written, underflow 512 */
		write16(f, 0, lba, 2, old);
		n = wv_cdb(cdb, ops[i], lba, 0);
		assert_int_equal(run(f, &c, 0, 0, cdb, n, SCSI_DIR_TO_DEVICE,
				     data, 512), SAM_STAT_GOOD);
		assert_false(c.overflow);
		assert_int_equal(c.resid, 512);
		read16(f, 0, lba, 2, back);
		assert_memory_equal(back, old, sizeof(old));
	}
	n = wv_cdb(cdb, WRITE_10, 0x440, 0);
	assert_int_equal(run(f, &c, 0, 0, cdb, n, SCSI_DIR_TO_DEVICE, data, 512),
			 SAM_STAT_GOOD);
	assert_false(c.overflow);
	assert_int_equal(c.resid, 512);
}

/* SBC-3 5.2: COMPARE AND WRITE */
static void test_compare_and_write(void **state)
{
	struct fx *f = *state;
	uint8_t caw[16] = { COMPARE_AND_WRITE, 0x08 };
	static uint8_t old[2 * 512], data[4 * 512], back[2 * 512];
	struct scsi_tgt_cmd c;
	unsigned int i;

	clear_ua(f, 0);
	for (i = 0; i < sizeof(old); i++)
		old[i] = (uint8_t)(i ^ 0x5a);
	write16(f, 0, 300, 2, old);
	/* verify data equal: the write data lands */
	memcpy(data, old, sizeof(old));
	memset(data + 1024, 0xc3, 1024);
	scsi_put_be64(caw + 2, 300);
	caw[13] = 2;
	assert_int_equal(run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048),
			 SAM_STAT_GOOD);
	assert_int_equal(c.resid, 0);
	read16(f, 0, 300, 2, back);
	assert_memory_equal(back, data + 1024, 1024);
	/* not equal any more (the old data): MISCOMPARE at the first
	 * differing byte, nothing written */
	memcpy(data, back, 1024);
	data[700] ^= 0xff;
	memset(data + 1024, 0x11, 1024);
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048);
	expect_miscompare(&c, 700);
	read16(f, 0, 300, 2, back);
	assert_int_equal(back[0], 0xc3);
	assert_int_equal(back[1023], 0xc3);
	data[700] ^= 0xff;
	data[0] ^= 1;
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048);
	expect_miscompare(&c, 0);
	data[0] ^= 1;
	/* 0 blocks: nothing done, not an error */
	caw[13] = 0;
	assert_int_equal(run(f, &c, 0, 0, caw, 16, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	caw[13] = 2;
	/* reserved: byte 1 bits 2-0, bytes 10-12, group byte bits 7-5;
	 * WRPROTECT; past the end; the Data-Out shorter than both halves */
	caw[1] = 0x0c;
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048);
	expect_field(&c, 1, 2);
	caw[1] = 0x01;
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048);
	expect_field(&c, 1, 0);
	caw[1] = 0x80;
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048);
	expect_field(&c, 1, 7);
	caw[1] = 0x10; /* DPO */
	caw[11] = 1;
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048);
	expect_field(&c, 11, -1);
	caw[11] = 0;
	caw[14] = 0x20;
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048);
	expect_field(&c, 14, 5);
	caw[14] = 0;
	scsi_put_be64(caw + 2, CAP / 512 - 1);
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	scsi_put_be64(caw + 2, 300);
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 1536);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	/* a Data-Out longer than the count says (1 block, 2 of each half):
	 * the count is wrong, nothing compared or written; 0 blocks with
	 * data likewise */
	read16(f, 0, 300, 2, back);
	memcpy(data, back, 1024);
	memset(data + 1024, 0x77, 1024);
	caw[13] = 1;
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048);
	expect_field(&c, 13, -1);
	caw[13] = 0;
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048);
	expect_field(&c, 13, -1);
	read16(f, 0, 300, 2, old);
	assert_memory_equal(old, back, sizeof(back));
	caw[13] = 2;
	/* the count and the Data-Out agree again: it runs (the 8-bit count
	 * past 255: test_compare_and_write_256; a smaller maximum:
	 * test_small_max_transfer) */
	assert_int_equal(run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, data, 2048),
			 SAM_STAT_GOOD);
}

/*
 * COMPARE AND WRITE is atomic against another queue's: two threads, each
 * on its own queue, increment a counter in block 0 by read, then COMPARE
 * AND WRITE (old, old + 1), again on MISCOMPARE; -EAGAIN (the other holds
 * the unit) is polled and retried.  No increment may be lost.
 */
#define CAW_MT_LOOPS 300

struct caw_mt {
	struct scsi_tgt *t;
	int errors;
	unsigned int miscompares;
	unsigned int next_nexus;
};

static void mt_done(struct scsi_tgt_cmd *c)
{
	*(int *)c->priv = 1;
}

static uint8_t mt_run(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c,
		      unsigned int nexus, const uint8_t *cdb, uint8_t dir,
		      void *buf, uint32_t len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	int fin = 0, ret;

	do {
		memset(c, 0, sizeof(*c));
		c->nexus = nexus;
		c->cdb = cdb;
		c->cdb_len = 16;
		c->dir = dir;
		c->iov = &iov;
		c->iovcnt = 1;
		c->xfer_len = len;
		c->done = mt_done;
		c->priv = &fin;
		ret = scsi_tgt_submit(q, c);
		if (ret == -EAGAIN)
			scsi_tgt_poll(q);
	} while (ret == -EAGAIN);
	if (ret)
		return 0xff;
	while (!fin)
		scsi_tgt_poll(q);
	return c->status;
}

static void *caw_mt_thread(void *arg)
{
	struct caw_mt *m = arg;
	uint8_t r16[16] = { READ_16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0 };
	uint8_t caw[16] = { COMPARE_AND_WRITE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0 };
	uint8_t blk[512], pl[1024];
	struct scsi_tgt_queue *q;
	struct scsi_tgt_cmd c;
	unsigned int i, nexus = __atomic_add_fetch(&m->next_nexus, 1, __ATOMIC_RELAXED);

	if (scsi_tgt_queue_attach(m->t, &q)) {
		__atomic_add_fetch(&m->errors, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	/* the power-on unit attention of this nexus */
	mt_run(q, &c, nexus, r16, SCSI_DIR_FROM_DEVICE, blk, 512);
	for (i = 0; i < CAW_MT_LOOPS;) {
		uint64_t v;

		if (mt_run(q, &c, nexus, r16, SCSI_DIR_FROM_DEVICE, blk, 512) !=
		    SAM_STAT_GOOD) {
			__atomic_add_fetch(&m->errors, 1, __ATOMIC_RELAXED);
			break;
		}
		memcpy(pl, blk, 512);
		memcpy(&v, blk, 8);
		v++;
		memcpy(pl + 512, blk, 512);
		memcpy(pl + 512, &v, 8);
		switch (mt_run(q, &c, nexus, caw, SCSI_DIR_TO_DEVICE, pl, 1024)) {
		case SAM_STAT_GOOD:
			i++;
			break;
		case SAM_STAT_CHECK_CONDITION:
			__atomic_add_fetch(&m->miscompares, 1, __ATOMIC_RELAXED);
			break;
		default:
			__atomic_add_fetch(&m->errors, 1, __ATOMIC_RELAXED);
			i = CAW_MT_LOOPS;
			break;
		}
	}
	scsi_tgt_queue_detach(q);
	return NULL;
}

static void test_compare_and_write_threads(void **state)
{
	struct blk_ram_config rc = { 0 };
	struct scsi_tgt_config tc = { 0 };
	struct caw_mt m = { 0 };
	struct blk_dev *dev;
	pthread_t th[2];
	struct fx f = { 0 };
	uint8_t blk[512];
	uint64_t v;
	char err[256];

	(void)state;
	rc.queue.capacity = CAP;
	rc.queue.queue_depth = 16;
	rc.queue.nr_hw_queues = 3;
	assert_int_equal(blk_ram_create(&rc, &dev), 0);
	tc.luns = &dev;
	tc.nr_luns = 1;
	tc.own_luns = true;
	assert_int_equal(scsi_tgt_create(&tc, &m.t, err, sizeof(err)), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, caw_mt_thread, &m), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(m.errors, 0);
	/* the counter: every increment there */
	f.t = m.t;
	assert_int_equal(scsi_tgt_queue_attach(f.t, &f.q), 0);
	clear_ua_lun(&f, 0, 0);
	read16(&f, 0, 0, 1, blk);
	memcpy(&v, blk, 8);
	assert_true(v == 2 * CAW_MT_LOOPS);
	scsi_tgt_queue_detach(f.q);
	scsi_tgt_destroy(f.t);
}

/*
 * libiscsi 1.19's CompareAndWrite.Simple/.Miscompare end with 256 blocks,
 * past MAXIMUM COMPARE AND WRITE LENGTH (255): the count's 8 bits say 0,
 * the Data-Out holds 2 x 256 blocks.  Refused (INVALID FIELD IN CDB at
 * byte 13), nothing written; 255 blocks run.
 */
static void test_compare_and_write_256(void **state)
{
	static uint8_t buf[2 * 256 * 512], back[256 * 512];
	uint8_t caw[16] = { COMPARE_AND_WRITE };
	struct fx *f = *state;
	struct scsi_tgt_cmd c;

	clear_ua(f, 0);
	scsi_put_be64(caw + 2, CAP / 512 - 256);
	memset(buf, 'A', sizeof(buf));
	write16(f, 0, CAP / 512 - 256, 256, buf);
	memset(buf + 256 * 512, 'B', 256 * 512);
	caw[13] = (uint8_t)256;
	run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, buf, sizeof(buf));
	expect_field(&c, 13, -1);
	read16(f, 0, CAP / 512 - 256, 256, back);
	assert_memory_equal(back, buf, sizeof(back));
	/* 255 (the 'A's compare, 'B's land) */
	caw[13] = 255;
	memset(buf + 255 * 512, 'B', 255 * 512);
	assert_int_equal(run(f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, buf,
			     2 * 255 * 512), SAM_STAT_GOOD);
	assert_int_equal(c.resid, 0);
	read16(f, 0, CAP / 512 - 256, 256, back);
	assert_int_equal(back[0], 'B');
	assert_int_equal(back[255 * 512 - 1], 'B');
	assert_int_equal(back[255 * 512], 'A');
}

/* UNIT ATTENTION with @asc on @lun for @nexus, then none (GOOD) */
static void expect_ua_once(struct fx *f, uint64_t lun, unsigned int nexus,
			   uint16_t asc)
{
	static const uint8_t tur[6] = { TEST_UNIT_READY };
	struct scsi_tgt_cmd c;

	run(f, &c, lun, nexus, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_UNIT_ATTENTION, asc);
	assert_int_equal(run(f, &c, lun, nexus, tur, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
}

/*
 * scsi_tgt_nexus_loss() (SAM-5 6.3.4) on a removable target: the lost
 * nexus's SPC-2 reservation goes; its prevention of medium removal ends
 * while another nexus's stays; the unit attentions it had pending (MODE
 * PARAMETERS CHANGED, a POWER ON never reported) give way to one I_T
 * NEXUS LOSS OCCURRED (29/07); a persistent reservation stays; a nexus
 * not lost keeps what it had.
 */
static void test_nexus_loss(void **state)
{
	static const uint8_t tur[6] = { TEST_UNIT_READY };
	static const uint8_t reserve[6] = { RESERVE_6 };
	static const uint8_t release[6] = { RELEASE_6 };
	static const uint8_t prevent[6] = { PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 1, 0 };
	static const uint8_t allow[6] = { PREVENT_ALLOW_MEDIUM_REMOVAL };
	static const uint8_t eject[6] = { START_STOP_UNIT, 0, 0, 0, 0x02, 0 };
	static const uint8_t load[6] = { START_STOP_UNIT, 0, 0, 0, 0x03, 0 };
	uint8_t sel[6] = { MODE_SELECT_6, 0x10, 0, 0, 16, 0 };
	uint8_t reg[10] = { PERSISTENT_RESERVE_OUT, 0x00, 0, 0, 0, 0, 0, 0, 24, 0 };
	uint8_t res[10] = { PERSISTENT_RESERVE_OUT, 0x01, 0x01, 0, 0, 0, 0, 0, 24, 0 };
	uint8_t w10[10] = { WRITE_10, 0, 0, 0, 0, 9, 0, 0, 1, 0 };
	uint8_t buf[256], pl[24];
	static uint8_t blk[512];
	struct scsi_tgt_cmd c;
	struct fx *f;

	(void)state;
	cfg_removable = true;
	f = calloc(1, sizeof(*f));
	setup_cfg(f, false, false);
	cfg_removable = false;
	for (unsigned int n = 0; n < 3; n++)
		clear_ua(f, n);
	/* nexus 3's POWER ON stays pending on LUN 0 */
	clear_ua_lun(f, 1, 3);

	/* LUN 0: nexus 0 holds an SPC-2 reservation */
	assert_int_equal(run(f, &c, 0, 0, reserve, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 1, tur, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_RESERVATION_CONFLICT);
	/* LUN 1: nexuses 0 and 1 prevent medium removal */
	assert_int_equal(run(f, &c, 1, 0, prevent, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 1, 1, prevent, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	/* nexus 1 changes LUN 1's D_SENSE: MODE PARAMETERS CHANGED pending
	 * for nexuses 0, 2 and 3 */
	mode_sense(f, 1, 1, 0x0a, 0, buf);
	memset(pl, 0, sizeof(pl));
	memcpy(pl + 4, buf + 4, 12);
	pl[4 + 2] |= 0x04;
	assert_int_equal(run(f, &c, 1, 1, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16),
			 SAM_STAT_GOOD);

	assert_int_equal(scsi_tgt_nexus_loss(f->t, SCSI_TGT_MAX_NEXUS), -EINVAL);
	assert_int_equal(scsi_tgt_nexus_loss(f->t, 0), 0);
	/* the SPC-2 reservation is gone: nexus 1 reserves and releases */
	assert_int_equal(run(f, &c, 0, 1, tur, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 1, reserve, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 1, release, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	/* nexus 0 hears of the loss once on each unit, of nothing else */
	expect_ua_once(f, 0, 0, 0x2907);
	expect_ua_once(f, 1, 0, 0x2907);
	/* nexus 1 still prevents removal; once it allows it, nexus 0's
	 * prevention is gone with its nexus: the eject works */
	run(f, &c, 1, 0, eject, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_ILLEGAL_REQUEST, 0x5302);
	assert_int_equal(run(f, &c, 1, 1, allow, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 1, 0, eject, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 1, 0, load, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	/* nexus 1 lost nothing: no unit attention */
	assert_int_equal(run(f, &c, 0, 1, tur, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);

	/* nexus 2 registers and holds a persistent WRITE EXCLUSIVE
	 * reservation of LUN 0; its loss leaves it (nexus 1 may not write)
	 * and turns its MODE PARAMETERS CHANGED on LUN 1 into 29/07 */
	memset(pl, 0, sizeof(pl));
	scsi_put_be64(pl + 8, 0x1234);
	assert_int_equal(run(f, &c, 0, 2, reg, 10, SCSI_DIR_TO_DEVICE, pl, 24),
			 SAM_STAT_GOOD);
	memset(pl, 0, sizeof(pl));
	scsi_put_be64(pl, 0x1234);
	assert_int_equal(run(f, &c, 0, 2, res, 10, SCSI_DIR_TO_DEVICE, pl, 24),
			 SAM_STAT_GOOD);
	assert_int_equal(scsi_tgt_nexus_loss(f->t, 2), 0);
	assert_int_equal(run(f, &c, 0, 1, w10, 10, SCSI_DIR_TO_DEVICE, blk, 512),
			 SAM_STAT_RESERVATION_CONFLICT);
	expect_ua_once(f, 0, 2, 0x2907);
	expect_ua_once(f, 1, 2, 0x2907);
	assert_int_equal(run(f, &c, 0, 2, w10, 10, SCSI_DIR_TO_DEVICE, blk, 512),
			 SAM_STAT_GOOD);
	/* nexus 3: its POWER ON (LUN 0) and MODE PARAMETERS CHANGED (LUN 1)
	 * give way too */
	assert_int_equal(scsi_tgt_nexus_loss(f->t, 3), 0);
	expect_ua_once(f, 0, 3, 0x2907);
	expect_ua_once(f, 1, 3, 0x2907);
	teardown((void **)&f);
}

/*
 * A LOGICAL UNIT RESET ends the prevention of medium removal of every
 * nexus on that unit, a TARGET RESET on every unit (SPC-4 6.13; libiscsi's
 * PreventAllow.LUNReset and .WarmReset).
 */
static void test_reset_ends_prevention(void **state)
{
	static const uint8_t prevent[6] = { PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 1, 0 };
	static const uint8_t eject[6] = { START_STOP_UNIT, 0, 0, 0, 0x02, 0 };
	static const uint8_t load[6] = { START_STOP_UNIT, 0, 0, 0, 0x03, 0 };
	struct scsi_tgt_cmd c;
	struct fx *f;
	uint64_t lun;

	(void)state;
	cfg_removable = true;
	f = calloc(1, sizeof(*f));
	setup_cfg(f, false, false);
	cfg_removable = false;
	clear_ua(f, 0);
	clear_ua(f, 1);
	/* nexuses 0 and 1 prevent removal on both units */
	for (lun = 0; lun < 2; lun++)
		for (unsigned int n = 0; n < 2; n++)
			assert_int_equal(run(f, &c, lun, n, prevent, 6, SCSI_DIR_NONE,
					     NULL, 0), SAM_STAT_GOOD);
	/* nexus 0 resets LUN 0: the medium of LUN 0 comes out, LUN 1's
	 * stays */
	assert_int_equal(scsi_tgt_lun_reset(f->q, 0, 0), 0);
	expect_ua_once(f, 0, 0, ASC_LUN_RESET_OCCURRED); /* its own 29/03 */
	assert_int_equal(run(f, &c, 0, 0, eject, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 0, load, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	run(f, &c, 1, 0, eject, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_ILLEGAL_REQUEST, 0x5302);
	/* nexus 1 hears of the reset, then may eject LUN 0 too */
	expect_ua_once(f, 0, 1, ASC_LUN_RESET_OCCURRED);
	assert_int_equal(run(f, &c, 0, 1, eject, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 1, load, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	/* a target reset: LUN 1's prevention ends as well */
	assert_int_equal(run(f, &c, 0, 0, prevent, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(scsi_tgt_target_reset(f->q, 1), 0);
	for (lun = 0; lun < 2; lun++) {
		expect_ua_once(f, lun, 0, ASC_LUN_RESET_OCCURRED);
		assert_int_equal(run(f, &c, lun, 0, eject, 6, SCSI_DIR_NONE, NULL, 0),
				 SAM_STAT_GOOD);
		assert_int_equal(run(f, &c, lun, 0, load, 6, SCSI_DIR_NONE, NULL, 0),
				 SAM_STAT_GOOD);
	}
	teardown((void **)&f);
}

/* The MAXIMUM TRANSFER LENGTH caps COMPARE AND WRITE and PRE-FETCH's
 * CONDITION MET */
static void test_small_max_transfer(void **state)
{
	struct fx f;
	uint8_t inq[6] = { INQUIRY, 1, 0xb0, 0, 255, 0 };
	uint8_t caw[16] = { COMPARE_AND_WRITE };
	uint8_t pf[10] = { PRE_FETCH_10, 0, 0, 0, 0, 0, 0, 0, 16, 0 };
	static uint8_t buf[64 * 512];
	struct scsi_tgt_cmd c;

	(void)state;
	cfg_max_xfer = 16;
	setup_cfg(&f, false, false);
	cfg_max_xfer = 0;
	clear_ua(&f, 0);
	assert_int_equal(run(&f, &c, 0, 0, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[5], 16);
	caw[13] = 17;
	run(&f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, buf, 34 * 512);
	expect_field(&c, 13, -1);
	caw[13] = 16;
	memset(buf, 0, sizeof(buf)); /* the blocks are zeros: equal */
	assert_int_equal(run(&f, &c, 0, 0, caw, 16, SCSI_DIR_TO_DEVICE, buf, 32 * 512),
			 SAM_STAT_GOOD);
	assert_int_equal(run(&f, &c, 0, 0, pf, 10, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_CONDITION_MET);
	pf[8] = 17;
	assert_int_equal(run(&f, &c, 0, 0, pf, 10, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	scsi_tgt_queue_detach(f.q);
	scsi_tgt_destroy(f.t);
}

/* SBC-3 5.7 (r36): ORWRITE (16) */
static void test_orwrite(void **state)
{
	struct fx *f = *state;
	uint8_t ow[16] = { ORWRITE_16, 0x08 };
	static uint8_t a[3 * 512], b[3 * 512], back[3 * 512];
	struct scsi_tgt_cmd c;
	unsigned int i;

	clear_ua(f, 0);
	for (i = 0; i < sizeof(a); i++) {
		a[i] = (uint8_t)(i & 0x0f ? 0x0f : 0x81);
		b[i] = (uint8_t)(i % 3 ? 0xf0 : 0x00);
	}
	write16(f, 0, 500, 3, a);
	scsi_put_be64(ow + 2, 500);
	scsi_put_be32(ow + 10, 3);
	assert_int_equal(run(f, &c, 0, 0, ow, 16, SCSI_DIR_TO_DEVICE, b, sizeof(b)),
			 SAM_STAT_GOOD);
	read16(f, 0, 500, 3, back);
	for (i = 0; i < sizeof(back); i++)
		assert_int_equal(back[i], (uint8_t)(a[i] | b[i]));
	/* 0 blocks; ORPROTECT, reserved bits, the group byte; past the end;
	 * short Data-Out */
	scsi_put_be32(ow + 10, 0);
	assert_int_equal(run(f, &c, 0, 0, ow, 16, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	scsi_put_be32(ow + 10, 3);
	ow[1] = 0x20;
	run(f, &c, 0, 0, ow, 16, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_field(&c, 1, 7);
	ow[1] = 0x04;
	run(f, &c, 0, 0, ow, 16, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_field(&c, 1, 2);
	ow[1] = 0x02;
	run(f, &c, 0, 0, ow, 16, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_field(&c, 1, 1);
	ow[1] = 0;
	ow[14] = 0xe0;
	run(f, &c, 0, 0, ow, 16, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_field(&c, 14, 7);
	ow[14] = 0;
	run(f, &c, 0, 0, ow, 16, SCSI_DIR_TO_DEVICE, b, 1024);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	scsi_put_be64(ow + 2, CAP / 512);
	run(f, &c, 0, 0, ow, 16, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
}

/* An ORWRITE (32) CDB (SBC-4 5.11): BMOP @bmop, PREVIOUS GENERATION
 * PROCESSING @pgp, EXPECTED and NEW ORWGENERATION @eog and @nog, @nb
 * blocks at @lba */
static void orw32_cdb(uint8_t *cdb, uint8_t bmop, uint8_t pgp, uint32_t eog,
		      uint32_t nog, uint64_t lba, uint32_t nb)
{
	memset(cdb, 0, 32);
	cdb[0] = VARIABLE_LENGTH_CMD;
	cdb[2] = bmop;
	cdb[3] = pgp;
	cdb[7] = 0x18;
	scsi_put_be16(cdb + 8, VLC_ORWRITE_32);
	scsi_put_be64(cdb + 12, lba);
	scsi_put_be32(cdb + 20, eog);
	scsi_put_be32(cdb + 24, nog);
	scsi_put_be32(cdb + 28, nb);
}

/* ILLEGAL REQUEST, ORWRITE GENERATION DOES NOT MATCH, and @lba's two
 * blocks still @old */
static void expect_orw_ccg(struct fx *f, const struct scsi_tgt_cmd *c,
			   uint64_t lba, const uint8_t *old)
{
	static uint8_t back[2 * 512];

	expect_sense(c, SK_ILLEGAL_REQUEST, ASC_ORWRITE_GENERATION_MISMATCH);
	read16(f, 0, lba, 2, back);
	assert_memory_equal(back, old, sizeof(back));
}

/*
 * SBC-4 4.27, 5.11: ORWRITE (32).  A set operation (BMOP 000b) ORs the
 * Data-Out in, a change generation and clear (001b) ANDs it in and makes
 * NEW ORWGENERATION current, the old one previous and PREVIOUS
 * GENERATION PROCESSING the policy; whether each runs follows table 29
 * (PA: performed, DN: discarded, GOOD, nothing written, CCG: 2C/0C,
 * nothing written), the 16-byte form as if its EXPECTED ORWGENERATION
 * were 0.  Then every field check, the unit's state across a LUN reset,
 * and REPORT SUPPORTED OPERATION CODES.
 */
static void test_orwrite32(void **state)
{
	struct fx *f = *state;
	uint8_t cdb[32], ow16[16] = { ORWRITE_16 };
	uint8_t rsoc[12] = { MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPCODES, 0x02,
			     VARIABLE_LENGTH_CMD, 0, 0, 0, 0, 0x10, 0, 0, 0 };
	static uint8_t a[2 * 512], b[2 * 512], back[2 * 512], cur[2 * 512];
	static uint8_t buf[4096];
	const uint64_t lba = 700;
	struct scsi_tgt_cmd c;
	unsigned int i, k;
	bool found = false;

	clear_ua(f, 0);
	for (i = 0; i < sizeof(a); i++) {
		a[i] = (uint8_t)(i * 7 + 3);
		b[i] = (uint8_t)(i % 5 ? 0x5a : 0xc3);
	}
	write16(f, 0, lba, 2, a);
	/* power on: generations 0, policy 7h.  Set with EXPECTED 0: OR */
	orw32_cdb(cdb, 0, 0, 0, 0, lba, 2);
	assert_int_equal(run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b,
			     sizeof(b)), SAM_STAT_GOOD);
	read16(f, 0, lba, 2, back);
	for (i = 0; i < sizeof(back); i++)
		assert_int_equal(back[i], (uint8_t)(a[i] | b[i]));
	/* FUA and DPO taken; a set ignores PREVIOUS GENERATION PROCESSING
	 * (even reserved 1h) and NEW ORWGENERATION */
	orw32_cdb(cdb, 0, 1, 0, 77, lba, 2);
	cdb[10] = 0x18;
	assert_int_equal(run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b,
			     sizeof(b)), SAM_STAT_GOOD);
	/* another generation under policy 7h: CCG; so is a change of
	 * generation that does not name the current one */
	write16(f, 0, lba, 2, a);
	orw32_cdb(cdb, 0, 0, 9, 0, lba, 2);
	run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_orw_ccg(f, &c, lba, a);
	orw32_cdb(cdb, 1, 2, 9, 5, lba, 2);
	run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_orw_ccg(f, &c, lba, a);
	/* change generation and clear: AND; now current 5, previous 0,
	 * policy 2h (previous: DN, other: CCG) */
	orw32_cdb(cdb, 1, 2, 0, 5, lba, 2);
	assert_int_equal(run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b,
			     sizeof(b)), SAM_STAT_GOOD);
	read16(f, 0, lba, 2, cur);
	for (i = 0; i < sizeof(cur); i++)
		assert_int_equal(cur[i], (uint8_t)(a[i] & b[i]));
	orw32_cdb(cdb, 1, 2, 0, 6, lba, 2); /* 0 is no longer current */
	run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_orw_ccg(f, &c, lba, cur);
	orw32_cdb(cdb, 0, 0, 0, 0, lba, 2); /* previous: discarded */
	assert_int_equal(run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b,
			     sizeof(b)), SAM_STAT_GOOD);
	assert_int_equal(c.resid, 0);
	read16(f, 0, lba, 2, back);
	assert_memory_equal(back, cur, sizeof(cur));
	/* ORWRITE (16) is EXPECTED 0: the previous generation, discarded */
	scsi_put_be64(ow16 + 2, lba);
	scsi_put_be32(ow16 + 10, 2);
	assert_int_equal(run(f, &c, 0, 0, ow16, 16, SCSI_DIR_TO_DEVICE, b,
			     sizeof(b)), SAM_STAT_GOOD);
	read16(f, 0, lba, 2, back);
	assert_memory_equal(back, cur, sizeof(cur));
	orw32_cdb(cdb, 0, 0, 1234, 0, lba, 2); /* any other value: CCG */
	run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_orw_ccg(f, &c, lba, cur);
	/* the current generation performs; a LUN reset keeps the state */
	assert_int_equal(scsi_tgt_lun_reset(f->q, 0, 0), 0);
	clear_ua_lun(f, 0, 0); /* the reset's 29/03, the sender's too */
	orw32_cdb(cdb, 0, 0, 5, 0, lba, 2);
	assert_int_equal(run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b,
			     sizeof(b)), SAM_STAT_GOOD);
	read16(f, 0, lba, 2, back);
	for (i = 0; i < sizeof(back); i++)
		assert_int_equal(back[i], (uint8_t)(cur[i] | b[i]));
	/* policies 3h (any generation performs), 5h (previous and other
	 * discarded), 0h (previous performs, other CCG), 7h again; 0 blocks
	 * change the generation too */
	{
		static const struct {
			uint8_t pgp, prev_ok, other_ok; /* 1 PA, 0 DN, 2 CCG */
		} pol[] = { { 3, 1, 1 }, { 5, 0, 0 }, { 0, 1, 2 }, { 7, 2, 2 } };
		uint32_t gen = 5;

		for (k = 0; k < ARRAY_SIZE(pol); k++) {
			orw32_cdb(cdb, 1, pol[k].pgp, gen, gen + 1, lba, 0);
			assert_int_equal(run(f, &c, 0, 0, cdb, 32, SCSI_DIR_NONE,
					     NULL, 0), SAM_STAT_GOOD);
			gen++;
			for (i = 0; i < 2; i++) {
				uint8_t want = i ? pol[k].other_ok : pol[k].prev_ok;

				write16(f, 0, lba, 2, a);
				orw32_cdb(cdb, 0, 0, i ? 999 : gen - 1, 0, lba, 2);
				run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b,
				    sizeof(b));
				if (want == 2) {
					expect_orw_ccg(f, &c, lba, a);
					continue;
				}
				assert_int_equal(c.status, SAM_STAT_GOOD);
				read16(f, 0, lba, 2, back);
				if (!want) {
					assert_memory_equal(back, a, sizeof(a));
					continue;
				}
				for (unsigned int j = 0; j < sizeof(back); j++)
					assert_int_equal(back[j], (uint8_t)(a[j] | b[j]));
			}
		}
	}
	/* the fields: ADDITIONAL CDB LENGTH, a CDB shorter than it says,
	 * a service action not implemented (WRITE (32)), NACA in CONTROL
	 * (byte 1), ORPROTECT, every reserved bit, BMOP 01xb, a reserved
	 * policy for a change of generation */
	orw32_cdb(cdb, 0, 0, 0, 0, lba, 2);
	cdb[7] = 0x10;
	run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_field(&c, 7, -1);
	cdb[7] = 0x18;
	run(f, &c, 0, 0, cdb, 16, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_field(&c, 15, -1);
	cdb[7] = 0x00;
	run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_field(&c, 7, -1);
	cdb[7] = 0x18;
	cdb[9] = 0x0b;
	run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_field(&c, 8, -1);
	cdb[9] = 0x0e;
	cdb[1] = 0x04;
	run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_field(&c, 1, 2);
	cdb[1] = 0;
	{
		static const struct {
			uint8_t byte, val;
			int bit;
		} bad[] = {
			{ 10, 0x20, 7 }, { 10, 0x80, 7 }, { 10, 0x04, 2 },
			{ 10, 0x01, 0 }, { 11, 0x01, -1 }, { 2, 0x08, 3 },
			{ 2, 0x80, 7 }, { 3, 0x10, 4 }, { 4, 0x01, -1 },
			{ 5, 0x80, -1 }, { 6, 0x20, 5 }, { 2, 0x02, 2 },
			{ 2, 0x07, 2 },
		};

		for (k = 0; k < ARRAY_SIZE(bad); k++) {
			orw32_cdb(cdb, 0, 0, 0, 0, lba, 2);
			cdb[bad[k].byte] = bad[k].val;
			run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, sizeof(b));
			expect_field(&c, bad[k].byte, bad[k].bit);
		}
		for (k = 0; k < 16; k++) {
			bool ok = k == 0 || k == 2 || k == 3 || k == 5 || k == 7;

			orw32_cdb(cdb, 1, (uint8_t)k, 999, 0, lba, 2);
			run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, sizeof(b));
			if (ok) /* checked, then the generation: not 999 */
				expect_sense(&c, SK_ILLEGAL_REQUEST,
					     ASC_ORWRITE_GENERATION_MISMATCH);
			else
				expect_field(&c, 3, 3);
		}
	}
	/* past the end, short Data-Out */
	orw32_cdb(cdb, 0, 0, 0, 0, CAP / 512 - 1, 2);
	run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, sizeof(b));
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	orw32_cdb(cdb, 0, 0, 0, 0, lba, 2);
	run(f, &c, 0, 0, cdb, 32, SCSI_DIR_TO_DEVICE, b, 512);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	/* REPORT SUPPORTED OPERATION CODES: one command (7Fh, 000Eh), its
	 * 32 bytes of usage data with the service action in bytes 8-9 */
	scsi_put_be16(rsoc + 4, VLC_ORWRITE_32);
	assert_int_equal(run(f, &c, 0, 0, rsoc, 12, SCSI_DIR_FROM_DEVICE, buf,
			     4096), SAM_STAT_GOOD);
	assert_int_equal(buf[1] & 0x07, 3);
	assert_int_equal(scsi_get_be16(buf + 2), 32);
	assert_int_equal(buf[4], VARIABLE_LENGTH_CMD);
	assert_int_equal(buf[4 + 1], 0);     /* CONTROL: NACA refused */
	assert_int_equal(buf[4 + 2], 0x07);  /* BMOP */
	assert_int_equal(buf[4 + 3], 0x0f);  /* PREVIOUS GENERATION PROCESSING */
	assert_int_equal(buf[4 + 7], 0x18);
	assert_int_equal(scsi_get_be16(buf + 4 + 8), VLC_ORWRITE_32);
	assert_int_equal(buf[4 + 10], 0x18); /* DPO, FUA; ORPROTECT clear */
	assert_int_equal(buf[4 + 11], 0);
	for (i = 12; i < 32; i++)
		assert_int_equal(buf[4 + i], 0xff);
	assert_int_equal(c.resid, 4096 - 36);
	/* ... reporting option 3 too; not WRITE (32); 7Fh alone needs its
	 * service action (option 1 refused) */
	rsoc[2] = 0x03;
	assert_int_equal(run(f, &c, 0, 0, rsoc, 12, SCSI_DIR_FROM_DEVICE, buf,
			     4096), SAM_STAT_GOOD);
	assert_int_equal(buf[1] & 0x07, 3);
	assert_int_equal(scsi_get_be16(buf + 2), 32);
	rsoc[2] = 0x02;
	scsi_put_be16(rsoc + 4, 0x000b);
	assert_int_equal(run(f, &c, 0, 0, rsoc, 12, SCSI_DIR_FROM_DEVICE, buf,
			     4096), SAM_STAT_GOOD);
	assert_int_equal(buf[1] & 0x07, 1);
	rsoc[2] = 0x01;
	run(f, &c, 0, 0, rsoc, 12, SCSI_DIR_FROM_DEVICE, buf, 4096);
	expect_field(&c, 2, 2);
	/* every command: 7Fh with SERVACTV, service action 000Eh, 32 bytes */
	memset(rsoc + 2, 0, 4);
	assert_int_equal(run(f, &c, 0, 0, rsoc, 12, SCSI_DIR_FROM_DEVICE, buf,
			     4096), SAM_STAT_GOOD);
	for (i = 0; i < scsi_get_be32(buf) / 8; i++) {
		const uint8_t *d = buf + 4 + 8 * i;

		if (d[0] == VARIABLE_LENGTH_CMD && (d[5] & 1) &&
		    scsi_get_be16(d + 2) == VLC_ORWRITE_32 &&
		    scsi_get_be16(d + 6) == 32)
			found = true;
	}
	assert_true(found);
}

/* SBC-3 5.3/5.4: PRE-FETCH; 5.41/5.42: WRITE SAME's ANCHOR refused */
static void test_pre_fetch_anchor(void **state)
{
	struct fx *f = *state;
	uint8_t pf10[10] = { PRE_FETCH_10, 0x02, 0, 0, 0, 8, 0, 0, 8, 0 };
	uint8_t pf16[16] = { PRE_FETCH_16 };
	uint8_t ws10[10] = { WRITE_SAME_10, 0x10, 0, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t ws16[16] = { WRITE_SAME_16, 0x18 };
	uint8_t inq[6] = { INQUIRY, 1, 0xb2, 0, 255, 0 };
	static uint8_t buf[512];
	struct scsi_tgt_cmd c;

	clear_ua(f, 0);
	assert_int_equal(run(f, &c, 0, 0, pf10, 10, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_CONDITION_MET);
	assert_int_equal(c.sense_len, 0);
	/* length 0: to the last block (32768 blocks fit the 65535) */
	assert_int_equal(run(f, &c, 0, 0, pf16, 16, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_CONDITION_MET);
	scsi_put_be64(pf16 + 2, CAP / 512);
	run(f, &c, 0, 0, pf16, 16, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	scsi_put_be64(pf16 + 2, CAP / 512 - 1);
	scsi_put_be32(pf16 + 10, 2);
	run(f, &c, 0, 0, pf16, 16, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	pf10[1] = 0x03;
	run(f, &c, 0, 0, pf10, 10, SCSI_DIR_NONE, NULL, 0);
	expect_field(&c, 1, 0);
	pf10[1] = 0x40;
	run(f, &c, 0, 0, pf10, 10, SCSI_DIR_NONE, NULL, 0);
	expect_field(&c, 1, 6);
	pf10[1] = 0;
	pf10[6] = 0x80;
	run(f, &c, 0, 0, pf10, 10, SCSI_DIR_NONE, NULL, 0);
	expect_field(&c, 6, 7);
	/* ANCHOR: ANC_SUP is 0 */
	assert_int_equal(run(f, &c, 0, 0, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[5] & 0x02, 0);
	run(f, &c, 0, 0, ws10, 10, SCSI_DIR_TO_DEVICE, buf, 512);
	expect_field(&c, 1, 4);
	scsi_put_be32(ws16 + 10, 1);
	run(f, &c, 0, 0, ws16, 16, SCSI_DIR_TO_DEVICE, buf, 512);
	expect_field(&c, 1, 4);
}

/* SBC-3 5.5: GET LBA STATUS from the ram unit's allocation map */
static void test_get_lba_status(void **state)
{
	struct fx *f = *state;
	uint8_t gls[16] = { SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS };
	static uint8_t buf[4096], blk[8 * 512];
	struct scsi_tgt_cmd c;

	clear_ua(f, 0);
	scsi_put_be32(gls + 10, sizeof(buf));
	/* nothing written: one deallocated extent */
	assert_int_equal(run(f, &c, 0, 0, gls, 16, SCSI_DIR_FROM_DEVICE, buf,
			     sizeof(buf)), SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(buf), 4 + 16);
	assert_true(scsi_get_be64(buf + 8) == 0);
	assert_int_equal(scsi_get_be32(buf + 16), CAP / 512);
	assert_int_equal(buf[20] & 0x0f, 1);
	assert_int_equal(c.resid, sizeof(buf) - 24);
	/* one 4 KiB page written at LBA 16: deallocated, mapped, deallocated */
	memset(blk, 0x77, sizeof(blk));
	write16(f, 0, 16, 8, blk);
	assert_int_equal(run(f, &c, 0, 0, gls, 16, SCSI_DIR_FROM_DEVICE, buf,
			     sizeof(buf)), SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(buf), 4 + 3 * 16);
	assert_int_equal(scsi_get_be32(buf + 8 + 8), 16);
	assert_int_equal(buf[8 + 12], 1);
	assert_true(scsi_get_be64(buf + 24) == 16);
	assert_int_equal(scsi_get_be32(buf + 24 + 8), 8);
	assert_int_equal(buf[24 + 12], 0);
	assert_true(scsi_get_be64(buf + 40) == 24);
	assert_int_equal(scsi_get_be32(buf + 40 + 8), CAP / 512 - 24);
	assert_int_equal(buf[40 + 12], 1);
	/* from LBA 20: the mapped rest first */
	scsi_put_be64(gls + 2, 20);
	assert_int_equal(run(f, &c, 0, 0, gls, 16, SCSI_DIR_FROM_DEVICE, buf,
			     sizeof(buf)), SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(buf), 4 + 2 * 16);
	assert_true(scsi_get_be64(buf + 8) == 20);
	assert_int_equal(scsi_get_be32(buf + 16), 4);
	assert_int_equal(buf[20], 0);
	/* room for one descriptor: just the first */
	scsi_put_be64(gls + 2, 0);
	scsi_put_be32(gls + 10, 24);
	assert_int_equal(run(f, &c, 0, 0, gls, 16, SCSI_DIR_FROM_DEVICE, buf, 24),
			 SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(buf), 4 + 16);
	assert_int_equal(scsi_get_be32(buf + 16), 16);
	/* the last LBA + 1, reserved bits */
	scsi_put_be32(gls + 10, sizeof(buf));
	scsi_put_be64(gls + 2, CAP / 512);
	run(f, &c, 0, 0, gls, 16, SCSI_DIR_FROM_DEVICE, buf, sizeof(buf));
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	scsi_put_be64(gls + 2, 0);
	gls[14] = 1;
	run(f, &c, 0, 0, gls, 16, SCSI_DIR_FROM_DEVICE, buf, sizeof(buf));
	expect_field(&c, 14, -1);
	gls[14] = 0;
	gls[1] |= 0x20;
	run(f, &c, 0, 0, gls, 16, SCSI_DIR_FROM_DEVICE, buf, sizeof(buf));
	expect_field(&c, 1, 5);
}

/* GET LBA STATUS's PROVISIONING STATUS of @lba (its first descriptor) */
static uint8_t lba_status(struct fx *f, uint64_t lba)
{
	uint8_t gls[16] = { SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS };
	static uint8_t buf[64];
	struct scsi_tgt_cmd c;

	scsi_put_be64(gls + 2, lba);
	scsi_put_be32(gls + 10, sizeof(buf));
	assert_int_equal(run(f, &c, 0, 0, gls, 16, SCSI_DIR_FROM_DEVICE, buf,
			     sizeof(buf)), SAM_STAT_GOOD);
	assert_true(scsi_get_be64(buf + 8) == lba);
	return buf[8 + 12] & 0x0f;
}

/*
 * No anchored state (docs/scsi-tgt.md, "Anchored blocks"): ANC_SUP 0 in
 * VPD 0xb2 on a thin provisioned unit, so (SBC-4 r22 4.7.3.3, 5.35.1,
 * table 147) UNMAP with ANCHOR and WRITE SAME (10)/(16) with ANCHOR, with
 * or without UNMAP, are INVALID FIELD IN CDB and change nothing: the
 * blocks keep their data and stay mapped (GET LBA STATUS 0, never 2).
 * The same commands without ANCHOR do deallocate (status 1).
 */
static void test_anchor_refused(void **state)
{
	struct fx *f = *state;
	uint8_t inq[6] = { INQUIRY, 1, 0xb2, 0, 255, 0 };
	uint8_t um[10] = { UNMAP, 0x01, 0, 0, 0, 0, 0, 0, 24, 0 };
	uint8_t ws10[10] = { WRITE_SAME_10, 0x18 };
	uint8_t ws16[16] = { WRITE_SAME_16 };
	static const uint8_t ws16_flags[] = { 0x10, 0x11, 0x18, 0x19 };
	static uint8_t buf[512], data[8 * 512], back[8 * 512], zero[512];
	const uint64_t lba = 904; /* 8 blocks: one 4 KiB page of the ram unit */
	uint8_t pl[24] = { 0 };
	struct scsi_tgt_cmd c;
	unsigned int i;

	clear_ua(f, 0);
	assert_int_equal(run(f, &c, 0, 0, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[5] & 0x80, 0x80); /* LBPU */
	assert_int_equal(buf[5] & 0x02, 0);    /* ANC_SUP */
	assert_int_equal(buf[6] & 0x07, 2);    /* thin provisioned */
	memset(data, 0x3c, sizeof(data));
	write16(f, 0, lba, 8, data);
	assert_int_equal(lba_status(f, lba), 0);
	/* UNMAP, ANCHOR: byte 1 bit 0 */
	scsi_put_be16(pl, 22);
	scsi_put_be16(pl + 2, 16);
	scsi_put_be64(pl + 8, lba);
	scsi_put_be32(pl + 16, 8);
	run(f, &c, 0, 0, um, 10, SCSI_DIR_TO_DEVICE, pl, sizeof(pl));
	expect_field(&c, 1, 0);
	/* WRITE SAME (10) with UNMAP and ANCHOR, zeros: byte 1 bit 4 */
	scsi_put_be32(ws10 + 2, (uint32_t)lba);
	scsi_put_be16(ws10 + 7, 8);
	run(f, &c, 0, 0, ws10, 10, SCSI_DIR_TO_DEVICE, zero, sizeof(zero));
	expect_field(&c, 1, 4);
	/* WRITE SAME (16): ANCHOR alone, with NDOB, with UNMAP, with both */
	scsi_put_be64(ws16 + 2, lba);
	scsi_put_be32(ws16 + 10, 8);
	for (i = 0; i < sizeof(ws16_flags); i++) {
		bool ndob = ws16_flags[i] & 0x01;

		ws16[1] = ws16_flags[i];
		run(f, &c, 0, 0, ws16, 16, ndob ? SCSI_DIR_NONE : SCSI_DIR_TO_DEVICE,
		    ndob ? NULL : zero, ndob ? 0 : sizeof(zero));
		expect_field(&c, 1, 4);
	}
	read16(f, 0, lba, 8, back);
	assert_memory_equal(back, data, sizeof(data));
	assert_int_equal(lba_status(f, lba), 0);
	/* without ANCHOR the same UNMAP deallocates (not anchored: 1) */
	um[1] = 0;
	assert_int_equal(run(f, &c, 0, 0, um, 10, SCSI_DIR_TO_DEVICE, pl,
			     sizeof(pl)), SAM_STAT_GOOD);
	assert_int_equal(lba_status(f, lba), 1);
	/* ... and so does WRITE SAME (16) with UNMAP and NDOB */
	write16(f, 0, lba, 8, data);
	assert_int_equal(lba_status(f, lba), 0);
	ws16[1] = 0x09;
	assert_int_equal(run(f, &c, 0, 0, ws16, 16, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_GOOD);
	assert_int_equal(lba_status(f, lba), 1);
}

/* VPD 0x86 and 0xb0's MAXIMUM COMPARE AND WRITE LENGTH; REPORT SUPPORTED
 * OPERATION CODES lists the new commands */
static void test_vpd_rsoc_new(void **state)
{
	struct fx *f = *state;
	uint8_t inq[6] = { INQUIRY, 1, 0x86, 0, 255, 0 };
	uint8_t rsoc[12] = { MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPCODES, 0x01,
			     COMPARE_AND_WRITE, 0, 0, 0, 0, 0x10, 0, 0, 0 };
	static const uint8_t ops[] = { MODE_SELECT_6, MODE_SELECT_10, WRITE_VERIFY_10,
				       WRITE_VERIFY_12, WRITE_VERIFY_16, ORWRITE_16,
				       PRE_FETCH_10, PRE_FETCH_16 };
	static uint8_t buf[4096];
	struct scsi_tgt_cmd c;
	unsigned int i;

	clear_ua(f, 0);
	assert_int_equal(run(f, &c, 0, 0, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[1], 0x86);
	assert_int_equal(scsi_get_be16(buf + 2), 60);
	assert_int_equal(buf[4], 0);        /* no protection information */
	assert_int_equal(buf[5], 0x01);     /* SIMPSUP */
	assert_int_equal(buf[6], 0x01);     /* V_SUP: ram has a cache */
	inq[2] = 0xb0;
	assert_int_equal(run(f, &c, 0, 0, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[5], 255);
	/* COMPARE AND WRITE's usage data: FUA, DPO, the LBA, the count */
	assert_int_equal(run(f, &c, 0, 0, rsoc, 12, SCSI_DIR_FROM_DEVICE, buf, 4096),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[1] & 0x07, 3);
	assert_int_equal(scsi_get_be16(buf + 2), 16);
	assert_int_equal(buf[4 + 1], 0x18);
	assert_int_equal(buf[4 + 13], 0xff);
	assert_int_equal(buf[4 + 12], 0);
	for (i = 0; i < sizeof(ops); i++) {
		rsoc[3] = ops[i];
		assert_int_equal(run(f, &c, 0, 0, rsoc, 12, SCSI_DIR_FROM_DEVICE, buf,
				     4096), SAM_STAT_GOOD);
		assert_int_equal(buf[1] & 0x07, 3);
		assert_int_equal(buf[4], ops[i]);
	}
	rsoc[2] = 0x02;
	rsoc[3] = SERVICE_ACTION_IN_16;
	rsoc[5] = SAI_GET_LBA_STATUS;
	assert_int_equal(run(f, &c, 0, 0, rsoc, 12, SCSI_DIR_FROM_DEVICE, buf, 4096),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[1] & 0x07, 3);
	/* the service action's code in its place, as SPC-4 6.35.3's own
	 * example (A3h, 0Ch, ...) has it: not the field's mask */
	assert_int_equal(buf[4 + 1], SAI_GET_LBA_STATUS);
	assert_int_equal(buf[4 + 2], 0xff);
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
		cmocka_unit_test_setup_teardown(test_mode_select, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_bytchk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_verify_bytchk3, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_write_verify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_verify_residuals, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_compare_and_write, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_compare_and_write_256, setup,
						teardown),
		cmocka_unit_test(test_compare_and_write_threads),
		cmocka_unit_test(test_small_max_transfer),
		cmocka_unit_test(test_nexus_loss),
		cmocka_unit_test(test_reset_ends_prevention),
		cmocka_unit_test_setup_teardown(test_orwrite, setup, teardown),
		cmocka_unit_test_setup_teardown(test_orwrite32, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plug_batches_media_io, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pre_fetch_anchor, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_get_lba_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_anchor_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vpd_rsoc_new, setup, teardown),
		cmocka_unit_test(test_write_protect),
		cmocka_unit_test(test_medium_error),
		cmocka_unit_test(test_create_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
