/* Placeholders for protected paths that do not exist yet.
 *
 * A mount needs something to mount on, so a protected path missing from a
 * writable host tree (a workspace without .vscode/, say) gets an empty
 * directory on the host for the duration of the run; the jail sees an
 * empty read-only tmpfs there and can neither fill, rename nor remove it.
 * Git ignores empty directories.  Afterwards jailrun removes each
 * directory it made, if it is still the same inode and still empty.  A
 * jailrun killed with SIGKILL leaves them behind, empty. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
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
	ph->n++;
	return 0;
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

int jr_placeholders_create(const struct jr_plan *plan, struct jr_placeholders *ph, jr_error_t **err)
{
	for (size_t i = 0; i < plan->n_mounts; i++)
		if (plan->mounts[i].placeholder && make_path(ph, plan->mounts[i].target, err) < 0)
			return -1;
	return 0;
}

void jr_placeholders_remove(struct jr_placeholders *ph)
{
	/* Deepest first: they were made parents first. */
	for (size_t i = ph->n; i-- > 0;) {
		struct jr_placeholder *p = &ph->v[i];
		struct stat st;
		if (lstat(p->path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == p->dev &&
		    st.st_ino == p->ino)
			rmdir(p->path); /* fails, harmlessly, if something was put in it */
		free(p->path);
	}
	free(ph->v);
	ph->v = NULL;
	ph->n = 0;
}
