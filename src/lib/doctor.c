/* jailrun --doctor: what this host supports, tried for real (a forked
 * child attempts each feature), and the fix for what is missing. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

static int read_int(const char *path, long *out)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int r = fscanf(f, "%ld", out) == 1 ? 0 : -1;
	fclose(f);
	return r;
}

/* errno of unshare() with the jail's namespaces in a child, 0 on success. */
static int try_namespaces(void)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return errno;
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		int e = unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
				CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP) < 0 ? errno : 0;
		ssize_t ignored = write(pipefd[1], &e, sizeof(e));
		(void)ignored;
		_exit(0);
	}
	close(pipefd[1]);
	int e = EIO;
	if (read(pipefd[0], &e, sizeof(e)) != sizeof(e))
		e = EIO;
	close(pipefd[0]);
	waitpid(pid, NULL, 0);
	return e;
}

static bool in_container(void)
{
	return access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0;
}

static bool check_userns(jr_line_fn fn, void *ud)
{
	int e = try_namespaces();
	if (e == 0) {
		jr_emitf(fn, ud, "user namespaces      ok: user, mount, pid, net, ipc, uts and cgroup namespaces can be created");
		return true;
	}
	jr_emitf(fn, ud, "user namespaces      FAILED: unshare: %s", strerror(e));
	long v;
	if (read_int("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", &v) == 0 && v == 1)
		jr_emitf(fn, ud, "  why: AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+).  Fix: install the profile shipped in contrib/apparmor/jailrun: sudo cp contrib/apparmor/jailrun /etc/apparmor.d/ && sudo apparmor_parser -r /etc/apparmor.d/jailrun");
	else if (read_int("/proc/sys/kernel/unprivileged_userns_clone", &v) == 0 && v == 0)
		jr_emitf(fn, ud, "  why: kernel.unprivileged_userns_clone=0.  Fix: sudo sysctl -w kernel.unprivileged_userns_clone=1 (and persist it in /etc/sysctl.d/)");
	else if (read_int("/proc/sys/user/max_user_namespaces", &v) == 0 && v == 0)
		jr_emitf(fn, ud, "  why: user.max_user_namespaces=0.  Fix: sudo sysctl -w user.max_user_namespaces=15000");
	else if (in_container())
		jr_emitf(fn, ud, "  why: this looks like a container whose runtime forbids nested namespaces.  Fix: run the container with a seccomp profile allowing unshare and clone with namespace flags (or use jailrun --isolation landlock, which needs none)");
	else
		jr_emitf(fn, ud, "  why: unknown (a seccomp filter or LSM of the caller?); jailrun --isolation landlock needs none");
	return false;
}

static bool check_landlock(jr_line_fn fn, void *ud)
{
	int abi = jr_landlock_abi();
	if (!abi) {
		jr_emitf(fn, ud, "Landlock             not available: the mounts alone confine the jail.  Fix: a kernel >= 5.13 with CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= boot list");
		return false;
	}
	static const char *const features[] = {
		"", "filesystem", "+refer", "+truncate", "+TCP ports", "+device ioctl", "+scopes", "+audit"
	};
	char list[256] = "";
	for (int i = 1; i <= abi && i < 8; i++)
		strcat(strcat(list, i > 1 ? " " : ""), features[i]);
	jr_emitf(fn, ud, "Landlock             ok: ABI %d (%s)", abi, list);
	return true;
}

static bool check_seccomp(jr_line_fn fn, void *ud)
{
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL) {
		jr_emitf(fn, ud, "seccomp              FAILED: the kernel has no seccomp (CONFIG_SECCOMP_FILTER)");
		return false;
	}
	const struct scmp_version *v = seccomp_version();
	jr_emitf(fn, ud, "seccomp              ok: filter mode, libseccomp %u.%u.%u, API level %u", v->major,
	    v->minor, v->micro, seccomp_api_get());
	return true;
}

static void check_cgroups(jr_line_fn fn, void *ud)
{
	struct stat st;
	bool v2 = stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0;
	bool hybrid = !v2 && stat("/sys/fs/cgroup/unified", &st) == 0;
	bool root = getuid() == 0;
	jr_emitf(fn, ud, "cgroups              %s: limit memory/pids/cpu by %s",
		 v2 ? "v2 (unified)" : hybrid ? "v1 with a v2 hierarchy (hybrid)" : "v1",
		 !v2 && root ? "cgroup v1 groups of each run"
			     : "rlimits (memory, pids; cpu is refused): delegated cgroup v2 is not used yet");
}

static void check_pasta(jr_line_fn fn, void *ud)
{
	const char *dirs[] = { "/usr/bin/pasta", "/usr/local/bin/pasta", "/bin/pasta", NULL };
	for (const char **d = dirs; *d; d++)
		if (access(*d, X_OK) == 0) {
			if (access("/dev/net/tun", R_OK | W_OK) < 0)
				jr_emitf(fn, ud, "pasta                found at %s, but /dev/net/tun is not open to this user: net pasta is refused (fix: chmod 0666 /dev/net/tun)", *d);
			else
				jr_emitf(fn, ud, "pasta                found at %s: net pasta works", *d);
			return;
		}
	jr_emitf(fn, ud, "pasta                not installed: net pasta is refused (fix: apt-get install passt)");
}

/* What net host with allow cidr needs: without it such a policy is refused. */
static void check_egress_bpf(jr_line_fn fn, void *ud)
{
	char why[300];
	if (jr_egress_bpf_usable(why, sizeof(why)))
		jr_emitf(fn, ud, "kernel CIDR filter   ok: net host with allow cidr is enforced by cgroup BPF programs (libbpf)");
	else
		jr_emitf(fn, ud, "kernel CIDR filter   not usable: %s; net host with allow cidr is refused (net proxy enforces allow cidr without it)", why);
}

int jr_doctor(jr_line_fn fn, void *ud)
{
	struct utsname u;
	if (uname(&u) == 0)
		jr_emitf(fn, ud, "jailrun %s on %s %s %s, running as uid %u", jr_version(), u.sysname, u.release,
		    u.machine, (unsigned)getuid());
	bool ns = check_userns(fn, ud);
	check_landlock(fn, ud);
	bool sc = check_seccomp(fn, ud);
	check_cgroups(fn, ud);
	check_pasta(fn, ud);
	check_egress_bpf(fn, ud);
	if (ns && sc) {
		jr_emitf(fn, ud, "verdict              the full jail works here");
		return 0;
	}
	jr_emitf(fn, ud, "verdict              the full jail does NOT work here; see the fixes above");
	return 1;
}
