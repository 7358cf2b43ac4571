/* SPDX-License-Identifier: MIT */
/*
 * The iscsi LLD (blkstack/scsi_host.h): the SCSI midlayer's commands to a
 * remote iSCSI target over TCP (RFC 7143, ErrorRecoveryLevel 0), the role
 * Linux's iscsi_tcp plays under its midlayer.  The PDU encoding, digests,
 * key negotiation and login are the ones blkstack's target uses
 * (src/export/iscsi/, library blkiscsiproto).  Design, what is and is not
 * implemented: docs/iscsi-initiator.md.
 *
 * One TCP connection per hardware queue, each a session of its own with
 * its own ISID (and one for the probe at attach), driven only by the
 * queue's thread: no host lock, no state shared between queues.
 */
#ifndef BLKSTACK_SCSI_ISCSI_H
#define BLKSTACK_SCSI_ISCSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct scsi_host_template;

#define SCSI_ISCSI_NAME_MAX 223 /* RFC 7143 4.2.7.1: iSCSI names, bytes */
#define SCSI_ISCSI_HOST_MAX 255 /* a host name or address, bytes */
#define SCSI_ISCSI_LUN_MAX 16383 /* single-level LUNs (flat space) */
#define SCSI_ISCSI_DEFAULT_INITIATOR "iqn.2026-12.org.blkstack:initiator"

/**
 * struct scsi_iscsi_target - where a target is: iscsi://HOST[:PORT]/IQN/LUN.
 * @host: a name or address (IPv6 without its brackets).
 * @port: TCP port (3260 when the URL names none).
 * @iqn: the target's name (TargetName).
 * @lun: the logical unit the disk is, 0..SCSI_ISCSI_LUN_MAX.
 */
struct scsi_iscsi_target {
	char host[SCSI_ISCSI_HOST_MAX + 1];
	uint16_t port;
	char iqn[SCSI_ISCSI_NAME_MAX + 1];
	uint64_t lun;
};

/**
 * scsi_iscsi_parse_url() - read iscsi://HOST[:PORT]/IQN/LUN (libiscsi's
 * form; HOST may be [IPv6]).  Without the IQN, iscsi://HOST[:PORT][/]
 * (LUN 0) or iscsi://HOST[:PORT]//LUN, @t->iqn is "": scsi_iscsi_create()
 * then takes the target discovery (SendTargets) offers.
 * @url: the text.
 * @t: filled in on success.
 * @err, @errlen: on failure, a message that names the field at fault
 *	("target=...: PORT: ...").
 * Return: 0; -EINVAL.
 * Context: any.
 */
int scsi_iscsi_parse_url(const char *url, struct scsi_iscsi_target *t,
			 char *err, size_t errlen);

/**
 * struct scsi_iscsi_config - an iscsi host.
 * @target: the target and its LUN; every command of the disk goes to
 *	that LUN (the midlayer's LUN 0 is mapped to it).
 * @initiator_name: InitiatorName (NULL or "": SCSI_ISCSI_DEFAULT_INITIATOR).
 * @header_digest, @data_digest: ask for CRC32C (RFC 7143 13.1); asked
 *	for, it is required: a target that refuses fails the login.
 * @max_recv_dsl: our MaxRecvDataSegmentLength, bytes, 512..16777215: the
 *	largest Data-In or other data segment we take (declared).
 * @first_burst_length, @max_burst_length: bytes, 512..16777215, offered
 *	(the result is the smaller of ours and the target's).
 * @immediate_data: offer ImmediateData=Yes (AND: both must say Yes).
 * @initial_r2t: offer InitialR2T=Yes (OR: either may ask for it).
 * @max_outstanding_r2t: offered, 1..65535 (min).
 * @login_timeout_ms: a connection and its login, at most (0: 15000).
 * @reconnect_timeout_ms: how long commands wait for a connection lost to
 *	come back (a new login, reinstating the session) before they fail
 *	(0: 15000).
 * @tmf_timeout_ms: the wait for a Task Management Function Response
 *	(ABORT TASK, LOGICAL UNIT RESET, TARGET WARM RESET) before error
 *	handling goes on to the next step (0: 10000).
 * @noop_interval_ms: keep-alive (RFC 7143 11.18): a connection that has
 *	received nothing for this long gets a NOP-Out ping of ours (ITT
 *	valid, TTT 0xffffffff, immediate); 0: no pings.  Checked when the
 *	queue is polled (its thread, or blk_dev_poll_idle() for a queue no
 *	consumer holds) and bounding the queue's wait op.
 *	scsi_iscsi_config_default(): 5000.
 * @noop_timeout_ms: after a ping, nothing received for this long: the
 *	connection is dead and handled as one the target closed (commands
 *	at the target sent again after a new login that reinstates the
 *	session, 6.3.5).  0: 5000.
 * @quiet: no log lines on stderr (attach, connection lost and back,
 *	close).
 * @chap_file: CHAP credentials (RFC 7143 12.1.3), a file in the format
 *	of the target's secrets (docs/iscsi.md, "CHAP"): one "initiator
 *	NAME SECRET" line, what we answer with, and for mutual CHAP one
 *	"target NAME SECRET" line, what the target must answer; refused
 *	when its group or others may read or write it.  Read at create.
 *	NULL: the environment, BLKSTACK_ISCSI_CHAP_USER and
 *	BLKSTACK_ISCSI_CHAP_SECRET, for mutual CHAP also
 *	BLKSTACK_ISCSI_CHAP_TARGET_USER and BLKSTACK_ISCSI_CHAP_TARGET_SECRET;
 *	none of them: AuthMethod=None only.  With credentials the login
 *	offers AuthMethod=CHAP,None (None accepted unless mutual CHAP was
 *	asked for).
 */
struct scsi_iscsi_config {
	struct scsi_iscsi_target target;
	const char *initiator_name;
	bool header_digest;
	bool data_digest;
	uint32_t max_recv_dsl;
	uint32_t first_burst_length;
	uint32_t max_burst_length;
	bool immediate_data;
	bool initial_r2t;
	uint32_t max_outstanding_r2t;
	uint32_t login_timeout_ms;
	uint32_t reconnect_timeout_ms;
	uint32_t tmf_timeout_ms;
	uint32_t noop_interval_ms;
	uint32_t noop_timeout_ms;
	bool quiet;
	const char *chap_file;
};

/**
 * scsi_iscsi_config_default() - the defaults: no digests, 256 KiB
 * MaxRecvDataSegmentLength and FirstBurstLength, 1 MiB MaxBurstLength,
 * ImmediateData=Yes, InitialR2T=No, MaxOutstandingR2T 8, the default
 * InitiatorName, a NOP-Out ping after 5 s without traffic and 5 s for
 * its answer; @c->target is zeroed.
 */
void scsi_iscsi_config_default(struct scsi_iscsi_config *c);

#define SCSI_ISCSI_DISCOVER_ADDRESSES 4

/**
 * struct scsi_iscsi_discovered - one target of a SendTargets answer.
 * @name: its TargetName.
 * @address: its TargetAddress values, "HOST:PORT,TPGT" as the target
 *	wrote them ([IPv6] in brackets), the first @nr_addresses (at most
 *	SCSI_ISCSI_DISCOVER_ADDRESSES; more are dropped).
 */
struct scsi_iscsi_discovered {
	char name[SCSI_ISCSI_NAME_MAX + 1];
	char address[SCSI_ISCSI_DISCOVER_ADDRESSES][SCSI_ISCSI_HOST_MAX + 16];
	unsigned int nr_addresses;
};

/**
 * scsi_iscsi_discover() - a discovery session (RFC 7143 4.3): log in to
 * @cfg->target's portal with SessionType=Discovery (CHAP as @cfg says,
 * no digests), ask SendTargets=All, log out.  @cfg->target.iqn and .lun
 * are not used.
 * @out, @max: the targets offered, in the target's order, up to @max.
 * @err: a message on failure (the address, the connection's error, the
 *	login's status).
 * Return: the number of targets offered (0 or more; more than @max
 * when some did not fit); -errno as scsi_iscsi_create().
 * Context: any thread; blocks up to @cfg->login_timeout_ms for the
 * login, and as long again for the answer.
 */
int scsi_iscsi_discover(const struct scsi_iscsi_config *cfg,
			struct scsi_iscsi_discovered *out, unsigned int max,
			char *err, size_t errlen);

/**
 * scsi_iscsi_create() - an iscsi host.  It connects and logs in at once
 * (the session the probe at attach uses), so that an unreachable target
 * or a refused login is reported here, with the target's words.  Without
 * @cfg->target.iqn, a discovery session first (scsi_iscsi_discover()):
 * the one target offered is used; none or several fail with -ENXIO and a
 * message that lists them.
 * @hostt, @hostdata: set on success, for struct blk_scsi_config.
 * @err: a message on failure: the field of @cfg at fault, or the address,
 *	the connection's error, or the login's status ("target not found
 *	(0x0203)") or protocol failure.
 * Return: 0; -EINVAL (@cfg, or the CHAP credentials malformed); -ENOENT
 * (the host name does not resolve); -ECONNREFUSED, -ETIMEDOUT,
 * -EHOSTUNREACH... (the connection); -EACCES (the login was refused:
 * class 2 status, or CHAP failed on our side: the target's mutual CHAP
 * answer wrong, CHAP_A not 5...; or @cfg->chap_file readable by group
 * or others); -EPROTO (the login broke the protocol); -ENXIO (discovery
 * offered no target or several); -ENOMEM.
 * Context: any thread; blocks up to @cfg->login_timeout_ms.
 */
int scsi_iscsi_create(const struct scsi_iscsi_config *cfg,
		      const struct scsi_host_template **hostt,
		      void **hostdata, char *err, size_t errlen);

/**
 * struct scsi_iscsi_stats - an iscsi host's counters, summed over its
 * queues (uint64_t only).
 * @logins: logins that succeeded (the probe's and each queue's, and
 *	those after a connection was lost); @login_failures: that failed.
 * @connection_losses: connections dropped (by the target, a protocol or
 *	digest error, or a host reset).
 * @commands: SCSI Command PDUs sent; @immediate_bytes: data they carried.
 * @unsolicited_pdus: Data-Out PDUs sent unsolicited; @r2ts: R2Ts taken;
 *	@solicited_pdus: Data-Out PDUs sent for them.
 * @data_in_pdus: Data-In PDUs taken; @status_in_data_in: commands whose
 *	status came in the last Data-In.
 * @window_waits: commands that waited for the CmdSN window (MaxCmdSN).
 * @nop_in_pings: NOP-In pings answered with a NOP-Out.
 * @nop_out_pings: NOP-Out pings of ours sent (keep-alive);
 *	@ping_timeouts: connections declared dead because nothing came
 *	back within noop_timeout_ms of one.
 * @async_events: Asynchronous Messages taken.
 * @rejects: Reject PDUs taken.
 * @aborts, @lun_resets, @target_resets: Task Management Functions sent.
 * @send_calls: sendmsg() calls that sent something; @pdus_sent: PDUs.
 */
struct scsi_iscsi_stats {
	uint64_t logins, login_failures;
	uint64_t connection_losses;
	uint64_t commands, immediate_bytes;
	uint64_t unsolicited_pdus, r2ts, solicited_pdus;
	uint64_t data_in_pdus, status_in_data_in;
	uint64_t window_waits;
	uint64_t nop_in_pings;
	uint64_t nop_out_pings, ping_timeouts;
	uint64_t async_events;
	uint64_t rejects;
	uint64_t aborts, lun_resets, target_resets;
	uint64_t send_calls, pdus_sent;
};

/**
 * scsi_iscsi_get_stats() - @hostdata's counters (from scsi_iscsi_create()).
 * Context: any thread, the queues quiet (the per-queue counters are
 * plain): after the I/O, before the disk is closed.
 */
void scsi_iscsi_get_stats(void *hostdata, struct scsi_iscsi_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_SCSI_ISCSI_H */
