// SPDX-License-Identifier: MIT
/*
 * SCSI target core: scsi_debug's fault and geometry knobs, each at the
 * core: short transfer (status GOOD, resid), every_nth negative, delay and
 * ndelay (lower bounds, measured; on the queue's thread, detach drains),
 * error rules (config and runtime, counts as scsi_debug's, timeout, busy,
 * replace, limits) and their text, tur_ms_to_ready, sector_size,
 * physblk_exp / opt_xferlen_exp / opt_blks, the provisioning bits and
 * unmap limits, removable with PREVENT ALLOW MEDIUM REMOVAL.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "blkstack/null.h"
#include "blkstack/ram.h"
#include "blkstack/scsi_tgt.h"

#define CAP (16u << 20) /* 32768 blocks of 512 */

struct fx {
	struct blk_dev *dev;
	struct scsi_tgt *t;
	struct scsi_tgt_queue *q;
};

static int ended;

static void done(struct scsi_tgt_cmd *c)
{
	(void)c;
	ended++;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct blk_dev *ram(uint32_t lbs)
{
	struct blk_ram_config rc = { 0 };
	struct blk_dev *d;

	rc.queue.capacity = CAP;
	rc.queue.queue_depth = 64;
	rc.queue.logical_block_size = lbs;
	assert_int_equal(blk_ram_create(&rc, &d), 0);
	return d;
}

/* A target over one ram unit with @tc's knobs; 0 or scsi_tgt_create()'s
 * error (then @err says why, and nothing is left). */
static int make(struct fx *f, struct scsi_tgt_config *tc, uint32_t lbs,
		char *err, size_t errlen)
{
	int ret;

	memset(f, 0, sizeof(*f));
	f->dev = ram(lbs);
	tc->luns = &f->dev;
	tc->nr_luns = 1;
	tc->own_luns = true;
	tc->id = 7;
	ret = scsi_tgt_create(tc, &f->t, err, errlen);
	if (ret) {
		blk_dev_close(f->dev);
		return ret;
	}
	assert_int_equal(scsi_tgt_queue_attach(f->t, &f->q), 0);
	return 0;
}

static void make_ok(struct fx *f, struct scsi_tgt_config *tc)
{
	char err[256] = "";
	int ret = make(f, tc, 512, err, sizeof(err));

	if (ret)
		fail_msg("scsi_tgt_create: %d: %s", ret, err);
}

static void unmake(struct fx *f)
{
	scsi_tgt_queue_detach(f->q);
	scsi_tgt_destroy(f->t);
}

/* Submit one command; its scsi_tgt_submit() result. */
static int submit(struct fx *f, struct scsi_tgt_cmd *c, const uint8_t *cdb,
		  uint8_t cdb_len, uint8_t dir, void *buf, uint32_t xfer,
		  struct iovec *iov)
{
	memset(c, 0, sizeof(*c));
	iov->iov_base = buf;
	iov->iov_len = xfer;
	c->cdb = cdb;
	c->cdb_len = cdb_len;
	c->dir = dir;
	c->iov = iov;
	c->iovcnt = buf ? 1 : 0;
	c->xfer_len = xfer;
	c->done = done;
	return scsi_tgt_submit(f->q, c);
}

/* Run one command to its end; its status. */
static uint8_t run(struct fx *f, struct scsi_tgt_cmd *c, const uint8_t *cdb,
		   uint8_t cdb_len, uint8_t dir, void *buf, uint32_t xfer)
{
	static struct iovec iov;
	int n = ended;

	assert_int_equal(submit(f, c, cdb, cdb_len, dir, buf, xfer, &iov), 0);
	while (ended == n)
		scsi_tgt_poll(f->q);
	assert_int_equal(ended, n + 1);
	return c->status;
}

static void expect_sense(const struct scsi_tgt_cmd *c, uint8_t key, uint16_t asc)
{
	struct scsi_sense s;

	assert_int_equal(c->status, SAM_STAT_CHECK_CONDITION);
	assert_int_equal(scsi_parse_sense(c->sense, c->sense_len, &s), 0);
	assert_int_equal(s.key, key);
	assert_int_equal(s.asc_ascq, asc);
}

static const uint8_t tur[6] = { TEST_UNIT_READY };

/* Take the power-on unit attention. */
static void clear_ua(struct fx *f)
{
	struct scsi_tgt_cmd c;

	run(f, &c, tur, 6, SCSI_DIR_NONE, NULL, 0);
	assert_int_equal(run(f, &c, tur, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
}

static void rw10(uint8_t *cdb, bool write, uint32_t lba, uint16_t nb)
{
	memset(cdb, 0, 10);
	cdb[0] = write ? WRITE_10 : READ_10;
	scsi_put_be32(cdb + 2, lba);
	scsi_put_be16(cdb + 7, nb);
}

static uint8_t rw(struct fx *f, struct scsi_tgt_cmd *c, bool write, uint32_t lba,
		  uint16_t nb, void *buf, uint32_t lbs)
{
	static uint8_t cdb[10];

	rw10(cdb, write, lba, nb);
	return run(f, c, cdb, 10, write ? SCSI_DIR_TO_DEVICE : SCSI_DIR_FROM_DEVICE,
		   buf, nb * lbs);
}

/* ------------------------------------------------------------ opts */

/* SCSI_TGT_OPT_SHORT_TRANSFER: the nth READ moves half its blocks, GOOD
 * with the rest in resid; a WRITE is never shortened (scsi_debug) */
static void test_short_transfer(void **state)
{
	struct scsi_tgt_config tc = { .every_nth = 2, .opts = SCSI_TGT_OPT_SHORT_TRANSFER };
	struct scsi_tgt_stats st;
	struct scsi_tgt_cmd c;
	static uint8_t wbuf[8 * 512], rbuf[8 * 512];
	struct fx f;

	(void)state;
	make_ok(&f, &tc);
	clear_ua(&f);
	memset(wbuf, 0xa5, sizeof(wbuf));
	/* 1: a write, not the nth */
	assert_int_equal(rw(&f, &c, true, 0, 8, wbuf, 512), SAM_STAT_GOOD);
	/* 2: a write, the nth: taken whole */
	assert_int_equal(rw(&f, &c, true, 8, 8, wbuf, 512), SAM_STAT_GOOD);
	assert_int_equal(c.resid, 0);
	/* 3: a read: whole */
	memset(rbuf, 0, sizeof(rbuf));
	assert_int_equal(rw(&f, &c, false, 0, 8, rbuf, 512), SAM_STAT_GOOD);
	assert_int_equal(c.resid, 0);
	assert_memory_equal(rbuf, wbuf, sizeof(rbuf));
	/* 4: the nth read: 4 of 8 blocks, GOOD, resid 4 blocks */
	memset(rbuf, 0, sizeof(rbuf));
	assert_int_equal(rw(&f, &c, false, 0, 8, rbuf, 512), SAM_STAT_GOOD);
	assert_int_equal(c.sense_len, 0);
	assert_int_equal(c.resid, 4 * 512);
	assert_false(c.overflow);
	assert_memory_equal(rbuf, wbuf, 4 * 512);
	assert_int_equal(rbuf[4 * 512], 0);
	/* 5, 6: a one-block read halves to nothing */
	assert_int_equal(rw(&f, &c, false, 0, 1, rbuf, 512), SAM_STAT_GOOD);
	assert_int_equal(rw(&f, &c, false, 0, 1, rbuf, 512), SAM_STAT_GOOD);
	assert_int_equal(c.resid, 512);
	scsi_tgt_get_stats(f.t, &st);
	assert_int_equal(st.injected, 2); /* the two reads; not the write */
	unmake(&f);
}

/* every_nth < 0: the |N|th READ/WRITE and every one after it (scsi_debug
 * before 5.9 set every_nth to -1 on the first hit) */
static void test_every_nth_negative(void **state)
{
	struct scsi_tgt_config tc = { .every_nth = -3, .opts = SCSI_TGT_OPT_TRANSPORT_ERR };
	struct scsi_tgt_stats st;
	struct scsi_tgt_cmd c;
	static uint8_t buf[512];
	struct fx f;
	int i;

	(void)state;
	make_ok(&f, &tc);
	clear_ua(&f);
	assert_int_equal(rw(&f, &c, false, 0, 1, buf, 512), SAM_STAT_GOOD);
	assert_int_equal(rw(&f, &c, true, 0, 1, buf, 512), SAM_STAT_GOOD);
	for (i = 0; i < 5; i++) {
		rw(&f, &c, i & 1, 0, 1, buf, 512);
		expect_sense(&c, SK_ABORTED_COMMAND, 0x4b03);
	}
	scsi_tgt_get_stats(f.t, &st);
	assert_int_equal(st.injected, 5);
	unmake(&f);
	/* positive: every 3rd only */
	tc.every_nth = 3;
	make_ok(&f, &tc);
	clear_ua(&f);
	for (i = 1; i <= 9; i++) {
		rw(&f, &c, false, 0, 1, buf, 512);
		if (i % 3)
			assert_int_equal(c.status, SAM_STAT_GOOD);
		else
			expect_sense(&c, SK_ABORTED_COMMAND, 0x4b03);
	}
	unmake(&f);
}

/* ------------------------------------------------------------ delay */

/* delay_ms, ndelay_ns: the command ends that long later, from
 * scsi_tgt_poll(); INQUIRY is not delayed; detach drains */
static void test_delay(void **state)
{
	static const uint8_t inq[6] = { INQUIRY, 0, 0, 0, 96, 0 };
	struct scsi_tgt_config tc = { .delay_ms = 20 };
	struct scsi_tgt_cmd c, c2, c3;
	static uint8_t buf[4096];
	struct iovec iov;
	uint8_t cdb[10];
	uint64_t t0, dt, due;
	struct fx f;
	int n, i;

	(void)state;
	make_ok(&f, &tc);
	clear_ua(&f);
	/* a READ: not ended by submit, ended >= 20 ms later */
	rw10(cdb, false, 0, 8);
	n = ended;
	t0 = now_ns();
	assert_int_equal(submit(&f, &c, cdb, 10, SCSI_DIR_FROM_DEVICE, buf, 4096, &iov), 0);
	assert_int_equal(ended, n);
	while (ended == n)
		scsi_tgt_poll(f.q);
	dt = now_ns() - t0;
	assert_true(dt >= 20000000);
	assert_int_equal(c.status, SAM_STAT_GOOD);
	assert_int_equal(scsi_tgt_delay_pending(f.q, &due), 0);
	/* TEST UNIT READY too */
	t0 = now_ns();
	assert_int_equal(run(&f, &c, tur, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_true(now_ns() - t0 >= 20000000);
	/* INQUIRY: at once (scsi_debug's F_DELAY_OVERR) */
	n = ended;
	assert_int_equal(submit(&f, &c, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 96, &iov), 0);
	assert_int_equal(ended, n + 1);
	/* an error answer is delayed as well: LBA out of range */
	rw10(cdb, false, 0xffffff, 1);
	t0 = now_ns();
	run(&f, &c, cdb, 10, SCSI_DIR_FROM_DEVICE, buf, 512);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	assert_true(now_ns() - t0 >= 20000000);
	/* three held (scsi_tgt_delay_pending(): how many, when the first is
	 * due, for a transport thread that sleeps until then); an abort
	 * answers one at once; the two others end in order, detach waits
	 * for them */
	n = ended;
	t0 = now_ns();
	for (i = 0; i < 3; i++) {
		static struct iovec v[3];

		assert_int_equal(submit(&f, i == 2 ? &c3 : i ? &c2 : &c, tur, 6,
					SCSI_DIR_NONE, NULL, 0, &v[i]), 0);
	}
	assert_int_equal(ended, n);
	due = 0;
	assert_int_equal(scsi_tgt_delay_pending(f.q, &due), 3);
	assert_true(due >= t0 + 20000000 && due <= now_ns() + 20000000);
	assert_int_equal(scsi_tgt_abort_task(f.q, &c2), 0);
	assert_int_equal(ended, n + 1);
	assert_int_equal(c2.status, SAM_STAT_TASK_ABORTED);
	assert_int_equal(scsi_tgt_delay_pending(f.q, &due), 2);
	unmake(&f);
	assert_int_equal(ended, n + 3);
	assert_true(now_ns() - t0 >= 20000000);

	/* ndelay_ns: 5 ms, instead of delay_ms */
	tc.delay_ms = 1000;
	tc.ndelay_ns = 5000000;
	make_ok(&f, &tc);
	clear_ua(&f);
	t0 = now_ns();
	assert_int_equal(rw(&f, &c, false, 0, 1, buf, 512), SAM_STAT_GOOD);
	dt = now_ns() - t0;
	assert_true(dt >= 5000000);
	assert_true(dt < 1000000000);
	unmake(&f);
}

/* ------------------------------------------------------ error rules */

static void test_error_rules(void **state)
{
	const struct scsi_tgt_error_rule cfg_rules[] = {
		{ .type = SCSI_TGT_ERR_FAIL, .opcode = READ_10, .count = -2,
		  .status = SAM_STAT_CHECK_CONDITION, .sense_key = SK_MEDIUM_ERROR,
		  .asc = 0x11, .ascq = 0x00 },
	};
	struct scsi_tgt_config tc = { .error_rules = cfg_rules, .nr_error_rules = 1 };
	static const uint8_t inq[6] = { INQUIRY, 0, 0, 0, 96, 0 };
	struct scsi_tgt_error_rule r, got[SCSI_TGT_MAX_ERROR_RULES];
	struct scsi_tgt_stats st;
	struct scsi_tgt_cmd c;
	static uint8_t buf[4096];
	struct iovec iov;
	uint8_t cdb[10];
	struct fx f;
	int i, n;

	(void)state;
	make_ok(&f, &tc);
	clear_ua(&f);
	/* count -2: the next two READ(10), then none; writes untouched */
	assert_int_equal(rw(&f, &c, true, 0, 1, buf, 512), SAM_STAT_GOOD);
	for (i = 0; i < 2; i++) {
		rw(&f, &c, false, 0, 1, buf, 512);
		expect_sense(&c, SK_MEDIUM_ERROR, 0x1100);
	}
	assert_int_equal(rw(&f, &c, false, 0, 1, buf, 512), SAM_STAT_GOOD);
	assert_int_equal(scsi_tgt_get_error_rules(f.t, 0, got, 16), 1);
	assert_int_equal(got[0].count, 0);
	scsi_tgt_get_stats(f.t, &st);
	assert_int_equal(st.injected, 2);

	/* count > 0: every time, never counted down */
	memset(&r, 0, sizeof(r));
	r.type = SCSI_TGT_ERR_FAIL;
	r.opcode = READ_10;
	r.count = 2;
	r.status = SAM_STAT_BUSY;
	assert_int_equal(scsi_tgt_add_error_rule(f.t, &r), 0); /* replaces */
	assert_int_equal(scsi_tgt_get_error_rules(f.t, 0, got, 16), 1);
	for (i = 0; i < 5; i++) {
		assert_int_equal(rw(&f, &c, false, 0, 1, buf, 512), SAM_STAT_BUSY);
		assert_int_equal(c.sense_len, 0);
	}
	assert_int_equal(scsi_tgt_get_error_rules(f.t, 0, got, 16), 1);
	assert_int_equal(got[0].count, 2);

	/* busy: scsi_tgt_submit() -EBUSY, done not called */
	memset(&r, 0, sizeof(r));
	r.type = SCSI_TGT_ERR_BUSY;
	r.opcode = WRITE_10;
	r.count = -1;
	assert_int_equal(scsi_tgt_add_error_rule(f.t, &r), 0);
	rw10(cdb, true, 0, 1);
	n = ended;
	assert_int_equal(submit(&f, &c, cdb, 10, SCSI_DIR_TO_DEVICE, buf, 512, &iov),
			 -EBUSY);
	assert_int_equal(ended, n);
	assert_int_equal(rw(&f, &c, true, 0, 1, buf, 512), SAM_STAT_GOOD);

	/* timeout before busy before fail (scsi_debug's order): never
	 * answered */
	r.type = SCSI_TGT_ERR_TIMEOUT;
	r.opcode = READ_10;
	r.count = -1;
	assert_int_equal(scsi_tgt_add_error_rule(f.t, &r), 0);
	rw10(cdb, false, 0, 1);
	n = ended;
	assert_int_equal(submit(&f, &c, cdb, 10, SCSI_DIR_FROM_DEVICE, buf, 512, &iov), 0);
	for (i = 0; i < 100; i++)
		scsi_tgt_poll(f.q);
	assert_int_equal(ended, n);
	/* then the fail rule again */
	assert_int_equal(rw(&f, &c, false, 0, 1, buf, 512), SAM_STAT_BUSY);

	/* clear: all gone */
	assert_int_equal(scsi_tgt_clear_error_rules(f.t, 0), 0);
	assert_int_equal(scsi_tgt_get_error_rules(f.t, 0, got, 16), 0);
	assert_int_equal(rw(&f, &c, false, 0, 1, buf, 512), SAM_STAT_GOOD);

	/* any opcode (0xff), INQUIRY too; count 0: off, and it decides */
	r.type = SCSI_TGT_ERR_FAIL;
	r.opcode = SCSI_TGT_ERR_ANY_OPCODE;
	r.count = -1;
	r.status = SAM_STAT_CHECK_CONDITION;
	r.sense_key = SK_HARDWARE_ERROR;
	r.asc = 0x44;
	r.ascq = 0;
	assert_int_equal(scsi_tgt_add_error_rule(f.t, &r), 0);
	run(&f, &c, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 96);
	expect_sense(&c, SK_HARDWARE_ERROR, 0x4400);
	assert_int_equal(run(&f, &c, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 96), SAM_STAT_GOOD);

	/* limits: 16 rules a unit, then -ENOSPC; bad fields -EINVAL */
	assert_int_equal(scsi_tgt_clear_error_rules(f.t, 0), 0);
	r.count = 0;
	for (i = 0; i < SCSI_TGT_MAX_ERROR_RULES; i++) {
		r.opcode = (uint8_t)(0x80 + i);
		assert_int_equal(scsi_tgt_add_error_rule(f.t, &r), 0);
	}
	r.opcode = 0x10;
	assert_int_equal(scsi_tgt_add_error_rule(f.t, &r), -ENOSPC);
	r.opcode = 0x80; /* the same type and opcode: replaced, room or not */
	assert_int_equal(scsi_tgt_add_error_rule(f.t, &r), 0);
	r.lun = 1;
	assert_int_equal(scsi_tgt_add_error_rule(f.t, &r), -EINVAL);
	r.lun = 0;
	r.status = SAM_STAT_GOOD;
	assert_int_equal(scsi_tgt_add_error_rule(f.t, &r), -EINVAL);
	r.status = SAM_STAT_CHECK_CONDITION;
	r.type = 3;
	assert_int_equal(scsi_tgt_add_error_rule(f.t, &r), -EINVAL);
	assert_int_equal(scsi_tgt_clear_error_rules(f.t, 1), -EINVAL);
	assert_int_equal(scsi_tgt_get_error_rules(f.t, 1, got, 16), -EINVAL);
	unmake(&f);
}

static void expect_parse_error(const char *text, const char *why_has)
{
	struct scsi_tgt_error_rule r[4];
	unsigned int n = 99;
	char why[300] = "";

	assert_int_equal(scsi_tgt_parse_error_rules(text, r, 4, &n, why, sizeof(why)),
			 -EINVAL);
	if (!strstr(why, why_has))
		fail_msg("'%s': '%s' has no '%s'", text, why, why_has);
	assert_int_equal(n, 0);
}

static void test_error_rule_text(void **state)
{
	struct scsi_tgt_error_rule r[4];
	unsigned int n;
	char why[300];

	(void)state;
	assert_int_equal(scsi_tgt_parse_error_rules(
		"opcode:0x28,count:3,status:0x02,sense:3/11/00;type:busy,opcode:0x2a,count:-1;"
		"type:timeout,opcode:255,count:0,lun:1", r, 4, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(r[0].type, SCSI_TGT_ERR_FAIL);
	assert_int_equal(r[0].opcode, 0x28);
	assert_int_equal(r[0].count, 3);
	assert_int_equal(r[0].status, 2);
	assert_int_equal(r[0].sense_key, 3);
	assert_int_equal(r[0].asc, 0x11);
	assert_int_equal(r[0].ascq, 0);
	assert_int_equal(r[1].type, SCSI_TGT_ERR_BUSY);
	assert_int_equal(r[1].count, -1);
	assert_int_equal(r[2].type, SCSI_TGT_ERR_TIMEOUT);
	assert_int_equal(r[2].opcode, 0xff);
	assert_int_equal(r[2].lun, 1);
	/* scsi_debug's type numbers */
	assert_int_equal(scsi_tgt_parse_error_rules("type:1,opcode:0,count:1", r, 4, &n,
						    why, sizeof(why)), 0);
	assert_int_equal(r[0].type, SCSI_TGT_ERR_BUSY);

	expect_parse_error("opcode:0x100,count:1,status:8", "rule 1: opcode:0x100: allowed 0..0xff");
	expect_parse_error("opcode:0x28,count:1,status:8;opcode:1,count:x,status:8",
			   "rule 2: count:x: allowed -2147483648..2147483647");
	expect_parse_error("opcode:1,count:1,status:0x03", "status:0x03: allowed 0x02");
	expect_parse_error("opcode:1,count:1,status:0", "status:0: allowed");
	expect_parse_error("opcode:1,count:1,status:2,sense:3/11", "sense:3/11: allowed KEY/ASC/ASCQ");
	expect_parse_error("opcode:1,count:1,status:2,sense:10/11/00", "key 0..f");
	expect_parse_error("opcode:1,count:1,status:2", "sense: required with status:0x02");
	expect_parse_error("opcode:1,count:1", "status: required");
	expect_parse_error("type:nope,opcode:1,count:1", "type:nope: allowed fail, timeout, busy");
	expect_parse_error("type:busy,opcode:1,count:1,status:8", "status: only for type:fail");
	expect_parse_error("count:1,status:8", "opcode: required");
	expect_parse_error("opcode:1,status:8", "count: required");
	expect_parse_error("opcode:1,count:1,status:8,color:red", "'color': unknown field");
	expect_parse_error("opcode", "not NAME:VALUE");
	expect_parse_error("opcode:1,count:1,status:8,lun:256", "lun:256: allowed 0..255");
	expect_parse_error("", "no rule");
	expect_parse_error("opcode:1,count:1,status:8;opcode:2,count:1,status:8;"
			   "opcode:3,count:1,status:8;opcode:4,count:1,status:8;"
			   "opcode:5,count:1,status:8", "more than 4 rules");
}

/* a rule of the configuration that is wrong: create fails, names it */
static void test_error_rule_config(void **state)
{
	const struct scsi_tgt_error_rule bad[] = {
		{ .type = SCSI_TGT_ERR_BUSY, .opcode = 0x28, .count = 1 },
		{ .type = SCSI_TGT_ERR_FAIL, .opcode = 0x28, .count = 1, .status = 0x03 },
	};
	struct scsi_tgt_config tc = { .error_rules = bad, .nr_error_rules = 2 };
	char err[256] = "";
	struct fx f;

	(void)state;
	assert_int_equal(make(&f, &tc, 512, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "error rule 2: status:0x03"));
}

/* ----------------------------------------------------- not ready */

static void test_tur_ms_to_ready(void **state)
{
	static const uint8_t inq[6] = { INQUIRY, 0, 0, 0, 96, 0 };
	static const uint8_t rc10[10] = { READ_CAPACITY_10 };
	struct scsi_tgt_config tc = { .tur_ms_to_ready = 100 };
	struct scsi_tgt_cmd c;
	static uint8_t buf[512];
	struct scsi_sense s;
	uint64_t t0 = now_ns();
	struct fx f;

	(void)state;
	make_ok(&f, &tc);
	/* TEST UNIT READY: 04/01 with the ms left in INFORMATION */
	run(&f, &c, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_NOT_READY, 0x0401);
	assert_int_equal(scsi_parse_sense(c.sense, c.sense_len, &s), 0);
	assert_true(s.info_valid);
	assert_true(s.info > 0 && s.info <= 100);
	/* media commands: 04/01; INQUIRY and READ CAPACITY answer */
	rw(&f, &c, false, 0, 1, buf, 512);
	expect_sense(&c, SK_NOT_READY, 0x0401);
	rw(&f, &c, true, 0, 1, buf, 512);
	expect_sense(&c, SK_NOT_READY, 0x0401);
	assert_int_equal(run(&f, &c, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 96), SAM_STAT_GOOD);
	run(&f, &c, rc10, 10, SCSI_DIR_FROM_DEVICE, buf, 8);
	expect_sense(&c, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
	assert_int_equal(run(&f, &c, rc10, 10, SCSI_DIR_FROM_DEVICE, buf, 8), SAM_STAT_GOOD);
	/* ready 100 ms after create, not before */
	while (run(&f, &c, tur, 6, SCSI_DIR_NONE, NULL, 0) != SAM_STAT_GOOD)
		expect_sense(&c, SK_NOT_READY, 0x0401);
	assert_true(now_ns() - t0 >= 100000000);
	assert_int_equal(rw(&f, &c, false, 0, 1, buf, 512), SAM_STAT_GOOD);
	unmake(&f);
}

/* ------------------------------------------------------- geometry */

static void read_cap16(struct fx *f, uint8_t *b)
{
	static const uint8_t rc16[16] = { SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16,
					  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0 };
	struct scsi_tgt_cmd c;

	assert_int_equal(run(f, &c, rc16, 16, SCSI_DIR_FROM_DEVICE, b, 32), SAM_STAT_GOOD);
}

static void vpd(struct fx *f, uint8_t page, uint8_t *b)
{
	uint8_t cdb[6] = { INQUIRY, 1, page, 0, 64, 0 };
	struct scsi_tgt_cmd c;

	memset(b, 0, 64);
	assert_int_equal(run(f, &c, cdb, 6, SCSI_DIR_FROM_DEVICE, b, 64), SAM_STAT_GOOD);
}

static void test_sector_size(void **state)
{
	static const uint8_t rc10[10] = { READ_CAPACITY_10 };
	struct scsi_tgt_config tc = { .sector_size = 4096 };
	static uint8_t w[8192], r[8192], b[32];
	struct scsi_tgt_cmd c;
	char err[256] = "";
	struct fx f;

	(void)state;
	make_ok(&f, &tc);
	clear_ua(&f);
	assert_int_equal(run(&f, &c, rc10, 10, SCSI_DIR_FROM_DEVICE, b, 8), SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(b), CAP / 4096 - 1);
	assert_int_equal(scsi_get_be32(b + 4), 4096);
	read_cap16(&f, b);
	assert_int_equal(scsi_get_be64(b), CAP / 4096 - 1);
	assert_int_equal(scsi_get_be32(b + 8), 4096);
	/* blocks of 4096: LBA 3, 2 blocks is bytes 12288..20479 */
	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (uint8_t)(i * 7);
	assert_int_equal(rw(&f, &c, true, 3, 2, w, 4096), SAM_STAT_GOOD);
	assert_int_equal(rw(&f, &c, false, 3, 2, r, 4096), SAM_STAT_GOOD);
	assert_memory_equal(w, r, sizeof(w));
	/* the last block, and past it */
	assert_int_equal(rw(&f, &c, false, CAP / 4096 - 1, 1, r, 4096), SAM_STAT_GOOD);
	rw(&f, &c, false, CAP / 4096, 1, r, 4096);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	unmake(&f);

	tc.sector_size = 1000;
	assert_int_equal(make(&f, &tc, 512, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "sector_size=1000: allowed 512, 1024, 2048, 4096"));
	/* smaller than the device's blocks */
	tc.sector_size = 512;
	assert_int_equal(make(&f, &tc, 4096, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "sector_size=512: LUN 0's device has 4096-byte blocks"));
	tc.sector_size = 2048;
	assert_int_equal(make(&f, &tc, 1024, err, sizeof(err)), 0);
	unmake(&f);
}

static void test_physblk_opt_xfer(void **state)
{
	struct scsi_tgt_config tc = { .physblk_exp = 3 };
	uint8_t b[64];
	char err[256] = "";
	struct fx f;

	(void)state;
	make_ok(&f, &tc);
	clear_ua(&f);
	read_cap16(&f, b);
	assert_int_equal(b[13] & 0x0f, 3);
	vpd(&f, 0xb0, b);
	assert_int_equal(scsi_get_be16(b + 6), 8); /* granularity: 2^3 */
	unmake(&f);

	/* opt_xferlen_exp above physblk_exp wins; opt_blks */
	tc.opt_xferlen_exp = 5;
	tc.opt_blks = 128;
	make_ok(&f, &tc);
	clear_ua(&f);
	vpd(&f, 0xb0, b);
	assert_int_equal(scsi_get_be16(b + 6), 32);
	assert_int_equal(scsi_get_be32(b + 12), 128);
	unmake(&f);
	tc.opt_xferlen_exp = 2; /* below: the physical block's */
	make_ok(&f, &tc);
	clear_ua(&f);
	vpd(&f, 0xb0, b);
	assert_int_equal(scsi_get_be16(b + 6), 8);
	unmake(&f);

	tc.physblk_exp = 16;
	assert_int_equal(make(&f, &tc, 512, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "physblk_exp=16: allowed 0..15"));
	tc.physblk_exp = 0;
	tc.opt_blks = 70000;
	assert_int_equal(make(&f, &tc, 512, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "opt_blks=70000: allowed 0..65535"));
}

/* ------------------------------------------------- provisioning */

static void test_lbp(void **state)
{
	struct scsi_tgt_config tc = { 0 };
	uint8_t b[64], ws[16], gls[16], unmap[10] = { UNMAP };
	static uint8_t pl[24], blk[512];
	struct scsi_tgt_cmd c;
	char err[256] = "";
	struct fx f;

	(void)state;
	/* auto over ram: all on */
	make_ok(&f, &tc);
	clear_ua(&f);
	vpd(&f, 0xb2, b);
	assert_int_equal(b[5] & 0xe4, 0xe4);
	read_cap16(&f, b);
	assert_int_equal(b[14] & 0xc0, 0xc0);
	unmake(&f);

	/* every bit off: the page says so, the commands are refused */
	tc.lbpu = tc.lbpws = tc.lbpws10 = tc.lbprz = SCSI_TGT_LBP_OFF;
	make_ok(&f, &tc);
	clear_ua(&f);
	vpd(&f, 0xb2, b);
	assert_int_equal(b[5] & 0xe4, 0);
	vpd(&f, 0xb0, b);
	assert_int_equal(scsi_get_be32(b + 20), 0); /* no UNMAP limits */
	read_cap16(&f, b);
	assert_int_equal(b[14] & 0xc0, 0);
	scsi_put_be16(unmap + 7, 24);
	scsi_put_be16(pl, 22);
	scsi_put_be16(pl + 2, 16);
	scsi_put_be32(pl + 16, 1);
	run(&f, &c, unmap, 10, SCSI_DIR_TO_DEVICE, pl, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
	memset(ws, 0, 16);
	ws[0] = WRITE_SAME_16;
	ws[1] = 0x08; /* UNMAP */
	scsi_put_be32(ws + 10, 1);
	run(&f, &c, ws, 16, SCSI_DIR_TO_DEVICE, blk, 512);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	memset(ws, 0, 10);
	ws[0] = WRITE_SAME_10;
	ws[1] = 0x08;
	scsi_put_be16(ws + 7, 1);
	run(&f, &c, ws, 10, SCSI_DIR_TO_DEVICE, blk, 512);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	/* WRITE SAME without UNMAP is still taken */
	ws[1] = 0;
	assert_int_equal(run(&f, &c, ws, 10, SCSI_DIR_TO_DEVICE, blk, 512), SAM_STAT_GOOD);
	/* fully provisioned (LBPME 0): GET LBA STATUS has every block
	 * mapped, though ram holds almost nothing */
	memset(gls, 0, sizeof(gls));
	gls[0] = SERVICE_ACTION_IN_16;
	gls[1] = SAI_GET_LBA_STATUS;
	scsi_put_be32(gls + 10, 64);
	assert_int_equal(run(&f, &c, gls, 16, SCSI_DIR_FROM_DEVICE, b, 64), SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(b), 4 + 16);
	assert_int_equal(scsi_get_be32(b + 16), CAP / 512);
	assert_int_equal(b[20] & 0x0f, 0);
	unmake(&f);

	/* lbpws10 alone: (10) with UNMAP taken, (16) refused */
	tc.lbpws10 = SCSI_TGT_LBP_ON;
	make_ok(&f, &tc);
	clear_ua(&f);
	vpd(&f, 0xb2, b);
	assert_int_equal(b[5] & 0xe4, 0x20);
	read_cap16(&f, b);
	assert_int_equal(b[14] & 0xc0, 0x80); /* LBPME: some command */
	ws[1] = 0x08;
	assert_int_equal(run(&f, &c, ws, 10, SCSI_DIR_TO_DEVICE, blk, 512), SAM_STAT_GOOD);
	unmake(&f);

	/* unmap limits and granularity in VPD 0xb0, enforced limits */
	memset(&tc, 0, sizeof(tc));
	tc.max_unmap_blocks = 100;
	tc.max_unmap_descriptors = 1;
	tc.unmap_granularity = 8;
	tc.unmap_alignment = 2;
	tc.max_write_same_blocks = 16;
	make_ok(&f, &tc);
	clear_ua(&f);
	vpd(&f, 0xb0, b);
	assert_int_equal(scsi_get_be32(b + 20), 100);
	assert_int_equal(scsi_get_be32(b + 24), 1);
	assert_int_equal(scsi_get_be32(b + 28), 8);
	assert_int_equal(scsi_get_be32(b + 32), 0x80000002u);
	assert_int_equal(scsi_get_be64(b + 36), 16);
	scsi_put_be32(pl + 16, 101);
	run(&f, &c, unmap, 10, SCSI_DIR_TO_DEVICE, pl, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	scsi_put_be32(pl + 16, 100);
	assert_int_equal(run(&f, &c, unmap, 10, SCSI_DIR_TO_DEVICE, pl, 24), SAM_STAT_GOOD);
	ws[1] = 0;
	scsi_put_be16(ws + 7, 17);
	run(&f, &c, ws, 10, SCSI_DIR_TO_DEVICE, blk, 512);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	unmake(&f);

	tc.unmap_alignment = 8;
	assert_int_equal(make(&f, &tc, 512, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unmap_alignment=8: allowed 0..7"));

	/* LBPRZ on where reads are not zeros (null keeps nothing) */
	{
		struct blk_null_config nc = { 0 };
		struct blk_dev *d;
		struct scsi_tgt *t;

		nc.queue.capacity = CAP;
		assert_int_equal(blk_null_create(&nc, &d), 0);
		memset(&tc, 0, sizeof(tc));
		tc.luns = &d;
		tc.nr_luns = 1;
		tc.lbprz = SCSI_TGT_LBP_ON;
		assert_int_equal(scsi_tgt_create(&tc, &t, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "lbprz=1: LUN 0's device keeps no data"));
		tc.lbprz = 3;
		assert_int_equal(scsi_tgt_create(&tc, &t, err, sizeof(err)), -EINVAL);
		blk_dev_close(d);
	}
}

/* ------------------------------------------------------- removable */

static void test_removable(void **state)
{
	static const uint8_t inq[6] = { INQUIRY, 0, 0, 0, 96, 0 };
	static const uint8_t prevent[6] = { PREVENT_ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 1, 0 };
	static const uint8_t allow[6] = { PREVENT_ALLOW_MEDIUM_REMOVAL };
	static const uint8_t eject[6] = { START_STOP_UNIT, 0, 0, 0, 0x02, 0 };
	static const uint8_t load[6] = { START_STOP_UNIT, 0, 0, 0, 0x03, 0 };
	struct scsi_tgt_config tc = { .removable = true };
	static uint8_t b[512];
	struct scsi_tgt_cmd c;
	struct fx f;

	(void)state;
	make_ok(&f, &tc);
	clear_ua(&f);
	assert_int_equal(run(&f, &c, inq, 6, SCSI_DIR_FROM_DEVICE, b, 96), SAM_STAT_GOOD);
	assert_int_equal(b[1] & 0x80, 0x80); /* RMB */
	assert_int_equal(run(&f, &c, prevent, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	run(&f, &c, eject, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_ILLEGAL_REQUEST, 0x5302);
	assert_int_equal(run(&f, &c, tur, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(run(&f, &c, allow, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(run(&f, &c, eject, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	run(&f, &c, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_NOT_READY, 0x3a00);
	rw(&f, &c, false, 0, 1, b, 512);
	expect_sense(&c, SK_NOT_READY, 0x3a00);
	/* prevented while out: the load is refused too (libiscsi's
	 * PreventAllow.Eject), and so is another eject */
	assert_int_equal(run(&f, &c, prevent, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	run(&f, &c, load, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_ILLEGAL_REQUEST, 0x5302);
	run(&f, &c, eject, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_ILLEGAL_REQUEST, 0x5302);
	run(&f, &c, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_NOT_READY, 0x3a00);
	assert_int_equal(run(&f, &c, allow, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(run(&f, &c, load, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(run(&f, &c, tur, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(rw(&f, &c, false, 0, 1, b, 512), SAM_STAT_GOOD);
	unmake(&f);

	/* not removable: no RMB, PREVENT and eject do nothing */
	tc.removable = false;
	make_ok(&f, &tc);
	clear_ua(&f);
	assert_int_equal(run(&f, &c, inq, 6, SCSI_DIR_FROM_DEVICE, b, 96), SAM_STAT_GOOD);
	assert_int_equal(b[1] & 0x80, 0);
	assert_int_equal(run(&f, &c, prevent, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(run(&f, &c, eject, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(run(&f, &c, tur, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	unmake(&f);
}

static void test_knob_errors(void **state)
{
	struct scsi_tgt_config tc = { .delay_ms = 10001 };
	char err[256] = "";
	struct fx f;

	(void)state;
	assert_int_equal(make(&f, &tc, 512, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "delay: allowed 0..10 s"));
	tc.delay_ms = 0;
	tc.ndelay_ns = SCSI_TGT_MAX_DELAY_NS + 1;
	assert_int_equal(make(&f, &tc, 512, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ndelay: allowed 0..10 s"));
	tc.ndelay_ns = 0;
	tc.opts = 0x20;
	assert_int_equal(make(&f, &tc, 512, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "opts=0x20: bits 0x20 are not implemented"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_transfer),
		cmocka_unit_test(test_every_nth_negative),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_error_rules),
		cmocka_unit_test(test_error_rule_text),
		cmocka_unit_test(test_error_rule_config),
		cmocka_unit_test(test_tur_ms_to_ready),
		cmocka_unit_test(test_sector_size),
		cmocka_unit_test(test_physblk_opt_xfer),
		cmocka_unit_test(test_lbp),
		cmocka_unit_test(test_removable),
		cmocka_unit_test(test_knob_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
