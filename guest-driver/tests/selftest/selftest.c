// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof_selftest.ko: the driver's NMI path against a host played locally.
 *
 * The driver's capture code and the shared core run as in pvprof_guest.ko,
 * but the "host" is this module: a write of N (0..8) to
 * /sys/kernel/debug/pvprof-selftest/run writes N notices into a private
 * buffer (never registered with a hypervisor), sends an NMI to the writing
 * CPU and waits for the handler to run; "garbage" publishes an out-of-range
 * notice_head instead.  Reading the file returns the handler's verdict and
 * each callchain as the host's validator (core/callchain.c) judges it, with
 * kernel frames symbolized and user frames as addresses.  With no notice or
 * a garbage head the NMI is not claimed: the kernel then reports it as an
 * unknown NMI, which is what the caller checks.  The NMI interrupts the
 * writer inside its write() system call, so the callchain holds the kernel
 * path and the writer's user stack.  No hypercall is issued.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/uaccess.h>
#include <asm/apic.h>
#include <asm/nmi.h>

#include "core/notice.h"
#include "core/callchain.h"
#include "pvprof_guest.h"

#define ST_BUF_SIZE	16384U
#define ST_MAX_NOTICES	8U
#define ST_GARBAGE_HEAD	(PVPROF_NOTICE_SLOTS + 1)
#define ST_REPORT_SIZE	16384U

static DEFINE_MUTEX(st_lock);
static struct page *st_pages;
static struct pvprof_guest_buf st_gb;
static int st_armed_cpu = -1;
static struct pvprof_nmi_result st_res;
static int st_handled;
static bool st_ran;
static char *st_report;
static size_t st_report_len;
static struct dentry *st_dir;

static int st_nmi(unsigned int type, struct pt_regs *regs)
{
	if (READ_ONCE(st_armed_cpu) != smp_processor_id())
		return NMI_DONE;
	st_handled = pvprof_guest_nmi(&st_gb, pvprof_capture, regs, &st_res);
	st_ran = true;
	WRITE_ONCE(st_armed_cpu, -1);
	return st_handled;
}

#define st_printf(fmt, ...) \
	(st_report_len += scnprintf(st_report + st_report_len, \
				    ST_REPORT_SIZE - st_report_len, fmt, ##__VA_ARGS__))

static void st_report_callchain(const struct pvprof_callchain *chain, u64 answered,
				u64 head)
{
	struct pvprof_callchain_limits lim = {
		.max_depth = PVPROF_MAX_DEPTH,
		.answered_seq = answered,
		.notice_head = head,
	};
	u32 i;

	st_printf("callchain seq %llu pid %u tid %u flags %#x nr_kernel %u nr_user %u verdict %s\n",
		  chain->seq, chain->pid, chain->tid, chain->flags, chain->nr_kernel,
		  chain->nr_user,
		  pvprof_reject_name(pvprof_callchain_validate(chain, PVPROF_CHAIN_SLOT_SIZE,
							       &lim)));
	for (i = 0; i < chain->nr_kernel && i < PVPROF_MAX_DEPTH; i++)
		st_printf("kernel %pS\n", (void *)(unsigned long)pvprof_callchain_frame(chain, i));
	for (; i < (u32)chain->nr_kernel + chain->nr_user && i < PVPROF_MAX_DEPTH; i++)
		st_printf("user %#llx\n", pvprof_callchain_frame(chain, i));
}

static int st_run(unsigned int notices, u64 head)
{
	struct pvprof_buf_header *h = page_address(st_pages);
	struct pvprof_sample sample = { .event = PVPROF_EVENT_CPU_CLOCK };
	unsigned int i, cpu, polls;
	u64 rhead, tail;

	memset(h, 0, ST_BUF_SIZE);
	h->magic = PVPROF_BUF_MAGIC;
	h->version = PVPROF_ABI_VERSION;
	h->header_size = PVPROF_HEADER_SIZE;
	h->cookie = 1;
	h->size = ST_BUF_SIZE;
	h->max_depth = PVPROF_MAX_DEPTH;
	st_gb.nmi_seen = 0;		/* a new registration: counts from 0 */
	for (i = 0; i < notices; i++)
		pvprof_notice_encode((void *)((u8 *)h + pvprof_notice_offset(i)),
				     &sample, i + 1, false);
	/* Publish the notices as the host does (spec pvprof-index-table). */
	smp_store_release(&h->notice_head, head);
	/*
	 * An NMI for notices is pvprof's: the host says so
	 * (spec pvprof-host-sequence).
	 */
	if (notices)
		WRITE_ONCE(h->nmi_delivered, 1);

	st_ran = false;
	cpu = get_cpu();
	WRITE_ONCE(st_armed_cpu, cpu);
	apic->send_IPI_mask(cpumask_of(cpu), NMI_VECTOR);
	for (polls = 0; READ_ONCE(st_armed_cpu) == cpu && polls < 1000000; polls++)
		udelay(1);
	WRITE_ONCE(st_armed_cpu, -1);
	put_cpu();

	/* Pairs with the handler's store-release of notice_tail. */
	tail = smp_load_acquire(&h->notice_tail);
	st_report_len = 0;
	if (!st_ran) {
		st_printf("cpu %u: the NMI never reached the handler\n", cpu);
		return 0;
	}
	st_printf("cpu %u verdict %s consumed %u callchains %u stale %u dropped %u notice_tail %llu guest_errors %llu\n",
		  cpu, st_res.garbage ? "garbage" : st_handled ? "claimed" : "not_ours",
		  st_res.consumed,
		  st_res.callchains, st_res.stale, st_res.dropped, tail,
		  READ_ONCE(h->guest_errors));
	/* Pairs with the handler's store-release: the callchains are complete. */
	rhead = smp_load_acquire(&h->chain_head);
	for (i = 0; i < rhead && i < notices; i++)
		st_report_callchain((void *)((u8 *)h + pvprof_callchain_offset(&st_gb.geo, i)),
				    i, notices);
	return 0;
}

static ssize_t st_write(struct file *file, const char __user *buf, size_t len,
			loff_t *ppos)
{
	unsigned int notices = 0;
	u64 head;
	char word[16];
	int ret;

	if (len >= sizeof(word) || copy_from_user(word, buf, len))
		return -EINVAL;
	word[len] = 0;
	if (sysfs_streq(word, "garbage")) {
		head = ST_GARBAGE_HEAD;
	} else {
		ret = kstrtouint(word, 10, &notices);
		if (ret)
			return ret;
		if (notices > ST_MAX_NOTICES)
			return -EINVAL;
		head = notices;
	}
	mutex_lock(&st_lock);
	ret = st_run(notices, head);
	mutex_unlock(&st_lock);
	return ret ? ret : len;
}

static ssize_t st_read(struct file *file, char __user *buf, size_t len,
		       loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&st_lock);
	ret = simple_read_from_buffer(buf, len, ppos, st_report, st_report_len);
	mutex_unlock(&st_lock);
	return ret;
}

static const struct file_operations st_fops = {
	.owner = THIS_MODULE,
	.write = st_write,
	.read = st_read,
	.llseek = default_llseek,
};

static int __init st_init(void)
{
	int ret;

	st_report = kzalloc(ST_REPORT_SIZE, GFP_KERNEL);
	if (!st_report)
		return -ENOMEM;
	st_pages = alloc_pages(GFP_KERNEL | __GFP_ZERO, get_order(ST_BUF_SIZE));
	if (!st_pages) {
		ret = -ENOMEM;
		goto out_report;
	}
	ret = pvprof_guest_buf_init(&st_gb, page_address(st_pages), ST_BUF_SIZE);
	if (ret) {
		ret = -EINVAL;
		goto out_pages;
	}
	ret = register_nmi_handler(NMI_LOCAL, st_nmi, 0, "pvprof-selftest");
	if (ret)
		goto out_pages;
	st_dir = debugfs_create_dir("pvprof-selftest", NULL);
	debugfs_create_file("run", 0600, st_dir, NULL, &st_fops);
	return 0;

out_pages:
	__free_pages(st_pages, get_order(ST_BUF_SIZE));
out_report:
	kfree(st_report);
	return ret;
}

static void __exit st_exit(void)
{
	debugfs_remove_recursive(st_dir);
	unregister_nmi_handler(NMI_LOCAL, "pvprof-selftest");
	__free_pages(st_pages, get_order(ST_BUF_SIZE));
	kfree(st_report);
}

module_init(st_init);
module_exit(st_exit);

MODULE_DESCRIPTION("pvprof guest driver self-test: the NMI path against a local fake host");
MODULE_LICENSE("GPL");
