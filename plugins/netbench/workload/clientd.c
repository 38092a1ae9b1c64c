/*
 * clientd: the client's daemon, for a run whose clients are in a second
 * guest (clients=peer), as the book's were on other hosts.
 *
 *   clientd PORT
 *
 * Listens on TCP PORT on every address, prints "ready" on stdout once it
 * does (lab waits for that line before it starts the plugin in the other
 * guest), then serves control connections, each in a process of its
 * own: it reads one line
 *
 *   run ADDR PORT CHILDREN LOOPS BYTES TIMEOUT_S
 *
 * and runs the client (the workload beside this one) with those
 * arguments, its stdout the control connection: the client's `key value
 * unit` lines go back, then the connection closes. A line it cannot
 * parse is answered with "error bad_request". clientd runs until it is
 * killed.
 */
#include "netbench.h"
#include <ctype.h>

#define REQUEST_TIMEOUT_S 30

static int digits(const char *s)
{
	if (*s == '\0' || strlen(s) > 9)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* serve runs one control connection c; it never returns. */
__attribute__((noreturn)) static void serve(int c, const char *client)
{
	char line[256], copy[256], *f[8], *save = NULL, *tok;
	size_t have = 0;
	int n = 0;
	struct in_addr ia;

	set_timeouts(c, REQUEST_TIMEOUT_S);
	while (have < sizeof line - 1) {
		ssize_t r = read(c, line + have, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			_exit(1);
		if (line[have] == '\n')
			break;
		have++;
	}
	line[have] = '\0';
	memcpy(copy, line, have + 1);
	for (tok = strtok_r(line, " \t\r", &save); tok && n < 8; tok = strtok_r(NULL, " \t\r", &save))
		f[n++] = tok;
	if (n != 7 || strcmp(f[0], "run") != 0 || inet_pton(AF_INET, f[1], &ia) != 1 ||
	    !digits(f[2]) || !digits(f[3]) || !digits(f[4]) || !digits(f[5]) || !digits(f[6])) {
		fprintf(stderr, "%s: bad request %.80s; want: run ADDR PORT CHILDREN LOOPS BYTES TIMEOUT_S\n", prog, copy);
		dprintf(c, "error bad_request\n");
		_exit(1);
	}
	set_timeouts(c, 0); /* the client's report comes when it is done */
	signal(SIGCHLD, SIG_DFL);
	if (dup2(c, STDOUT_FILENO) < 0)
		_exit(1);
	close(c);
	execl(client, "client", f[1], f[2], f[3], f[4], f[5], f[6], (char *)NULL);
	fprintf(stderr, "%s: exec %s: %s\n", prog, client, strerror(errno));
	printf("error exec_failed\n");
	fflush(stdout);
	_exit(127);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	struct sigaction reap;
	char client[PATH_MAX];
	int on = 1, lfd;

	prog = argv[0];
	if (argc != 2) {
		fprintf(stderr, "usage: %s PORT\n", prog);
		return 2;
	}
	sibling(client, sizeof client, "client");
	signal(SIGPIPE, SIG_IGN);
	/* The control processes are never waited for. */
	memset(&reap, 0, sizeof reap);
	reap.sa_handler = SIG_DFL;
	reap.sa_flags = SA_NOCLDWAIT;
	sigaction(SIGCHLD, &reap, NULL);

	parse_addr(&sa, "0.0.0.0", parse_long("PORT", argv[1], 1, 65535));
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket", errno);
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0)
		die("setsockopt SO_REUSEADDR", errno);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		fprintf(stderr, "%s: bind port %s: %s\n", prog, argv[1], strerror(errno));
		return errno == EADDRINUSE ? 3 : 1;
	}
	if (listen(lfd, LISTENQ) != 0)
		die("listen", errno);
	printf("ready\n");
	if (fflush(stdout) != 0)
		die("write ready", errno);

	for (;;) {
		pid_t pid;
		int c = accept(lfd, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept", errno);
		}
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
			dprintf(c, "error fork_failed\n");
		} else if (pid == 0) {
			close(lfd);
			serve(c, client);
		}
		close(c);
	}
}
