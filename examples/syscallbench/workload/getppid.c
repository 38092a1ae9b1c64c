/* getppid: time n getppid() system calls with CLOCK_MONOTONIC. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 100000;
	if (n <= 0) {
		fprintf(stderr, "getppid: n must be positive\n");
		return 2;
	}
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid); /* not the libc wrapper: it must enter the kernel */
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
	printf("syscall_ns %.1f\n", ns);
	printf("n %ld\n", n);
	return 0;
}
