/* netbench: the HTTP server and client of `make bench`'s egress-proxy cases
 * (issue 9; bench/proxy.py drives them).  Built static (cc -O2 -static)
 * into the workspace, so the jail and the host run the very same client.
 *
 *   netbench serve
 *
 * Listens on 127.0.0.1, on a port the kernel picks, and prints that port
 * on a line of its own.  Serves one connection at a time: reads a request
 * head, answers `GET /N` (or `GET http://HOST/N`) with 200 and a body of N
 * bytes, Connection: close, and closes.  A body of up to 64 KiB goes out
 * with the head in one send; a larger one with sendfile(2) from a 1 MiB
 * memfd, so the pages are handed to the socket and not copied: the server
 * is not what limits the transfer.
 *
 *   netbench get direct|connect|http PORT HOST TPORT BYTES COUNT
 *
 * Makes COUNT requests for BYTES bytes one after the other, each on a new
 * connection to 127.0.0.1:PORT, read to the last byte of its body and
 * closed:
 *   direct   GET /BYTES to PORT itself (the server, or socat before it);
 *   connect  CONNECT HOST:TPORT to the proxy at PORT, then GET /BYTES
 *            through the tunnel (what https clients do);
 *   http     GET http://HOST:TPORT/BYTES to the proxy (plain HTTP through
 *            HTTP_PROXY).
 * The body is read with recv(2) into a 1 MiB buffer (a copy, as any real
 * client makes).  The timer (CLOCK_MONOTONIC) runs from just before the
 * first connect(2) to just after the last close(2), so a jail's start-up
 * is not in it.  Prints one JSON object:
 *
 *   {"ms":412.345,"bytes":1073741824,"connections":1}
 *
 * bytes counts body bytes only.  Exits 1 with a message on stderr if a
 * request fails or an answer is not a 200 with the body length asked for.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)       /* memfd size; client read buffer */
#define SMALL_MAX (64 << 10)  /* bodies sent with the head */
#define HEAD_MAX 4096

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
	va_list ap;
	fputs("netbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static unsigned long long number(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		die("'%s': not a number", s);
	return v;
}

static int send_all(int fd, const char *p, size_t len, int flags)
{
	while (len) {
		ssize_t n = send(fd, p, len, flags | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads into buf until it holds "\r\n\r\n"; returns the head's length
 * (through the blank line) and sets *got to all bytes read, or -1. */
static ssize_t read_head(int fd, char *buf, size_t cap, size_t *got)
{
	size_t len = 0;
	for (;;) {
		char *end = memmem(buf, len, "\r\n\r\n", 4);
		if (end) {
			*got = len;
			return end - buf + 4;
		}
		if (len == cap)
			return -1;
		ssize_t n = recv(fd, buf + len, cap - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		len += (size_t)n;
	}
}

/* ---- serve ----------------------------------------------------------- */

static void serve_one(int c, int memfd, char *small)
{
	char head[HEAD_MAX];
	size_t got;
	ssize_t hl = read_head(c, head, sizeof(head), &got);
	if (hl < 0 || got < 5 || memcmp(head, "GET ", 4))
		return;
	/* The target's last path segment is the size: /N or http://host/N. */
	char *sp = memchr(head + 4, ' ', (size_t)hl - 4);
	if (!sp)
		return;
	char *slash = sp;
	while (slash > head + 4 && slash[-1] != '/')
		slash--;
	char *end;
	unsigned long long n = strtoull(slash, &end, 10);
	if (end != sp)
		return;
	int k = snprintf(small, 256,
			 "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
			 "Content-Length: %llu\r\nConnection: close\r\n\r\n",
			 n);
	if (n <= SMALL_MAX) {
		memset(small + k, 'x', (size_t)n);
		send_all(c, small, (size_t)k + (size_t)n, 0);
		return;
	}
	if (send_all(c, small, (size_t)k, MSG_MORE) < 0)
		return;
	off_t off = 0;
	while (n) {
		if (off == CHUNK)
			off = 0;
		size_t want = (size_t)(CHUNK - off) < n ? (size_t)(CHUNK - off) : (size_t)n;
		ssize_t r = sendfile(c, memfd, &off, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		n -= (unsigned long long)r;
	}
}

static int serve(void)
{
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sin);
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(ls, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(ls, 1024) < 0 ||
	    getsockname(ls, (struct sockaddr *)&sin, &sl) < 0)
		die("listen on 127.0.0.1: %s", strerror(errno));

	int memfd = memfd_create("netbench", MFD_CLOEXEC);
	char *fill = malloc(CHUNK), *small = malloc(256 + SMALL_MAX);
	if (memfd < 0 || !fill || !small)
		die("memfd: %s", strerror(errno));
	memset(fill, 'x', CHUNK);
	for (size_t done = 0; done < CHUNK;) {
		ssize_t n = write(memfd, fill + done, CHUNK - done);
		if (n <= 0)
			die("memfd: %s", strerror(errno));
		done += (size_t)n;
	}
	free(fill);

	signal(SIGPIPE, SIG_IGN);
	printf("%u\n", ntohs(sin.sin_port));
	fflush(stdout);
	for (;;) {
		int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept: %s", strerror(errno));
		}
		serve_one(c, memfd, small);
		close(c);
	}
}

/* ---- get ------------------------------------------------------------- */

enum mode { DIRECT, CONNECT, HTTP };

static int dial(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			die("socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0)
			return fd;
		int e = errno;
		close(fd);
		if (e != EINTR)
			die("connect to 127.0.0.1:%u: %s", port, strerror(e));
	}
}

/* One request; returns the body bytes read. */
static unsigned long long get_one(enum mode mode, uint16_t port, const char *host, const char *tport,
				  unsigned long long bytes, char *buf)
{
	int fd = dial(port);
	char req[600];
	size_t got;
	int n;
	if (mode == CONNECT) {
		n = snprintf(req, sizeof(req), "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", host, tport,
			     host, tport);
		ssize_t hl;
		if (send_all(fd, req, (size_t)n, 0) < 0 || (hl = read_head(fd, buf, HEAD_MAX, &got)) < 0)
			die("CONNECT %s:%s: no answer from the proxy", host, tport);
		if (strncmp(buf, "HTTP/1.1 200", 12) && strncmp(buf, "HTTP/1.0 200", 12))
			die("CONNECT %s:%s: %.*s", host, tport, (int)strcspn(buf, "\r\n"), buf);
		if ((size_t)hl != got)
			die("CONNECT %s:%s: data after the proxy's answer", host, tport);
	}
	if (mode == HTTP)
		n = snprintf(req, sizeof(req), "GET http://%s:%s/%llu HTTP/1.1\r\nHost: %s:%s\r\n\r\n", host,
			     tport, bytes, host, tport);
	else
		n = snprintf(req, sizeof(req), "GET /%llu HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n",
			     bytes, host, tport);
	ssize_t hl;
	if (send_all(fd, req, (size_t)n, 0) < 0 || (hl = read_head(fd, buf, HEAD_MAX, &got)) < 0)
		die("GET /%llu: no answer", bytes);
	if (strncmp(buf, "HTTP/1.1 200", 12) && strncmp(buf, "HTTP/1.0 200", 12))
		die("GET /%llu: %.*s", bytes, (int)strcspn(buf, "\r\n"), buf);
	char *cl = memmem(buf, (size_t)hl, "\r\nContent-Length: ", 18);
	if (!cl || strtoull(cl + 18, NULL, 10) != bytes)
		die("GET /%llu: no Content-Length of %llu", bytes, bytes);
	unsigned long long body = got - (size_t)hl;
	while (body < bytes) {
		size_t want = bytes - body < CHUNK ? (size_t)(bytes - body) : CHUNK;
		ssize_t r = recv(fd, buf, want, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("GET /%llu: %s after %llu bytes", bytes, r ? strerror(errno) : "end of stream",
			    body);
		body += (unsigned long long)r;
	}
	close(fd);
	return body;
}

static int get(int argc, char **argv)
{
	if (argc != 8)
		return -1;
	enum mode mode;
	if (!strcmp(argv[2], "direct"))
		mode = DIRECT;
	else if (!strcmp(argv[2], "connect"))
		mode = CONNECT;
	else if (!strcmp(argv[2], "http"))
		mode = HTTP;
	else
		return -1;
	unsigned long long port = number(argv[3]), bytes = number(argv[6]), count = number(argv[7]);
	const char *host = argv[4], *tport = argv[5];
	if (!port || port > 65535 || strlen(host) > 255 || strlen(tport) > 5)
		return -1;
	number(tport);
	char *buf = malloc(CHUNK);
	if (!buf)
		die("out of memory");
	unsigned long long total = 0;
	double t0 = now_ms();
	for (unsigned long long i = 0; i < count; i++)
		total += get_one(mode, (uint16_t)port, host, tport, bytes, buf);
	double ms = now_ms() - t0;
	printf("{\"ms\":%.3f,\"bytes\":%llu,\"connections\":%llu}\n", ms, total, count);
	free(buf);
	return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	if (argc >= 2 && !strcmp(argv[1], "get")) {
		int r = get(argc, argv);
		if (r >= 0)
			return r;
	}
	fprintf(stderr, "usage: netbench serve\n"
			"       netbench get direct|connect|http PORT HOST TPORT BYTES COUNT\n");
	return 2;
}
