/* Counting seccomp denials.  With a report asked for, the command's
 * process loads the policy's filter with every errno and log answer
 * turned into a user notification (seccomp.c) and hands the listener to
 * the supervisor, which lands here for each denied call: it counts the
 * call, then answers exactly as the unpatched filter would have (run over
 * the same seccomp_data by bpf-eval.c): the same errno, or, for a log
 * rule, lets the call run.  Kill rules are left as they are.
 *
 * Only registers are looked at, never the target's memory, so there is
 * no time-of-check race to win: the answer is the filter's own. */
#include "config.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

static struct jr_denial_count *find_or_add(struct jr_denials *d, uint32_t arch, int nr)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].nr == nr && d->v[i].arch == arch)
			return &d->v[i];
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		struct jr_denial_count *v = cap <= 4096 ? realloc(d->v, cap * sizeof(*v)) : NULL;
		if (!v)
			return NULL; /* counted no more, still answered */
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n] = (struct jr_denial_count){ .nr = nr, .arch = arch };
	return &d->v[d->n++];
}

/* The answer of the unpatched filter; a program that cannot be run
 * (never the case for libseccomp's output) is answered EPERM. */
static void answer(const struct jr_bpf *policy, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	uint32_t action = SECCOMP_RET_ERRNO | EPERM;
	if (jr_bpf_run(policy->insns, policy->len, &req->data, &action) < 0)
		action = SECCOMP_RET_ERRNO | EPERM;
	resp->id = req->id;
	resp->val = 0;
	resp->error = 0;
	resp->flags = 0;
	switch (action & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_LOG:
	case SECCOMP_RET_ALLOW:
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		break;
	case SECCOMP_RET_ERRNO:
		resp->error = -(int32_t)(action & SECCOMP_RET_DATA);
		break;
	default:
		resp->error = -EPERM;
		break;
	}
}

int jr_denials_handle(struct jr_denials *d, int listener, const struct jr_bpf *policy)
{
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	if (seccomp_notify_alloc(&req, &resp) < 0)
		return -1;
	int r = seccomp_notify_receive(listener, req);
	if (r == 0) {
		answer(policy, req, resp);
		struct jr_denial_count *c = find_or_add(d, req->data.arch, req->data.nr);
		if (c)
			c->count++;
		/* ENOENT: the caller died meanwhile; nothing to answer. */
		seccomp_notify_respond(listener, resp);
	}
	seccomp_notify_free(req, resp);
	return r == -ENOENT || r == -EINTR ? 0 : r;
}

static int by_count(const void *a, const void *b)
{
	const struct jr_denial *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->syscall, y->syscall);
}

int jr_denials_export(const struct jr_denials *d, struct jr_denial **out, size_t *n_out)
{
	*out = NULL;
	*n_out = 0;
	if (!d->n)
		return 0;
	struct jr_denial *v = calloc(d->n, sizeof(*v));
	if (!v)
		return -1;
	for (size_t i = 0; i < d->n; i++) {
		char *name = seccomp_syscall_resolve_num_arch(d->v[i].arch, d->v[i].nr);
		if (!name && asprintf(&name, "syscall_%d", d->v[i].nr) < 0)
			name = NULL;
		if (!name) {
			for (size_t k = 0; k < i; k++)
				free(v[k].syscall);
			free(v);
			return -1;
		}
		v[i] = (struct jr_denial){ .syscall = name, .count = d->v[i].count };
	}
	qsort(v, d->n, sizeof(*v), by_count);
	*out = v;
	*n_out = d->n;
	return 0;
}

void jr_denials_free(struct jr_denials *d)
{
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* ---- refused connections (the egress proxy, the kernel CIDR filter) -- */

#define NET_DENIALS_MAX 1024
#define NET_DENIALS_OTHER "(other destinations)"

void jr_net_denials_add(struct jr_net_denials *d, const char *host, uint16_t port,
			const char *rule, unsigned long count)
{
	for (size_t i = 0; i < d->n; i++) {
		struct jr_net_denial_count *c = &d->v[i];
		if (c->port == port && !strcmp(c->host, host) && !strcmp(c->rule, rule)) {
			c->count += count;
			return;
		}
	}
	/* A jail hammering new names fills the list once; the rest is
	 * counted together in its last entry, so nothing goes missing. */
	if (d->n >= NET_DENIALS_MAX - 1 && strcmp(host, NET_DENIALS_OTHER)) {
		jr_net_denials_add(d, NET_DENIALS_OTHER, 0, "more distinct refusals than the report lists",
				   count);
		return;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 8;
		struct jr_net_denial_count *v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			return;
		d->v = v;
		d->cap = cap;
	}
	struct jr_net_denial_count *c = &d->v[d->n++];
	memset(c, 0, sizeof(*c));
	snprintf(c->host, sizeof(c->host), "%s", host);
	snprintf(c->rule, sizeof(c->rule), "%s", rule);
	c->port = port;
	c->count = count;
}

static int net_by_count(const void *a, const void *b)
{
	const struct jr_net_denial *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	int c = strcmp(x->host, y->host);
	return c ? c : (int)x->port - (int)y->port;
}

int jr_net_denials_export(const struct jr_net_denials *d, struct jr_net_denial **out, size_t *n_out)
{
	*out = NULL;
	*n_out = 0;
	if (!d->n)
		return 0;
	struct jr_net_denial *v = calloc(d->n, sizeof(*v));
	if (!v)
		return -1;
	for (size_t i = 0; i < d->n; i++) {
		v[i] = (struct jr_net_denial){ .host = strdup(d->v[i].host), .port = d->v[i].port,
					       .rule = strdup(d->v[i].rule), .count = d->v[i].count };
		if (!v[i].host || !v[i].rule) {
			for (size_t k = 0; k <= i; k++) {
				free(v[k].host);
				free(v[k].rule);
			}
			free(v);
			return -1;
		}
	}
	qsort(v, d->n, sizeof(*v), net_by_count);
	*out = v;
	*n_out = d->n;
	return 0;
}

void jr_net_denials_free(struct jr_net_denials *d)
{
	free(d->v);
	memset(d, 0, sizeof(*d));
}
