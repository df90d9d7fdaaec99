/* syscalls: the syscall-heavy case of `make bench`.  2,000,000 getppid(2)
 * calls (the cheapest syscall there is: what a seccomp filter adds per
 * call), then 200,000 open(2)/close(2) pairs on FILE (what Landlock and the
 * filter add to a path lookup).  Built static (cc -O2 -static) so the jail
 * and the host run the very same code with no dynamic loading.  Prints
 * nothing; exits 1 with a message if a call fails.
 *
 *   syscalls FILE
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define GETPPID_CALLS 2000000L
#define OPEN_CLOSE_PAIRS 200000L

int main(int argc, char **argv)
{
	volatile pid_t sink = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: syscalls FILE\n");
		return 2;
	}
	for (long i = 0; i < GETPPID_CALLS; i++)
		sink += getppid();
	for (long i = 0; i < OPEN_CLOSE_PAIRS; i++) {
		int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		close(fd);
	}
	(void)sink;
	return 0;
}
