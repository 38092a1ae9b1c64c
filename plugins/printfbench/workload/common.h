/*
 * common.h: what printfbench's workloads share. Each workload is its own
 * static program, run as a separate process in the guest, so the harness
 * does not distort what it measures. They print `key value [unit]` lines
 * for lab's printfbench plugin on the stdout they were started with, and
 * the lines they time on a descriptor of their own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* prog names the workload in its messages. */
static const char *prog;

static void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(err));
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		die("clock_gettime", errno);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* parse_long parses argument what, which must lie in [lo, hi]. */
static long parse_long(const char *what, const char *s, long lo, long hi)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || n < lo || n > hi) {
		fprintf(stderr, "%s: bad %s %s; want an integer in %ld..%ld\n", prog, what, s, lo, hi);
		exit(2);
	}
	return n;
}

__attribute__((unused)) static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* timed_out is set by SIGALRM: the timed child has run past its bound. */
static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

/*
 * wait_bounded waits for child with wait4 for at most timeout_s seconds;
 * past that the child is killed with SIGKILL, waited for, and 0 returned.
 * SIGALRM interrupts wait4 (no SA_RESTART).
 */
__attribute__((unused)) static int wait_bounded(pid_t child, long timeout_s, int *status, struct rusage *ru)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) != 0)
		die("sigaction SIGALRM", errno);
	timed_out = 0;
	alarm((unsigned)timeout_s);
	for (;;) {
		pid_t r = wait4(child, status, 0, ru);
		if (r == child)
			break;
		if (r < 0 && errno == EINTR) {
			if (timed_out) {
				kill(child, SIGKILL);
				while (wait4(child, status, 0, ru) < 0 && errno == EINTR)
					;
				alarm(0);
				return 0;
			}
			continue;
		}
		die("wait4", errno);
	}
	alarm(0);
	return 1;
}

/* finish prints the line every workload ends with and checks the output. */
static int finish(FILE *out)
{
	fprintf(out, "libc glibc-%s\n", gnu_get_libc_version());
	if (fflush(out) != 0 || ferror(out))
		die("write results", errno);
	return 0;
}
