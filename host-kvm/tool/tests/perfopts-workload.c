// SPDX-License-Identifier: GPL-2.0
/*
 * The program perf-compare.py records with perf: two processes with their
 * own command names, user functions that call each other (recursion
 * included) and system calls that spend time in the kernel.
 *
 * It is built static, without libc (-nostdlib, its own _start) and with
 * frame pointers, so that perf names every frame of every sample: a frame
 * perf cannot name is printed "[unknown]", however many addresses it
 * stands for, and would blur the comparison of the two reports.
 *
 * usage: perfopts-workload [ROUNDS]
 */

#define SYS_READ	0
#define SYS_OPEN	2
#define SYS_EXIT	60
#define SYS_FORK	57
#define SYS_WAIT4	61
#define SYS_PRCTL	157
#define PR_SET_NAME	15

/*
 * perf 6.1 names an address in the first function of .text of such a
 * binary after the last symbol of .bss: the first function is one no
 * sample is ever in.
 */
__attribute__((used, noinline)) static void text_start(void)
{
}

static inline __attribute__((always_inline)) long sys3(long n, long a, long b, long c)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

static volatile unsigned long sink;
static char buf[1 << 16];
static long zero_fd;

__attribute__((noinline)) static void spin(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline)) static void parse(void)
{
	spin(20000);
}

__attribute__((noinline)) static void render(void)
{
	spin(35000);
}

/* The kernel clears the buffer: time in clear_user and its callers. */
__attribute__((noinline)) static void fill(void)
{
	sys3(SYS_READ, zero_fd, (long)buf, sizeof(buf));
}

__attribute__((noinline)) static void handle(int i)
{
	if (i % 3 == 0)
		parse();
	else if (i % 3 == 1)
		render();
	fill();
}

__attribute__((noinline)) static void walk(int depth)
{
	if (depth)
		walk(depth - 1);
	else
		parse();
}

__attribute__((noinline)) static void serve(long rounds)
{
	long i;

	for (i = 0; i < rounds; i++) {
		handle((int)i);
		if (i % 5 == 0)
			walk(3);
	}
}

__attribute__((noinline)) static void child_main(long rounds)
{
	long i;

	sys3(SYS_PRCTL, PR_SET_NAME, (long)"wl-child", 0);
	for (i = 0; i < rounds; i++)
		walk((int)(i % 4));
}

static long parse_rounds(const char *s)
{
	long v = 0;

	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return v ? v : 3000;
}

long start_c(long *sp)
{
	long argc = sp[0];
	long rounds = argc > 1 ? parse_rounds((const char *)sp[2]) : 3000;

	zero_fd = sys3(SYS_OPEN, (long)"/dev/zero", 0, 0);
	if (zero_fd < 0)
		return 1;
	if (sys3(SYS_FORK, 0, 0, 0) == 0) {
		child_main(rounds);
		return 0;
	}
	serve(rounds);
	sys3(SYS_WAIT4, -1, 0, 0);
	return 0;
}

/* The chain ends here: a zero frame pointer, then the C entry. */
__attribute__((naked)) void _start(void)
{
	__asm__("xor %rbp, %rbp\n\t"
		"mov %rsp, %rdi\n\t"
		"and $-16, %rsp\n\t"
		"call start_c\n\t"
		"mov %rax, %rdi\n\t"
		"mov $60, %rax\n\t"
		"syscall\n");
}
