/* The run report: one JSON object saying what ran, under which policy,
 * what enforced it, how it ended and what it cost.  Field by field in
 * jailrun(1), REPORT; the JSON Schema is man/jailrun-report.schema.json.
 * Names are camelCase, as in the JSON-RPC API. */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <linux/landlock.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "internal.h"
#include "values.h"

#define REPORT_VERSION 1

/* cJSON reports allocation failure as NULL from every call; one check at
 * the end (cJSON_Print of a tree with a missing piece still works, so
 * each add is checked through this flag). */
struct builder {
	bool oom;
};

static cJSON *add(struct builder *b, cJSON *obj, const char *key, cJSON *item)
{
	if (!item || !cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		b->oom = true;
		return NULL;
	}
	return item;
}

/* A JSON string of bytes that need not be UTF-8 (argv, paths, messages):
 * invalid sequences become U+FFFD, so the report always parses. */
static cJSON *text(const char *s)
{
	char *clean = jr_utf8_sanitize(s, strlen(s));
	cJSON *item = clean ? cJSON_CreateString(clean) : NULL;
	free(clean);
	return item;
}

static cJSON *string_or_null(const char *s)
{
	return s ? text(s) : cJSON_CreateNull();
}

static cJSON *int_or_null(bool known, int64_t v)
{
	return known ? cJSON_CreateNumber((double)v) : cJSON_CreateNull();
}

static cJSON *string_array(struct builder *b, const char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < n; i++)
		if (v[i] && !cJSON_AddItemToArray(a, cJSON_CreateString(v[i])))
			b->oom = true;
	return a;
}

/* Names of the set bits, in bit order. */
static cJSON *flag_names(struct builder *b, uint64_t bits, const char *const *names, size_t n)
{
	const char *set[64];
	size_t k = 0;
	for (size_t i = 0; i < n && i < 64; i++)
		if (bits & (1ull << i))
			set[k++] = names[i];
	return string_array(b, set, k);
}

static cJSON *policy_section(struct builder *b, const jr_policy_t *policy)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	add(b, o, "name", string_or_null(policy ? jr_policy_name(policy) : NULL));
	char hex[65];
	if (policy && jr_policy_n_files(policy))
		jr_policy_digest(policy, hex);
	add(b, o, "sha256", string_or_null(policy && jr_policy_n_files(policy) ? hex : NULL));
	cJSON *files = add(b, o, "files", cJSON_CreateArray());
	for (size_t i = 0; files && policy && i < jr_policy_n_files(policy); i++)
		if (jr_policy_file(policy, i) &&
		    !cJSON_AddItemToArray(files, text(jr_policy_file(policy, i))))
			b->oom = true;
	return o;
}

static cJSON *landlock_section(struct builder *b, const struct jr_landlock_plan *ll)
{
	static const char *const fs[] = { "execute",     "write_file", "read_file",  "read_dir",
					  "remove_dir",  "remove_file", "make_char", "make_dir",
					  "make_reg",    "make_sock",  "make_fifo",  "make_block",
					  "make_sym",    "refer",      "truncate",   "ioctl_dev" };
	static const char *const scoped[] = { "abstract_unix_socket", "signal" };
	if (!ll->enabled || !ll->handled_fs)
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	add(b, o, "abi", cJSON_CreateNumber(ll->abi));
	add(b, o, "handledAccessFs", flag_names(b, ll->handled_fs, fs, sizeof(fs) / sizeof(fs[0])));
	static const char *const net[] = { "bind_tcp", "connect_tcp" };
	add(b, o, "handledAccessNet", flag_names(b, ll->handled_net, net, 2));
	add(b, o, "scoped", flag_names(b, ll->scoped, scoped, sizeof(scoped) / sizeof(scoped[0])));
	add(b, o, "rules", cJSON_CreateNumber((double)ll->n_rules));
	return o;
}

static cJSON *seccomp_section(struct builder *b, const jr_plan_t *plan, const jr_policy_t *policy,
			      const struct jr_result *res)
{
	if (!plan->seccomp.policy.len && !plan->seccomp.builtin.len)
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	enum jr_sc_action a = policy ? policy->seccomp_default : JR_SC_ALLOW;
	add(b, o, "defaultAction",
	    cJSON_CreateString(a == JR_SC_KILL ? "kill" : a == JR_SC_LOG ? "log" : a == JR_SC_ERRNO ? "errno" : "allow"));
	add(b, o, "defaultErrno",
	    string_or_null(a == JR_SC_ERRNO ? jr_errno_name(policy->seccomp_default_errno) : NULL));
	add(b, o, "rules", cJSON_CreateNumber(plan->seccomp.policy_rules));
	add(b, o, "builtinRules", cJSON_CreateNumber(plan->seccomp.builtin_rules));
	add(b, o, "denialsCounted", cJSON_CreateBool(res && res->denials_counted));
	return o;
}

static cJSON *limits_section(struct builder *b, const jr_plan_t *plan)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	add(b, o, "mechanism",
	    cJSON_CreateString(plan->limits_by == JR_LIMITS_CGROUP_V1 ? "cgroup-v1"
			       : plan->limits_by == JR_LIMITS_RLIMIT  ? "rlimit"
								      : "none"));
	add(b, o, "memoryBytes", int_or_null(plan->memory, (int64_t)plan->memory));
	add(b, o, "pids", int_or_null(plan->pids, (int64_t)plan->pids));
	add(b, o, "cpus", plan->cpu_milli ? cJSON_CreateNumber((double)plan->cpu_milli / 1000.0)
					  : cJSON_CreateNull());
	add(b, o, "timeMs", int_or_null(plan->time_ms, (int64_t)plan->time_ms));
	add(b, o, "killAfterMs", cJSON_CreateNumber((double)plan->kill_after_ms));
	add(b, o, "outputBytes", int_or_null(plan->output_limited, (int64_t)plan->output_limit));
	static const struct { int resource; const char *key; } rl[] = {
		{ RLIMIT_NOFILE, "nofile" }, { RLIMIT_FSIZE, "fsize" }, { RLIMIT_CORE, "core" } };
	for (size_t k = 0; k < sizeof(rl) / sizeof(rl[0]); k++) {
		cJSON *v = NULL;
		for (size_t i = 0; i < plan->n_rlimits && !v; i++)
			if (plan->rlimits[i].resource == rl[k].resource)
				v = cJSON_CreateNumber((double)plan->rlimits[i].value);
		add(b, o, rl[k].key, v ? v : cJSON_CreateNull());
	}
	return o;
}

static const char *net_mode(const jr_plan_t *plan)
{
	if (plan->net_host)
		return "host";
	if (plan->net_pasta)
		return "pasta";
	return plan->net_proxy ? "proxy" : "none";
}

static cJSON *enforcement_section(struct builder *b, const jr_plan_t *plan,
				  const jr_policy_t *policy, const struct jr_result *res)
{
	static const char *const namespaces[] = { "user", "mount", "pid", "net", "ipc", "uts", "cgroup" };
	if (!plan)
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	add(b, o, "isolation", cJSON_CreateString(plan->landlock_only ? "landlock" : "namespaces"));
	const char *const *ns = namespaces;
	const char *const without_net[] = { "user", "mount", "pid", "ipc", "uts", "cgroup" };
	if (plan->net_host)
		ns = without_net;
	add(b, o, "namespaces", string_array(b, ns, plan->landlock_only ? 0 : plan->net_host ? 6 : 7));
	add(b, o, "landlock", landlock_section(b, &plan->landlock));
	add(b, o, "seccomp", seccomp_section(b, plan, policy, res));
	add(b, o, "network", cJSON_CreateString(net_mode(plan)));
	add(b, o, "limits", limits_section(b, plan));
	size_t enforced = 0;
	for (size_t i = 0; i < plan->n_clauses; i++)
		enforced += plan->clauses[i].enforced;
	cJSON *c = add(b, o, "clauses", cJSON_CreateObject());
	if (c) {
		add(b, c, "enforced", cJSON_CreateNumber((double)enforced));
		add(b, c, "notEnforced", cJSON_CreateNumber((double)(plan->n_clauses - enforced)));
	}
	return o;
}

static cJSON *denials_section(struct builder *b, const struct jr_result *res)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON *sc = add(b, o, "seccomp", cJSON_CreateArray());
	for (size_t i = 0; sc && res && i < res->n_denials; i++) {
		cJSON *d = cJSON_CreateObject();
		if (!d || !cJSON_AddItemToArray(sc, d)) {
			cJSON_Delete(d);
			b->oom = true;
			break;
		}
		add(b, d, "syscall", cJSON_CreateString(res->denials[i].syscall));
		add(b, d, "count", cJSON_CreateNumber((double)res->denials[i].count));
	}
	cJSON *net = add(b, o, "network", cJSON_CreateArray());
	for (size_t i = 0; net && res && i < res->n_net_denials; i++) {
		const struct jr_net_denial *nd = &res->net_denials[i];
		cJSON *d = cJSON_CreateObject();
		if (!d || !cJSON_AddItemToArray(net, d)) {
			cJSON_Delete(d);
			b->oom = true;
			break;
		}
		add(b, d, "host", text(nd->host));
		add(b, d, "port", cJSON_CreateNumber(nd->port));
		add(b, d, "rule", text(nd->rule));
		add(b, d, "count", cJSON_CreateNumber((double)nd->count));
	}
	return o;
}

static cJSON *error_section(struct builder *b, const struct jr_report_input *in)
{
	if (!in->error_step)
		return cJSON_CreateNull();
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	add(b, o, "step", cJSON_CreateString(in->error_step));
	add(b, o, "message", text(in->error && in->error->message ? in->error->message : "unknown error"));
	add(b, o, "errno", int_or_null(in->error && in->error->errnum, in->error ? in->error->errnum : 0));
	return o;
}

static void format_time(long long ms, char out[32])
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03lldZ", ms % 1000);
}

static void outcome(struct builder *b, cJSON *o, const struct jr_report_input *in)
{
	const struct jr_result *r = in->error_step ? NULL : in->result;
	add(b, o, "status", cJSON_CreateNumber(in->status));
	add(b, o, "exitCode", int_or_null(r && r->exit_code >= 0, r ? r->exit_code : 0));
	add(b, o, "signal", int_or_null(r && r->signal, r ? r->signal : 0));
	char name[32] = "SIG";
	const char *abbrev = r && r->signal ? sigabbrev_np(r->signal) : NULL;
	if (abbrev)
		snprintf(name + 3, sizeof(name) - 3, "%s", abbrev);
	add(b, o, "signalName", string_or_null(abbrev ? name : NULL));
	add(b, o, "timedOut", cJSON_CreateBool(r && r->timed_out));
	add(b, o, "oomKilled", cJSON_CreateBool(in->result && in->result->oom_killed));
	const char *exec_error = r && r->exec_errno ? r->exec_errno == ENOENT ? "command not found"
									       : strerror(r->exec_errno)
						    : NULL;
	add(b, o, "execError", string_or_null(exec_error));
}

static void accounting(struct builder *b, cJSON *o, const struct jr_result *r)
{
	add(b, o, "wallMs", cJSON_CreateNumber(r ? (double)r->wall_us / 1000.0 : 0));
	add(b, o, "userMs", cJSON_CreateNumber(r ? (double)r->user_us / 1000.0 : 0));
	add(b, o, "sysMs", cJSON_CreateNumber(r ? (double)r->sys_us / 1000.0 : 0));
	add(b, o, "maxRssKb", cJSON_CreateNumber(r ? (double)r->max_rss_kb : 0));
	add(b, o, "memoryPeakBytes", int_or_null(r && r->memory_peak >= 0, r ? r->memory_peak : 0));
	add(b, o, "pidsPeak", int_or_null(r && r->pids_peak >= 0, r ? r->pids_peak : 0));
	add(b, o, "outputBytes", int_or_null(r && r->output_bytes >= 0, r ? r->output_bytes : 0));
	add(b, o, "truncated", cJSON_CreateBool(r && r->truncated));
}

int jr_report_json(const struct jr_report_input *in, char **json, jr_error_t **err)
{
	struct builder b = { 0 };
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return jr_fail_oom(err);
	add(&b, o, "reportVersion", cJSON_CreateNumber(REPORT_VERSION));
	add(&b, o, "version", cJSON_CreateString(jr_version()));
	add(&b, o, "policy", policy_section(&b, in->policy));
	cJSON *argv = add(&b, o, "argv", cJSON_CreateArray());
	for (size_t i = 0; argv && in->argv && in->argv[i]; i++)
		if (!cJSON_AddItemToArray(argv, text(in->argv[i])))
			b.oom = true;
	char started[32];
	format_time(in->started_ms, started);
	add(&b, o, "startedAt", cJSON_CreateString(started));
	outcome(&b, o, in);
	accounting(&b, o, in->result);
	add(&b, o, "enforcement", enforcement_section(&b, in->plan, in->policy, in->result));
	add(&b, o, "denials", denials_section(&b, in->result));
	add(&b, o, "error", error_section(&b, in));
	char *text = b.oom ? NULL : cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text)
		return jr_fail_oom(err);
	size_t n = strlen(text);
	*json = realloc(text, n + 2);
	if (!*json) {
		free(text);
		return jr_fail_oom(err);
	}
	memcpy(*json + n, "\n", 2);
	return 0;
}
