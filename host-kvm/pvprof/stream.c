// SPDX-License-Identifier: GPL-2.0
/*
 * The VM's stream buffer and the stream fd (spec sections 12.6 and 13).
 *
 * vCPU threads append whole records under a spinlock and never wait: a
 * record that does not fit is refused and the caller counts it.  The
 * reader copies records out without the spinlock: only it moves the tail,
 * and appends only write past the head, so the bytes it copies are stable.
 */
#define pr_fmt(fmt) "kvm-pvprof: " fmt

#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "pvprof_host.h"
#include "pvprof-core/stream.h"

#define PVPROF_STREAM_MASK	(PVPROF_STREAM_BUF_SIZE - 1)

/**
 * struct pvprof_reader - one open stream fd
 * @pvm: the VM's pvprof object (a reference)
 * @hello: this fd's HELLO record, read before the queued records
 * @hello_len: bytes of @hello still to read (0 once read)
 */
struct pvprof_reader {
	struct pvprof_vm *pvm;
	u8 hello[sizeof(struct pvprof_st_hello)];
	u32 hello_len;
};

/**
 * pvprof_stream_create() - allocate an empty stream buffer
 *
 * Return: the stream or NULL.
 */
struct pvprof_stream *pvprof_stream_create(void)
{
	struct pvprof_stream *st = kzalloc(sizeof(*st), GFP_KERNEL_ACCOUNT);

	if (!st)
		return NULL;
	st->buf = vmalloc(PVPROF_STREAM_BUF_SIZE);
	if (!st->buf) {
		kfree(st);
		return NULL;
	}
	spin_lock_init(&st->lock);
	mutex_init(&st->read_mutex);
	init_waitqueue_head(&st->wait);
	return st;
}

/**
 * pvprof_stream_free() - free a stream buffer nobody uses any more
 * @st: the stream or NULL
 */
void pvprof_stream_free(struct pvprof_stream *st)
{
	if (!st)
		return;
	vfree(st->buf);
	kfree(st);
}

static void ring_copy_in(struct pvprof_stream *st, u64 pos, const void *src,
			 u32 len)
{
	u32 off = pos & PVPROF_STREAM_MASK;
	u32 first = min_t(u32, len, PVPROF_STREAM_BUF_SIZE - off);

	memcpy(st->buf + off, src, first);
	memcpy(st->buf, (const u8 *)src + first, len - first);
}

/**
 * pvprof_stream_append() - queue one encoded record
 * @st: the stream
 * @rec: the record (its header's size is @len)
 * @len: bytes, a multiple of PVPROF_STREAM_ALIGN
 *
 * Never sleeps; callable from any context but NMI.
 *
 * Return: true when queued, false when the buffer is full or finished.
 */
bool pvprof_stream_append(struct pvprof_stream *st, const void *rec, u32 len)
{
	unsigned long flags;
	bool queued = false;

	spin_lock_irqsave(&st->lock, flags);
	if (!st->finished && st->head - st->tail + len <= PVPROF_STREAM_BUF_SIZE) {
		ring_copy_in(st, st->head, rec, len);
		st->head += len;
		queued = true;
	}
	spin_unlock_irqrestore(&st->lock, flags);
	if (queued)
		wake_up_interruptible(&st->wait);
	return queued;
}

/**
 * pvprof_stream_put_vcpu() - queue a registration change of a vCPU
 * @pvm: the VM
 * @pv: the vCPU, its gpa and size still those of the registration
 * @event: PVPROF_VCPU_*
 *
 * Nothing is queued before the first ENABLE created the stream.
 */
void pvprof_stream_put_vcpu(struct pvprof_vm *pvm, const struct pvprof_vcpu *pv,
			    u32 event)
{
	struct pvprof_st_vcpu rec;
	struct pvprof_stream *st = READ_ONCE(pvm->stream);
	u32 len;

	if (!st)
		return;
	len = pvprof_st_put_vcpu(&rec, sizeof(rec), pv->vcpu_id, ktime_get_ns(),
				 event, pv->ring.geo.size, pv->gpa);
	pvprof_stream_append(st, &rec, len);
}

/**
 * pvprof_stream_put_losses() - queue LOSS records for changed loss counts
 * @pvm: the VM
 * @pv: the vCPU, lock held
 *
 * Each record carries the count since the previous LOSS record of the same
 * vCPU and reason.  A record that does not fit is not lost: its count
 * stays pending and goes into the next one (spec section 13.5).
 */
void pvprof_stream_put_losses(struct pvprof_vm *pvm, struct pvprof_vcpu *pv)
{
	struct pvprof_stream *st = READ_ONCE(pvm->stream);
	struct pvprof_st_loss rec;
	unsigned int r;

	lockdep_assert_held(&pv->lock);
	if (!st)
		return;
	for (r = 0; r < PVPROF_LOSS_NR; r++) {
		u64 count = pv->acct.losses[r] - pv->streamed_losses[r];
		u32 len;

		if (!count)
			continue;
		len = pvprof_st_put_loss(&rec, sizeof(rec), pv->vcpu_id,
					 ktime_get_ns(), r, count);
		if (!pvprof_stream_append(st, &rec, len))
			return;
		pv->streamed_losses[r] = pv->acct.losses[r];
	}
}

/**
 * pvprof_stream_finish() - the VM is gone: readers get end of file
 * @st: the stream
 */
void pvprof_stream_finish(struct pvprof_stream *st)
{
	spin_lock_irq(&st->lock);
	st->finished = true;
	spin_unlock_irq(&st->lock);
	wake_up_interruptible_poll(&st->wait, EPOLLIN | EPOLLHUP);
}

/* Size of the record at @pos; records are 8-aligned, so never split there. */
static u32 ring_record_size(const struct pvprof_stream *st, u64 pos)
{
	const struct pvprof_stream_hdr *h =
		(const void *)(st->buf + (pos & PVPROF_STREAM_MASK));

	return h->size;
}

static int ring_copy_out(const struct pvprof_stream *st, u64 pos,
			 char __user *dst, u32 len)
{
	u32 off = pos & PVPROF_STREAM_MASK;
	u32 first = min_t(u32, len, PVPROF_STREAM_BUF_SIZE - off);

	if (copy_to_user(dst, st->buf + off, first) ||
	    copy_to_user(dst + first, st->buf, len - first))
		return -EFAULT;
	return 0;
}

static bool stream_readable(struct pvprof_stream *st)
{
	bool ret;

	spin_lock_irq(&st->lock);
	ret = st->head != st->tail || st->finished;
	spin_unlock_irq(&st->lock);
	return ret;
}

static ssize_t pvprof_stream_read(struct file *file, char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct pvprof_reader *rd = file->private_data;
	struct pvprof_stream *st = rd->pvm->stream;
	size_t done = 0;
	u64 head, pos;
	ssize_t ret;

	if (mutex_lock_interruptible(&st->read_mutex))
		return -ERESTARTSYS;
	if (rd->hello_len) {
		ret = -EINVAL;
		if (count < rd->hello_len)
			goto unlock;
		ret = -EFAULT;
		if (copy_to_user(ubuf, rd->hello, rd->hello_len))
			goto unlock;
		done = rd->hello_len;
		rd->hello_len = 0;
	}

	for (;;) {
		spin_lock_irq(&st->lock);
		head = st->head;
		pos = st->tail;
		spin_unlock_irq(&st->lock);
		if (head != pos || done)
			break;
		if (READ_ONCE(st->finished)) {
			ret = 0;
			goto unlock;
		}
		ret = -EAGAIN;
		if (file->f_flags & O_NONBLOCK)
			goto unlock;
		mutex_unlock(&st->read_mutex);
		ret = wait_event_interruptible(st->wait, stream_readable(st));
		if (ret)
			return ret;
		if (mutex_lock_interruptible(&st->read_mutex))
			return -ERESTARTSYS;
	}

	ret = 0;
	while (pos != head) {
		u32 size = ring_record_size(st, pos);

		if (count - done < size) {
			/* Too small for the next record: spec section 13.2. */
			if (!done)
				ret = -EINVAL;
			break;
		}
		if (ring_copy_out(st, pos, ubuf + done, size)) {
			ret = -EFAULT;
			break;
		}
		pos += size;
		done += size;
	}
	spin_lock_irq(&st->lock);
	st->tail = pos;
	spin_unlock_irq(&st->lock);
	if (done)
		ret = done;
unlock:
	mutex_unlock(&st->read_mutex);
	return ret;
}

static __poll_t pvprof_stream_poll(struct file *file, poll_table *wait)
{
	struct pvprof_reader *rd = file->private_data;
	struct pvprof_stream *st = rd->pvm->stream;
	__poll_t mask = 0;

	poll_wait(file, &st->wait, wait);
	spin_lock_irq(&st->lock);
	if (st->head != st->tail || READ_ONCE(rd->hello_len))
		mask |= EPOLLIN | EPOLLRDNORM;
	else if (st->finished)
		mask |= EPOLLIN | EPOLLHUP;
	spin_unlock_irq(&st->lock);
	return mask;
}

static int pvprof_stream_release(struct inode *inode, struct file *file)
{
	struct pvprof_reader *rd = file->private_data;
	struct pvprof_stream *st = rd->pvm->stream;

	spin_lock_irq(&st->lock);
	st->reader_open = false;
	spin_unlock_irq(&st->lock);
	pvprof_vm_put(rd->pvm);
	kfree(rd);
	return 0;
}

static const struct file_operations pvprof_stream_fops = {
	.owner		= THIS_MODULE,
	.read		= pvprof_stream_read,
	.poll		= pvprof_stream_poll,
	.release	= pvprof_stream_release,
	.llseek		= noop_llseek,
};

/**
 * pvprof_stream_open() - a new stream fd for the VM (PVPROF_CTL_STREAM)
 * @pvm: the VM, enabled at least once (it has a stream)
 * @nr_vcpus: vCPUs of the VM now, for HELLO
 *
 * Return: the fd, -EBUSY while another stream fd is open, or another
 * negative errno.
 */
int pvprof_stream_open(struct pvprof_vm *pvm, u32 nr_vcpus)
{
	struct pvprof_stream *st = pvm->stream;
	struct pvprof_reader *rd;
	int ret;

	rd = kzalloc(sizeof(*rd), GFP_KERNEL_ACCOUNT);
	if (!rd)
		return -ENOMEM;
	rd->pvm = pvm;
	rd->hello_len = pvprof_st_put_hello(rd->hello, sizeof(rd->hello),
					    ktime_get_ns(), nr_vcpus);

	spin_lock_irq(&st->lock);
	ret = st->reader_open ? -EBUSY : 0;
	st->reader_open = true;
	spin_unlock_irq(&st->lock);
	if (ret)
		goto free_reader;

	kref_get(&pvm->ref);
	ret = anon_inode_getfd("kvm-pvprof-stream", &pvprof_stream_fops, rd,
			       O_RDONLY | O_CLOEXEC);
	if (ret >= 0)
		return ret;
	pvprof_vm_put(pvm);
	spin_lock_irq(&st->lock);
	st->reader_open = false;
	spin_unlock_irq(&st->lock);
free_reader:
	kfree(rd);
	return ret;
}
