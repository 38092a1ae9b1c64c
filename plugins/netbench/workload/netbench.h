/*
 * netbench.h: what netbench's workloads share (UNP vol. 1 ch. 30, ours in
 * C). Each workload is its own static program, run as a separate process
 * in the guest, so the harness does not distort what it measures. They
 * print `key value [unit]` lines for lab's netbench plugin on stdout.
 *
 * The protocol is the book's: a client connects, sends "<nbytes>\n",
 * reads exactly nbytes and closes; the server (web_child) answers every
 * line it reads with that many bytes until the client closes.
 */
#define _GNU_SOURCE
#include <lab.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* MAXLINE bounds a request line; MAXN the bytes one request may ask for. */
#define MAXLINE 64
#define MAXN 1048576L
/* LISTENQ is the book's listen backlog. */
#define LISTENQ 1024

/* parse_addr parses a dotted IPv4 address into sa with port. */
static void parse_addr(struct sockaddr_in *sa, const char *addr, long port)
{
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	sa->sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1) {
		fprintf(stderr, "%s: bad address %s; want a dotted IPv4 address\n", prog, addr);
		exit(2);
	}
}

/* errname is errno's name ("ECONNREFUSED"), a timeout shown as "timeout". */
__attribute__((unused)) static const char *errname(int err)
{
	const char *n;
	if (err == EAGAIN || err == EWOULDBLOCK || err == EINPROGRESS)
		return "timeout";
	n = strerrorname_np(err);
	return n ? n : "unknown";
}

/* writen writes all n bytes of buf; -1 with errno on failure. */
__attribute__((unused)) static int writen(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* set_timeouts bounds every send, receive and connect on fd (SO_SNDTIMEO
 * bounds connect on Linux too). */
__attribute__((unused)) static void set_timeouts(int fd, long seconds)
{
	struct timeval tv = {.tv_sec = seconds, .tv_usec = 0};
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0)
		die("setsockopt SO_RCVTIMEO/SO_SNDTIMEO", errno);
}

/* sibling is the path of workload name, a file beside this program. */
__attribute__((unused)) static void sibling(char *out, size_t size, const char *name)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	char *slash;
	if (n < 0)
		die("readlink /proc/self/exe", errno);
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	if ((size_t)snprintf(out, size, "%s/%s", slash ? self : ".", name) >= size) {
		fprintf(stderr, "%s: path of %s too long\n", prog, name);
		exit(1);
	}
}
