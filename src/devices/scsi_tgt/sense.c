// SPDX-License-Identifier: MIT
/*
 * Sense data (SPC-4 4.5): fixed format (4.5.3) and descriptor format
 * (4.5.2) with the information (4.5.2.2) and sense-key specific (4.5.2.4)
 * descriptors.
 */
#include <errno.h>
#include <string.h>

#include "blkstack/scsi.h"

#define DESC_INFORMATION 0x00
#define DESC_SENSE_KEY_SPECIFIC 0x02

unsigned int scsi_build_sense(uint8_t *buf, const struct scsi_sense *s,
			      bool descriptor)
{
	unsigned int n;

	if (!descriptor) {
		memset(buf, 0, SCSI_SENSE_FIXED_LEN);
		/* VALID: the INFORMATION field is defined (4 bytes here) */
		buf[0] = 0x70 | (s->info_valid && s->info <= UINT32_MAX ? 0x80 : 0);
		buf[2] = s->key & 0x0f;
		if (s->info_valid && s->info <= UINT32_MAX)
			scsi_put_be32(buf + 3, (uint32_t)s->info);
		buf[7] = SCSI_SENSE_FIXED_LEN - 8;
		buf[12] = (uint8_t)(s->asc_ascq >> 8);
		buf[13] = (uint8_t)s->asc_ascq;
		if (s->sks_valid) {
			buf[15] = 0x80 | (uint8_t)((s->sks >> 16) & 0x7f);
			scsi_put_be16(buf + 16, (uint16_t)s->sks);
		}
		return SCSI_SENSE_FIXED_LEN;
	}
	memset(buf, 0, 8);
	buf[0] = 0x72;
	buf[1] = s->key & 0x0f;
	buf[2] = (uint8_t)(s->asc_ascq >> 8);
	buf[3] = (uint8_t)s->asc_ascq;
	n = 8;
	if (s->info_valid) {
		memset(buf + n, 0, 12);
		buf[n] = DESC_INFORMATION;
		buf[n + 1] = 0x0a;
		buf[n + 2] = 0x80; /* VALID */
		scsi_put_be64(buf + n + 4, s->info);
		n += 12;
	}
	if (s->sks_valid) {
		memset(buf + n, 0, 8);
		buf[n] = DESC_SENSE_KEY_SPECIFIC;
		buf[n + 1] = 0x06;
		buf[n + 4] = 0x80 | (uint8_t)((s->sks >> 16) & 0x7f);
		scsi_put_be16(buf + n + 5, (uint16_t)s->sks);
		n += 8;
	}
	buf[7] = (uint8_t)(n - 8);
	return n;
}

int scsi_parse_sense(const uint8_t *buf, size_t len, struct scsi_sense *s)
{
	unsigned int rc;
	size_t end, p;

	memset(s, 0, sizeof(*s));
	if (len < 1)
		return -EINVAL;
	rc = buf[0] & 0x7f;
	if (rc == 0x70 || rc == 0x71) {
		if (len < 14)
			return -EINVAL;
		s->key = buf[2] & 0x0f;
		s->asc_ascq = (uint16_t)(buf[12] << 8 | buf[13]);
		if (buf[0] & 0x80) {
			s->info_valid = true;
			s->info = scsi_get_be32(buf + 3);
		}
		if (len >= 18 && (buf[15] & 0x80)) {
			s->sks_valid = true;
			s->sks = (uint32_t)(buf[15] & 0x7f) << 16 |
				 scsi_get_be16(buf + 16);
		}
		return 0;
	}
	if (rc != 0x72 && rc != 0x73)
		return -EINVAL;
	if (len < 8)
		return -EINVAL;
	s->key = buf[1] & 0x0f;
	s->asc_ascq = (uint16_t)(buf[2] << 8 | buf[3]);
	end = 8 + (size_t)buf[7];
	if (end > len)
		end = len;
	/* descriptors: type, additional length, then that many bytes */
	for (p = 8; p + 2 <= end && p + 2 + buf[p + 1] <= end;
	     p += 2 + (size_t)buf[p + 1]) {
		if (buf[p] == DESC_INFORMATION && buf[p + 1] >= 0x0a) {
			s->info_valid = buf[p + 2] & 0x80;
			s->info = scsi_get_be64(buf + p + 4);
		} else if (buf[p] == DESC_SENSE_KEY_SPECIFIC && buf[p + 1] >= 0x06 &&
			   (buf[p + 4] & 0x80)) {
			s->sks_valid = true;
			s->sks = (uint32_t)(buf[p + 4] & 0x7f) << 16 |
				 scsi_get_be16(buf + p + 5);
		}
	}
	return 0;
}
