/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvprof shared protocol core: what differs between kernel and user space.
 *
 * The core is compiled into the host KVM modules, the guest driver and the
 * user-space tools and tests.  It calls nothing from libc or from the kernel
 * beyond what this header maps: fixed-width types, memory copies through
 * compiler builtins, and the acquire/release accessors and barriers used on
 * the shared buffer's indices.
 */
#ifndef _PVPROF_CORE_H
#define _PVPROF_CORE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/compiler.h>
#include <asm/barrier.h>

#define pvprof_load_acquire(p)		smp_load_acquire(p)
#define pvprof_store_release(p, v)	smp_store_release(p, v)
#define pvprof_smp_rmb()		smp_rmb()
#define pvprof_smp_wmb()		smp_wmb()
#define PVPROF_READ_ONCE(x)		READ_ONCE(x)
#define PVPROF_WRITE_ONCE(x, v)		WRITE_ONCE(x, v)
#else
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#define pvprof_load_acquire(p)		__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define pvprof_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)
#define pvprof_smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define pvprof_smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#define PVPROF_READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define PVPROF_WRITE_ONCE(x, v)		__atomic_store_n(&(x), v, __ATOMIC_RELAXED)
#endif

#include "abi/pvprof.h"
#include "abi/pvprof_ctl.h"

#define pvprof_memcpy(d, s, n)		__builtin_memcpy(d, s, n)
#define pvprof_memset(d, c, n)		__builtin_memset(d, c, n)
#define pvprof_memcmp(a, b, n)		__builtin_memcmp(a, b, n)

#define PVPROF_NSEC_PER_SEC		1000000000ULL

#define PVPROF_ALIGN8(x)		(((x) + 7U) & ~(__typeof__(x))7U)

/* x86-64 canonical halves: kernel text/stacks above, user space below. */
#define PVPROF_KERNEL_HALF_START	0xffff800000000000ULL
#define PVPROF_USER_HALF_END		0x0000800000000000ULL

#endif /* _PVPROF_CORE_H */
