/* Unit tests for src/lib/policy.c and src/lib/compile.c: policies built with
 * jr_policy_*, compiled with jr_compile against a private environment, and
 * the resulting plan inspected through struct jr_plan / struct jr_mount.
 *
 * Each test gets a fresh temporary tree (mkdtemp under /tmp):
 *   DIR/ws/a/            the workspace (DIR is canonical)
 *   DIR/x/y/z/  DIR/p/  DIR/q/
 *   DIR/file             a regular file
 *   DIR/wslink -> ws     a relative symlink to the workspace
 *   DIR/rootlink -> /    a symlink to the host root
 * and HOME=DIR/home in the environment passed to jr_compile. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jailrun.h"
#include "internal.h"

struct fx {
	char *dir;
	char *ws;
	char *home;
	char *home_env;
	char *envp[3];
	jr_policy_t *policy;
	jr_plan_t *plan;
	jr_error_t *err;
	char buf[PATH_MAX];
};

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	return s;
}

/* DIR/rel in a scratch buffer (valid until the next call). */
static const char *P(struct fx *f, const char *rel)
{
	int n = snprintf(f->buf, sizeof(f->buf), "%s/%s", f->dir, rel);
	assert_true(n > 0 && (size_t)n < sizeof(f->buf));
	return f->buf;
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	char tmpl[] = "/tmp/jr-test-compile-XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	f->dir = realpath(tmpl, NULL);
	assert_non_null(f->dir);
	static const char *const dirs[] = { "ws", "ws/a", "x", "x/y", "x/y/z", "p", "q" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		assert_int_equal(mkdir(P(f, dirs[i]), 0755), 0);
	int fd = open(P(f, "file"), O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink("ws", P(f, "wslink")), 0);
	assert_int_equal(symlink("/", P(f, "rootlink")), 0);

	f->ws = xasprintf("%s/ws", f->dir);
	f->home = xasprintf("%s/home", f->dir);
	f->home_env = xasprintf("HOME=%s", f->home);
	f->envp[0] = f->home_env;
	f->envp[1] = (char *)"PATH=/usr/bin:/bin";
	f->envp[2] = NULL;

	assert_int_equal(jr_policy_new(&f->policy, &f->err), 0);
	assert_null(f->err);
	assert_non_null(f->policy);
	assert_int_equal(jr_policy_set_workspace(f->policy, f->ws, &f->err), 0);
	*state = f;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	return unlink(path) < 0 ? -1 : 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	if (!f)
		return 0;
	jr_plan_free(f->plan);
	jr_policy_free(f->policy);
	jr_error_free(f->err);
	if (f->dir)
		nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f->dir);
	free(f->ws);
	free(f->home);
	free(f->home_env);
	free(f);
	return 0;
}

/* ---- helpers ----------------------------------------------------------- */

/* Index of the only mount with this target, -1 if none; fails on two. */
static ssize_t find_mount(const jr_plan_t *plan, const char *target)
{
	ssize_t found = -1;
	for (size_t i = 0; i < plan->n_mounts; i++) {
		assert_non_null(plan->mounts[i].target);
		if (strcmp(plan->mounts[i].target, target) == 0) {
			if (found >= 0)
				print_error("two mounts at %s\n", target);
			assert_int_equal(found, -1);
			found = (ssize_t)i;
		}
	}
	return found;
}

static const struct jr_mount *get_mount(const jr_plan_t *plan, const char *target)
{
	ssize_t i = find_mount(plan, target);
	if (i < 0)
		print_error("no mount at %s\n", target);
	assert_true(i >= 0);
	return &plan->mounts[i];
}

static void assert_depth_ordered(const jr_plan_t *plan)
{
	for (size_t i = 1; i < plan->n_mounts; i++) {
		unsigned a = jr_path_depth(plan->mounts[i - 1].target);
		unsigned b = jr_path_depth(plan->mounts[i].target);
		if (a > b)
			print_error("mount %zu (%s) deeper than mount %zu (%s)\n", i - 1,
				    plan->mounts[i - 1].target, i, plan->mounts[i].target);
		assert_true(a <= b);
	}
}

static void compile_ok_env(struct fx *f, char *const envp[])
{
	jr_plan_free(f->plan);
	f->plan = NULL;
	int r = jr_compile(f->policy, envp, &f->plan, &f->err);
	if (r != 0)
		print_error("jr_compile failed: %s\n", f->err ? f->err->message : "(no error)");
	assert_int_equal(r, 0);
	assert_null(f->err);
	assert_non_null(f->plan);
	assert_depth_ordered(f->plan);
}

static void compile_ok(struct fx *f)
{
	compile_ok_env(f, f->envp);
}

/* jr_compile must fail with errnum, leave *out alone and name `needle`. */
static void compile_fails(struct fx *f, int errnum, const char *needle)
{
	jr_plan_free(f->plan);
	f->plan = NULL;
	jr_error_free(f->err);
	f->err = NULL;
	assert_int_equal(jr_compile(f->policy, f->envp, &f->plan, &f->err), -1);
	assert_null(f->plan);
	assert_non_null(f->err);
	assert_non_null(f->err->message);
	assert_int_equal(f->err->errnum, errnum);
	if (needle && !strstr(f->err->message, needle))
		print_error("message \"%s\" lacks \"%s\"\n", f->err->message, needle);
	if (needle)
		assert_non_null(strstr(f->err->message, needle));
	if (errnum)
		assert_non_null(strstr(f->err->message, strerror(errnum)));
	jr_error_free(f->err);
	f->err = NULL;
}

/* A jr_policy_* setter must refuse with errnum 0 and name `needle`. */
static void expect_refused(struct fx *f, int r, const char *needle)
{
	assert_int_equal(r, -1);
	assert_non_null(f->err);
	assert_int_equal(f->err->errnum, 0);
	assert_non_null(f->err->message);
	if (needle)
		assert_non_null(strstr(f->err->message, needle));
	jr_error_free(f->err);
	f->err = NULL;
}

/* ---- workspace ---------------------------------------------------------- */

static void test_workspace_canonical_and_bound(void **state)
{
	struct fx *f = *state;
	/* Through a symlink, with "." and a trailing slash. */
	char *asked = xasprintf("%s/wslink/./", f->dir);
	assert_int_equal(jr_policy_set_workspace(f->policy, asked, &f->err), 0);
	free(asked);
	compile_ok(f);

	assert_string_equal(f->plan->workspace, f->ws);
	const struct jr_mount *m = get_mount(f->plan, f->ws);
	assert_int_equal(m->kind, JR_MOUNT_BIND);
	assert_false(m->readonly);
	assert_non_null(m->source);
	assert_string_equal(m->source, f->ws);
	assert_string_equal(m->target, f->ws);
	assert_string_equal(m->origin, "workspace");
}

static void test_workspace_defaults_to_cwd(void **state)
{
	struct fx *f = *state;
	assert_int_equal(jr_policy_set_workspace(f->policy, NULL, &f->err), 0);
	char *saved = getcwd(NULL, 0);
	assert_non_null(saved);
	assert_int_equal(chdir(P(f, "wslink/a")), 0);
	int r = jr_compile(f->policy, f->envp, &f->plan, &f->err);
	assert_int_equal(chdir(saved), 0);
	free(saved);
	assert_int_equal(r, 0);
	assert_null(f->err);

	char *want = xasprintf("%s/a", f->ws);
	assert_string_equal(f->plan->workspace, want);
	const struct jr_mount *m = get_mount(f->plan, want);
	assert_int_equal(m->kind, JR_MOUNT_BIND);
	assert_false(m->readonly);
	free(want);
}

static void test_workspace_root_refused(void **state)
{
	struct fx *f = *state;
	assert_int_equal(jr_policy_set_workspace(f->policy, "/", &f->err), 0);
	compile_fails(f, 0, "workspace /");
	/* Also when "/" is reached through a symlink or "..". */
	assert_int_equal(jr_policy_set_workspace(f->policy, P(f, "rootlink"), &f->err), 0);
	compile_fails(f, 0, "workspace /");
	assert_int_equal(jr_policy_set_workspace(f->policy, "/tmp/..", &f->err), 0);
	compile_fails(f, 0, "workspace /");
}

static void test_workspace_file_is_enotdir(void **state)
{
	struct fx *f = *state;
	char *file = xasprintf("%s/file", f->dir);
	assert_int_equal(jr_policy_set_workspace(f->policy, file, &f->err), 0);
	compile_fails(f, ENOTDIR, file);
	free(file);
}

static void test_workspace_missing_is_enoent(void **state)
{
	struct fx *f = *state;
	char *missing = xasprintf("%s/no-such-dir", f->dir);
	assert_int_equal(jr_policy_set_workspace(f->policy, missing, &f->err), 0);
	compile_fails(f, ENOENT, missing);
	free(missing);
}

static void test_workspace_empty_refused(void **state)
{
	struct fx *f = *state;
	expect_refused(f, jr_policy_set_workspace(f->policy, "", &f->err), "workspace");
	/* The earlier setting survives. */
	assert_non_null(f->policy->workspace);
	assert_string_equal(f->policy->workspace, f->ws);
}

/* ---- default view --------------------------------------------------------- */

static void test_home_is_private_tmpfs(void **state)
{
	struct fx *f = *state;
	compile_ok(f);
	assert_non_null(f->plan->home);
	assert_string_equal(f->plan->home, f->home);
	const struct jr_mount *m = get_mount(f->plan, f->home);
	assert_int_equal(m->kind, JR_MOUNT_TMPFS);
	assert_int_equal(m->mode, 0700);
	assert_false(m->readonly);
	assert_null(m->source);
	assert_string_equal(m->origin, "home");
}

static void test_base_mounts(void **state)
{
	struct fx *f = *state;
	compile_ok(f);

	const struct jr_mount *m = get_mount(f->plan, "/tmp");
	assert_int_equal(m->kind, JR_MOUNT_TMPFS);
	assert_int_equal(m->mode, 01777);
	assert_false(m->readonly);

	m = get_mount(f->plan, "/proc");
	assert_int_equal(m->kind, JR_MOUNT_PROC);

	m = get_mount(f->plan, "/dev");
	assert_int_equal(m->kind, JR_MOUNT_DEV);

	/* Process settings with nothing asked for. */
	assert_string_equal(f->plan->hostname, "jailrun");
	assert_int_equal(f->plan->user, JR_USER_SAME);
	assert_int_equal(f->plan->n_keep_fds, 0);

	/* Nothing the policy did not ask for is writable except the
	 * workspace and the tmpfs mounts. */
	for (size_t i = 0; i < f->plan->n_mounts; i++) {
		const struct jr_mount *e = &f->plan->mounts[i];
		if (e->kind == JR_MOUNT_BIND && !e->readonly)
			assert_string_equal(e->target, f->ws);
	}
}

static const char *const system_dirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
};

static void test_system_dirs_follow_host(void **state)
{
	struct fx *f = *state;
	compile_ok(f);

	size_t expected = 0;
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++) {
		const char *dir = system_dirs[i];
		struct stat st;
		ssize_t idx = find_mount(f->plan, dir);
		if (lstat(dir, &st) < 0 || !(S_ISLNK(st.st_mode) || S_ISDIR(st.st_mode))) {
			assert_int_equal(idx, -1);
			continue;
		}
		expected++;
		if (idx < 0)
			print_error("no mount for host %s\n", dir);
		assert_true(idx >= 0);
		const struct jr_mount *m = &f->plan->mounts[idx];
		assert_string_equal(m->origin, "system");
		if (S_ISLNK(st.st_mode)) {
			char link[PATH_MAX];
			ssize_t n = readlink(dir, link, sizeof(link) - 1);
			assert_true(n > 0);
			link[n] = '\0';
			assert_int_equal(m->kind, JR_MOUNT_SYMLINK);
			assert_non_null(m->source);
			assert_string_equal(m->source, link);
		} else {
			assert_int_equal(m->kind, JR_MOUNT_BIND);
			assert_true(m->readonly);
			assert_string_equal(m->source, dir);
		}
	}
	size_t got = 0;
	for (size_t i = 0; i < f->plan->n_mounts; i++)
		if (strcmp(f->plan->mounts[i].origin, "system") == 0)
			got++;
	assert_int_equal(got, expected);
}

/* The same, spelled out for the dirs named in the design: /usr is a
 * read-only bind; on a merged-/usr host /bin, /lib, /sbin and /lib64 are
 * symlinks whose text ("usr/bin", ...) is copied verbatim. */
static void test_system_dirs_merged_usr(void **state)
{
	struct fx *f = *state;
	compile_ok(f);

	struct stat st;
	assert_int_equal(lstat("/usr", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	const struct jr_mount *m = get_mount(f->plan, "/usr");
	assert_int_equal(m->kind, JR_MOUNT_BIND);
	assert_true(m->readonly);
	assert_string_equal(m->source, "/usr");

	static const char *const links[][2] = {
		{ "/bin", "usr/bin" },
		{ "/lib", "usr/lib" },
		{ "/sbin", "usr/sbin" },
		{ "/lib64", "usr/lib64" },
	};
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		char text[PATH_MAX];
		if (lstat(links[i][0], &st) < 0 || !S_ISLNK(st.st_mode)) {
			print_message("# %s is not a symlink on this host, skipped\n", links[i][0]);
			continue;
		}
		ssize_t n = readlink(links[i][0], text, sizeof(text) - 1);
		assert_true(n > 0);
		text[n] = '\0';
		m = get_mount(f->plan, links[i][0]);
		assert_int_equal(m->kind, JR_MOUNT_SYMLINK);
		assert_string_equal(m->source, text);
		if (strcmp(text, links[i][1]) != 0)
			print_message("# %s -> %s (not the usual %s)\n", links[i][0], text,
				      links[i][1]);
	}
}

/* ---- ordering ------------------------------------------------------------- */

static void test_mounts_ordered_by_depth(void **state)
{
	struct fx *f = *state;
	/* Asked deepest first, so sorting has to move things. */
	char *z = xasprintf("%s/x/y/z", f->dir);
	char *x = xasprintf("%s/x", f->dir);
	char *q = xasprintf("%s/q", f->dir);
	char *p = xasprintf("%s/p", f->dir);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, z, false, &f->err), 0);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, q, false, &f->err), 0);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, p, false, &f->err), 0);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RW, x, false, &f->err), 0);
	compile_ok(f); /* also checks depth order of the whole list */

	ssize_t iz = find_mount(f->plan, z), ix = find_mount(f->plan, x);
	ssize_t iq = find_mount(f->plan, q), ip = find_mount(f->plan, p);
	assert_true(iz >= 0 && ix >= 0 && iq >= 0 && ip >= 0);
	assert_true(ix < iz); /* parent before child */
	assert_true(iq < ip); /* same depth: order asked for */
	assert_true(f->plan->mounts[iq].readonly);
	assert_true(f->plan->mounts[ip].readonly);
	assert_false(f->plan->mounts[ix].readonly);
	assert_string_equal(f->plan->mounts[iz].origin, "ro");
	assert_string_equal(f->plan->mounts[ix].origin, "rw");

	/* The reverse request keeps the reverse order. */
	jr_policy_free(f->policy);
	assert_int_equal(jr_policy_new(&f->policy, &f->err), 0);
	assert_int_equal(jr_policy_set_workspace(f->policy, f->ws, &f->err), 0);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, p, false, &f->err), 0);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, q, false, &f->err), 0);
	compile_ok(f);
	assert_true(find_mount(f->plan, p) < find_mount(f->plan, q));
	assert_true(find_mount(f->plan, p) >= 0);

	free(z);
	free(x);
	free(q);
	free(p);
}

static void test_default_same_depth_order(void **state)
{
	struct fx *f = *state;
	compile_ok(f);
	/* Depth-1 defaults keep the order they are added in: system dirs,
	 * then /proc, /dev, /tmp. */
	static const char *const order[] = { "/usr", "/etc", "/proc", "/dev", "/tmp" };
	ssize_t prev = -1;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		ssize_t idx = find_mount(f->plan, order[i]);
		assert_true(idx >= 0);
		assert_true(idx > prev);
		prev = idx;
	}
	/* /tmp (depth 1) comes before the workspace beneath it (depth 3). */
	assert_true(find_mount(f->plan, "/tmp") < find_mount(f->plan, f->ws));
	assert_true(find_mount(f->plan, "/tmp") < find_mount(f->plan, f->home));
}

/* ---- binds -------------------------------------------------------------- */

static void test_ro_missing_is_enoent(void **state)
{
	struct fx *f = *state;
	char *missing = xasprintf("%s/no-such-thing", f->dir);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, missing, false, &f->err), 0);
	compile_fails(f, ENOENT, missing);
	free(missing);
}

static void test_rw_missing_is_enoent(void **state)
{
	struct fx *f = *state;
	char *missing = xasprintf("%s/x/gone/deeper", f->dir);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RW, missing, false, &f->err), 0);
	compile_fails(f, ENOENT, missing);
	free(missing);
}

static void test_optional_missing_skipped(void **state)
{
	struct fx *f = *state;
	compile_ok(f);
	size_t baseline = f->plan->n_mounts;

	char *missing = xasprintf("%s/no-such-thing", f->dir);
	char *present = xasprintf("%s/file", f->dir);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, missing, true, &f->err), 0);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RW, missing, true, &f->err), 0);
	compile_ok(f);
	assert_int_equal(f->plan->n_mounts, baseline);
	assert_int_equal(find_mount(f->plan, missing), -1);

	/* An optional bind that exists is added like any other. */
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, present, true, &f->err), 0);
	compile_ok(f);
	assert_int_equal(f->plan->n_mounts, baseline + 1);
	const struct jr_mount *m = get_mount(f->plan, present);
	assert_int_equal(m->kind, JR_MOUNT_BIND);
	assert_true(m->readonly);
	assert_string_equal(m->source, present);
	free(missing);
	free(present);
}

/* "optional" forgives a missing path (ENOENT) only, not other errors. */
static void test_optional_other_errors_reported(void **state)
{
	struct fx *f = *state;
	char *bad = xasprintf("%s/file/sub", f->dir);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, bad, true, &f->err), 0);
	compile_fails(f, ENOTDIR, bad);
	free(bad);
}

static void test_bind_source_canonical(void **state)
{
	struct fx *f = *state;
	char *asked = xasprintf("%s//wslink/./a/", f->dir);
	char *want = xasprintf("%s/a", f->ws);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RW, asked, false, &f->err), 0);
	compile_ok(f);
	const struct jr_mount *m = get_mount(f->plan, want);
	assert_int_equal(m->kind, JR_MOUNT_BIND);
	assert_false(m->readonly);
	assert_string_equal(m->source, want);
	assert_string_equal(m->origin, "rw");
	/* Beneath the workspace, so mounted after it. */
	assert_true(find_mount(f->plan, f->ws) < find_mount(f->plan, want));
	free(asked);
	free(want);
}

static void test_ro_root_refused(void **state)
{
	struct fx *f = *state;
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, "/", false, &f->err), 0);
	compile_fails(f, 0, "ro /");

	/* Reached through ".." or a symlink, and as an rw bind. */
	static const char *const others[] = { "/tmp/..", "/usr/../" };
	for (size_t i = 0; i < 2; i++) {
		jr_policy_free(f->policy);
		assert_int_equal(jr_policy_new(&f->policy, &f->err), 0);
		assert_int_equal(jr_policy_set_workspace(f->policy, f->ws, &f->err), 0);
		assert_int_equal(
			jr_policy_add_bind(f->policy, JR_BIND_RW, others[i], true, &f->err), 0);
		/* A trailing '/' only says "a directory": messages show the path without it. */
		compile_fails(f, 0, i == 0 ? "/tmp/.." : "/usr/..");
	}
	char *link = xasprintf("%s/rootlink", f->dir);
	jr_policy_free(f->policy);
	assert_int_equal(jr_policy_new(&f->policy, &f->err), 0);
	assert_int_equal(jr_policy_set_workspace(f->policy, f->ws, &f->err), 0);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, link, false, &f->err), 0);
	compile_fails(f, 0, link);
	free(link);
}

static void test_empty_paths_refused(void **state)
{
	struct fx *f = *state;
	expect_refused(f, jr_policy_add_bind(f->policy, JR_BIND_RO, "", false, &f->err), "ro");
	expect_refused(f, jr_policy_add_bind(f->policy, JR_BIND_RW, NULL, true, &f->err), "rw");
	expect_refused(f, jr_policy_add_tmpfs(f->policy, "", &f->err), "tmpfs");
	assert_int_equal(f->policy->n_fs, 0);
}

/* ---- tmpfs -------------------------------------------------------------- */

static void test_tmpfs_relative_made_absolute(void **state)
{
	struct fx *f = *state;
	/* Relative to the directory current when the clause is added. */
	char *saved = getcwd(NULL, 0);
	assert_non_null(saved);
	assert_int_equal(chdir(f->ws), 0);
	assert_int_equal(jr_policy_add_tmpfs(f->policy, "a/./b/../c//", &f->err), 0);
	int r = jr_compile(f->policy, f->envp, &f->plan, &f->err);
	assert_int_equal(chdir(saved), 0);
	free(saved);
	if (r != 0)
		print_error("%s\n", f->err->message);
	assert_int_equal(r, 0);
	assert_depth_ordered(f->plan);

	char *want = xasprintf("%s/a/c", f->ws);
	const struct jr_mount *m = get_mount(f->plan, want);
	assert_int_equal(m->kind, JR_MOUNT_TMPFS);
	assert_int_equal(m->mode, 0755);
	assert_false(m->readonly);
	assert_null(m->source);
	assert_string_equal(m->origin, "tmpfs");
	free(want);
}

static void test_tmpfs_absolute_normalised(void **state)
{
	struct fx *f = *state;
	assert_int_equal(jr_policy_add_tmpfs(f->policy, "//srv//cache/./x/../", &f->err), 0);
	compile_ok(f);
	const struct jr_mount *m = get_mount(f->plan, "/srv/cache");
	assert_int_equal(m->kind, JR_MOUNT_TMPFS);
	assert_int_equal(m->mode, 0755);
}

static void test_tmpfs_root_refused(void **state)
{
	struct fx *f = *state;
	static const char *const roots[] = { "/", "//", "/a/..", "/.." };
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		jr_policy_free(f->policy);
		assert_int_equal(jr_policy_new(&f->policy, &f->err), 0);
		assert_int_equal(jr_policy_set_workspace(f->policy, f->ws, &f->err), 0);
		assert_int_equal(jr_policy_add_tmpfs(f->policy, roots[i], &f->err), 0);
		compile_fails(f, 0, "tmpfs /");
	}
}

/* ---- process settings ------------------------------------------------------ */

static void test_hostname_accepted(void **state)
{
	struct fx *f = *state;
	assert_int_equal(jr_policy_set_hostname(f->policy, "build-1.local", &f->err), 0);
	assert_null(f->err);
	compile_ok(f);
	assert_string_equal(f->plan->hostname, "build-1.local");

	char max[65];
	memset(max, 'h', 64);
	max[64] = '\0';
	assert_int_equal(jr_policy_set_hostname(f->policy, max, &f->err), 0);
	assert_int_equal(jr_policy_set_hostname(f->policy, "A", &f->err), 0);
	assert_int_equal(jr_policy_set_hostname(f->policy, "x-y.z9", &f->err), 0);
	assert_null(f->err);
	compile_ok(f);
	assert_string_equal(f->plan->hostname, "x-y.z9");
}

static void test_hostname_refused(void **state)
{
	struct fx *f = *state;
	assert_int_equal(jr_policy_set_hostname(f->policy, "good", &f->err), 0);

	char long65[66];
	memset(long65, 'h', 65);
	long65[65] = '\0';
	const char *const bad[] = { "", "-x", "a b", long65, ".x", "a_b", "a/b", "caf\xc3\xa9",
				    "a..b", "x-", "x.", "a.-b" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = jr_policy_set_hostname(f->policy, bad[i], &f->err);
		if (r == 0)
			print_error("hostname \"%s\" accepted\n", bad[i]);
		expect_refused(f, r, "hostname");
	}
	expect_refused(f, jr_policy_set_hostname(f->policy, NULL, &f->err), "hostname");
	/* A refusal leaves the previous name in place. */
	compile_ok(f);
	assert_string_equal(f->plan->hostname, "good");
}

static void test_user_mode(void **state)
{
	struct fx *f = *state;
	assert_int_equal(jr_policy_set_user(f->policy, JR_USER_ROOT, &f->err), 0);
	compile_ok(f);
	assert_int_equal(f->plan->user, JR_USER_ROOT);
	expect_refused(f, jr_policy_set_user(f->policy, (enum jr_user_mode)7, &f->err), "user");
	compile_ok(f);
	assert_int_equal(f->plan->user, JR_USER_ROOT);
}

static void test_keep_fd_low_refused(void **state)
{
	struct fx *f = *state;
	const int bad[] = { 0, 1, 2, -1 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(f, jr_policy_keep_fd(f->policy, bad[i], &f->err), "keep-fd");
	assert_int_equal(f->policy->n_keep_fds, 0);
}

static void test_keep_fd_duplicate_stored_once(void **state)
{
	struct fx *f = *state;
	int a = fcntl(0, F_DUPFD_CLOEXEC, 3);
	int b = fcntl(0, F_DUPFD_CLOEXEC, 3);
	assert_true(a >= 3 && b >= 3 && a != b);
	assert_int_equal(jr_policy_keep_fd(f->policy, a, &f->err), 0);
	assert_int_equal(jr_policy_keep_fd(f->policy, b, &f->err), 0);
	assert_int_equal(jr_policy_keep_fd(f->policy, a, &f->err), 0);
	assert_int_equal(jr_policy_keep_fd(f->policy, b, &f->err), 0);
	assert_null(f->err);
	assert_int_equal(f->policy->n_keep_fds, 2);
	assert_int_equal(f->policy->keep_fds[0], a);
	assert_int_equal(f->policy->keep_fds[1], b);

	compile_ok(f);
	close(a);
	close(b);
	assert_int_equal(f->plan->n_keep_fds, 2);
	assert_int_equal(f->plan->keep_fds[0], a);
	assert_int_equal(f->plan->keep_fds[1], b);
}

static void test_keep_fd_closed_is_ebadf(void **state)
{
	struct fx *f = *state;
	int fd = fcntl(0, F_DUPFD_CLOEXEC, 200);
	assert_true(fd >= 200);
	close(fd);
	assert_int_equal(jr_policy_keep_fd(f->policy, fd, &f->err), 0);
	char *needle = xasprintf("keep-fd %d", fd);
	compile_fails(f, EBADF, needle);
	free(needle);
}

/* ---- HOME ------------------------------------------------------------------- */

static char *passwd_home(void)
{
	struct passwd *pw = getpwuid(getuid());
	if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/')
		return NULL;
	char *home = jr_path_normalize(pw->pw_dir);
	assert_non_null(home);
	if (strcmp(home, "/") == 0) {
		free(home);
		return NULL;
	}
	return home;
}

static void check_home(struct fx *f, const char *want)
{
	if (!want) {
		assert_null(f->plan->home);
		for (size_t i = 0; i < f->plan->n_mounts; i++) {
			const struct jr_mount *m = &f->plan->mounts[i];
			assert_string_not_equal(m->origin, "home");
			assert_string_not_equal(m->target, "/");
		}
		return;
	}
	assert_non_null(f->plan->home);
	assert_string_equal(f->plan->home, want);
	const struct jr_mount *m = get_mount(f->plan, want);
	assert_int_equal(m->kind, JR_MOUNT_TMPFS);
	assert_int_equal(m->mode, 0700);
}

static void test_home_unset_uses_passwd(void **state)
{
	struct fx *f = *state;
	char *want = passwd_home();
	char *no_home[] = { (char *)"PATH=/usr/bin", (char *)"HOMEX=/nope", NULL };
	compile_ok_env(f, no_home);
	check_home(f, want);

	/* A relative $HOME is ignored the same way. */
	char *rel_home[] = { (char *)"HOME=relative/home", NULL };
	compile_ok_env(f, rel_home);
	check_home(f, want);

	/* And an empty environment. */
	char *empty[] = { NULL };
	compile_ok_env(f, empty);
	check_home(f, want);
	free(want);
}

static void test_home_root_has_no_tmpfs(void **state)
{
	struct fx *f = *state;
	compile_ok(f);
	size_t with_home = f->plan->n_mounts;

	char *root_home[] = { (char *)"HOME=/", NULL };
	compile_ok_env(f, root_home);
	check_home(f, NULL);
	assert_int_equal(f->plan->n_mounts, with_home - 1);

	char *root_home2[] = { (char *)"HOME=//./x/..", NULL };
	compile_ok_env(f, root_home2);
	check_home(f, NULL);

	/* Only /tmp is a tmpfs now. */
	size_t tmpfs = 0;
	for (size_t i = 0; i < f->plan->n_mounts; i++)
		if (f->plan->mounts[i].kind == JR_MOUNT_TMPFS)
			tmpfs++;
	assert_int_equal(tmpfs, 1);
}

static void test_home_normalised(void **state)
{
	struct fx *f = *state;
	char *env = xasprintf("HOME=%s//home/./sub/../", f->dir);
	char *envp[] = { (char *)"HOMEPAGE=/x", env, NULL };
	compile_ok_env(f, envp);
	check_home(f, f->home);
	free(env);
}

static void test_null_envp_uses_environ(void **state)
{
	struct fx *f = *state;
	const char *old = getenv("HOME");
	char *saved = old ? strdup(old) : NULL;
	char *want = xasprintf("%s/envhome", f->dir);
	assert_int_equal(setenv("HOME", want, 1), 0);
	int r = jr_compile(f->policy, NULL, &f->plan, &f->err);
	if (saved)
		setenv("HOME", saved, 1);
	else
		unsetenv("HOME");
	free(saved);
	assert_int_equal(r, 0);
	check_home(f, want);
	free(want);
}

/* ---- describe ----------------------------------------------------------- */

struct lines {
	size_t n;
	char *line[256];
};

static void collect(void *userdata, const char *line)
{
	struct lines *l = userdata;
	assert_non_null(line);
	assert_true(l->n < sizeof(l->line) / sizeof(l->line[0]));
	l->line[l->n] = strdup(line);
	assert_non_null(l->line[l->n]);
	l->n++;
}

static size_t count_containing(const struct lines *l, const char *needle)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (strstr(l->line[i], needle))
			n++;
	return n;
}

static void test_describe(void **state)
{
	struct fx *f = *state;
	char *p = xasprintf("%s/p", f->dir);
	assert_int_equal(jr_policy_add_bind(f->policy, JR_BIND_RO, p, false, &f->err), 0);
	assert_int_equal(jr_policy_add_tmpfs(f->policy, "/srv", &f->err), 0);
	assert_int_equal(jr_policy_set_hostname(f->policy, "box", &f->err), 0);
	compile_ok(f);

	struct lines l = { 0 };
	jr_plan_describe(f->plan, collect, &l);
	/* policy, workspace, "clauses (N):", two lines a clause, the Landlock
	 * line, the setuid guard's line for a root caller, "mounts, in order:", a line a
	 * mount, two environment lines. */
	size_t first_mount = 3 + 2 * f->plan->n_clauses + 1 + (f->plan->setid_guard ? 1 : 0) + 1;
	assert_int_equal(l.n, first_mount + f->plan->n_mounts + 2);

	char *head = xasprintf("workspace %s, hostname box", f->ws);
	assert_non_null(strstr(l.line[1], head));
	free(head);
	assert_int_equal(f->plan->n_clauses, 4); /* the fixture's workspace, ro, tmpfs, hostname */
	size_t ro_line = 0;
	for (size_t i = 3; i < first_mount; i += 2)
		if (strstr(l.line[i], ": ro "))
			ro_line = i;
	assert_true(ro_line > 0);
	assert_non_null(strstr(l.line[ro_line + 1], "-> read-only bind mounts"));
	assert_string_equal(l.line[first_mount - 1], "mounts, in order:");
	assert_non_null(strstr(l.line[l.n - 2], "environment: "));

	size_t ro = 0, rw = 0, tmpfs = 0, links = 0;
	for (size_t i = 0; i < f->plan->n_mounts; i++) {
		const struct jr_mount *m = &f->plan->mounts[i];
		const char *line = l.line[first_mount + i];
		assert_non_null(strstr(line, m->target));
		if (m->kind == JR_MOUNT_BIND) {
			assert_non_null(strstr(line, m->readonly ? "ro bind" : "rw bind"));
			m->readonly ? ro++ : rw++;
		} else if (m->kind == JR_MOUNT_TMPFS) {
			tmpfs++;
		} else if (m->kind == JR_MOUNT_SYMLINK) {
			assert_non_null(strstr(line, m->source));
			links++;
		}
	}
	assert_int_equal(count_containing(&l, "ro bind"), ro);
	assert_int_equal(count_containing(&l, "rw bind"), rw);
	assert_int_equal(count_containing(&l, "(tmpfs, mode"), tmpfs);
	assert_int_equal(count_containing(&l, "(symlink)"), links);
	assert_true(ro >= 2); /* /usr and p */
	assert_int_equal(rw, 1); /* the workspace */
	assert_int_equal(tmpfs, 3); /* /tmp, home, /srv */
	assert_int_equal(count_containing(&l, "mode 1777"), 1);
	assert_int_equal(count_containing(&l, "mode 0700"), 1);

	char *pline = xasprintf("  %s <- %s (ro bind", p, p);
	assert_int_equal(count_containing(&l, pline), 1);
	free(pline);
	char *wline = xasprintf("  %s <- %s (rw bind", f->ws, f->ws);
	assert_int_equal(count_containing(&l, wline), 1);
	free(wline);

	for (size_t i = 0; i < l.n; i++)
		free(l.line[i]);
	free(p);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
		T(test_workspace_canonical_and_bound),
		T(test_workspace_defaults_to_cwd),
		T(test_workspace_root_refused),
		T(test_workspace_file_is_enotdir),
		T(test_workspace_missing_is_enoent),
		T(test_workspace_empty_refused),
		T(test_home_is_private_tmpfs),
		T(test_base_mounts),
		T(test_system_dirs_follow_host),
		T(test_system_dirs_merged_usr),
		T(test_mounts_ordered_by_depth),
		T(test_default_same_depth_order),
		T(test_ro_missing_is_enoent),
		T(test_rw_missing_is_enoent),
		T(test_optional_missing_skipped),
		T(test_optional_other_errors_reported),
		T(test_bind_source_canonical),
		T(test_ro_root_refused),
		T(test_empty_paths_refused),
		T(test_tmpfs_relative_made_absolute),
		T(test_tmpfs_absolute_normalised),
		T(test_tmpfs_root_refused),
		T(test_hostname_accepted),
		T(test_hostname_refused),
		T(test_user_mode),
		T(test_keep_fd_low_refused),
		T(test_keep_fd_duplicate_stored_once),
		T(test_keep_fd_closed_is_ebadf),
		T(test_home_unset_uses_passwd),
		T(test_home_root_has_no_tmpfs),
		T(test_home_normalised),
		T(test_null_envp_uses_environ),
		T(test_describe),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
