/* The supervisor's end of the jail's terminal.
 *
 * Whenever one of the caller's descriptors 0-2 is a terminal, the command
 * gets a pty of the jail's own devpts in its place (the others pass
 * through untouched), and the supervisor copies bytes between it and the
 * caller's terminal, which it puts in raw mode meanwhile.  The jail then
 * never holds the caller's terminal: TIOCSTI and TIOCSCTTY can reach only
 * its own pty, and a jailrun put in the background is stopped by job
 * control (SIGTTIN) instead of the jail reading what the user types.
 *
 * Writes to the caller's side happen only when poll() says they will not
 * block, so a stalled reader never keeps the supervisor from its signals. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "internal.h"

unsigned jr_pty_tty_mask(void)
{
	unsigned mask = 0;
	for (int fd = 0; fd < 3; fd++)
		if (isatty(fd))
			mask |= 1u << fd;
	return mask;
}

void jr_pty_relay_init(struct jr_pty_relay *r)
{
	memset(r, 0, sizeof(*r));
	r->master = r->in_fd = r->out_fd = r->term_fd = -1;
}

int jr_pty_relay_start(struct jr_pty_relay *r, int master, unsigned mask, jr_error_t **err)
{
	r->master = master;
	r->in_fd = (mask & 1) ? 0 : -1;
	r->out_fd = (mask & 2) ? 1 : (mask & 4) ? 2 : (mask & 1) && isatty(0) ? 0 : -1;
	r->term_fd = isatty(0) && (mask & 1) ? 0 : r->out_fd >= 0 && isatty(r->out_fd) ? r->out_fd : -1;
	if (fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK) < 0)
		return jr_fail(err, errno, "pty: O_NONBLOCK");
	/* Raw mode only when we read keystrokes: the inner pty does the line
	 * discipline, ours would do it twice. */
	if (r->term_fd == 0 && tcgetattr(0, &r->saved) == 0) {
		struct termios raw = r->saved;
		cfmakeraw(&raw);
		if (tcsetattr(0, TCSADRAIN, &raw) == 0)
			r->raw_set = true;
	}
	jr_pty_relay_resize(r);
	return 0;
}

void jr_pty_relay_resize(struct jr_pty_relay *r)
{
	struct winsize ws;
	if (r->master >= 0 && r->term_fd >= 0 && ioctl(r->term_fd, TIOCGWINSZ, &ws) == 0)
		ioctl(r->master, TIOCSWINSZ, &ws);
}

int jr_pty_relay_pollfds(struct jr_pty_relay *r, struct pollfd *pfd)
{
	if (r->master < 0)
		return 0;
	int n = 0;
	short master_events = 0;
	if (!r->master_eof && r->to_out_len == 0)
		master_events |= POLLIN;
	if (r->to_master_len || r->send_eof)
		master_events |= POLLOUT;
	pfd[n++] = (struct pollfd){ .fd = r->master, .events = master_events };
	if (r->in_fd >= 0 && !r->in_eof && r->to_master_len == 0 && !r->send_eof)
		pfd[n++] = (struct pollfd){ .fd = r->in_fd, .events = POLLIN };
	if (r->to_out_len && r->out_fd >= 0)
		pfd[n++] = (struct pollfd){ .fd = r->out_fd, .events = POLLOUT };
	return n;
}

static void write_out(struct jr_pty_relay *r)
{
	ssize_t w = write(r->out_fd, r->to_out, r->to_out_len);
	if (w < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (w <= 0) {
		/* Nobody reads the output any more (EPIPE): hang the jail's
		 * terminal up, as a closed terminal window would, so the
		 * command gets SIGHUP instead of writing into the void. */
		r->to_out_len = 0;
		r->out_fd = -1;
		if (r->master >= 0) {
			close(r->master);
			r->master = -1;
			r->master_eof = true;
		}
		return;
	}
	memmove(r->to_out, r->to_out + w, r->to_out_len - (size_t)w);
	r->to_out_len -= (size_t)w;
}

/* Returns what read() did. */
static ssize_t read_master(struct jr_pty_relay *r)
{
	ssize_t n = read(r->master, r->to_out, sizeof(r->to_out) - JR_OUTPUT_MARKER_MAX);
	if (n > 0) {
		size_t pass = r->budget ? jr_output_admit(r->budget, r->to_out, (size_t)n, sizeof(r->to_out))
					: (size_t)n;
		r->to_out_len = r->out_fd >= 0 ? pass : 0;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		r->master_eof = true; /* EIO: every slave is closed */
	}
	return n;
}

static void write_master(struct jr_pty_relay *r)
{
	if (r->send_eof && !r->to_master_len) {
		/* The caller's input ended: pass on what the terminal's EOF key
		 * would have sent, so the command sees end of file too; twice
		 * after a last line without a newline, whose first EOF only
		 * hands over the line. */
		struct termios t;
		char eof[2];
		eof[0] = eof[1] = tcgetattr(r->master, &t) == 0 ? (char)t.c_cc[VEOF] : 4;
		size_t n = r->last_to_master != '\n' && r->last_to_master != 0 ? 2 : 1;
		if (write(r->master, eof, n) > 0 || (errno != EAGAIN && errno != EINTR))
			r->send_eof = false;
		return;
	}
	ssize_t w = write(r->master, r->to_master, r->to_master_len);
	if (w > 0) {
		r->last_to_master = r->to_master[w - 1];
		memmove(r->to_master, r->to_master + w, r->to_master_len - (size_t)w);
		r->to_master_len -= (size_t)w;
	} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
		r->to_master_len = 0;
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
			if (pfd[i].revents & POLLOUT)
				write_master(r);
		} else if (pfd[i].fd == r->in_fd && (pfd[i].events & POLLIN)) {
			ssize_t got = read(r->in_fd, r->to_master, sizeof(r->to_master));
			if (got > 0) {
				r->to_master_len = (size_t)got;
			} else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
				r->in_eof = true;
				r->send_eof = true;
			}
		} else if (pfd[i].fd == r->out_fd && (pfd[i].events & POLLOUT)) {
			write_out(r);
		}
	}
}

void jr_pty_relay_drain(struct jr_pty_relay *r)
{
	/* The jail is gone, so every slave is closed: copy out what is left
	 * (blocking writes are fine now), and stop at EIO or EAGAIN. */
	for (;;) {
		while (r->to_out_len && r->out_fd >= 0) {
			struct pollfd p = { .fd = r->out_fd, .events = POLLOUT };
			if (poll(&p, 1, 1000) <= 0)
				return; /* nobody reads: give up rather than hang */
			write_out(r);
		}
		if (r->master < 0 || r->master_eof || read_master(r) <= 0)
			return;
	}
}

void jr_pty_relay_suspend(struct jr_pty_relay *r)
{
	/* Stopped (SIGTSTP): give the caller's shell its terminal back. */
	if (r->raw_set)
		tcsetattr(0, TCSADRAIN, &r->saved);
}

void jr_pty_relay_resume(struct jr_pty_relay *r)
{
	if (r->raw_set) {
		struct termios raw = r->saved;
		cfmakeraw(&raw);
		tcsetattr(0, TCSADRAIN, &raw);
	}
	jr_pty_relay_resize(r);
}

void jr_pty_relay_stop(struct jr_pty_relay *r)
{
	if (r->raw_set) {
		tcsetattr(0, TCSADRAIN, &r->saved);
		r->raw_set = false;
	}
	if (r->master >= 0)
		close(r->master);
	r->master = -1;
}
