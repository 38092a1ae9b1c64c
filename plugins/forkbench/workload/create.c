/*
 * create: create and destroy M processes, then M threads, after the
 * forkcreat.c and pthreadcreat.c of E1 step 4 in SEEDS.md.
 *
 *   create M
 *
 * Processes: fork, the child exits, the parent waits. Threads:
 * pthread_create, the thread returns, pthread_join. Each loop is timed with
 * CLOCK_MONOTONIC. Prints totals (process_s, thread_s), the cost of one
 * (process_ms, thread_ms) and their ratio as `key value [unit]` lines for
 * lab's forkbench plugin. Any failed call ends the program with a message
 * and a non-zero status.
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

static void die(const char *what, int err)
{
	fprintf(stderr, "create: %s: %s\n", what, strerror(err));
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		die("clock_gettime", errno);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	return arg;
}

static long parse_count(const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || n < 1) {
		fprintf(stderr, "create: bad count %s; want an integer >= 1\n", s);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	long m, i;
	double start, t0, process_s, thread_s;

	if (argc != 2) {
		fprintf(stderr, "usage: create M\n");
		return 2;
	}
	m = parse_count(argv[1]);

	start = t0 = now();
	for (i = 0; i < m; i++) {
		int status;
		pid_t pid = fork();
		if (pid < 0)
			die("fork", errno);
		if (pid == 0)
			exit(0);
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid", errno);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "create: child %d ended with wait status %#x\n", (int)pid, status);
			return 1;
		}
	}
	process_s = now() - t0;

	t0 = now();
	for (i = 0; i < m; i++) {
		pthread_t t;
		int err = pthread_create(&t, NULL, worker, NULL);
		if (err != 0)
			die("pthread_create", err);
		err = pthread_join(t, NULL);
		if (err != 0)
			die("pthread_join", err);
	}
	thread_s = now() - t0;

	printf("process_s %.6f s\n", process_s);
	printf("thread_s %.6f s\n", thread_s);
	printf("process_ms %.6f ms\n", process_s / m * 1e3);
	printf("thread_ms %.6f ms\n", thread_s / m * 1e3);
	printf("ratio %.3f x\n", process_s / thread_s);
	printf("libc glibc-%s\n", gnu_get_libc_version());
	printf("n %ld\n", m);
	printf("real_s %.6f s\n", now() - start);
	if (fflush(stdout) != 0 || ferror(stdout))
		die("write stdout", errno);
	return 0;
}
