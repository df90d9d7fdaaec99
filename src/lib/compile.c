/* jr_policy -> jr_plan: resolve the policy against this host.  Variables
 * are expanded, paths made canonical, the default view added (system
 * directories, /proc, /dev, /tmp, the home directory, the workspace),
 * masks placed where a secret would otherwise be visible, mounts ordered
 * parents first, the command's environment computed, and every clause
 * paired with the mechanism that enforces it, or the reason none does. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

struct compiler {
	const jr_policy_t *p;
	jr_plan_t *plan;
	struct jr_expand x;
	char *tmpdir;
	jr_error_t **err;
};

/* ---- adding mounts --------------------------------------------------- */

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

static int add_mount(jr_plan_t *plan, struct jr_mount m, const char *source, const char *target,
		     jr_error_t **err)
{
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
			struct jr_mount m = { .kind = JR_MOUNT_SYMLINK, .origin = "system" };
			if (add_mount(plan, m, link, dir, err) < 0)
				return -1;
		} else if (S_ISDIR(st.st_mode)) {
			struct jr_mount m = { .kind = JR_MOUNT_BIND, .readonly = true, .origin = "system" };
			if (add_mount(plan, m, dir, dir, err) < 0)
				return -1;
		}
	}
	return 0;
}

static int add_base(jr_plan_t *plan, jr_error_t **err)
{
	if (add_system_dirs(plan, err) < 0 ||
	    add_mount(plan, (struct jr_mount){ .kind = JR_MOUNT_PROC, .origin = "base" }, NULL,
		      "/proc", err) < 0 ||
	    add_mount(plan, (struct jr_mount){ .kind = JR_MOUNT_DEV, .origin = "base" }, NULL,
		      "/dev", err) < 0)
		return -1;
	struct jr_mount tmp = { .kind = JR_MOUNT_TMPFS, .mode = 01777, .origin = "base" };
	return add_mount(plan, tmp, NULL, "/tmp", err);
}

/* ---- identity, home, workspace -------------------------------------- */

static int copy_process_settings(struct compiler *c)
{
	const jr_policy_t *p = c->p;
	jr_plan_t *plan = c->plan;
	plan->hostname = strdup(p->hostname ? p->hostname : "jailrun");
	plan->policy_name = p->name ? strdup(p->name) : NULL;
	if (!plan->hostname || (p->name && !plan->policy_name))
		return jr_fail_oom(c->err);
	plan->user = p->user;
	plan->user_uid = p->user_uid;
	plan->user_gid = p->user_gid;
	if (p->n_keep_fds) {
		plan->keep_fds = calloc(p->n_keep_fds, sizeof(int));
		if (!plan->keep_fds)
			return jr_fail_oom(c->err);
		memcpy(plan->keep_fds, p->keep_fds, p->n_keep_fds * sizeof(int));
		plan->n_keep_fds = p->n_keep_fds;
	}
	for (size_t i = 0; i < plan->n_keep_fds; i++)
		if (fcntl(plan->keep_fds[i], F_GETFD) < 0)
			return jr_fail(c->err, errno, "keep-fd %d", plan->keep_fds[i]);
	return 0;
}

int jr_home_of(char *const envp[], char **out, jr_error_t **err)
{
	*out = NULL;
	const char *home = jr_env_get(envp, "HOME");
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home || home[0] != '/')
		return 0; /* no home: nothing to show or hide */
	char *norm = jr_path_normalize(home);
	if (!norm)
		return jr_fail_oom(err);
	if (strcmp(norm, "/") == 0)
		free(norm);
	else
		*out = norm;
	return 0;
}

static int resolve_home(struct compiler *c, char *const envp[])
{
	if (jr_home_of(envp, &c->plan->home, c->err) < 0)
		return -1;
	c->x.home = c->plan->home;
	return 0;
}

static bool is_kernel_tree(const char *path);

static int resolve_workspace(struct compiler *c)
{
	const jr_policy_t *p = c->p;
	const struct jr_loc *loc = p->workspace_s.set ? &p->workspace_s.loc : NULL;
	_cleanup_free_ char *expanded = NULL;
	const char *asked = ".";
	if (p->workspace) {
		int r = jr_expand_path(&c->x, p->workspace, loc, &expanded, c->err);
		if (r == 1)
			return jr_fail_at(c->err, loc, "workspace: ${%s} is unset or empty", c->x.unset_name);
		if (r < 0)
			return -1;
		asked = expanded;
	}
	jr_plan_t *plan = c->plan;
	plan->workspace = realpath(asked, NULL);
	if (!plan->workspace)
		return loc ? jr_fail_at_errno(c->err, loc, errno, "workspace %s", p->workspace)
			   : jr_fail(c->err, errno, "workspace %s", asked);
	struct stat st;
	if (stat(plan->workspace, &st) < 0 || !S_ISDIR(st.st_mode))
		return loc ? jr_fail_at_errno(c->err, loc, ENOTDIR, "workspace %s", plan->workspace)
			   : jr_fail(c->err, ENOTDIR, "workspace %s", plan->workspace);
	if (strcmp(plan->workspace, "/") == 0 || is_kernel_tree(plan->workspace)) {
		const char *why = strcmp(plan->workspace, "/") == 0
					  ? "the whole host cannot be the workspace"
					  : "the host's /proc, /sys and /dev cannot be the workspace";
		return loc ? jr_fail_at(c->err, loc, "workspace %s: %s", plan->workspace, why)
			   : jr_fail(c->err, 0, "workspace %s: %s", plan->workspace, why);
	}
	c->x.workspace = plan->workspace;
	return 0;
}

static int add_home(struct compiler *c)
{
	jr_plan_t *plan = c->plan;
	if (!plan->home)
		return 0;
	if (c->p->home == JR_HOME_TMPFS) {
		struct jr_mount m = { .kind = JR_MOUNT_TMPFS, .mode = 0700, .origin = "home" };
		return add_mount(plan, m, NULL, plan->home, c->err);
	}
	_cleanup_free_ char *real = realpath(plan->home, NULL);
	if (!real)
		return jr_fail_at_errno(c->err, &c->p->home_s.loc, errno, "home %s", plan->home);
	struct jr_mount m = { .kind = JR_MOUNT_BIND, .readonly = c->p->home == JR_HOME_RO,
			      .callers = true, .origin = "home" };
	return add_mount(plan, m, real, real, c->err);
}

static int add_workspace(struct compiler *c)
{
	/* An overlay workspace is not implemented: its clause is reported
	 * as not enforced, and the plan shows the tree read-only meanwhile. */
	struct jr_mount m = { .kind = JR_MOUNT_BIND, .readonly = c->p->workspace_mode != JR_WS_RW,
			      .callers = true, .origin = "workspace" };
	return add_mount(c->plan, m, c->plan->workspace, c->plan->workspace, c->err);
}

/* ---- policy filesystem entries --------------------------------------- */

struct fs_item {
	const struct jr_fs_entry *e;
	char *path; /* expanded */
};

/* Expands every entry and applies !removals: the effective list, in order. */
static int effective_fs(struct compiler *c, struct fs_item **out, size_t *n_out)
{
	const jr_policy_t *p = c->p;
	struct fs_item *v = calloc(p->n_fs + 1, sizeof(*v));
	size_t n = 0;
	if (!v)
		return jr_fail_oom(c->err);
	for (size_t i = 0; i < p->n_fs; i++) {
		const struct jr_fs_entry *e = &p->fs[i];
		char *path = NULL;
		jr_error_t *why = NULL;
		/* PATH? is skipped when it does not come out as a path: a
		 * variable unset, empty, or not absolute (SSH_AUTH_SOCK=). */
		int r = jr_expand_path(&c->x, e->path, &e->loc, &path, (e->optional || e->remove) ? &why : c->err);
		jr_error_free(why);
		if (r != 0 && (e->optional || e->remove))
			continue;
		if (r == 1)
			r = jr_fail_at(c->err, &e->loc, "'%s': ${%s} is unset or empty (write PATH? to skip it then)",
				       e->path, c->x.unset_name);
		if (r < 0)
			goto fail;
		char *norm = jr_path_normalize(path);
		free(path);
		if (!norm) {
			jr_fail_oom(c->err);
			goto fail;
		}
		if (!e->remove) {
			v[n++] = (struct fs_item){ e, norm };
			continue;
		}
		size_t k = 0;
		for (size_t j = 0; j < n; j++) {
			if (v[j].e->kind == e->kind && !strcmp(v[j].path, norm))
				free(v[j].path);
			else
				v[k++] = v[j];
		}
		n = k;
		free(norm);
	}
	*out = v;
	*n_out = n;
	return 0;
fail:
	for (size_t j = 0; j < n; j++)
		free(v[j].path);
	free(v);
	return -1;
}

/* The deepest writable tree of the caller's in the plan holding path. */
static const struct jr_mount *writable_tree(const jr_plan_t *plan, const char *path)
{
	const struct jr_mount *best = NULL;
	for (size_t i = 0; i < plan->n_mounts; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		if (m->kind == JR_MOUNT_BIND && m->callers && !m->readonly &&
		    jr_path_is_beneath(path, m->target) &&
		    (!best || jr_path_depth(m->target) > jr_path_depth(best->target)))
			best = m;
	}
	return best;
}

/* A path inside a tree the jail can write (the workspace, above all) is
 * resolved without following symlinks: an earlier jail may have planted
 * one there (ln -s /root cache) to make a later `ro ./cache` show
 * something else.  Elsewhere symlinks are the user's own and followed. */
static char *resolve_bind_source(struct compiler *c, const char *path, jr_error_t **why)
{
	const struct jr_mount *tree = writable_tree(c->plan, path);
	if (!tree)
		return realpath(path, NULL);
	const char *rel = path + strlen(tree->target);
	while (*rel == '/')
		rel++;
	if (!*rel)
		return strdup(tree->target);
	_cleanup_close_ int dir = open(tree->target, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
	_cleanup_close_ int fd = dir < 0 ? -1 : (int)syscall(SYS_openat2, dir, rel, &how, sizeof(how));
	if (fd < 0) {
		if (errno == ELOOP || errno == EXDEV)
			jr_fail(why, ELOOP, "a symlink inside %s (which the jail can write) leads elsewhere; jailrun does not follow those",
				tree->target);
		return NULL;
	}
	return strdup(path);
}

/* The host's kernel interfaces are never bound in: the jail has its own. */
static bool is_kernel_tree(const char *path)
{
	return jr_path_is_beneath(path, "/proc") || jr_path_is_beneath(path, "/sys") ||
	       jr_path_is_beneath(path, "/dev");
}

static int add_bind_entry(struct compiler *c, const struct fs_item *it)
{
	const struct jr_fs_entry *e = it->e;
	const char *what = e->kind == JR_FS_RO ? "ro" : "rw";
	jr_error_t *why = NULL;
	char *source = resolve_bind_source(c, it->path, &why);
	if (!source) {
		int saved = errno;
		if (why) {
			jr_fail_at(c->err, &e->loc, "%s %s: %s", what, e->path, why->message);
			jr_error_free(why);
			return -1;
		}
		if (saved == ENOENT && e->optional)
			return 0;
		return jr_fail_at_errno(c->err, &e->loc, saved, "%s %s", what, e->path);
	}
	if (strcmp(source, "/") == 0 || is_kernel_tree(source)) {
		bool root = strcmp(source, "/") == 0;
		free(source);
		return jr_fail_at(c->err, &e->loc, "%s %s: %s", what, e->path,
				  root ? "binding the host's whole root is not allowed"
				       : "the host's /proc, /sys and /dev are not bound in (the jail has its own /proc and /dev)");
	}
	struct jr_mount m = { .kind = JR_MOUNT_BIND, .source = source, .target = strdup(source),
			      .readonly = e->kind == JR_FS_RO, .callers = true, .origin = what };
	if (!m.target) {
		free(source);
		return jr_fail_oom(c->err);
	}
	return plan_add(c->plan, m, c->err);
}

static int add_tmpfs_entry(struct compiler *c, const struct fs_item *it)
{
	const struct jr_fs_entry *e = it->e;
	_cleanup_free_ char *target = NULL;
	jr_error_t *inner = NULL;
	if (jr_path_canonical_missing_ok(it->path, &target, &inner) < 0) {
		jr_fail_at_errno(c->err, &e->loc, inner ? inner->errnum : EINVAL, "tmpfs %s", it->path);
		jr_error_free(inner);
		return -1;
	}
	if (strcmp(target, "/") == 0)
		return jr_fail_at(c->err, &e->loc, "tmpfs /: the jail's root is already a fresh tmpfs");
	struct jr_mount m = { .kind = JR_MOUNT_TMPFS, .mode = e->has_mode ? e->mode : 0755,
			      .size = e->size, .origin = "tmpfs" };
	return add_mount(c->plan, m, NULL, target, c->err);
}

/* The deepest mount so far whose target holds path (later ones win). */
static const struct jr_mount *covering(const jr_plan_t *plan, const char *path)
{
	const struct jr_mount *best = NULL;
	unsigned best_depth = 0;
	for (size_t i = 0; i < plan->n_mounts; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		if (m->kind == JR_MOUNT_SYMLINK || !jr_path_is_beneath(path, m->target))
			continue;
		unsigned d = jr_path_depth(m->target);
		if (!best || d >= best_depth) {
			best = m;
			best_depth = d;
		}
	}
	return best;
}

/* A mask hides what the jail would otherwise see.  The real target of a
 * symlink is what gets masked; a path the jail cannot see (beneath a
 * tmpfs, or not bound at all) needs nothing, and neither does one that
 * does not exist (a dangling link included). */
static int pin_ancestors(struct compiler *c, const struct jr_mount *tree, const char *path);

static int add_mask_entry(struct compiler *c, const struct fs_item *it)
{
	_cleanup_free_ char *real = realpath(it->path, NULL);
	if (!real)
		return 0;
	/* Binds show host files; /proc and /dev show kernel ones (the host's
	 * stand in for the jail's when deciding file or directory).  The
	 * jail's own tmpfs mounts hold nothing from the host. */
	const struct jr_mount *cov = covering(c->plan, real);
	if (!cov || (cov->kind != JR_MOUNT_BIND && cov->kind != JR_MOUNT_PROC &&
		     cov->kind != JR_MOUNT_DEV))
		return 0;
	struct stat st;
	if (stat(real, &st) < 0)
		return 0;
	struct jr_mount m = { .readonly = true, .is_mask = true, .origin = "mask" };
	if (S_ISDIR(st.st_mode)) {
		m.kind = JR_MOUNT_TMPFS;
		m.mode = 0555;
	} else {
		m.kind = JR_MOUNT_EMPTY_FILE;
	}
	/* In a writable tree, renaming a parent would carry the mask away and
	 * leave the secret readable by the next run: pin them, as for protect. */
	struct jr_mount tree = *cov;
	if (add_mount(c->plan, m, NULL, real, c->err) < 0)
		return -1;
	return tree.kind == JR_MOUNT_BIND && !tree.readonly ? pin_ancestors(c, &tree, real) : 0;
}

/* A protected path is a mount point, which cannot be renamed or removed;
 * but renaming a directory above it would carry the protection away and
 * let a fresh, unprotected path take its place (mv .git .old; mkdir -p
 * .git/hooks).  Every directory between the writable tree's root and the
 * protected path is therefore bound onto itself: a mount point too. */
static int pin_ancestors(struct compiler *c, const struct jr_mount *tree, const char *path)
{
	_cleanup_free_ char *dir = strdup(path);
	if (!dir)
		return jr_fail_oom(c->err);
	for (char *slash = strrchr(dir, '/'); slash && slash != dir; slash = strrchr(dir, '/')) {
		*slash = '\0';
		if (!strcmp(dir, tree->target) || !jr_path_is_beneath(dir, tree->target))
			break;
		bool pinned = false;
		for (size_t i = 0; i < c->plan->n_mounts && !pinned; i++)
			pinned = !strcmp(c->plan->mounts[i].target, dir);
		if (pinned)
			continue;
		struct jr_mount m = { .kind = JR_MOUNT_BIND, .callers = true, .origin = "protect (pinned)" };
		if (add_mount(c->plan, m, dir, dir, c->err) < 0)
			return -1;
	}
	return 0;
}

/* Keeps a path read-only inside a writable host tree.  One that does not
 * exist yet gets a placeholder (placeholder.c) under an empty read-only
 * tmpfs, so it cannot be created either -- but only when its parent
 * exists: making parents would turn a workspace without .git into one
 * with a broken .git, and `git init` would fail. */
/* The deepest existing ancestor of path that is not a directory (a file
 * where a directory was expected), or NULL. */
static char *file_in_the_way(const char *path)
{
	char *prefix = strdup(path);
	for (char *slash = prefix ? strchr(prefix + 1, '/') : NULL; slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		struct stat st;
		if (stat(prefix, &st) == 0 && !S_ISDIR(st.st_mode))
			return prefix;
		*slash = '/';
	}
	free(prefix);
	return NULL;
}

static int add_protect_entry(struct compiler *c, const struct fs_item *it);

/* A protected symlink inside a writable tree: removing or replacing the
 * link would redirect whoever follows it on the host (a dotfile manager's
 * ~/.bashrc, a symlinked .git/hooks).  The link itself becomes a mount
 * point, showing its target read-only (an empty read-only file when the
 * target is a directory or missing: a directory cannot cover a link). */
static int protect_link(struct compiler *c, const struct fs_item *it, bool *handled)
{
	struct stat st;
	*handled = false;
	if (lstat(it->path, &st) < 0 || !S_ISLNK(st.st_mode))
		return 0;
	_cleanup_free_ char *dir = strdup(it->path);
	if (!dir)
		return jr_fail_oom(c->err);
	char *slash = strrchr(dir, '/');
	*slash = '\0';
	_cleanup_free_ char *real_dir = realpath(dir[0] ? dir : "/", NULL);
	_cleanup_free_ char *link = NULL;
	if (!real_dir || asprintf(&link, "%s/%s", strcmp(real_dir, "/") ? real_dir : "", slash + 1) < 0)
		return real_dir ? jr_fail_oom(c->err) : 0;
	const struct jr_mount *cov = covering(c->plan, link);
	if (!cov || cov->kind != JR_MOUNT_BIND || cov->readonly)
		return 0;
	struct jr_mount tree = *cov;
	_cleanup_free_ char *target = realpath(it->path, NULL);
	struct stat ts;
	bool file = target && stat(target, &ts) == 0 && S_ISREG(ts.st_mode);
	struct jr_mount m = { .kind = file ? JR_MOUNT_BIND : JR_MOUNT_EMPTY_FILE, .readonly = true,
			      .callers = file, .is_mask = true, .on_link = true, .origin = "protect" };
	if (add_mount(c->plan, m, file ? target : NULL, link, c->err) < 0 ||
	    pin_ancestors(c, &tree, link) < 0)
		return -1;
	*handled = true;
	if (!target)
		return 0;
	struct fs_item real = { it->e, target }; /* and where it leads, if writable too */
	return add_protect_entry(c, &real);
}

static int add_protect_entry(struct compiler *c, const struct fs_item *it)
{
	bool was_link;
	if (protect_link(c, it, &was_link) < 0)
		return -1;
	if (was_link)
		return 0;
	_cleanup_free_ char *real = NULL;
	bool exists = (real = realpath(it->path, NULL)) != NULL;
	if (!exists) {
		/* .git/hooks where .git is a file (a worktree or submodule: a
		 * "gitdir:" pointer): the pointer itself is what a command could
		 * turn against the host, so it is what gets protected. */
		_cleanup_free_ char *file = file_in_the_way(it->path);
		if (file) {
			struct fs_item whole = { it->e, file };
			return add_protect_entry(c, &whole);
		}
		jr_error_t *inner = NULL;
		if (jr_path_canonical_missing_ok(it->path, &real, &inner) < 0) {
			jr_fail_at(c->err, &it->e->loc, "protect %s", inner ? inner->message : it->path);
			jr_error_free(inner);
			return -1;
		}
	}
	const struct jr_mount *cov = covering(c->plan, real);
	if (!cov || cov->kind != JR_MOUNT_BIND || cov->readonly)
		return 0; /* already read-only, or private to the jail */
	struct jr_mount tree = *cov; /* cov moves when the plan grows */
	if (exists) {
		struct jr_mount m = { .kind = JR_MOUNT_BIND, .readonly = true, .callers = true,
				      .is_mask = true, .origin = "protect" };
		return add_mount(c->plan, m, real, real, c->err) < 0 ? -1
								       : pin_ancestors(c, &tree, real);
	}
	char *slash = strrchr(real, '/');
	struct stat st;
	*slash = '\0';
	bool parent_is_dir = stat(real[0] ? real : "/", &st) == 0 && S_ISDIR(st.st_mode);
	*slash = '/';
	/* PATH? protects a path only if it exists: some cannot have a
	 * placeholder (git refuses a repository with any .git/commondir it
	 * cannot follow). */
	if (!parent_is_dir || it->e->optional)
		return 0;
	/* PATH/ gets a directory, PATH an empty file: what the host expects
	 * there while the run lasts (a directory ~/.bashrc would break login
	 * shells; a file .gitmodules would show in git status). */
	struct jr_mount m = { .kind = it->e->dir ? JR_MOUNT_TMPFS : JR_MOUNT_EMPTY_FILE,
			      .readonly = true, .mode = 0555, .is_mask = true, .placeholder = true,
			      .origin = "protect" };
	/* git reads .git/commondir for the directory whose config and hooks
	 * count; any placeholder but one naming the repository itself (".")
	 * breaks git, and that one keeps it working while the jail cannot
	 * point it at a repository of its own making.  The host file is
	 * bound, so the jail's git reads the same ".". */
	const char *base = slash + 1;
	if (!it->e->dir && !strcmp(base, "commondir") && slash - real >= 5 &&
	    !strncmp(slash - 5, "/.git", 5)) {
		m.kind = JR_MOUNT_BIND;
		m.callers = true;
		m.placeholder_text = ".\n";
		if (add_mount(c->plan, m, real, real, c->err) < 0)
			return -1;
		return pin_ancestors(c, &tree, real);
	}
	return add_mount(c->plan, m, NULL, real, c->err) < 0 ? -1 : pin_ancestors(c, &tree, real);
}

static int add_fs_entries(struct compiler *c)
{
	struct fs_item *items = NULL;
	size_t n = 0;
	int r = 0;
	if (effective_fs(c, &items, &n) < 0)
		return -1;
	/* Binds and tmpfs first, so masks and protections know what they cover. */
	for (size_t i = 0; i < n && r == 0; i++) {
		enum jr_fs_kind k = items[i].e->kind;
		if (k == JR_FS_RO || k == JR_FS_RW)
			r = add_bind_entry(c, &items[i]);
		else if (k == JR_FS_TMPFS)
			r = add_tmpfs_entry(c, &items[i]);
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		if (items[i].e->kind == JR_FS_MASK)
			r = add_mask_entry(c, &items[i]);
		else if (items[i].e->kind == JR_FS_PROTECT)
			r = add_protect_entry(c, &items[i]);
	}
	for (size_t i = 0; i < n; i++)
		free(items[i].path);
	free(items);
	return r;
}

/* exec PATH... is enforced by Landlock at execve, which a program can
 * sidestep by having the dynamic loader map it (ld.so ./prog) or by
 * executing a memfd.  So with exec narrowing, the trees the command can
 * write are mounted noexec, except beneath an exec path, where a bind of
 * that path restores exec; and memfds must be sealed against execution
 * (seccomp.c: Landlock does not see files of internal mounts). */
static int narrow_exec(struct compiler *c)
{
	const jr_policy_t *p = c->p;
	jr_plan_t *plan = c->plan;
	size_t n_exec = 0;
	for (size_t i = 0; i < p->n_fs; i++)
		n_exec += p->fs[i].kind == JR_FS_EXEC && !p->fs[i].remove;
	if (!n_exec || plan->landlock_only)
		return 0;
	plan->exec_narrowed = true;
	size_t n_before = plan->n_mounts;
	for (size_t i = 0; i < n_before; i++) {
		struct jr_mount *m = &plan->mounts[i];
		bool writable = (m->kind == JR_MOUNT_BIND && !m->readonly) ||
				(m->kind == JR_MOUNT_TMPFS && !m->readonly);
		m->noexec = writable;
	}
	for (size_t i = 0; i < p->n_fs; i++) {
		const struct jr_fs_entry *e = &p->fs[i];
		if (e->kind != JR_FS_EXEC || e->remove)
			continue;
		_cleanup_free_ char *path = NULL;
		int r = jr_expand_path(&c->x, e->path, &e->loc, &path, c->err);
		if (r == 1)
			continue;
		if (r < 0)
			return -1;
		_cleanup_free_ char *real = realpath(path, NULL);
		const struct jr_mount *tree = real ? covering(plan, real) : NULL;
		if (!tree || !tree->noexec || tree->kind != JR_MOUNT_BIND)
			continue; /* missing, or already executable */
		struct jr_mount m = { .kind = JR_MOUNT_BIND, .callers = true, .origin = "exec" };
		if (add_mount(plan, m, real, real, c->err) < 0)
			return -1;
	}
	return 0;
}

/* Stable insertion sort by depth, masks last at their depth: a mount never
 * hides one beneath it, and mounts at one depth keep the order asked for. */
static bool goes_before(const struct jr_mount *a, const struct jr_mount *b)
{
	unsigned da = jr_path_depth(a->target), db = jr_path_depth(b->target);
	return da < db || (da == db && !a->is_mask && b->is_mask);
}

static void order_mounts(jr_plan_t *plan)
{
	for (size_t i = 1; i < plan->n_mounts; i++) {
		struct jr_mount m = plan->mounts[i];
		size_t j = i;
		while (j > 0 && goes_before(&m, &plan->mounts[j - 1])) {
			plan->mounts[j] = plan->mounts[j - 1];
			j--;
		}
		plan->mounts[j] = m;
	}
}

/* ---- environment ----------------------------------------------------- */

static int build_env(struct compiler *c, char *const envp[])
{
	jr_plan_t *plan = c->plan;
	return jr_env_build(c->p, envp, plan->home, &plan->envp, &plan->scrubbed, c->err);
}

/* For a root caller, the jail's uid 0 is root on disk in the caller's
 * writable trees (they are idmapped): see seccomp.c's setid guard. */
static bool needs_setid_guard(const jr_plan_t *plan)
{
	if (getuid() != 0)
		return false;
	for (size_t i = 0; i < plan->n_mounts; i++)
		if (plan->mounts[i].kind == JR_MOUNT_BIND && plan->mounts[i].callers &&
		    !plan->mounts[i].readonly)
			return true;
	return false;
}

static unsigned seccomp_extras(const jr_policy_t *p, jr_plan_t *plan)
{
	unsigned extras = 0;
	if ((plan->setid_guard = needs_setid_guard(plan)))
		extras |= JR_SC_EXTRA_SETID;
	if (plan->landlock_only)
		/* No namespace of its own for the proxy: nothing reachable. */
		extras |= JR_SC_EXTRA_LANDLOCK_ONLY |
			  (p->net == JR_NET_NONE || p->net == JR_NET_PROXY ? JR_SC_EXTRA_NO_IP : 0);
	if (plan->exec_narrowed)
		extras |= JR_SC_EXTRA_NO_MEMFD_EXEC;
	return extras;
}

/* Landlock-only isolation is for callers who cannot make user
 * namespaces; root always can, and without one the jail would be real
 * root on the host. */
static int check_isolation(struct compiler *c)
{
	jr_plan_t *plan = c->plan;
	plan->landlock_only = c->p->isolation == JR_ISO_LANDLOCK;
	plan->net_host = c->p->net == JR_NET_HOST;
	plan->net_pasta = c->p->net == JR_NET_PASTA;
	plan->net_proxy = c->p->net == JR_NET_PROXY && !plan->landlock_only;
	if (jr_egress_build(c->p, &plan->egress, c->err) < 0)
		return -1;
	plan->egress_bpf = plan->net_host && plan->egress.n_cidrs && jr_egress_bpf_usable(NULL, 0);
	if (!plan->landlock_only)
		return 0;
	if (getuid() == 0)
		return jr_fail_at(c->err, &c->p->isolation_s.loc,
				  "isolation landlock: not for root, who can always make the jail's user namespace (use isolation namespaces)");
	if (!jr_landlock_abi())
		return jr_fail_at(c->err, &c->p->isolation_s.loc,
				  "isolation landlock: this kernel has no Landlock");
	plan->private_home = c->p->home == JR_HOME_TMPFS && plan->home;
	plan->private_tmp = true;
	return 0;
}

/* The limits this version enforces: wall-clock time (the supervisor) and
 * the per-process rlimits (set by the command's process before execve).
 * A core file is never written unless the policy asks for one. */
static void plan_limits(const jr_policy_t *p, jr_plan_t *plan)
{
	const struct jr_limit *l = p->limits;
	plan->time_ms = l[JR_LIMIT_TIME].s.set ? l[JR_LIMIT_TIME].value : 0;
	plan->kill_after_ms = l[JR_LIMIT_KILL_AFTER].s.set ? l[JR_LIMIT_KILL_AFTER].value : 2000;
	plan->output_limited = l[JR_LIMIT_OUTPUT].s.set;
	plan->output_limit = plan->output_limited ? l[JR_LIMIT_OUTPUT].value : 0;
	plan->n_rlimits = 0;
	plan->rlimits[plan->n_rlimits++] =
		(struct jr_rlimit_plan){ RLIMIT_CORE, l[JR_LIMIT_CORE].s.set ? l[JR_LIMIT_CORE].value : 0 };
	if (l[JR_LIMIT_NOFILE].s.set)
		plan->rlimits[plan->n_rlimits++] =
			(struct jr_rlimit_plan){ RLIMIT_NOFILE, l[JR_LIMIT_NOFILE].value };
	if (l[JR_LIMIT_FSIZE].s.set)
		plan->rlimits[plan->n_rlimits++] =
			(struct jr_rlimit_plan){ RLIMIT_FSIZE, l[JR_LIMIT_FSIZE].value };
}

int jr_compile(const jr_policy_t *policy, char *const envp[], jr_plan_t **out, jr_error_t **err)
{
	jr_plan_t *plan = calloc(1, sizeof(*plan));
	if (!plan)
		return jr_fail_oom(err);
	if (!envp)
		envp = environ;
	struct compiler c = { .p = policy, .plan = plan, .err = err };
	c.x.envp = envp;
	const char *tmpdir = jr_env_get(envp, "TMPDIR");
	c.x.tmpdir = tmpdir && tmpdir[0] == '/' ? tmpdir : "/tmp";

	if (copy_process_settings(&c) < 0 || resolve_home(&c, envp) < 0 ||
	    resolve_workspace(&c) < 0 || add_base(plan, err) < 0 || add_home(&c) < 0 ||
	    add_workspace(&c) < 0 || add_fs_entries(&c) < 0 || build_env(&c, envp) < 0 ||
	    check_isolation(&c) < 0 || narrow_exec(&c) < 0 ||
	    (plan_limits(policy, plan), jr_limits_plan(policy, plan), 0) ||
	    jr_seccomp_build(policy, seccomp_extras(policy, plan), &plan->seccomp, err) < 0 ||
	    jr_landlock_plan(policy, plan, &plan->landlock, err) < 0 ||
	    jr_plan_assess_clauses(policy, plan, err) < 0)
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
	for (size_t i = 0; i < plan->n_clauses; i++) {
		free(plan->clauses[i].where);
		free(plan->clauses[i].text);
		free(plan->clauses[i].mechanism);
	}
	free(plan->clauses);
	free(plan->mounts);
	free(plan->policy_name);
	free(plan->workspace);
	free(plan->home);
	free(plan->hostname);
	free(plan->keep_fds);
	jr_strv_free(plan->envp);
	jr_strv_free(plan->scrubbed);
	jr_seccomp_free(&plan->seccomp);
	jr_landlock_plan_free(&plan->landlock);
	jr_egress_free(&plan->egress);
	free(plan);
}

bool jr_plan_host_writable(const jr_plan_t *plan, const char *canonical_path)
{
	for (size_t i = 0; i < plan->n_mounts; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		if (m->kind == JR_MOUNT_BIND && !m->readonly && m->source &&
		    jr_path_is_beneath(canonical_path, m->source))
			return true;
	}
	return false;
}
