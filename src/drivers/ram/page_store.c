// SPDX-License-Identifier: MIT
/*
 * Sparse page store - see page_store.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "page_store.h"

#define CHUNK_PAGES (1u << PS_CHUNK_SHIFT)

int ps_init(struct page_store *ps, uint64_t capacity)
{
	memset(ps, 0, sizeof(*ps));
	if (!capacity)
		return -EINVAL;
	ps->capacity = capacity;
	ps->nr_chunks = (capacity + PS_CHUNK_SIZE - 1) / PS_CHUNK_SIZE;
	ps->chunks = calloc(ps->nr_chunks, sizeof(*ps->chunks));
	return ps->chunks ? 0 : -ENOMEM;
}

static void ps_chunk_free(struct ps_chunk *ch)
{
	munmap(ch->data, PS_CHUNK_SIZE);
	pthread_rwlock_destroy(&ch->lock);
	free(ch);
}

void ps_destroy(struct page_store *ps)
{
	uint64_t c;

	for (c = 0; ps->chunks && c < ps->nr_chunks; c++)
		if (ps->chunks[c])
			ps_chunk_free(ps->chunks[c]);
	free(ps->chunks);
	ps->chunks = NULL;
}

static struct ps_chunk *ps_get_chunk(struct page_store *ps, uint64_t idx,
				     int create)
{
	struct ps_chunk *ch = atomic_load_explicit(&ps->chunks[idx],
						   memory_order_acquire);
	struct ps_chunk *expected = NULL;

	if (ch || !create)
		return ch;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return NULL;
	ch->data = mmap(NULL, PS_CHUNK_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ch->data == MAP_FAILED) {
		free(ch);
		return NULL;
	}
	/*
	 * Commit the chunk's memory in one call rather than a page fault per
	 * 4 KiB page (figures in page_store.h).  Older kernels without
	 * MADV_POPULATE_WRITE fall back to faulting; it is only a speed-up.
	 */
	madvise(ch->data, PS_CHUNK_SIZE, MADV_POPULATE_WRITE);
	pthread_rwlock_init(&ch->lock, NULL);
	if (!atomic_compare_exchange_strong(&ps->chunks[idx], &expected, ch)) {
		ps_chunk_free(ch);
		ch = expected;
	}
	return ch;
}

static inline bool ps_page_present(struct ps_chunk *ch, unsigned int pidx)
{
	return atomic_load_explicit(&ch->present[pidx / 64],
				    memory_order_acquire) &
	       (1ull << (pidx % 64));
}

/* Walk [offset, offset+len) page by page against the iovecs. */
int ps_rw(struct page_store *ps, int write, uint64_t offset, uint64_t len,
	  const struct iovec *iov, unsigned int iovcnt)
{
	unsigned int vi = 0;
	size_t voff = 0;

	while (len && vi < iovcnt) {
		uint64_t pgno = offset >> PS_PAGE_SHIFT;
		unsigned int pidx = pgno & (CHUNK_PAGES - 1);
		unsigned int poff = offset & (PS_PAGE_SIZE - 1);
		uint64_t n = PS_PAGE_SIZE - poff;
		struct ps_chunk *ch = ps_get_chunk(ps, pgno >> PS_CHUNK_SHIFT, write);
		char *ubuf = (char *)iov[vi].iov_base + voff;
		char *page;

		if (n > len)
			n = len;
		if (n > iov[vi].iov_len - voff)
			n = iov[vi].iov_len - voff;
		if (!ch) {
			if (write)
				return -ENOMEM;
			memset(ubuf, 0, n);
			goto next;
		}
		page = ch->data + ((size_t)pidx << PS_PAGE_SHIFT);
		pthread_rwlock_rdlock(&ch->lock);
		if (write) {
			memcpy(page + poff, ubuf, n);
			if (!ps_page_present(ch, pidx)) {
				uint64_t bit = 1ull << (pidx % 64);
				uint64_t old = atomic_fetch_or(
					&ch->present[pidx / 64], bit);

				if (!(old & bit))
					atomic_fetch_add(&ps->nr_pages, 1);
			}
		} else if (ps_page_present(ch, pidx)) {
			memcpy(ubuf, page + poff, n);
		} else {
			memset(ubuf, 0, n);
		}
		pthread_rwlock_unlock(&ch->lock);
next:
		offset += n;
		len -= n;
		voff += n;
		if (voff == iov[vi].iov_len) {
			vi++;
			voff = 0;
		}
	}
	return 0;
}

int ps_zero(struct page_store *ps, uint64_t offset, uint64_t len)
{
	while (len) {
		uint64_t pgno = offset >> PS_PAGE_SHIFT;
		unsigned int pidx = pgno & (CHUNK_PAGES - 1);
		unsigned int poff = offset & (PS_PAGE_SIZE - 1);
		uint64_t n = PS_PAGE_SIZE - poff;
		struct ps_chunk *ch = ps_get_chunk(ps, pgno >> PS_CHUNK_SHIFT, 0);

		if (n > len)
			n = len;
		if (ch && ps_page_present(ch, pidx)) {
			char *page = ch->data + ((size_t)pidx << PS_PAGE_SHIFT);

			pthread_rwlock_wrlock(&ch->lock);
			if (n == PS_PAGE_SIZE) {
				atomic_fetch_and(&ch->present[pidx / 64],
						 ~(1ull << (pidx % 64)));
				atomic_fetch_sub(&ps->nr_pages, 1);
				/* the kernel frees it; the next touch reads zeros */
				madvise(page, PS_PAGE_SIZE, MADV_DONTNEED);
			} else {
				memset(page + poff, 0, n);
			}
			pthread_rwlock_unlock(&ch->lock);
		}
		offset += n;
		len -= n;
	}
	return 0;
}

int ps_allocated(struct page_store *ps, uint64_t offset)
{
	uint64_t pgno = offset >> PS_PAGE_SHIFT;
	struct ps_chunk *ch = ps_get_chunk(ps, pgno >> PS_CHUNK_SHIFT, 0);

	return ch && ps_page_present(ch, pgno & (CHUNK_PAGES - 1));
}

int ps_rq_rw(struct page_store *ps, struct request *rq)
{
	struct blk_bio *bio;
	int ret;

	rq_for_each_bio(bio, rq) {
		ret = ps_rw(ps, bio->bi_op == BLK_OP_WRITE, bio->bi_offset,
			    bio->bi_size, bio->bi_io_vec, bio->bi_vcnt);
		if (ret)
			return ret;
	}
	return 0;
}

/* Pages from @pidx of chunk @ch (NULL: absent) with the same state as the
 * first, at most @max; whole 64-page words are skipped at once. */
static unsigned int ps_run(struct ps_chunk *ch, unsigned int pidx,
			   unsigned int max, bool *present)
{
	unsigned int n = 0;

	if (!ch) {
		*present = false;
		return max;
	}
	*present = ps_page_present(ch, pidx);
	while (n < max) {
		unsigned int p = pidx + n;
		uint64_t w = atomic_load_explicit(&ch->present[p / 64],
						  memory_order_relaxed);

		if (!(p % 64) && max - n >= 64 && w == (*present ? ~0ull : 0)) {
			n += 64;
			continue;
		}
		if (!!(w & (1ull << (p % 64))) != *present)
			break;
		n++;
	}
	return n;
}

int ps_block_status(struct page_store *ps, uint64_t offset, uint64_t len,
		    struct blk_extent *ext, unsigned int nr_ext)
{
	unsigned int n = 0;

	while (len) {
		uint64_t pgno = offset >> PS_PAGE_SHIFT;
		unsigned int pidx = pgno & (CHUNK_PAGES - 1);
		struct ps_chunk *ch = ps_get_chunk(ps, pgno >> PS_CHUNK_SHIFT, 0);
		unsigned int pages;
		uint64_t bytes;
		uint32_t flags;
		bool present;

		pages = ps_run(ch, pidx, CHUNK_PAGES - pidx, &present);
		bytes = ((uint64_t)pages << PS_PAGE_SHIFT) -
			(offset & (PS_PAGE_SIZE - 1));
		if (bytes > len)
			bytes = len;
		flags = present ? 0 : BLK_EXTENT_HOLE | BLK_EXTENT_ZERO;
		if (n && ext[n - 1].flags == flags) {
			ext[n - 1].length += bytes;
		} else {
			if (n == nr_ext)
				break;
			ext[n].length = bytes;
			ext[n].flags = flags;
			n++;
		}
		offset += bytes;
		len -= bytes;
	}
	return (int)n;
}
