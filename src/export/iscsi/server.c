// SPDX-License-Identifier: MIT
/*
 * iSCSI target server: the listening socket, one thread per connection
 * (conn.c), the targets (a SCSI target core each) and the session list
 * - see blkstack/iscsi.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "blkstack/lock.h"
#include "server.h"
#include "../export.h"

#define IDLE_WAIT_MS 100
#define ISCSI_MAX_XFER (32u << 20) /* as conn.c: a command's buffer */

/* What the target offers and accepts (docs/iscsi.md, "Negotiation"). */
static void ours_init(struct iscsi_params *o)
{
	iscsi_params_default(o);
	o->header_digest = true;     /* CRC32C accepted when offered */
	o->data_digest = true;
	o->max_connections = ISCSI_SESSION_MAX_CONNS;
	o->initial_r2t = false;      /* unsolicited data welcome */
	o->immediate_data = true;
	o->max_recv_dsl = 262144;
	o->max_burst_length = 1048576;
	o->first_burst_length = 262144;
	o->default_time2wait = 0;    /* max(): the initiator's */
	o->default_time2retain = 0;  /* min(): nothing to retain at ERL 0 */
	o->max_outstanding_r2t = 8;
	o->data_pdu_in_order = true;
	o->data_sequence_in_order = true;
	o->error_recovery_level = 0;
	o->protocol_level = 1;
}

static const char *env_target_name(void *opaque, unsigned int i)
{
	struct blk_iscsi_server *srv = opaque;

	return srv->nodes[i].name;
}

/* The live session @tsih (not being ended), under srv->lock; NULL: none. */
static struct iscsi_session *session_find(struct blk_iscsi_server *srv,
					  uint16_t tsih)
{
	struct iscsi_session *s;

	for (s = srv->sessions; s; s = s->next)
		if (s->tsih == tsih && !s->ending && s->nr_conns)
			return s;
	return NULL;
}

/* Connections of @s that count (not asked to end), under srv->lock. */
static unsigned int session_live_conns(const struct iscsi_session *s)
{
	unsigned int i, n = 0;

	for (i = 0; i < s->nr_conns; i++)
		n += !s->gone[i];
	return n;
}

/* May this login join session @s?  Under srv->lock; 0 or a login status. */
static uint16_t join_status(const struct iscsi_session *s, const uint8_t *isid,
			    const char *iname, int target)
{
	if (!s || memcmp(s->isid, isid, 6))
		return ISCSI_LOGIN_NO_SESSION; /* TSIH and ISID name a session */
	if (strcmp(s->iname, iname) || s->node != target)
		return ISCSI_LOGIN_CANT_INCLUDE;
	if (s->node < 0)
		return ISCSI_LOGIN_TOO_MANY_CONNECTIONS; /* discovery: one */
	return 0;
}

uint16_t iscsi_srv_session_check(void *opaque, uint16_t tsih,
				 const uint8_t *isid, const char *iname,
				 int target, uint16_t cid, uint32_t *exp_cmdsn)
{
	struct blk_iscsi_server *srv = opaque;
	struct iscsi_session *s;
	uint16_t st;

	blk_mutex_lock(&srv->lock);
	s = session_find(srv, tsih);
	st = join_status(s, isid, iname, target);
	if (!st) {
		unsigned int i, n = session_live_conns(s);

		for (i = 0; i < s->nr_conns; i++)
			n -= s->cids[i] == cid && !s->gone[i];
		if (n >= s->p.max_connections)
			st = ISCSI_LOGIN_TOO_MANY_CONNECTIONS;
	}
	if (!st)
		*exp_cmdsn = __atomic_load_n(&s->exp_cmdsn, __ATOMIC_ACQUIRE);
	blk_mutex_unlock(&srv->lock);
	return st;
}

uint16_t iscsi_srv_session_join(struct blk_iscsi_server *srv,
				struct iscsi_conn *c, uint16_t tsih,
				const uint8_t *isid, const char *iname,
				int target, uint16_t cid,
				struct iscsi_session **out)
{
	struct iscsi_session *s;
	unsigned int i;
	uint16_t st;

	blk_mutex_lock(&srv->lock);
	s = session_find(srv, tsih);
	st = join_status(s, isid, iname, target);
	if (!st) {
		/* 6.3.4 connection reinstatement: the old CID's connection
		 * ends (ErrorRecoveryLevel 0: its tasks with it) */
		for (i = 0; i < s->nr_conns; i++)
			if (s->cids[i] == cid && !s->gone[i]) {
				s->gone[i] = true;
				fprintf(srv->log, "iscsi: session tsih %u: connection CID %u reinstated by a new login\n",
					s->tsih, cid);
				iscsi_conn_kill(s->conns[i], "connection reinstated by a new login (same CID)");
			}
		if (session_live_conns(s) >= s->p.max_connections ||
		    s->nr_conns >= ISCSI_SESSION_MAX_CONNS)
			st = ISCSI_LOGIN_TOO_MANY_CONNECTIONS;
	}
	if (!st) {
		s->conns[s->nr_conns] = c;
		s->cids[s->nr_conns] = cid;
		s->fds[s->nr_conns] = iscsi_conn_fd(c);
		s->gone[s->nr_conns] = false;
		__atomic_store_n(&s->nr_conns, s->nr_conns + 1, __ATOMIC_RELEASE);
		*out = s;
	}
	blk_mutex_unlock(&srv->lock);
	return st;
}

bool iscsi_srv_allowed(void *opaque, unsigned int i, const char *iname)
{
	struct blk_iscsi_server *srv = opaque;
	const char *p = srv->nodes[i].cfg.acl;
	size_t n = strlen(iname);

	if (!p || !*p)
		return true;
	while (*p) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);

		if (l == n && !memcmp(p, iname, n))
			return true;
		if (!c)
			break;
		p = c + 1;
	}
	return false;
}

uint16_t iscsi_srv_alloc_tsih(void *opaque)
{
	struct blk_iscsi_server *srv = opaque;
	struct iscsi_session *s;
	unsigned int tries;
	uint16_t tsih = 0;

	blk_mutex_lock(&srv->lock);
	for (tries = 0; tries < 65536 && !tsih; tries++) {
		tsih = ++srv->next_tsih;
		for (s = srv->sessions; tsih && s; s = s->next)
			if (s->tsih == tsih)
				tsih = 0;
	}
	blk_mutex_unlock(&srv->lock);
	return tsih;
}

/*
 * The iSCSI TransportID of an initiator port (SPC-4 7.6.4.6, format
 * 01b): "NAME,i,0xISID", NUL-terminated, padded to 4 bytes, at least 20.
 */
static size_t transport_id(uint8_t *id, const char *iname, const uint8_t *isid)
{
	char s[ISCSI_NAME_MAX + 32];
	size_t n;

	n = (size_t)snprintf(s, sizeof(s), "%s,i,0x%02x%02x%02x%02x%02x%02x",
			     iname, isid[0], isid[1], isid[2], isid[3], isid[4],
			     isid[5]) + 1;
	n = (n + 3) & ~(size_t)3;
	if (n < 20)
		n = 20;
	memset(id, 0, 4 + n);
	id[0] = 0x40 | 0x05; /* format 01b, protocol identifier iSCSI */
	put_be16(id + 2, (uint16_t)n);
	memcpy(id + 4, s, strlen(s));
	return 4 + n;
}

/*
 * A nexus index for (initiator name, ISID) on @node: the one it had
 * (registrations belong to the index, so an I_T nexus keeps it), else
 * one never used, else the one unused longest.  Called under srv->lock.
 */
static int nexus_get(struct blk_iscsi_server *srv, struct iscsi_node *node,
		     const char *iname, const uint8_t *isid, unsigned int *out)
{
	struct iscsi_nexus_slot *best = NULL, *s;
	uint8_t id[SCSI_TGT_TRANSPORT_ID_MAX];
	unsigned int i;

	for (i = 0; i < SCSI_TGT_MAX_NEXUS; i++) {
		s = &node->nexus[i];
		if (s->named && !strcmp(s->iname, iname) && !memcmp(s->isid, isid, 6)) {
			best = s;
			goto found;
		}
	}
	for (i = 0; i < SCSI_TGT_MAX_NEXUS; i++) {
		s = &node->nexus[i];
		if (s->active)
			continue;
		if (!best || (!s->named && best->named) ||
		    (s->named == best->named && s->last_used < best->last_used))
			best = s;
	}
	if (!best)
		return -EBUSY;
	snprintf(best->iname, sizeof(best->iname), "%s", iname);
	memcpy(best->isid, isid, 6);
	best->named = true;
	if (scsi_tgt_set_nexus_id(node->tgt, (unsigned int)(best - node->nexus),
				  id, transport_id(id, iname, isid)))
		return -ENOMEM;
found:
	best->active++;
	best->last_used = ++srv->logins;
	*out = (unsigned int)(best - node->nexus);
	return 0;
}

/* End every connection of @o (under srv->lock). */
static void session_kill(struct iscsi_session *o, const char *why)
{
	unsigned int i;

	o->ending = true;
	for (i = 0; i < o->nr_conns; i++) {
		o->gone[i] = true;
		iscsi_conn_kill(o->conns[i], why);
	}
}

int iscsi_srv_session_add(struct blk_iscsi_server *srv, struct iscsi_conn *c,
			  struct iscsi_session *s)
{
	struct iscsi_session *o;
	unsigned int waits;
	bool old;
	int ret = 0;

	blk_mutex_lock(&srv->lock);
	/*
	 * Session reinstatement (6.3.5): the same I_T nexus logs in anew;
	 * every connection of the old session ends.  And sessions of this
	 * target whose initiator has closed its end of their one connection
	 * (POLLRDHUP) without their thread having noticed yet: an I_T nexus
	 * loss the new session must see done (libiscsi's
	 * Reserve6.ITNexusLoss drops a session and reserves from another at
	 * once).  Those sessions end first (their commands, and the nexus
	 * loss that releases their reservations), at most 5 s.
	 */
	for (o = srv->sessions; o; o = o->next) {
		struct pollfd pfd = { .fd = o->nr_conns ? o->fds[0] : -1,
				      .events = POLLRDHUP };

		if (o->ending || o->node != s->node)
			continue;
		if (!strcmp(o->iname, s->iname) && !memcmp(o->isid, s->isid, 6)) {
			fprintf(srv->log, "iscsi: session tsih %u of '%s' (%u connection%s) reinstated by a new login (tsih %u)\n",
				o->tsih, o->iname, o->nr_conns,
				o->nr_conns == 1 ? "" : "s", s->tsih);
			session_kill(o, "session reinstated by a new login");
		} else if (o->nr_conns == 1 && poll(&pfd, 1, 0) > 0 &&
			   (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
			session_kill(o, "initiator hung up (seen by a new login)");
		}
	}
	for (waits = 0; waits < 50; waits++) {
		old = false;
		for (o = srv->sessions; o; o = o->next)
			old |= o->ending && o->node == s->node;
		if (!old)
			break;
		/*
		 * At the stop every session is ending: a login that waited
		 * for them would hold the server's exit up to 5 s, for a
		 * session that would only be asked to log out.
		 */
		if (iscsi_stop_flag(srv)) {
			blk_mutex_unlock(&srv->lock);
			return -ESHUTDOWN;
		}
		export_cond_wait_ms(&srv->cond, &srv->lock.m, 100);
	}
	if (s->node >= 0)
		ret = nexus_get(srv, &srv->nodes[s->node], s->iname, s->isid,
				&s->nexus);
	if (!ret) {
		s->conns[0] = c;
		s->fds[0] = iscsi_conn_fd(c);
		s->gone[0] = false;
		__atomic_store_n(&s->nr_conns, 1, __ATOMIC_RELEASE);
		s->next = srv->sessions;
		srv->sessions = s;
	}
	blk_mutex_unlock(&srv->lock);
	return ret;
}

bool iscsi_srv_session_leave(struct blk_iscsi_server *srv,
			     struct iscsi_session *s, struct iscsi_conn *c)
{
	unsigned int i;
	bool last;

	blk_mutex_lock(&srv->lock);
	for (i = 0; i < s->nr_conns; i++)
		if (s->conns[i] == c) {
			__atomic_store_n(&s->nr_conns, s->nr_conns - 1,
					 __ATOMIC_RELEASE);
			s->conns[i] = s->conns[s->nr_conns];
			s->cids[i] = s->cids[s->nr_conns];
			s->fds[i] = s->fds[s->nr_conns];
			s->gone[i] = s->gone[s->nr_conns];
			break;
		}
	last = !s->nr_conns;
	if (last)
		s->ending = true; /* no connection joins it any more */
	pthread_cond_broadcast(&srv->cond);
	blk_mutex_unlock(&srv->lock);
	return last;
}

void iscsi_srv_session_del(struct blk_iscsi_server *srv,
			   struct iscsi_session *s)
{
	struct iscsi_session **pp;

	blk_mutex_lock(&srv->lock);
	for (pp = &srv->sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			if (s->node >= 0)
				srv->nodes[s->node].nexus[s->nexus].active--;
			break;
		}
	pthread_cond_broadcast(&srv->cond);
	blk_mutex_unlock(&srv->lock);
	free(s);
}

unsigned int iscsi_srv_session_end_others(struct blk_iscsi_server *srv,
					  struct iscsi_session *s,
					  struct iscsi_conn *c, int cid,
					  const char *why, unsigned int wait_ms)
{
	unsigned int i, n = 0, waits;

	blk_mutex_lock(&srv->lock);
	for (i = 0; i < s->nr_conns; i++) {
		if (s->conns[i] == c || (cid >= 0 && s->cids[i] != cid))
			continue;
		s->gone[i] = true;
		iscsi_conn_kill(s->conns[i], why);
		n++;
	}
	if (cid < 0 && n)
		s->ending = true; /* the session ends: nothing joins it */
	/* wait for them to leave (their tasks end first) */
	for (waits = 0; n && waits < wait_ms / 20; waits++) {
		bool left = true;

		for (i = 0; i < s->nr_conns; i++)
			if (s->conns[i] != c && s->gone[i])
				left = false;
		if (left)
			break;
		export_cond_wait_ms(&srv->cond, &srv->lock.m, 20);
	}
	blk_mutex_unlock(&srv->lock);
	return n;
}

/* @ss's address as "1.2.3.4" or "[::1]", and whether it is a wildcard. */
static void portal_host(const struct sockaddr_storage *ss, char *buf,
			size_t len, bool *wildcard)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]", host);
		*wildcard = IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr);
	} else {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s", host);
		*wildcard = in->sin_addr.s_addr == htonl(INADDR_ANY);
	}
}

void iscsi_srv_target_addresses(const struct blk_iscsi_server *srv,
				const char *local, struct iscsi_text_out *out)
{
	char addr[BLK_ISCSI_MAX_PORTALS + 1][INET6_ADDRSTRLEN + 16];
	const char *colon = strrchr(local, ':');
	int lhl = colon ? (int)(colon - local) : (int)strlen(local);
	unsigned int i, j, n = 0;

	snprintf(addr[n++], sizeof(addr[0]), "%s,1", local);
	for (i = 0; i < srv->nr_portals; i++) {
		const struct iscsi_portal *p = &srv->portals[i];

		/* a wildcard portal: the address the initiator reached */
		if (p->wildcard)
			snprintf(addr[n], sizeof(addr[0]), "%.*s:%u,1", lhl,
				 local, p->port);
		else
			snprintf(addr[n], sizeof(addr[0]), "%s:%u,1", p->host,
				 p->port);
		for (j = 0; j < n && strcmp(addr[j], addr[n]); j++)
			;
		if (j == n)
			n++;
	}
	for (i = 0; i < n; i++)
		iscsi_text_add(out, "TargetAddress", addr[i]);
}

static int listen_tcp(struct blk_iscsi_server *srv, const char *addr,
		      char *err, size_t errlen)
{
	struct iscsi_portal *p = &srv->portals[srv->nr_portals];
	char host[256], port[8] = "3260";
	const char *colon = strrchr(addr, ':'), *rb = strrchr(addr, ']');
	char why[128];
	struct sockaddr_storage ss;
	size_t hl;
	int fd;

	if (colon && rb && colon < rb)
		colon = NULL; /* "[::1]" without a port */
	hl = colon ? (size_t)(colon - addr) : strlen(addr);
	if (colon) {
		if (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
		    strlen(colon + 1) > 5 || atoi(colon + 1) > 65535) {
			snprintf(err, errlen, "--iscsi=%s: port must be 0..65535", addr);
			return -EINVAL;
		}
		snprintf(port, sizeof(port), "%s", colon + 1);
	}
	if (hl >= sizeof(host)) {
		snprintf(err, errlen, "--iscsi=%s: host name too long", addr);
		return -EINVAL;
	}
	memcpy(host, addr, hl);
	host[hl] = 0;
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = 0;
	}
	fd = export_listen_tcp(host[0] ? host : "127.0.0.1", port, 64, &ss,
			       why, sizeof(why));
	if (fd < 0) {
		snprintf(err, errlen, "--iscsi=%s: %s", addr, why);
		return fd;
	}
	p->port = export_sockaddr_port(&ss);
	portal_host(&ss, p->host, sizeof(p->host), &p->wildcard);
	p->fd = fd;
	srv->nr_portals++;
	return 0;
}

int blk_iscsi_server_create(const struct blk_iscsi_server_config *cfg,
			    struct blk_iscsi_server **out, char *err,
			    size_t errlen)
{
	struct blk_iscsi_server *srv;
	unsigned int i, j;
	int ret;

	if (!cfg->nr_targets || cfg->nr_targets > BLK_ISCSI_MAX_TARGETS ||
	    !cfg->tcp_addr || cfg->max_cmds > 256 ||
	    cfg->nr_more_tcp_addrs >= BLK_ISCSI_MAX_PORTALS ||
	    (cfg->nr_more_tcp_addrs && !cfg->more_tcp_addrs)) {
		snprintf(err, errlen, "iscsi server: bad configuration (1..%d targets, 1..%d addresses, max_cmds 0..256)",
			 BLK_ISCSI_MAX_TARGETS, BLK_ISCSI_MAX_PORTALS);
		return -EINVAL;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->cfg = *cfg;
	if (!srv->cfg.max_connections)
		srv->cfg.max_connections = 64;
	if (!srv->cfg.max_cmds)
		srv->cfg.max_cmds = 32;
	srv->log = cfg->log ? cfg->log : stderr;
	blk_mutex_init(&srv->lock, "&iscsi_server->lock", -1);
	export_cond_init(&srv->cond);
	ours_init(&srv->ours);
	srv->env = (struct iscsi_login_env){
		.nr_targets = cfg->nr_targets, .target_name = env_target_name,
		.session_check = iscsi_srv_session_check,
		.allowed = iscsi_srv_allowed, .tpgt = 1, .opaque = srv,
	};
	if (cfg->chap_secrets) {
		srv->chap = calloc(1, sizeof(*srv->chap));
		if (!srv->chap) {
			ret = -ENOMEM;
			goto fail;
		}
		ret = iscsi_chap_load(cfg->chap_secrets, srv->chap, err, errlen);
		if (ret)
			goto fail;
		srv->env.chap = srv->chap;
	}
	srv->nodes = calloc(cfg->nr_targets, sizeof(*srv->nodes));
	if (!srv->nodes) {
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < cfg->nr_targets; i++) {
		struct iscsi_node *n = &srv->nodes[i];
		struct blk_dev_info info;
		uint32_t lbs = 0;
		struct scsi_tgt_config tc = {
			.own_luns = false,
			.vendor = "BLKSTACK", .product = "blkstack disk",
			.serial = "", .id = 0x1000 + i,
			.write_protect = cfg->targets[i].read_only,
			.removable = cfg->targets[i].removable,
		};
		int thin = cfg->targets[i].thin;

		n->cfg = cfg->targets[i];
		if (n->cfg.nr_more_luns >= SCSI_TGT_MAX_LUNS || !n->cfg.dev) {
			snprintf(err, errlen, "iscsi target %u: no device, or more than %d LUNs",
				 i, SCSI_TGT_MAX_LUNS);
			ret = -EINVAL;
			goto fail;
		}
		n->nr_luns = 1 + n->cfg.nr_more_luns;
		n->luns = calloc(n->nr_luns, sizeof(*n->luns));
		if (!n->luns) {
			ret = -ENOMEM;
			goto fail;
		}
		n->luns[0] = n->cfg.dev;
		for (j = 1; j < n->nr_luns; j++)
			n->luns[j] = n->cfg.more_luns[j - 1];
		tc.luns = n->luns;
		tc.nr_luns = n->nr_luns;
		if (!n->cfg.name || strlen(n->cfg.name) > ISCSI_NAME_MAX ||
		    !n->cfg.name[0]) {
			snprintf(err, errlen, "iscsi target %u: name empty or over %d bytes",
				 i, ISCSI_NAME_MAX);
			ret = -EINVAL;
			goto fail;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(srv->nodes[j].name, n->cfg.name)) {
				snprintf(err, errlen, "iscsi target name '%s' given twice",
					 n->cfg.name);
				ret = -EINVAL;
				goto fail;
			}
		snprintf(n->name, sizeof(n->name), "%s", n->cfg.name);
		if (thin < BLK_ISCSI_THIN_AUTO || thin > BLK_ISCSI_THIN_ON) {
			snprintf(err, errlen, "iscsi target '%s': thin %d: allowed 0 (auto), 1 (off), 2 (on)",
				 n->name, thin);
			ret = -EINVAL;
			goto fail;
		}
		for (j = 0; j < n->nr_luns; j++) {
			blk_dev_get_info(n->luns[j], &info);
			if (!lbs || info.logical_block_size > lbs)
				lbs = info.logical_block_size;
			if (thin == BLK_ISCSI_THIN_ON && !info.can_discard) {
				snprintf(err, errlen, "iscsi target '%s' LUN %u: thin provisioning needs a device that discards (%s does not)",
					 n->name, j, info.name);
				ret = -EINVAL;
				goto fail;
			}
		}
		/*
		 * Logical block provisioning: the core's auto is the device's
		 * (LBPRZ where it keeps data, which stays so when on); off is
		 * a fully provisioned unit, LBPRZ too (no block is unmapped)
		 */
		if (thin == BLK_ISCSI_THIN_ON) {
			tc.lbpu = SCSI_TGT_LBP_ON;
			tc.lbpws = SCSI_TGT_LBP_ON;
			tc.lbpws10 = SCSI_TGT_LBP_ON;
		} else if (thin == BLK_ISCSI_THIN_OFF) {
			tc.lbpu = SCSI_TGT_LBP_OFF;
			tc.lbpws = SCSI_TGT_LBP_OFF;
			tc.lbpws10 = SCSI_TGT_LBP_OFF;
			tc.lbprz = SCSI_TGT_LBP_OFF;
		}
		/* a command's buffer is at most ISCSI_MAX_XFER: say so (in
		 * the largest block size, so that it holds on every LUN) */
		tc.max_xfer_blocks = ISCSI_MAX_XFER / lbs;
		/*
		 * UNMAP: at most 1 Mi blocks per command (the core's own
		 * default is 4 Mi; libiscsi's Inquiry.BlockLimits holds a
		 * target to 1 Mi as a sanity bound)
		 */
		tc.max_unmap_blocks = 1u << 20;
		ret = scsi_tgt_create(&tc, &n->tgt, err, errlen);
		if (ret)
			goto fail;
	}
	ret = listen_tcp(srv, cfg->tcp_addr, err, errlen);
	for (i = 0; !ret && i < cfg->nr_more_tcp_addrs; i++)
		ret = listen_tcp(srv, cfg->more_tcp_addrs[i], err, errlen);
	if (ret)
		goto fail;
	*out = srv;
	return 0;
fail:
	blk_iscsi_server_destroy(srv);
	return ret;
}

unsigned int blk_iscsi_server_port(const struct blk_iscsi_server *srv)
{
	return srv->portals[0].port;
}

unsigned int blk_iscsi_server_portal_port(const struct blk_iscsi_server *srv,
					  unsigned int i)
{
	return i < srv->nr_portals ? srv->portals[i].port : 0;
}

static void accept_one(struct blk_iscsi_server *srv, int lfd)
{
	struct iscsi_conn *c;
	pthread_attr_t attr;
	pthread_t th;
	unsigned long id;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return; /* EAGAIN, ECONNABORTED, EMFILE: try again later */
	blk_mutex_lock(&srv->lock);
	id = ++srv->next_id;
	if (srv->active >= srv->cfg.max_connections) {
		blk_mutex_unlock(&srv->lock);
		fprintf(srv->log, "iscsi: conn %lu refused: %u connections already\n",
			id, srv->cfg.max_connections);
		close(fd);
		return;
	}
	srv->active++;
	blk_mutex_unlock(&srv->lock);
	c = iscsi_conn_new(srv, fd, id);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!c || pthread_create(&th, &attr, iscsi_conn_thread, c)) {
		fprintf(srv->log, "iscsi: conn %lu refused: no memory or thread\n", id);
		free(c);
		close(fd);
		blk_mutex_lock(&srv->lock);
		srv->active--;
		blk_mutex_unlock(&srv->lock);
	}
	pthread_attr_destroy(&attr);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int blk_iscsi_server_run(struct blk_iscsi_server *srv, int *stop)
{
	unsigned int deadline_ms = srv->cfg.stop_deadline_ms ?
				   srv->cfg.stop_deadline_ms : 30000;
	struct pollfd pfd[BLK_ISCSI_MAX_PORTALS];
	uint64_t stop_ns, idle_ns = now_ns();
	unsigned int i;

	for (i = 0; i < srv->nr_portals; i++)
		pfd[i] = (struct pollfd){ .fd = srv->portals[i].fd, .events = POLLIN };
	srv->stop = stop;
	while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
		int r = poll(pfd, srv->nr_portals, IDLE_WAIT_MS);
		uint64_t now = now_ns();

		if (r < 0 && errno != EINTR)
			return -errno;
		/* queues no connection holds: their drivers' timers (keep-alive) */
		if (now - idle_ns >= IDLE_WAIT_MS * 1000000ull) {
			unsigned int j;

			idle_ns = now;
			for (i = 0; i < srv->cfg.nr_targets; i++)
				for (j = 0; j < srv->nodes[i].nr_luns; j++)
					blk_dev_poll_idle(srv->nodes[i].luns[j]);
		}
		for (i = 0; r > 0 && i < srv->nr_portals; i++)
			if (pfd[i].revents & POLLIN)
				accept_one(srv, pfd[i].fd);
	}
	blk_mutex_lock(&srv->lock);
	stop_ns = now_ns();
	while (srv->active) {
		if (now_ns() - stop_ns > (uint64_t)deadline_ms * 1000000ull) {
			fprintf(srv->log,
				"iscsi: stop deadline (%u ms) passed: %u connections still wait for their commands\n",
				deadline_ms, srv->active);
			blk_mutex_unlock(&srv->lock);
			return -ETIMEDOUT;
		}
		export_cond_wait_ms(&srv->cond, &srv->lock.m, 100);
	}
	blk_mutex_unlock(&srv->lock);
	for (i = 0; i < srv->cfg.nr_targets; i++) {
		unsigned int j;

		for (j = 0; j < srv->nodes[i].nr_luns; j++)
			fprintf(srv->log, "iscsi: target '%s' LUN %u: %s\n",
				srv->nodes[i].name, j,
				export_dev_flush(srv->nodes[i].luns[j]));
	}
	return 0;
}

void blk_iscsi_server_destroy(struct blk_iscsi_server *srv)
{
	unsigned int i;

	if (!srv)
		return;
	for (i = 0; i < srv->nr_portals; i++)
		close(srv->portals[i].fd);
	for (i = 0; srv->nodes && i < srv->cfg.nr_targets; i++) {
		scsi_tgt_destroy(srv->nodes[i].tgt);
		free(srv->nodes[i].luns);
	}
	free(srv->nodes);
	if (srv->chap)
		explicit_bzero(srv->chap, sizeof(*srv->chap));
	free(srv->chap);
	blk_mutex_destroy(&srv->lock);
	pthread_cond_destroy(&srv->cond);
	free(srv);
}
