/* The command's stdout and stderr through the supervisor, where limit
 * output asks for a cap: the jail writes into pipes, the supervisor
 * copies at most the budget to the caller's descriptors, then one marker
 * line, and reads and drops the rest so the command never blocks on a
 * full pipe.  A harness that feeds output back into a model gets a
 * bounded, visibly truncated stream.
 *
 * When the caller's stdout and stderr are one open file (2>&1), both go
 * through one pipe, so their interleaving survives. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

size_t jr_output_admit(struct jr_output_budget *b, char *buf, size_t n, size_t cap)
{
	b->produced += n;
	if (!b->limited)
		return n;
	if (b->truncated)
		return 0;
	if (b->passed + n <= b->limit) {
		b->passed += n;
		return n;
	}
	size_t keep = (size_t)(b->limit - b->passed);
	b->passed = b->limit;
	b->truncated = true;
	int m = snprintf(buf + keep, cap - keep, "\n[jailrun: output truncated at %llu bytes (limit output)]\n",
			 (unsigned long long)b->limit);
	return keep + (m > 0 && (size_t)m < cap - keep ? (size_t)m : 0);
}

static bool same_open_file(int a, int b)
{
	pid_t self = getpid();
	long r = syscall(SYS_kcmp, self, self, KCMP_FILE, a, b);
	if (r >= 0)
		return r == 0;
	struct stat sa, sb; /* no kcmp in this kernel: the same file will do */
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static void pipe_init(struct jr_output_pipe *p)
{
	p->read_fd = p->write_fd = p->to_fd = p->own_to_fd = -1;
	p->to_socket = false;
	p->len = p->off = 0;
	p->eof = false;
}

void jr_output_init(struct jr_output *o)
{
	memset(&o->budget, 0, sizeof(o->budget));
	for (int i = 0; i < 2; i++)
		pipe_init(&o->pipes[i]);
	for (int fd = 0; fd < 3; fd++)
		o->dup_to[fd] = -1;
	o->stdin_ro = -1;
}

/* Writes to the caller's descriptor must never block the supervisor (a
 * slow reader would stall the time limit and signal forwarding), but its
 * file description is shared with the caller: a pipe, FIFO or terminal
 * is reopened for jailrun alone, non-blocking; a socket is written with
 * MSG_DONTWAIT; a regular file does not block. */
static void private_destination(struct jr_output_pipe *p)
{
	struct stat st;
	if (fstat(p->to_fd, &st) < 0)
		return;
	if (S_ISSOCK(st.st_mode)) {
		p->to_socket = true;
		return;
	}
	if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
		return;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p->to_fd);
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0)
		p->to_fd = p->own_to_fd = fd;
}

/* With limit output, a stdin opened for writing too (a terminal under
 * --no-pty, a file opened read-write) would be a way around the cap: the
 * command gets it reopened read-only. */
static int readonly_stdin(struct jr_output *o, unsigned pty_mask, jr_error_t **err)
{
	int mode = fcntl(0, F_GETFL);
	if (pty_mask & 1 || mode < 0 || (mode & O_ACCMODE) == O_RDONLY)
		return 0;
	struct stat st;
	if (fstat(0, &st) == 0 && S_ISSOCK(st.st_mode))
		return 0; /* a socket cannot be reopened; see jailrun.pol(5), limit output */
	int fd = open("/proc/self/fd/0", O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return jr_fail(err, errno, "limit output: reopening stdin read-only");
	o->stdin_ro = o->dup_to[0] = fd;
	return 0;
}

int jr_output_setup(struct jr_output *o, const struct jr_plan *plan, unsigned pty_mask,
		    jr_error_t **err)
{
	jr_output_init(o);
	o->budget.limited = plan->output_limited;
	o->budget.limit = plan->output_limit;
	o->budget.counting = pty_mask != 0;
	if (!plan->output_limited)
		return 0;
	o->budget.counting = true;
	bool shared = !(pty_mask & 6) && same_open_file(1, 2);
	for (int fd = 1; fd <= 2; fd++) {
		if (pty_mask & (1u << fd))
			continue;
		if (fd == 2 && shared) {
			o->dup_to[2] = o->pipes[0].write_fd;
			continue;
		}
		struct jr_output_pipe *p = &o->pipes[fd - 1];
		int ends[2];
		if (pipe2(ends, O_CLOEXEC) < 0)
			return jr_fail(err, errno, "output pipe");
		p->read_fd = ends[0];
		p->write_fd = ends[1];
		p->to_fd = fd;
		fcntl(p->read_fd, F_SETFL, O_NONBLOCK);
		o->dup_to[fd] = p->write_fd;
		private_destination(p);
	}
	return readonly_stdin(o, pty_mask, err);
}

void jr_output_close_write_ends(struct jr_output *o)
{
	for (int i = 0; i < 2; i++) {
		if (o->pipes[i].write_fd >= 0)
			close(o->pipes[i].write_fd);
		o->pipes[i].write_fd = -1;
	}
	if (o->stdin_ro >= 0)
		close(o->stdin_ro);
	o->stdin_ro = -1;
}

int jr_output_pollfds(struct jr_output *o, struct pollfd *pfd)
{
	int n = 0;
	for (int i = 0; i < 2; i++) {
		struct jr_output_pipe *p = &o->pipes[i];
		if (p->read_fd < 0)
			continue;
		if (p->len > p->off && p->to_fd >= 0) {
			pfd[n++] = (struct pollfd){ .fd = p->to_fd, .events = POLLOUT };
		} else {
			if (!p->eof)
				pfd[n++] = (struct pollfd){ .fd = p->read_fd, .events = POLLIN };
			/* Past the cap nothing is written, so only this says
			 * that the reader has gone (and the command should see
			 * EPIPE, not run on). */
			if (o->budget.truncated && p->to_fd >= 0)
				pfd[n++] = (struct pollfd){ .fd = p->to_fd, .events = 0 };
		}
	}
	return n;
}

/* The caller stopped reading (EPIPE): stop reading too, so the command's
 * next write fails as it would have without jailrun in between. */
static void hang_up(struct jr_output_pipe *p)
{
	close(p->read_fd);
	p->read_fd = -1;
	p->len = p->off = 0;
	p->eof = true;
}

static void copy_out(struct jr_output_pipe *p)
{
	ssize_t w = p->to_socket ? send(p->to_fd, p->buf + p->off, p->len - p->off,
					MSG_DONTWAIT | MSG_NOSIGNAL)
				 : write(p->to_fd, p->buf + p->off, p->len - p->off);
	if (w < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (w <= 0) {
		hang_up(p);
		return;
	}
	p->off += (size_t)w;
	if (p->off == p->len)
		p->len = p->off = 0;
}

/* Returns what read() did: > 0 bytes, 0 at the end, -1 with errno. */
static ssize_t fill(struct jr_output *o, struct jr_output_pipe *p)
{
	ssize_t n = read(p->read_fd, p->buf, sizeof(p->buf) - JR_OUTPUT_MARKER_MAX);
	if (n > 0) {
		p->len = jr_output_admit(&o->budget, p->buf, (size_t)n, sizeof(p->buf));
		p->off = 0;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		p->eof = true;
	}
	return n;
}

void jr_output_handle(struct jr_output *o, const struct pollfd *pfd, int n)
{
	for (int i = 0; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		for (int k = 0; k < 2; k++) {
			struct jr_output_pipe *p = &o->pipes[k];
			if (p->read_fd < 0)
				continue;
			if (pfd[i].fd == p->read_fd && (pfd[i].events & POLLIN))
				fill(o, p);
			else if (pfd[i].fd == p->to_fd && (pfd[i].events & POLLOUT) && p->len > p->off)
				copy_out(p);
			else if (pfd[i].fd == p->to_fd && !pfd[i].events &&
				 (pfd[i].revents & (POLLERR | POLLHUP)))
				hang_up(p);
		}
	}
}

/* What the jail wrote before it ended still reaches the caller, but a
 * reader too slow to take it within DRAIN_MS does not keep jailrun. */
#define DRAIN_MS 2000

void jr_output_drain(struct jr_output *o)
{
	uint64_t deadline = jr_now_us() + DRAIN_MS * 1000;
	for (int k = 0; k < 2; k++) {
		struct jr_output_pipe *p = &o->pipes[k];
		while (p->read_fd >= 0) {
			while (p->read_fd >= 0 && p->len > p->off) {
				uint64_t now = jr_now_us();
				struct pollfd w = { .fd = p->to_fd, .events = POLLOUT };
				if (now >= deadline ||
				    poll(&w, 1, (int)((deadline - now) / 1000) + 1) <= 0) {
					hang_up(p); /* nobody reads in time: give up rather than hang */
					break;
				}
				copy_out(p);
			}
			if (p->read_fd < 0 || p->eof || fill(o, p) < 0)
				break; /* the end, or EAGAIN: nothing more will come */
		}
	}
}

void jr_output_close(struct jr_output *o)
{
	jr_output_close_write_ends(o);
	for (int k = 0; k < 2; k++) {
		if (o->pipes[k].read_fd >= 0) {
			close(o->pipes[k].read_fd);
			o->pipes[k].read_fd = -1;
		}
		if (o->pipes[k].own_to_fd >= 0) {
			close(o->pipes[k].own_to_fd);
			o->pipes[k].own_to_fd = -1;
		}
	}
	if (o->stdin_ro >= 0) {
		close(o->stdin_ro);
		o->stdin_ro = -1;
	}
}
