/* The supervisor's end of the jail's terminal.  The command gets a pty
 * from the jail's own devpts; the supervisor copies bytes between it and
 * the caller's terminal, which it puts in raw mode meanwhile.  TIOCSTI in
 * the jail can then only inject into the jail's pty. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "internal.h"

void jr_pty_relay_init(struct jr_pty_relay *r)
{
	memset(r, 0, sizeof(*r));
	r->master = -1;
}

int jr_pty_relay_start(struct jr_pty_relay *r, int master, jr_error_t **err)
{
	r->master = master;
	if (fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK) < 0)
		return jr_fail(err, errno, "pty: O_NONBLOCK");
	if (tcgetattr(STDIN_FILENO, &r->saved) == 0) {
		struct termios raw = r->saved;
		cfmakeraw(&raw);
		if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0)
			r->raw_set = true;
	}
	jr_pty_relay_resize(r);
	return 0;
}

void jr_pty_relay_resize(struct jr_pty_relay *r)
{
	struct winsize ws;
	if (r->master >= 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(r->master, TIOCSWINSZ, &ws);
}

int jr_pty_relay_pollfds(struct jr_pty_relay *r, struct pollfd *pfd)
{
	if (r->master < 0)
		return 0;
	int n = 0;
	/* Read more only when the previous chunk has been written out. */
	short master_events = 0;
	if (!r->master_eof && r->to_out_len == 0)
		master_events |= POLLIN;
	if (r->to_master_len)
		master_events |= POLLOUT;
	pfd[n++] = (struct pollfd){ .fd = r->master, .events = master_events };
	if (!r->in_eof && r->to_master_len == 0)
		pfd[n++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
	return n;
}

static void flush_to_out(struct jr_pty_relay *r)
{
	while (r->to_out_len) {
		ssize_t w = write(STDOUT_FILENO, r->to_out, r->to_out_len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r->to_out_len = 0; /* the caller's terminal is gone: drop */
			return;
		}
		memmove(r->to_out, r->to_out + w, r->to_out_len - (size_t)w);
		r->to_out_len -= (size_t)w;
	}
}

static void read_master(struct jr_pty_relay *r)
{
	ssize_t n = read(r->master, r->to_out, sizeof(r->to_out));
	if (n > 0) {
		r->to_out_len = (size_t)n;
		flush_to_out(r);
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		r->master_eof = true; /* EIO: every slave is closed */
	}
}

void jr_pty_relay_handle(struct jr_pty_relay *r, const struct pollfd *pfd, int n)
{
	for (int i = 0; i < n; i++) {
		if (!pfd[i].revents)
			continue;
		if (pfd[i].fd == r->master) {
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
				read_master(r);
			if ((pfd[i].revents & POLLOUT) && r->to_master_len) {
				ssize_t w = write(r->master, r->to_master, r->to_master_len);
				if (w > 0) {
					memmove(r->to_master, r->to_master + w,
						r->to_master_len - (size_t)w);
					r->to_master_len -= (size_t)w;
				} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
					r->to_master_len = 0;
				}
			}
		} else if (pfd[i].fd == STDIN_FILENO) {
			ssize_t got = read(STDIN_FILENO, r->to_master, sizeof(r->to_master));
			if (got > 0)
				r->to_master_len = (size_t)got;
			else if (got == 0 || (errno != EAGAIN && errno != EINTR))
				r->in_eof = true;
		}
	}
}

void jr_pty_relay_drain(struct jr_pty_relay *r)
{
	/* The jail is gone, so every slave is closed: read until EIO, and
	 * stop at EAGAIN too rather than wait for data that cannot come. */
	while (r->master >= 0 && !r->master_eof) {
		ssize_t n = read(r->master, r->to_out, sizeof(r->to_out));
		if (n <= 0)
			break;
		r->to_out_len = (size_t)n;
		flush_to_out(r);
	}
}

void jr_pty_relay_stop(struct jr_pty_relay *r)
{
	if (r->raw_set) {
		tcsetattr(STDIN_FILENO, TCSADRAIN, &r->saved);
		r->raw_set = false;
	}
	if (r->master >= 0)
		close(r->master);
	r->master = -1;
}
