/* Unit tests for the egress decision (egress.c): which names, addresses
 * and ports allow host, allow cidr and resolve let through, and which
 * addresses count as internal.  The proxy and the kernel filter take
 * their answers from these functions. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "jailrun.h"
#include "internal.h"

static jr_policy_t *policy_of(const char *const *lines)
{
	jr_policy_t *p = NULL;
	jr_error_t *err = NULL;
	assert_int_equal(jr_policy_new(&p, &err), 0);
	for (; *lines; lines++) {
		int r = jr_policy_add_line(p, *lines, &err);
		if (r < 0)
			fail_msg("%s: %s", *lines, err->message);
	}
	return p;
}

static void egress_of(const char *const *lines, struct jr_egress *eg)
{
	jr_policy_t *p = policy_of(lines);
	jr_error_t *err = NULL;
	assert_int_equal(jr_egress_build(p, eg, &err), 0);
	jr_policy_free(p);
}

static int v4(const struct jr_egress *eg, const char *addr, uint16_t port)
{
	unsigned char a[16] = { 0 };
	assert_int_equal(inet_pton(AF_INET, addr, a), 1);
	return jr_egress_match_cidr(eg, AF_INET, a, port);
}

static int v6(const struct jr_egress *eg, const char *addr, uint16_t port)
{
	unsigned char a[16];
	assert_int_equal(inet_pton(AF_INET6, addr, a), 1);
	return jr_egress_match_cidr(eg, AF_INET6, a, port);
}

static bool internal(const char *addr)
{
	unsigned char a[16] = { 0 };
	if (inet_pton(AF_INET, addr, a) == 1)
		return jr_egress_addr_internal(AF_INET, a);
	assert_int_equal(inet_pton(AF_INET6, addr, a), 1);
	return jr_egress_addr_internal(AF_INET6, a);
}

static void test_hosts(void **state)
{
	(void)state;
	static const char *const lines[] = { "allow host github.com *.npmjs.org:8443",
					     "allow host Example.ORG:8080 gone.example",
					     "allow host !gone.example", NULL };
	struct jr_egress eg;
	egress_of(lines, &eg);
	assert_int_equal(eg.n_hosts, 3);
	/* No port: 80 and 443 only. */
	assert_int_equal(jr_egress_match_host(&eg, "github.com", 443, false), 0);
	assert_int_equal(jr_egress_match_host(&eg, "github.com", 80, false), 0);
	assert_int_equal(jr_egress_match_host(&eg, "github.com", 22, false), -1);
	/* A tunnel (CONNECT) to 80 needs a rule that names the port. */
	assert_int_equal(jr_egress_match_host(&eg, "github.com", 80, true), -1);
	assert_int_equal(jr_egress_match_host(&eg, "github.com", 443, true), 0);
	assert_true(jr_egress_name_listed(&eg, "github.com"));
	assert_false(jr_egress_name_listed(&eg, "gitlab.com"));
	/* Not a suffix of another name, nor a name below it. */
	assert_int_equal(jr_egress_match_host(&eg, "evilgithub.com", 443, false), -1);
	assert_int_equal(jr_egress_match_host(&eg, "api.github.com", 443, false), -1);
	/* *.suffix: names below it, on its port, not the suffix itself. */
	assert_int_equal(jr_egress_match_host(&eg, "registry.npmjs.org", 8443, false), 1);
	assert_int_equal(jr_egress_match_host(&eg, "a.b.npmjs.org", 8443, false), 1);
	assert_int_equal(jr_egress_match_host(&eg, "npmjs.org", 8443, false), -1);
	assert_int_equal(jr_egress_match_host(&eg, "registry.npmjs.org", 443, false), -1);
	assert_int_equal(jr_egress_match_host(&eg, "xnpmjs.org", 8443, false), -1);
	/* Rules are kept in lower case. */
	assert_int_equal(jr_egress_match_host(&eg, "example.org", 8080, false), 2);
	/* Removed with !NAME. */
	assert_int_equal(jr_egress_match_host(&eg, "gone.example", 443, false), -1);
	assert_non_null(strstr(eg.hosts[0].rule, "allow host github.com"));
	jr_egress_free(&eg);
}

static void test_names_normalized(void **state)
{
	(void)state;
	char out[256];
	assert_true(jr_egress_normalize_name("GitHub.COM.", out, sizeof(out)));
	assert_string_equal(out, "github.com");
	assert_false(jr_egress_normalize_name("", out, sizeof(out)));
	assert_false(jr_egress_normalize_name("a..b", out, sizeof(out)));
	assert_false(jr_egress_normalize_name("*.github.com", out, sizeof(out)));
	assert_false(jr_egress_normalize_name("a b", out, sizeof(out)));
	assert_false(jr_egress_normalize_name("evil.com\r\nX: y", out, sizeof(out)));
	assert_false(jr_egress_normalize_name("-lead.example", out, sizeof(out)));
}

static void test_cidrs(void **state)
{
	(void)state;
	static const char *const lines[] = { "allow cidr 10.1.0.0/16 192.0.2.7/32:443",
					     "allow cidr [2001:db8::/32]:8080 127.0.0.1 ::ffff:172.16.0.0/108",
					     NULL };
	struct jr_egress eg;
	egress_of(lines, &eg);
	assert_int_equal(eg.n_cidrs, 5);
	assert_int_equal(v4(&eg, "10.1.255.3", 1), 0); /* no port: every port */
	assert_int_equal(v4(&eg, "10.2.0.1", 80), -1);
	assert_int_equal(v4(&eg, "192.0.2.7", 443), 1);
	assert_int_equal(v4(&eg, "192.0.2.7", 80), -1);
	assert_int_equal(v4(&eg, "192.0.2.8", 443), -1);
	assert_int_equal(v6(&eg, "2001:db8:1::5", 8080), 2);
	assert_int_equal(v6(&eg, "2001:db8:1::5", 8081), -1);
	assert_int_equal(v6(&eg, "2001:db9::5", 8080), -1);
	/* An IPv4 address spelled as IPv4-mapped IPv6 is the IPv4 address. */
	assert_int_equal(v6(&eg, "::ffff:10.1.0.9", 22), 0);
	assert_int_equal(v6(&eg, "::ffff:127.0.0.1", 5), 3);
	assert_int_equal(v6(&eg, "::ffff:10.2.0.9", 22), -1);
	/* A rule in IPv4-mapped form is the IPv4 range. */
	assert_int_equal(v4(&eg, "172.16.3.4", 1), 4);
	assert_int_equal(v6(&eg, "::ffff:172.16.3.4", 1), 4);
	assert_int_equal(v4(&eg, "172.32.0.1", 1), -1);
	jr_egress_free(&eg);
}

static void test_internal_addresses(void **state)
{
	(void)state;
	static const char *const inside[] = {
		"127.0.0.1", "127.255.0.9", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "198.18.0.1",
		"::1", "::", "fe80::1", "fd00::1", "fc00::1", "ff02::1", "::ffff:127.0.0.1",
		"::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:0a00:0001::1", "::a9fe:a9fe", "::ffff:0:a9fe:a9fe",
		"64:ff9b:1::a9fe:a9fe", NULL
	};
	static const char *const outside[] = { "8.8.8.8", "172.32.0.1", "192.169.0.1", "100.128.0.1",
					       "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8",
					       "64:ff9b::808:808", NULL };
	for (const char *const *a = inside; *a; a++)
		if (!internal(*a))
			fail_msg("%s should be internal", *a);
	for (const char *const *a = outside; *a; a++)
		if (internal(*a))
			fail_msg("%s should not be internal", *a);
}

static void test_pins(void **state)
{
	(void)state;
	static const char *const lines[] = { "resolve test.local:127.0.0.1 v6.local:[::1]",
					     "resolve Other.Local:2001:db8::7", NULL };
	struct jr_egress eg;
	egress_of(lines, &eg);
	assert_int_equal(eg.n_pins, 3);
	const struct jr_egress_pin *pin = jr_egress_pinned(&eg, "test.local");
	assert_non_null(pin);
	assert_int_equal(pin->family, AF_INET);
	assert_int_equal(pin->addr[0], 127);
	assert_non_null(pin = jr_egress_pinned(&eg, "v6.local"));
	assert_int_equal(pin->family, AF_INET6);
	assert_non_null(pin = jr_egress_pinned(&eg, "other.local"));
	assert_int_equal(pin->addr[15], 7);
	assert_null(jr_egress_pinned(&eg, "none.local"));
	jr_egress_free(&eg);

	struct jr_egress_pin bad;
	assert_false(jr_parse_pin("nocolon", &bad));
	assert_false(jr_parse_pin("*.wild.test:1.2.3.4", &bad));
	assert_false(jr_parse_pin("name.test:not-an-address", &bad));
	assert_false(jr_parse_pin(":1.2.3.4", &bad));
}

static void test_bad_lines_refused(void **state)
{
	(void)state;
	static const char *const bad[] = { "resolve", "resolve x.test", "resolve x.test:999.1.1.1",
					   "allow host *.", "allow cidr 10.0.0.1/8",
					   "allow cidr 10.0.0.0/33", NULL };
	for (const char *const *l = bad; *l; l++) {
		jr_policy_t *p = NULL;
		jr_error_t *err = NULL;
		assert_int_equal(jr_policy_new(&p, &err), 0);
		if (jr_policy_add_line(p, *l, &err) == 0)
			fail_msg("'%s' was accepted", *l);
		assert_non_null(err);
		jr_error_free(err);
		jr_policy_free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hosts),
		cmocka_unit_test(test_names_normalized),
		cmocka_unit_test(test_cidrs),
		cmocka_unit_test(test_internal_addresses),
		cmocka_unit_test(test_pins),
		cmocka_unit_test(test_bad_lines_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
