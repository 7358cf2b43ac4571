// SPDX-License-Identifier: MIT
/*
 * Sparse page store - see page_store.h for the design and its measurements.
 */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <sys/sysinfo.h>
#include <urcu/urcu-bp.h>

#include "page_store.h"

#define LEAF_BYTES ((uint64_t)PS_LEAF_PAGES << PS_PAGE_SHIFT)
#define likely(x) __builtin_expect(!!(x), 1)
#define PS_TOP_HEAP_MAX (1u << 20)
/* Pages ps_zero() unlinks before giving them back in one go: 4 KiB of
 * stack, and runs of adjacent pages long enough for one madvise each. */
#define FREE_BATCH 512

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Slabs of address space to reserve: enough for every page of the device,
 * but never more than the machine could hold (RAM + swap: pages beyond
 * that could not be committed anyway) or half what RLIMIT_AS or RLIMIT_DATA
 * allow, nor more than 32-bit page numbers
 * can name (16 TiB); plus the slack.  So a sparse device far larger than
 * the machine costs address space in proportion to the machine.
 */
static uint64_t ps_region_slabs(uint64_t capacity)
{
	uint64_t slabs = (capacity + PS_SLAB_SIZE - 1) / PS_SLAB_SIZE;
	uint64_t max = (UINT32_MAX >> PS_SLAB_SHIFT) - PS_SLAB_SLACK - 1;
	struct sysinfo si;

	struct rlimit rl;
	int r;

	if (!sysinfo(&si)) {
		uint64_t mem = ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;

		if (mem / PS_SLAB_SIZE + 1 < max)
			max = mem / PS_SLAB_SIZE + 1;
	}
	/* a limit on address space (ulimit -v) or on private writable
	 * mappings (ulimit -d): half of it, the rest for everything else */
	for (r = 0; r < 2; r++) {
		if (!getrlimit(r ? RLIMIT_DATA : RLIMIT_AS, &rl) &&
		    rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur / 2 / PS_SLAB_SIZE + 1 < max)
			max = rl.rlim_cur / 2 / PS_SLAB_SIZE + 1;
	}
	return (slabs < max ? slabs : max) + PS_SLAB_SLACK;
}

int ps_init(struct page_store *ps, uint64_t capacity)
{
	uint64_t nr_slabs;

	memset(ps, 0, sizeof(*ps));
	if (!capacity)
		return -EINVAL;
	if (capacity > PS_MAX_CAPACITY)
		return -EFBIG;
	ps->capacity = capacity;
	ps->nr_leaves = (capacity + LEAF_BYTES - 1) / LEAF_BYTES;
	ps->nr_top = ((ps->nr_leaves - 1) >> PS_TOP_SHIFT) + 1;
	ps->top_words = (ps->nr_top + 63) / 64;
	nr_slabs = ps_region_slabs(capacity);
	ps->map_len = (nr_slabs + 1) * PS_SLAB_SIZE; /* + 1: to align */
	ps->alloc.free_cap = nr_slabs << PS_SLAB_SHIFT;
	/* all four address space only: committed where written */
	/*
	 * The top array from the heap up to 1 MiB (devices to 8 PiB), where
	 * leak checkers scan for the tables it points to (LeakSanitizer does
	 * not scan anonymous mappings: a fuzz harness's device that is never
	 * closed showed every table as leaked); beyond, address space only.
	 */
	if (ps->nr_top * sizeof(*ps->top) <= PS_TOP_HEAP_MAX)
		ps->top = calloc(ps->nr_top, sizeof(*ps->top));
	else
		ps->top = map_anon(ps->nr_top * sizeof(*ps->top));
	ps->top_map = map_anon(ps->top_words * sizeof(*ps->top_map));
	ps->map = map_anon(ps->map_len);
	ps->alloc.free = map_anon(ps->alloc.free_cap * sizeof(*ps->alloc.free));
	if (!ps->top || !ps->top_map || !ps->map || !ps->alloc.free) {
		ps_destroy(ps);
		return -ENOMEM;
	}
	ps->region = (char *)(((uintptr_t)ps->map + PS_SLAB_SIZE - 1) &
			      ~(uintptr_t)(PS_SLAB_SIZE - 1));
	ps->region_end = ps->region + nr_slabs * PS_SLAB_SIZE;
	/*
	 * Small pages unless a slab asks for a huge one (ps_slab_commit()):
	 * where transparent huge pages are on for every mapping, a slow huge
	 * page could not be refused otherwise.
	 */
	madvise(ps->region, nr_slabs * PS_SLAB_SIZE, MADV_NOHUGEPAGE);
	ps->alloc.next = ps->alloc.populated = ps->region;
	ps->alloc.explore_every = ps->alloc.explore_at = PS_THP_EXPLORE;
	blk_mutex_init(&ps->alloc.lock, "&page_store->alloc.lock",
		       PTHREAD_MUTEX_ADAPTIVE_NP);
	return 0;
}

/* The first set top entry at or after @t; ps->nr_top if none. */
static uint64_t ps_next_top(const struct page_store *ps, uint64_t t)
{
	uint64_t w = t / 64, bits;

	if (t >= ps->nr_top)
		return ps->nr_top;
	bits = atomic_load_explicit(&ps->top_map[w], memory_order_relaxed) &
	       (~0ull << (t % 64));
	while (!bits) {
		if (++w >= ps->top_words)
			return ps->nr_top;
		bits = atomic_load_explicit(&ps->top_map[w],
					    memory_order_relaxed);
	}
	t = w * 64 + (uint64_t)__builtin_ctzll(bits);
	return t < ps->nr_top ? t : ps->nr_top;
}

void ps_destroy(struct page_store *ps)
{
	uint64_t t;
	unsigned int i, j;

	/* only the top entries set: the cost follows the data */
	for (t = 0; ps->top && ps->top_map && (t = ps_next_top(ps, t)) < ps->nr_top;
	     t++) {
		struct ps_table *mid = atomic_load_explicit(&ps->top[t],
							    memory_order_relaxed);

		for (i = 0; mid && i < PS_TBL_SLOTS; i++) {
			struct ps_table *lt = atomic_load_explicit(
				&mid->slot[i], memory_order_relaxed);

			for (j = 0; lt && j < PS_TBL_SLOTS; j++)
				free(atomic_load_explicit(&lt->slot[j],
							  memory_order_relaxed));
			free(lt);
		}
		free(mid);
	}
	if (ps->top && ps->nr_top * sizeof(*ps->top) <= PS_TOP_HEAP_MAX)
		free(ps->top);
	else if (ps->top)
		munmap(ps->top, ps->nr_top * sizeof(*ps->top));
	ps->top = NULL;
	if (ps->top_map)
		munmap(ps->top_map, ps->top_words * sizeof(*ps->top_map));
	ps->top_map = NULL;
	if (ps->map)
		munmap(ps->map, ps->map_len);
	if (ps->alloc.free)
		munmap(ps->alloc.free, ps->alloc.free_cap * sizeof(*ps->alloc.free));
	if (ps->region)
		blk_mutex_destroy(&ps->alloc.lock);
	ps->map = ps->region = NULL;
	ps->alloc.free = NULL;
}

static inline void counter_add(_Atomic uint64_t *c, int64_t n)
{
	/* single writer (the allocator lock holder): no RMW needed */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) +
				 (uint64_t)n, memory_order_relaxed);
}

static inline char *pg_addr(const struct page_store *ps, uint32_t id)
{
	return ps->region + ((size_t)(id - 1) << PS_PAGE_SHIFT);
}

static inline uint32_t pg_id(const struct page_store *ps, const char *p)
{
	return (uint32_t)((size_t)(p - ps->region) >> PS_PAGE_SHIFT) + 1;
}

static uint64_t ps_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Commit the slab at @slab in one call rather than a fault per page
 * (without MADV_POPULATE_WRITE, kernels before 5.14, the pages fault in on
 * first write instead: only slower), as a transparent huge page or as
 * small pages, whichever has cost less lately (page_store.h): an average
 * of the time each kind took, the other kind tried every
 * PS_THP_EXPLORE slabs.  Called with the allocator lock held.
 */
static void ps_slab_commit(struct ps_alloc *a, char *slab)
{
	uint64_t t0, dt, *avg;
	bool thp, cheaper, explore = false;

	if (a->thp_broken) {
		thp = false;
	} else if (!a->avg_thp_ns || !a->avg_small_ns) {
		thp = !a->avg_thp_ns; /* try each once */
	} else {
		cheaper = a->avg_thp_ns <= a->avg_small_ns;
		explore = ++a->nr_slabs >= a->explore_at;
		thp = cheaper ^ explore;
	}
	/* a mapping count limit (vm.max_map_count) can refuse the split */
	if (thp && madvise(slab, PS_SLAB_SIZE, MADV_HUGEPAGE)) {
		a->thp_broken = true;
		thp = false;
	}
	t0 = ps_now_ns();
	madvise(slab, PS_SLAB_SIZE, MADV_POPULATE_WRITE);
	dt = ps_now_ns() - t0;
	avg = thp ? &a->avg_thp_ns : &a->avg_small_ns;
	*avg = *avg ? (*avg * 7 + dt) / 8 : dt;
	if (explore) {
		/*
		 * The dearer kind, tried again: still dearer, try it half as
		 * often (a cold huge page costs 7x a small one here); cheaper
		 * now, it is taken from the next slab on.
		 */
		if ((a->avg_thp_ns <= a->avg_small_ns) == cheaper) {
			if (a->explore_every < PS_THP_EXPLORE_MAX)
				a->explore_every *= 2;
		} else {
			a->explore_every = PS_THP_EXPLORE;
		}
		a->explore_at = a->nr_slabs + a->explore_every;
	}
	if (thp)
		a->thp_slabs++;
	else
		a->small_slabs++;
}

/* A zero-filled page's number, or 0 when the region is used up. */
static uint32_t ps_page_alloc(struct page_store *ps)
{
	struct ps_alloc *a = &ps->alloc;
	uint32_t p = 0;

	blk_mutex_lock(&a->lock);
	if (a->nr_free) {
		/* given back with DONTNEED: the next write faults a zero page */
		p = a->free[--a->nr_free];
		atomic_store_explicit(&a->nr_free_pub, a->nr_free,
				      memory_order_relaxed);
	} else {
		if (a->next == a->populated && a->populated < ps->region_end) {
			ps_slab_commit(a, a->populated);
			a->populated += PS_SLAB_SIZE;
			atomic_store_explicit(&a->committed_end,
					      (uint64_t)(a->populated - ps->region),
					      memory_order_relaxed);
		}
		if (a->next < a->populated) {
			p = pg_id(ps, a->next);
			a->next += PS_PAGE_SIZE;
		}
	}
	if (p)
		counter_add(&ps->nr_pages, 1);
	blk_mutex_unlock(&a->lock);
	return p;
}

/*
 * Give @n unlinked pages back to the kernel, then to the free list.  The
 * order matters: a page on the free list may be handed to a writer at
 * once, and a DONTNEED after its write would lose the data.
 */
static void ps_pages_free(struct page_store *ps, const uint32_t *pages,
			  unsigned int n)
{
	struct ps_alloc *a = &ps->alloc;
	unsigned int i, run;

	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && pages[i + run] == pages[i] + run; run++)
			;
		madvise(pg_addr(ps, pages[i]), (size_t)run * PS_PAGE_SIZE,
			MADV_DONTNEED);
	}
	blk_mutex_lock(&a->lock);
	/* cannot overflow: free_cap is every page of the region */
	memcpy(&a->free[a->nr_free], pages, n * sizeof(*pages));
	a->nr_free += n;
	atomic_store_explicit(&a->nr_free_pub, a->nr_free, memory_order_relaxed);
	if (a->nr_free * sizeof(*pages) > atomic_load_explicit(&a->free_high,
							      memory_order_relaxed))
		atomic_store_explicit(&a->free_high,
				      (a->nr_free * sizeof(*pages) + PS_PAGE_SIZE - 1) &
				      ~(uint64_t)(PS_PAGE_SIZE - 1),
				      memory_order_relaxed);
	counter_add(&ps->nr_pages, -(int64_t)n);
	blk_mutex_unlock(&a->lock);
}

/*
 * The object in @slot, or, for @create, a new zeroed one of @size bytes
 * installed there (two threads racing: the loser frees its own and takes
 * the winner's).  NULL: none, or no memory.
 */
static void *ps_slot_get(struct page_store *ps, _Atomic(void *) *slot,
			 size_t size, bool create, bool *made)
{
	void *p = atomic_load_explicit(slot, memory_order_acquire);
	void *expected = NULL;

	if (p || !create)
		return p;
	p = calloc(1, size);
	if (!p)
		return NULL;
	if (!atomic_compare_exchange_strong_explicit(slot, &expected, p,
						     memory_order_acq_rel,
						     memory_order_acquire)) {
		free(p);
		return expected;
	}
	atomic_fetch_add_explicit(&ps->nr_leaf_bytes,
				  malloc_usable_size(p) + sizeof(size_t),
				  memory_order_relaxed);
	*made = true;
	return p;
}

/* Leaf @idx (of 256 KiB of the device); for @create, made with the tables
 * above it where missing.  NULL: never written, or no memory. */
static struct ps_leaf *ps_get_leaf(struct page_store *ps, uint64_t idx,
				   bool create)
{
	uint64_t t = idx >> PS_TOP_SHIFT;
	struct ps_table *mid, *lt;
	struct ps_leaf *l;
	bool made = false;

	/* the fast path: three loads, no call */
	mid = atomic_load_explicit(&ps->top[t], memory_order_acquire);
	if (likely(mid)) {
		lt = atomic_load_explicit(&mid->slot[(idx >> PS_TBL_SHIFT) &
						     (PS_TBL_SLOTS - 1)],
					  memory_order_acquire);
		if (likely(lt)) {
			l = atomic_load_explicit(&lt->slot[idx & (PS_TBL_SLOTS - 1)],
						 memory_order_acquire);
			if (likely(l) || !create)
				return l;
		}
	}
	if (!create)
		return NULL;
	mid = ps_slot_get(ps, (_Atomic(void *) *)&ps->top[t], sizeof(*mid),
			  create, &made);
	if (made) {
		atomic_fetch_or_explicit(&ps->top_map[t / 64], 1ull << (t % 64),
					 memory_order_relaxed);
		atomic_fetch_add_explicit(&ps->nr_top_made, 1,
					  memory_order_relaxed);
	}
	if (!mid)
		return NULL;
	lt = ps_slot_get(ps, &mid->slot[(idx >> PS_TBL_SHIFT) & (PS_TBL_SLOTS - 1)],
			 sizeof(*lt), create, &made);
	if (!lt)
		return NULL;
	return ps_slot_get(ps, &lt->slot[idx & (PS_TBL_SLOTS - 1)],
			   sizeof(struct ps_leaf), create, &made);
}

/*
 * Leaves from @idx on that lie under no table of leaves: the rest of the
 * missing tables there (whole top entries at a time where those are
 * unset).  0 when the table of leaves holding @idx exists.
 */
static uint64_t ps_empty_leaves(struct page_store *ps, uint64_t idx)
{
	uint64_t cur = idx;

	while (cur < ps->nr_leaves) {
		uint64_t t = cur >> PS_TOP_SHIFT;
		struct ps_table *mid = atomic_load_explicit(&ps->top[t],
							    memory_order_acquire);

		if (!mid) {
			cur = ps_next_top(ps, t + 1) << PS_TOP_SHIFT;
			continue;
		}
		if (atomic_load_explicit(&mid->slot[(cur >> PS_TBL_SHIFT) &
						    (PS_TBL_SLOTS - 1)],
					 memory_order_acquire))
			break;
		cur = ((cur >> PS_TBL_SHIFT) + 1) << PS_TBL_SHIFT;
	}
	if (cur > ps->nr_leaves)
		cur = ps->nr_leaves;
	return cur - idx;
}

/*
 * Pages from @pgno under no table of leaves (ps_empty_leaves()), counted
 * from @pgno itself.  0 when @pgno's table of leaves exists.
 */
static uint64_t ps_empty_pages(struct page_store *ps, uint64_t pgno)
{
	uint64_t leaves = ps_empty_leaves(ps, pgno >> PS_LEAF_SHIFT);

	return leaves ? (leaves << PS_LEAF_SHIFT) - (pgno & (PS_LEAF_PAGES - 1)) : 0;
}

/* Where ps_rw() stands in the caller's iovec array. */
struct iov_pos {
	const struct iovec *iov;
	unsigned int vi, iovcnt;
	size_t voff;
};

/* Copy @n bytes between @mem (NULL: zeros, for reads) and the iovecs. */
static void iov_copy(struct iov_pos *ip, int write, char *mem, uint64_t n)
{
	while (n && ip->vi < ip->iovcnt) {
		const struct iovec *v = &ip->iov[ip->vi];
		char *ubuf = (char *)v->iov_base + ip->voff;
		size_t c = v->iov_len - ip->voff;

		if (c > n)
			c = n;
		if (write)
			memcpy(mem, ubuf, c);
		else if (mem)
			memcpy(ubuf, mem, c);
		else
			memset(ubuf, 0, c);
		if (mem)
			mem += c;
		n -= c;
		ip->voff += c;
		if (ip->voff == v->iov_len) {
			ip->vi++;
			ip->voff = 0;
		}
	}
}

/* The page for a write into slot @slot: the one there or a new one. */
static char *ps_page_for_write(struct page_store *ps, _Atomic uint32_t *slot)
{
	uint32_t p = atomic_load_explicit(slot, memory_order_acquire);
	uint32_t np, expected = 0;

	if (p)
		return pg_addr(ps, p);
	np = ps_page_alloc(ps);
	if (!np)
		return NULL;
	if (atomic_compare_exchange_strong_explicit(slot, &expected, np,
						    memory_order_acq_rel,
						    memory_order_acquire))
		return pg_addr(ps, np);
	ps_pages_free(ps, &np, 1); /* another writer installed one first */
	return pg_addr(ps, expected);
}

/* One leaf's share of ps_rw(): [@offset, @offset + @len) within leaf @l. */
static int ps_leaf_rw(struct page_store *ps, struct ps_leaf *l, int write,
		      uint64_t offset, uint64_t len, struct iov_pos *ip)
{
	int ret = 0;

	/* held over the copies: ps_zero() cannot free a page under them */
	urcu_bp_read_lock();
	while (len) {
		unsigned int pidx = (offset >> PS_PAGE_SHIFT) & (PS_LEAF_PAGES - 1);
		unsigned int poff = offset & (PS_PAGE_SIZE - 1);
		uint64_t n = PS_PAGE_SIZE - poff;
		char *p;

		if (n > len)
			n = len;
		if (write) {
			p = ps_page_for_write(ps, &l->page[pidx]);
			if (!p) {
				ret = -ENOMEM;
				break;
			}
		} else {
			uint32_t id = atomic_load_explicit(&l->page[pidx],
							   memory_order_acquire);

			p = id ? pg_addr(ps, id) : NULL;
		}
		iov_copy(ip, write, p ? p + poff : NULL, n);
		offset += n;
		len -= n;
	}
	urcu_bp_read_unlock();
	return ret;
}

int ps_rw(struct page_store *ps, int write, uint64_t offset, uint64_t len,
	  const struct iovec *iov, unsigned int iovcnt)
{
	struct iov_pos ip = { .iov = iov, .iovcnt = iovcnt };

	while (len && ip.vi < iovcnt) {
		uint64_t li = offset / LEAF_BYTES;
		uint64_t n = (li + 1) * LEAF_BYTES - offset;
		struct ps_leaf *l = ps_get_leaf(ps, li, write);
		int ret;

		if (n > len)
			n = len;
		if (l) {
			ret = ps_leaf_rw(ps, l, write, offset, n, &ip);
			if (ret)
				return ret;
		} else if (write) {
			return -ENOMEM;
		} else {
			iov_copy(&ip, 0, NULL, n); /* nothing written here */
		}
		offset += n;
		len -= n;
	}
	return 0;
}

/*
 * Free the pages ps_zero() unlinked: once every copy that may have loaded
 * their pointers is over (an RCU grace period), give them back.
 */
static void ps_zero_flush(struct page_store *ps, const uint32_t *batch,
			  unsigned int nb)
{
	if (!nb)
		return;
	urcu_bp_synchronize_rcu();
	ps_pages_free(ps, batch, nb);
}

int ps_zero(struct page_store *ps, uint64_t offset, uint64_t len)
{
	uint32_t batch[FREE_BATCH];
	unsigned int nb = 0;

	while (len) {
		uint64_t pgno = offset >> PS_PAGE_SHIFT;
		unsigned int poff = offset & (PS_PAGE_SIZE - 1);
		uint64_t n = PS_PAGE_SIZE - poff;
		struct ps_leaf *l = ps_get_leaf(ps, pgno >> PS_LEAF_SHIFT, false);
		_Atomic uint32_t *slot;
		uint32_t id;

		if (n > len)
			n = len;
		if (!l) {
			/* nothing written in this leaf: skip to its end, or to
			 * the next table of leaves (a discard of a whole 1 EiB
			 * device walks the tables made, not 2^42 leaves) */
			uint64_t empty = ps_empty_pages(ps, pgno);

			n = empty ? (empty << PS_PAGE_SHIFT) - poff :
				    ((pgno >> PS_LEAF_SHIFT) + 1) * LEAF_BYTES - offset;
			if (n > len)
				n = len;
			goto next;
		}
		slot = &l->page[pgno & (PS_LEAF_PAGES - 1)];
		if (!atomic_load_explicit(slot, memory_order_relaxed))
			goto next;
		if (n == PS_PAGE_SIZE) {
			id = atomic_exchange_explicit(slot, 0, memory_order_acq_rel);
			if (id)
				batch[nb++] = id;
			if (nb == FREE_BATCH) {
				ps_zero_flush(ps, batch, nb);
				nb = 0;
			}
		} else {
			/* a read-side section: the page cannot be freed under
			 * the memset by a discard of the whole page */
			urcu_bp_read_lock();
			id = atomic_load_explicit(slot, memory_order_acquire);
			if (id)
				memset(pg_addr(ps, id) + poff, 0, n);
			urcu_bp_read_unlock();
		}
next:
		offset += n;
		len -= n;
	}
	ps_zero_flush(ps, batch, nb);
	return 0;
}

int ps_allocated(struct page_store *ps, uint64_t offset)
{
	uint64_t pgno = offset >> PS_PAGE_SHIFT;
	struct ps_leaf *l = ps_get_leaf(ps, pgno >> PS_LEAF_SHIFT, false);

	return l && atomic_load_explicit(&l->page[pgno & (PS_LEAF_PAGES - 1)],
					 memory_order_relaxed);
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

/* Pages from @pgno to the end of its leaf (at most @max) in the same
 * state as the first; a missing leaf is one hole. */
static unsigned int ps_run(struct page_store *ps, uint64_t pgno,
			   unsigned int max, bool *present)
{
	struct ps_leaf *l = ps_get_leaf(ps, pgno >> PS_LEAF_SHIFT, false);
	unsigned int pidx = pgno & (PS_LEAF_PAGES - 1);
	unsigned int n;

	if (!l) {
		*present = false;
		return max;
	}
	*present = atomic_load_explicit(&l->page[pidx], memory_order_relaxed);
	for (n = 1; n < max; n++)
		if (!atomic_load_explicit(&l->page[pidx + n],
					  memory_order_relaxed) == *present)
			break;
	return n;
}

int ps_block_status(struct page_store *ps, uint64_t offset, uint64_t len,
		    struct blk_extent *ext, unsigned int nr_ext)
{
	unsigned int n = 0;

	while (len) {
		uint64_t pgno = offset >> PS_PAGE_SHIFT;
		unsigned int pidx = pgno & (PS_LEAF_PAGES - 1);
		unsigned int pages;
		uint64_t bytes;
		uint32_t flags;
		bool present;

		uint64_t empty = ps_empty_pages(ps, pgno);

		if (empty) {
			/* a hole as long as the missing tables of leaves */
			present = false;
			bytes = empty >= (len >> PS_PAGE_SHIFT) + 1 ? len :
				(empty << PS_PAGE_SHIFT) -
				(offset & (PS_PAGE_SIZE - 1));
		} else {
			pages = ps_run(ps, pgno, PS_LEAF_PAGES - pidx, &present);
			bytes = ((uint64_t)pages << PS_PAGE_SHIFT) -
				(offset & (PS_PAGE_SIZE - 1));
		}
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

uint64_t ps_data_bytes(struct page_store *ps)
{
	return atomic_load_explicit(&ps->nr_pages, memory_order_relaxed)
	       << PS_PAGE_SHIFT;
}

uint64_t ps_committed_bytes(struct page_store *ps)
{
	uint64_t nr_free = atomic_load_explicit(&ps->alloc.nr_free_pub,
						memory_order_relaxed);
	uint64_t slabs = atomic_load_explicit(&ps->alloc.committed_end,
					      memory_order_relaxed);
	uint64_t made = atomic_load_explicit(&ps->nr_top_made,
					     memory_order_relaxed);
	uint64_t top_pages = (ps->nr_top * sizeof(*ps->top) + PS_PAGE_SIZE - 1) /
			     PS_PAGE_SIZE;
	uint64_t map_pages = (ps->top_words * sizeof(*ps->top_map) +
			      PS_PAGE_SIZE - 1) / PS_PAGE_SIZE;

	/*
	 * The top array and its bitmap: each entry set wrote one page of
	 * each at most.  The free list: the pages it has grown through (a
	 * page it shrank back from stays committed).
	 */
	return slabs - (nr_free << PS_PAGE_SHIFT) +
	       atomic_load_explicit(&ps->nr_leaf_bytes, memory_order_relaxed) +
	       ((made < top_pages ? made : top_pages) +
		(made < map_pages ? made : map_pages)) * PS_PAGE_SIZE +
	       atomic_load_explicit(&ps->alloc.free_high, memory_order_relaxed);
}
