// SPDX-License-Identifier: MIT
/*
 * /metrics over HTTP with libmicrohttpd - see blkstack/metrics.h.
 *
 * libmicrohttpd is opened with dlopen() the first time a server starts,
 * not linked: Debian's is built with GnuTLS, and the nine libraries that
 * brings cost every process start 3.9 million instructions of symbol
 * binding and library constructors (callgrind, `blkstack bench
 * --dev=null --size=64M`: 12.07 M with it preloaded 16.01 M), a third of
 * a short null bench run that never serves metrics.  The header still
 * comes from pkg-config (libmicrohttpd-dev), so the types and constants
 * are the library's own.
 *
 * The socket is ours (bind errors name the address, port 0 is read back
 * with getsockname()), handed to libmicrohttpd with
 * MHD_OPTION_LISTEN_SOCKET.  One internal thread polls every scraper;
 * a request renders the registry into memory (blk_metrics_render()) and
 * hands it over, so no scraper, however slow, holds anything the I/O
 * path uses.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "blkstack/metrics.h"
#include "../export.h"

#ifndef BLK_MHD_SONAME
#define BLK_MHD_SONAME "libmicrohttpd.so.12"
#endif

#define HTTP_MAX_CONNS 16u
#define HTTP_IDLE_S 10u
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The libmicrohttpd functions used, resolved once. */
static struct {
	struct MHD_Daemon *(*start)(unsigned int flags, uint16_t port,
				    MHD_AcceptPolicyCallback apc, void *apc_cls,
				    MHD_AccessHandlerCallback dh, void *dh_cls,
				    ...);
	void (*stop)(struct MHD_Daemon *d);
	struct MHD_Response *(*from_buffer)(size_t size, void *buffer,
					    enum MHD_ResponseMemoryMode mode);
	enum MHD_Result (*add_header)(struct MHD_Response *r, const char *h,
				      const char *v);
	enum MHD_Result (*queue)(struct MHD_Connection *c, unsigned int status,
				 struct MHD_Response *r);
	void (*destroy)(struct MHD_Response *r);
	char err[256];
} mhd;
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;

static void mhd_load(void)
{
	/* never closed: GnuTLS's destructors run at exit */
	void *h = dlopen(BLK_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(mhd.err, sizeof(mhd.err), "%s", dlerror());
		return;
	}
	*(void **)&mhd.start = dlsym(h, "MHD_start_daemon");
	*(void **)&mhd.stop = dlsym(h, "MHD_stop_daemon");
	*(void **)&mhd.from_buffer = dlsym(h, "MHD_create_response_from_buffer");
	*(void **)&mhd.add_header = dlsym(h, "MHD_add_response_header");
	*(void **)&mhd.queue = dlsym(h, "MHD_queue_response");
	*(void **)&mhd.destroy = dlsym(h, "MHD_destroy_response");
	if (!mhd.start || !mhd.stop || !mhd.from_buffer || !mhd.add_header ||
	    !mhd.queue || !mhd.destroy) {
		snprintf(mhd.err, sizeof(mhd.err),
			 "%s lacks a function blkstack uses", BLK_MHD_SONAME);
		mhd.start = NULL;
	}
}

struct blk_metrics_http {
	struct blk_metrics *m;
	struct MHD_Daemon *d;
	unsigned int port;
};

int blk_metrics_parse_addr(const char *val, char *host, size_t hostlen,
			   unsigned int *port)
{
	const char *colon, *p;
	size_t hl;
	unsigned long v;

	if (!val || !*val) {
		snprintf(host, hostlen, "127.0.0.1");
		*port = 9100;
		return 0;
	}
	colon = strrchr(val, ':');
	/* "::1" alone is not PORT: IPv6 goes in brackets */
	if (colon && val[0] != '[' && strchr(val, ':') != colon)
		return -EINVAL;
	p = colon ? colon + 1 : val;
	if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5)
		return -EINVAL;
	v = strtoul(p, NULL, 10);
	if (v > 65535)
		return -EINVAL;
	if (!colon) {
		snprintf(host, hostlen, "127.0.0.1");
		*port = (unsigned int)v;
		return 0;
	}
	hl = (size_t)(colon - val);
	if (val[0] == '[') {
		if (hl < 3 || val[hl - 1] != ']')
			return -EINVAL;
		val++;
		hl -= 2;
	} else if (!hl || memchr(val, ']', hl)) {
		return -EINVAL;
	}
	if (hl >= hostlen)
		return -EINVAL;
	memcpy(host, val, hl);
	host[hl] = 0;
	*port = (unsigned int)v;
	return 0;
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned int status,
			      void *body, size_t len, const char *type)
{
	struct MHD_Response *r = mhd.from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	mhd.add_header(r, "Content-Type", type);
	ret = mhd.queue(conn, status, r);
	mhd.destroy(r);
	return ret;
}

static enum MHD_Result answer_text(struct MHD_Connection *conn,
				   unsigned int status, const char *text)
{
	char *body = strdup(text);

	if (!body)
		return MHD_NO;
	return answer(conn, status, body, strlen(body), "text/plain; charset=utf-8");
}

/* libmicrohttpd's thread: one request (GET has no body: answered at once). */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct blk_metrics_http *h = cls;
	char *body;
	size_t len;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				   "GET /metrics\n");
	if (strcmp(url, "/metrics"))
		return answer_text(conn, MHD_HTTP_NOT_FOUND,
				   "blkstack: the metrics are at /metrics\n");
	if (blk_metrics_render(h->m, &body, &len))
		return answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "out of memory\n");
	return answer(conn, MHD_HTTP_OK, body, len, CONTENT_TYPE);
}

/* "--metrics=HOST:PORT" for messages, IPv6 hosts in brackets */
static const char *addr_name(const char *host, unsigned int port, char *buf,
			     size_t len)
{
	bool v6 = strchr(host, ':') != NULL;

	snprintf(buf, len, "--metrics=%s%s%s:%u", v6 ? "[" : "", host,
		 v6 ? "]" : "", port);
	return buf;
}

static int listen_on(const char *host, unsigned int port, int *fdp,
		     unsigned int *bound, char *err, size_t errlen)
{
	char an[320], ps[8], why[128];
	struct sockaddr_storage ss;
	int fd;

	snprintf(ps, sizeof(ps), "%u", port);
	fd = export_listen_tcp(host, ps, 16, &ss, why, sizeof(why));
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", addr_name(host, port, an, sizeof(an)),
			 why);
		return fd;
	}
	*bound = export_sockaddr_port(&ss);
	*fdp = fd;
	return 0;
}

int blk_metrics_http_start(struct blk_metrics *m, const char *host,
			   unsigned int port, struct blk_metrics_http **out,
			   char *err, size_t errlen)
{
	struct blk_metrics_http *h;
	char an[320];
	int fd = -1, ret;

	if (port > 65535) {
		snprintf(err, errlen, "--metrics: port %u: allowed 0..65535", port);
		return -EINVAL;
	}
	pthread_once(&mhd_once, mhd_load);
	if (!mhd.start) {
		snprintf(err, errlen,
			 "--metrics: cannot load libmicrohttpd (%s); scripts/install-deps.sh installs it",
			 mhd.err);
		return -ENOENT;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->m = m;
	ret = listen_on(host, port, &fd, &h->port, err, errlen);
	if (ret) {
		free(h);
		return ret;
	}
	/* the daemon owns @fd from here: MHD_stop_daemon() closes it */
	h->d = mhd.start(MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC, 0, NULL,
			 NULL, on_request, h,
			 MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
			 MHD_OPTION_CONNECTION_LIMIT, HTTP_MAX_CONNS,
			 MHD_OPTION_CONNECTION_TIMEOUT, HTTP_IDLE_S,
			 MHD_OPTION_END);
	if (!h->d) {
		close(fd);
		free(h);
		snprintf(err, errlen, "%s: libmicrohttpd did not start",
			 addr_name(host, port, an, sizeof(an)));
		return -EIO;
	}
	*out = h;
	return 0;
}

unsigned int blk_metrics_http_port(const struct blk_metrics_http *h)
{
	return h->port;
}

void blk_metrics_http_stop(struct blk_metrics_http *h)
{
	if (!h)
		return;
	mhd.stop(h->d);
	free(h);
}
