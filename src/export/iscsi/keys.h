/* SPDX-License-Identifier: MIT */
/*
 * iSCSI text keys (RFC 7143 clause 6 "Login and Text Operational
 * Parameters" rules, clause 13 the keys, RFC 7144 iSCSIProtocolLevel):
 * parse key=value lists, answer each key as the responder (the target's
 * role, or the initiator's for a key the target offers), make the
 * initiator's offers and take the target's answers to them through each
 * key's result function, and keep the negotiated values in struct
 * iscsi_params.  Both ends link this one module (blkiscsiproto).
 *
 * The keys are a table (keys.c): name, type, range, default, the phase
 * they may be negotiated in, who may send them and their result
 * function.  Nothing here does I/O.
 */
#ifndef BLKSTACK_ISCSI_KEYS_H
#define BLKSTACK_ISCSI_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISCSI_KEY_NAME_MAX 63      /* 6.1: key names */
#define ISCSI_VALUE_MAX 255        /* 6.1: a value, by default */
#define ISCSI_VALUE_LONG_MAX 8192  /* CHAP_C, CHAP_R (binary values) */
#define ISCSI_NAME_MAX 223         /* 4.2.7.1: iSCSI names, bytes */
#define ISCSI_TEXT_MAX 65536       /* a whole key list (all its PDUs) */

enum iscsi_key_type {
	ISCSI_KT_BOOL,     /* Yes | No */
	ISCSI_KT_NUM,      /* numerical, negotiated, within [min, max] */
	ISCSI_KT_DECL_NUM, /* numerical, declarative, within [min, max] */
	ISCSI_KT_LIST,     /* list of values, first acceptable */
	ISCSI_KT_DECL,     /* declarative text */
	ISCSI_KT_SECURITY, /* AuthMethod's exchanges (CHAP_*): login.c */
	ISCSI_KT_OBSOLETE, /* 13.26: markers; answered Reject */
};

enum iscsi_key_result {
	ISCSI_KR_NONE,   /* declarative */
	ISCSI_KR_OR,
	ISCSI_KR_AND,
	ISCSI_KR_MIN,
	ISCSI_KR_MAX,
	ISCSI_KR_FIRST,  /* the first value of the offer we accept */
};

/* When a key may be sent (6.2; 13's "Use:"). */
#define ISCSI_PH_LO   0x1  /* leading only: first connection's login */
#define ISCSI_PH_IO   0x2  /* initialize only: the first Login Request */
#define ISCSI_PH_FFPO 0x4  /* full feature phase only (Text) */
#define ISCSI_PH_ALL  0x8  /* login and Text, any time */
#define ISCSI_PH_SEC  0x10 /* security stage only */

/* Who sends it. */
#define ISCSI_DIR_I2T 0x1
#define ISCSI_DIR_T2I 0x2

/* The keys, indexes into the table (keys.c). */
enum iscsi_key_id {
	ISCSI_KEY_HEADER_DIGEST,
	ISCSI_KEY_DATA_DIGEST,
	ISCSI_KEY_MAX_CONNECTIONS,
	ISCSI_KEY_SEND_TARGETS,
	ISCSI_KEY_TARGET_NAME,
	ISCSI_KEY_INITIATOR_NAME,
	ISCSI_KEY_TARGET_ALIAS,
	ISCSI_KEY_INITIATOR_ALIAS,
	ISCSI_KEY_TARGET_ADDRESS,
	ISCSI_KEY_TARGET_PORTAL_GROUP_TAG,
	ISCSI_KEY_INITIAL_R2T,
	ISCSI_KEY_IMMEDIATE_DATA,
	ISCSI_KEY_MAX_RECV_DSL,
	ISCSI_KEY_MAX_BURST_LENGTH,
	ISCSI_KEY_FIRST_BURST_LENGTH,
	ISCSI_KEY_DEFAULT_TIME2WAIT,
	ISCSI_KEY_DEFAULT_TIME2RETAIN,
	ISCSI_KEY_MAX_OUTSTANDING_R2T,
	ISCSI_KEY_DATA_PDU_IN_ORDER,
	ISCSI_KEY_DATA_SEQUENCE_IN_ORDER,
	ISCSI_KEY_ERROR_RECOVERY_LEVEL,
	ISCSI_KEY_SESSION_TYPE,
	ISCSI_KEY_AUTH_METHOD,
	ISCSI_KEY_TASK_REPORTING,
	ISCSI_KEY_PROTOCOL_LEVEL,
	ISCSI_KEY_OF_MARKER,
	ISCSI_KEY_IF_MARKER,
	ISCSI_KEY_OF_MARK_INT,
	ISCSI_KEY_IF_MARK_INT,
	ISCSI_KEY_CHAP_A,
	ISCSI_KEY_CHAP_I,
	ISCSI_KEY_CHAP_C,
	ISCSI_KEY_CHAP_N,
	ISCSI_KEY_CHAP_R,
	ISCSI_NR_KEYS
};

/**
 * struct iscsi_key_desc - one key of RFC 7143 clause 13.
 * @name: as on the wire.
 * @type, @result: enum iscsi_key_type, enum iscsi_key_result.
 * @phase: ISCSI_PH_* bits.  @dir: ISCSI_DIR_* bits.
 * @min, @max: numerical range (inclusive).
 * @def: the default value, as text ("" when none).
 * @values: for lists, what the target accepts, comma-separated in its
 *	order of preference ("" for keys the target does not accept).
 * @value_max: longest value accepted, bytes.
 * @rfc: the section.
 */
struct iscsi_key_desc {
	const char *name;
	uint8_t type;
	uint8_t result;
	uint8_t phase;
	uint8_t dir;
	uint32_t min, max;
	const char *def;
	const char *values;
	uint16_t value_max;
	const char *rfc;
};

extern const struct iscsi_key_desc iscsi_keys[ISCSI_NR_KEYS];

/**
 * struct iscsi_params - a session's and connection's operational values.
 * Lengths in bytes, times in seconds.  iscsi_params_default() gives the
 * RFC's defaults; the target's own offers are a second struct of the
 * same type (what it accepts at most / prefers).
 */
struct iscsi_params {
	bool header_digest;             /* CRC32C */
	bool data_digest;
	uint32_t max_connections;
	bool initial_r2t;
	bool immediate_data;
	uint32_t max_recv_dsl;          /* the declarer's receive limit */
	uint32_t max_burst_length;
	uint32_t first_burst_length;
	uint32_t default_time2wait;
	uint32_t default_time2retain;
	uint32_t max_outstanding_r2t;
	bool data_pdu_in_order;
	bool data_sequence_in_order;
	uint32_t error_recovery_level;
	uint32_t protocol_level;
	bool discovery;                 /* SessionType=Discovery */
	char target_name[ISCSI_NAME_MAX + 1];
	char initiator_name[ISCSI_NAME_MAX + 1];
	char initiator_alias[ISCSI_VALUE_MAX + 1];
	char auth_method[16];           /* "None", "CHAP"; "" before */
};

/** iscsi_params_default() - the defaults of clause 13. */
void iscsi_params_default(struct iscsi_params *p);

/**
 * struct iscsi_neg - one negotiation (a login, or one Text exchange).
 * @ours: our values: limits for min/max keys, the choice for booleans,
 *	our MaxRecvDataSegmentLength, the lists accepted (auth_method:
 *	"None" or "CHAP,None"...; the digests: "CRC32C,None" when true, else
 *	"None" on the target's side; the initiator offers "CRC32C" alone
 *	when true: a digest it asks for is required).
 * @cur: the negotiated values so far (start from iscsi_params_default()).
 * @peer_max_recv_dsl: what the peer declared (8192 until it does).
 * @login: in a login (else a Text exchange in full feature phase).
 * @first_pdu: the first Login Request (login.c checks that it names the
 *	initiator).
 * @stage: ISCSI_STAGE_SECURITY or _OPERATIONAL in a login.
 * @seen: keys received so far (a key twice is an error, 6.2).
 * @sent_mrdsl: our MaxRecvDataSegmentLength was declared.
 * @initiator: we are the initiator: keys the target may send (T2I) are
 *	taken, keys in @offered are answers checked against their result
 *	function (iscsi_keys_negotiate()), others are the target's offers,
 *	answered as a responder.
 * @offered: the initiator's keys awaiting an answer (iscsi_keys_offer()),
 *	a bit per enum iscsi_key_id; cleared as the answers come.
 * @tpgt: the TargetPortalGroupTag the target declared (initiator; -1 none).
 * @bad: after -EPROTO, the key=value at fault (for messages; "" if none).
 * @non_leading: a login that adds a connection to a live session: the
 *	leading-only (LO) keys are answered Irrelevant, their values are the
 *	session's (SessionType excepted: the login checks it).
 * Private: @special, what the caller (login.c) answers itself.
 */
struct iscsi_neg {
	const struct iscsi_params *ours;
	struct iscsi_params *cur;
	uint32_t peer_max_recv_dsl;
	bool login;
	bool first_pdu;
	uint8_t stage;
	uint64_t seen;
	bool sent_mrdsl;
	bool initiator;
	uint64_t offered;
	int32_t tpgt;
	char bad[80];
	bool non_leading;
	/* set when these keys came (their values in @cur or below) */
	bool got_send_targets;
	char send_targets[ISCSI_VALUE_MAX + 1];
	const char *auth_offer;          /* AuthMethod's value, into @in */
};

/**
 * struct iscsi_text_out - a growing key=value\0 list.
 * @buf, @cap: the buffer and its size, bytes (the caller's).
 * @len: bytes used.
 * @overflow: a pair did not fit (nothing of it was written).
 */
struct iscsi_text_out {
	char *buf;
	size_t cap;
	size_t len;
	bool overflow;
};

/** iscsi_text_add() - append "key=value\0"; sets @o->overflow when full. */
void iscsi_text_add(struct iscsi_text_out *o, const char *key,
		    const char *value);

/**
 * iscsi_text_next() - the next pair of a key=value\0 list.
 * @text, @len: the list (the whole data segment(s), bytes).
 * @pos: where to start; advanced past the pair.
 * @key, @keylen, @val, @vallen: the pair, pointing into @text (not
 *	terminated copies: @val is followed by its \0 on success).
 * Return: 1: a pair; 0: end of list; -EINVAL: malformed (no '=', an
 * empty key, a key over ISCSI_KEY_NAME_MAX or with characters outside
 * 6.1's a-z A-Z 0-9 . - + @ _, a pair not ended by \0, a value over
 * ISCSI_VALUE_LONG_MAX).  Empty pairs (\0\0, padding) are skipped.
 */
int iscsi_text_next(const char *text, size_t len, size_t *pos,
		    const char **key, size_t *keylen, const char **val,
		    size_t *vallen);

/**
 * iscsi_key_lookup() - a key's index in iscsi_keys[] by name.
 * Return: the enum iscsi_key_id, or -1 for an unknown key.
 */
int iscsi_key_lookup(const char *name, size_t len);

/**
 * iscsi_keys_negotiate() - answer every key of @text as the responder,
 * and, with @n->initiator, take the target's answers to our offers.
 * @n: the negotiation.
 * @text, @len: the peer's key=value\0 list.
 * @out: the answers go here (unknown keys: NotUnderstood; values out of
 *	range or not acceptable: Reject; keys the target may not be sent
 *	or that do not apply now: Irrelevant or Reject, 6.2.1).
 *
 * Keys the caller answers itself are only recorded here: SendTargets
 * (got_send_targets), AuthMethod (auth_offer; the answer comes from the
 * caller) and CHAP_* (left to login.c: returned through @chap).
 * @chap: CHAP_* keys' values, indexed ISCSI_KEY_CHAP_A.. (NULL where not
 *	sent); may be NULL in full feature phase.
 * The initiator's side (@n->initiator): an answer to a key in
 * @n->offered goes through the key's result function (13, 6.2.5): a
 * numerical min key's answer at most our offer, a max key's at least it;
 * a boolean OR key offered Yes answered Yes, an AND key offered No
 * answered No; a list value one we offered; all in range.  NotUnderstood,
 * Irrelevant and Reject leave the key at its default.  A key the target
 * offers on its own is answered as the target answers (min, max, OR, AND,
 * first acceptable), from the initiator's side of the direction rules.
 * MaxRecvDataSegmentLength goes to @n->peer_max_recv_dsl,
 * TargetPortalGroupTag to @n->tpgt, AuthMethod's answer to
 * @n->auth_offer.
 * Return: 0; -EINVAL: malformed text (login: initiator error); -EPROTO:
 * a key sent twice in a login, a security key outside a login's security
 * stage, an answer its result function does not allow (initiator);
 * -ENOTSUP: a SessionType other than Discovery or Normal; -ENOSPC: @out
 * full.
 */
int iscsi_keys_negotiate(struct iscsi_neg *n, const char *text, size_t len,
			 struct iscsi_text_out *out,
			 const char *chap[ISCSI_NR_KEYS]);

/**
 * iscsi_keys_offer() - the initiator's operational offers (RFC 7143
 * 6.2): HeaderDigest and DataDigest ("CRC32C" when @n->ours asks for it,
 * else "None"), MaxConnections, InitialR2T, ImmediateData, MaxBurstLength,
 * FirstBurstLength, DefaultTime2Wait, DefaultTime2Retain,
 * MaxOutstandingR2T, DataPDUInOrder, DataSequenceInOrder,
 * ErrorRecoveryLevel with @n->ours's values, and the declaration of our
 * MaxRecvDataSegmentLength.  Each offered key's bit is set in
 * @n->offered, so that iscsi_keys_negotiate() takes the answer through
 * the key's result function; the declaration sets @n->sent_mrdsl.
 * @n: with @n->initiator set.
 * @out: the keys are appended.
 * Return: 0; -ENOSPC: @out full.
 * Context: any.
 */
int iscsi_keys_offer(struct iscsi_neg *n, struct iscsi_text_out *out);

/**
 * iscsi_keys_finish() - end a login's operational stage: our declarations
 * (MaxRecvDataSegmentLength, once) go to @out, and the values that
 * depend on each other are made consistent (FirstBurstLength at most
 * MaxBurstLength).
 */
void iscsi_keys_finish(struct iscsi_neg *n, struct iscsi_text_out *out);

#endif /* BLKSTACK_ISCSI_KEYS_H */
