/* SPDX-License-Identifier: MIT */
/*
 * iSCSI PDU layer (RFC 7143 11.2): header checks, AHS, padding and the
 * CRC32C digests.  No sockets: the connection code reads a BHS, asks
 * iscsi_pdu_check() how much follows, and reads that.
 */
#ifndef BLKSTACK_ISCSI_PDU_H
#define BLKSTACK_ISCSI_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "wire.h"

/**
 * struct iscsi_pdu_lens - what follows a BHS on the wire.
 * @ahs_len: bytes of AHS (TotalAHSLength * 4), 0..ISCSI_AHS_MAX.
 * @data_len: DataSegmentLength, bytes, without padding.
 * @pad: padding bytes after the data segment, 0..3.
 */
struct iscsi_pdu_lens {
	uint32_t ahs_len;
	uint32_t data_len;
	uint32_t pad;
};

/**
 * iscsi_pdu_lens() - what follows a received BHS (its AHS, data segment
 * and the segment's padding), the part of the checks both ends share.
 * @bhs: ISCSI_BHS_LEN bytes.
 * @max_dsl: the MaxRecvDataSegmentLength we declared, bytes.
 * @l: filled in whenever the return is 0.
 * Return: 0; -EMSGSIZE: DataSegmentLength over @max_dsl (RFC 7143 7.11).
 * Context: any.
 */
int iscsi_pdu_lens(const uint8_t *bhs, uint32_t max_dsl,
		   struct iscsi_pdu_lens *l);

/**
 * iscsi_pdu_check() - check a BHS received from an initiator.
 * @bhs: ISCSI_BHS_LEN bytes.
 * @max_dsl: the MaxRecvDataSegmentLength we declared, bytes (the largest
 *	data segment we accept; a Login or Text request takes at most this
 *	much per PDU too).
 * @l: filled in whenever the return is not -EMSGSIZE.
 *
 * Return: 0; -EOPNOTSUPP: an initiator opcode we do not implement (SNACK
 * at ErrorRecoveryLevel 0, vendor-specific, reserved: answer Reject
 * "command not supported" after skipping @l's bytes); -EPROTO: a target
 * opcode, or a data segment on a PDU that takes none (Logout, Task
 * Management, SNACK), or an AHS on anything but a SCSI Command
 * (protocol error); -EMSGSIZE: DataSegmentLength over @max_dsl (protocol
 * error, RFC 7143 7.11: the stream cannot be trusted, nothing is
 * allocated for it).
 * Context: any.
 */
int iscsi_pdu_check(const uint8_t *bhs, uint32_t max_dsl,
		    struct iscsi_pdu_lens *l);

/**
 * struct iscsi_ahs - the AHSs of a SCSI Command (11.2.2).
 * @ext_cdb: CDB bytes past the first 16 (Extended CDB AHS).
 * @ext_cdb_len: bytes in @ext_cdb (0: none).
 * @bidi_read_len: Expected Bidirectional Read Data Length, bytes.
 * @bidi: a Bidirectional Read Expected Data Transfer Length AHS came.
 */
struct iscsi_ahs {
	const uint8_t *ext_cdb;
	uint32_t ext_cdb_len;
	uint32_t bidi_read_len;
	bool bidi;
};

/**
 * iscsi_ahs_parse() - split @len bytes of AHS into @out.
 * Return: 0; -EPROTO: an AHS running past @len, a length that does not
 * match its type, an unknown type, or one type twice.
 * Context: any.
 */
int iscsi_ahs_parse(const uint8_t *ahs, uint32_t len, struct iscsi_ahs *out);

/**
 * iscsi_crc32c() - CRC32C (Castagnoli) as iSCSI's digests use it (RFC
 * 7143 13.1, RFC 3720 B.4): initial value ~0, final complement.
 * @crc: the running value: ISCSI_CRC_INIT for a new digest, or what a
 *	previous call returned, to continue over more bytes.
 * Return: the running value; iscsi_crc32c_final() gives the digest.
 * Context: any.
 */
#define ISCSI_CRC_INIT 0xffffffffu
uint32_t iscsi_crc32c(uint32_t crc, const void *buf, size_t len);

static inline uint32_t iscsi_crc32c_final(uint32_t crc)
{
	return ~crc;
}

/**
 * iscsi_digest() - the digest of @iov's bytes (header: BHS + AHS; data:
 * the data segment with its padding).
 * Return: the CRC32C value.
 */
uint32_t iscsi_digest(const struct iovec *iov, int iovcnt);

/*
 * On the wire the digest is the CRC's 32 bits least significant byte
 * first: RFC 3720 B.4 gives aa 36 91 8a for 32 zero bytes, whose CRC32C
 * is 0x8a9136aa.
 */
static inline void iscsi_digest_put(uint8_t *p, uint32_t crc)
{
	p[0] = (uint8_t)crc;
	p[1] = (uint8_t)(crc >> 8);
	p[2] = (uint8_t)(crc >> 16);
	p[3] = (uint8_t)(crc >> 24);
}

static inline uint32_t iscsi_digest_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/**
 * iscsi_bhs_init() - zero @bhs and set the opcode and flags byte.
 */
void iscsi_bhs_init(uint8_t *bhs, uint8_t opcode, uint8_t flags);

/**
 * iscsi_nop_in_ping_init() - a NOP-In the target sends on its own to
 * ask for a NOP-Out (RFC 7143 11.19): F set, ITT 0xffffffff, @ttt (not
 * 0xffffffff: an answer is wanted), @lun (8 bytes, as on the wire),
 * which the answer copies back; no data.  The caller sets StatSN (the
 * next one, which this PDU does not advance), ExpCmdSN and MaxCmdSN.
 */
void iscsi_nop_in_ping_init(uint8_t *bhs, uint32_t ttt, const uint8_t *lun);

/**
 * iscsi_async_logout_init() - an Asynchronous Message asking the
 * initiator to log out (RFC 7143 11.9.1, AsyncEvent 1) within @seconds
 * (Parameter3); F set, ITT 0xffffffff, no data.  The caller sets StatSN,
 * ExpCmdSN and MaxCmdSN.
 */
void iscsi_async_logout_init(uint8_t *bhs, uint16_t seconds);

/** iscsi_opcode_name() - "SCSI Command", ... for logs ("unknown"). */
const char *iscsi_opcode_name(uint8_t opcode);

#endif /* BLKSTACK_ISCSI_PDU_H */
