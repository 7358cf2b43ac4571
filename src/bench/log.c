// SPDX-License-Identifier: MIT
/*
 * fio's log files and json+ bins - see log.h.
 *
 * Memory: per-I/O logging (log_avg_msec=0) keeps 40 bytes per I/O until
 * the run ends; windowed logging one 48-byte record per direction and
 * window; histogram logging 14.8 KB per direction and log_hist_msec
 * window.  Records go to 1 MiB chunks, so appending never copies.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "log.h"

#define CHUNK_BYTES (1u << 20)

struct chunk {
	struct chunk *next;
	size_t used;
	unsigned char data[];
};

/* a list of records of one size, appended in chunks */
struct recs {
	struct chunk *head, *tail;
	size_t size;		/* bytes per record */
	uint64_t nr;
};

/* one I/O (log_avg_msec=0) */
struct io_rec {
	uint64_t offset;
	uint64_t slat;
	uint64_t clat;
	uint32_t t_ms;
	uint32_t bs;
	uint16_t ddir;
	uint16_t prio;		/* bi_ioprio */
};

/* one direction over one log_avg_msec window */
struct win_rec {
	uint64_t slat, clat, lat;	/* mean, or max with log_max_value */
	uint64_t bw_kib;		/* KiB/s */
	uint64_t iops;
	uint32_t t_ms;
	uint8_t ddir;
	uint8_t has_lat;		/* I/Os completed in it */
};

/* one direction over one log_hist_msec window: its clat bins */
struct hist_rec {
	uint32_t t_ms;
	uint32_t ddir;
	uint64_t bins[BENCH_PLAT_NR];
};

struct win_acc {
	uint64_t n, bytes;
	uint64_t slat, clat, lat;	/* sums, or maxima */
};

/* windows of one length and what they recorded (struct win_rec) */
struct win_state {
	uint64_t len_ns;		/* 0: off */
	bool max;			/* the largest latency, not the mean */
	uint64_t win;			/* current window */
	struct win_acc acc[DDIR_NR];
	struct recs recs;
};

struct bench_log {
	const struct bench_job_opts *j;
	bool io_logs;			/* lat, bw or iops log */
	uint64_t hist_ns;		/* log_hist_msec in ns, 0: none */
	unsigned int dirs;		/* directions seen or asked: bw/iops rows */
	bool short_log;			/* an append failed: records are missing */
	struct recs ios;		/* struct io_rec */
	struct win_state avg;		/* log_avg_msec: the logs' windows */
	struct win_state plot;		/* --plot's time series */
	struct recs hists;		/* struct hist_rec */
	uint64_t hwin;			/* current histogram window */
	uint64_t hn[DDIR_NR];
	uint64_t *hbins;		/* [DDIR_NR][BENCH_PLAT_NR] of the window */
	uint64_t *plat;			/* json+: [DDIR_NR][BENCH_PLAT_NR] */
};

uint64_t bench_plat_value(unsigned int idx)
{
	unsigned int shift;
	uint64_t base;

	if (idx < 2 * BENCH_PLAT_VAL)
		return idx;
	if (idx >= BENCH_PLAT_NR)
		idx = BENCH_PLAT_NR - 1;
	shift = idx / BENCH_PLAT_VAL - 1;
	base = 1ull << (shift + BENCH_PLAT_BITS);
	/* the bin's low end plus half its width (2^shift, shift >= 1) */
	return base + (uint64_t)(idx % BENCH_PLAT_VAL) * (1ull << shift) +
	       (1ull << (shift - 1));
}

static void *recs_add(struct recs *r)
{
	struct chunk *c = r->tail;
	void *p;

	if (!c || c->used + r->size > CHUNK_BYTES) {
		c = malloc(sizeof(*c) + CHUNK_BYTES);
		if (!c)
			return NULL;
		c->next = NULL;
		c->used = 0;
		if (r->tail)
			r->tail->next = c;
		else
			r->head = c;
		r->tail = c;
	}
	p = c->data + c->used;
	c->used += r->size;
	r->nr++;
	return p;
}

static void recs_free(struct recs *r)
{
	struct chunk *c, *n;

	for (c = r->head; c; c = n) {
		n = c->next;
		free(c);
	}
	r->head = r->tail = NULL;
	r->nr = 0;
}

bool bench_log_wanted(const struct bench_job_opts *j)
{
	return j->lat_log_on || j->bw_log_on || j->iops_log_on ||
	       j->hist_log_on;
}

struct bench_log *bench_log_new(const struct bench_job_opts *j, bool plat,
				uint64_t plot_ns)
{
	struct bench_log *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->j = j;
	l->io_logs = j->lat_log_on || j->bw_log_on || j->iops_log_on;
	l->avg.len_ns = l->io_logs ? j->log_avg_msec * 1000000ull : 0;
	l->avg.max = j->log_max_value;
	l->avg.recs.size = sizeof(struct win_rec);
	l->plot.len_ns = plot_ns;
	l->plot.recs.size = sizeof(struct win_rec);
	l->hist_ns = j->hist_log_on ? j->log_hist_msec * 1000000ull : 0;
	l->ios.size = sizeof(struct io_rec);
	l->hists.size = sizeof(struct hist_rec);
	if (bench_rw_reads(j->rw))
		l->dirs |= 1u << DDIR_READ;
	if (bench_rw_writes(j->rw))
		l->dirs |= 1u << DDIR_WRITE;
	if (j->rw == RW_TRIM || j->rw == RW_RANDTRIM)
		l->dirs |= 1u << DDIR_TRIM;
	if (l->hist_ns) {
		l->hbins = calloc((size_t)DDIR_NR * BENCH_PLAT_NR, sizeof(uint64_t));
		if (!l->hbins)
			goto fail;
	}
	if (plat) {
		l->plat = calloc((size_t)DDIR_NR * BENCH_PLAT_NR, sizeof(uint64_t));
		if (!l->plat)
			goto fail;
	}
	return l;
fail:
	bench_log_free(l);
	return NULL;
}

void bench_log_free(struct bench_log *l)
{
	if (!l)
		return;
	recs_free(&l->ios);
	recs_free(&l->avg.recs);
	recs_free(&l->plot.recs);
	recs_free(&l->hists);
	free(l->hbins);
	free(l->plat);
	free(l);
}

const uint64_t *bench_log_plat(const struct bench_log *l, unsigned int ddir)
{
	return l && l->plat ? l->plat + (size_t)ddir * BENCH_PLAT_NR : NULL;
}

/* Close window ws->win, @len_ns long, ending at @end_ns. */
static void win_flush(struct bench_log *l, struct win_state *ws,
		      uint64_t end_ns, uint64_t len_ns)
{
	unsigned int d;

	for (d = 0; d < DDIR_NR; d++) {
		struct win_acc *a = &ws->acc[d];
		struct win_rec *w;

		if (!a->n && !(l->dirs & (1u << d)))
			continue;
		w = recs_add(&ws->recs);
		if (!w) {
			l->short_log = true;
			continue;
		}
		memset(w, 0, sizeof(*w));
		w->t_ms = (uint32_t)(end_ns / 1000000);
		w->ddir = (uint8_t)d;
		w->has_lat = a->n != 0;
		if (a->n && !ws->max) {
			w->slat = (a->slat + a->n / 2) / a->n;
			w->clat = (a->clat + a->n / 2) / a->n;
			w->lat = (a->lat + a->n / 2) / a->n;
		} else {
			w->slat = a->slat;
			w->clat = a->clat;
			w->lat = a->lat;
		}
		if (len_ns) {
			w->bw_kib = (uint64_t)((double)a->bytes * 1e9 /
					       (double)len_ns / 1024.0 + 0.5);
			w->iops = (uint64_t)((double)a->n * 1e9 /
					     (double)len_ns + 0.5);
		}
		memset(a, 0, sizeof(*a));
	}
}

/* One I/O into the windows of @ws, closing those that ended before it. */
static void win_add(struct bench_log *l, struct win_state *ws, uint64_t t_ns,
		    unsigned int ddir, uint32_t bs, uint64_t slat, uint64_t clat)
{
	uint64_t w = t_ns / ws->len_ns;
	struct win_acc *a = &ws->acc[ddir];

	/* the windows that ended since, empty ones included */
	while (ws->win < w) {
		win_flush(l, ws, (ws->win + 1) * ws->len_ns, ws->len_ns);
		ws->win++;
	}
	a->n++;
	a->bytes += bs;
	if (ws->max) {
		if (slat > a->slat)
			a->slat = slat;
		if (clat > a->clat)
			a->clat = clat;
		if (slat + clat > a->lat)
			a->lat = slat + clat;
	} else {
		a->slat += slat;
		a->clat += clat;
		a->lat += slat + clat;
	}
}

/* The run ended at @t_ns: the windows up to it, the last one partial. */
static void win_finish(struct bench_log *l, struct win_state *ws,
		       uint64_t t_ns)
{
	unsigned int d;
	bool any = false;

	if (!ws->len_ns)
		return;
	while (ws->win < t_ns / ws->len_ns) {
		win_flush(l, ws, (ws->win + 1) * ws->len_ns, ws->len_ns);
		ws->win++;
	}
	/* the last, partial window: when it saw I/O, over its own length */
	for (d = 0; d < DDIR_NR; d++)
		any |= ws->acc[d].n != 0;
	if (any)
		win_flush(l, ws, t_ns, t_ns - ws->win * ws->len_ns);
}

/* Close histogram window l->hwin, ending at @end_ns. */
static void hist_flush(struct bench_log *l, uint64_t end_ns)
{
	unsigned int d;

	for (d = 0; d < DDIR_NR; d++) {
		uint64_t *bins = l->hbins + (size_t)d * BENCH_PLAT_NR;
		struct hist_rec *h;

		if (!l->hn[d])
			continue;
		h = recs_add(&l->hists);
		if (!h) {
			l->short_log = true;
		} else {
			h->t_ms = (uint32_t)(end_ns / 1000000);
			h->ddir = d;
			memcpy(h->bins, bins, sizeof(h->bins));
		}
		memset(bins, 0, BENCH_PLAT_NR * sizeof(*bins));
		l->hn[d] = 0;
	}
}

int bench_log_io(struct bench_log *l, uint64_t t_ns, unsigned int ddir,
		 uint32_t bs, uint64_t offset, uint64_t slat, uint64_t clat)
{
	return bench_log_io_prio(l, t_ns, ddir, bs, offset, slat, clat, 0);
}

int bench_log_io_prio(struct bench_log *l, uint64_t t_ns, unsigned int ddir,
		      uint32_t bs, uint64_t offset, uint64_t slat,
		      uint64_t clat, uint16_t prio)
{
	unsigned int idx = bench_plat_index(clat);

	l->dirs |= 1u << ddir;
	if (l->plat)
		l->plat[(size_t)ddir * BENCH_PLAT_NR + idx]++;
	if (l->hist_ns) {
		uint64_t w = t_ns / l->hist_ns;

		if (w != l->hwin) {
			hist_flush(l, (l->hwin + 1) * l->hist_ns);
			l->hwin = w;
		}
		l->hbins[(size_t)ddir * BENCH_PLAT_NR + idx]++;
		l->hn[ddir]++;
	}
	if (l->plot.len_ns)
		win_add(l, &l->plot, t_ns, ddir, bs, slat, clat);
	if (!l->io_logs)
		return 0;
	if (l->avg.len_ns) {
		win_add(l, &l->avg, t_ns, ddir, bs, slat, clat);
		return 0;
	}
	{
		struct io_rec *r = recs_add(&l->ios);

		if (!r) {
			l->short_log = true;
			return -ENOMEM;
		}
		r->offset = offset;
		r->slat = slat;
		r->clat = clat;
		r->t_ms = (uint32_t)(t_ns / 1000000);
		r->bs = bs;
		r->ddir = (uint16_t)ddir;
		r->prio = prio;
	}
	return 0;
}

void bench_log_finish(struct bench_log *l, uint64_t t_ns)
{
	if (l->hist_ns)
		hist_flush(l, t_ns);
	win_finish(l, &l->avg, t_ns);
	win_finish(l, &l->plot, t_ns);
}

void bench_log_points(const struct bench_log *l,
		      void (*fn)(void *arg, const struct bench_log_point *p),
		      void *arg)
{
	const struct chunk *c;
	size_t i;

	if (!l)
		return;
	for (c = l->plot.recs.head; c; c = c->next)
		for (i = 0; i < c->used; i += l->plot.recs.size) {
			const struct win_rec *w = (const void *)(c->data + i);
			struct bench_log_point p = {
				.t_ms = w->t_ms, .ddir = w->ddir,
				.has_lat = w->has_lat, .iops = w->iops,
				.clat_ns = w->clat, .lat_ns = w->lat,
			};

			fn(arg, &p);
		}
}

/* ------------------------------------------------------------- writing */

enum log_kind {
	LOG_LAT,
	LOG_CLAT,
	LOG_SLAT,
	LOG_BW,
	LOG_IOPS,
	LOG_HIST,
	NR_LOG_KINDS,
};

static const char *const kind_suffix[NR_LOG_KINDS] = {
	"lat", "clat", "slat", "bw", "iops", "clat_hist",
};

static uint64_t io_value(enum log_kind k, const struct io_rec *r)
{
	switch (k) {
	case LOG_LAT:
		return r->slat + r->clat;
	case LOG_CLAT:
		return r->clat;
	case LOG_SLAT:
		return r->slat;
	case LOG_BW:
		/* fio's per-I/O bandwidth: the block over its clat, in KB/s */
		return (uint64_t)r->bs * 1000000ull / (r->clat ? r->clat : 1);
	default:
		return 1;
	}
}

static uint64_t win_value(enum log_kind k, const struct win_rec *w)
{
	switch (k) {
	case LOG_LAT:
		return w->lat;
	case LOG_CLAT:
		return w->clat;
	case LOG_SLAT:
		return w->slat;
	case LOG_BW:
		return w->bw_kib;
	default:
		return w->iops;
	}
}

/*
 * Lines are formatted by hand into a buffer of the writer's, written out
 * by fwrite() 64 KiB at a time: fprintf() costs several times as much
 * per line, and a per-I/O log has a line per I/O per file.
 */
struct out {
	FILE *f;
	size_t used;
	char buf[1 << 16];
};

static void out_flush(struct out *o)
{
	if (o->used)
		fwrite(o->buf, 1, o->used, o->f);
	o->used = 0;
}

static void out_u64(struct out *o, uint64_t x, bool sep)
{
	char tmp[20];
	unsigned int k = 0;

	if (o->used > sizeof(o->buf) - 24)
		out_flush(o);
	if (sep) {
		o->buf[o->used++] = ',';
		o->buf[o->used++] = ' ';
	}
	do {
		tmp[k++] = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	while (k)
		o->buf[o->used++] = tmp[--k];
}

static void out_nl(struct out *o)
{
	if (o->used == sizeof(o->buf))
		out_flush(o);
	o->buf[o->used++] = '\n';
}

/* fio's columns: "V, V, ..., V\n" */
static void put_line(struct out *o, const uint64_t *v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		out_u64(o, v[i], i != 0);
	out_nl(o);
}

/* fio's log_prio=1 lines: the columns, then ", 0x%04x" of @prio */
static void put_line_hex(struct out *o, uint64_t *v, unsigned int n,
			 uint16_t prio)
{
	static const char hex[] = "0123456789abcdef";
	unsigned int i;

	for (i = 0; i < n; i++)
		out_u64(o, v[i], i != 0);
	if (o->used > sizeof(o->buf) - 16)
		out_flush(o);
	memcpy(o->buf + o->used, ", 0x", 4);
	o->used += 4;
	for (i = 0; i < 4; i++)
		o->buf[o->used++] = hex[(prio >> (12 - 4 * i)) & 15];
	out_nl(o);
}

static void write_entries(struct out *f, const struct bench_log *l,
			  enum log_kind k)
{
	bool off = l->j->log_offset;
	const struct chunk *c;
	size_t i;

	if (k == LOG_HIST) {
		unsigned int step = 1u << l->j->log_hist_coarseness;

		for (c = l->hists.head; c; c = c->next)
			for (i = 0; i < c->used; i += l->hists.size) {
				const struct hist_rec *h =
					(const void *)(c->data + i);
				unsigned int b, s;

				uint64_t head[3] = { h->t_ms, h->ddir, l->j->bs };

				for (b = 0; b < 3; b++)
					out_u64(f, head[b], b != 0);
				for (b = 0; b < BENCH_PLAT_NR; b += step) {
					uint64_t sum = 0;

					for (s = 0; s < step; s++)
						sum += h->bins[b + s];
					out_u64(f, sum, true);
				}
				out_nl(f);
			}
		return;
	}
	if (l->avg.len_ns) {
		for (c = l->avg.recs.head; c; c = c->next)
			for (i = 0; i < c->used; i += l->avg.recs.size) {
				const struct win_rec *w =
					(const void *)(c->data + i);

				/* latency rows only where I/Os completed */
				if (k <= LOG_SLAT && !w->has_lat)
					continue;
				uint64_t v[6] = { w->t_ms, win_value(k, w), w->ddir,
						  0, 0, 0 };

				put_line(f, v, off ? 6 : 5);
			}
		return;
	}
	for (c = l->ios.head; c; c = c->next)
		for (i = 0; i < c->used; i += l->ios.size) {
			const struct io_rec *r = (const void *)(c->data + i);
			/*
			 * time, value, direction, block size, [offset,]
			 * priority: fio's flush_samples(), the whole value
			 * as 0x%04x with log_prio=1, else 1 for class RT
			 */
			uint64_t v[6] = { r->t_ms, io_value(k, r), r->ddir, r->bs,
					  r->offset, 0 };

			v[off ? 5 : 4] = IOPRIO_PRIO_CLASS(r->prio) == IOPRIO_CLASS_RT;

			if (l->j->log_prio) {
				put_line_hex(f, v, off ? 5 : 4, r->prio);
				continue;
			}
			put_line(f, v, off ? 6 : 5);
		}
}

static int write_one(const struct bench_log *l, enum log_kind k,
		     const char *prefix, const char *jobname,
		     unsigned int number, const char *dev, char *err,
		     size_t errlen)
{
	char path[4096], idx[16] = "";
	static struct out outbuf;	/* main thread only */
	struct out *out = &outbuf;
	FILE *f;
	int n, ret = 0;

	if (l->j->per_job_logs)
		snprintf(idx, sizeof(idx), ".%u", number);
	n = snprintf(path, sizeof(path), "%s%s%s_%s%s.log",
		     prefix[0] ? prefix : jobname, dev ? "." : "",
		     dev ? dev : "", kind_suffix[k], idx);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, errlen, "log file name too long: %.64s...", path);
		return -ENAMETOOLONG;
	}
	f = fopen(path, "w");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	out->f = f;
	out->used = 0;
	/*
	 * disable_bw_measurement=1: as in fio 3.33, a per-I/O bandwidth log
	 * (no log_avg_msec=) is written with no entries
	 */
	if (!(k == LOG_BW && l->j->disable_bw && !l->j->log_avg_msec))
		write_entries(out, l, k);
	out_flush(out);
	if (ferror(f))
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (ret)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
	return ret;
}

int bench_log_write(const struct bench_log *l, const char *jobname,
		    unsigned int number, const char *dev, char *err,
		    size_t errlen)
{
	const struct bench_job_opts *j = l->j;
	int ret = 0;

	if (l->short_log)
		fprintf(stderr,
			"blkstack bench: %s: out of memory for the logs: entries are missing\n",
			jobname);
	if (j->lat_log_on) {
		if (!ret)
			ret = write_one(l, LOG_LAT, j->lat_log, jobname, number,
					dev, err, errlen);
		if (!ret)
			ret = write_one(l, LOG_CLAT, j->lat_log, jobname, number,
					dev, err, errlen);
		if (!ret)
			ret = write_one(l, LOG_SLAT, j->lat_log, jobname, number,
					dev, err, errlen);
	}
	if (j->bw_log_on && !ret)
		ret = write_one(l, LOG_BW, j->bw_log, jobname, number, dev,
				err, errlen);
	if (j->iops_log_on && !ret)
		ret = write_one(l, LOG_IOPS, j->iops_log, jobname, number, dev,
				err, errlen);
	if (j->hist_log_on && !ret)
		ret = write_one(l, LOG_HIST, j->hist_log, jobname, number, dev,
				err, errlen);
	return ret;
}
