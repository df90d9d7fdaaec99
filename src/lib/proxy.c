/* net proxy: the egress proxy, outside the jail.
 *
 * The jail's init binds 127.0.0.1:JR_PROXY_PORT in the jail's own network
 * namespace and hands the listening socket to the supervisor, which forks
 * this process to serve it: connections are accepted here, in the host's
 * namespace, so nothing sits in between and the jail's processes cannot
 * reach the listener's owner.  Each request (HTTP CONNECT, or plain HTTP
 * with an absolute URI) is read and decided in a short-lived thread of its
 * own, since name resolution blocks; a connection let through is then
 * relayed by the main loop with splice(2), through a pipe per direction,
 * without a thread or a copy per byte.
 *
 * The rule (egress.c): a name must match allow host, and the proxy
 * resolves it itself and dials exactly the address it checked, so a
 * rebinding answer cannot move the connection; an address in a private,
 * loopback or link-local range, or one of this host's own, is refused
 * unless allow cidr covers it.  An address given directly must match
 * allow cidr.  A refusal gets 403 with the reason and is reported to the
 * supervisor, which counts it for the run report.
 *
 * The process is its own sandbox too: no_new_privs and a Landlock domain
 * that can only read the system trees name resolution needs and, where the
 * kernel has Landlock's network rules, connect only to the ports the
 * policy allows. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"

extern char **environ;

#define HEAD_MAX 16384           /* request line and headers */
#define HANDSHAKES_MAX 256       /* requests being decided at once */
#define IO_TIMEOUT_S 30          /* for the client to send its request */
#define CONNECT_TIMEOUT_MS 10000 /* for the destination to answer */
#define MAX_ADDRS 16
#define RELAYS_MAX 1024          /* connections relayed and being decided */
#define RELAY_IDLE_S 600         /* a relayed connection with no byte moved */
#define SWEEP_MS 30000

struct local_addr {
	int family;
	unsigned char addr[16];
};

struct proxy {
	const struct jr_egress *eg;
	int listen_fd;
	int report_fd; /* datagrams to the supervisor */
	bool log_allowed; /* a line for every connection let through (-v) */
	int handoff[2]; /* handshake threads -> main loop: struct handoff */
	int epfd;
	unsigned handshakes;
	unsigned relays;   /* connections being relayed */
	bool listening;
	bool starved;      /* accept failed for want of descriptors */
	struct conn *live; /* every relayed connection, for the idle sweep */
	struct conn *graveyard; /* closed during this batch of events, freed after it */
	struct local_addr *locals; /* this host's own addresses */
	size_t n_locals;
};

struct handoff {
	int client, upstream; /* upstream -1: the request was answered, client closed */
};

/* ---- reporting ------------------------------------------------------- */

static void report(struct proxy *px, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void report(struct proxy *px, const char *kind, const char *fmt, ...)
{
	char msg[512];
	int n = snprintf(msg, sizeof(msg), "%s\t", kind);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	send(px->report_fd, msg, strlen(msg), MSG_NOSIGNAL);
}

/* ---- the request ----------------------------------------------------- */

struct request {
	char head[HEAD_MAX + 1];
	size_t len;      /* bytes read, the head and what followed it */
	size_t head_len; /* up to and including the blank line */
	bool connect;    /* CONNECT, else plain HTTP forwarding */
	char method[32];
	char host[256];  /* as asked: a name or an address (IPv6 without brackets) */
	uint16_t port;
	const char *path; /* plain HTTP: origin-form target, within head */
	size_t path_len;
	char version[16];
	const char *headers; /* after the request line, within head */
};

/* Until the deadline: a client trickling a byte at a time must not hold a
 * handshake slot for ever. */
static bool set_recv_deadline(int fd, uint64_t deadline_us)
{
	uint64_t now = jr_now_us();
	if (now >= deadline_us)
		return false;
	uint64_t left = deadline_us - now;
	struct timeval tv = { (time_t)(left / 1000000), (suseconds_t)(left % 1000000) };
	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0;
}

/* -1: the client left (or sent nothing in time); 431: too large. */
static int read_head(int fd, struct request *rq, uint64_t deadline_us)
{
	while (rq->len < HEAD_MAX) {
		if (!set_recv_deadline(fd, deadline_us))
			return -1;
		ssize_t n = recv(fd, rq->head + rq->len, HEAD_MAX - rq->len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		rq->len += (size_t)n;
		rq->head[rq->len] = '\0';
		char *end = strstr(rq->head, "\r\n\r\n");
		if (end) {
			rq->head_len = (size_t)(end - rq->head) + 4;
			return 0;
		}
	}
	return 431;
}

/* host[:port] or [v6][:port]; the port is required when default_port is 0. */
static bool parse_authority(const char *a, size_t len, uint16_t default_port, struct request *rq)
{
	char buf[300];
	if (len == 0 || len >= sizeof(buf) || memchr(a, '@', len))
		return false;
	memcpy(buf, a, len);
	buf[len] = '\0';
	char *host = buf, *port = NULL;
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');
		if (!close || (close[1] && close[1] != ':'))
			return false;
		*close = '\0';
		host = buf + 1;
		port = close[1] ? close + 2 : NULL;
	} else {
		char *colon = strrchr(buf, ':');
		if (colon) {
			*colon = '\0';
			port = colon + 1;
		}
	}
	if (port) {
		if (!jr_parse_port(port, &rq->port))
			return false;
	} else if (default_port) {
		rq->port = default_port;
	} else {
		return false;
	}
	if (!*host || strlen(host) >= sizeof(rq->host))
		return false;
	strcpy(rq->host, host);
	return true;
}

static bool token_char(unsigned char c)
{
	return c > 0x20 && c < 0x7f && !strchr("\"(),/:;<=>?@[\\]{}", c);
}

/* Every line ends in CRLF, with no other CR, LF or NUL, and every header
 * line is NAME: VALUE with a token for a name (no folding, no space
 * before the colon).  What a lenient server would split differently
 * could otherwise carry a second Host header past forward_head. */
static bool head_well_formed(const struct request *rq)
{
	const char *end = rq->head + rq->head_len;
	for (const char *c = rq->head; c < end; c++) {
		if (*c == '\0' || (*c == '\r' && c[1] != '\n') || (*c == '\n' && (c == rq->head || c[-1] != '\r')))
			return false;
		if ((unsigned char)*c < 0x20 && *c != '\r' && *c != '\n' && *c != '\t')
			return false;
	}
	/* The request line: no tab or DEL either (RFC 9112). */
	for (const char *c = rq->head; *c != '\r'; c++)
		if (*c == '\t' || *c == 0x7f)
			return false;
	for (const char *line = strstr(rq->head, "\r\n") + 2; line < end - 2;) {
		const char *c = line;
		while (token_char((unsigned char)*c))
			c++;
		if (c == line || *c != ':')
			return false;
		line = strstr(line, "\r\n") + 2;
	}
	return true;
}

static int parse_request(struct request *rq)
{
	if (!head_well_formed(rq))
		return 400;
	char *line_end = strstr(rq->head, "\r\n");
	char *sp1 = memchr(rq->head, ' ', (size_t)(line_end - rq->head));
	if (!sp1 || (size_t)(sp1 - rq->head) >= sizeof(rq->method))
		return 400;
	char *target = sp1 + 1;
	char *sp2 = memchr(target, ' ', (size_t)(line_end - target));
	if (!sp2 || (size_t)(line_end - sp2 - 1) >= sizeof(rq->version))
		return 400;
	memcpy(rq->method, rq->head, (size_t)(sp1 - rq->head));
	for (const char *c = rq->method; *c; c++)
		if (!token_char((unsigned char)*c))
			return 400;
	memcpy(rq->version, sp2 + 1, (size_t)(line_end - sp2 - 1));
	if (strcmp(rq->version, "HTTP/1.1") && strcmp(rq->version, "HTTP/1.0"))
		return 400;
	rq->headers = line_end + 2;
	size_t target_len = (size_t)(sp2 - target);
	if (!strcmp(rq->method, "CONNECT")) {
		rq->connect = true;
		return parse_authority(target, target_len, 0, rq) ? 0 : 400;
	}
	/* Only an absolute http:// URI is a proxy request; https:// goes
	 * through CONNECT, and an origin-form target was not meant for us. */
	if (target_len < 8 || strncasecmp(target, "http://", 7))
		return 400;
	const char *auth = target + 7;
	size_t auth_len = strcspn(auth, "/?# ");
	if (auth + auth_len > sp2)
		auth_len = (size_t)(sp2 - auth);
	if (!parse_authority(auth, auth_len, 80, rq))
		return 400;
	rq->path = auth + auth_len;
	rq->path_len = (size_t)(sp2 - rq->path);
	return 0;
}

/* ---- the decision ---------------------------------------------------- */

struct decision {
	struct sockaddr_storage addrs[MAX_ADDRS];
	socklen_t lens[MAX_ADDRS];
	size_t n;
	int status;        /* 0: go ahead; else the HTTP status to answer */
	char host[256];    /* the destination as judged (lower case, or the address) */
	bool check_sni;    /* CONNECT by a rule without a port: TLS to this name only */
	char reason[400];  /* for the answer's body and the report */
	char rule[160];    /* the report's short form */
};

static bool is_local(const struct proxy *px, int family, const unsigned char *addr)
{
	unsigned char a[16] = { 0 };
	memcpy(a, addr, family == AF_INET ? 4 : 16);
	jr_egress_canonical_addr(&family, a);
	for (size_t i = 0; i < px->n_locals; i++)
		if (px->locals[i].family == family &&
		    !memcmp(px->locals[i].addr, a, family == AF_INET ? 4 : 16))
			return true;
	return false;
}

static void add_addr(struct decision *d, int family, const unsigned char *addr, uint16_t port)
{
	if (d->n == MAX_ADDRS)
		return;
	struct sockaddr_storage *ss = &d->addrs[d->n];
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, addr, 4);
		d->lens[d->n++] = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, addr, 16);
		d->lens[d->n++] = sizeof(*sin6);
	}
}

static void refuse(struct decision *d, const char *rule, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void refuse(struct decision *d, const char *rule, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
	snprintf(d->rule, sizeof(d->rule), "%s", rule);
	d->status = 403;
	d->n = 0;
}

/* An address the name resolved to: through if a cidr rule covers it,
 * or if it is neither internal nor this host's own. */
static bool address_ok(const struct proxy *px, int family, const unsigned char *addr,
		       uint16_t port)
{
	if (jr_egress_match_cidr(px->eg, family, addr, port) >= 0)
		return true;
	return !jr_egress_addr_internal(family, addr) && !is_local(px, family, addr);
}

static void decide_address(const struct proxy *px, const struct request *rq, struct decision *d)
{
	unsigned char a[16] = { 0 };
	int family;
	if (!jr_parse_ip(rq->host, &family, a)) {
		d->status = 400;
		snprintf(d->reason, sizeof(d->reason), "'%s' is not an address", rq->host);
		return;
	}
	if (jr_egress_match_cidr(px->eg, family, a, rq->port) < 0) {
		char text[64];
		jr_egress_format_addr(family, a, text, sizeof(text));
		refuse(d, "no allow cidr covers the address",
		       "%s port %u: no 'allow cidr' rule of the policy covers this address", text,
		       rq->port);
		return;
	}
	add_addr(d, family, a, rq->port);
}

/* The system's answer for name: first as a fully qualified name, so no
 * search domain of resolv.conf is tried before it; then as given, for
 * /etc/hosts, which glibc matches without the final dot. */
static int resolve(const char *name, struct addrinfo **res)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	char fqdn[260];
	snprintf(fqdn, sizeof(fqdn), "%s.", name);
	int gai = getaddrinfo(fqdn, NULL, &hints, res);
	if (gai == EAI_NONAME || gai == EAI_NODATA)
		gai = getaddrinfo(name, NULL, &hints, res);
	return gai;
}

static void decide_name(const struct proxy *px, const char *name, uint16_t port, bool tunnel,
			struct decision *d)
{
	int rule = jr_egress_match_host(px->eg, name, port, tunnel);
	if (rule < 0 && jr_egress_name_listed(px->eg, name)) {
		refuse(d, "no allow host rule allows the port",
		       "%s port %u: the 'allow host' rules that name this host do not allow this port "
		       "(a rule without a port allows 443, and 80 for plain HTTP requests only; "
		       "name the port for anything else)",
		       name, port);
		return;
	}
	if (rule < 0) {
		refuse(d, "no allow host matches the name",
		       "%s port %u: no 'allow host' rule of the policy matches this name", name, port);
		return;
	}
	d->check_sni = tunnel && !px->eg->hosts[rule].pattern.has_port;
	char first_refused[64] = "";
	const struct jr_egress_pin *pin = jr_egress_pinned(px->eg, name);
	if (pin) {
		if (address_ok(px, pin->family, pin->addr, port))
			add_addr(d, pin->family, pin->addr, port);
		else
			jr_egress_format_addr(pin->family, pin->addr, first_refused, sizeof(first_refused));
	} else {
		struct addrinfo *res = NULL;
		int gai = resolve(name, &res);
		if (gai) {
			snprintf(d->reason, sizeof(d->reason), "%s: cannot resolve: %s", name,
				 gai_strerror(gai));
			d->status = 502;
			return;
		}
		for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			const unsigned char *addr =
				ai->ai_family == AF_INET
					? (const unsigned char *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
					: (const unsigned char *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
			if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
				continue;
			if (address_ok(px, ai->ai_family, addr, port))
				add_addr(d, ai->ai_family, addr, port);
			else if (!first_refused[0])
				jr_egress_format_addr(ai->ai_family, addr, first_refused,
						      sizeof(first_refused));
		}
		freeaddrinfo(res);
	}
	if (!d->n)
		refuse(d, "internal address not covered by allow cidr",
		       "%s port %u resolves to %s, an internal address (loopback, private, "
		       "link-local or this host's own) that no 'allow cidr' rule of the policy covers",
		       name, port, first_refused[0] ? first_refused : "nothing usable");
}

static void decide(const struct proxy *px, const struct request *rq, struct decision *d)
{
	unsigned char a[16];
	int family;
	memset(d, 0, sizeof(*d));
	if (jr_parse_ip(rq->host, &family, a)) {
		snprintf(d->host, sizeof(d->host), "%s", rq->host);
		decide_address(px, rq, d);
		return;
	}
	if (!jr_egress_normalize_name(rq->host, d->host, sizeof(d->host))) {
		d->status = 400;
		snprintf(d->reason, sizeof(d->reason), "'%s' is not a host name", rq->host);
		return;
	}
	decide_name(px, d->host, rq->port, rq->connect, d);
}

/* ---- talking to the client and the destination ----------------------- */

static void answer(int fd, int status, const char *body)
{
	const char *text = status == 403 ? "Forbidden" : status == 431 ? "Request Header Fields Too Large"
			 : status == 502 ? "Bad Gateway" : status == 504 ? "Gateway Timeout" : "Bad Request";
	char msg[1024];
	int n = snprintf(msg, sizeof(msg),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\nX-Jailrun: refused\r\n\r\njailrun: %s\n",
			 status, text, strlen(body) + 10, body);
	if (n > 0)
		jr_send_all(fd, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

static int connect_one(const struct sockaddr_storage *ss, socklen_t len)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)ss, len) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int r = poll(&p, 1, CONNECT_TIMEOUT_MS);
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
		close(fd);
		errno = r == 0 ? ETIMEDOUT : soerr ? soerr : errno;
		return -1;
	}
	return fd;
}

/* Hop-by-hop headers of the client's hop, not passed on. */
static bool hop_header(const char *line, size_t len)
{
	static const char *const names[] = { "proxy-connection", "proxy-authorization", "connection",
					     "keep-alive", "host", NULL };
	for (const char *const *n = names; *n; n++) {
		size_t k = strlen(*n);
		if (len > k && line[k] == ':' && !strncasecmp(line, *n, k))
			return true;
	}
	return false;
}

struct out_buf {
	char *p;
	size_t len, cap;
};

static void append(struct out_buf *o, const char *data, size_t n)
{
	if (o->len + n <= o->cap) {
		memcpy(o->p + o->len, data, n);
		o->len += n;
	}
}

/* Plain HTTP: the request in origin form, with the Host header the
 * checked authority (whatever the client wrote there: a server behind the
 * allowed name must not be asked for another site) and one request per
 * connection, so a second request cannot ride on to another host. */
static int forward_head(int up, const struct request *rq)
{
	struct out_buf o = { .cap = 2 * HEAD_MAX };
	if (!(o.p = malloc(o.cap)))
		return -1;
	append(&o, rq->method, strlen(rq->method));
	append(&o, " ", 1);
	if (!rq->path_len || rq->path[0] != '/')
		append(&o, "/", 1);
	append(&o, rq->path, rq->path_len);
	char line[400];
	bool v6 = strchr(rq->host, ':') != NULL;
	int n = snprintf(line, sizeof(line), " %s\r\nHost: %s%s%s", rq->version, v6 ? "[" : "",
			 rq->host, v6 ? "]" : "");
	append(&o, line, (size_t)n);
	if (rq->port != 80) {
		n = snprintf(line, sizeof(line), ":%u", rq->port);
		append(&o, line, (size_t)n);
	}
	append(&o, "\r\n", 2);
	const char *end = rq->head + rq->head_len - 2; /* the blank line */
	for (const char *h = rq->headers; h < end;) {
		const char *eol = strstr(h, "\r\n");
		if (!hop_header(h, (size_t)(eol - h)))
			append(&o, h, (size_t)(eol - h) + 2);
		h = eol + 2;
	}
	static const char close_line[] = "Connection: close\r\n\r\n";
	append(&o, close_line, sizeof(close_line) - 1);
	int r = jr_send_all(up, o.p, o.len);
	free(o.p);
	return r;
}

/* ---- TLS: the server name of a tunnel to a web rule ------------------ */

#define TLS_RECORD_MAX (5 + 16384)

static size_t be16(const unsigned char *p)
{
	return (size_t)p[0] << 8 | p[1];
}

/* Moves *p past a field of len_bytes (1 or 2) length prefix; false when it
 * does not fit before end. */
static bool skip_vector(const unsigned char **p, const unsigned char *end, int len_bytes)
{
	if (end - *p < len_bytes)
		return false;
	size_t len = len_bytes == 1 ? **p : be16(*p);
	*p += len_bytes;
	if ((size_t)(end - *p) < len)
		return false;
	*p += len;
	return true;
}

/* The host_name of the server_name extension of a ClientHello that the
 * first record holds whole (RFC 8446 4.1.2, RFC 6066 3). */
static bool tls_server_name(const unsigned char *rec, size_t n, char *out, size_t size)
{
	if (n < 5 || rec[0] != 0x16 || be16(rec + 3) > n - 5)
		return false;
	const unsigned char *p = rec + 5, *end = p + be16(rec + 3);
	if (end - p < 4 || p[0] != 0x01)
		return false;
	size_t hello_len = (size_t)p[1] << 16 | be16(p + 2);
	p += 4;
	if (hello_len > (size_t)(end - p))
		return false;
	end = p + hello_len;
	if (end - p < 34)
		return false;
	p += 34; /* version, random */
	if (!skip_vector(&p, end, 1) || !skip_vector(&p, end, 2) || !skip_vector(&p, end, 1))
		return false; /* session id, cipher suites, compression methods */
	if (end - p < 2 || be16(p) > (size_t)(end - p - 2))
		return false;
	end = p + 2 + be16(p);
	p += 2;
	while (end - p >= 4) {
		size_t type = be16(p), len = be16(p + 2);
		p += 4;
		if ((size_t)(end - p) < len)
			return false;
		if (type == 0) {
			const unsigned char *e = p, *e_end = p + len;
			if (e_end - e < 2 || be16(e) > (size_t)(e_end - e - 2))
				return false;
			e += 2;
			if (e_end - e < 3 || e[0] != 0)
				return false;
			size_t name_len = be16(e + 1);
			e += 3;
			if (name_len == 0 || name_len >= size || name_len > (size_t)(e_end - e) ||
			    memchr(e, '\0', name_len))
				return false;
			memcpy(out, e, name_len);
			out[name_len] = '\0';
			return true;
		}
		p += len;
	}
	return false;
}

/* A tunnel that a rule without a port allows is for TLS to the checked
 * name: the first record must be a ClientHello naming it, or a CDN behind
 * the name could be asked for any other site it serves.  What arrived
 * with the request is the start; the record is read whole into buf.
 * Returns 0 when it does, 1 with *why when it does not, -1 when the
 * client left or went quiet first. */
static int check_client_hello(int client, const struct request *rq, const char *name,
			      unsigned char *buf, size_t *len, uint64_t deadline_us, const char **why)
{
	*len = rq->len - rq->head_len;
	memcpy(buf, rq->head + rq->head_len, *len);
	static const char *const not_tls = "the tunnel does not start with TLS (a rule without a port allows TLS on 443; name the port for other protocols)";
	for (;;) {
		if (*len >= 5) {
			size_t want = 5 + be16(buf + 3);
			if (buf[0] != 0x16 || want > TLS_RECORD_MAX) {
				*why = not_tls;
				return 1;
			}
			if (*len >= want)
				break;
		}
		if (!set_recv_deadline(client, deadline_us))
			return -1;
		ssize_t n = recv(client, buf + *len, TLS_RECORD_MAX - *len, 0);
		if (n <= 0)
			return -1;
		*len += (size_t)n;
	}
	char sni[256], checked[256];
	if (!tls_server_name(buf, *len, sni, sizeof(sni))) {
		*why = "the TLS ClientHello names no server (or does not fit its first record)";
		return 1;
	}
	if (!jr_egress_normalize_name(sni, checked, sizeof(checked)) || strcmp(checked, name)) {
		*why = "the TLS server name differs from the name asked for in CONNECT";
		return 1;
	}
	return 0;
}

/* Reads the request, decides, dials; returns the destination's socket
 * with the client's side ready for relaying, or -1 once answered. */
static int serve_request(struct proxy *px, int client)
{
	struct timeval tv = { IO_TIMEOUT_S, 0 };
	setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	uint64_t deadline = jr_now_us() + (uint64_t)IO_TIMEOUT_S * 1000000u;
	struct request *rq = calloc(1, sizeof(*rq));
	struct decision *d = calloc(1, sizeof(*d));
	unsigned char *hello = NULL;
	int up = -1, status = rq && d ? read_head(client, rq, deadline) : 500;
	if (status < 0)
		goto out;
	if (status == 0)
		status = parse_request(rq);
	if (status) {
		answer(client, status, status == 431 ? "request head too large"
				       : "not a proxy request (CONNECT host:port, or an absolute http:// URI)");
		goto out;
	}
	decide(px, rq, d);
	if (d->status) {
		/* Reported before answered: once the client has its 403, the
		 * supervisor has the refusal (the run may end right after). */
		if (d->status == 403) {
			report(px, "D", "%s\t%u\t%s", d->host, rq->port, d->rule);
			report(px, "L", "refused %s %s:%u: %s", rq->method, d->host, rq->port, d->reason);
		}
		answer(client, d->status, d->reason);
		goto out;
	}
	const char *pending = rq->head + rq->head_len;
	size_t n_pending = rq->len - rq->head_len;
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	int e = 0;
	for (size_t i = 0; i < d->n && up < 0; i++)
		if ((up = connect_one(&d->addrs[i], d->lens[i])) < 0)
			e = errno;
	if (up < 0) {
		char body[400];
		snprintf(body, sizeof(body), "%s port %u: cannot connect: %s", rq->host, rq->port,
			 strerror(e));
		answer(client, e == ETIMEDOUT ? 504 : 502, body);
		goto out;
	}
	if (d->check_sni) {
		/* TLS: the client speaks first, so its hello is in hand before
		 * anything of it reaches the destination. */
		const char *why = NULL;
		if (jr_send_all(client, established, sizeof(established) - 1) < 0 ||
		    !(hello = malloc(TLS_RECORD_MAX)) ||
		    check_client_hello(client, rq, d->host, hello, &n_pending, deadline, &why) != 0) {
			if (why) {
				report(px, "D", "%s\t%u\t%s", d->host, rq->port,
				       "TLS server name not the CONNECT name");
				report(px, "L", "refused CONNECT %s:%u: %s", d->host, rq->port, why);
			}
			close(up);
			up = -1;
			goto out;
		}
		pending = (const char *)hello;
	}
	/* The relay is non-blocking; until then the head goes out whole. */
	int flags = fcntl(up, F_GETFL);
	fcntl(up, F_SETFL, flags & ~O_NONBLOCK);
	setsockopt(up, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	int sent = d->check_sni ? 0
		 : rq->connect	? jr_send_all(client, established, sizeof(established) - 1)
				: forward_head(up, rq);
	if (sent < 0 || jr_send_all(up, pending, n_pending) < 0) {
		close(up);
		up = -1;
		goto out;
	}
	if (px->log_allowed)
		report(px, "L", "%s %s:%u", rq->method, d->host, rq->port);
out:
	free(hello);
	free(rq);
	free(d);
	return up;
}

static void *handshake_main(void *arg)
{
	struct proxy *px = ((void **)arg)[0];
	int client = (int)(intptr_t)((void **)arg)[1];
	free(arg);
	struct handoff h = { .client = client, .upstream = serve_request(px, client) };
	if (h.upstream < 0) {
		close(client);
		h.client = -1;
	}
	/* Always: the main loop counts the handshakes running. */
	ssize_t ignored = write(px->handoff[1], &h, sizeof(h));
	(void)ignored;
	return NULL;
}

/* ---- the relay ------------------------------------------------------- */

struct conn;
struct end {
	struct conn *conn;
	int side; /* 0 client, 1 destination */
	uint32_t events; /* registered with epoll; 0 = not registered */
};
struct direction { /* d[0]: client to destination, d[1]: back */
	int pipe[2];
	size_t queued;
	bool eof, shut;
};
struct conn {
	bool dead;
	struct conn *next_dead;
	struct conn *prev, *next; /* in proxy.live */
	uint64_t active_us;       /* when a byte last moved */
	int fd[2];
	struct end ends[2];
	struct direction d[2];
};

#define PIPE_CAP 65536

static void conn_close(struct proxy *px, struct conn *c)
{
	if (c->dead)
		return;
	for (int k = 0; k < 2; k++) {
		if (c->ends[k].events)
			epoll_ctl(px->epfd, EPOLL_CTL_DEL, c->fd[k], NULL);
		close(c->fd[k]);
		close(c->d[k].pipe[0]);
		close(c->d[k].pipe[1]);
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		px->live = c->next;
	if (c->next)
		c->next->prev = c->prev;
	px->relays--;
	px->starved = false; /* descriptors freed */
	/* An event for its other end may still be in this batch. */
	c->dead = true;
	c->next_dead = px->graveyard;
	px->graveyard = c;
}

/* Moves what can be moved in direction k without blocking; -1 on error. */
static int pump_direction(struct conn *c, int k)
{
	size_t before = c->d[k].queued;
	bool was_eof = c->d[k].eof;
	struct direction *d = &c->d[k];
	int src = c->fd[k], dst = c->fd[1 - k];
	for (;;) {
		bool moved = false;
		if (!d->eof && d->queued < PIPE_CAP) {
			ssize_t n = splice(src, NULL, d->pipe[1], NULL, PIPE_CAP - d->queued,
					   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n > 0) {
				d->queued += (size_t)n;
				moved = true;
			} else if (n == 0) {
				d->eof = moved = true;
			} else if (errno != EAGAIN && errno != EINTR) {
				return -1;
			}
		}
		if (d->queued) {
			ssize_t n = splice(d->pipe[0], NULL, dst, NULL, d->queued,
					   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n > 0) {
				d->queued -= (size_t)n;
				moved = true;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				return -1;
			}
		}
		if (!moved)
			break;
	}
	if (d->eof && !d->queued && !d->shut) {
		shutdown(dst, SHUT_WR);
		d->shut = true;
	}
	if (d->queued != before || d->eof != was_eof)
		c->active_us = jr_now_us();
	return 0;
}

static void conn_register(struct proxy *px, struct conn *c, int side)
{
	struct end *e = &c->ends[side];
	uint32_t want = 0;
	/* A direction waits on one thing: its source while its pipe is
	 * empty, else its destination (pump_direction stops with data queued
	 * only when the destination is full).  Not on the source while data
	 * is queued: a pipe's 16 slots fill before its 64 KiB when segments
	 * are small, and a readable source whose pipe is full would wake us
	 * without end. */
	if (!c->d[side].eof && !c->d[side].queued)
		want |= EPOLLIN;
	if (c->d[1 - side].queued)
		want |= EPOLLOUT;
	if (want == e->events)
		return;
	struct epoll_event ev = { .events = want, .data.ptr = e };
	/* Unregistered while idle: a hung-up socket would wake us forever. */
	if (!want)
		epoll_ctl(px->epfd, EPOLL_CTL_DEL, c->fd[side], NULL);
	else
		epoll_ctl(px->epfd, e->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd[side], &ev);
	e->events = want;
}

static void conn_pump(struct proxy *px, struct conn *c)
{
	if (pump_direction(c, 0) < 0 || pump_direction(c, 1) < 0 || (c->d[0].shut && c->d[1].shut)) {
		conn_close(px, c);
		return;
	}
	conn_register(px, c, 0);
	conn_register(px, c, 1);
}

static void relay_add(struct proxy *px, int client, int upstream)
{
	struct conn *c = calloc(1, sizeof(*c));
	if (!c)
		goto fail;
	c->fd[0] = client;
	c->fd[1] = upstream;
	for (int k = 0; k < 2; k++) {
		c->ends[k] = (struct end){ .conn = c, .side = k };
		c->d[k].pipe[0] = c->d[k].pipe[1] = -1;
	}
	for (int k = 0; k < 2; k++) {
		if (pipe2(c->d[k].pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
			for (int j = 0; j < k; j++) {
				close(c->d[j].pipe[0]);
				close(c->d[j].pipe[1]);
			}
			free(c);
			goto fail;
		}
		fcntl(c->fd[k], F_SETFL, fcntl(c->fd[k], F_GETFL) | O_NONBLOCK);
	}
	int one = 1;
	for (int k = 0; k < 2; k++) {
		setsockopt(c->fd[k], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		/* A peer that vanished is noticed even on a silent connection. */
		setsockopt(c->fd[k], SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	}
	c->active_us = jr_now_us();
	c->next = px->live;
	if (px->live)
		px->live->prev = c;
	px->live = c;
	px->relays++;
	conn_pump(px, c);
	return;
fail:
	close(client);
	close(upstream);
}

/* ---- the main loop --------------------------------------------------- */

/* Accepting only while a new connection can be served: under the
 * handshake and relay caps, and with descriptors to spare (EMFILE from
 * accept would otherwise wake the loop without end). */
static void listen_update(struct proxy *px)
{
	bool on = px->handshakes < HANDSHAKES_MAX && px->handshakes + px->relays < RELAYS_MAX &&
		  !px->starved;
	if (on == px->listening)
		return;
	struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.ptr = &px->listen_fd };
	epoll_ctl(px->epfd, EPOLL_CTL_MOD, px->listen_fd, &ev);
	px->listening = on;
}

static void accept_clients(struct proxy *px)
{
	while (px->handshakes < HANDSHAKES_MAX && px->handshakes + px->relays < RELAYS_MAX) {
		int fd = accept4(px->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				px->starved = true;
			break;
		}
		void **arg = malloc(2 * sizeof(void *));
		pthread_t t;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		if (arg) {
			arg[0] = px;
			arg[1] = (void *)(intptr_t)fd;
		}
		if (!arg || pthread_create(&t, &attr, handshake_main, arg) != 0) {
			free(arg);
			close(fd);
		} else {
			px->handshakes++;
		}
		pthread_attr_destroy(&attr);
	}
	listen_update(px);
}

static void collect_handoffs(struct proxy *px)
{
	struct handoff h;
	while (read(px->handoff[0], &h, sizeof(h)) == (ssize_t)sizeof(h)) {
		px->handshakes--;
		px->starved = false;
		if (h.client >= 0)
			relay_add(px, h.client, h.upstream);
	}
	listen_update(px);
}

/* Relayed connections no byte has crossed for RELAY_IDLE_S: in a session
 * a command's abandoned tunnels would otherwise pile up for its life. */
static void sweep_idle(struct proxy *px)
{
	uint64_t now = jr_now_us();
	for (struct conn *c = px->live, *next; c; c = next) {
		next = c->next;
		if (now - c->active_us > (uint64_t)RELAY_IDLE_S * 1000000u)
			conn_close(px, c);
	}
	listen_update(px);
}

static void load_local_addrs(struct proxy *px)
{
	struct ifaddrs *ifs = NULL;
	if (getifaddrs(&ifs) < 0)
		return;
	for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
			continue;
		struct local_addr *v = realloc(px->locals, (px->n_locals + 1) * sizeof(*v));
		if (!v)
			break;
		px->locals = v;
		struct local_addr *l = &px->locals[px->n_locals++];
		memset(l, 0, sizeof(*l));
		l->family = i->ifa_addr->sa_family;
		if (l->family == AF_INET)
			memcpy(l->addr, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
		else
			memcpy(l->addr, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
	}
	freeifaddrs(ifs);
}

/* The proxy's own seccomp filter, as policy lines: the kernel surface the
 * jail is kept from, no program run, and sockets of the families name
 * resolution and relaying use (no unix socket: a compromised proxy must
 * not reach the caller's docker.sock or D-Bus). */
static const char *const proxy_filter[] = {
	"seccomp deny @mount @module @reboot @swap @raw-io @clock @debug @keyring @bpf @io-uring",
	"seccomp deny @namespaces @obsolete @cpu-emulation @privileged @tty-inject execve execveat",
	/* Every family but AF_INET (2), AF_INET6 (10) and AF_NETLINK (16);
	 * libseccomp takes one comparison per argument in a rule. */
	"seccomp deny socket errno EACCES if arg0 < AF_INET",
	"seccomp deny socket errno EACCES if arg0 > AF_NETLINK",
	"seccomp deny socket errno EACCES if arg0 == 3", "seccomp deny socket errno EACCES if arg0 == 4",
	"seccomp deny socket errno EACCES if arg0 == 5", "seccomp deny socket errno EACCES if arg0 == 6",
	"seccomp deny socket errno EACCES if arg0 == 7", "seccomp deny socket errno EACCES if arg0 == 8",
	"seccomp deny socket errno EACCES if arg0 == 9", "seccomp deny socket errno EACCES if arg0 == 11",
	"seccomp deny socket errno EACCES if arg0 == 12", "seccomp deny socket errno EACCES if arg0 == 13",
	"seccomp deny socket errno EACCES if arg0 == 14", "seccomp deny socket errno EACCES if arg0 == 15",
	NULL,
};

static int load_filter(jr_error_t **err)
{
	jr_policy_t *p = NULL;
	struct jr_seccomp sc = { 0 };
	int r = jr_policy_new(&p, err);
	for (const char *const *l = proxy_filter; r == 0 && *l; l++)
		r = jr_policy_add_line(p, *l, err);
	if (r == 0)
		r = jr_seccomp_build(p, 0, &sc, err);
	if (r == 0)
		r = jr_seccomp_load(&sc, -1, JR_CONFINE_NO_BUILTIN_FILTER, err);
	jr_seccomp_free(&sc);
	jr_policy_free(p);
	return r;
}

/* Who the proxy runs as: a root caller's proxy becomes the jail's own
 * unprivileged host id (it needs no privilege to relay), not dumpable,
 * in a session of its own (the terminal's ^C is for the command), with
 * none of the caller's environment (secrets live there). */
static int drop_privileges(const struct jr_ids *ids, jr_error_t **err)
{
	if (setsid() < 0)
		return jr_fail(err, errno, "net proxy: setsid");
	/* The strings themselves, not only the pointers: they sit in this
	 * process's memory (our copy of it) either way. */
	for (char **e = environ; e && *e; e++)
		explicit_bzero(*e, strlen(*e));
	clearenv();
	if (ids->caller_is_root &&
	    (setgroups(0, NULL) < 0 || setresgid(ids->outside_gid, ids->outside_gid, ids->outside_gid) < 0 ||
	     setresuid(ids->outside_uid, ids->outside_uid, ids->outside_uid) < 0))
		return jr_fail(err, errno, "net proxy: switching to uid %u", (unsigned)ids->outside_uid);
	if (jr_caps_drop_all(err) < 0)
		return -1;
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return jr_fail(err, errno, "net proxy: PR_SET_DUMPABLE");
	return 0;
}

/* Everything but the two sockets it serves is closed; descriptors for
 * 200 relayed connections (six each) need more than the usual 1024. */
static int prepare_process(struct proxy *px, jr_error_t **err)
{
	int keep[] = { px->listen_fd, px->report_fd };
	if (jr_fds_close_except(keep, 2, err) < 0)
		return -1;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	if (jr_landlock_confine_proxy(px->eg, err) < 0)
		return -1;
	return load_filter(err);
}

static __attribute__((noreturn)) void proxy_main(struct proxy *px)
{
	jr_error_t *err = NULL;
	load_local_addrs(px);
	if (prepare_process(px, &err) < 0) {
		report(px, "L", "proxy: %s", err->message);
		_exit(1);
	}
	px->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (px->epfd < 0 || pipe2(px->handoff, O_CLOEXEC) < 0)
		_exit(1);
	fcntl(px->handoff[0], F_SETFL, O_NONBLOCK);
	fcntl(px->listen_fd, F_SETFL, fcntl(px->listen_fd, F_GETFL) | O_NONBLOCK);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &px->listen_fd };
	epoll_ctl(px->epfd, EPOLL_CTL_ADD, px->listen_fd, &ev);
	px->listening = true;
	ev.data.ptr = &px->handoff[0];
	epoll_ctl(px->epfd, EPOLL_CTL_ADD, px->handoff[0], &ev);
	/* The supervisor gone (its end closed) means the run is over. */
	ev = (struct epoll_event){ .events = EPOLLRDHUP, .data.ptr = &px->report_fd };
	epoll_ctl(px->epfd, EPOLL_CTL_ADD, px->report_fd, &ev);
	uint64_t swept = jr_now_us();
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(px->epfd, evs, 64, SWEEP_MS);
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &px->listen_fd)
				accept_clients(px);
			else if (p == &px->handoff[0])
				collect_handoffs(px);
			else if (p == &px->report_fd)
				_exit(0);
		}
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p != &px->listen_fd && p != &px->handoff[0] && p != &px->report_fd &&
			    !((struct end *)p)->conn->dead)
				conn_pump(px, ((struct end *)p)->conn);
		}
		if (jr_now_us() - swept >= (uint64_t)SWEEP_MS * 1000u) {
			sweep_idle(px);
			swept = jr_now_us();
		}
		while (px->graveyard) {
			struct conn *c = px->graveyard;
			px->graveyard = c->next_dead;
			free(c);
		}
		listen_update(px);
	}
}

int jr_proxy_start(const struct jr_plan *plan, const struct jr_ids *ids, int listen_fd,
		   bool log_allowed, pid_t *pid, int *report_fd, jr_error_t **err)
{
	int pair[2];
	*pid = 0;
	*report_fd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
		return jr_fail(err, errno, "net proxy: socketpair");
	pid_t parent = getpid();
	pid_t child = fork();
	if (child < 0) {
		int e = errno;
		close(pair[0]);
		close(pair[1]);
		return jr_fail(err, e, "net proxy: fork");
	}
	if (child == 0) {
		close(pair[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0); /* the supervisor died before the line above */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		jr_stdio_to_devnull();
		struct proxy px = { .eg = &plan->egress, .listen_fd = listen_fd, .report_fd = pair[1],
				    .log_allowed = log_allowed };
		jr_error_t *e = NULL;
		if (drop_privileges(ids, &e) < 0) {
			report(&px, "L", "%s", e->message);
			_exit(1);
		}
		proxy_main(&px);
	}
	close(pair[1]);
	*pid = child;
	*report_fd = pair[0];
	return 0;
}

int jr_proxy_read_report(int report_fd, struct jr_net_denials *d, char *line, size_t size)
{
	char msg[600];
	line[0] = '\0';
	ssize_t n = recv(report_fd, msg, sizeof(msg) - 1, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	if (n <= 0)
		return 0;
	msg[n] = '\0';
	if (!strncmp(msg, "L\t", 2)) {
		snprintf(line, size, "proxy: %s", msg + 2);
		return 1;
	}
	char *host = msg + 2, *port = strchr(host, '\t'), *rule = port ? strchr(port + 1, '\t') : NULL;
	uint16_t p;
	if (strncmp(msg, "D\t", 2) || !rule)
		return 1;
	*port++ = '\0';
	*rule++ = '\0';
	if (jr_parse_port(port, &p))
		jr_net_denials_add(d, host, p, rule, 1);
	return 1;
}

void jr_proxy_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
