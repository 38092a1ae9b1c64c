/* nready: a peer workload that fails before it is ready. */
#include <stdio.h>

int main(void)
{
	printf("starting\n");
	fprintf(stderr, "nready: cannot serve (on purpose)\n");
	return 3;
}
