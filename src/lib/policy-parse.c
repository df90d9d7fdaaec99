/* The jailrun.pol language: lexing, includes and the directives.
 *
 * One directive a line; '#' at the start of a word begins a comment; a
 * '\' ending a line continues it; "double quotes" make one word of text
 * with spaces (\" and \\ inside).  Every value is validated here, with
 * FILE:LINE:COL on any error; expanding ~ and $VARIABLES waits for
 * jr_compile, which knows the workspace and the environment. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"
#include "policy.h"
#include "syscalls.h"
#include "values.h"

#define MAX_WORDS 256
#define MAX_FILE_BYTES (1u << 20)
#define MAX_INCLUDE_DEPTH 16
#define MAX_POLICY_FILES 256

struct word {
	char *text;
	unsigned line, col;
};

struct line {
	struct word w[MAX_WORDS];
	size_t n;
};

struct parser {
	jr_policy_t *p;
	const struct jr_source *src;
	const char *dir; /* directory of the current file, NULL on the command line */
	unsigned depth;
	char *stack[MAX_INCLUDE_DEPTH + 1]; /* canonical paths being read */
	jr_error_t **err;
};

static void line_clear(struct line *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->w[i].text);
	l->n = 0;
}

static int fail_word(struct parser *ps, const struct word *w, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_word(struct parser *ps, const struct word *w, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct jr_loc loc = { ps->src, w->line, w->col };
	return jr_fail_at(ps->err, &loc, "%s", msg);
}

unsigned jr_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return UINT_MAX;
	unsigned row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* ", did you mean 'x'?" when one choice is close, else "". */
static const char *suggest(const char *word, const char *const *choices, char *buf, size_t size)
{
	unsigned best = 3;
	const char *pick = NULL;
	for (const char *const *c = choices; *c; c++) {
		unsigned d = jr_edit_distance(word, *c);
		if (d < best) {
			best = d;
			pick = *c;
		}
	}
	if (!pick)
		return "";
	snprintf(buf, size, ", did you mean '%s'?", pick);
	return buf;
}

/* Which of choices the word is; an error listing them otherwise. */
static int keyword(struct parser *ps, const struct word *w, const char *what,
		   const char *const *choices)
{
	for (int i = 0; choices[i]; i++)
		if (strcmp(w->text, choices[i]) == 0)
			return i;
	char hint[128], list[256] = "";
	for (const char *const *c = choices; *c; c++) {
		strncat(list, *c, sizeof(list) - strlen(list) - 3);
		if (c[1])
			strncat(list, ", ", sizeof(list) - strlen(list) - 1);
	}
	fail_word(ps, w, "unknown %s '%s'%s (expected %s)", what, w->text,
		  suggest(w->text, choices, hint, sizeof(hint)), list);
	return -1;
}

/* ---- lexing ---------------------------------------------------------- */

static int push_word(struct parser *ps, struct line *l, const char *buf, size_t len,
		     unsigned lineno, unsigned col)
{
	if (l->n == MAX_WORDS) {
		struct word w = { NULL, lineno, col };
		return fail_word(ps, &w, "more than %d words in one directive", MAX_WORDS);
	}
	char *text = strndup(buf, len);
	if (!text)
		return jr_fail_oom(ps->err);
	l->w[l->n++] = (struct word){ text, lineno, col };
	return 0;
}

/* Where the directive's text ends: at a '#' that starts a word outside
 * quotes (a comment), else at the end of the line. */
static size_t content_end(const char *s, size_t len)
{
	bool quoted = false;
	for (size_t i = 0; i < len; i++) {
		if (quoted) {
			if (s[i] == '\\' && i + 1 < len)
				i++;
			else if (s[i] == '"')
				quoted = false;
		} else if (s[i] == '"') {
			quoted = true;
		} else if (s[i] == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
			return i;
		}
	}
	return len;
}

/* The line's length without trailing blanks. */
static size_t len_trimmed(const char *s, size_t len)
{
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	return len;
}

/* Adds the words of one physical line to l; *continues when it ends in a
 * '\' (an odd run of them, so "\\\\" at the end is a literal one). */
static int lex_line(struct parser *ps, const char *s, size_t len, unsigned lineno, struct line *l,
		    bool *continues)
{
	char buf[4096];
	size_t i = 0;
	*continues = false;
	size_t end = content_end(s, len);
	while (end > 0 && (s[end - 1] == ' ' || s[end - 1] == '\t'))
		end--;
	size_t run = 0;
	while (run < end && s[end - 1 - run] == '\\')
		run++;
	if (run % 2 == 1 && end == len_trimmed(s, len)) {
		*continues = true;
		len = end - 1;
	}
	while (i < len) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i >= len || s[i] == '#')
			break;
		unsigned col = (unsigned)i + 1;
		size_t n = 0;
		while (i < len && s[i] != ' ' && s[i] != '\t') {
			unsigned char c = (unsigned char)s[i];
			if (c < 0x20 || c == 0x7f) {
				struct word w = { NULL, lineno, (unsigned)i + 1 };
				return fail_word(ps, &w, "control character 0x%02x in policy text", c);
			}
			if (n + 2 >= sizeof(buf)) {
				struct word w = { NULL, lineno, col };
				return fail_word(ps, &w, "word longer than %zu bytes", sizeof(buf) - 2);
			}
			if (c != '"') {
				buf[n++] = s[i++];
				continue;
			}
			unsigned open_col = (unsigned)i + 1;
			for (i++; i < len && s[i] != '"'; i++) {
				if (s[i] == '\\' && i + 1 < len && (s[i + 1] == '"' || s[i + 1] == '\\'))
					i++;
				if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f) {
					struct word w = { NULL, lineno, (unsigned)i + 1 };
					return fail_word(ps, &w, "control character in quoted text");
				}
				if (n + 2 >= sizeof(buf)) {
					struct word w = { NULL, lineno, col };
					return fail_word(ps, &w, "word longer than %zu bytes",
							 sizeof(buf) - 2);
				}
				buf[n++] = s[i];
			}
			if (i >= len) {
				struct word w = { NULL, lineno, open_col };
				return fail_word(ps, &w, "unterminated quote");
			}
			i++;
		}
		if (push_word(ps, l, buf, n, lineno, col) < 0)
			return -1;
	}
	return 0;
}

static int handle_line(struct parser *ps, struct line *l);

static int parse_text(struct parser *ps, const char *text, size_t len, unsigned first_line)
{
	struct line l = { .n = 0 };
	unsigned lineno = first_line;
	bool continues = false;
	int r = 0;
	for (size_t pos = 0; pos < len && r == 0; lineno++) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t line_len = end - pos;
		if (line_len && text[pos + line_len - 1] == '\r')
			line_len--;
		if (memchr(text + pos, '\0', line_len)) {
			struct word w = { NULL, lineno, 1 };
			r = fail_word(ps, &w, "NUL byte in policy text");
			break;
		}
		r = lex_line(ps, text + pos, line_len, lineno, &l, &continues);
		if (r == 0 && !continues && l.n)
			r = handle_line(ps, &l);
		if (!continues)
			line_clear(&l);
		pos = end + 1;
	}
	if (r == 0 && continues) {
		struct word w = { NULL, lineno - 1, 1 };
		r = fail_word(ps, &w, "'\\' continues the last line into the end of the file");
	}
	line_clear(&l);
	return r;
}

/* ---- files and the search path --------------------------------------- */

static int search_add(struct jr_policy_search *s, const char *dir, const char *suffix,
		      jr_error_t **err)
{
	if (!dir || !*dir)
		return 0;
	char **dirs = reallocarray(s->dirs, s->n + 1, sizeof(char *));
	if (!dirs)
		return jr_fail_oom(err);
	s->dirs = dirs;
	if (asprintf(&s->dirs[s->n], "%s%s", dir, suffix ? suffix : "") < 0)
		return jr_fail_oom(err);
	s->n++;
	return 0;
}

int jr_policy_search_init(struct jr_policy_search *s, jr_error_t **err)
{
	s->dirs = NULL;
	s->n = 0;
	const char *env = getenv("JAILRUN_POLICY_PATH");
	if (env) {
		_cleanup_free_ char *copy = strdup(env);
		if (!copy)
			return jr_fail_oom(err);
		char *save = NULL;
		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
			if (search_add(s, d, NULL, err) < 0)
				return -1;
	}
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (home && search_add(s, home, "/.config/jailrun/policy", err) < 0)
		return -1;
	if (search_add(s, JR_SYSCONFDIR "/jailrun/policy", NULL, err) < 0)
		return -1;
	return search_add(s, JR_POLICYDIR, NULL, err);
}

void jr_policy_search_free(struct jr_policy_search *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->dirs[i]);
	free(s->dirs);
	s->dirs = NULL;
	s->n = 0;
}

static bool is_regular_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir/name, then dir/name.pol. */
static char *find_in(const char *dir, const char *name)
{
	char *path = NULL;
	if (asprintf(&path, "%s/%s", dir, name) >= 0 && is_regular_file(path))
		return path;
	free(path);
	path = NULL;
	if (asprintf(&path, "%s/%s.pol", dir, name) >= 0 && is_regular_file(path))
		return path;
	free(path);
	return NULL;
}

/* A file name with a '/' is a path (relative to dir when given); a bare
 * name is looked up beside the including file, then in the search path. */
static int locate(const char *name, const char *dir, char **out, jr_error_t **err)
{
	if (strchr(name, '/')) {
		if (name[0] == '/' || !dir)
			*out = strdup(name);
		else if (asprintf(out, "%s/%s", dir, name) < 0)
			*out = NULL;
		return *out ? 0 : jr_fail_oom(err);
	}
	if (dir && (*out = find_in(dir, name)))
		return 0;
	struct jr_policy_search s;
	if (jr_policy_search_init(&s, err) < 0) {
		jr_policy_search_free(&s);
		return -1;
	}
	for (size_t i = 0; i < s.n; i++)
		if ((*out = find_in(s.dirs[i], name))) {
			jr_policy_search_free(&s);
			return 0;
		}
	char list[2048] = "";
	for (size_t i = 0; i < s.n; i++) {
		strncat(list, s.dirs[i], sizeof(list) - strlen(list) - 3);
		if (i + 1 < s.n)
			strncat(list, ":", sizeof(list) - strlen(list) - 1);
	}
	jr_policy_search_free(&s);
	return jr_fail(err, ENOENT, "policy '%s' not found in %s%s%s", name, dir ? dir : "",
		       dir ? ":" : "", list);
}

static int read_file(const char *path, char **text, size_t *len, jr_error_t **err)
{
	/* Look before opening for reading: opening a FIFO would block and
	 * opening a device can have effects of its own. */
	_cleanup_close_ int handle = open(path, O_PATH | O_CLOEXEC);
	if (handle < 0)
		return jr_fail(err, errno, "policy %s", path);
	struct stat st;
	if (fstat(handle, &st) < 0)
		return jr_fail(err, errno, "policy %s", path);
	if (!S_ISREG(st.st_mode))
		return jr_fail(err, 0, "policy %s: not a regular file", path);
	char via[64];
	snprintf(via, sizeof(via), "/proc/self/fd/%d", handle);
	_cleanup_close_ int fd = open(via, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return jr_fail(err, errno, "policy %s", path);
	if (st.st_size > MAX_FILE_BYTES)
		return jr_fail(err, EFBIG, "policy %s (more than %u bytes)", path, MAX_FILE_BYTES);
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return jr_fail_oom(err);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
}

static char *dir_of(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return NULL;
	char *slash = strrchr(copy, '/');
	if (!slash) {
		free(copy);
		return strdup(".");
	}
	if (slash == copy)
		slash[1] = '\0';
	else
		*slash = '\0';
	return copy;
}

/* at: the include directive's word, or NULL for the top-level file. */
static int parse_file(struct parser *ps, const char *path, const char *included_from,
		      const struct word *at)
{
	_cleanup_free_ char *canonical = realpath(path, NULL);
	if (!canonical)
		return at ? fail_word(ps, at, "include %s: %s", path, strerror(errno))
			  : jr_fail(ps->err, errno, "policy %s", path);
	for (unsigned i = 0; i < ps->depth; i++)
		if (strcmp(ps->stack[i], canonical) == 0)
			return fail_word(ps, at, "include cycle: %s is already being read", path);
	if (ps->depth >= MAX_INCLUDE_DEPTH)
		return fail_word(ps, at, "include %s: includes nested deeper than %d", path,
				 MAX_INCLUDE_DEPTH);

	/* Includes may repeat a file (a diamond), but not without bound:
	 * ten includes of ten includes of ... is exponential. */
	if (ps->p->n_sources >= MAX_POLICY_FILES)
		return fail_word(ps, at, "include %s: more than %d policy files read in all", path,
				 MAX_POLICY_FILES);
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *dir = dir_of(path);
	size_t len = 0;
	if (!dir)
		return jr_fail_oom(ps->err);
	jr_error_t *why = NULL;
	if (read_file(path, &text, &len, at ? &why : ps->err) < 0) {
		if (why) {
			fail_word(ps, at, "include: %s", why->message);
			jr_error_free(why);
		}
		return -1;
	}
	struct jr_source *src = jr_policy_add_source(ps->p, path, canonical, included_from, ps->err);
	if (!src)
		return -1;
	/* Framed, so no two different sets of files hash alike. */
	char head[64];
	int n = snprintf(head, sizeof(head), "file %zu %zu\n", strlen(canonical), len);
	jr_sha256_update(&ps->p->digest, head, (size_t)n);
	jr_sha256_update(&ps->p->digest, canonical, strlen(canonical));
	jr_sha256_update(&ps->p->digest, text, len);

	struct parser saved = *ps;
	ps->stack[ps->depth++] = canonical;
	ps->src = src;
	ps->dir = dir;
	int r = parse_text(ps, text, len, 1);
	ps->src = saved.src;
	ps->dir = saved.dir;
	ps->depth = saved.depth;
	return r;
}

/* ---- argument helpers ----------------------------------------------- */

static bool var_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Paths: absolute, or starting with ~ or a variable; variables are
 * $WORKSPACE, $HOME, $TMPDIR or ${ENV_NAME}. */
static int check_path(struct parser *ps, const struct word *w, const char *path)
{
	if (!*path)
		return fail_word(ps, w, "empty path");
	if (path[0] == '~' && path[1] && path[1] != '/')
		return fail_word(ps, w, "'%s': only ~ and ~/ are supported, not ~user", path);
	if (path[0] != '/' && path[0] != '~' && path[0] != '$')
		return fail_word(ps, w,
				 "'%s': a path must be absolute or start with ~ or a variable ($WORKSPACE, $HOME, $TMPDIR, ${NAME})",
				 path);
	for (const char *c = path; (c = strchr(c, '$')); c++) {
		if (c[1] == '{') {
			const char *close = strchr(c, '}');
			const char *n = c + 2;
			while (n < (close ? close : n) && var_name_char(*n))
				n++;
			if (!close || n != close || close == c + 2)
				return fail_word(ps, w, "'%s': malformed ${NAME}", path);
			continue;
		}
		const char *n = c + 1;
		while (var_name_char(*n))
			n++;
		size_t len = (size_t)(n - c - 1);
		if (!((len == 9 && !strncmp(c + 1, "WORKSPACE", 9)) ||
		      (len == 4 && !strncmp(c + 1, "HOME", 4)) ||
		      (len == 6 && !strncmp(c + 1, "TMPDIR", 6))))
			return fail_word(ps, w,
					 "'%s': unknown variable '$%.*s' (use $WORKSPACE, $HOME, $TMPDIR, or ${NAME} for an environment variable)",
					 path, (int)len, c + 1);
	}
	return 0;
}

/* Strips a leading '!' (removal) from a list item. */
static const char *list_item(const struct word *w, bool *remove)
{
	*remove = w->text[0] == '!';
	return w->text + *remove;
}

static int need_args(struct parser *ps, const struct line *l, size_t min, size_t max,
		     const char *usage)
{
	if (l->n - 1 < min || l->n - 1 > max) {
		const struct word *at = l->n - 1 < min ? &l->w[0] : &l->w[max + 1];
		return fail_word(ps, at, "%s: usage: %s", l->w[0].text, usage);
	}
	return 0;
}

static struct jr_loc loc_of(struct parser *ps, const struct word *w)
{
	return (struct jr_loc){ ps->src, w->line, w->col };
}

static void set_scalar(struct parser *ps, struct jr_setting *s, const struct word *w)
{
	s->set = true;
	s->loc = loc_of(ps, w);
}

/* ---- directives ------------------------------------------------------ */

static int d_include(struct parser *ps, struct line *l)
{
	if (need_args(ps, l, 1, 1, "include FILE") < 0)
		return -1;
	_cleanup_free_ char *path = NULL;
	jr_error_t *inner = NULL;
	if (!*l->w[1].text)
		return fail_word(ps, &l->w[1], "include: empty file name");
	if (locate(l->w[1].text, ps->dir, &path, &inner) < 0) {
		fail_word(ps, &l->w[1], "%s", inner ? inner->message : "include failed");
		jr_error_free(inner);
		return -1;
	}
	_cleanup_free_ char *from = NULL;
	if (asprintf(&from, "%s:%u%s%s", ps->src->name, l->w[0].line,
		     ps->src->included_from ? ", " : "",
		     ps->src->included_from ? ps->src->included_from : "") < 0)
		return jr_fail_oom(ps->err);
	return parse_file(ps, path, from, &l->w[1]);
}

static const char *const ws_modes[] = { "rw", "ro", "overlay", NULL };

static int d_workspace(struct parser *ps, struct line *l)
{
	if (need_args(ps, l, 0, 2, "workspace [PATH] [rw|ro|overlay]") < 0)
		return -1;
	size_t i = 1;
	if (i < l->n) {
		bool is_mode = false;
		for (const char *const *m = ws_modes; *m; m++)
			is_mode |= strcmp(l->w[i].text, *m) == 0;
		if (!is_mode) {
			/* "." is the directory jailrun runs in (the default). */
			bool cwd = !strcmp(l->w[i].text, ".");
			if ((!cwd && check_path(ps, &l->w[i], l->w[i].text) < 0) ||
			    jr_policy_set_string(&ps->p->workspace, cwd ? NULL : l->w[i].text,
						 ps->err) < 0)
				return -1;
			i++;
		}
	}
	if (i < l->n) {
		int m = keyword(ps, &l->w[i], "workspace mode", ws_modes);
		if (m < 0)
			return -1;
		ps->p->workspace_mode = (enum jr_workspace_mode)m;
		i++;
	}
	if (i < l->n)
		return fail_word(ps, &l->w[i], "workspace: unexpected '%s'", l->w[i].text);
	set_scalar(ps, &ps->p->workspace_s, &l->w[0]);
	return 0;
}

static int add_path_list(struct parser *ps, struct line *l, enum jr_fs_kind kind, bool allow_optional)
{
	if (l->n < 2)
		return fail_word(ps, &l->w[0], "%s: usage: %s PATH...", l->w[0].text, l->w[0].text);
	for (size_t i = 1; i < l->n; i++) {
		struct jr_fs_entry e = { .kind = kind, .loc = loc_of(ps, &l->w[i]) };
		_cleanup_free_ char *path = strdup(list_item(&l->w[i], &e.remove));
		if (!path)
			return jr_fail_oom(ps->err);
		size_t len = strlen(path);
		if (len > 1 && path[len - 1] == '?') {
			if (!allow_optional)
				return fail_word(ps, &l->w[i], "%s: 'PATH?' (optional) does not apply to exec",
						 l->w[0].text);
			path[--len] = '\0';
			e.optional = true;
		}
		while (len > 1 && path[len - 1] == '/') {
			path[--len] = '\0';
			e.dir = true;
		}
		if (check_path(ps, &l->w[i], path) < 0)
			return -1;
		e.path = path;
		if (jr_policy_add_fs(ps->p, &e, ps->err) < 0)
			return -1;
	}
	return 0;
}

static int d_ro(struct parser *ps, struct line *l) { return add_path_list(ps, l, JR_FS_RO, true); }
static int d_rw(struct parser *ps, struct line *l) { return add_path_list(ps, l, JR_FS_RW, true); }
static int d_mask(struct parser *ps, struct line *l) { return add_path_list(ps, l, JR_FS_MASK, true); }
static int d_protect(struct parser *ps, struct line *l) { return add_path_list(ps, l, JR_FS_PROTECT, true); }
static int d_exec(struct parser *ps, struct line *l) { return add_path_list(ps, l, JR_FS_EXEC, false); }

static int d_tmpfs(struct parser *ps, struct line *l)
{
	if (need_args(ps, l, 1, 3, "tmpfs PATH [size=SIZE] [mode=OCTAL]") < 0)
		return -1;
	struct jr_fs_entry e = { .kind = JR_FS_TMPFS, .loc = loc_of(ps, &l->w[1]) };
	const char *path = list_item(&l->w[1], &e.remove);
	size_t plen = strlen(path);
	if (plen > 1 && path[plen - 1] == '?')
		return fail_word(ps, &l->w[1], "tmpfs: 'PATH?' (optional) does not apply: a tmpfs needs no source");
	if (check_path(ps, &l->w[1], path) < 0)
		return -1;
	for (size_t i = 2; i < l->n; i++) {
		const char *opt = l->w[i].text;
		if (!strncmp(opt, "size=", 5)) {
			if (!jr_parse_size(opt + 5, &e.size))
				return fail_word(ps, &l->w[i], "tmpfs: bad size '%s' (e.g. 512M, 2G)", opt + 5);
		} else if (!strncmp(opt, "mode=", 5)) {
			if (!jr_parse_mode(opt + 5, &e.mode))
				return fail_word(ps, &l->w[i], "tmpfs: bad mode '%s' (octal, e.g. 0755)", opt + 5);
			e.has_mode = true;
		} else {
			return fail_word(ps, &l->w[i], "tmpfs: unknown option '%s' (size=SIZE, mode=OCTAL)", opt);
		}
	}
	e.path = (char *)path;
	return jr_policy_add_fs(ps->p, &e, ps->err);
}

static int d_home(struct parser *ps, struct line *l)
{
	static const char *const modes[] = { "tmpfs", "ro", "rw", NULL };
	if (need_args(ps, l, 1, 1, "home tmpfs|ro|rw") < 0)
		return -1;
	int m = keyword(ps, &l->w[1], "home mode", modes);
	if (m < 0)
		return -1;
	ps->p->home = (enum jr_home_mode)m;
	set_scalar(ps, &ps->p->home_s, &l->w[0]);
	return 0;
}

static int d_net(struct parser *ps, struct line *l)
{
	static const char *const modes[] = { "none", "host", "proxy", "pasta", NULL };
	if (need_args(ps, l, 1, 1, "net none|host|proxy|pasta") < 0)
		return -1;
	int m = keyword(ps, &l->w[1], "network mode", modes);
	if (m < 0)
		return -1;
	ps->p->net = (enum jr_net_mode)m;
	set_scalar(ps, &ps->p->net_s, &l->w[0]);
	return 0;
}

static int d_allow(struct parser *ps, struct line *l)
{
	static const char *const kinds[] = { "host", "cidr", "connect", "bind", NULL };
	if (l->n < 3)
		return fail_word(ps, &l->w[0], "allow: usage: allow host|cidr|connect|bind VALUE...");
	int k = keyword(ps, &l->w[1], "allow kind", kinds);
	if (k < 0)
		return -1;
	for (size_t i = 2; i < l->n; i++) {
		bool remove;
		const char *v = list_item(&l->w[i], &remove);
		struct jr_host_pattern hp;
		struct jr_cidr cidr;
		uint16_t port;
		bool ok = k == 0 ? jr_parse_host_pattern(v, &hp)
			: k == 1 ? jr_parse_cidr(v, &cidr)
				 : jr_parse_port(v, &port);
		if (!ok)
			return fail_word(ps, &l->w[i], "allow %s: bad value '%s' (%s)", kinds[k], v,
					 k == 0 ? "a host name or *.domain, optionally :PORT"
					 : k == 1 ? "a CIDR such as 10.0.0.0/8 or 10.0.0.0/8:443, [fd00::/8]:443"
						  : "a port number 1-65535");
		struct jr_loc loc = loc_of(ps, &l->w[i]);
		if (jr_policy_add_str(ps->p, (enum jr_list_id)(JR_LIST_ALLOW_HOST + k), v, remove, &loc,
				      ps->err) < 0)
			return -1;
	}
	return 0;
}

/* provider NAME [KEY=VALUE...]: configuration for a provider plugin,
 * used when --provider NAME selects it (jailrun-provider(7)). */
static int d_provider(struct parser *ps, struct line *l)
{
	if (l->n < 2)
		return fail_word(ps, &l->w[0], "provider: usage: provider NAME [KEY=VALUE...]");
	const char *name = l->w[1].text;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
			return fail_word(ps, &l->w[1], "provider: bad name '%s' (a-z, 0-9, - and _)", name);
	for (size_t i = 2; i < l->n; i++) {
		const char *kv = l->w[i].text;
		const char *eq = strchr(kv, '=');
		if (!eq || eq == kv)
			return fail_word(ps, &l->w[i], "provider %s: '%s' is not KEY=VALUE", name, kv);
		char *entry = NULL;
		if (asprintf(&entry, "%s %s", name, kv) < 0)
			return jr_fail_oom(ps->err);
		struct jr_loc loc = loc_of(ps, &l->w[i]);
		int r = jr_policy_add_str(ps->p, JR_LIST_PROVIDER, entry, false, &loc, ps->err);
		free(entry);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* resolve NAME:ADDR...: the egress proxy's answer for NAME (--resolve). */
static int d_resolve(struct parser *ps, struct line *l)
{
	if (l->n < 2)
		return fail_word(ps, &l->w[0], "resolve: usage: resolve NAME:ADDRESS...");
	for (size_t i = 1; i < l->n; i++) {
		bool remove;
		const char *v = list_item(&l->w[i], &remove);
		struct jr_egress_pin pin;
		if (!jr_parse_pin(v, &pin))
			return fail_word(ps, &l->w[i], "resolve: bad value '%s' (NAME:ADDRESS, e.g. example.com:192.0.2.7 or example.com:2001:db8::7)", v);
		struct jr_loc loc = loc_of(ps, &l->w[i]);
		if (jr_policy_add_str(ps->p, JR_LIST_RESOLVE, v, remove, &loc, ps->err) < 0)
			return -1;
	}
	return 0;
}

static int d_env(struct parser *ps, struct line *l)
{
	static const char *const kinds[] = { "inherit", "clear", "keep", "scrub", "set", NULL };
	if (l->n < 2)
		return fail_word(ps, &l->w[0], "env: usage: env inherit|clear | env keep|scrub GLOB... | env set NAME=VALUE...");
	int k = keyword(ps, &l->w[1], "env setting", kinds);
	if (k < 0)
		return -1;
	if (k <= 1) {
		if (need_args(ps, l, 1, 1, "env inherit|clear") < 0)
			return -1;
		ps->p->env = k == 0 ? JR_ENV_INHERIT : JR_ENV_CLEAR;
		set_scalar(ps, &ps->p->env_s, &l->w[0]);
		return 0;
	}
	if (l->n < 3)
		return fail_word(ps, &l->w[1], "env %s: needs at least one %s", kinds[k],
				 k == 4 ? "NAME=VALUE" : "name or glob");
	for (size_t i = 2; i < l->n; i++) {
		bool remove;
		const char *v = list_item(&l->w[i], &remove);
		if (k == 4) {
			const char *eq = strchr(v, '=');
			_cleanup_free_ char *name = strndup(v, eq ? (size_t)(eq - v) : strlen(v));
			if (!name)
				return jr_fail_oom(ps->err);
			if ((!eq && !remove) || (eq && remove) || !jr_env_name_valid(name))
				return fail_word(ps, &l->w[i], "env set: '%s' is not NAME=VALUE%s", v,
						 remove ? " (remove with !NAME)" : "");
		} else if (!jr_env_glob_valid(v)) {
			return fail_word(ps, &l->w[i], "env %s: '%s' is not a variable name or glob (letters, digits, _, * and ?)",
					 kinds[k], v);
		}
		struct jr_loc loc = loc_of(ps, &l->w[i]);
		enum jr_list_id list = k == 2 ? JR_LIST_ENV_KEEP : k == 3 ? JR_LIST_ENV_SCRUB : JR_LIST_ENV_SET;
		if (jr_policy_add_str(ps->p, list, v, remove, &loc, ps->err) < 0)
			return -1;
	}
	return 0;
}

static int d_user(struct parser *ps, struct line *l)
{
	if (need_args(ps, l, 1, 1, "user same|root|UID[:GID]") < 0)
		return -1;
	const char *v = l->w[1].text;
	jr_policy_t *p = ps->p;
	if (!strcmp(v, "same")) {
		p->user = JR_USER_SAME;
	} else if (!strcmp(v, "root")) {
		p->user = JR_USER_ROOT;
	} else {
		char uid[16] = "", *colon = strchr(v, ':');
		size_t n = colon ? (size_t)(colon - v) : strlen(v);
		uint64_t u, g;
		if (n >= sizeof(uid))
			return fail_word(ps, &l->w[1], "user: bad uid in '%s'", v);
		memcpy(uid, v, n);
		uid[n] = '\0';
		if (!jr_parse_u64(uid, 0, 4294967294u, &u) ||
		    (colon && !jr_parse_u64(colon + 1, 0, 4294967294u, &g)))
			return fail_word(ps, &l->w[1], "user: '%s' is not same, root or UID[:GID]", v);
		p->user = JR_USER_ID;
		p->user_uid = (uid_t)u;
		p->user_gid = colon ? (gid_t)g : (gid_t)u;
	}
	set_scalar(ps, &p->user_s, &l->w[0]);
	return 0;
}

static int d_hostname(struct parser *ps, struct line *l)
{
	if (need_args(ps, l, 1, 1, "hostname NAME") < 0)
		return -1;
	if (!jr_hostname_valid(l->w[1].text))
		return fail_word(ps, &l->w[1], "hostname '%s': use 1-64 letters, digits, '-' and '.'",
				 l->w[1].text);
	if (jr_policy_set_string(&ps->p->hostname, l->w[1].text, ps->err) < 0)
		return -1;
	set_scalar(ps, &ps->p->hostname_s, &l->w[0]);
	return 0;
}

static int d_caps(struct parser *ps, struct line *l)
{
	static const char *const kinds[] = { "none", "keep", NULL };
	if (l->n < 2)
		return fail_word(ps, &l->w[0], "caps: usage: caps none | caps keep CAP...");
	int k = keyword(ps, &l->w[1], "caps setting", kinds);
	if (k < 0)
		return -1;
	if (k == 0 && need_args(ps, l, 1, 1, "caps none") < 0)
		return -1;
	if (k == 1 && l->n < 3)
		return fail_word(ps, &l->w[1], "caps keep: name at least one capability");
	for (size_t i = 2; i < l->n; i++) {
		bool remove;
		const char *v = list_item(&l->w[i], &remove);
		/* CAP_CHOWN, cap_chown or chown; stored as cap_chown. */
		char name[64] = "cap_";
		const char *bare = strncasecmp(v, "cap_", 4) ? v : v + 4;
		bool ok = *bare && strlen(bare) < sizeof(name) - 5;
		for (const char *c = bare; ok && *c; c++)
			ok = isalpha((unsigned char)*c) || *c == '_';
		for (size_t j = 0; ok && bare[j]; j++)
			name[4 + j] = (char)tolower((unsigned char)bare[j]);
		if (ok)
			name[4 + strlen(bare)] = '\0';
		cap_value_t cap;
		if (!ok || cap_from_name(name, &cap) < 0)
			return fail_word(ps, &l->w[i], "caps keep: unknown capability '%s'", v);
		struct jr_loc loc = loc_of(ps, &l->w[i]);
		if (jr_policy_add_str(ps->p, JR_LIST_CAPS_KEEP, name, remove, &loc, ps->err) < 0)
			return -1;
	}
	ps->p->caps = k == 0 ? JR_CAPS_NONE : JR_CAPS_KEEP;
	set_scalar(ps, &ps->p->caps_s, &l->w[0]);
	return 0;
}

static int d_limit(struct parser *ps, struct line *l)
{
	static const char *const kinds[] = { "memory", "pids", "cpu", "time", "nofile",
					     "fsize",  "core", "output", "kill-after", NULL };
	if (need_args(ps, l, 2, 2, "limit memory|pids|cpu|time|nofile|fsize|core|output|kill-after VALUE") < 0)
		return -1;
	int k = keyword(ps, &l->w[1], "limit", kinds);
	if (k < 0)
		return -1;
	const char *v = l->w[2].text;
	struct jr_limit *lim = &ps->p->limits[k];
	bool ok;
	switch ((enum jr_limit_id)k) {
	case JR_LIMIT_PIDS: ok = jr_parse_u64(v, 1, 4194304, &lim->value); break;
	case JR_LIMIT_NOFILE: ok = jr_parse_u64(v, 3, 1048576, &lim->value); break;
	case JR_LIMIT_CPU: ok = jr_parse_cpus(v, &lim->value); break;
	case JR_LIMIT_TIME:
	case JR_LIMIT_KILL_AFTER: ok = jr_parse_duration_ms(v, &lim->value); break;
	case JR_LIMIT_CORE: ok = !strcmp(v, "0") ? (lim->value = 0, true) : jr_parse_size(v, &lim->value); break;
	default: ok = jr_parse_size(v, &lim->value); break;
	}
	if (!ok)
		return fail_word(ps, &l->w[2], "limit %s: bad value '%s' (%s)", kinds[k], v,
				 k == JR_LIMIT_PIDS ? "a count 1-4194304"
				 : k == JR_LIMIT_NOFILE ? "a count 3-1048576"
				 : k == JR_LIMIT_CPU ? "cores, e.g. 1 or 1.5"
				 : k == JR_LIMIT_TIME || k == JR_LIMIT_KILL_AFTER ? "seconds, or 90s, 2m, 1h, 500ms"
						      : "a size such as 512M or 2G");
	set_scalar(ps, &lim->s, &l->w[0]);
	return 0;
}

/* "errno NAME" | "kill" | "log" (and "allow" for seccomp default). */
static int sc_action(struct parser *ps, struct line *l, size_t *i, bool allow_ok,
		     enum jr_sc_action *action, int *errnum)
{
	const struct word *w = &l->w[*i];
	if (!strcmp(w->text, "kill")) {
		*action = JR_SC_KILL;
	} else if (!strcmp(w->text, "log")) {
		*action = JR_SC_LOG;
	} else if (allow_ok && !strcmp(w->text, "allow")) {
		*action = JR_SC_ALLOW;
	} else if (!strcmp(w->text, "errno")) {
		if (*i + 1 >= l->n)
			return fail_word(ps, w, "errno: name the error, e.g. errno EPERM");
		(*i)++;
		*errnum = jr_errno_from_name(l->w[*i].text);
		if (*errnum < 0)
			return fail_word(ps, &l->w[*i], "unknown errno name '%s' (e.g. EPERM, ENOSYS)",
					 l->w[*i].text);
		*action = JR_SC_ERRNO;
	} else {
		return fail_word(ps, w, "unknown seccomp action '%s' (errno NAME, kill, log%s)", w->text,
				 allow_ok ? ", allow" : "");
	}
	(*i)++;
	return 0;
}

static int sc_value(struct parser *ps, const struct word *w, uint64_t *out)
{
	_cleanup_free_ char *copy = strdup(w->text);
	if (!copy)
		return jr_fail_oom(ps->err);
	*out = 0;
	char *save = NULL;
	if (!copy[0] || copy[0] == '|' || copy[strlen(copy) - 1] == '|' || strstr(copy, "||"))
		return fail_word(ps, w, "bad value '%s' (numbers or constants joined by |)", w->text);
	for (char *part = strtok_r(copy, "|", &save); part; part = strtok_r(NULL, "|", &save)) {
		uint64_t v;
		char *end;
		errno = 0;
		if (isdigit((unsigned char)part[0])) {
			/* Decimal, or hex with 0x: a leading 0 is not octal here. */
			bool hex = part[0] == '0' && (part[1] == 'x' || part[1] == 'X');
			v = strtoull(hex ? part + 2 : part, &end, hex ? 16 : 10);
			if (hex && !part[2])
				return fail_word(ps, w, "bad number '%s'", part);
			if (errno || *end)
				return fail_word(ps, w, "bad number '%s'", part);
		} else if (!jr_constant_lookup(part, &v)) {
			return fail_word(ps, w, "unknown constant '%s' (a number, or e.g. TIOCSTI, CLONE_NEWUSER, AF_NETLINK)",
					 part);
		}
		*out |= v;
	}
	return 0;
}

/* "if argN OP VALUE [and argN OP VALUE]...", OP one of == != < <= > >= &
 * ("argN & MASK" means all of MASK's bits set; "argN & MASK == V" too). */
static int sc_conditions(struct parser *ps, struct line *l, size_t i, struct jr_sc_rule *r)
{
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=", "&", NULL };
	for (;;) {
		if (i + 2 >= l->n)
			return fail_word(ps, &l->w[l->n - 1], "seccomp condition: expected argN OP VALUE");
		const char *a = l->w[i].text;
		if (strncmp(a, "arg", 3) || a[3] < '0' || a[3] > '5' || a[4])
			return fail_word(ps, &l->w[i], "seccomp condition: '%s' is not arg0..arg5", a);
		if (r->n_conds == 6)
			return fail_word(ps, &l->w[i], "seccomp: at most 6 conditions");
		struct jr_sc_cond *c = &r->conds[r->n_conds++];
		c->arg = (unsigned)(a[3] - '0');
		int op = keyword(ps, &l->w[i + 1], "comparison", ops);
		if (op < 0 || sc_value(ps, &l->w[i + 2], &c->value) < 0)
			return -1;
		c->op = op == 6 ? JR_CMP_MASKED_EQ : (typeof(c->op))op;
		i += 3;
		if (op == 6) {
			c->mask = c->value;
			if (i + 1 < l->n && !strcmp(l->w[i].text, "==")) {
				if (sc_value(ps, &l->w[i + 1], &c->value) < 0)
					return -1;
				i += 2;
			}
		}
		if (i == l->n)
			return 0;
		if (strcmp(l->w[i].text, "and"))
			return fail_word(ps, &l->w[i], "seccomp: expected 'and' or the end of the line, not '%s'",
					 l->w[i].text);
		i++;
	}
}

static int sc_rule(struct parser *ps, struct line *l, bool allow)
{
	struct jr_sc_rule r = { .allow = allow, .action = JR_SC_ERRNO, .errnum = EPERM,
				.loc = loc_of(ps, &l->w[0]) };
	size_t i = 2;
	int ret = -1;
	for (; i < l->n; i++) {
		const char *n = l->w[i].text;
		if (!strcmp(n, "errno") || !strcmp(n, "kill") || !strcmp(n, "log") || !strcmp(n, "if"))
			break;
		if (n[0] == '@' ? !jr_syscall_group_find(n) : !jr_syscall_known(n)) {
			size_t count;
			const struct jr_syscall_group *g = jr_syscall_groups(&count);
			const char *names[32];
			for (size_t k = 0; k < count && k < 31; k++)
				names[k] = g[k].name;
			names[count < 31 ? count : 31] = NULL;
			char hint[96];
			fail_word(ps, &l->w[i], n[0] == '@' ? "unknown syscall group '%s'%s"
							   : "unknown syscall '%s' on this architecture%s",
				  n, n[0] == '@' ? suggest(n, names, hint, sizeof(hint)) : "");
			goto out;
		}
		char **names = reallocarray(r.names, r.n_names + 1, sizeof(char *));
		if (!names || !(names[r.n_names] = strdup(n))) {
			if (names)
				r.names = names;
			jr_fail_oom(ps->err);
			goto out;
		}
		r.names = names;
		r.n_names++;
	}
	if (!r.n_names) {
		fail_word(ps, &l->w[l->n > 2 ? 2 : 1], "seccomp %s: name at least one syscall or @group",
			  allow ? "allow" : "deny");
		goto out;
	}
	if (allow)
		r.action = JR_SC_ALLOW;
	if (i < l->n && strcmp(l->w[i].text, "if")) {
		if (allow) {
			fail_word(ps, &l->w[i], "seccomp allow takes no action");
			goto out;
		}
		if (sc_action(ps, l, &i, false, &r.action, &r.errnum) < 0)
			goto out;
	}
	if (i < l->n) {
		if (strcmp(l->w[i].text, "if")) {
			fail_word(ps, &l->w[i], "seccomp: expected 'if' or the end of the line, not '%s'",
				  l->w[i].text);
			goto out;
		}
		if (sc_conditions(ps, l, i + 1, &r) < 0)
			goto out;
	}
	return jr_policy_add_rule(ps->p, &r, ps->err);
out:
	for (size_t k = 0; k < r.n_names; k++)
		free(r.names[k]);
	free(r.names);
	return ret;
}

static int d_seccomp(struct parser *ps, struct line *l)
{
	static const char *const kinds[] = { "default", "deny", "allow", NULL };
	if (l->n < 3)
		return fail_word(ps, &l->w[0], "seccomp: usage: seccomp default ACTION | seccomp deny|allow SYSCALL|@GROUP... [errno NAME|kill|log] [if argN OP VALUE]");
	int k = keyword(ps, &l->w[1], "seccomp setting", kinds);
	if (k < 0)
		return -1;
	if (k > 0)
		return sc_rule(ps, l, k == 2);
	size_t i = 2;
	if (sc_action(ps, l, &i, true, &ps->p->seccomp_default, &ps->p->seccomp_default_errno) < 0)
		return -1;
	if (i < l->n)
		return fail_word(ps, &l->w[i], "seccomp default: unexpected '%s'", l->w[i].text);
	set_scalar(ps, &ps->p->seccomp_default_s, &l->w[0]);
	return 0;
}

static int d_landlock(struct parser *ps, struct line *l)
{
	static const char *const kinds[] = { "require", "best-effort", "scope", NULL };
	static const char *const scopes[] = { "signal", "abstract-unix", NULL };
	if (l->n < 2)
		return fail_word(ps, &l->w[0], "landlock: usage: landlock require ABI|best-effort | landlock scope signal|abstract-unix...");
	int k = keyword(ps, &l->w[1], "landlock setting", kinds);
	if (k < 0)
		return -1;
	jr_policy_t *p = ps->p;
	if (k == 0) {
		if (need_args(ps, l, 2, 2, "landlock require ABI|best-effort") < 0)
			return -1;
		uint64_t abi;
		if (!strcmp(l->w[2].text, "best-effort")) {
			p->landlock_best_effort = true;
		} else if (jr_parse_u64(l->w[2].text, 1, 64, &abi)) {
			p->landlock_abi = (int)abi;
			p->landlock_best_effort = false;
		} else {
			return fail_word(ps, &l->w[2], "landlock require: '%s' is not an ABI version (1, 2, ...) or best-effort",
					 l->w[2].text);
		}
	} else if (k == 1) {
		if (need_args(ps, l, 1, 1, "landlock best-effort") < 0)
			return -1;
		p->landlock_best_effort = true;
	} else {
		if (l->n < 3)
			return fail_word(ps, &l->w[1], "landlock scope: name signal and/or abstract-unix");
		for (size_t i = 2; i < l->n; i++) {
			bool remove;
			struct word w = l->w[i];
			w.text = (char *)list_item(&l->w[i], &remove);
			if (keyword(ps, &w, "landlock scope", scopes) < 0)
				return -1;
			struct jr_loc loc = loc_of(ps, &l->w[i]);
			if (jr_policy_add_str(p, JR_LIST_LANDLOCK_SCOPE, w.text, remove, &loc, ps->err) < 0)
				return -1;
		}
	}
	set_scalar(ps, &p->landlock_s, &l->w[0]);
	return 0;
}

static int d_isolation(struct parser *ps, struct line *l)
{
	static const char *const modes[] = { "namespaces", "landlock", NULL };
	if (need_args(ps, l, 1, 1, "isolation namespaces|landlock") < 0)
		return -1;
	int m = keyword(ps, &l->w[1], "isolation mode", modes);
	if (m < 0)
		return -1;
	ps->p->isolation = m == 0 ? JR_ISO_NAMESPACES : JR_ISO_LANDLOCK;
	set_scalar(ps, &ps->p->isolation_s, &l->w[0]);
	return 0;
}

static int d_guard(struct parser *ps, struct line *l)
{
	static const char *const guards[] = { "read-before-write", NULL };
	if (need_args(ps, l, 1, 1, "guard read-before-write") < 0)
		return -1;
	if (keyword(ps, &l->w[1], "guard", guards) < 0)
		return -1;
	ps->p->guard_read_before_write = true;
	return 0;
}

static const struct directive {
	const char *name;
	int (*fn)(struct parser *, struct line *);
	enum jr_clause_type type;
} directives[] = {
	{ "include", d_include, 0 },		 { "workspace", d_workspace, JR_CL_WORKSPACE },
	{ "ro", d_ro, JR_CL_RO },		 { "rw", d_rw, JR_CL_RW },
	{ "tmpfs", d_tmpfs, JR_CL_TMPFS },	 { "mask", d_mask, JR_CL_MASK },
	{ "protect", d_protect, JR_CL_PROTECT }, { "home", d_home, JR_CL_HOME },
	{ "exec", d_exec, JR_CL_EXEC },		 { "net", d_net, JR_CL_NET },
	{ "allow", d_allow, JR_CL_ALLOW },	 { "env", d_env, JR_CL_ENV },
	{ "user", d_user, JR_CL_USER },		 { "hostname", d_hostname, JR_CL_HOSTNAME },
	{ "caps", d_caps, JR_CL_CAPS },		 { "limit", d_limit, JR_CL_LIMIT },
	{ "seccomp", d_seccomp, JR_CL_SECCOMP }, { "landlock", d_landlock, JR_CL_LANDLOCK },
	{ "isolation", d_isolation, JR_CL_ISOLATION }, { "guard", d_guard, JR_CL_GUARD },
	{ "resolve", d_resolve, JR_CL_RESOLVE }, { "provider", d_provider, JR_CL_PROVIDER },
};

static int handle_line(struct parser *ps, struct line *l)
{
	const struct directive *d = NULL;
	const char *names[sizeof(directives) / sizeof(directives[0]) + 1];
	for (size_t i = 0; i < sizeof(directives) / sizeof(directives[0]); i++) {
		names[i] = directives[i].name;
		if (!strcmp(l->w[0].text, directives[i].name))
			d = &directives[i];
	}
	names[sizeof(directives) / sizeof(directives[0])] = NULL;
	if (!d) {
		char hint[64];
		return fail_word(ps, &l->w[0], "unknown directive '%s'%s", l->w[0].text,
				 suggest(l->w[0].text, names, hint, sizeof(hint)));
	}
	if (d->fn(ps, l) < 0)
		return -1;
	if (d->fn == d_include)
		return 0;
	char text[1024] = "";
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			strncat(text, " ", sizeof(text) - strlen(text) - 1);
		strncat(text, l->w[i].text, sizeof(text) - strlen(text) - 1);
	}
	struct jr_loc loc = loc_of(ps, &l->w[0]);
	return jr_policy_add_clause(ps->p, d->type, text, &loc, ps->err);
}

/* ---- public entry points --------------------------------------------- */

int jr_policy_load(jr_policy_t *p, const char *name, jr_error_t **err)
{
	_cleanup_free_ char *path = NULL;
	if (!name || !*name)
		return jr_fail(err, 0, "policy: empty name");
	if (locate(name, NULL, &path, err) < 0)
		return -1;
	if (!p->name && !(p->name = strdup(name)))
		return jr_fail_oom(err);
	struct parser ps = { .p = p, .err = err };
	return parse_file(&ps, path, NULL, NULL);
}

static const struct jr_source *command_line_source(jr_policy_t *p, jr_error_t **err)
{
	for (size_t i = 0; i < p->n_sources; i++)
		if (!strcmp(p->sources[i]->name, "<command line>"))
			return p->sources[i];
	return jr_policy_add_source(p, "<command line>", NULL, NULL, err);
}

int jr_policy_add_line(jr_policy_t *p, const char *line, jr_error_t **err)
{
	const struct jr_source *src = command_line_source(p, err);
	if (!src)
		return -1;
	if (strchr(line, '\n'))
		return jr_fail(err, 0, "<command line>: a policy line cannot hold a newline: '%s'", line);
	struct parser ps = { .p = p, .src = src, .err = err };
	char head[32];
	int n = snprintf(head, sizeof(head), "line %zu\n", strlen(line));
	jr_sha256_update(&p->digest, head, (size_t)n);
	jr_sha256_update(&p->digest, line, strlen(line));
	/* Lines from the command line are numbered in the order given. */
	return parse_text(&ps, line, strlen(line), ++p->command_lines);
}

static bool takes_paths(const char *directive)
{
	static const char *const names[] = { "workspace", "ro", "rw", "tmpfs", "mask",
					     "protect", "exec", NULL };
	for (const char *const *n = names; *n; n++)
		if (!strcmp(directive, *n))
			return true;
	return false;
}

int jr_policy_add_directive(jr_policy_t *p, const char *directive, const char *arg,
			    jr_error_t **err)
{
	if (!arg)
		return jr_policy_add_line(p, directive, err);
	/* From code or the command line, a relative path is relative to the
	 * current directory (a policy file must spell paths out). */
	_cleanup_free_ char *absolute = NULL;
	if (takes_paths(directive) && arg[0] && !strchr("/~$!", arg[0]) && strcmp(arg, ".")) {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return jr_fail(err, errno, "%s %s: getcwd", directive, arg);
		_cleanup_free_ char *joined = NULL;
		if (asprintf(&joined, "%s/%s", cwd, arg) < 0 || !(absolute = jr_path_normalize(joined)))
			return jr_fail_oom(err);
		arg = absolute;
	}
	size_t len = strlen(arg);
	_cleanup_free_ char *line = malloc(strlen(directive) + 2 * len + 4);
	if (!line)
		return jr_fail_oom(err);
	char *o = line + sprintf(line, "%s \"", directive);
	for (const char *c = arg; *c; c++) {
		if (*c == '"' || *c == '\\')
			*o++ = '\\';
		*o++ = *c;
	}
	strcpy(o, "\"");
	return jr_policy_add_line(p, line, err);
}
