/* The jail's namespaces and its identity: clone3 into new user, mount,
 * pid, net, ipc, uts and cgroup namespaces, and the uid/gid maps. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"

void jr_ids_for_plan(const struct jr_plan *plan, struct jr_ids *ids)
{
	uid_t uid = getuid();
	gid_t gid = getgid();

	ids->caller_is_root = uid == 0;
	if (ids->caller_is_root) {
		ids->outside_uid = JR_ROOT_HOST_ID;
		ids->outside_gid = JR_ROOT_HOST_ID;
	} else {
		ids->outside_uid = uid;
		ids->outside_gid = gid;
	}
	switch (plan->user) {
	case JR_USER_ROOT:
		ids->inside_uid = 0;
		ids->inside_gid = 0;
		break;
	case JR_USER_ID:
		ids->inside_uid = plan->user_uid;
		ids->inside_gid = plan->user_gid;
		break;
	default:
		ids->inside_uid = uid;
		ids->inside_gid = gid;
		break;
	}
}

pid_t jr_clone_jail(bool namespaces, bool new_net, int *pidfd, jr_error_t **err)
{
	const uint64_t ns = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
			    CLONE_NEWCGROUP | (new_net ? CLONE_NEWNET : 0);
	struct clone_args args = {
		.flags = (namespaces ? ns : 0) | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};
	long pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		int e = errno;
		if (e == EPERM || e == ENOSPC || e == EINVAL)
			return jr_fail(err, e,
				       "creating namespaces (clone3; are unprivileged user namespaces allowed? see user.max_user_namespaces, kernel.unprivileged_userns_clone, kernel.apparmor_restrict_unprivileged_userns)");
		return jr_fail(err, e, "creating namespaces (clone3)");
	}
	return (pid_t)pid;
}

static int write_proc_file(pid_t pid, const char *name, const char *content, jr_error_t **err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return jr_fail(err, errno, "writing %s", path);
	size_t len = strlen(content);
	if (write(fd, content, len) != (ssize_t)len)
		return jr_fail(err, errno, "writing %s ('%.*s')", path, (int)strcspn(content, "\n"),
			       content);
	return 0;
}

int jr_write_id_maps(pid_t pid, const struct jr_ids *ids, jr_error_t **err)
{
	char map[64];

	/* Denying setgroups keeps the jail from shedding a supplementary
	 * group that a file's permissions are there to exclude. */
	if (write_proc_file(pid, "setgroups", "deny\n", err) < 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", ids->inside_uid, ids->outside_uid);
	if (write_proc_file(pid, "uid_map", map, err) < 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", ids->inside_gid, ids->outside_gid);
	return write_proc_file(pid, "gid_map", map, err);
}

int jr_become_ids(const struct jr_ids *ids, jr_error_t **err)
{
	/* Until now the kernel still sees the creator's credentials (uid 0
	 * for a root caller); from here on the jail is its mapped id. */
	if (setresgid(ids->inside_gid, ids->inside_gid, ids->inside_gid) < 0)
		return jr_fail(err, errno, "setresgid %u", ids->inside_gid);
	if (setresuid(ids->inside_uid, ids->inside_uid, ids->inside_uid) < 0)
		return jr_fail(err, errno, "setresuid %u", ids->inside_uid);
	return 0;
}
