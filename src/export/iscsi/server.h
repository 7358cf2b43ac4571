/* SPDX-License-Identifier: MIT */
/*
 * iSCSI target internals shared by server.c (sockets, targets, sessions)
 * and conn.c (one connection: login, full feature phase).
 */
#ifndef BLKSTACK_ISCSI_SERVER_H
#define BLKSTACK_ISCSI_SERVER_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "blkstack/lock.h"
#include "blkstack/iscsi.h"
#include "blkstack/scsi_tgt.h"
#include "keys.h"
#include "login.h"

struct iscsi_conn;

/* An I_T nexus index of a target: the initiator port it stands for. */
struct iscsi_nexus_slot {
	char iname[ISCSI_NAME_MAX + 1];
	uint8_t isid[6];
	bool named;           /* ever given to a session */
	unsigned int active;  /* sessions using it now */
	uint64_t last_used;   /* a login counter value, for reuse */
};

struct iscsi_node {
	struct blk_iscsi_target cfg;
	struct blk_dev **luns;        /* LUN 0, 1, ...: nr_luns */
	unsigned int nr_luns;
	char name[ISCSI_NAME_MAX + 1];
	struct scsi_tgt *tgt;
	struct iscsi_nexus_slot nexus[SCSI_TGT_MAX_NEXUS]; /* srv->lock */
};

/*
 * Our MaxConnections (RFC 7143 13.2; the result is the minimum of both
 * offers): the most connections one session may have at once.  Each
 * connection is a thread with its own target queue and commands, so this
 * bounds what one session holds: ISCSI_SESSION_MAX_CONNS x (CmdSN window
 * + 16 immediate commands), on top of the server's --max-connections.
 */
#define ISCSI_SESSION_MAX_CONNS 8

/*
 * A live session: its connections (several where MaxConnections > 1,
 * RFC 7143 4.2.1), its I_T nexus (one per session: every connection's
 * commands carry the same nexus index) and its CmdSN state, which the
 * connections' threads share (4.2.2.1: ExpCmdSN and MaxCmdSN are the
 * session's).
 *
 * Locking: @next, @conns, @cids, @fds, @gone, @ending: srv->lock;
 * @nr_conns too, written with atomic stores (conn.c reads it without the
 * lock: whether another connection may bring a CmdSN).  @exp_cmdsn and
 * @nr_tasks: atomics, read and written by every connection's thread
 * (conn.c: one compare-and-swap per non-immediate request, one add and
 * one subtract per command).  The rest is written once, by the leading
 * connection's login, before the session is on srv->sessions.  The
 * session is freed by the last connection that leaves it
 * (iscsi_srv_session_leave()).
 */
struct iscsi_session {
	struct iscsi_session *next;
	uint16_t tsih;
	int node;             /* -1: discovery */
	char iname[ISCSI_NAME_MAX + 1];
	uint8_t isid[6];
	unsigned int nexus;   /* the target's I_T nexus index */
	struct iscsi_params p; /* the leading login's session-wide values */
	struct iscsi_conn *conns[ISCSI_SESSION_MAX_CONNS];
	uint16_t cids[ISCSI_SESSION_MAX_CONNS];
	int fds[ISCSI_SESSION_MAX_CONNS];
	bool gone[ISCSI_SESSION_MAX_CONNS]; /* asked to end: no longer counts */
	unsigned int nr_conns;
	bool ending;          /* being ended (reinstatement, Logout) */
	uint32_t exp_cmdsn;   /* atomic: the session's ExpCmdSN */
	uint32_t nr_tasks;    /* atomic: non-immediate commands its connections
			       * hold (the CmdSN window's) */
};

/* A listening socket: its address as getsockname() has it. */
struct iscsi_portal {
	int fd;
	unsigned int port;
	char host[INET6_ADDRSTRLEN + 2]; /* "1.2.3.4", "[::1]" */
	bool wildcard;                   /* 0.0.0.0 or [::] */
};

struct blk_iscsi_server {
	struct blk_iscsi_server_config cfg;
	struct iscsi_node *nodes;
	struct iscsi_portal portals[BLK_ISCSI_MAX_PORTALS];
	unsigned int nr_portals;
	int *stop;
	struct blk_mutex lock;
	pthread_cond_t cond;
	unsigned int active;          /* connection threads */
	unsigned long next_id;
	uint16_t next_tsih;
	uint64_t logins;
	struct iscsi_session *sessions;
	struct iscsi_params ours;     /* what the target offers/accepts */
	struct iscsi_login_env env;
	struct iscsi_chap *chap;
	FILE *log;
};

static inline int iscsi_stop_flag(const struct blk_iscsi_server *srv)
{
	return __atomic_load_n(srv->stop, __ATOMIC_ACQUIRE);
}

/* server.c, for conn.c */
bool iscsi_srv_allowed(void *opaque, unsigned int i, const char *iname);
uint16_t iscsi_srv_alloc_tsih(void *opaque);

/**
 * iscsi_srv_session_add() - a new session's leading connection @c is in:
 * ends first the sessions it reinstates (same initiator name and ISID on
 * the same target: every connection of theirs, RFC 6.3.5), and those of
 * the target whose only connection's initiator hung up; waits (at most
 * 5 s, and no longer once the server stops) for them to be gone; gives @s
 * a nexus index (normal sessions) and puts it on the session list with @c
 * its one connection.
 * @s: allocated by the caller, tsih/node/iname/isid/p/exp_cmdsn set; the
 *	session list owns it from here on success.
 * Return: 0; -EBUSY: no nexus index left; -ENOMEM; -ESHUTDOWN: the server
 * is stopping (@s not added).
 * Context: @c's thread; takes srv->lock.
 */
int iscsi_srv_session_add(struct blk_iscsi_server *srv, struct iscsi_conn *c,
			  struct iscsi_session *s);

/**
 * iscsi_srv_session_check() - may a login with TSIH @tsih and @isid, from
 * @iname to target @target (-1: discovery), add connection @cid to a live
 * session (6.3.1)?  A connection of the session with the same CID does
 * not count (it would be reinstated).  A first look during the login (the keys of its first
 * request); iscsi_srv_session_join() decides.
 * @exp_cmdsn: the session's ExpCmdSN, for the login's responses.
 * Return: 0 or a login status (enum iscsi_login_status).
 * Context: any connection's thread; takes srv->lock.
 */
uint16_t iscsi_srv_session_check(void *opaque, uint16_t tsih,
				 const uint8_t *isid, const char *iname,
				 int target, uint16_t cid, uint32_t *exp_cmdsn);

/**
 * iscsi_srv_session_join() - add @c with connection ID @cid to the live
 * session @tsih (@isid, @iname, @target as for the check): at most its
 * negotiated MaxConnections at once; a connection of the session with
 * the same CID is ended first (connection reinstatement, 6.3.4: its
 * tasks end as at a lost connection) and no longer counts.
 * @out: the session, on success.
 * Return: 0 or a login status (0206 too many connections, 020a no such
 * session, 0208 another initiator, target or session type).
 * Context: @c's thread; takes srv->lock.
 */
uint16_t iscsi_srv_session_join(struct blk_iscsi_server *srv,
				struct iscsi_conn *c, uint16_t tsih,
				const uint8_t *isid, const char *iname,
				int target, uint16_t cid,
				struct iscsi_session **out);

/**
 * iscsi_srv_session_leave() - @c leaves its session @s.
 * Return: true when it was the last connection: the caller does what ends
 * the I_T nexus (scsi_tgt_nexus_loss()) and then iscsi_srv_session_del();
 * false: the session lives on (do not touch @s again).
 * Context: @c's thread; takes srv->lock.
 */
bool iscsi_srv_session_leave(struct blk_iscsi_server *srv,
			     struct iscsi_session *s, struct iscsi_conn *c);

/**
 * iscsi_srv_session_del() - take the session @s, whose last connection has
 * left, off the list, release its nexus index and free it.
 * Context: the last connection's thread; takes srv->lock.
 */
void iscsi_srv_session_del(struct blk_iscsi_server *srv,
			   struct iscsi_session *s);

/**
 * iscsi_srv_session_end_others() - end the other connections of @c's
 * session (@cid: the one with that CID only; -1: all of them), as at a
 * lost connection, with @why in their logout lines, and wait for them to
 * be gone (at most @wait_ms).
 * Return: how many were asked to end (0: no such CID).
 * Context: @c's thread; takes srv->lock.
 */
unsigned int iscsi_srv_session_end_others(struct blk_iscsi_server *srv,
					  struct iscsi_session *s,
					  struct iscsi_conn *c, int cid,
					  const char *why, unsigned int wait_ms);

/* SendTargets: a TargetAddress per portal ("ADDR:PORT,1"), @local (the
 * connection's own address, "ADDR:PORT") first */
void iscsi_srv_target_addresses(const struct blk_iscsi_server *srv,
				const char *local, struct iscsi_text_out *out);

/* conn.c: a connection thread's body; frees @fd's connection */
struct iscsi_conn *iscsi_conn_new(struct blk_iscsi_server *srv, int fd,
				  unsigned long id);
int iscsi_conn_fd(const struct iscsi_conn *c);
void *iscsi_conn_thread(void *arg);
void iscsi_conn_kill(struct iscsi_conn *c, const char *why); /* another thread: end it */

#endif /* BLKSTACK_ISCSI_SERVER_H */
