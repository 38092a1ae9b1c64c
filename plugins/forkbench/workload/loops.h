/*
 * loops.h: the timed loops shared by forkbench's workloads. Each workload
 * is its own static program, run as a separate process in the guest, so
 * the harness does not distort what it measures.
 */
#define _GNU_SOURCE
#include <lab.h>
#include <limits.h>
#include <pthread.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * fork_loop times n × (fork, the child exits, the parent waits). With
 * full_exit the child calls exit(0) (stdio flush, atexit handlers), as a
 * program that ends normally does; otherwise _exit(0).
 */
__attribute__((unused)) static double fork_loop(long n, int full_exit)
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
__attribute__((unused)) static double thread_loop(long n)
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

/*
 * finish_loops prints the lines every workload ends with and checks stdout.
 * real_s, from start, covers the lines before it; it is not lab.h's finish,
 * which would print the libc line after real_s, out of what real_s times.
 */
static int finish_loops(long n, double start)
{
	printf("libc glibc-%s\n", gnu_get_libc_version());
	printf("n %ld\n", n);
	printf("real_s %.6f s\n", now() - start);
	return flush_results(stdout);
}
