// SPDX-License-Identifier: MIT
/*
 * SCSI target core, reservations and third-party copy (pr.c, xcopy.c):
 * PERSISTENT RESERVE OUT's service actions and refused fields, PRgeneration,
 * PERSISTENT RESERVE IN's four service actions, the six types' access
 * rules for holder, registered and unregistered nexuses (SPC-4 5.9.1
 * table 63, SBC-3 table 13), the unit attentions of RELEASE, CLEAR,
 * PREEMPT and unregistration, SPC-2 RESERVE/RELEASE and how they meet
 * persistent reservations, and EXTENDED COPY between two ram units (data
 * read back, chunking, RECEIVE COPY RESULTS) with its error cases (a
 * failing destination, write protect), and reservations changing on one
 * thread while another writes (for TSan).  PREEMPT AND ABORT: the
 * preempted nexus's tasks in flight on two queues, dropped and held by
 * the delay end TASK ABORTED once, with TAS 1 or without a response and
 * 2F/00 with TAS 0, the others' GOOD; the key cases that preempt nothing
 * abort nothing; and preempts on one thread while the preempted nexus
 * reads and writes on another.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "blkstack/null.h"
#include "blkstack/ram.h"
#include "blkstack/scsi_tgt.h"

#define CAP (16u << 20) /* 32768 blocks of 512 */
#define NB (CAP / 512)

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

static uint8_t tur(struct fx *f, struct scsi_tgt_cmd *c, uint64_t lun,
		   unsigned int nexus)
{
	static const uint8_t cdb[6] = { TEST_UNIT_READY };

	return run(f, c, lun, nexus, cdb, 6, SCSI_DIR_NONE, NULL, 0);
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

/* the unit attention pending for @nexus on @lun is @asc, then none */
static void expect_ua(struct fx *f, uint64_t lun, unsigned int nexus,
		      uint16_t asc)
{
	struct scsi_tgt_cmd c;

	tur(f, &c, lun, nexus);
	expect_sense(&c, SK_UNIT_ATTENTION, asc);
	assert_int_equal(tur(f, &c, lun, nexus), SAM_STAT_GOOD);
}

static void expect_no_ua(struct fx *f, uint64_t lun, unsigned int nexus)
{
	struct scsi_tgt_cmd c;

	assert_int_equal(tur(f, &c, lun, nexus), SAM_STAT_GOOD);
}

/* LUN 0 ram; LUN 1 ram, or null failing every request; two hardware
 * queues each (a queue per thread); every command held @delay_ms */
static struct fx *setup_cfg(bool failing, bool wp, uint32_t delay_ms)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct blk_ram_config rc = { 0 };
	struct scsi_tgt_config tc = { 0 };
	struct scsi_tgt_cmd c;
	char err[256];

	rc.queue.capacity = CAP;
	rc.queue.queue_depth = 64;
	rc.queue.nr_hw_queues = 2;
	assert_int_equal(blk_ram_create(&rc, &f->dev[0]), 0);
	if (failing) {
		struct blk_null_config nc = { 0 };

		nc.queue = rc.queue;
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
	tc.delay_ms = delay_ms;
	assert_int_equal(scsi_tgt_create(&tc, &f->t, err, sizeof(err)), 0);
	assert_int_equal(scsi_tgt_queue_attach(f->t, &f->q), 0);
	/* the power-on unit attention of nexuses 0..3 on both units */
	for (unsigned int n = 0; n < 4; n++) {
		for (uint64_t lun = 0; lun < 2; lun++) {
			tur(f, &c, lun, n);
			expect_sense(&c, SK_UNIT_ATTENTION, ASC_POWER_ON_RESET);
		}
	}
	return f;
}

static int setup(void **state)
{
	*state = setup_cfg(false, false, 0);
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

/* PERSISTENT RESERVE OUT with a 24-byte parameter list */
static uint8_t prout_full(struct fx *f, struct scsi_tgt_cmd *c, uint64_t lun,
			  unsigned int nexus, uint8_t sa, uint8_t type,
			  uint64_t key, uint64_t sakey, uint8_t flags,
			  uint32_t plen)
{
	uint8_t cdb[10] = { PERSISTENT_RESERVE_OUT, sa, type };
	static uint8_t pl[64];

	memset(pl, 0, sizeof(pl));
	scsi_put_be64(pl, key);
	scsi_put_be64(pl + 8, sakey);
	pl[20] = flags;
	scsi_put_be32(cdb + 5, plen);
	return run(f, c, lun, nexus, cdb, 10, SCSI_DIR_TO_DEVICE, pl, plen);
}

static uint8_t prout(struct fx *f, unsigned int nexus, uint8_t sa, uint8_t type,
		     uint64_t key, uint64_t sakey)
{
	struct scsi_tgt_cmd c;

	return prout_full(f, &c, 0, nexus, sa, type, key, sakey, 0, 24);
}

static uint8_t prin(struct fx *f, struct scsi_tgt_cmd *c, unsigned int nexus,
		    uint8_t sa, uint8_t *buf, uint16_t len)
{
	uint8_t cdb[10] = { PERSISTENT_RESERVE_IN, sa };

	scsi_put_be16(cdb + 7, len);
	memset(buf, 0, len);
	return run(f, c, 0, nexus, cdb, 10, SCSI_DIR_FROM_DEVICE, buf, len);
}

/* the nexus that looks (never registered, so never told anything) */
#define OBSERVER 3

static uint32_t generation(struct fx *f)
{
	struct scsi_tgt_cmd c;
	uint8_t b[8];

	assert_int_equal(prin(f, &c, OBSERVER, PRIN_READ_KEYS, b, 8), SAM_STAT_GOOD);
	return scsi_get_be32(b);
}

/* the keys READ KEYS lists, in *@keys; their count */
static unsigned int read_keys(struct fx *f, uint64_t *keys)
{
	struct scsi_tgt_cmd c;
	uint8_t b[8 + 8 * 64];
	unsigned int n, i;

	assert_int_equal(prin(f, &c, OBSERVER, PRIN_READ_KEYS, b, sizeof(b)), SAM_STAT_GOOD);
	n = scsi_get_be32(b + 4) / 8;
	for (i = 0; i < n; i++)
		keys[i] = scsi_get_be64(b + 8 + 8 * i);
	return n;
}

/* READ RESERVATION: the type held (0: none) and its key */
static uint8_t read_reservation(struct fx *f, uint64_t *key)
{
	struct scsi_tgt_cmd c;
	uint8_t b[24];

	assert_int_equal(prin(f, &c, OBSERVER, PRIN_READ_RESERVATION, b, 24), SAM_STAT_GOOD);
	if (!scsi_get_be32(b + 4))
		return 0;
	assert_int_equal(scsi_get_be32(b + 4), 16);
	*key = scsi_get_be64(b + 8);
	assert_int_equal(b[21] >> 4, 0); /* LU_SCOPE */
	return b[21] & 0x0f;
}

/*
 * REGISTER AND MOVE (SPC-4 5.9.8): @nexus, holder with @key, moves the
 * reservation (@type) to the nexus named @name (an iSCSI TransportID,
 * format 00b), registering it with @sakey; @unreg drops its own.
 */
static uint8_t register_and_move(struct fx *f, struct scsi_tgt_cmd *c,
				 unsigned int nexus, uint8_t type, uint64_t key,
				 uint64_t sakey, bool unreg, const char *name)
{
	uint8_t cdb[10] = { PERSISTENT_RESERVE_OUT, PROUT_REGISTER_AND_MOVE, type };
	static uint8_t pl[24 + 64];
	uint32_t n = (uint32_t)((strlen(name) + 1 + 3) & ~3u), tl;

	if (n < 20)
		n = 20;
	tl = 4 + n;
	memset(pl, 0, sizeof(pl));
	scsi_put_be64(pl, key);
	scsi_put_be64(pl + 8, sakey);
	pl[17] = unreg ? 0x02 : 0;
	scsi_put_be32(pl + 20, tl);
	pl[24] = 0x05; /* iSCSI, format 00b */
	scsi_put_be16(pl + 26, (uint16_t)n);
	memcpy(pl + 28, name, strlen(name));
	scsi_put_be32(cdb + 5, 24 + tl);
	return run(f, c, 0, nexus, cdb, 10, SCSI_DIR_TO_DEVICE, pl, 24 + tl);
}

static void test_register_and_move(void **state)
{
	struct fx *f = *state;
	struct scsi_tgt_cmd c;
	uint64_t keys[8], key;
	uint32_t gen;
	static const uint8_t tid2[28] = {
		0x05, 0, 0, 24, 'i', 'q', 'n', '.', 't', 'w', 'o',
	};

	/* nexus 2 has a name of its own; nexus 1 the default one */
	assert_int_equal(scsi_tgt_set_nexus_id(f->t, 2, tid2, sizeof(tid2)), 0);
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xa1), SAM_STAT_GOOD);
	/* no reservation held: conflict */
	assert_int_equal(register_and_move(f, &c, 0, PR_TYPE_WE, 0xa0, 0xb2, false,
					   "iqn.two"), SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_WE, 0xa0, 0), SAM_STAT_GOOD);
	/* not the holder, or a wrong key: conflict */
	assert_int_equal(register_and_move(f, &c, 1, PR_TYPE_WE, 0xa1, 0xb2, false,
					   "iqn.two"), SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(register_and_move(f, &c, 0, PR_TYPE_WE, 0xa9, 0xb2, false,
					   "iqn.two"), SAM_STAT_RESERVATION_CONFLICT);
	/* a key of 0, a name nobody has, its own name: invalid parameter */
	register_and_move(f, &c, 0, PR_TYPE_WE, 0xa0, 0, false, "iqn.two");
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	register_and_move(f, &c, 0, PR_TYPE_WE, 0xa0, 0xb2, false, "iqn.nobody");
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	register_and_move(f, &c, 0, PR_TYPE_WE, 0xa0, 0xb2, false,
			  "iqn.2026-01.org.blkstack:nexus.0");
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	gen = generation(f);
	/* to nexus 2 (named), as EA, keeping its own registration */
	assert_int_equal(register_and_move(f, &c, 0, PR_TYPE_EA, 0xa0, 0xb2, false,
					   "iqn.two"), SAM_STAT_GOOD);
	assert_int_equal(generation(f), gen + 1);
	assert_int_equal(read_reservation(f, &key), PR_TYPE_EA);
	assert_true(key == 0xb2);
	assert_int_equal(read_keys(f, keys), 3);
	/* nexus 2 holds it now: nexus 0 may not read under EA */
	{
		uint8_t cdb[10] = { READ_10, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
		static char buf[512];

		assert_int_equal(run(f, &c, 0, 0, cdb, 10, SCSI_DIR_FROM_DEVICE, buf, 512),
				 SAM_STAT_RESERVATION_CONFLICT);
		assert_int_equal(run(f, &c, 0, 2, cdb, 10, SCSI_DIR_FROM_DEVICE, buf, 512),
				 SAM_STAT_GOOD);
	}
	/* on to nexus 1 (the default name), and nexus 2 unregisters */
	assert_int_equal(register_and_move(f, &c, 2, PR_TYPE_WE, 0xb2, 0xc1, true,
					   "iqn.2026-01.org.blkstack:nexus.1"), SAM_STAT_GOOD);
	assert_int_equal(read_reservation(f, &key), PR_TYPE_WE);
	assert_true(key == 0xc1);
	assert_int_equal(read_keys(f, keys), 2); /* nexus 0 and nexus 1 */
}

/* ------------------------------------------------------------ REGISTER */

static void test_register(void **state)
{
	struct fx *f = *state;
	struct scsi_tgt_cmd c;
	uint64_t keys[64];
	uint32_t g = generation(f);

	assert_int_equal(g, 0);
	/* unregistered: a reservation key other than 0 conflicts */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 5, 0xaa),
			 SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(generation(f), 0);
	/* unregistering nothing: GOOD, no change */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0), SAM_STAT_GOOD);
	assert_int_equal(generation(f), 0);
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xaa), SAM_STAT_GOOD);
	assert_int_equal(generation(f), 1);
	assert_int_equal(prout(f, 1, PROUT_REGISTER_AND_IGNORE, 0, 0x1234, 0xbb),
			 SAM_STAT_GOOD);
	assert_int_equal(generation(f), 2);
	assert_int_equal(read_keys(f, keys), 2);
	assert_true(keys[0] == 0xaa && keys[1] == 0xbb);
	/* registered: the wrong key conflicts; the right one changes it */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0xab, 0xcc),
			 SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0xaa, 0xcc), SAM_STAT_GOOD);
	assert_int_equal(generation(f), 3);
	/* REGISTER AND IGNORE EXISTING KEY: any key */
	assert_int_equal(prout(f, 0, PROUT_REGISTER_AND_IGNORE, 0, 0x999, 0xdd),
			 SAM_STAT_GOOD);
	assert_int_equal(generation(f), 4);
	assert_int_equal(read_keys(f, keys), 2);
	assert_true(keys[0] == 0xdd);
	/* unregister */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0xdd, 0), SAM_STAT_GOOD);
	assert_int_equal(generation(f), 5);
	assert_int_equal(read_keys(f, keys), 1);
	assert_true(keys[0] == 0xbb);
	/* the same key on two nexuses: two registrations */
	assert_int_equal(prout(f, 2, PROUT_REGISTER, 0, 0, 0xbb), SAM_STAT_GOOD);
	assert_int_equal(read_keys(f, keys), 2);
	/* READ KEYS truncated by the allocation length: the count stays */
	{
		uint8_t b[12];

		assert_int_equal(prin(f, &c, 0, PRIN_READ_KEYS, b, 12), SAM_STAT_GOOD);
		assert_int_equal(scsi_get_be32(b + 4), 16);
	}
	/* the other unit has its own */
	{
		uint8_t cdb[10] = { PERSISTENT_RESERVE_IN, PRIN_READ_KEYS };
		uint8_t b[8];

		scsi_put_be16(cdb + 7, 8);
		assert_int_equal(run(f, &c, 1, 0, cdb, 10, SCSI_DIR_FROM_DEVICE, b, 8),
				 SAM_STAT_GOOD);
		assert_int_equal(scsi_get_be32(b), 0);
		assert_int_equal(scsi_get_be32(b + 4), 0);
	}
}

static void test_prout_refused(void **state)
{
	struct fx *f = *state;
	struct scsi_tgt_cmd c;
	uint8_t cdb[10] = { PERSISTENT_RESERVE_OUT, 0 };

	/* APTPL (not persisted: refused), ALL_TG_PT, SPEC_I_PT */
	prout_full(f, &c, 0, 0, PROUT_REGISTER, 0, 0, 1, 0x01, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	prout_full(f, &c, 0, 0, PROUT_REGISTER_AND_IGNORE, 0, 0, 1, 0x04, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	prout_full(f, &c, 0, 0, PROUT_REGISTER, 0, 0, 1, 0x08, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	assert_int_equal(generation(f), 0);
	/* parameter list length other than 24, or less Data-Out */
	prout_full(f, &c, 0, 0, PROUT_REGISTER, 0, 0, 1, 0, 0);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	prout_full(f, &c, 0, 0, PROUT_REGISTER, 0, 0, 1, 0, 28);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	/* REGISTER AND MOVE without a TransportID; unknown service actions */
	prout_full(f, &c, 0, 0, PROUT_REGISTER_AND_MOVE, PR_TYPE_WE, 0, 1, 0, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	prout_full(f, &c, 0, 0, 0x1f, 0, 0, 1, 0, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	/* RESERVE: a scope other than LU_SCOPE, a type that is none */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 7), SAM_STAT_GOOD);
	prout_full(f, &c, 0, 0, PROUT_RESERVE, 0x10 | PR_TYPE_WE, 7, 0, 0, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	prout_full(f, &c, 0, 0, PROUT_RESERVE, 2, 7, 0, 0, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	/* APTPL is ignored outside REGISTER */
	assert_int_equal(prout_full(f, &c, 0, 0, PROUT_RESERVE, PR_TYPE_WE, 7, 0, 0x01, 24),
			 SAM_STAT_GOOD);
	/* a nexus past the ones tracked cannot register */
	prout_full(f, &c, 0, SCSI_TGT_MAX_NEXUS, PROUT_REGISTER, 0, 0, 9, 0, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INSUFFICIENT_REG_RESOURCES);
	/* PERSISTENT RESERVE IN: unknown service action */
	cdb[0] = PERSISTENT_RESERVE_IN;
	cdb[1] = 4;
	cdb[8] = 8;
	{
		uint8_t b[8];

		run(f, &c, 0, 0, cdb, 10, SCSI_DIR_FROM_DEVICE, b, 8);
		expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	}
}

/* ------------------------------------------------ RESERVE and RELEASE */

static void test_reserve_release(void **state)
{
	struct fx *f = *state;
	struct scsi_tgt_cmd c;
	uint64_t key = 0;
	uint32_t g;

	/* unregistered: conflict */
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_WE, 0, 0),
			 SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xa1), SAM_STAT_GOOD);
	g = generation(f);
	/* the wrong key: conflict */
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_WE, 0xa1, 0),
			 SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_WE, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(read_reservation(f, &key), PR_TYPE_WE);
	assert_true(key == 0xa0);
	/* the holder again with the same type: GOOD; another type: conflict */
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_WE, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_EA, 0xa0, 0),
			 SAM_STAT_RESERVATION_CONFLICT);
	/* another registrant: conflict */
	assert_int_equal(prout(f, 1, PROUT_RESERVE, PR_TYPE_WE, 0xa1, 0),
			 SAM_STAT_RESERVATION_CONFLICT);
	/* RELEASE by a registrant that does not hold it: GOOD, nothing */
	assert_int_equal(prout(f, 1, PROUT_RELEASE, PR_TYPE_WE, 0xa1, 0), SAM_STAT_GOOD);
	assert_int_equal(read_reservation(f, &key), PR_TYPE_WE);
	/* RELEASE by an unregistered nexus: conflict */
	assert_int_equal(prout(f, 2, PROUT_RELEASE, PR_TYPE_WE, 0, 0),
			 SAM_STAT_RESERVATION_CONFLICT);
	/* the holder with the wrong type */
	prout_full(f, &c, 0, 0, PROUT_RELEASE, PR_TYPE_EA, 0xa0, 0, 0, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_RELEASE_OF_PR);
	assert_int_equal(prout(f, 0, PROUT_RELEASE, PR_TYPE_WE, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(read_reservation(f, &key), 0);
	/* nothing held: RELEASE is GOOD */
	assert_int_equal(prout(f, 0, PROUT_RELEASE, PR_TYPE_WE, 0xa0, 0), SAM_STAT_GOOD);
	/* RESERVE and RELEASE leave PRgeneration alone; WE/EA release: no UA */
	assert_int_equal(generation(f), g);
	expect_no_ua(f, 0, 1);
	/* every type reserves and releases, READ RESERVATION says which;
	 * all registrants: key 0 */
	for (uint8_t t = 1; t <= 8; t++) {
		if (t == 2 || t == 4)
			continue;
		assert_int_equal(prout(f, 0, PROUT_RESERVE, t, 0xa0, 0), SAM_STAT_GOOD);
		assert_int_equal(read_reservation(f, &key), t);
		assert_true(key == (t == PR_TYPE_WE_AR || t == PR_TYPE_EA_AR ? 0 : 0xa0));
		assert_int_equal(prout(f, 0, PROUT_RELEASE, t, 0xa0, 0), SAM_STAT_GOOD);
		assert_int_equal(read_reservation(f, &key), 0);
	}
}

/* ------------------------------------------------- the conflict table */

enum { R_OK = 1, W_OK = 2 };

/* what @nexus may do on LUN 0: R_OK | W_OK; the commands every type lets
 * through are checked to pass */
static unsigned int access_of(struct fx *f, unsigned int nexus)
{
	static uint8_t buf[4096];
	uint8_t rd[10] = { READ_10, 0, 0, 0, 0, 8, 0, 0, 1, 0 };
	uint8_t wr[10] = { WRITE_10, 0, 0, 0, 0, 8, 0, 0, 1, 0 };
	uint8_t ms[6] = { MODE_SENSE_6, 0, 0x3f, 0, 255, 0 };
	uint8_t sc[10] = { SYNCHRONIZE_CACHE_10 };
	uint8_t inq[6] = { INQUIRY, 0, 0, 0, 96, 0 };
	uint8_t rc[10] = { READ_CAPACITY_10 };
	uint8_t rl[12] = { REPORT_LUNS, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
	uint8_t rs[6] = { REQUEST_SENSE, 0, 0, 0, 18, 0 };
	struct scsi_tgt_cmd c;
	unsigned int a = 0;
	uint8_t r, w, m, s;

	r = run(f, &c, 0, nexus, rd, 10, SCSI_DIR_FROM_DEVICE, buf, 512);
	w = run(f, &c, 0, nexus, wr, 10, SCSI_DIR_TO_DEVICE, buf, 512);
	m = run(f, &c, 0, nexus, ms, 6, SCSI_DIR_FROM_DEVICE, buf, 255);
	s = run(f, &c, 0, nexus, sc, 10, SCSI_DIR_NONE, NULL, 0);
	assert_true(r == SAM_STAT_GOOD || r == SAM_STAT_RESERVATION_CONFLICT);
	assert_true(w == SAM_STAT_GOOD || w == SAM_STAT_RESERVATION_CONFLICT);
	/* MODE SENSE reads, SYNCHRONIZE CACHE writes */
	assert_int_equal(m, r);
	assert_int_equal(s, w);
	if (r == SAM_STAT_GOOD)
		a |= R_OK;
	if (w == SAM_STAT_GOOD)
		a |= W_OK;
	assert_int_equal(tur(f, &c, 0, nexus), SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, nexus, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 96),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, nexus, rc, 10, SCSI_DIR_FROM_DEVICE, buf, 8),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, nexus, rl, 12, SCSI_DIR_FROM_DEVICE, buf, 256),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, nexus, rs, 6, SCSI_DIR_FROM_DEVICE, buf, 18),
			 SAM_STAT_GOOD);
	assert_int_equal(prin(f, &c, nexus, PRIN_READ_KEYS, buf, 64), SAM_STAT_GOOD);
	/* the other unit is not reserved */
	assert_int_equal(run(f, &c, 1, nexus, wr, 10, SCSI_DIR_TO_DEVICE, buf, 512),
			 SAM_STAT_GOOD);
	return a;
}

static void test_conflict_table(void **state)
{
	struct fx *f = *state;
	/* SPC-4 5.9.1 table 63 / SBC-3 table 13: holder (nexus 0),
	 * registered (1), not registered (2) */
	static const struct {
		uint8_t type;
		unsigned int reg, unreg;
	} tab[] = {
		{ PR_TYPE_WE, R_OK, R_OK },
		{ PR_TYPE_EA, 0, 0 },
		{ PR_TYPE_WE_RO, R_OK | W_OK, R_OK },
		{ PR_TYPE_EA_RO, R_OK | W_OK, 0 },
		{ PR_TYPE_WE_AR, R_OK | W_OK, R_OK },
		{ PR_TYPE_EA_AR, R_OK | W_OK, 0 },
	};

	/* registrations alone restrict nothing */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xa1), SAM_STAT_GOOD);
	assert_int_equal(access_of(f, 2), R_OK | W_OK);
	for (unsigned int i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		assert_int_equal(prout(f, 0, PROUT_RESERVE, tab[i].type, 0xa0, 0),
				 SAM_STAT_GOOD);
		assert_int_equal(access_of(f, 0), R_OK | W_OK);
		assert_int_equal(access_of(f, 1), tab[i].reg);
		assert_int_equal(access_of(f, 2), tab[i].unreg);
		/* PERSISTENT RESERVE OUT passes the table: an unregistered
		 * nexus registers, then has a registrant's rights */
		assert_int_equal(prout(f, 2, PROUT_REGISTER, 0, 0, 0xa2), SAM_STAT_GOOD);
		assert_int_equal(access_of(f, 2), tab[i].reg);
		assert_int_equal(prout(f, 2, PROUT_REGISTER, 0, 0xa2, 0), SAM_STAT_GOOD);
		assert_int_equal(prout(f, 0, PROUT_RELEASE, tab[i].type, 0xa0, 0),
				 SAM_STAT_GOOD);
		assert_int_equal(access_of(f, 2), R_OK | W_OK);
		/* RO and AR releases tell the other registrants */
		if (tab[i].type >= PR_TYPE_WE_RO)
			expect_ua(f, 0, 1, ASC_RESERVATIONS_RELEASED);
		expect_no_ua(f, 0, 0);
		expect_no_ua(f, 0, 2);
	}
}

/* ------------------------------------- unregistration, CLEAR, PREEMPT */

static void test_unregister_releases(void **state)
{
	struct fx *f = *state;
	uint64_t key;

	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xa1), SAM_STAT_GOOD);
	/* registrants only: the holder's going releases it, the others
	 * are told */
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_WE_RO, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(read_reservation(f, &key), 0);
	expect_ua(f, 0, 1, ASC_RESERVATIONS_RELEASED);
	expect_no_ua(f, 0, 0);
	/* write exclusive: released quietly */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_WE, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 0, PROUT_REGISTER_AND_IGNORE, 0, 0, 0), SAM_STAT_GOOD);
	assert_int_equal(read_reservation(f, &key), 0);
	expect_no_ua(f, 0, 1);
	/* all registrants: held until the last registrant goes */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_RESERVE, PR_TYPE_EA_AR, 0xa1, 0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0xa1, 0), SAM_STAT_GOOD);
	assert_int_equal(read_reservation(f, &key), PR_TYPE_EA_AR);
	assert_int_equal(access_of(f, 0), R_OK | W_OK);
	assert_int_equal(access_of(f, 1), 0);
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(read_reservation(f, &key), 0);
	assert_int_equal(access_of(f, 1), R_OK | W_OK);
}

static void test_clear(void **state)
{
	struct fx *f = *state;
	uint64_t keys[64], key;
	uint32_t g;

	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xa1), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 2, PROUT_REGISTER, 0, 0, 0xa2), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_EA, 0xa0, 0), SAM_STAT_GOOD);
	g = generation(f);
	/* unregistered, or the wrong key: conflict */
	assert_int_equal(prout(f, 3, PROUT_CLEAR, 0, 0, 0), SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(prout(f, 1, PROUT_CLEAR, 0, 0xa0, 0),
			 SAM_STAT_RESERVATION_CONFLICT);
	/* a registrant that does not hold it clears everything */
	assert_int_equal(prout(f, 1, PROUT_CLEAR, 0, 0xa1, 0), SAM_STAT_GOOD);
	assert_int_equal(generation(f), g + 1);
	assert_int_equal(read_keys(f, keys), 0);
	assert_int_equal(read_reservation(f, &key), 0);
	expect_ua(f, 0, 0, ASC_RESERVATIONS_PREEMPTED);
	expect_ua(f, 0, 2, ASC_RESERVATIONS_PREEMPTED);
	expect_no_ua(f, 0, 1);
	expect_no_ua(f, 0, 3);
	expect_no_ua(f, 1, 0); /* the other unit: nothing */
	assert_int_equal(access_of(f, 3), R_OK | W_OK);
}

static void test_preempt(void **state)
{
	struct fx *f = *state;
	struct scsi_tgt_cmd c;
	uint64_t keys[64], key;
	uint32_t g;

	/* no reservation: the registrations with the key go (libiscsi's
	 * prout_preempt_rm_reg) */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xa1), SAM_STAT_GOOD);
	g = generation(f);
	assert_int_equal(prout(f, 1, PROUT_PREEMPT, PR_TYPE_EA, 0xa1, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(generation(f), g + 1);
	assert_int_equal(read_keys(f, keys), 1);
	assert_true(keys[0] == 0xa1);
	assert_int_equal(read_reservation(f, &key), 0);
	expect_ua(f, 0, 0, ASC_REGISTRATIONS_PREEMPTED);
	expect_no_ua(f, 0, 1);
	/* a key nobody has: conflict; key 0 without an all registrants
	 * reservation: INVALID FIELD IN PARAMETER LIST */
	assert_int_equal(prout(f, 1, PROUT_PREEMPT, PR_TYPE_EA, 0xa1, 0x77),
			 SAM_STAT_RESERVATION_CONFLICT);
	prout_full(f, &c, 0, 1, PROUT_PREEMPT, PR_TYPE_EA, 0xa1, 0, 0, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	/* the holder's key: the reservation moves, with the new type; a
	 * registrant that stays is told its reservation changed */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 2, PROUT_REGISTER, 0, 0, 0xa2), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_WE, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_PREEMPT_AND_ABORT, PR_TYPE_EA, 0xa1, 0xa0),
			 SAM_STAT_GOOD);
	assert_int_equal(read_reservation(f, &key), PR_TYPE_EA);
	assert_true(key == 0xa1);
	assert_int_equal(read_keys(f, keys), 2);
	expect_ua(f, 0, 0, ASC_REGISTRATIONS_PREEMPTED);
	expect_ua(f, 0, 2, ASC_RESERVATIONS_RELEASED);
	expect_no_ua(f, 0, 1);
	assert_int_equal(access_of(f, 0), 0);
	assert_int_equal(access_of(f, 1), R_OK | W_OK);
	/* not the holder's key: only the registration goes */
	assert_int_equal(prout(f, 1, PROUT_PREEMPT, PR_TYPE_EA, 0xa1, 0xa2), SAM_STAT_GOOD);
	assert_int_equal(read_reservation(f, &key), PR_TYPE_EA);
	assert_int_equal(read_keys(f, keys), 1);
	expect_ua(f, 0, 2, ASC_REGISTRATIONS_PREEMPTED);
	/* all registrants, key 0: every other registration goes and the
	 * preempting nexus holds the type it asks for */
	assert_int_equal(prout(f, 1, PROUT_CLEAR, 0, 0xa1, 0), SAM_STAT_GOOD);
	for (unsigned int n = 0; n < 3; n++) {
		assert_int_equal(prout(f, n, PROUT_REGISTER, 0, 0, 0xa0 + n), SAM_STAT_GOOD);
	}
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_WE_AR, 0xa0, 0), SAM_STAT_GOOD);
	g = generation(f);
	assert_int_equal(prout(f, 2, PROUT_PREEMPT, PR_TYPE_WE, 0xa2, 0), SAM_STAT_GOOD);
	assert_int_equal(generation(f), g + 1);
	assert_int_equal(read_reservation(f, &key), PR_TYPE_WE);
	assert_true(key == 0xa2);
	assert_int_equal(read_keys(f, keys), 1);
	expect_ua(f, 0, 0, ASC_REGISTRATIONS_PREEMPTED);
	expect_ua(f, 0, 1, ASC_REGISTRATIONS_PREEMPTED);
	expect_no_ua(f, 0, 2);
	/* the wrong key of the preempting nexus: conflict */
	assert_int_equal(prout(f, 2, PROUT_PREEMPT, PR_TYPE_WE, 0xa0, 0xa2),
			 SAM_STAT_RESERVATION_CONFLICT);
}

/* ---------------------------------------------------- PREEMPT AND ABORT */

/* A command left outstanding on a queue: READ or WRITE (10) of one block
 * (ram ends its bios at the next poll of that queue, not before). */
struct bg {
	struct scsi_tgt_cmd c;
	uint8_t cdb[10];
	struct iovec iov;
	uint8_t buf[512];
	int ended;
};

static void bg_done(struct scsi_tgt_cmd *c)
{
	((struct bg *)c->priv)->ended++;
}

static void bg_submit(struct scsi_tgt_queue *q, struct bg *b, uint64_t lun,
		      unsigned int nexus, uint8_t op, uint32_t lba)
{
	memset(b, 0, sizeof(*b));
	b->cdb[0] = op;
	scsi_put_be32(b->cdb + 2, lba);
	scsi_put_be16(b->cdb + 7, 1);
	memset(b->buf, 0x5a, sizeof(b->buf));
	b->iov.iov_base = b->buf;
	b->iov.iov_len = sizeof(b->buf);
	b->c.lun = lun;
	b->c.nexus = nexus;
	b->c.cdb = b->cdb;
	b->c.cdb_len = 10;
	b->c.dir = op == WRITE_10 ? SCSI_DIR_TO_DEVICE : SCSI_DIR_FROM_DEVICE;
	b->c.iov = &b->iov;
	b->c.iovcnt = 1;
	b->c.xfer_len = sizeof(b->buf);
	b->c.done = bg_done;
	b->c.priv = b;
	assert_int_equal(scsi_tgt_submit(q, &b->c), 0);
}

/* Poll @q and @q2 until each of @b[0..@n) has ended (at most 10 s). */
static void bg_settle(struct scsi_tgt_queue *q, struct scsi_tgt_queue *q2,
		      struct bg *const *b, unsigned int n)
{
	struct timespec t0, t;
	unsigned int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (i = 0; i < n && b[i]->ended; i++)
			;
		if (i == n)
			return;
		scsi_tgt_poll(q);
		if (q2)
			scsi_tgt_poll(q2);
		clock_gettime(CLOCK_MONOTONIC, &t);
		assert_true(t.tv_sec - t0.tv_sec < 10);
	}
}

static void expect_aborted(const struct bg *b, bool no_response)
{
	assert_int_equal(b->ended, 1);
	assert_int_equal(b->c.status, SAM_STAT_TASK_ABORTED);
	assert_int_equal(b->c.sense_len, 0);
	assert_int_equal(b->c.resid, b->c.xfer_len);
	assert_int_equal(b->c.no_response, no_response);
}

static void expect_good(const struct bg *b)
{
	assert_int_equal(b->ended, 1);
	assert_int_equal(b->c.status, SAM_STAT_GOOD);
	assert_false(b->c.no_response);
}

static uint64_t tasks_aborted(struct fx *f)
{
	struct scsi_tgt_stats st;

	scsi_tgt_get_stats(f->t, &st);
	return st.tasks_aborted;
}

/* The control mode page's TAS bit of @lun set through MODE SELECT (6) by
 * nexus 0, read back; the MODE PARAMETERS CHANGED of nexuses 1..3 taken */
static void set_tas(struct fx *f, uint64_t lun)
{
	uint8_t ms[6] = { MODE_SENSE_6, 0x08, 0x0a, 0, 255, 0 };
	uint8_t sel[6] = { MODE_SELECT_6, 0x10, 0, 0, 16, 0 };
	static uint8_t buf[255], pl[16];
	struct scsi_tgt_cmd c;

	assert_int_equal(run(f, &c, lun, 0, ms, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[4 + 5] & 0x40, 0); /* TAS 0 by default */
	memset(pl, 0, sizeof(pl));
	memcpy(pl + 4, buf + 4, 12);
	pl[4 + 5] |= 0x40;
	assert_int_equal(run(f, &c, lun, 0, sel, 6, SCSI_DIR_TO_DEVICE, pl, 16),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, lun, 0, ms, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(buf[4 + 5] & 0x40, 0x40);
	for (unsigned int n = 1; n < 4; n++)
		expect_ua(f, lun, n, ASC_MODE_PARAMETERS_CHANGED);
}

/* Take every unit attention pending for @nexus on @lun. */
static void drain_ua(struct fx *f, uint64_t lun, unsigned int nexus)
{
	struct scsi_tgt_cmd c;

	for (int i = 0; i < 16 && tur(f, &c, lun, nexus) != SAM_STAT_GOOD; i++)
		;
	assert_int_equal(tur(f, &c, lun, nexus), SAM_STAT_GOOD);
}

/*
 * SPC-4 5.9.11.5 with TAS set: the tasks of the preempted nexus on the
 * unit, in flight on the queue that preempts and on another, end TASK
 * ABORTED, once; its task on the other unit, the preempting nexus's own
 * and a third registrant's end GOOD; what it starts after is not aborted.
 */
static void test_preempt_abort_tas(void **state)
{
	struct fx *f = *state;
	struct scsi_tgt_queue *q2;
	struct bg a, b1, b2, b3, c2, after;
	struct bg *const all[] = { &a, &b1, &b2, &b3, &c2 };
	struct bg *const one[] = { &after };
	uint64_t keys[64], key;
	uint32_t g;

	set_tas(f, 0);
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xb1), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 2, PROUT_REGISTER, 0, 0, 0xc2), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_RESERVE, PR_TYPE_WE, 0xb1, 0), SAM_STAT_GOOD);
	assert_int_equal(scsi_tgt_queue_attach(f->t, &q2), 0);
	bg_submit(f->q, &a, 0, 0, READ_10, 10);
	bg_submit(f->q, &b1, 0, 1, WRITE_10, 11);
	bg_submit(q2, &b2, 0, 1, WRITE_10, 12);
	bg_submit(f->q, &b3, 1, 1, WRITE_10, 13); /* the other unit */
	bg_submit(q2, &c2, 0, 2, READ_10, 14);
	for (unsigned int i = 0; i < 5; i++)
		assert_int_equal(all[i]->ended, 0); /* in flight */
	g = generation(f);
	assert_int_equal(prout(f, 0, PROUT_PREEMPT_AND_ABORT, PR_TYPE_WE, 0xa0, 0xb1),
			 SAM_STAT_GOOD);
	bg_settle(f->q, q2, all, 5);
	expect_aborted(&b1, false);
	expect_aborted(&b2, false);
	expect_good(&a);
	expect_good(&b3);
	expect_good(&c2);
	assert_int_equal(tasks_aborted(f), 2);
	/* the preempt itself: B's registration and reservation went */
	assert_int_equal(generation(f), g + 1);
	assert_int_equal(read_reservation(f, &key), PR_TYPE_WE);
	assert_true(key == 0xa0);
	assert_int_equal(read_keys(f, keys), 2);
	/* B is told on that unit: REGISTRATIONS PREEMPTED, and with TAS set
	 * nothing more; nobody else is told anything */
	expect_ua(f, 0, 1, ASC_REGISTRATIONS_PREEMPTED);
	expect_no_ua(f, 1, 1);
	expect_no_ua(f, 0, 0);
	expect_no_ua(f, 0, 2);
	/* what B starts now is not aborted; it may read (write exclusive),
	 * not write */
	bg_submit(q2, &after, 0, 1, READ_10, 12);
	bg_settle(f->q, q2, one, 1);
	expect_good(&after);
	assert_int_equal(access_of(f, 1), R_OK);
	scsi_tgt_queue_detach(q2);
	assert_int_equal(tasks_aborted(f), 2);
}

/*
 * TAS 0 (the default): the aborted tasks end once, TASK ABORTED with
 * no_response (SAM-5 5.6: the target sends nothing for them), and their
 * nexus gets REGISTRATIONS PREEMPTED then COMMANDS CLEARED BY ANOTHER
 * INITIATOR; a nexus preempted with the same key that had no task only
 * the first.  No reservation: the registrations with the key go.
 */
static void test_preempt_abort_no_tas(void **state)
{
	struct fx *f = *state;
	struct scsi_tgt_queue *q2;
	struct bg a, b1, b2, b3;
	struct bg *const all[] = { &a, &b1, &b2, &b3 };
	struct scsi_tgt_cmd c;
	uint64_t keys[64], key;

	drain_ua(f, 0, 4);
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xb1), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 4, PROUT_REGISTER, 0, 0, 0xb1), SAM_STAT_GOOD);
	assert_int_equal(scsi_tgt_queue_attach(f->t, &q2), 0);
	bg_submit(f->q, &a, 0, 0, WRITE_10, 20);
	bg_submit(f->q, &b1, 0, 1, READ_10, 21);
	bg_submit(q2, &b2, 0, 1, WRITE_10, 22);
	bg_submit(q2, &b3, 0, 1, READ_10, 23);
	assert_int_equal(prout(f, 0, PROUT_PREEMPT_AND_ABORT, PR_TYPE_WE, 0xa0, 0xb1),
			 SAM_STAT_GOOD);
	bg_settle(f->q, q2, all, 4);
	expect_good(&a);
	expect_aborted(&b1, true);
	expect_aborted(&b2, true);
	expect_aborted(&b3, true);
	assert_int_equal(tasks_aborted(f), 3);
	assert_int_equal(read_keys(f, keys), 1);
	assert_true(keys[0] == 0xa0);
	assert_int_equal(read_reservation(f, &key), 0);
	tur(f, &c, 0, 1);
	expect_sense(&c, SK_UNIT_ATTENTION, ASC_REGISTRATIONS_PREEMPTED);
	expect_ua(f, 0, 1, ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR);
	expect_ua(f, 0, 4, ASC_REGISTRATIONS_PREEMPTED);
	expect_no_ua(f, 0, 0);
	expect_no_ua(f, 1, 1);
	scsi_tgt_queue_detach(q2);
}

/*
 * What preempts nothing aborts nothing (SPC-4 5.9.11.4, 6.16): a key no
 * registration has, an unregistered nexus or a wrong own key: RESERVATION
 * CONFLICT; key 0 without an all registrants reservation: INVALID FIELD
 * IN PARAMETER LIST at byte 8.  Under an all registrants reservation key
 * 0 preempts every other registrant and aborts their tasks; a holder that
 * preempts with its own key changes the type and aborts none of its own.
 */
static void test_preempt_abort_keys(void **state)
{
	struct fx *f = *state;
	struct bg a, b1, c2;
	struct bg *const all[] = { &a, &b1, &c2 };
	struct scsi_tgt_cmd c;
	struct scsi_sense s;
	uint64_t keys[64], key;
	uint32_t g;

	set_tas(f, 0);
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xb1), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 2, PROUT_REGISTER, 0, 0, 0xc2), SAM_STAT_GOOD);
	g = generation(f);
	bg_submit(f->q, &a, 0, 0, READ_10, 30);
	bg_submit(f->q, &b1, 0, 1, READ_10, 31);
	assert_int_equal(prout(f, 0, PROUT_PREEMPT_AND_ABORT, PR_TYPE_WE, 0xa0, 0x77),
			 SAM_STAT_RESERVATION_CONFLICT);
	prout_full(f, &c, 0, 0, PROUT_PREEMPT_AND_ABORT, PR_TYPE_WE, 0xa0, 0, 0, 24);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	assert_int_equal(scsi_parse_sense(c.sense, c.sense_len, &s), 0);
	assert_true(s.sks_valid);
	assert_int_equal(s.sks, scsi_sks_field(false, 8, -1));
	assert_int_equal(prout(f, 3, PROUT_PREEMPT_AND_ABORT, PR_TYPE_WE, 0, 0xb1),
			 SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(prout(f, 0, PROUT_PREEMPT_AND_ABORT, PR_TYPE_WE, 0xa9, 0xb1),
			 SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(generation(f), g);
	assert_int_equal(read_keys(f, keys), 3);
	bg_settle(f->q, NULL, all, 2);
	expect_good(&a);
	expect_good(&b1);
	assert_int_equal(tasks_aborted(f), 0);
	expect_no_ua(f, 0, 1);
	/* all registrants: key 0 takes every other registration, and their
	 * tasks; the preempting nexus holds the type it asks for */
	assert_int_equal(prout(f, 1, PROUT_RESERVE, PR_TYPE_WE_AR, 0xb1, 0), SAM_STAT_GOOD);
	bg_submit(f->q, &a, 0, 0, WRITE_10, 32);
	bg_submit(f->q, &b1, 0, 1, WRITE_10, 33);
	bg_submit(f->q, &c2, 0, 2, READ_10, 34);
	assert_int_equal(prout(f, 0, PROUT_PREEMPT_AND_ABORT, PR_TYPE_EA, 0xa0, 0),
			 SAM_STAT_GOOD);
	bg_settle(f->q, NULL, all, 3);
	expect_good(&a);
	expect_aborted(&b1, false);
	expect_aborted(&c2, false);
	assert_int_equal(read_reservation(f, &key), PR_TYPE_EA);
	assert_true(key == 0xa0);
	assert_int_equal(read_keys(f, keys), 1);
	expect_ua(f, 0, 1, ASC_REGISTRATIONS_PREEMPTED);
	expect_ua(f, 0, 2, ASC_REGISTRATIONS_PREEMPTED);
	/* the holder with its own key: a new type, its task goes on */
	bg_submit(f->q, &a, 0, 0, WRITE_10, 35);
	assert_int_equal(prout(f, 0, PROUT_PREEMPT_AND_ABORT, PR_TYPE_WE, 0xa0, 0xa0),
			 SAM_STAT_GOOD);
	bg_settle(f->q, NULL, all, 1);
	expect_good(&a);
	assert_int_equal(read_reservation(f, &key), PR_TYPE_WE);
	assert_true(key == 0xa0);
	assert_int_equal(tasks_aborted(f), 2);
	expect_no_ua(f, 0, 0);
}

static int pr_ended;

static void pr_done(struct scsi_tgt_cmd *c)
{
	(void)c;
	pr_ended++;
}

/*
 * With delay_ms (every command held before its answer) and a timeout rule
 * (a command dropped, never answered): the preempted nexus's dropped task
 * and its task held on the queue that preempts end before the PERSISTENT
 * RESERVE OUT returns; the one held on another queue ends aborted when
 * due; TAS 0: without a response each, and one COMMANDS CLEARED.
 */
static void test_preempt_abort_held(void **state)
{
	struct fx *f = setup_cfg(false, false, 50);
	struct scsi_tgt_error_rule r = {
		.lun = 0, .type = SCSI_TGT_ERR_TIMEOUT, .opcode = READ_10, .count = -1,
	};
	uint8_t cdb[10] = { PERSISTENT_RESERVE_OUT, PROUT_PREEMPT_AND_ABORT, PR_TYPE_WE };
	static uint8_t pl[24];
	struct iovec iov = { .iov_base = pl, .iov_len = sizeof(pl) };
	struct scsi_tgt_queue *q2;
	struct bg drop, held, held2, a;
	struct bg *const rest[] = { &held2, &a };
	struct scsi_tgt_cmd c;

	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xb1), SAM_STAT_GOOD);
	assert_int_equal(scsi_tgt_queue_attach(f->t, &q2), 0);
	assert_int_equal(scsi_tgt_add_error_rule(f->t, &r), 0);
	bg_submit(f->q, &drop, 0, 1, READ_10, 40); /* dropped */
	bg_submit(f->q, &held, 0, 1, WRITE_10, 41);
	bg_submit(q2, &held2, 0, 1, READ_10, 42);
	bg_submit(f->q, &a, 0, 0, READ_10, 43);
	scsi_tgt_poll(f->q); /* the bios end, the delay holds the answers */
	scsi_tgt_poll(q2);
	assert_int_equal(drop.ended + held.ended + held2.ended + a.ended, 0);
	memset(&c, 0, sizeof(c));
	scsi_put_be64(pl, 0xa0);
	scsi_put_be64(pl + 8, 0xb1);
	scsi_put_be32(cdb + 5, 24);
	c.lun = 0;
	c.nexus = 0;
	c.cdb = cdb;
	c.cdb_len = 10;
	c.dir = SCSI_DIR_TO_DEVICE;
	c.iov = &iov;
	c.iovcnt = 1;
	c.xfer_len = 24;
	c.done = pr_done;
	pr_ended = 0;
	assert_int_equal(scsi_tgt_submit(f->q, &c), 0);
	/* this queue's: ended by the PERSISTENT RESERVE OUT itself */
	expect_aborted(&drop, true);
	expect_aborted(&held, true);
	assert_int_equal(held2.ended + a.ended, 0);
	while (!pr_ended)
		scsi_tgt_poll(f->q);
	assert_int_equal(c.status, SAM_STAT_GOOD);
	bg_settle(f->q, q2, rest, 2);
	expect_aborted(&held2, true);
	expect_good(&a);
	assert_int_equal(tasks_aborted(f), 3);
	tur(f, &c, 0, 1);
	expect_sense(&c, SK_UNIT_ATTENTION, ASC_REGISTRATIONS_PREEMPTED);
	expect_ua(f, 0, 1, ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR);
	scsi_tgt_queue_detach(q2);
	assert_int_equal(drop.ended + held.ended + held2.ended + a.ended, 4);
	*state = f;
	teardown(state);
}

/*
 * PREEMPT AND ABORT over and over on one thread while nexus 1 reads and
 * writes on its own queue, four commands at a time: each of its commands
 * ends once, GOOD, TASK ABORTED without a response (TAS 0) or with one of
 * the two unit attentions, and the target counts the aborted ones it
 * answered (clean under TSan: the epochs against the tasks' loads).
 */
#define PA_CMDS 4000
#define PA_QD 4

struct pa_writer {
	struct fx *f;
	_Atomic int done;
	unsigned int good, aborted, ua, other;
};

static void pa_w_done(struct scsi_tgt_cmd *c)
{
	(*(int *)c->priv)++;
}

static void pa_classify(struct pa_writer *w, const struct scsi_tgt_cmd *c)
{
	struct scsi_sense s;

	if (c->status == SAM_STAT_GOOD && !c->no_response)
		w->good++;
	else if (c->status == SAM_STAT_TASK_ABORTED && c->no_response)
		w->aborted++;
	else if (c->status == SAM_STAT_CHECK_CONDITION &&
		 !scsi_parse_sense(c->sense, c->sense_len, &s) &&
		 s.key == SK_UNIT_ATTENTION &&
		 (s.asc_ascq == ASC_REGISTRATIONS_PREEMPTED ||
		  s.asc_ascq == ASC_COMMANDS_CLEARED_BY_ANOTHER_INITIATOR))
		w->ua++;
	else
		w->other++;
}

static void *pa_writer_thread(void *arg)
{
	struct pa_writer *w = arg;
	struct scsi_tgt_queue *q;
	uint8_t cdb[PA_QD][10];
	uint8_t buf[PA_QD][512];
	struct iovec iov[PA_QD];
	struct scsi_tgt_cmd c[PA_QD];
	int fin;

	if (scsi_tgt_queue_attach(w->f->t, &q)) {
		w->other++;
		atomic_store(&w->done, 1);
		return NULL;
	}
	for (unsigned int i = 0; i < PA_CMDS; i += PA_QD) {
		fin = 0;
		for (unsigned int k = 0; k < PA_QD; k++) {
			bool rd = k % 2;

			memset(cdb[k], 0, 10);
			cdb[k][0] = rd ? READ_10 : WRITE_10;
			cdb[k][5] = (uint8_t)(8 + k);
			cdb[k][8] = 1;
			iov[k].iov_base = buf[k];
			iov[k].iov_len = 512;
			memset(&c[k], 0, sizeof(c[k]));
			c[k].nexus = 1;
			c[k].cdb = cdb[k];
			c[k].cdb_len = 10;
			c[k].dir = rd ? SCSI_DIR_FROM_DEVICE : SCSI_DIR_TO_DEVICE;
			c[k].iov = &iov[k];
			c[k].iovcnt = 1;
			c[k].xfer_len = 512;
			c[k].done = pa_w_done;
			c[k].priv = &fin;
			if (scsi_tgt_submit(q, &c[k])) {
				w->other++;
				fin++;
			}
		}
		while (fin < PA_QD)
			scsi_tgt_poll(q);
		if (fin > PA_QD)
			w->other++; /* one ended twice */
		for (unsigned int k = 0; k < PA_QD; k++)
			pa_classify(w, &c[k]);
	}
	scsi_tgt_queue_detach(q);
	atomic_store(&w->done, 1);
	return NULL;
}

static void test_preempt_abort_threads(void **state)
{
	struct fx *f = *state;
	struct pa_writer w = { .f = f };
	struct scsi_tgt_cmd c;
	pthread_t th;

	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(pthread_create(&th, NULL, pa_writer_thread, &w), 0);
	for (unsigned int i = 0; i < 100000 && !atomic_load(&w.done); i++) {
		uint8_t st = SAM_STAT_CHECK_CONDITION;

		/* nexus 1 registers again; its unit attentions may be
		 * pending (the writer takes them too) */
		for (int k = 0; k < 8 && st == SAM_STAT_CHECK_CONDITION; k++)
			st = prout_full(f, &c, 0, 1, PROUT_REGISTER_AND_IGNORE, 0, 0,
					0xb1, 0, 24);
		assert_int_equal(st, SAM_STAT_GOOD);
		assert_int_equal(prout(f, 0, PROUT_PREEMPT_AND_ABORT, PR_TYPE_WE,
				       0xa0, 0xb1), SAM_STAT_GOOD);
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(w.other, 0);
	assert_int_equal(w.good + w.aborted + w.ua, PA_CMDS);
	assert_int_equal(tasks_aborted(f), w.aborted);
}

/* ----------------------------------------------------- PR IN, others */

static void test_report_caps_full_status(void **state)
{
	struct fx *f = *state;
	struct scsi_tgt_cmd c;
	uint8_t b[1024], id[28] = { 0x05, 0, 0, 24 };
	uint32_t n, off, len;

	assert_int_equal(prin(f, &c, 0, PRIN_REPORT_CAPABILITIES, b, 8), SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be16(b), 8);
	assert_int_equal(b[2], 0x10);          /* CRH, no SIP_C ATP_C PTPL_C */
	assert_int_equal(b[3] & 0x01, 0);      /* PTPL_A */
	assert_int_equal(b[3] & 0x80, 0x80);   /* TMV */
	assert_int_equal(scsi_get_be16(b + 4), 0xea01); /* all six types */
	/* names: a transport's for nexus 1, the default for 0 */
	memcpy(id + 4, "iqn.2000-01.com.ex:i", 21);
	assert_int_equal(scsi_tgt_set_nexus_id(f->t, 1, id, 28), 0);
	assert_int_equal(scsi_tgt_set_nexus_id(f->t, 1, id, 27), -EINVAL);
	assert_int_equal(scsi_tgt_set_nexus_id(f->t, 1, id, 20), -EINVAL);
	assert_int_equal(scsi_tgt_set_nexus_id(f->t, SCSI_TGT_MAX_NEXUS, id, 28), -EINVAL);
	assert_int_equal(scsi_tgt_set_nexus_id(f->t, 3, id, 28), 0);
	assert_int_equal(scsi_tgt_set_nexus_id(f->t, 3, NULL, 0), 0);
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xa1), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_EA_RO, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(prin(f, &c, 1, PRIN_READ_FULL_STATUS, b, sizeof(b)),
			 SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(b), 2);
	n = scsi_get_be32(b + 4);
	assert_int_equal(c.resid, sizeof(b) - 8 - n);
	/* nexus 0: holder, default iSCSI TransportID */
	off = 8;
	assert_true(scsi_get_be64(b + off) == 0xa0);
	assert_int_equal(b[off + 12], 0x01);
	assert_int_equal(b[off + 13], PR_TYPE_EA_RO);
	assert_int_equal(scsi_get_be16(b + off + 18), 1);
	len = scsi_get_be32(b + off + 20);
	assert_int_equal(len % 4, 0);
	assert_true(len >= 24);
	assert_int_equal(b[off + 24], 0x05);
	assert_int_equal(scsi_get_be16(b + off + 26), len - 4);
	assert_string_equal((char *)b + off + 28, "iqn.2026-01.org.blkstack:nexus.0");
	off += 24 + len;
	/* nexus 1: registered, not holding, the transport's name */
	assert_true(scsi_get_be64(b + off) == 0xa1);
	assert_int_equal(b[off + 12], 0);
	assert_int_equal(scsi_get_be32(b + off + 20), 28);
	assert_memory_equal(b + off + 24, id, 28);
	off += 24 + 28;
	assert_int_equal(off, 8 + n);
}

static uint8_t rw(struct fx *f, uint64_t lun, bool write, uint32_t lba,
		  uint16_t nb, void *buf);

static void test_spc2(void **state)
{
	struct fx *f = *state;
	uint8_t res6[6] = { RESERVE_6 }, rel6[6] = { RELEASE_6 };
	uint8_t res10[10] = { RESERVE_10 }, rel10[10] = { RELEASE_10 };
	uint8_t ms[6] = { MODE_SENSE_6, 0, 0x3f, 0, 255, 0 };
	uint8_t inq[6] = { INQUIRY, 0, 0, 0, 96, 0 };
	uint8_t buf[512];
	struct scsi_tgt_cmd c;

	/* libiscsi's reserve6_2initiators */
	assert_int_equal(run(f, &c, 0, 0, res6, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 0, res6, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 1, res6, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_RESERVATION_CONFLICT);
	/* RELEASE by another nexus: GOOD, still reserved */
	assert_int_equal(run(f, &c, 0, 1, rel6, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 0, ms, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 1, ms, 6, SCSI_DIR_FROM_DEVICE, buf, 255),
			 SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(access_of(f, 0), R_OK | W_OK);
	assert_int_equal(run(f, &c, 0, 1, inq, 6, SCSI_DIR_FROM_DEVICE, buf, 96),
			 SAM_STAT_GOOD);
	assert_int_equal(tur(f, &c, 0, 1), SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(tur(f, &c, 1, 1), SAM_STAT_GOOD); /* the other unit */
	/* persistent reservation commands from another nexus conflict */
	assert_int_equal(prout(f, 1, PROUT_REGISTER, 0, 0, 0xa1),
			 SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(prin(f, &c, 1, PRIN_READ_KEYS, buf, 8), SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 0, rel6, 6, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(access_of(f, 1), R_OK | W_OK);
	/* (10) */
	assert_int_equal(run(f, &c, 0, 1, res10, 10, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	assert_int_equal(rw(f, 0, false, 0, 1, buf), SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(run(f, &c, 0, 1, rel10, 10, SCSI_DIR_NONE, NULL, 0), SAM_STAT_GOOD);
	/* third-party and extents: refused */
	res10[1] = 0x10;
	run(f, &c, 0, 0, res10, 10, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	res6[1] = 0x01;
	run(f, &c, 0, 0, res6, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	res6[1] = 0;
	/* with a registration (no reservation), RESERVE and RELEASE
	 * conflict for every nexus */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 2, res6, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(run(f, &c, 0, 0, rel6, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_WE, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(run(f, &c, 0, 0, res6, 6, SCSI_DIR_NONE, NULL, 0),
			 SAM_STAT_RESERVATION_CONFLICT);
}

static void test_rsoc(void **state)
{
	struct fx *f = *state;
	uint8_t cdb[12] = { MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPCODES, 2,
			    PERSISTENT_RESERVE_OUT, 0, PROUT_PREEMPT, 0, 0, 0, 64 };
	uint8_t b[64];
	struct scsi_tgt_cmd c;

	assert_int_equal(run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, b, 64),
			 SAM_STAT_GOOD);
	assert_int_equal(b[1] & 0x07, 3);
	assert_int_equal(b[4], PERSISTENT_RESERVE_OUT);
	assert_int_equal(b[5], PROUT_PREEMPT); /* the SA's code (6.35.3) */
	cdb[5] = PROUT_REGISTER_AND_MOVE;
	assert_int_equal(run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, b, 64),
			 SAM_STAT_GOOD);
	assert_int_equal(b[1] & 0x07, 3);
	cdb[5] = 0x08; /* REPLACE LOST RESERVATION: not supported */
	assert_int_equal(run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, b, 64),
			 SAM_STAT_GOOD);
	assert_int_equal(b[1] & 0x07, 1);
	cdb[3] = RECEIVE_COPY_RESULTS;
	cdb[5] = RCR_OPERATING_PARAMETERS;
	assert_int_equal(run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, b, 64),
			 SAM_STAT_GOOD);
	assert_int_equal(b[1] & 0x07, 3);
	assert_int_equal(scsi_get_be16(b + 2), 16);
	/* RESERVE (6) has no service action: option 1 */
	cdb[2] = 1;
	cdb[3] = RESERVE_6;
	cdb[5] = 0;
	assert_int_equal(run(f, &c, 0, 0, cdb, 12, SCSI_DIR_FROM_DEVICE, b, 64),
			 SAM_STAT_GOOD);
	assert_int_equal(b[1] & 0x07, 3);
}

/* ------------------------------------------------------ EXTENDED COPY */

/* an identification CSCD descriptor for @lun, from its VPD 0x83 */
static void cscd_for(struct fx *f, uint64_t lun, uint8_t *d)
{
	uint8_t cdb[6] = { INQUIRY, 1, 0x83, 0, 255, 0 }, b[256];
	struct scsi_tgt_cmd c;

	assert_int_equal(run(f, &c, lun, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, b, 255),
			 SAM_STAT_GOOD);
	assert_int_equal(b[5] & 0x0f, 3); /* the first designator: NAA */
	memset(d, 0, 32);
	d[0] = 0xe4;
	memcpy(d + 4, b + 4, 20);         /* its designation descriptor */
	d[30] = 512 >> 8;                 /* DISK BLOCK LENGTH */
}

static void seg_b2b(uint8_t *s, uint16_t si, uint16_t di, uint16_t nb,
		    uint64_t slba, uint64_t dlba)
{
	memset(s, 0, 28);
	s[0] = 0x02;
	scsi_put_be16(s + 2, 24);
	scsi_put_be16(s + 4, si);
	scsi_put_be16(s + 6, di);
	scsi_put_be16(s + 10, nb);
	scsi_put_be64(s + 12, slba);
	scsi_put_be64(s + 20, dlba);
}

static void xcopy_hdr(uint8_t *p, uint8_t list_id, uint8_t usage,
		      uint16_t cscd_len, uint32_t seg_len)
{
	memset(p, 0, 16);
	p[0] = list_id;
	p[1] = (uint8_t)(usage << 3);
	scsi_put_be16(p + 2, cscd_len);
	scsi_put_be32(p + 8, seg_len);
}

static uint8_t xcopy(struct fx *f, struct scsi_tgt_cmd *c, unsigned int nexus,
		     uint8_t *p, uint32_t plen)
{
	uint8_t cdb[16] = { EXTENDED_COPY };

	scsi_put_be32(cdb + 10, plen);
	return run(f, c, 0, nexus, cdb, 16, SCSI_DIR_TO_DEVICE, p, plen);
}

static uint8_t rcr(struct fx *f, struct scsi_tgt_cmd *c, uint8_t sa,
		   uint8_t list_id, uint8_t *b, uint32_t len)
{
	uint8_t cdb[16] = { RECEIVE_COPY_RESULTS, sa, list_id };

	scsi_put_be32(cdb + 10, len);
	memset(b, 0, len);
	return run(f, c, 0, 0, cdb, 16, SCSI_DIR_FROM_DEVICE, b, len);
}

static uint8_t rw(struct fx *f, uint64_t lun, bool write, uint32_t lba,
		  uint16_t nb, void *buf)
{
	uint8_t cdb[10] = { write ? WRITE_10 : READ_10 };
	struct scsi_tgt_cmd c;

	scsi_put_be32(cdb + 2, lba);
	scsi_put_be16(cdb + 7, nb);
	return run(f, &c, lun, 0, cdb, 10,
		   write ? SCSI_DIR_TO_DEVICE : SCSI_DIR_FROM_DEVICE, buf, nb * 512u);
}

static void test_xcopy(void **state)
{
	struct fx *f = *state;
	const uint16_t nb = 3000; /* 1.5 MiB: two chunks */
	uint8_t *src = malloc(nb * 512u), *dst = malloc(nb * 512u), p[256], b[64];
	struct scsi_tgt_cmd c;
	uint32_t i;

	for (i = 0; i < nb * 512u; i++)
		src[i] = (uint8_t)(i * 7 + i / 512);
	assert_int_equal(rw(f, 0, true, 10, nb, src), SAM_STAT_GOOD);
	/* LUN 0 blocks 10.. to LUN 1 block 100..; then LUN 1 block 100..
	 * to LUN 0 block 20000.. (the copy manager is LUN 0 either way) */
	xcopy_hdr(p, 7, 0, 64, 56);
	cscd_for(f, 0, p + 16);
	cscd_for(f, 1, p + 48);
	seg_b2b(p + 80, 0, 1, nb, 10, 100);
	seg_b2b(p + 108, 1, 0, 8, 100, 20000);
	assert_int_equal(xcopy(f, &c, 0, p, 136), SAM_STAT_GOOD);
	memset(dst, 0, nb * 512u);
	assert_int_equal(rw(f, 1, false, 100, nb, dst), SAM_STAT_GOOD);
	assert_memory_equal(src, dst, nb * 512u);
	assert_int_equal(rw(f, 0, false, 20000, 8, dst), SAM_STAT_GOOD);
	assert_memory_equal(src, dst, 8 * 512);
	/* COPY STATUS of list 7: done, 2 segments, the bytes */
	assert_int_equal(rcr(f, &c, RCR_COPY_STATUS, 7, b, 12), SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(b), 8);
	assert_int_equal(b[4], 0x01);
	assert_int_equal(scsi_get_be16(b + 5), 2);
	assert_int_equal(b[7], 0);
	assert_int_equal(scsi_get_be32(b + 8), (nb + 8) * 512u);
	/* no such list; another nexus's lists are its own */
	rcr(f, &c, RCR_COPY_STATUS, 8, b, 12);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	/* LIST ID USAGE 11b: nothing kept (list id must be 0) */
	xcopy_hdr(p, 0, 3, 64, 28);
	seg_b2b(p + 80, 0, 0, 1, 10, 30000);
	assert_int_equal(xcopy(f, &c, 0, p, 108), SAM_STAT_GOOD);
	rcr(f, &c, RCR_COPY_STATUS, 0, b, 12);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	xcopy_hdr(p, 5, 3, 64, 28);
	xcopy(f, &c, 0, p, 108);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	/* OPERATING PARAMETERS */
	assert_int_equal(rcr(f, &c, RCR_OPERATING_PARAMETERS, 0, b, 64), SAM_STAT_GOOD);
	assert_int_equal(scsi_get_be32(b), 42);
	assert_int_equal(b[4] & 1, 1);
	assert_int_equal(scsi_get_be16(b + 8), 16);
	assert_int_equal(scsi_get_be16(b + 10), 64);
	assert_int_equal(scsi_get_be32(b + 12), 16 * 32 + 64 * 28);
	assert_int_equal(scsi_get_be32(b + 20), 0); /* no inline data */
	assert_int_equal(b[37], 9);
	assert_int_equal(b[43], 2);
	assert_int_equal(b[44], 0x02);
	assert_int_equal(b[45], 0xe4);
	/* VPD 0x8f names the commands; standard INQUIRY sets 3PC */
	{
		uint8_t cdb[6] = { INQUIRY, 1, 0x8f, 0, 255, 0 }, v[256];

		assert_int_equal(run(f, &c, 0, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, v, 255),
				 SAM_STAT_GOOD);
		assert_int_equal(v[1], 0x8f);
		assert_int_equal(scsi_get_be16(v + 4), 0x0001);
		assert_int_equal(v[9], EXTENDED_COPY);
		assert_int_equal(v[12], RECEIVE_COPY_RESULTS);
		cdb[1] = 0;
		cdb[2] = 0;
		assert_int_equal(run(f, &c, 0, 0, cdb, 6, SCSI_DIR_FROM_DEVICE, v, 96),
				 SAM_STAT_GOOD);
		assert_int_equal(v[5] & 0x08, 0x08);
	}
	free(src);
	free(dst);
}

static void test_xcopy_errors(void **state)
{
	struct fx *f = *state;
	static uint8_t p[4096];
	uint8_t b[16];
	struct scsi_tgt_cmd c;
	unsigned int i;

	/* no parameter list: GOOD */
	assert_int_equal(xcopy(f, &c, 0, p, 0), SAM_STAT_GOOD);
	/* truncated descriptors (libiscsi's extendedcopy_param) */
	xcopy_hdr(p, 1, 0, 32, 28);
	cscd_for(f, 0, p + 16);
	seg_b2b(p + 48, 0, 0, 8, 0, 100);
	xcopy(f, &c, 0, p, 16 + 31);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	xcopy(f, &c, 0, p, 16 + 32 + 27);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	xcopy(f, &c, 0, p, 10);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	assert_int_equal(xcopy(f, &c, 0, p, 16 + 32 + 28), SAM_STAT_GOOD);
	/* unsupported CSCD (FC N_Port_Name) and segment (stream) types */
	p[16] = 0xe0;
	xcopy(f, &c, 0, p, 76);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_UNSUPPORTED_TARGET_DESC_TYPE);
	p[16] = 0xe4;
	p[48] = 0x00;
	xcopy(f, &c, 0, p, 76);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_UNSUPPORTED_SEGMENT_DESC_TYPE);
	p[48] = 0x02;
	/* inline data: none taken */
	scsi_put_be32(p + 12, 4);
	xcopy(f, &c, 0, p, 80);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	scsi_put_be32(p + 12, 0);
	/* too many CSCD descriptors (17), too many segments (65), more
	 * than the descriptor list length */
	xcopy_hdr(p, 1, 0, 17 * 32, 28);
	for (i = 0; i < 17; i++)
		cscd_for(f, 0, p + 16 + 32 * i);
	seg_b2b(p + 16 + 17 * 32, 0, 0, 1, 0, 100);
	xcopy(f, &c, 0, p, 16 + 17 * 32 + 28);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_TOO_MANY_TARGET_DESCRIPTORS);
	xcopy_hdr(p, 1, 0, 32, 65 * 28);
	cscd_for(f, 0, p + 16);
	for (i = 0; i < 65; i++)
		seg_b2b(p + 48 + 28 * i, 0, 0, 1, 0, 100);
	xcopy(f, &c, 0, p, 48 + 65 * 28);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_TOO_MANY_SEGMENT_DESCRIPTORS);
	xcopy_hdr(p, 1, 0, 32, 16 * 32 + 64 * 28);
	xcopy(f, &c, 0, p, 16 + 32 + 16 * 32 + 64 * 28);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
	/* a CSCD index past the list, a designator of no unit here, a
	 * range past the end: COPY ABORTED (libiscsi's validate tests) */
	xcopy_hdr(p, 2, 0, 32, 28);
	cscd_for(f, 0, p + 16);
	seg_b2b(p + 48, 0, 1, 8, 0, 100);
	xcopy(f, &c, 0, p, 76);
	expect_sense(&c, SK_COPY_ABORTED, ASC_COPY_TARGET_NOT_REACHABLE);
	assert_int_equal(rcr(f, &c, RCR_COPY_STATUS, 2, b, 12), SAM_STAT_GOOD);
	assert_int_equal(b[4], 0x02); /* completed with an error */
	assert_int_equal(scsi_get_be16(b + 5), 0);
	seg_b2b(p + 48, 0, 0, 2048, 0, NB - 1);
	xcopy(f, &c, 0, p, 76);
	expect_sense(&c, SK_COPY_ABORTED, ASC_NO_ADDITIONAL_SENSE);
	seg_b2b(p + 48, 0, 0, 8, 0, 100);
	p[16 + 8 + 15] ^= 0x40; /* LUN 64: none */
	xcopy(f, &c, 0, p, 76);
	expect_sense(&c, SK_COPY_ABORTED, ASC_COPY_TARGET_NOT_REACHABLE);
	p[16 + 8 + 15] ^= 0x40;
	/* a block length that is not the unit's */
	p[16 + 30] = 0x10;
	xcopy(f, &c, 0, p, 76);
	expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM_LIST);
	p[16 + 30] = 0x02;
	/* EXTENDED COPY (LID4) and other service actions */
	{
		uint8_t cdb[16] = { EXTENDED_COPY, 0x01 };

		scsi_put_be32(cdb + 10, 76);
		run(f, &c, 0, 0, cdb, 16, SCSI_DIR_TO_DEVICE, p, 76);
		expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
		rcr(f, &c, 0x01, 0, b, 16);
		expect_sense(&c, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	}
	/* a unit reserved against the nexus: conflict; the holder copies */
	assert_int_equal(xcopy(f, &c, 1, p, 76), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_WE, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(xcopy(f, &c, 1, p, 76), SAM_STAT_RESERVATION_CONFLICT);
	assert_int_equal(xcopy(f, &c, 0, p, 76), SAM_STAT_GOOD);
	/* the copy manager unit free, the destination reserved */
	xcopy_hdr(p, 3, 0, 64, 28);
	cscd_for(f, 0, p + 16);
	cscd_for(f, 1, p + 48);
	seg_b2b(p + 80, 1, 0, 8, 0, 100);
	{
		uint8_t cdb[16] = { EXTENDED_COPY };

		scsi_put_be32(cdb + 10, 108);
		assert_int_equal(run(f, &c, 1, 1, cdb, 16, SCSI_DIR_TO_DEVICE, p, 108),
				 SAM_STAT_RESERVATION_CONFLICT);
		assert_int_equal(run(f, &c, 1, 0, cdb, 16, SCSI_DIR_TO_DEVICE, p, 108),
				 SAM_STAT_GOOD);
	}
}

/* a destination that fails: COPY ABORTED, THIRD PARTY DEVICE FAILURE;
 * write protect: DATA PROTECT before anything moves */
static void test_xcopy_device_error(void **state)
{
	struct fx *f = setup_cfg(true, false, 0);
	uint8_t p[136], b[16];
	struct scsi_tgt_cmd c;

	(void)state;
	xcopy_hdr(p, 4, 0, 64, 56);
	cscd_for(f, 0, p + 16);
	cscd_for(f, 1, p + 48);
	seg_b2b(p + 80, 0, 0, 8, 0, 100);   /* ram to ram: fine */
	seg_b2b(p + 108, 0, 1, 8, 0, 100);  /* to the failing unit */
	xcopy(f, &c, 0, p, 136);
	expect_sense(&c, SK_COPY_ABORTED, ASC_THIRD_PARTY_DEVICE_FAILURE);
	assert_int_equal(c.blk_status, BLK_STS_IOERR);
	assert_int_equal(rcr(f, &c, RCR_COPY_STATUS, 4, b, 12), SAM_STAT_GOOD);
	assert_int_equal(b[4], 0x02);
	assert_int_equal(scsi_get_be16(b + 5), 1);
	assert_int_equal(scsi_get_be32(b + 8), 8 * 512);
	*state = f;
	teardown(state);
	f = setup_cfg(false, true, 0);
	xcopy_hdr(p, 4, 0, 64, 28);
	cscd_for(f, 0, p + 16);
	cscd_for(f, 1, p + 48);
	seg_b2b(p + 80, 0, 1, 8, 0, 100);
	xcopy(f, &c, 0, p, 108);
	expect_sense(&c, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	*state = f;
	teardown(state);
}

/* Reservations come and go on one thread while another writes and reads
 * on its own queue: every answer is GOOD or RESERVATION CONFLICT (run
 * under TSan for the fast path's relaxed flag against the mutex). */
struct writer {
	struct fx *f;
	unsigned int conflicts, good;
};

static void w_done(struct scsi_tgt_cmd *c)
{
	*(int *)c->priv = 1;
}

static void *writer_thread(void *arg)
{
	struct writer *w = arg;
	struct scsi_tgt_queue *q;
	uint8_t cdb[10] = { WRITE_10, 0, 0, 0, 0, 8, 0, 0, 1, 0 };
	uint8_t buf[512] = { 0 };
	struct iovec iov = { .iov_base = buf, .iov_len = 512 };

	if (scsi_tgt_queue_attach(w->f->t, &q))
		return NULL;
	for (unsigned int i = 0; i < 3000; i++) {
		struct scsi_tgt_cmd c;
		int fin = 0;

		memset(&c, 0, sizeof(c));
		cdb[0] = i % 2 ? READ_10 : WRITE_10;
		c.nexus = 1;
		c.cdb = cdb;
		c.cdb_len = 10;
		c.dir = i % 2 ? SCSI_DIR_FROM_DEVICE : SCSI_DIR_TO_DEVICE;
		c.iov = &iov;
		c.iovcnt = 1;
		c.xfer_len = 512;
		c.done = w_done;
		c.priv = &fin;
		if (scsi_tgt_submit(q, &c))
			break;
		while (!fin)
			scsi_tgt_poll(q);
		if (c.status == SAM_STAT_RESERVATION_CONFLICT)
			w->conflicts++;
		else if (c.status == SAM_STAT_GOOD)
			w->good++;
	}
	scsi_tgt_queue_detach(q);
	return NULL;
}

static void test_threads(void **state)
{
	struct fx *f = *state;
	struct writer w = { .f = f };
	struct scsi_tgt_cmd c;
	pthread_t th;

	/* nexus 1's power-on unit attention is taken by setup */
	assert_int_equal(prout(f, 0, PROUT_REGISTER, 0, 0, 0xa0), SAM_STAT_GOOD);
	assert_int_equal(pthread_create(&th, NULL, writer_thread, &w), 0);
	for (unsigned int i = 0; i < 300; i++) {
		uint8_t t = i % 2 ? PR_TYPE_EA : PR_TYPE_WE;

		assert_int_equal(prout(f, 0, PROUT_RESERVE, t, 0xa0, 0), SAM_STAT_GOOD);
		assert_int_equal(prout(f, 0, PROUT_RELEASE, t, 0xa0, 0), SAM_STAT_GOOD);
	}
	assert_int_equal(prout(f, 0, PROUT_RESERVE, PR_TYPE_EA, 0xa0, 0), SAM_STAT_GOOD);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(w.good + w.conflicts, 3000);
	/* held now: the last of them conflicted, or all ended before */
	assert_int_equal(tur(f, &c, 0, 1), SAM_STAT_GOOD);
	assert_int_equal(access_of(f, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_register, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prout_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register_and_move, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reserve_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unregister_releases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clear, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preempt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_caps_full_status, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_spc2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rsoc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xcopy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xcopy_errors, setup, teardown),
		cmocka_unit_test(test_xcopy_device_error),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preempt_abort_tas, setup, teardown),
		cmocka_unit_test_setup_teardown(test_preempt_abort_no_tas, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_preempt_abort_keys, setup, teardown),
		cmocka_unit_test(test_preempt_abort_held),
		cmocka_unit_test_setup_teardown(test_preempt_abort_threads, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
