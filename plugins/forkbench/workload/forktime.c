/*
 * forktime: the cost of fork() against pthread_create(), after the 2004
 * lecture notes' forktime.cc (E2 in SEEDS.md).
 *
 *   forktime N
 *
 * N times: fork, the child calls _exit(0), the parent waits for it. Then N
 * times: pthread_create of an empty function, pthread_join. Each loop is
 * timed with CLOCK_MONOTONIC. Prints `key value [unit]` lines for lab's
 * forkbench plugin. Any failed call ends the program with a message and a
 * non-zero status.
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
	fprintf(stderr, "forktime: %s: %s\n", what, strerror(err));
	exit(1);
}

static double now(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		die("clock_gettime", errno);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *empty(void *arg)
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
		fprintf(stderr, "forktime: bad count %s; want an integer >= 1\n", s);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	long n, i;
	double start, t0, fork_s, thread_s;

	if (argc != 2) {
		fprintf(stderr, "usage: forktime N\n");
		return 2;
	}
	n = parse_count(argv[1]);

	start = t0 = now();
	for (i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();
		if (pid < 0)
			die("fork", errno);
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid", errno);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "forktime: child %d ended with wait status %#x\n", (int)pid, status);
			return 1;
		}
	}
	fork_s = now() - t0;

	t0 = now();
	for (i = 0; i < n; i++) {
		pthread_t t;
		int err = pthread_create(&t, NULL, empty, NULL);
		if (err != 0)
			die("pthread_create", err);
		err = pthread_join(t, NULL);
		if (err != 0)
			die("pthread_join", err);
	}
	thread_s = now() - t0;

	printf("fork_wait_us %.3f us\n", fork_s / n * 1e6);
	printf("thread_create_join_us %.3f us\n", thread_s / n * 1e6);
	printf("ratio %.3f x\n", fork_s / thread_s);
	printf("libc glibc-%s\n", gnu_get_libc_version());
	printf("n %ld\n", n);
	printf("real_s %.6f s\n", now() - start);
	if (fflush(stdout) != 0 || ferror(stdout))
		die("write stdout", errno);
	return 0;
}
