/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof guest driver: the kernel API differences between the kernels it
 * builds for (Debian 12's 6.1 and 6.12, README.rst "Kernel versions").
 *
 * Every other kernel API the driver uses has the same signature and
 * semantics in both.  A difference that arrived through a stable update
 * cannot be told from LINUX_VERSION_CODE: Kbuild looks for it in the
 * headers of the kernel being built for and defines PVPROF_HAVE_* for it.
 */
#ifndef _PVPROF_COMPAT_H
#define _PVPROF_COMPAT_H

#include <linux/syscore_ops.h>

/*
 * syscore: "syscore: Pass context data to callbacks" (mainline 6.19, and
 * 6.12.117 through the stable tree) moved the list node out of struct
 * syscore_ops into a new struct syscore, which points at const ops and
 * hands its data pointer to every callback; register_syscore_ops() became
 * register_syscore().  When and where the callbacks run did not change.
 * The driver needs no data: its callbacks take PVPROF_SYSCORE_ARGS, and
 * DEFINE_PVPROF_SYSCORE() builds whichever structure the kernel has.
 */
#ifdef PVPROF_HAVE_STRUCT_SYSCORE

#define PVPROF_SYSCORE_ARGS	void *data

struct pvprof_syscore {
	struct syscore_ops ops;
	struct syscore syscore;
};

#define DEFINE_PVPROF_SYSCORE(name, suspend_fn, resume_fn)		\
	struct pvprof_syscore name = {					\
		.ops = { .suspend = suspend_fn, .resume = resume_fn },	\
		.syscore = { .ops = &name.ops },			\
	}

static inline void pvprof_register_syscore(struct pvprof_syscore *s)
{
	register_syscore(&s->syscore);
}

static inline void pvprof_unregister_syscore(struct pvprof_syscore *s)
{
	unregister_syscore(&s->syscore);
}

#else /* !PVPROF_HAVE_STRUCT_SYSCORE */

#define PVPROF_SYSCORE_ARGS	void

struct pvprof_syscore {
	struct syscore_ops ops;
};

#define DEFINE_PVPROF_SYSCORE(name, suspend_fn, resume_fn)		\
	struct pvprof_syscore name = {					\
		.ops = { .suspend = suspend_fn, .resume = resume_fn },	\
	}

static inline void pvprof_register_syscore(struct pvprof_syscore *s)
{
	register_syscore_ops(&s->ops);
}

static inline void pvprof_unregister_syscore(struct pvprof_syscore *s)
{
	unregister_syscore_ops(&s->ops);
}

#endif /* PVPROF_HAVE_STRUCT_SYSCORE */

#endif /* _PVPROF_COMPAT_H */
