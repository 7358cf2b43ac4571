// SPDX-License-Identifier: MIT
/*
 * iSCSI text keys: the table of RFC 7143 clause 13, the responder's side
 * of clause 6 (either end's), and the initiator's offers and results (see
 * keys.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"

#define U24 16777215u

/* name, type, result, phase, direction, min, max, default, accepted, max value length, RFC */
#define K(n, t, r, ph, d, lo, hi, def, vals, vmax, sec) \
	{ n, ISCSI_KT_##t, ISCSI_KR_##r, ph, d, lo, hi, def, vals, vmax, sec }
#define BOTH (ISCSI_DIR_I2T | ISCSI_DIR_T2I)
#define I2T ISCSI_DIR_I2T
#define T2I ISCSI_DIR_T2I
#define LO ISCSI_PH_LO
#define IO ISCSI_PH_IO
#define FFPO ISCSI_PH_FFPO
#define ALL ISCSI_PH_ALL
#define SEC ISCSI_PH_SEC
#define V ISCSI_VALUE_MAX

const struct iscsi_key_desc iscsi_keys[ISCSI_NR_KEYS] = {
	[ISCSI_KEY_HEADER_DIGEST] = K("HeaderDigest", LIST, FIRST, IO, BOTH, 0, 0, "None", "CRC32C,None", V, "13.1"),
	[ISCSI_KEY_DATA_DIGEST] = K("DataDigest", LIST, FIRST, IO, BOTH, 0, 0, "None", "CRC32C,None", V, "13.1"),
	[ISCSI_KEY_MAX_CONNECTIONS] = K("MaxConnections", NUM, MIN, LO, BOTH, 1, 65535, "1", "", V, "13.2"),
	[ISCSI_KEY_SEND_TARGETS] = K("SendTargets", DECL, NONE, FFPO, I2T, 0, 0, "", "", V, "13.3"),
	[ISCSI_KEY_TARGET_NAME] = K("TargetName", DECL, NONE, IO, BOTH, 0, 0, "", "", V, "13.4"),
	[ISCSI_KEY_INITIATOR_NAME] = K("InitiatorName", DECL, NONE, IO, I2T, 0, 0, "", "", V, "13.5"),
	[ISCSI_KEY_TARGET_ALIAS] = K("TargetAlias", DECL, NONE, ALL, T2I, 0, 0, "", "", V, "13.6"),
	[ISCSI_KEY_INITIATOR_ALIAS] = K("InitiatorAlias", DECL, NONE, ALL, I2T, 0, 0, "", "", V, "13.7"),
	[ISCSI_KEY_TARGET_ADDRESS] = K("TargetAddress", DECL, NONE, ALL, T2I, 0, 0, "", "", V, "13.8"),
	[ISCSI_KEY_TARGET_PORTAL_GROUP_TAG] = K("TargetPortalGroupTag", DECL_NUM, NONE, IO, T2I, 0, 65535, "", "", V, "13.9"),
	[ISCSI_KEY_INITIAL_R2T] = K("InitialR2T", BOOL, OR, LO, BOTH, 0, 1, "Yes", "", V, "13.10"),
	[ISCSI_KEY_IMMEDIATE_DATA] = K("ImmediateData", BOOL, AND, LO, BOTH, 0, 1, "Yes", "", V, "13.11"),
	[ISCSI_KEY_MAX_RECV_DSL] = K("MaxRecvDataSegmentLength", DECL_NUM, NONE, ALL, BOTH, 512, U24, "8192", "", V, "13.12"),
	[ISCSI_KEY_MAX_BURST_LENGTH] = K("MaxBurstLength", NUM, MIN, LO, BOTH, 512, U24, "262144", "", V, "13.13"),
	[ISCSI_KEY_FIRST_BURST_LENGTH] = K("FirstBurstLength", NUM, MIN, LO, BOTH, 512, U24, "65536", "", V, "13.14"),
	[ISCSI_KEY_DEFAULT_TIME2WAIT] = K("DefaultTime2Wait", NUM, MAX, LO, BOTH, 0, 3600, "2", "", V, "13.15"),
	[ISCSI_KEY_DEFAULT_TIME2RETAIN] = K("DefaultTime2Retain", NUM, MIN, LO, BOTH, 0, 3600, "20", "", V, "13.16"),
	[ISCSI_KEY_MAX_OUTSTANDING_R2T] = K("MaxOutstandingR2T", NUM, MIN, LO, BOTH, 1, 65535, "1", "", V, "13.17"),
	[ISCSI_KEY_DATA_PDU_IN_ORDER] = K("DataPDUInOrder", BOOL, OR, LO, BOTH, 0, 1, "Yes", "", V, "13.18"),
	[ISCSI_KEY_DATA_SEQUENCE_IN_ORDER] = K("DataSequenceInOrder", BOOL, OR, LO, BOTH, 0, 1, "Yes", "", V, "13.19"),
	[ISCSI_KEY_ERROR_RECOVERY_LEVEL] = K("ErrorRecoveryLevel", NUM, MIN, LO, BOTH, 0, 2, "0", "", V, "13.20"),
	[ISCSI_KEY_SESSION_TYPE] = K("SessionType", DECL, NONE, LO, I2T, 0, 0, "Normal", "Discovery,Normal", V, "13.21"),
	[ISCSI_KEY_AUTH_METHOD] = K("AuthMethod", LIST, FIRST, SEC, BOTH, 0, 0, "None", "", V, "12.1"),
	[ISCSI_KEY_TASK_REPORTING] = K("TaskReporting", LIST, FIRST, LO, BOTH, 0, 0, "RFC3720", "RFC3720", V, "13.23"),
	[ISCSI_KEY_PROTOCOL_LEVEL] = K("iSCSIProtocolLevel", NUM, MIN, LO, BOTH, 0, 31, "1", "", V, "RFC 7144 4.1"),
	[ISCSI_KEY_OF_MARKER] = K("OFMarker", OBSOLETE, NONE, LO, BOTH, 0, 0, "", "", V, "13.26"),
	[ISCSI_KEY_IF_MARKER] = K("IFMarker", OBSOLETE, NONE, LO, BOTH, 0, 0, "", "", V, "13.26"),
	[ISCSI_KEY_OF_MARK_INT] = K("OFMarkInt", OBSOLETE, NONE, LO, BOTH, 0, 0, "", "", V, "13.26"),
	[ISCSI_KEY_IF_MARK_INT] = K("IFMarkInt", OBSOLETE, NONE, LO, BOTH, 0, 0, "", "", V, "13.26"),
	[ISCSI_KEY_CHAP_A] = K("CHAP_A", SECURITY, NONE, SEC, BOTH, 0, 0, "", "5", V, "12.1.3"),
	[ISCSI_KEY_CHAP_I] = K("CHAP_I", SECURITY, NONE, SEC, BOTH, 0, 255, "", "", V, "12.1.3"),
	[ISCSI_KEY_CHAP_C] = K("CHAP_C", SECURITY, NONE, SEC, BOTH, 0, 0, "", "", ISCSI_VALUE_LONG_MAX, "12.1.3"),
	[ISCSI_KEY_CHAP_N] = K("CHAP_N", SECURITY, NONE, SEC, BOTH, 0, 0, "", "", V, "12.1.3"),
	[ISCSI_KEY_CHAP_R] = K("CHAP_R", SECURITY, NONE, SEC, BOTH, 0, 0, "", "", ISCSI_VALUE_LONG_MAX, "12.1.3"),
};

/* Where a negotiated key's value lives in struct iscsi_params. */
#define F(field) offsetof(struct iscsi_params, field), sizeof(((struct iscsi_params *)0)->field)
static const struct {
	size_t off, size;
} key_field[ISCSI_NR_KEYS] = {
	[ISCSI_KEY_HEADER_DIGEST] = { F(header_digest) },
	[ISCSI_KEY_DATA_DIGEST] = { F(data_digest) },
	[ISCSI_KEY_MAX_CONNECTIONS] = { F(max_connections) },
	[ISCSI_KEY_TARGET_NAME] = { F(target_name) },
	[ISCSI_KEY_INITIATOR_NAME] = { F(initiator_name) },
	[ISCSI_KEY_INITIATOR_ALIAS] = { F(initiator_alias) },
	[ISCSI_KEY_INITIAL_R2T] = { F(initial_r2t) },
	[ISCSI_KEY_IMMEDIATE_DATA] = { F(immediate_data) },
	[ISCSI_KEY_MAX_BURST_LENGTH] = { F(max_burst_length) },
	[ISCSI_KEY_FIRST_BURST_LENGTH] = { F(first_burst_length) },
	[ISCSI_KEY_DEFAULT_TIME2WAIT] = { F(default_time2wait) },
	[ISCSI_KEY_DEFAULT_TIME2RETAIN] = { F(default_time2retain) },
	[ISCSI_KEY_MAX_OUTSTANDING_R2T] = { F(max_outstanding_r2t) },
	[ISCSI_KEY_DATA_PDU_IN_ORDER] = { F(data_pdu_in_order) },
	[ISCSI_KEY_DATA_SEQUENCE_IN_ORDER] = { F(data_sequence_in_order) },
	[ISCSI_KEY_ERROR_RECOVERY_LEVEL] = { F(error_recovery_level) },
	[ISCSI_KEY_PROTOCOL_LEVEL] = { F(protocol_level) },
};

void iscsi_params_default(struct iscsi_params *p)
{
	memset(p, 0, sizeof(*p));
	p->max_connections = 1;
	p->initial_r2t = true;
	p->immediate_data = true;
	p->max_recv_dsl = 8192;
	p->max_burst_length = 262144;
	p->first_burst_length = 65536;
	p->default_time2wait = 2;
	p->default_time2retain = 20;
	p->max_outstanding_r2t = 1;
	p->data_pdu_in_order = true;
	p->data_sequence_in_order = true;
	p->protocol_level = 1;
}

void iscsi_text_add(struct iscsi_text_out *o, const char *key,
		    const char *value)
{
	size_t kl = strlen(key), vl = strlen(value);

	if (o->overflow || kl + vl + 2 > o->cap - o->len) {
		o->overflow = true;
		return;
	}
	memcpy(o->buf + o->len, key, kl);
	o->buf[o->len + kl] = '=';
	memcpy(o->buf + o->len + kl + 1, value, vl);
	o->buf[o->len + kl + 1 + vl] = 0;
	o->len += kl + vl + 2;
}

static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' ||
	       c == '@' || c == '_';
}

int iscsi_text_next(const char *text, size_t len, size_t *pos,
		    const char **key, size_t *keylen, const char **val,
		    size_t *vallen)
{
	size_t p = *pos, k, v;

	while (p < len && !text[p])
		p++; /* empty pairs, padding */
	if (p >= len) {
		*pos = p;
		return 0;
	}
	for (k = p; k < len && text[k] != '=' && text[k]; k++)
		if (!key_char(text[k]) || k - p >= ISCSI_KEY_NAME_MAX)
			return -EINVAL;
	if (k >= len || text[k] != '=' || k == p)
		return -EINVAL;
	for (v = k + 1; v < len && text[v]; v++)
		if (v - k - 1 >= ISCSI_VALUE_LONG_MAX)
			return -EINVAL;
	if (v >= len)
		return -EINVAL; /* not terminated */
	*key = text + p;
	*keylen = k - p;
	*val = text + k + 1;
	*vallen = v - k - 1;
	*pos = v + 1;
	return 1;
}

int iscsi_key_lookup(const char *name, size_t len)
{
	int i;

	for (i = 0; i < ISCSI_NR_KEYS; i++)
		if (strlen(iscsi_keys[i].name) == len &&
		    !memcmp(iscsi_keys[i].name, name, len))
			return i;
	return -1;
}

/*
 * A numerical value (6.1, "numerical-value"): decimal, or hexadecimal
 * with 0x.  Base64 constants (0b) are refused.  Return: 0; -EINVAL.
 */
static int parse_num(const char *v, size_t len, uint64_t *out)
{
	uint64_t x = 0;
	size_t i = 0;
	unsigned int base = 10, d;

	if (len > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i >= len || len - i > 16)
		return -EINVAL;
	for (; i < len; i++) {
		char c = v[i];

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned int)(c - 'A' + 10);
		else
			return -EINVAL;
		if (x > (UINT64_MAX - d) / base)
			return -EINVAL;
		x = x * base + d;
	}
	*out = x;
	return 0;
}

/* Is @v (@len bytes) one of the comma-separated @list? */
static bool in_list(const char *list, const char *v, size_t len)
{
	const char *p = list;

	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n == len && !memcmp(p, v, len))
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

static bool is_answer(const char *v, size_t len)
{
	return (len == 13 && !memcmp(v, "NotUnderstood", 13)) ||
	       (len == 10 && !memcmp(v, "Irrelevant", 10)) ||
	       (len == 6 && !memcmp(v, "Reject", 6));
}

/*
 * What we accept of a list key, in @n's configuration: the target takes
 * either digest when it has them on; the initiator offers and accepts
 * only the one it asked for (a digest asked for is required).
 */
static const char *accepted(const struct iscsi_neg *n, int id)
{
	switch (id) {
	case ISCSI_KEY_HEADER_DIGEST:
		if (n->initiator)
			return n->ours->header_digest ? "CRC32C" : "None";
		return n->ours->header_digest ? "CRC32C,None" : "None";
	case ISCSI_KEY_DATA_DIGEST:
		if (n->initiator)
			return n->ours->data_digest ? "CRC32C" : "None";
		return n->ours->data_digest ? "CRC32C,None" : "None";
	default:
		return iscsi_keys[id].values;
	}
}

static void set_field(struct iscsi_params *p, int id, uint64_t x)
{
	char *f = (char *)p + key_field[id].off;

	if (key_field[id].size == sizeof(bool))
		*(bool *)f = x != 0;
	else
		*(uint32_t *)f = (uint32_t)x;
}

static uint64_t get_field(const struct iscsi_params *p, int id)
{
	const char *f = (const char *)p + key_field[id].off;

	if (key_field[id].size == sizeof(bool))
		return *(const bool *)f;
	return *(const uint32_t *)f;
}

/* Answer one key of the table; Return 0 or -errno (see the header). */
static int answer(struct iscsi_neg *n, int id, const char *val, size_t vlen,
		  struct iscsi_text_out *out, const char *chap[ISCSI_NR_KEYS])
{
	const struct iscsi_key_desc *d = &iscsi_keys[id];
	char num[24];
	uint64_t x, ours;

	if (d->type == ISCSI_KT_SECURITY || id == ISCSI_KEY_AUTH_METHOD) {
		if (!n->login || n->stage != 0)
			return n->login ? -EPROTO : (iscsi_text_add(out, d->name, "Reject"), 0);
		if (vlen > d->value_max)
			return -EINVAL;
		if (id == ISCSI_KEY_AUTH_METHOD)
			n->auth_offer = val;
		else if (chap)
			chap[id] = val;
		return 0;
	}
	/* a key the peer may not send (13: who sends it) */
	if (!(d->dir & (n->initiator ? ISCSI_DIR_T2I : ISCSI_DIR_I2T))) {
		iscsi_text_add(out, d->name, "Irrelevant");
		return 0;
	}
	/* IO and LO keys: a login only */
	if ((d->phase & (ISCSI_PH_IO | ISCSI_PH_LO)) && !n->login) {
		iscsi_text_add(out, d->name, "Reject");
		return 0;
	}
	/* LO keys: the leading connection's login only; in a connection
	 * added to a session, the session's values hold (6.2.1: Irrelevant) */
	if ((d->phase & ISCSI_PH_LO) && n->non_leading &&
	    id != ISCSI_KEY_SESSION_TYPE) {
		if (d->type != ISCSI_KT_DECL)
			iscsi_text_add(out, d->name, "Irrelevant");
		return 0;
	}
	if ((d->phase & ISCSI_PH_FFPO) && n->login) {
		iscsi_text_add(out, d->name, "Irrelevant");
		return 0;
	}
	if (vlen > d->value_max) {
		iscsi_text_add(out, d->name, "Reject");
		return 0;
	}
	switch (d->type) {
	case ISCSI_KT_OBSOLETE:
		/* 13.26: SHOULD (MarkInt: MUST) answer Reject, never NotUnderstood */
		iscsi_text_add(out, d->name, "Reject");
		return 0;
	case ISCSI_KT_BOOL:
		if (vlen == 3 && !memcmp(val, "Yes", 3))
			x = 1;
		else if (vlen == 2 && !memcmp(val, "No", 2))
			x = 0;
		else {
			iscsi_text_add(out, d->name, "Reject");
			return 0;
		}
		ours = get_field(n->ours, id);
		x = d->result == ISCSI_KR_OR ? (x || ours) : (x && ours);
		set_field(n->cur, id, x);
		iscsi_text_add(out, d->name, x ? "Yes" : "No");
		return 0;
	case ISCSI_KT_NUM:
		if (parse_num(val, vlen, &x) || x < d->min || x > d->max) {
			iscsi_text_add(out, d->name, "Reject");
			return 0;
		}
		ours = get_field(n->ours, id);
		if (d->result == ISCSI_KR_MIN)
			x = x < ours ? x : ours;
		else
			x = x > ours ? x : ours;
		set_field(n->cur, id, x);
		snprintf(num, sizeof(num), "%llu", (unsigned long long)x);
		iscsi_text_add(out, d->name, num);
		return 0;
	case ISCSI_KT_DECL_NUM:
		/* MaxRecvDataSegmentLength is the only one an initiator
		 * sends; the target also declares TargetPortalGroupTag */
		if (parse_num(val, vlen, &x) || x < d->min || x > d->max) {
			iscsi_text_add(out, d->name, "Reject");
			return 0;
		}
		if (id == ISCSI_KEY_MAX_RECV_DSL)
			n->peer_max_recv_dsl = (uint32_t)x;
		else if (id == ISCSI_KEY_TARGET_PORTAL_GROUP_TAG)
			n->tpgt = (int32_t)x;
		return 0;
	case ISCSI_KT_LIST: {
		const char *p = val, *end = val + vlen;

		while (p < end) {
			const char *c = memchr(p, ',', (size_t)(end - p));
			size_t l = c ? (size_t)(c - p) : (size_t)(end - p);

			if (in_list(accepted(n, id), p, l)) {
				char pick[ISCSI_VALUE_MAX + 1];

				memcpy(pick, p, l);
				pick[l] = 0;
				if (id == ISCSI_KEY_HEADER_DIGEST)
					n->cur->header_digest = !strcmp(pick, "CRC32C");
				else if (id == ISCSI_KEY_DATA_DIGEST)
					n->cur->data_digest = !strcmp(pick, "CRC32C");
				iscsi_text_add(out, d->name, pick);
				return 0;
			}
			if (!c)
				break;
			p = c + 1;
		}
		iscsi_text_add(out, d->name, "Reject");
		return 0;
	}
	case ISCSI_KT_DECL:
		if (id == ISCSI_KEY_SEND_TARGETS) {
			n->got_send_targets = true;
			memcpy(n->send_targets, val, vlen);
			n->send_targets[vlen] = 0;
			return 0;
		}
		if (id == ISCSI_KEY_SESSION_TYPE) {
			if (vlen == 9 && !memcmp(val, "Discovery", 9))
				n->cur->discovery = true;
			else if (vlen == 6 && !memcmp(val, "Normal", 6))
				n->cur->discovery = false;
			else
				return -ENOTSUP;
			return 0;
		}
		if (key_field[id].size && vlen < key_field[id].size) {
			char *f = (char *)n->cur + key_field[id].off;

			memcpy(f, val, vlen);
			f[vlen] = 0;
		} else if (key_field[id].size) {
			iscsi_text_add(out, d->name, "Reject");
		}
		return 0;
	}
	return 0;
}

/*
 * The initiator takes the target's answer to a key it offered, through
 * the key's result function (RFC 7143 6.2.5, clause 13).  Return 0;
 * -EPROTO: a value the function cannot give (out of range, above our
 * offer for min, below it for max, No for an OR key offered Yes, Yes for
 * an AND key offered No, a list value not offered).
 */
static int take_answer(struct iscsi_neg *n, int id, const char *val,
		       size_t vlen)
{
	const struct iscsi_key_desc *d = &iscsi_keys[id];
	uint64_t x, ours;

	switch (d->type) {
	case ISCSI_KT_BOOL:
		if (vlen == 3 && !memcmp(val, "Yes", 3))
			x = 1;
		else if (vlen == 2 && !memcmp(val, "No", 2))
			x = 0;
		else
			return -EPROTO;
		ours = get_field(n->ours, id);
		if ((d->result == ISCSI_KR_OR && ours && !x) ||
		    (d->result == ISCSI_KR_AND && !ours && x))
			return -EPROTO;
		set_field(n->cur, id, x);
		return 0;
	case ISCSI_KT_NUM:
		if (parse_num(val, vlen, &x) || x < d->min || x > d->max)
			return -EPROTO;
		ours = get_field(n->ours, id);
		if ((d->result == ISCSI_KR_MIN && x > ours) ||
		    (d->result == ISCSI_KR_MAX && x < ours))
			return -EPROTO;
		set_field(n->cur, id, x);
		return 0;
	case ISCSI_KT_LIST:
		if (memchr(val, ',', vlen) || !in_list(accepted(n, id), val, vlen))
			return -EPROTO;
		if (id == ISCSI_KEY_HEADER_DIGEST)
			n->cur->header_digest = vlen == 6 && !memcmp(val, "CRC32C", 6);
		else if (id == ISCSI_KEY_DATA_DIGEST)
			n->cur->data_digest = vlen == 6 && !memcmp(val, "CRC32C", 6);
		return 0;
	default:
		return 0;
	}
}

int iscsi_keys_negotiate(struct iscsi_neg *n, const char *text, size_t len,
			 struct iscsi_text_out *out,
			 const char *chap[ISCSI_NR_KEYS])
{
	size_t pos = 0, kl, vl;
	const char *k, *v;
	int r, id;

	while ((r = iscsi_text_next(text, len, &pos, &k, &kl, &v, &vl)) > 0) {
		id = iscsi_key_lookup(k, kl);
		if (id < 0) {
			char name[ISCSI_KEY_NAME_MAX + 1];

			memcpy(name, k, kl);
			name[kl] = 0;
			iscsi_text_add(out, name, "NotUnderstood");
			continue;
		}
		/* an answer to one of our declarations: nothing to do; to
		 * one of our offers: the key keeps its default */
		if (is_answer(v, vl)) {
			n->offered &= ~(1ull << id);
			continue;
		}
		if (n->seen & (1ull << id)) {
			if (n->login) {
				snprintf(n->bad, sizeof(n->bad), "%.*s (twice)", (int)kl, k);
				return -EPROTO;
			}
		}
		n->seen |= 1ull << id;
		if (n->initiator && (n->offered & (1ull << id))) {
			n->offered &= ~(1ull << id);
			r = take_answer(n, id, v, vl);
			if (r) {
				snprintf(n->bad, sizeof(n->bad), "%.*s=%.*s", (int)kl, k,
					 (int)(vl > 40 ? 40 : vl), v);
				return r;
			}
			continue;
		}
		r = answer(n, id, v, vl, out, chap);
		if (r)
			return r;
	}
	if (r < 0)
		return r;
	return out->overflow ? -ENOSPC : 0;
}

int iscsi_keys_offer(struct iscsi_neg *n, struct iscsi_text_out *out)
{
	/* every operational key the initiator has a say in, in clause 13's order */
	static const int ids[] = {
		ISCSI_KEY_HEADER_DIGEST, ISCSI_KEY_DATA_DIGEST,
		ISCSI_KEY_MAX_CONNECTIONS, ISCSI_KEY_INITIAL_R2T,
		ISCSI_KEY_IMMEDIATE_DATA, ISCSI_KEY_MAX_BURST_LENGTH,
		ISCSI_KEY_FIRST_BURST_LENGTH, ISCSI_KEY_DEFAULT_TIME2WAIT,
		ISCSI_KEY_DEFAULT_TIME2RETAIN, ISCSI_KEY_MAX_OUTSTANDING_R2T,
		ISCSI_KEY_DATA_PDU_IN_ORDER, ISCSI_KEY_DATA_SEQUENCE_IN_ORDER,
		ISCSI_KEY_ERROR_RECOVERY_LEVEL,
	};
	char num[16];
	size_t i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		const struct iscsi_key_desc *d = &iscsi_keys[ids[i]];
		uint64_t x;

		switch (d->type) {
		case ISCSI_KT_LIST:
			iscsi_text_add(out, d->name, accepted(n, ids[i]));
			break;
		case ISCSI_KT_BOOL:
			x = get_field(n->ours, ids[i]);
			iscsi_text_add(out, d->name, x ? "Yes" : "No");
			break;
		default:
			x = get_field(n->ours, ids[i]);
			snprintf(num, sizeof(num), "%llu", (unsigned long long)x);
			iscsi_text_add(out, d->name, num);
			break;
		}
		n->offered |= 1ull << ids[i];
	}
	snprintf(num, sizeof(num), "%u", n->ours->max_recv_dsl);
	iscsi_text_add(out, "MaxRecvDataSegmentLength", num);
	n->sent_mrdsl = true;
	return out->overflow ? -ENOSPC : 0;
}

void iscsi_keys_finish(struct iscsi_neg *n, struct iscsi_text_out *out)
{
	char num[16];

	if (!n->sent_mrdsl) {
		snprintf(num, sizeof(num), "%u", n->ours->max_recv_dsl);
		iscsi_text_add(out, "MaxRecvDataSegmentLength", num);
		n->sent_mrdsl = true;
	}
	if (n->cur->first_burst_length > n->cur->max_burst_length)
		n->cur->first_burst_length = n->cur->max_burst_length;
	n->cur->max_recv_dsl = n->ours->max_recv_dsl;
}
