// SPDX-License-Identifier: MIT
/*
 * The matrix's layout step: before a device's read rows, write every block
 * of the region the rows use, once, as fio lays out a file before it reads
 * it.  Without it, ram reads return the zero fill of pages never written,
 * a new sparse file reads holes, and the write rows pay for the device's
 * first-touch allocation, none of which is the I/O the table names.
 *
 * The layout is an ordinary sequential write job (rw=write at the matrix's
 * bs and iodepth, each region written once), so that with verify=crc32c
 * every block carries a header the read rows can check.  A file-backed
 * device is then flushed (fdatasync), as fio's create_fsync=1 default
 * does, so that write-back of the layout does not run into the rows.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "clock.h"

/* The file the device stores its data in, or NULL (memory, or no data). */
/* the layout's reason for a file that blocks with headers must cover */
static const char *const verify_reason[VERIFY_NR] = {
	[VERIFY_CRC32C] = "verify=crc32c", [VERIFY_MD5] = "verify=md5",
	[VERIFY_SHA1] = "verify=sha1", [VERIFY_SHA256] = "verify=sha256",
	[VERIFY_SHA512] = "verify=sha512", [VERIFY_SHA3_224] = "verify=sha3-224",
	[VERIFY_SHA3_256] = "verify=sha3-256", [VERIFY_SHA3_384] = "verify=sha3-384",
	[VERIFY_SHA3_512] = "verify=sha3-512", [VERIFY_XXHASH] = "verify=xxhash",
	[VERIFY_CRC32] = "verify=crc32", [VERIFY_CRC16] = "verify=crc16",
	[VERIFY_CRC7] = "verify=crc7", [VERIFY_CRC64] = "verify=crc64",
	[VERIFY_META] = "verify=meta", [VERIFY_PATTERN] = "verify=pattern",
};

static const char *layout_file(const struct bench_dev_opts *d,
			       const char *devname)
{
	const struct blk_driver *drv = blk_driver_find(devname);
	const char *lower;
	char err[256];

	if (!d->p.filename[0] || !drv)
		return NULL;
	if (!strcmp(devname, "uring"))
		return d->p.filename;
	/* a stacking driver keeps its data in the file only on uring */
	if (drv->lowers && !blk_dev_lower(drv, &d->p, &lower, err, sizeof(err)) &&
	    lower && !strcmp(lower, "uring"))
		return d->p.filename;
	return NULL;
}

void bench_layout_probe(const struct bench_opts *o, const char *devname,
			struct bench_layout *l)
{
	const char *path = layout_file(&o->dev, devname);
	struct stat sb;

	memset(l, 0, sizeof(*l));
	snprintf(l->dev, sizeof(l->dev), "%s", devname);
	l->filename = path;
	if (!path)
		return;
	/* the driver creates a missing file and extends an empty one */
	if (stat(path, &sb))
		l->new_file = true;
	else if (S_ISREG(sb.st_mode) && !sb.st_size)
		l->new_file = true;
	else
		l->block_device = S_ISBLK(sb.st_mode);
}

/*
 * Thread k of the template writes [offset + k * offset_increment, + size):
 * the regions the layout writes, one thread each when offset_increment
 * moves them apart, else one region for all threads.
 */
static unsigned int layout_threads(const struct bench_job_opts *t)
{
	return t->offset_increment ? t->numjobs : 1;
}

static void layout_region(const struct bench_job_opts *t, unsigned int k,
			  uint64_t capacity, uint64_t *start, uint64_t *len)
{
	*start = t->offset + (uint64_t)k * t->offset_increment;
	if (*start >= capacity)
		*len = 0;
	else if (t->size && t->size < capacity - *start)
		*len = t->size;
	else
		*len = capacity - *start;
	/* the rows use whole blocks */
	*len -= *len % t->bs;
}

/*
 * Does a region of the file have a hole?  SEEK_HOLE gives the first hole
 * at or after the start (the end of the file counts as one); file systems
 * without hole tracking report none but the end.  Errors count as holes:
 * the layout is then written, which is always right.
 */
static bool file_has_hole(const char *path, const struct bench_job_opts *t,
			  uint64_t capacity)
{
	unsigned int k;
	bool hole = false;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	for (k = 0; k < layout_threads(t) && !hole; k++) {
		uint64_t start, len;
		off_t h;

		layout_region(t, k, capacity, &start, &len);
		if (!len)
			continue;
		h = lseek(fd, (off_t)start, SEEK_HOLE);
		hole = h < 0 || (uint64_t)h < start + len;
	}
	close(fd);
	return hole;
}

/*
 * fdatasync() the file, so that the rows do not meet the write-back of
 * what came before them (@what: the step, for the message).
 */
static int file_flush(const char *path, const char *what, char *err,
		      size_t errlen)
{
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fdatasync(fd)) {
		ret = -errno;
		snprintf(err, errlen, "%s: flushing %s: %s", what, path,
			 strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/* A number from the first line of @path ("max" and errors: UINT64_MAX). */
static uint64_t read_u64(const char *path)
{
	unsigned long long v;
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return UINT64_MAX;
	ok = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	return ok ? v : UINT64_MAX;
}

/*
 * Memory this process may still fill, bytes: MemAvailable, and under a
 * memory cgroup (v2 memory.max, v1 memory.limit_in_bytes) what is left of
 * its limit.  UINT64_MAX when unknown.
 */
static uint64_t mem_available(void)
{
	uint64_t avail = UINT64_MAX, lim, use;
	unsigned long long kb;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			avail = (uint64_t)kb * 1024;
	if (f)
		fclose(f);
	lim = read_u64("/sys/fs/cgroup/memory.max");
	use = read_u64("/sys/fs/cgroup/memory.current");
	if (lim == UINT64_MAX) {
		lim = read_u64("/sys/fs/cgroup/memory/memory.limit_in_bytes");
		use = read_u64("/sys/fs/cgroup/memory/memory.usage_in_bytes");
	}
	if (lim != UINT64_MAX && use != UINT64_MAX && lim > use &&
	    lim - use < avail)
		avail = lim - use;
	return avail;
}

int bench_layout(const struct bench_opts *o, const char *devname,
		 struct blk_dev *dev, struct bench_layout *l, char *err,
		 size_t errlen)
{
	const struct bench_job_opts *t = &o->jobs[0];
	struct bench_run_result res;
	struct bench_job_opts *lj;
	struct bench_opts *lo;
	struct blk_dev_info info;
	uint64_t t0, start, len;
	unsigned int i;
	int ret;

	blk_dev_get_info(dev, &info);
	l->bs = t->bs;
	for (i = 0; i < layout_threads(t); i++) {
		layout_region(t, i, info.capacity, &start, &len);
		l->bytes += len;
	}
	/* the host driver cannot know that its namespace stores nothing */
	if (!info.stores_data || bench_dev_on_null(&o->dev, devname)) {
		l->state = BENCH_LAYOUT_NO_DATA;
		l->reason = "stores no data";
		l->bytes = 0;
		return 0;
	}
	/* verify=null writes nothing for the read rows to check */
	l->verify = t->verify != VERIFY_NONE && t->verify != VERIFY_NULL;
	l->verify_method = (uint8_t)t->verify;
	/*
	 * A memory device laid out beyond the memory there is would be
	 * killed by the kernel with no word (seen in a 300 MiB cgroup).
	 */
	if (!l->filename && l->bytes > mem_available()) {
		char need[32], have[32];

		snprintf(err, errlen,
			 "layout: %s: writing %s would need more memory than this machine (or its memory cgroup) has available, %s; give a smaller dev_size=",
			 devname, bench_fmt_bytes(need, sizeof(need), l->bytes),
			 bench_fmt_bytes(have, sizeof(have), mem_available()));
		return -ENOMEM;
	}
	if (!l->filename) {
		l->reason = "new device";
	} else if (l->verify) {
		/* the blocks must carry the headers the read rows check */
		l->reason = verify_reason[t->verify];
	} else if (l->new_file) {
		l->reason = "new file";
	} else if (l->block_device) {
		/* as fio: a block device is read as it is */
		l->state = BENCH_LAYOUT_KEPT;
		l->reason = "block device";
		return 0;
	} else if (file_has_hole(l->filename, t, info.capacity)) {
		l->reason = "file has holes";
	} else {
		l->state = BENCH_LAYOUT_KEPT;
		l->reason = "file holds data";
		return 0;
	}

	lo = malloc(sizeof(*lo));
	if (!lo) {
		snprintf(err, errlen, "layout: out of memory");
		return -ENOMEM;
	}
	*lo = *o;
	lo->nr_jobs = 1;
	lj = &lo->jobs[0];
	*lj = *t;
	snprintf(lj->name, sizeof(lj->name), "layout");
	lj->rw = RW_WRITE;
	lj->has_rw = true;
	lj->numjobs = layout_threads(t);
	/* each region once: size-based, no ramp, no runtime limit */
	lj->time_based = false;
	lj->runtime_ns = 0;
	lj->ramp_time_ns = 0;
	lj->io_size = 0;
	lj->loops = 1;
	lj->stonewall = 0;
	/* headers (with verify) but no read-back: the read rows check them */
	lj->do_verify = false;
	lj->verify_only = false;
	/* nobody reads its latencies */
	lj->gtod_reduce = true;

	l->state = BENCH_LAYOUT_WRITTEN;
	t0 = bench_gettime_ns();
	ret = bench_run_on(lo, devname, dev, &res, err, errlen);
	free(lo);
	if (ret)
		return ret;
	for (i = 0; i < res.nr_jobs && !ret; i++) {
		if (!res.jobs[i].error)
			continue;
		snprintf(err, errlen, "layout of %s (job %u): %s", devname,
			 res.jobs[i].jobnum, res.jobs[i].errmsg);
		ret = res.jobs[i].error < 0 ? res.jobs[i].error : -EIO;
	}
	l->bytes = 0;
	for (i = 0; i < res.nr_jobs; i++)
		l->bytes += res.jobs[i].dir[DDIR_WRITE].bytes;
	for (i = 0; i < BLK_STAT_NR_DIRS; i++)
		l->requests += res.disk.ios[i];
	bench_run_result_free(&res);
	l->interrupted = atomic_load(&bench_interrupted) != 0;
	if (!ret && l->filename && !l->interrupted) {
		ret = file_flush(l->filename, "layout", err, errlen);
		l->flushed = !ret;
	}
	l->ns = bench_gettime_ns() - t0;
	return ret;
}

int bench_layout_settle(struct bench_layout *l, char *err, size_t errlen)
{
	uint64_t t0;
	int ret;

	if (!l->filename)
		return 0;
	t0 = bench_gettime_ns();
	ret = file_flush(l->filename, "after a write row", err, errlen);
	l->settle_ns += bench_gettime_ns() - t0;
	if (!ret)
		l->settles++;
	return ret;
}
