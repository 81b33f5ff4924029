// SPDX-License-Identifier: GPL-2.0
/*
 * Smoke test of the host's registration (spec pvprof-op-register,
 * spec pvprof-op-unregister, spec pvprof-op-query and
 * spec pvprof-registration-end): a good REGISTER writes header lines 0 and 1
 * and QUERY/UNREGISTER follow it, every bad REGISTER gets the spec's code and
 * writes nothing, and a reset of the vCPU from user space, or hiding pvprof,
 * drops it.
 *
 * The guest executes whatever hypercall the host last put in `cmd` and
 * reports the result, so one VM serves a whole sequence of calls.
 */
#include <stdio.h>

#include "kvm_util.h"
#include "pvprof_guest.h"

enum { STAGE_READY = 1, STAGE_RESULT };

/* Free guest RAM between the user stack and the program image. */
#define BUF_GPA		0x300000ULL
/* CR0 after RESET (CD, NW, ET): PE and PG clear. */
#define CR0_RESET_VALUE	0x60000010ULL
#define EXPOSE_PARAM	"/sys/module/kvm/parameters/pvprof_expose"

struct hypercall_cmd {
	uint64_t op, a1, a2, a3;
};

static volatile struct hypercall_cmd cmd;

static void guest_serve_hypercalls(void)
{
	for (;;) {
		GUEST_SYNC(STAGE_READY);
		GUEST_SYNC_ARGS(STAGE_RESULT,
				pvprof_hypercall(cmd.op, cmd.a1, cmd.a2, cmd.a3),
				0, 0);
	}
}

struct guest {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpu;
};

static void guest_start(struct guest *g)
{
	struct ucall uc;

	g->vm = vm_create_with_one_vcpu(&g->vcpu, guest_serve_hypercalls);
	vcpu_run_expect_sync(g->vcpu, STAGE_READY, &uc);
}

/* Have the guest issue one pvprof hypercall; return what it got. */
static int64_t call(struct guest *g, uint64_t op, uint64_t a1, uint64_t a2,
		    uint64_t a3)
{
	struct ucall result, ready;

	cmd = (struct hypercall_cmd){ op, a1, a2, a3 };
	sync_global_to_guest(g->vm, cmd);
	vcpu_run_expect_sync(g->vcpu, STAGE_RESULT, &result);
	vcpu_run_expect_sync(g->vcpu, STAGE_READY, &ready);
	return (int64_t)result.args[1];
}

static int64_t do_register(struct guest *g, uint64_t gpa, uint64_t size,
			   uint64_t flags)
{
	return call(g, PVPROF_OP_REGISTER, gpa, size, flags);
}

static int64_t do_query(struct guest *g, uint64_t gpa)
{
	return call(g, PVPROF_OP_QUERY, gpa, 0, 0);
}

static int64_t do_unregister(struct guest *g)
{
	return call(g, PVPROF_OP_UNREGISTER, 0, 0, 0);
}

static struct pvprof_buf_header *header(struct guest *g, uint64_t gpa)
{
	return (struct pvprof_buf_header *)(g->vm->mem + gpa);
}

static bool all_zero(const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

/* Stock KVM answers every pvprof call -KVM_ENOSYS: check that and stop. */
static bool stock_answers_enosys(struct guest *g)
{
	if (test_kvm_flavour() != KVM_FLAVOUR_STOCK)
		return false;
	TEST_ASSERT_EQ(do_register(g, BUF_GPA, PVPROF_BUF_MIN_SIZE, 0),
		       -(int64_t)PVPROF_ENOSYS);
	TEST_ASSERT(all_zero(header(g, BUF_GPA), PVPROF_BUF_MIN_SIZE),
		    "stock KVM wrote into the buffer");
	return true;
}

static void assert_header_written(struct guest *g, uint64_t gpa, uint32_t size)
{
	const struct pvprof_buf_header *h = header(g, gpa);

	TEST_ASSERT_EQ(h->magic, PVPROF_BUF_MAGIC);
	TEST_ASSERT_EQ(h->version, PVPROF_ABI_VERSION);
	TEST_ASSERT_EQ(h->header_size, PVPROF_HEADER_SIZE);
	TEST_ASSERT(h->cookie != 0, "cookie is zero");
	TEST_ASSERT_EQ(h->size, size);
	TEST_ASSERT_EQ(h->max_depth, PVPROF_MAX_DEPTH);
	TEST_ASSERT_EQ(h->notice_head, 0);
	TEST_ASSERT_EQ(h->chain_tail, 0);
	TEST_ASSERT_EQ(h->nmi_head, 0);
	TEST_ASSERT(all_zero(h->reserved0, sizeof(h->reserved0)) &&
		    all_zero(h->reserved1, sizeof(h->reserved1)),
		    "reserved fields of lines 0 and 1 not zero");
	/* Lines 2 and up are the guest's: the host must not touch them. */
	TEST_ASSERT(all_zero(&h->notice_tail, size - 128),
		    "REGISTER wrote beyond header lines 0 and 1");
}

static void test_register_query_unregister(void)
{
	struct guest g;
	uint64_t first_cookie;

	guest_start(&g);
	if (stock_answers_enosys(&g))
		goto out;

	TEST_ASSERT_EQ(do_query(&g, BUF_GPA), PVPROF_QUERY_UNREGISTERED);
	TEST_ASSERT_EQ(do_register(&g, BUF_GPA, PVPROF_BUF_MIN_SIZE, 0), 0);
	assert_header_written(&g, BUF_GPA, PVPROF_BUF_MIN_SIZE);
	first_cookie = header(&g, BUF_GPA)->cookie;

	TEST_ASSERT_EQ(do_query(&g, BUF_GPA), PVPROF_QUERY_REGISTERED);
	TEST_ASSERT_EQ(do_query(&g, BUF_GPA + PVPROF_PAGE_SIZE),
		       PVPROF_QUERY_UNREGISTERED);
	TEST_ASSERT_EQ(call(&g, PVPROF_OP_QUERY, BUF_GPA, 1, 0),
		       -(int64_t)PVPROF_EINVAL);

	TEST_ASSERT_EQ(do_unregister(&g), 0);
	TEST_ASSERT_EQ(do_query(&g, BUF_GPA), PVPROF_QUERY_UNREGISTERED);
	TEST_ASSERT_EQ(do_unregister(&g), 0);

	/* Re-registration of the zeroed buffer, the largest size, new cookie. */
	memset(header(&g, BUF_GPA), 0, PVPROF_BUF_MAX_SIZE);
	TEST_ASSERT_EQ(do_register(&g, BUF_GPA, PVPROF_BUF_MAX_SIZE, 0), 0);
	assert_header_written(&g, BUF_GPA, PVPROF_BUF_MAX_SIZE);
	TEST_ASSERT(header(&g, BUF_GPA)->cookie != first_cookie,
		    "re-registration reused cookie %#llx",
		    (unsigned long long)first_cookie);
out:
	kvm_vm_free(g.vm);
}

struct bad_register {
	const char *what;
	uint64_t gpa, size, flags;
	int64_t expect;
};

static void test_register_errors(void)
{
	const struct bad_register bad[] = {
		{ "flags set", BUF_GPA, PVPROF_BUF_MIN_SIZE, 1, PVPROF_EINVAL },
		{ "size above maximum", BUF_GPA, 2 * PVPROF_BUF_MAX_SIZE, 0,
		  PVPROF_E2BIG },
		{ "size below minimum", BUF_GPA, PVPROF_PAGE_SIZE, 0,
		  PVPROF_EINVAL },
		{ "size not a power of two", BUF_GPA, 3 * PVPROF_PAGE_SIZE, 0,
		  PVPROF_EINVAL },
		{ "gpa unaligned", BUF_GPA + 64, PVPROF_BUF_MIN_SIZE, 0,
		  PVPROF_EINVAL },
		{ "gpa + size overflows", -(uint64_t)PVPROF_PAGE_SIZE,
		  PVPROF_BUF_MIN_SIZE, 0, PVPROF_EINVAL },
		{ "last page outside RAM", GUEST_MEM_SIZE - PVPROF_PAGE_SIZE,
		  PVPROF_BUF_MIN_SIZE, 0, PVPROF_EFAULT },
		{ "far outside RAM", 1ULL << 40, PVPROF_BUF_MIN_SIZE, 0,
		  PVPROF_EFAULT },
	};
	struct pvprof_buf_header *h;
	struct guest g;
	size_t i;

	guest_start(&g);
	if (stock_answers_enosys(&g))
		goto out;

	h = header(&g, BUF_GPA);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int64_t ret = do_register(&g, bad[i].gpa, bad[i].size,
					  bad[i].flags);

		TEST_ASSERT(ret == -bad[i].expect,
			    "REGISTER with %s: expected -%lld, got %lld",
			    bad[i].what, (long long)bad[i].expect,
			    (long long)ret);
	}

	/* A header the guest did not zero: reserved field, then an index. */
	h->reserved4[100] = 1;
	TEST_ASSERT_EQ(do_register(&g, BUF_GPA, PVPROF_BUF_MIN_SIZE, 0),
		       -(int64_t)PVPROF_EINVAL);
	h->reserved4[100] = 0;
	h->chain_head = 1;
	TEST_ASSERT_EQ(do_register(&g, BUF_GPA, PVPROF_BUF_MIN_SIZE, 0),
		       -(int64_t)PVPROF_EINVAL);
	h->chain_head = 0;
	TEST_ASSERT(all_zero(h, PVPROF_BUF_MIN_SIZE),
		    "a failed REGISTER wrote into the buffer");
	TEST_ASSERT_EQ(do_query(&g, BUF_GPA), PVPROF_QUERY_UNREGISTERED);

	/* Twice, at the same or another gpa: the first one stays. */
	TEST_ASSERT_EQ(do_register(&g, BUF_GPA, PVPROF_BUF_MIN_SIZE, 0), 0);
	TEST_ASSERT_EQ(do_register(&g, BUF_GPA, PVPROF_BUF_MIN_SIZE, 0),
		       -(int64_t)PVPROF_EALREADY);
	TEST_ASSERT_EQ(do_register(&g, BUF_GPA + PVPROF_BUF_MAX_SIZE,
				   PVPROF_BUF_MIN_SIZE, 0),
		       -(int64_t)PVPROF_EALREADY);
	TEST_ASSERT_EQ(do_query(&g, BUF_GPA), PVPROF_QUERY_REGISTERED);
out:
	kvm_vm_free(g.vm);
}

/*
 * QEMU resets the boot vCPU from user space (real-mode special registers)
 * rather than through KVM's INIT path; the registration must not survive.
 * The test sets the reset's CR0/EFER and then restores long mode so the
 * guest can report what the host now answers.
 */
static void test_sregs_real_mode_drops(void)
{
	struct kvm_sregs saved, real_mode;
	struct guest g;

	guest_start(&g);
	if (stock_answers_enosys(&g))
		goto out;

	TEST_ASSERT_EQ(do_register(&g, BUF_GPA, PVPROF_BUF_MIN_SIZE, 0), 0);

	/* Long mode to long mode keeps the registration. */
	vcpu_sregs_get(g.vcpu, &saved);
	vcpu_sregs_set(g.vcpu, &saved);
	TEST_ASSERT_EQ(do_query(&g, BUF_GPA), PVPROF_QUERY_REGISTERED);

	real_mode = saved;
	real_mode.cr0 = CR0_RESET_VALUE;
	real_mode.cr4 = 0;
	real_mode.efer = 0;
	real_mode.cs.l = 0;
	vcpu_sregs_set(g.vcpu, &real_mode);
	vcpu_sregs_set(g.vcpu, &saved);
	TEST_ASSERT_EQ(do_query(&g, BUF_GPA), PVPROF_QUERY_UNREGISTERED);
	TEST_ASSERT_EQ(header(&g, BUF_GPA)->magic, PVPROF_BUF_MAGIC);
out:
	kvm_vm_free(g.vm);
}

static bool expose_param_set(bool on)
{
	FILE *f = fopen(EXPOSE_PARAM, "w");
	bool ok;

	TEST_ASSERT(f, "cannot open %s", EXPOSE_PARAM);
	ok = fputs(on ? "1" : "0", f) >= 0;
	return fclose(f) == 0 && ok;
}

/*
 * pvprof_expose=0 hides pvprof (spec pvprof-exposure) and drops
 * registrations.
 */
static void test_hidden_drops_registration(void)
{
	struct guest g;

	guest_start(&g);
	if (stock_answers_enosys(&g))
		goto out;

	TEST_ASSERT_EQ(do_register(&g, BUF_GPA, PVPROF_BUF_MIN_SIZE, 0), 0);
	TEST_ASSERT(expose_param_set(false), "cannot write %s", EXPOSE_PARAM);
	TEST_ASSERT_EQ(call(&g, PVPROF_OP_PROBE, PVPROF_ABI_VERSION, 0, 0),
		       -(int64_t)PVPROF_ENOSYS);
	TEST_ASSERT_EQ(do_query(&g, BUF_GPA), -(int64_t)PVPROF_ENOTEXPOSED);
	TEST_ASSERT(expose_param_set(true), "cannot write %s", EXPOSE_PARAM);
	TEST_ASSERT_EQ(do_query(&g, BUF_GPA), PVPROF_QUERY_UNREGISTERED);
out:
	kvm_vm_free(g.vm);
}

static const struct test_case cases[] = {
	{ "register_query_unregister", test_register_query_unregister },
	{ "register_errors", test_register_errors },
	{ "sregs_real_mode_drops", test_sregs_real_mode_drops },
	{ "hidden_drops_registration", test_hidden_drops_registration },
};

int main(int argc, char **argv)
{
	return test_run_cases("register", cases, ARRAY_SIZE(cases), argc, argv);
}
