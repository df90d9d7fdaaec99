/* Expansion of ~, $WORKSPACE, $HOME, $TMPDIR and ${NAME} in policy paths. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *jr_env_get(char *const envp[], const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

struct buf {
	char *s;
	size_t len, cap;
};

static int buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *bigger = realloc(b->s, cap);
		if (!bigger)
			return -1;
		b->s = bigger;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

int jr_expand_path(struct jr_expand *x, const char *in, const struct jr_loc *loc,
		   char **out, jr_error_t **err)
{
	struct buf b = { 0 };
	const char *p = in;
	int r = 0;

	if (p[0] == '~' && (p[1] == '\0' || p[1] == '/')) {
		if (!x->home) {
			r = jr_fail_at(err, loc, "'%s': ~ needs a home directory, and this user has none", in);
			goto out;
		}
		if (buf_add(&b, x->home, strlen(x->home)) < 0)
			goto oom;
		p++;
	}
	while (*p) {
		const char *dollar = strchr(p, '$');
		size_t lit = dollar ? (size_t)(dollar - p) : strlen(p);
		if (buf_add(&b, p, lit) < 0)
			goto oom;
		if (!dollar)
			break;
		const char *value = NULL, *end;
		char name[128];
		if (dollar[1] == '{') {
			end = strchr(dollar, '}');
			size_t n = (size_t)(end - dollar - 2);
			if (n >= sizeof(name)) {
				r = jr_fail_at(err, loc, "'%s': variable name longer than %zu bytes", in,
					       sizeof(name) - 1);
				goto out;
			}
			snprintf(name, sizeof(name), "%.*s", (int)n, dollar + 2);
			value = jr_env_get(x->envp, name);
			if (!value || !*value) {
				r = 1; /* unset: the caller decides (optional entry, or error) */
				snprintf(x->unset_name, sizeof(x->unset_name), "%s", name);
				goto out;
			}
			end++;
		} else {
			end = dollar + 1;
			while ((*end >= 'A' && *end <= 'Z') || (*end >= 'a' && *end <= 'z') ||
			       (*end >= '0' && *end <= '9') || *end == '_')
				end++;
			snprintf(name, sizeof(name), "%.*s", (int)(end - dollar - 1), dollar + 1);
			value = !strcmp(name, "HOME")	   ? x->home
				: !strcmp(name, "TMPDIR")  ? x->tmpdir
				: !strcmp(name, "WORKSPACE") ? x->workspace
							     : NULL;
			if (!value) {
				r = jr_fail_at(err, loc, "'%s': $%s is not known %s", in, name,
					       !strcmp(name, "WORKSPACE") ? "in the workspace directive itself"
									  : "here");
				goto out;
			}
		}
		if (buf_add(&b, value, strlen(value)) < 0)
			goto oom;
		p = end;
	}
	if (!b.s || b.s[0] != '/') {
		r = jr_fail_at(err, loc, "'%s' expands to '%s', which is not an absolute path", in,
			       b.s ? b.s : "");
		goto out;
	}
	*out = b.s;
	return 0;
oom:
	r = jr_fail_oom(err);
out:
	free(b.s);
	return r;
}
