/* The command provider: each operation of jailrun-provider(7) is one run
 * of a program the user names (program=PATH), which reaches whatever
 * backend it likes (a cloud sandbox's API, an ssh host, a company's own
 * service).  jailrun writes the request as JSON to a private file, runs the
 * program, and reads the answer as JSON from its standard output or from a
 * result file.  The protocol is specified in jailrun-provider(7), COMMAND
 * PROVIDER: keep the two in step.
 *
 * The program is the user's own and trusted like any program they run, but
 * its output is not trusted to be well formed: every field is checked, and
 * nothing it prints reaches an error or log line before the values of the
 * configuration's secret-looking keys are redacted from it. */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jailrun-provider.h"

extern char **environ;

#define PROTOCOL_VERSION 1
#define DEFAULT_TIMEOUT_S 600
#define DEFAULT_GRACE_S 10
/* A result (stdout or the result file) larger than this is refused rather
 * than held in memory: read_file's base64 content is the largest answer. */
#define MAX_RESULT_BYTES ((size_t)256 << 20)
/* The program's stderr is diagnostics: kept for the error message and the
 * log, the rest drained and dropped so the program never blocks on it. */
#define MAX_DIAG_BYTES ((size_t)64 << 10)
/* How much of stdout and of stderr an error message quotes. */
#define EXCERPT_BYTES 200
/* After the program exits, how long a descendant that still holds one of
 * its pipes is waited for before jailrun stops reading. */
#define LINGER_MS 2000
/* The child's pipe ends are moved at or above this descriptor before
 * posix_spawn dup2()s them onto 0..4, so no dup2 clobbers a later source. */
#define FIRST_HIGH_FD 10
/* Descriptors the exec program gets the command's output streams on. */
#define CMD_STDOUT_FD 3
#define CMD_STDERR_FD 4

/* The configuration: what open() and gc() share. */
struct cmd_config {
	char *program;
	uint64_t timeout_ms; /* one run, every operation but exec; 0: none */
	uint64_t grace_ms;   /* exec: how long past the command's own limit */
	cJSON *public_config; /* entries without secret-looking keys */
	char **env;           /* JAILRUN_CONFIG_KEY=VALUE, every entry */
	size_t n_env;
	char **secrets;       /* values to redact, longest first */
	size_t *secret_lens;
	size_t n_secrets;
	jr_provider_log_fn log;
	void *log_userdata;
};

struct jr_provider_instance {
	struct cmd_config cfg;
	char *id;        /* open's answer, handed back in every request */
	char *workspace; /* host path */
	bool preserve;
	cJSON *network;  /* the policy's, repeated in each exec request */
	cJSON *limits;
};

/* ---- redaction ------------------------------------------------------------ */

static const char *const secret_words[] = { "token", "secret", "key", "password", "credential",
					    "authorization" };

static bool key_is_secret(const char *key, size_t len)
{
	for (size_t w = 0; w < sizeof(secret_words) / sizeof(secret_words[0]); w++) {
		size_t wl = strlen(secret_words[w]);
		for (size_t i = 0; i + wl <= len; i++)
			if (strncasecmp(key + i, secret_words[w], wl) == 0)
				return true;
	}
	return false;
}

/* Copies in[0..len) to out (at most outsize - 1 bytes and a NUL) with every
 * secret value replaced by "***", and says in *cut whether input was left
 * over.  Matching looks at the whole input, not just what fits, so a secret
 * straddling the point where the output stops is never shown in part.  No
 * allocation: an error path must be able to redact when memory is short.
 *
 * (The command provider's own copy of the rule jailrun-provider(7) states;
 * the core may reuse it.) */
static size_t redact_into(const struct cmd_config *cfg, const char *in, size_t len, char *out,
			  size_t outsize, bool *cut)
{
	size_t i = 0, o = 0;
	if (outsize == 0)
		return 0;
	while (i < len && o + 1 < outsize) {
		size_t m = 0;
		for (size_t s = 0; cfg && s < cfg->n_secrets; s++) {
			size_t sl = cfg->secret_lens[s];
			if (sl <= len - i && memcmp(in + i, cfg->secrets[s], sl) == 0) {
				m = sl; /* longest first: a secret containing another wins */
				break;
			}
		}
		if (m) {
			for (int k = 0; k < 3 && o + 1 < outsize; k++)
				out[o++] = '*';
			i += m;
		} else {
			out[o++] = in[i++];
		}
	}
	out[o] = '\0';
	if (cut)
		*cut = i < len;
	return o;
}

/* One-line rendering of program output for a message: quoted, control
 * bytes escaped, "..." when cut. */
static void quote_excerpt(const struct cmd_config *cfg, const char *in, size_t len, char *out,
			  size_t outsize)
{
	char red[EXCERPT_BYTES + 1];
	bool cut;
	size_t n = redact_into(cfg, in, len, red, sizeof(red), &cut);
	size_t o = 0;
	if (outsize < 16) {
		if (outsize)
			out[0] = '\0';
		return;
	}
	out[o++] = '"';
	for (size_t i = 0; i < n && o + 8 < outsize; i++) {
		unsigned char c = (unsigned char)red[i];
		if (c == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else if (c == '\t') {
			out[o++] = '\\';
			out[o++] = 't';
		} else if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(out + o, outsize - o, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o++] = '"';
	if (cut && o + 4 < outsize) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* Fills *err with a redacted one-line message; returns -1. */
__attribute__((format(printf, 4, 5))) static int fail(const struct cmd_config *cfg,
						      struct jr_provider_error *err, int code,
						      const char *fmt, ...)
{
	char raw[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	if (!err)
		return -1;
	err->code = code;
	char red[sizeof(err->message)];
	redact_into(cfg, raw, strlen(raw), red, sizeof(red), NULL);
	/* One line, as the ABI asks: the program's own words may hold newlines. */
	for (char *p = red; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	memcpy(err->message, red, sizeof(err->message));
	return -1;
}

__attribute__((format(printf, 2, 3))) static void log_line(const struct cmd_config *cfg,
							   const char *fmt, ...)
{
	char raw[2048], red[2048];
	va_list ap;
	if (!cfg->log)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	redact_into(cfg, raw, strlen(raw), red, sizeof(red), NULL);
	cfg->log(cfg->log_userdata, red);
}

/* The last path component, for messages that name the program. */
static const char *program_name(const struct cmd_config *cfg)
{
	const char *slash = strrchr(cfg->program, '/');
	return slash ? slash + 1 : cfg->program;
}

/* ---- small helpers -------------------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* *interrupted (when given) learns that a signal handler ran meanwhile:
 * jailrun's handlers for SIGINT, SIGTERM and SIGHUP mean "stop". */
static int write_all(int fd, const void *data, size_t len, bool *interrupted)
{
	const char *p = data;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR) {
				if (interrupted)
					*interrupted = true;
				continue;
			}
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

struct buf {
	char *data;
	size_t len, cap;
	bool overflow; /* more arrived than the limit allowed */
};

static int buf_append(struct buf *b, const char *p, size_t n, size_t limit)
{
	if (b->len + n > limit) {
		b->overflow = true;
		n = limit - b->len;
	}
	if (!n)
		return 0;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *d = realloc(b->data, cap);
		if (!d)
			return -1;
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

/* Strict UTF-8 (no overlong forms, surrogates or values past U+10FFFF): the
 * request is JSON, which a program's parser may refuse otherwise. */
static bool utf8_valid(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s;
		size_t n;
		unsigned min;
		uint32_t v;
		if (c < 0x80) {
			s++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			n = 1, min = 0x80, v = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2, min = 0x800, v = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3, min = 0x10000, v = c & 0x07;
		} else {
			return false;
		}
		for (size_t i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			v = (v << 6) | (s[i] & 0x3f);
		}
		if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
			return false;
		s += n + 1;
	}
	return true;
}

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const unsigned char *p, size_t n)
{
	if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
		return NULL;
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
	if (!out)
		return NULL;
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*o++ = b64_alphabet[v >> 18 & 63];
		*o++ = b64_alphabet[v >> 12 & 63];
		*o++ = b64_alphabet[v >> 6 & 63];
		*o++ = b64_alphabet[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)p[i] << 16;
		*o++ = b64_alphabet[v >> 18 & 63];
		*o++ = b64_alphabet[v >> 12 & 63];
		*o++ = '=';
		*o++ = '=';
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		*o++ = b64_alphabet[v >> 18 & 63];
		*o++ = b64_alphabet[v >> 12 & 63];
		*o++ = b64_alphabet[v >> 6 & 63];
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/* Standard alphabet; whitespace (a program may wrap lines) is skipped and
 * padding is optional.  Returns -1 on anything else. */
static int b64_decode(const char *s, unsigned char **out, size_t *outlen)
{
	size_t len = strlen(s), n = 0;
	unsigned char *o = malloc(len / 4 * 3 + 3);
	uint32_t acc = 0;
	int bits = 0;
	bool pad = false;
	if (!o)
		return -1;
	for (const char *p = s; *p; p++) {
		int v;
		char c = *p;
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad = true;
			continue;
		}
		if (pad)
			goto bad; /* data after padding */
		const char *at = strchr(b64_alphabet, c);
		if (!at || !c)
			goto bad;
		v = (int)(at - b64_alphabet);
		acc = (acc << 6 | (uint32_t)v) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[n++] = (unsigned char)(acc >> bits);
		}
	}
	if (bits >= 6)
		goto bad; /* a lone sixth of a byte: truncated input */
	*out = o;
	*outlen = n;
	return 0;
bad:
	free(o);
	return -1;
}

static const struct {
	const char *name;
	int value;
} errno_names[] = {
	{ "EPERM", EPERM },	    { "ENOENT", ENOENT },	{ "EIO", EIO },
	{ "E2BIG", E2BIG },	    { "EBADF", EBADF },		{ "ENOMEM", ENOMEM },
	{ "EACCES", EACCES },	    { "EBUSY", EBUSY },		{ "EEXIST", EEXIST },
	{ "EXDEV", EXDEV },	    { "ENOTDIR", ENOTDIR },	{ "EISDIR", EISDIR },
	{ "EINVAL", EINVAL },	    { "EFBIG", EFBIG },		{ "ENOSPC", ENOSPC },
	{ "EROFS", EROFS },	    { "ENAMETOOLONG", ENAMETOOLONG }, { "ENOSYS", ENOSYS },
	{ "ENOTEMPTY", ENOTEMPTY }, { "ELOOP", ELOOP },		{ "ENOTSUP", ENOTSUP },
	{ "ETIMEDOUT", ETIMEDOUT }, { "ECONNREFUSED", ECONNREFUSED }, { "EHOSTUNREACH", EHOSTUNREACH },
	{ "EAGAIN", EAGAIN },	    { "ECANCELED", ECANCELED }, { "EDQUOT", EDQUOT },
};

/* A result's "errno": a name from the table (portable across
 * architectures) or a number. */
static int errno_from_json(const cJSON *v)
{
	if (cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 4096)
		return (int)v->valuedouble;
	if (cJSON_IsString(v))
		for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
			if (strcmp(v->valuestring, errno_names[i].name) == 0)
				return errno_names[i].value;
	return 0;
}

/* A JSON number that is a whole value in [min, max]. */
static bool json_int(const cJSON *v, double min, double max, int64_t *out)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
	    v->valuedouble < min || v->valuedouble > max)
		return false;
	*out = (int64_t)v->valuedouble;
	return true;
}

/* cJSON reports allocation failure as NULL from every call: the builders
 * below check each addition, so a request is never sent with a field
 * silently missing. */
static bool add_item(cJSON *obj, const char *key, cJSON *item)
{
	if (!item)
		return false;
	if (!cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		return false;
	}
	return true;
}

static cJSON *u64_or_null(uint64_t v)
{
	return v ? cJSON_CreateNumber((double)v) : cJSON_CreateNull();
}

/* ---- configuration -------------------------------------------------------- */

static void cfg_free(struct cmd_config *cfg)
{
	free(cfg->program);
	cJSON_Delete(cfg->public_config);
	for (size_t i = 0; i < cfg->n_env; i++)
		free(cfg->env[i]);
	free(cfg->env);
	for (size_t i = 0; i < cfg->n_secrets; i++)
		free(cfg->secrets[i]);
	free(cfg->secrets);
	free(cfg->secret_lens);
	memset(cfg, 0, sizeof(*cfg));
}

static int parse_seconds(const char *value, uint64_t *ms)
{
	char *end;
	errno = 0;
	unsigned long long s = strtoull(value, &end, 10);
	if (!*value || *value == '-' || *end || errno || s > UINT64_MAX / 1000)
		return -1;
	*ms = (uint64_t)s * 1000u;
	return 0;
}

/* JAILRUN_CONFIG_<KEY>: letters upper-cased, anything else not a letter or
 * digit becomes '_'. */
static char *config_env_entry(const char *key, size_t klen, const char *value)
{
	static const char prefix[] = "JAILRUN_CONFIG_";
	size_t vlen = strlen(value);
	char *e = malloc(sizeof(prefix) - 1 + klen + 1 + vlen + 1);
	if (!e)
		return NULL;
	char *p = stpcpy(e, prefix);
	for (size_t i = 0; i < klen; i++) {
		char c = key[i];
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			c = '_';
		*p++ = c;
	}
	*p++ = '=';
	memcpy(p, value, vlen + 1);
	return e;
}

static int cmp_len_desc(const void *a, const void *b)
{
	size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);
	return la < lb ? 1 : la > lb ? -1 : 0;
}

/* Reads KEY=VALUE entries, later ones overriding earlier (policy lines come
 * first, --provider-opt after: the command line wins). */
static int cfg_parse(const char *const *config, jr_provider_log_fn log, void *log_userdata,
		     struct cmd_config *cfg, struct jr_provider_error *err)
{
	size_t n = 0;
	memset(cfg, 0, sizeof(*cfg));
	cfg->log = log;
	cfg->log_userdata = log_userdata;
	cfg->timeout_ms = (uint64_t)DEFAULT_TIMEOUT_S * 1000u;
	cfg->grace_ms = (uint64_t)DEFAULT_GRACE_S * 1000u;
	for (; config && config[n]; n++)
		;
	cfg->public_config = cJSON_CreateObject();
	cfg->env = calloc(n + 1, sizeof(char *));
	cfg->secrets = calloc(n + 1, sizeof(char *));
	cfg->secret_lens = calloc(n + 1, sizeof(size_t));
	if (!cfg->public_config || !cfg->env || !cfg->secrets || !cfg->secret_lens)
		goto oom;

	/* Secrets first, so an error about a later entry is already redacted. */
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(config[i], '=');
		if (eq && eq[1] && key_is_secret(config[i], (size_t)(eq - config[i]))) {
			if (!(cfg->secrets[cfg->n_secrets] = strdup(eq + 1)))
				goto oom;
			cfg->n_secrets++;
		}
	}
	qsort(cfg->secrets, cfg->n_secrets, sizeof(char *), cmp_len_desc);
	for (size_t s = 0; s < cfg->n_secrets; s++)
		cfg->secret_lens[s] = strlen(cfg->secrets[s]);

	for (size_t i = 0; i < n; i++) {
		const char *entry = config[i], *eq = strchr(entry, '=');
		if (!eq || eq == entry) {
			fail(cfg, err, EINVAL, "configuration entry '%s' is not KEY=VALUE", entry);
			goto fail;
		}
		size_t klen = (size_t)(eq - entry);
		for (size_t k = 0; k < klen; k++) {
			char c = entry[k];
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			      c == '_' || c == '-' || c == '.')) {
				fail(cfg, err, EINVAL,
				     "configuration key '%.*s': only letters, digits, '_', '-' and '.'",
				     (int)klen, entry);
				goto fail;
			}
		}
		const char *value = eq + 1;
		char key[256];
		if (klen >= sizeof(key)) {
			fail(cfg, err, EINVAL, "configuration key '%.40s...' is too long", entry);
			goto fail;
		}
		memcpy(key, entry, klen);
		key[klen] = '\0';

		if (strcmp(key, "program") == 0) {
			if (!*value) {
				fail(cfg, err, EINVAL, "program= is empty");
				goto fail;
			}
			free(cfg->program);
			if (!(cfg->program = strdup(value)))
				goto oom;
		} else if (strcmp(key, "timeout") == 0 || strcmp(key, "grace") == 0) {
			if (parse_seconds(value, strcmp(key, "timeout") == 0 ? &cfg->timeout_ms
									    : &cfg->grace_ms) < 0) {
				fail(cfg, err, EINVAL, "%s=%s: not a whole number of seconds", key,
				     value);
				goto fail;
			}
		}

		/* The environment: every entry, the same key replacing. */
		char *e = config_env_entry(key, klen, value);
		if (!e)
			goto oom;
		size_t nlen = (size_t)(strchr(e, '=') - e) + 1, j;
		for (j = 0; j < cfg->n_env; j++)
			if (strncmp(cfg->env[j], e, nlen) == 0)
				break;
		if (j < cfg->n_env)
			free(cfg->env[j]);
		else
			cfg->n_env++;
		cfg->env[j] = e;

		/* The request's "config": entries a log may show. */
		if (!key_is_secret(key, klen)) {
			cJSON *v = cJSON_CreateString(value);
			if (!v)
				goto oom;
			if (cJSON_GetObjectItemCaseSensitive(cfg->public_config, key)) {
				if (!cJSON_ReplaceItemInObjectCaseSensitive(cfg->public_config, key, v)) {
					cJSON_Delete(v);
					goto oom;
				}
			} else if (!add_item(cfg->public_config, key, v)) {
				goto oom;
			}
		}
	}
	if (!cfg->program) {
		fail(cfg, err, EINVAL,
		     "no program configured (--provider-opt program=PATH, or a "
		     "policy line `provider command program=PATH`)");
		goto fail;
	}
	return 0;
oom:
	fail(cfg, err, ENOMEM, "out of memory");
fail:
	cfg_free(cfg);
	return -1;
}

/* ---- running the program -------------------------------------------------- */

/* What exec adds to a run: the command's descriptors and output budget. */
struct run_io {
	int stdin_fd, stdout_fd, stderr_fd;
	uint64_t max_output; /* 0: none; stdout and stderr together */
	uint64_t produced;
	bool truncated;
	bool dead[2]; /* writing to the caller's descriptor failed: drop the rest */
};

struct run {
	const char *operation;
	uint64_t limit_ms;   /* 0: none */
	struct run_io *io;   /* exec only */
	bool timed_out;      /* out: killed at limit_ms */
	bool interrupted;    /* out: a signal handler ran (EINTR); the program was ended */
};

/* Output of the command, to the caller's descriptor, within the budget
 * that exec's max_output_bytes sets for both streams together. */
static void forward(struct run *run, int which, const char *p, size_t n)
{
	struct run_io *io = run->io;
	if (io->max_output) {
		uint64_t room = io->max_output > io->produced ? io->max_output - io->produced : 0;
		if (n > room) {
			n = (size_t)room;
			io->truncated = true;
		}
	}
	io->produced += n;
	if (n && !io->dead[which] &&
	    write_all(which ? io->stderr_fd : io->stdout_fd, p, n, &run->interrupted) < 0)
		io->dead[which] = true;
}

/* Writing to a caller's descriptor whose reader left must not kill jailrun
 * with SIGPIPE (whose disposition is the core's business, not a plugin's):
 * the signal is blocked in this thread while forwarding, and one it raised
 * is taken off again before unblocking. */
struct pipe_guard {
	sigset_t old;
	bool was_pending;
};

static void pipe_guard_begin(struct pipe_guard *g)
{
	sigset_t set, pending;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigpending(&pending);
	g->was_pending = sigismember(&pending, SIGPIPE) == 1;
	pthread_sigmask(SIG_BLOCK, &set, &g->old);
}

static void pipe_guard_end(struct pipe_guard *g)
{
	sigset_t set, pending;
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigpending(&pending);
	if (!g->was_pending && sigismember(&pending, SIGPIPE) == 1) {
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* A directory only the caller can enter, for the request and result
 * files, in $TMPDIR (when absolute) or /tmp. */
static char *private_dir(void)
{
	const char *base = getenv("TMPDIR");
	char *dir;
	if (!base || base[0] != '/')
		base = "/tmp";
	if (asprintf(&dir, "%s/jailrun-command.XXXXXX", base) < 0)
		return NULL;
	if (!mkdtemp(dir)) {
		int e = errno;
		free(dir);
		errno = e;
		return NULL;
	}
	return dir;
}

static int write_new_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write_all(fd, text, strlen(text), NULL) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

/* The program's environment: the caller's, less stale protocol variables
 * (a program run from inside another provider's program must not see its
 * parent's request), plus the configuration and this run's paths. */
static char **build_env(const struct cmd_config *cfg, const char *req_path, const char *res_path,
			const char *operation, bool exec)
{
	static const char *const ours[] = { "JAILRUN_REQUEST_PATH=", "JAILRUN_RESULT_PATH=",
					    "JAILRUN_OPERATION=",   "JAILRUN_PROTOCOL=",
					    "JAILRUN_STDOUT_FD=",   "JAILRUN_STDERR_FD=" };
	size_t n = 0, k = 0;
	for (char **e = environ; e && *e; e++)
		n++;
	char **env = calloc(n + cfg->n_env + 7, sizeof(char *));
	if (!env)
		return NULL;
	for (char **e = environ; e && *e; e++) {
		bool skip = strncmp(*e, "JAILRUN_CONFIG_", 15) == 0;
		for (size_t i = 0; !skip && i < sizeof(ours) / sizeof(ours[0]); i++)
			skip = strncmp(*e, ours[i], strlen(ours[i])) == 0;
		if (skip)
			continue;
		if (!(env[k++] = strdup(*e)))
			goto oom;
	}
	for (size_t i = 0; i < cfg->n_env; i++)
		if (!(env[k++] = strdup(cfg->env[i])))
			goto oom;
	if (asprintf(&env[k++], "JAILRUN_REQUEST_PATH=%s", req_path) < 0 ||
	    asprintf(&env[k++], "JAILRUN_RESULT_PATH=%s", res_path) < 0 ||
	    asprintf(&env[k++], "JAILRUN_OPERATION=%s", operation) < 0 ||
	    asprintf(&env[k++], "JAILRUN_PROTOCOL=%d", PROTOCOL_VERSION) < 0) {
		env[--k] = NULL; /* asprintf leaves the pointer undefined on failure */
		goto oom;
	}
	if (exec && (asprintf(&env[k++], "JAILRUN_STDOUT_FD=%d", CMD_STDOUT_FD) < 0 ||
		     asprintf(&env[k++], "JAILRUN_STDERR_FD=%d", CMD_STDERR_FD) < 0)) {
		env[--k] = NULL;
		goto oom;
	}
	return env;
oom:
	for (size_t i = 0; i < k; i++)
		free(env[i]);
	free(env);
	return NULL;
}

static void free_env(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* Moves fd at or above FIRST_HIGH_FD (close-on-exec), closing the original
 * when owned. */
static int high_fd(int fd, bool owned)
{
	int h = fcntl(fd, F_DUPFD_CLOEXEC, FIRST_HIGH_FD);
	if (owned) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return h;
}

static int read_result_file(const char *path, struct buf *b)
{
	char chunk[65536];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || buf_append(b, chunk, (size_t)r, MAX_RESULT_BYTES) < 0 || b->overflow) {
			int e = r < 0 ? errno : b->overflow ? EFBIG : r == 0 ? 0 : ENOMEM;
			close(fd);
			errno = e;
			return e ? -1 : 0;
		}
	}
}

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* A result: the whole text one JSON object (whitespace around allowed). */
static cJSON *parse_object(const struct buf *b)
{
	const char *end;
	if (!b->data || b->overflow || memchr(b->data, '\0', b->len))
		return NULL;
	cJSON *v = cJSON_ParseWithOpts(b->data, &end, 1);
	if (v && !cJSON_IsObject(v)) {
		cJSON_Delete(v);
		return NULL;
	}
	return v;
}

static void describe_status(int status, bool known, char *out, size_t outsize)
{
	if (!known)
		snprintf(out, outsize, "exit status unknown");
	else if (WIFEXITED(status))
		snprintf(out, outsize, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, outsize, "killed by signal %d (%s)", WTERMSIG(status),
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(out, outsize, "wait status %#x", (unsigned)status);
}

/* Reads what pipe i holds now: 0 the answer, 1 diagnostics, 2 and 3 the
 * command's output (exec).  Closes it at its end.  -1: out of memory. */
static int drain(struct run *run, int pipes[][2], int i, struct buf *out, struct buf *diag)
{
	for (;;) {
		char chunk[65536];
		ssize_t got = read(pipes[i][0], chunk, sizeof(chunk));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == EAGAIN)
			return 0;
		if (got <= 0) {
			close(pipes[i][0]);
			pipes[i][0] = -1;
			return 0;
		}
		if (i == 0 && buf_append(out, chunk, (size_t)got, MAX_RESULT_BYTES) < 0)
			return -1;
		if (i == 1 && buf_append(diag, chunk, (size_t)got, MAX_DIAG_BYTES) < 0)
			return -1;
		if (i >= 2)
			forward(run, i - 2, chunk, (size_t)got);
	}
}

/* Runs the program once for request, whose "protocol" and "operation" this
 * adds.  Returns the result object (its "error" already turned into *err),
 * or NULL with *err filled.  For exec (run->io), a run killed at its limit
 * returns an empty object and sets run->timed_out. */
static cJSON *run_program(const struct cmd_config *cfg, struct run *run, cJSON *request,
			  struct jr_provider_error *err)
{
	const char *op = run->operation, *prog = program_name(cfg);
	char *text = NULL, *dir = NULL, *req_path = NULL, *res_path = NULL;
	char **envp = NULL;
	int in_fd = -1, pipes[4][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 } };
	int npipes = run->io ? 4 : 2, pidfd = -1, status = 0;
	pid_t pid = -1;
	bool own_group = true, reaped = false, status_known = true, killed = false, term_sent = false;
	struct buf out = { 0 }, diag = { 0 }, file = { 0 };
	cJSON *result = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	bool fa_init = false, attr_init = false;

	if (!add_item(request, "protocol", cJSON_CreateNumber(PROTOCOL_VERSION)) ||
	    !add_item(request, "operation", cJSON_CreateString(op)) ||
	    !(text = cJSON_PrintUnformatted(request))) {
		fail(cfg, err, ENOMEM, "out of memory");
		goto out;
	}
	if (!utf8_valid((const unsigned char *)text)) {
		/* JSON is Unicode: bytes that are not UTF-8 would reach the
		 * program changed, or make its parser refuse the request. */
		fail(cfg, err, EILSEQ, "a path, argument or environment value is not valid UTF-8");
		goto out;
	}
	if (!(dir = private_dir())) {
		fail(cfg, err, errno, "cannot create a private directory in %s",
		     getenv("TMPDIR") && getenv("TMPDIR")[0] == '/' ? getenv("TMPDIR") : "/tmp");
		goto out;
	}
	if (asprintf(&req_path, "%s/request.json", dir) < 0) {
		req_path = NULL;
		fail(cfg, err, ENOMEM, "out of memory");
		goto out;
	}
	if (asprintf(&res_path, "%s/result.json", dir) < 0) {
		res_path = NULL;
		fail(cfg, err, ENOMEM, "out of memory");
		goto out;
	}
	if (write_new_file(req_path, text) < 0) {
		fail(cfg, err, errno, "writing %s", req_path);
		goto out;
	}
	if (!(envp = build_env(cfg, req_path, res_path, op, run->io != NULL))) {
		fail(cfg, err, ENOMEM, "out of memory");
		goto out;
	}

	/* exec hands the command's stdin to the program, so it can stream it
	 * on (ssh does); every other operation reads nothing. */
	if (run->io && run->io->stdin_fd >= 0)
		in_fd = high_fd(run->io->stdin_fd, false);
	if (in_fd < 0) { /* not exec, or the caller's stdin is closed */
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		in_fd = nul < 0 ? -1 : high_fd(nul, true);
	}
	if (in_fd < 0) {
		fail(cfg, err, errno, "opening the program's stdin");
		goto out;
	}
	for (int i = 0; i < npipes; i++) {
		if (pipe2(pipes[i], O_CLOEXEC) < 0 ||
		    (pipes[i][1] = high_fd(pipes[i][1], true)) < 0 ||
		    fcntl(pipes[i][0], F_SETFL, O_NONBLOCK) < 0) {
			fail(cfg, err, errno, "pipe for the program");
			goto out;
		}
	}

	/* A process group of its own, so the limit kills the program with
	 * everything it started; but an exec reading a terminal stays in
	 * jailrun's (foreground) group, where reading it does not stop it
	 * with SIGTTIN and ^C reaches it. */
	if (run->io && isatty(in_fd))
		own_group = false;

	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	int e = posix_spawn_file_actions_init(&fa);
	fa_init = e == 0;
	if (!e)
		e = posix_spawnattr_init(&attr);
	attr_init = fa_init && e == 0;
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, pipes[0][1], 1);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, pipes[1][1], 2);
	if (!e && run->io)
		e = posix_spawn_file_actions_adddup2(&fa, pipes[2][1], CMD_STDOUT_FD);
	if (!e && run->io)
		e = posix_spawn_file_actions_adddup2(&fa, pipes[3][1], CMD_STDERR_FD);
	/* Nothing else of jailrun's leaks into the program, close-on-exec or not. */
	if (!e)
		e = posix_spawn_file_actions_addclosefrom_np(&fa, run->io ? CMD_STDERR_FD + 1 : 3);
	/* The caller's signal mask and ignored signals (jailrun may ignore
	 * SIGPIPE) are not the program's. */
	if (!e)
		e = posix_spawnattr_setsigmask(&attr, &none);
	if (!e)
		e = posix_spawnattr_setsigdefault(&attr, &all);
	if (!e)
		e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
							    (own_group ? POSIX_SPAWN_SETPGROUP : 0));
	if (!e && own_group)
		e = posix_spawnattr_setpgroup(&attr, 0);
	if (e) {
		fail(cfg, err, e, "preparing to run %s", prog);
		goto out;
	}
	char *argv[] = { cfg->program, NULL };
	log_line(cfg, "command: %s %s", cfg->program, op);
	e = posix_spawnp(&pid, cfg->program, &fa, &attr, argv, envp);
	if (e) {
		pid = -1;
		fail(cfg, err, e, "cannot run %s", cfg->program);
		goto out;
	}
	close(in_fd);
	in_fd = -1;
	for (int i = 0; i < npipes; i++) {
		close(pipes[i][1]);
		pipes[i][1] = -1;
	}
	/* Exit noticed through poll; without pidfds (older kernels) poll
	 * wakes every 100 ms to ask waitpid. */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

	uint64_t start = now_ms(), linger_until = 0;
	/* A limit too far off to add (timeout= in the billions of seconds) is none. */
	uint64_t kill_at = 0;
	if (run->limit_ms && run->limit_ms <= UINT64_MAX - start)
		kill_at = start + run->limit_ms;
	for (;;) {
		struct pollfd pfd[5];
		int idx[5], n = 0;
		for (int i = 0; i < npipes; i++)
			if (pipes[i][0] >= 0) {
				pfd[n] = (struct pollfd){ .fd = pipes[i][0], .events = POLLIN };
				idx[n++] = i;
			}
		if (reaped && n == 0)
			break;
		uint64_t t = now_ms();
		if (run->interrupted && !term_sent && !reaped) {
			/* jailrun is asked to stop (its SIGINT, SIGTERM or SIGHUP
			 * handler ran): the program gets SIGTERM, to end what it
			 * started on the backend, and SIGKILL after LINGER_MS. */
			kill(own_group ? -pid : pid, SIGTERM);
			term_sent = true;
			if (!kill_at || kill_at > t + LINGER_MS)
				kill_at = t + LINGER_MS;
		}
		if (!reaped && kill_at && !killed && t >= kill_at) {
			kill(own_group ? -pid : pid, SIGKILL);
			killed = true;
			run->timed_out = !run->interrupted;
		}
		if (reaped && t >= linger_until) {
			/* A process it started still holds descriptor 3 or 4. */
			log_line(cfg, "command: %s %s: a process it left still holds the command's output; "
				      "not waiting for it",
				 prog, op);
			break;
		}
		int wait = -1;
		if (!reaped && kill_at && !killed)
			wait = (int)(kill_at - t < INT_MAX ? kill_at - t : INT_MAX);
		if (reaped)
			wait = (int)(linger_until - t);
		if (!reaped && pidfd < 0 && (wait < 0 || wait > 100))
			wait = 100;
		if (!reaped && pidfd >= 0) {
			pfd[n] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
			idx[n++] = -1;
		}
		int r = poll(pfd, (nfds_t)n, wait);
		if (r < 0) {
			if (errno == EINTR) {
				run->interrupted = true;
				continue;
			}
			fail(cfg, err, errno, "waiting for %s: poll", prog);
			goto out;
		}
		for (int k = 0; k < n; k++) {
			if (idx[k] >= 0 && pfd[k].revents && drain(run, pipes, idx[k], &out, &diag) < 0) {
				fail(cfg, err, ENOMEM, "out of memory");
				goto out;
			}
		}
		if (!reaped) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid || (w < 0 && errno == ECHILD)) {
				/* ECHILD: someone else reaped it (SIGCHLD ignored). */
				status_known = w == pid;
				reaped = true;
				pid = -1;
				linger_until = now_ms() + LINGER_MS;
				/* The answer and the diagnostics are complete once
				 * the program is gone (its writes are in the pipes):
				 * a daemon it left with its stdout or stderr (ssh's
				 * ControlPersist master keeps stderr) is not waited
				 * for.  The command's output may still come from a
				 * process it started, for LINGER_MS. */
				for (int i = 0; i < 2; i++) {
					if (pipes[i][0] >= 0 && drain(run, pipes, i, &out, &diag) < 0) {
						fail(cfg, err, ENOMEM, "out of memory");
						goto out;
					}
					if (pipes[i][0] >= 0) {
						close(pipes[i][0]);
						pipes[i][0] = -1;
					}
				}
			}
		}
	}

	/* The program's stderr: progress for -v, cause for errors. */
	if (cfg->log && diag.len) {
		char *line = diag.data, *end = diag.data + diag.len;
		while (line < end) {
			char *nl = memchr(line, '\n', (size_t)(end - line));
			size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
			char red[1024];
			redact_into(cfg, line, len, red, sizeof(red), NULL);
			for (char *p = red; *p; p++)
				if ((unsigned char)*p < 0x20)
					*p = ' ';
			log_line(cfg, "command: %s: %s", prog, red);
			line = nl ? nl + 1 : end;
		}
	}

	if (run->interrupted) {
		fail(cfg, err, EINTR, "%s interrupted", prog);
		goto out;
	}
	if (run->timed_out) {
		if (run->io) {
			result = cJSON_CreateObject();
			if (!result)
				fail(cfg, err, ENOMEM, "out of memory");
		} else {
			fail(cfg, err, 0, "%s gave no answer within %llu s (timeout=); killed it", prog,
			     (unsigned long long)(run->limit_ms / 1000));
		}
		goto out;
	}

	/* The answer: stdout when it is a JSON object, else the result file. */
	const char *first = out.data ? skip_space(out.data, out.data + out.len) : NULL;
	const struct buf *from = NULL;
	const char *where = NULL;
	if (first && first < out.data + out.len && *first == '{') {
		from = &out;
		where = "stdout";
	} else {
		if (read_result_file(res_path, &file) < 0) {
			fail(cfg, err, errno, "reading %s's result file", prog);
			goto out;
		}
		const char *f = file.data ? skip_space(file.data, file.data + file.len) : NULL;
		if (f && f < file.data + file.len) {
			from = &file;
			where = "its result file";
		}
	}
	result = from ? parse_object(from) : NULL;

	char how[96], so[EXCERPT_BYTES * 4 + 16], se[EXCERPT_BYTES * 4 + 16];
	describe_status(status, status_known, how, sizeof(how));
	quote_excerpt(cfg, out.data ? out.data : "", out.len, so, sizeof(so));
	quote_excerpt(cfg, diag.data ? diag.data : "", diag.len, se, sizeof(se));
	bool exited_0 = status_known && WIFEXITED(status) && WEXITSTATUS(status) == 0;

	if (!result && from) {
		fail(cfg, err, 0, "%s's answer on %s is %s (%s); stdout: %s; stderr: %s", prog, where,
		     from->overflow ? "larger than 256 MiB" : "not one JSON object", how, so, se);
		goto out;
	}
	if (!result) {
		if (!exited_0) {
			fail(cfg, err, 0, "%s failed (%s); stdout: %s; stderr: %s", prog, how, so, se);
			goto out;
		}
		/* Exit status 0 and no answer: the operation had nothing to say. */
		if (!(result = cJSON_CreateObject()))
			fail(cfg, err, ENOMEM, "out of memory");
		goto out;
	}
	const cJSON *error = cJSON_GetObjectItemCaseSensitive(result, "error");
	if (error && !cJSON_IsNull(error) && !cJSON_IsFalse(error)) {
		int code = errno_from_json(cJSON_GetObjectItemCaseSensitive(result, "errno"));
		fail(cfg, err, code, "%s", cJSON_IsString(error) ? error->valuestring
						      : "failed (its \"error\" is not a string)");
		cJSON_Delete(result);
		result = NULL;
	}

out:
	if (pid > 0) {
		/* Left early (an error above): the program is not left running. */
		kill(own_group ? -pid : pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (pidfd >= 0)
		close(pidfd);
	if (in_fd >= 0)
		close(in_fd);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 2; j++)
			if (pipes[i][j] >= 0)
				close(pipes[i][j]);
	if (fa_init)
		posix_spawn_file_actions_destroy(&fa);
	if (attr_init)
		posix_spawnattr_destroy(&attr);
	if (dir)
		nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	free_env(envp);
	free(text);
	free(dir);
	free(req_path);
	free(res_path);
	free(out.data);
	free(diag.data);
	free(file.data);
	return result;
}

/* ---- requests ------------------------------------------------------------- */

static cJSON *new_request(const struct jr_provider_instance *inst)
{
	cJSON *r = cJSON_CreateObject();
	if (r && inst &&
	    (!add_item(r, "id", cJSON_CreateString(inst->id)) ||
	     !add_item(r, "workspace", cJSON_CreateString(inst->workspace)))) {
		cJSON_Delete(r);
		return NULL;
	}
	return r;
}

/* Runs one operation on an instance: request built by the caller (NULL on
 * its allocation failure), result returned or NULL with *err. */
static cJSON *call(jr_provider_instance_t *inst, const char *op, cJSON *request,
		   struct jr_provider_error *err)
{
	struct run run = { .operation = op, .limit_ms = inst->cfg.timeout_ms };
	if (!request) {
		fail(&inst->cfg, err, ENOMEM, "out of memory");
		return NULL;
	}
	cJSON *result = run_program(&inst->cfg, &run, request, err);
	cJSON_Delete(request);
	return result;
}

static cJSON *path_request(jr_provider_instance_t *inst, const char *path)
{
	cJSON *r = new_request(inst);
	if (r && !add_item(r, "path", cJSON_CreateString(path ? path : ""))) {
		cJSON_Delete(r);
		return NULL;
	}
	return r;
}

/* ---- open ----------------------------------------------------------------- */

static void instance_free(jr_provider_instance_t *inst)
{
	if (!inst)
		return;
	cfg_free(&inst->cfg);
	free(inst->id);
	free(inst->workspace);
	cJSON_Delete(inst->network);
	cJSON_Delete(inst->limits);
	free(inst);
}

static void set_mechanism(struct jr_provider_clause *c, const char *text)
{
	snprintf(c->mechanism, sizeof(c->mechanism), "%s", text);
}

/* The shorthand's key for a clause: its directive, and for directives
 * whose first word says what kind of clause it is (limit time, net none,
 * env scrub, seccomp deny, allow host, ...) that word too: one "limit"
 * must not claim every limit, nor "net" every network mode. */
static void shorthand_key(const char *text, char *key, size_t size)
{
	static const char *const kinded[] = { "net",	  "home",     "env",	   "limit",
					      "allow",	  "seccomp",  "caps",	   "landlock",
					      "isolation", "guard",    "user",	   "workspace", NULL };
	size_t d = strcspn(text, " ");
	bool with_word = false;
	for (const char *const *k = kinded; *k; k++)
		with_word |= strlen(*k) == d && !strncmp(text, *k, d);
	size_t len = d;
	if (with_word && text[d] == ' ')
		len = d + 1 + strcspn(text + d + 1, " ");
	if (len >= size)
		len = size - 1;
	memcpy(key, text, len);
	key[len] = '\0';
}

/* open's answer about the policy's clauses: "clauses", one entry per
 * policy clause in order, or "directives", the names of the directives
 * whose every clause the backend enforces, each with how.  Neither: the
 * program claims nothing, and jailrun refuses any policy with a semantic
 * clause.  A clause claimed enforced must say how. */
static int answer_clauses(jr_provider_instance_t *inst, const cJSON *result, const cJSON *policy,
			  struct jr_provider_clause *clauses, size_t n_clauses,
			  struct jr_provider_error *err)
{
	const struct cmd_config *cfg = &inst->cfg;
	const char *prog = program_name(cfg);
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(result, "clauses");
	const cJSON *dirs = cJSON_GetObjectItemCaseSensitive(result, "directives");
	const cJSON *pclauses = cJSON_GetObjectItemCaseSensitive(policy, "clauses");
	char text[sizeof(clauses[0].mechanism)];

	if (list && dirs)
		return fail(cfg, err, 0, "%s answered both \"clauses\" and \"directives\"", prog);
	if (list) {
		if (!cJSON_IsArray(list) || (size_t)cJSON_GetArraySize(list) != n_clauses)
			return fail(cfg, err, 0,
				    "%s's \"clauses\" is not an array of %zu entries, one per policy clause",
				    prog, n_clauses);
		size_t i = 0;
		const cJSON *c;
		cJSON_ArrayForEach(c, list)
		{
			const cJSON *enf = cJSON_GetObjectItemCaseSensitive(c, "enforced");
			const cJSON *mech = cJSON_GetObjectItemCaseSensitive(c, "mechanism");
			if (!cJSON_IsObject(c) || !cJSON_IsBool(enf) || (mech && !cJSON_IsString(mech)))
				return fail(cfg, err, 0,
					    "%s's clause %zu is not {\"enforced\": true|false, \"mechanism\": \"...\"}",
					    prog, i + 1);
			bool yes = cJSON_IsTrue(enf);
			if (yes && (!mech || !*mech->valuestring))
				return fail(cfg, err, 0,
					    "%s claims clause %zu enforced without saying how (\"mechanism\")",
					    prog, i + 1);
			clauses[i].enforced = yes;
			if (mech && *mech->valuestring) {
				redact_into(cfg, mech->valuestring, strlen(mech->valuestring), text,
					    sizeof(text), NULL);
				set_mechanism(&clauses[i], text);
			} else {
				snprintf(text, sizeof(text), "not enforced by %s", prog);
				set_mechanism(&clauses[i], text);
			}
			i++;
		}
		return 0;
	}
	if (dirs && !cJSON_IsObject(dirs))
		return fail(cfg, err, 0, "%s's \"directives\" is not an object", prog);
	const cJSON *d;
	cJSON_ArrayForEach(d, dirs)
	{
		if (!cJSON_IsString(d) || !*d->valuestring)
			return fail(cfg, err, 0, "%s's directive \"%s\" needs a mechanism string", prog,
				    d->string);
	}
	if (n_clauses && (!cJSON_IsArray(pclauses) || (size_t)cJSON_GetArraySize(pclauses) != n_clauses))
		return fail(cfg, err, EINVAL, "the policy JSON does not list %zu clauses", n_clauses);
	for (size_t i = 0; i < n_clauses; i++) {
		const cJSON *pc = cJSON_GetArrayItem(pclauses, (int)i);
		const cJSON *ct = cJSON_GetObjectItemCaseSensitive(pc, "text");
		char key[64];
		shorthand_key(cJSON_IsString(ct) ? ct->valuestring : "", key, sizeof(key));
		const cJSON *m = dirs ? cJSON_GetObjectItemCaseSensitive(dirs, key) : NULL;
		clauses[i].enforced = m != NULL;
		if (m) {
			redact_into(cfg, m->valuestring, strlen(m->valuestring), text, sizeof(text), NULL);
		} else {
			snprintf(text, sizeof(text), "%s enforces no \"%s\" clause", prog, key);
		}
		set_mechanism(&clauses[i], text);
	}
	return 0;
}

static int cmd_open(const struct jr_provider_open_args *args, jr_provider_instance_t **out,
		    struct jr_provider_clause *clauses, size_t n_clauses, struct jr_provider_error *err)
{
	jr_provider_instance_t *inst = NULL;
	cJSON *request = NULL, *result = NULL;
	const cJSON *policy;
	int rc = -1;

	*out = NULL;
	if (!args || args->size < sizeof(*args) || !args->policy_json)
		return fail(NULL, err, EINVAL, "open: bad arguments");
	if (!(inst = calloc(1, sizeof(*inst))))
		return fail(NULL, err, ENOMEM, "out of memory");
	if (cfg_parse(args->config, args->log, args->log_userdata, &inst->cfg, err) < 0) {
		free(inst);
		return -1;
	}
	inst->preserve = args->preserve;
	if (!(inst->workspace = strdup(args->workspace ? args->workspace : "")) ||
	    !(inst->id = strdup(""))) {
		fail(&inst->cfg, err, ENOMEM, "out of memory");
		goto out;
	}
	cJSON *parsed = cJSON_Parse(args->policy_json);
	if (!cJSON_IsObject(parsed)) {
		cJSON_Delete(parsed);
		fail(&inst->cfg, err, EINVAL, "the policy JSON does not parse");
		goto out;
	}
	request = new_request(NULL);
	if (!request || !add_item(request, "policy", parsed)) {
		if (!request)
			cJSON_Delete(parsed);
		fail(&inst->cfg, err, ENOMEM, "out of memory");
		goto out;
	}
	policy = parsed;
	const cJSON *net = cJSON_GetObjectItemCaseSensitive(policy, "network");
	const cJSON *lim = cJSON_GetObjectItemCaseSensitive(policy, "limits");
	if ((net && !(inst->network = cJSON_Duplicate(net, 1))) ||
	    (lim && !(inst->limits = cJSON_Duplicate(lim, 1))) ||
	    !add_item(request, "config", cJSON_Duplicate(inst->cfg.public_config, 1)) ||
	    !add_item(request, "workspace", cJSON_CreateString(inst->workspace)) ||
	    !add_item(request, "preserve", cJSON_CreateBool(inst->preserve))) {
		fail(&inst->cfg, err, ENOMEM, "out of memory");
		goto out;
	}

	struct run run = { .operation = "open", .limit_ms = inst->cfg.timeout_ms };
	if (!(result = run_program(&inst->cfg, &run, request, err)))
		goto out;
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(result, "id");
	if (id && !cJSON_IsNull(id)) {
		if (!cJSON_IsString(id)) {
			fail(&inst->cfg, err, 0, "the answer's \"id\" is not a string");
			goto release;
		}
		free(inst->id);
		if (!(inst->id = strdup(id->valuestring))) {
			fail(&inst->cfg, err, ENOMEM, "out of memory");
			goto release;
		}
	}
	if (n_clauses)
		memset(clauses, 0, n_clauses * sizeof(*clauses));
	if (answer_clauses(inst, result, policy, clauses, n_clauses, err) < 0)
		goto release;
	*out = inst;
	inst = NULL;
	rc = 0;
	goto out;

release:
	/* The program did open something; an answer jailrun cannot use must
	 * not leave it behind.  Its own failure here adds nothing to the
	 * error already reported. */
	{
		struct jr_provider_error ignored;
		cJSON *r = new_request(inst);
		if (r && !add_item(r, "preserve", cJSON_CreateFalse())) {
			cJSON_Delete(r);
			r = NULL;
		}
		cJSON_Delete(call(inst, "close", r, &ignored));
	}
out:
	cJSON_Delete(request);
	cJSON_Delete(result);
	instance_free(inst);
	return rc;
}

/* ---- exec ----------------------------------------------------------------- */

static int write_output_field(const struct cmd_config *cfg, struct run *run, int which,
			      const cJSON *result, struct jr_provider_error *err)
{
	const char *text_key = which ? "stderr" : "stdout";
	const char *b64_key = which ? "stderrBase64" : "stdoutBase64";
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(result, text_key);
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(result, b64_key);
	if (t && !cJSON_IsNull(t)) {
		if (!cJSON_IsString(t))
			return fail(cfg, err, 0, "the answer's \"%s\" is not a string",
				    text_key);
		forward(run, which, t->valuestring, strlen(t->valuestring));
	}
	if (b && !cJSON_IsNull(b)) {
		unsigned char *data;
		size_t len;
		if (!cJSON_IsString(b) || b64_decode(b->valuestring, &data, &len) < 0)
			return fail(cfg, err, 0, "the answer's \"%s\" is not base64",
				    b64_key);
		forward(run, which, (const char *)data, len);
		free(data);
	}
	return 0;
}

static int cmd_exec(jr_provider_instance_t *inst, const struct jr_provider_exec_args *args,
		    struct jr_provider_exec_result *res, struct jr_provider_error *err)
{
	const struct cmd_config *cfg = &inst->cfg;
	cJSON *request = NULL, *result = NULL, *env = NULL;
	struct pipe_guard guard;
	int rc = -1;

	*res = (struct jr_provider_exec_result){ .exit_code = -1 };
	if (!args || args->size < sizeof(*args) || !args->argv || !args->argv[0])
		return fail(cfg, err, EINVAL, "no command");
	size_t argc = 0;
	while (args->argv[argc])
		argc++;
	if (argc > INT_MAX)
		return fail(cfg, err, E2BIG, "too many arguments");

	request = new_request(inst);
	cJSON *argv = cJSON_CreateStringArray((const char *const *)args->argv, (int)argc);
	bool ok = request && add_item(request, "argv", argv);
	if (!ok && !request)
		cJSON_Delete(argv);
	env = ok ? cJSON_CreateObject() : NULL;
	ok = ok && env;
	for (char *const *e = args->envp; ok && e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue; /* not NAME=VALUE: no environment variable either */
		char name[4096];
		size_t nlen = (size_t)(eq - *e);
		if (nlen == 0 || nlen >= sizeof(name))
			continue; /* no getenv() finds such a name either */
		memcpy(name, *e, nlen);
		name[nlen] = '\0';
		cJSON *v = cJSON_CreateString(eq + 1);
		if (!v)
			ok = false;
		else if (cJSON_GetObjectItemCaseSensitive(env, name)) /* the last one is what getenv sees */
			ok = cJSON_ReplaceItemInObjectCaseSensitive(env, name, v) || (cJSON_Delete(v), false);
		else
			ok = add_item(env, name, v);
	}
	if (ok) {
		ok = add_item(request, "env", env);
		env = NULL;
	}
	ok = ok && add_item(request, "cwd", cJSON_CreateString(args->cwd ? args->cwd : inst->workspace)) &&
	     add_item(request, "timeoutMs", u64_or_null(args->timeout_ms)) &&
	     add_item(request, "maxOutputBytes", u64_or_null(args->max_output_bytes)) &&
	     add_item(request, "network",
		      inst->network ? cJSON_Duplicate(inst->network, 1) : cJSON_CreateNull()) &&
	     add_item(request, "limits",
		      inst->limits ? cJSON_Duplicate(inst->limits, 1) : cJSON_CreateNull()) &&
	     add_item(request, "stdoutFd", cJSON_CreateNumber(CMD_STDOUT_FD)) &&
	     add_item(request, "stderrFd", cJSON_CreateNumber(CMD_STDERR_FD));
	cJSON_Delete(env);
	if (!ok) {
		fail(cfg, err, ENOMEM, "out of memory");
		goto out_free;
	}

	struct run_io io = { .stdin_fd = args->stdin_fd,
			     .stdout_fd = args->stdout_fd,
			     .stderr_fd = args->stderr_fd,
			     .max_output = args->max_output_bytes };
	/* The command's own time limit is the program's to enforce where the
	 * command runs; the program is killed only when it overstays that by
	 * the grace period, and without a limit it may run as long as the
	 * command does. */
	struct run run = { .operation = "exec", .io = &io };
	if (args->timeout_ms)
		run.limit_ms = args->timeout_ms > UINT64_MAX - cfg->grace_ms ? UINT64_MAX
									: args->timeout_ms + cfg->grace_ms;
	pipe_guard_begin(&guard);
	result = run_program(cfg, &run, request, err);
	if (!result)
		goto out;
	if (run.timed_out) {
		log_line(cfg, "command: %s exec: the command overstayed its %llu ms limit by %llu s; "
			      "killed the program (the backend may still run the command)",
			 program_name(cfg), (unsigned long long)args->timeout_ms,
			 (unsigned long long)(cfg->grace_ms / 1000));
		res->exit_code = -1;
		res->signal = SIGKILL;
		res->timed_out = true;
		res->truncated = io.truncated;
		rc = 0;
		goto out;
	}
	if (write_output_field(cfg, &run, 0, result, err) < 0 ||
	    write_output_field(cfg, &run, 1, result, err) < 0)
		goto out;

	const cJSON *code = cJSON_GetObjectItemCaseSensitive(result, "exitCode");
	const cJSON *sig = cJSON_GetObjectItemCaseSensitive(result, "signal");
	const cJSON *tmo = cJSON_GetObjectItemCaseSensitive(result, "timedOut");
	const cJSON *trn = cJSON_GetObjectItemCaseSensitive(result, "truncated");
	int64_t v;
	if (sig && !cJSON_IsNull(sig)) {
		if (!json_int(sig, 0, 64, &v)) {
			fail(cfg, err, 0, "the answer's \"signal\" is not a signal number");
			goto out;
		}
		res->signal = (int)v;
	}
	if ((tmo && !cJSON_IsBool(tmo) && !cJSON_IsNull(tmo)) ||
	    (trn && !cJSON_IsBool(trn) && !cJSON_IsNull(trn))) {
		fail(cfg, err, 0, "the answer's \"timedOut\" and \"truncated\" are true or false");
		goto out;
	}
	res->timed_out = cJSON_IsTrue(tmo);
	res->truncated = io.truncated || cJSON_IsTrue(trn);
	if (code && !cJSON_IsNull(code)) {
		if (!json_int(code, 0, 255, &v)) {
			fail(cfg, err, 0, "the answer's \"exitCode\" is not 0..255");
			goto out;
		}
		res->exit_code = (int)v;
	} else if (!res->signal && !res->timed_out) {
		fail(cfg, err, 0, "the answer has no \"exitCode\" (nor \"signal\" or \"timedOut\")");
		goto out;
	}
	rc = 0;
out:
	pipe_guard_end(&guard);
out_free:
	cJSON_Delete(request);
	cJSON_Delete(result);
	return rc;
}

/* ---- files ---------------------------------------------------------------- */

static int cmd_read_file(jr_provider_instance_t *inst, const char *path, uint64_t max_bytes,
			 void **data, size_t *len, struct jr_provider_error *err)
{
	const struct cmd_config *cfg = &inst->cfg;
	cJSON *r = path_request(inst, path);
	if (r && !add_item(r, "maxBytes", u64_or_null(max_bytes))) {
		cJSON_Delete(r);
		r = NULL;
	}
	cJSON *result = call(inst, "read_file", r, err);
	if (!result)
		return -1;
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(result, "contentBase64");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(result, "content");
	unsigned char *d = NULL;
	size_t n = 0;
	int rc = -1;
	if (cJSON_IsString(b)) {
		if (b64_decode(b->valuestring, &d, &n) < 0) {
			fail(cfg, err, 0, "the answer's \"contentBase64\" is not base64");
			goto out;
		}
	} else if (cJSON_IsString(t)) {
		n = strlen(t->valuestring);
		if (!(d = malloc(n + 1))) {
			fail(cfg, err, ENOMEM, "out of memory");
			goto out;
		}
		memcpy(d, t->valuestring, n + 1);
	} else {
		fail(cfg, err, 0, "the answer has no \"contentBase64\"");
		goto out;
	}
	if (max_bytes && n > max_bytes) {
		fail(cfg, err, EFBIG, "%s is larger than %llu bytes", path,
		     (unsigned long long)max_bytes);
		goto out;
	}
	*data = d;
	*len = n;
	d = NULL;
	rc = 0;
out:
	free(d);
	cJSON_Delete(result);
	return rc;
}

static int cmd_write_file(jr_provider_instance_t *inst, const char *path, const void *data,
			  size_t len, uint32_t mode, struct jr_provider_error *err)
{
	char *b64 = b64_encode(data, len);
	cJSON *r = b64 ? path_request(inst, path) : NULL;
	if (r && (!add_item(r, "contentBase64", cJSON_CreateString(b64)) ||
		  !add_item(r, "mode", cJSON_CreateNumber(mode & 07777)))) {
		cJSON_Delete(r);
		r = NULL;
	}
	free(b64);
	cJSON *result = call(inst, "write_file", r, err);
	cJSON_Delete(result);
	return result ? 0 : -1;
}

static int cmd_stat(jr_provider_instance_t *inst, const char *path, struct jr_provider_stat *st,
		    struct jr_provider_error *err)
{
	const struct cmd_config *cfg = &inst->cfg;
	cJSON *result = call(inst, "stat", path_request(inst, path), err);
	if (!result)
		return -1;
	static const struct {
		const char *name;
		char type;
	} types[] = { { "file", 'f' }, { "directory", 'd' }, { "symlink", 'l' }, { "other", 'o' } };
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(result, "type");
	int64_t size, mode, mtime;
	char t = 0;
	for (size_t i = 0; cJSON_IsString(type) && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(type->valuestring, types[i].name) == 0)
			t = types[i].type;
	int rc = 0;
	/* Numbers as JSON keeps them exactly: up to 2^53. */
	const double exact = 9007199254740992.0;
	if (!t || !json_int(cJSON_GetObjectItemCaseSensitive(result, "size"), 0, exact, &size) ||
	    !json_int(cJSON_GetObjectItemCaseSensitive(result, "mode"), 0, 07777, &mode) ||
	    !json_int(cJSON_GetObjectItemCaseSensitive(result, "mtime"), -exact, exact, &mtime))
		rc = fail(cfg, err, 0,
			  "the answer is not {\"type\": \"file|directory|symlink|other\", \"size\", "
			  "\"mode\", \"mtime\"}");
	else
		*st = (struct jr_provider_stat){
			.type = t, .size = (uint64_t)size, .mode = (uint32_t)mode, .mtime = mtime
		};
	cJSON_Delete(result);
	return rc;
}

static int cmd_readdir(jr_provider_instance_t *inst, const char *path, char ***names, size_t *n,
		       struct jr_provider_error *err)
{
	const struct cmd_config *cfg = &inst->cfg;
	cJSON *result = call(inst, "readdir", path_request(inst, path), err);
	if (!result)
		return -1;
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(result, "names"), *e;
	char **v = NULL;
	size_t k = 0;
	int rc = -1;
	if (!cJSON_IsArray(list)) {
		fail(cfg, err, 0, "the answer has no \"names\" array");
		goto out;
	}
	if (!(v = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof(char *)))) {
		fail(cfg, err, ENOMEM, "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(e, list)
	{
		if (!cJSON_IsString(e) || !*e->valuestring || strchr(e->valuestring, '/')) {
			fail(cfg, err, 0,
			     "the answer's \"names\" has one that is not a non-empty string without '/'");
			goto out;
		}
		if (strcmp(e->valuestring, ".") == 0 || strcmp(e->valuestring, "..") == 0)
			continue;
		if (!(v[k] = strdup(e->valuestring))) {
			fail(cfg, err, ENOMEM, "out of memory");
			goto out;
		}
		k++;
	}
	*names = v;
	*n = k;
	v = NULL;
	rc = 0;
out:
	for (size_t i = 0; v && i < k; i++)
		free(v[i]);
	free(v);
	cJSON_Delete(result);
	return rc;
}

static int cmd_exists(jr_provider_instance_t *inst, const char *path, bool *exists,
		      struct jr_provider_error *err)
{
	cJSON *result = call(inst, "exists", path_request(inst, path), err);
	if (!result)
		return -1;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(result, "exists");
	int rc = 0;
	if (!cJSON_IsBool(v))
		rc = fail(&inst->cfg, err, 0, "the answer has no true/false \"exists\"");
	else
		*exists = cJSON_IsTrue(v);
	cJSON_Delete(result);
	return rc;
}

static int cmd_mkdir(jr_provider_instance_t *inst, const char *path, uint32_t mode, bool parents,
		     struct jr_provider_error *err)
{
	cJSON *r = path_request(inst, path);
	if (r && (!add_item(r, "mode", cJSON_CreateNumber(mode & 07777)) ||
		  !add_item(r, "parents", cJSON_CreateBool(parents)))) {
		cJSON_Delete(r);
		r = NULL;
	}
	cJSON *result = call(inst, "mkdir", r, err);
	cJSON_Delete(result);
	return result ? 0 : -1;
}

static int cmd_rm(jr_provider_instance_t *inst, const char *path, bool recursive,
		  struct jr_provider_error *err)
{
	cJSON *r = path_request(inst, path);
	if (r && !add_item(r, "recursive", cJSON_CreateBool(recursive))) {
		cJSON_Delete(r);
		r = NULL;
	}
	cJSON *result = call(inst, "rm", r, err);
	cJSON_Delete(result);
	return result ? 0 : -1;
}

/* ---- close and gc --------------------------------------------------------- */

static int cmd_close(jr_provider_instance_t *inst, struct jr_provider_error *err)
{
	if (!inst)
		return 0;
	cJSON *r = new_request(inst);
	if (r && !add_item(r, "preserve", cJSON_CreateBool(inst->preserve))) {
		cJSON_Delete(r);
		r = NULL;
	}
	cJSON *result = call(inst, "close", r, err);
	int rc = result ? 0 : -1;
	cJSON_Delete(result);
	instance_free(inst); /* whatever the program said: the instance is gone */
	return rc;
}

static int cmd_gc(const char *const *config, jr_provider_log_fn log, void *log_userdata,
		  struct jr_provider_error *err)
{
	struct cmd_config cfg;
	if (cfg_parse(config, log, log_userdata, &cfg, err) < 0)
		return -1;
	cJSON *r = cJSON_CreateObject();
	cJSON *result = NULL;
	if (!r || !add_item(r, "config", cJSON_Duplicate(cfg.public_config, 1))) {
		fail(&cfg, err, ENOMEM, "out of memory");
	} else {
		struct run run = { .operation = "gc", .limit_ms = cfg.timeout_ms };
		result = run_program(&cfg, &run, r, err);
	}
	int rc = result ? 0 : -1;
	cJSON_Delete(r);
	cJSON_Delete(result);
	cfg_free(&cfg);
	return rc;
}

static const struct jr_provider command_provider = {
	.abi_version = JR_PROVIDER_ABI_VERSION,
	.name = "command",
	.description = "runs every operation through a program of yours (program=PATH)",
	.open = cmd_open,
	.exec = cmd_exec,
	.read_file = cmd_read_file,
	.write_file = cmd_write_file,
	.stat = cmd_stat,
	.readdir = cmd_readdir,
	.exists = cmd_exists,
	.mkdir = cmd_mkdir,
	.rm = cmd_rm,
	.close = cmd_close,
	.gc = cmd_gc,
};

const struct jr_provider *jailrun_provider_v1(void)
{
	return &command_provider;
}
