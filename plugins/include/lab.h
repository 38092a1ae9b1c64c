/*
 * lab.h: the helpers every C workload of a lab plugin needs. `lab plugin
 * build` hands it to the C compiler (-I), so a workload anywhere writes
 *
 *	#define _GNU_SOURCE	(feature macros first, as before any system header)
 *	#include <lab.h>
 *
 * and sets prog first thing in main. A workload prints `key value [unit]`
 * lines on stdout for its plugin (see README.md, "Writing a plugin"); these
 * helpers end it the same way everywhere: a message on stderr naming the
 * program and a non-zero status for what went wrong, the libc line the
 * SDK records, and a checked stdout.
 *
 * Everything here is static (each workload is its own program, and the
 * compiler may inline what it likes) and marked unused, so a workload pays
 * and warns for nothing it does not call.
 */
#ifndef LAB_H
#define LAB_H

#include <errno.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* prog names the workload in its messages ("forktime", or argv[0]). */
static const char *prog;

/*
 * die ends the program with status 1 after "PROG: WHAT: STRERROR(ERR)" on
 * stderr: err is an errno value, or what a pthread_* call returned. It is
 * not declared noreturn: in the built-in workloads the attribute moves
 * registers around inside timed loops, and GCC finds out anyway that a
 * static function calling exit does not return.
 */
__attribute__((unused)) static void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(err));
	exit(1);
}

/* now is CLOCK_MONOTONIC in seconds; time a region as now() - t0. */
__attribute__((unused)) static double now(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		die("clock_gettime", errno);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * parse_long parses s, the argument called what, as a decimal integer in
 * [lo, hi]. Anything else (empty, trailing characters, out of range) ends
 * the program with status 2 after "PROG: bad WHAT S; want an integer in
 * LO..HI" on stderr.
 */
__attribute__((unused)) static long parse_long(const char *what, const char *s, long lo, long hi)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s || n < lo || n > hi) {
		fprintf(stderr, "%s: bad %s %s; want an integer in %ld..%ld\n", prog, what, s, lo, hi);
		exit(2);
	}
	return n;
}

/* tv_s is a struct timeval (getrusage's, wait4's) in seconds. */
__attribute__((unused)) static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/*
 * flush_results flushes out and dies ("write results") if anything
 * written to it was lost: results cut short must not pass for results.
 * It returns 0, main's status.
 */
__attribute__((unused)) static int flush_results(FILE *out)
{
	if (fflush(out) != 0 || ferror(out))
		die("write results", errno);
	return 0;
}

/*
 * finish ends a workload's results on out: the "libc glibc-VERSION" line
 * the SDK records as the workload's libc, then flush_results. `return
 * finish(stdout);` ends main.
 */
__attribute__((unused)) static int finish(FILE *out)
{
	fprintf(out, "libc glibc-%s\n", gnu_get_libc_version());
	return flush_results(out);
}

#endif
