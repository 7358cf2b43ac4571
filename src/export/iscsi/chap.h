/* SPDX-License-Identifier: MIT */
/*
 * CHAP for iSCSI logins (RFC 7143 12.1.3, RFC 1994): the secrets file,
 * binary values as iSCSI writes them (0x hex, 0b base64: RFC 7143 6.1),
 * and the MD5 response (nettle).
 */
#ifndef BLKSTACK_ISCSI_CHAP_H
#define BLKSTACK_ISCSI_CHAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISCSI_CHAP_MAX_USERS 64
#define ISCSI_CHAP_NAME_MAX 255
#define ISCSI_CHAP_SECRET_MIN 12   /* 12.1.3: at least 96 bits */
#define ISCSI_CHAP_SECRET_MAX 255
#define ISCSI_CHAP_CHALLENGE_LEN 16
#define ISCSI_CHAP_CHALLENGE_MAX 1024 /* an initiator's challenge, bytes */
#define ISCSI_CHAP_MD5 5            /* CHAP_A: MD5 (RFC 1994) */

struct iscsi_chap_user {
	char name[ISCSI_CHAP_NAME_MAX + 1];
	char secret[ISCSI_CHAP_SECRET_MAX + 1];
};

/**
 * struct iscsi_chap - the secrets: who may log in, and what the target
 * answers an initiator that asks it to authenticate too (mutual CHAP).
 * @users, @nr_users: initiator credentials ("initiator NAME SECRET").
 * @target: the target's own ("target NAME SECRET"); @has_target.
 */
struct iscsi_chap {
	struct iscsi_chap_user users[ISCSI_CHAP_MAX_USERS];
	unsigned int nr_users;
	struct iscsi_chap_user target;
	bool has_target;
};

/**
 * iscsi_chap_load() - read a secrets file: lines "initiator NAME SECRET"
 * (at least one) and at most one "target NAME SECRET"; '#' starts a
 * comment.  Secrets are 12..255 bytes without white space.
 * Return: 0; -EACCES when the file may be read or written by its group
 * or others (mode & 077) or cannot be opened; -EINVAL for a bad line
 * (@err names it); -E2BIG past ISCSI_CHAP_MAX_USERS.
 * Context: any.
 */
int iscsi_chap_load(const char *path, struct iscsi_chap *chap, char *err,
		    size_t errlen);

/**
 * iscsi_chap_load_as() - iscsi_chap_load() with messages that name the
 * option @opt ("iscsi_chap_file") instead of "--iscsi-chap".  The
 * initiator reads the same format: its "initiator" line is what it
 * answers with, the "target" line what it expects from a target it
 * authenticates (mutual CHAP).
 * Return, context: as iscsi_chap_load().
 */
int iscsi_chap_load_as(const char *opt, const char *path,
		       struct iscsi_chap *chap, char *err, size_t errlen);

/**
 * iscsi_chap_decode() - a binary value: "0x" and hex digits, or "0b" and
 * base64 (RFC 7143 6.1, "binary-value").
 * @out, @max: where to, and its size in bytes.
 * Return: bytes decoded (>= 1); -EINVAL malformed or empty; -E2BIG over
 * @max.
 */
int iscsi_chap_decode(const char *v, uint8_t *out, size_t max);

/** iscsi_chap_hex() - "0x" + hex of @len bytes into @out (2 * len + 3). */
void iscsi_chap_hex(const uint8_t *b, size_t len, char *out);

/**
 * iscsi_chap_response() - MD5(@id || @secret || @challenge) (RFC 1994 4.1).
 * @md5: 16 bytes out.
 */
void iscsi_chap_response(uint8_t id, const char *secret,
			 const uint8_t *challenge, size_t len, uint8_t *md5);

/**
 * iscsi_chap_check() - whether @value, a CHAP_R as on the wire (0x hex or
 * 0b base64), is MD5(@id || @secret || @challenge), compared in constant
 * time.  Both ends use it: the target on an initiator's answer, the
 * initiator on a target's in mutual CHAP.
 * @challenge, @len: the challenge we sent, bytes.
 * Return: 0: it is; -EACCES: another digest; -EINVAL: not a 16-byte
 * binary value.
 * Context: any.
 */
int iscsi_chap_check(uint8_t id, const char *secret, const uint8_t *challenge,
		     size_t len, const char *value);

#endif /* BLKSTACK_ISCSI_CHAP_H */
