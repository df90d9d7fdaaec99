/* The policy as a provider's open() gets it: JSON of what the policy
 * means on this host (jailrun-provider(7), POLICY), so that a backend
 * that is not this kernel can enforce the same clauses or say it cannot.
 * Paths are resolved, groups of syscalls expanded, every clause listed in
 * order with whether it is the provider's to enforce. */
#include "config.h"

#include <cjson/cJSON.h>
#include <seccomp.h>
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

struct rule_sink {
	struct out *o;
	cJSON *rules;
};

static cJSON *u64_string(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return cJSON_CreateString(buf);
}

static const char *op_name(enum scmp_compare op)
{
	switch (op) {
	case SCMP_CMP_NE: return "!=";
	case SCMP_CMP_LT: return "<";
	case SCMP_CMP_LE: return "<=";
	case SCMP_CMP_EQ: return "==";
	case SCMP_CMP_GE: return ">=";
	case SCMP_CMP_GT: return ">";
	case SCMP_CMP_MASKED_EQ: return "&=";
	default: return "?";
	}
}

/* One rule as the filter compiler adds it; numbers as decimal strings,
 * since a JSON number is a double and a 64-bit mask is not. */
static void add_rule_json(void *ud, bool builtin, uint32_t action, const char *name, unsigned n,
			  const struct scmp_arg_cmp *conds)
{
	struct rule_sink *rs = ud;
	struct out *o = rs->o;
	cJSON *e = cJSON_CreateObject();
	push(o, rs->rules, e);
	if (!e)
		return;
	bool is_errno = (action & 0xffff0000U) == SCMP_ACT_ERRNO(0);
	put(o, e, "action", cJSON_CreateString(action == SCMP_ACT_ALLOW ? "allow"
					       : action == SCMP_ACT_LOG ? "log"
					       : is_errno ? "errno" : "kill"));
	put(o, e, "errno", number_or_null(is_errno, action & 0xffff));
	cJSON *names = put(o, e, "syscalls", cJSON_CreateArray());
	push(o, names, cJSON_CreateString(name));
	put(o, e, "builtin", cJSON_CreateBool(builtin));
	cJSON *cs = put(o, e, "conditions", cJSON_CreateArray());
	for (unsigned k = 0; cs && k < n; k++) {
		cJSON *ce = cJSON_CreateObject();
		push(o, cs, ce);
		if (!ce)
			continue;
		bool masked = conds[k].op == SCMP_CMP_MASKED_EQ;
		put(o, ce, "arg", cJSON_CreateNumber(conds[k].arg));
		put(o, ce, "op", cJSON_CreateString(op_name(conds[k].op)));
		put(o, ce, "value", u64_string(masked ? conds[k].datum_b : conds[k].datum_a));
		put(o, ce, "mask", u64_string(masked ? conds[k].datum_a : UINT64_MAX));
	}
}

static void add_seccomp(struct out *o, cJSON *root, const jr_policy_t *p, const jr_plan_t *plan)
{
	cJSON *sc = put(o, root, "seccomp", cJSON_CreateObject());
	if (!sc)
		return;
	put(o, sc, "defaultAction", cJSON_CreateString(action_name(p->seccomp_default)));
	put(o, sc, "defaultErrno", number_or_null(p->seccomp_default == JR_SC_ERRNO,
						  p->seccomp_default_errno));
	struct rule_sink rs = { .o = o, .rules = put(o, sc, "rules", cJSON_CreateArray()) };
	unsigned extras = (plan->setid_guard ? JR_SC_EXTRA_SETID : 0) |
			  (plan->exec_narrowed ? JR_SC_EXTRA_NO_MEMFD_EXEC : 0);
	jr_error_t *err = NULL;
	if (rs.rules && jr_seccomp_rules(p, extras, add_rule_json, &rs, &err) < 0) {
		jr_error_free(err);
		o->oom = true; /* the policy compiled once already: not expected */
	}
}

/* How the local jail works is not a backend's business; jailrun's own
 * directives (the agent API's guard, the provider lines) neither. */
static bool clause_is_mechanism(const struct jr_clause *cl)
{
	/* landlock scope is what it keeps out (abstract sockets, signals),
	 * not how: a backend must keep them out too. */
	if (cl->type == JR_CL_LANDLOCK)
		return strncmp(cl->text, "landlock scope", 14) != 0;
	return cl->type == JR_CL_ISOLATION || cl->type == JR_CL_GUARD || cl->type == JR_CL_PROVIDER;
}

bool jr_provider_clause_semantic(const jr_policy_t *p, size_t i)
{
	return !clause_is_mechanism(&p->clauses[i]);
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
		char *text = strdup(cl->text);
		if (text && cl->type == JR_CL_PROVIDER)
			jr_redact_kv_words(text); /* credentials never in a request */
		put(o, e, "text", text ? cJSON_CreateString(text) : NULL);
		free(text);
		put(o, e, "kind", cJSON_CreateString(clause_is_mechanism(cl) ? "mechanism" : "semantic"));
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
	add_seccomp(&o, root, p, plan);
	add_clauses(&o, root, p, plan);
	char *text = o.oom ? NULL : cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}
