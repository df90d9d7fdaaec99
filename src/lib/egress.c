/* The destinations a jail may reach: the policy's allow host, allow cidr
 * and resolve clauses as the egress proxy (proxy.c) and the kernel CIDR
 * filter (egress_bpf.c) check them.  Pure functions of the rules and an
 * address, so the decision is the same wherever it is taken and can be
 * tested without a network. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "internal.h"

bool jr_str_entry_in_effect(const struct jr_str_list *l, size_t i)
{
	if (l->v[i].remove)
		return false;
	for (size_t j = i + 1; j < l->n; j++)
		if (l->v[j].remove && !strcmp(l->v[j].value, l->v[i].value))
			return false;
	return true;
}

static char *rule_text(const char *kind, const struct jr_str_entry *e)
{
	char *s = NULL;
	if (asprintf(&s, "allow %s %s (%s:%u)", kind, e->value, e->loc.src ? e->loc.src->name : "?",
		     e->loc.line) < 0)
		return NULL;
	return s;
}

static void *grow(void *v, size_t n, size_t size)
{
	return realloc(v, (n + 1) * size);
}

static int add_host(struct jr_egress *eg, const struct jr_str_entry *e, jr_error_t **err)
{
	struct jr_egress_host h = { 0 };
	if (!jr_parse_host_pattern(e->value, &h.pattern))
		return jr_fail_at(err, &e->loc, "allow host: bad value '%s'", e->value);
	struct jr_egress_host *v = grow(eg->hosts, eg->n_hosts, sizeof(*v));
	if (!v)
		return jr_fail_oom(err);
	eg->hosts = v;
	if (!(h.rule = rule_text("host", e)))
		return jr_fail_oom(err);
	eg->hosts[eg->n_hosts++] = h;
	return 0;
}

static int add_cidr(struct jr_egress *eg, const struct jr_str_entry *e, jr_error_t **err)
{
	struct jr_egress_cidr c = { 0 };
	if (!jr_parse_cidr(e->value, &c.cidr))
		return jr_fail_at(err, &e->loc, "allow cidr: bad value '%s'", e->value);
	/* ::ffff:a.b.c.d/N (N >= 96) is the IPv4 range, as the addresses it
	 * is compared with are, and as the kernel filter takes it. */
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (c.cidr.family == AF_INET6 && c.cidr.prefix >= 96 && !memcmp(c.cidr.addr, mapped, 12)) {
		memmove(c.cidr.addr, c.cidr.addr + 12, 4);
		memset(c.cidr.addr + 4, 0, 12);
		c.cidr.family = AF_INET;
		c.cidr.prefix -= 96;
	}
	struct jr_egress_cidr *v = grow(eg->cidrs, eg->n_cidrs, sizeof(*v));
	if (!v)
		return jr_fail_oom(err);
	eg->cidrs = v;
	if (!(c.rule = rule_text("cidr", e)))
		return jr_fail_oom(err);
	eg->cidrs[eg->n_cidrs++] = c;
	return 0;
}

static int add_pin(struct jr_egress *eg, const struct jr_str_entry *e, jr_error_t **err)
{
	struct jr_egress_pin pin;
	if (!jr_parse_pin(e->value, &pin))
		return jr_fail_at(err, &e->loc, "resolve: bad value '%s'", e->value);
	struct jr_egress_pin *v = grow(eg->pins, eg->n_pins, sizeof(*v));
	if (!v)
		return jr_fail_oom(err);
	eg->pins = v;
	eg->pins[eg->n_pins++] = pin;
	return 0;
}

int jr_egress_build(const jr_policy_t *p, struct jr_egress *eg, jr_error_t **err)
{
	memset(eg, 0, sizeof(*eg));
	static int (*const adders[])(struct jr_egress *, const struct jr_str_entry *, jr_error_t **) = {
		add_host, add_cidr, add_pin
	};
	static const enum jr_list_id lists[] = { JR_LIST_ALLOW_HOST, JR_LIST_ALLOW_CIDR, JR_LIST_RESOLVE };
	for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++) {
		const struct jr_str_list *l = &p->lists[lists[k]];
		for (size_t i = 0; i < l->n; i++)
			if (jr_str_entry_in_effect(l, i) && adders[k](eg, &l->v[i], err) < 0) {
				jr_egress_free(eg);
				return -1;
			}
	}
	return 0;
}

void jr_egress_free(struct jr_egress *eg)
{
	for (size_t i = 0; i < eg->n_hosts; i++)
		free(eg->hosts[i].rule);
	for (size_t i = 0; i < eg->n_cidrs; i++)
		free(eg->cidrs[i].rule);
	free(eg->hosts);
	free(eg->cidrs);
	free(eg->pins);
	memset(eg, 0, sizeof(*eg));
}

/* name:ADDR, the name a host name (no wildcard, no port). */
bool jr_parse_pin(const char *text, struct jr_egress_pin *out)
{
	memset(out, 0, sizeof(*out));
	const char *colon = strchr(text, ':');
	if (!colon || (size_t)(colon - text) >= sizeof(out->name))
		return false;
	char name[sizeof(out->name)];
	memcpy(name, text, (size_t)(colon - text));
	name[colon - text] = '\0';
	struct jr_host_pattern hp;
	if (!jr_parse_host_pattern(name, &hp) || hp.wildcard || hp.has_port)
		return false;
	strcpy(out->name, hp.name);
	const char *addr = colon + 1;
	char buf[64];
	size_t len = strlen(addr);
	if (len >= 2 && addr[0] == '[' && addr[len - 1] == ']' && len - 2 < sizeof(buf)) {
		memcpy(buf, addr + 1, len - 2);
		buf[len - 2] = '\0';
		addr = buf;
	}
	return jr_parse_ip(addr, &out->family, out->addr);
}

/* Lower case, one trailing dot dropped: the form rules are written in.
 * False for what is no host name at all. */
bool jr_egress_normalize_name(const char *in, char *out, size_t size)
{
	size_t len = strlen(in);
	if (len && in[len - 1] == '.')
		len--;
	if (len == 0 || len >= size || len > 253)
		return false;
	memcpy(out, in, len);
	out[len] = '\0';
	struct jr_host_pattern hp;
	if (!jr_parse_host_pattern(out, &hp) || hp.wildcard || hp.has_port)
		return false;
	strcpy(out, hp.name);
	return true;
}

static bool host_matches(const struct jr_host_pattern *h, const char *name)
{
	if (!h->wildcard)
		return !strcmp(h->name, name);
	size_t n = strlen(name), s = strlen(h->name);
	return n > s + 1 && name[n - s - 1] == '.' && !strcmp(name + n - s, h->name);
}

int jr_egress_match_host(const struct jr_egress *eg, const char *name, uint16_t port, bool tunnel)
{
	for (size_t i = 0; i < eg->n_hosts; i++) {
		const struct jr_host_pattern *h = &eg->hosts[i].pattern;
		/* A rule without a port is for the web: plain HTTP on 80, which
		 * the proxy forwards request by request, and TLS on 443.  A raw
		 * tunnel to 80 would carry any Host header past the rewrite. */
		bool port_ok = h->has_port ? h->port == port : port == 443 || (port == 80 && !tunnel);
		if (port_ok && host_matches(h, name))
			return (int)i;
	}
	return -1;
}

bool jr_egress_name_listed(const struct jr_egress *eg, const char *name)
{
	for (size_t i = 0; i < eg->n_hosts; i++)
		if (host_matches(&eg->hosts[i].pattern, name))
			return true;
	return false;
}

/* An IPv4 address in IPv4-mapped IPv6 form (::ffff:a.b.c.d) is the IPv4
 * address: a rule or a range check must not be dodged by the spelling. */
void jr_egress_canonical_addr(int *family, unsigned char addr[16])
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (*family == AF_INET6 && !memcmp(addr, mapped, sizeof(mapped))) {
		memmove(addr, addr + 12, 4);
		memset(addr + 4, 0, 12);
		*family = AF_INET;
	}
}

static bool prefix_matches(const unsigned char *a, const unsigned char *net, unsigned prefix)
{
	unsigned whole = prefix / 8, rest = prefix % 8;
	if (memcmp(a, net, whole))
		return false;
	if (!rest)
		return true;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));
	return (a[whole] & mask) == (net[whole] & mask);
}

int jr_egress_match_cidr(const struct jr_egress *eg, int family, const unsigned char *addr,
			 uint16_t port)
{
	unsigned char a[16] = { 0 };
	memcpy(a, addr, family == AF_INET ? 4 : 16);
	jr_egress_canonical_addr(&family, a);
	for (size_t i = 0; i < eg->n_cidrs; i++) {
		const struct jr_cidr *c = &eg->cidrs[i].cidr;
		if (c->family == family && (!c->has_port || c->port == port) &&
		    prefix_matches(a, c->addr, c->prefix))
			return (int)i;
	}
	return -1;
}

struct range {
	unsigned char net[16];
	unsigned prefix;
};

/* Addresses that lead to this host, its networks or nowhere public:
 * unspecified, private (RFC 1918, RFC 6598 shared, ULA), loopback,
 * link-local (the cloud metadata address among them), benchmarking,
 * IETF protocol assignments, multicast, reserved and broadcast. */
static const struct range v4_internal[] = {
	{ { 0 }, 8 },		{ { 10 }, 8 },	       { { 100, 64 }, 10 }, { { 127 }, 8 },
	{ { 169, 254 }, 16 },	{ { 172, 16 }, 12 },   { { 192, 0, 0 }, 24 }, { { 192, 168 }, 16 },
	{ { 198, 18 }, 15 },	{ { 224 }, 4 },	       { { 240 }, 4 },
};
static const struct range v6_internal[] = {
	{ { 0 }, 96 },				  /* ::, ::1 and IPv4-compatible ::a.b.c.d */
	{ { 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff }, 96 }, /* SIIT ::ffff:0:a.b.c.d */
	{ { 0, 0x64, 0xff, 0x9b, 0, 1 }, 48 },	  /* local-use NAT64 (RFC 8215) */
	{ { 0xfe, 0x80 }, 10 },			  /* link-local */
	{ { 0xfe, 0xc0 }, 10 },			  /* site-local (deprecated) */
	{ { 0xfc }, 7 },			  /* unique local */
	{ { 0xff }, 8 },			  /* multicast */
	{ { 0x01, 0x00 }, 64 },			  /* discard-only */
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32 },	  /* documentation */
};

static bool in_ranges(const unsigned char *a, const struct range *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (prefix_matches(a, r[i].net, r[i].prefix))
			return true;
	return false;
}

bool jr_egress_addr_internal(int family, const unsigned char *addr)
{
	unsigned char a[16] = { 0 };
	memcpy(a, addr, family == AF_INET ? 4 : 16);
	jr_egress_canonical_addr(&family, a);
	if (family == AF_INET)
		return in_ranges(a, v4_internal, sizeof(v4_internal) / sizeof(v4_internal[0]));
	/* NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address
	 * that the translator would reach: judge that one. */
	static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b };
	if (!memcmp(a, nat64, sizeof(nat64)))
		return in_ranges(a + 12, v4_internal, sizeof(v4_internal) / sizeof(v4_internal[0]));
	if (a[0] == 0x20 && a[1] == 0x02)
		return in_ranges(a + 2, v4_internal, sizeof(v4_internal) / sizeof(v4_internal[0]));
	return in_ranges(a, v6_internal, sizeof(v6_internal) / sizeof(v6_internal[0]));
}

const struct jr_egress_pin *jr_egress_pinned(const struct jr_egress *eg, const char *name)
{
	for (size_t i = 0; i < eg->n_pins; i++)
		if (!strcmp(eg->pins[i].name, name))
			return &eg->pins[i];
	return NULL;
}

void jr_egress_format_addr(int family, const unsigned char *addr, char *out, size_t size)
{
	unsigned char a[16] = { 0 };
	memcpy(a, addr, family == AF_INET ? 4 : 16);
	jr_egress_canonical_addr(&family, a);
	if (!inet_ntop(family, a, out, (socklen_t)size))
		snprintf(out, size, "?");
}
