// SPDX-License-Identifier: MIT
/*
 * iSCSI text keys and login: key=value list parsing and its limits, each
 * result function (OR, AND, min, max, first acceptable), NotUnderstood,
 * Reject and Irrelevant answers, declarations; the login state machine:
 * stages and transitions, status classes and details (RFC 7143
 * 11.13.5), TSIH, discovery and normal sessions, text over several PDUs.
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
#include <sys/stat.h>
#include <unistd.h>

#include "export/iscsi/chap.h"
#include "export/iscsi/keys.h"
#include "export/iscsi/login.h"
#include "export/iscsi/pdu.h"

static struct iscsi_params ours, cur;
static struct iscsi_neg neg;
static char obuf[8192];
static struct iscsi_text_out out;

static void setup_neg(bool login)
{
	iscsi_params_default(&ours);
	ours.header_digest = ours.data_digest = true;
	ours.initial_r2t = false;
	ours.immediate_data = true;
	ours.max_burst_length = 1048576;
	ours.first_burst_length = 262144;
	ours.default_time2wait = 0;
	ours.default_time2retain = 0;
	ours.max_outstanding_r2t = 8;
	ours.max_recv_dsl = 262144;
	iscsi_params_default(&cur);
	memset(&neg, 0, sizeof(neg));
	neg.ours = &ours;
	neg.cur = &cur;
	neg.login = login;
	neg.first_pdu = true;
	neg.stage = ISCSI_STAGE_OPERATIONAL;
	neg.peer_max_recv_dsl = 8192;
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

static int negotiate(const char *list)
{
	static char in[16384];
	size_t n = text(in, list);

	out.len = 0;
	out.overflow = false;
	return iscsi_keys_negotiate(&neg, in, n, &out, NULL);
}

/* The answer to @key in out, or NULL. */
static const char *answer(const char *key)
{
	size_t pos = 0, kl, vl;
	const char *k, *v;

	while (iscsi_text_next(out.buf, out.len, &pos, &k, &kl, &v, &vl) > 0)
		if (kl == strlen(key) && !memcmp(k, key, kl))
			return v;
	return NULL;
}

static void test_text_parse(void **state)
{
	char in[10000];
	size_t pos = 0, kl, vl, n;
	const char *k, *v;

	(void)state;
	n = text(in, "A=1||B.c-d+e@f_g=x,y|");
	assert_int_equal(iscsi_text_next(in, n, &pos, &k, &kl, &v, &vl), 1);
	assert_int_equal(kl, 1);
	assert_int_equal(vl, 1);
	assert_int_equal(iscsi_text_next(in, n, &pos, &k, &kl, &v, &vl), 1);
	assert_int_equal(kl, 11);
	assert_string_equal(v, "x,y");
	assert_int_equal(iscsi_text_next(in, n, &pos, &k, &kl, &v, &vl), 0);
	/* malformed: no '=', empty key, bad key character, unterminated */
	pos = 0;
	n = text(in, "NoEquals");
	assert_int_equal(iscsi_text_next(in, n, &pos, &k, &kl, &v, &vl), -EINVAL);
	pos = 0;
	n = text(in, "=value");
	assert_int_equal(iscsi_text_next(in, n, &pos, &k, &kl, &v, &vl), -EINVAL);
	pos = 0;
	n = text(in, "Bad Key=1");
	assert_int_equal(iscsi_text_next(in, n, &pos, &k, &kl, &v, &vl), -EINVAL);
	pos = 0;
	memcpy(in, "A=1", 3);
	assert_int_equal(iscsi_text_next(in, 3, &pos, &k, &kl, &v, &vl), -EINVAL);
	/* a key of 63 bytes is fine, 64 is not */
	memset(in, 'K', 63);
	strcpy(in + 63, "=1");
	pos = 0;
	assert_int_equal(iscsi_text_next(in, 66, &pos, &k, &kl, &v, &vl), 1);
	memset(in, 'K', 64);
	strcpy(in + 64, "=1");
	pos = 0;
	assert_int_equal(iscsi_text_next(in, 67, &pos, &k, &kl, &v, &vl), -EINVAL);
	/* a value over 8192 bytes */
	in[0] = 'A';
	in[1] = '=';
	memset(in + 2, 'v', 8193);
	in[8195] = 0;
	pos = 0;
	assert_int_equal(iscsi_text_next(in, 8196, &pos, &k, &kl, &v, &vl), -EINVAL);
	in[8194] = 0;
	pos = 0;
	assert_int_equal(iscsi_text_next(in, 8195, &pos, &k, &kl, &v, &vl), 1);
}

static void test_table(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < ISCSI_NR_KEYS; i++) {
		assert_non_null(iscsi_keys[i].name);
		assert_true(strlen(iscsi_keys[i].name) <= ISCSI_KEY_NAME_MAX);
		assert_int_equal(iscsi_key_lookup(iscsi_keys[i].name,
						  strlen(iscsi_keys[i].name)), (int)i);
	}
	assert_int_equal(iscsi_key_lookup("Nope", 4), -1);
	assert_int_equal(iscsi_keys[ISCSI_KEY_MAX_BURST_LENGTH].result, ISCSI_KR_MIN);
	assert_int_equal(iscsi_keys[ISCSI_KEY_DEFAULT_TIME2WAIT].result, ISCSI_KR_MAX);
	assert_int_equal(iscsi_keys[ISCSI_KEY_INITIAL_R2T].result, ISCSI_KR_OR);
	assert_int_equal(iscsi_keys[ISCSI_KEY_IMMEDIATE_DATA].result, ISCSI_KR_AND);
}

static void test_result_or(void **state)
{
	(void)state;
	setup_neg(true);
	/* InitialR2T: OR; ours No: the initiator's choice */
	assert_int_equal(negotiate("InitialR2T=Yes"), 0);
	assert_string_equal(answer("InitialR2T"), "Yes");
	assert_true(cur.initial_r2t);
	setup_neg(true);
	assert_int_equal(negotiate("InitialR2T=No|DataPDUInOrder=No"), 0);
	assert_string_equal(answer("InitialR2T"), "No");
	assert_false(cur.initial_r2t);
	/* DataPDUInOrder: ours Yes, so Yes whatever the initiator says */
	assert_string_equal(answer("DataPDUInOrder"), "Yes");
	assert_true(cur.data_pdu_in_order);
}

static void test_result_and(void **state)
{
	(void)state;
	setup_neg(true);
	assert_int_equal(negotiate("ImmediateData=No"), 0);
	assert_string_equal(answer("ImmediateData"), "No");
	assert_false(cur.immediate_data);
	setup_neg(true);
	ours.immediate_data = false;
	assert_int_equal(negotiate("ImmediateData=Yes"), 0);
	assert_string_equal(answer("ImmediateData"), "No");
	setup_neg(true);
	assert_int_equal(negotiate("ImmediateData=Yes"), 0);
	assert_string_equal(answer("ImmediateData"), "Yes");
	/* neither Yes nor No */
	setup_neg(true);
	assert_int_equal(negotiate("ImmediateData=Maybe"), 0);
	assert_string_equal(answer("ImmediateData"), "Reject");
	assert_true(cur.immediate_data); /* the default stays */
}

static void test_result_min_max(void **state)
{
	(void)state;
	setup_neg(true);
	assert_int_equal(negotiate("MaxBurstLength=262144|FirstBurstLength=16777215|"
				   "DefaultTime2Wait=2|DefaultTime2Retain=20|"
				   "MaxOutstandingR2T=0x10|ErrorRecoveryLevel=2|"
				   "MaxConnections=8"), 0);
	assert_string_equal(answer("MaxBurstLength"), "262144");
	assert_string_equal(answer("FirstBurstLength"), "262144");
	assert_string_equal(answer("DefaultTime2Wait"), "2");  /* max */
	assert_string_equal(answer("DefaultTime2Retain"), "0"); /* min */
	assert_string_equal(answer("MaxOutstandingR2T"), "8");  /* hex 16 */
	assert_string_equal(answer("ErrorRecoveryLevel"), "0");
	assert_string_equal(answer("MaxConnections"), "1");
	assert_int_equal(cur.max_burst_length, 262144);
	assert_int_equal(cur.default_time2wait, 2);
	setup_neg(true);
	ours.default_time2wait = 5;
	assert_int_equal(negotiate("DefaultTime2Wait=2|MaxBurstLength=16777215"), 0);
	assert_string_equal(answer("DefaultTime2Wait"), "5");
	assert_string_equal(answer("MaxBurstLength"), "1048576");
	/* out of range, not a number, too big: Reject, default kept */
	setup_neg(true);
	assert_int_equal(negotiate("MaxBurstLength=511|ErrorRecoveryLevel=3|"
				   "MaxOutstandingR2T=abc|FirstBurstLength=99999999999999999999|"
				   "DefaultTime2Wait=0x|MaxConnections=0"), 0);
	assert_string_equal(answer("MaxBurstLength"), "Reject");
	assert_string_equal(answer("ErrorRecoveryLevel"), "Reject");
	assert_string_equal(answer("MaxOutstandingR2T"), "Reject");
	assert_string_equal(answer("FirstBurstLength"), "Reject");
	assert_string_equal(answer("DefaultTime2Wait"), "Reject");
	assert_string_equal(answer("MaxConnections"), "Reject");
	assert_int_equal(cur.max_burst_length, 262144);
	/* FirstBurstLength never above MaxBurstLength once finished */
	setup_neg(true);
	ours.first_burst_length = 1048576;
	assert_int_equal(negotiate("MaxBurstLength=4096|FirstBurstLength=65536"), 0);
	iscsi_keys_finish(&neg, &out);
	assert_int_equal(cur.first_burst_length, 4096);
}

static void test_result_first(void **state)
{
	(void)state;
	setup_neg(true);
	assert_int_equal(negotiate("HeaderDigest=CRC32C,None|DataDigest=None,CRC32C"), 0);
	assert_string_equal(answer("HeaderDigest"), "CRC32C");
	assert_string_equal(answer("DataDigest"), "None");
	assert_true(cur.header_digest);
	assert_false(cur.data_digest);
	setup_neg(true);
	ours.header_digest = false;
	assert_int_equal(negotiate("HeaderDigest=CRC32C,None"), 0);
	assert_string_equal(answer("HeaderDigest"), "None");
	assert_false(cur.header_digest);
	setup_neg(true);
	assert_int_equal(negotiate("HeaderDigest=MD5,SHA1|TaskReporting=FastAbort,RFC3720"), 0);
	assert_string_equal(answer("HeaderDigest"), "Reject");
	assert_string_equal(answer("TaskReporting"), "RFC3720");
}

static void test_other_answers(void **state)
{
	(void)state;
	setup_neg(true);
	assert_int_equal(negotiate("X-com.example.foo=1|Bogus=2|TargetAlias=me|"
				   "SendTargets=All|OFMarker=No|IFMarkInt=2048|"
				   "MaxRecvDataSegmentLength=65536|"
				   "TargetPortalGroupTag=1|iSCSIProtocolLevel=2"), 0);
	assert_string_equal(answer("X-com.example.foo"), "NotUnderstood");
	assert_string_equal(answer("Bogus"), "NotUnderstood");
	assert_string_equal(answer("TargetAlias"), "Irrelevant");
	assert_string_equal(answer("TargetPortalGroupTag"), "Irrelevant");
	assert_string_equal(answer("SendTargets"), "Irrelevant");
	/* 13.26: obsolete markers answered Reject, never NotUnderstood */
	assert_string_equal(answer("OFMarker"), "Reject");
	assert_string_equal(answer("IFMarkInt"), "Reject");
	assert_string_equal(answer("iSCSIProtocolLevel"), "1");
	/* a declaration gets no answer */
	assert_null(answer("MaxRecvDataSegmentLength"));
	assert_int_equal(neg.peer_max_recv_dsl, 65536);
	iscsi_keys_finish(&neg, &out);
	assert_string_equal(answer("MaxRecvDataSegmentLength"), "262144");
	/* answers to our declarations are taken silently */
	setup_neg(true);
	assert_int_equal(negotiate("MaxRecvDataSegmentLength=Reject|ImmediateData=NotUnderstood"), 0);
	assert_int_equal(out.len, 0);
	assert_int_equal(neg.peer_max_recv_dsl, 8192);
	/* MaxRecvDataSegmentLength out of range */
	setup_neg(true);
	assert_int_equal(negotiate("MaxRecvDataSegmentLength=16777216"), 0);
	assert_string_equal(answer("MaxRecvDataSegmentLength"), "Reject");
}

static void test_phases(void **state)
{
	(void)state;
	/* a Text exchange in full feature phase: LO keys are Reject */
	setup_neg(false);
	assert_int_equal(negotiate("MaxBurstLength=4096|HeaderDigest=CRC32C|"
				   "SendTargets=All|MaxRecvDataSegmentLength=4096"), 0);
	assert_string_equal(answer("MaxBurstLength"), "Reject");
	assert_string_equal(answer("HeaderDigest"), "Reject");
	assert_null(answer("SendTargets"));
	assert_true(neg.got_send_targets);
	assert_string_equal(neg.send_targets, "All");
	assert_int_equal(neg.peer_max_recv_dsl, 4096); /* ALL: allowed */
	/* a security key outside a login's security stage */
	setup_neg(true);
	assert_int_equal(negotiate("AuthMethod=None"), -EPROTO);
	setup_neg(false);
	assert_int_equal(negotiate("CHAP_A=5"), 0);
	assert_string_equal(answer("CHAP_A"), "Reject");
	/* a key twice in a login; fine in separate Text exchanges */
	setup_neg(true);
	assert_int_equal(negotiate("MaxBurstLength=4096|MaxBurstLength=8192"), -EPROTO);
	setup_neg(true);
	assert_int_equal(negotiate("MaxBurstLength=4096"), 0);
	assert_int_equal(negotiate("MaxBurstLength=8192"), -EPROTO);
	setup_neg(false);
	assert_int_equal(negotiate("SendTargets=All"), 0);
	assert_int_equal(negotiate("SendTargets=All"), 0);
	/* SessionType */
	setup_neg(true);
	assert_int_equal(negotiate("SessionType=Discovery"), 0);
	assert_true(cur.discovery);
	setup_neg(true);
	assert_int_equal(negotiate("SessionType=Other"), -ENOTSUP);
	/* malformed text */
	setup_neg(true);
	assert_int_equal(negotiate("MaxBurstLength"), -EINVAL);
	/* names: over 223 bytes is Reject */
	{
		char big[300];

		setup_neg(true);
		memset(big, 'n', sizeof(big));
		memcpy(big, "InitiatorName=", 14);
		big[14 + 224] = 0;
		assert_int_equal(negotiate(big), 0);
		assert_string_equal(answer("InitiatorName"), "Reject");
		assert_string_equal(cur.initiator_name, "");
	}
	/* the answers do not fit: -ENOSPC */
	setup_neg(true);
	out.cap = 10;
	{
		static char in[64];
		size_t n = text(in, "Bogus=1|Bogus2=2");

		assert_int_equal(iscsi_keys_negotiate(&neg, in, n, &out, NULL), -ENOSPC);
	}
}

/* ------------------------------------------------------------ login */

static const char *names[] = { "iqn.2026-12.org.blkstack:a", "iqn.2026-12.org.blkstack:b" };
static uint16_t next_tsih = 7;
static bool live_tsih;

static const char *tname(void *o, unsigned int i)
{
	(void)o;
	return names[i];
}

static bool acl(void *o, unsigned int i, const char *iname)
{
	(void)o;
	return i == 0 || !strcmp(iname, "iqn.x:ok");
}

/* TSIH 9: a live session with MaxConnections connections; 10: one that
 * takes another (ExpCmdSN 77); the rest: none */
static uint16_t check_tsih(void *o, uint16_t tsih, const uint8_t *isid,
			   const char *iname, int target, uint16_t cid,
			   uint32_t *exp_cmdsn)
{
	(void)o;
	(void)cid;
	(void)isid;
	(void)iname;
	(void)target;
	if (live_tsih && tsih == 9)
		return ISCSI_LOGIN_TOO_MANY_CONNECTIONS;
	if (live_tsih && tsih == 10) {
		*exp_cmdsn = 77;
		return 0;
	}
	return ISCSI_LOGIN_NO_SESSION;
}

static uint16_t alloc_tsih(void *o)
{
	(void)o;
	return next_tsih++;
}

static const struct iscsi_login_env env = {
	.nr_targets = 2, .target_name = tname, .session_check = check_tsih,
	.allowed = acl, .tpgt = 1,
};

static struct iscsi_login lg;
static uint8_t rsp[48];
static char rtext[8192];
static struct iscsi_text_out rout;

static void login_start(void)
{
	setup_neg(true);
	iscsi_login_init(&lg, &env, &ours);
	lg.alloc_tsih = alloc_tsih;
	rout = (struct iscsi_text_out){ .buf = rtext, .cap = sizeof(rtext) };
}

static int step(uint8_t flags, uint8_t vmin, uint16_t tsih, const char *list)
{
	uint8_t req[48];
	static char data[8192];
	size_t n = list ? text(data, list) : 0;

	iscsi_bhs_init(req, ISCSI_OP_LOGIN_REQ | ISCSI_OP_IMMEDIATE, flags);
	req[BHS_LOGIN_VMIN] = vmin;
	memcpy(req + BHS_LOGIN_ISID, "\x80\x01\x02\x03\x04\x05", 6);
	put_be16(req + BHS_LOGIN_TSIH, tsih);
	put_be32(req + BHS_ITT, 0x1234);
	put_be16(req + BHS_LOGIN_CID, 1);
	put_be32(req + BHS_CMDSN, 100);
	return iscsi_login_step(&lg, req, (const uint8_t *)data, (uint32_t)n, rsp, &rout);
}

static const char *rans(const char *key)
{
	out = rout;
	return answer(key);
}

static uint16_t rstatus(void)
{
	return (uint16_t)(rsp[BHS_LOGIN_STATUS_CLASS] << 8 | rsp[BHS_LOGIN_STATUS_DETAIL]);
}

#define SEC_TO_OP (ISCSI_LOGIN_T | 0 << 2 | 1)
#define SEC_TO_FFP (ISCSI_LOGIN_T | 0 << 2 | 3)
#define OP_TO_FFP (ISCSI_LOGIN_T | 1 << 2 | 3)
#define OP_STAY (1 << 2 | 1)

static void test_login_normal(void **state)
{
	(void)state;
	login_start();
	assert_int_equal(step(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:ok|TargetName=iqn.2026-12.org.blkstack:b|"
			      "SessionType=Normal|AuthMethod=CHAP,None"), ISCSI_LOGIN_CONTINUE);
	assert_int_equal(rsp[0], ISCSI_OP_LOGIN_RSP);
	assert_int_equal(rsp[BHS_FLAGS], SEC_TO_OP);
	assert_int_equal(rstatus(), 0);
	assert_string_equal(rans("AuthMethod"), "None");
	assert_string_equal(rans("TargetPortalGroupTag"), "1");
	assert_int_equal(get_be32(rsp + BHS_STATSN), 1);
	assert_int_equal(get_be32(rsp + BHS_EXPCMDSN), 100);
	assert_int_equal(get_be32(rsp + BHS_ITT), 0x1234);
	assert_int_equal(get_be16(rsp + BHS_LOGIN_TSIH), 0);
	assert_int_equal(bhs_dsl(rsp), rout.len);
	assert_int_equal(lg.target, 1);
	/* operational stage, then full feature phase */
	assert_int_equal(step(OP_STAY, 0, 0, "MaxBurstLength=65536|HeaderDigest=CRC32C"),
			 ISCSI_LOGIN_CONTINUE);
	assert_int_equal(rsp[BHS_FLAGS], OP_STAY);
	assert_string_equal(rans("MaxBurstLength"), "65536");
	assert_int_equal(get_be32(rsp + BHS_STATSN), 2);
	assert_int_equal(step(OP_TO_FFP, 0, 0, "MaxRecvDataSegmentLength=65536"), ISCSI_LOGIN_DONE);
	assert_int_equal(rsp[BHS_FLAGS], OP_TO_FFP);
	assert_string_equal(rans("MaxRecvDataSegmentLength"), "262144");
	assert_int_equal(get_be16(rsp + BHS_LOGIN_TSIH), next_tsih - 1);
	assert_int_equal(lg.peer_max_recv_dsl, 65536);
	assert_true(lg.params.header_digest);
	assert_int_equal(lg.params.max_burst_length, 65536);
	assert_string_equal(lg.params.initiator_name, "iqn.x:ok");
	iscsi_login_free(&lg);
}

/* A connection added to a live session (RFC 7143 6.3.1): the session's
 * TSIH and ExpCmdSN, leading-only keys Irrelevant, connection keys
 * negotiated; no new TSIH */
static void test_login_join(void **state)
{
	uint16_t before = next_tsih;

	(void)state;
	live_tsih = true;
	login_start();
	assert_int_equal(step(OP_TO_FFP, 0, 10, "InitiatorName=iqn.x:ok|TargetName=iqn.2026-12.org.blkstack:b|"
			      "SessionType=Normal|MaxConnections=4|InitialR2T=No|HeaderDigest=CRC32C|"
			      "MaxRecvDataSegmentLength=65536"), ISCSI_LOGIN_DONE);
	live_tsih = false;
	assert_int_equal(rstatus(), 0);
	assert_true(lg.joining);
	assert_string_equal(rans("MaxConnections"), "Irrelevant");
	assert_string_equal(rans("InitialR2T"), "Irrelevant");
	assert_string_equal(rans("HeaderDigest"), "CRC32C");
	assert_null(rans("SessionType"));
	assert_int_equal(get_be16(rsp + BHS_LOGIN_TSIH), 10);
	assert_int_equal(get_be32(rsp + BHS_EXPCMDSN), 77);
	assert_int_equal(next_tsih, before);
	assert_int_equal(lg.peer_max_recv_dsl, 65536);
	iscsi_login_free(&lg);
}

static void test_login_one_pdu_and_discovery(void **state)
{
	(void)state;
	/* security stage straight to full feature phase, discovery */
	login_start();
	assert_int_equal(step(SEC_TO_FFP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery"),
			 ISCSI_LOGIN_DONE);
	assert_int_equal(rstatus(), 0);
	assert_true(lg.params.discovery);
	assert_int_equal(lg.target, -1);
	assert_null(rans("TargetPortalGroupTag"));
	assert_string_equal(rans("MaxRecvDataSegmentLength"), "262144");
	assert_string_equal(lg.params.auth_method, "None");
	iscsi_login_free(&lg);
	/* operational stage first (security skipped) */
	login_start();
	assert_int_equal(step(OP_TO_FFP, 0, 0, "InitiatorName=iqn.x:i|TargetName=iqn.2026-12.org.blkstack:a"),
			 ISCSI_LOGIN_DONE);
	assert_int_equal(lg.target, 0);
	iscsi_login_free(&lg);
}

static void expect_fail(uint8_t flags, uint8_t vmin, uint16_t tsih,
			const char *list, uint16_t status)
{
	login_start();
	assert_int_equal(step(flags, vmin, tsih, list), ISCSI_LOGIN_FAILED);
	assert_int_equal(rstatus(), status);
	assert_int_equal(bhs_dsl(rsp), 0);
	iscsi_login_free(&lg);
}

static void test_login_failures(void **state)
{
	(void)state;
	expect_fail(SEC_TO_OP, 0, 0, "TargetName=iqn.2026-12.org.blkstack:a",
		    ISCSI_LOGIN_MISSING_PARAMETER);
	expect_fail(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i",
		    ISCSI_LOGIN_MISSING_PARAMETER);
	expect_fail(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|TargetName=iqn.nope",
		    ISCSI_LOGIN_NOT_FOUND);
	/* target b's ACL takes iqn.x:ok only */
	expect_fail(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:no|TargetName=iqn.2026-12.org.blkstack:b",
		    ISCSI_LOGIN_AUTHZ_FAILED);
	expect_fail(SEC_TO_OP, 1, 0, "InitiatorName=iqn.x:i|SessionType=Discovery",
		    ISCSI_LOGIN_UNSUPPORTED_VERSION);
	expect_fail(SEC_TO_OP | ISCSI_LOGIN_C, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery",
		    ISCSI_LOGIN_INITIATOR_ERROR);
	/* NSG not after CSG; CSG 2; CSG full feature */
	expect_fail(ISCSI_LOGIN_T | 1 << 2 | 0, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery",
		    ISCSI_LOGIN_INITIATOR_ERROR);
	expect_fail(2 << 2 | 2, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery",
		    ISCSI_LOGIN_INITIATOR_ERROR);
	expect_fail(ISCSI_LOGIN_T | 0 << 2 | 2, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery",
		    ISCSI_LOGIN_INITIATOR_ERROR);
	/* only CHAP offered (not implemented): authentication failure */
	expect_fail(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery|AuthMethod=CHAP",
		    ISCSI_LOGIN_AUTH_FAILED);
	expect_fail(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery|CHAP_A=5",
		    ISCSI_LOGIN_AUTH_FAILED);
	/* TSIH of no session; of a live one (a second connection) */
	expect_fail(SEC_TO_OP, 0, 3, "InitiatorName=iqn.x:i|TargetName=iqn.2026-12.org.blkstack:a",
		    ISCSI_LOGIN_NO_SESSION);
	live_tsih = true;
	expect_fail(SEC_TO_OP, 0, 9, "InitiatorName=iqn.x:i|TargetName=iqn.2026-12.org.blkstack:a",
		    ISCSI_LOGIN_TOO_MANY_CONNECTIONS);
	live_tsih = false;
	expect_fail(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Bogus",
		    ISCSI_LOGIN_SESSION_TYPE_UNSUPPORTED);
	expect_fail(SEC_TO_OP, 0, 0, "InitiatorName", ISCSI_LOGIN_INITIATOR_ERROR);
	expect_fail(OP_TO_FFP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery|AuthMethod=None",
		    ISCSI_LOGIN_INITIATOR_ERROR);
	/* not immediate */
	login_start();
	{
		uint8_t req[48];

		iscsi_bhs_init(req, ISCSI_OP_LOGIN_REQ, SEC_TO_OP);
		assert_int_equal(iscsi_login_step(&lg, req, NULL, 0, rsp, &rout),
				 ISCSI_LOGIN_FAILED);
		assert_int_equal(rstatus(), ISCSI_LOGIN_INITIATOR_ERROR);
	}
	iscsi_login_free(&lg);
	/* a later request in the wrong stage, or with another ISID */
	login_start();
	assert_int_equal(step(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery"),
			 ISCSI_LOGIN_CONTINUE);
	assert_int_equal(step(SEC_TO_OP, 0, 0, NULL), ISCSI_LOGIN_FAILED);
	assert_int_equal(rstatus(), ISCSI_LOGIN_INITIATOR_ERROR);
	iscsi_login_free(&lg);
	/* a key declared twice across the login */
	login_start();
	assert_int_equal(step(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery"),
			 ISCSI_LOGIN_CONTINUE);
	assert_int_equal(step(OP_STAY, 0, 0, "InitiatorName=iqn.y:j"), ISCSI_LOGIN_FAILED);
	iscsi_login_free(&lg);
	assert_string_equal(iscsi_login_status_name(ISCSI_LOGIN_NOT_FOUND), "target not found");
}

static void test_login_continuation(void **state)
{
	uint8_t req[48];
	const char *part1 = "InitiatorName=iqn.x:i\0Sessio";
	const char *part2 = "nType=Discovery";

	(void)state;
	login_start();
	iscsi_bhs_init(req, ISCSI_OP_LOGIN_REQ | ISCSI_OP_IMMEDIATE, ISCSI_LOGIN_C);
	assert_int_equal(iscsi_login_step(&lg, req, (const uint8_t *)part1, 28, rsp, &rout),
			 ISCSI_LOGIN_CONTINUE);
	assert_int_equal(bhs_dsl(rsp), 0);
	assert_int_equal(rsp[BHS_FLAGS] & ISCSI_LOGIN_T, 0);
	iscsi_bhs_init(req, ISCSI_OP_LOGIN_REQ | ISCSI_OP_IMMEDIATE, SEC_TO_FFP);
	assert_int_equal(iscsi_login_step(&lg, req, (const uint8_t *)part2, 16, rsp, &rout),
			 ISCSI_LOGIN_DONE);
	assert_true(lg.params.discovery);
	assert_string_equal(lg.params.initiator_name, "iqn.x:i");
	iscsi_login_free(&lg);
}

static void test_chap_values(void **state)
{
	uint8_t b[32], md5[16];
	char hex[40];
	static const uint8_t want[16] = {
		0xd2, 0xad, 0x9b, 0x55, 0x31, 0x83, 0x66, 0x8f,
		0xa0, 0x64, 0x20, 0x5c, 0x85, 0x77, 0x9b, 0x04,
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < 16; i++)
		b[i] = (uint8_t)i;
	/* MD5(id || secret || challenge), RFC 1994 4.1 */
	iscsi_chap_response(7, "secretsecret12", b, 16, md5);
	assert_memory_equal(md5, want, 16);
	iscsi_chap_hex(b, 16, hex);
	assert_string_equal(hex, "0x000102030405060708090a0b0c0d0e0f");
	memset(b, 0xee, sizeof(b));
	assert_int_equal(iscsi_chap_decode(hex, b, sizeof(b)), 16);
	assert_int_equal(b[15], 15);
	assert_int_equal(iscsi_chap_decode("0bAAECAwQFBgcICQoLDA0ODw==", b, sizeof(b)), 16);
	assert_int_equal(b[1], 1);
	assert_int_equal(b[15], 15);
	assert_int_equal(iscsi_chap_decode("0x", b, sizeof(b)), -EINVAL);
	assert_int_equal(iscsi_chap_decode("1234", b, sizeof(b)), -EINVAL);
	assert_int_equal(iscsi_chap_decode("0xzz", b, sizeof(b)), -EINVAL);
	assert_int_equal(iscsi_chap_decode("0x123", b, sizeof(b)), -EINVAL);
	assert_int_equal(iscsi_chap_decode("0x000102", b, 2), -E2BIG);
	/* a CHAP_R checked: hex or base64, another digest, malformed */
	for (i = 0; i < 16; i++)
		b[i] = (uint8_t)i;
	assert_int_equal(iscsi_chap_check(7, "secretsecret12", b, 16,
					  "0xd2ad9b553183668fa064205c85779b04"), 0);
	assert_int_equal(iscsi_chap_check(7, "secretsecret12", b, 16,
					  "0b0q2bVTGDZo+gZCBchXebBA=="), 0);
	assert_int_equal(iscsi_chap_check(8, "secretsecret12", b, 16,
					  "0xd2ad9b553183668fa064205c85779b04"), -EACCES);
	assert_int_equal(iscsi_chap_check(7, "secretsecret13", b, 16,
					  "0xd2ad9b553183668fa064205c85779b04"), -EACCES);
	assert_int_equal(iscsi_chap_check(7, "secretsecret12", b, 16,
					  "0xd2ad9b553183668fa064205c85779b"), -EINVAL);
	assert_int_equal(iscsi_chap_check(7, "secretsecret12", b, 16, "d2ad"), -EINVAL);
}

static void test_chap_file(void **state)
{
	char path[] = "/tmp/test_iscsi_chap.XXXXXX", err[256];
	struct iscsi_chap *c = calloc(1, sizeof(*c));
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "# users\ninitiator alice secretsecret12\n\ntarget tgt targetsecret99 # mutual\n");
	fclose(f);
	assert_int_equal(iscsi_chap_load(path, c, err, sizeof(err)), 0);
	assert_int_equal(c->nr_users, 1);
	assert_string_equal(c->users[0].name, "alice");
	assert_true(c->has_target);
	assert_string_equal(c->target.secret, "targetsecret99");
	/* readable by others: refused */
	chmod(path, 0644);
	assert_int_equal(iscsi_chap_load(path, c, err, sizeof(err)), -EACCES);
	assert_non_null(strstr(err, "chmod 600"));
	chmod(path, 0600);
	/* a secret under 12 bytes, a bad role, no initiator */
	f = fopen(path, "w");
	fprintf(f, "initiator bob short\n");
	fclose(f);
	assert_int_equal(iscsi_chap_load(path, c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":1:"));
	f = fopen(path, "w");
	fprintf(f, "admin bob secretsecret12\n");
	fclose(f);
	assert_int_equal(iscsi_chap_load(path, c, err, sizeof(err)), -EINVAL);
	f = fopen(path, "w");
	fprintf(f, "target tgt targetsecret99\n");
	fclose(f);
	assert_int_equal(iscsi_chap_load(path, c, err, sizeof(err)), -EINVAL);
	unlink(path);
	assert_int_equal(iscsi_chap_load(path, c, err, sizeof(err)), -EACCES);
	free(c);
}

/* "CHAP_C" of the response text: decoded */
static int rchap_c(uint8_t *c)
{
	const char *v = rans("CHAP_C");

	return v ? iscsi_chap_decode(v, c, 64) : -1;
}

static void test_login_chap(void **state)
{
	static struct iscsi_chap secrets;
	struct iscsi_login_env cenv = env;
	uint8_t ch[64], md5[16];
	char list[256], hex[40];
	unsigned int id;

	(void)state;
	memset(&secrets, 0, sizeof(secrets));
	secrets.nr_users = 1;
	strcpy(secrets.users[0].name, "alice");
	strcpy(secrets.users[0].secret, "secretsecret12");
	strcpy(secrets.target.name, "tgt");
	strcpy(secrets.target.secret, "targetsecret99");
	secrets.has_target = true;
	cenv.chap = &secrets;

	/* one-way and mutual CHAP, then the operational stage */
	login_start();
	lg.env = &cenv;
	assert_int_equal(step(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery|AuthMethod=None,CHAP"),
			 ISCSI_LOGIN_CONTINUE);
	assert_string_equal(rans("AuthMethod"), "CHAP");
	assert_int_equal(rsp[BHS_FLAGS] & ISCSI_LOGIN_T, 0); /* not yet */
	assert_int_equal(step(SEC_TO_OP, 0, 0, "CHAP_A=7,5"), ISCSI_LOGIN_CONTINUE);
	assert_string_equal(rans("CHAP_A"), "5");
	assert_int_equal(rchap_c(ch), 16);
	id = (unsigned int)atoi(rans("CHAP_I"));
	assert_int_equal(rsp[BHS_FLAGS] & ISCSI_LOGIN_T, 0);
	iscsi_chap_response((uint8_t)id, "secretsecret12", ch, 16, md5);
	iscsi_chap_hex(md5, 16, hex);
	snprintf(list, sizeof(list), "CHAP_N=alice|CHAP_R=%s|CHAP_I=9|CHAP_C=0x0102030405", hex);
	assert_int_equal(step(SEC_TO_OP, 0, 0, list), ISCSI_LOGIN_CONTINUE);
	assert_int_equal(rstatus(), 0);
	assert_int_equal(rsp[BHS_FLAGS], SEC_TO_OP);
	assert_string_equal(rans("CHAP_N"), "tgt");
	iscsi_chap_response(9, "targetsecret99", (const uint8_t *)"\x01\x02\x03\x04\x05", 5, md5);
	iscsi_chap_hex(md5, 16, hex);
	assert_string_equal(rans("CHAP_R"), hex);
	assert_string_equal(lg.chap_user, "alice");
	assert_int_equal(step(OP_TO_FFP, 0, 0, NULL), ISCSI_LOGIN_DONE);
	iscsi_login_free(&lg);

	/* a wrong response, an unknown name */
	login_start();
	lg.env = &cenv;
	step(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery|AuthMethod=CHAP");
	step(SEC_TO_OP, 0, 0, "CHAP_A=5");
	assert_int_equal(step(SEC_TO_OP, 0, 0, "CHAP_N=alice|CHAP_R=0x00000000000000000000000000000000"),
			 ISCSI_LOGIN_FAILED);
	assert_int_equal(rstatus(), ISCSI_LOGIN_AUTH_FAILED);
	iscsi_login_free(&lg);
	login_start();
	lg.env = &cenv;
	step(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery|AuthMethod=CHAP");
	assert_int_equal(rchap_c(ch), -1);
	step(SEC_TO_OP, 0, 0, "CHAP_A=5");
	id = (unsigned int)atoi(rans("CHAP_I"));
	assert_int_equal(rchap_c(ch), 16);
	iscsi_chap_response((uint8_t)id, "secretsecret12", ch, 16, md5);
	iscsi_chap_hex(md5, 16, hex);
	snprintf(list, sizeof(list), "CHAP_N=mallory|CHAP_R=%s", hex);
	assert_int_equal(step(SEC_TO_OP, 0, 0, list), ISCSI_LOGIN_FAILED);
	iscsi_login_free(&lg);

	/* mutual with our own challenge reflected: refused */
	login_start();
	lg.env = &cenv;
	step(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery|AuthMethod=CHAP");
	step(SEC_TO_OP, 0, 0, "CHAP_A=5");
	id = (unsigned int)atoi(rans("CHAP_I"));
	rchap_c(ch);
	iscsi_chap_response((uint8_t)id, "secretsecret12", ch, 16, md5);
	iscsi_chap_hex(md5, 16, hex);
	{
		char chex[40];

		iscsi_chap_hex(ch, 16, chex);
		snprintf(list, sizeof(list), "CHAP_N=alice|CHAP_R=%s|CHAP_I=1|CHAP_C=%s", hex, chex);
	}
	assert_int_equal(step(SEC_TO_OP, 0, 0, list), ISCSI_LOGIN_FAILED);
	assert_int_equal(rstatus(), ISCSI_LOGIN_AUTH_FAILED);
	iscsi_login_free(&lg);

	/* None offered only; MD5 not offered; security stage skipped */
	login_start();
	lg.env = &cenv;
	assert_int_equal(step(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery|AuthMethod=None"),
			 ISCSI_LOGIN_FAILED);
	assert_int_equal(rstatus(), ISCSI_LOGIN_AUTH_FAILED);
	iscsi_login_free(&lg);
	login_start();
	lg.env = &cenv;
	step(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery|AuthMethod=CHAP");
	assert_int_equal(step(SEC_TO_OP, 0, 0, "CHAP_A=6,7"), ISCSI_LOGIN_FAILED);
	assert_int_equal(rstatus(), ISCSI_LOGIN_AUTH_FAILED);
	iscsi_login_free(&lg);
	login_start();
	lg.env = &cenv;
	assert_int_equal(step(OP_TO_FFP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery"),
			 ISCSI_LOGIN_FAILED);
	assert_int_equal(rstatus(), ISCSI_LOGIN_AUTH_FAILED);
	iscsi_login_free(&lg);
	/* without AuthMethod, the initiator asks to move on: refused */
	login_start();
	lg.env = &cenv;
	assert_int_equal(step(SEC_TO_OP, 0, 0, "InitiatorName=iqn.x:i|SessionType=Discovery"),
			 ISCSI_LOGIN_FAILED);
	iscsi_login_free(&lg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_parse),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_result_or),
		cmocka_unit_test(test_result_and),
		cmocka_unit_test(test_result_min_max),
		cmocka_unit_test(test_result_first),
		cmocka_unit_test(test_other_answers),
		cmocka_unit_test(test_phases),
		cmocka_unit_test(test_login_normal),
		cmocka_unit_test(test_login_join),
		cmocka_unit_test(test_login_one_pdu_and_discovery),
		cmocka_unit_test(test_login_failures),
		cmocka_unit_test(test_login_continuation),
		cmocka_unit_test(test_chap_values),
		cmocka_unit_test(test_chap_file),
		cmocka_unit_test(test_login_chap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
