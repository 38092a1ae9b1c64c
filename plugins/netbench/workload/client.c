/*
 * client: the book's client (UNP vol. 1 ch. 30).
 *
 *   client ADDR PORT CHILDREN LOOPS BYTES TIMEOUT_S
 *
 * Forks CHILDREN processes; each loops LOOPS times: connect to ADDR:PORT,
 * send "<BYTES>\n", read exactly BYTES bytes, close. Every connect, send
 * and receive is bounded by TIMEOUT_S seconds (SO_SNDTIMEO, SO_RCVTIMEO),
 * and a child stops at its first error, so a server that dies or hangs
 * mid-run never hangs the client: it reports what it completed.
 *
 * Prints connections (completed by all children), errors (children that
 * stopped on an error), first_error (STAGE:ERRNO of the first child that
 * did, or none) and wall_s (CLOCK_MONOTONIC from before the first fork
 * to after the last child is waited for).
 */
#include "netbench.h"

/* tally is one child's count, in memory the parent shares. */
struct tally {
	long done;
	char err[48]; /* "" or STAGE:ERRNO */
};

static char buf[65536];

static void run_child(struct tally *t, const struct sockaddr_in *sa, long loops, long bytes, long timeout_s)
{
	char request[32];
	int len = snprintf(request, sizeof request, "%ld\n", bytes);
	long j;

	for (j = 0; j < loops; j++) {
		long got = 0;
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0) {
			snprintf(t->err, sizeof t->err, "socket:%s", errname(errno));
			return;
		}
		set_timeouts(fd, timeout_s);
		if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) != 0) {
			snprintf(t->err, sizeof t->err, "connect:%s", errname(errno));
			close(fd);
			return;
		}
		if (writen(fd, request, (size_t)len) != 0) {
			snprintf(t->err, sizeof t->err, "send:%s", errname(errno));
			close(fd);
			return;
		}
		while (got < bytes) {
			size_t want = bytes - got > (long)sizeof buf ? sizeof buf : (size_t)(bytes - got);
			ssize_t n = read(fd, buf, want);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				if (n == 0)
					snprintf(t->err, sizeof t->err, "receive:short");
				else
					snprintf(t->err, sizeof t->err, "receive:%s", errname(errno));
				close(fd);
				return;
			}
			got += n;
		}
		close(fd); /* TIME_WAIT on the client, as the book has it */
		t->done++;
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	struct tally *tally;
	long children, loops, bytes, timeout_s, i, done = 0, errors = 0;
	const char *first = "none";
	pid_t *pids;
	double start, wall;

	prog = argv[0];
	if (argc != 7) {
		fprintf(stderr, "usage: %s ADDR PORT CHILDREN LOOPS BYTES TIMEOUT_S\n", prog);
		return 2;
	}
	parse_addr(&sa, argv[1], parse_long("PORT", argv[2], 1, 65535));
	children = parse_long("CHILDREN", argv[3], 1, 1000);
	loops = parse_long("LOOPS", argv[4], 1, 100000000);
	bytes = parse_long("BYTES", argv[5], 1, MAXN);
	timeout_s = parse_long("TIMEOUT_S", argv[6], 1, 86400);
	signal(SIGPIPE, SIG_IGN);

	tally = mmap(NULL, (size_t)children * sizeof *tally, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc((size_t)children, sizeof *pids);
	if (tally == MAP_FAILED || pids == NULL)
		die("shared tally", errno);
	start = now();
	for (i = 0; i < children; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork", errno);
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			run_child(&tally[i], &sa, loops, bytes, timeout_s);
			_exit(0);
		}
	}
	for (i = 0; i < children; i++) {
		int st;
		while (waitpid(pids[i], &st, 0) < 0)
			if (errno != EINTR)
				die("waitpid", errno);
		if (WIFSIGNALED(st) && tally[i].err[0] == '\0')
			snprintf(tally[i].err, sizeof tally[i].err, "killed:SIG%s", sigabbrev_np(WTERMSIG(st)));
		else if (WIFEXITED(st) && WEXITSTATUS(st) != 0 && tally[i].err[0] == '\0')
			snprintf(tally[i].err, sizeof tally[i].err, "exit:%d", WEXITSTATUS(st));
	}
	wall = now() - start;
	for (i = 0; i < children; i++) {
		done += tally[i].done;
		if (tally[i].err[0] != '\0') {
			if (errors++ == 0)
				first = tally[i].err;
		}
	}
	printf("connections %ld\nerrors %ld\nfirst_error %s\nwall_s %.6f s\n", done, errors, first, wall);
	return finish(stdout);
}
