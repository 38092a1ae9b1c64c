/*
 * requests: thread-per-request against one thread (E4, SEEDS.md: the
 * Russian article's .NET program, in C).
 *
 *   requests R DELAY_MS STACK_KB
 *
 * A request is: sleep DELAY_MS, then increment a counter. Serial: one loop
 * of R requests. Threaded, as the source did it: the main thread takes the
 * one lock, starts R threads with STACK_KB stacks one after the other
 * while it holds it, then lets go of it and waits until the counter is R,
 * then joins them all; each thread takes the lock, does its request under
 * it and lets go. No request starts before the last thread is started.
 *
 * Times (CLOCK_MONOTONIC): serial_ms; threaded_ms, from the first
 * pthread_create until the counter is R; start_ms, until the last
 * pthread_create returned (the source's "start", the lock held);
 * first_lock_ms, until the first thread took the lock (a check: never
 * before start_ms); growth_ms, threaded_ms - serial_ms (E4: the total
 * grows by the start time). Memory: the process's VmRSS and VmSize during the
 * serial loop and at the end of the start loop (every thread exists,
 * waiting for the lock, where the source read Private Bytes), and the
 * system's Committed_AS then against before the threads; per thread,
 * those differences divided by R. CPU (CLOCK_PROCESS_CPUTIME_ID, every
 * thread's, to the ns: rusage's ticks cannot resolve the serial loop's
 * few ms): serial_cpu_ms around the serial loop, threaded_cpu_ms from
 * before the first pthread_create until every thread is joined. Any
 * failed call ends the program with a message and status 1.
 */
#include "common.h"

static long delay_ns;
static long requests;
static long counter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static double first_lock; /* now() when the first thread took the lock */

static void request(void)
{
	struct timespec ts = {delay_ns / 1000000000L, delay_ns % 1000000000L};
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	counter++;
}

static void *thread_main(void *arg)
{
	pthread_mutex_lock(&lock);
	if (counter == 0)
		first_lock = now();
	request();
	if (counter == requests)
		pthread_cond_signal(&done);
	pthread_mutex_unlock(&lock);
	return arg;
}

/* cpu_ms is the CPU time of every thread of the process, in ms. */
static double cpu_ms(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		die("clock_gettime CLOCK_PROCESS_CPUTIME_ID", errno);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	prog = "requests";
	if (argc != 4) {
		fprintf(stderr, "usage: requests R DELAY_MS STACK_KB\n");
		return 2;
	}
	requests = parse_long("R", argv[1], 1, 100000);
	long delay_ms = parse_long("DELAY_MS", argv[2], 0, 10000);
	long stack = parse_long("STACK_KB", argv[3], 16, 1 << 20);
	delay_ns = delay_ms * 1000000L;

	/* Serial. */
	double c0 = cpu_ms(), t0 = now();
	for (long i = 0; i < requests; i++)
		request();
	double serial = (now() - t0) * 1e3, serial_cpu = cpu_ms() - c0;
	long serial_rss = status_kb("VmRSS"), serial_vm = status_kb("VmSize");
	if (counter != requests) {
		fprintf(stderr, "%s: serial counter %ld, want %ld\n", prog, counter, requests);
		return 1;
	}

	/* Threaded. */
	pthread_attr_t attr;
	int err = pthread_attr_init(&attr);
	if (err == 0)
		err = pthread_attr_setstacksize(&attr, (size_t)stack * 1024);
	if (err != 0)
		die("pthread_attr_setstacksize", err);
	pthread_t *tids = calloc(requests, sizeof *tids);
	if (tids == NULL)
		die("calloc", errno);
	long committed0 = meminfo_kb("Committed_AS");
	/* The lock is held from before the first thread is started until
	 * the wait below lets go of it. */
	pthread_mutex_lock(&lock);
	counter = 0;
	c0 = cpu_ms();
	t0 = now();
	for (long i = 0; i < requests; i++) {
		err = pthread_create(&tids[i], &attr, thread_main, NULL);
		if (err != 0) {
			fprintf(stderr, "%s: pthread_create request %ld of %ld: %s\n", prog, i + 1, requests, strerror(err));
			exit(1);
		}
	}
	double start = (now() - t0) * 1e3;
	long rss = status_kb("VmRSS"), vm = status_kb("VmSize"), committed = meminfo_kb("Committed_AS");
	while (counter < requests)
		pthread_cond_wait(&done, &lock);
	pthread_mutex_unlock(&lock);
	double threaded = (now() - t0) * 1e3;
	for (long i = 0; i < requests; i++) {
		err = pthread_join(tids[i], NULL);
		if (err != 0)
			die("pthread_join", err);
	}
	double threaded_cpu = cpu_ms() - c0;

	printf("requests %ld\n", requests);
	printf("delay_ms %ld ms\n", delay_ms);
	printf("stack_kb %ld KB\n", stack);
	printf("serial_ms %.3f ms\n", serial);
	printf("serial_request_ms %.4f ms\n", serial / requests);
	printf("serial_overhead_ms %.4f ms\n", serial / requests - delay_ms);
	printf("threaded_ms %.3f ms\n", threaded);
	printf("start_ms %.3f ms\n", start);
	printf("thread_start_ms %.4f ms\n", start / requests);
	printf("growth_ms %.3f ms\n", threaded - serial);
	printf("first_lock_ms %.3f ms\n", (first_lock - t0) * 1e3);
	printf("serial_cpu_ms %.4f ms\n", serial_cpu);
	printf("threaded_cpu_ms %.4f ms\n", threaded_cpu);
	printf("serial_rss_kb %ld kB\n", serial_rss);
	printf("serial_vm_size_kb %ld kB\n", serial_vm);
	printf("threaded_rss_kb %ld kB\n", rss);
	printf("threaded_vm_size_kb %ld kB\n", vm);
	printf("committed_kb %ld kB\n", committed - committed0);
	printf("rss_per_thread_kb %.2f kB\n", (double)(rss - serial_rss) / requests);
	printf("vm_size_per_thread_kb %.2f kB\n", (double)(vm - serial_vm) / requests);
	printf("committed_per_thread_kb %.2f kB\n", (double)(committed - committed0) / requests);
	return finish(stdout);
}
