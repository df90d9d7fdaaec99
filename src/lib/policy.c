/* The policy as data: what the user asked for, before it is checked
 * against this host.  No syscalls here. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "internal.h"

int jr_policy_new(jr_policy_t **out, jr_error_t **err)
{
	jr_policy_t *p = calloc(1, sizeof(*p));
	if (!p)
		return jr_fail_oom(err);
	p->user = JR_USER_SAME;
	*out = p;
	return 0;
}

void jr_policy_free(jr_policy_t *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_mounts; i++)
		free(p->mounts[i].path);
	free(p->mounts);
	free(p->workspace);
	free(p->hostname);
	free(p->keep_fds);
	free(p);
}

static int replace_string(char **slot, const char *value, jr_error_t **err)
{
	char *copy = NULL;
	if (value && !(copy = strdup(value)))
		return jr_fail_oom(err);
	free(*slot);
	*slot = copy;
	return 0;
}

int jr_policy_set_workspace(jr_policy_t *p, const char *path, jr_error_t **err)
{
	if (path && !*path)
		return jr_fail(err, 0, "workspace: empty path");
	return replace_string(&p->workspace, path, err);
}

static int add_mount(jr_policy_t *p, enum jr_policy_mount_kind kind, const char *path,
		     bool optional, const char *what, jr_error_t **err)
{
	if (!path || !*path)
		return jr_fail(err, 0, "%s: empty path", what);
	struct jr_policy_mount *m = reallocarray(p->mounts, p->n_mounts + 1, sizeof(*m));
	if (!m)
		return jr_fail_oom(err);
	p->mounts = m;
	char *copy = strdup(path);
	if (!copy)
		return jr_fail_oom(err);
	p->mounts[p->n_mounts++] = (struct jr_policy_mount){ kind, copy, optional };
	return 0;
}

int jr_policy_add_bind(jr_policy_t *p, enum jr_bind_mode mode, const char *path, bool optional,
		       jr_error_t **err)
{
	bool ro = mode == JR_BIND_RO;
	return add_mount(p, ro ? JR_PMOUNT_RO : JR_PMOUNT_RW, path, optional, ro ? "ro" : "rw",
			 err);
}

int jr_policy_add_tmpfs(jr_policy_t *p, const char *path, jr_error_t **err)
{
	return add_mount(p, JR_PMOUNT_TMPFS, path, false, "tmpfs", err);
}

/* RFC 1123: dot-separated labels of letters, digits and inner hyphens,
 * 64 bytes at most (what sethostname accepts). */
static bool hostname_valid(const char *name)
{
	size_t len = strlen(name), label = 0;
	if (len == 0 || len > 64)
		return false;
	for (size_t i = 0; i <= len; i++) {
		char c = name[i];
		if (c == '.' || c == '\0') {
			if (label == 0 || name[i - 1] == '-')
				return false;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			   (c == '-' && label > 0)) {
			label++;
		} else {
			return false;
		}
	}
	return true;
}

int jr_policy_set_hostname(jr_policy_t *p, const char *name, jr_error_t **err)
{
	if (!name || !hostname_valid(name))
		return jr_fail(err, 0,
			       "hostname '%s': use 1-64 letters, digits, '-' and '.'",
			       name ? name : "");
	return replace_string(&p->hostname, name, err);
}

int jr_policy_set_user(jr_policy_t *p, enum jr_user_mode mode, jr_error_t **err)
{
	if (mode != JR_USER_SAME && mode != JR_USER_ROOT)
		return jr_fail(err, 0, "user: unknown mode %d", (int)mode);
	p->user = mode;
	return 0;
}

int jr_policy_keep_fd(jr_policy_t *p, int fd, jr_error_t **err)
{
	if (fd < 3)
		return jr_fail(err, 0, "keep-fd %d: descriptors 0-2 are always passed", fd);
	for (size_t i = 0; i < p->n_keep_fds; i++)
		if (p->keep_fds[i] == fd)
			return 0;
	if (p->n_keep_fds >= JR_MAX_KEEP_FDS)
		return jr_fail(err, 0, "keep-fd %d: at most %d descriptors can be kept", fd,
			       JR_MAX_KEEP_FDS);
	int *fds = reallocarray(p->keep_fds, p->n_keep_fds + 1, sizeof(*fds));
	if (!fds)
		return jr_fail_oom(err);
	p->keep_fds = fds;
	p->keep_fds[p->n_keep_fds++] = fd;
	return 0;
}
