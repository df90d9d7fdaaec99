/* Path arithmetic shared by the compiler and the mount code. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <ftw.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"

unsigned jr_path_depth(const char *path)
{
	unsigned depth = 0;
	for (const char *c = path; *c; c++)
		if (*c != '/' && (c == path || c[-1] == '/'))
			depth++;
	return depth;
}

char *jr_path_normalize(const char *path)
{
	if (!path || path[0] != '/')
		return NULL;
	size_t len = strlen(path);
	char *out = malloc(len + 2);
	if (!out)
		return NULL;
	size_t o = 0;
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--; /* drop the slash too */
		} else {
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p = end;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

int jr_path_canonical(const char *path, char **out, jr_error_t **err)
{
	char *resolved = realpath(path, NULL);
	if (!resolved)
		return jr_fail(err, errno, "%s", path);
	*out = resolved;
	return 0;
}

int jr_path_canonical_missing_ok(const char *path, char **out, jr_error_t **err)
{
	char *norm = jr_path_normalize(path);
	if (!norm)
		return path && path[0] == '/' ? jr_fail_oom(err)
					      : jr_fail(err, EINVAL, "%s: not absolute", path);
	char *resolved = realpath(norm, NULL);
	if (resolved || errno != ENOENT) {
		int e = errno;
		free(norm);
		if (!resolved)
			return jr_fail(err, e, "%s", path);
		*out = resolved;
		return 0;
	}
	char *slash = strrchr(norm, '/');
	*slash = '\0';
	const char *base = slash + 1;
	char *parent = NULL;
	int r = jr_path_canonical_missing_ok(norm[0] ? norm : "/", &parent, err);
	if (r == 0 && asprintf(out, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "", base) < 0)
		r = jr_fail_oom(err);
	free(parent);
	free(norm);
	return r;
}

bool jr_path_is_beneath(const char *path, const char *dir)
{
	if (strcmp(dir, "/") == 0)
		return true;
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void jr_remove_tree(const char *path)
{
	/* FTW_PHYS: a symlink inside is removed, never followed. */
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}
