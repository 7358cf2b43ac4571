// SPDX-License-Identifier: MIT
/*
 * iSCSI PDU layer: CRC32C digests against RFC 3720 B.4's test vectors,
 * the byte order of a digest on the wire, BHS checks (opcodes, lengths,
 * MaxRecvDataSegmentLength), AHS parsing and padding, the NOP-In and
 * Asynchronous Message the target sends on its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "export/iscsi/pdu.h"

static uint32_t crc_of(const uint8_t *b, size_t len)
{
	return iscsi_crc32c_final(iscsi_crc32c(ISCSI_CRC_INIT, b, len));
}

/* RFC 3720 B.4: the CRC bytes as they go on the wire. */
static void check_vector(const uint8_t *b, size_t len, const uint8_t want[4])
{
	uint8_t wire[4];

	iscsi_digest_put(wire, crc_of(b, len));
	assert_memory_equal(wire, want, 4);
	assert_int_equal(iscsi_digest_get(want), crc_of(b, len));
}

static void test_rfc3720_vectors(void **state)
{
	uint8_t b[48];
	unsigned int i;
	static const uint8_t zeros[4] = { 0xaa, 0x36, 0x91, 0x8a };
	static const uint8_t ones[4] = { 0x43, 0xab, 0xa8, 0x62 };
	static const uint8_t incr[4] = { 0x4e, 0x79, 0xdd, 0x46 };
	static const uint8_t decr[4] = { 0x5c, 0xdb, 0x3f, 0x11 };
	static const uint8_t read10[48] = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
		0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	static const uint8_t read10_crc[4] = { 0x56, 0x3a, 0x96, 0xd9 };

	(void)state;
	memset(b, 0, 32);
	check_vector(b, 32, zeros);
	memset(b, 0xff, 32);
	check_vector(b, 32, ones);
	for (i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	check_vector(b, 32, incr);
	for (i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	check_vector(b, 32, decr);
	check_vector(read10, 48, read10_crc);
	/* 0x8a9136aa is CRC32C("32 zero bytes") in the usual notation */
	memset(b, 0, 32);
	assert_int_equal(crc_of(b, 32), 0x8a9136aau);
}

static void test_digest_iov_continues(void **state)
{
	uint8_t b[100];
	struct iovec iov[3];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 7 + 3);
	iov[0] = (struct iovec){ b, 13 };
	iov[1] = (struct iovec){ b + 13, 0 };
	iov[2] = (struct iovec){ b + 13, 87 };
	uint32_t before;

	assert_int_equal(iscsi_digest(iov, 3), crc_of(b, sizeof(b)));
	before = iscsi_digest(iov, 3);
	/* one bit flipped, a different digest */
	b[50] ^= 1;
	assert_int_not_equal(iscsi_digest(iov, 3), before);
}

static void bhs(uint8_t *b, uint8_t op, uint8_t ahs_words, uint32_t dsl)
{
	iscsi_bhs_init(b, op, 0x80);
	b[BHS_TOTAL_AHS] = ahs_words;
	bhs_set_dsl(b, dsl);
}

static void test_pdu_check(void **state)
{
	struct iscsi_pdu_lens l;
	uint8_t b[48];

	(void)state;
	bhs(b, ISCSI_OP_SCSI_CMD | ISCSI_OP_IMMEDIATE, 2, 4097);
	assert_int_equal(iscsi_pdu_check(b, 8192, &l), 0);
	assert_int_equal(l.ahs_len, 8);
	assert_int_equal(l.data_len, 4097);
	assert_int_equal(l.pad, 3);
	/* data past MaxRecvDataSegmentLength: refused, nothing to allocate */
	bhs(b, ISCSI_OP_DATA_OUT, 0, 8193);
	assert_int_equal(iscsi_pdu_check(b, 8192, &l), -EMSGSIZE);
	bhs(b, ISCSI_OP_DATA_OUT, 0, 0xffffff);
	assert_int_equal(iscsi_pdu_check(b, 262144, &l), -EMSGSIZE);
	/* every target opcode is a protocol error from an initiator */
	bhs(b, ISCSI_OP_SCSI_RSP, 0, 0);
	assert_int_equal(iscsi_pdu_check(b, 8192, &l), -EPROTO);
	bhs(b, ISCSI_OP_REJECT, 0, 0);
	assert_int_equal(iscsi_pdu_check(b, 8192, &l), -EPROTO);
	/* SNACK, vendor and reserved initiator opcodes: not supported */
	bhs(b, ISCSI_OP_SNACK_REQ, 0, 0);
	assert_int_equal(iscsi_pdu_check(b, 8192, &l), -EOPNOTSUPP);
	bhs(b, 0x1c, 0, 16);
	assert_int_equal(iscsi_pdu_check(b, 8192, &l), -EOPNOTSUPP);
	assert_int_equal(l.data_len, 16);
	bhs(b, 0x07, 0, 0);
	assert_int_equal(iscsi_pdu_check(b, 8192, &l), -EOPNOTSUPP);
	/* data where none is allowed, AHS on anything but a command */
	bhs(b, ISCSI_OP_LOGOUT_REQ, 0, 4);
	assert_int_equal(iscsi_pdu_check(b, 8192, &l), -EPROTO);
	bhs(b, ISCSI_OP_TMF_REQ, 0, 1);
	assert_int_equal(iscsi_pdu_check(b, 8192, &l), -EPROTO);
	bhs(b, ISCSI_OP_NOP_OUT, 1, 0);
	assert_int_equal(iscsi_pdu_check(b, 8192, &l), -EPROTO);
	/* the immediate bit does not change the opcode */
	bhs(b, ISCSI_OP_LOGIN_REQ | ISCSI_OP_IMMEDIATE, 0, 8192);
	assert_int_equal(iscsi_pdu_check(b, 8192, &l), 0);
	assert_int_equal(l.pad, 0);
}

static void test_ahs(void **state)
{
	uint8_t a[64];
	struct iscsi_ahs ahs;
	unsigned int i;

	(void)state;
	memset(a, 0, sizeof(a));
	/* extended CDB: a 32-byte CDB = 16 more bytes, AHSLength 17 */
	put_be16(a, 17);
	a[2] = ISCSI_AHS_EXT_CDB;
	for (i = 0; i < 16; i++)
		a[4 + i] = (uint8_t)(0xa0 + i);
	/* 3 + 17 = 20 bytes, no padding; then bidi read length */
	put_be16(a + 20, 5);
	a[22] = ISCSI_AHS_BIDI_READ_LEN;
	put_be32(a + 24, 4096);
	assert_int_equal(iscsi_ahs_parse(a, 28, &ahs), 0);
	assert_int_equal(ahs.ext_cdb_len, 16);
	assert_int_equal(ahs.ext_cdb[0], 0xa0);
	assert_int_equal(ahs.ext_cdb[15], 0xaf);
	assert_true(ahs.bidi);
	assert_int_equal(ahs.bidi_read_len, 4096);
	/* running past the total, zero length, unknown type, twice */
	assert_int_equal(iscsi_ahs_parse(a, 24, &ahs), -EPROTO);
	assert_int_equal(iscsi_ahs_parse(a, 2, &ahs), -EPROTO);
	put_be16(a, 0);
	assert_int_equal(iscsi_ahs_parse(a, 28, &ahs), -EPROTO);
	put_be16(a, 17);
	a[2] = 9;
	assert_int_equal(iscsi_ahs_parse(a, 28, &ahs), -EPROTO);
	a[2] = ISCSI_AHS_BIDI_READ_LEN; /* length 17 for a bidi AHS */
	assert_int_equal(iscsi_ahs_parse(a, 28, &ahs), -EPROTO);
	memset(a, 0, sizeof(a));
	put_be16(a, 5);
	a[2] = ISCSI_AHS_BIDI_READ_LEN;
	put_be16(a + 8, 5);
	a[10] = ISCSI_AHS_BIDI_READ_LEN;
	assert_int_equal(iscsi_ahs_parse(a, 16, &ahs), -EPROTO);
	assert_int_equal(iscsi_ahs_parse(a, 8, &ahs), 0);
	assert_int_equal(iscsi_ahs_parse(a, 0, &ahs), 0);
	assert_false(iscsi_ahs_parse(a, 0, &ahs) || ahs.bidi);
}

static void test_pad_and_sn(void **state)
{
	(void)state;
	assert_int_equal(iscsi_pad4(0), 0);
	assert_int_equal(iscsi_pad4(1), 3);
	assert_int_equal(iscsi_pad4(2), 2);
	assert_int_equal(iscsi_pad4(3), 1);
	assert_int_equal(iscsi_pad4(4), 0);
	/* RFC 1982 serial arithmetic across the wrap */
	assert_int_equal(iscsi_sn_cmp(0xffffffffu, 0), -1);
	assert_int_equal(iscsi_sn_cmp(0, 0xffffffffu), 1);
	assert_int_equal(iscsi_sn_cmp(5, 5), 0);
	assert_string_equal(iscsi_opcode_name(ISCSI_OP_R2T), "R2T");
	assert_string_equal(iscsi_opcode_name(0x3a), "unknown");
}

/* The PDUs the target sends on its own: a NOP-In ping, a logout request. */
static void test_target_pdus(void **state)
{
	static const uint8_t lun[8] = { 0, 3, 0, 0, 0, 0, 0, 0 };
	uint8_t b[ISCSI_BHS_LEN];
	unsigned int i;

	(void)state;
	memset(b, 0xaa, sizeof(b));
	iscsi_nop_in_ping_init(b, 0x1234, lun);
	assert_int_equal(b[0], 0x20);
	assert_int_equal(b[1], 0x80);
	assert_int_equal(bhs_dsl(b), 0);
	assert_memory_equal(b + 8, lun, 8);
	assert_int_equal(get_be32(b + 16), 0xffffffffu);
	assert_int_equal(get_be32(b + 20), 0x1234);
	for (i = 24; i < ISCSI_BHS_LEN; i++)
		assert_int_equal(b[i], 0);

	memset(b, 0xaa, sizeof(b));
	iscsi_async_logout_init(b, 2);
	assert_int_equal(b[0], 0x32);
	assert_int_equal(b[1], 0x80);
	assert_int_equal(bhs_dsl(b), 0);
	assert_int_equal(get_be32(b + 16), 0xffffffffu);
	assert_int_equal(b[36], 1);     /* AsyncEvent: logout requested */
	assert_int_equal(b[37], 0);     /* AsyncVCode */
	assert_int_equal(get_be16(b + 38), 0);
	assert_int_equal(get_be16(b + 40), 0);
	assert_int_equal(get_be16(b + 42), 2); /* Parameter3: seconds */
	assert_int_equal(get_be64(b + 8), 0);
	assert_string_equal(iscsi_opcode_name(b[0]), "Asynchronous Message");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc3720_vectors),
		cmocka_unit_test(test_digest_iov_continues),
		cmocka_unit_test(test_pdu_check),
		cmocka_unit_test(test_ahs),
		cmocka_unit_test(test_pad_and_sn),
		cmocka_unit_test(test_target_pdus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
