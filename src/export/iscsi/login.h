/* SPDX-License-Identifier: MIT */
/*
 * iSCSI login (RFC 7143 6.3, 11.12, 11.13): the target's state machine,
 * one Login Request in, one Login Response out, no I/O.
 */
#ifndef BLKSTACK_ISCSI_LOGIN_H
#define BLKSTACK_ISCSI_LOGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "chap.h"
#include "keys.h"
#include "wire.h"

/**
 * struct iscsi_login_env - what the login asks of the server.
 * @nr_targets: targets served; @target_name(i) names target i.
 * @portal: "ADDR:PORT,TPGT" for SendTargets' TargetAddress.
 * @tpgt: our target portal group tag.
 * @chap: the CHAP secrets; NULL: AuthMethod None only.  With them every
 *	login must authenticate with CHAP (AuthMethod=None is refused).
 * @session_check: a login with a TSIH (adding a connection to a live
 *	session, RFC 7143 6.3.1): 0 when session @tsih is the one of @isid
 *	and @iname on @target (-1: discovery) and may take connection @cid
 *	(one more, or in place of its connection @cid), its ExpCmdSN in
 *	@exp_cmdsn; else the login status to refuse
 *	with (020a: no such session, 0206: too many connections, 0208).
 *	NULL: every TSIH is refused with 020a.
 * @allowed: whether initiator @iname may log in to target @i (NULL: any).
 * @opaque: handed to the callbacks.
 */
struct iscsi_login_env {
	unsigned int nr_targets;
	const char *(*target_name)(void *opaque, unsigned int i);
	uint16_t (*session_check)(void *opaque, uint16_t tsih,
				  const uint8_t *isid, const char *iname,
				  int target, uint16_t cid, uint32_t *exp_cmdsn);
	bool (*allowed)(void *opaque, unsigned int i, const char *iname);
	const char *portal;
	uint16_t tpgt;
	const struct iscsi_chap *chap;
	void *opaque;
};

enum iscsi_login_result {
	ISCSI_LOGIN_CONTINUE = 0, /* send the response, read the next request */
	ISCSI_LOGIN_DONE = 1,     /* send it: full feature phase starts */
	ISCSI_LOGIN_FAILED = 2,   /* send it (a failure status), then close */
};

/**
 * struct iscsi_login - one connection's login.
 * Configuration: @env, @ours (the target's values: see struct iscsi_neg).
 * Results once ISCSI_LOGIN_DONE: @params (negotiated; max_recv_dsl ours),
 * @peer_max_recv_dsl (the largest data segment we may send), @target
 * (index; -1 for a discovery session), @isid, @cid, @exp_cmdsn (the
 * first CmdSN the full feature phase expects), @statsn (the next StatSN).
 * @status on failure (enum iscsi_login_status); @why, a log message.
 * The caller sets @tsih before the request that ends the login is
 * answered: iscsi_login_step() asks @alloc_tsih for it, except in a
 * login that adds a connection to a live session (@joining: the first
 * request's TSIH was not 0 and @session_check agreed), whose TSIH is
 * that session's; there the leading-only keys (13: "LO") are answered
 * Irrelevant and the session's values hold.
 */
struct iscsi_login {
	const struct iscsi_login_env *env;
	const struct iscsi_params *ours;
	uint16_t (*alloc_tsih)(void *opaque);
	/* state */
	struct iscsi_params params;
	struct iscsi_neg neg;
	bool started;
	bool keys_seen;         /* the first key list was answered */
	uint8_t stage;          /* the CSG the next request must carry */
	bool auth_done;
	uint8_t chap_state;     /* enum in login.c */
	uint8_t chap_id;
	uint8_t chap_challenge[ISCSI_CHAP_CHALLENGE_LEN];
	char chap_user[ISCSI_CHAP_NAME_MAX + 1]; /* who authenticated */
	uint8_t isid[6];
	uint16_t tsih;
	uint16_t cid;
	bool joining;
	uint32_t exp_cmdsn;
	uint32_t statsn;
	int target;
	uint32_t peer_max_recv_dsl;
	uint16_t status;
	const char *why;
	/* a key list arriving over several PDUs (C bit) */
	char *text;
	uint32_t text_len;
};

/** iscsi_login_init() - a login about to start; iscsi_login_free() ends it. */
void iscsi_login_init(struct iscsi_login *l, const struct iscsi_login_env *env,
		      const struct iscsi_params *ours);
void iscsi_login_free(struct iscsi_login *l);

/**
 * iscsi_login_step() - answer one Login Request.
 * @l: the login.
 * @req: its BHS (opcode checked by the caller).
 * @data, @len: its data segment (key=value\0 text), bytes.
 * @rsp: the Login Response's BHS, filled in (data segment length too).
 * @out: the response's text; its capacity is what we may send in one
 *	PDU (the initiator's MaxRecvDataSegmentLength: 8192 during login).
 * Return: enum iscsi_login_result.
 * Context: the connection's thread.
 */
int iscsi_login_step(struct iscsi_login *l, const uint8_t *req,
		     const uint8_t *data, uint32_t len, uint8_t *rsp,
		     struct iscsi_text_out *out);

/** iscsi_login_status_name() - "authentication failure", ... */
const char *iscsi_login_status_name(uint16_t status);

#endif /* BLKSTACK_ISCSI_LOGIN_H */
