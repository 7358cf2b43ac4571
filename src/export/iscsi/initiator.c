// SPDX-License-Identifier: MIT
/*
 * The initiator's side of iSCSI without sockets (see initiator.h): PDU
 * builders (RFC 7143 11.3, 11.5, 11.7.1, 11.14, 11.18), the checks of a
 * target's PDUs (11.2), the CmdSN window (4.2.2.1), residuals and sense
 * (11.4), and the login (6.3, 11.12, 11.13).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "initiator.h"
#include "login.h" /* iscsi_login_status_name() */

int iscsi_lun_encode(uint64_t lun, uint8_t out[8])
{
	memset(out, 0, 8);
	if (lun < 256) {
		out[1] = (uint8_t)lun; /* peripheral device addressing, bus 0 */
		return 0;
	}
	if (lun < 16384) {
		out[0] = (uint8_t)(0x40 | lun >> 8); /* flat space */
		out[1] = (uint8_t)lun;
		return 0;
	}
	return -ERANGE;
}

void iscsi_scsi_cmd_init(uint8_t *bhs, uint8_t flags, const uint8_t *lun,
			 uint32_t itt, uint32_t edtl, const uint8_t *cdb,
			 uint8_t cdb_len, uint32_t dsl)
{
	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_CMD, flags);
	bhs_set_dsl(bhs, dsl);
	memcpy(bhs + BHS_LUN, lun, 8);
	put_be32(bhs + BHS_ITT, itt);
	put_be32(bhs + BHS_CMD_EDTL, edtl);
	memcpy(bhs + BHS_CMD_CDB, cdb, cdb_len > ISCSI_CDB_LEN ? ISCSI_CDB_LEN : cdb_len);
}

void iscsi_data_out_init(uint8_t *bhs, bool final, const uint8_t *lun,
			 uint32_t itt, uint32_t ttt, uint32_t datasn,
			 uint32_t offset, uint32_t len, uint32_t exp_statsn)
{
	iscsi_bhs_init(bhs, ISCSI_OP_DATA_OUT, final ? ISCSI_FLAG_FINAL : 0);
	bhs_set_dsl(bhs, len);
	memcpy(bhs + BHS_LUN, lun, 8);
	put_be32(bhs + BHS_ITT, itt);
	put_be32(bhs + BHS_TTT, ttt);
	put_be32(bhs + BHS_EXPSTATSN, exp_statsn);
	put_be32(bhs + BHS_DATASN, datasn);
	put_be32(bhs + BHS_BUF_OFFSET, offset);
}

void iscsi_nop_out_answer_init(uint8_t *bhs, const uint8_t *nop_in,
			       uint32_t cmdsn, uint32_t exp_statsn)
{
	iscsi_bhs_init(bhs, ISCSI_OP_NOP_OUT | ISCSI_OP_IMMEDIATE,
		       ISCSI_FLAG_FINAL);
	memcpy(bhs + BHS_LUN, nop_in + BHS_LUN, 8);
	put_be32(bhs + BHS_ITT, ISCSI_RSVD_TAG);
	memcpy(bhs + BHS_TTT, nop_in + BHS_TTT, 4);
	iscsi_req_set_sn(bhs, cmdsn, exp_statsn);
}

void iscsi_nop_out_ping_init(uint8_t *bhs, const uint8_t *lun, uint32_t itt,
			     uint32_t cmdsn, uint32_t exp_statsn)
{
	iscsi_bhs_init(bhs, ISCSI_OP_NOP_OUT | ISCSI_OP_IMMEDIATE,
		       ISCSI_FLAG_FINAL);
	memcpy(bhs + BHS_LUN, lun, 8);
	put_be32(bhs + BHS_ITT, itt);
	put_be32(bhs + BHS_TTT, ISCSI_RSVD_TAG);
	iscsi_req_set_sn(bhs, cmdsn, exp_statsn);
}

void iscsi_tmf_init(uint8_t *bhs, uint8_t func, const uint8_t *lun,
		    uint32_t itt, uint32_t ref_itt, uint32_t cmdsn,
		    uint32_t exp_statsn, uint32_t ref_cmdsn)
{
	iscsi_bhs_init(bhs, ISCSI_OP_TMF_REQ | ISCSI_OP_IMMEDIATE,
		       ISCSI_FLAG_FINAL | (func & ISCSI_TMF_FUNC_MASK));
	memcpy(bhs + BHS_LUN, lun, 8);
	put_be32(bhs + BHS_ITT, itt);
	put_be32(bhs + BHS_TMF_REF_TASK, ref_itt);
	iscsi_req_set_sn(bhs, cmdsn, exp_statsn);
	put_be32(bhs + BHS_TMF_REFCMDSN, ref_cmdsn);
}

void iscsi_logout_init(uint8_t *bhs, uint8_t reason, uint32_t itt,
		       uint16_t cid, uint32_t cmdsn, uint32_t exp_statsn)
{
	iscsi_bhs_init(bhs, ISCSI_OP_LOGOUT_REQ | ISCSI_OP_IMMEDIATE,
		       ISCSI_FLAG_FINAL | (reason & ISCSI_LOGOUT_REASON_MASK));
	put_be32(bhs + BHS_ITT, itt);
	put_be16(bhs + BHS_LOGOUT_CID, cid);
	iscsi_req_set_sn(bhs, cmdsn, exp_statsn);
}

void iscsi_text_req_init(uint8_t *bhs, uint32_t itt, uint32_t ttt,
			 uint32_t cmdsn, uint32_t exp_statsn, uint32_t dsl)
{
	iscsi_bhs_init(bhs, ISCSI_OP_TEXT_REQ | ISCSI_OP_IMMEDIATE,
		       ISCSI_FLAG_FINAL);
	bhs_set_dsl(bhs, dsl);
	put_be32(bhs + BHS_ITT, itt);
	put_be32(bhs + BHS_TTT, ttt);
	iscsi_req_set_sn(bhs, cmdsn, exp_statsn);
}

int iscsi_pdu_check_target(const uint8_t *bhs, uint32_t max_dsl,
			   struct iscsi_pdu_lens *l)
{
	/* the target opcodes we take, and whether they carry data */
	static const struct {
		bool valid;
		bool data;
	} rsp_ops[64] = {
		[ISCSI_OP_NOP_IN] = { true, true },
		[ISCSI_OP_SCSI_RSP] = { true, true },
		[ISCSI_OP_TMF_RSP] = { true, false },
		[ISCSI_OP_LOGIN_RSP] = { true, true },
		[ISCSI_OP_TEXT_RSP] = { true, true },
		[ISCSI_OP_DATA_IN] = { true, true },
		[ISCSI_OP_LOGOUT_RSP] = { true, false },
		[ISCSI_OP_R2T] = { true, false },
		[ISCSI_OP_ASYNC] = { true, true },
		[ISCSI_OP_REJECT] = { true, true },
	};
	uint8_t op = bhs_opcode(bhs);
	uint32_t dsl = bhs_dsl(bhs);

	if (iscsi_pdu_lens(bhs, max_dsl, l))
		return -EMSGSIZE;
	if (!rsp_ops[op].valid || (dsl && !rsp_ops[op].data) || l->ahs_len)
		return -EPROTO;
	return 0;
}

void iscsi_window_update(struct iscsi_window *w, const uint8_t *bhs)
{
	uint32_t exp = get_be32(bhs + BHS_EXPCMDSN);
	uint32_t max = get_be32(bhs + BHS_MAXCMDSN);

	/* 4.2.2.1: MaxCmdSN < ExpCmdSN - 1 is ignored */
	if (iscsi_sn_cmp(max, exp - 1) < 0)
		return;
	if (iscsi_sn_cmp(exp, w->exp_cmdsn) > 0)
		w->exp_cmdsn = exp;
	if (iscsi_sn_cmp(max, w->max_cmdsn) > 0)
		w->max_cmdsn = max;
}

int iscsi_residual(uint8_t flags, uint32_t count, uint32_t *resid,
		   bool *overflow)
{
	*resid = 0;
	*overflow = false;
	if ((flags & ISCSI_RSP_O) && (flags & ISCSI_RSP_U))
		return -EPROTO;
	if (flags & ISCSI_RSP_O) {
		*overflow = true;
		*resid = count;
	} else if (flags & ISCSI_RSP_U) {
		*resid = count;
	}
	return 0;
}

int iscsi_sense_get(const uint8_t *data, uint32_t len, uint8_t *sense,
		    uint32_t max)
{
	uint32_t n;

	if (len < 2)
		return 0;
	n = get_be16(data);
	if (n > len - 2)
		return -EPROTO;
	if (n > max)
		n = max;
	memcpy(sense, data + 2, n);
	return (int)n;
}

/* ------------------------------------------------------------ login */

#define LOGIN_MAX_EXCHANGES 32 /* a target that never moves on */

void iscsi_ini_login_init(struct iscsi_ini_login *l,
			  const struct iscsi_params *ours, const uint8_t *isid,
			  uint16_t tsih, uint16_t cid, uint32_t itt,
			  uint32_t cmdsn)
{
	memset(l, 0, sizeof(*l));
	l->ours = ours;
	memcpy(l->isid, isid, 6);
	l->tsih = tsih;
	l->cid = cid;
	l->itt = itt;
	l->win.cmdsn = cmdsn;
	l->win.exp_cmdsn = cmdsn;
	l->win.max_cmdsn = cmdsn;
	l->first = true;
	l->stage = ISCSI_STAGE_SECURITY;
	l->peer_max_recv_dsl = 8192;
	iscsi_params_default(&l->params);
	l->neg.ours = ours;
	l->neg.cur = &l->params;
	l->neg.peer_max_recv_dsl = 8192;
	l->neg.login = true;
	l->neg.initiator = true;
	l->neg.tpgt = -1;
}

void iscsi_ini_login_free(struct iscsi_ini_login *l)
{
	free(l->text);
	l->text = NULL;
	l->text_len = 0;
}

static int login_fail(struct iscsi_ini_login *l, uint16_t status,
		      const char *why)
{
	l->status = status;
	l->why = why;
	return ISCSI_INI_LOGIN_FAILED;
}

int iscsi_ini_login_request(struct iscsi_ini_login *l, uint8_t *bhs,
			    struct iscsi_text_out *out)
{
	uint8_t flags;

	out->len = 0;
	out->overflow = false;
	if (l->first)
		l->auth = l->chap ? ISCSI_INI_AUTH_OFFERED : ISCSI_INI_AUTH_NONE;
	if (l->cont) {
		/* the rest of a continued response: an empty request */
		flags = (uint8_t)(l->stage << 2);
	} else {
		uint8_t nsg = l->stage == ISCSI_STAGE_SECURITY ?
			      ISCSI_STAGE_OPERATIONAL : ISCSI_STAGE_FULL_FEATURE;
		/* CHAP: leave the security stage with our answer (CHAP_R) */
		bool transit = l->stage != ISCSI_STAGE_SECURITY ||
			       l->auth == ISCSI_INI_AUTH_NONE ||
			       l->auth >= ISCSI_INI_AUTH_R_SENT;

		flags = (uint8_t)((transit ? ISCSI_LOGIN_T : 0) | l->stage << 2 | nsg);
		if (l->first) {
			iscsi_text_add(out, "InitiatorName", l->ours->initiator_name);
			iscsi_text_add(out, "SessionType",
				       l->ours->discovery ? "Discovery" : "Normal");
			if (!l->ours->discovery)
				iscsi_text_add(out, "TargetName", l->ours->target_name);
		}
		if (l->stage == ISCSI_STAGE_SECURITY && l->first)
			iscsi_text_add(out, "AuthMethod", l->chap ? "CHAP,None" : "None");
		if (l->stage == ISCSI_STAGE_OPERATIONAL && !l->offered) {
			iscsi_keys_offer(&l->neg, out);
			l->offered = true;
		}
		if (l->answers_len && out->cap - out->len >= l->answers_len) {
			memcpy(out->buf + out->len, l->answers, l->answers_len);
			out->len += l->answers_len;
		} else if (l->answers_len) {
			out->overflow = true;
		}
		l->answers_len = 0;
	}
	l->first = false;
	iscsi_bhs_init(bhs, ISCSI_OP_LOGIN_REQ | ISCSI_OP_IMMEDIATE, flags);
	bhs[BHS_LOGIN_VMAX] = 0;
	bhs[BHS_LOGIN_VMIN] = 0;
	bhs_set_dsl(bhs, (uint32_t)out->len);
	memcpy(bhs + BHS_LOGIN_ISID, l->isid, 6);
	put_be16(bhs + BHS_LOGIN_TSIH, l->tsih);
	put_be32(bhs + BHS_ITT, l->itt);
	put_be16(bhs + BHS_LOGIN_CID, l->cid);
	iscsi_req_set_sn(bhs, l->win.cmdsn, l->win.exp_statsn);
	return out->overflow ? -ENOSPC : 0;
}

/*
 * The security stage's step for a target's key list (see the struct):
 * its AuthMethod, its CHAP challenge, its answer to ours.  Our keys go to
 * @ans.  Return: 0 or a failed login.
 */
static int auth_step(struct iscsi_ini_login *l, const char *chap[ISCSI_NR_KEYS],
		     struct iscsi_text_out *ans)
{
	const struct iscsi_chap *c = l->chap;
	const char *auth = l->neg.auth_offer;
	uint8_t ch[ISCSI_CHAP_CHALLENGE_MAX], md5[16];
	char hex[2 * ISCSI_CHAP_CHALLENGE_LEN + 3], num[8];
	unsigned long id;
	char *end;
	int n;

	switch (l->auth) {
	case ISCSI_INI_AUTH_NONE:
		if (auth && strcmp(auth, "None")) {
			snprintf(l->why_buf, sizeof(l->why_buf),
				 "the target asks for AuthMethod=%.40s and we have no credentials (iscsi_chap_file=, or BLKSTACK_ISCSI_CHAP_USER and BLKSTACK_ISCSI_CHAP_SECRET)",
				 auth);
			return login_fail(l, 0, l->why_buf);
		}
		snprintf(l->params.auth_method, sizeof(l->params.auth_method), "None");
		return 0;
	case ISCSI_INI_AUTH_OFFERED:
		if (!auth)
			return login_fail(l, 0, "the target chose no AuthMethod from CHAP,None");
		if (!strcmp(auth, "None")) {
			if (c->has_target)
				return login_fail(l, 0, "authentication: the target chose AuthMethod=None, but we asked for mutual CHAP (the target did not prove its secret)");
			l->auth = ISCSI_INI_AUTH_DONE;
			snprintf(l->params.auth_method, sizeof(l->params.auth_method), "None");
			return 0;
		}
		if (strcmp(auth, "CHAP")) {
			snprintf(l->why_buf, sizeof(l->why_buf),
				 "the target chose AuthMethod=%.40s, which we did not offer", auth);
			return login_fail(l, 0, l->why_buf);
		}
		iscsi_text_add(ans, "CHAP_A", "5");
		l->auth = ISCSI_INI_AUTH_A_SENT;
		return 0;
	case ISCSI_INI_AUTH_A_SENT:
		if (!chap[ISCSI_KEY_CHAP_A])
			return login_fail(l, 0, "CHAP: the target sent no CHAP_A (it refused MD5, CHAP_A=5)");
		if (strcmp(chap[ISCSI_KEY_CHAP_A], "5")) {
			snprintf(l->why_buf, sizeof(l->why_buf),
				 "CHAP: the target chose CHAP_A=%.40s, not 5 (MD5, the only algorithm we offer)",
				 chap[ISCSI_KEY_CHAP_A]);
			return login_fail(l, 0, l->why_buf);
		}
		if (!chap[ISCSI_KEY_CHAP_I] || !chap[ISCSI_KEY_CHAP_C])
			return login_fail(l, 0, "CHAP: the target sent no CHAP_I or CHAP_C");
		errno = 0;
		id = strtoul(chap[ISCSI_KEY_CHAP_I], &end, 0);
		n = iscsi_chap_decode(chap[ISCSI_KEY_CHAP_C], ch, sizeof(ch));
		if (errno || *end || !*chap[ISCSI_KEY_CHAP_I] || id > 255 || n < 1)
			return login_fail(l, 0, "CHAP: the target's CHAP_I or CHAP_C is malformed");
		iscsi_chap_response((uint8_t)id, c->users[0].secret, ch, (size_t)n, md5);
		iscsi_chap_hex(md5, sizeof(md5), hex);
		iscsi_text_add(ans, "CHAP_N", c->users[0].name);
		iscsi_text_add(ans, "CHAP_R", hex);
		if (c->has_target) {
			/* mutual: our challenge, never the target's own back */
			do {
				if (getrandom(l->chap_challenge, sizeof(l->chap_challenge), 0) !=
				    (ssize_t)sizeof(l->chap_challenge) ||
				    getrandom(&l->chap_id, 1, 0) != 1)
					return login_fail(l, 0, "CHAP: getrandom() failed");
			} while (n == ISCSI_CHAP_CHALLENGE_LEN &&
				 !memcmp(ch, l->chap_challenge, ISCSI_CHAP_CHALLENGE_LEN));
			snprintf(num, sizeof(num), "%u", l->chap_id);
			iscsi_chap_hex(l->chap_challenge, sizeof(l->chap_challenge), hex);
			iscsi_text_add(ans, "CHAP_I", num);
			iscsi_text_add(ans, "CHAP_C", hex);
		}
		l->auth = ISCSI_INI_AUTH_R_SENT;
		return 0;
	case ISCSI_INI_AUTH_R_SENT:
		if (c->has_target) {
			if (!chap[ISCSI_KEY_CHAP_N] || !chap[ISCSI_KEY_CHAP_R])
				return login_fail(l, 0, "mutual CHAP: the target did not answer our challenge (no CHAP_N and CHAP_R)");
			if (strcmp(chap[ISCSI_KEY_CHAP_N], c->target.name)) {
				snprintf(l->why_buf, sizeof(l->why_buf),
					 "mutual CHAP: the target answered as '%.40s', not '%.40s'",
					 chap[ISCSI_KEY_CHAP_N], c->target.name);
				return login_fail(l, 0, l->why_buf);
			}
			if (iscsi_chap_check(l->chap_id, c->target.secret, l->chap_challenge,
					     sizeof(l->chap_challenge), chap[ISCSI_KEY_CHAP_R]))
				return login_fail(l, 0, "mutual CHAP: authentication of the target failed: its CHAP_R is wrong (it does not have the target secret we have)");
		}
		l->auth = ISCSI_INI_AUTH_DONE;
		snprintf(l->params.auth_method, sizeof(l->params.auth_method), "CHAP");
		return 0;
	default:
		return 0;
	}
}

/* A complete key list of the target's: answers, declarations, offers. */
static int login_keys(struct iscsi_ini_login *l, uint8_t csg, bool transit,
		      const char *text, uint32_t len)
{
	struct iscsi_text_out ans = {
		.buf = l->answers, .cap = sizeof(l->answers),
	};
	const char *chap[ISCSI_NR_KEYS] = { 0 };
	int r;

	l->neg.stage = csg;
	l->neg.auth_offer = NULL;
	r = iscsi_keys_negotiate(&l->neg, text, len, &ans, chap);
	if (r == -EPROTO) {
		snprintf(l->why_buf, sizeof(l->why_buf),
			 "the target's %s breaks the key's result function (RFC 7143 6.2, 13), or came twice",
			 l->neg.bad);
		return login_fail(l, 0, l->why_buf);
	}
	if (r == -ENOSPC)
		return login_fail(l, 0, "our answers to the target's offers are over 8 KiB");
	if (r)
		return login_fail(l, 0, "malformed key=value text in a Login Response");
	if (csg == ISCSI_STAGE_SECURITY) {
		if (transit && l->auth == ISCSI_INI_AUTH_A_SENT)
			return login_fail(l, 0, "authentication: the target left the security stage before CHAP ended");
		r = auth_step(l, chap, &ans);
		if (r)
			return r;
		if (ans.overflow)
			return login_fail(l, 0, "our answers to the target's offers are over 8 KiB");
		/* it may only move on when we asked to: after our CHAP_R */
		if (transit && l->auth != ISCSI_INI_AUTH_NONE &&
		    l->auth != ISCSI_INI_AUTH_DONE)
			return login_fail(l, 0, "authentication: the target left the security stage before CHAP ended");
	}
	l->answers_len = (uint32_t)ans.len;
	return ISCSI_INI_LOGIN_CONTINUE;
}

int iscsi_ini_login_response(struct iscsi_ini_login *l, const uint8_t *bhs,
			     const uint8_t *data, uint32_t len)
{
	uint8_t flags = bhs[BHS_FLAGS];
	uint8_t csg = ISCSI_LOGIN_CSG(flags), nsg = ISCSI_LOGIN_NSG(flags);
	bool transit = flags & ISCSI_LOGIN_T, cont = flags & ISCSI_LOGIN_C;
	uint16_t status = (uint16_t)(bhs[BHS_LOGIN_STATUS_CLASS] << 8 |
				     bhs[BHS_LOGIN_STATUS_DETAIL]);
	const char *text = (const char *)data;
	uint32_t tlen = len;
	int r;

	if (get_be32(bhs + BHS_ITT) != l->itt)
		return login_fail(l, 0, "a Login Response with another ITT");
	if (status != ISCSI_LOGIN_SUCCESS)
		return login_fail(l, status, iscsi_login_status_name(status));
	if (bhs[BHS_LOGIN_VMIN] != 0)
		return login_fail(l, 0, "the target's Version-active is not 0");
	if (memcmp(bhs + BHS_LOGIN_ISID, l->isid, 6))
		return login_fail(l, 0, "a Login Response for another ISID");
	if (csg != l->stage || (transit && cont) ||
	    (transit && (nsg <= csg || nsg == 2)))
		return login_fail(l, 0, "invalid stages, T or C bits in a Login Response");
	/* every Login Response carries a StatSN (11.13.4) */
	l->win.exp_statsn = get_be32(bhs + BHS_STATSN) + 1;
	l->statsn_known = true;
	l->win.exp_cmdsn = get_be32(bhs + BHS_EXPCMDSN);
	l->win.max_cmdsn = get_be32(bhs + BHS_MAXCMDSN);
	l->cont = false;
	if (cont || l->text) {
		char *t;

		if ((uint64_t)l->text_len + len > ISCSI_TEXT_MAX)
			return login_fail(l, 0, "a Login Response over 64 KiB");
		t = realloc(l->text, l->text_len + len + 1);
		if (!t)
			return login_fail(l, 0, "out of memory");
		memcpy(t + l->text_len, data, len);
		l->text = t;
		l->text_len += len;
		if (cont) {
			l->cont = true;
			return ISCSI_INI_LOGIN_CONTINUE;
		}
		text = l->text;
		tlen = l->text_len;
	}
	r = login_keys(l, csg, transit, text, tlen);
	free(l->text);
	l->text = NULL;
	l->text_len = 0;
	if (r)
		return r;
	if (!transit) {
		/* the target stays: ask again, with our answers */
		if (++l->stays > LOGIN_MAX_EXCHANGES)
			return login_fail(l, 0, "the target does not move on to the next stage");
		return ISCSI_INI_LOGIN_CONTINUE;
	}
	l->stage = nsg;
	if (nsg != ISCSI_STAGE_FULL_FEATURE)
		return ISCSI_INI_LOGIN_CONTINUE;
	l->tsih = get_be16(bhs + BHS_LOGIN_TSIH);
	if (!l->tsih)
		return login_fail(l, 0, "the final Login Response has TSIH 0");
	if (l->ours->header_digest != l->params.header_digest)
		return login_fail(l, 0, "the target refused HeaderDigest=CRC32C");
	if (l->ours->data_digest != l->params.data_digest)
		return login_fail(l, 0, "the target refused DataDigest=CRC32C");
	if (l->params.first_burst_length > l->params.max_burst_length)
		l->params.first_burst_length = l->params.max_burst_length;
	l->params.max_recv_dsl = l->ours->max_recv_dsl;
	l->peer_max_recv_dsl = l->neg.peer_max_recv_dsl;
	return ISCSI_INI_LOGIN_DONE;
}
