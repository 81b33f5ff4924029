// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof guest driver: callchain capture in NMI context.
 *
 * The kernel stack is walked with the kernel's own unwinder (ORC in the
 * distro kernels, no frame pointers needed), started from the NMI's
 * registers the way perf_callchain_kernel() does.  The user stack is walked
 * by frame pointers with copy_from_user_nmi(), which refuses when the
 * current mm is not the one loaded (nmi_uaccess_okay()) and never faults
 * pages in.  Every address that goes into a callchain is checked against the
 * half of the address space the host will accept it from: a frame the host
 * would reject would cost the whole sample.
 *
 * When the host asks for them, a callchain also carries the user registers
 * and the top of the user stack (spec pvprof-ustack), copied the same way,
 * so that the host can unwind code without frame pointers.
 */
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <asm/ptrace.h>
#include <asm/segment.h>
#include <asm/unwind.h>

#include "core/callchain.h"
#include "pvprof_guest.h"

/* One frame of a frame-pointer chain: saved frame pointer, return address. */
struct pvprof_user_frame {
	u64 next;
	u64 ret;
};

struct pvprof_user_frame32 {
	u32 next;
	u32 ret;
};

static bool pvprof_user_addr(u64 addr)
{
	return addr < PVPROF_USER_HALF_END;
}

/* Kernel frames: the interrupted IP, then return addresses, innermost first. */
static u32 pvprof_capture_kernel(struct pt_regs *regs, u64 *frames, u32 max,
				 u32 *flags)
{
	struct unwind_state state;
	unsigned long addr;
	u32 nr = 0;

	frames[nr++] = regs->ip;
	/* Starting from regs, the unwinder skips the regs frame itself. */
	for (unwind_start(&state, current, regs, NULL); !unwind_done(&state);
	     unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr)
			break;
		if (nr == max || addr < PVPROF_KERNEL_HALF_START) {
			*flags |= PVPROF_CHAIN_F_TRUNCATED;
			return nr;
		}
		frames[nr++] = addr;
	}
	if (unwind_error(&state))
		*flags |= PVPROF_CHAIN_F_TRUNCATED;
	return nr;
}

/*
 * The top of the stack @sp points into, as far as NMI context can tell: the
 * main thread's stack ends with the environment strings, which the mm
 * callchains; a thread's stack is an anonymous mapping NMI context cannot look
 * up, so its top is unknown (0).
 */
static u64 pvprof_user_stack_top(u64 sp)
{
	struct mm_struct *mm = current->mm;

	if (mm && sp >= mm->mmap_base && sp < mm->env_end &&
	    mm->env_end - sp <= rlimit(RLIMIT_STACK))
		return mm->env_end;
	return 0;
}

/*
 * A return address on the stack being walked is data: the chain went
 * through a frame of code built without frame pointers (libc's start-up
 * code, typically), whose saved "frame pointer" was some other value.
 */
static bool pvprof_stack_addr(u64 addr, u64 sp, u64 walked, u64 top)
{
	return addr >= sp && (addr < walked || addr < top);
}

/*
 * A 64-bit frame-pointer chain.  Frame pointers must be 8-byte aligned, at
 * or above the user stack pointer and strictly increasing, and a return
 * address must not point into the stack; a chain ends cleanly at a zero
 * frame pointer.  An interrupted function whose frame pointer is already
 * zero yields no chain at all: that is code built without frame pointers
 * (only _start runs with a zero frame pointer), so it is marked truncated.
 */
static u32 pvprof_walk_user64(struct pt_regs *regs, u64 *frames, u32 max,
			      u32 *flags)
{
	struct pvprof_user_frame frame;
	u64 top = pvprof_user_stack_top(regs->sp);
	u64 fp = regs->bp;
	u64 floor = regs->sp;
	u32 nr = 0;

	if (!fp) {
		*flags |= PVPROF_CHAIN_F_TRUNCATED;
		return 0;
	}
	while (fp) {
		if (nr == max || (fp & 7) || fp < floor ||
		    !pvprof_user_addr(fp + sizeof(frame)) ||
		    copy_from_user_nmi(&frame, (const void __user *)fp,
				       sizeof(frame)) ||
		    !frame.ret || !pvprof_user_addr(frame.ret) ||
		    pvprof_stack_addr(frame.ret, regs->sp, fp + sizeof(frame), top)) {
			*flags |= PVPROF_CHAIN_F_TRUNCATED;
			break;
		}
		frames[nr++] = frame.ret;
		floor = fp + sizeof(frame);
		fp = frame.next;
	}
	return nr;
}

/*
 * The same for a 32-bit task.  Only the flat code and stack segments every
 * compat task starts with are understood (base 0); anything else (an LDT
 * segment set up by the task) stops the walk as truncated.
 */
static u32 pvprof_walk_user32(struct pt_regs *regs, u64 *frames, u32 max,
			      u32 *flags)
{
	struct pvprof_user_frame32 frame;
	u64 top = pvprof_user_stack_top(regs->sp);
	u32 fp = regs->bp;
	u32 floor = regs->sp;
	u32 nr = 0;

	if (regs->cs != __USER32_CS || regs->ss != __USER_DS || !fp) {
		*flags |= PVPROF_CHAIN_F_TRUNCATED;
		return 0;
	}
	while (fp) {
		if (nr == max || (fp & 3) || fp < floor ||
		    fp > U32_MAX - sizeof(frame) ||
		    copy_from_user_nmi(&frame, (const void __user *)(unsigned long)fp,
				       sizeof(frame)) ||
		    !frame.ret ||
		    pvprof_stack_addr(frame.ret, regs->sp, (u64)fp + sizeof(frame), top)) {
			*flags |= PVPROF_CHAIN_F_TRUNCATED;
			break;
		}
		frames[nr++] = frame.ret;
		floor = fp + sizeof(frame);
		fp = frame.next;
	}
	return nr;
}

/* User frames: the user IP, then return addresses, innermost first. */
static u32 pvprof_capture_user(struct pt_regs *regs, u64 *frames, u32 max,
			       u32 *flags)
{
	if (!max || !user_mode(regs) || !pvprof_user_addr(regs->ip)) {
		*flags |= PVPROF_CHAIN_F_TRUNCATED;
		return 0;
	}
	frames[0] = regs->ip;
	if (!user_64bit_mode(regs)) {
		*flags |= PVPROF_CHAIN_F_COMPAT;
		return 1 + pvprof_walk_user32(regs, frames + 1, max - 1, flags);
	}
	return 1 + pvprof_walk_user64(regs, frames + 1, max - 1, flags);
}

/* The user registers of the interrupted task, or NULL (kthread, exiting). */
static struct pt_regs *pvprof_user_regs(struct pt_regs *regs)
{
	struct task_struct *task = current;

	if (user_mode(regs))
		return regs;
	if ((task->flags & PF_KTHREAD) || is_idle_task(task) || !task->mm)
		return NULL;
	return task_pt_regs(task);
}

/**
 * pvprof_capture_ustack() - snapshot the user registers and stack
 * @ctx: the NMI's pt_regs
 * @chain: the callchain pvprof_capture() filled, with user frames
 * @regs: PVPROF_UREG_* to fill
 * @data: where the stack goes
 * @max: bytes that fit at @data
 *
 * Copies from the user stack pointer upward as perf's user stack dumps do,
 * with copy_from_user_nmi(): it refuses when another mm is loaded and
 * never faults a page in, so a copy that meets the end of the stack's
 * mapping (or a page not present) is short.  The main thread's stack is
 * cut at the end of its environment strings, above which nothing is a
 * frame.
 *
 * Context: NMI.
 * Return: bytes copied, or -1 when there is no 64-bit user context.
 */
int pvprof_capture_ustack(void *ctx, const struct pvprof_callchain *chain,
			  __u64 *regs, __u8 *data, __u32 max)
{
	struct pt_regs *user = pvprof_user_regs(ctx);
	u64 top, sp, len = max;

	if (!user || !user_64bit_mode(user) || !pvprof_user_addr(user->sp))
		return -1;
	sp = user->sp;
	regs[PVPROF_UREG_IP] = user->ip;
	regs[PVPROF_UREG_SP] = sp;
	regs[PVPROF_UREG_BP] = user->bp;
	regs[PVPROF_UREG_BX] = user->bx;
	regs[PVPROF_UREG_R12] = user->r12;
	regs[PVPROF_UREG_R13] = user->r13;
	regs[PVPROF_UREG_R14] = user->r14;
	regs[PVPROF_UREG_R15] = user->r15;
	top = pvprof_user_stack_top(sp);
	if (top && top - sp < len)
		len = top - sp;
	if (PVPROF_USER_HALF_END - sp < len)
		len = PVPROF_USER_HALF_END - sp;
	return (int)(len - copy_from_user_nmi(data, (const void __user *)sp, len));
}
NOKPROBE_SYMBOL(pvprof_capture_ustack);

/**
 * pvprof_capture() - fill the callchain of the newest notice
 * @ctx: the NMI's pt_regs (the interrupted context)
 * @n: copy of the notice answered
 * @chain: callchain to fill; seq is set, the rest is zero
 * @max_frames: frames the host accepts, 1..PVPROF_MAX_DEPTH
 *
 * The callchain identifies the interrupted task by its init-namespace ids and
 * its exec generation.  Linux keeps no per-task exec counter; the closest
 * honest value is task_struct.self_exec_id, which every execve increments
 * and fork copies (a forked child runs its parent's image until it execs),
 * so (pid, exec_gen) names one process image.  Only its low 32 bits are
 * kept.
 *
 * Context: NMI.  No locks, no allocation, no page faults.
 */
void pvprof_capture(void *ctx, const struct pvprof_notice *n,
		    struct pvprof_callchain *chain, __u32 max_frames)
{
	struct pt_regs *regs = ctx;
	struct task_struct *task = current;
	u64 *frames = pvprof_callchain_frames(chain);
	struct pt_regs *user_regs;
	u32 flags = 0, nr_kernel = 0, nr_user = 0;

	chain->time_ns = ktime_get_mono_fast_ns();
	if (!is_idle_task(task)) {
		chain->pid = task_tgid_nr(task);
		chain->tid = task_pid_nr(task);
	}
	chain->exec_gen = (u32)READ_ONCE(task->self_exec_id);
	if (regs->ip != n->ip)
		flags |= PVPROF_CHAIN_F_SKEWED;

	user_regs = pvprof_user_regs(regs);
	if (user_mode(regs)) {
		flags |= PVPROF_CHAIN_F_USER;
	} else {
		nr_kernel = pvprof_capture_kernel(regs, frames, max_frames, &flags);
		if ((task->flags & PF_KTHREAD) || is_idle_task(task))
			flags |= PVPROF_CHAIN_F_KTHREAD;
		else if (!task->mm)
			/* An exiting task: its user stack is gone. */
			flags |= PVPROF_CHAIN_F_TRUNCATED;
	}
	if (user_regs)
		nr_user = pvprof_capture_user(user_regs, frames + nr_kernel,
					      max_frames - nr_kernel, &flags);
	chain->flags = flags;
	chain->nr_kernel = nr_kernel;
	chain->nr_user = nr_user;
}
NOKPROBE_SYMBOL(pvprof_capture);
