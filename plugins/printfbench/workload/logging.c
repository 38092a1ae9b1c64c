/*
 * logging: E3's advice (SEEDS.md), measured: what recording one event
 * costs the program that records it.
 *
 *   logging SINK EVENTS TIMEOUT_S DIR SHOW
 *
 * EVENTS events, each E3's line "############  %d\n" for i < EVENTS, go to
 * SINK:
 *   vt_shown fprintf to /dev/tty1 while it is the VT on screen, the
 *            terminal E3 printed to on the hot path (stdio line-buffers a
 *            terminal: one write per event, each line drawn by the console)
 *   serial   fprintf to /dev/ttyS0, the serial console (line-buffered too)
 *   file     fprintf to DIR/log.txt (fully buffered)
 *   counter  an in-memory counter incremented (volatile, so it is done)
 *   socket   the line sent as one datagram over a unix datagram socket to
 *            a receiver process, as syslog(3) hands lines to syslogd; the
 *            receiver counts them (a full queue makes the sender wait)
 * For vt_shown with SHOW 1, tty1 is made the shown VT first (VT_ACTIVATE,
 * then VT_WAITACTIVE), as the targets workload does; SHOW 0 leaves the
 * screen alone (tests on a host). shown_vt is the VT on screen after the
 * loop (0 without VTs; printed for vt_shown only).
 * real_s is CLOCK_MONOTONIC around the loop (and the final flush); user_s
 * and sys_s are this process's CPU time over it (getrusage RUSAGE_SELF,
 * the receiver's not counted); event_us is real_s / EVENTS in µs. Past
 * TIMEOUT_S the workload stops with status 4 and says so. A receiver or
 * file that saw other than what was sent is an error (status 1).
 */
#include "common.h"
#include <sys/socket.h>

static const char *sink_name;
static long timeout_s;

static void on_timeout(int sig)
{
	(void)sig;
	dprintf(2, "%s: sink %s did not take the events within %ld s; stopped\n", prog, sink_name, timeout_s);
	_exit(4);
}

/* receive counts datagrams on fd until an empty one, and reports the
 * count and bytes on out. */
static void receive(int fd, int out)
{
	static char buf[4096];
	long long count = 0, bytes = 0;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof buf, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		count++;
		bytes += n;
	}
	dprintf(out, "%lld %lld\n", count, bytes);
	_exit(0);
}

int main(int argc, char **argv)
{
	long events;
	const char *dir;
	char path[4096];
	FILE *f = NULL;
	int sock = -1, counts = -1;
	pid_t receiver = 0;
	volatile long counter = 0;
	long long bytes = 0;
	long show;
	struct rusage r0, r1;

	prog = argv[0];
	if (argc != 6) {
		fprintf(stderr, "usage: %s SINK EVENTS TIMEOUT_S DIR SHOW\n", prog);
		return 2;
	}
	sink_name = argv[1];
	events = parse_long("EVENTS", argv[2], 1, 100000000);
	timeout_s = parse_long("TIMEOUT_S", argv[3], 1, 86400);
	dir = argv[4];
	show = parse_long("SHOW", argv[5], 0, 1);
	int sink = strcmp(sink_name, "vt_shown") == 0 ? 'v' : strcmp(sink_name, "serial") == 0 ? 's' : strcmp(sink_name, "file") == 0 ? 'f' :
		   strcmp(sink_name, "counter") == 0 ? 'c' : strcmp(sink_name, "socket") == 0 ? 'u' : 0;
	switch (sink) {
	case 'v': {
		int have_vts = show ? show_vt(SHOWN_VT, timeout_s) : open("/dev/tty0", O_RDONLY | O_NOCTTY) >= 0;
		if (!have_vts) {
			fprintf(stderr, "%s: /dev/tty0 does not open: this guest has no virtual terminals\n", prog);
			return 1;
		}
		snprintf(path, sizeof path, "/dev/tty%d", SHOWN_VT);
		int fd = open(path, O_WRONLY | O_NOCTTY);
		if (fd < 0 || (f = fdopen(fd, "w")) == NULL)
			die(path, errno);
		break;
	}
	case 's':
		f = fopen("/dev/ttyS0", "w");
		if (f == NULL)
			die("/dev/ttyS0", errno);
		break;
	case 'f':
		snprintf(path, sizeof path, "%s/log.txt", dir);
		f = fopen(path, "w");
		if (f == NULL)
			die(path, errno);
		break;
	case 'c':
		break;
	case 'u': {
		int sv[2], p[2];
		if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0)
			die("socketpair AF_UNIX SOCK_DGRAM", errno);
		if (pipe(p) != 0)
			die("pipe", errno);
		receiver = fork();
		if (receiver < 0)
			die("fork the receiver", errno);
		if (receiver == 0) {
			close(sv[0]);
			close(p[0]);
			receive(sv[1], p[1]);
		}
		close(sv[1]);
		close(p[1]);
		sock = sv[0];
		counts = p[0];
		break;
	}
	default:
		fprintf(stderr, "%s: bad SINK %s; want vt_shown, serial, file, counter or socket\n", prog, sink_name);
		return 2;
	}

	signal(SIGALRM, on_timeout);
	alarm((unsigned)timeout_s);
	getrusage(RUSAGE_SELF, &r0);
	double t0 = now();
	switch (sink) {
	case 'v':
	case 's':
	case 'f':
		for (long i = 0; i < events; i++) {
			int n = fprintf(f, "############  %ld\n", i);
			if (n < 0)
				die("fprintf", errno);
			bytes += n;
		}
		if (fflush(f) != 0)
			die("fflush", errno);
		break;
	case 'c':
		for (long i = 0; i < events; i++)
			counter++;
		break;
	case 'u':
		for (long i = 0; i < events; i++) {
			char line[64];
			int n = snprintf(line, sizeof line, "############  %ld\n", i);
			while (send(sock, line, n, 0) != n)
				if (errno != EINTR)
					die("send", errno);
			bytes += n;
		}
		break;
	}
	double t1 = now();
	getrusage(RUSAGE_SELF, &r1);
	alarm(0);

	if (sink == 'u') {
		char buf[128];
		long long got, gotbytes;
		send(sock, "", 0, 0);
		ssize_t n = read(counts, buf, sizeof buf - 1);
		if (n <= 0 || (buf[n] = '\0', sscanf(buf, "%lld %lld", &got, &gotbytes) != 2)) {
			fprintf(stderr, "%s: the receiver reported nothing\n", prog);
			return 1;
		}
		waitpid(receiver, NULL, 0);
		if (got != events || gotbytes != bytes) {
			fprintf(stderr, "%s: the receiver got %lld datagrams, %lld bytes; sent %ld, %lld\n", prog, got, gotbytes, events, bytes);
			return 1;
		}
	}
	if (sink == 'c' && counter != events) {
		fprintf(stderr, "%s: counter %ld, want %ld\n", prog, (long)counter, events);
		return 1;
	}
	if (sink == 'f') {
		struct stat st;
		fclose(f);
		if (stat(path, &st) != 0)
			die(path, errno);
		if (st.st_size != bytes) {
			fprintf(stderr, "%s: %s holds %lld bytes, want %lld\n", prog, path, (long long)st.st_size, bytes);
			return 1;
		}
		unlink(path);
	}
	printf("sink %s\n", sink_name);
	printf("events %ld\n", events);
	if (sink == 'v')
		printf("shown_vt %d\n", active_vt());
	printf("real_s %.9f s\n", t1 - t0);
	printf("user_s %.6f s\n", tv_s(r1.ru_utime) - tv_s(r0.ru_utime));
	printf("sys_s %.6f s\n", tv_s(r1.ru_stime) - tv_s(r0.ru_stime));
	printf("event_us %.6f us\n", (t1 - t0) / events * 1e6);
	return finish(stdout);
}
