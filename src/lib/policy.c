/* The policy as data: storage for what the parser (policy-parse.c) and the
 * programmatic API put in.  No syscalls here. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "internal.h"
#include "policy.h"

int jr_fail_at(jr_error_t **err, const struct jr_loc *loc, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!loc || !loc->src)
		return jr_fail(err, 0, "%s", msg);
	if (loc->src->included_from)
		return jr_fail(err, 0, "%s:%u:%u: %s (included from %s)", loc->src->name, loc->line,
			       loc->col, msg, loc->src->included_from);
	return jr_fail(err, 0, "%s:%u:%u: %s", loc->src->name, loc->line, loc->col, msg);
}

int jr_fail_at_errno(jr_error_t **err, const struct jr_loc *loc, int errnum, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (jr_fail_at(err, loc, "%s: %s", msg, strerror(errnum)) < 0 && err && *err)
		(*err)->errnum = errnum;
	return -1;
}

int jr_policy_new(jr_policy_t **out, jr_error_t **err)
{
	jr_policy_t *p = calloc(1, sizeof(*p));
	if (!p)
		return jr_fail_oom(err);
	p->user = JR_USER_SAME;
	p->seccomp_default = JR_SC_ALLOW;
	jr_sha256_init(&p->digest);
	*out = p;
	return 0;
}

static void free_rule(struct jr_sc_rule *r)
{
	for (size_t i = 0; i < r->n_names; i++)
		free(r->names[i]);
	free(r->names);
}

void jr_policy_free(jr_policy_t *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_sources; i++) {
		free(p->sources[i]->name);
		free(p->sources[i]->path);
		free(p->sources[i]->included_from);
		free(p->sources[i]);
	}
	free(p->sources);
	for (size_t i = 0; i < p->n_clauses; i++)
		free(p->clauses[i].text);
	free(p->clauses);
	for (size_t i = 0; i < p->n_fs; i++)
		free(p->fs[i].path);
	free(p->fs);
	for (size_t l = 0; l < JR_LIST_COUNT; l++) {
		for (size_t i = 0; i < p->lists[l].n; i++)
			free(p->lists[l].v[i].value);
		free(p->lists[l].v);
	}
	for (size_t i = 0; i < p->n_rules; i++)
		free_rule(&p->rules[i]);
	free(p->rules);
	free(p->name);
	free(p->workspace);
	free(p->hostname);
	free(p->keep_fds);
	free(p);
}

/* Grows *v (of *n elements of size sz) by one zeroed element. */
static void *grow(void *vp, size_t *n, size_t sz, jr_error_t **err)
{
	void **v = vp;
	char *bigger = reallocarray(*v, *n + 1, sz);
	if (!bigger) {
		jr_fail_oom(err);
		return NULL;
	}
	*v = bigger;
	memset(bigger + *n * sz, 0, sz);
	return bigger + (*n)++ * sz;
}

struct jr_source *jr_policy_add_source(jr_policy_t *p, const char *name, const char *path,
				       const char *included_from, jr_error_t **err)
{
	struct jr_source *s = calloc(1, sizeof(*s));
	struct jr_source **slot = s ? grow(&p->sources, &p->n_sources, sizeof(*slot), err) : NULL;
	if (!slot) {
		free(s);
		if (!s)
			jr_fail_oom(err);
		return NULL;
	}
	*slot = s;
	s->name = strdup(name);
	s->path = path ? strdup(path) : NULL;
	s->included_from = included_from ? strdup(included_from) : NULL;
	if (!s->name || (path && !s->path) || (included_from && !s->included_from)) {
		jr_fail_oom(err);
		return NULL; /* freed with the policy */
	}
	return s;
}

int jr_policy_add_clause(jr_policy_t *p, enum jr_clause_type type, const char *text,
			 const struct jr_loc *loc, jr_error_t **err)
{
	char *copy = strdup(text);
	struct jr_clause *c = copy ? grow(&p->clauses, &p->n_clauses, sizeof(*c), err) : NULL;
	if (!c) {
		free(copy);
		return copy ? -1 : jr_fail_oom(err);
	}
	*c = (struct jr_clause){ type, copy, *loc };
	return 0;
}

int jr_policy_add_fs(jr_policy_t *p, const struct jr_fs_entry *e, jr_error_t **err)
{
	char *path = strdup(e->path);
	struct jr_fs_entry *slot = path ? grow(&p->fs, &p->n_fs, sizeof(*slot), err) : NULL;
	if (!slot) {
		free(path);
		return path ? -1 : jr_fail_oom(err);
	}
	*slot = *e;
	slot->path = path;
	return 0;
}

int jr_policy_add_str(jr_policy_t *p, enum jr_list_id list, const char *value, bool remove,
		      const struct jr_loc *loc, jr_error_t **err)
{
	struct jr_str_list *l = &p->lists[list];
	char *copy = strdup(value);
	struct jr_str_entry *slot = copy ? grow(&l->v, &l->n, sizeof(*slot), err) : NULL;
	if (!slot) {
		free(copy);
		return copy ? -1 : jr_fail_oom(err);
	}
	*slot = (struct jr_str_entry){ copy, remove, *loc };
	return 0;
}

int jr_policy_add_rule(jr_policy_t *p, struct jr_sc_rule *rule, jr_error_t **err)
{
	struct jr_sc_rule *slot = grow(&p->rules, &p->n_rules, sizeof(*slot), err);
	if (!slot) {
		free_rule(rule);
		return -1;
	}
	*slot = *rule;
	memset(rule, 0, sizeof(*rule));
	return 0;
}

int jr_policy_set_string(char **slot, const char *value, jr_error_t **err)
{
	char *copy = NULL;
	if (value && !(copy = strdup(value)))
		return jr_fail_oom(err);
	free(*slot);
	*slot = copy;
	return 0;
}

/* ---- programmatic API: each call appends one policy line ------------ */

int jr_policy_set_workspace(jr_policy_t *p, const char *path, jr_error_t **err)
{
	if (path && !*path)
		return jr_fail(err, 0, "workspace: empty path");
	return jr_policy_add_directive(p, "workspace", path ? path : ".", err);
}

int jr_policy_add_bind(jr_policy_t *p, enum jr_bind_mode mode, const char *path, bool optional,
		       jr_error_t **err)
{
	const char *what = mode == JR_BIND_RO ? "ro" : "rw";
	if (!path || !*path)
		return jr_fail(err, 0, "%s: empty path", what);
	_cleanup_free_ char *arg = NULL;
	if (asprintf(&arg, "%s%s", path, optional ? "?" : "") < 0)
		return jr_fail_oom(err);
	return jr_policy_add_directive(p, what, arg, err);
}

int jr_policy_add_tmpfs(jr_policy_t *p, const char *path, jr_error_t **err)
{
	if (!path || !*path)
		return jr_fail(err, 0, "tmpfs: empty path");
	return jr_policy_add_directive(p, "tmpfs", path, err);
}

int jr_policy_set_hostname(jr_policy_t *p, const char *name, jr_error_t **err)
{
	if (!name || !*name)
		return jr_fail(err, 0, "hostname '': use 1-64 letters, digits, '-' and '.'");
	return jr_policy_add_directive(p, "hostname", name, err);
}

int jr_policy_set_user(jr_policy_t *p, enum jr_user_mode mode, jr_error_t **err)
{
	if (mode != JR_USER_SAME && mode != JR_USER_ROOT)
		return jr_fail(err, 0, "user: unknown mode %d", (int)mode);
	return jr_policy_add_directive(p, "user", mode == JR_USER_ROOT ? "root" : "same", err);
}

int jr_policy_keep_fd(jr_policy_t *p, int fd, jr_error_t **err)
{
	if (fd < 3)
		return jr_fail(err, 0, "keep-fd %d: descriptors 0-2 are always passed", fd);
	for (size_t i = 0; i < p->n_keep_fds; i++)
		if (p->keep_fds[i] == fd)
			return 0;
	if (p->n_keep_fds >= JR_MAX_KEEP_FDS)
		return jr_fail(err, 0, "keep-fd %d: at most %d descriptors can be kept", fd,
			       JR_MAX_KEEP_FDS);
	int *slot = grow(&p->keep_fds, &p->n_keep_fds, sizeof(int), err);
	if (!slot)
		return -1;
	*slot = fd;
	char line[32];
	int n = snprintf(line, sizeof(line), "keep-fd %d\n", fd);
	jr_sha256_update(&p->digest, line, (size_t)n);
	return 0;
}

void jr_policy_digest(const jr_policy_t *p, char hex[65])
{
	jr_sha256_hex(&p->digest, hex);
}

size_t jr_policy_n_files(const jr_policy_t *p)
{
	return p->n_sources;
}

const char *jr_policy_file(const jr_policy_t *p, size_t i)
{
	return i < p->n_sources ? p->sources[i]->path : NULL;
}

const char *jr_policy_name(const jr_policy_t *p)
{
	return p->name;
}
