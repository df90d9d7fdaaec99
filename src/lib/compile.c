/* jr_policy -> jr_plan: resolve the policy against this host.  Paths
 * become canonical, the default view is added (system directories, /proc,
 * /dev, /tmp, an empty home, the workspace) and mounts are ordered so a
 * parent is always mounted before anything beneath it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"

extern char **environ;

/* System trees every jail sees read-only.  On merged-/usr hosts most of
 * the top-level ones are symlinks; those are recreated as symlinks. */
static const char *const system_dirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
};

static int plan_add(jr_plan_t *plan, struct jr_mount m, jr_error_t **err)
{
	struct jr_mount *mounts = reallocarray(plan->mounts, plan->n_mounts + 1, sizeof(*mounts));
	if (!mounts) {
		free(m.source);
		free(m.target);
		return jr_fail_oom(err);
	}
	plan->mounts = mounts;
	plan->mounts[plan->n_mounts++] = m;
	return 0;
}

static int plan_add_simple(jr_plan_t *plan, enum jr_mount_kind kind, const char *source,
			   const char *target, bool readonly, mode_t mode, const char *origin,
			   jr_error_t **err)
{
	struct jr_mount m = { .kind = kind, .readonly = readonly, .mode = mode, .origin = origin };
	m.source = source ? strdup(source) : NULL;
	m.target = strdup(target);
	if ((source && !m.source) || !m.target) {
		free(m.source);
		free(m.target);
		return jr_fail_oom(err);
	}
	return plan_add(plan, m, err);
}

static int add_system_dirs(jr_plan_t *plan, jr_error_t **err)
{
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++) {
		const char *dir = system_dirs[i];
		struct stat st;
		if (lstat(dir, &st) < 0)
			continue; /* absent on this host: nothing to show */
		if (S_ISLNK(st.st_mode)) {
			char link[4096];
			ssize_t n = readlink(dir, link, sizeof(link) - 1);
			if (n < 0)
				return jr_fail(err, errno, "readlink %s", dir);
			link[n] = '\0';
			if (plan_add_simple(plan, JR_MOUNT_SYMLINK, link, dir, true, 0, "system",
					    err) < 0)
				return -1;
		} else if (S_ISDIR(st.st_mode)) {
			if (plan_add_simple(plan, JR_MOUNT_BIND, dir, dir, true, 0, "system", err) < 0)
				return -1;
		}
	}
	return 0;
}

static const char *env_lookup(char *const envp[], const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static int resolve_home(jr_plan_t *plan, char *const envp[], jr_error_t **err)
{
	const char *home = env_lookup(envp, "HOME");
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home || home[0] != '/')
		return 0; /* no home to hide */
	plan->home = jr_path_normalize(home);
	if (!plan->home)
		return jr_fail_oom(err);
	if (strcmp(plan->home, "/") == 0) {
		free(plan->home);
		plan->home = NULL;
	}
	return 0;
}

static int resolve_workspace(jr_plan_t *plan, const char *asked, jr_error_t **err)
{
	if (jr_path_canonical(asked ? asked : ".", &plan->workspace, err) < 0)
		return jr_fail_wrap(err, "workspace");
	struct stat st;
	if (stat(plan->workspace, &st) < 0)
		return jr_fail(err, errno, "workspace %s", plan->workspace);
	if (!S_ISDIR(st.st_mode))
		return jr_fail(err, ENOTDIR, "workspace %s", plan->workspace);
	if (strcmp(plan->workspace, "/") == 0)
		return jr_fail(err, 0, "workspace /: refusing to make the whole host writable");
	return 0;
}

static int add_policy_mount(jr_plan_t *plan, const struct jr_policy_mount *pm, jr_error_t **err)
{
	static const char *const origin[] = { "ro", "rw", "tmpfs" };
	const char *what = origin[pm->kind];

	if (pm->kind == JR_PMOUNT_TMPFS) {
		_cleanup_free_ char *cwd = NULL;
		_cleanup_free_ char *joined = NULL;
		const char *abs = pm->path;
		if (pm->path[0] != '/') {
			if (!(cwd = getcwd(NULL, 0)))
				return jr_fail(err, errno, "tmpfs %s: getcwd", pm->path);
			if (asprintf(&joined, "%s/%s", cwd, pm->path) < 0)
				return jr_fail_oom(err);
			abs = joined;
		}
		_cleanup_free_ char *target = NULL;
		if (jr_path_canonical_missing_ok(abs, &target, err) < 0)
			return jr_fail_wrap(err, "tmpfs");
		if (strcmp(target, "/") == 0)
			return jr_fail(err, 0, "tmpfs /: the jail's root is already a fresh tmpfs");
		return plan_add_simple(plan, JR_MOUNT_TMPFS, NULL, target, false, 0755, what, err);
	}

	char *source = realpath(pm->path, NULL);
	if (!source) {
		if (errno == ENOENT && pm->optional)
			return 0;
		return jr_fail(err, errno, "%s %s", what, pm->path);
	}
	if (strcmp(source, "/") == 0) {
		free(source);
		return jr_fail(err, 0, "%s %s: binding the host's whole root is not allowed", what,
			       pm->path);
	}
	struct jr_mount m = { .kind = JR_MOUNT_BIND, .source = source, .target = strdup(source),
			      .readonly = pm->kind == JR_PMOUNT_RO, .callers = true, .origin = what };
	if (!m.target) {
		free(source);
		return jr_fail_oom(err);
	}
	return plan_add(plan, m, err);
}

/* Stable insertion sort by depth: a mount never hides one beneath it,
 * and mounts at the same depth keep the order they were asked for. */
static void order_mounts(jr_plan_t *plan)
{
	for (size_t i = 1; i < plan->n_mounts; i++) {
		struct jr_mount m = plan->mounts[i];
		unsigned depth = jr_path_depth(m.target);
		size_t j = i;
		while (j > 0 && jr_path_depth(plan->mounts[j - 1].target) > depth) {
			plan->mounts[j] = plan->mounts[j - 1];
			j--;
		}
		plan->mounts[j] = m;
	}
}

static int copy_process_settings(jr_plan_t *plan, const jr_policy_t *policy, jr_error_t **err)
{
	plan->hostname = strdup(policy->hostname ? policy->hostname : "jailrun");
	if (!plan->hostname)
		return jr_fail_oom(err);
	plan->user = policy->user;
	if (policy->n_keep_fds) {
		plan->keep_fds = calloc(policy->n_keep_fds, sizeof(int));
		if (!plan->keep_fds)
			return jr_fail_oom(err);
		memcpy(plan->keep_fds, policy->keep_fds, policy->n_keep_fds * sizeof(int));
		plan->n_keep_fds = policy->n_keep_fds;
	}
	for (size_t i = 0; i < plan->n_keep_fds; i++)
		if (fcntl(plan->keep_fds[i], F_GETFD) < 0)
			return jr_fail(err, errno, "keep-fd %d", plan->keep_fds[i]);
	return 0;
}

int jr_compile(const jr_policy_t *policy, char *const envp[], jr_plan_t **out, jr_error_t **err)
{
	jr_plan_t *plan = calloc(1, sizeof(*plan));
	if (!plan)
		return jr_fail_oom(err);
	if (!envp)
		envp = environ;

	if (copy_process_settings(plan, policy, err) < 0 ||
	    resolve_workspace(plan, policy->workspace, err) < 0 ||
	    resolve_home(plan, envp, err) < 0 || add_system_dirs(plan, err) < 0 ||
	    plan_add_simple(plan, JR_MOUNT_PROC, NULL, "/proc", false, 0, "base", err) < 0 ||
	    plan_add_simple(plan, JR_MOUNT_DEV, NULL, "/dev", false, 0755, "base", err) < 0 ||
	    plan_add_simple(plan, JR_MOUNT_TMPFS, NULL, "/tmp", false, 01777, "base", err) < 0 ||
	    (plan->home &&
	     plan_add_simple(plan, JR_MOUNT_TMPFS, NULL, plan->home, false, 0700, "home", err) < 0) ||
	    plan_add_simple(plan, JR_MOUNT_BIND, plan->workspace, plan->workspace, false, 0,
			    "workspace", err) < 0)
		goto fail;
	plan->mounts[plan->n_mounts - 1].callers = true;
	for (size_t i = 0; i < policy->n_mounts; i++)
		if (add_policy_mount(plan, &policy->mounts[i], err) < 0)
			goto fail;
	order_mounts(plan);
	*out = plan;
	return 0;
fail:
	jr_plan_free(plan);
	return -1;
}

void jr_plan_free(jr_plan_t *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_mounts; i++) {
		free(plan->mounts[i].source);
		free(plan->mounts[i].target);
	}
	free(plan->mounts);
	free(plan->workspace);
	free(plan->home);
	free(plan->hostname);
	free(plan->keep_fds);
	free(plan);
}

void jr_plan_describe(const jr_plan_t *plan, jr_line_fn fn, void *userdata)
{
	char line[8192];
	snprintf(line, sizeof(line), "workspace %s (rw, working directory)", plan->workspace);
	fn(userdata, line);
	snprintf(line, sizeof(line), "hostname %s", plan->hostname);
	fn(userdata, line);
	for (size_t i = 0; i < plan->n_mounts; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		switch (m->kind) {
		case JR_MOUNT_BIND:
			snprintf(line, sizeof(line), "mount %s <- %s (%s bind, nosuid, nodev%s) [%s]",
				 m->target, m->source, m->readonly ? "ro" : "rw",
				 m->callers && getuid() == 0 ? ", idmapped to the caller" : "", m->origin);
			break;
		case JR_MOUNT_TMPFS:
			snprintf(line, sizeof(line), "mount %s (tmpfs, mode %04o) [%s]", m->target,
				 (unsigned)m->mode, m->origin);
			break;
		case JR_MOUNT_PROC:
			snprintf(line, sizeof(line),
				 "mount %s (proc of the jail's pid namespace; sys, sysrq-trigger, irq, bus, fs read-only; kcore, keys, kallsyms, timer_list and 5 more hidden)",
				 m->target);
			break;
		case JR_MOUNT_DEV:
			snprintf(line, sizeof(line),
				 "mount %s (tmpfs: null zero full random urandom tty, own devpts, shm)",
				 m->target);
			break;
		case JR_MOUNT_SYMLINK:
			snprintf(line, sizeof(line), "symlink %s -> %s", m->target, m->source);
			break;
		}
		fn(userdata, line);
	}
}
