/*
 * echod PORT: the peertest plugin's peer workload. Listens on TCP PORT at
 * $LAB_SELF_ADDR, prints "ready", and answers each connection with one
 * line: "echod SELF PEER" (its own address on the connection, and the
 * address it was given as its peer's, $LAB_PEER_ADDR). Runs until killed.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *self = getenv("LAB_SELF_ADDR"), *peer = getenv("LAB_PEER_ADDR");
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int one = 1, s;

	if (argc != 2 || !self || !peer) {
		fprintf(stderr, "echod: usage: echod PORT, with LAB_SELF_ADDR and LAB_PEER_ADDR set\n");
		return 2;
	}
	sa.sin_port = htons(atoi(argv[1]));
	if (inet_pton(AF_INET, self, &sa.sin_addr) != 1) {
		fprintf(stderr, "echod: LAB_SELF_ADDR %s is not an IPv4 address\n", self);
		return 2;
	}
	s = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 16) < 0) {
		perror("echod: listen");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		struct sockaddr_in me;
		socklen_t len = sizeof me;
		char buf[INET_ADDRSTRLEN];
		int c = accept(s, NULL, NULL);
		if (c < 0)
			continue;
		getsockname(c, (struct sockaddr *)&me, &len);
		dprintf(c, "echod %s %s\n", inet_ntop(AF_INET, &me.sin_addr, buf, sizeof buf), peer);
		close(c);
	}
}
