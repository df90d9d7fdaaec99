/* The policy as a provider's open() gets it: JSON of what the policy
 * means on this host (jailrun-provider(7), POLICY), so that a backend
 * that is not this kernel can enforce the same clauses or say it cannot.
 * Paths are resolved, groups of syscalls expanded, every clause listed in
 * order with whether it is the provider's to enforce. */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "syscalls.h"

struct out {
	bool oom;
};

static cJSON *put(struct out *o, cJSON *obj, const char *key, cJSON *item)
{
	if (!item || !cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		o->oom = true;
		return NULL;
	}
	return item;
}

static void push(struct out *o, cJSON *array, cJSON *item)
{
	if (!array || !item || !cJSON_AddItemToArray(array, item)) {
		cJSON_Delete(item);
		o->oom = true;
	}
}

static cJSON *number_or_null(bool set, double value)
{
	return set ? cJSON_CreateNumber(value) : cJSON_CreateNull();
}

static cJSON *string_or_null(const char *s)
{
	return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static void add_mounts(struct out *o, cJSON *root, const jr_plan_t *plan)
{
	cJSON *a = put(o, root, "mounts", cJSON_CreateArray());
	for (size_t i = 0; a && i < plan->n_mounts; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		const char *type = m->is_mask ? "mask" : m->kind == JR_MOUNT_BIND ? "bind"
							 : m->kind == JR_MOUNT_TMPFS ? "tmpfs" : NULL;
		if (!type)
			continue; /* symlinks, /proc, /dev: the backend's own business */
		cJSON *e = cJSON_CreateObject();
		push(o, a, e);
		if (!e)
			continue;
		put(o, e, "type", cJSON_CreateString(type));
		put(o, e, "target", cJSON_CreateString(m->target));
		put(o, e, "source", string_or_null(m->kind == JR_MOUNT_BIND ? m->source : NULL));
		put(o, e, "readOnly", cJSON_CreateBool(m->readonly));
		put(o, e, "callers", cJSON_CreateBool(m->callers));
	}
}

static cJSON *list_of(struct out *o, const struct jr_str_list *l, bool numbers)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < l->n; i++)
		if (jr_str_entry_in_effect(l, i))
			push(o, a, numbers ? cJSON_CreateNumber(atof(l->v[i].value))
					   : cJSON_CreateString(l->v[i].value));
	return a;
}

static void add_network(struct out *o, cJSON *root, const jr_policy_t *p)
{
	static const char *const modes[] = { "none", "host", "proxy", "pasta" };
	cJSON *n = put(o, root, "network", cJSON_CreateObject());
	if (!n)
		return;
	put(o, n, "mode", cJSON_CreateString(modes[p->net]));
	put(o, n, "allowHosts", list_of(o, &p->lists[JR_LIST_ALLOW_HOST], false));
	put(o, n, "allowCidrs", list_of(o, &p->lists[JR_LIST_ALLOW_CIDR], false));
	put(o, n, "allowConnect", list_of(o, &p->lists[JR_LIST_ALLOW_CONNECT], true));
	put(o, n, "allowBind", list_of(o, &p->lists[JR_LIST_ALLOW_BIND], true));
	put(o, n, "resolve", list_of(o, &p->lists[JR_LIST_RESOLVE], false));
}

static void add_limits(struct out *o, cJSON *root, const jr_policy_t *p)
{
	static const struct {
		const char *key;
		enum jr_limit_id id;
	} keys[] = { { "memoryBytes", JR_LIMIT_MEMORY }, { "pids", JR_LIMIT_PIDS },
		     { "cpuMillis", JR_LIMIT_CPU },	 { "timeMs", JR_LIMIT_TIME },
		     { "nofile", JR_LIMIT_NOFILE },	 { "fsizeBytes", JR_LIMIT_FSIZE },
		     { "outputBytes", JR_LIMIT_OUTPUT } };
	cJSON *l = put(o, root, "limits", cJSON_CreateObject());
	for (size_t i = 0; l && i < sizeof(keys) / sizeof(keys[0]); i++) {
		const struct jr_limit *lim = &p->limits[keys[i].id];
		put(o, l, keys[i].key, number_or_null(lim->s.set, (double)lim->value));
	}
}

static const char *action_name(enum jr_sc_action a)
{
	static const char *const names[] = { "allow", "kill", "log", "errno" };
	return names[a];
}

static cJSON *syscall_names(struct out *o, const struct jr_sc_rule *r)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < r->n_names; i++) {
		const struct jr_syscall_group *g = jr_syscall_group_find(r->names[i]);
		if (!g) {
			push(o, a, cJSON_CreateString(r->names[i]));
			continue;
		}
		for (const char *const *s = g->syscalls; *s; s++)
			if (jr_syscall_known(*s))
				push(o, a, cJSON_CreateString(*s));
	}
	return a;
}

static void add_seccomp(struct out *o, cJSON *root, const jr_policy_t *p)
{
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=", "&=" };
	cJSON *sc = put(o, root, "seccomp", cJSON_CreateObject());
	if (!sc)
		return;
	put(o, sc, "defaultAction", cJSON_CreateString(action_name(p->seccomp_default)));
	put(o, sc, "defaultErrno", number_or_null(p->seccomp_default == JR_SC_ERRNO,
						  p->seccomp_default_errno));
	cJSON *rules = put(o, sc, "rules", cJSON_CreateArray());
	for (size_t i = 0; rules && i < p->n_rules; i++) {
		const struct jr_sc_rule *r = &p->rules[i];
		cJSON *e = cJSON_CreateObject();
		push(o, rules, e);
		if (!e)
			continue;
		put(o, e, "action", cJSON_CreateString(r->allow ? "allow" : action_name(r->action)));
		put(o, e, "errno", number_or_null(!r->allow && r->action == JR_SC_ERRNO, r->errnum));
		put(o, e, "syscalls", syscall_names(o, r));
		cJSON *conds = put(o, e, "conditions", cJSON_CreateArray());
		for (size_t c = 0; conds && c < r->n_conds; c++) {
			cJSON *ce = cJSON_CreateObject();
			push(o, conds, ce);
			if (!ce)
				continue;
			put(o, ce, "arg", cJSON_CreateNumber(r->conds[c].arg));
			put(o, ce, "op", cJSON_CreateString(ops[r->conds[c].op]));
			put(o, ce, "value", cJSON_CreateNumber((double)r->conds[c].value));
			put(o, ce, "mask", cJSON_CreateNumber((double)r->conds[c].mask));
		}
	}
}

/* How the local jail works is not a backend's business; jailrun's own
 * directives (the agent API's guard, the provider lines) neither. */
static bool clause_is_mechanism(enum jr_clause_type t)
{
	return t == JR_CL_LANDLOCK || t == JR_CL_ISOLATION || t == JR_CL_GUARD || t == JR_CL_PROVIDER;
}

bool jr_provider_clause_semantic(const jr_policy_t *p, size_t i)
{
	return !clause_is_mechanism(p->clauses[i].type);
}

static void add_clauses(struct out *o, cJSON *root, const jr_policy_t *p, const jr_plan_t *plan)
{
	cJSON *a = put(o, root, "clauses", cJSON_CreateArray());
	for (size_t i = 0; a && i < p->n_clauses; i++) {
		const struct jr_clause *cl = &p->clauses[i];
		cJSON *e = cJSON_CreateObject();
		push(o, a, e);
		if (!e)
			continue;
		char where[512];
		snprintf(where, sizeof(where), "%s:%u:%u", cl->loc.src ? cl->loc.src->name : "?",
			 cl->loc.line, cl->loc.col);
		char directive[32];
		snprintf(directive, sizeof(directive), "%s", cl->text);
		directive[strcspn(directive, " ")] = '\0';
		put(o, e, "where", cJSON_CreateString(where));
		put(o, e, "directive", cJSON_CreateString(directive));
		put(o, e, "text", cJSON_CreateString(cl->text));
		put(o, e, "kind", cJSON_CreateString(clause_is_mechanism(cl->type) ? "mechanism" : "semantic"));
		/* A setting a later line replaced: nothing for the backend to do. */
		put(o, e, "inEffect", cJSON_CreateBool(!jr_plan_clause_overridden(plan, i)));
	}
}

static cJSON *ids(struct out *o, unsigned uid, unsigned gid)
{
	cJSON *e = cJSON_CreateObject();
	if (e) {
		put(o, e, "uid", cJSON_CreateNumber(uid));
		put(o, e, "gid", cJSON_CreateNumber(gid));
	}
	return e;
}

char *jr_provider_policy_json(const jr_policy_t *p, const jr_plan_t *plan)
{
	static const char *const home_modes[] = { "tmpfs", "ro", "rw" };
	struct out o = { 0 };
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return NULL;
	put(&o, root, "version", cJSON_CreateNumber(1));
	cJSON *pol = put(&o, root, "policy", cJSON_CreateObject());
	char digest[65];
	jr_policy_digest(p, digest);
	if (pol) {
		put(&o, pol, "name", cJSON_CreateString(jr_policy_name(p)));
		put(&o, pol, "sha256", cJSON_CreateString(digest));
	}
	cJSON *ws = put(&o, root, "workspace", cJSON_CreateObject());
	if (ws) {
		put(&o, ws, "path", cJSON_CreateString(plan->workspace));
		put(&o, ws, "readOnly", cJSON_CreateBool(p->workspace_mode == JR_WS_RO));
	}
	cJSON *home = put(&o, root, "home", cJSON_CreateObject());
	if (home) {
		put(&o, home, "path", string_or_null(plan->home));
		put(&o, home, "mode", cJSON_CreateString(home_modes[p->home]));
	}
	put(&o, root, "hostname", cJSON_CreateString(plan->hostname ? plan->hostname : "jailrun"));
	struct jr_ids id;
	jr_ids_for_plan(plan, &id);
	put(&o, root, "caller", ids(&o, (unsigned)getuid(), (unsigned)getgid()));
	put(&o, root, "user", ids(&o, id.inside_uid, id.inside_gid));
	add_mounts(&o, root, plan);
	add_network(&o, root, p);
	add_limits(&o, root, p);
	put(&o, root, "capabilities", cJSON_CreateString(p->caps == JR_CAPS_NONE ? "none" : "keep"));
	add_seccomp(&o, root, p);
	add_clauses(&o, root, p, plan);
	char *text = o.oom ? NULL : cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}
