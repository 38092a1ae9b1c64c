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
#include "loops.h"

int main(int argc, char **argv)
{
	prog = "forktime";
	if (argc != 2) {
		fprintf(stderr, "usage: forktime N\n");
		return 2;
	}
	long n = parse_long("N", argv[1], 1, LONG_MAX);
	double start = now();
	double fork_s = fork_loop(n, 0);
	double thread_s = thread_loop(n);

	printf("fork_wait_us %.3f us\n", fork_s / n * 1e6);
	printf("thread_create_join_us %.3f us\n", thread_s / n * 1e6);
	printf("ratio %.3f x\n", fork_s / thread_s);
	return finish_loops(n, start);
}
