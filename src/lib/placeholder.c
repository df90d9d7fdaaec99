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
			if (mkdirat(cur, name, 0755) < 0)
				return jr_fail(err, errno, "protect %s: creating the placeholder %s", path,
					       sofar);
			next = open_dir_nofollow(cur, name);
			if (next >= 0) {
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
			if (S_ISDIR(st.st_mode))
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
}
