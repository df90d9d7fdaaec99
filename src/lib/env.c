/* The command's environment: the caller's, filtered by the policy.
 *
 * env inherit (default): every variable passes except those matching an
 *   `env scrub` glob, unless `env keep` names the variable exactly; the
 *   safelist (PATH HOME USER LOGNAME SHELL LANG LC_* TERM TMPDIR TZ) always
 *   passes.
 * env clear: only variables matching an `env keep` glob pass (still
 *   subject to scrub unless named exactly).
 * env set NAME=VALUE: applied last, whatever the above said.
 * Names are compared case-insensitively: secrets come in any case. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "policy.h"
#include "values.h"

/* The locale variables by name, not LC_*: a secret named LC_API_TOKEN
 * must not pass as a locale. */
static const char *const safelist[] = {
	"PATH",	       "HOME",	     "USER",	      "LOGNAME",	"SHELL",
	"LANG",	       "LANGUAGE",   "LC_ALL",	      "LC_CTYPE",	"LC_NUMERIC",
	"LC_TIME",     "LC_COLLATE", "LC_MONETARY",   "LC_MESSAGES",	"LC_PAPER",
	"LC_NAME",     "LC_ADDRESS", "LC_TELEPHONE",  "LC_MEASUREMENT", "LC_IDENTIFICATION",
	"TERM",	       "TMPDIR",     "TZ",	      NULL,
};

/* The effective list after !removals, as pointers into the policy;
 * out has room for every entry of l. */
static size_t effective(const struct jr_str_list *l, const char **out)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (!l->v[i].remove) {
			out[n++] = l->v[i].value;
			continue;
		}
		size_t k = 0;
		for (size_t j = 0; j < n; j++)
			if (strcasecmp(out[j], l->v[i].value) != 0)
				out[k++] = out[j];
		n = k;
	}
	return n;
}

static bool matches_any(const char *const *globs, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (jr_env_glob_match(globs[i], name, len))
			return true;
	return false;
}

static bool named_exactly(const char *const *names, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(names[i]) == len && strncasecmp(names[i], name, len) == 0)
			return true;
	return false;
}

/* The keep and scrub lists after !removals, worked out once per run. */
struct rules {
	enum jr_env_mode mode;
	const char **keep, **scrub;
	size_t n_keep, n_scrub;
};

static int rules_init(const jr_policy_t *p, struct rules *r)
{
	const struct jr_str_list *kl = &p->lists[JR_LIST_ENV_KEEP], *sl = &p->lists[JR_LIST_ENV_SCRUB];
	r->mode = p->env;
	r->keep = calloc(kl->n + sl->n + 1, sizeof(char *));
	if (!r->keep)
		return -1;
	r->scrub = r->keep + kl->n;
	r->n_keep = effective(kl, r->keep);
	r->n_scrub = effective(sl, r->scrub);
	return 0;
}

static enum jr_env_verdict verdict(const struct rules *r, const char *name, size_t len)
{
	bool exact_keep = named_exactly(r->keep, r->n_keep, name, len);
	bool scrubbed = !exact_keep && matches_any(r->scrub, r->n_scrub, name, len);
	if (r->mode == JR_ENV_CLEAR)
		return !matches_any(r->keep, r->n_keep, name, len) ? JR_ENV_DROP
		       : scrubbed ? JR_ENV_SCRUBBED : JR_ENV_PASS;
	if (matches_any(safelist, sizeof(safelist) / sizeof(safelist[0]) - 1, name, len) ||
	    exact_keep)
		return JR_ENV_PASS;
	return scrubbed ? JR_ENV_SCRUBBED : JR_ENV_PASS;
}

enum jr_env_verdict jr_env_verdict(const jr_policy_t *p, const char *name, size_t len)
{
	struct rules r;
	if (rules_init(p, &r) < 0)
		return JR_ENV_SCRUBBED; /* out of memory: fail closed */
	enum jr_env_verdict v = verdict(&r, name, len);
	free(r.keep);
	return v;
}

static int push(char ***v, size_t *n, char *s)
{
	char **bigger = reallocarray(*v, *n + 2, sizeof(char *));
	if (!bigger) {
		free(s);
		return -1;
	}
	*v = bigger;
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
	return 0;
}

static void drop_name(char **v, size_t *n, const char *name, size_t len)
{
	size_t k = 0;
	for (size_t i = 0; i < *n; i++) {
		if (strncmp(v[i], name, len) == 0 && v[i][len] == '=')
			free(v[i]);
		else
			v[k++] = v[i];
	}
	*n = k;
	v[k] = NULL;
}

int jr_env_build(const jr_policy_t *p, char *const caller[], const char *home, char ***out,
		 char ***scrubbed_out, jr_error_t **err)
{
	struct rules rules;
	char **v = calloc(1, sizeof(char *)), **scrubbed = calloc(1, sizeof(char *));
	size_t n = 0, n_scrubbed = 0;
	if (!v || !scrubbed || rules_init(p, &rules) < 0) {
		free(v);
		free(scrubbed);
		return jr_fail_oom(err);
	}
	for (char *const *e = caller; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || eq == *e)
			continue;
		enum jr_env_verdict verdict_ = verdict(&rules, *e, (size_t)(eq - *e));
		if (verdict_ == JR_ENV_SCRUBBED) {
			char *name = strndup(*e, (size_t)(eq - *e));
			if (!name || push(&scrubbed, &n_scrubbed, name) < 0)
				goto oom;
		}
		if (verdict_ == JR_ENV_PASS) {
			drop_name(v, &n, *e, (size_t)(eq - *e) + 0);
			char *copy = strdup(*e);
			if (!copy || push(&v, &n, copy) < 0)
				goto oom;
		}
	}
	const struct jr_str_list *set = &p->lists[JR_LIST_ENV_SET];
	for (size_t i = 0; i < set->n; i++) {
		const char *s = set->v[i].value;
		size_t len = strcspn(s, "=");
		drop_name(v, &n, s, len);
		if (set->v[i].remove)
			continue;
		char *copy = strdup(s);
		if (!copy || push(&v, &n, copy) < 0)
			goto oom;
	}
	/* net proxy: the proxy is the only way out; whatever the caller's
	 * proxy settings say leads nowhere in the jail. */
	if (p->net == JR_NET_PROXY && p->isolation != JR_ISO_LANDLOCK) {
		static const char *const names[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
						     "http_proxy", "https_proxy", "all_proxy" };
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			char *var = NULL;
			drop_name(v, &n, names[i], strlen(names[i]));
			if (asprintf(&var, "%s=http://127.0.0.1:%d", names[i], JR_PROXY_PORT) < 0 ||
			    push(&v, &n, var) < 0)
				goto oom;
		}
		static const char *const direct[] = { "NO_PROXY=localhost,127.0.0.1,::1",
						      "no_proxy=localhost,127.0.0.1,::1" };
		for (size_t i = 0; i < 2; i++) {
			char *var = strdup(direct[i]);
			drop_name(v, &n, direct[i], strcspn(direct[i], "="));
			if (!var || push(&v, &n, var) < 0)
				goto oom;
		}
	}
	/* Tools need $HOME; the jail has one even when the caller had none set. */
	if (home && p->env != JR_ENV_CLEAR && !jr_env_get(v, "HOME")) {
		char *h = NULL;
		if (asprintf(&h, "HOME=%s", home) < 0 || push(&v, &n, h) < 0)
			goto oom;
	}
	free(rules.keep);
	*out = v;
	*scrubbed_out = scrubbed;
	return 0;
oom:
	free(rules.keep);
	jr_strv_free(v);
	jr_strv_free(scrubbed);
	return jr_fail_oom(err);
}

void jr_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}
