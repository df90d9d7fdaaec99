/* attack NAME: tries one thing a jail should refuse and says what
 * happened: "allowed" (exit 0) or "denied ERRNO" (exit 1).  A process
 * the seccomp filter kills says nothing: its status tells. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef KEY_SPEC_PROCESS_KEYRING
#define KEY_SPEC_PROCESS_KEYRING -2
#endif

static long io_uring(void)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	return syscall(__NR_io_uring_setup, 4, &p);
}

static long keyring(void)
{
	return syscall(__NR_add_key, "user", "jailrun-test", "x", 1, KEY_SPEC_PROCESS_KEYRING);
}

static long bpf_map(void)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	return syscall(__NR_bpf, BPF_MAP_CREATE, &a, sizeof(a));
}

static long perf(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	return syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
}

static long trace_child(void)
{
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	long r = ptrace(PTRACE_ATTACH, child, 0, 0);
	int e = errno;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	errno = e;
	return r;
}

static long clone_newuser(void)
{
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return pid;
}

static long clone3_plain(void)
{
	struct clone_args args;
	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	long pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return pid;
}

static long handle(void)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[128];
	} h;
	int mount_id;
	h.fh.handle_bytes = sizeof(h.bytes);
	return syscall(__NR_name_to_handle_at, AT_FDCWD, ".", &h.fh, &mount_id, 0);
}

static long open_handle(void)
{
	/* A made-up handle: the filter, or the missing CAP_DAC_READ_SEARCH,
	 * must refuse before the handle is ever looked at. */
	struct {
		struct file_handle fh;
		unsigned char bytes[8];
	} h = { .fh = { .handle_bytes = 8, .handle_type = 1 } };
	return syscall(__NR_open_by_handle_at, AT_FDCWD, &h.fh, O_RDONLY);
}

static long trace_pid(void)
{
	const char *p = getenv("ATTACK_PID");
	long r = ptrace(PTRACE_ATTACH, p ? atoi(p) : 1, 0, 0);
	if (r == 0)
		ptrace(PTRACE_DETACH, p ? atoi(p) : 1, 0, 0);
	return r;
}

/* The kernel reads an ioctl request and a socket family as 32-bit ints:
 * a filter comparing all 64 bits would let these through. */
static long tiocsti64(void)
{
	char c = 'x';
	return syscall(SYS_ioctl, 0, 0x100000000UL | TIOCSTI, &c);
}

static long socket64(void)
{
	return syscall(SYS_socket, 0x100000000UL | AF_INET, SOCK_STREAM, 0);
}

static long int80(void)
{
	/* getpid through the i386 entry point (20 is __NR_getpid there). */
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

static long weaken_personality(void)
{
	return personality(ADDR_NO_RANDOMIZE);
}

static const struct {
	const char *name;
	long (*fn)(void);
} attacks[] = {
	{ "io_uring", io_uring },	{ "keyctl", keyring },	       { "bpf", bpf_map },
	{ "perf_event_open", perf },	{ "ptrace", trace_child },     { "clone-newuser", clone_newuser },
	{ "clone3", clone3_plain },	{ "name_to_handle_at", handle }, { "int80", int80 },
	{ "personality", weaken_personality }, { "open_by_handle_at", open_handle },
	{ "ptrace-pid", trace_pid }, { "tiocsti64", tiocsti64 }, { "socket64", socket64 },
};

int main(int argc, char **argv)
{
	for (size_t i = 0; argc == 2 && i < sizeof(attacks) / sizeof(attacks[0]); i++) {
		if (strcmp(argv[1], attacks[i].name))
			continue;
		errno = 0;
		long r = attacks[i].fn();
		if (r < 0) {
			printf("denied %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
			return 1;
		}
		puts("allowed");
		return 0;
	}
	fprintf(stderr, "usage: attack NAME\n");
	return 2;
}
