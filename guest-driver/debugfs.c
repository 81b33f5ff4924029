// SPDX-License-Identifier: GPL-2.0
/*
 * pvprof guest driver: counters under /sys/kernel/debug/pvprof/.
 *
 *   status      inert or active, the negotiated ABI version and features
 *   stats       "name value" lines, summed over all CPUs
 *   cpus        one line per possible CPU: state and its own counters
 *   handler_ns  claimed NMI handler runs by duration, log2 buckets
 */
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "pvprof_guest.h"

static struct dentry *pvprof_debugfs_dir;
static bool pvprof_debugfs_inert;

static const char * const pvprof_state_names[] = {
	[PVPROF_CPU_OFF]	= "off",
	[PVPROF_CPU_ACTIVE]	= "active",
	[PVPROF_CPU_FAILED]	= "failed",
};

static void pvprof_sum_stats(struct pvprof_cpu_stats *sum)
{
	unsigned int cpu, i;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct pvprof_cpu_stats *s = &per_cpu_ptr(&pvprof_cpus, cpu)->stats;

		sum->nmis_claimed += READ_ONCE(s->nmis_claimed);
		sum->nmis_merged += READ_ONCE(s->nmis_merged);
		sum->notices += READ_ONCE(s->notices);
		sum->callchains += READ_ONCE(s->callchains);
		sum->stale += READ_ONCE(s->stale);
		sum->dropped += READ_ONCE(s->dropped);
		sum->garbage += READ_ONCE(s->garbage);
		sum->registrations += READ_ONCE(s->registrations);
		sum->queries += READ_ONCE(s->queries);
		sum->reregistrations += READ_ONCE(s->reregistrations);
		sum->reg_failures += READ_ONCE(s->reg_failures);
		sum->query_failures += READ_ONCE(s->query_failures);
		sum->unreg_failures += READ_ONCE(s->unreg_failures);
		for (i = 0; i < PVPROF_HIST_BUCKETS; i++)
			sum->handler_ns[i] += READ_ONCE(s->handler_ns[i]);
	}
}

static int status_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "mode %s\nabi_version %u\nfeatures %#x\nbuf_size %u\n",
		   pvprof_debugfs_inert ? "inert" : "sampling",
		   pvprof_host.version, pvprof_host.features, pvprof_buf_size);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(status);

static int stats_show(struct seq_file *m, void *unused)
{
	struct pvprof_cpu_stats sum;

	pvprof_sum_stats(&sum);
	seq_printf(m, "nmis_claimed %llu\n", sum.nmis_claimed);
	seq_printf(m, "nmis_merged %llu\n", sum.nmis_merged);
	seq_printf(m, "notices %llu\n", sum.notices);
	/* "records": the key scripts read since before callchain was the word. */
	seq_printf(m, "records %llu\n", sum.callchains);
	seq_printf(m, "stale %llu\n", sum.stale);
	seq_printf(m, "dropped %llu\n", sum.dropped);
	seq_printf(m, "garbage %llu\n", sum.garbage);
	seq_printf(m, "errors %llu\n", sum.dropped + sum.garbage +
		   sum.query_failures + sum.unreg_failures);
	seq_printf(m, "registrations %llu\n", sum.registrations);
	seq_printf(m, "queries %llu\n", sum.queries);
	seq_printf(m, "reregistrations %llu\n", sum.reregistrations);
	seq_printf(m, "registration_failures %llu\n", sum.reg_failures);
	seq_printf(m, "query_failures %llu\n", sum.query_failures);
	seq_printf(m, "unregister_failures %llu\n", sum.unreg_failures);
	seq_printf(m, "sideband_sent %llu\n", READ_ONCE(pvprof_sb_stats.sent));
	seq_printf(m, "sideband_bytes %llu\n", READ_ONCE(pvprof_sb_stats.bytes));
	seq_printf(m, "sideband_ratelimited %llu\n",
		   READ_ONCE(pvprof_sb_stats.ratelimited));
	seq_printf(m, "sideband_invalid %llu\n", READ_ONCE(pvprof_sb_stats.invalid));
	seq_printf(m, "sideband_failed %llu\n", READ_ONCE(pvprof_sb_stats.failed));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

static int cpus_show(struct seq_file *m, void *unused)
{
	unsigned int cpu;

	/* Its records column counts callchains; the name stays for scripts. */
	seq_puts(m, "cpu state active leaked notices records stale dropped registrations reregistrations registration_failures\n");
	for_each_possible_cpu(cpu) {
		const struct pvprof_cpu *pc = per_cpu_ptr(&pvprof_cpus, cpu);
		enum pvprof_cpu_state state = READ_ONCE(pc->state);

		seq_printf(m, "%u %s %d %d %llu %llu %llu %llu %llu %llu %llu\n", cpu,
			   state < ARRAY_SIZE(pvprof_state_names) ?
			   pvprof_state_names[state] : "?",
			   READ_ONCE(pc->active), READ_ONCE(pc->leaked),
			   READ_ONCE(pc->stats.notices), READ_ONCE(pc->stats.callchains),
			   READ_ONCE(pc->stats.stale), READ_ONCE(pc->stats.dropped),
			   READ_ONCE(pc->stats.registrations),
			   READ_ONCE(pc->stats.reregistrations),
			   READ_ONCE(pc->stats.reg_failures));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(cpus);

static int handler_ns_show(struct seq_file *m, void *unused)
{
	struct pvprof_cpu_stats sum;
	unsigned int i;

	pvprof_sum_stats(&sum);
	seq_puts(m, "# from_ns to_ns count (claimed handler runs, from <= t < to)\n");
	for (i = 0; i < PVPROF_HIST_BUCKETS; i++)
		seq_printf(m, "%llu %llu %llu\n", i ? 1ULL << (i - 1) : 0,
			   1ULL << i, sum.handler_ns[i]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(handler_ns);

/**
 * pvprof_debugfs_init() - create /sys/kernel/debug/pvprof/
 * @inert: the driver does not sample (shown in status)
 *
 * debugfs failures are not errors: the driver works without its counters.
 *
 * Context: process context, may sleep.
 */
void pvprof_debugfs_init(bool inert)
{
	pvprof_debugfs_inert = inert;
	pvprof_debugfs_dir = debugfs_create_dir("pvprof", NULL);
	debugfs_create_file("status", 0400, pvprof_debugfs_dir, NULL, &status_fops);
	debugfs_create_file("stats", 0400, pvprof_debugfs_dir, NULL, &stats_fops);
	debugfs_create_file("cpus", 0400, pvprof_debugfs_dir, NULL, &cpus_fops);
	debugfs_create_file("handler_ns", 0400, pvprof_debugfs_dir, NULL,
			    &handler_ns_fops);
}

/**
 * pvprof_debugfs_exit() - remove /sys/kernel/debug/pvprof/
 *
 * Context: process context, may sleep.
 */
void pvprof_debugfs_exit(void)
{
	debugfs_remove_recursive(pvprof_debugfs_dir);
}
