// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof guest driver: /dev/pvprof, the guest agent's sideband channel.
 *
 * One write() is one message (struct pvprof_sideband_hdr and its payload).
 * The driver copies it into a page it owns, checks its framing and payload
 * with the shared core and hands the page to the host with the SIDEBAND
 * hypercall, so the host never reads memory user space can change under it.
 *
 * The host discards sideband while sampling is off, so the agent must publish
 * again when sampling switches on.  The host says so only in line 1 of the
 * registered buffers; while the device is open a work item looks at it every
 * 100 ms and counts the switches in a generation that read() returns and
 * poll() signals (spec pvprof-guest-device).  The agent also needs the exec
 * generation of processes, which only the kernel knows: the
 * PVPROF_DEV_EXEC_GEN ioctl gives it.
 */
#define pr_fmt(fmt) "pvprof: " fmt

#include <linux/cpu.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <asm/io.h>

#include "core/sideband.h"
#include "pvprof_guest.h"

struct pvprof_sb_stats pvprof_sb_stats;

static DEFINE_MUTEX(pvprof_sb_lock);	/* the page and the counters */
static struct page *pvprof_sb_page;

/* How often the host's sampling state is looked at while the device is open. */
#define PVPROF_SB_WATCH_PERIOD	(HZ / 10)

static DEFINE_MUTEX(pvprof_sb_state_lock);	/* the state and every file's seen */
static struct pvprof_dev_state pvprof_sb_state;
static DECLARE_WAIT_QUEUE_HEAD(pvprof_sb_wait);
static DEFINE_MUTEX(pvprof_sb_open_lock);
static unsigned int pvprof_sb_nr_open;

static void pvprof_sb_watch_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(pvprof_sb_watch_work, pvprof_sb_watch_fn);

/**
 * struct pvprof_sb_file - one open /dev/pvprof
 * @seen: the generation this file last read
 */
struct pvprof_sb_file {
	u64 seen;
};

/*
 * Line 1 of the first registered buffer whose host state says active; the
 * host writes the same configuration into every buffer of the VM.  The
 * pages are only freed at module unload, after the device is gone.
 */
static bool pvprof_sb_host_state(u32 *event, u64 *period)
{
	unsigned int cpu;

	for_each_online_cpu(cpu) {
		struct pvprof_cpu *pc = per_cpu_ptr(&pvprof_cpus, cpu);
		struct pvprof_buf_header *hdr;

		if (READ_ONCE(pc->state) != PVPROF_CPU_ACTIVE || !READ_ONCE(pc->pages))
			continue;
		hdr = page_address(pc->pages);
		if (!(READ_ONCE(hdr->state) & PVPROF_STATE_ACTIVE))
			continue;
		*event = READ_ONCE(hdr->event);
		*period = READ_ONCE(hdr->period);
		return true;
	}
	return false;
}

static void pvprof_sb_watch(void)
{
	u64 period = 0;
	u32 event = 0;
	bool active;

	cpus_read_lock();
	active = pvprof_sb_host_state(&event, &period);
	cpus_read_unlock();
	mutex_lock(&pvprof_sb_state_lock);
	if (active && (!(pvprof_sb_state.state & PVPROF_STATE_ACTIVE) ||
		       pvprof_sb_state.event != event ||
		       pvprof_sb_state.period != period)) {
		pvprof_sb_state.generation++;
		wake_up_interruptible(&pvprof_sb_wait);
	}
	pvprof_sb_state.state = active ? PVPROF_STATE_ACTIVE : 0;
	pvprof_sb_state.event = event;
	pvprof_sb_state.period = period;
	mutex_unlock(&pvprof_sb_state_lock);
}

static void pvprof_sb_watch_fn(struct work_struct *work)
{
	pvprof_sb_watch();
	if (READ_ONCE(pvprof_sb_nr_open))
		queue_delayed_work(system_freezable_wq, &pvprof_sb_watch_work,
				   PVPROF_SB_WATCH_PERIOD);
}

static int pvprof_sb_open(struct inode *inode, struct file *file)
{
	struct pvprof_sb_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	mutex_lock(&pvprof_sb_open_lock);
	if (!pvprof_sb_nr_open++) {
		/* Current before the first read, so that it does not count as a switch. */
		pvprof_sb_watch();
		queue_delayed_work(system_freezable_wq, &pvprof_sb_watch_work,
				   PVPROF_SB_WATCH_PERIOD);
	}
	mutex_unlock(&pvprof_sb_open_lock);
	mutex_lock(&pvprof_sb_state_lock);
	f->seen = pvprof_sb_state.generation;
	mutex_unlock(&pvprof_sb_state_lock);
	file->private_data = f;
	return 0;
}

static int pvprof_sb_release(struct inode *inode, struct file *file)
{
	mutex_lock(&pvprof_sb_open_lock);
	if (!--pvprof_sb_nr_open)
		cancel_delayed_work_sync(&pvprof_sb_watch_work);
	mutex_unlock(&pvprof_sb_open_lock);
	kfree(file->private_data);
	return 0;
}

static ssize_t pvprof_sb_read(struct file *file, char __user *buf, size_t len,
			      loff_t *ppos)
{
	struct pvprof_sb_file *f = file->private_data;
	struct pvprof_dev_state st;

	if (len < sizeof(st))
		return -EINVAL;
	mutex_lock(&pvprof_sb_state_lock);
	st = pvprof_sb_state;
	f->seen = st.generation;
	mutex_unlock(&pvprof_sb_state_lock);
	if (copy_to_user(buf, &st, sizeof(st)))
		return -EFAULT;
	return sizeof(st);
}

static __poll_t pvprof_sb_poll(struct file *file, poll_table *wait)
{
	struct pvprof_sb_file *f = file->private_data;
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;

	poll_wait(file, &pvprof_sb_wait, wait);
	mutex_lock(&pvprof_sb_state_lock);
	if (pvprof_sb_state.generation != f->seen)
		mask |= EPOLLIN | EPOLLRDNORM;
	mutex_unlock(&pvprof_sb_state_lock);
	return mask;
}

/* The exec generation as pvprof_capture() stores it (capture.c). */
static long pvprof_sb_exec_gen(struct pvprof_dev_exec_gen __user *uarg)
{
	struct pvprof_dev_exec_gen arg;
	struct task_struct *task;
	long ret = -ESRCH;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	rcu_read_lock();
	task = pid_task(find_pid_ns(arg.pid, &init_pid_ns), PIDTYPE_PID);
	if (task && task_tgid_nr(task) == arg.pid) {
		arg.exec_gen = (u32)READ_ONCE(task->self_exec_id);
		ret = 0;
	}
	rcu_read_unlock();
	if (!ret && copy_to_user(uarg, &arg, sizeof(arg)))
		ret = -EFAULT;
	return ret;
}

static long pvprof_sb_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case PVPROF_DEV_EXEC_GEN:
		return pvprof_sb_exec_gen((struct pvprof_dev_exec_gen __user *)arg);
	default:
		return -ENOTTY;
	}
}

static ssize_t pvprof_sb_errno(long r)
{
	switch (r) {
	case -PVPROF_ERATELIMIT:
		return -EAGAIN;
	case -PVPROF_E2BIG:
		return -EMSGSIZE;
	case -PVPROF_EINVAL:
		return -EINVAL;
	case -PVPROF_EOPNOTSUPP:
	case -PVPROF_ENOSYS:
	case -PVPROF_ENOTEXPOSED:
		return -ENODEV;
	default:
		return -EIO;
	}
}

static ssize_t pvprof_sb_write(struct file *file, const char __user *buf,
			       size_t len, loff_t *ppos)
{
	void *msg = page_address(pvprof_sb_page);
	enum pvprof_sb_error err;
	ssize_t ret;
	long r;

	if (len > PVPROF_SIDEBAND_MAX_SIZE)
		return -EMSGSIZE;
	if (len < sizeof(struct pvprof_sideband_hdr))
		return -EINVAL;
	if (mutex_lock_interruptible(&pvprof_sb_lock))
		return -ERESTARTSYS;
	if (copy_from_user(msg, buf, len)) {
		ret = -EFAULT;
		goto out_unlock;
	}
	err = pvprof_sideband_payload_check(msg, len);
	if (err != PVPROF_SB_OK) {
		pvprof_sb_stats.invalid++;
		pr_debug("sideband message refused: %s\n", pvprof_sb_error_name(err));
		ret = -EINVAL;
		goto out_unlock;
	}
	r = pvprof_hypercall(PVPROF_OP_SIDEBAND, page_to_phys(pvprof_sb_page),
			     len, 0);
	if (r) {
		if (r == -PVPROF_ERATELIMIT)
			pvprof_sb_stats.ratelimited++;
		else
			pvprof_sb_stats.failed++;
		ret = pvprof_sb_errno(r);
		goto out_unlock;
	}
	pvprof_sb_stats.sent++;
	pvprof_sb_stats.bytes += len;
	ret = len;
out_unlock:
	mutex_unlock(&pvprof_sb_lock);
	return ret;
}

static const struct file_operations pvprof_sb_fops = {
	.owner = THIS_MODULE,
	.open = pvprof_sb_open,
	.release = pvprof_sb_release,
	.read = pvprof_sb_read,
	.write = pvprof_sb_write,
	.poll = pvprof_sb_poll,
	.unlocked_ioctl = pvprof_sb_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice pvprof_sb_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "pvprof",
	.fops = &pvprof_sb_fops,
	.mode = 0600,
};

/**
 * pvprof_chardev_init() - create /dev/pvprof
 *
 * Context: process context, may sleep.
 * Return: 0 or a negative errno.
 */
int pvprof_chardev_init(void)
{
	int ret;

	pvprof_sb_page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!pvprof_sb_page)
		return -ENOMEM;
	ret = misc_register(&pvprof_sb_dev);
	if (ret)
		goto out_page;
	return 0;

out_page:
	__free_page(pvprof_sb_page);
	return ret;
}

/**
 * pvprof_chardev_exit() - remove /dev/pvprof
 *
 * Context: process context, may sleep.
 */
void pvprof_chardev_exit(void)
{
	/*
	 * The page can go at once: a writer holds its file open, and an open
	 * file holds the module (fops.owner), so nobody is inside write().
	 */
	misc_deregister(&pvprof_sb_dev);
	__free_page(pvprof_sb_page);
}
