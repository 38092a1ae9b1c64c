/*
 * limit: how many threads one process can create (E1 step 2, SEEDS.md).
 *
 *   limit STACK_KB FAITHFUL WORKERS MAX_THREADS
 *
 * STACK_KB sets RLIMIT_STACK first and re-executes (0: the guest's limit),
 * so glibc's default thread stack is that size, as after `ulimit -s`.
 *
 * FAITHFUL 0 counts: threads with the default attributes, each blocked
 * until all are made, are created until pthread_create fails or
 * MAX_THREADS exist; prints threads (how many were made), error (what the
 * failing call returned, "none" if the cap was reached first) and the
 * process's VmSize with them all alive. Then all are released and joined.
 *
 * FAITHFUL 1 is the original thread.c: a child process creates WORKERS
 * threads into a local handle array without looking at what
 * pthread_create returned, then pthread_joins every handle; a handle that
 * was never set is joined all the same, which is the crash the article
 * saw. The child says how many creates succeeded (threads) and the first
 * error before the joins (it keeps the return values, and does nothing
 * with them); the parent reports how the child ended: signal (its number,
 * 0 if none), signal_name and exit_status. That the program crashed is
 * data, not a failure of this workload, which exits 0.
 */
#include "common.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int released;

static void *blocked(void *arg)
{
	pthread_mutex_lock(&mu);
	while (!released)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return arg;
}

static void *worker(void *arg)
{
	return arg;
}

static const char *errname(int err)
{
	switch (err) {
	case 0:
		return "none";
	case EAGAIN:
		return "EAGAIN";
	case ENOMEM:
		return "ENOMEM";
	case EINVAL:
		return "EINVAL";
	case EPERM:
		return "EPERM";
	}
	return "other";
}

static int count_threads(long max)
{
	pthread_t *tids = calloc(max, sizeof *tids);
	if (tids == NULL)
		die("calloc", errno);
	long n = 0;
	int err = 0;
	double t0 = now();
	for (; n < max; n++) {
		err = pthread_create(&tids[n], NULL, blocked, NULL);
		if (err != 0)
			break;
	}
	double create = now() - t0;
	long vmsize = status_kb("VmSize");
	pthread_mutex_lock(&mu);
	released = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (long i = 0; i < n; i++) {
		int e = pthread_join(tids[i], NULL);
		if (e != 0)
			die("pthread_join", e);
	}
	printf("threads %ld threads\n", n);
	printf("error %s\n", errname(err));
	printf("capped %d\n", err == 0);
	printf("vm_size_kb %ld kB\n", vmsize);
	printf("create_s %.6f s\n", create);
	return 0;
}

/*
 * original is the original thread.c's main: the handles are a local array
 * (uninitialised, as `pthread_t tid[P_NUMBER]` in main is), so a create
 * that failed leaves its entry holding whatever the stack held, and the
 * join of it is what crashes. (A zeroed array would not show the crash on
 * glibc 2.36: pthread_join of handle 0 returns ESRCH.)
 */
static void original(long workers)
{
	pthread_t tid[workers];
	int *rc = calloc(workers, sizeof *rc);
	if (rc == NULL)
		die("calloc", errno);
	for (long i = 0; i < workers; i++)
		rc[i] = pthread_create(&tid[i], NULL, worker, NULL);
	long ok = 0;
	int first = 0;
	for (long i = 0; i < workers; i++) {
		if (rc[i] == 0)
			ok++;
		else if (first == 0)
			first = rc[i];
	}
	printf("threads %ld threads\n", ok);
	printf("error %s\n", errname(first));
	fflush(stdout);
	for (long i = 0; i < workers; i++)
		pthread_join(tid[i], NULL);
	exit(0);
}

/* faithful runs the original program in a child and says how it ended. */
static int faithful(long workers)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0)
		original(workers);
	int st;
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid", errno);
	int sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	printf("signal %d\n", sig);
	printf("signal_name %s\n", sig == SIGSEGV ? "SIGSEGV" : sig == 0 ? "none" : sigabbrev_np(sig) ? sigabbrev_np(sig) : "other");
	printf("exit_status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

int main(int argc, char **argv)
{
	prog = "limit";
	if (argc != 5) {
		fprintf(stderr, "usage: limit STACK_KB FAITHFUL WORKERS MAX_THREADS\n");
		return 2;
	}
	with_stack_limit(parse_long("STACK_KB", argv[1], 0, 1 << 22), argv);
	long faithful_mode = parse_long("FAITHFUL", argv[2], 0, 1);
	long workers = parse_long("WORKERS", argv[3], 1, 1000000);
	long max = parse_long("MAX_THREADS", argv[4], 1, 1000000);
	printf("stack_kb %ld KB\n", stack_kb());
	if (faithful_mode)
		faithful(workers);
	else
		count_threads(max);
	return finish(stdout);
}
