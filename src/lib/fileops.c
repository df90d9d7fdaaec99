/* File operations of the agent API (readFile, writeFile, stat, ...).
 *
 * They run in a worker forked from the session's init inside the jail,
 * already behind Landlock, seccomp and without capabilities, so the
 * policy's view applies to them as to any command.  A path inside the
 * workspace (relative, or absolute beneath it) is resolved with openat2
 * RESOLVE_BENEATH from the workspace: no symlink or ".." leads a read or
 * a write out of it.  Other absolute paths are the jail's own view. */
#include "config.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"
#include "values.h"

#define DEFAULT_MAX_READ (10u << 20)
#define MAX_WALK_RESULTS 10000

struct op {
	const char *method;
	const char *workspace;
	const cJSON *params;
	cJSON *result;
	int code; /* error: JSON-RPC code */
	char message[600];
	const char *errno_name;
};

static void op_fail(struct op *op, int e, const char *path, const char *what)
{
	op->code = -32001;
	op->errno_name = jr_errno_name(e);
	if (e == EXDEV)
		snprintf(op->message, sizeof(op->message),
			 "%s %s: leads out of the workspace (a symlink or '..'); refused", op->method, path);
	else
		snprintf(op->message, sizeof(op->message), "%s %s: %s%s%s", op->method, path,
			 what ? what : "", what ? ": " : "", strerror(e));
}

static void op_bad_params(struct op *op, const char *what)
{
	op->code = -32602;
	snprintf(op->message, sizeof(op->message), "%s: %s", op->method, what);
}

static const char *str_param(const struct op *op, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(op->params, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool bool_param(const struct op *op, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(op->params, key));
}

static long long int_param(const struct op *op, const char *key, long long def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(op->params, key);
	return cJSON_IsNumber(v) && v->valuedouble >= 0 ? (long long)v->valuedouble : def;
}

/* Where a path is opened from: the workspace (beneath it, rel is the rest)
 * or the root of the jail's view. */
struct where {
	int dirfd;
	const char *rel;
	unsigned long long resolve;
	char buf[4096];
};

static int locate(const struct op *op, const char *path, struct where *w)
{
	size_t wl = strlen(op->workspace);
	w->resolve = RESOLVE_NO_MAGICLINKS;
	if (path[0] == '/' &&
	    !(strncmp(path, op->workspace, wl) == 0 && (path[wl] == '/' || path[wl] == '\0'))) {
		w->dirfd = AT_FDCWD;
		w->rel = path;
		return 0;
	}
	w->dirfd = open(op->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0)
		return -1;
	const char *rel = path[0] == '/' ? path + wl : path;
	while (*rel == '/')
		rel++;
	if ((size_t)snprintf(w->buf, sizeof(w->buf), "%s", *rel ? rel : ".") >= sizeof(w->buf)) {
		close(w->dirfd);
		w->dirfd = -1;
		errno = ENAMETOOLONG;
		return -1;
	}
	w->rel = w->buf;
	w->resolve |= RESOLVE_BENEATH;
	return 0;
}

static int open_at(const struct where *w, const char *rel, int flags, mode_t mode)
{
	struct open_how how = { .flags = (uint64_t)flags | O_CLOEXEC, .mode = mode, .resolve = w->resolve };
	if (!(flags & O_CREAT))
		how.mode = 0;
	return (int)syscall(SYS_openat2, w->dirfd, rel, &how, sizeof(how));
}

static int open_path(const struct op *op, const char *path, int flags, mode_t mode)
{
	struct where w;
	if (locate(op, path, &w) < 0)
		return -1;
	int fd = open_at(&w, w.rel, flags, mode);
	int e = errno;
	if (w.dirfd >= 0)
		close(w.dirfd);
	errno = e;
	return fd;
}

/* The parent directory of path (opened with the same rules) and its last
 * name, for calls that act on a name itself (lstat, mkdir, unlink). */
static int open_parent(const struct op *op, const char *path, char *name, size_t size)
{
	char copy[4096];
	if ((size_t)snprintf(copy, sizeof(copy), "%s", path) >= sizeof(copy)) {
		errno = ENAMETOOLONG; /* never a shorter path than asked for */
		return -1;
	}
	size_t n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	char *slash = strrchr(copy, '/');
	const char *last = slash ? slash + 1 : copy;
	if (!*last || !strcmp(last, ".") || !strcmp(last, "..")) {
		errno = EINVAL;
		return -1;
	}
	if ((size_t)snprintf(name, size, "%s", last) >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!slash)
		return open_path(op, ".", O_PATH | O_DIRECTORY, 0);
	if (slash == copy)
		return open_path(op, "/", O_PATH | O_DIRECTORY, 0);
	*slash = '\0';
	return open_path(op, copy, O_PATH | O_DIRECTORY, 0);
}

static int mkdir_parents(const struct op *op, const char *path, bool including_last)
{
	char copy[4096];
	if ((size_t)snprintf(copy, sizeof(copy), "%s", path) >= sizeof(copy)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		char name[256];
		_cleanup_close_ int parent = open_parent(op, copy, name, sizeof(name));
		if (parent < 0 || (mkdirat(parent, name, 0755) < 0 && errno != EEXIST))
			return -1;
		*p = '/';
	}
	if (including_last) {
		char name[256];
		_cleanup_close_ int parent = open_parent(op, copy, name, sizeof(name));
		if (parent < 0 || (mkdirat(parent, name, 0755) < 0 && errno != EEXIST))
			return -1;
	}
	return 0;
}

/* ---- the methods ------------------------------------------------------ */

static void read_file(struct op *op, const char *path)
{
	const char *enc = str_param(op, "encoding");
	bool b64 = enc && !strcmp(enc, "base64");
	if (enc && !b64 && strcmp(enc, "utf8"))
		return op_bad_params(op, "encoding must be \"utf8\" or \"base64\"");
	long long max = int_param(op, "maxBytes", DEFAULT_MAX_READ);
	_cleanup_close_ int fd = open_path(op, path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return op_fail(op, errno, path, NULL);
	if (S_ISDIR(st.st_mode))
		return op_fail(op, EISDIR, path, NULL);
	if (!S_ISREG(st.st_mode))
		return op_fail(op, EINVAL, path, "not a regular file");
	size_t want = (size_t)(st.st_size < max ? st.st_size : max);
	_cleanup_free_ char *buf = malloc(want + 1);
	if (!buf)
		return op_fail(op, ENOMEM, path, NULL);
	size_t got = 0;
	while (got < want) {
		ssize_t n = read(fd, buf + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return op_fail(op, errno, path, NULL);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	_cleanup_free_ char *text = b64 ? jr_base64_encode((unsigned char *)buf, got)
					: jr_utf8_sanitize(buf, got);
	if (!text)
		return op_fail(op, ENOMEM, path, NULL);
	cJSON_AddStringToObject(op->result, b64 ? "contentBase64" : "content", text);
	cJSON_AddNumberToObject(op->result, "size", (double)st.st_size);
	cJSON_AddBoolToObject(op->result, "truncated", (long long)got < (long long)st.st_size);
}

static void write_file(struct op *op, const char *path)
{
	const char *text = str_param(op, "content"), *b64 = str_param(op, "contentBase64");
	if (!text == !b64)
		return op_bad_params(op, "give exactly one of content and contentBase64");
	_cleanup_free_ unsigned char *bytes = NULL;
	size_t len = text ? strlen(text) : 0;
	if (b64 && jr_base64_decode(b64, &bytes, &len) < 0)
		return op_bad_params(op, "contentBase64 is not base64");
	/* No setuid, setgid or sticky bit: for a root caller the jail's
	 * files are root's on disk (jailrun's own filter, which refuses such
	 * modes to commands, is not loaded in this worker). */
	mode_t mode = (mode_t)int_param(op, "mode", 0644) & 0777;
	if (bool_param(op, "createDirs") && mkdir_parents(op, path, false) < 0)
		return op_fail(op, errno, path, "creating its directories");
	/* Non-blocking and not truncating until it is known to be a regular
	 * file: a FIFO the jail made there must not hang the server. */
	_cleanup_close_ int fd =
		open_path(op, path, O_WRONLY | O_CREAT | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK, mode);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return op_fail(op, errno, path, NULL);
	if (!S_ISREG(st.st_mode))
		return op_fail(op, EINVAL, path, "not a regular file");
	if (ftruncate(fd, 0) < 0 || fcntl(fd, F_SETFL, 0) < 0)
		return op_fail(op, errno, path, NULL);
	const char *p = text ? text : (const char *)bytes;
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return op_fail(op, n < 0 ? errno : EIO, path, NULL);
		done += (size_t)n;
	}
	cJSON_AddNumberToObject(op->result, "bytesWritten", (double)done);
}

static void add_type(cJSON *o, mode_t mode)
{
	cJSON_AddBoolToObject(o, "isDirectory", S_ISDIR(mode));
	cJSON_AddBoolToObject(o, "isFile", S_ISREG(mode));
	cJSON_AddBoolToObject(o, "isSymlink", S_ISLNK(mode));
}

static int lstat_path(const struct op *op, const char *path, struct stat *st)
{
	char name[256];
	if (!strcmp(path, ".") || !strcmp(path, "/") || !strcmp(path, op->workspace)) {
		_cleanup_close_ int fd = open_path(op, path, O_PATH, 0);
		return fd < 0 ? -1 : fstat(fd, st);
	}
	_cleanup_close_ int parent = open_parent(op, path, name, sizeof(name));
	if (parent < 0)
		return -1;
	return fstatat(parent, name, st, AT_SYMLINK_NOFOLLOW);
}

static void stat_path(struct op *op, const char *path)
{
	struct stat st;
	if (lstat_path(op, path, &st) < 0)
		return op_fail(op, errno, path, NULL);
	cJSON_AddNumberToObject(op->result, "size", (double)st.st_size);
	add_type(op->result, st.st_mode);
	cJSON_AddNumberToObject(op->result, "mode", st.st_mode & 07777);
	cJSON_AddNumberToObject(op->result, "mtimeMs",
				(double)st.st_mtim.tv_sec * 1000.0 + (double)st.st_mtim.tv_nsec / 1e6);
}

static void exists(struct op *op, const char *path)
{
	struct stat st;
	bool found = lstat_path(op, path, &st) == 0;
	if (!found && errno != ENOENT && errno != ENOTDIR)
		return op_fail(op, errno, path, NULL);
	cJSON_AddBoolToObject(op->result, "exists", found);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(cJSON_GetObjectItem(*(cJSON *const *)a, "name")->valuestring,
		      cJSON_GetObjectItem(*(cJSON *const *)b, "name")->valuestring);
}

static void read_dir(struct op *op, const char *path)
{
	int fd = open_path(op, path, O_RDONLY | O_DIRECTORY, 0);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return op_fail(op, e, path, NULL);
	}
	cJSON **v = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < MAX_WALK_RESULTS) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		struct stat st;
		mode_t mode = e->d_type == DT_DIR ? S_IFDIR : e->d_type == DT_REG ? S_IFREG
			    : e->d_type == DT_LNK ? S_IFLNK : 0;
		if (e->d_type == DT_UNKNOWN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			mode = st.st_mode;
		cJSON *entry = cJSON_CreateObject(), **grown = realloc(v, (n + 1) * sizeof(*v));
		if (!entry || !grown) {
			cJSON_Delete(entry);
			break;
		}
		v = grown;
		cJSON_AddStringToObject(entry, "name", e->d_name);
		add_type(entry, mode);
		v[n++] = entry;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), by_name); /* v is NULL for an empty directory */
	cJSON *arr = cJSON_AddArrayToObject(op->result, "entries");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, v[i]);
	free(v);
}

static void make_dir(struct op *op, const char *path)
{
	if (bool_param(op, "recursive")) {
		if (mkdir_parents(op, path, true) < 0)
			return op_fail(op, errno, path, NULL);
		return;
	}
	char name[256];
	_cleanup_close_ int parent = open_parent(op, path, name, sizeof(name));
	if (parent < 0 || mkdirat(parent, name, 0755) < 0)
		return op_fail(op, errno, path, NULL);
}

/* rm -r beneath dirfd, never following a symlink. */
static int remove_tree_at(int parent, const char *name)
{
	if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct dirent *e;
	int r = 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && remove_tree_at(dirfd(d), e->d_name) < 0)
			r = -1;
	int saved = errno;
	closedir(d);
	if (r < 0) {
		errno = saved;
		return -1;
	}
	return unlinkat(parent, name, AT_REMOVEDIR);
}

static void remove_path(struct op *op, const char *path)
{
	bool force = bool_param(op, "force");
	char name[256];
	_cleanup_close_ int parent = open_parent(op, path, name, sizeof(name));
	struct stat st;
	if (parent < 0 || fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (force && (errno == ENOENT || errno == ENOTDIR))
			return;
		return op_fail(op, errno, path, NULL);
	}
	int r = !S_ISDIR(st.st_mode)	      ? unlinkat(parent, name, 0)
		: bool_param(op, "recursive") ? remove_tree_at(parent, name)
					      : unlinkat(parent, name, AT_REMOVEDIR);
	if (r < 0)
		op_fail(op, errno, path, NULL);
}

/* ---- glob and grep: walks beneath a directory --------------------------- */

/* Matches a relative path against a pattern whose "**" segments match any
 * number of path segments. */
/* "**" backtracks: a budget of steps per path keeps a pattern like
 * "**" "/" "**" "/"... from taking exponential time (past it: no match). */
static unsigned long glob_steps;
#define GLOB_MAX_STEPS 100000ul

static bool glob_match(const char *pat, const char *path)
{
	if (++glob_steps > GLOB_MAX_STEPS)
		return false;
	if (!strncmp(pat, "**", 2) && (pat[2] == '/' || pat[2] == '\0')) {
		const char *rest = pat[2] ? pat + 3 : pat + 2;
		if (!*rest)
			return true;
		for (const char *p = path;; p++) {
			if ((p == path || p[-1] == '/') && glob_match(rest, p))
				return true;
			if (!*p)
				return false;
		}
	}
	const char *ps = strchr(pat, '/'), *xs = strchr(path, '/');
	if (!ps)
		return !xs && fnmatch(pat, path, FNM_PERIOD) == 0;
	if (!xs)
		return false;
	char seg_p[256], seg_x[256];
	snprintf(seg_p, sizeof(seg_p), "%.*s", (int)(ps - pat), pat);
	snprintf(seg_x, sizeof(seg_x), "%.*s", (int)(xs - path), path);
	return fnmatch(seg_p, seg_x, FNM_PERIOD) == 0 && glob_match(ps + 1, xs + 1);
}

struct walk {
	struct op *op;
	cJSON *out;
	size_t n, max;
	bool truncated;
	/* glob */
	const char *pattern;
	/* grep */
	regex_t re;
	const char *include;
};

typedef void (*visit_fn)(struct walk *w, int parent, const char *name, const char *rel,
			 const struct stat *st);

static void walk_dir(struct walk *w, int fd, const char *prefix, visit_fn visit, unsigned depth)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *e;
	while (!w->truncated && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char rel[4096];
		snprintf(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "", e->d_name);
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		visit(w, dirfd(d), e->d_name, rel, &st);
		if (S_ISDIR(st.st_mode) && depth < 64 && strcmp(e->d_name, ".git")) {
			int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				walk_dir(w, sub, rel, visit, depth + 1);
		}
	}
	closedir(d);
}

static void add_result(struct walk *w, cJSON *item)
{
	if (w->n >= w->max) {
		w->truncated = true;
		cJSON_Delete(item);
		return;
	}
	cJSON_AddItemToArray(w->out, item);
	w->n++;
}

static void glob_visit(struct walk *w, int parent, const char *name, const char *rel,
		       const struct stat *st)
{
	(void)parent, (void)name, (void)st;
	glob_steps = 0;
	if (glob_match(w->pattern, rel))
		add_result(w, cJSON_CreateString(rel));
}

static int by_string(const void *a, const void *b)
{
	return strcmp((*(cJSON *const *)a)->valuestring, (*(cJSON *const *)b)->valuestring);
}

static void sort_strings(cJSON *arr)
{
	size_t n = (size_t)cJSON_GetArraySize(arr);
	cJSON **v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = cJSON_DetachItemFromArray(arr, 0);
	qsort(v, n, sizeof(*v), by_string);
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, v[i]);
	free(v);
}

static void glob_paths(struct op *op)
{
	const char *pattern = str_param(op, "pattern"), *cwd = str_param(op, "cwd");
	if (!pattern || !*pattern)
		return op_bad_params(op, "pattern must be a non-empty string");
	int fd = open_path(op, cwd ? cwd : ".", O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return op_fail(op, errno, cwd ? cwd : ".", NULL);
	struct walk w = { .op = op, .pattern = pattern, .max = MAX_WALK_RESULTS,
			  .out = cJSON_AddArrayToObject(op->result, "paths") };
	walk_dir(&w, fd, "", glob_visit, 0);
	sort_strings(w.out);
	cJSON_AddBoolToObject(op->result, "truncated", w.truncated);
}

static void grep_visit(struct walk *w, int parent, const char *name, const char *rel,
		       const struct stat *st)
{
	if (!S_ISREG(st->st_mode) || (w->include && fnmatch(w->include, name, 0) != 0) ||
	    st->st_size > (64 << 20))
		return;
	int fd = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long lineno = 0;
	while (!w->truncated && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (memchr(line, '\0', (size_t)len))
			break; /* binary */
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (regexec(&w->re, line, 0, NULL, 0) != 0)
			continue;
		cJSON *m = cJSON_CreateObject();
		char *text = jr_utf8_sanitize(line, (size_t)len > 500 ? 500 : (size_t)len);
		if (!m || !text) {
			cJSON_Delete(m);
			free(text);
			break;
		}
		cJSON_AddStringToObject(m, "path", rel);
		cJSON_AddNumberToObject(m, "line", (double)lineno);
		cJSON_AddStringToObject(m, "text", text);
		free(text);
		add_result(w, m);
	}
	free(line);
	fclose(f);
}

static void grep_files(struct op *op)
{
	const char *pattern = str_param(op, "pattern"), *path = str_param(op, "path");
	if (!pattern)
		return op_bad_params(op, "pattern must be a string");
	struct walk w = { .op = op, .include = str_param(op, "include"),
			  .max = (size_t)int_param(op, "maxResults", 1000) };
	int rc = regcomp(&w.re, pattern, REG_EXTENDED | REG_NOSUB |
						 (bool_param(op, "ignoreCase") ? REG_ICASE : 0));
	if (rc != 0) {
		char why[200];
		regerror(rc, &w.re, why, sizeof(why));
		op->code = -32602;
		snprintf(op->message, sizeof(op->message), "grep: bad pattern '%s': %s", pattern, why);
		return;
	}
	path = path ? path : ".";
	w.out = cJSON_AddArrayToObject(op->result, "matches");
	struct stat st;
	int fd = open_path(op, path, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0 || fstat(fd, &st) < 0) {
		op_fail(op, errno, path, NULL);
	} else if (S_ISDIR(st.st_mode)) {
		/* Matches are named as from the workspace: under path. */
		char prefix[4096];
		snprintf(prefix, sizeof(prefix), "%s", strcmp(path, ".") ? path : "");
		size_t n = strlen(prefix);
		while (n && prefix[n - 1] == '/')
			prefix[--n] = '\0';
		if (!strncmp(prefix, "./", 2))
			memmove(prefix, prefix + 2, strlen(prefix + 2) + 1);
		walk_dir(&w, fd, prefix, grep_visit, 0);
		fd = -1;
	} else {
		/* One file: searched from its directory, named as given. */
		char name[256];
		int parent = open_parent(op, path, name, sizeof(name));
		if (parent >= 0) {
			grep_visit(&w, parent, name, path, &st);
			close(parent);
		}
	}
	if (fd >= 0)
		close(fd);
	regfree(&w.re);
	cJSON_AddBoolToObject(op->result, "truncated", w.truncated);
}

/* ---- dispatch ----------------------------------------------------------- */

cJSON *jr_fileop(const char *workspace, const char *method, const cJSON *params)
{
	struct op op = { .method = method, .workspace = workspace, .params = params,
			 .result = cJSON_CreateObject() };
	if (!op.result)
		return NULL;
	const char *path = str_param(&op, "path");
	bool needs_path = strcmp(method, "glob") && strcmp(method, "grep");
	if (needs_path && (!path || !*path)) {
		op_bad_params(&op, "path must be a non-empty string");
	} else if (!strcmp(method, "readFile")) {
		read_file(&op, path);
	} else if (!strcmp(method, "writeFile")) {
		write_file(&op, path);
	} else if (!strcmp(method, "stat")) {
		stat_path(&op, path);
	} else if (!strcmp(method, "exists")) {
		exists(&op, path);
	} else if (!strcmp(method, "readdir")) {
		read_dir(&op, path);
	} else if (!strcmp(method, "mkdir")) {
		make_dir(&op, path);
	} else if (!strcmp(method, "rm")) {
		remove_path(&op, path);
	} else if (!strcmp(method, "glob")) {
		glob_paths(&op);
	} else if (!strcmp(method, "grep")) {
		grep_files(&op);
	} else {
		op.code = -32601;
		snprintf(op.message, sizeof(op.message), "method not found: %s", method);
	}
	if (!op.code)
		return op.result;
	cJSON_Delete(op.result);
	cJSON *e = cJSON_CreateObject();
	cJSON *err = cJSON_AddObjectToObject(e, "error");
	cJSON_AddNumberToObject(err, "code", op.code);
	cJSON_AddStringToObject(err, "message", op.message);
	if (op.errno_name)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(err, "data"), "errno", op.errno_name);
	return e;
}
