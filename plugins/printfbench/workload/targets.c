/*
 * targets: E3's program (SEEDS.md) printing to one target.
 *
 *   targets TARGET LINES BUFFERING TIMEOUT_S DIR SHOW
 *
 * A printer process (forked, its stdout the target) runs E3's loop,
 * printf("############  %d\n", i) for i < LINES, then fflush(stdout).
 * Where its stdout goes (TARGET):
 *   vt_shown       /dev/tty1 while tty1 is the VT on screen
 *   vt_hidden      /dev/tty2 while tty1 is on screen (tty2 is not shown)
 *   serial         /dev/ttyS0, the guest's serial console
 *   pty            the slave of a pseudo-terminal whose master a drainer
 *                  process reads, as a terminal emulator or sshd would
 *   pipe           a pipe a drainer process reads
 *   null           /dev/null
 *   file           DIR/out.txt (DIR should be on tmpfs; fs says)
 *   pty_undrained  a pty whose master nobody reads: it fills and the
 *                  printer blocks (for testing the timeout)
 * With SHOW 1, before the printer starts, tty1 is made the shown VT
 * (VT_ACTIVATE, then VT_WAITACTIVE) for every target when the machine has
 * VTs (/dev/tty0 opens), so each run starts from the same screen; SHOW 0
 * leaves the screen alone (tests on a host). shown_vt is the VT on screen
 * after the printer is done (VT_GETSTATE), 0 without VTs.
 *
 * BUFFERING is stdout's stdio buffering: auto (stdio's default, as E3 ran:
 * line-buffered on a terminal, fully buffered otherwise), line, full (a
 * BUFSIZ buffer) or none (setvbuf).
 *
 * real_s is the printer's own CLOCK_MONOTONIC from before its first printf
 * to after its fflush; user_s and sys_s are its CPU time from wait4's
 * rusage (the drainer's are not counted, as `time ./a.out` in E3 did not
 * count the terminal). A printer that runs past TIMEOUT_S is killed, and
 * the workload says so and exits with status 4. A drainer reads until it
 * has the bytes the printer reports (plus the \r a pty's ONLCR adds a
 * line), for at most TIMEOUT_S more once the printer is done; a drainer or
 * file that saw other than the bytes printed is an error (status 1).
 */
#include "common.h"
#include <linux/magic.h>
#include <poll.h>
#include <sys/vfs.h>

#define HIDDEN_VT 2

/*
 * drain reads fd until it has read the byte count the parent sends on ctl
 * once the printer is done (the printer's bytes, plus a \r a line on a
 * pty), or to EOF, and writes what it read to out. It ends early when ctl
 * closes without a count (the parent gave up), or when no more bytes come
 * within timeout_s of the count. For a pty the drainer holds a slave of
 * its own open, so the master never reads as closed: the end of the data
 * is the count, never the EIO of the slave's last close, which once ended
 * a drain after the first 15 bytes of 3690 under a loaded host.
 */
static void drain(int fd, int ctl, int out, long timeout_s)
{
	static char buf[65536];
	long long total = 0, want = -1;
	struct pollfd pf[2] = {{.fd = fd, .events = POLLIN}, {.fd = ctl, .events = POLLIN}};

	while (want < 0 || total < want) {
		int r = poll(pf, 2, want < 0 ? -1 : (int)(timeout_s * 1000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("poll", errno);
		if (r == 0)
			break; /* the count is known, and nothing came within the bound */
		if (pf[0].revents) {
			ssize_t n = read(fd, buf, sizeof buf);
			if (n > 0)
				total += n;
			else if (n == 0 || errno != EINTR)
				break; /* EOF: the pipe's writers are gone */
		}
		if (pf[1].revents) {
			char c[64];
			ssize_t n = read(ctl, c, sizeof c - 1);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break; /* the parent is gone without a count */
			c[n] = '\0';
			want = atoll(c);
			pf[1].fd = -1; /* poll ignores it from now on */
		}
	}
	dprintf(out, "%lld\n", total);
	_exit(0);
}

/* open_pty opens a pty; *master gets the master, the slave is returned. */
static int open_pty(int *master)
{
	const char *slave;
	int fd;

	*master = posix_openpt(O_RDWR | O_NOCTTY);
	if (*master < 0)
		die("posix_openpt (is devpts mounted?)", errno);
	if (grantpt(*master) != 0 || unlockpt(*master) != 0)
		die("grantpt/unlockpt", errno);
	slave = ptsname(*master);
	if (slave == NULL)
		die("ptsname", errno);
	fd = open(slave, O_WRONLY | O_NOCTTY);
	if (fd < 0)
		die(slave, errno);
	return fd;
}

/*
 * start_drainer forks a process reading fd (closing close_in_child in it,
 * if >= 0); *ctl gets the pipe to send it the byte count on, and the pipe
 * it reports what it read on is returned.
 */
static int start_drainer(int fd, int close_in_child, long timeout_s, int *ctl, pid_t *pid)
{
	int p[2], c[2];
	if (pipe(p) != 0 || pipe(c) != 0)
		die("pipe", errno);
	*pid = fork();
	if (*pid < 0)
		die("fork the drainer", errno);
	if (*pid == 0) {
		close(p[0]);
		close(c[1]);
		if (close_in_child >= 0)
			close(close_in_child);
		drain(fd, c[0], p[1], timeout_s);
	}
	close(p[1]);
	close(c[0]);
	*ctl = c[1];
	return p[0];
}

static long long read_count(int fd, const char *what)
{
	char buf[64];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n <= 0) {
		fprintf(stderr, "%s: %s reported nothing\n", prog, what);
		exit(1);
	}
	buf[n] = '\0';
	return atoll(buf);
}

int main(int argc, char **argv)
{
	const char *target, *buffering, *dir, *fs = "";
	long lines, timeout_s, show;
	char path[4096];
	int fd = -1, master = -1, report[2], status, vt = 0, tty = 0;
	int counts = -1, ctl = -1; /* the drainer's report pipe, and its count's */
	pid_t drainer = 0, printer;
	struct rusage ru;

	prog = argv[0];
	if (argc != 7) {
		fprintf(stderr, "usage: %s TARGET LINES BUFFERING TIMEOUT_S DIR SHOW\n", prog);
		return 2;
	}
	target = argv[1];
	lines = parse_long("LINES", argv[2], 1, 100000000);
	buffering = argv[3];
	timeout_s = parse_long("TIMEOUT_S", argv[4], 1, 86400);
	dir = argv[5];
	show = parse_long("SHOW", argv[6], 0, 1);
	if (strcmp(buffering, "auto") != 0 && strcmp(buffering, "line") != 0 &&
	    strcmp(buffering, "full") != 0 && strcmp(buffering, "none") != 0) {
		fprintf(stderr, "%s: bad BUFFERING %s; want auto, line, full or none\n", prog, buffering);
		return 2;
	}

	if (strcmp(target, "vt_shown") == 0 || strcmp(target, "vt_hidden") == 0) {
		vt = strcmp(target, "vt_shown") == 0 ? SHOWN_VT : HIDDEN_VT;
		snprintf(path, sizeof path, "/dev/tty%d", vt);
		fd = open(path, O_WRONLY | O_NOCTTY);
		if (fd < 0)
			die(path, errno);
		tty = 1;
	} else if (strcmp(target, "serial") == 0) {
		fd = open("/dev/ttyS0", O_WRONLY | O_NOCTTY);
		if (fd < 0)
			die("/dev/ttyS0", errno);
		tty = 1;
	} else if (strcmp(target, "null") == 0) {
		fd = open("/dev/null", O_WRONLY);
		if (fd < 0)
			die("/dev/null", errno);
	} else if (strcmp(target, "file") == 0) {
		struct statfs sfs;
		snprintf(path, sizeof path, "%s/out.txt", dir);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die(path, errno);
		if (fstatfs(fd, &sfs) != 0)
			die("fstatfs", errno);
		fs = sfs.f_type == TMPFS_MAGIC ? "tmpfs" : "other";
	} else if (strcmp(target, "pty") == 0 || strcmp(target, "pty_undrained") == 0) {
		fd = open_pty(&master);
		tty = 1;
		if (strcmp(target, "pty") == 0) {
			/* The drainer keeps its copy of the slave open (-1). */
			counts = start_drainer(master, -1, timeout_s, &ctl, &drainer);
			close(master);
			master = -1;
		}
	} else if (strcmp(target, "pipe") == 0) {
		int p[2];
		if (pipe(p) != 0)
			die("pipe", errno);
		counts = start_drainer(p[0], p[1], timeout_s, &ctl, &drainer);
		close(p[0]);
		fd = p[1];
	} else {
		fprintf(stderr, "%s: bad TARGET %s; want vt_shown, vt_hidden, serial, pty, pipe, null, file or pty_undrained\n", prog, target);
		return 2;
	}

	int have_vts = show ? show_vt(SHOWN_VT, timeout_s) : open("/dev/tty0", O_RDONLY | O_NOCTTY) >= 0;
	if (vt != 0 && !have_vts) {
		fprintf(stderr, "%s: /dev/tty0 does not open: this guest has no virtual terminals\n", prog);
		return 1;
	}

	if (pipe(report) != 0)
		die("pipe", errno);
	printer = fork();
	if (printer < 0)
		die("fork the printer", errno);
	if (printer == 0) {
		long long bytes = 0;
		int ok = 1;
		close(report[0]);
		if (counts >= 0)
			close(counts);
		if (ctl >= 0)
			close(ctl);
		if (master >= 0)
			close(master);
		if (dup2(fd, 1) < 0)
			_exit(5);
		close(fd);
		/* stdio decides auto's buffering at the first write, from isatty. */
		if (strcmp(buffering, "line") == 0)
			setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
		else if (strcmp(buffering, "full") == 0)
			setvbuf(stdout, NULL, _IOFBF, BUFSIZ);
		else if (strcmp(buffering, "none") == 0)
			setvbuf(stdout, NULL, _IONBF, 0);
		double t0 = now();
		for (long i = 0; i < lines; i++) {
			int n = printf("############  %ld\n", i);
			if (n < 0) {
				ok = 0;
				break;
			}
			bytes += n;
		}
		if (fflush(stdout) != 0)
			ok = 0;
		double t1 = now();
		dprintf(report[1], "%.9f %lld %d\n", t1 - t0, bytes, ok);
		_exit(ok ? 0 : 3);
	}
	close(report[1]);
	close(fd); /* the printer holds the only other copy: its exit is EOF */

	if (!wait_bounded(printer, timeout_s, &status, &ru)) {
		fprintf(stderr, "%s: target %s blocked: %ld lines not written within %ld s (a pty or pipe nobody reads fills up and blocks its writer); printer killed\n",
			prog, target, lines, timeout_s);
		if (drainer > 0)
			kill(drainer, SIGKILL);
		printf("timed_out 1\n");
		finish(stdout);
		return 4;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s: the printer to %s ended with status 0x%x\n", prog, target, status);
		return 1;
	}
	char buf[128];
	ssize_t n = read(report[0], buf, sizeof buf - 1);
	if (n <= 0) {
		fprintf(stderr, "%s: the printer reported nothing\n", prog);
		return 1;
	}
	buf[n] = '\0';
	double real;
	long long bytes;
	int ok;
	if (sscanf(buf, "%lf %lld %d", &real, &bytes, &ok) != 3 || !ok) {
		fprintf(stderr, "%s: the printer's report %s is not real bytes ok\n", prog, buf);
		return 1;
	}
	if (counts >= 0) {
		/* A pty's line discipline turns each \n into \r\n (ONLCR). */
		long long want = strcmp(target, "pty") == 0 ? bytes + lines : bytes;
		/* A pipe's drainer may have ended at EOF already: no SIGPIPE. */
		signal(SIGPIPE, SIG_IGN);
		dprintf(ctl, "%lld\n", want);
		close(ctl);
		long long seen = read_count(counts, "the drainer");
		waitpid(drainer, NULL, 0);
		if (seen != want) {
			fprintf(stderr, "%s: the drainer of %s read %lld bytes, want %lld\n", prog, target, seen, want);
			return 1;
		}
	}
	if (strcmp(target, "file") == 0) {
		struct stat st;
		if (stat(path, &st) != 0)
			die(path, errno);
		if (st.st_size != bytes) {
			fprintf(stderr, "%s: %s holds %lld bytes, want %lld\n", prog, path, (long long)st.st_size, bytes);
			return 1;
		}
		unlink(path);
	}
	printf("target %s\n", target);
	printf("lines %ld\n", lines);
	printf("bytes %lld\n", bytes);
	printf("buffering %s\n", buffering);
	printf("terminal %d\n", tty);
	if (*fs)
		printf("fs %s\n", fs);
	printf("shown_vt %d\n", have_vts ? active_vt() : 0);
	printf("real_s %.9f s\n", real);
	printf("user_s %.6f s\n", tv_s(ru.ru_utime));
	printf("sys_s %.6f s\n", tv_s(ru.ru_stime));
	return finish(stdout);
}
