// SPDX-License-Identifier: MIT
/*
 * SCSI target core, task management (tmf.c): ABORT TASK of a dropped task
 * and of one whose media access is in flight, LOGICAL UNIT RESET and
 * TARGET RESET ending every task of the queue once with TASK ABORTED, the
 * unit attention (29/03) the other nexuses see, an SPC-2 reservation
 * released by the reset, rejected functions (tmf_fail), a queue reset, and
 * a task aborted by a reset under delay_ms counted once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "blkstack/ram.h"
#include "blkstack/scsi_tgt.h"

#define CAP (16u << 20)

struct fx {
	struct blk_dev *dev[2];
	struct scsi_tgt *t;
	struct scsi_tgt_queue *q;
};

static int ended[8];
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

static uint8_t cdbs[8][10];
static char bufs[8][4096];
static struct iovec iovs[8];

/* Submit READ(10) of one 4 KiB at block @lba of @lun as command @i. */
static void submit_read(struct fx *f, struct scsi_tgt_cmd *c, unsigned int i,
			uint64_t lun, unsigned int nexus, uint32_t lba)
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
	assert_int_equal(scsi_tgt_submit(f->q, c), 0);
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
	/* the reservation went with the reset; nexus 1 sees 29/03, the
	 * nexus that asked does not */
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
	assert_int_equal(tasks_aborted(f), 2);
	scsi_tgt_queue_detach(q2);
	unmake(f);
	assert_int_equal(ended[0] + ended[1], 2);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
