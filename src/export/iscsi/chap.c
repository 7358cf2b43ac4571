// SPDX-License-Identifier: MIT
/*
 * CHAP for iSCSI logins: see chap.h.  MD5, hex and base64 come from
 * nettle.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/base16.h>
#include <nettle/base64.h>
#include <nettle/md5.h>

#include "chap.h"

int iscsi_chap_load(const char *path, struct iscsi_chap *chap, char *err,
		    size_t errlen)
{
	return iscsi_chap_load_as("--iscsi-chap", path, chap, err, errlen);
}

int iscsi_chap_load_as(const char *opt, const char *path,
		       struct iscsi_chap *chap, char *err, size_t errlen)
{
	char line[1024];
	struct stat st;
	unsigned int lineno = 0;
	FILE *f;
	int fd, ret = 0;

	memset(chap, 0, sizeof(*chap));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s=%s: %s", opt, path, strerror(errno));
		return -EACCES;
	}
	if (fstat(fd, &st) || (st.st_mode & 077)) {
		snprintf(err, errlen,
			 "%s=%s: readable or writable by group or others (mode %03o): chmod 600 it",
			 opt, path, (unsigned int)(st.st_mode & 0777));
		close(fd);
		return -EACCES;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		char role[16], name[ISCSI_CHAP_NAME_MAX + 2], secret[ISCSI_CHAP_SECRET_MAX + 2];
		char extra[2];
		struct iscsi_chap_user *u;
		char *hash = strchr(line, '#');
		int n;

		lineno++;
		if (hash)
			*hash = 0;
		n = sscanf(line, "%15s %256s %256s %1s", role, name, secret, extra);
		if (n <= 0)
			continue;
		if (n != 3 || strlen(name) > ISCSI_CHAP_NAME_MAX ||
		    strlen(secret) > ISCSI_CHAP_SECRET_MAX ||
		    strlen(secret) < ISCSI_CHAP_SECRET_MIN ||
		    (strcmp(role, "initiator") && strcmp(role, "target"))) {
			snprintf(err, errlen,
				 "%s=%s:%u: expected 'initiator|target NAME SECRET', a name of at most %d bytes, a secret of %d..%d bytes",
				 opt, path, lineno, ISCSI_CHAP_NAME_MAX,
				 ISCSI_CHAP_SECRET_MIN, ISCSI_CHAP_SECRET_MAX);
			ret = -EINVAL;
			break;
		}
		if (!strcmp(role, "target")) {
			if (chap->has_target) {
				snprintf(err, errlen, "%s=%s:%u: a second target line",
					 opt, path, lineno);
				ret = -EINVAL;
				break;
			}
			u = &chap->target;
			chap->has_target = true;
		} else {
			if (chap->nr_users == ISCSI_CHAP_MAX_USERS) {
				snprintf(err, errlen, "%s=%s: more than %d initiators",
					 opt, path, ISCSI_CHAP_MAX_USERS);
				ret = -E2BIG;
				break;
			}
			u = &chap->users[chap->nr_users++];
		}
		/* lengths checked above: they fit with their NUL */
		memcpy(u->name, name, strlen(name) + 1);
		memcpy(u->secret, secret, strlen(secret) + 1);
	}
	fclose(f);
	if (!ret && !chap->nr_users) {
		snprintf(err, errlen, "%s=%s: no 'initiator NAME SECRET' line",
			 opt, path);
		ret = -EINVAL;
	}
	explicit_bzero(line, sizeof(line));
	return ret;
}

int iscsi_chap_decode(const char *v, uint8_t *out, size_t max)
{
	size_t len = strlen(v), n = 0;

	if (len < 3 || v[0] != '0')
		return -EINVAL;
	if (v[1] == 'x' || v[1] == 'X') {
		struct base16_decode_ctx ctx;

		if (BASE16_DECODE_LENGTH(len - 2) > max)
			return -E2BIG;
		base16_decode_init(&ctx);
		if (!base16_decode_update(&ctx, &n, out, len - 2, v + 2) ||
		    !base16_decode_final(&ctx))
			return -EINVAL;
	} else if (v[1] == 'b' || v[1] == 'B') {
		struct base64_decode_ctx ctx;

		if (BASE64_DECODE_LENGTH(len - 2) > max)
			return -E2BIG;
		base64_decode_init(&ctx);
		if (!base64_decode_update(&ctx, &n, out, len - 2, v + 2) ||
		    !base64_decode_final(&ctx))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	/* nettle skips white space: a value of only that decodes to nothing */
	return n ? (int)n : -EINVAL;
}

void iscsi_chap_hex(const uint8_t *b, size_t len, char *out)
{
	out[0] = '0';
	out[1] = 'x';
	base16_encode_update(out + 2, len, b);
	out[2 + 2 * len] = 0;
}

void iscsi_chap_response(uint8_t id, const char *secret,
			 const uint8_t *challenge, size_t len, uint8_t *md5)
{
	struct md5_ctx ctx;

	md5_init(&ctx);
	md5_update(&ctx, 1, &id);
	md5_update(&ctx, strlen(secret), (const uint8_t *)secret);
	md5_update(&ctx, len, challenge);
	md5_digest(&ctx, MD5_DIGEST_SIZE, md5);
}

int iscsi_chap_check(uint8_t id, const char *secret, const uint8_t *challenge,
		     size_t len, const char *value)
{
	uint8_t r[ISCSI_CHAP_CHALLENGE_MAX], want[MD5_DIGEST_SIZE], d = 0;
	int n = iscsi_chap_decode(value, r, sizeof(r));
	unsigned int i;

	if (n != MD5_DIGEST_SIZE)
		return -EINVAL;
	iscsi_chap_response(id, secret, challenge, len, want);
	for (i = 0; i < MD5_DIGEST_SIZE; i++)
		d |= r[i] ^ want[i]; /* no early exit: timing says nothing */
	return d ? -EACCES : 0;
}
