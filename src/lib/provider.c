/* Provider plugins (jailrun-provider(7)): finding and checking them, and
 * running a command through one under the same fail-closed rule as the
 * local jail.  A plugin is refused whole when its table is of another ABI
 * or lacks a required method: half a contract is none. */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "jailrun-provider.h"
#include "internal.h"

struct jr_provider_handle {
	void *dl; /* NULL for the built-in local provider */
	const struct jr_provider *table;
	char *path;
};

static const struct jr_provider local_table = {
	.abi_version = JR_PROVIDER_ABI_VERSION,
	.name = "local",
	.description = "the jail on this host (namespaces, Landlock, seccomp)",
};

/* $JAILRUN_PROVIDER_PATH's directories, then the installed ones. */
static size_t provider_dirs(char ***out)
{
	const char *env = getenv("JAILRUN_PROVIDER_PATH");
	char *copy = strdup(env ? env : "");
	char **dirs = calloc(64, sizeof(char *));
	size_t n = 0;
	if (!copy || !dirs) {
		free(copy);
		free(dirs);
		*out = NULL;
		return 0;
	}
	char *save = NULL;
	for (char *d = strtok_r(copy, ":", &save); d && n < 62; d = strtok_r(NULL, ":", &save))
		if (*d && (dirs[n] = strdup(d)))
			n++;
	if ((dirs[n] = strdup(JR_PROVIDERDIR)))
		n++;
	free(copy);
	*out = dirs;
	return n;
}

static void free_dirs(char **dirs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
}

static bool name_ok(const char *name)
{
	if (!*name || strlen(name) > 64)
		return false;
	for (const char *c = name; *c; c++)
		if (!(*c >= 'a' && *c <= 'z') && !(*c >= '0' && *c <= '9') && *c != '-' && *c != '_')
			return false;
	return true;
}

/* The methods jailrun cannot run a provider without. */
static const char *missing_method(const struct jr_provider *t)
{
	static const char *const names[] = { "open", "exec", "read_file", "write_file", "stat",
					     "readdir", "exists", "mkdir", "rm", "close" };
	const void *fns[] = { (const void *)t->open,	   (const void *)t->exec,
			      (const void *)t->read_file,  (const void *)t->write_file,
			      (const void *)t->stat,	   (const void *)t->readdir,
			      (const void *)t->exists,	   (const void *)t->mkdir,
			      (const void *)t->rm,	   (const void *)t->close };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!fns[i])
			return names[i];
	return NULL;
}

static int open_plugin(const char *path, const char *want, jr_provider_handle_t **out,
		       jr_error_t **err)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return jr_fail(err, 0, "provider %s: %s", path, dlerror());
	jr_provider_entry_fn entry;
	*(void **)&entry = dlsym(dl, "jailrun_provider_v1");
	const struct jr_provider *t = entry ? entry() : NULL;
	const char *missing = t ? missing_method(t) : NULL;
	int r = -1;
	if (!entry)
		jr_fail(err, 0, "provider %s: no jailrun_provider_v1 entry point", path);
	else if (!t)
		jr_fail(err, 0, "provider %s: jailrun_provider_v1 returned no table", path);
	else if (t->abi_version != JR_PROVIDER_ABI_VERSION)
		jr_fail(err, 0, "provider %s: ABI version %u, this jailrun speaks %u", path,
			t->abi_version, JR_PROVIDER_ABI_VERSION);
	else if (!t->name || !name_ok(t->name) || (want && strcmp(t->name, want)))
		jr_fail(err, 0, "provider %s: calls itself '%s', not '%s'", path,
			t->name ? t->name : "(nothing)", want ? want : "a valid name");
	else if (missing)
		jr_fail(err, 0, "provider %s: the required method %s is missing", path, missing);
	else
		r = 0;
	if (r == 0) {
		jr_provider_handle_t *h = calloc(1, sizeof(*h));
		if (!h || !(h->path = strdup(path))) {
			free(h);
			dlclose(dl);
			return jr_fail_oom(err);
		}
		h->dl = dl;
		h->table = t;
		*out = h;
		return 0;
	}
	dlclose(dl);
	return -1;
}

int jr_provider_load(const char *name, jr_provider_handle_t **out, jr_error_t **err)
{
	*out = NULL;
	if (!name_ok(name))
		return jr_fail(err, EINVAL, "--provider: '%s' is not a provider name (a-z, 0-9, - and _)", name);
	if (!strcmp(name, "local")) {
		jr_provider_handle_t *h = calloc(1, sizeof(*h));
		if (!h)
			return jr_fail_oom(err);
		h->table = &local_table;
		*out = h;
		return 0;
	}
	char **dirs;
	size_t n = provider_dirs(&dirs);
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s.so", dirs[i], name);
		if (access(path, F_OK) < 0)
			continue;
		int r = open_plugin(path, name, out, err);
		free_dirs(dirs, n);
		return r;
	}
	free_dirs(dirs, n);
	return jr_fail(err, ENOENT, "no provider '%s' (looked for %s.so in $JAILRUN_PROVIDER_PATH and %s)",
		       name, name, JR_PROVIDERDIR);
}

void jr_provider_unload(jr_provider_handle_t *h)
{
	if (!h)
		return;
	if (h->dl)
		dlclose(h->dl);
	free(h->path);
	free(h);
}

bool jr_provider_is_local(const jr_provider_handle_t *h)
{
	return h->table == &local_table;
}

static void describe(const jr_provider_handle_t *h, const char *path, jr_line_fn fn, void *ud)
{
	const struct jr_provider *t = h->table;
	char optional[96] = "";
	const struct {
		const char *name;
		const void *fn;
	} opt[] = { { "snapshot", (const void *)t->snapshot }, { "restore", (const void *)t->restore },
		    { "fork", (const void *)t->fork },	       { "suspend", (const void *)t->suspend },
		    { "resume", (const void *)t->resume },     { "gc", (const void *)t->gc } };
	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		if (opt[i].fn) {
			strcat(optional, optional[0] ? "," : "");
			strcat(optional, opt[i].name);
		}
	jr_emitf(fn, ud, "%-10s abi %u  %-28s %s  (%s)", t->name, t->abi_version,
		 optional[0] ? optional : "-", path, t->description ? t->description : "");
}

int jr_provider_list(jr_line_fn fn, void *ud)
{
	jr_provider_handle_t local = { .table = &local_table };
	describe(&local, "(built in)", fn, ud);
	char **dirs;
	size_t n = provider_dirs(&dirs);
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			size_t len = strlen(e->d_name);
			if (len < 4 || strcmp(e->d_name + len - 3, ".so"))
				continue;
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", dirs[i], e->d_name);
			jr_provider_handle_t *h = NULL;
			jr_error_t *err = NULL;
			if (open_plugin(path, NULL, &h, &err) == 0) {
				describe(h, path, fn, ud);
				jr_provider_unload(h);
			} else {
				jr_emitf(fn, ud, "refused: %s", err->message);
				jr_error_free(err);
				bad++;
			}
		}
		if (d)
			closedir(d);
	}
	free_dirs(dirs, n);
	return bad ? -1 : 0;
}

/* ---- redaction -------------------------------------------------------- */

static bool secret_key(const char *kv)
{
	static const char *const words[] = { "token", "secret", "key", "password", "credential",
					     "authorization" };
	size_t len = strcspn(kv, "=");
	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
		for (size_t i = 0; i + strlen(words[w]) <= len; i++)
			if (!strncasecmp(kv + i, words[w], strlen(words[w])))
				return true;
	return false;
}

static int longer_first(const void *a, const void *b)
{
	size_t x = strlen(*(const char *const *)a), y = strlen(*(const char *const *)b);
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Every value of a secret-named key in config, replaced by *** in text
 * (in place; the text only shrinks or keeps its length).  Longest first:
 * a short secret inside a longer one must not leave the rest showing.
 * Values under 3 bytes are left, or every "a" of a message would go. */
void jr_redact(char *text, const char *const *config)
{
	const char *values[64];
	size_t n = 0;
	for (size_t i = 0; config && config[i] && n < 64; i++) {
		const char *eq = strchr(config[i], '=');
		if (eq && secret_key(config[i]) && strlen(eq + 1) >= 3)
			values[n++] = eq + 1;
	}
	qsort(values, n, sizeof(values[0]), longer_first);
	for (size_t i = 0; i < n; i++) {
		size_t vlen = strlen(values[i]);
		/* On from after each replacement: a value that is itself
		 * "***" would otherwise match its own replacement for ever. */
		for (char *from = text, *hit; (hit = strstr(from, values[i]));) {
			memcpy(hit, "***", 3);
			memmove(hit + 3, hit + vlen, strlen(hit + vlen) + 1);
			from = hit + 3;
		}
	}
}

/* Words KEY=VALUE whose KEY looks secret get *** for a value (in place). */
/* Where the value starting at v ends: before the next " WORD=" (a value
 * written in quotes may hold spaces), or at the end. */
static char *value_end(char *v)
{
	for (char *sp = strchr(v, ' '); sp; sp = strchr(sp + 1, ' ')) {
		size_t name = strspn(sp + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.");
		if (name && sp[1 + name] == '=')
			return sp;
	}
	return v + strlen(v);
}

void jr_redact_kv_words(char *text)
{
	for (char *w = text; *w;) {
		size_t len = strcspn(w, " ");
		char *eq = memchr(w, '=', len);
		if (eq && secret_key(w)) {
			char *value = eq + 1, *end = value_end(value);
			memmove(value + 3, end, strlen(end) + 1);
			memcpy(value, "***", 3);
			len = (size_t)(value + 3 - w);
		}
		w += len;
		w += strspn(w, " ");
	}
}

/* ---- running a command through a provider ---------------------------- */

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

struct provider_run {
	const struct jr_provider *t;
	const char *const *config;
	const struct jr_run_options *opts;
};

static int provider_fail(const struct provider_run *pr, jr_error_t **err, const char *what,
			 struct jr_provider_error *pe)
{
	char msg[1200];
	pe->message[sizeof(pe->message) - 1] = '\0';
	snprintf(msg, sizeof(msg), "provider %s: %s: %s", pr->t->name, what,
		 pe->message[0] ? pe->message : strerror(pe->code ? pe->code : EIO));
	jr_redact(msg, pr->config);
	return jr_fail(err, pe->code, "%s", msg);
}

struct redacting_log {
	const struct jr_run_options *opts;
	const char *const *config;
};

static void log_redacted(void *ud, const char *line)
{
	struct redacting_log *rl = ud;
	char copy[1200];
	snprintf(copy, sizeof(copy), "%s", line);
	jr_redact(copy, rl->config);
	rl->opts->log(rl->opts->log_userdata, copy);
}

/* The caller's notice function, or stderr for a caller without one (the
 * CLI passes its own; the library prints nothing of its own accord). */
static void notice_redacted(void *ud, const char *line)
{
	struct redacting_log *rl = ud;
	char copy[1200];
	snprintf(copy, sizeof(copy), "%s", line);
	jr_redact(copy, rl->config);
	if (rl->opts && rl->opts->notice)
		rl->opts->notice(NULL, copy);
}

/* Every semantic clause enforced, or the run is refused as a local one
 * would be. */
static int check_clauses(const struct provider_run *pr, const jr_policy_t *p, const jr_plan_t *plan,
			 const struct jr_provider_clause *answers, jr_error_t **err)
{
	for (size_t i = 0; i < p->n_clauses; i++) {
		if (!jr_provider_clause_semantic(p, i) || answers[i].enforced ||
		    jr_plan_clause_overridden(plan, i))
			continue;
		const struct jr_clause *cl = &p->clauses[i];
		char msg[1200];
		snprintf(msg, sizeof(msg), "%s:%u:%u: '%s' is not enforced by provider %s: %s; refusing to run",
			 cl->loc.src ? cl->loc.src->name : "?", cl->loc.line, cl->loc.col, cl->text,
			 pr->t->name, answers[i].mechanism[0] ? answers[i].mechanism : "it did not say how");
		jr_redact(msg, pr->config);
		return jr_fail(err, 0, "%s", msg);
	}
	return 0;
}

/* An instance open under the fail-closed rule; what it needs (the
 * redacting log callbacks it was handed) lives as long as it does. */
struct jr_provider_conn {
	struct provider_run pr;
	jr_provider_instance_t *inst;
	struct redacting_log rl, nl;
	char *policy_json;
};

int jr_provider_open(jr_provider_handle_t *h, const jr_policy_t *policy, const jr_plan_t *plan,
		     const char *const *config, bool preserve, const struct jr_run_options *opts,
		     jr_provider_conn_t **out, const char **failed_step, jr_error_t **err)
{
	*out = NULL;
	*failed_step = "setup";
	jr_provider_conn_t *c = calloc(1, sizeof(*c));
	struct jr_provider_clause *answers = calloc(policy->n_clauses + 1, sizeof(*answers));
	if (!c || !answers || !(c->policy_json = jr_provider_policy_json(policy, plan))) {
		free(c);
		free(answers);
		return jr_fail_oom(err);
	}
	c->pr = (struct provider_run){ .t = h->table, .config = config, .opts = opts };
	c->rl = c->nl = (struct redacting_log){ .opts = opts, .config = config };
	struct jr_provider_open_args oa = {
		.size = sizeof(oa), .policy_json = c->policy_json, .config = config,
		.workspace = plan->workspace, .preserve = preserve,
		.log = opts && opts->log ? log_redacted : NULL, .log_userdata = &c->rl,
		.notice = notice_redacted, .notice_userdata = &c->nl,
	};
	struct jr_provider_error pe = { 0 };
	if (h->table->open(&oa, &c->inst, answers, policy->n_clauses, &pe) < 0) {
		provider_fail(&c->pr, err, "open", &pe);
		free(answers);
		free(c->policy_json);
		free(c);
		return -1;
	}
	/* The plugin's strings are ours to print: terminated whatever it wrote. */
	for (size_t i = 0; i < policy->n_clauses; i++)
		answers[i].mechanism[sizeof(answers[i].mechanism) - 1] = '\0';
	for (size_t i = 0; opts && opts->log && i < policy->n_clauses; i++) {
		if (!jr_provider_clause_semantic(policy, i) || jr_plan_clause_overridden(plan, i))
			continue;
		char line[1400], text[512];
		snprintf(text, sizeof(text), "%s", policy->clauses[i].text);
		if (policy->clauses[i].type == JR_CL_PROVIDER)
			jr_redact_kv_words(text);
		snprintf(line, sizeof(line), "provider %s: %s -> %s%s", h->table->name, text,
			 answers[i].enforced ? "" : "NOT ENFORCED: ", answers[i].mechanism);
		jr_redact(line, config);
		opts->log(opts->log_userdata, line);
	}
	int r = check_clauses(&c->pr, policy, plan, answers, err);
	free(answers);
	if (r < 0) {
		*failed_step = "enforcement";
		memset(&pe, 0, sizeof(pe));
		h->table->close(c->inst, &pe);
		free(c->policy_json);
		free(c);
		return -1;
	}
	*failed_step = NULL;
	*out = c;
	return 0;
}

int jr_provider_close(jr_provider_conn_t *c, jr_error_t **err)
{
	if (!c)
		return 0;
	struct jr_provider_error pe = { 0 };
	int r = 0;
	if (c->pr.t->close(c->inst, &pe) < 0)
		r = provider_fail(&c->pr, err, "close", &pe);
	free(c->policy_json);
	free(c);
	return r;
}

const struct jr_provider *jr_provider_conn_table(const jr_provider_conn_t *c)
{
	return c->pr.t;
}

jr_provider_instance_t *jr_provider_conn_instance(const jr_provider_conn_t *c)
{
	return c->inst;
}

int jr_provider_conn_fail(const jr_provider_conn_t *c, jr_error_t **err, const char *what,
			  struct jr_provider_error *pe)
{
	return provider_fail(&c->pr, err, what, pe);
}

int jr_provider_run(jr_provider_handle_t *h, const jr_policy_t *policy, const jr_plan_t *plan,
		    const char *const *config, bool preserve, char *const argv[],
		    const struct jr_run_options *opts, struct jr_result *res, jr_error_t **err)
{
	struct provider_run pr = { .t = h->table, .config = config, .opts = opts };
	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	res->memory_peak = res->pids_peak = res->output_bytes = -1;
	res->failed_step = "setup";
	uint64_t t0 = jr_now_us();
	/* SIGINT and SIGTERM end the command, and the backend's resources
	 * with it: the provider's blocking call returns (EINTR), close runs. */
	struct sigaction sa = { .sa_handler = on_stop_signal }, old_int, old_term, old_hup, old_pipe;
	sigemptyset(&sa.sa_mask);
	stop_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	/* A reader of the output going away is an EPIPE for the provider to
	 * report, not jailrun's death with the backend left running. */
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigaction(SIGPIPE, &ign, &old_pipe);
	struct jr_provider_error pe = { 0 };
	jr_provider_conn_t *conn = NULL;
	int r = -1;
	if (jr_provider_open(h, policy, plan, config, preserve, opts, &conn, &res->failed_step, err) < 0)
		goto out;
	struct jr_provider_exec_args ea = {
		.size = sizeof(ea), .argv = argv, .envp = plan->envp, .cwd = NULL,
		.stdin_fd = 0, .stdout_fd = 1, .stderr_fd = 2,
		.timeout_ms = plan->time_ms, .max_output_bytes = plan->output_limited ? plan->output_limit : 0,
	};
	struct jr_provider_exec_result er = { .exit_code = -1 };
	res->failed_step = "supervise";
	if (!stop_signal && h->table->exec(conn->inst, &ea, &er, &pe) < 0 && !stop_signal) {
		provider_fail(&pr, err, "exec", &pe);
		goto close;
	}
	res->exit_code = er.exit_code;
	res->signal = stop_signal ? stop_signal : er.signal;
	res->timed_out = er.timed_out;
	res->truncated = er.truncated;
	res->status = er.timed_out ? JR_EXIT_TIMEOUT
		    : res->signal  ? 128 + res->signal
		    : er.exit_code >= 0 ? er.exit_code : JR_EXIT_FAILURE;
	res->failed_step = NULL;
	r = 0;
close:
	if (jr_provider_close(conn, r == 0 ? err : NULL) < 0 && r == 0) {
		res->failed_step = "supervise";
		r = -1;
	}
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	res->wall_us = jr_now_us() - t0;
	return r;
}

int jr_provider_gc(jr_provider_handle_t *h, const char *const *config,
		   const struct jr_run_options *opts, jr_error_t **err)
{
	struct provider_run pr = { .t = h->table, .config = config, .opts = opts };
	if (!h->table->gc)
		return jr_fail(err, ENOTSUP, "provider %s has nothing to collect (no gc method)",
			       h->table->name);
	struct redacting_log rl = { .opts = opts, .config = config };
	struct jr_provider_error pe = { 0 };
	if (h->table->gc(config, opts && opts->log ? log_redacted : NULL, &rl, &pe) < 0)
		return provider_fail(&pr, err, "gc", &pe);
	return 0;
}

char **jr_provider_config(const jr_policy_t *p, const char *name, char *const *extra)
{
	const struct jr_str_list *l = &p->lists[JR_LIST_PROVIDER];
	size_t n_extra = 0;
	while (extra && extra[n_extra])
		n_extra++;
	char **v = calloc(l->n + n_extra + 1, sizeof(char *));
	size_t n = 0, name_len = strlen(name);
	if (!v)
		return NULL;
	for (size_t i = 0; i < l->n; i++) {
		const char *e = l->v[i].value;
		if (strncmp(e, name, name_len) || e[name_len] != ' ')
			continue;
		if (!(v[n++] = strdup(e + name_len + 1)))
			goto oom;
	}
	for (size_t i = 0; i < n_extra; i++)
		if (!(v[n++] = strdup(extra[i])))
			goto oom;
	return v;
oom:
	jr_strv_free(v);
	return NULL;
}
