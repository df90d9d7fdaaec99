/* http.c: HTTP/1.1 over the Docker Engine's AF_UNIX socket (http.h). */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "http.h"

int dk_buf_add(struct dk_buf *b, const void *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0'; /* always a C string too, for the JSON parser */
	return 0;
}

void dk_buf_free(struct dk_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int dk_fail(struct jr_provider_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
		err->code = code;
		/* One line, as the ABI asks: the daemon's messages may carry newlines. */
		for (char *c = err->message; *c; c++)
			if (*c == '\n' || *c == '\r')
				*c = ' ';
	}
	return -1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int dk_connect(const char *sock, struct jr_provider_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(sock) >= sizeof(sa.sun_path))
		return dk_fail(err, ENAMETOOLONG, "docker socket path too long: %s", sock);
	strcpy(sa.sun_path, sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return dk_fail(err, errno, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		return dk_fail(err, e, "cannot reach the Docker daemon at %s: %s", sock, strerror(e));
	}
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int send_request(int fd, const char *method, const char *path, const char *json,
			const char *extra_headers, struct jr_provider_error *err)
{
	size_t blen = json ? strlen(json) : 0;
	char head[4096];
	int n = snprintf(head, sizeof(head),
			 "%s %s HTTP/1.1\r\nHost: docker\r\nUser-Agent: jailrun-docker\r\n"
			 "%s%s%sContent-Length: %zu\r\n\r\n",
			 method, path, json ? "Content-Type: application/json\r\n" : "",
			 extra_headers, "", blen);
	if (n < 0 || (size_t)n >= sizeof(head))
		return dk_fail(err, E2BIG, "docker request line too long");
	if (send_all(fd, head, (size_t)n) < 0 || (blen && send_all(fd, json, blen) < 0))
		return dk_fail(err, errno, "sending to the Docker daemon: %s", strerror(errno));
	return 0;
}

static int parse_status(const char *p)
{
	/* "HTTP/1.1 200 OK" */
	const char *sp = strchr(p, ' ');
	return sp ? atoi(sp + 1) : 0;
}

/* Decodes a chunked body in place; -1 when it is malformed. */
static int dechunk(struct dk_buf *b)
{
	size_t in = 0, out = 0;
	for (;;) {
		char *end;
		if (in >= b->len)
			return -1;
		unsigned long long n = strtoull(b->p + in, &end, 16);
		char *eol = strstr(end, "\r\n");
		if (!eol)
			return -1;
		in = (size_t)(eol + 2 - b->p);
		if (n == 0)
			break;
		if (n > b->len - in)
			return -1;
		memmove(b->p + out, b->p + in, n);
		out += n;
		in += n + 2; /* the chunk's CRLF */
	}
	b->len = out;
	b->p[out] = '\0';
	return 0;
}

int dk_request(const char *sock, const char *method, const char *path, const char *json,
	       uint64_t timeout_ms, int *status, struct dk_buf *body, struct jr_provider_error *err)
{
	int fd = dk_connect(sock, err);
	if (fd < 0)
		return -1;
	struct dk_buf raw = { 0 };
	int rc = -1;
	if (send_request(fd, method, path, json, "Connection: close\r\n", err) < 0)
		goto out;
	/* Connection: close, so the answer ends at EOF: no need to trust a
	 * Content-Length to know where it stops. */
	uint64_t deadline = timeout_ms ? now_ms() + timeout_ms : 0;
	for (;;) {
		int wait = -1;
		if (deadline) {
			uint64_t t = now_ms();
			if (t >= deadline) {
				dk_fail(err, ETIMEDOUT, "the Docker daemon did not answer %s %s in time",
					method, path);
				goto out;
			}
			wait = (int)(deadline - t);
		}
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int pr = poll(&pfd, 1, wait);
		if (pr < 0 && errno == EINTR) {
			dk_fail(err, EINTR, "interrupted while waiting for the Docker daemon");
			goto out;
		}
		if (pr <= 0)
			continue;
		char chunk[65536];
		ssize_t r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			dk_fail(err, errno, "reading from the Docker daemon: %s", strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		if (dk_buf_add(&raw, chunk, (size_t)r) < 0) {
			dk_fail(err, ENOMEM, "out of memory");
			goto out;
		}
	}
	char *hend = raw.p ? strstr(raw.p, "\r\n\r\n") : NULL;
	if (!hend || strncmp(raw.p, "HTTP/1.", 7)) {
		dk_fail(err, EPROTO, "the Docker daemon's answer to %s %s is not HTTP", method, path);
		goto out;
	}
	*hend = '\0';
	*status = parse_status(raw.p);
	bool chunked = false;
	for (char *h = strstr(raw.p, "\r\n"); h; h = strstr(h + 2, "\r\n"))
		if (!strncasecmp(h + 2, "transfer-encoding:", 18) && strcasestr(h + 2, "chunked"))
			chunked = true;
	size_t off = (size_t)(hend + 4 - raw.p);
	dk_buf_free(body);
	if (dk_buf_add(body, raw.p + off, raw.len - off) < 0) {
		dk_fail(err, ENOMEM, "out of memory");
		goto out;
	}
	if (chunked && dechunk(body) < 0) {
		dk_fail(err, EPROTO, "malformed chunked answer from the Docker daemon");
		goto out;
	}
	rc = 0;
out:
	dk_buf_free(&raw);
	close(fd);
	return rc;
}

int dk_upgrade(const char *sock, const char *path, const char *json, int *fdp, int *status,
	       char **extra, size_t *n_extra, struct jr_provider_error *err)
{
	int fd = dk_connect(sock, err);
	if (fd < 0)
		return -1;
	struct dk_buf raw = { 0 };
	if (send_request(fd, "POST", path, json, "Connection: Upgrade\r\nUpgrade: tcp\r\n", err) < 0)
		goto fail;
	char *hend = NULL;
	while (!hend) {
		char chunk[4096];
		ssize_t r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			dk_fail(err, r ? errno : EPROTO, "the Docker daemon closed the exec stream early");
			goto fail;
		}
		if (dk_buf_add(&raw, chunk, (size_t)r) < 0) {
			dk_fail(err, ENOMEM, "out of memory");
			goto fail;
		}
		hend = strstr(raw.p, "\r\n\r\n");
		if (!hend && raw.len > 65536) {
			dk_fail(err, EPROTO, "the Docker daemon's answer headers are too long");
			goto fail;
		}
	}
	*status = parse_status(raw.p);
	size_t off = (size_t)(hend + 4 - raw.p);
	*n_extra = raw.len - off;
	*extra = malloc(*n_extra + 1);
	if (!*extra) {
		dk_fail(err, ENOMEM, "out of memory");
		goto fail;
	}
	memcpy(*extra, raw.p + off, *n_extra);
	dk_buf_free(&raw);
	*fdp = fd;
	return 0;
fail:
	dk_buf_free(&raw);
	close(fd);
	return -1;
}

const char *dk_error_message(const struct dk_buf *body, char *scratch, size_t size)
{
	scratch[0] = '\0';
	if (body->p) {
		cJSON *j = cJSON_Parse(body->p);
		const cJSON *m = cJSON_GetObjectItem(j, "message");
		snprintf(scratch, size, "%s", cJSON_IsString(m) ? m->valuestring : body->p);
		cJSON_Delete(j);
	}
	size_t n = strlen(scratch);
	while (n && (scratch[n - 1] == '\n' || scratch[n - 1] == '\r'))
		scratch[--n] = '\0';
	return scratch;
}

void dk_query_escape(const char *s, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (; *s && o + 4 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c)) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
}
