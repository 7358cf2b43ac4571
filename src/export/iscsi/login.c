// SPDX-License-Identifier: MIT
/*
 * iSCSI login state machine (see login.h).  RFC 7143 6.3 (login phase),
 * 11.12 (Login Request), 11.13 (Login Response, status 11.13.5).
 *
 * Stages: a login starts in the security stage (CSG 0) or, when the
 * initiator skips it, the operational stage (CSG 1).  A request with T
 * set asks to move to NSG; the target agrees in the same response (it
 * never offers keys the initiator must answer, so nothing holds a
 * transition back) unless a security method is still being run.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/random.h>
#include <stdlib.h>
#include <string.h>

#include "login.h"
#include "pdu.h"

#define LOGIN_WINDOW 1 /* MaxCmdSN = ExpCmdSN during login */

void iscsi_login_init(struct iscsi_login *l, const struct iscsi_login_env *env,
		      const struct iscsi_params *ours)
{
	memset(l, 0, sizeof(*l));
	l->env = env;
	l->ours = ours;
	l->target = -1;
	l->peer_max_recv_dsl = 8192;
	iscsi_params_default(&l->params);
	l->neg.ours = ours;
	l->neg.cur = &l->params;
	l->neg.peer_max_recv_dsl = 8192;
	l->neg.login = true;
	l->statsn = 1;
}

void iscsi_login_free(struct iscsi_login *l)
{
	free(l->text);
	l->text = NULL;
}

const char *iscsi_login_status_name(uint16_t status)
{
	switch (status) {
	case ISCSI_LOGIN_SUCCESS: return "success";
	case ISCSI_LOGIN_INITIATOR_ERROR: return "initiator error";
	case ISCSI_LOGIN_AUTH_FAILED: return "authentication failure";
	case ISCSI_LOGIN_AUTHZ_FAILED: return "authorization failure";
	case ISCSI_LOGIN_NOT_FOUND: return "target not found";
	case ISCSI_LOGIN_UNSUPPORTED_VERSION: return "unsupported version";
	case ISCSI_LOGIN_TOO_MANY_CONNECTIONS: return "too many connections";
	case ISCSI_LOGIN_MISSING_PARAMETER: return "missing parameter";
	case ISCSI_LOGIN_CANT_INCLUDE: return "cannot include in session";
	case ISCSI_LOGIN_SESSION_TYPE_UNSUPPORTED: return "session type not supported";
	case ISCSI_LOGIN_NO_SESSION: return "session does not exist";
	case ISCSI_LOGIN_INVALID_REQUEST: return "invalid request during login";
	case ISCSI_LOGIN_TARGET_ERROR: return "target error";
	case ISCSI_LOGIN_SERVICE_UNAVAILABLE: return "service unavailable";
	case ISCSI_LOGIN_OUT_OF_RESOURCES: return "out of resources";
	default: return "login failed";
	}
}

static int fail(struct iscsi_login *l, uint16_t status, const char *why)
{
	l->status = status;
	l->why = why;
	return ISCSI_LOGIN_FAILED;
}

/*
 * The AuthMethod the target picks from the initiator's offer (12.1):
 * CHAP when it has secrets (and then nothing else), else None.
 */
static const char *pick_auth(const char *offer, bool chap)
{
	const char *want = chap ? "CHAP" : "None", *p = offer;

	while (p && *p) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);

		if (n == 4 && !memcmp(p, want, 4))
			return want;
		p = c ? c + 1 : NULL;
	}
	return NULL;
}

enum { CHAP_NONE, CHAP_WAIT_A, CHAP_WAIT_R, CHAP_DONE };

/* Is "5" (MD5) in the CHAP_A list @v? */
static bool chap_md5_offered(const char *v)
{
	const char *p = v;

	while (p && *p) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);

		if (n == 1 && *p == '5')
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

/*
 * One step of CHAP (12.1.3) with the target as authenticator: CHAP_A
 * gets our algorithm, identifier and challenge; CHAP_N and CHAP_R are
 * checked against the secrets; CHAP_I and CHAP_C with them ask the
 * target to answer too (mutual CHAP).  Return: 0 or a failed login.
 */
static int chap_step(struct iscsi_login *l, const char *chap[ISCSI_NR_KEYS],
		     struct iscsi_text_out *out)
{
	const struct iscsi_chap *secrets = l->env->chap;
	uint8_t r[ISCSI_CHAP_CHALLENGE_MAX], want[16];
	char hex[2 * ISCSI_CHAP_CHALLENGE_LEN + 3], num[8];
	const struct iscsi_chap_user *u = NULL;
	unsigned int i;
	int n;

	switch (l->chap_state) {
	case CHAP_WAIT_A:
		if (!chap[ISCSI_KEY_CHAP_A] || chap[ISCSI_KEY_CHAP_N] ||
		    chap[ISCSI_KEY_CHAP_R] || chap[ISCSI_KEY_CHAP_I] ||
		    chap[ISCSI_KEY_CHAP_C])
			return fail(l, ISCSI_LOGIN_AUTH_FAILED,
				    "CHAP: expected CHAP_A alone");
		if (!chap_md5_offered(chap[ISCSI_KEY_CHAP_A])) {
			iscsi_text_add(out, "CHAP_A", "Reject");
			return fail(l, ISCSI_LOGIN_AUTH_FAILED,
				    "CHAP: MD5 (CHAP_A=5) not offered");
		}
		if (getrandom(l->chap_challenge, sizeof(l->chap_challenge), 0) !=
		    (ssize_t)sizeof(l->chap_challenge) ||
		    getrandom(&l->chap_id, 1, 0) != 1)
			return fail(l, ISCSI_LOGIN_TARGET_ERROR,
				    "CHAP: no random challenge");
		snprintf(num, sizeof(num), "%u", l->chap_id);
		iscsi_chap_hex(l->chap_challenge, sizeof(l->chap_challenge), hex);
		iscsi_text_add(out, "CHAP_A", "5");
		iscsi_text_add(out, "CHAP_I", num);
		iscsi_text_add(out, "CHAP_C", hex);
		l->chap_state = CHAP_WAIT_R;
		return 0;
	case CHAP_WAIT_R:
		if (!chap[ISCSI_KEY_CHAP_N] || !chap[ISCSI_KEY_CHAP_R] ||
		    chap[ISCSI_KEY_CHAP_A])
			return fail(l, ISCSI_LOGIN_AUTH_FAILED,
				    "CHAP: expected CHAP_N and CHAP_R");
		for (i = 0; i < secrets->nr_users; i++)
			if (!strcmp(secrets->users[i].name, chap[ISCSI_KEY_CHAP_N]))
				u = &secrets->users[i];
		if (!u || iscsi_chap_check(l->chap_id, u->secret, l->chap_challenge,
					   sizeof(l->chap_challenge),
					   chap[ISCSI_KEY_CHAP_R]))
			return fail(l, ISCSI_LOGIN_AUTH_FAILED,
				    "CHAP: unknown name or wrong response");
		snprintf(l->chap_user, sizeof(l->chap_user), "%s", u->name);
		if (chap[ISCSI_KEY_CHAP_I] || chap[ISCSI_KEY_CHAP_C]) {
			/* mutual: the initiator challenges us */
			char *end;
			unsigned long id;

			if (!chap[ISCSI_KEY_CHAP_I] || !chap[ISCSI_KEY_CHAP_C])
				return fail(l, ISCSI_LOGIN_AUTH_FAILED,
					    "CHAP: CHAP_I without CHAP_C or back");
			if (!secrets->has_target)
				return fail(l, ISCSI_LOGIN_AUTH_FAILED,
					    "CHAP: mutual CHAP asked, no target secret configured");
			id = strtoul(chap[ISCSI_KEY_CHAP_I], &end, 0);
			n = iscsi_chap_decode(chap[ISCSI_KEY_CHAP_C], r, sizeof(r));
			if (*end || !*chap[ISCSI_KEY_CHAP_I] || id > 255 || n < 1)
				return fail(l, ISCSI_LOGIN_AUTH_FAILED,
					    "CHAP: malformed CHAP_I or CHAP_C");
			/* 12.1.3: our own challenge sent back is a reflection */
			if (n == ISCSI_CHAP_CHALLENGE_LEN &&
			    !memcmp(r, l->chap_challenge, ISCSI_CHAP_CHALLENGE_LEN))
				return fail(l, ISCSI_LOGIN_AUTH_FAILED,
					    "CHAP: the initiator's challenge is ours");
			iscsi_chap_response((uint8_t)id, secrets->target.secret, r,
					    (size_t)n, want);
			iscsi_chap_hex(want, 16, hex);
			iscsi_text_add(out, "CHAP_N", secrets->target.name);
			iscsi_text_add(out, "CHAP_R", hex);
		}
		l->chap_state = CHAP_DONE;
		l->auth_done = true;
		return 0;
	default:
		return fail(l, ISCSI_LOGIN_AUTH_FAILED,
			    "CHAP keys without AuthMethod=CHAP, or after it ended");
	}
}

static void fill_rsp(struct iscsi_login *l, const uint8_t *req, uint8_t *rsp,
		     uint8_t flags, uint32_t dlen)
{
	iscsi_bhs_init(rsp, ISCSI_OP_LOGIN_RSP, flags);
	rsp[BHS_LOGIN_VMAX] = 0x00;
	rsp[BHS_LOGIN_VMIN] = 0x00; /* Version-active */
	bhs_set_dsl(rsp, dlen);
	memcpy(rsp + BHS_LOGIN_ISID, req + BHS_LOGIN_ISID, 6);
	put_be16(rsp + BHS_LOGIN_TSIH, l->tsih);
	memcpy(rsp + BHS_ITT, req + BHS_ITT, 4);
	put_be32(rsp + BHS_STATSN, l->statsn);
	put_be32(rsp + BHS_EXPCMDSN, l->exp_cmdsn);
	put_be32(rsp + BHS_MAXCMDSN, l->exp_cmdsn + LOGIN_WINDOW - 1);
	rsp[BHS_LOGIN_STATUS_CLASS] = (uint8_t)(l->status >> 8);
	rsp[BHS_LOGIN_STATUS_DETAIL] = (uint8_t)l->status;
}

/* The work of one complete key list; Return: enum iscsi_login_result. */
static int login_keys(struct iscsi_login *l, const uint8_t *req,
		      const char *text, uint32_t len,
		      struct iscsi_text_out *out, uint8_t *rflags)
{
	uint8_t flags = req[BHS_FLAGS];
	uint8_t csg = ISCSI_LOGIN_CSG(flags), nsg = ISCSI_LOGIN_NSG(flags);
	bool transit = flags & ISCSI_LOGIN_T;
	const char *chap[ISCSI_NR_KEYS] = { 0 };
	const char *auth;
	int r;

	l->neg.stage = csg;
	/* it points into this key list only: a later one may not see it */
	l->neg.auth_offer = NULL;
	l->neg.first_pdu = !l->keys_seen;
	l->keys_seen = true;
	r = iscsi_keys_negotiate(&l->neg, text, len, out, chap);
	if (r == -ENOTSUP)
		return fail(l, ISCSI_LOGIN_SESSION_TYPE_UNSUPPORTED,
			    "SessionType neither Discovery nor Normal");
	if (r == -ENOSPC)
		return fail(l, ISCSI_LOGIN_OUT_OF_RESOURCES,
			    "login response longer than one PDU");
	if (r)
		return fail(l, ISCSI_LOGIN_INITIATOR_ERROR,
			    r == -EINVAL ? "malformed key=value text" :
			    "a key sent twice, or a security key outside the security stage");
	if (l->neg.first_pdu) {
		unsigned int i;

		if (!l->params.initiator_name[0])
			return fail(l, ISCSI_LOGIN_MISSING_PARAMETER,
				    "no InitiatorName in the first Login Request");
		if (!l->params.discovery) {
			if (!l->params.target_name[0])
				return fail(l, ISCSI_LOGIN_MISSING_PARAMETER,
					    "no TargetName for a normal session");
			for (i = 0; i < l->env->nr_targets; i++)
				if (!strcmp(l->env->target_name(l->env->opaque, i),
					    l->params.target_name))
					break;
			if (i == l->env->nr_targets)
				return fail(l, ISCSI_LOGIN_NOT_FOUND,
					    "unknown TargetName");
			if (l->env->allowed &&
			    !l->env->allowed(l->env->opaque, i, l->params.initiator_name))
				return fail(l, ISCSI_LOGIN_AUTHZ_FAILED,
					    "initiator not in the target's ACL");
			l->target = (int)i;
			iscsi_text_add(out, "TargetPortalGroupTag", "1");
		}
		if (l->tsih) {
			/* a connection added to a live session (6.3.1) */
			uint16_t st = l->env->session_check ?
				      l->env->session_check(l->env->opaque, l->tsih,
							    l->isid,
							    l->params.initiator_name,
							    l->params.discovery ? -1 : l->target,
							    l->cid, &l->exp_cmdsn) :
				      ISCSI_LOGIN_NO_SESSION;

			if (st == ISCSI_LOGIN_NO_SESSION)
				return fail(l, st, "TSIH of no session of this initiator port (ISID)");
			if (st == ISCSI_LOGIN_TOO_MANY_CONNECTIONS)
				return fail(l, st, "the session has MaxConnections connections already");
			if (st)
				return fail(l, st, "the session is another initiator's, target's or type's");
			l->joining = true;
		}
	}
	if (csg == ISCSI_STAGE_SECURITY) {
		bool any_chap = false;

		for (r = ISCSI_KEY_CHAP_A; r <= ISCSI_KEY_CHAP_R; r++)
			any_chap |= chap[r] != NULL;
		if (l->neg.auth_offer) {
			auth = pick_auth(l->neg.auth_offer, l->env->chap != NULL);
			if (!auth) {
				iscsi_text_add(out, "AuthMethod", "Reject");
				return fail(l, ISCSI_LOGIN_AUTH_FAILED,
					    l->env->chap ? "AuthMethod=CHAP required, not offered" :
					    "no acceptable AuthMethod offered");
			}
			snprintf(l->params.auth_method, sizeof(l->params.auth_method),
				 "%s", auth);
			iscsi_text_add(out, "AuthMethod", auth);
			if (!strcmp(auth, "CHAP"))
				l->chap_state = CHAP_WAIT_A;
			else
				l->auth_done = true;
		}
		if (any_chap) {
			r = chap_step(l, chap, out);
			if (r)
				return r;
		}
		if (transit && !l->auth_done) {
			if (l->env->chap && l->chap_state == CHAP_NONE)
				return fail(l, ISCSI_LOGIN_AUTH_FAILED,
					    "AuthMethod=CHAP required, not offered");
			if (l->env->chap) {
				/* CHAP still running: stay in the security stage */
				transit = false;
			} else {
				/* no AuthMethod at all: None, the default (12.1) */
				snprintf(l->params.auth_method,
					 sizeof(l->params.auth_method), "None");
				l->auth_done = true;
			}
		}
	} else if (l->env->chap && !l->auth_done) {
		return fail(l, ISCSI_LOGIN_AUTH_FAILED,
			    "CHAP required: the security stage was skipped");
	}
	if (out->overflow)
		return fail(l, ISCSI_LOGIN_OUT_OF_RESOURCES,
			    "login response longer than one PDU");
	*rflags = (uint8_t)(csg << 2);
	if (transit) {
		if (nsg == ISCSI_STAGE_FULL_FEATURE) {
			iscsi_keys_finish(&l->neg, out);
			if (out->overflow)
				return fail(l, ISCSI_LOGIN_OUT_OF_RESOURCES,
					    "login response longer than one PDU");
			l->peer_max_recv_dsl = l->neg.peer_max_recv_dsl;
			if (l->alloc_tsih && !l->joining)
				l->tsih = l->alloc_tsih(l->env->opaque);
			if (!l->tsih)
				return fail(l, ISCSI_LOGIN_OUT_OF_RESOURCES,
					    "no session identifier left");
		}
		*rflags |= ISCSI_LOGIN_T | nsg;
		l->stage = nsg;
		return nsg == ISCSI_STAGE_FULL_FEATURE ? ISCSI_LOGIN_DONE :
		       ISCSI_LOGIN_CONTINUE;
	}
	*rflags |= csg; /* NSG is reserved without T; use CSG */
	return ISCSI_LOGIN_CONTINUE;
}

int iscsi_login_step(struct iscsi_login *l, const uint8_t *req,
		     const uint8_t *data, uint32_t len, uint8_t *rsp,
		     struct iscsi_text_out *out)
{
	uint8_t flags = req[BHS_FLAGS], rflags = 0;
	uint8_t csg = ISCSI_LOGIN_CSG(flags), nsg = ISCSI_LOGIN_NSG(flags);
	bool transit = flags & ISCSI_LOGIN_T, cont = flags & ISCSI_LOGIN_C;
	int r;

	out->len = 0;
	out->overflow = false;
	if (!l->started) {
		l->started = true;
		memcpy(l->isid, req + BHS_LOGIN_ISID, 6);
		l->tsih = get_be16(req + BHS_LOGIN_TSIH);
		l->cid = get_be16(req + BHS_LOGIN_CID);
		l->exp_cmdsn = get_be32(req + BHS_CMDSN);
		l->stage = csg;
		/* 13: leading-only keys are not negotiated again */
		l->neg.non_leading = l->tsih != 0;
		/* Version-min above ours (0x00) */
		if (req[BHS_LOGIN_VMIN] > 0) {
			r = fail(l, ISCSI_LOGIN_UNSUPPORTED_VERSION,
				 "Version-min above 0");
			goto answer;
		}
	} else {
		l->statsn++;
		if (memcmp(l->isid, req + BHS_LOGIN_ISID, 6) ||
		    get_be16(req + BHS_LOGIN_CID) != l->cid) {
			r = fail(l, ISCSI_LOGIN_INITIATOR_ERROR,
				 "ISID or CID changed during login");
			goto answer;
		}
	}
	if (!(req[BHS_OPCODE] & ISCSI_OP_IMMEDIATE) ||
	    (transit && cont) || csg == 2 || csg == ISCSI_STAGE_FULL_FEATURE ||
	    (transit && (nsg <= csg || nsg == 2))) {
		r = fail(l, ISCSI_LOGIN_INITIATOR_ERROR,
			 "invalid stage, T or C bits in a Login Request");
		goto answer;
	}
	if (csg != l->stage) {
		r = fail(l, ISCSI_LOGIN_INITIATOR_ERROR,
			 "CSG is not the stage the login is in");
		goto answer;
	}
	if (cont || l->text) {
		/* text over several PDUs: keep it (bounded), answer empty */
		char *t;

		if ((uint64_t)l->text_len + len > ISCSI_TEXT_MAX) {
			r = fail(l, ISCSI_LOGIN_OUT_OF_RESOURCES,
				 "login text over 64 KiB");
			goto answer;
		}
		t = realloc(l->text, l->text_len + len + 1);
		if (!t) {
			r = fail(l, ISCSI_LOGIN_OUT_OF_RESOURCES, "out of memory");
			goto answer;
		}
		l->text = t;
		memcpy(t + l->text_len, data, len);
		l->text_len += len;
		if (cont) {
			rflags = (uint8_t)(csg << 2 | csg);
			r = ISCSI_LOGIN_CONTINUE;
			goto answer;
		}
		r = login_keys(l, req, l->text, l->text_len, out, &rflags);
		free(l->text);
		l->text = NULL;
		l->text_len = 0;
	} else {
		r = login_keys(l, req, (const char *)data, len, out, &rflags);
	}
answer:
	if (r == ISCSI_LOGIN_FAILED) {
		out->len = 0;
		rflags = 0;
	}
	fill_rsp(l, req, rsp, rflags, (uint32_t)out->len);
	return r;
}
