/*
 * design: one run of one server design (UNP vol. 1 ch. 30) against its
 * clients, as the book ran it.
 *
 *   design DESIGN ADDR PORT PREFORK DIE_AFTER NCLIENTS CHILDREN LOOPS BYTES TIMEOUT_S [PEER PEER_PORT]
 *
 * Starts the server workload (beside this one) for DESIGN on ADDR:PORT
 * and reads the port it listens on; then starts NCLIENTS clients at once,
 * each of CHILDREN children x LOOPS connections x BYTES bytes against
 * ADDR:port: here, as processes of the client workload, or, with PEER,
 * in the other guest, one control connection to the clientd at
 * PEER:PEER_PORT each. When every client has reported, the server is
 * stopped (SIGTERM) and reports its CPU time, the book's measure.
 *
 * Prints connections, errors and first_error summed over the clients,
 * wall_s (the longest client's own), server_status (ok, exit:N or
 * signal:NAME: a server that died mid-run) and, when the server stopped
 * as asked, its user_s, sys_s and served. A server that ends before it
 * listens makes this exit with its status (3: the port is in use).
 */
#include "netbench.h"

#define STARTUP_TIMEOUT_S 120
#define STOP_TIMEOUT_S 120

/* output is what one process or connection wrote, read to EOF. */
struct output {
	int fd;
	char *buf;
	size_t len, cap;
};

static void append(struct output *o, const char *p, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->buf = realloc(o->buf, o->cap);
		if (!o->buf)
			die("realloc", errno);
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/* drain reads every fd of outs to EOF, for at most timeout_s seconds
 * (0: no bound); 0 if that ran out first. */
static int drain(struct output *outs, int n, long timeout_s)
{
	double deadline = now() + (double)timeout_s;
	int open = n;
	struct pollfd *p = calloc((size_t)n, sizeof *p);
	if (!p)
		die("calloc", errno);
	for (int i = 0; i < n; i++) {
		p[i].fd = outs[i].fd;
		p[i].events = POLLIN;
	}
	while (open > 0) {
		char chunk[4096];
		int wait_ms = -1, r;
		if (timeout_s > 0) {
			double left = deadline - now();
			if (left <= 0) {
				free(p);
				return 0;
			}
			wait_ms = (int)(left * 1000) + 1;
		}
		r = poll(p, (nfds_t)n, wait_ms);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("poll", errno);
		}
		for (int i = 0; i < n; i++) {
			ssize_t k;
			if (p[i].fd < 0 || p[i].revents == 0)
				continue;
			k = read(p[i].fd, chunk, sizeof chunk);
			if (k < 0 && errno == EINTR)
				continue;
			if (k > 0) {
				append(&outs[i], chunk, (size_t)k);
				continue;
			}
			close(p[i].fd); /* EOF, or a broken connection */
			p[i].fd = -1;
			open--;
		}
	}
	free(p);
	return 1;
}

/* value finds key's value in a workload's output ("" if none). */
static const char *value(const struct output *o, const char *key, char *out, size_t size)
{
	const char *line = o->buf ? o->buf : "";
	size_t klen = strlen(key);
	out[0] = '\0';
	while (*line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			const char *v = line + klen + 1;
			size_t vlen = 0;
			while (v + vlen < line + len && v[vlen] != ' ')
				vlen++;
			if (vlen >= size)
				vlen = size - 1;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
			return out;
		}
		line += len + (end ? 1 : 0);
	}
	return out;
}

/* spawn runs workload path with argv, its stdout a pipe returned in *out;
 * it dies with this process. */
static pid_t spawn(const char *path, char *const argv[], int *out)
{
	int p[2];
	pid_t pid;
	if (pipe(p) != 0)
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		execv(path, argv);
		fprintf(stderr, "%s: exec %s: %s\n", prog, path, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	*out = p[0];
	return pid;
}

/* how describes a wait status: "exit:N" or "signal:SIGNAME". */
static void how(int st, char *out, size_t size)
{
	if (WIFSIGNALED(st))
		snprintf(out, size, "signal:SIG%s", sigabbrev_np(WTERMSIG(st)));
	else
		snprintf(out, size, "exit:%d", WEXITSTATUS(st));
}

/* read_port reads the server's "port N" line. */
static long read_port(struct output *srv)
{
	double deadline = now() + STARTUP_TIMEOUT_S;
	struct pollfd p = {.fd = srv->fd, .events = POLLIN};
	char v[32];
	while (!srv->buf || !strchr(srv->buf, '\n')) {
		char chunk[256];
		ssize_t k;
		int left = (int)((deadline - now()) * 1000);
		if (left <= 0)
			return -1;
		if (poll(&p, 1, left) < 0) {
			if (errno == EINTR)
				continue;
			die("poll", errno);
		}
		k = read(srv->fd, chunk, sizeof chunk);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 0;
		append(srv, chunk, (size_t)k);
	}
	value(srv, "port", v, sizeof v);
	return atol(v);
}

/* control opens a control connection to clientd and asks it to run one
 * client; the connection then carries the client's report. */
static int control(const char *peer, long peer_port, const char *addr, long port, char **a, long timeout_s)
{
	struct sockaddr_in sa;
	char req[256];
	int n, fd;

	parse_addr(&sa, peer, peer_port);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket", errno);
	set_timeouts(fd, timeout_s);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		fprintf(stderr, "%s: cannot reach clientd at %s:%ld: %s (is the peer guest up, and clientd started in it?)\n",
			prog, peer, peer_port, strerror(errno));
		exit(1);
	}
	n = snprintf(req, sizeof req, "run %s %ld %s %s %s %s\n", addr, port, a[0], a[1], a[2], a[3]);
	if (writen(fd, req, (size_t)n) != 0)
		die("send the run to clientd", errno);
	set_timeouts(fd, 0);
	return fd;
}

int main(int argc, char **argv)
{
	char server[PATH_MAX], client[PATH_MAX], portbuf[24], status[48] = "ok", v[64], first[96] = "none";
	const char *addr, *peer = NULL;
	long nclients, port, peer_port = 0, timeout_s, done = 0, errors = 0;
	double wall = 0;
	struct output srv = {0}, *cl;
	pid_t spid, *cpids;
	int st, i;

	prog = argv[0];
	if (argc != 11 && argc != 13) {
		fprintf(stderr, "usage: %s DESIGN ADDR PORT PREFORK DIE_AFTER NCLIENTS CHILDREN LOOPS BYTES TIMEOUT_S [PEER PEER_PORT]\n", prog);
		return 2;
	}
	parse_long("DESIGN", argv[1], 0, 8);
	addr = argv[2];
	parse_long("PORT", argv[3], 0, 65535);
	nclients = parse_long("NCLIENTS", argv[6], 1, 64);
	timeout_s = parse_long("TIMEOUT_S", argv[10], 1, 86400);
	if (argc == 13) {
		peer = argv[11];
		peer_port = parse_long("PEER_PORT", argv[12], 1, 65535);
	}
	signal(SIGPIPE, SIG_IGN);
	sibling(server, sizeof server, "server");
	sibling(client, sizeof client, "client");

	{
		char *sargv[] = {"server", argv[1], argv[2], argv[3], argv[4], argv[5], NULL};
		spid = spawn(server, sargv, &srv.fd);
	}
	port = read_port(&srv);
	if (port <= 0) {
		char h[48];
		if (port < 0) {
			kill(spid, SIGKILL);
			fprintf(stderr, "%s: the design %s server did not listen within %d s\n", prog, argv[1], STARTUP_TIMEOUT_S);
		}
		while (waitpid(spid, &st, 0) < 0 && errno == EINTR)
			;
		how(st, h, sizeof h);
		fprintf(stderr, "%s: the design %s server ended (%s) before it listened\n", prog, argv[1], h);
		return WIFEXITED(st) && WEXITSTATUS(st) != 0 ? WEXITSTATUS(st) : 1;
	}
	snprintf(portbuf, sizeof portbuf, "%ld", port);

	cl = calloc((size_t)nclients, sizeof *cl);
	cpids = calloc((size_t)nclients, sizeof *cpids);
	if (!cl || !cpids)
		die("calloc", errno);
	for (i = 0; i < nclients; i++) {
		if (peer) {
			cl[i].fd = control(peer, peer_port, addr, port, &argv[7], timeout_s);
		} else {
			char *cargv[] = {"client", (char *)addr, portbuf, argv[7], argv[8], argv[9], argv[10], NULL};
			cpids[i] = spawn(client, cargv, &cl[i].fd);
		}
	}
	drain(cl, (int)nclients, 0);
	for (i = 0; i < nclients; i++) {
		char c[32], w[32], e[32], err[64];
		if (cpids[i] > 0) {
			while (waitpid(cpids[i], &st, 0) < 0 && errno == EINTR)
				;
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				char h[48];
				how(st, h, sizeof h);
				fprintf(stderr, "%s: client %d ended (%s)\n", prog, i, h);
			}
		}
		value(&cl[i], "connections", c, sizeof c);
		value(&cl[i], "errors", e, sizeof e);
		value(&cl[i], "wall_s", w, sizeof w);
		value(&cl[i], "error", err, sizeof err);
		if (c[0] == '\0' || err[0] != '\0') {
			/* A client that reported nothing: all its children failed. */
			errors += atol(argv[7]);
			if (strcmp(first, "none") == 0)
				snprintf(first, sizeof first, "client%d:%s", i, err[0] ? err : "no_report");
			continue;
		}
		done += atol(c);
		errors += atol(e);
		if (atof(w) > wall)
			wall = atof(w);
		value(&cl[i], "first_error", err, sizeof err);
		if (strcmp(first, "none") == 0 && err[0] != '\0' && strcmp(err, "none") != 0)
			snprintf(first, sizeof first, "%s", err);
	}

	/* Stop the server the book's way, unless it is gone already. */
	if (waitpid(spid, &st, WNOHANG) == spid) {
		how(st, status, sizeof status);
	} else {
		kill(spid, SIGTERM);
		if (!drain(&srv, 1, STOP_TIMEOUT_S)) {
			kill(spid, SIGKILL);
			fprintf(stderr, "%s: the design %s server did not stop within %d s of SIGTERM; killed\n", prog, argv[1], STOP_TIMEOUT_S);
		}
		while (waitpid(spid, &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			how(st, status, sizeof status);
	}
	if (strcmp(status, "ok") != 0)
		fprintf(stderr, "%s: the design %s server ended mid-run (%s); the clients completed %ld connections\n", prog, argv[1], status, done);

	printf("connections %ld\nerrors %ld\nfirst_error %s\nwall_s %.6f s\nserver_status %s\n", done, errors, first, wall, status);
	if (strcmp(status, "ok") == 0) {
		printf("user_s %s s\n", value(&srv, "user_s", v, sizeof v));
		printf("sys_s %s s\n", value(&srv, "sys_s", v, sizeof v));
		printf("served %s\n", value(&srv, "served", v, sizeof v));
	}
	return finish(stdout);
}
