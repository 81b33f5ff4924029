// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the host tool's symbolizer on hostile sideband.  The
 * input is a sequence of messages, each preceded by its length (16 bits,
 * little-endian), as a crafted recording would deliver them; the last
 * bytes that do not form a whole message are read as addresses to
 * resolve.  Whatever the input, every answer must hold the interface's
 * promises: strings terminated within 255 bytes, a symbol only with a
 * DSO, and stats that add up.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/sideband.h"
#include "host-kvm/tool/symbolize.h"

#define FUZZ_CHECK(cond)	do { if (!(cond)) abort(); } while (0)

static void check_string(const char *s)
{
	size_t n = 0;

	if (!s)
		return;
	while (n < 256 && s[n])
		n++;
	FUZZ_CHECK(n <= 255);
}

static void resolve_all(struct pvprof_symbolizer *s, const uint8_t *p, size_t n,
			uint32_t pid, uint32_t gen)
{
	struct pvprof_sym r;
	uint64_t addr;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&addr, p, 8);
		pvprof_symbolizer_resolve(s, addr >= PVPROF_KERNEL_HALF_START, pid, gen,
					  addr, &r);
		check_string(r.symbol);
		check_string(r.dso);
		FUZZ_CHECK(!r.symbol || r.dso);
		if (!r.dso)
			FUZZ_CHECK(r.offset == addr);
	}
	check_string(pvprof_symbolizer_comm(s, pid, gen));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pvprof_symbolizer *s = pvprof_symbolizer_new();
	struct pvprof_symbolizer_stats st;
	uint64_t calls = 0, refused = 0;
	uint32_t pid = 0, gen = 0;
	uint16_t len;

	FUZZ_CHECK(s);
	while (size >= 2) {
		memcpy(&len, data, 2);
		if (len > size - 2)
			break;
		/* Remember the last process named, to resolve against it. */
		if (len >= sizeof(struct pvprof_sb_mmap) && data[2] == PVPROF_SB_MMAP) {
			memcpy(&pid, data + 2 + 16, 4);
			memcpy(&gen, data + 2 + 20, 4);
		}
		calls++;
		if (pvprof_symbolizer_add(s, data + 2, len))
			refused++;
		data += 2 + len;
		size -= 2 + len;
	}
	resolve_all(s, data, size, pid, gen);
	pvprof_symbolizer_stats(s, &st);
	FUZZ_CHECK(st.messages + st.rejected == calls);
	FUZZ_CHECK(st.rejected == refused);
	pvprof_symbolizer_free(s);
	return 0;
}
