/* Parsers for the values policy clauses take.  Each returns false on a
 * malformed value and never allocates. */
#ifndef JR_VALUES_H
#define JR_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int jr_errno_from_name(const char *name); /* -1 when unknown */
const char *jr_errno_name(int value);

bool jr_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* "512M", "2G", "4096": bytes, binary suffixes K M G T (KiB, KB accepted). */
bool jr_parse_size(const char *s, uint64_t *out);
bool jr_parse_port(const char *s, uint16_t *out);
/* Octal permission bits, at most 4 digits. */
bool jr_parse_mode(const char *s, mode_t *out);
/* "30", "1.5", "90s", "2m", "1h", "250ms": milliseconds, > 0. */
bool jr_parse_duration_ms(const char *s, uint64_t *out);
/* "1.5" cores as thousandths of a CPU. */
bool jr_parse_cpus(const char *s, uint64_t *millicpus);

struct jr_cidr {
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	unsigned prefix;
	bool has_port;
	uint16_t port;
};
/* An IPv4 or IPv6 address: AF_INET (4 bytes of addr) or AF_INET6. */
bool jr_parse_ip(const char *s, int *family, unsigned char addr[16]);
/* "10.0.0.0/8", "10.0.0.0/8:443", "fd00::/8", "[fd00::/8]:443". */
bool jr_parse_cidr(const char *s, struct jr_cidr *out);

struct jr_host_pattern {
	bool wildcard; /* "*.example.com": any name below example.com */
	char name[254];
	bool has_port;
	uint16_t port;
};
bool jr_parse_host_pattern(const char *s, struct jr_host_pattern *out);

bool jr_hostname_valid(const char *name);
bool jr_env_name_valid(const char *s);
/* Letters, digits, '_', and the glob characters '*' and '?'. */
bool jr_env_glob_valid(const char *s);
/* Case-insensitive glob match of an environment variable's name. */
bool jr_env_glob_match(const char *glob, const char *name, size_t name_len);

#endif
