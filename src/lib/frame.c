/* Framed JSON between a session's clients and the jail's init: a 4-byte
 * length (host order: both ends are this machine) and that many bytes of
 * JSON, over a stream unix socket, with up to JR_FRAME_MAX_FDS
 * descriptors attached to the first byte. */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal.h"

#define FRAME_MAX (64u << 20)

int jr_send_all(int sock, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(sock, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int jr_frame_send_text(int sock, const char *text, const int *fds, size_t n_fds, jr_error_t **err)
{
	size_t len = strlen(text);
	if (len > FRAME_MAX || n_fds > JR_FRAME_MAX_FDS)
		return jr_fail(err, EMSGSIZE, "session: message too large");
	uint32_t head = (uint32_t)len;
	union {
		char buf[CMSG_SPACE(sizeof(int) * JR_FRAME_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { &head, sizeof(head) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n_fds) {
		memset(&control, 0, sizeof(control));
		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	ssize_t n;
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(head) || jr_send_all(sock, text, len) < 0)
		return jr_fail(err, n < 0 || errno ? errno : EPIPE, "session: sending a message");
	return 0;
}

int jr_frame_send(int sock, const cJSON *msg, const int *fds, size_t n_fds, jr_error_t **err)
{
	char *text = cJSON_PrintUnformatted(msg);
	if (!text)
		return jr_fail_oom(err);
	int r = jr_frame_send_text(sock, text, fds, n_fds, err);
	free(text);
	return r;
}

/* The rest of a frame whose first bytes came: within FRAME_DEADLINE_MS in
 * all, so a client that trickles bytes cannot hold the reader. */
#define FRAME_DEADLINE_MS 5000

static int recv_all(int sock, char *buf, size_t len)
{
	uint64_t deadline = jr_now_us() + FRAME_DEADLINE_MS * 1000ull;
	while (len) {
		uint64_t now = jr_now_us();
		struct pollfd p = { .fd = sock, .events = POLLIN };
		if (now >= deadline || poll(&p, 1, (int)((deadline - now) / 1000) + 1) <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		ssize_t n = recv(sock, buf, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? 0 : -1;
		buf += n;
		len -= (size_t)n;
	}
	return 1;
}

int jr_frame_recv(int sock, cJSON **msg, int *fds, size_t *n_fds, jr_error_t **err)
{
	size_t cap = n_fds ? *n_fds : 0;
	if (n_fds)
		*n_fds = 0;
	*msg = NULL;
	uint32_t head;
	union {
		char buf[CMSG_SPACE(sizeof(int) * JR_FRAME_MAX_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { &head, sizeof(head) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	ssize_t n;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n < 0)
		return jr_fail(err, errno, "session: receiving a message");
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (n_fds && *n_fds < cap)
				fds[(*n_fds)++] = fd;
			else
				close(fd);
		}
	}
	if (n != (ssize_t)sizeof(head) || head > FRAME_MAX)
		return jr_fail(err, EPROTO, "session: malformed message");
	char *text = malloc((size_t)head + 1);
	if (!text)
		return jr_fail_oom(err);
	int r = recv_all(sock, text, head);
	if (r <= 0) {
		free(text);
		return jr_fail(err, r == 0 ? EPROTO : errno, "session: truncated message");
	}
	text[head] = '\0';
	*msg = cJSON_ParseWithLength(text, head);
	free(text);
	if (!*msg)
		return jr_fail(err, EPROTO, "session: message is not JSON");
	return 1;
}
