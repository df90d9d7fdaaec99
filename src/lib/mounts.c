/* The jail's root: a fresh tmpfs holding read-only system binds, the
 * workspace, /proc, a minimal /dev, /tmp and an empty home; then
 * pivot_root into it and detach the host's root.
 *
 * Every mount is made with the new mount API (open_tree, fsmount,
 * move_mount, mount_setattr) on file descriptors: bind sources are
 * opened with RESOLVE_NO_SYMLINKS once the path is canonical, and mount
 * points are reached one component at a time beneath the new root without
 * following symlinks, so nothing swapped into the workspace can redirect a
 * mount (the runc CVE-2021-30465 family). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"

#define BIND_ATTRS (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

static int clone_host_path(int dirfd, const char *path, uint64_t attrs, int *out,
			   jr_error_t **err);

/* State while the root is assembled.  Mount points may be created only on
 * filesystems jailrun itself made for this jail (its tmpfs mounts): a
 * missing mount point inside a bind from the host is an error, never a
 * directory left behind in the user's files. */
struct root_builder {
	int rootfd;
	int devfd;   /* made read-only once every mount is in */
	int scratch; /* detached tmpfs holding the empty file masks are made of */
	/* Read-only tmpfs mounts (masks) stay writable until every mount is
	 * in, so a bind beneath a mask (mask ~/.ssh, ro ~/.ssh/known_hosts)
	 * finds its mount point; then they are sealed. */
	int seal[64];
	size_t n_seal;
	dev_t *owned;
	size_t n_owned;
};

static int own_fs(struct root_builder *b, int mnt, jr_error_t **err)
{
	struct stat st;
	if (fstat(mnt, &st) < 0)
		return jr_fail(err, errno, "fstat of a new tmpfs");
	dev_t *owned = reallocarray(b->owned, b->n_owned + 1, sizeof(dev_t));
	if (!owned)
		return jr_fail_oom(err);
	b->owned = owned;
	b->owned[b->n_owned++] = st.st_dev;
	return 0;
}

static bool owns_fs(const struct root_builder *b, int dirfd)
{
	struct stat st;
	if (fstat(dirfd, &st) < 0)
		return false;
	for (size_t i = 0; i < b->n_owned; i++)
		if (b->owned[i] == st.st_dev)
			return true;
	return false;
}

static int openat2_fd(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = { .flags = flags | O_CLOEXEC, .resolve = resolve };
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

static int set_attrs(int fd, const char *path, unsigned flags, uint64_t set, uint64_t propagation)
{
	struct mount_attr attr = { .attr_set = set, .propagation = propagation };
	return mount_setattr(fd, path, flags, &attr, sizeof(attr));
}

/* ---- bind sources ---------------------------------------------------- */

static int open_bind_source(const struct jr_mount *m, int *tree_out, bool *is_dir,
			    jr_error_t **err)
{
	/* The source is canonical: a symlink appearing in it now means it was
	 * swapped since compile time, so refuse rather than follow. */
	_cleanup_close_ int fd = openat2_fd(AT_FDCWD, m->source, O_PATH,
					    RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0) {
		if (errno == ELOOP)
			return jr_fail(err, ELOOP, "bind source %s became a symlink", m->source);
		return jr_fail(err, errno, "opening bind source %s", m->source);
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return jr_fail(err, errno, "stat %s", m->source);
	*is_dir = S_ISDIR(st.st_mode);

	_cleanup_close_ int tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
						     AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return jr_fail(err, errno, "open_tree %s", m->source);
	/* A clone of a shared mount is a peer of the host's mount: make it
	 * private before anything is mounted beneath it in the jail. */
	uint64_t set = BIND_ATTRS | (m->readonly ? MOUNT_ATTR_RDONLY : 0) |
		       (m->noexec ? MOUNT_ATTR_NOEXEC : 0);
	if (set_attrs(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, set, MS_PRIVATE) < 0)
		return jr_fail(err, errno, "mount_setattr %s", m->source);
	*tree_out = jr_steal_fd(&tree);
	return 0;
}

int jr_mount_sources_open(const struct jr_plan *plan, struct jr_mount_sources *src,
			  jr_error_t **err)
{
	src->n = plan->n_mounts;
	src->fds = malloc(src->n * sizeof(int));
	src->is_dir = calloc(src->n, sizeof(bool));
	if (!src->fds || !src->is_dir)
		return jr_fail_oom(err);
	for (size_t i = 0; i < src->n; i++)
		src->fds[i] = -1;
	for (size_t i = 0; i < src->n; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		if (m->kind != JR_MOUNT_BIND)
			continue;
		if (open_bind_source(m, &src->fds[i], &src->is_dir[i], err) < 0)
			return jr_fail_wrap(err, "mount %s (%s)", m->target, m->origin);
	}
	return 0;
}

int jr_mount_sources_idmap(const struct jr_plan *plan, struct jr_mount_sources *src,
			   int userns_fd, jr_error_t **err)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		/* Only the caller's own trees: the system binds keep root's files
		 * root's, so the jail cannot read /etc/shadow. */
		if (m->kind != JR_MOUNT_BIND || !m->callers || src->fds[i] < 0)
			continue;
		struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP,
					   .userns_fd = (uint64_t)userns_fd };
		if (mount_setattr(src->fds[i], "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
				  sizeof(attr)) < 0)
			return jr_fail(err, errno,
				       "mount %s (%s): idmapped mount, needed because a root caller's jail runs as an unprivileged host id",
				       m->target, m->origin);
	}
	return 0;
}

void jr_mount_sources_close(struct jr_mount_sources *src)
{
	for (size_t i = 0; src->fds && i < src->n; i++)
		if (src->fds[i] >= 0)
			close(src->fds[i]);
	free(src->fds);
	free(src->is_dir);
	src->fds = NULL;
	src->is_dir = NULL;
	src->n = 0;
}

/* ---- mount points beneath the new root ------------------------------- */

static int open_component(int dirfd, const char *name, bool want_dir, bool create, bool link)
{
	if (link) /* the symlink itself: O_PATH|O_NOFOLLOW returns it */
		return openat2_fd(dirfd, name, O_PATH | O_NOFOLLOW,
				  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	/* create: the caller checked that dirfd is on a filesystem of ours. */
	const uint64_t resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	uint64_t flags = O_PATH | (want_dir ? O_DIRECTORY : 0);
	int fd = openat2_fd(dirfd, name, flags, resolve);
	if (fd >= 0 || errno != ENOENT || !create)
		return fd;
	if (want_dir) {
		if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
			return -1;
	} else {
		int f = openat(dirfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (f < 0 && errno != EEXIST)
			return -1;
		if (f >= 0)
			close(f);
	}
	return openat2_fd(dirfd, name, flags, resolve);
}

/* Opens (creating if missing, on our own filesystems) path beneath dirfd,
 * one component at a time, never following a symlink. */
static int open_mount_point_at(const struct root_builder *b, int dirfd, const char *path,
			       bool is_dir, bool on_link, int *out, jr_error_t **err);

static int open_mount_point(const struct root_builder *b, int dirfd, const char *path,
			    bool is_dir, int *out, jr_error_t **err)
{
	return open_mount_point_at(b, dirfd, path, is_dir, false, out, err);
}

/* on_link: the last component is a symlink, to be mounted on itself. */
static int open_mount_point_at(const struct root_builder *b, int dirfd, const char *path,
			       bool is_dir, bool on_link, int *out, jr_error_t **err)
{
	_cleanup_close_ int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return jr_fail(err, errno, "dup");
	const char *p = path;
	while (*p == '/')
		p++;
	while (*p) {
		const char *end = strchrnul(p, '/');
		char name[256];
		size_t n = (size_t)(end - p);
		if (n >= sizeof(name))
			return jr_fail(err, ENAMETOOLONG, "mount point %s", path);
		memcpy(name, p, n);
		name[n] = '\0';
		while (*end == '/')
			end++;
		bool last = *end == '\0';
		int len = (int)(p - path + (long)n);
		int next = open_component(cur, name, !last || is_dir, owns_fs(b, cur), last && on_link);
		if (next < 0) {
			if (errno == ELOOP || errno == EXDEV)
				return jr_fail(err, ELOOP,
					       "mount point %s: refusing to follow the symlink at '%.*s'",
					       path, len, path);
			if (errno == ENOENT)
				return jr_fail(err, ENOENT,
					       "mount point %s: '%.*s' (jailrun creates nothing on the host; create it first)",
					       path, len, path);
			return jr_fail(err, errno, "mount point %s: creating '%.*s'", path, len, path);
		}
		close(cur);
		cur = next;
		p = end;
	}
	*out = jr_steal_fd(&cur);
	return 0;
}

static int attach(int mnt, int target_fd)
{
	return move_mount(mnt, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

/* A new superblock of type fstype, configured with key=value pairs. */
static int new_fs(const char *fstype, const char *const *options, uint64_t attrs, int *out,
		  jr_error_t **err)
{
	_cleanup_close_ int fs = fsopen(fstype, FSOPEN_CLOEXEC);
	if (fs < 0)
		return jr_fail(err, errno, "fsopen %s", fstype);
	for (const char *const *o = options; o && o[0]; o += 2)
		if (fsconfig(fs, FSCONFIG_SET_STRING, o[0], o[1], 0) < 0)
			return jr_fail(err, errno, "%s option %s=%s", fstype, o[0], o[1]);
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return jr_fail(err, errno, "creating %s", fstype);
	int mnt = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	if (mnt < 0)
		return jr_fail(err, errno, "fsmount %s", fstype);
	*out = mnt;
	return 0;
}

static int new_tmpfs_sized(mode_t mode, uint64_t size, uint64_t attrs, int *out, jr_error_t **err)
{
	char mode_str[16], size_str[32];
	snprintf(mode_str, sizeof(mode_str), "%o", (unsigned)mode);
	snprintf(size_str, sizeof(size_str), "%llu", (unsigned long long)size);
	const char *const options[] = { "mode", mode_str, size ? "size" : NULL, size_str, NULL };
	return new_fs("tmpfs", options, attrs, out, err);
}

static int new_tmpfs(mode_t mode, uint64_t attrs, int *out, jr_error_t **err)
{
	return new_tmpfs_sized(mode, 0, attrs, out, err);
}

/* A read-only bind of one empty regular file, from a detached tmpfs that
 * exists only for this (masking a file with /dev/null would accept
 * writes and show a device). */
static int make_scratch(struct root_builder *b, jr_error_t **err)
{
	if (new_tmpfs(0555, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, &b->scratch,
		      err) < 0)
		return -1;
	int f = openat(b->scratch, "empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
	if (f < 0)
		return jr_fail(err, errno, "creating the empty file for masks");
	close(f);
	if (mkdirat(b->scratch, "empty.d", 0555) < 0)
		return jr_fail(err, errno, "creating the empty directory for masks");
	return 0;
}

static int empty_file_clone(struct root_builder *b, int *out, jr_error_t **err)
{
	if (b->scratch < 0 && make_scratch(b, err) < 0)
		return -1;
	const uint64_t attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			       MOUNT_ATTR_NOEXEC;
	return clone_host_path(b->scratch, "empty", attrs, out, err);
}

/* An empty read-only directory: a read-only clone of one directory of the
 * scratch tmpfs, shared by every empty mask and placeholder with nothing
 * mounted beneath it (a superblock each would cost more than the clone). */
static int empty_dir_clone(struct root_builder *b, int *out, jr_error_t **err)
{
	if (b->scratch < 0 && make_scratch(b, err) < 0)
		return -1;
	const uint64_t attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			       MOUNT_ATTR_NOEXEC;
	return clone_host_path(b->scratch, "empty.d", attrs, out, err);
}

/* Mounts a fresh filesystem (or clone) at name beneath dirfd. */
static int attach_at(const struct root_builder *b, int mnt, int dirfd, const char *name,
		     bool is_dir, jr_error_t **err)
{
	_cleanup_close_ int target = -1;
	if (open_mount_point(b, dirfd, name, is_dir, &target, err) < 0)
		return -1;
	if (attach(mnt, target) < 0)
		return jr_fail(err, errno, "move_mount onto %s", name);
	return 0;
}

static int clone_host_path(int dirfd, const char *path, uint64_t attrs, int *out, jr_error_t **err)
{
	_cleanup_close_ int tree = open_tree(dirfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
							  AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
	if (tree < 0)
		return jr_fail(err, errno, "open_tree %s", path);
	if (set_attrs(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, attrs, MS_PRIVATE) < 0)
		return jr_fail(err, errno, "mount_setattr %s", path);
	*out = jr_steal_fd(&tree);
	return 0;
}

/* ---- /proc ----------------------------------------------------------- */

/* What the jail may read but never write, and what it must not see at
 * all, in the jail's own procfs (the list hardened runtimes converge on). */
static const char *const proc_readonly[] = { "sys", "sysrq-trigger", "irq", "bus", "fs" };
static const char *const proc_hidden[] = { "kcore",	    "keys",	     "timer_list",
					   "sched_debug", "latency_stats", "acpi",
					   "scsi",	    "asound",	     "kallsyms" };

static int proc_make_readonly(int procfd, const char *name, jr_error_t **err)
{
	_cleanup_close_ int tree = -1;
	if (faccessat(procfd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	const uint64_t attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			       MOUNT_ATTR_NOEXEC;
	if (clone_host_path(procfd, name, attrs, &tree, err) < 0)
		return jr_fail_wrap(err, "/proc/%s read-only", name);
	_cleanup_close_ int target = openat2_fd(procfd, name, O_PATH, RESOLVE_NO_SYMLINKS);
	if (target < 0 || attach(tree, target) < 0)
		return jr_fail(err, errno, "/proc/%s read-only: move_mount", name);
	return 0;
}

static int proc_hide(int procfd, const char *name, jr_error_t **err)
{
	struct stat st;
	_cleanup_close_ int cover = -1;
	if (fstatat(procfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	const uint64_t attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC;
	if (S_ISDIR(st.st_mode) ? new_tmpfs(0555, attrs | MOUNT_ATTR_NODEV, &cover, err)
				: clone_host_path(AT_FDCWD, "/dev/null", attrs, &cover, err))
		return jr_fail_wrap(err, "hiding /proc/%s", name);
	_cleanup_close_ int target = openat2_fd(procfd, name, O_PATH, RESOLVE_NO_SYMLINKS);
	if (target < 0 || attach(cover, target) < 0)
		return jr_fail(err, errno, "hiding /proc/%s: move_mount", name);
	return 0;
}

static int mount_proc(int target, jr_error_t **err)
{
	_cleanup_close_ int proc = -1;
	if (new_fs("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, &proc,
		   err) < 0)
		return -1;
	if (attach(proc, target) < 0)
		return jr_fail(err, errno, "move_mount proc");
	for (size_t i = 0; i < sizeof(proc_readonly) / sizeof(proc_readonly[0]); i++)
		if (proc_make_readonly(proc, proc_readonly[i], err) < 0)
			return -1;
	for (size_t i = 0; i < sizeof(proc_hidden) / sizeof(proc_hidden[0]); i++)
		if (proc_hide(proc, proc_hidden[i], err) < 0)
			return -1;
	return 0;
}

/* ---- /dev ------------------------------------------------------------ */

static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
static const char *const dev_links[][2] = {
	{ "ptmx", "pts/ptmx" },		  { "fd", "/proc/self/fd" },
	{ "stdin", "/proc/self/fd/0" },	  { "stdout", "/proc/self/fd/1" },
	{ "stderr", "/proc/self/fd/2" },
};

static int mount_dev(struct root_builder *b, int target, jr_error_t **err)
{
	_cleanup_close_ int dev = -1, pts = -1, shm = -1;
	if (new_tmpfs(0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, &dev, err) < 0)
		return -1;
	if (attach(dev, target) < 0)
		return jr_fail(err, errno, "move_mount /dev");
	if (own_fs(b, dev, err) < 0)
		return -1;

	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]); i++) {
		char host[32];
		_cleanup_close_ int node = -1;
		snprintf(host, sizeof(host), "/dev/%s", dev_nodes[i]);
		if (clone_host_path(AT_FDCWD, host, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, &node,
				    err) < 0 ||
		    attach_at(b, node, dev, dev_nodes[i], false, err) < 0)
			return jr_fail_wrap(err, "/dev/%s", dev_nodes[i]);
	}

	/* A devpts instance of the jail's own: its ptys are invisible to the
	 * host's and the host's are invisible to it. */
	const char *const pts_options[] = { "ptmxmode", "0666", "mode", "0620", NULL };
	if (new_fs("devpts", pts_options, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, &pts, err) < 0 ||
	    attach_at(b, pts, dev, "pts", true, err) < 0)
		return jr_fail_wrap(err, "/dev/pts");
	/* noexec, as Docker's: nothing needs to run code from /dev/shm, and
	 * exec narrowing must not have a writable tree left to map from. */
	if (new_tmpfs(01777, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, &shm, err) < 0 ||
	    attach_at(b, shm, dev, "shm", true, err) < 0)
		return jr_fail_wrap(err, "/dev/shm");

	for (size_t i = 0; i < sizeof(dev_links) / sizeof(dev_links[0]); i++)
		if (symlinkat(dev_links[i][1], dev, dev_links[i][0]) < 0)
			return jr_fail(err, errno, "/dev/%s", dev_links[i][0]);

	b->devfd = jr_steal_fd(&dev);
	return 0;
}

/* ---- assembling the root --------------------------------------------- */

static int make_symlink(const struct root_builder *b, const struct jr_mount *m, jr_error_t **err)
{
	_cleanup_free_ char *parent = strdup(m->target);
	if (!parent)
		return jr_fail_oom(err);
	char *slash = strrchr(parent, '/');
	const char *name = m->target + (slash - parent) + 1;
	*slash = '\0';
	_cleanup_close_ int dir = -1;
	if (open_mount_point(b, b->rootfd, parent[0] ? parent : "/", true, &dir, err) < 0)
		return -1;
	if (symlinkat(m->source, dir, name) < 0)
		return jr_fail(err, errno, "symlink %s -> %s", m->target, m->source);
	return 0;
}

/* Whether a later mount of the plan goes beneath mount i. */
static bool has_mount_beneath(const struct jr_plan *plan, size_t i)
{
	for (size_t j = i + 1; j < plan->n_mounts; j++)
		if (jr_path_is_beneath(plan->mounts[j].target, plan->mounts[i].target))
			return true;
	return false;
}

static int mount_one(struct root_builder *b, const struct jr_mount *m, int source_fd,
		     bool source_is_dir, bool leaf, jr_error_t **err)
{
	_cleanup_close_ int target = -1, fresh = -1;

	if (m->kind == JR_MOUNT_SYMLINK)
		return make_symlink(b, m, err);
	bool is_dir = m->kind == JR_MOUNT_BIND ? source_is_dir : m->kind != JR_MOUNT_EMPTY_FILE;
	if (open_mount_point_at(b, b->rootfd, m->target, is_dir && !m->on_link, m->on_link, &target,
				err) < 0)
		return -1;
	switch (m->kind) {
	case JR_MOUNT_BIND:
		if (attach(source_fd, target) < 0)
			return jr_fail(err, errno, "move_mount");
		return 0;
	case JR_MOUNT_TMPFS:
		if (leaf && m->readonly && !m->size && m->mode == 0555) {
			if (empty_dir_clone(b, &fresh, err) < 0)
				return -1;
			if (attach(fresh, target) < 0)
				return jr_fail(err, errno, "move_mount");
			return 0;
		}
		if (new_tmpfs_sized(m->mode, m->size,
				    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (m->noexec ? MOUNT_ATTR_NOEXEC : 0),
				    &fresh, err) < 0)
			return -1;
		if (attach(fresh, target) < 0)
			return jr_fail(err, errno, "move_mount");
		if (own_fs(b, fresh, err) < 0)
			return -1;
		if (m->readonly) {
			if (b->n_seal == sizeof(b->seal) / sizeof(b->seal[0]))
				return jr_fail(err, E2BIG, "more than %zu read-only tmpfs mounts",
					       sizeof(b->seal) / sizeof(b->seal[0]));
			b->seal[b->n_seal++] = jr_steal_fd(&fresh);
		}
		return 0;
	case JR_MOUNT_EMPTY_FILE:
		if (empty_file_clone(b, &fresh, err) < 0)
			return -1;
		if (attach(fresh, target) < 0)
			return jr_fail(err, errno, "move_mount");
		return 0;
	case JR_MOUNT_PROC:
		return mount_proc(target, err);
	case JR_MOUNT_DEV:
		return mount_dev(b, target, err);
	case JR_MOUNT_SYMLINK:
		break;
	}
	return 0;
}

static int pivot_into(int rootfd, jr_error_t **err);

/* The host path the new root is assembled on before pivot_root; it only
 * has to exist, its contents are covered, never used. */
#define STAGING_DIR "/tmp"

int jr_mount_build_root(const struct jr_plan *plan, struct jr_mount_sources *src,
			jr_error_t **err)
{
	_cleanup_close_ int root = -1;
	struct root_builder b = { .rootfd = -1, .devfd = -1, .scratch = -1 };
	int r = -1;

	/* Nothing mounted in the jail may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return jr_fail(err, errno, "making the mount namespace private");
	if (new_tmpfs(0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, &root, err) < 0)
		return jr_fail_wrap(err, "jail root");
	if (move_mount(root, "", AT_FDCWD, STAGING_DIR, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return jr_fail(err, errno, "jail root: attaching at " STAGING_DIR);
	if (own_fs(&b, root, err) < 0)
		return -1;
	b.rootfd = open(STAGING_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (b.rootfd < 0) {
		jr_fail(err, errno, "jail root: open");
		goto out;
	}
	for (size_t i = 0; i < plan->n_mounts; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		if (mount_one(&b, m, src->fds[i], src->is_dir[i], !has_mount_beneath(plan, i), err) < 0) {
			jr_fail_wrap(err, "mount %s (%s)", m->target, m->origin);
			goto out;
		}
		if (src->fds[i] >= 0) {
			close(src->fds[i]);
			src->fds[i] = -1;
		}
	}
	/* Nothing new may appear in /dev once every mount is in; /dev/shm
	 * stays writable. */
	if (b.devfd >= 0 && set_attrs(b.devfd, "", AT_EMPTY_PATH, MOUNT_ATTR_RDONLY, 0) < 0) {
		jr_fail(err, errno, "/dev read-only");
		goto out;
	}
	for (size_t i = 0; i < b.n_seal; i++)
		if (set_attrs(b.seal[i], "", AT_EMPTY_PATH, MOUNT_ATTR_RDONLY, 0) < 0) {
			jr_fail(err, errno, "sealing a read-only tmpfs");
			goto out;
		}
	r = pivot_into(b.rootfd, err);
out:
	if (b.rootfd >= 0)
		close(b.rootfd);
	if (b.devfd >= 0)
		close(b.devfd);
	if (b.scratch >= 0)
		close(b.scratch);
	for (size_t i = 0; i < b.n_seal; i++)
		close(b.seal[i]);
	free(b.owned);
	return r;
}

static int pivot_into(int rootfd, jr_error_t **err)
{
	/* pivot_root(".", ".") stacks the old root on top of the new one,
	 * so it can be detached without a directory to park it in. */
	if (fchdir(rootfd) < 0)
		return jr_fail(err, errno, "chdir to the jail root");
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return jr_fail(err, errno, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return jr_fail(err, errno, "detaching the host root");
	if (chdir("/") < 0)
		return jr_fail(err, errno, "chdir /");
	if (set_attrs(AT_FDCWD, "/", 0, MOUNT_ATTR_RDONLY, 0) < 0)
		return jr_fail(err, errno, "making the jail root read-only");
	return 0;
}
