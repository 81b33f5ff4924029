// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof guest driver: /dev/pvprof, the guest agent's sideband channel.
 *
 * One write() is one message (struct pvprof_sideband_hdr and its payload).
 * The driver copies it into a page it owns, checks the framing with the
 * shared core and hands the page to the host with the SIDEBAND hypercall,
 * so the host never reads memory user space can change under it.
 */
#define pr_fmt(fmt) "pvprof: " fmt

#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/uaccess.h>
#include <asm/io.h>

#include "core/sideband.h"
#include "pvprof_guest.h"

struct pvprof_sb_stats pvprof_sb_stats;

static DEFINE_MUTEX(pvprof_sb_lock);	/* the page and the counters */
static struct page *pvprof_sb_page;

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
	err = pvprof_sideband_check(msg, len);
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
	.write = pvprof_sb_write,
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
