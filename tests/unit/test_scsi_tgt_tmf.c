// SPDX-License-Identifier: MIT
/*
 * SCSI target core, task management (tmf.c): ABORT TASK of a dropped task
 * and of one whose media access is in flight, LOGICAL UNIT RESET and
 * TARGET RESET ending every task of the queue once with TASK ABORTED, the
 * unit attention (29/03) every nexus sees, the one that asked too, an
 * SPC-2 reservation
 * released by the reset, rejected functions (tmf_fail), a queue reset, a
 * task aborted by a reset under delay_ms counted once, and CLEAR TASK SET
 * (every nexus's tasks, on this queue and another, in flight, held by the
 * delay and dropped; TAS 1: TASK ABORTED; TAS 0: no response and 2F/00),
 * and the resets ending other nexuses' tasks as TAS says.
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

#include "blkstack/ram.h"
#include "blkstack/scsi_tgt.h"

#define CAP (16u << 20)

struct fx {
	struct blk_dev *dev[2];
	struct scsi_tgt *t;
	struct scsi_tgt_queue *q;
};

static int ended[10];
static uint32_t cfg_delay_ms; /* the next make()'s delay_ms */

static void done(struct scsi_tgt_cmd *c)
{
	ended[(uintptr_t)c->priv]++;
}

static struct fx *make(uint32_t every_nth, uint32_t opts, uint32_t tmf_fail)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct blk_ram_config rc = { 0 };
	struct scsi_tgt_config tc = { 0 };
	char err[256];

	rc.queue.capacity = CAP;
	rc.queue.queue_depth = 64;
	rc.queue.nr_hw_queues = 2; /* a second queue (thread) may attach */
	assert_int_equal(blk_ram_create(&rc, &f->dev[0]), 0);
	assert_int_equal(blk_ram_create(&rc, &f->dev[1]), 0);
	tc.luns = f->dev;
	tc.nr_luns = 2;
	tc.own_luns = true;
	tc.id = 0x42;
	tc.every_nth = every_nth;
	tc.opts = opts;
	tc.tmf_fail = tmf_fail;
	tc.delay_ms = cfg_delay_ms;
	assert_int_equal(scsi_tgt_create(&tc, &f->t, err, sizeof(err)), 0);
	assert_int_equal(scsi_tgt_queue_attach(f->t, &f->q), 0);
	memset(ended, 0, sizeof(ended));
	return f;
}

static void unmake(struct fx *f)
{
	scsi_tgt_queue_detach(f->q);
	scsi_tgt_destroy(f->t);
	free(f);
}

static uint8_t cdbs[10][10];
static char bufs[10][4096];
static struct iovec iovs[10];

/* Submit READ(10) of one 4 KiB at block @lba of @lun on @q as command @i. */
static void submit_read_q(struct scsi_tgt_queue *q, struct scsi_tgt_cmd *c,
			  unsigned int i, uint64_t lun, unsigned int nexus,
			  uint32_t lba)
{
	memset(c, 0, sizeof(*c));
	memset(cdbs[i], 0, 10);
	cdbs[i][0] = READ_10;
	scsi_put_be32(cdbs[i] + 2, lba);
	scsi_put_be16(cdbs[i] + 7, 8);
	iovs[i].iov_base = bufs[i];
	iovs[i].iov_len = 4096;
	c->lun = lun;
	c->nexus = nexus;
	c->cdb = cdbs[i];
	c->cdb_len = 10;
	c->dir = SCSI_DIR_FROM_DEVICE;
	c->iov = &iovs[i];
	c->iovcnt = 1;
	c->xfer_len = 4096;
	c->done = done;
	c->priv = (void *)(uintptr_t)i;
	assert_int_equal(scsi_tgt_submit(q, c), 0);
}

/* ... on the fixture's queue. */
static void submit_read(struct fx *f, struct scsi_tgt_cmd *c, unsigned int i,
			uint64_t lun, unsigned int nexus, uint32_t lba)
{
	submit_read_q(f->q, c, i, lun, nexus, lba);
}

static void settle(struct fx *f)
{
	int k;

	for (k = 0; k < 1000; k++)
		scsi_tgt_poll(f->q);
}

/* A TEST UNIT READY on @lun from @nexus, to its end (a delay too): its
 * status and ASC/ASCQ. */
static uint8_t tur(struct fx *f, uint64_t lun, unsigned int nexus, uint16_t *asc)
{
	static const uint8_t cdb[6] = { TEST_UNIT_READY };
	struct scsi_tgt_cmd c = { 0 };
	struct scsi_sense s;
	int n = ended[7];

	c.lun = lun;
	c.nexus = nexus;
	c.cdb = cdb;
	c.cdb_len = 6;
	c.done = done;
	c.priv = (void *)(uintptr_t)7;
	assert_int_equal(scsi_tgt_submit(f->q, &c), 0);
	while (ended[7] == n)
		scsi_tgt_poll(f->q);
	*asc = 0;
	if (c.status == SAM_STAT_CHECK_CONDITION &&
	    !scsi_parse_sense(c.sense, c.sense_len, &s))
		*asc = s.asc_ascq;
	return c.status;
}

static void clear_power_on(struct fx *f, unsigned int nexus)
{
	uint16_t asc;

	(void)tur(f, 0, nexus, &asc);
	(void)tur(f, 1, nexus, &asc);
}

static void test_abort_dropped(void **state)
{
	struct fx *f = make(1, SCSI_TGT_OPT_TIMEOUT, 0);
	struct scsi_tgt_cmd c;
	struct scsi_tgt_stats st;

	(void)state;
	clear_power_on(f, 0);
	submit_read(f, &c, 0, 0, 0, 0);
	settle(f);
	assert_int_equal(ended[0], 0); /* dropped: never answered */
	assert_int_equal(scsi_tgt_abort_task(f->q, &c), 0);
	assert_int_equal(ended[0], 1);
	assert_int_equal(c.status, SAM_STAT_TASK_ABORTED);
	assert_int_equal(c.sense_len, 0);
	/* the task is gone: a second abort finds nothing, done not called */
	assert_int_equal(scsi_tgt_abort_task(f->q, &c), -ENOENT);
	assert_int_equal(ended[0], 1);
	scsi_tgt_get_stats(f->t, &st);
	assert_true(st.aborts == 2 && st.tasks_aborted == 1);
	unmake(f);
}

static void test_abort_rejected(void **state)
{
	struct fx *f = make(1, SCSI_TGT_OPT_TIMEOUT, SCSI_TGT_TMF_FAIL_ABORT);
	struct scsi_tgt_cmd c;
	struct scsi_tgt_stats st;

	(void)state;
	clear_power_on(f, 0);
	submit_read(f, &c, 0, 0, 0, 0);
	assert_int_equal(scsi_tgt_abort_task(f->q, &c), -EIO);
	assert_int_equal(ended[0], 0);
	/* the detach ends it: no task outlives its queue */
	scsi_tgt_get_stats(f->t, &st);
	assert_true(st.tmf_failed == 1);
	unmake(f);
	assert_int_equal(ended[0], 1);
}

static void test_abort_media(void **state)
{
	struct fx *f = make(0, 0, 0);
	struct scsi_tgt_cmd c;

	(void)state;
	clear_power_on(f, 0);
	submit_read(f, &c, 0, 0, 0, 8);
	/* ram completes at the next poll: the abort waits for the bio and
	 * ends the task aborted, once */
	if (!ended[0]) {
		assert_int_equal(scsi_tgt_abort_task(f->q, &c), 0);
		assert_int_equal(c.status, SAM_STAT_TASK_ABORTED);
	}
	settle(f);
	assert_int_equal(ended[0], 1);
	unmake(f);
}

static void test_lun_reset(void **state)
{
	struct fx *f = make(1, SCSI_TGT_OPT_TIMEOUT, 0);
	static const uint8_t reserve[6] = { RESERVE_6 };
	struct scsi_tgt_cmd c[3], r = { 0 };
	uint16_t asc;

	(void)state;
	clear_power_on(f, 0);
	clear_power_on(f, 1);
	submit_read(f, &c[0], 0, 0, 0, 0);
	submit_read(f, &c[1], 1, 0, 0, 8);
	submit_read(f, &c[2], 2, 1, 0, 0); /* the other unit */
	/* nexus 1 holds an SPC-2 reservation of unit 0 */
	r.lun = 0;
	r.nexus = 1;
	r.cdb = reserve;
	r.cdb_len = 6;
	r.done = done;
	r.priv = (void *)(uintptr_t)6;
	assert_int_equal(scsi_tgt_submit(f->q, &r), 0);
	assert_int_equal(r.status, SAM_STAT_GOOD);
	assert_int_equal(tur(f, 0, 0, &asc), SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(scsi_tgt_lun_reset(f->q, 0, 0), 0);
	/* unit 0's tasks ended TASK ABORTED, once; unit 1's not */
	assert_int_equal(ended[0], 1);
	assert_int_equal(ended[1], 1);
	assert_int_equal(c[0].status, SAM_STAT_TASK_ABORTED);
	assert_int_equal(c[1].status, SAM_STAT_TASK_ABORTED);
	assert_int_equal(ended[2], 0);
	/* the reservation went with the reset; every nexus sees 29/03, the
	 * one that asked too (SAM-5's logical unit reset) */
	assert_int_equal(tur(f, 0, 0, &asc), SAM_STAT_CHECK_CONDITION);
	assert_int_equal(asc, ASC_LUN_RESET_OCCURRED);
	assert_int_equal(tur(f, 0, 0, &asc), SAM_STAT_GOOD);
	assert_int_equal(tur(f, 0, 1, &asc), SAM_STAT_CHECK_CONDITION);
	assert_int_equal(asc, ASC_LUN_RESET_OCCURRED);
	assert_int_equal(tur(f, 0, 1, &asc), SAM_STAT_GOOD);
	assert_int_equal(scsi_tgt_lun_reset(f->q, 5, 0), -EINVAL);
	/* a target reset ends unit 1's too */
	assert_int_equal(scsi_tgt_target_reset(f->q, 0), 0);
	assert_int_equal(ended[2], 1);
	assert_int_equal(c[2].status, SAM_STAT_TASK_ABORTED);
	assert_int_equal(tur(f, 1, 1, &asc), SAM_STAT_CHECK_CONDITION);
	assert_int_equal(asc, ASC_LUN_RESET_OCCURRED);
	unmake(f);
	assert_int_equal(ended[0] + ended[1] + ended[2], 3); /* none twice */
}

static void test_resets_rejected(void **state)
{
	struct fx *f = make(1, SCSI_TGT_OPT_TIMEOUT,
			    SCSI_TGT_TMF_FAIL_LUN_RESET | SCSI_TGT_TMF_FAIL_TARGET_RESET);
	struct scsi_tgt_cmd c[2];

	(void)state;
	clear_power_on(f, 0);
	submit_read(f, &c[0], 0, 0, 0, 0);
	submit_read(f, &c[1], 1, 1, 0, 0);
	assert_int_equal(scsi_tgt_lun_reset(f->q, 0, 0), -EIO);
	assert_int_equal(scsi_tgt_target_reset(f->q, 0), -EIO);
	assert_int_equal(ended[0] + ended[1], 0);
	/* the host reset of the initiator: every task of the queue ends */
	scsi_tgt_queue_reset(f->q);
	assert_int_equal(ended[0], 1);
	assert_int_equal(ended[1], 1);
	assert_int_equal(c[1].status, SAM_STAT_TASK_ABORTED);
	unmake(f);
	assert_int_equal(ended[0] + ended[1], 2);
}

static uint64_t tasks_aborted(struct fx *f)
{
	struct scsi_tgt_stats st;

	scsi_tgt_get_stats(f->t, &st);
	return st.tasks_aborted;
}

/*
 * delay_ms: a READ whose bio ends while a LUN reset waits for it ends
 * aborted there, and the delay then holds its answer; the reset's end of
 * the held tasks answers it, once, and the target counts it once (it
 * was counted twice).  Likewise ABORT TASK of a held task that another
 * queue's reset had aborted.
 */
static void test_reset_delayed_counted_once(void **state)
{
	struct scsi_tgt_queue *q2;
	struct scsi_tgt_cmd c[2];
	struct fx *f;
	uint16_t asc;
	int k;

	(void)state;
	cfg_delay_ms = 100;
	f = make(0, 0, 0);
	cfg_delay_ms = 0;
	clear_power_on(f, 0);
	submit_read(f, &c[0], 0, 0, 0, 0);
	assert_int_equal(scsi_tgt_lun_reset(f->q, 0, 0), 0);
	assert_int_equal(ended[0], 1);
	assert_int_equal(c[0].status, SAM_STAT_TASK_ABORTED);
	assert_int_equal(tasks_aborted(f), 1);
	/* the reset's 29/03 for the nexus that asked too */
	assert_int_equal(tur(f, 0, 0, &asc), SAM_STAT_CHECK_CONDITION);
	assert_int_equal(asc, ASC_LUN_RESET_OCCURRED);

	/* reset from another queue: the task ends aborted when its bio
	 * ends, held by the delay; ABORT TASK answers it at once */
	assert_int_equal(scsi_tgt_queue_attach(f->t, &q2), 0);
	submit_read(f, &c[1], 1, 0, 0, 8);
	assert_int_equal(scsi_tgt_lun_reset(q2, 0, 1), 0);
	for (k = 0; k < 10; k++)
		scsi_tgt_poll(f->q); /* ram: the bio ends; the delay holds it */
	assert_int_equal(ended[1], 0);
	assert_int_equal(tasks_aborted(f), 2);
	assert_int_equal(scsi_tgt_abort_task(f->q, &c[1]), 0);
	assert_int_equal(ended[1], 1);
	assert_int_equal(c[1].status, SAM_STAT_TASK_ABORTED);
	assert_true(c[1].no_response); /* nexus 1's reset, TAS 0 */
	assert_int_equal(tasks_aborted(f), 2);
	scsi_tgt_queue_detach(q2);
	unmake(f);
	assert_int_equal(ended[0] + ended[1], 2);
}

/* Run a command on @lun from @nexus to its end (as command 6); its status. */
static uint8_t run(struct fx *f, uint64_t lun, unsigned int nexus,
		   const uint8_t *cdb, uint8_t cdb_len, uint8_t dir, void *buf,
		   uint32_t xfer)
{
	struct scsi_tgt_cmd c = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = xfer };
	int n = ended[6];

	c.lun = lun;
	c.nexus = nexus;
	c.cdb = cdb;
	c.cdb_len = cdb_len;
	c.dir = dir;
	c.iov = &iov;
	c.iovcnt = buf ? 1 : 0;
	c.xfer_len = xfer;
	c.done = done;
	c.priv = (void *)(uintptr_t)6;
	assert_int_equal(scsi_tgt_submit(f->q, &c), 0);
	while (ended[6] == n)
		scsi_tgt_poll(f->q);
	return c.status;
}

/* UNIT ATTENTION @asc for @nexus on @lun, then none */
static void expect_ua(struct fx *f, uint64_t lun, unsigned int nexus, uint16_t asc)
{
	uint16_t got;

	assert_int_equal(tur(f, lun, nexus, &got), SAM_STAT_CHECK_CONDITION);
	assert_int_equal(got, asc);
	assert_int_equal(tur(f, lun, nexus, &got), SAM_STAT_GOOD);
}

static void expect_no_ua(struct fx *f, uint64_t lun, unsigned int nexus)
{
	uint16_t got;

	assert_int_equal(tur(f, lun, nexus, &got), SAM_STAT_GOOD);
}

/* The control mode page's TAS bit of @lun set by MODE SELECT (6) from
 * nexus 0; the MODE PARAMETERS CHANGED of nexuses 1..@nr-1 taken */
static void set_tas(struct fx *f, uint64_t lun, unsigned int nr)
{
	static const uint8_t ms[6] = { MODE_SENSE_6, 0x08, 0x0a, 0, 255, 0 };
	static const uint8_t sel[6] = { MODE_SELECT_6, 0x10, 0, 0, 16, 0 };
	static uint8_t buf[255], pl[16];

	assert_int_equal(run(f, lun, 0, ms, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	memset(pl, 0, sizeof(pl));
	memcpy(pl + 4, buf + 4, 12);
	pl[4 + 5] |= 0x40;
	assert_int_equal(run(f, lun, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16),
			 SAM_STAT_GOOD);
	for (unsigned int n = 1; n < nr; n++)
		expect_ua(f, lun, n, ASC_MODE_PARAMETERS_CHANGED);
}

/* Poll @q and @q2 until commands [0, @n) have all ended (at most 10 s). */
static void settle_all(struct scsi_tgt_queue *q, struct scsi_tgt_queue *q2,
		       unsigned int n)
{
	uint64_t t0 = 0;
	unsigned int i;

	for (unsigned long k = 0;; k++) {
		for (i = 0; i < n && ended[i]; i++)
			;
		if (i == n)
			return;
		scsi_tgt_poll(q);
		scsi_tgt_poll(q2);
		if (!(k & 1023)) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			if (!t0)
				t0 = ts.tv_sec;
			assert_true(ts.tv_sec - t0 < 10);
		}
	}
}

static void expect_aborted(const struct scsi_tgt_cmd *c, int i, bool no_response)
{
	assert_int_equal(ended[i], 1);
	assert_int_equal(c->status, SAM_STAT_TASK_ABORTED);
	assert_int_equal(c->sense_len, 0);
	assert_int_equal(c->resid, c->xfer_len);
	assert_int_equal(c->no_response, no_response);
}

static uint64_t clear_task_sets(struct fx *f)
{
	struct scsi_tgt_stats st;

	scsi_tgt_get_stats(f->t, &st);
	return st.clear_task_sets;
}

/*
 * Four READs of unit 0 from nexuses 0, 1 (on @f->q) and 1, 2 (on @q2),
 * one of unit 1 from nexus 1 (on @f->q), in flight; nexus 0 clears unit
 * 0's task set on @f->q.  Its queue's tasks of unit 0 have ended when it
 * returns; the others end when their bios do; unit 1's goes on.
 */
static void clear_five(struct fx *f, struct scsi_tgt_queue *q2, struct scsi_tgt_cmd *c)
{
	submit_read_q(f->q, &c[0], 0, 0, 0, 0);
	submit_read_q(f->q, &c[1], 1, 0, 1, 8);
	submit_read_q(f->q, &c[2], 2, 1, 1, 16);
	submit_read_q(q2, &c[3], 3, 0, 1, 24);
	submit_read_q(q2, &c[4], 4, 0, 2, 32);
	for (int i = 0; i < 5; i++)
		assert_int_equal(ended[i], 0); /* ram: at the next poll */
	assert_int_equal(scsi_tgt_clear_task_set(f->q, 0, 0), 0);
	assert_int_equal(ended[0] + ended[1], 2);
	assert_int_equal(ended[3] + ended[4], 0);
	settle_all(f->q, q2, 5);
	assert_int_equal(c[2].status, SAM_STAT_GOOD);
	assert_false(c[2].no_response);
	assert_int_equal(clear_task_sets(f), 1);
}

/*
 * CLEAR TASK SET (SAM-5 7.4) with the control mode page's TAS set: every
 * task of the unit, of every nexus, ends TASK ABORTED once, with its
 * response (SPC-4 7.5.8); nobody gets a unit attention; what starts after
 * it is not aborted.
 */
static void test_clear_task_set_tas(void **state)
{
	struct fx *f = make(0, 0, 0);
	struct scsi_tgt_queue *q2;
	struct scsi_tgt_cmd c[6];

	(void)state;
	for (unsigned int n = 0; n < 4; n++)
		clear_power_on(f, n);
	set_tas(f, 0, 4);
	assert_int_equal(scsi_tgt_queue_attach(f->t, &q2), 0);
	clear_five(f, q2, c);
	expect_aborted(&c[0], 0, false);
	expect_aborted(&c[1], 1, false);
	expect_aborted(&c[3], 3, false);
	expect_aborted(&c[4], 4, false);
	assert_int_equal(tasks_aborted(f), 4);
	for (unsigned int n = 0; n < 4; n++) {
		expect_no_ua(f, 0, n);
		expect_no_ua(f, 1, n);
	}
	submit_read_q(q2, &c[5], 5, 0, 1, 40);
	settle_all(f->q, q2, 6);
	assert_int_equal(c[5].status, SAM_STAT_GOOD);
	assert_int_equal(scsi_tgt_clear_task_set(f->q, 2, 0), -EINVAL);
	scsi_tgt_queue_detach(q2);
	unmake(f);
	for (int i = 0; i < 6; i++)
		assert_int_equal(ended[i], 1);
}

/*
 * TAS 0 (the default): the other nexuses' tasks end TASK ABORTED with
 * no_response (SAM-5 5.6: nothing is sent for them), and each of those
 * nexuses gets COMMANDS CLEARED BY ANOTHER INITIATOR (2F/00) once on that
 * unit; the requesting nexus's own task ends TASK ABORTED (its transport
 * answers the function), and neither it nor a nexus that had no task
 * gets a unit attention.  A task of a nexus index past the 64 the core
 * keeps state for, on another queue, ends TASK ABORTED too.
 */
static void test_clear_task_set_no_tas(void **state)
{
	struct fx *f = make(0, 0, 0);
	struct scsi_tgt_queue *q2;
	struct scsi_tgt_cmd c[9];

	(void)state;
	for (unsigned int n = 0; n < 4; n++)
		clear_power_on(f, n);
	assert_int_equal(scsi_tgt_queue_attach(f->t, &q2), 0);
	submit_read_q(q2, &c[8], 8, 0, SCSI_TGT_MAX_NEXUS + 6, 48);
	clear_five(f, q2, c);
	expect_aborted(&c[0], 0, false);
	expect_aborted(&c[1], 1, true);
	expect_aborted(&c[3], 3, true);
	expect_aborted(&c[4], 4, true);
	while (!ended[8])
		scsi_tgt_poll(q2);
	expect_aborted(&c[8], 8, false);
	assert_int_equal(tasks_aborted(f), 5);
	expect_ua(f, 0, 1, ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR);
	expect_ua(f, 0, 2, ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR);
	expect_no_ua(f, 0, 0);
	expect_no_ua(f, 0, 3);
	expect_no_ua(f, 1, 1);
	scsi_tgt_queue_detach(q2);
	unmake(f);
}

/*
 * delay_ms and a timeout rule: another nexus's dropped task and its task
 * held by the delay on the queue that clears end before the call returns,
 * without a response (TAS 0); the requesting nexus's held task ends TASK
 * ABORTED; a task held on another queue ends aborted, without a response,
 * when due.  Each counted once.
 */
static void test_clear_task_set_held(void **state)
{
	struct scsi_tgt_error_rule r = {
		.lun = 0, .type = SCSI_TGT_ERR_TIMEOUT, .opcode = READ_10, .count = -1,
	};
	struct scsi_tgt_queue *q2;
	struct scsi_tgt_cmd c[4];
	struct fx *f;

	(void)state;
	cfg_delay_ms = 50;
	f = make(0, 0, 0);
	cfg_delay_ms = 0;
	for (unsigned int n = 0; n < 3; n++)
		clear_power_on(f, n);
	assert_int_equal(scsi_tgt_queue_attach(f->t, &q2), 0);
	assert_int_equal(scsi_tgt_add_error_rule(f->t, &r), 0);
	submit_read_q(f->q, &c[0], 0, 0, 1, 0); /* dropped */
	submit_read_q(f->q, &c[1], 1, 0, 1, 8);
	submit_read_q(f->q, &c[2], 2, 0, 0, 16);
	submit_read_q(q2, &c[3], 3, 0, 2, 24);
	for (int k = 0; k < 10; k++) { /* the bios end, the delay holds */
		scsi_tgt_poll(f->q);
		scsi_tgt_poll(q2);
	}
	assert_int_equal(ended[0] + ended[1] + ended[2] + ended[3], 0);
	assert_int_equal(scsi_tgt_clear_task_set(f->q, 0, 0), 0);
	expect_aborted(&c[0], 0, true);
	expect_aborted(&c[1], 1, true);
	expect_aborted(&c[2], 2, false);
	assert_int_equal(ended[3], 0);
	settle_all(f->q, q2, 4);
	expect_aborted(&c[3], 3, true);
	assert_int_equal(tasks_aborted(f), 4);
	expect_ua(f, 0, 1, ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR);
	expect_ua(f, 0, 2, ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR);
	expect_no_ua(f, 0, 0);
	scsi_tgt_queue_detach(q2);
	unmake(f);
	for (int i = 0; i < 4; i++)
		assert_int_equal(ended[i], 1);
}

/*
 * LOGICAL UNIT RESET and TARGET RESET end another nexus's tasks as the
 * control mode page's TAS says (SAM-5 5.6, SPC-4 7.5.8), on the queue
 * that resets and on another: TAS 0 (the default) TASK ABORTED with
 * no_response, TAS 1 TASK ABORTED with its response; the requesting
 * nexus's own TASK ABORTED either way.  The other nexus hears of it by the
 * reset's unit attention (29/03), not by 2F/00; the requesting nexus gets
 * 29/03 too.
 */
static void test_reset_tas(void **state)
{
	struct fx *f = make(0, 0, 0);
	struct scsi_tgt_queue *q2;
	struct scsi_tgt_cmd c[5];

	(void)state;
	clear_power_on(f, 0);
	clear_power_on(f, 1);
	assert_int_equal(scsi_tgt_queue_attach(f->t, &q2), 0);
	/* TAS 0: LUN reset of unit 0 by nexus 0 */
	submit_read_q(f->q, &c[0], 0, 0, 0, 0);
	submit_read_q(f->q, &c[1], 1, 0, 1, 8);
	submit_read_q(q2, &c[2], 2, 0, 1, 16);
	submit_read_q(q2, &c[3], 3, 1, 1, 24); /* the other unit */
	assert_int_equal(scsi_tgt_lun_reset(f->q, 0, 0), 0);
	assert_int_equal(ended[0] + ended[1], 2);
	settle_all(f->q, q2, 4);
	expect_aborted(&c[0], 0, false);
	expect_aborted(&c[1], 1, true);
	expect_aborted(&c[2], 2, true);
	assert_int_equal(c[3].status, SAM_STAT_GOOD);
	expect_ua(f, 0, 1, ASC_LUN_RESET_OCCURRED);
	expect_no_ua(f, 1, 1);
	expect_ua(f, 0, 0, ASC_LUN_RESET_OCCURRED);
	expect_no_ua(f, 1, 0);

	/* TAS 1 on both units: a target reset by nexus 0 */
	set_tas(f, 0, 2);
	set_tas(f, 1, 2);
	memset(ended, 0, sizeof(ended));
	submit_read_q(f->q, &c[0], 0, 0, 0, 0);
	submit_read_q(f->q, &c[1], 1, 1, 1, 8);
	submit_read_q(q2, &c[2], 2, 0, 1, 16);
	submit_read_q(q2, &c[3], 3, 1, 1, 24);
	assert_int_equal(scsi_tgt_target_reset(f->q, 0), 0);
	settle_all(f->q, q2, 4);
	expect_aborted(&c[0], 0, false);
	expect_aborted(&c[1], 1, false);
	expect_aborted(&c[2], 2, false);
	expect_aborted(&c[3], 3, false);
	expect_ua(f, 0, 1, ASC_LUN_RESET_OCCURRED);
	expect_ua(f, 1, 1, ASC_LUN_RESET_OCCURRED);
	expect_ua(f, 0, 0, ASC_LUN_RESET_OCCURRED);
	expect_ua(f, 1, 0, ASC_LUN_RESET_OCCURRED);
	/* what starts after the reset is not aborted */
	submit_read_q(q2, &c[4], 4, 0, 1, 32);
	settle_all(f->q, q2, 5);
	assert_int_equal(c[4].status, SAM_STAT_GOOD);
	scsi_tgt_queue_detach(q2);
	unmake(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abort_dropped),
		cmocka_unit_test(test_abort_rejected),
		cmocka_unit_test(test_abort_media),
		cmocka_unit_test(test_lun_reset),
		cmocka_unit_test(test_resets_rejected),
		cmocka_unit_test(test_reset_delayed_counted_once),
		cmocka_unit_test(test_clear_task_set_tas),
		cmocka_unit_test(test_clear_task_set_no_tas),
		cmocka_unit_test(test_clear_task_set_held),
		cmocka_unit_test(test_reset_tas),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
