/*
 * switch: the cost of switching between two processes, then between two
 * threads of one process, for E1's "switching between threads takes far
 * less time than switching between processes" (E1.11 in SEEDS.md).
 *
 *   switch N
 *
 * Two tasks pass one byte back and forth over two pipes N times (lmbench's
 * lat_ctx with no working set): each round trip blocks each task once, so
 * on one CPU it is two context switches and four pipe system calls. First
 * the two tasks are a parent and its forked child (a switch changes
 * address space), then the main thread and a second thread (a switch
 * keeps it). Each loop is timed with CLOCK_MONOTONIC, from the first write
 * to the last read; the other task is made and waiting before. Prints the
 * time a switch (process_switch_us, thread_switch_us: a round trip's time
 * over 2, pipe calls included) and their ratio as `key value [unit]`
 * lines for lab's forkbench plugin. Any failed call ends the program with
 * a message and a non-zero status.
 */
#include "loops.h"

/* pong answers each byte read from in with one written to out, n times. */
static void pong(int in, int out, long n)
{
	char c;
	for (long i = 0; i < n; i++) {
		if (read(in, &c, 1) != 1)
			die("read", errno);
		if (write(out, &c, 1) != 1)
			die("write", errno);
	}
}

/* ping times n round trips: a byte written to out, one read from in. */
static double ping(int out, int in, long n)
{
	char c = 'x';
	double t0 = now();
	for (long i = 0; i < n; i++) {
		if (write(out, &c, 1) != 1)
			die("write", errno);
		if (read(in, &c, 1) != 1)
			die("read", errno);
	}
	return now() - t0;
}

struct pipes {
	int there[2], back[2];
	long n;
};

static void open_pipes(struct pipes *p)
{
	if (pipe(p->there) != 0 || pipe(p->back) != 0)
		die("pipe", errno);
}

static void close_pipes(struct pipes *p)
{
	close(p->there[0]);
	close(p->there[1]);
	close(p->back[0]);
	close(p->back[1]);
}

static double process_loop(long n)
{
	struct pipes p = {.n = n};
	open_pipes(&p);
	pid_t pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		pong(p.there[0], p.back[1], n);
		_exit(0);
	}
	double t = ping(p.there[1], p.back[0], n);
	int status;
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid", errno);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s: child %d ended with wait status %#x\n", prog, (int)pid, status);
		exit(1);
	}
	close_pipes(&p);
	return t;
}

static void *pong_thread(void *arg)
{
	struct pipes *p = arg;
	pong(p->there[0], p->back[1], p->n);
	return NULL;
}

static double thread_loop_switch(long n)
{
	struct pipes p = {.n = n};
	open_pipes(&p);
	pthread_t t;
	int err = pthread_create(&t, NULL, pong_thread, &p);
	if (err != 0)
		die("pthread_create", err);
	double s = ping(p.there[1], p.back[0], n);
	if ((err = pthread_join(t, NULL)) != 0)
		die("pthread_join", err);
	close_pipes(&p);
	return s;
}

int main(int argc, char **argv)
{
	prog = "switch";
	if (argc != 2) {
		fprintf(stderr, "usage: switch N\n");
		return 2;
	}
	long n = parse_long("N", argv[1], 1, LONG_MAX);
	double start = now();
	double process_s = process_loop(n);
	double thread_s = thread_loop_switch(n);

	printf("process_switch_us %.4f us\n", process_s / n / 2 * 1e6);
	printf("thread_switch_us %.4f us\n", thread_s / n / 2 * 1e6);
	printf("ratio %.3f x\n", process_s / thread_s);
	return finish_loops(n, start);
}
