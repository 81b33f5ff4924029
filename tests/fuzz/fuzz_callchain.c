// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the host's validation of a guest-written callchain slot.
 *
 * Input: 4 bytes of host state (max_depth in the low 7 bits and "asks for
 * 8192 bytes of user stack" in the top one, answered seq, notices written
 * beyond it), then the bytes the host copied from the slot or, for a
 * callchain with a stack snapshot, from the slots it spans.  The copy is
 * handed over in a buffer of exactly that length, so AddressSanitizer
 * catches any read past it.  Whatever the validator accepts must keep the
 * books balanced and survive a stream round trip unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/host.h"
#include "core/stream.h"

#define FUZZ_CHECK(cond)	do { if (!(cond)) abort(); } while (0)

static void check_accepted(const struct pvprof_host_ring *r, const struct pvprof_callchain *chain)
{
	static __u8 st[PVPROF_STREAM_MAX_ENTRY];
	const struct pvprof_notice_facts *f = pvprof_host_notice_facts(r, chain->seq);
	__u32 nr = (__u32)chain->nr_kernel + chain->nr_user, i, len;
	struct pvprof_st_view v;

	if (chain->flags & PVPROF_CHAIN_F_USTACK) {
		const struct pvprof_ustack *us = (const void *)((const __u8 *)chain +
								pvprof_callchain_bytes(nr));

		FUZZ_CHECK(r->ustack_size && us->size <= r->ustack_size);
		FUZZ_CHECK(chain->size == pvprof_callchain_ustack_bytes(nr, us->size));
		FUZZ_CHECK(chain->nr_user &&
			   us->regs[PVPROF_UREG_IP] == pvprof_callchain_frame(chain, chain->nr_kernel));
	} else {
		FUZZ_CHECK(chain->size == 40 + 8 * nr);
	}
	FUZZ_CHECK(nr <= r->max_depth);
	FUZZ_CHECK(chain->seq == r->resolved_seq && chain->seq <= r->notice_head);
	for (i = 0; i < nr; i++)
		FUZZ_CHECK(i < chain->nr_kernel ? pvprof_callchain_frame(chain, i) >= PVPROF_KERNEL_HALF_START :
			   pvprof_callchain_frame(chain, i) < PVPROF_USER_HALF_END);

	len = pvprof_st_put_callchain(st, sizeof(st), 1, 2, f, chain);
	FUZZ_CHECK(len == sizeof(struct pvprof_st_callchain) - sizeof(*chain) + chain->size);
	FUZZ_CHECK(pvprof_st_decode(st, len, &v) == PVPROF_ST_OK);
	FUZZ_CHECK(v.nr_frames == nr);
	FUZZ_CHECK(!memcmp(v.raw + sizeof(struct pvprof_st_callchain) - sizeof(*chain), chain,
			   chain->size));
	FUZZ_CHECK(!v.ustack_data == !(chain->flags & PVPROF_CHAIN_F_USTACK));
	for (i = 0; i < nr; i++)
		FUZZ_CHECK(pvprof_st_frame(&v, i) == pvprof_callchain_frame(chain, i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pvprof_host_ring r = { 0 };
	struct pvprof_vcpu_acct acct;
	enum pvprof_reject reason;
	__u64 answered, head;
	__u32 len;
	void *copy;

	if (size < 4 || size - 4 > PVPROF_CHAIN_SLOTS(16384) * PVPROF_CHAIN_SLOT_SIZE)
		return 0;
	if (pvprof_host_ring_init(&r, 16384, data[0] & 0x7f, 0xf00d))
		abort();
	r.ustack_size = data[0] & 0x80 ? 8192 : 0;
	answered = data[1] | (__u64)data[2] << 8;
	head = answered + data[3];
	r.resolved_seq = answered;
	r.notice_head = head;
	memset(&acct, 0, sizeof(acct));
	acct.notices = head;
	acct.losses[PVPROF_LOSS_UNANSWERED] = answered;

	len = (__u32)(size - 4);
	copy = malloc(len ? len : 1);
	FUZZ_CHECK(copy);
	memcpy(copy, data + 4, len);

	reason = pvprof_host_callchain(&r, &acct, copy, len);
	FUZZ_CHECK((unsigned int)reason < PVPROF_REJ_NR);
	FUZZ_CHECK(acct.notices == pvprof_acct_notice_outcomes(&acct) +
		   pvprof_host_outstanding(&r));
	FUZZ_CHECK(r.resolved_seq <= r.notice_head);
	FUZZ_CHECK(r.chain_tail == (len > PVPROF_CHAIN_SLOT_SIZE ? PVPROF_CHAIN_SPAN(len) : 1));
	if (reason == PVPROF_REJ_NONE)
		check_accepted(&r, copy);
	else
		FUZZ_CHECK(acct.rejects[reason] == 1);
	free(copy);
	return 0;
}
