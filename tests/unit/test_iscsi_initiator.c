// SPDX-License-Identifier: MIT
/*
 * The initiator's side of iSCSI (src/export/iscsi/initiator.c and the
 * initiator's half of keys.c): PDU builders (a SCSI Command against RFC
 * 3720 B.4's READ (10) PDU and its header digest; Data-Out, NOP-Out
 * answering a ping, Task Management, Logout), the checks of a target's
 * BHS, the CmdSN window, residuals and sense; the key offers and the
 * result functions from the initiator's side; and whole logins of the
 * initiator's state machine against the target's (login.c), in memory:
 * the two ends of one module agree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/iscsi/initiator.h"
#include "export/iscsi/keys.h"
#include "export/iscsi/login.h"
#include "export/iscsi/pdu.h"

/* ------------------------------------------------------------ builders */

static void test_scsi_cmd_rfc3720(void **state)
{
	/* RFC 3720 B.4: a READ (10) of 2 blocks, ITT 0x14000000, EDTL
	 * 1024, CmdSN 0x14, ExpStatSN 0x18, and its header digest */
	static const uint8_t read10[48] = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
		0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	static const uint8_t crc[4] = { 0x56, 0x3a, 0x96, 0xd9 };
	static const uint8_t cdb[10] = { 0x28, 0, 0, 0, 0, 0, 0, 0, 2, 0 };
	uint8_t bhs[48], lun[8], wire[4];
	struct iovec v = { bhs, 48 };

	(void)state;
	assert_int_equal(iscsi_lun_encode(0, lun), 0);
	iscsi_scsi_cmd_init(bhs, ISCSI_CMD_F | ISCSI_CMD_R | ISCSI_ATTR_UNTAGGED,
			    lun, 0x14000000, 1024, cdb, 10, 0);
	iscsi_req_set_sn(bhs, 0x14, 0x18);
	assert_memory_equal(bhs, read10, 48);
	iscsi_digest_put(wire, iscsi_digest(&v, 1));
	assert_memory_equal(wire, crc, 4);
}

static void test_lun_encode(void **state)
{
	uint8_t l[8];

	(void)state;
	assert_int_equal(iscsi_lun_encode(1, l), 0);
	assert_int_equal(l[0], 0);
	assert_int_equal(l[1], 1);
	assert_int_equal(iscsi_lun_encode(300, l), 0);
	assert_int_equal(l[0], 0x41);   /* flat space, 300 = 0x12c */
	assert_int_equal(l[1], 0x2c);
	assert_int_equal(iscsi_lun_encode(16384, l), -ERANGE);
}

static void test_other_builders(void **state)
{
	uint8_t bhs[48], lun[8], nop_in[48];

	(void)state;
	iscsi_lun_encode(1, lun);
	iscsi_data_out_init(bhs, true, lun, 7, 0x1234, 3, 8192, 4096, 99);
	assert_int_equal(bhs[0], ISCSI_OP_DATA_OUT);
	assert_int_equal(bhs[1], ISCSI_FLAG_FINAL);
	assert_int_equal(bhs_dsl(bhs), 4096);
	assert_int_equal(bhs[9], 1);
	assert_int_equal(get_be32(bhs + BHS_ITT), 7);
	assert_int_equal(get_be32(bhs + BHS_TTT), 0x1234);
	assert_int_equal(get_be32(bhs + BHS_EXPSTATSN), 99);
	assert_int_equal(get_be32(bhs + BHS_DATASN), 3);
	assert_int_equal(get_be32(bhs + BHS_BUF_OFFSET), 8192);
	assert_int_equal(get_be32(bhs + BHS_CMDSN), 0); /* reserved */

	/* the target's ping (pdu.c builds it), answered */
	iscsi_nop_in_ping_init(nop_in, 0x55, lun);
	iscsi_nop_out_answer_init(bhs, nop_in, 10, 20);
	assert_int_equal(bhs[0], ISCSI_OP_NOP_OUT | ISCSI_OP_IMMEDIATE);
	assert_int_equal(bhs[1], ISCSI_FLAG_FINAL);
	assert_int_equal(get_be32(bhs + BHS_ITT), ISCSI_RSVD_TAG);
	assert_int_equal(get_be32(bhs + BHS_TTT), 0x55);
	assert_memory_equal(bhs + BHS_LUN, lun, 8);
	assert_int_equal(get_be32(bhs + BHS_CMDSN), 10);
	assert_int_equal(get_be32(bhs + BHS_EXPSTATSN), 20);
	assert_int_equal(bhs_dsl(bhs), 0);

	/* our own ping (keep-alive): ITT valid, TTT reserved, CmdSN not advanced */
	iscsi_nop_out_ping_init(bhs, lun, 0x80000007, 13, 23);
	assert_int_equal(bhs[0], ISCSI_OP_NOP_OUT | ISCSI_OP_IMMEDIATE);
	assert_int_equal(bhs[1], ISCSI_FLAG_FINAL);
	assert_int_equal(get_be32(bhs + BHS_ITT), 0x80000007);
	assert_int_equal(get_be32(bhs + BHS_TTT), ISCSI_RSVD_TAG);
	assert_memory_equal(bhs + BHS_LUN, lun, 8);
	assert_int_equal(get_be32(bhs + BHS_CMDSN), 13);
	assert_int_equal(get_be32(bhs + BHS_EXPSTATSN), 23);
	assert_int_equal(bhs_dsl(bhs), 0);
	{
		struct iscsi_pdu_lens pl;

		/* the target's own check takes it */
		assert_int_equal(iscsi_pdu_check(bhs, 8192, &pl), 0);
		assert_int_equal(pl.data_len, 0);
	}

	iscsi_tmf_init(bhs, ISCSI_TMF_ABORT_TASK, lun, 0x80000001, 42, 11, 21, 9);
	assert_int_equal(bhs[0], ISCSI_OP_TMF_REQ | ISCSI_OP_IMMEDIATE);
	assert_int_equal(bhs[1], ISCSI_FLAG_FINAL | ISCSI_TMF_ABORT_TASK);
	assert_int_equal(get_be32(bhs + BHS_ITT), 0x80000001);
	assert_int_equal(get_be32(bhs + BHS_TMF_REF_TASK), 42);
	assert_int_equal(get_be32(bhs + BHS_CMDSN), 11);
	assert_int_equal(get_be32(bhs + BHS_TMF_REFCMDSN), 9);

	iscsi_logout_init(bhs, ISCSI_LOGOUT_SESSION, 5, 0, 12, 22);
	assert_int_equal(bhs[0], ISCSI_OP_LOGOUT_REQ | ISCSI_OP_IMMEDIATE);
	assert_int_equal(bhs[1], ISCSI_FLAG_FINAL | ISCSI_LOGOUT_SESSION);
	assert_int_equal(get_be32(bhs + BHS_CMDSN), 12);
}

static void test_check_target(void **state)
{
	struct iscsi_pdu_lens l;
	uint8_t bhs[48];

	(void)state;
	iscsi_bhs_init(bhs, ISCSI_OP_DATA_IN, 0);
	bhs_set_dsl(bhs, 4097);
	assert_int_equal(iscsi_pdu_check_target(bhs, 8192, &l), 0);
	assert_int_equal(l.data_len, 4097);
	assert_int_equal(l.pad, 3);
	assert_int_equal(iscsi_pdu_check_target(bhs, 4096, &l), -EMSGSIZE);
	/* data where none goes, an AHS, an initiator opcode */
	iscsi_bhs_init(bhs, ISCSI_OP_R2T, ISCSI_FLAG_FINAL);
	assert_int_equal(iscsi_pdu_check_target(bhs, 8192, &l), 0);
	bhs_set_dsl(bhs, 4);
	assert_int_equal(iscsi_pdu_check_target(bhs, 8192, &l), -EPROTO);
	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_RSP, ISCSI_FLAG_FINAL);
	bhs[BHS_TOTAL_AHS] = 1;
	assert_int_equal(iscsi_pdu_check_target(bhs, 8192, &l), -EPROTO);
	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_CMD, 0);
	assert_int_equal(iscsi_pdu_check_target(bhs, 8192, &l), -EPROTO);
	iscsi_bhs_init(bhs, 0x3c, 0); /* vendor-specific target opcode */
	assert_int_equal(iscsi_pdu_check_target(bhs, 8192, &l), -EPROTO);
}

static void test_window(void **state)
{
	struct iscsi_window w = { .cmdsn = 10, .exp_cmdsn = 10, .max_cmdsn = 10 };
	uint8_t bhs[48];

	(void)state;
	assert_true(iscsi_window_open(&w));
	w.cmdsn = 11;
	assert_false(iscsi_window_open(&w));
	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_RSP, 0);
	put_be32(bhs + BHS_EXPCMDSN, 11);
	put_be32(bhs + BHS_MAXCMDSN, 42);
	iscsi_window_update(&w, bhs);
	assert_int_equal(w.exp_cmdsn, 11);
	assert_int_equal(w.max_cmdsn, 42);
	assert_true(iscsi_window_open(&w));
	/* older values do not move it back */
	put_be32(bhs + BHS_EXPCMDSN, 10);
	put_be32(bhs + BHS_MAXCMDSN, 40);
	iscsi_window_update(&w, bhs);
	assert_int_equal(w.max_cmdsn, 42);
	/* MaxCmdSN < ExpCmdSN - 1: ignored; = ExpCmdSN - 1: the window closed */
	put_be32(bhs + BHS_EXPCMDSN, 50);
	put_be32(bhs + BHS_MAXCMDSN, 45);
	iscsi_window_update(&w, bhs);
	assert_int_equal(w.exp_cmdsn, 11);
	/* across the wrap */
	w = (struct iscsi_window){ .cmdsn = 0xfffffffe, .exp_cmdsn = 0xfffffffe,
				   .max_cmdsn = 0xfffffffe };
	put_be32(bhs + BHS_EXPCMDSN, 0xffffffff);
	put_be32(bhs + BHS_MAXCMDSN, 30);
	iscsi_window_update(&w, bhs);
	assert_int_equal(w.max_cmdsn, 30);
	w.cmdsn = 5;
	assert_true(iscsi_window_open(&w));
}

static void test_residual_sense(void **state)
{
	uint8_t data[32] = { 0, 18, 0x70, 0, 0x03 }, sense[252];
	uint32_t resid;
	bool over;

	(void)state;
	assert_int_equal(iscsi_residual(0, 0, &resid, &over), 0);
	assert_int_equal(resid, 0);
	assert_false(over);
	assert_int_equal(iscsi_residual(ISCSI_RSP_U, 512, &resid, &over), 0);
	assert_int_equal(resid, 512);
	assert_false(over);
	assert_int_equal(iscsi_residual(ISCSI_RSP_O, 8, &resid, &over), 0);
	assert_int_equal(resid, 8);
	assert_true(over);
	assert_int_equal(iscsi_residual(ISCSI_RSP_O | ISCSI_RSP_U, 8, &resid, &over),
			 -EPROTO);
	assert_int_equal(iscsi_sense_get(data, 20, sense, sizeof(sense)), 18);
	assert_int_equal(sense[0], 0x70);
	assert_int_equal(sense[2], 0x03);
	assert_int_equal(iscsi_sense_get(data, 19, sense, sizeof(sense)), -EPROTO);
	assert_int_equal(iscsi_sense_get(data, 20, sense, 4), 4);
	assert_int_equal(iscsi_sense_get(data, 0, sense, 4), 0);
}

/* ---------------------------------------------------- key negotiation */

static struct iscsi_params ini_ours, cur;
static struct iscsi_neg neg;
static char obuf[8192];
static struct iscsi_text_out out;

static void setup_ini(void)
{
	iscsi_params_default(&ini_ours);
	ini_ours.header_digest = true;
	ini_ours.data_digest = false;
	ini_ours.initial_r2t = false;
	ini_ours.immediate_data = true;
	ini_ours.max_burst_length = 65536;
	ini_ours.first_burst_length = 16384;
	ini_ours.max_outstanding_r2t = 4;
	ini_ours.max_recv_dsl = 32768;
	ini_ours.default_time2wait = 0;
	ini_ours.default_time2retain = 0;
	iscsi_params_default(&cur);
	memset(&neg, 0, sizeof(neg));
	neg.ours = &ini_ours;
	neg.cur = &cur;
	neg.login = true;
	neg.initiator = true;
	neg.stage = ISCSI_STAGE_OPERATIONAL;
	neg.peer_max_recv_dsl = 8192;
	neg.tpgt = -1;
	out = (struct iscsi_text_out){ .buf = obuf, .cap = sizeof(obuf) };
}

/* "a=b\0c=d\0" from "a=b|c=d" */
static size_t text(char *dst, const char *src)
{
	size_t n = strlen(src), i;

	for (i = 0; i < n; i++)
		dst[i] = src[i] == '|' ? 0 : src[i];
	dst[n] = 0;
	return n + 1;
}

static int take(const char *list)
{
	static char in[8192];
	size_t n = text(in, list);

	out.len = 0;
	out.overflow = false;
	return iscsi_keys_negotiate(&neg, in, n, &out, NULL);
}

/* @key's value in @o's list, or NULL */
static const char *value_of(const struct iscsi_text_out *o, const char *key)
{
	size_t pos = 0, kl, vl;
	const char *k, *v;

	while (iscsi_text_next(o->buf, o->len, &pos, &k, &kl, &v, &vl) > 0)
		if (kl == strlen(key) && !memcmp(k, key, kl))
			return v;
	return NULL;
}

static void test_offer(void **state)
{
	(void)state;
	setup_ini();
	assert_int_equal(iscsi_keys_offer(&neg, &out), 0);
	assert_string_equal(value_of(&out, "HeaderDigest"), "CRC32C");
	assert_string_equal(value_of(&out, "DataDigest"), "None");
	assert_string_equal(value_of(&out, "InitialR2T"), "No");
	assert_string_equal(value_of(&out, "ImmediateData"), "Yes");
	assert_string_equal(value_of(&out, "MaxBurstLength"), "65536");
	assert_string_equal(value_of(&out, "FirstBurstLength"), "16384");
	assert_string_equal(value_of(&out, "MaxOutstandingR2T"), "4");
	assert_string_equal(value_of(&out, "MaxRecvDataSegmentLength"), "32768");
	assert_string_equal(value_of(&out, "ErrorRecoveryLevel"), "0");
	assert_string_equal(value_of(&out, "MaxConnections"), "1");
	assert_true(neg.sent_mrdsl);
	assert_true(neg.offered & (1ull << ISCSI_KEY_MAX_BURST_LENGTH));
	assert_false(neg.offered & (1ull << ISCSI_KEY_MAX_RECV_DSL));
	/* too small a buffer */
	setup_ini();
	out.cap = 64;
	assert_int_equal(iscsi_keys_offer(&neg, &out), -ENOSPC);
}

static void test_results(void **state)
{
	(void)state;
	/* answers within the result functions: taken */
	setup_ini();
	iscsi_keys_offer(&neg, &out);
	assert_int_equal(take("HeaderDigest=CRC32C|DataDigest=None|InitialR2T=Yes|"
			      "ImmediateData=No|MaxBurstLength=4096|FirstBurstLength=512|"
			      "MaxOutstandingR2T=1|MaxRecvDataSegmentLength=1024|"
			      "DefaultTime2Wait=2|DefaultTime2Retain=0|TargetPortalGroupTag=7|"
			      "TargetAlias=x"), 0);
	assert_int_equal(out.len, 0); /* nothing to answer */
	assert_true(cur.header_digest);
	assert_false(cur.data_digest);
	assert_true(cur.initial_r2t);   /* OR: the target's Yes */
	assert_false(cur.immediate_data); /* AND: the target's No */
	assert_int_equal(cur.max_burst_length, 4096);
	assert_int_equal(cur.first_burst_length, 512);
	assert_int_equal(cur.max_outstanding_r2t, 1);
	assert_int_equal(cur.default_time2wait, 2); /* max */
	assert_int_equal(neg.peer_max_recv_dsl, 1024);
	assert_int_equal(neg.tpgt, 7);
	assert_int_equal(neg.offered & (1ull << ISCSI_KEY_MAX_BURST_LENGTH), 0);

	/* each result function broken once */
	static const char *const bad[] = {
		"MaxBurstLength=131072",        /* min: above our 65536 */
		"DefaultTime2Wait=0x0|DefaultTime2Retain=5", /* min: above our 0 */
		"HeaderDigest=None",            /* not what we offered */
		"HeaderDigest=CRC32C,None",     /* a list for an answer */
		"MaxOutstandingR2T=0",          /* out of range */
		"ImmediateData=Maybe",
		"MaxBurstLength=4096|MaxBurstLength=4096", /* twice */
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setup_ini();
		iscsi_keys_offer(&neg, &out);
		assert_int_equal(take(bad[i]), -EPROTO);
	}
	/* OR offered Yes must stay Yes, AND offered No must stay No */
	setup_ini();
	ini_ours.initial_r2t = true;
	ini_ours.immediate_data = false;
	iscsi_keys_offer(&neg, &out);
	assert_int_equal(take("InitialR2T=No"), -EPROTO);
	setup_ini();
	ini_ours.immediate_data = false;
	iscsi_keys_offer(&neg, &out);
	assert_int_equal(take("ImmediateData=Yes"), -EPROTO);
	/* max: DefaultTime2Wait below our offer */
	setup_ini();
	ini_ours.default_time2wait = 5;
	iscsi_keys_offer(&neg, &out);
	assert_int_equal(take("DefaultTime2Wait=2"), -EPROTO);

	/* Reject, NotUnderstood, Irrelevant: the default stays */
	setup_ini();
	iscsi_keys_offer(&neg, &out);
	assert_int_equal(take("HeaderDigest=Reject|MaxBurstLength=NotUnderstood"), 0);
	assert_false(cur.header_digest);
	assert_int_equal(cur.max_burst_length, 262144);
}

static void test_target_offers(void **state)
{
	(void)state;
	/* keys the target offers on its own: answered as a responder */
	setup_ini();
	assert_int_equal(take("MaxBurstLength=1048576|InitialR2T=Yes|"
			      "HeaderDigest=None,CRC32C|OFMarker=No|X-foo=bar|"
			      "SessionType=Normal|InitiatorName=iqn.x"), 0);
	assert_string_equal(value_of(&out, "MaxBurstLength"), "65536");
	assert_string_equal(value_of(&out, "InitialR2T"), "Yes");
	assert_string_equal(value_of(&out, "HeaderDigest"), "CRC32C");
	assert_string_equal(value_of(&out, "OFMarker"), "Reject");
	assert_string_equal(value_of(&out, "X-foo"), "NotUnderstood");
	/* keys only an initiator sends: Irrelevant from a target */
	assert_string_equal(value_of(&out, "SessionType"), "Irrelevant");
	assert_string_equal(value_of(&out, "InitiatorName"), "Irrelevant");
	assert_int_equal(cur.max_burst_length, 65536);
	/* no digest when the initiator asked for none */
	setup_ini();
	ini_ours.header_digest = false;
	assert_int_equal(take("HeaderDigest=CRC32C"), 0);
	assert_string_equal(value_of(&out, "HeaderDigest"), "Reject");
}

/* ------------------------------------------------------ whole logins */

static const char *tname(void *opaque, unsigned int i)
{
	(void)opaque;
	(void)i;
	return "iqn.2026-12.org.blkstack:t";
}

static uint16_t alloc_tsih(void *opaque)
{
	(void)opaque;
	return 0x1234;
}

struct pair {
	struct iscsi_params tgt_ours, ini_ours;
	struct iscsi_login_env env;
	struct iscsi_login tl;
	struct iscsi_ini_login il;
	const struct iscsi_chap *ini_chap; /* the initiator's credentials */
	int ini_result, tgt_result;
	unsigned int exchanges;
};

static void pair_init(struct pair *p)
{
	memset(p, 0, sizeof(*p));
	/* the target's values, as src/export/iscsi/server.c sets them */
	iscsi_params_default(&p->tgt_ours);
	p->tgt_ours.header_digest = p->tgt_ours.data_digest = true;
	p->tgt_ours.initial_r2t = false;
	p->tgt_ours.immediate_data = true;
	p->tgt_ours.max_recv_dsl = 262144;
	p->tgt_ours.max_burst_length = 1048576;
	p->tgt_ours.first_burst_length = 262144;
	p->tgt_ours.default_time2wait = 0;
	p->tgt_ours.default_time2retain = 0;
	p->tgt_ours.max_outstanding_r2t = 8;
	/* the initiator's defaults (iscsi_lld.c) */
	iscsi_params_default(&p->ini_ours);
	p->ini_ours.initial_r2t = false;
	p->ini_ours.immediate_data = true;
	p->ini_ours.max_recv_dsl = 262144;
	p->ini_ours.max_burst_length = 1048576;
	p->ini_ours.first_burst_length = 262144;
	p->ini_ours.max_outstanding_r2t = 8;
	p->ini_ours.default_time2wait = 0;
	p->ini_ours.default_time2retain = 0;
	strcpy(p->ini_ours.initiator_name, "iqn.2026-12.org.blkstack:i");
	strcpy(p->ini_ours.target_name, "iqn.2026-12.org.blkstack:t");
	p->env.nr_targets = 1;
	p->env.target_name = tname;
	p->env.portal = "127.0.0.1:3260,1";
	p->env.tpgt = 1;
}

/* Run both state machines against each other until one ends. */
static void pair_run(struct pair *p)
{
	static const uint8_t isid[6] = { 0x80, 1, 2, 3, 0, 1 };
	char qbuf[8192], rbuf[8192];
	struct iscsi_text_out q = { .buf = qbuf, .cap = sizeof(qbuf) };
	struct iscsi_text_out r = { .buf = rbuf, .cap = sizeof(rbuf) };
	uint8_t req[48], rsp[48];

	iscsi_login_init(&p->tl, &p->env, &p->tgt_ours);
	p->tl.alloc_tsih = alloc_tsih;
	iscsi_ini_login_init(&p->il, &p->ini_ours, isid, 0, 0, 0x80000000, 1);
	p->il.chap = p->ini_chap;
	for (p->exchanges = 0; p->exchanges < 10; p->exchanges++) {
		assert_int_equal(iscsi_ini_login_request(&p->il, req, &q), 0);
		assert_int_equal(bhs_dsl(req), q.len);
		p->tgt_result = iscsi_login_step(&p->tl, req, (const uint8_t *)qbuf,
						 (uint32_t)q.len, rsp, &r);
		p->ini_result = iscsi_ini_login_response(&p->il, rsp,
							 (const uint8_t *)rbuf,
							 bhs_dsl(rsp));
		if (p->ini_result != ISCSI_INI_LOGIN_CONTINUE ||
		    p->tgt_result != ISCSI_LOGIN_CONTINUE)
			break;
	}
	iscsi_login_free(&p->tl);
	iscsi_ini_login_free(&p->il);
}

static void test_login_defaults(void **state)
{
	struct pair *p = malloc(sizeof(*p));

	(void)state;
	pair_init(p);
	pair_run(p);
	assert_int_equal(p->tgt_result, ISCSI_LOGIN_DONE);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_DONE);
	assert_int_equal(p->exchanges, 1); /* security, then operational */
	assert_int_equal(p->il.tsih, 0x1234);
	assert_int_equal(p->il.neg.tpgt, 1);
	/* both ends hold the same values */
	assert_int_equal(p->il.params.header_digest, p->tl.params.header_digest);
	assert_false(p->il.params.header_digest);
	assert_int_equal(p->il.params.initial_r2t, p->tl.params.initial_r2t);
	assert_false(p->il.params.initial_r2t);
	assert_true(p->il.params.immediate_data);
	assert_int_equal(p->il.params.max_burst_length, p->tl.params.max_burst_length);
	assert_int_equal(p->il.params.first_burst_length, p->tl.params.first_burst_length);
	assert_int_equal(p->il.params.max_outstanding_r2t, p->tl.params.max_outstanding_r2t);
	assert_int_equal(p->il.params.max_outstanding_r2t, 8);
	/* each side's MaxRecvDataSegmentLength is the other's send limit */
	assert_int_equal(p->il.peer_max_recv_dsl, 262144);
	assert_int_equal(p->tl.peer_max_recv_dsl, 262144);
	/* the CmdSN window and StatSN the full feature phase starts with */
	assert_int_equal(p->il.win.cmdsn, 1);
	assert_int_equal(p->il.win.exp_cmdsn, 1);
	assert_int_equal(p->il.win.exp_statsn, p->tl.statsn + 1);
	free(p);
}

static void test_login_small(void **state)
{
	struct pair *p = malloc(sizeof(*p));

	(void)state;
	/* small lengths, InitialR2T=Yes, ImmediateData=No, both digests */
	pair_init(p);
	p->ini_ours.header_digest = p->ini_ours.data_digest = true;
	p->ini_ours.initial_r2t = true;
	p->ini_ours.immediate_data = false;
	p->ini_ours.max_recv_dsl = 512;
	p->ini_ours.max_burst_length = 4096;
	p->ini_ours.first_burst_length = 8192; /* above MaxBurstLength */
	p->ini_ours.max_outstanding_r2t = 1;
	pair_run(p);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_DONE);
	assert_int_equal(p->tgt_result, ISCSI_LOGIN_DONE);
	assert_true(p->il.params.header_digest && p->tl.params.header_digest);
	assert_true(p->il.params.data_digest && p->tl.params.data_digest);
	assert_true(p->il.params.initial_r2t && p->tl.params.initial_r2t);
	assert_false(p->il.params.immediate_data || p->tl.params.immediate_data);
	assert_int_equal(p->il.params.max_burst_length, 4096);
	assert_int_equal(p->tl.params.max_burst_length, 4096);
	/* FirstBurstLength made at most MaxBurstLength on both ends */
	assert_int_equal(p->il.params.first_burst_length, 4096);
	assert_int_equal(p->tl.params.first_burst_length, 4096);
	assert_int_equal(p->tl.peer_max_recv_dsl, 512);
	assert_int_equal(p->il.params.max_recv_dsl, 512);
	free(p);
}

static void test_login_failures(void **state)
{
	struct pair *p = malloc(sizeof(*p));

	(void)state;
	/* a digest asked for, a target without it */
	pair_init(p);
	p->ini_ours.data_digest = true;
	p->tgt_ours.data_digest = false;
	pair_run(p);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_FAILED);
	assert_non_null(strstr(p->il.why, "DataDigest"));
	/* an unknown target: the target's status, named */
	pair_init(p);
	strcpy(p->ini_ours.target_name, "iqn.2026-12.org.blkstack:nope");
	pair_run(p);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_FAILED);
	assert_int_equal(p->il.status, ISCSI_LOGIN_NOT_FOUND);
	assert_string_equal(p->il.why, "target not found");
	/* a target that wants CHAP */
	{
		static struct iscsi_chap chap = { .nr_users = 1 };

		pair_init(p);
		strcpy(chap.users[0].name, "u");
		strcpy(chap.users[0].secret, "0123456789abcdef");
		p->env.chap = &chap;
		pair_run(p);
		assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_FAILED);
		assert_int_equal(p->il.status, ISCSI_LOGIN_AUTH_FAILED);
	}
	free(p);
}

/* the target's secrets, and an initiator's credentials */
static void chap_user(struct iscsi_chap_user *u, const char *name, const char *secret)
{
	strcpy(u->name, name);
	strcpy(u->secret, secret);
}

static void test_login_chap(void **state)
{
	struct pair *p = malloc(sizeof(*p));
	struct iscsi_chap *tc = calloc(1, sizeof(*tc)), *ic = calloc(1, sizeof(*ic));

	(void)state;
	tc->nr_users = 2;
	chap_user(&tc->users[0], "bob", "anothersecret77");
	chap_user(&tc->users[1], "alice", "secretsecret12");
	chap_user(&tc->target, "tgt", "targetsecret99");
	tc->has_target = true;
	ic->nr_users = 1;
	chap_user(&ic->users[0], "alice", "secretsecret12");

	/* one-way: AuthMethod, CHAP_A, CHAP_N/CHAP_R, then operational */
	pair_init(p);
	p->env.chap = tc;
	p->ini_chap = ic;
	pair_run(p);
	assert_int_equal(p->tgt_result, ISCSI_LOGIN_DONE);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_DONE);
	assert_int_equal(p->exchanges, 3);
	assert_string_equal(p->il.params.auth_method, "CHAP");
	assert_string_equal(p->tl.chap_user, "alice");

	/* mutual: the target proves its secret too */
	chap_user(&ic->target, "tgt", "targetsecret99");
	ic->has_target = true;
	pair_init(p);
	p->env.chap = tc;
	p->ini_chap = ic;
	pair_run(p);
	assert_int_equal(p->tgt_result, ISCSI_LOGIN_DONE);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_DONE);
	assert_string_equal(p->il.params.auth_method, "CHAP");

	/* mutual, a target with another secret: we refuse it */
	strcpy(ic->target.secret, "targetsecret98");
	pair_init(p);
	p->env.chap = tc;
	p->ini_chap = ic;
	pair_run(p);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_FAILED);
	assert_int_equal(p->il.status, 0);
	assert_non_null(strstr(p->il.why, "mutual CHAP: authentication of the target failed"));
	/* ... or that answers under another name */
	chap_user(&ic->target, "other", "targetsecret99");
	pair_init(p);
	p->env.chap = tc;
	p->ini_chap = ic;
	pair_run(p);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_FAILED);
	assert_non_null(strstr(p->il.why, "answered as 'tgt'"));

	/* a wrong secret of ours: the target's 0201 */
	ic->has_target = false;
	strcpy(ic->users[0].secret, "wrongsecret12");
	pair_init(p);
	p->env.chap = tc;
	p->ini_chap = ic;
	pair_run(p);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_FAILED);
	assert_int_equal(p->il.status, ISCSI_LOGIN_AUTH_FAILED);
	assert_string_equal(p->il.why, "authentication failure");

	/* credentials, a target without CHAP: None, as offered */
	strcpy(ic->users[0].secret, "secretsecret12");
	pair_init(p);
	p->ini_chap = ic;
	pair_run(p);
	assert_int_equal(p->tgt_result, ISCSI_LOGIN_DONE);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_DONE);
	assert_string_equal(p->il.params.auth_method, "None");
	/* ... but not when we asked for mutual CHAP */
	chap_user(&ic->target, "tgt", "targetsecret99");
	ic->has_target = true;
	pair_init(p);
	p->ini_chap = ic;
	pair_run(p);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_FAILED);
	assert_non_null(strstr(p->il.why, "AuthMethod=None"));

	/* a discovery session with CHAP: no TargetName, SessionType=Discovery */
	ic->has_target = false;
	pair_init(p);
	p->ini_ours.discovery = true;
	p->ini_ours.target_name[0] = 0;
	p->env.chap = tc;
	p->ini_chap = ic;
	pair_run(p);
	assert_int_equal(p->tgt_result, ISCSI_LOGIN_DONE);
	assert_int_equal(p->ini_result, ISCSI_INI_LOGIN_DONE);
	assert_true(p->tl.params.discovery);
	free(tc);
	free(ic);
	free(p);
}

/* A Login Response to @req in the security stage, T clear unless @t. */
static void sec_rsp(uint8_t *rsp, const uint8_t *req, bool t, uint32_t dsl)
{
	memcpy(rsp, req, 48);
	rsp[0] = ISCSI_OP_LOGIN_RSP;
	rsp[1] = t ? ISCSI_LOGIN_T | ISCSI_STAGE_OPERATIONAL : 0;
	bhs_set_dsl(rsp, dsl);
}

static void test_login_chap_checks(void **state)
{
	static const uint8_t isid[6] = { 0x80, 1, 2, 3, 0, 1 };
	static const char chap_auth[] = "AuthMethod=CHAP";
	static const char md5_7[] = "CHAP_A=7\0CHAP_I=1\0CHAP_C=0x0102";
	static const char md5_5[] = "CHAP_A=5\0CHAP_I=1\0CHAP_C=0x0102";
	struct iscsi_chap *ic = calloc(1, sizeof(*ic));
	struct iscsi_params o;
	struct iscsi_ini_login l;
	char qbuf[8192];
	struct iscsi_text_out q = { .buf = qbuf, .cap = sizeof(qbuf) };
	uint8_t req[48], rsp[48];

	(void)state;
	ic->nr_users = 1;
	chap_user(&ic->users[0], "alice", "secretsecret12");
	iscsi_params_default(&o);
	strcpy(o.initiator_name, "iqn.i");
	strcpy(o.target_name, "iqn.t");
	/* with credentials: CHAP,None offered, T clear until our CHAP_R */
	iscsi_ini_login_init(&l, &o, isid, 0, 0, 0x80000000, 1);
	l.chap = ic;
	assert_int_equal(iscsi_ini_login_request(&l, req, &q), 0);
	assert_string_equal(value_of(&q, "AuthMethod"), "CHAP,None");
	assert_int_equal(req[1], ISCSI_STAGE_OPERATIONAL);
	sec_rsp(rsp, req, false, sizeof(chap_auth));
	assert_int_equal(iscsi_ini_login_response(&l, rsp, (const uint8_t *)chap_auth,
						  sizeof(chap_auth)), ISCSI_INI_LOGIN_CONTINUE);
	assert_int_equal(iscsi_ini_login_request(&l, req, &q), 0);
	assert_string_equal(value_of(&q, "CHAP_A"), "5");
	assert_int_equal(req[1], ISCSI_STAGE_OPERATIONAL);
	/* an algorithm other than MD5: named */
	sec_rsp(rsp, req, false, sizeof(md5_7));
	assert_int_equal(iscsi_ini_login_response(&l, rsp, (const uint8_t *)md5_7,
						  sizeof(md5_7)), ISCSI_INI_LOGIN_FAILED);
	assert_non_null(strstr(l.why, "CHAP_A=7, not 5"));
	iscsi_ini_login_free(&l);

	/* MD5: CHAP_N and CHAP_R = MD5(1 || secret || 01 02), T set */
	iscsi_ini_login_init(&l, &o, isid, 0, 0, 0x80000000, 1);
	l.chap = ic;
	assert_int_equal(iscsi_ini_login_request(&l, req, &q), 0);
	sec_rsp(rsp, req, false, sizeof(chap_auth));
	assert_int_equal(iscsi_ini_login_response(&l, rsp, (const uint8_t *)chap_auth,
						  sizeof(chap_auth)), ISCSI_INI_LOGIN_CONTINUE);
	assert_int_equal(iscsi_ini_login_request(&l, req, &q), 0);
	sec_rsp(rsp, req, false, sizeof(md5_5));
	assert_int_equal(iscsi_ini_login_response(&l, rsp, (const uint8_t *)md5_5,
						  sizeof(md5_5)), ISCSI_INI_LOGIN_CONTINUE);
	assert_int_equal(iscsi_ini_login_request(&l, req, &q), 0);
	assert_int_equal(req[1], ISCSI_LOGIN_T | ISCSI_STAGE_OPERATIONAL);
	assert_string_equal(value_of(&q, "CHAP_N"), "alice");
	{
		static const uint8_t c[2] = { 1, 2 };

		assert_int_equal(iscsi_chap_check(1, "secretsecret12", c, 2,
						  value_of(&q, "CHAP_R")), 0);
	}
	assert_null(value_of(&q, "CHAP_C")); /* one-way */
	iscsi_ini_login_free(&l);

	/* a target that leaves the security stage before CHAP ended */
	iscsi_ini_login_init(&l, &o, isid, 0, 0, 0x80000000, 1);
	l.chap = ic;
	assert_int_equal(iscsi_ini_login_request(&l, req, &q), 0);
	sec_rsp(rsp, req, false, sizeof(chap_auth));
	assert_int_equal(iscsi_ini_login_response(&l, rsp, (const uint8_t *)chap_auth,
						  sizeof(chap_auth)), ISCSI_INI_LOGIN_CONTINUE);
	assert_int_equal(iscsi_ini_login_request(&l, req, &q), 0);
	sec_rsp(rsp, req, true, 0);
	assert_int_equal(iscsi_ini_login_response(&l, rsp, NULL, 0), ISCSI_INI_LOGIN_FAILED);
	assert_non_null(strstr(l.why, "before CHAP ended"));
	iscsi_ini_login_free(&l);

	/* without credentials, a target that wants CHAP: named */
	iscsi_ini_login_init(&l, &o, isid, 0, 0, 0x80000000, 1);
	assert_int_equal(iscsi_ini_login_request(&l, req, &q), 0);
	sec_rsp(rsp, req, false, sizeof(chap_auth));
	assert_int_equal(iscsi_ini_login_response(&l, rsp, (const uint8_t *)chap_auth,
						  sizeof(chap_auth)), ISCSI_INI_LOGIN_FAILED);
	assert_non_null(strstr(l.why, "no credentials"));
	iscsi_ini_login_free(&l);
	free(ic);
}

static void test_text_req(void **state)
{
	uint8_t bhs[48];

	(void)state;
	iscsi_text_req_init(bhs, 0x80000001, 0x1234, 5, 9, 16);
	assert_int_equal(bhs[0], ISCSI_OP_TEXT_REQ | ISCSI_OP_IMMEDIATE);
	assert_int_equal(bhs[1], ISCSI_FLAG_FINAL);
	assert_int_equal(bhs_dsl(bhs), 16);
	assert_int_equal(get_be32(bhs + BHS_ITT), 0x80000001);
	assert_int_equal(get_be32(bhs + BHS_TTT), 0x1234);
	assert_int_equal(get_be32(bhs + BHS_CMDSN), 5);
	assert_int_equal(get_be32(bhs + BHS_EXPSTATSN), 9);
}

static void test_login_response_checks(void **state)
{
	static const uint8_t isid[6] = { 0x80, 1, 2, 3, 0, 1 };
	struct iscsi_params o;
	struct iscsi_ini_login l;
	char qbuf[8192];
	struct iscsi_text_out q = { .buf = qbuf, .cap = sizeof(qbuf) };
	uint8_t req[48], rsp[48];

	(void)state;
	iscsi_params_default(&o);
	strcpy(o.initiator_name, "iqn.i");
	strcpy(o.target_name, "iqn.t");
	/* the first request: security stage, T to operational, names, None */
	iscsi_ini_login_init(&l, &o, isid, 0, 0, 0x80000000, 1);
	assert_int_equal(iscsi_ini_login_request(&l, req, &q), 0);
	assert_int_equal(req[0], ISCSI_OP_LOGIN_REQ | ISCSI_OP_IMMEDIATE);
	assert_int_equal(req[1], ISCSI_LOGIN_T | ISCSI_STAGE_OPERATIONAL);
	assert_string_equal(value_of(&q, "InitiatorName"), "iqn.i");
	assert_string_equal(value_of(&q, "TargetName"), "iqn.t");
	assert_string_equal(value_of(&q, "SessionType"), "Normal");
	assert_string_equal(value_of(&q, "AuthMethod"), "None");
	assert_null(value_of(&q, "MaxBurstLength"));
	assert_memory_equal(req + BHS_LOGIN_ISID, isid, 6);
	/* a response for another ISID, another ITT, with T and C both */
	memcpy(rsp, req, 48);
	rsp[0] = ISCSI_OP_LOGIN_RSP;
	rsp[1] = ISCSI_LOGIN_T | ISCSI_STAGE_OPERATIONAL;
	bhs_set_dsl(rsp, 0);
	rsp[BHS_LOGIN_ISID + 5] ^= 1;
	assert_int_equal(iscsi_ini_login_response(&l, rsp, NULL, 0), ISCSI_INI_LOGIN_FAILED);
	rsp[BHS_LOGIN_ISID + 5] ^= 1;
	put_be32(rsp + BHS_ITT, 1);
	assert_int_equal(iscsi_ini_login_response(&l, rsp, NULL, 0), ISCSI_INI_LOGIN_FAILED);
	put_be32(rsp + BHS_ITT, 0x80000000);
	rsp[1] |= ISCSI_LOGIN_C;
	assert_int_equal(iscsi_ini_login_response(&l, rsp, NULL, 0), ISCSI_INI_LOGIN_FAILED);
	/* a target that stays in the security stage is asked again */
	rsp[1] = 0;
	assert_int_equal(iscsi_ini_login_response(&l, rsp, NULL, 0), ISCSI_INI_LOGIN_CONTINUE);
	assert_int_equal(iscsi_ini_login_request(&l, req, &q), 0);
	assert_int_equal(req[1], ISCSI_LOGIN_T | ISCSI_STAGE_OPERATIONAL);
	assert_int_equal(q.len, 0);
	/* then moves on: the operational request offers the keys */
	rsp[1] = ISCSI_LOGIN_T | ISCSI_STAGE_OPERATIONAL;
	assert_int_equal(iscsi_ini_login_response(&l, rsp, NULL, 0), ISCSI_INI_LOGIN_CONTINUE);
	assert_int_equal(iscsi_ini_login_request(&l, req, &q), 0);
	assert_int_equal(req[1], ISCSI_LOGIN_T | ISCSI_STAGE_OPERATIONAL << 2 |
			 ISCSI_STAGE_FULL_FEATURE);
	assert_non_null(value_of(&q, "MaxBurstLength"));
	/* a final response with TSIH 0 */
	rsp[1] = ISCSI_LOGIN_T | ISCSI_STAGE_OPERATIONAL << 2 | ISCSI_STAGE_FULL_FEATURE;
	put_be16(rsp + BHS_LOGIN_TSIH, 0);
	assert_int_equal(iscsi_ini_login_response(&l, rsp, NULL, 0), ISCSI_INI_LOGIN_FAILED);
	iscsi_ini_login_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scsi_cmd_rfc3720),
		cmocka_unit_test(test_lun_encode),
		cmocka_unit_test(test_other_builders),
		cmocka_unit_test(test_check_target),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_residual_sense),
		cmocka_unit_test(test_offer),
		cmocka_unit_test(test_results),
		cmocka_unit_test(test_target_offers),
		cmocka_unit_test(test_login_defaults),
		cmocka_unit_test(test_login_small),
		cmocka_unit_test(test_login_failures),
		cmocka_unit_test(test_login_response_checks),
		cmocka_unit_test(test_login_chap),
		cmocka_unit_test(test_login_chap_checks),
		cmocka_unit_test(test_text_req),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
