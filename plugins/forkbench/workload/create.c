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
#include "loops.h"

int main(int argc, char **argv)
{
	prog = "create";
	if (argc != 2) {
		fprintf(stderr, "usage: create M\n");
		return 2;
	}
	long m = parse_long("M", argv[1], 1, LONG_MAX);
	double start = now();
	double process_s = fork_loop(m, 1);
	double thread_s = thread_loop(m);

	printf("process_s %.6f s\n", process_s);
	printf("thread_s %.6f s\n", thread_s);
	printf("process_ms %.6f ms\n", process_s / m * 1e3);
	printf("thread_ms %.6f ms\n", thread_s / m * 1e3);
	printf("ratio %.3f x\n", process_s / thread_s);
	return finish_loops(m, start);
}
