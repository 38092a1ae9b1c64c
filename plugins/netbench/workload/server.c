/*
 * server: the nine server designs of UNP vol. 1 ch. 30 (SEEDS.md E5),
 * ours, one program.
 *
 *   server DESIGN ADDR PORT PREFORK DIE_AFTER
 *
 *   0  iterative: accept, serve, close, one client at a time
 *   1  fork per client: the parent accepts, a child serves
 *   2  PREFORK children pre-forked, each calls accept, no lock
 *   3  the same, accept under a file lock (fcntl F_SETLKW)
 *   4  the same, accept under a process-shared pthread mutex in mmap'd
 *      shared memory
 *   5  PREFORK children pre-forked; the parent accepts and passes the
 *      descriptor over a unix socket (SCM_RIGHTS); a child writes a byte
 *      back when it is free again
 *   6  thread per client: the main thread accepts, a thread serves
 *   7  PREFORK threads pre-created, accept under a mutex
 *   8  PREFORK threads pre-created; the main thread accepts and hands the
 *      descriptor over in the book's clifd array under a mutex and a
 *      condition variable
 *
 * It listens on ADDR:PORT (PORT 0: the kernel picks a free one), creates
 * its children or threads, prints "port N" on stdout and serves (the
 * book's web_child: read a line "<nbytes>\n", write nbytes back, until
 * the client closes) until SIGTERM. Then, as the book's SIGINT handler
 * does, it tells its children to exit, waits for them all, and prints
 * its own CPU time plus its children's (getrusage RUSAGE_SELF +
 * RUSAGE_CHILDREN; a process's threads are in RUSAGE_SELF) as user_s and
 * sys_s, and served, the requests it answered (one a connection).
 *
 * DIE_AFTER (test only; 0: never): once it has written that many
 * replies, the server's main process is killed by SIGABRT (its children
 * go with it: PR_SET_PDEATHSIG), standing for a server that dies
 * mid-run.
 *
 * Exit status 3: PORT is in use; 2: bad arguments; 1: anything else.
 *
 * Unlike the book: design 8's main thread waits when the clifd array is
 * full instead of quitting ("iput = iget"), and every child dies with
 * the main process.
 */
#include "netbench.h"
#include <pthread.h>
#include <stdint.h>
#include <sys/select.h>
#include <sys/uio.h>

static int design, listenfd;
static long nchildren, die_after;
static pid_t server_pid;
/* pids are the pre-forked children (designs 2-5), for the stop. */
static pid_t *pids;

/* shared is in memory every process of the server maps: the count of
 * connections served and design 4's accept lock. */
struct shared {
	long served;
	pthread_mutex_t lock;
};
static struct shared *sh;

/* reply is what web_child writes: zeros, as the book's result buffer. */
static char reply[65536];

/* web_child answers each "<nbytes>\n" line read from fd with nbytes
 * bytes until the client closes (or breaks) the connection; each
 * request answered counts in sh->served, where DIE_AFTER acts. */
static void web_child(int fd)
{
	char line[MAXLINE];
	size_t have = 0;
	long count;

	for (;;) {
		char *nl;
		ssize_t n = read(fd, line + have, sizeof line - have);
		if (n == 0)
			return; /* the client closed */
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		have += (size_t)n;
		while ((nl = memchr(line, '\n', have)) != NULL) {
			size_t used = (size_t)(nl - line) + 1;
			long want;
			*nl = '\0';
			want = atol(line);
			if (want <= 0 || want > MAXN)
				return;
			/* Counted before the reply is written: a client that has
			 * its reply is always counted, however soon the stop. */
			count = __atomic_add_fetch(&sh->served, 1, __ATOMIC_SEQ_CST);
			while (want > 0) {
				size_t k = want > (long)sizeof reply ? sizeof reply : (size_t)want;
				if (writen(fd, reply, k) != 0)
					return;
				want -= (long)k;
			}
			if (die_after > 0 && count == die_after)
				kill(server_pid, SIGABRT);
			memmove(line, line + used, have - used);
			have -= used;
		}
		if (have == sizeof line)
			return; /* no request line in MAXLINE bytes */
	}
}

/* on_term is the book's sig_int: stop the children, wait for them all,
 * report the CPU time, exit. Only async-signal-safe calls (snprintf
 * aside, on a buffer of its own). */
static void on_term(int sig)
{
	struct rusage self, kids;
	char buf[256];
	int n, saved = errno;
	long i;

	(void)sig;
	if (pids) {
		for (i = 0; i < nchildren; i++)
			if (pids[i] > 0)
				kill(pids[i], SIGTERM);
		for (i = 0; i < nchildren; i++)
			while (pids[i] > 0 && waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
				;
	}
	/* Design 1's children still serving, if any: they finish. */
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	n = snprintf(buf, sizeof buf, "user_s %.6f s\nsys_s %.6f s\nserved %ld\nlibc glibc-%s\n",
		     tv_s(self.ru_utime) + tv_s(kids.ru_utime), tv_s(self.ru_stime) + tv_s(kids.ru_stime),
		     __atomic_load_n(&sh->served, __ATOMIC_SEQ_CST), gnu_get_libc_version());
	if (n > 0 && write(STDOUT_FILENO, buf, (size_t)n) != n)
		_exit(1);
	errno = saved;
	_exit(0);
}

/* on_chld reaps design 1's children as they end (the book's sig_chld). */
static void on_chld(int sig)
{
	int saved = errno;
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved;
}

/* become_child sets up a process the server forked: the parent's stop
 * (SIGTERM) ends it, and it dies with the parent. */
static void become_child(void)
{
	sigset_t all;
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
		die("prctl PR_SET_PDEATHSIG", errno);
	if (getppid() != server_pid)
		_exit(0); /* the parent is gone already */
}

/* accept_retry accepts a connection, retrying interruptions and
 * connections aborted before they were accepted. */
static int accept_retry(void)
{
	for (;;) {
		int c = accept(listenfd, NULL, NULL);
		if (c >= 0)
			return c;
		if (errno != EINTR && errno != ECONNABORTED)
			die("accept", errno);
	}
}

/* ---- design 3: the file lock around accept (the book's my_lock_*) ---- */

static int lock_fd = -1;

static void lock_init(void)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/netbench-lock.XXXXXX", dir && *dir ? dir : "/tmp");
	lock_fd = mkstemp(path);
	if (lock_fd < 0)
		die(path, errno);
	unlink(path);
}

static void lock_fcntl(short type)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	while (fcntl(lock_fd, F_SETLKW, &fl) < 0)
		if (errno != EINTR)
			die("fcntl F_SETLKW", errno);
}

/* ---- designs 2, 3, 4 and 7: each child or thread calls accept ---- */

static pthread_mutex_t accept_mutex = PTHREAD_MUTEX_INITIALIZER;

/* accept_lock takes the design's lock around accept: none (2), the file
 * lock (3), the process-shared mutex (4), the threads' mutex (7). */
static void accept_lock(int take)
{
	switch (design) {
	case 3:
		lock_fcntl(take ? F_WRLCK : F_UNLCK);
		break;
	case 4:
		(take ? pthread_mutex_lock : pthread_mutex_unlock)(&sh->lock);
		break;
	case 7:
		(take ? pthread_mutex_lock : pthread_mutex_unlock)(&accept_mutex);
		break;
	}
}

/* accept_loop is a pre-forked child's life (the book's child_main), or a
 * pre-created thread's (thread_main). */
static void accept_loop(void)
{
	for (;;) {
		int c;
		accept_lock(1);
		c = accept(listenfd, NULL, NULL);
		accept_lock(0);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept", errno);
		}
		web_child(c);
		close(c);
	}
}

/* ---- design 5: the parent passes descriptors ---- */

/* kid is a design 5 child as the parent sees it. */
struct kid {
	int fd; /* the parent's end of the unix socket to it */
	int busy;
};
static struct kid *kids;

static void write_fd(int fd, int sendfd)
{
	char c = 0;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	union {
		struct cmsghdr cm;
		char control[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.control, .msg_controllen = sizeof u.control};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	memset(&u, 0, sizeof u);
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	memcpy(CMSG_DATA(cm), &sendfd, sizeof(int));
	while (sendmsg(fd, &msg, 0) != 1)
		if (errno != EINTR)
			die("sendmsg SCM_RIGHTS", errno);
}

/* read_fd reads one byte and the descriptor passed with it into *recvfd
 * (-1 if none); 0 when the parent has closed its end. */
static ssize_t read_fd(int fd, int *recvfd)
{
	char c;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	union {
		struct cmsghdr cm;
		char control[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.control, .msg_controllen = sizeof u.control};
	struct cmsghdr *cm;
	ssize_t n;

	while ((n = recvmsg(fd, &msg, 0)) < 0) {
		if (errno == ECONNRESET)
			return 0; /* the parent is gone */
		if (errno != EINTR)
			die("recvmsg SCM_RIGHTS", errno);
	}
	*recvfd = -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (n > 0 && cm && cm->cmsg_len == CMSG_LEN(sizeof(int)) && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(recvfd, CMSG_DATA(cm), sizeof(int));
	return n;
}

static void child_passed(int fd)
{
	for (;;) {
		int c;
		if (read_fd(fd, &c) == 0)
			_exit(0);
		if (c < 0) {
			fprintf(stderr, "%s: design 5 child: no descriptor passed\n", prog);
			_exit(1);
		}
		web_child(c);
		close(c);
		/* Tell the parent this child is free again. */
		while (write(fd, "", 1) != 1)
			if (errno != EINTR)
				die("tell the parent", errno);
	}
}

static void parent_passes(void)
{
	fd_set all, rset;
	int maxfd = listenfd;
	long i, navail = nchildren;

	FD_ZERO(&all);
	FD_SET(listenfd, &all);
	for (i = 0; i < nchildren; i++) {
		FD_SET(kids[i].fd, &all);
		if (kids[i].fd > maxfd)
			maxfd = kids[i].fd;
	}
	for (;;) {
		int nsel;
		rset = all;
		if (navail <= 0)
			FD_CLR(listenfd, &rset); /* no child free: accept nothing */
		nsel = select(maxfd + 1, &rset, NULL, NULL, NULL);
		if (nsel < 0) {
			if (errno == EINTR)
				continue;
			die("select", errno);
		}
		if (FD_ISSET(listenfd, &rset)) {
			int c = accept_retry();
			for (i = 0; i < nchildren; i++)
				if (!kids[i].busy)
					break;
			write_fd(kids[i].fd, c);
			close(c);
			kids[i].busy = 1;
			navail--;
			if (--nsel == 0)
				continue;
		}
		for (i = 0; i < nchildren && nsel > 0; i++) {
			char b;
			ssize_t n;
			if (!FD_ISSET(kids[i].fd, &rset))
				continue;
			nsel--;
			while ((n = read(kids[i].fd, &b, 1)) < 0 && errno == EINTR)
				;
			if (n <= 0) {
				fprintf(stderr, "%s: design 5 child %ld ended unexpectedly\n", prog, i);
				exit(1);
			}
			kids[i].busy = 0;
			navail++;
		}
	}
}

/* ---- designs 6, 7, 8: threads ---- */

static void *thread_per_client(void *arg)
{
	int c = (int)(intptr_t)arg;
	pthread_detach(pthread_self());
	web_child(c);
	close(c);
	return NULL;
}

static void *thread_accepts(void *arg)
{
	(void)arg;
	accept_loop();
	return NULL;
}

/* The book's clifd array: the main thread puts, the threads get. */
#define MAXNCLI 32
static int clifd[MAXNCLI], iget, iput, main_waits;
static pthread_mutex_t clifd_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t clifd_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t clifd_space = PTHREAD_COND_INITIALIZER;

static void *thread_handed(void *arg)
{
	(void)arg;
	for (;;) {
		int c;
		pthread_mutex_lock(&clifd_mutex);
		while (iget == iput)
			pthread_cond_wait(&clifd_cond, &clifd_mutex);
		c = clifd[iget];
		if (++iget == MAXNCLI)
			iget = 0;
		if (main_waits) {
			main_waits = 0;
			pthread_cond_signal(&clifd_space);
		}
		pthread_mutex_unlock(&clifd_mutex);
		web_child(c);
		close(c);
	}
	return NULL;
}

static void main_hands(void)
{
	for (;;) {
		int c = accept_retry();
		pthread_mutex_lock(&clifd_mutex);
		while ((iput + 1) % MAXNCLI == iget) {
			main_waits = 1;
			pthread_cond_wait(&clifd_space, &clifd_mutex);
		}
		clifd[iput] = c;
		if (++iput == MAXNCLI)
			iput = 0;
		pthread_cond_signal(&clifd_cond);
		pthread_mutex_unlock(&clifd_mutex);
	}
}

static void start_threads(void *(*fn)(void *))
{
	long i;
	for (i = 0; i < nchildren; i++) {
		pthread_t tid;
		int err = pthread_create(&tid, NULL, fn, NULL);
		if (err != 0)
			die("pthread_create", err);
	}
}

/* ---- set-up ---- */

static void listen_on(const char *addr, long port)
{
	struct sockaddr_in sa;
	int on = 1;

	parse_addr(&sa, addr, port);
	listenfd = socket(AF_INET, SOCK_STREAM, 0);
	if (listenfd < 0)
		die("socket", errno);
	if (setsockopt(listenfd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0)
		die("setsockopt SO_REUSEADDR", errno);
	if (bind(listenfd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		if (errno == EADDRINUSE) {
			fprintf(stderr, "%s: port %ld is in use in this guest (bind %s:%ld: %s); pick another port, or leave port=0 for one the kernel picks\n",
				prog, port, addr, port, strerror(errno));
			exit(3);
		}
		fprintf(stderr, "%s: bind %s:%ld: %s\n", prog, addr, port, strerror(errno));
		exit(1);
	}
	if (listen(listenfd, LISTENQ) != 0)
		die("listen", errno);
}

static void on(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGCHLD);
	sigaddset(&sa.sa_mask, SIGTERM);
	sa.sa_flags = flags;
	if (sigaction(sig, &sa, NULL) != 0)
		die("sigaction", errno);
}

int main(int argc, char **argv)
{
	struct sockaddr_in bound;
	socklen_t len = sizeof bound;
	sigset_t term, old;
	long i;

	prog = argv[0];
	if (argc != 6) {
		fprintf(stderr, "usage: %s DESIGN ADDR PORT PREFORK DIE_AFTER\n", prog);
		return 2;
	}
	design = (int)parse_long("DESIGN", argv[1], 0, 8);
	nchildren = parse_long("PREFORK", argv[4], 1, 500);
	die_after = parse_long("DIE_AFTER", argv[5], 0, LONG_MAX);
	listen_on(argv[2], parse_long("PORT", argv[3], 0, 65535));
	if (getsockname(listenfd, (struct sockaddr *)&bound, &len) != 0)
		die("getsockname", errno);

	server_pid = getpid();
	signal(SIGPIPE, SIG_IGN);
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap shared memory", errno);
	if (design == 4) {
		pthread_mutexattr_t attr;
		pthread_mutexattr_init(&attr);
		if ((errno = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED)) != 0)
			die("pthread_mutexattr_setpshared", errno);
		if ((errno = pthread_mutex_init(&sh->lock, &attr)) != 0)
			die("pthread_mutex_init", errno);
	}
	if (design == 3)
		lock_init();

	/* No stop until every child is made and the port is printed. */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	on(SIGTERM, on_term, 0);
	if (design == 1)
		on(SIGCHLD, on_chld, SA_RESTART);

	if (design >= 2 && design <= 5) {
		pids = calloc((size_t)nchildren, sizeof *pids);
		kids = calloc((size_t)nchildren, sizeof *kids);
		if (!pids || !kids)
			die("calloc", errno);
		for (i = 0; i < nchildren; i++) {
			int sv[2] = {-1, -1};
			pid_t pid;
			if (design == 5 && socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
				die("socketpair", errno);
			pid = fork();
			if (pid < 0)
				die("fork", errno);
			if (pid == 0) {
				become_child();
				if (design != 5)
					accept_loop();
				close(sv[0]);
				close(listenfd);
				for (long j = 0; j < i; j++)
					close(kids[j].fd);
				child_passed(sv[1]);
			}
			pids[i] = pid;
			if (design == 5) {
				close(sv[1]);
				kids[i].fd = sv[0];
			}
		}
	} else if (design == 7) {
		start_threads(thread_accepts);
	} else if (design == 8) {
		start_threads(thread_handed);
	}

	printf("port %d\n", ntohs(bound.sin_port));
	if (fflush(stdout) != 0)
		die("write the port", errno);
	sigprocmask(SIG_SETMASK, &old, NULL);

	switch (design) {
	case 0:
		for (;;) {
			int c = accept_retry();
			web_child(c);
			close(c);
			}
	case 1:
		for (;;) {
			int c = accept_retry();
			pid_t pid = fork();
			if (pid < 0)
				die("fork", errno);
			if (pid == 0) {
				become_child();
				close(listenfd);
				web_child(c);
				close(c);
						_exit(0);
			}
			close(c);
		}
	case 5:
		parent_passes();
		break;
	case 6:
		for (;;) {
			pthread_t tid;
			int c = accept_retry();
			int err = pthread_create(&tid, NULL, thread_per_client, (void *)(intptr_t)c);
			if (err != 0)
				die("pthread_create", err);
		}
	case 8:
		main_hands();
		break;
	default: /* 2, 3, 4, 7: the children or threads do the work */
		for (;;)
			pause();
	}
	return 0;
}
