/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ucall: the guest-to-host channel. The guest executes "in" from UCALL_PORT
 * with rdi pointing to a struct ucall; the host decodes the KVM_EXIT_IO.
 */
#ifndef PVPROF_UCALL_H
#define PVPROF_UCALL_H

#include <stdint.h>

enum {
	UCALL_NONE,
	UCALL_SYNC,
	UCALL_ABORT,
	UCALL_DONE,
};

#define UCALL_MAX_ARGS	4

struct ucall {
	uint64_t cmd;
	uint64_t args[UCALL_MAX_ARGS];
	/* UCALL_ABORT: the failed guest assertion (strings in the shared image) */
	const char *expr;
	const char *file;
	uint64_t line;
};

/* Guest side. */
void ucall(const struct ucall *uc);
void __attribute__((noreturn))
ucall_abort(const char *expr, const char *file, uint64_t line, uint64_t a,
	    uint64_t b);

/*
 * The instruction right after the ucall's "in": where the guest resumes after
 * every ucall, so the RIP an NMI injected at that resume interrupts.
 */
extern const char ucall_return_site[];

#define GUEST_SYNC_ARGS(stage, a, b, c)					\
	ucall(&(struct ucall){ .cmd = UCALL_SYNC,			\
			       .args = { (stage), (a), (b), (c) } })
#define GUEST_SYNC(stage)	GUEST_SYNC_ARGS(stage, 0, 0, 0)
#define GUEST_DONE()		ucall(&(struct ucall){ .cmd = UCALL_DONE })

#define GUEST_ASSERT(cond)						\
	do {								\
		if (!(cond))						\
			ucall_abort(#cond, __FILE__, __LINE__, 0, 0);	\
	} while (0)

#define GUEST_ASSERT_EQ(a, b)						\
	do {								\
		uint64_t __ga = (uint64_t)(a), __gb = (uint64_t)(b);	\
		if (__ga != __gb)					\
			ucall_abort(#a " == " #b, __FILE__, __LINE__,	\
				    __ga, __gb);			\
	} while (0)

#define GUEST_FAIL(msg)	ucall_abort(msg, __FILE__, __LINE__, 0, 0)

/* Host side. */
struct kvm_vcpu;

/*
 * If the vCPU's last exit is a ucall, copy it to @uc (may be NULL) and return
 * its command; otherwise return UCALL_NONE.
 */
uint64_t get_ucall(struct kvm_vcpu *vcpu, struct ucall *uc);

/*
 * Run the vCPU and require the next exit to be GUEST_SYNC(@stage); a guest
 * abort or any other exit fails the case with the guest's file:line or the
 * exit's details. The ucall is copied to @uc when not NULL.
 */
void vcpu_run_expect_sync(struct kvm_vcpu *vcpu, uint64_t stage,
			  struct ucall *uc);
/* Run the vCPU and require GUEST_DONE(). */
void vcpu_run_expect_done(struct kvm_vcpu *vcpu);

/* Fail the case for a ucall that is not the expected one. */
void __attribute__((noreturn))
fail_unexpected_ucall(struct kvm_vcpu *vcpu, const struct ucall *uc,
		      const char *expected);

#endif
