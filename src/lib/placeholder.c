/* Placeholders for protected paths that do not exist yet.
 *
 * A mount needs something to mount on, so a protected path missing from a
 * writable host tree (a workspace without .vscode/, say) gets an empty
 * directory on the host for the duration of the run; the jail sees an
 * empty read-only tmpfs there and can neither fill, rename nor remove it.
 * Git ignores empty directories.  Afterwards jailrun removes each
 * directory it made, if it is still the same inode and still empty.  A
 * jailrun killed with SIGKILL leaves them behind, empty.
 *
 * Two runs may share a workspace: the second sees the first's placeholder
 * as an existing directory and protects it with a bind, which the first's
 * rmdir would detach in every namespace.  So every run holds a shared
 * flock on each protected directory it uses, and a placeholder is removed
 * only by a run that can take it exclusively: whichever run ends last,
 * since each placeholder carries the xattr user.jailrun.placeholder. */

#define MARK "user.jailrun.placeholder"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/xattr.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"

static int open_dir_nofollow(int dirfd, const char *name)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH };
	return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
}

static int remember(struct jr_placeholders *ph, const char *path, const struct stat *st,
		    jr_error_t **err)
{
	struct jr_placeholder *v = reallocarray(ph->v, ph->n + 1, sizeof(*v));
	if (!v)
		return jr_fail_oom(err);
	ph->v = v;
	if (!(v[ph->n].path = strdup(path)))
		return jr_fail_oom(err);
	v[ph->n].dev = st->st_dev;
	v[ph->n].ino = st->st_ino;
	v[ph->n].size = st->st_size;
	ph->n++;
	return 0;
}

/* A read-only file at path (whose parent exists), empty or holding text. */
static int make_file(struct jr_placeholders *ph, const char *path, const char *text,
		     jr_error_t **err)
{
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return errno == EEXIST ? 0 : jr_fail(err, errno, "protect %s: creating the placeholder", path);
	if (text && write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		int e = errno;
		close(fd);
		unlink(path);
		return jr_fail(err, e, "protect %s: writing the placeholder", path);
	}
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	setxattr(proc, MARK, "1", 1, 0);
	struct stat st;
	int r = fstat(fd, &st) == 0 ? remember(ph, path, &st, err) : jr_fail(err, errno, "fstat %s", path);
	close(fd);
	return r;
}

/* ---- spare placeholders ----------------------------------------------
 *
 * Making and removing a directory on every run is the slowest part of
 * the start-up: ext4 will not hand out an inode freed in the last minute
 * again, so under a steady stream of runs each mkdir scans past the ones
 * the last runs freed.  Placeholder directories are therefore kept for
 * the next run instead of removed: moved (rename, on the same filesystem)
 * into a spare pool in the caller's cache directory, 0700, and moved back
 * into place when needed.  A spare is taken only when it is an empty
 * directory of the caller's carrying the mark; one that cannot be kept
 * (another filesystem, a full pool) is removed as before. */

#define SPARES 64

/* The pool, made if need be; -1 when there is none to use.  A pool the
 * jail could write (a cache directory inside the workspace or another
 * writable tree: HOME as the workspace) would let one run choose what a
 * later run puts at its protected paths: never used. */
static int spare_pool(const struct jr_plan *plan)
{
	const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char base[4096];
	if (cache && cache[0] == '/')
		snprintf(base, sizeof(base), "%s", cache);
	else if (home && home[0] == '/')
		snprintf(base, sizeof(base), "%s/.cache", home);
	else
		return -1;
	char *canonical = NULL;
	jr_error_t *ignored = NULL;
	if (jr_path_canonical_missing_ok(base, &canonical, &ignored) < 0) {
		jr_error_free(ignored);
		return -1;
	}
	bool writable = jr_plan_host_writable(plan, canonical);
	free(canonical);
	if (writable)
		return -1;
	mkdir(base, 0700);
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* Beneath the base, never through a symlink. */
	for (const char *const *name = (const char *const[]){ "jailrun", "placeholders", NULL };
	     fd >= 0 && *name; name++) {
		mkdirat(fd, *name, 0700);
		int next = openat(fd, *name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static bool is_empty_dir(int fd)
{
	char buf[256];
	if (lseek(fd, 0, SEEK_SET) < 0)
		return false;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n <= 0)
			return n == 0;
		for (long off = 0; off < n;) {
			const char *name = buf + off + 19; /* d_ino, d_off, d_reclen, d_type */
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			if (strcmp(name, ".") && strcmp(name, ".."))
				return false;
			off += reclen;
		}
	}
}

/* A spare that is ours to reuse: an empty directory of the caller's
 * that jailrun made (the mark). */
static bool spare_usable(int pool, const char *slot)
{
	_cleanup_close_ int fd = openat(pool, slot, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char mark;
	/* Exactly as made: 0755, no ACL that would let others in. */
	return fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	       (st.st_mode & 07777) == 0755 && fgetxattr(fd, MARK, &mark, 1) == 1 &&
	       fgetxattr(fd, "system.posix_acl_access", NULL, 0) < 0 &&
	       fgetxattr(fd, "system.posix_acl_default", NULL, 0) < 0 && is_empty_dir(fd);
}

/* Moves a spare to name beneath dirfd; 0 when done, -1 when there is none. */
static int take_spare(struct jr_placeholders *ph, int dirfd, const char *name)
{
	if (ph->pool < 0 || ph->pool_exdev)
		return -1;
	for (unsigned i = 0; i < SPARES; i++) {
		char slot[16];
		snprintf(slot, sizeof(slot), "%u", i);
		if (!spare_usable(ph->pool, slot))
			continue;
		if (renameat2(ph->pool, slot, dirfd, name, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno == EXDEV) {
			ph->pool_exdev = true;
			return -1;
		}
		if (errno != ENOENT) /* EEXIST: name appeared meanwhile; let mkdir say so */
			return -1;
	}
	return -1;
}

/* Keeps an empty placeholder directory for the next run; false when it
 * could not be kept (it is then removed as before). */
static bool stash(struct jr_placeholders *ph, const char *path, int fd)
{
	if (ph->pool < 0 || ph->pool_exdev || !is_empty_dir(fd))
		return false;
	for (unsigned i = 0; i < SPARES; i++) {
		char slot[16];
		snprintf(slot, sizeof(slot), "%u", i);
		if (renameat2(AT_FDCWD, path, ph->pool, slot, RENAME_NOREPLACE) == 0) {
			/* Filled on the host between the check and the move: back. */
			if (!is_empty_dir(fd))
				renameat2(ph->pool, slot, AT_FDCWD, path, RENAME_NOREPLACE);
			return true;
		}
		if (errno != EEXIST)
			return false;
	}
	return false;
}

/* mkdir -p of an absolute canonical path, never through a symlink,
 * remembering each directory created. */
static int make_path(struct jr_placeholders *ph, const char *path, jr_error_t **err)
{
	_cleanup_close_ int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return jr_fail(err, errno, "open /");
	char sofar[4096] = "";
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		const char *end = strchrnul(p, '/');
		char name[256];
		size_t n = (size_t)(end - p);
		if (n == 0)
			break;
		if (n >= sizeof(name) || strlen(sofar) + n + 2 >= sizeof(sofar))
			return jr_fail(err, ENAMETOOLONG, "protect %s", path);
		memcpy(name, p, n);
		name[n] = '\0';
		strcat(strcat(sofar, "/"), name);
		int next = open_dir_nofollow(cur, name);
		if (next < 0 && errno == ENOENT) {
			bool spare = take_spare(ph, cur, name) == 0;
			if (!spare && mkdirat(cur, name, 0755) < 0)
				return jr_fail(err, errno, "protect %s: creating the placeholder %s", path,
					       sofar);
			next = open_dir_nofollow(cur, name);
			if (next >= 0 && !spare) {
				char proc[64];
				snprintf(proc, sizeof(proc), "/proc/self/fd/%d", next);
				setxattr(proc, MARK, "1", 1, 0); /* best effort: unmarked, it stays */
			}
			struct stat st;
			if (next < 0 || fstat(next, &st) < 0 || remember(ph, sofar, &st, err) < 0) {
				if (next >= 0)
					close(next);
				return jr_fail(err, errno, "protect %s: %s", path, sofar);
			}
		}
		if (next < 0)
			return jr_fail(err, errno, "protect %s: %s", path, sofar);
		close(cur);
		cur = next;
		p = end;
	}
	return 0;
}

static bool remembered(const struct jr_placeholders *ph, const char *path)
{
	for (size_t i = 0; i < ph->n; i++)
		if (!strcmp(ph->v[i].path, path))
			return true;
	return false;
}

static int hold_shared(struct jr_placeholders *ph, const char *path, jr_error_t **err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0; /* nothing another run could remove */
	char mark;
	if (!remembered(ph, path) && fgetxattr(fd, MARK, &mark, 1) == 1) {
		/* Another run's placeholder: remove it at the end if it is ours
		 * to remove by then. */
		struct stat st;
		if (fstat(fd, &st) == 0 && remember(ph, path, &st, err) < 0) {
			close(fd);
			return -1;
		}
	}
	int *locks = reallocarray(ph->locks, ph->n_locks + 1, sizeof(int));
	if (!locks) {
		close(fd);
		return jr_fail_oom(err);
	}
	ph->locks = locks;
	ph->locks[ph->n_locks++] = fd;
	if (flock(fd, LOCK_SH) < 0)
		return jr_fail(err, errno, "flock %s", path);
	return 0;
}

int jr_placeholders_create(const struct jr_plan *plan, struct jr_placeholders *ph, jr_error_t **err)
{
	ph->pool = -1;
	for (size_t i = 0; i < plan->n_mounts; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		if (m->placeholder && m->kind == JR_MOUNT_TMPFS && ph->pool < 0) {
			ph->pool = spare_pool(plan);
			break;
		}
	}
	for (size_t i = 0; i < plan->n_mounts; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		if (m->placeholder &&
		    (m->kind == JR_MOUNT_TMPFS ? make_path(ph, m->target, err)
					       : make_file(ph, m->target, m->placeholder_text, err)) < 0)
			return -1;
		if (!strcmp(m->origin, "protect") && hold_shared(ph, m->target, err) < 0)
			return -1;
	}
	return 0;
}

void jr_placeholders_remove(struct jr_placeholders *ph)
{
	for (size_t i = 0; i < ph->n_locks; i++)
		close(ph->locks[i]);
	free(ph->locks);
	ph->locks = NULL;
	ph->n_locks = 0;
	/* Deepest first: they were made parents first. */
	for (size_t i = ph->n; i-- > 0;) {
		struct jr_placeholder *p = &ph->v[i];
		struct stat st;
		int fd = open(p->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		/* Another run still protecting it holds a shared lock: leave it. */
		char mark;
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 &&
		    st.st_dev == p->dev && st.st_ino == p->ino && fgetxattr(fd, MARK, &mark, 1) == 1) {
			if (S_ISDIR(st.st_mode) && !stash(ph, p->path, fd))
				rmdir(p->path); /* fails, harmlessly, if something was put in it */
			else if (S_ISREG(st.st_mode) && st.st_size == p->size)
				unlink(p->path); /* a file the host wrote to stays */
		}
		if (fd >= 0)
			close(fd);
		free(p->path);
	}
	free(ph->v);
	ph->v = NULL;
	ph->n = 0;
	if (ph->pool >= 0)
		close(ph->pool);
	ph->pool = -1;
}
