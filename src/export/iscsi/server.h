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

/* A live session (one connection), for reinstatement and TSIH lookup. */
struct iscsi_session {
	struct iscsi_session *next;
	uint16_t tsih;
	int node;             /* -1: discovery */
	char iname[ISCSI_NAME_MAX + 1];
	uint8_t isid[6];
	struct iscsi_conn *conn;
	int fd;               /* its connection's socket */
	bool ending;          /* being ended by a login (srv->lock) */
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
int iscsi_srv_session_add(struct blk_iscsi_server *srv, struct iscsi_conn *c,
			  struct iscsi_session *s, unsigned int *nexus);
void iscsi_srv_session_del(struct blk_iscsi_server *srv,
			   struct iscsi_session *s, unsigned int nexus);
/* SendTargets: a TargetAddress per portal ("ADDR:PORT,1"), @local (the
 * connection's own address, "ADDR:PORT") first */
void iscsi_srv_target_addresses(const struct blk_iscsi_server *srv,
				const char *local, struct iscsi_text_out *out);

/* conn.c: a connection thread's body; frees @fd's connection */
struct iscsi_conn *iscsi_conn_new(struct blk_iscsi_server *srv, int fd,
				  unsigned long id);
void *iscsi_conn_thread(void *arg);
void iscsi_conn_kill(struct iscsi_conn *c, const char *why); /* another thread: end it */

#endif /* BLKSTACK_ISCSI_SERVER_H */
