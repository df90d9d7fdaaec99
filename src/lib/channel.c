/* Fixed-size messages between the supervisor and the jail's init over a
 * SOCK_SEQPACKET pair, with an optional descriptor attached. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

int jr_msg_send(int sock, const struct jr_msg *msg, int pass_fd, jr_error_t **err)
{
	struct iovec iov = { (void *)msg, sizeof(*msg) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (pass_fd >= 0) {
		memset(&control, 0, sizeof(control));
		mh.msg_control = control.buf;
		mh.msg_controllen = sizeof(control.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}
	ssize_t n;
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*msg))
		return jr_fail(err, n < 0 ? errno : EPROTO, "control channel: send");
	return 0;
}

int jr_msg_recv(int sock, struct jr_msg *msg, int *pass_fd, jr_error_t **err)
{
	struct iovec iov = { msg, sizeof(*msg) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = control.buf, .msg_controllen = sizeof(control.buf) };

	if (pass_fd)
		*pass_fd = -1;
	ssize_t n;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n < 0)
		return jr_fail(err, errno, "control channel: receive");
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int fd;
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
			if (pass_fd && *pass_fd < 0)
				*pass_fd = fd;
			else
				close(fd);
		}
	}
	if (n != (ssize_t)sizeof(*msg) || (mh.msg_flags & MSG_TRUNC))
		return jr_fail(err, EPROTO, "control channel: short message");
	msg->text[sizeof(msg->text) - 1] = '\0';
	return 1;
}

uint64_t jr_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}
