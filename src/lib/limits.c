/* memory, pids and cpu limits: a cgroup of the run's own where jailrun
 * can make one, rlimits otherwise, refused where neither means what the
 * policy asks.
 *
 * This version makes cgroup v1 groups (root, on a v1 or hybrid host);
 * delegated cgroup v2 subtrees are not used yet.  Without a cgroup:
 * memory becomes RLIMIT_AS (address space, which counts more than what is
 * resident: a limit that bites early, never late), pids becomes
 * RLIMIT_NPROC (counted per user namespace, so only the jail's processes;
 * refused without one), and cpu, a share of cores, has no rlimit that
 * means the same: refused.  The run's groups sit beneath the caller's own,
 * whose limits keep holding. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define CGROUP_V1 "/sys/fs/cgroup"

static bool v1_controller(const char *name)
{
	char path[128];
	struct stat st;
	snprintf(path, sizeof(path), CGROUP_V1 "/%s/cgroup.procs", name);
	return stat(path, &st) == 0;
}

void jr_limits_plan(const jr_policy_t *p, jr_plan_t *plan)
{
	const struct jr_limit *l = p->limits;
	plan->memory = l[JR_LIMIT_MEMORY].s.set ? l[JR_LIMIT_MEMORY].value : 0;
	plan->pids = l[JR_LIMIT_PIDS].s.set ? l[JR_LIMIT_PIDS].value : 0;
	plan->cpu_milli = l[JR_LIMIT_CPU].s.set ? l[JR_LIMIT_CPU].value : 0;
	plan->limits_by = JR_LIMITS_NONE;
	if (!plan->memory && !plan->pids && !plan->cpu_milli)
		return;
	if (getuid() == 0 && !plan->landlock_only && (!plan->memory || v1_controller("memory")) &&
	    (!plan->pids || v1_controller("pids")) && (!plan->cpu_milli || v1_controller("cpu"))) {
		plan->limits_by = JR_LIMITS_CGROUP_V1;
		return;
	}
	plan->limits_by = JR_LIMITS_RLIMIT;
	if (plan->memory && plan->n_rlimits < JR_MAX_RLIMITS)
		plan->rlimits[plan->n_rlimits++] = (struct jr_rlimit_plan){ RLIMIT_AS, plan->memory };
	/* RLIMIT_NPROC counts per user namespace: without one (isolation
	 * landlock) it would count all the user's processes on the host, which
	 * is not what limit pids means, so that case is refused (explain.c). */
	if (plan->pids && !plan->landlock_only && plan->n_rlimits < JR_MAX_RLIMITS)
		plan->rlimits[plan->n_rlimits++] = (struct jr_rlimit_plan){ RLIMIT_NPROC, plan->pids };
}

/* ---- cgroup v1, one group per controller per run ------------------- */

int jr_cgroup_write(const char *dir, const char *name, const char *value, jr_error_t **err)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return jr_fail(err, errno, "cgroup: %s", path);
	ssize_t n = write(fd, value, strlen(value));
	int e = errno;
	close(fd);
	if (n != (ssize_t)strlen(value))
		return jr_fail(err, n < 0 ? e : EIO, "cgroup: writing '%s' to %s", value, path);
	return 0;
}

/* The caller's own group in a v1 hierarchy ("" for the root): the run's
 * group goes beneath it, so the caller's own limits still hold for the
 * jail (a group at the root would let a memory-limited caller out).
 * With controller NULL, the group in the v2 hierarchy ("0::PATH"). */
void jr_cgroup_own(const char *controller, char *out, size_t size)
{
	out[0] = '\0';
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return;
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		char *list = strchr(line, ':'), *path = list ? strchr(list + 1, ':') : NULL;
		if (!path)
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (!controller) {
			if (line[0] == '0' && list == line + 1 && !list[1] && strcmp(path, "/"))
				snprintf(out, size, "%s", path);
			continue;
		}
		char *save = NULL;
		for (char *c = strtok_r(list + 1, ",", &save); c; c = strtok_r(NULL, ",", &save))
			if (!strcmp(c, controller) && strcmp(path, "/"))
				snprintf(out, size, "%s", path);
	}
	fclose(f);
}

static int make_group(struct jr_cgroup *cg, const char *controller, jr_error_t **err)
{
	char *dir = cg->dirs[cg->n], own[200];
	jr_cgroup_own(controller, own, sizeof(own));
	snprintf(dir, sizeof(cg->dirs[0]), CGROUP_V1 "/%s%s/jailrun-%d", controller, own, (int)getpid());
	if (mkdir(dir, 0755) < 0)
		return jr_fail(err, errno, "cgroup: mkdir %s", dir);
	cg->n++;
	return 0;
}

/* Groups of runs whose jailrun was killed (SIGKILL leaves no time to
 * clean up): once that jailrun is gone, its empty groups are removed.
 * The names are jailrun-PID, or jailrun-PID-N (egress_bpf.c). */
void jr_cgroup_collect_orphans(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		int pid;
		char path[800];
		if (sscanf(e->d_name, "jailrun-%d", &pid) != 1 || (kill(pid, 0) == 0 || errno != ESRCH))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			rmdir(path); /* fails, harmlessly, while a process is still in it */
	}
	closedir(d);
}

static void collect_orphans(const char *controller)
{
	char dir[400], own[200];
	jr_cgroup_own(controller, own, sizeof(own));
	snprintf(dir, sizeof(dir), CGROUP_V1 "/%s%s", controller, own);
	jr_cgroup_collect_orphans(dir);
}

int jr_cgroup_create(const jr_plan_t *plan, struct jr_cgroup *cg, jr_error_t **err)
{
	memset(cg, 0, sizeof(*cg));
	if (plan->limits_by != JR_LIMITS_CGROUP_V1)
		return 0;
	static const char *const controllers[] = { "memory", "pids", "cpu" };
	for (size_t i = 0; i < 3; i++)
		collect_orphans(controllers[i]);
	char v[64];
	if (plan->memory) {
		if (make_group(cg, "memory", err) < 0)
			return -1;
		cg->memory = cg->dirs[cg->n - 1];
		snprintf(v, sizeof(v), "%llu", (unsigned long long)plan->memory);
		/* Without swap too, where the kernel accounts it: no escape there. */
		if (jr_cgroup_write(cg->memory, "memory.limit_in_bytes", v, err) < 0)
			return -1;
		char sw[512];
		snprintf(sw, sizeof(sw), "%s/memory.memsw.limit_in_bytes", cg->memory);
		if (access(sw, W_OK) == 0 &&
		    jr_cgroup_write(cg->memory, "memory.memsw.limit_in_bytes", v, err) < 0)
			return -1;
	}
	if (plan->pids) {
		if (make_group(cg, "pids", err) < 0)
			return -1;
		cg->pids = cg->dirs[cg->n - 1];
		snprintf(v, sizeof(v), "%llu", (unsigned long long)plan->pids);
		if (jr_cgroup_write(cg->dirs[cg->n - 1], "pids.max", v, err) < 0)
			return -1;
	}
	if (plan->cpu_milli) {
		if (make_group(cg, "cpu", err) < 0)
			return -1;
		/* cfs_quota_us per 100 ms period: 1.5 cores = 150000. */
		snprintf(v, sizeof(v), "%llu", (unsigned long long)plan->cpu_milli * 100);
		if (jr_cgroup_write(cg->dirs[cg->n - 1], "cpu.cfs_period_us", "100000", err) < 0 ||
		    jr_cgroup_write(cg->dirs[cg->n - 1], "cpu.cfs_quota_us", v, err) < 0)
			return -1;
	}
	return 0;
}

int jr_cgroup_attach(struct jr_cgroup *cg, pid_t pid, jr_error_t **err)
{
	char v[32];
	snprintf(v, sizeof(v), "%d", (int)pid);
	for (int i = 0; i < cg->n; i++)
		if (jr_cgroup_write(cg->dirs[i], "cgroup.procs", v, err) < 0)
			return -1;
	return 0;
}

static int64_t read_number(const char *dir, const char *name)
{
	char path[512], buf[64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *end;
	errno = 0;
	long long v = strtoll(buf, &end, 10);
	return errno || end == buf || v < 0 ? -1 : (int64_t)v;
}

void jr_cgroup_peaks(const struct jr_cgroup *cg, int64_t *memory, int64_t *pids)
{
	*memory = cg->memory ? read_number(cg->memory, "memory.max_usage_in_bytes") : -1;
	/* pids.peak is recent (Linux 6.13); older kernels leave it unknown. */
	*pids = cg->pids ? read_number(cg->pids, "pids.peak") : -1;
}

bool jr_cgroup_oom_killed(const struct jr_cgroup *cg)
{
	if (!cg->memory)
		return false;
	char path[512], buf[256];
	snprintf(path, sizeof(path), "%s/memory.oom_control", cg->memory);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	const char *k = strstr(buf, "oom_kill ");
	return k && strtoull(k + 9, NULL, 10) > 0;
}

/* The jail is gone by now (its pid namespace died with init); a
 * straggler still being torn down makes rmdir EBUSY for a moment. */
void jr_cgroup_remove(const char *dir)
{
	for (int tries = 0; tries < 100 && rmdir(dir) < 0 && errno == EBUSY; tries++)
		usleep(10000);
}

void jr_cgroup_destroy(struct jr_cgroup *cg)
{
	for (int i = 0; i < cg->n; i++)
		jr_cgroup_remove(cg->dirs[i]);
	cg->n = 0;
}
