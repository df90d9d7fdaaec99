/* Values in policy clauses: sizes, ports, modes, durations, addresses,
 * host patterns, errno names, environment-name globs.  Pure functions, no
 * system state, so the parser and its fuzzer can call them freely. */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

static const struct {
	const char *name;
	int value;
} errno_names[] = {
#ifdef E2BIG
	{ "E2BIG", E2BIG },
#endif
#ifdef EACCES
	{ "EACCES", EACCES },
#endif
#ifdef EADDRINUSE
	{ "EADDRINUSE", EADDRINUSE },
#endif
#ifdef EADDRNOTAVAIL
	{ "EADDRNOTAVAIL", EADDRNOTAVAIL },
#endif
#ifdef EADV
	{ "EADV", EADV },
#endif
#ifdef EAFNOSUPPORT
	{ "EAFNOSUPPORT", EAFNOSUPPORT },
#endif
#ifdef EAGAIN
	{ "EAGAIN", EAGAIN },
#endif
#ifdef EALREADY
	{ "EALREADY", EALREADY },
#endif
#ifdef EBADE
	{ "EBADE", EBADE },
#endif
#ifdef EBADF
	{ "EBADF", EBADF },
#endif
#ifdef EBADFD
	{ "EBADFD", EBADFD },
#endif
#ifdef EBADMSG
	{ "EBADMSG", EBADMSG },
#endif
#ifdef EBADR
	{ "EBADR", EBADR },
#endif
#ifdef EBADRQC
	{ "EBADRQC", EBADRQC },
#endif
#ifdef EBADSLT
	{ "EBADSLT", EBADSLT },
#endif
#ifdef EBFONT
	{ "EBFONT", EBFONT },
#endif
#ifdef EBUSY
	{ "EBUSY", EBUSY },
#endif
#ifdef ECANCELED
	{ "ECANCELED", ECANCELED },
#endif
#ifdef ECHILD
	{ "ECHILD", ECHILD },
#endif
#ifdef ECHRNG
	{ "ECHRNG", ECHRNG },
#endif
#ifdef ECOMM
	{ "ECOMM", ECOMM },
#endif
#ifdef ECONNABORTED
	{ "ECONNABORTED", ECONNABORTED },
#endif
#ifdef ECONNREFUSED
	{ "ECONNREFUSED", ECONNREFUSED },
#endif
#ifdef ECONNRESET
	{ "ECONNRESET", ECONNRESET },
#endif
#ifdef EDEADLOCK
	{ "EDEADLOCK", EDEADLOCK },
#endif
#ifdef EDESTADDRREQ
	{ "EDESTADDRREQ", EDESTADDRREQ },
#endif
#ifdef EDOM
	{ "EDOM", EDOM },
#endif
#ifdef EDOTDOT
	{ "EDOTDOT", EDOTDOT },
#endif
#ifdef EDQUOT
	{ "EDQUOT", EDQUOT },
#endif
#ifdef EEXIST
	{ "EEXIST", EEXIST },
#endif
#ifdef EFAULT
	{ "EFAULT", EFAULT },
#endif
#ifdef EFBIG
	{ "EFBIG", EFBIG },
#endif
#ifdef EHOSTDOWN
	{ "EHOSTDOWN", EHOSTDOWN },
#endif
#ifdef EHOSTUNREACH
	{ "EHOSTUNREACH", EHOSTUNREACH },
#endif
#ifdef EIDRM
	{ "EIDRM", EIDRM },
#endif
#ifdef EILSEQ
	{ "EILSEQ", EILSEQ },
#endif
#ifdef EINPROGRESS
	{ "EINPROGRESS", EINPROGRESS },
#endif
#ifdef EINTR
	{ "EINTR", EINTR },
#endif
#ifdef EINVAL
	{ "EINVAL", EINVAL },
#endif
#ifdef EIO
	{ "EIO", EIO },
#endif
#ifdef EISCONN
	{ "EISCONN", EISCONN },
#endif
#ifdef EISDIR
	{ "EISDIR", EISDIR },
#endif
#ifdef EISNAM
	{ "EISNAM", EISNAM },
#endif
#ifdef EKEYEXPIRED
	{ "EKEYEXPIRED", EKEYEXPIRED },
#endif
#ifdef EKEYREJECTED
	{ "EKEYREJECTED", EKEYREJECTED },
#endif
#ifdef EKEYREVOKED
	{ "EKEYREVOKED", EKEYREVOKED },
#endif
#ifdef EL2HLT
	{ "EL2HLT", EL2HLT },
#endif
#ifdef EL2NSYNC
	{ "EL2NSYNC", EL2NSYNC },
#endif
#ifdef EL3HLT
	{ "EL3HLT", EL3HLT },
#endif
#ifdef EL3RST
	{ "EL3RST", EL3RST },
#endif
#ifdef ELIBACC
	{ "ELIBACC", ELIBACC },
#endif
#ifdef ELIBBAD
	{ "ELIBBAD", ELIBBAD },
#endif
#ifdef ELIBEXEC
	{ "ELIBEXEC", ELIBEXEC },
#endif
#ifdef ELIBMAX
	{ "ELIBMAX", ELIBMAX },
#endif
#ifdef ELIBSCN
	{ "ELIBSCN", ELIBSCN },
#endif
#ifdef ELNRNG
	{ "ELNRNG", ELNRNG },
#endif
#ifdef ELOOP
	{ "ELOOP", ELOOP },
#endif
#ifdef EMEDIUMTYPE
	{ "EMEDIUMTYPE", EMEDIUMTYPE },
#endif
#ifdef EMFILE
	{ "EMFILE", EMFILE },
#endif
#ifdef EMLINK
	{ "EMLINK", EMLINK },
#endif
#ifdef EMSGSIZE
	{ "EMSGSIZE", EMSGSIZE },
#endif
#ifdef EMULTIHOP
	{ "EMULTIHOP", EMULTIHOP },
#endif
#ifdef ENAMETOOLONG
	{ "ENAMETOOLONG", ENAMETOOLONG },
#endif
#ifdef ENAVAIL
	{ "ENAVAIL", ENAVAIL },
#endif
#ifdef ENETDOWN
	{ "ENETDOWN", ENETDOWN },
#endif
#ifdef ENETRESET
	{ "ENETRESET", ENETRESET },
#endif
#ifdef ENETUNREACH
	{ "ENETUNREACH", ENETUNREACH },
#endif
#ifdef ENFILE
	{ "ENFILE", ENFILE },
#endif
#ifdef ENOANO
	{ "ENOANO", ENOANO },
#endif
#ifdef ENOBUFS
	{ "ENOBUFS", ENOBUFS },
#endif
#ifdef ENOCSI
	{ "ENOCSI", ENOCSI },
#endif
#ifdef ENODATA
	{ "ENODATA", ENODATA },
#endif
#ifdef ENODEV
	{ "ENODEV", ENODEV },
#endif
#ifdef ENOENT
	{ "ENOENT", ENOENT },
#endif
#ifdef ENOEXEC
	{ "ENOEXEC", ENOEXEC },
#endif
#ifdef ENOKEY
	{ "ENOKEY", ENOKEY },
#endif
#ifdef ENOLCK
	{ "ENOLCK", ENOLCK },
#endif
#ifdef ENOLINK
	{ "ENOLINK", ENOLINK },
#endif
#ifdef ENOMEDIUM
	{ "ENOMEDIUM", ENOMEDIUM },
#endif
#ifdef ENOMEM
	{ "ENOMEM", ENOMEM },
#endif
#ifdef ENOMSG
	{ "ENOMSG", ENOMSG },
#endif
#ifdef ENONET
	{ "ENONET", ENONET },
#endif
#ifdef ENOPKG
	{ "ENOPKG", ENOPKG },
#endif
#ifdef ENOPROTOOPT
	{ "ENOPROTOOPT", ENOPROTOOPT },
#endif
#ifdef ENOSPC
	{ "ENOSPC", ENOSPC },
#endif
#ifdef ENOSR
	{ "ENOSR", ENOSR },
#endif
#ifdef ENOSTR
	{ "ENOSTR", ENOSTR },
#endif
#ifdef ENOSYS
	{ "ENOSYS", ENOSYS },
#endif
#ifdef ENOTBLK
	{ "ENOTBLK", ENOTBLK },
#endif
#ifdef ENOTCONN
	{ "ENOTCONN", ENOTCONN },
#endif
#ifdef ENOTDIR
	{ "ENOTDIR", ENOTDIR },
#endif
#ifdef ENOTEMPTY
	{ "ENOTEMPTY", ENOTEMPTY },
#endif
#ifdef ENOTNAM
	{ "ENOTNAM", ENOTNAM },
#endif
#ifdef ENOTRECOVERABLE
	{ "ENOTRECOVERABLE", ENOTRECOVERABLE },
#endif
#ifdef ENOTSOCK
	{ "ENOTSOCK", ENOTSOCK },
#endif
#ifdef ENOTSUP
	{ "ENOTSUP", ENOTSUP },
#endif
#ifdef ENOTTY
	{ "ENOTTY", ENOTTY },
#endif
#ifdef ENOTUNIQ
	{ "ENOTUNIQ", ENOTUNIQ },
#endif
#ifdef ENXIO
	{ "ENXIO", ENXIO },
#endif
#ifdef EOVERFLOW
	{ "EOVERFLOW", EOVERFLOW },
#endif
#ifdef EOWNERDEAD
	{ "EOWNERDEAD", EOWNERDEAD },
#endif
#ifdef EPERM
	{ "EPERM", EPERM },
#endif
#ifdef EPFNOSUPPORT
	{ "EPFNOSUPPORT", EPFNOSUPPORT },
#endif
#ifdef EPIPE
	{ "EPIPE", EPIPE },
#endif
#ifdef EPROTO
	{ "EPROTO", EPROTO },
#endif
#ifdef EPROTONOSUPPORT
	{ "EPROTONOSUPPORT", EPROTONOSUPPORT },
#endif
#ifdef EPROTOTYPE
	{ "EPROTOTYPE", EPROTOTYPE },
#endif
#ifdef ERANGE
	{ "ERANGE", ERANGE },
#endif
#ifdef EREMCHG
	{ "EREMCHG", EREMCHG },
#endif
#ifdef EREMOTE
	{ "EREMOTE", EREMOTE },
#endif
#ifdef EREMOTEIO
	{ "EREMOTEIO", EREMOTEIO },
#endif
#ifdef ERESTART
	{ "ERESTART", ERESTART },
#endif
#ifdef ERFKILL
	{ "ERFKILL", ERFKILL },
#endif
#ifdef EROFS
	{ "EROFS", EROFS },
#endif
#ifdef ESHUTDOWN
	{ "ESHUTDOWN", ESHUTDOWN },
#endif
#ifdef ESOCKTNOSUPPORT
	{ "ESOCKTNOSUPPORT", ESOCKTNOSUPPORT },
#endif
#ifdef ESPIPE
	{ "ESPIPE", ESPIPE },
#endif
#ifdef ESRCH
	{ "ESRCH", ESRCH },
#endif
#ifdef ESRMNT
	{ "ESRMNT", ESRMNT },
#endif
#ifdef ESTALE
	{ "ESTALE", ESTALE },
#endif
#ifdef ESTRPIPE
	{ "ESTRPIPE", ESTRPIPE },
#endif
#ifdef ETIME
	{ "ETIME", ETIME },
#endif
#ifdef ETIMEDOUT
	{ "ETIMEDOUT", ETIMEDOUT },
#endif
#ifdef ETOOMANYREFS
	{ "ETOOMANYREFS", ETOOMANYREFS },
#endif
#ifdef ETXTBSY
	{ "ETXTBSY", ETXTBSY },
#endif
#ifdef EUCLEAN
	{ "EUCLEAN", EUCLEAN },
#endif
#ifdef EUNATCH
	{ "EUNATCH", EUNATCH },
#endif
#ifdef EUSERS
	{ "EUSERS", EUSERS },
#endif
#ifdef EXDEV
	{ "EXDEV", EXDEV },
#endif
#ifdef EXFULL
	{ "EXFULL", EXFULL },
#endif
};

int jr_errno_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (strcmp(errno_names[i].name, name) == 0)
			return errno_names[i].value;
	return -1;
}

const char *jr_errno_name(int value)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].value == value)
			return errno_names[i].name;
	return NULL;
}

/* Unsigned decimal with no sign, no spaces, no overflow. */
static bool parse_u64(const char *s, const char **end, uint64_t *out)
{
	if (!isdigit((unsigned char)*s))
		return false;
	uint64_t v = 0;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*end = s;
	*out = v;
	return true;
}

bool jr_parse_size(const char *s, uint64_t *out)
{
	const char *end;
	uint64_t v;
	if (!parse_u64(s, &end, &v))
		return false;
	unsigned shift = 0;
	switch (toupper((unsigned char)*end)) {
	case '\0': break;
	case 'B':
		end++;
		break;
	case 'K': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	default: return false;
	}
	if (shift) {
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
	}
	if (*end || v == 0 || (shift && v > (UINT64_MAX >> shift)))
		return false;
	*out = v << shift;
	return true;
}

bool jr_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;
	if (!parse_u64(s, &end, &v) || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool jr_parse_port(const char *s, uint16_t *out)
{
	uint64_t v;
	if (!jr_parse_u64(s, 1, 65535, &v))
		return false;
	*out = (uint16_t)v;
	return true;
}

bool jr_parse_mode(const char *s, mode_t *out)
{
	if (!*s || strlen(s) > 4)
		return false;
	unsigned v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '7')
			return false;
		v = v * 8 + (unsigned)(*s - '0');
	}
	*out = (mode_t)v;
	return true;
}

/* "12.345": thousandths (digits past the third are dropped). */
static bool parse_milli(const char *s, const char **end, uint64_t *whole, uint64_t *milli)
{
	uint64_t frac = 0, scale = 1;
	if (!parse_u64(s, end, whole))
		return false;
	if (**end == '.') {
		const char *f = *end + 1;
		if (!isdigit((unsigned char)*f))
			return false;
		for (; isdigit((unsigned char)*f); f++)
			if (scale < 1000) {
				frac = frac * 10 + (uint64_t)(*f - '0');
				scale *= 10;
			}
		*end = f;
	}
	*milli = frac * (1000 / scale);
	return true;
}

bool jr_parse_duration_ms(const char *s, uint64_t *out)
{
	const char *end;
	uint64_t whole, milli;
	if (!parse_milli(s, &end, &whole, &milli))
		return false;
	uint64_t unit_ms = 1000;
	if (strcmp(end, "ms") == 0)
		unit_ms = 1;
	else if (strcmp(end, "s") == 0 || *end == '\0')
		unit_ms = 1000;
	else if (strcmp(end, "m") == 0)
		unit_ms = 60000;
	else if (strcmp(end, "h") == 0)
		unit_ms = 3600000;
	else
		return false;
	if (whole > UINT64_MAX / unit_ms / 2)
		return false;
	uint64_t ms = whole * unit_ms + milli * unit_ms / 1000;
	if (ms == 0)
		return false;
	*out = ms;
	return true;
}

bool jr_parse_cpus(const char *s, uint64_t *millicpus)
{
	const char *end;
	uint64_t whole, milli;
	if (!parse_milli(s, &end, &whole, &milli) || *end || whole > 4096 ||
	    (whole == 4096 && milli))
		return false;
	*millicpus = whole * 1000 + milli;
	return *millicpus > 0;
}

/* Splits "ADDR:PORT" at the last colon when what follows is all digits. */
static bool split_port(char *s, uint16_t *port, bool *has_port)
{
	*has_port = false;
	char *colon = strrchr(s, ':');
	if (!colon || colon == s)
		return true;
	for (const char *d = colon + 1; *d; d++)
		if (!isdigit((unsigned char)*d))
			return true;
	if (!jr_parse_port(colon + 1, port))
		return false;
	*colon = '\0';
	*has_port = true;
	return true;
}

bool jr_parse_ip(const char *text, int *family, unsigned char addr[16])
{
	if (inet_pton(AF_INET, text, addr) == 1)
		*family = AF_INET;
	else if (inet_pton(AF_INET6, text, addr) == 1)
		*family = AF_INET6;
	else
		return false;
	return true;
}

bool jr_parse_cidr(const char *text, struct jr_cidr *out)
{
	char buf[128];
	if (strlen(text) >= sizeof(buf))
		return false;
	strcpy(buf, text);
	memset(out, 0, sizeof(*out));
	char *addr = buf;
	bool has_port = false;
	if (buf[0] == '[') { /* [v6/len]:port */
		char *close = strchr(buf, ']');
		if (!close)
			return false;
		*close = '\0';
		addr = buf + 1;
		if (close[1] == ':') {
			if (!jr_parse_port(close + 2, &out->port))
				return false;
			has_port = true;
		} else if (close[1]) {
			return false;
		}
	} else if (strchr(buf, '.')) {
		/* IPv4: a trailing :PORT is unambiguous.  IPv6 needs brackets. */
		if (!split_port(buf, &out->port, &has_port))
			return false;
	}
	char *slash = strchr(addr, '/');
	uint64_t prefix = 0;
	if (slash)
		*slash = '\0';
	if (!jr_parse_ip(addr, &out->family, out->addr))
		return false;
	unsigned max = out->family == AF_INET ? 32 : 128;
	if (slash) {
		if (!jr_parse_u64(slash + 1, 0, max, &prefix))
			return false;
	} else {
		prefix = max;
	}
	out->prefix = (unsigned)prefix;
	out->has_port = has_port;
	/* Host bits must be zero: 10.0.0.1/8 is almost always a typo. */
	unsigned bytes = max / 8;
	for (unsigned bit = out->prefix; bit < bytes * 8; bit++)
		if (out->addr[bit / 8] & (0x80 >> (bit % 8)))
			return false;
	return true;
}

static bool label_ok(const char *s, size_t n)
{
	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return false;
	return true;
}

bool jr_parse_host_pattern(const char *text, struct jr_host_pattern *out)
{
	char buf[300];
	if (strlen(text) >= sizeof(buf))
		return false;
	strcpy(buf, text);
	memset(out, 0, sizeof(*out));
	if (!split_port(buf, &out->port, &out->has_port))
		return false;
	char *name = buf;
	if (strncmp(name, "*.", 2) == 0) {
		out->wildcard = true;
		name += 2;
	}
	size_t len = strlen(name);
	if (len == 0 || len > 253)
		return false;
	for (const char *p = name; *p;) {
		const char *dot = strchrnul(p, '.');
		if (!label_ok(p, (size_t)(dot - p)))
			return false;
		p = *dot ? dot + 1 : dot;
		if (*dot && !*p)
			return false; /* trailing dot */
	}
	for (char *c = name; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	strcpy(out->name, name);
	return true;
}

bool jr_env_name_valid(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

bool jr_env_glob_valid(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_*?", *s))
			return false;
	return true;
}

bool jr_env_glob_match(const char *glob, const char *name, size_t name_len)
{
	char small[256];
	char *buf = name_len < sizeof(small) ? small : malloc(name_len + 1);
	if (!buf)
		return true; /* out of memory: treat as matching, so a secret is scrubbed */
	memcpy(buf, name, name_len);
	buf[name_len] = '\0';
	bool match = fnmatch(glob, buf, FNM_CASEFOLD) == 0;
	if (buf != small)
		free(buf);
	return match;
}

bool jr_hostname_valid(const char *name)
{
	/* RFC 1123: dot-separated labels of letters, digits and inner
	 * hyphens, 64 bytes at most (what sethostname accepts). */
	size_t len = strlen(name), label = 0;
	if (len == 0 || len > 64)
		return false;
	for (size_t i = 0; i <= len; i++) {
		char c = name[i];
		if (c == '.' || c == '\0') {
			if (label == 0 || name[i - 1] == '-')
				return false;
			label = 0;
		} else if (isalnum((unsigned char)c) || (c == '-' && label > 0)) {
			label++;
		} else {
			return false;
		}
	}
	return true;
}
