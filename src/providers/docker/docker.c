/* docker.c: the docker provider (jailrun-provider(7), DOCKER PROVIDER).
 *
 * One container per open(): created from the configured image with the
 * policy mapped onto its HostConfig (binds, read-only root, tmpfs, network
 * mode, cgroup limits, CapDrop ALL, no-new-privileges, a seccomp profile
 * generated from the policy), started with an idle process, and every
 * command and file operation run in it through the exec API.  Talks to
 * the Engine API over its AF_UNIX socket (http.c); no docker CLI.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "jailrun-provider.h"

#define DEFAULT_IMAGE "debian:stable-slim"
#define DEFAULT_SOCKET "/var/run/docker.sock"
#define API_TIMEOUT_MS 60000
#define PULL_TIMEOUT_MS 1800000
/* The idle process the container lives on: execs run beside it. */
#define IDLE_SECONDS "2147483647"
#define FILEOP_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct jr_provider_instance {
	char sock[108];
	char id[80];   /* the container's id */
	char name[40]; /* jailrun-<hex> */
	char workspace[PATH_MAX];
	bool preserve;
	bool dead;
	/* Mount points docker made on the host for protected paths that did
	 * not exist (empty directories or files): removed at close. */
	char **placeholders;
	size_t n_placeholders; /* the container could not be brought back after a kill */
	jr_provider_log_fn log;
	void *log_userdata;
	jr_provider_log_fn notice; /* what the user must see; NULL: stderr */
	void *notice_userdata;
};

static void logf_(jr_provider_log_fn log, void *ud, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void logf_(jr_provider_log_fn log, void *ud, const char *fmt, ...)
{
	if (!log)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log(ud, line);
}

/* ---- configuration -------------------------------------------------------- */

static const char *const known_keys[] = { "image", "socket", "auto_pull", "tmp_size", NULL };

/* The last KEY=VALUE wins: policy lines come first, --provider-opt after. */
static const char *cfg(const char *const *config, const char *key)
{
	const char *v = NULL;
	size_t n = strlen(key);
	for (size_t i = 0; config && config[i]; i++)
		if (!strncmp(config[i], key, n) && config[i][n] == '=')
			v = config[i] + n + 1;
	return v;
}

static int check_config(const char *const *config, struct jr_provider_error *err)
{
	for (size_t i = 0; config && config[i]; i++) {
		size_t n = strcspn(config[i], "=");
		bool ok = false;
		for (size_t k = 0; known_keys[k]; k++)
			if (strlen(known_keys[k]) == n && !strncmp(config[i], known_keys[k], n))
				ok = true;
		if (!ok || config[i][n] != '=')
			return dk_fail(err, EINVAL,
				       "docker: unknown configuration '%.*s' (known: image, socket, "
				       "auto_pull, tmp_size)",
				       (int)n, config[i]);
	}
	return 0;
}

static bool cfg_bool(const char *v, bool dflt)
{
	if (!v)
		return dflt;
	return !strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on");
}

/* socket=PATH, else DOCKER_HOST=unix://PATH, else /var/run/docker.sock. */
static int socket_path(const char *const *config, char *out, size_t size, struct jr_provider_error *err)
{
	const char *s = cfg(config, "socket");
	const char *env = getenv("DOCKER_HOST");
	if (!s && env && *env) {
		if (strncmp(env, "unix://", 7))
			return dk_fail(err, EPROTONOSUPPORT,
				       "docker: DOCKER_HOST must be unix://PATH (tcp is not supported)");
		s = env + 7;
	}
	if (!s)
		s = DEFAULT_SOCKET;
	if (snprintf(out, size, "%s", s) >= (int)size)
		return dk_fail(err, ENAMETOOLONG, "docker: socket path too long");
	return 0;
}

/* ---- the Engine API ------------------------------------------------------ */

/* A request whose answer must be 2xx; the body in *body when asked. */
static int api(const char *sock, const char *method, const char *path, const char *json,
	       uint64_t timeout_ms, struct dk_buf *body, struct jr_provider_error *err)
{
	struct dk_buf local = { 0 };
	struct dk_buf *b = body ? body : &local;
	int status = 0;
	if (dk_request(sock, method, path, json, timeout_ms, &status, b, err) < 0) {
		dk_buf_free(&local);
		return -1;
	}
	if (status < 200 || status > 299) {
		char msg[512];
		dk_error_message(b, msg, sizeof(msg));
		dk_fail(err, status == 404 ? ENOENT : status == 409 ? EBUSY : EIO,
			"docker: %s %s: %d %s", method, path, status, msg);
		dk_buf_free(&local);
		return -1;
	}
	dk_buf_free(&local);
	return status;
}

static int remove_container(const char *sock, const char *id, struct jr_provider_error *err)
{
	char path[256];
	snprintf(path, sizeof(path), "/containers/%s?force=1&v=1", id);
	return api(sock, "DELETE", path, NULL, API_TIMEOUT_MS, NULL, err) < 0 ? -1 : 0;
}

/* This process's start time (clock ticks since boot, /proc/PID/stat field
 * 22): with the pid it names this run, so that gc does not take a reused
 * pid for the run that made a container. */
static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	if (!p)
		return 0;
	/* after ") " come fields 3.. ; starttime is field 22 */
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* ---- image ---------------------------------------------------------------- */

static void notice(jr_provider_instance_t *inst, const char *line)
{
	if (inst->notice)
		inst->notice(inst->notice_userdata, line);
	else if (isatty(STDERR_FILENO))
		fprintf(stderr, "jailrun: %s\n", line);
}

static int ensure_image(jr_provider_instance_t *inst, const char *image, bool auto_pull,
			cJSON **config_env, struct jr_provider_error *err)
{
	char esc[1024], path[1200];
	dk_query_escape(image, esc, sizeof(esc));
	snprintf(path, sizeof(path), "/images/%s/json", image);
	struct dk_buf body = { 0 };
	int status = 0;
	if (dk_request(inst->sock, "GET", path, NULL, API_TIMEOUT_MS, &status, &body, err) < 0)
		return -1;
	if (status == 404) {
		if (!auto_pull) {
			dk_buf_free(&body);
			return dk_fail(err, ENOENT, "docker: image %s is not present and auto_pull is off",
				       image);
		}
		/* A progress line where someone watches: pulls take a while. */
		char line[1100];
		snprintf(line, sizeof(line), "docker: pulling %s...", image);
		notice(inst, line);
		/* fromImage takes NAME:TAG whole; tag defaults to latest. */
		char qpath[1200];
		snprintf(qpath, sizeof(qpath), "/images/create?fromImage=%s", esc);
		if (api(inst->sock, "POST", qpath, NULL, PULL_TIMEOUT_MS, &body, err) < 0) {
			dk_buf_free(&body);
			return -1;
		}
		/* The pull answers 200 and reports failure in its JSON stream. */
		const char *e = body.p ? strstr(body.p, "\"error\"") : NULL;
		if (e) {
			char msg[512];
			const char *nl = strchr(e, '\n');
			snprintf(msg, sizeof(msg), "%.*s", nl ? (int)(nl - e) : (int)strlen(e), e);
			dk_buf_free(&body);
			return dk_fail(err, EIO, "docker: pulling %s failed: %s", image, msg);
		}
		snprintf(line, sizeof(line), "docker: pulled %s", image);
		notice(inst, line);
		if (api(inst->sock, "GET", path, NULL, API_TIMEOUT_MS, &body, err) < 0) {
			dk_buf_free(&body);
			return -1;
		}
	} else if (status != 200) {
		char msg[512];
		dk_error_message(&body, msg, sizeof(msg));
		dk_buf_free(&body);
		return dk_fail(err, EIO, "docker: inspecting image %s: %d %s", image, status, msg);
	}
	cJSON *j = cJSON_Parse(body.p);
	dk_buf_free(&body);
	cJSON *env = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "Config"), "Env");
	*config_env = cJSON_IsArray(env) ? cJSON_Duplicate(env, true) : NULL;
	cJSON_Delete(j);
	return 0;
}

/* ---- policy mapping --------------------------------------------------------- */

/* What mapping the policy found impossible, for the clause answers. */
struct mapping {
	bool seccomp_ok;
	char seccomp_why[200];
	char missing[PATH_MAX]; /* a bind source that does not exist */
	char image_env[200];    /* variables the image sets that exec cannot unset */
	const char *net_mode;
	bool net_ok;
	bool user_ok;
	char **placeholders; /* handed to the instance */
	size_t n_placeholders;
};

static void add_placeholder(struct mapping *m, const char *path)
{
	char **v = realloc(m->placeholders, (m->n_placeholders + 1) * sizeof(*v));
	if (!v)
		return;
	m->placeholders = v;
	if ((v[m->n_placeholders] = strdup(path)))
		m->n_placeholders++;
}

static const char *scmp_action(const char *a)
{
	if (!a)
		return NULL;
	if (!strcmp(a, "allow"))
		return "SCMP_ACT_ALLOW";
	if (!strcmp(a, "errno"))
		return "SCMP_ACT_ERRNO";
	if (!strcmp(a, "kill"))
		return "SCMP_ACT_KILL_PROCESS";
	if (!strcmp(a, "log"))
		return "SCMP_ACT_LOG";
	return NULL;
}

static const char *scmp_op(const char *op)
{
	static const char *const map[][2] = { { "==", "SCMP_CMP_EQ" }, { "!=", "SCMP_CMP_NE" },
					      { "<", "SCMP_CMP_LT" },  { "<=", "SCMP_CMP_LE" },
					      { ">", "SCMP_CMP_GT" },  { ">=", "SCMP_CMP_GE" },
					      { "&=", "SCMP_CMP_MASKED_EQ" } };
	for (size_t i = 0; op && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(op, map[i][0]))
			return map[i][1];
	return NULL;
}

static int num_or(const cJSON *o, const char *key, int dflt)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);
	return cJSON_IsNumber(v) ? v->valueint : dflt;
}

/* Docker's seccomp profile format from the policy's seccomp object.
 * libseccomp refuses two unconditional rules for one syscall and a rule
 * whose action is the default, so a later unconditional rule replaces an
 * earlier one for the same syscall (policy order: the last word wins, as
 * in the local filter) and rules equal to the default are left out. */
static char *seccomp_profile(const cJSON *sc, struct mapping *m)
{
	cJSON *prof = cJSON_CreateObject();
	cJSON *calls = cJSON_AddArrayToObject(prof, "syscalls");
	const char *dact = scmp_action(cJSON_GetStringValue(cJSON_GetObjectItem(sc, "defaultAction")));
	int derr = num_or(sc, "defaultErrno", 1);
	m->seccomp_ok = true;
	if (!dact) {
		m->seccomp_ok = false;
		snprintf(m->seccomp_why, sizeof(m->seccomp_why), "unknown default action");
		dact = "SCMP_ACT_ERRNO";
	}
	cJSON_AddStringToObject(prof, "defaultAction", dact);
	if (!strcmp(dact, "SCMP_ACT_ERRNO"))
		cJSON_AddNumberToObject(prof, "defaultErrnoRet", derr);
#if defined(__x86_64__)
	/* Only the native ABI: syscalls of another (i386, x32) are refused by
	 * the filter's bad-architecture action, as the local jail does. */
	cJSON *arch = cJSON_AddArrayToObject(prof, "architectures");
	cJSON_AddItemToArray(arch, cJSON_CreateString("SCMP_ARCH_X86_64"));
#elif defined(__aarch64__)
	cJSON *arch = cJSON_AddArrayToObject(prof, "architectures");
	cJSON_AddItemToArray(arch, cJSON_CreateString("SCMP_ARCH_AARCH64"));
#endif
	const cJSON *rules = cJSON_GetObjectItem(sc, "rules");
	int nrules = cJSON_GetArraySize(rules);
	for (int i = 0; i < nrules; i++) {
		const cJSON *r = cJSON_GetArrayItem(rules, i);
		const char *act = scmp_action(cJSON_GetStringValue(cJSON_GetObjectItem(r, "action")));
		int errn = num_or(r, "errno", 1);
		const cJSON *conds = cJSON_GetObjectItem(r, "conditions");
		int nconds = cJSON_GetArraySize(conds);
		if (!act) {
			m->seccomp_ok = false;
			snprintf(m->seccomp_why, sizeof(m->seccomp_why), "a rule's action is unknown");
			continue;
		}
		cJSON *args = cJSON_CreateArray();
		unsigned seen_args = 0;
		for (int c = 0; c < nconds; c++) {
			const cJSON *cd = cJSON_GetArrayItem(conds, c);
			const char *op = scmp_op(cJSON_GetStringValue(cJSON_GetObjectItem(cd, "op")));
			int arg = num_or(cd, "arg", -1);
			double value = cJSON_GetNumberValue(cJSON_GetObjectItem(cd, "value"));
			double mask = cJSON_GetNumberValue(cJSON_GetObjectItem(cd, "mask"));
			/* runc turns several conditions on one argument into separate
			 * rules (an OR), not the AND the policy means. */
			if (!op || arg < 0 || arg > 5 || (seen_args & (1u << arg))) {
				m->seccomp_ok = false;
				snprintf(m->seccomp_why, sizeof(m->seccomp_why),
					 "a condition docker's profile cannot express");
				continue;
			}
			seen_args |= 1u << arg;
			cJSON *a = cJSON_CreateObject();
			cJSON_AddNumberToObject(a, "index", arg);
			bool masked = !strcmp(op, "SCMP_CMP_MASKED_EQ");
			cJSON_AddNumberToObject(a, "value", masked ? mask : value);
			cJSON_AddNumberToObject(a, "valueTwo", masked ? value : 0);
			cJSON_AddStringToObject(a, "op", op);
			cJSON_AddItemToArray(args, a);
		}
		bool same_as_default = !strcmp(act, dact) && (strcmp(act, "SCMP_ACT_ERRNO") || errn == derr);
		const cJSON *names = cJSON_GetObjectItem(r, "syscalls");
		cJSON *keep = cJSON_CreateArray();
		const cJSON *nm;
		cJSON_ArrayForEach(nm, names) {
			const char *s = cJSON_GetStringValue(nm);
			if (!s)
				continue;
			if (nconds == 0) {
				/* A later unconditional rule wins: drop this syscall from
				 * the earlier unconditional rules already emitted. */
				cJSON *prev;
				cJSON_ArrayForEach(prev, calls) {
					if (cJSON_GetArraySize(cJSON_GetObjectItem(prev, "args")))
						continue;
					cJSON *pn = cJSON_GetObjectItem(prev, "names");
					for (int k = cJSON_GetArraySize(pn) - 1; k >= 0; k--)
						if (!strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(pn, k)), s))
							cJSON_DeleteItemFromArray(pn, k);
				}
			}
			if (!same_as_default || nconds)
				cJSON_AddItemToArray(keep, cJSON_CreateString(s));
		}
		if (cJSON_GetArraySize(keep) == 0 || (same_as_default && nconds == 0)) {
			cJSON_Delete(keep);
			cJSON_Delete(args);
			continue;
		}
		cJSON *e = cJSON_CreateObject();
		cJSON_AddItemToObject(e, "names", keep);
		cJSON_AddStringToObject(e, "action", act);
		if (!strcmp(act, "SCMP_ACT_ERRNO"))
			cJSON_AddNumberToObject(e, "errnoRet", errn);
		cJSON_AddItemToObject(e, "args", args);
		cJSON_AddItemToArray(calls, e);
	}
	/* Entries whose names all went to later rules. */
	for (int k = cJSON_GetArraySize(calls) - 1; k >= 0; k--)
		if (!cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(calls, k), "names")))
			cJSON_DeleteItemFromArray(calls, k);
	char *text = cJSON_PrintUnformatted(prof);
	cJSON_Delete(prof);
	return text;
}

static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* Adds or replaces (same target: the later one wins, as mounting over it
 * would) a mount in HostConfig.Mounts. */
static void add_mount(cJSON *mounts, cJSON *m)
{
	const char *target = cJSON_GetStringValue(cJSON_GetObjectItem(m, "Target"));
	for (int i = 0; i < cJSON_GetArraySize(mounts); i++) {
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(mounts, i), "Target"));
		if (t && target && !strcmp(t, target)) {
			cJSON_ReplaceItemInArray(mounts, i, m);
			return;
		}
	}
	cJSON_AddItemToArray(mounts, m);
}

static cJSON *bind_mount(const char *source, const char *target, bool ro)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "Type", "bind");
	cJSON_AddStringToObject(m, "Source", source);
	cJSON_AddStringToObject(m, "Target", target);
	cJSON_AddBoolToObject(m, "ReadOnly", ro);
	return m;
}

static cJSON *tmpfs_mount(const char *target, bool ro, const char *size)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "Type", "tmpfs");
	cJSON_AddStringToObject(m, "Target", target);
	cJSON_AddBoolToObject(m, "ReadOnly", ro);
	if (size) {
		cJSON *o = cJSON_AddObjectToObject(m, "TmpfsOptions");
		cJSON_AddNumberToObject(o, "SizeBytes", strtod(size, NULL));
	}
	return m;
}

static bool system_path(const char *t)
{
	return path_under(t, "/proc") || path_under(t, "/sys") || path_under(t, "/dev");
}

/* Whether path lies in a writable bind of the caller's. */
static bool in_writable_bind(const cJSON *mounts, const char *path)
{
	const char *best = NULL;
	bool ro = true;
	const cJSON *b;
	cJSON_ArrayForEach(b, mounts) {
		const char *bt = cJSON_GetStringValue(cJSON_GetObjectItem(b, "Target"));
		const char *ty = cJSON_GetStringValue(cJSON_GetObjectItem(b, "Type"));
		if (bt && ty && !strcmp(ty, "bind") && path_under(path, bt) && strcmp(path, bt) &&
		    (!best || strlen(bt) > strlen(best))) {
			best = bt;
			ro = cJSON_IsTrue(cJSON_GetObjectItem(b, "ReadOnly"));
		}
	}
	return best && !ro;
}

/* protect clauses: the policy's mounts carry the read-only binds of the
 * protected paths that exist; one that does not exist but whose parent
 * does, inside a writable bind, gets what the local jail gives it (an
 * empty read-only directory, or an empty read-only file when the clause
 * did not end it with '/'), so that the command cannot create it.  Docker
 * makes the mount point on the host: close() removes it. */
static void map_protect(const cJSON *policy, cJSON *mounts, struct mapping *m)
{
	const char *ws = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(policy, "workspace"), "path"));
	const char *home = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(policy, "home"), "path"));
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(policy, "clauses")) {
		const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(c, "directive"));
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(c, "text"));
		if (!d || !text || strcmp(d, "protect"))
			continue;
		char *copy = strdup(text + strlen("protect"));
		if (!copy)
			continue;
		char *save = NULL;
		for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
			char path[PATH_MAX];
			if (!strncmp(w, "$WORKSPACE", 10) && ws)
				snprintf(path, sizeof(path), "%s%s", ws, w + 10);
			else if (w[0] == '~' && (w[1] == '/' || !w[1]) && home)
				snprintf(path, sizeof(path), "%s%s", home, w + 1);
			else if (w[0] == '/')
				snprintf(path, sizeof(path), "%s", w);
			else
				continue; /* quoting or variables: the core's binds are what there is */
			size_t n = strlen(path);
			if (n && path[n - 1] == '?')
				path[--n] = '\0';
			bool dir = n > 1 && path[n - 1] == '/';
			while (n > 1 && path[n - 1] == '/')
				path[--n] = '\0';
			struct stat st;
			if (lstat(path, &st) == 0 || !in_writable_bind(mounts, path))
				continue;
			char parent[PATH_MAX];
			snprintf(parent, sizeof(parent), "%s", path);
			char *slash = strrchr(parent, '/');
			if (!slash || slash == parent)
				continue;
			*slash = '\0';
			if (stat(parent, &st) < 0 || !S_ISDIR(st.st_mode))
				continue;
			add_mount(mounts, dir ? tmpfs_mount(path, true, "4096")
					      : bind_mount("/dev/null", path, true));
			add_placeholder(m, path);
		}
		free(copy);
	}
}

/* HostConfig.Mounts from the policy's mounts: the caller's binds (the
 * workspace, ro/rw trees, protected paths) at the same paths, tmpfs
 * mounts, and masks over what those binds would show.  The local jail's
 * system view (binds with callers false) is the image's business. */
static cJSON *map_mounts(const cJSON *policy, const char *workspace, const char *tmp_size,
			 struct mapping *m)
{
	cJSON *mounts = cJSON_CreateArray();
	const cJSON *ws = cJSON_GetObjectItem(policy, "workspace");
	const char *wpath = cJSON_GetStringValue(cJSON_GetObjectItem(ws, "path"));
	if (!wpath)
		wpath = workspace;
	add_mount(mounts, bind_mount(workspace, wpath, cJSON_IsTrue(cJSON_GetObjectItem(ws, "readOnly"))));
	add_mount(mounts, tmpfs_mount("/tmp", false, tmp_size));
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(policy, "mounts")) {
		const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(e, "type"));
		const char *target = cJSON_GetStringValue(cJSON_GetObjectItem(e, "target"));
		const char *source = cJSON_GetStringValue(cJSON_GetObjectItem(e, "source"));
		bool ro = cJSON_IsTrue(cJSON_GetObjectItem(e, "readOnly"));
		bool callers = cJSON_IsTrue(cJSON_GetObjectItem(e, "callers"));
		if (!type || !target || target[0] != '/' || system_path(target))
			continue;
		struct stat st;
		if (!strcmp(type, "bind")) {
			if (!callers || !source)
				continue;
			/* A bind of a missing source would have docker create it (as
			 * root, in the caller's tree): refuse the clause instead. */
			if (lstat(source, &st) < 0) {
				snprintf(m->missing, sizeof(m->missing), "%s", source);
				continue;
			}
			add_mount(mounts, bind_mount(source, target, ro));
		} else if (!strcmp(type, "tmpfs")) {
			add_mount(mounts, tmpfs_mount(target, ro, tmp_size));
		} else if (!strcmp(type, "mask")) {
			/* Only what a bind shows needs hiding: the image has none of
			 * the caller's files.  A directory gets an empty read-only
			 * tmpfs, anything else /dev/null read-only. */
			if (lstat(target, &st) < 0)
				continue;
			bool shown = false;
			const cJSON *b;
			cJSON_ArrayForEach(b, mounts) {
				const char *bt = cJSON_GetStringValue(cJSON_GetObjectItem(b, "Target"));
				const char *ty = cJSON_GetStringValue(cJSON_GetObjectItem(b, "Type"));
				if (bt && ty && !strcmp(ty, "bind") && path_under(target, bt))
					shown = true;
			}
			if (!shown)
				continue;
			add_mount(mounts, S_ISDIR(st.st_mode) ? tmpfs_mount(target, true, "4096")
							      : bind_mount("/dev/null", target, true));
		}
	}
	map_protect(policy, mounts, m);
	return mounts;
}

static void add_ulimit(cJSON *ulimits, const char *name, double v)
{
	cJSON *u = cJSON_CreateObject();
	cJSON_AddStringToObject(u, "Name", name);
	cJSON_AddNumberToObject(u, "Soft", v);
	cJSON_AddNumberToObject(u, "Hard", v);
	cJSON_AddItemToArray(ulimits, u);
}

static char *create_body(const cJSON *policy, const struct jr_provider_open_args *args,
			 const char *image, const char *wpath, const char *seccomp, bool preserve,
			 struct mapping *m)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "Image", image);
	cJSON *ep = cJSON_AddArrayToObject(c, "Entrypoint");
	cJSON_AddItemToArray(ep, cJSON_CreateString("sleep"));
	cJSON *cmd = cJSON_AddArrayToObject(c, "Cmd");
	cJSON_AddItemToArray(cmd, cJSON_CreateString(IDLE_SECONDS));
	cJSON_AddArrayToObject(c, "Env"); /* nothing of ours: each exec brings the policy's */
	const cJSON *caller = cJSON_GetObjectItem(policy, "caller");
	char user[64];
	snprintf(user, sizeof(user), "%d:%d", num_or(caller, "uid", (int)getuid()),
		 num_or(caller, "gid", (int)getgid()));
	/* The caller's ids, so what the command writes in the workspace is theirs. */
	cJSON_AddStringToObject(c, "User", user);
	cJSON_AddStringToObject(c, "WorkingDir", wpath);
	const char *hn = cJSON_GetStringValue(cJSON_GetObjectItem(policy, "hostname"));
	cJSON_AddStringToObject(c, "Hostname", hn ? hn : "jailrun");
	cJSON *labels = cJSON_AddObjectToObject(c, "Labels");
	char v[64];
	cJSON_AddStringToObject(labels, "jailrun", "1");
	snprintf(v, sizeof(v), "%d", (int)getpid());
	cJSON_AddStringToObject(labels, "jailrun.pid", v);
	snprintf(v, sizeof(v), "%llu", start_time(getpid()));
	cJSON_AddStringToObject(labels, "jailrun.start", v);
	snprintf(v, sizeof(v), "%u", (unsigned)getuid());
	cJSON_AddStringToObject(labels, "jailrun.uid", v);
	cJSON_AddStringToObject(labels, "jailrun.preserve", preserve ? "1" : "0");
	const char *pname = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(policy, "policy"), "name"));
	if (pname)
		cJSON_AddStringToObject(labels, "jailrun.policy", pname);

	cJSON *hc = cJSON_AddObjectToObject(c, "HostConfig");
	cJSON_AddItemToObject(hc, "Mounts", map_mounts(policy, wpath, cfg(args->config, "tmp_size"), m));
	cJSON_AddBoolToObject(hc, "ReadonlyRootfs", true);
	const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(policy, "network"), "mode"));
	m->net_mode = mode ? mode : "none";
	m->net_ok = !strcmp(m->net_mode, "none") || !strcmp(m->net_mode, "host");
	/* Anything not implemented gets no network at all: fail closed. */
	cJSON_AddStringToObject(hc, "NetworkMode", !strcmp(m->net_mode, "host") ? "host" : "none");
	const cJSON *lim = cJSON_GetObjectItem(policy, "limits");
	const cJSON *mem = cJSON_GetObjectItem(lim, "memoryBytes");
	if (cJSON_IsNumber(mem)) {
		cJSON_AddNumberToObject(hc, "Memory", mem->valuedouble);
		/* Memory+swap equal to memory: no swapping past the limit. */
		cJSON_AddNumberToObject(hc, "MemorySwap", mem->valuedouble);
	}
	const cJSON *pids = cJSON_GetObjectItem(lim, "pids");
	if (cJSON_IsNumber(pids))
		cJSON_AddNumberToObject(hc, "PidsLimit", pids->valuedouble);
	const cJSON *cpu = cJSON_GetObjectItem(lim, "cpuMillis");
	if (cJSON_IsNumber(cpu))
		cJSON_AddNumberToObject(hc, "NanoCpus", cpu->valuedouble * 1e6);
	cJSON *ul = cJSON_AddArrayToObject(hc, "Ulimits");
	const cJSON *nofile = cJSON_GetObjectItem(lim, "nofile");
	if (cJSON_IsNumber(nofile))
		add_ulimit(ul, "nofile", nofile->valuedouble);
	const cJSON *fsize = cJSON_GetObjectItem(lim, "fsizeBytes");
	if (cJSON_IsNumber(fsize))
		add_ulimit(ul, "fsize", fsize->valuedouble);
	add_ulimit(ul, "core", 0); /* no core dumps, as the local jail's default */
	cJSON *drop = cJSON_AddArrayToObject(hc, "CapDrop");
	cJSON_AddItemToArray(drop, cJSON_CreateString("ALL"));
	cJSON *sec = cJSON_AddArrayToObject(hc, "SecurityOpt");
	cJSON_AddItemToArray(sec, cJSON_CreateString("no-new-privileges"));
	size_t n = strlen(seccomp) + 16;
	char *opt = malloc(n);
	if (opt) {
		snprintf(opt, n, "seccomp=%s", seccomp);
		cJSON_AddItemToArray(sec, cJSON_CreateString(opt));
		free(opt);
	}
	cJSON_AddBoolToObject(hc, "Init", false);
	char *text = cJSON_PrintUnformatted(c);
	cJSON_Delete(c);
	(void)args;
	return text;
}

/* Variables the image sets: docker adds them to every exec's environment
 * and an exec cannot unset them.  PATH alone is tolerated. */
static void check_image_env(const cJSON *env, struct mapping *m)
{
	const cJSON *e;
	size_t o = 0;
	cJSON_ArrayForEach(e, env) {
		const char *s = cJSON_GetStringValue(e);
		if (!s || !strncmp(s, "PATH=", 5))
			continue;
		int n = (int)strcspn(s, "=");
		int w = snprintf(m->image_env + o, sizeof(m->image_env) - o, "%s%.*s", o ? " " : "", n, s);
		if (w > 0 && o + (size_t)w < sizeof(m->image_env))
			o += (size_t)w;
	}
}

static void answer(struct jr_provider_clause *cl, bool enforced, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void answer(struct jr_provider_clause *cl, bool enforced, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cl->mechanism, sizeof(cl->mechanism), fmt, ap);
	va_end(ap);
	cl->enforced = enforced;
}

/* One answer per clause: enforced and how, or not and why.  Anything this
 * provider does not know is not enforced, so that jailrun fails closed. */
static void answer_clauses(const cJSON *policy, const struct mapping *m,
			   struct jr_provider_clause *clauses, size_t n_clauses)
{
	const cJSON *arr = cJSON_GetObjectItem(policy, "clauses");
	const cJSON *user = cJSON_GetObjectItem(policy, "user");
	const cJSON *caller = cJSON_GetObjectItem(policy, "caller");
	bool same_user = num_or(user, "uid", -1) == num_or(caller, "uid", -2) &&
			 num_or(user, "gid", -1) == num_or(caller, "gid", -2);
	for (size_t i = 0; i < n_clauses; i++) {
		const cJSON *c = cJSON_GetArrayItem(arr, (int)i);
		struct jr_provider_clause *a = &clauses[i];
		const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(c, "directive"));
		const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(c, "text"));
		const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(c, "kind"));
		if (!d || !text) {
			answer(a, false, "docker: clause %zu missing from the policy JSON", i);
			continue;
		}
		if (kind && !strcmp(kind, "mechanism")) {
			answer(a, false, "a mechanism of the local jail: not the docker provider's");
			continue;
		}
		if (!strcmp(d, "workspace") || !strcmp(d, "ro") || !strcmp(d, "rw") || !strcmp(d, "protect") ||
		    !strcmp(d, "home") || !strcmp(d, "tmpfs") || !strcmp(d, "mask")) {
			if (m->missing[0] && strcmp(d, "mask") && strcmp(d, "tmpfs"))
				answer(a, false,
				       "docker cannot bind %s, which does not exist, without creating it",
				       m->missing);
			else if (!strcmp(d, "mask"))
				answer(a, true, "docker mounts: empty read-only tmpfs or /dev/null over "
						"what the binds show; the image has no caller files");
			else
				answer(a, true, "docker mounts (HostConfig.Mounts) at the same paths, "
						"read-only root filesystem");
		} else if (!strcmp(d, "net")) {
			if (m->net_ok)
				answer(a, true, "docker NetworkMode %s", m->net_mode);
			else
				answer(a, false, "docker provider: net %s is not implemented (none and host are)",
				       m->net_mode);
		} else if (!strcmp(d, "allow") || !strcmp(d, "resolve")) {
			if (!strcmp(m->net_mode, "none"))
				answer(a, true, "docker NetworkMode none: nothing is reachable");
			else
				answer(a, false, "docker provider: host and address filters are not implemented");
		} else if (!strcmp(d, "env")) {
			if (m->image_env[0])
				answer(a, false, "the image sets %s, which docker adds to every exec",
				       m->image_env);
			else
				answer(a, true, "each exec's Env is the policy's environment; the container's is empty");
		} else if (!strcmp(d, "user")) {
			if (same_user)
				answer(a, true, "docker User is the caller's uid:gid");
			else
				answer(a, false, "docker runs the command as the caller's uid:gid, not another "
						 "(no user namespace remapping)");
		} else if (!strcmp(d, "hostname")) {
			answer(a, true, "docker Hostname");
		} else if (!strcmp(d, "caps")) {
			answer(a, true, "docker CapDrop ALL and no-new-privileges");
		} else if (!strcmp(d, "seccomp")) {
			if (m->seccomp_ok)
				answer(a, true, "docker seccomp profile generated from the policy");
			else
				answer(a, false, "docker seccomp profile: %s", m->seccomp_why);
		} else if (!strcmp(d, "limit")) {
			char what[32] = "";
			sscanf(text, "limit %31s", what);
			if (!strcmp(what, "memory"))
				answer(a, true, "docker Memory and MemorySwap (cgroup)");
			else if (!strcmp(what, "pids"))
				answer(a, true, "docker PidsLimit (cgroup)");
			else if (!strcmp(what, "cpu"))
				answer(a, true, "docker NanoCpus (cgroup)");
			else if (!strcmp(what, "nofile") || !strcmp(what, "fsize"))
				answer(a, true, "docker Ulimits");
			else if (!strcmp(what, "time"))
				answer(a, true, "the provider kills the container at the time limit");
			else if (!strcmp(what, "output"))
				answer(a, true, "the provider drops output beyond the limit");
			else
				answer(a, false, "docker provider: limit %s is not implemented", what);
		} else {
			answer(a, false, "docker provider: '%s' is not implemented", d);
		}
	}
}

/* Only what docker made: an empty directory, or an empty regular file. */
static void remove_placeholders(char **v, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		struct stat st;
		if (lstat(v[i], &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			rmdir(v[i]);
		else if (S_ISREG(st.st_mode) && st.st_size == 0)
			unlink(v[i]);
	}
}

static void free_placeholders(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void random_hex(char *out, size_t nbytes)
{
	unsigned char r[16] = { 0 };
	if (nbytes > sizeof(r))
		nbytes = sizeof(r);
	if (getrandom(r, nbytes, 0) != (ssize_t)nbytes) {
		/* Not secret, only unique: time and pid will do. */
		unsigned long long t = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
		memcpy(r, &t, nbytes < sizeof(t) ? nbytes : sizeof(t));
	}
	for (size_t i = 0; i < nbytes; i++)
		sprintf(out + 2 * i, "%02x", r[i]);
}

static int d_open(const struct jr_provider_open_args *args, jr_provider_instance_t **out,
		  struct jr_provider_clause *clauses, size_t n_clauses, struct jr_provider_error *err)
{
	*out = NULL;
	/* An older jailrun's table ends before notice: take what it has. */
	if (!args || args->size < offsetof(struct jr_provider_open_args, notice) || !args->policy_json)
		return dk_fail(err, EINVAL, "docker: open arguments missing");
	if (check_config(args->config, err) < 0)
		return -1;
	cJSON *policy = cJSON_Parse(args->policy_json);
	if (!policy)
		return dk_fail(err, EINVAL, "docker: the policy JSON does not parse");
	struct jr_provider_instance *inst = calloc(1, sizeof(*inst));
	struct mapping m = { 0 };
	cJSON *image_env = NULL;
	char *seccomp = NULL, *body = NULL;
	struct dk_buf resp = { 0 };
	int rc = -1;
	if (!inst) {
		dk_fail(err, ENOMEM, "out of memory");
		goto out;
	}
	inst->preserve = args->preserve;
	inst->log = args->log;
	inst->log_userdata = args->log_userdata;
	if (args->size >= offsetof(struct jr_provider_open_args, notice_userdata) + sizeof(void *)) {
		inst->notice = args->notice;
		inst->notice_userdata = args->notice_userdata;
	}
	if (socket_path(args->config, inst->sock, sizeof(inst->sock), err) < 0)
		goto out;
	const char *wpath = cJSON_GetStringValue(
		cJSON_GetObjectItem(cJSON_GetObjectItem(policy, "workspace"), "path"));
	if (!wpath)
		wpath = args->workspace;
	if (!wpath || !args->workspace) {
		dk_fail(err, EINVAL, "docker: no workspace");
		goto out;
	}
	snprintf(inst->workspace, sizeof(inst->workspace), "%s", wpath);
	const char *image = cfg(args->config, "image");
	if (!image || !*image)
		image = DEFAULT_IMAGE;
	if (ensure_image(inst, image, cfg_bool(cfg(args->config, "auto_pull"), true), &image_env, err) < 0)
		goto out;
	check_image_env(image_env, &m);
	seccomp = seccomp_profile(cJSON_GetObjectItem(policy, "seccomp"), &m);
	if (!seccomp) {
		dk_fail(err, ENOMEM, "out of memory");
		goto out;
	}
	body = create_body(policy, args, image, wpath, seccomp, args->preserve, &m);
	if (!body) {
		dk_fail(err, ENOMEM, "out of memory");
		goto out;
	}
	char hex[13];
	random_hex(hex, 6);
	snprintf(inst->name, sizeof(inst->name), "jailrun-%s", hex);
	char path[128];
	snprintf(path, sizeof(path), "/containers/create?name=%s", inst->name);
	if (api(inst->sock, "POST", path, body, API_TIMEOUT_MS, &resp, err) < 0)
		goto out;
	cJSON *cr = cJSON_Parse(resp.p);
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(cr, "Id"));
	if (id)
		snprintf(inst->id, sizeof(inst->id), "%s", id);
	cJSON_Delete(cr);
	if (!inst->id[0]) {
		dk_fail(err, EPROTO, "docker: container create answered no Id");
		goto out;
	}
	logf_(args->log, args->log_userdata, "docker: created %s (%.12s) from %s", inst->name, inst->id, image);
	snprintf(path, sizeof(path), "/containers/%s/start", inst->id);
	if (api(inst->sock, "POST", path, NULL, API_TIMEOUT_MS, NULL, err) < 0) {
		struct jr_provider_error ignored;
		remove_container(inst->sock, inst->id, &ignored);
		inst->id[0] = '\0';
		goto out;
	}
	answer_clauses(policy, &m, clauses, n_clauses);
	inst->placeholders = m.placeholders;
	inst->n_placeholders = m.n_placeholders;
	m.placeholders = NULL;
	m.n_placeholders = 0;
	*out = inst;
	inst = NULL;
	rc = 0;
out:
	dk_buf_free(&resp);
	free(body);
	free(seccomp);
	cJSON_Delete(image_env);
	cJSON_Delete(policy);
	if (inst && !inst->id[0])
		remove_placeholders(m.placeholders, m.n_placeholders);
	free_placeholders(m.placeholders, m.n_placeholders);
	free(inst);
	return rc;
}

/* ---- exec ------------------------------------------------------------------- */

/* Where one stream of the command's output goes: a descriptor, or a
 * buffer (file operations); limit 0: none. */
struct sink {
	int fd;
	struct dk_buf *buf;
	size_t limit;
	bool dropped;
	bool broken; /* the descriptor failed: drop the rest */
};

struct run {
	char *const *argv;
	const char *const *cargv; /* argv for file operations */
	char *const *envp;
	const char *cwd;
	int stdin_fd;		 /* -1: no input from a descriptor */
	const void *stdin_data;	 /* or this, then EOF */
	size_t stdin_len;
	bool has_stdin_data;
	uint64_t timeout_ms;
	uint64_t max_output;
	struct sink out, err;
};

static void sink_write(struct sink *s, const char *p, size_t n, uint64_t *total, uint64_t max,
		       bool *truncated)
{
	if (max) {
		if (*total >= max) {
			*truncated = true;
			return;
		}
		if (n > max - *total) {
			n = (size_t)(max - *total);
			*truncated = true;
		}
	}
	*total += n;
	if (s->buf) {
		size_t room = s->limit ? (s->limit > s->buf->len ? s->limit - s->buf->len : 0) : n;
		if (n > room) {
			s->dropped = true;
			n = room;
		}
		if (n && dk_buf_add(s->buf, p, n) < 0)
			s->dropped = true;
		return;
	}
	while (n && !s->broken && s->fd >= 0) {
		ssize_t w = write(s->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->broken = true;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* At the time limit: docker has no call to kill one exec, so the whole
 * container is killed and started again on its idle process (what was
 * in its /tmp is lost); if it will not start, the instance is dead. */
static void kill_and_revive(jr_provider_instance_t *inst)
{
	char path[256];
	struct jr_provider_error ignored;
	snprintf(path, sizeof(path), "/containers/%s/kill?signal=KILL", inst->id);
	api(inst->sock, "POST", path, NULL, API_TIMEOUT_MS, NULL, &ignored);
	snprintf(path, sizeof(path), "/containers/%s/start", inst->id);
	for (int i = 0; i < 50; i++) {
		struct dk_buf b = { 0 };
		int status = 0;
		int r = dk_request(inst->sock, "POST", path, NULL, API_TIMEOUT_MS, &status, &b, &ignored);
		dk_buf_free(&b);
		if (r == 0 && (status == 204 || status == 304))
			return;
		struct timespec ts = { 0, 100 * 1000000L };
		nanosleep(&ts, NULL);
	}
	inst->dead = true;
}

static int run_exec(jr_provider_instance_t *inst, struct run *r, struct jr_provider_exec_result *res,
		    struct jr_provider_error *err)
{
	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	if (!inst->id[0] || inst->dead)
		return dk_fail(err, ESRCH, "docker: container %s is gone (killed at a time limit)", inst->name);
	bool want_stdin = r->stdin_fd >= 0 || r->has_stdin_data;
	cJSON *c = cJSON_CreateObject();
	cJSON_AddBoolToObject(c, "AttachStdin", want_stdin);
	cJSON_AddBoolToObject(c, "AttachStdout", true);
	cJSON_AddBoolToObject(c, "AttachStderr", true);
	cJSON_AddBoolToObject(c, "Tty", false);
	cJSON *cmd = cJSON_AddArrayToObject(c, "Cmd");
	for (size_t i = 0; r->argv && r->argv[i]; i++)
		cJSON_AddItemToArray(cmd, cJSON_CreateString(r->argv[i]));
	for (size_t i = 0; r->cargv && r->cargv[i]; i++)
		cJSON_AddItemToArray(cmd, cJSON_CreateString(r->cargv[i]));
	cJSON *env = cJSON_AddArrayToObject(c, "Env");
	for (size_t i = 0; r->envp && r->envp[i]; i++)
		cJSON_AddItemToArray(env, cJSON_CreateString(r->envp[i]));
	cJSON_AddStringToObject(c, "WorkingDir", r->cwd ? r->cwd : inst->workspace);
	int n_cmd = cJSON_GetArraySize(cmd);
	char *body = cJSON_PrintUnformatted(c);
	cJSON_Delete(c);
	if (!body)
		return dk_fail(err, ENOMEM, "out of memory");
	if (n_cmd == 0) {
		free(body);
		return dk_fail(err, EINVAL, "docker: empty command");
	}
	char path[256];
	struct dk_buf resp = { 0 };
	snprintf(path, sizeof(path), "/containers/%s/exec", inst->id);
	int status = api(inst->sock, "POST", path, body, API_TIMEOUT_MS, &resp, err);
	free(body);
	if (status < 0) {
		dk_buf_free(&resp);
		return -1;
	}
	char exec_id[80] = "";
	cJSON *cr = cJSON_Parse(resp.p);
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(cr, "Id"));
	if (id)
		snprintf(exec_id, sizeof(exec_id), "%s", id);
	cJSON_Delete(cr);
	dk_buf_free(&resp);
	if (!exec_id[0])
		return dk_fail(err, EPROTO, "docker: exec create answered no Id");

	int fd = -1;
	char *extra = NULL;
	size_t n_extra = 0;
	snprintf(path, sizeof(path), "/exec/%s/start", exec_id);
	if (dk_upgrade(inst->sock, path, "{\"Detach\":false,\"Tty\":false}", &fd, &status, &extra,
		       &n_extra, err) < 0)
		return -1;
	if (status != 101 && status != 200) {
		free(extra);
		close(fd);
		return dk_fail(err, EIO, "docker: exec start answered %d", status);
	}
	/* Input: a buffer is written whole (the file operations' commands
	 * read all of it before writing anything), then EOF; a descriptor is
	 * forwarded as it comes. */
	bool stdin_open = r->stdin_fd >= 0;
	if (r->has_stdin_data) {
		const char *p = r->stdin_data;
		size_t n = r->stdin_len;
		while (n) {
			ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			p += w;
			n -= (size_t)w;
		}
		shutdown(fd, SHUT_WR);
	} else if (!want_stdin) {
		shutdown(fd, SHUT_WR);
	}

	/* The stream: frames of an 8-byte header (stream, 0, 0, 0, size in
	 * big-endian) and the payload. */
	unsigned char hdr[8];
	size_t hdr_n = 0, payload_left = 0;
	int stream = 0;
	uint64_t total = 0;
	uint64_t deadline = r->timeout_ms ? now_ms() + r->timeout_ms : 0;
	int rc = -1;
	char *buf = malloc(65536);
	if (!buf) {
		dk_fail(err, ENOMEM, "out of memory");
		goto out;
	}
	size_t pending = n_extra; /* bytes of extra not yet parsed */
	size_t pending_off = 0;
	for (;;) {
		ssize_t got;
		const char *data;
		if (pending) {
			data = extra + pending_off;
			got = (ssize_t)pending;
			pending = 0;
		} else {
			struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
					       { .fd = stdin_open ? r->stdin_fd : -1, .events = POLLIN } };
			int wait = -1;
			if (deadline) {
				uint64_t t = now_ms();
				if (t >= deadline) {
					kill_and_revive(inst);
					res->timed_out = true;
					res->signal = SIGKILL;
					rc = 0;
					goto out;
				}
				wait = (int)(deadline - t);
			}
			int pr = poll(p, 2, wait);
			if (pr < 0 && errno == EINTR) {
				/* jailrun's SIGINT/SIGTERM: give up here; its close()
				 * removes the container with what runs in it. */
				dk_fail(err, EINTR, "docker: interrupted by a signal");
				goto out;
			}
			if (pr <= 0)
				continue;
			if (stdin_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
				ssize_t n = read(r->stdin_fd, buf, 65536);
				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0) {
					stdin_open = false;
					shutdown(fd, SHUT_WR); /* the command sees EOF */
				} else if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n) {
					stdin_open = false;
				}
				continue;
			}
			if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(fd, buf, 65536);
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				dk_fail(err, errno, "docker: reading the exec stream: %s", strerror(errno));
				goto out;
			}
			if (got == 0)
				break;
			data = buf;
		}
		while (got > 0) {
			if (payload_left == 0) {
				size_t take = 8 - hdr_n < (size_t)got ? 8 - hdr_n : (size_t)got;
				memcpy(hdr + hdr_n, data, take);
				hdr_n += take;
				data += take;
				got -= (ssize_t)take;
				if (hdr_n == 8) {
					stream = hdr[0];
					payload_left = (size_t)hdr[4] << 24 | (size_t)hdr[5] << 16 |
						       (size_t)hdr[6] << 8 | hdr[7];
					hdr_n = 0;
				}
				continue;
			}
			size_t take = payload_left < (size_t)got ? payload_left : (size_t)got;
			sink_write(stream == 2 ? &r->err : &r->out, data, take, &total, r->max_output,
				   &res->truncated);
			payload_left -= take;
			data += take;
			got -= (ssize_t)take;
		}
	}
	/* The stream ends a moment before the daemon records the exit, or
	 * long before it when something between (a relay closing on half-
	 * close) ended it early: wait for the exit, the time limit still
	 * holding. */
	snprintf(path, sizeof(path), "/exec/%s/json", exec_id);
	for (;;) {
		if (api(inst->sock, "GET", path, NULL, API_TIMEOUT_MS, &resp, err) < 0)
			goto out;
		cJSON *j = cJSON_Parse(resp.p);
		bool running = cJSON_IsTrue(cJSON_GetObjectItem(j, "Running"));
		const cJSON *code = cJSON_GetObjectItem(j, "ExitCode");
		if (!running && cJSON_IsNumber(code))
			res->exit_code = code->valueint;
		cJSON_Delete(j);
		if (!running)
			break;
		if (deadline && now_ms() >= deadline) {
			kill_and_revive(inst);
			res->timed_out = true;
			res->signal = SIGKILL;
			break;
		}
		struct timespec ts = { 0, 20 * 1000000L };
		if (nanosleep(&ts, NULL) < 0 && errno == EINTR) {
			dk_fail(err, EINTR, "docker: interrupted by a signal");
			goto out;
		}
	}
	if (res->exit_code < 0 && !res->timed_out) {
		dk_fail(err, EIO, "docker: the exec ended without an exit code");
		goto out;
	}
	rc = 0;
out:
	dk_buf_free(&resp);
	free(buf);
	free(extra);
	close(fd);
	return rc;
}

static int d_exec(jr_provider_instance_t *inst, const struct jr_provider_exec_args *args,
		  struct jr_provider_exec_result *result, struct jr_provider_error *err)
{
	if (!args || args->size < sizeof(struct jr_provider_exec_args) || !args->argv || !args->argv[0])
		return dk_fail(err, EINVAL, "docker: exec arguments missing");
	struct run r = { .argv = args->argv,
			 .envp = args->envp,
			 .cwd = args->cwd,
			 .stdin_fd = args->stdin_fd,
			 .timeout_ms = args->timeout_ms,
			 .max_output = args->max_output_bytes,
			 .out = { .fd = args->stdout_fd },
			 .err = { .fd = args->stderr_fd } };
	return run_exec(inst, &r, result, err);
}

/* ---- file operations -------------------------------------------------------- */

/* The errno a failed command's message means (busybox and coreutils
 * word them alike). */
static int errno_of(const char *msg)
{
	static const struct {
		const char *text;
		int code;
	} map[] = { { "No such file", ENOENT },	      { "Permission denied", EACCES },
		    { "Read-only file system", EROFS }, { "Directory not empty", ENOTEMPTY },
		    { "Not a directory", ENOTDIR },     { "Is a directory", EISDIR },
		    { "File exists", EEXIST },	       { "No space left", ENOSPC },
		    { "File too large", EFBIG },       { "Operation not permitted", EPERM } };
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (msg && strstr(msg, map[i].text))
			return map[i].code;
	return EIO;
}

/* Runs `sh -c SCRIPT sh ARGS...` in the container with a clean
 * environment; stdout to *out (up to limit), 0 or -1 with err from the
 * command's stderr when it fails.  *exit_code for callers that read it. */
static int fileop(jr_provider_instance_t *inst, const char *what, const char *script,
		  const char *const *args, const void *in, size_t in_len, bool has_in, struct dk_buf *out,
		  size_t limit, int *exit_code, struct jr_provider_error *err)
{
	const char *argv[12] = { "/bin/sh", "-c", script, "sh" };
	size_t n = 4;
	for (size_t i = 0; args && args[i] && n < 11; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	static char *const env[] = { FILEOP_PATH, NULL };
	struct dk_buf errbuf = { 0 };
	struct run r = { .cargv = argv,
			 .envp = env,
			 .stdin_fd = -1,
			 .stdin_data = in,
			 .stdin_len = in_len,
			 .has_stdin_data = has_in,
			 .out = { .fd = -1, .buf = out, .limit = limit },
			 .err = { .fd = -1, .buf = &errbuf, .limit = 512 } };
	struct jr_provider_exec_result res;
	int rc = run_exec(inst, &r, &res, err);
	if (rc == 0) {
		if (exit_code)
			*exit_code = res.exit_code;
		else if (res.exit_code != 0) {
			while (errbuf.len && (errbuf.p[errbuf.len - 1] == '\n' || errbuf.p[errbuf.len - 1] == ' '))
				errbuf.p[--errbuf.len] = '\0';
			const char *msg = errbuf.len ? errbuf.p : "failed";
			rc = dk_fail(err, errno_of(msg), "docker: %s: %s", what, msg);
		}
	}
	dk_buf_free(&errbuf);
	return rc;
}

static int d_read_file(jr_provider_instance_t *inst, const char *path, uint64_t max_bytes, void **data,
		       size_t *len, struct jr_provider_error *err)
{
	*data = NULL;
	*len = 0;
	struct dk_buf out = { 0 };
	const char *args[] = { path, NULL };
	/* One byte past the limit tells "too large" from "exactly the limit". */
	size_t limit = max_bytes && max_bytes < SIZE_MAX ? (size_t)max_bytes + 1 : 0;
	if (fileop(inst, "read", "cat -- \"$1\"", args, NULL, 0, false, &out, limit, NULL, err) < 0) {
		dk_buf_free(&out);
		return -1;
	}
	if (max_bytes && out.len > max_bytes) {
		dk_buf_free(&out);
		return dk_fail(err, EFBIG, "docker: %s is larger than %llu bytes", path,
			       (unsigned long long)max_bytes);
	}
	if (!out.p && dk_buf_add(&out, "", 0) < 0)
		return dk_fail(err, ENOMEM, "out of memory");
	*data = out.p;
	*len = out.len;
	return 0;
}

static int d_write_file(jr_provider_instance_t *inst, const char *path, const void *data, size_t len,
			uint32_t mode, struct jr_provider_error *err)
{
	char m[16];
	snprintf(m, sizeof(m), "%o", (unsigned)(mode & 07777));
	const char *args[] = { path, m, NULL };
	/* The data goes in on stdin, byte for byte. */
	return fileop(inst, "write", "cat > \"$1\" && chmod \"$2\" -- \"$1\"", args, data ? data : "",
		      len, true, NULL, 0, NULL, err);
}

static int d_stat(jr_provider_instance_t *inst, const char *path, struct jr_provider_stat *st,
		  struct jr_provider_error *err)
{
	struct dk_buf out = { 0 };
	const char *args[] = { path, NULL };
	if (fileop(inst, "stat", "stat -c '%F|%s|%a|%Y' -- \"$1\"", args, NULL, 0, false, &out, 4096,
		   NULL, err) < 0) {
		dk_buf_free(&out);
		return -1;
	}
	char type[64] = "";
	unsigned long long size = 0;
	unsigned mode = 0;
	long long mtime = 0;
	if (!out.p || sscanf(out.p, "%63[^|]|%llu|%o|%lld", type, &size, &mode, &mtime) != 4) {
		dk_buf_free(&out);
		return dk_fail(err, EIO, "docker: stat: unexpected output");
	}
	dk_buf_free(&out);
	st->type = strstr(type, "regular") ? 'f' : !strcmp(type, "directory") ? 'd'
		 : strstr(type, "symbolic link") ? 'l' : 'o';
	st->size = size;
	st->mode = mode;
	st->mtime = mtime;
	return 0;
}

static int d_readdir(jr_provider_instance_t *inst, const char *path, char ***names, size_t *n,
		     struct jr_provider_error *err)
{
	*names = NULL;
	*n = 0;
	struct dk_buf out = { 0 };
	const char *args[] = { path, NULL };
	/* NUL-separated, so that any name comes back whole. */
	static const char script[] =
		"cd -- \"$1\" || exit 1; for f in * .*; do case $f in .|..) continue;; esac; "
		"[ -e \"$f\" ] || [ -L \"$f\" ] || continue; printf '%s\\0' \"$f\"; done";
	if (fileop(inst, "readdir", script, args, NULL, 0, false, &out, 0, NULL, err) < 0) {
		dk_buf_free(&out);
		return -1;
	}
	size_t count = 0;
	for (size_t i = 0; i < out.len; i++)
		count += out.p[i] == '\0';
	char **v = calloc(count + 1, sizeof(*v));
	if (!v) {
		dk_buf_free(&out);
		return dk_fail(err, ENOMEM, "out of memory");
	}
	size_t k = 0;
	for (size_t i = 0; i < out.len && k < count; i += strlen(out.p + i) + 1) {
		v[k] = strdup(out.p + i);
		if (!v[k]) {
			for (size_t j = 0; j < k; j++)
				free(v[j]);
			free(v);
			dk_buf_free(&out);
			return dk_fail(err, ENOMEM, "out of memory");
		}
		k++;
	}
	dk_buf_free(&out);
	*names = v;
	*n = k;
	return 0;
}

static int d_exists(jr_provider_instance_t *inst, const char *path, bool *exists,
		    struct jr_provider_error *err)
{
	const char *args[] = { path, NULL };
	int code = -1;
	if (fileop(inst, "exists", "[ -e \"$1\" ] || [ -L \"$1\" ]", args, NULL, 0, false, NULL, 0, &code,
		   err) < 0)
		return -1;
	if (code != 0 && code != 1)
		return dk_fail(err, EIO, "docker: exists: the test command answered %d", code);
	*exists = code == 0;
	return 0;
}

static int d_mkdir(jr_provider_instance_t *inst, const char *path, uint32_t mode, bool parents,
		   struct jr_provider_error *err)
{
	char m[16];
	snprintf(m, sizeof(m), "%o", (unsigned)(mode & 07777));
	const char *args[] = { path, m, NULL };
	return fileop(inst, "mkdir", parents ? "mkdir -p -m \"$2\" -- \"$1\"" : "mkdir -m \"$2\" -- \"$1\"",
		      args, NULL, 0, false, NULL, 0, NULL, err);
}

static int d_rm(jr_provider_instance_t *inst, const char *path, bool recursive, struct jr_provider_error *err)
{
	const char *args[] = { path, NULL };
	/* Not recursive: a file, or an empty directory (rmdir). */
	static const char one[] =
		"if [ -d \"$1\" ] && [ ! -L \"$1\" ]; then rmdir -- \"$1\"; else rm -- \"$1\"; fi";
	static const char all[] = "[ -e \"$1\" ] || [ -L \"$1\" ] || { echo \"$1: No such file or "
				  "directory\" >&2; exit 1; }; rm -rf -- \"$1\"";
	return fileop(inst, "rm", recursive ? all : one, args, NULL, 0, false, NULL, 0, NULL, err);
}

/* ---- close and gc ------------------------------------------------------------- */

static int d_close(jr_provider_instance_t *inst, struct jr_provider_error *err)
{
	if (!inst)
		return 0;
	int rc = 0;
	if (inst->id[0]) {
		if (inst->preserve) {
			/* The caller asked to keep it: say which it is. */
			char line[160];
			snprintf(line, sizeof(line), "docker: preserved container %s (%.12s)", inst->name, inst->id);
			if (inst->notice)
				inst->notice(inst->notice_userdata, line);
			else
				fprintf(stderr, "jailrun: %s\n", line);
		} else {
			rc = remove_container(inst->sock, inst->id, err);
			if (rc == 0) {
				logf_(inst->log, inst->log_userdata, "docker: removed %s", inst->name);
				remove_placeholders(inst->placeholders, inst->n_placeholders);
			}
		}
	}
	free_placeholders(inst->placeholders, inst->n_placeholders);
	free(inst);
	return rc;
}

static bool owner_alive(const cJSON *labels)
{
	const char *pid = cJSON_GetStringValue(cJSON_GetObjectItem(labels, "jailrun.pid"));
	const char *start = cJSON_GetStringValue(cJSON_GetObjectItem(labels, "jailrun.start"));
	if (!pid)
		return false;
	long p = strtol(pid, NULL, 10);
	if (p <= 0)
		return false;
	unsigned long long st = start_time((pid_t)p);
	if (st == 0)
		return false; /* no such process (here) */
	return !start || strtoull(start, NULL, 10) == st;
}

static int d_gc(const char *const *config, jr_provider_log_fn log, void *ud, struct jr_provider_error *err)
{
	if (check_config(config, err) < 0)
		return -1;
	char sock[108];
	if (socket_path(config, sock, sizeof(sock), err) < 0)
		return -1;
	struct dk_buf body = { 0 };
	char filt[256], path[400];
	dk_query_escape("{\"label\":[\"jailrun=1\"]}", filt, sizeof(filt));
	snprintf(path, sizeof(path), "/containers/json?all=1&filters=%s", filt);
	if (api(sock, "GET", path, NULL, API_TIMEOUT_MS, &body, err) < 0) {
		dk_buf_free(&body);
		return -1;
	}
	cJSON *list = cJSON_Parse(body.p);
	dk_buf_free(&body);
	if (!cJSON_IsArray(list)) {
		cJSON_Delete(list);
		return dk_fail(err, EPROTO, "docker: the container list does not parse");
	}
	char me[32];
	snprintf(me, sizeof(me), "%u", (unsigned)getuid());
	int rc = 0, removed = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, list) {
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(c, "Id"));
		const cJSON *labels = cJSON_GetObjectItem(c, "Labels");
		const char *uid = cJSON_GetStringValue(cJSON_GetObjectItem(labels, "jailrun.uid"));
		const char *keep = cJSON_GetStringValue(cJSON_GetObjectItem(labels, "jailrun.preserve"));
		if (!id || (keep && !strcmp(keep, "1")))
			continue; /* --preserve asked to keep it */
		/* Another user's runs are theirs to collect (root collects all). */
		if (getuid() != 0 && (!uid || strcmp(uid, me)))
			continue;
		if (owner_alive(labels))
			continue;
		if (remove_container(sock, id, err) < 0) {
			rc = -1;
			continue;
		}
		removed++;
		logf_(log, ud, "docker: removed container %.12s of a run that is gone", id);
	}
	cJSON_Delete(list);
	logf_(log, ud, "docker: gc removed %d container(s)", removed);
	return rc;
}

static const struct jr_provider table = {
	.abi_version = JR_PROVIDER_ABI_VERSION,
	.name = "docker",
	.description = "Docker Engine containers over the API socket",
	.open = d_open,
	.exec = d_exec,
	.read_file = d_read_file,
	.write_file = d_write_file,
	.stat = d_stat,
	.readdir = d_readdir,
	.exists = d_exists,
	.mkdir = d_mkdir,
	.rm = d_rm,
	.close = d_close,
	.gc = d_gc,
};

const struct jr_provider *jailrun_provider_v1(void)
{
	return &table;
}
