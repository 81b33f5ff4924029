// SPDX-License-Identifier: GPL-2.0
/*
 * The VM's stream and its readers (spec pvprof-ctl-stream and
 * spec pvprof-stream).
 *
 * Every stream fd is an independent reader with a buffer of its own: a
 * stream entry is copied into the buffer of each open reader, so a reader that
 * never reads loses entries itself and slows nobody down.  vCPU threads
 * append under one spinlock per VM and never wait; an entry that does not
 * fit a reader's buffer is counted for that reader, and what the reader
 * would have been told (losses, registration changes) is kept in a small
 * per-vCPU table and written out when its reads reach the point of the gap.
 * A reader copies entries out without the spinlock: only it moves its
 * tail, and appends only write past its head, so those bytes are stable.
 */
#define pr_fmt(fmt) "kvm-pvprof: " fmt

#include <linux/anon_inodes.h>
#include <linux/bitmap.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "pvprof_host.h"
#include "pvprof-core/stream.h"

/* Bytes of each reader's buffer (a power of two, spec pvprof-ctl-stream). */
#define PVPROF_READER_BUF_SIZE	(1U << 20)
#define PVPROF_READER_MASK	(PVPROF_READER_BUF_SIZE - 1)

/*
 * Readers blocked in read() or poll() are woken at most this long after a
 * stream entry was queued, and at once when a reader's buffer holds
 * PVPROF_READER_WAKE_FILL bytes.  Waking them for every stream entry would
 * make every sample cost a context switch on the vCPU's CPU: the wake-up
 * comes from the vCPU thread's path into the guest, the reader preempts it,
 * and KVM cancels the VM entry it was preparing (and injects the pvprof NMI a second time).
 */
#define PVPROF_READER_WAKE_MS	20
#define PVPROF_READER_WAKE_FILL	(PVPROF_READER_BUF_SIZE / 4)

/* Entries one vCPU can owe a reader at a gap: VCPU, a LOSS per reason. */
#define PVPROF_GAP_ENTRIES_MAX	(1 + PVPROF_LOSS_NR)
/* Entries written out at a gap per read() pass; each is 40 bytes. */
#define PVPROF_GAP_SCRATCH	(4 * PVPROF_GAP_ENTRIES_MAX)

/**
 * struct pvprof_stream - the VM's stream: the set of its readers
 * @lock: protects @readers, @finished and every reader's ring indices,
 *	gap state and vCPU table; taken by vCPU threads appending, never
 *	held across a copy to user space
 * @wait: readers waiting for entries or end of file
 * @readers: open stream fds, struct pvprof_reader.node
 * @nr_readers: readers in @readers
 * @finished: the VM is gone; no entry is queued any more
 * @wake_timer: the deferred wake-up of @wait after appended entries
 */
struct pvprof_stream {
	spinlock_t lock;
	wait_queue_head_t wait;
	struct list_head readers;
	u32 nr_readers;
	bool finished;
	struct timer_list wake_timer;
};

/**
 * struct pvprof_reader_vcpu - what one reader knows of one vCPU slot
 * @synced: the reader has this vCPU's starting state: entries about the
 *	vCPU reach the reader only from then on
 * @vcpu_id: the vCPU's id, for entries written at a gap
 * @told: the vCPU's loss counters as of the last LOSS entries this reader
 *	got (PVPROF_LOSS_STREAM_OVERFLOW unused: see @missed)
 * @seen: the vCPU's loss counters when the host last queued LOSS entries
 * @missed: callchain entries of this vCPU the reader's buffer could not take
 *	since its last STREAM_OVERFLOW LOSS entry
 * @vcpu_event: a VCPU entry (PVPROF_VCPU_*) owed at the gap, 0 for none
 * @vcpu_size: its buffer size
 * @vcpu_gpa: its buffer gpa
 */
struct pvprof_reader_vcpu {
	bool synced;
	u32 vcpu_id;
	u64 told[PVPROF_LOSS_NR];
	u64 seen[PVPROF_LOSS_NR];
	u64 missed;
	u32 vcpu_event;
	u32 vcpu_size;
	u64 vcpu_gpa;
};

/**
 * struct pvprof_reader - one open stream fd
 * @node: in the stream's reader list
 * @pvm: the VM's pvprof object (a reference)
 * @st: its stream
 * @read_mutex: one read() at a time
 * @buf: PVPROF_READER_BUF_SIZE bytes of queued entries
 * @head: bytes ever queued to this reader
 * @tail: bytes ever read
 * @gap: entries were lost since @head: nothing more is queued, and what
 *	the loss left owed is written out when @tail reaches @head
 * @owed: vCPU slots with something owed at the gap
 * @sideband_missed: SIDEBAND entries the buffer could not take
 * @hello: this fd's HELLO entry, read before the queued entries
 * @hello_len: bytes of @hello still to read (0 once read)
 * @scratch: entries written out at a gap, on their way to user space
 * @vcpus: one per possible vCPU (KVM_MAX_VCPUS), by vcpu_idx
 */
struct pvprof_reader {
	struct list_head node;
	struct pvprof_vm *pvm;
	struct pvprof_stream *st;
	struct mutex read_mutex;
	u8 *buf;
	u64 head;
	u64 tail;
	bool gap;
	DECLARE_BITMAP(owed, KVM_MAX_VCPUS);
	u64 sideband_missed;
	u8 hello[sizeof(struct pvprof_st_hello)];
	u32 hello_len;
	struct pvprof_st_loss scratch[PVPROF_GAP_SCRATCH];
	struct pvprof_reader_vcpu *vcpus;
};

/* A VCPU entry is written out in a LOSS-sized slot of the scratch. */
static_assert(sizeof(struct pvprof_st_vcpu) == sizeof(struct pvprof_st_loss));

static void pvprof_stream_wake_timer(struct timer_list *t)
{
	struct pvprof_stream *st = from_timer(st, t, wake_timer);

	wake_up_interruptible(&st->wait);
}

/**
 * pvprof_stream_create() - allocate a stream without readers
 *
 * Return: the stream or NULL.
 */
struct pvprof_stream *pvprof_stream_create(void)
{
	struct pvprof_stream *st = kzalloc(sizeof(*st), GFP_KERNEL_ACCOUNT);

	if (!st)
		return NULL;
	spin_lock_init(&st->lock);
	init_waitqueue_head(&st->wait);
	INIT_LIST_HEAD(&st->readers);
	timer_setup(&st->wake_timer, pvprof_stream_wake_timer, 0);
	return st;
}

/**
 * pvprof_stream_free() - free a stream nobody reads any more
 * @st: the stream or NULL; every reader holds the VM object, so none is
 *	left when the object and its stream go
 */
void pvprof_stream_free(struct pvprof_stream *st)
{
	if (!st)
		return;
	WARN_ON_ONCE(!list_empty(&st->readers));
	del_timer_sync(&st->wake_timer);
	kfree(st);
}

/*
 * Once an entry is lost, nothing more is queued until the reader has read
 * everything before the loss and what the loss left owed: the owed entries
 * then stand exactly where the lost ones would have been.
 */
static bool reader_fits(const struct pvprof_reader *rd, u32 len)
{
	return !rd->gap && rd->head - rd->tail + len <= PVPROF_READER_BUF_SIZE;
}

static void reader_copy_in(struct pvprof_reader *rd, const void *src, u32 len)
{
	u32 off = rd->head & PVPROF_READER_MASK;
	u32 first = min_t(u32, len, PVPROF_READER_BUF_SIZE - off);

	memcpy(rd->buf + off, src, first);
	memcpy(rd->buf, (const u8 *)src + first, len - first);
	rd->head += len;
}

/**
 * pvprof_stream_append() - queue one entry to every reader
 * @st: the stream
 * @pv: the vCPU the entry is about, or NULL (sideband)
 * @entry: the entry (its header's size is @len)
 * @len: bytes, a multiple of PVPROF_STREAM_ALIGN
 *
 * A reader whose buffer cannot take the entry counts it as missed: a
 * callchain in the vCPU's table, to be told as a STREAM_OVERFLOW loss of
 * that vCPU; a sideband message as one of vcpu_id ~0U.  A reader that does
 * not yet have the vCPU's starting state (its fd is being created) does
 * not get the entry.  When no open reader could take a sideband message
 * nobody misses it: the caller refuses it and the guest retries.
 *
 * Readers waiting for entries are woken within PVPROF_READER_WAKE_MS, or
 * at once when a reader's buffer holds PVPROF_READER_WAKE_FILL bytes.
 *
 * Never sleeps; callable from any context but NMI.
 *
 * Return: false when at least one reader could have taken the entry and
 * none did; true when some reader took it or none is open.
 */
bool pvprof_stream_append(struct pvprof_stream *st, const struct pvprof_vcpu *pv,
			  const void *entry, u32 len)
{
	const struct pvprof_stream_hdr *hdr = entry;
	unsigned int idx = pv ? pv->vcpu->vcpu_idx : 0;
	bool eligible = false, room = false, urgent = false;
	struct pvprof_reader *rd;
	unsigned long flags;

	spin_lock_irqsave(&st->lock, flags);
	if (st->finished)
		goto unlock;
	list_for_each_entry(rd, &st->readers, node) {
		if (pv && !rd->vcpus[idx].synced)
			continue;
		eligible = true;
		room |= reader_fits(rd, len);
	}
	if (!room && hdr->type == PVPROF_ST_SIDEBAND)
		goto unlock;
	list_for_each_entry(rd, &st->readers, node) {
		if (pv && !rd->vcpus[idx].synced)
			continue;
		if (reader_fits(rd, len)) {
			reader_copy_in(rd, entry, len);
			urgent |= rd->head - rd->tail >= PVPROF_READER_WAKE_FILL;
			continue;
		}
		rd->gap = true;
		if (pv) {
			rd->vcpus[idx].missed++;
			__set_bit(idx, rd->owed);
		} else {
			rd->sideband_missed++;
		}
	}
unlock:
	spin_unlock_irqrestore(&st->lock, flags);
	/* Pairs with the barrier of a reader that queued itself on @wait. */
	if (room && wq_has_sleeper(&st->wait)) {
		if (urgent)
			wake_up_interruptible(&st->wait);
		else if (!timer_pending(&st->wake_timer))
			mod_timer(&st->wake_timer,
				  jiffies + msecs_to_jiffies(PVPROF_READER_WAKE_MS));
	}
	return room || !eligible;
}

/**
 * pvprof_stream_put_vcpu() - queue a registration change of a vCPU
 * @pvm: the VM
 * @pv: the vCPU, lock held, its gpa and size still those of the
 *	registration
 * @event: PVPROF_VCPU_*
 *
 * A reader that cannot take the entry keeps only the vCPU's latest
 * registration change for its gap (spec pvprof-st-vcpu).
 */
void pvprof_stream_put_vcpu(struct pvprof_vm *pvm, const struct pvprof_vcpu *pv,
			    u32 event)
{
	struct pvprof_stream *st = READ_ONCE(pvm->stream);
	unsigned int idx = pv->vcpu->vcpu_idx;
	struct pvprof_reader *rd;
	struct pvprof_st_vcpu entry;
	unsigned long flags;
	bool queued = false;
	u32 len;

	lockdep_assert_held(&pv->lock);
	if (!st)
		return;
	len = pvprof_st_put_vcpu(&entry, sizeof(entry), pv->vcpu_id, ktime_get_ns(),
				 event, pv->ring.geo.size, pv->gpa);
	spin_lock_irqsave(&st->lock, flags);
	list_for_each_entry(rd, &st->readers, node) {
		struct pvprof_reader_vcpu *rv = &rd->vcpus[idx];

		if (!rv->synced)
			continue;
		if (reader_fits(rd, len)) {
			reader_copy_in(rd, &entry, len);
			queued = true;
			continue;
		}
		rd->gap = true;
		rv->vcpu_id = pv->vcpu_id;
		rv->vcpu_event = event;
		rv->vcpu_size = pv->ring.geo.size;
		rv->vcpu_gpa = pv->gpa;
		__set_bit(idx, rd->owed);
	}
	spin_unlock_irqrestore(&st->lock, flags);
	if (queued)
		wake_up_interruptible(&st->wait);
}

/* Queues the reader's LOSS entries of one vCPU; owes what does not fit. */
static bool reader_put_losses(struct pvprof_reader *rd, unsigned int idx,
			      u64 now)
{
	struct pvprof_reader_vcpu *rv = &rd->vcpus[idx];
	struct pvprof_st_loss entry;
	bool queued = false;
	unsigned int r;

	for (r = 0; r < PVPROF_LOSS_NR; r++) {
		u64 count = rv->seen[r] - rv->told[r];
		u32 len;

		/* A reader counts its own stream overflows (rv->missed). */
		if (!count || r == PVPROF_LOSS_STREAM_OVERFLOW)
			continue;
		len = pvprof_st_put_loss(&entry, sizeof(entry), rv->vcpu_id, now, r,
					 count);
		if (!reader_fits(rd, len)) {
			rd->gap = true;
			__set_bit(idx, rd->owed);
			return queued;
		}
		reader_copy_in(rd, &entry, len);
		rv->told[r] = rv->seen[r];
		queued = true;
	}
	return queued;
}

/**
 * pvprof_stream_put_losses() - queue LOSS entries for changed loss counts
 * @pvm: the VM
 * @pv: the vCPU, lock held
 *
 * Each reader gets the count since the previous LOSS entry of the same
 * vCPU and reason it got.  An entry that does not fit is not lost: its
 * count stays owed to that reader and is written out when its reads reach
 * the gap (spec pvprof-st-loss).
 */
void pvprof_stream_put_losses(struct pvprof_vm *pvm, struct pvprof_vcpu *pv)
{
	struct pvprof_stream *st = READ_ONCE(pvm->stream);
	unsigned int idx = pv->vcpu->vcpu_idx;
	struct pvprof_reader *rd;
	unsigned long flags;
	bool queued = false;
	u64 now;

	lockdep_assert_held(&pv->lock);
	if (!st)
		return;
	now = ktime_get_ns();
	spin_lock_irqsave(&st->lock, flags);
	list_for_each_entry(rd, &st->readers, node) {
		struct pvprof_reader_vcpu *rv = &rd->vcpus[idx];

		if (!rv->synced)
			continue;
		rv->vcpu_id = pv->vcpu_id;
		memcpy(rv->seen, pv->acct.losses, sizeof(rv->seen));
		queued |= reader_put_losses(rd, idx, now);
	}
	spin_unlock_irqrestore(&st->lock, flags);
	if (queued)
		wake_up_interruptible(&st->wait);
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

/*
 * Writes what the gap left owed into rd->scratch, at most @cap bytes, and
 * forgets what it wrote; closes the gap once nothing is owed.  Lock held.
 */
static u32 reader_write_gap(struct pvprof_reader *rd, u32 cap)
{
	const u32 rec_size = sizeof(struct pvprof_st_loss);
	u64 now = ktime_get_ns();
	unsigned int idx, r;
	u32 n = 0;

	cap = min_t(u32, cap, sizeof(rd->scratch));
	for_each_set_bit(idx, rd->owed, KVM_MAX_VCPUS) {
		struct pvprof_reader_vcpu *rv = &rd->vcpus[idx];

		if (rv->vcpu_event) {
			if ((n + 1) * rec_size > cap)
				return n * rec_size;
			pvprof_st_put_vcpu(&rd->scratch[n++], rec_size, rv->vcpu_id,
					   now, rv->vcpu_event, rv->vcpu_size,
					   rv->vcpu_gpa);
			rv->vcpu_event = 0;
		}
		for (r = 0; r < PVPROF_LOSS_NR; r++) {
			u64 count = r == PVPROF_LOSS_STREAM_OVERFLOW ?
				    rv->missed : rv->seen[r] - rv->told[r];

			if (!count)
				continue;
			if ((n + 1) * rec_size > cap)
				return n * rec_size;
			pvprof_st_put_loss(&rd->scratch[n++], rec_size, rv->vcpu_id,
					   now, r, count);
			if (r == PVPROF_LOSS_STREAM_OVERFLOW)
				rv->missed = 0;
			else
				rv->told[r] = rv->seen[r];
		}
		__clear_bit(idx, rd->owed);
	}
	if (rd->sideband_missed) {
		if ((n + 1) * rec_size > cap)
			return n * rec_size;
		pvprof_st_put_loss(&rd->scratch[n++], rec_size, ~0U, now,
				   PVPROF_LOSS_STREAM_OVERFLOW, rd->sideband_missed);
		rd->sideband_missed = 0;
	}
	rd->gap = false;
	return n * rec_size;
}

/* Size of the entry at @pos; entries are 8-aligned, so never split there. */
static u32 reader_entry_size(const struct pvprof_reader *rd, u64 pos)
{
	const struct pvprof_stream_hdr *h =
		(const void *)(rd->buf + (pos & PVPROF_READER_MASK));

	return h->size;
}

static int reader_copy_out(const struct pvprof_reader *rd, u64 pos,
			   char __user *dst, u32 len)
{
	u32 off = pos & PVPROF_READER_MASK;
	u32 first = min_t(u32, len, PVPROF_READER_BUF_SIZE - off);

	if (copy_to_user(dst, rd->buf + off, first) ||
	    copy_to_user(dst + first, rd->buf, len - first))
		return -EFAULT;
	return 0;
}

enum reader_state { READER_EMPTY, READER_DATA, READER_EOF };

static enum reader_state reader_state(struct pvprof_reader *rd)
{
	struct pvprof_stream *st = rd->st;
	enum reader_state state = READER_EMPTY;

	spin_lock_irq(&st->lock);
	if (rd->head != rd->tail || rd->gap)
		state = READER_DATA;
	else if (st->finished)
		state = READER_EOF;
	spin_unlock_irq(&st->lock);
	return state;
}

/* Copies queued entries from the tail while they fit; 0 or -EFAULT. */
static int reader_read_queued(struct pvprof_reader *rd, char __user *ubuf,
			      size_t count, size_t *done)
{
	struct pvprof_stream *st = rd->st;
	int ret = 0;
	u64 head, pos;

	spin_lock_irq(&st->lock);
	head = rd->head;
	pos = rd->tail;
	spin_unlock_irq(&st->lock);
	while (pos != head) {
		u32 size = reader_entry_size(rd, pos);

		if (count - *done < size)
			break;
		ret = reader_copy_out(rd, pos, ubuf + *done, size);
		if (ret)
			break;
		pos += size;
		*done += size;
	}
	spin_lock_irq(&st->lock);
	rd->tail = pos;
	spin_unlock_irq(&st->lock);
	return ret;
}

/* Writes out what a gap at the tail left owed; 0 or -EFAULT. */
static int reader_read_gap(struct pvprof_reader *rd, char __user *ubuf,
			   size_t count, size_t *done)
{
	struct pvprof_stream *st = rd->st;
	u32 n = 0;

	spin_lock_irq(&st->lock);
	if (rd->gap && rd->tail == rd->head)
		n = reader_write_gap(rd, min_t(size_t, count - *done, U32_MAX));
	spin_unlock_irq(&st->lock);
	/* What was written out is forgotten: a bad buffer loses it. */
	if (n && copy_to_user(ubuf + *done, rd->scratch, n))
		return -EFAULT;
	*done += n;
	return 0;
}

static ssize_t pvprof_stream_read(struct file *file, char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct pvprof_reader *rd = file->private_data;
	size_t done = 0, before;
	enum reader_state state;
	ssize_t ret;

	if (mutex_lock_interruptible(&rd->read_mutex))
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

	while (!done && (state = reader_state(rd)) != READER_DATA) {
		ret = 0;
		if (state == READER_EOF)
			goto unlock;
		ret = -EAGAIN;
		if (file->f_flags & O_NONBLOCK)
			goto unlock;
		mutex_unlock(&rd->read_mutex);
		ret = wait_event_interruptible(rd->st->wait,
					       reader_state(rd) != READER_EMPTY);
		if (ret)
			return ret;
		if (mutex_lock_interruptible(&rd->read_mutex))
			return -ERESTARTSYS;
	}

	/* Queued entries, then the gap after them, until nothing fits. */
	ret = 0;
	do {
		before = done;
		ret = reader_read_queued(rd, ubuf, count, &done);
		if (!ret)
			ret = reader_read_gap(rd, ubuf, count, &done);
	} while (!ret && done != before);
	/* Too small for the next entry: spec pvprof-stream-reading. */
	if (!ret && !done)
		ret = -EINVAL;
	if (done)
		ret = done;
unlock:
	mutex_unlock(&rd->read_mutex);
	return ret;
}

static __poll_t pvprof_stream_poll(struct file *file, poll_table *wait)
{
	struct pvprof_reader *rd = file->private_data;
	struct pvprof_stream *st = rd->st;
	__poll_t mask = 0;

	poll_wait(file, &st->wait, wait);
	spin_lock_irq(&st->lock);
	if (rd->head != rd->tail || rd->gap || READ_ONCE(rd->hello_len))
		mask |= EPOLLIN | EPOLLRDNORM;
	else if (st->finished)
		mask |= EPOLLIN | EPOLLHUP;
	spin_unlock_irq(&st->lock);
	return mask;
}

static void pvprof_reader_free(struct pvprof_reader *rd)
{
	kvfree(rd->vcpus);
	vfree(rd->buf);
	kfree(rd);
}

static void pvprof_reader_unlink(struct pvprof_reader *rd)
{
	struct pvprof_stream *st = rd->st;

	spin_lock_irq(&st->lock);
	list_del(&rd->node);
	st->nr_readers--;
	spin_unlock_irq(&st->lock);
}

static int pvprof_stream_release(struct inode *inode, struct file *file)
{
	struct pvprof_reader *rd = file->private_data;
	struct pvprof_vm *pvm = rd->pvm;

	pvprof_reader_unlink(rd);
	pvprof_reader_free(rd);
	pvprof_vm_put(pvm);
	return 0;
}

static const struct file_operations pvprof_stream_fops = {
	.owner		= THIS_MODULE,
	.read		= pvprof_stream_read,
	.poll		= pvprof_stream_poll,
	.release	= pvprof_stream_release,
	.llseek		= noop_llseek,
};

/*
 * Gives a new reader a vCPU's starting state: its loss counters as the
 * baseline for LOSS entries, and a REGISTERED entry when it has a buffer.
 * Entries about the vCPU reach the reader from then on, all made under
 * the vCPU's lock, so none is missed or comes before this one.
 */
static void pvprof_reader_sync_vcpu(struct pvprof_reader *rd,
				    struct pvprof_vcpu *pv)
{
	struct pvprof_reader_vcpu *rv = &rd->vcpus[pv->vcpu->vcpu_idx];
	struct pvprof_stream *st = rd->st;
	struct pvprof_st_vcpu entry;
	u32 len = 0;

	mutex_lock(&pv->lock);
	if (pv->registered)
		len = pvprof_st_put_vcpu(&entry, sizeof(entry), pv->vcpu_id,
					 ktime_get_ns(), PVPROF_VCPU_REGISTERED,
					 pv->ring.geo.size, pv->gpa);
	spin_lock_irq(&st->lock);
	rv->vcpu_id = pv->vcpu_id;
	memcpy(rv->told, pv->acct.losses, sizeof(rv->told));
	memcpy(rv->seen, pv->acct.losses, sizeof(rv->seen));
	/* KVM_MAX_VCPUS entries of 40 bytes always fit a new reader. */
	if (len)
		reader_copy_in(rd, &entry, len);
	rv->synced = true;
	spin_unlock_irq(&st->lock);
	mutex_unlock(&pv->lock);
}

static_assert(KVM_MAX_VCPUS * sizeof(struct pvprof_st_vcpu) <= PVPROF_READER_BUF_SIZE);

/**
 * pvprof_stream_open() - a new stream fd for the VM (PVPROF_CTL_STREAM)
 * @pvm: the VM, enabled at least once (it has a stream), lock held
 * @nr_vcpus: vCPUs of the VM now, for HELLO
 *
 * The reader starts with HELLO, then a REGISTERED entry for each vCPU
 * registered now, then every entry queued while it is open.
 *
 * Return: the fd, -EBUSY when PVPROF_STREAM_MAX_READERS are open, or
 * another negative errno.
 */
int pvprof_stream_open(struct pvprof_vm *pvm, u32 nr_vcpus)
{
	struct pvprof_stream *st = pvm->stream;
	struct pvprof_reader *rd;
	unsigned int idx;
	int ret;

	lockdep_assert_held(&pvm->lock);
	rd = kzalloc(sizeof(*rd), GFP_KERNEL_ACCOUNT);
	if (!rd)
		return -ENOMEM;
	rd->buf = __vmalloc(PVPROF_READER_BUF_SIZE, GFP_KERNEL_ACCOUNT);
	rd->vcpus = kvcalloc(KVM_MAX_VCPUS, sizeof(*rd->vcpus), GFP_KERNEL_ACCOUNT);
	ret = -ENOMEM;
	if (!rd->buf || !rd->vcpus)
		goto free_reader;
	mutex_init(&rd->read_mutex);
	rd->pvm = pvm;
	rd->st = st;
	rd->hello_len = pvprof_st_put_hello(rd->hello, sizeof(rd->hello),
					    ktime_get_ns(), nr_vcpus);

	/*
	 * Slots without a vCPU yet start from zero counters, so they are in
	 * sync from the start; pvm->lock keeps vCPUs from appearing meanwhile.
	 */
	for (idx = 0; idx < KVM_MAX_VCPUS; idx++)
		rd->vcpus[idx].synced = !pvm->vcpus[idx];
	spin_lock_irq(&st->lock);
	ret = st->nr_readers < PVPROF_STREAM_MAX_READERS ? 0 : -EBUSY;
	if (!ret) {
		list_add_tail(&rd->node, &st->readers);
		st->nr_readers++;
	}
	spin_unlock_irq(&st->lock);
	if (ret)
		goto free_reader;
	for (idx = 0; idx < KVM_MAX_VCPUS; idx++)
		if (pvm->vcpus[idx])
			pvprof_reader_sync_vcpu(rd, pvm->vcpus[idx]);

	kref_get(&pvm->ref);
	ret = anon_inode_getfd("kvm-pvprof-stream", &pvprof_stream_fops, rd,
			       O_RDONLY | O_CLOEXEC);
	if (ret >= 0)
		return ret;
	pvprof_vm_put(pvm);
	pvprof_reader_unlink(rd);
free_reader:
	pvprof_reader_free(rd);
	return ret;
}
