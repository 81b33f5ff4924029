// SPDX-License-Identifier: GPL-2.0
/*
 * Platform self-test: what an injected NMI costs in VM exits, read from KVM's
 * per-VM debugfs counters (/sys/kernel/debug/kvm/<pid>-<fd>/).
 *
 * 6.1 SVM has no vNMI: svm_inject_nmi() intercepts IRET, so every injected
 * NMI costs exactly one extra exit, counted as nmi_window_exits. An NMI that
 * becomes pending while the handler runs adds one more: KVM single-steps the
 * IRET (a #DB intercept) to open the window for it.
 *
 * Exits the test does not cause itself (host interrupts: irq_exits; nested
 * page faults after L1 reclaimed or moved a page: pf_taken) and the ucalls
 * (io_exits) are subtracted; what remains must be exactly the NMI exits. A
 * baseline phase without NMIs checks that it is zero there.
 */
#include <stdio.h>

#include "kvm_util.h"

#define NMIS_MEASURED			100
/* SVM without vNMI (Linux 6.1): the IRET intercept of each injected NMI. */
#define SVM_EXITS_PER_NMI		1
#define SVM_WINDOW_EXITS_PER_NMI	1
/* An NMI held during the handler: its own IRET plus one single-step. */
#define SVM_EXITS_PER_HELD_NMI		2

struct exit_counters {
	uint64_t exits;
	uint64_t irq_exits;
	uint64_t io_exits;
	uint64_t pf_taken;
	uint64_t nmi_window_exits;
	uint64_t nmi_injections;
};

static struct exit_counters read_counters(struct kvm_vm *vm)
{
	return (struct exit_counters) {
		.exits = vm_debugfs_stat(vm, "exits"),
		.irq_exits = vm_debugfs_stat(vm, "irq_exits"),
		.io_exits = vm_debugfs_stat(vm, "io_exits"),
		.pf_taken = vm_debugfs_stat(vm, "pf_taken"),
		.nmi_window_exits = vm_debugfs_stat(vm, "nmi_window_exits"),
		.nmi_injections = vm_debugfs_stat(vm, "nmi_injections"),
	};
}

static struct exit_counters counters_delta(const struct exit_counters *after,
					   const struct exit_counters *before)
{
	return (struct exit_counters) {
		.exits = after->exits - before->exits,
		.irq_exits = after->irq_exits - before->irq_exits,
		.io_exits = after->io_exits - before->io_exits,
		.pf_taken = after->pf_taken - before->pf_taken,
		.nmi_window_exits = after->nmi_window_exits - before->nmi_window_exits,
		.nmi_injections = after->nmi_injections - before->nmi_injections,
	};
}

/* Exits not explained by ucalls, host interrupts or nested page faults. */
static uint64_t unexplained_exits(const struct exit_counters *d)
{
	return d->exits - d->irq_exits - d->io_exits - d->pf_taken;
}

static void print_per_nmi(const char *what, uint64_t total, uint64_t nmis)
{
	/* Integer arithmetic: the test programs are built without SSE. */
	unsigned long long hundredths = total * 100 / nmis;

	printf("# measured: %s %llu for %llu NMIs = %llu.%02llu per NMI\n", what,
	       (unsigned long long)total, (unsigned long long)nmis,
	       hundredths / 100, hundredths % 100);
}

static void require_svm(struct kvm_vm *vm)
{
	/* The expected counts are SVM's; VMX has virtual NMIs. */
	TEST_REQUIRE(vm->cpu_is_amd);
}

static volatile uint64_t nmi_count;
static volatile bool sync_in_first_nmi;

static void guest_nmi_handler(struct ex_regs *regs)
{
	(void)regs;
	if (nmi_count++ == 0 && sync_in_first_nmi)
		GUEST_SYNC(0);
}

/* Sync @nr_syncs times, reporting how many NMIs the guest handled so far. */
static void guest_sync_loop(uint64_t nr_syncs)
{
	uint64_t i;

	for (i = 1; i <= nr_syncs; i++)
		GUEST_SYNC_ARGS(i, nmi_count, 0, 0);
	GUEST_DONE();
}

static uint64_t next_stage;

static void run_to_next_sync(struct kvm_vcpu *vcpu, uint64_t nmis_expected)
{
	struct ucall uc;

	vcpu_run_expect_sync(vcpu, ++next_stage, &uc);
	TEST_ASSERT(uc.args[1] == nmis_expected,
		    "guest handled %llu NMIs by sync %llu, expected %llu",
		    (unsigned long long)uc.args[1],
		    (unsigned long long)next_stage,
		    (unsigned long long)nmis_expected);
}

static void fail_counts(const char *what, const struct exit_counters *d)
{
	TEST_FAIL("%s: exits %llu, irq_exits %llu, io_exits %llu, pf_taken %llu, nmi_window_exits %llu, nmi_injections %llu",
		  what, (unsigned long long)d->exits,
		  (unsigned long long)d->irq_exits,
		  (unsigned long long)d->io_exits,
		  (unsigned long long)d->pf_taken,
		  (unsigned long long)d->nmi_window_exits,
		  (unsigned long long)d->nmi_injections);
}

static void test_one_nmi_at_a_time(void)
{
	struct exit_counters start, with_nmis, without_nmis, d_nmi, d_base;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;
	uint64_t i;

	vm = vm_create_with_one_vcpu(&vcpu, (guest_code_t)guest_sync_loop);
	require_svm(vm);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi_handler);
	vcpu_args_set(vcpu, 1, (uint64_t)2 + 2 * NMIS_MEASURED);

	/* Warm up: fault in the handler's code and stack before measuring. */
	run_to_next_sync(vcpu, 0);
	vcpu_nmi(vcpu);
	run_to_next_sync(vcpu, 1);

	start = read_counters(vm);
	for (i = 0; i < NMIS_MEASURED; i++) {
		vcpu_nmi(vcpu);
		run_to_next_sync(vcpu, 2 + i);
	}
	with_nmis = read_counters(vm);
	for (i = 0; i < NMIS_MEASURED; i++)
		run_to_next_sync(vcpu, 1 + NMIS_MEASURED);
	without_nmis = read_counters(vm);
	vcpu_run_expect_done(vcpu);
	kvm_vm_free(vm);

	d_nmi = counters_delta(&with_nmis, &start);
	d_base = counters_delta(&without_nmis, &with_nmis);
	print_per_nmi("exits beyond ucalls, host interrupts and page faults",
		      unexplained_exits(&d_nmi), NMIS_MEASURED);
	print_per_nmi("nmi_window_exits", d_nmi.nmi_window_exits,
		      NMIS_MEASURED);
	printf("# measured: host interrupt exits %llu and nested page faults %llu during the NMI phase; %llu and %llu in the baseline phase\n",
	       (unsigned long long)d_nmi.irq_exits,
	       (unsigned long long)d_nmi.pf_taken,
	       (unsigned long long)d_base.irq_exits,
	       (unsigned long long)d_base.pf_taken);

	if (d_base.nmi_injections || d_base.nmi_window_exits ||
	    unexplained_exits(&d_base))
		fail_counts("baseline without NMIs is not clean", &d_base);
	/*
	 * nmi_injections counts injection attempts: an entry cancelled after
	 * the NMI was set up (a pending request or reschedule) injects it
	 * again. The guest's handler count proved exactly-once delivery.
	 */
	printf("# measured: nmi_injections %llu for %d NMIs delivered\n",
	       (unsigned long long)d_nmi.nmi_injections, NMIS_MEASURED);
	if (d_nmi.nmi_injections < NMIS_MEASURED ||
	    d_nmi.io_exits != NMIS_MEASURED)
		fail_counts("expected one ucall and at least one injection per NMI",
			    &d_nmi);
	if (d_nmi.nmi_window_exits != SVM_WINDOW_EXITS_PER_NMI * NMIS_MEASURED)
		fail_counts("expected one nmi_window_exit (IRET intercept) per NMI",
			    &d_nmi);
	if (unexplained_exits(&d_nmi) != SVM_EXITS_PER_NMI * NMIS_MEASURED)
		fail_counts("expected exactly one extra exit per NMI", &d_nmi);
}

/*
 * Window: the first NMI is injected at sync 1, the second while its handler
 * syncs, then the guest syncs once more after both handlers ran.
 */
static void guest_nmi_during_handler(void)
{
	GUEST_SYNC(1);		/* warm-up NMI */
	sync_in_first_nmi = true;
	nmi_count = 0;
	GUEST_SYNC(2);		/* NMI 1 here, its handler syncs (stage 0) */
	GUEST_ASSERT_EQ(nmi_count, 2);
	GUEST_SYNC(3);
	GUEST_DONE();
}

static void test_nmi_during_handler(void)
{
	struct exit_counters before, after, d;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;

	vm = vm_create_with_one_vcpu(&vcpu, guest_nmi_during_handler);
	require_svm(vm);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_nmi_handler);

	vcpu_run_expect_sync(vcpu, 1, NULL);
	vcpu_nmi(vcpu);
	vcpu_run_expect_sync(vcpu, 2, NULL);

	before = read_counters(vm);
	vcpu_nmi(vcpu);
	vcpu_run_expect_sync(vcpu, 0, NULL);
	vcpu_nmi(vcpu);
	vcpu_run_expect_sync(vcpu, 3, NULL);
	after = read_counters(vm);
	vcpu_run_expect_done(vcpu);
	kvm_vm_free(vm);

	d = counters_delta(&after, &before);
	print_per_nmi("exits beyond ucalls, host interrupts and page faults (second NMI held)",
		      unexplained_exits(&d), 2);
	if (d.nmi_injections < 2 || d.io_exits != 2)
		fail_counts("expected 2 ucalls and at least 2 injections", &d);
	if (d.nmi_window_exits != 2 * SVM_WINDOW_EXITS_PER_NMI)
		fail_counts("expected one nmi_window_exit per NMI", &d);
	if (unexplained_exits(&d) != SVM_EXITS_PER_NMI + SVM_EXITS_PER_HELD_NMI)
		fail_counts("expected IRET, single-step, IRET exits", &d);
}

static const struct test_case cases[] = {
	{ "one_nmi_at_a_time", test_one_nmi_at_a_time },
	{ "nmi_during_handler", test_nmi_during_handler },
};

int main(int argc, char **argv)
{
	return test_run_cases("nmi_exit_counters", cases, ARRAY_SIZE(cases),
			      argc, argv);
}
