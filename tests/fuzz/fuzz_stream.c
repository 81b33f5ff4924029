// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the stream decoder, on data as hostile as a crafted
 * recording.  Every record it accepts is encoded again with the core's
 * encoders and must come out byte for byte the same (the sideband's
 * padding aside), so encoder and decoder agree on the format.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/stream.h"
#include "core/sideband.h"

#define FUZZ_CHECK(cond)	do { if (!(cond)) abort(); } while (0)

static __u8 out[PVPROF_STREAM_MAX_ENTRY];
static __u64 chain_copy[PVPROF_STREAM_MAX_ENTRY / 8];

static void reencode(const struct pvprof_st_view *v)
{
	const struct pvprof_stream_hdr *h = &v->hdr;
	struct pvprof_notice_facts f;
	__u32 len = 0;

	switch (h->type) {
	case PVPROF_ST_HELLO:
		len = pvprof_st_put_hello(out, sizeof(out), h->host_time_ns,
					  v->u.hello.nr_vcpus);
		FUZZ_CHECK(len == h->size);
		/*
		 * The decoder reads any ABI version, and the stream versions
		 * it knows (1 and 2); the encoder writes its own.
		 */
		((struct pvprof_st_hello *)out)->abi_version = v->u.hello.abi_version;
		((struct pvprof_st_hello *)out)->stream_version = v->u.hello.stream_version;
		((struct pvprof_st_hello *)out)->hdr.vcpu_id = h->vcpu_id;
		break;
	case PVPROF_ST_CALLCHAIN:
		f.ip = v->u.callchain.notice_ip;
		f.guest_tsc = v->u.callchain.guest_tsc;
		f.cpl = v->u.callchain.notice_cpl;
		f.event = v->u.callchain.event;
		f.sample_flags = v->u.callchain.sample_flags;
		f.own_nmi_samples = v->u.callchain.own_nmi_samples;
		memcpy(chain_copy, v->raw + offsetof(struct pvprof_st_callchain, chain),
		       h->size - offsetof(struct pvprof_st_callchain, chain));
		len = pvprof_st_put_callchain(out, sizeof(out), h->vcpu_id, h->host_time_ns,
					      &f, (const struct pvprof_callchain *)chain_copy);
		break;
	case PVPROF_ST_LOSS:
		len = pvprof_st_put_loss(out, sizeof(out), h->vcpu_id, h->host_time_ns,
					 v->u.loss.reason, v->u.loss.count);
		break;
	case PVPROF_ST_VCPU:
		len = pvprof_st_put_vcpu(out, sizeof(out), h->vcpu_id, h->host_time_ns,
					 v->u.vcpu.event, v->u.vcpu.size, v->u.vcpu.gpa);
		break;
	case PVPROF_ST_SIDEBAND:
		FUZZ_CHECK(pvprof_sideband_check(v->sb_msg, v->sb_len) == PVPROF_SB_OK);
		len = pvprof_st_put_sideband(out, sizeof(out), h->vcpu_id, h->host_time_ns,
					     v->sb_msg, v->sb_len);
		FUZZ_CHECK(len == h->size);
		FUZZ_CHECK(!memcmp(out, v->raw, sizeof(*h) + v->sb_len));
		return;
	default:
		return;
	}
	FUZZ_CHECK(len == h->size);
	FUZZ_CHECK(!memcmp(out, v->raw, len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pvprof_st_iter it;
	struct pvprof_st_view v;
	enum pvprof_st_status st;
	__u64 consumed = 0;

	pvprof_st_iter_init(&it, data, size);
	while ((st = pvprof_st_iter_next(&it, &v)) == PVPROF_ST_OK) {
		FUZZ_CHECK(v.hdr.size >= sizeof(v.hdr) && v.hdr.size % 8 == 0);
		FUZZ_CHECK(v.raw == data + consumed && consumed + v.hdr.size <= size);
		consumed += v.hdr.size;
		reencode(&v);
	}
	FUZZ_CHECK((unsigned int)st < PVPROF_ST_STATUS_NR);
	FUZZ_CHECK(it.pos == consumed);
	FUZZ_CHECK(st != PVPROF_ST_END || consumed == size);
	/* Errors stick. */
	FUZZ_CHECK(st == PVPROF_ST_END || pvprof_st_iter_next(&it, &v) == st);
	return 0;
}
