// SPDX-License-Identifier: GPL-2.0
/*
 * unwind-test's fixture: a program with a known call chain at a chosen
 * point, where it captures its own user registers and the top of its stack
 * the way the guest driver would, and writes them with its executable
 * mappings (what the guest agent would publish) to a snapshot file.
 * Built with -O2 -fomit-frame-pointer, so only CFI can walk it.
 *
 * usage: unwind-fixture CASE OUT
 *	CASE: chain, rec, qsort, tail, signal or thread
 *
 * Snapshot format (text lines, then raw bytes):
 *	regs IP SP BP BX R12 R13 R14 R15	(hex)
 *	map START END OFFSET PATH		(hex; executable mappings)
 *	stack LEN
 *	LEN bytes of stack from SP upward
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE	__attribute__((noinline, noclone))
#define STACK_MAX	(256 * 1024)
#define REC_DEPTH	10

static uint64_t snap_regs[8];
static const char *out_path;
volatile int sink;

/*
 * One asm statement: rip (of the next instruction) and rsp then belong to
 * the same point of the function, so its CFI row applies to both.
 */
#define CAPTURE()							\
	asm volatile("lea 0(%%rip), %%rax\n\t"				\
		     "mov %%rax, 0(%0)\n\t"				\
		     "mov %%rsp, 8(%0)\n\t"				\
		     "mov %%rbp, 16(%0)\n\t"				\
		     "mov %%rbx, 24(%0)\n\t"				\
		     "mov %%r12, 32(%0)\n\t"				\
		     "mov %%r13, 40(%0)\n\t"				\
		     "mov %%r14, 48(%0)\n\t"				\
		     "mov %%r15, 56(%0)"				\
		     : : "r" (snap_regs) : "rax", "memory")

/*
 * Called right after CAPTURE(): its own frame is below the captured rsp,
 * so the bytes above it are the capturing frame and its callers'.
 */
NOINLINE void snap_write(void)
{
	uint64_t sp = snap_regs[1], start, end, off, stack_end = 0;
	char line[4096], perms[8], path[4096];
	FILE *maps = fopen("/proc/self/maps", "r");
	FILE *out = fopen(out_path, "w");
	size_t len;
	int i;

	if (!maps || !out) {
		perror("unwind-fixture: open");
		exit(1);
	}
	fprintf(out, "regs");
	for (i = 0; i < 8; i++)
		fprintf(out, " %" PRIx64, snap_regs[i]);
	fprintf(out, "\n");
	while (fgets(line, sizeof(line), maps)) {
		path[0] = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*u %4095s",
			   &start, &end, perms, &off, path) < 4)
			continue;
		if (sp >= start && sp < end)
			stack_end = end;
		if (perms[2] == 'x' && path[0])
			fprintf(out, "map %" PRIx64 " %" PRIx64 " %" PRIx64 " %s\n",
				start, end, off, path);
	}
	if (!stack_end) {
		fprintf(stderr, "unwind-fixture: no mapping holds sp %" PRIx64 "\n", sp);
		exit(1);
	}
	len = stack_end - sp < STACK_MAX ? stack_end - sp : STACK_MAX;
	fprintf(out, "stack %zu\n", len);
	fwrite((const void *)(uintptr_t)sp, 1, len, out);
	if (fclose(out)) {
		perror("unwind-fixture: write");
		exit(1);
	}
	fclose(maps);
}

#define SNAP() do { CAPTURE(); snap_write(); } while (0)

/* main -> fx_a -> fx_b -> fx_c, a hot leaf loop that then snapshots. */
NOINLINE int fx_c(int x)
{
	int i, s = 0;

	for (i = 0; i < 100000 + x; i++)
		s += i * x ^ (s >> 3);
	SNAP();
	return s;
}

NOINLINE int fx_b(int x)
{
	int r = fx_c(x + 1);

	sink = r;
	return r * 3;
}

NOINLINE int fx_a(int x)
{
	int r = fx_b(x * 2);

	sink = r + 7;
	return r - x;
}

/* Not tail-recursive: buf is read after the call. */
NOINLINE int fx_rec(int n)
{
	volatile char buf[16];
	int r;

	buf[0] = n;
	if (n == 0) {
		SNAP();
		return buf[0];
	}
	r = fx_rec(n - 1);
	return r + buf[0];
}

static int snapped;

NOINLINE int fx_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!snapped) {
		snapped = 1;
		SNAP();
	}
	return (x > y) - (x < y);
}

NOINLINE int fx_sort_caller(void)
{
	int arr[64], i;

	for (i = 0; i < 64; i++)
		arr[i] = 64 - i;
	qsort(arr, 64, sizeof(arr[0]), fx_cmp);
	sink = arr[0];
	return arr[63];
}

/* fx_tb tail-calls fx_tc: the chain is fx_tc, fx_ta, main. */
NOINLINE int fx_tc(int x)
{
	SNAP();
	return x + 5;
}

NOINLINE int fx_tb(int x)
{
	sink = x;
	return fx_tc(x * 2);
}

NOINLINE int fx_ta(int x)
{
	int r = fx_tb(x + 3);

	sink = r;
	return r + 1;
}

NOINLINE void fx_handler(int sig)
{
	SNAP();
	sink = sig;
}

NOINLINE int fx_sig_caller(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fx_handler;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	sink = 1;
	return sink;
}

NOINLINE int fx_tleaf(int x)
{
	SNAP();
	return x * 7;
}

NOINLINE void *fx_thread(void *arg)
{
	int r = fx_tleaf((int)(uintptr_t)arg);

	sink = r;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int r = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: unwind-fixture CASE OUT\n");
		return 2;
	}
	out_path = argv[2];
	if (!strcmp(argv[1], "chain"))
		r = fx_a(argc);
	else if (!strcmp(argv[1], "rec"))
		r = fx_rec(REC_DEPTH);
	else if (!strcmp(argv[1], "qsort"))
		r = fx_sort_caller();
	else if (!strcmp(argv[1], "tail"))
		r = fx_ta(argc);
	else if (!strcmp(argv[1], "signal"))
		r = fx_sig_caller();
	else if (!strcmp(argv[1], "thread")) {
		if (pthread_create(&t, NULL, fx_thread, (void *)(uintptr_t)argc) ||
		    pthread_join(t, NULL))
			return 1;
	} else {
		fprintf(stderr, "unwind-fixture: unknown case %s\n", argv[1]);
		return 2;
	}
	sink = r;
	return 0;
}
