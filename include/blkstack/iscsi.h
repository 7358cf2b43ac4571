/* SPDX-License-Identifier: MIT */
/*
 * blkstack iSCSI target: serve blk_devs to iSCSI initiators over TCP
 * (RFC 7143, ErrorRecoveryLevel 0, one connection per session), each
 * target one logical unit (LUN 0) run by the SCSI target core
 * (blkstack/scsi_tgt.h).  docs/iscsi.md says what is implemented.
 *
 * Threads: blk_iscsi_server_run() accepts on the calling thread; each
 * connection runs on a thread of its own, which owns a scsi_tgt queue
 * (scsi_tgt_queue_attach()) for its target: commands are submitted and
 * completed on that thread.
 *
 * This header compiles on its own and from C++.
 */
#ifndef BLKSTACK_ISCSI_H
#define BLKSTACK_ISCSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk.h"

#ifdef __cplusplus
extern "C" {
#endif

struct blk_metrics_export;

#define BLK_ISCSI_DEFAULT_PORT 3260
#define BLK_ISCSI_NAME_PREFIX "iqn.2026-12.org.blkstack:"
#define BLK_ISCSI_MAX_TARGETS 64
#define BLK_ISCSI_MAX_PORTALS 8

/*
 * enum blk_iscsi_thin - a target's logical block provisioning (SBC-3
 * 4.7), what READ CAPACITY (16) LBPME and VPD 0xb2 say.
 * @BLK_ISCSI_THIN_AUTO: as the device can (the target core's lbpu,
 *	lbpws, lbpws10 and lbprz on auto): UNMAP where it discards, WRITE
 *	SAME with UNMAP where it discards or writes zeroes; LBPME when either
 *	(ram, null and uring: thin provisioned; nvme and scsi as their
 *	controller or disk says).
 * @BLK_ISCSI_THIN_OFF: fully provisioned, whatever the device can: LBPME
 *	0, UNMAP and WRITE SAME with UNMAP refused, GET LBA STATUS reports
 *	every block mapped.
 * @BLK_ISCSI_THIN_ON: thin provisioned: UNMAP and WRITE SAME with UNMAP
 *	taken; a device that cannot discard is refused at create.
 * LBPRZ (unmapped blocks read zeros) is set where the device keeps data,
 * except when OFF.
 */
enum blk_iscsi_thin {
	BLK_ISCSI_THIN_AUTO = 0,
	BLK_ISCSI_THIN_OFF = 1,
	BLK_ISCSI_THIN_ON = 2,
};

/**
 * struct blk_iscsi_target - one target of a server.
 * @name: its iSCSI name (RFC 7143 4.2.7), at most 223 bytes.
 * @dev: LUN 0's device; the caller's, open for the server's lifetime.
 * @more_luns, @nr_more_luns: the devices of LUN 1, 2, ... (at most
 *	SCSI_TGT_MAX_LUNS - 1; the caller's too).
 * @read_only: the unit is write protected (WRITE: DATA PROTECT).
 * @removable: the units are removable media (RMB in INQUIRY): PREVENT
 *	ALLOW MEDIUM REMOVAL holds the medium, START STOP UNIT's LOEJ ejects
 *	and loads it (struct scsi_tgt_config's @removable).
 * @acl: the initiator names that may log in to it, comma-separated
 *	(NULL or "": any); others get login status 0202 (authorization
 *	failure, RFC 7143 11.13.5) and do not see it in SendTargets.
 * @thin: enum blk_iscsi_thin, for every LUN of the target.
 * @metrics: where each LUN's commands are counted (blkstack/metrics.h):
 *	1 + @nr_more_luns entries, LUN 0 first (the caller's), or NULL: not
 *	counted.  A connection opens counters for every LUN of its target
 *	after login; commands to a LUN the target lacks count under LUN 0.
 *	A command is recorded when its response (the last Data-In or the
 *	SCSI Response) has been handed to the socket, or when task
 *	management or the connection's end drops it (an error); latency
 *	from the recv() that brought its SCSI Command PDU (the clock is read
 *	once per recv() and once per batch sent, not per command).
 */
struct blk_iscsi_target {
	const char *name;
	struct blk_dev *dev;
	struct blk_dev *const *more_luns;
	unsigned int nr_more_luns;
	bool read_only;
	bool removable;
	const char *acl;
	int thin;
	struct blk_metrics_export *const *metrics;
};

/**
 * struct blk_iscsi_server_config - a server.
 * @targets, @nr_targets: 1..BLK_ISCSI_MAX_TARGETS targets (copied
 *	pointers: keep the names and devices alive).
 * @tcp_addr: "HOST:PORT" (IPv4 dotted, IPv6 in brackets, or a name;
 *	":PORT" missing: 3260; port 0 picks a free one): the first portal.
 * @more_tcp_addrs, @nr_more_tcp_addrs: more portals, the same form (at
 *	most BLK_ISCSI_MAX_PORTALS - 1; the caller's strings): every target
 *	is served on each, all in portal group 1, and SendTargets names them
 *	all (the one the initiator asked on first), for multipath initiators.
 * @max_connections: connections at once (0: 64); more are refused at
 *	once, with a log line.
 * @max_cmds: commands a connection runs at once, the CmdSN window
 *	(MaxCmdSN - ExpCmdSN + 1), 1..256 (0: 32).
 * @stop_deadline_ms: after the stop, longest wait for connections'
 *	commands in flight (0: 30000).
 * @log: FILE * for the one line per login and logout (NULL: stderr).
 * @chap_secrets: a CHAP secrets file (docs/iscsi.md, "CHAP"), or NULL.
 *	With it every login must authenticate with CHAP (RFC 7143 12.1.3);
 *	mutual CHAP when it names the target's own secret.
 * @nopin_ms: keep-alive (RFC 7143 11.19): a connection in full feature
 *	phase that has received nothing for this long gets a NOP-In asking
 *	for a NOP-Out; one that does not answer within as long again is
 *	dropped as dead (0: no keep-alive; blkstack serve's default is
 *	15 s).
 */
struct blk_iscsi_server_config {
	const struct blk_iscsi_target *targets;
	unsigned int nr_targets;
	const char *tcp_addr;
	const char *const *more_tcp_addrs;
	unsigned int nr_more_tcp_addrs;
	unsigned int max_connections;
	unsigned int max_cmds;
	unsigned int stop_deadline_ms;
	void *log;
	const char *chap_secrets;
	unsigned int nopin_ms;
};

struct blk_iscsi_server;

/**
 * blk_iscsi_server_create() - make the targets (a scsi_tgt per target)
 * and open the listening socket.
 * @cfg: configuration, copied.
 * @srv: set on success.
 * @err, @errlen: a message naming the field or address on failure.
 * Return: 0; -EINVAL (bad configuration or address, a name over 223
 * bytes, two targets of one name, a bad secrets file line); -EACCES (the
 * secrets file cannot be read, or group or others may read it); a
 * socket/bind/listen -errno
 * (-EADDRINUSE...); -ENOMEM; scsi_tgt_create()'s -errno.
 * Context: any thread.
 */
int blk_iscsi_server_create(const struct blk_iscsi_server_config *cfg,
			    struct blk_iscsi_server **srv, char *err,
			    size_t errlen);

/**
 * blk_iscsi_server_port() - the TCP port listened on (useful with port 0):
 * the first portal's.
 * Context: any thread.
 */
unsigned int blk_iscsi_server_port(const struct blk_iscsi_server *srv);

/**
 * blk_iscsi_server_portal_port() - the TCP port of portal @i (0: @tcp_addr,
 * 1..: @more_tcp_addrs); 0 when there is no such portal.
 * Context: any thread.
 */
unsigned int blk_iscsi_server_portal_port(const struct blk_iscsi_server *srv,
					  unsigned int i);

/**
 * blk_iscsi_server_run() - accept and serve until *@stop becomes nonzero
 * (read with an atomic load at least every 100 ms; a signal handler may
 * set it).
 *
 * On stop: no new connections; connections in login are closed;
 * connections in full feature phase take no new command, finish the ones
 * in flight, send their responses, ask the initiator to log out (an
 * Asynchronous Message, RFC 7143 11.9.1) and wait a little for it (at
 * most 2 s, and a quarter of the stop deadline), then close; then every
 * target's device is flushed.
 * Return: 0; -ETIMEDOUT when commands were still in flight at the stop
 * deadline (the devices must not be closed: exit without flushing);
 * -errno from poll() other than EINTR.
 * Context: one thread; blocks.
 */
int blk_iscsi_server_run(struct blk_iscsi_server *srv, int *stop);

/**
 * blk_iscsi_server_destroy() - close the socket, free the targets (not
 * their devices).  @srv: NULL is a no-op.
 * Context: after blk_iscsi_server_run() returned (or instead of it).
 */
void blk_iscsi_server_destroy(struct blk_iscsi_server *srv);

#ifdef __cplusplus
}
#endif

#endif /* BLKSTACK_ISCSI_H */
