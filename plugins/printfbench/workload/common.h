/*
 * common.h: what printfbench's workloads share. Each workload is its own
 * static program, run as a separate process in the guest, so the harness
 * does not distort what it measures. They print `key value [unit]` lines
 * for lab's printfbench plugin on the stdout they were started with, and
 * the lines they time on a descriptor of their own.
 */
#define _GNU_SOURCE
#include <lab.h>
#include <fcntl.h>
#include <linux/vt.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* SHOWN_VT is the VT made shown before a run: tty1, E3's. */
#define SHOWN_VT 1

/* timed_out is set by SIGALRM: the timed child has run past its bound. */
static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

/*
 * wait_bounded waits for child with wait4 for at most timeout_s seconds;
 * past that the child is killed with SIGKILL, waited for, and 0 returned.
 * SIGALRM interrupts wait4 (no SA_RESTART).
 */
__attribute__((unused)) static int wait_bounded(pid_t child, long timeout_s, int *status, struct rusage *ru)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) != 0)
		die("sigaction SIGALRM", errno);
	timed_out = 0;
	alarm((unsigned)timeout_s);
	for (;;) {
		pid_t r = wait4(child, status, 0, ru);
		if (r == child)
			break;
		if (r < 0 && errno == EINTR) {
			if (timed_out) {
				kill(child, SIGKILL);
				while (wait4(child, status, 0, ru) < 0 && errno == EINTR)
					;
				alarm(0);
				return 0;
			}
			continue;
		}
		die("wait4", errno);
	}
	alarm(0);
	return 1;
}

/*
 * show_vt makes vt the VT on screen (VT_ACTIVATE, then VT_WAITACTIVE,
 * bounded by timeout_s); 0 if the guest has no VTs (/dev/tty0 does not
 * open).
 */
__attribute__((unused)) static int show_vt(int vt, long timeout_s)
{
	int con = open("/dev/tty0", O_WRONLY | O_NOCTTY);
	struct sigaction sa;
	if (con < 0)
		return 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	timed_out = 0;
	alarm((unsigned)timeout_s);
	if (ioctl(con, VT_ACTIVATE, vt) != 0)
		die("VT_ACTIVATE", errno);
	while (ioctl(con, VT_WAITACTIVE, vt) != 0) {
		if (errno == EINTR && timed_out) {
			fprintf(stderr, "%s: tty%d did not become the shown VT within %ld s\n", prog, vt, timeout_s);
			exit(1);
		}
		if (errno != EINTR)
			die("VT_WAITACTIVE", errno);
	}
	alarm(0);
	close(con);
	return 1;
}

/* active_vt is the VT on screen (VT_GETSTATE), 0 without VTs. */
__attribute__((unused)) static int active_vt(void)
{
	struct vt_stat st;
	int con = open("/dev/tty0", O_RDONLY | O_NOCTTY);
	if (con < 0)
		return 0;
	if (ioctl(con, VT_GETSTATE, &st) != 0)
		die("VT_GETSTATE", errno);
	close(con);
	return st.v_active;
}
