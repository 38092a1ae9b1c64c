/*
 * common.h: what threadbench's workloads share. Each workload is its own
 * static program, run as a separate process in the guest, so the harness
 * does not distort what it measures. They print `key value [unit]` lines
 * for lab's threadbench plugin on the stdout they were started with.
 */
#define _GNU_SOURCE
#include <lab.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * set_stack_rlimit is setrlimit(RLIMIT_STACK, rl), falling back to the
 * system call that came before prlimit64 when the kernel has none (Linux
 * before 2.6.36, such as 2.6.32): glibc 2.36's setrlimit asks prlimit64
 * only, and fails with ENOSYS there.
 */
__attribute__((unused)) static int set_stack_rlimit(const struct rlimit *rl)
{
	struct {
		unsigned long cur, max;
	} old;

	if (setrlimit(RLIMIT_STACK, rl) == 0)
		return 0;
	if (errno != ENOSYS)
		return -1;
	old.cur = rl->rlim_cur == RLIM_INFINITY ? ~0UL : (unsigned long)rl->rlim_cur;
	old.max = rl->rlim_max == RLIM_INFINITY ? ~0UL : (unsigned long)rl->rlim_max;
	return syscall(SYS_setrlimit, RLIMIT_STACK, &old) == 0 ? 0 : -1;
}

/*
 * with_stack_limit makes RLIMIT_STACK's soft limit kb KB (0: leave it) and,
 * if it had to change it, re-executes the program: glibc takes the default
 * thread stack size from RLIMIT_STACK when a program starts, and the kernel
 * places the mmap area from it at exec, as after `ulimit -s kb` in a shell.
 */
__attribute__((unused)) static void with_stack_limit(long kb, char **argv)
{
	struct rlimit rl;

	if (kb == 0)
		return;
	if (getrlimit(RLIMIT_STACK, &rl) != 0)
		die("getrlimit RLIMIT_STACK", errno);
	if (rl.rlim_cur == (rlim_t)kb * 1024)
		return;
	rl.rlim_cur = (rlim_t)kb * 1024;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max) {
		fprintf(stderr, "%s: stack limit %ld KB is above the hard limit %lu KB\n", prog, kb, (unsigned long)(rl.rlim_max / 1024));
		exit(2);
	}
	if (set_stack_rlimit(&rl) != 0)
		die("setrlimit RLIMIT_STACK", errno);
	execv("/proc/self/exe", argv);
	die("re-exec /proc/self/exe with the new stack limit", errno);
}

/* stack_kb is the soft RLIMIT_STACK in KB, -1 for unlimited. */
__attribute__((unused)) static long stack_kb(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) != 0)
		die("getrlimit RLIMIT_STACK", errno);
	return rl.rlim_cur == RLIM_INFINITY ? -1 : (long)(rl.rlim_cur / 1024);
}

/* status_kb reads a "Name:   1234 kB" line of /proc/self/status. */
__attribute__((unused)) static long status_kb(const char *name)
{
	char line[256];
	long v = -1;
	size_t n = strlen(name);
	FILE *f = fopen("/proc/self/status", "r");
	if (f == NULL)
		die("open /proc/self/status", errno);
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, name, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	if (v < 0) {
		fprintf(stderr, "%s: no %s line in /proc/self/status\n", prog, name);
		exit(1);
	}
	return v;
}

/* meminfo_kb reads a line of /proc/meminfo ("Committed_AS"). */
__attribute__((unused)) static long meminfo_kb(const char *name)
{
	char line[256];
	long v = -1;
	size_t n = strlen(name);
	FILE *f = fopen("/proc/meminfo", "r");
	if (f == NULL)
		die("open /proc/meminfo", errno);
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, name, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	if (v < 0) {
		fprintf(stderr, "%s: no %s line in /proc/meminfo\n", prog, name);
		exit(1);
	}
	return v;
}
