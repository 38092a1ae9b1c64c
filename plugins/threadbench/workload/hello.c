/*
 * hello: E1's fork.c / thread.c (SEEDS.md, steps 1, 3 and 5).
 *
 *   hello MODE WORKERS COUNT LINE_BYTES STDOUT STACK_KB DIR
 *
 * Creates WORKERS workers, processes (MODE process: fork) or threads (MODE
 * thread: pthread_create with the default attributes); each writes COUNT
 * lines of LINE_BYTES bytes ("hello linux\n" when 12, else "hello linux"
 * padded with '.') to its stdout with printf-style stdio and appends them to
 * DIR/hello.log (each worker fopen()s it "a"); the parent waits for, or
 * joins, them all. STACK_KB sets RLIMIT_STACK first (0: the guest's).
 *
 * Where the workers' stdout goes (STDOUT):
 *   pty     the slave of a pseudo-terminal whose master a reader process
 *           drains, as a terminal would: it stands for the console the
 *           originals printed to (stdio line-buffers a terminal, so every
 *           line is a write, and a slow reader holds the writers back);
 *   null    /dev/null (stdio buffers fully);
 *   file    DIR/stdout.txt (fully buffered);
 *   serial  /dev/ttyS0, the guest's serial console (line-buffered).
 *
 * real_s is CLOCK_MONOTONIC from before the first worker is created to
 * after the last is waited for; user_s and sys_s are the workers' and the
 * parent's CPU time over that span (getrusage: the parent's own, plus its
 * waited children), without the pty reader, as `time ./fork` counted the
 * program and not the terminal. The results go to the stdout the workload
 * was started with. A failed fork or pthread_create, a worker that ends
 * badly, or a log shorter than written ends the program with a message
 * and status 1; a log that cannot fit in DIR's free space is refused
 * (status 3) before anything is started.
 */
#include "common.h"
#include <sys/statvfs.h>

static long count;
static char *line;
static size_t line_len;
static char logpath[4096];
static int thread_failed;

/* work is one worker: COUNT lines to stdout and to the log. */
static int work(void)
{
	FILE *log = fopen(logpath, "a");
	if (log == NULL)
		return errno;
	for (long i = 0; i < count; i++) {
		fputs(line, stdout);
		fputs(line, log);
	}
	int err = 0;
	if (fclose(log) != 0)
		err = errno ? errno : EIO;
	if (fflush(stdout) != 0 || ferror(stdout))
		err = errno ? errno : EIO;
	return err;
}

static void *thread_main(void *arg)
{
	(void)arg;
	if (work() != 0)
		__atomic_store_n(&thread_failed, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* drain reads the pty master to EOF (EIO once every slave is closed) and
 * writes how many bytes it read to fd out. */
static void drain(int master, int out)
{
	static char buf[65536];
	long long total = 0;
	for (;;) {
		ssize_t n = read(master, buf, sizeof buf);
		if (n > 0) {
			total += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	dprintf(out, "%lld\n", total);
	_exit(0);
}

/* open_target opens where the workers' stdout goes; *reader is the pid of
 * the pty reader (0 for none) and *bytes_fd the pipe it reports on. */
static int open_target(const char *target, const char *dir, pid_t *reader, int *bytes_fd)
{
	char path[4096];
	int fd;

	*reader = 0;
	*bytes_fd = -1;
	if (strcmp(target, "null") == 0) {
		fd = open("/dev/null", O_WRONLY);
	} else if (strcmp(target, "file") == 0) {
		snprintf(path, sizeof path, "%s/stdout.txt", dir);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	} else if (strcmp(target, "serial") == 0) {
		fd = open("/dev/ttyS0", O_WRONLY | O_NOCTTY);
	} else if (strcmp(target, "pty") == 0) {
		int master = posix_openpt(O_RDWR | O_NOCTTY), p[2];
		if (master < 0)
			die("posix_openpt (is devpts mounted?)", errno);
		if (grantpt(master) != 0 || unlockpt(master) != 0)
			die("grantpt/unlockpt", errno);
		const char *slave = ptsname(master);
		if (slave == NULL)
			die("ptsname", errno);
		fd = open(slave, O_WRONLY | O_NOCTTY);
		if (fd < 0)
			die(slave, errno);
		if (pipe(p) != 0)
			die("pipe", errno);
		*reader = fork();
		if (*reader < 0)
			die("fork the pty reader", errno);
		if (*reader == 0) {
			close(fd);
			close(p[0]);
			drain(master, p[1]);
		}
		close(master);
		close(p[1]);
		*bytes_fd = p[0];
	} else {
		fprintf(stderr, "%s: bad STDOUT %s; want pty, null, file or serial\n", prog, target);
		exit(2);
	}
	if (fd < 0)
		die(target, errno);
	return fd;
}

static long long file_size(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		die(path, errno);
	return st.st_size;
}

int main(int argc, char **argv)
{
	prog = "hello";
	if (argc != 8) {
		fprintf(stderr, "usage: hello process|thread WORKERS COUNT LINE_BYTES pty|null|file|serial STACK_KB DIR\n");
		return 2;
	}
	const char *mode = argv[1], *target = argv[5], *dir = argv[7];
	int threads = strcmp(mode, "thread") == 0;
	if (!threads && strcmp(mode, "process") != 0) {
		fprintf(stderr, "%s: bad MODE %s; want process or thread\n", prog, mode);
		return 2;
	}
	long workers = parse_long("WORKERS", argv[2], 1, 100000);
	count = parse_long("COUNT", argv[3], 1, 100000000);
	line_len = parse_long("LINE_BYTES", argv[4], 12, 65536);
	with_stack_limit(parse_long("STACK_KB", argv[6], 0, 1 << 22), argv);

	line = malloc(line_len + 1);
	if (line == NULL)
		die("malloc", errno);
	memset(line, '.', line_len);
	memcpy(line, "hello linux", 11);
	line[line_len - 1] = '\n';
	line[line_len] = '\0';

	/* The log (and a stdout file) live in DIR, in the guest's RAM: refuse
	 * a run that cannot fit rather than fill it half way. */
	long long need = (long long)workers * count * line_len * (strcmp(target, "file") == 0 ? 2 : 1);
	struct statvfs vfs;
	if (statvfs(dir, &vfs) != 0)
		die(dir, errno);
	long long avail = (long long)vfs.f_bavail * vfs.f_frsize;
	if (need > avail * 9 / 10) {
		fprintf(stderr, "%s: the output needs %lld KB in %s, which has %lld KB free; lower count, workers or line_bytes\n",
			prog, need / 1024, dir, avail / 1024);
		return 3;
	}
	snprintf(logpath, sizeof logpath, "%s/hello.log", dir);
	int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(logpath, errno);
	close(fd);

	/* Results go to the stdout we were started with; the workers'
	 * stdout is the target. stdout's FILE is unused so far, so stdio
	 * picks its buffering from the target (line-buffered for a tty). */
	int resfd = dup(1);
	if (resfd < 0)
		die("dup stdout", errno);
	FILE *res = fdopen(resfd, "w");
	if (res == NULL)
		die("fdopen", errno);
	pid_t reader;
	int bytes_fd;
	fd = open_target(target, dir, &reader, &bytes_fd);
	if (dup2(fd, 1) < 0)
		die("dup2", errno);
	close(fd);
	fcntl(resfd, F_SETFD, FD_CLOEXEC);

	pid_t *pids = calloc(workers, sizeof *pids);
	pthread_t *tids = calloc(workers, sizeof *tids);
	if (pids == NULL || tids == NULL)
		die("calloc", errno);
	struct rusage self0, self1, kids;
	if (getrusage(RUSAGE_SELF, &self0) != 0)
		die("getrusage", errno);
	double t0 = now();
	for (long i = 0; i < workers; i++) {
		if (threads) {
			int err = pthread_create(&tids[i], NULL, thread_main, NULL);
			if (err != 0) {
				fprintf(stderr, "%s: pthread_create worker %ld of %ld: %s (stack limit %ld KB)\n", prog, i + 1, workers, strerror(err), stack_kb());
				exit(1);
			}
			continue;
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			int err = errno;
			fprintf(stderr, "%s: fork worker %ld of %ld: %s\n", prog, i + 1, workers, strerror(err));
			for (long j = 0; j < i; j++)
				kill(pids[j], SIGKILL);
			exit(1);
		}
		if (pids[i] == 0) {
			close(resfd);
			_exit(work() == 0 ? 0 : 1);
		}
	}
	long bad = 0;
	int bad_status = 0;
	for (long i = 0; i < workers; i++) {
		if (threads) {
			int err = pthread_join(tids[i], NULL);
			if (err != 0)
				die("pthread_join", err);
			continue;
		}
		int st;
		if (waitpid(pids[i], &st, 0) != pids[i])
			die("waitpid", errno);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			bad++;
			bad_status = st;
		}
	}
	if (threads && fflush(stdout) != 0)
		thread_failed = 1;
	double real = now() - t0;
	if (getrusage(RUSAGE_SELF, &self1) != 0 || getrusage(RUSAGE_CHILDREN, &kids) != 0)
		die("getrusage", errno);

	/* Close the target so the pty reader sees EOF, then collect it. */
	int devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0 || dup2(devnull, 1) < 0)
		die("reopen stdout", errno);
	long long drained = -1;
	if (reader > 0) {
		FILE *b = fdopen(bytes_fd, "r");
		if (b == NULL || fscanf(b, "%lld", &drained) != 1)
			drained = -1;
		int st;
		waitpid(reader, &st, 0);
	}
	if (bad > 0) {
		if (WIFSIGNALED(bad_status))
			fprintf(stderr, "%s: %ld of %ld workers failed; one was killed by signal %d (%s)\n", prog, bad, workers,
				WTERMSIG(bad_status), strsignal(WTERMSIG(bad_status)));
		else
			fprintf(stderr, "%s: %ld of %ld workers failed; one exited with status %d\n", prog, bad, workers, WEXITSTATUS(bad_status));
		return 1;
	}
	if (thread_failed) {
		fprintf(stderr, "%s: a worker thread could not write its lines\n", prog);
		return 1;
	}
	long long want = (long long)workers * count * line_len;
	long long got = file_size(logpath);
	unlink(logpath);
	if (got != want) {
		fprintf(stderr, "%s: %s holds %lld bytes, want %lld (workers x count x line_bytes)\n", prog, logpath, got, want);
		return 1;
	}
	if (strcmp(target, "file") == 0) {
		char path[4096];
		snprintf(path, sizeof path, "%s/stdout.txt", dir);
		long long out = file_size(path);
		unlink(path);
		if (out != want) {
			fprintf(stderr, "%s: %s holds %lld bytes, want %lld\n", prog, path, out, want);
			return 1;
		}
	}
	double user = tv_s(self1.ru_utime) - tv_s(self0.ru_utime) + tv_s(kids.ru_utime);
	double sys = tv_s(self1.ru_stime) - tv_s(self0.ru_stime) + tv_s(kids.ru_stime);
	fprintf(res, "mode %s\n", mode);
	fprintf(res, "workers %ld\n", workers);
	fprintf(res, "count %ld\n", count);
	fprintf(res, "line_bytes %zu\n", line_len);
	fprintf(res, "stack_kb %ld KB\n", stack_kb());
	fprintf(res, "lines %lld\n", (long long)workers * count);
	fprintf(res, "stdout_bytes %lld\n", reader > 0 ? drained : want);
	fprintf(res, "real_s %.6f s\n", real);
	fprintf(res, "user_s %.6f s\n", user);
	fprintf(res, "sys_s %.6f s\n", sys);
	return finish(res);
}
