// SPDX-License-Identifier: MIT
/*
 * fio's iolog, read for read_iolog= (iolog.h).  The format is fio 3.33's
 * (iolog.c read_iolog()); blkstack writes version 3 itself (engine.c,
 * write_iolog=).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/iolog.h"

static const struct {
	const char *name;
	int act;
} acts[] = {
	{ "read", IOLOG_READ }, { "write", IOLOG_WRITE }, { "trim", IOLOG_TRIM },
	{ "sync", IOLOG_SYNC }, { "datasync", IOLOG_DATASYNC },
	{ "wait", IOLOG_WAIT },
};

int bench_iolog_read(const char *path, uint64_t scale, uint64_t align,
		     uint32_t time_scale, const char *redirect,
		     struct bench_iolog *log, char *err, size_t errlen)
{
	char line[8192], fname[4097], act[257];
	unsigned long long t, off, first_t = 0, wait_us = 0;
	unsigned int len, ver, lineno = 1;
	bool have_t = false;
	size_t cap = 0, i;
	FILE *f;
	int r, ret = 0;

	memset(log, 0, sizeof(*log));
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "read_iolog=%s: %s", path, strerror(errno));
		return ret;
	}
	if (!fgets(line, sizeof(line), f) ||
	    (strncmp(line, "fio version 2 iolog", 19) &&
	     strncmp(line, "fio version 3 iolog", 19))) {
		snprintf(err, errlen,
			 "read_iolog=%s: not a fio iolog: the first line must be 'fio version 2 iolog' or 'fio version 3 iolog' (blktrace logs are not read)",
			 path);
		ret = -EINVAL;
		goto out;
	}
	ver = line[12] == '3' ? 3 : 2;
	while (fgets(line, sizeof(line), f)) {
		struct bench_iolog_ent *e;

		lineno++;
		t = 0;
		off = 0;
		len = 0;
		if (ver == 3)
			r = sscanf(line, "%llu %4096s %256s %llu %u", &t, fname, act,
				   &off, &len) - 1;
		else
			r = sscanf(line, "%4096s %256s %llu %u", fname, act, &off, &len);
		if (r == 2) {	/* a file's add, open or close */
			if (strcmp(act, "add") && strcmp(act, "open") &&
			    strcmp(act, "close"))
				goto bad;
			if (!strcmp(act, "add") && !(redirect && redirect[0])) {
				if (log->file[0] && strcmp(log->file, fname)) {
					snprintf(err, errlen,
						 "read_iolog=%s:%u: a second file, %s: blkstack replays one file's log (replay_redirect= puts every file's I/O on one)",
						 path, lineno, fname);
					ret = -EINVAL;
					goto out;
				}
				if (strlen(fname) >= sizeof(log->file)) {
					snprintf(err, errlen, "read_iolog=%s:%u: a file name too long",
						 path, lineno);
					ret = -EINVAL;
					goto out;
				}
				memcpy(log->file, fname, strlen(fname) + 1);
			}
			continue;
		}
		if (r != 4)
			goto bad;
		for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
			if (!strcmp(acts[i].name, act))
				break;
		if (i == sizeof(acts) / sizeof(acts[0]))
			goto bad;
		if (acts[i].act == IOLOG_WAIT && ver == 3)
			continue;	/* fio: ignored in version 3 */
		if (log->nr == cap) {
			cap = cap ? cap * 2 : 1024;
			e = realloc(log->ents, cap * sizeof(*e));
			if (!e) {
				ret = -ENOMEM;
				snprintf(err, errlen, "read_iolog=%s: out of memory", path);
				goto out;
			}
			log->ents = e;
		}
		e = &log->ents[log->nr++];
		e->act = (uint8_t)acts[i].act;
		e->off = 0;
		e->len = 0;
		if (e->act == IOLOG_WAIT) {
			wait_us += off;
			e->t_us = wait_us;
			continue;
		}
		if (ver == 3) {
			if (!have_t) {
				first_t = t;
				have_t = true;
			}
			t = t > first_t ? t - first_t : 0;
			e->t_us = time_scale && time_scale != 100 ?
				  t * 100 / time_scale : t;
		} else {
			e->t_us = wait_us;
		}
		if (e->act == IOLOG_SYNC || e->act == IOLOG_DATASYNC)
			continue;
		if (!len)
			goto bad;
		if (scale > 1)
			off /= scale;
		if (align)
			off -= off % align;
		e->off = off;
		e->len = len;
		if (off + len > log->end)
			log->end = off + len;
		if (len > log->max_len)
			log->max_len = len;
		log->bytes += len;
		log->reads += e->act == IOLOG_READ;
		log->writes += e->act == IOLOG_WRITE;
	}
	if (!log->bytes) {
		snprintf(err, errlen, "read_iolog=%s: no I/O in the log", path);
		ret = -EINVAL;
	}
	goto out;
bad:
	snprintf(err, errlen, "read_iolog=%s:%u: not a line of fio's iolog version %u: %.80s",
		 path, lineno, ver, line);
	ret = -EINVAL;
out:
	fclose(f);
	if (ret) {
		free(log->ents);
		log->ents = NULL;
		log->nr = 0;
	}
	return ret;
}
