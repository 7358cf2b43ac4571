/* SPDX-License-Identifier: MIT */
/*
 * The initiator's side of the iSCSI protocol (RFC 7143), without sockets:
 * the login as a state machine (one Login Request out, one Login Response
 * in), the PDUs an initiator sends (SCSI Command, Data-Out, NOP-Out,
 * Task Management Function Request, Logout Request), the checks of what a
 * target sends, and the CmdSN window.  The PDU layer and digests are
 * pdu.h's, the key negotiation keys.h's: the target uses the same.  The
 * iscsi LLD (src/drivers/scsi/iscsi_lld.c) does the I/O.
 *
 * Every function here is pure (no I/O, no allocation but the login's key
 * list) and may be called from any thread on data the caller owns.
 */
#ifndef BLKSTACK_ISCSI_INITIATOR_H
#define BLKSTACK_ISCSI_INITIATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "chap.h"
#include "keys.h"
#include "pdu.h"
#include "wire.h"

/* Task attributes (11.3.1.4, SAM-5): the SCSI Command's ATTR field. */
#define ISCSI_ATTR_UNTAGGED 0
#define ISCSI_ATTR_SIMPLE 1

/**
 * iscsi_lun_encode() - an 8-byte LUN field (SAM-5 4.7) for @lun: peripheral
 * device addressing below 256, flat space addressing below 16384.
 * Return: 0; -ERANGE for @lun >= 16384 (single-level LUNs only).
 */
int iscsi_lun_encode(uint64_t lun, uint8_t out[8]);

/**
 * iscsi_scsi_cmd_init() - a SCSI Command BHS (11.3).
 * @flags: ISCSI_CMD_F | ISCSI_CMD_R | ISCSI_CMD_W | an ISCSI_ATTR_*.
 * @lun: 8 bytes as on the wire (iscsi_lun_encode()).
 * @itt: Initiator Task Tag (not 0xffffffff).
 * @edtl: Expected Data Transfer Length, bytes.
 * @cdb, @cdb_len: 1..16 bytes (no Extended CDB AHS); the rest is zero.
 * @dsl: DataSegmentLength: the immediate data, bytes.
 * CmdSN and ExpStatSN: iscsi_req_set_sn().
 */
void iscsi_scsi_cmd_init(uint8_t *bhs, uint8_t flags, const uint8_t *lun,
			 uint32_t itt, uint32_t edtl, const uint8_t *cdb,
			 uint8_t cdb_len, uint32_t dsl);

/** iscsi_req_set_sn() - CmdSN (24) and ExpStatSN (28) of a request BHS. */
static inline void iscsi_req_set_sn(uint8_t *bhs, uint32_t cmdsn,
				    uint32_t exp_statsn)
{
	put_be32(bhs + BHS_CMDSN, cmdsn);
	put_be32(bhs + BHS_EXPSTATSN, exp_statsn);
}

/**
 * iscsi_data_out_init() - a SCSI Data-Out BHS (11.7.1): @final (the F bit:
 * the last PDU of an unsolicited burst or of an R2T's), @lun, @itt, @ttt
 * (the R2T's Target Transfer Tag; 0xffffffff for unsolicited data),
 * @datasn (from 0 per R2T and for the unsolicited burst), @offset (Buffer
 * Offset, bytes), @len (DataSegmentLength, bytes), @exp_statsn.
 */
void iscsi_data_out_init(uint8_t *bhs, bool final, const uint8_t *lun,
			 uint32_t itt, uint32_t ttt, uint32_t datasn,
			 uint32_t offset, uint32_t len, uint32_t exp_statsn);

/**
 * iscsi_nop_out_answer_init() - the NOP-Out that answers a target's
 * NOP-In ping (11.18: ITT 0xffffffff, the I bit, the NOP-In's Target
 * Transfer Tag and LUN copied from @nop_in, no data): CmdSN @cmdsn (the
 * next one, not advanced by an immediate PDU), ExpStatSN @exp_statsn.
 */
void iscsi_nop_out_answer_init(uint8_t *bhs, const uint8_t *nop_in,
			       uint32_t cmdsn, uint32_t exp_statsn);

/**
 * iscsi_nop_out_ping_init() - the initiator's own ping (RFC 7143 11.18):
 * a NOP-Out, immediate (the I bit: CmdSN @cmdsn, the next one, not
 * advanced), F set, @lun, Initiator Task Tag @itt (valid, not 0xffffffff:
 * the target answers with a NOP-In that carries it and advances StatSN),
 * Target Transfer Tag 0xffffffff, ExpStatSN @exp_statsn, no ping data.
 */
void iscsi_nop_out_ping_init(uint8_t *bhs, const uint8_t *lun, uint32_t itt,
			     uint32_t cmdsn, uint32_t exp_statsn);

/**
 * iscsi_tmf_init() - a Task Management Function Request (11.5), immediate:
 * @func (enum iscsi_tmf_func), @lun, @itt (the request's own tag),
 * @ref_itt (ABORT TASK: the task's ITT; else 0xffffffff), @cmdsn (the
 * next CmdSN, not advanced), @exp_statsn, @ref_cmdsn (ABORT TASK: the
 * task's CmdSN; else @cmdsn).
 */
void iscsi_tmf_init(uint8_t *bhs, uint8_t func, const uint8_t *lun,
		    uint32_t itt, uint32_t ref_itt, uint32_t cmdsn,
		    uint32_t exp_statsn, uint32_t ref_cmdsn);

/**
 * iscsi_logout_init() - a Logout Request (11.14), immediate, closing the
 * session (@reason ISCSI_LOGOUT_SESSION) or connection @cid.
 */
void iscsi_logout_init(uint8_t *bhs, uint8_t reason, uint32_t itt,
		       uint16_t cid, uint32_t cmdsn, uint32_t exp_statsn);

/**
 * iscsi_text_req_init() - a Text Request (11.10), immediate, F set:
 * @itt, @ttt (0xffffffff, or the Target Transfer Tag of a continued
 * Text Response whose rest we ask for), @cmdsn (the next CmdSN, not
 * advanced), @exp_statsn, @dsl (its key list, bytes).
 */
void iscsi_text_req_init(uint8_t *bhs, uint32_t itt, uint32_t ttt,
			 uint32_t cmdsn, uint32_t exp_statsn, uint32_t dsl);

/**
 * iscsi_pdu_check_target() - check a BHS received from a target, as
 * iscsi_pdu_check() does for an initiator's.
 * @bhs: ISCSI_BHS_LEN bytes.
 * @max_dsl: our MaxRecvDataSegmentLength, bytes (8192 during login).
 * @l: filled in whenever the return is not -EMSGSIZE.
 * Return: 0; -EPROTO: an initiator opcode or an unknown one, or a data
 * segment on a PDU that takes none (R2T, Task Management Response, Logout
 * Response), or an AHS (no target PDU we take has one); -EMSGSIZE: a
 * data segment over @max_dsl (RFC 7143 7.11: a protocol error).
 * Context: any.
 */
int iscsi_pdu_check_target(const uint8_t *bhs, uint32_t max_dsl,
			   struct iscsi_pdu_lens *l);

/**
 * struct iscsi_window - a session's CmdSN window as the initiator keeps
 * it (RFC 7143 4.2.2.1).
 * @cmdsn: the CmdSN of the next non-immediate request.
 * @exp_cmdsn, @max_cmdsn: the target's, from the last PDU that moved them.
 * @exp_statsn: the StatSN we expect next (the last status' + 1).
 */
struct iscsi_window {
	uint32_t cmdsn;
	uint32_t exp_cmdsn, max_cmdsn;
	uint32_t exp_statsn;
};

/**
 * iscsi_window_update() - take ExpCmdSN and MaxCmdSN from a target PDU
 * (every one but a Data-In without S carries them; those carry them too,
 * RFC 7143 11.7.1): ignored when MaxCmdSN < ExpCmdSN - 1 (4.2.2.1) or
 * when older than what we have (serial arithmetic).
 */
void iscsi_window_update(struct iscsi_window *w, const uint8_t *bhs);

/** iscsi_window_open() - whether a request with the next CmdSN may go. */
static inline bool iscsi_window_open(const struct iscsi_window *w)
{
	return iscsi_sn_cmp(w->cmdsn, w->max_cmdsn) <= 0;
}

/**
 * iscsi_residual() - what a SCSI Response's or final Data-In's residual
 * means for the initiator (11.4.5): @flags its ISCSI_RSP_O/U bits, @count
 * its Residual Count.  @resid: bytes of the expected length not moved
 * (underflow) or moved past it (overflow); @overflow: the latter.
 * Return: 0; -EPROTO: O and U both set.
 */
int iscsi_residual(uint8_t flags, uint32_t count, uint32_t *resid,
		   bool *overflow);

/**
 * iscsi_sense_get() - the sense data of a SCSI Response's data segment
 * (11.4.7: SenseLength, 2 bytes, then the sense, then response data).
 * @data, @len: the data segment, bytes.
 * @sense, @max: where to, and room (bytes); a longer sense is cut there.
 * Return: sense bytes copied (0: none); -EPROTO: SenseLength past @len.
 */
int iscsi_sense_get(const uint8_t *data, uint32_t len, uint8_t *sense,
		    uint32_t max);

/* ------------------------------------------------------------ login */

enum iscsi_ini_login_result {
	ISCSI_INI_LOGIN_CONTINUE = 0, /* send the next request */
	ISCSI_INI_LOGIN_DONE = 1,     /* full feature phase */
	ISCSI_INI_LOGIN_FAILED = 2,   /* status / why say why; close */
};

/* Where the security stage is (struct iscsi_ini_login's @auth). */
enum iscsi_ini_auth {
	ISCSI_INI_AUTH_NONE,    /* AuthMethod=None offered alone */
	ISCSI_INI_AUTH_OFFERED, /* CHAP,None offered, no answer yet */
	ISCSI_INI_AUTH_A_SENT,  /* CHAP_A=5 sent */
	ISCSI_INI_AUTH_R_SENT,  /* CHAP_N, CHAP_R (and CHAP_I, CHAP_C) sent */
	ISCSI_INI_AUTH_DONE,    /* authenticated (or None chosen) */
};

/**
 * struct iscsi_ini_login - one connection's login, the initiator's side
 * (RFC 7143 6.3): the security stage, then the operational stage
 * offering every key (keys.h, iscsi_keys_offer()), then the full feature
 * phase.  A target that does not move on at once is asked again (T set)
 * with our answers to its own offers; a response continued (C bit) is
 * asked for the rest with an empty request.
 * Security stage: without @chap, AuthMethod=None (T set at once).  With
 *	@chap, AuthMethod=CHAP,None with T clear; the target's choice of
 *	CHAP gets CHAP_A=5 (T clear), its CHAP_A=5, CHAP_I and CHAP_C get
 *	CHAP_N and CHAP_R (RFC 1994, chap.h) with T set, and with a target
 *	secret (mutual CHAP, 12.1.3) our own CHAP_I and a random 16-byte
 *	CHAP_C, whose CHAP_N and CHAP_R the target must answer right
 *	before we leave the stage.  A target that picks None is accepted
 *	unless mutual CHAP was asked for.
 * Configuration (iscsi_ini_login_init()): @ours (InitiatorName and
 *	TargetName in initiator_name and target_name, our offers; with
 *	ours->discovery, SessionType=Discovery and no TargetName),
 *	@isid, @tsih (0: a new session), @cid, @itt, @cmdsn (the first
 *	CmdSN: login requests are immediate and do not advance it).
 *	@chap, set by the caller after init (NULL: AuthMethod=None):
 *	users[0] our CHAP name and secret, target (when has_target) the
 *	target's for mutual CHAP; the caller's, read only, for the login's
 *	life.
 * Results once ISCSI_INI_LOGIN_DONE: @params (negotiated; max_recv_dsl
 *	ours), @peer_max_recv_dsl (the largest data segment we may send),
 *	@tsih, @win (CmdSN, ExpCmdSN, MaxCmdSN, ExpStatSN).
 * On failure: @status (the target's class << 8 | detail; 0 for an error
 *	of ours or a malformed response), @why.
 */
struct iscsi_ini_login {
	const struct iscsi_params *ours;
	const struct iscsi_chap *chap;
	uint8_t isid[6];
	uint16_t tsih;
	uint16_t cid;
	uint32_t itt;
	/* state */
	struct iscsi_params params;
	struct iscsi_neg neg;
	struct iscsi_window win;
	uint8_t stage;          /* CSG of the next request */
	bool offered;           /* operational keys offered */
	bool first;             /* the next request is the first */
	bool statsn_known;
	unsigned int stays;     /* responses that did not move on */
	uint32_t peer_max_recv_dsl;
	uint16_t status;
	const char *why;
	char why_buf[256];
	char answers[8192];     /* our answers to the target's offers */
	uint32_t answers_len;
	char *text;             /* a response continued over several PDUs */
	uint32_t text_len;
	bool cont;              /* ... and more of it is to be asked for */
	uint8_t auth;           /* enum iscsi_ini_auth */
	uint8_t chap_id;        /* mutual CHAP: our CHAP_I and CHAP_C */
	uint8_t chap_challenge[ISCSI_CHAP_CHALLENGE_LEN];
};

/**
 * iscsi_ini_login_init() - a login about to start (see the struct for
 * the arguments).  iscsi_ini_login_free() ends it.
 */
void iscsi_ini_login_init(struct iscsi_ini_login *l,
			  const struct iscsi_params *ours, const uint8_t *isid,
			  uint16_t tsih, uint16_t cid, uint32_t itt,
			  uint32_t cmdsn);
void iscsi_ini_login_free(struct iscsi_ini_login *l);

/**
 * iscsi_ini_login_request() - the next Login Request.
 * @bhs: its BHS, filled in (data segment length too).
 * @out: its key list; capacity at least 8192 bytes (13.12: during login
 *	neither side sends more in one PDU).
 * Return: 0; -ENOSPC: the keys did not fit.
 * Context: any.
 */
int iscsi_ini_login_request(struct iscsi_ini_login *l, uint8_t *bhs,
			    struct iscsi_text_out *out);

/**
 * iscsi_ini_login_response() - take a Login Response.
 * @bhs: its BHS (opcode checked by the caller).
 * @data, @len: its data segment, bytes.
 * Return: enum iscsi_ini_login_result.  FAILED: a status other than
 * success (class 1, redirection, counts as a failure here), a response
 * whose ITT, ISID, Version or stages do not match the request, keys the
 * result functions do not allow (keys.h), a digest we asked for that the
 * target refused, a response over 64 KiB, or CHAP gone wrong: an
 * AuthMethod we did not offer, CHAP_A other than 5, a malformed CHAP_I
 * or CHAP_C, the target leaving the security stage before CHAP ended,
 * None chosen when we asked for mutual CHAP, and in mutual CHAP a
 * missing or wrong CHAP_N or CHAP_R (@why says which).  Needs
 * getrandom(2) for mutual CHAP's challenge.
 * Context: any.
 */
int iscsi_ini_login_response(struct iscsi_ini_login *l, const uint8_t *bhs,
			     const uint8_t *data, uint32_t len);

#endif /* BLKSTACK_ISCSI_INITIATOR_H */
