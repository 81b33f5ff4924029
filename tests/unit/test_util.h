/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the unit tests.
 */
#ifndef _PVPROF_TEST_UTIL_H
#define _PVPROF_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>
#include <check.h>

#include "core/host_vcpu.h"
#include "core/guest.h"
#include "core/callchain.h"
#include "core/stream.h"
#include "core/sideband.h"

#define KADDR(n)	(0xffffffff81000000ULL + (n))
#define UADDR(n)	(0x0000555555554000ULL + (n))

/* A zeroed, page-aligned buffer of a legal size, freed by the caller. */
static inline void *test_buffer(__u32 size)
{
	void *p = aligned_alloc(PVPROF_PAGE_SIZE, size);

	ck_assert_ptr_nonnull(p);
	memset(p, 0, size);
	return p;
}

/* A well-formed callchain in an aligned slot-sized buffer. */
struct test_slot {
	union {
		struct pvprof_callchain chain;
		__u64 words[PVPROF_CHAIN_SLOT_SIZE / 8];
	};
};

static inline void test_kernel_chain(struct test_slot *s, __u64 seq,
				      __u32 nr_kernel, __u32 nr_user)
{
	__u32 i;

	memset(s, 0, sizeof(*s));
	pvprof_callchain_init(&s->chain, seq, 0);
	s->chain.nr_kernel = nr_kernel;
	s->chain.nr_user = nr_user;
	for (i = 0; i < nr_kernel; i++)
		pvprof_callchain_frames(&s->chain)[i] = KADDR(16 * i);
	for (; i < nr_kernel + nr_user; i++)
		pvprof_callchain_frames(&s->chain)[i] = UADDR(16 * i);
	pvprof_callchain_finish(&s->chain, PVPROF_MAX_DEPTH);
}

Suite *layout_suite(void);
Suite *ring_suite(void);
Suite *host_suite(void);
Suite *callchain_suite(void);
Suite *guest_suite(void);
Suite *stream_suite(void);
Suite *sideband_suite(void);

#endif /* _PVPROF_TEST_UTIL_H */
