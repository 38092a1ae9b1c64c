/*
 * loops.h: the timed loops shared by forkbench's workloads. Each workload
 * is its own static program, run as a separate process in the guest, so
 * the harness does not distort what it measures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <gnu/libc-version.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static long parse_count(const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || n < 1) {
		fprintf(stderr, "%s: bad count %s; want an integer >= 1\n", prog, s);
		exit(2);
	}
	return n;
}

/*
 * fork_loop times n × (fork, the child exits, the parent waits). With
 * full_exit the child calls exit(0) (stdio flush, atexit handlers), as a
 * program that ends normally does; otherwise _exit(0).
 */
static double fork_loop(long n, int full_exit)
{
	double t0 = now();
	for (long i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();
		if (pid < 0)
			die("fork", errno);
		if (pid == 0) {
			if (full_exit)
				exit(0);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid", errno);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "%s: child %d ended with wait status %#x\n", prog, (int)pid, status);
			exit(1);
		}
	}
	return now() - t0;
}

static void *empty(void *arg)
{
	return arg;
}

/* thread_loop times n × (pthread_create of an empty function, pthread_join). */
static double thread_loop(long n)
{
	double t0 = now();
	for (long i = 0; i < n; i++) {
		pthread_t t;
		int err = pthread_create(&t, NULL, empty, NULL);
		if (err != 0)
			die("pthread_create", err);
		err = pthread_join(t, NULL);
		if (err != 0)
			die("pthread_join", err);
	}
	return now() - t0;
}

/* finish prints the lines every workload ends with and checks stdout. */
static int finish(long n, double start)
{
	printf("libc glibc-%s\n", gnu_get_libc_version());
	printf("n %ld\n", n);
	printf("real_s %.6f s\n", now() - start);
	if (fflush(stdout) != 0 || ferror(stdout))
		die("write stdout", errno);
	return 0;
}
