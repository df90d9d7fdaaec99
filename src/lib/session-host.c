/* Sessions from the outside: where they live, starting one (its
 * supervisor daemonizes), connecting, stopping, listing, and running a
 * command in one.
 *
 * A session's state is a directory of the caller's alone:
 * $XDG_RUNTIME_DIR/jailrun/NAME when XDG_RUNTIME_DIR is the caller's,
 * else /tmp/jailrun-UID/NAME; created 0700, and refused when it exists
 * with another owner or wider modes (someone else's directory could hold
 * a socket that impersonates the session).  It holds ctl.sock, where the
 * supervisor accepts clients of the same uid only, and info.json. */
#include "config.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"

extern char **environ;

static bool name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64 || name[0] == '.')
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '_' || *c == '-'))
			return false;
	return true;
}

/* mkdir 0700, or check that what is there is ours alone. */
static int private_dir(const char *path, jr_error_t **err)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return jr_fail(err, errno, "session directory %s", path);
	struct stat st;
	if (lstat(path, &st) < 0)
		return jr_fail(err, errno, "session directory %s", path);
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
		return jr_fail(err, EPERM,
			       "refusing the session directory %s: not a directory of uid %u with mode 0700",
			       path, (unsigned)getuid());
	return 0;
}

static int sessions_base(char *out, size_t size, bool create, jr_error_t **err)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	if (runtime && runtime[0] == '/' && stat(runtime, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == getuid()) {
		snprintf(out, size, "%s/jailrun", runtime);
	} else {
		snprintf(out, size, "/tmp/jailrun-%u", (unsigned)getuid());
	}
	if (!create) {
		if (lstat(out, &st) < 0)
			return jr_fail(err, errno, "%s", out);
		if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
			return jr_fail(err, EPERM, "refusing the session directory %s: not a directory of uid %u with mode 0700",
				       out, (unsigned)getuid());
		return 0;
	}
	return private_dir(out, err);
}

static int session_dir(const char *name, char *out, size_t size, bool create, jr_error_t **err)
{
	if (!name_valid(name))
		return jr_fail(err, EINVAL,
			       "session name '%s': use 1-64 of A-Z a-z 0-9 . _ -, not starting with '.'", name);
	char base[PATH_MAX - 80];
	if (sessions_base(base, sizeof(base), create, err) < 0)
		return -1;
	snprintf(out, size, "%s/%s", base, name);
	if (!create) {
		struct stat st;
		if (lstat(out, &st) < 0)
			return jr_fail(err, errno, "%s", out);
		if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
			return jr_fail(err, EPERM, "refusing the session directory %s", out);
		return 0;
	}
	return private_dir(out, err);
}

static int socket_address(const char *dir, struct sockaddr_un *sa, jr_error_t **err)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if ((size_t)snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/ctl.sock", dir) >= sizeof(sa->sun_path))
		return jr_fail(err, ENAMETOOLONG, "session socket path %s/ctl.sock is too long", dir);
	return 0;
}

static int connect_dir(const char *dir, int *fd, jr_error_t **err)
{
	struct sockaddr_un sa;
	if (socket_address(dir, &sa, err) < 0)
		return -1;
	_cleanup_close_ int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return jr_fail(err, errno, "socket");
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return jr_fail(err, errno, "connecting to %s", sa.sun_path);
	*fd = jr_steal_fd(&s);
	return 0;
}

int jr_session_connect(const char *name, int *fd, jr_error_t **err)
{
	char dir[PATH_MAX];
	if (session_dir(name, dir, sizeof(dir), false, err) < 0)
		return -1;
	return connect_dir(dir, fd, err);
}

static void write_info(const char *dir, const struct jr_session_info *info, const jr_plan_t *plan)
{
	char path[PATH_MAX + 16], started[40];
	snprintf(path, sizeof(path), "%s/info.json", dir);
	time_t secs = (time_t)(info->started_ms / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", info->name);
	cJSON_AddNumberToObject(o, "pid", getpid());
	cJSON_AddStringToObject(o, "policy", info->policy_name);
	cJSON_AddStringToObject(o, "sha256", info->digest);
	cJSON_AddStringToObject(o, "startedAt", started);
	cJSON_AddStringToObject(o, "workspace", plan->workspace);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0 && text) {
		ssize_t ignored = write(fd, text, strlen(text));
		(void)ignored;
	}
	if (fd >= 0)
		close(fd);
	free(text);
}

static void remove_state(const char *dir)
{
	char path[PATH_MAX + 400];
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/info.json", dir);
	unlink(path);
	rmdir(dir);
}

/* The session's supervisor, in the process that will stay. */
__attribute__((noreturn)) static void run_session(const jr_plan_t *plan, struct jr_session_info *info,
						  const char *dir, int listen_fd, int ready_fd)
{
	jr_stdio_to_devnull();
	signal(SIGHUP, SIG_IGN);
	write_info(dir, info, plan);
	jr_error_t *err = NULL;
	int r = jr_session_supervise(plan, info, listen_fd, ready_fd, NULL, &err);
	jr_error_free(err);
	remove_state(dir);
	_exit(r < 0 ? 1 : 0);
}

int jr_session_start(const jr_policy_t *policy, const jr_plan_t *plan, const char *name,
		     const struct jr_session_options *opts, jr_error_t **err)
{
	if (plan->landlock_only)
		return jr_fail(err, 0, "sessions need isolation namespaces");
	/* Both are per command, and a session's commands do not get them
	 * (serve's exec has timeoutMs and maxOutputBytes): refused, never a
	 * time limit that would end the whole session instead. */
	if (plan->time_ms || plan->output_limited)
		return jr_fail(err, 0,
			       "session %s: limit time and limit output are not enforced for a session's commands in this version; use them on one-shot runs, or serve's timeoutMs and maxOutputBytes",
			       name);
	char dir[PATH_MAX];
	if (session_dir(name, dir, sizeof(dir), true, err) < 0)
		return -1;
	/* One start at a time: two racing would unlink each other's socket. */
	_cleanup_close_ int lock = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lock < 0 || flock(lock, LOCK_EX) < 0)
		return jr_fail(err, errno, "locking %s", dir);
	int probe = -1;
	jr_error_t *ignored = NULL;
	if (connect_dir(dir, &probe, &ignored) == 0) {
		close(probe);
		return jr_fail(err, EEXIST, "session %s is already running", name);
	}
	jr_error_free(ignored);

	struct jr_session_info info = { .idle_s = opts ? opts->idle_s : 0 };
	snprintf(info.name, sizeof(info.name), "%s", name);
	jr_policy_digest(policy, info.digest);
	snprintf(info.policy_name, sizeof(info.policy_name), "%s",
		 jr_policy_name(policy) ? jr_policy_name(policy) : "");
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	info.started_ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;

	struct sockaddr_un sa;
	if (socket_address(dir, &sa, err) < 0)
		return -1;
	unlink(sa.sun_path); /* stale: nobody answered on it */
	_cleanup_close_ int listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		return jr_fail(err, errno, "socket");
	mode_t old = umask(0177);
	int b = bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (b < 0 || listen(listen_fd, 64) < 0)
		return jr_fail(err, errno, "session socket %s", sa.sun_path);

	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		return jr_fail(err, errno, "pipe");
	bool private_session = opts && opts->private_session;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		close(ready[0]);
		if (private_session) {
			/* Lives and dies with its client (serve, mcp): SIGTERM,
			 * so it still stops the jail and removes its state. */
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() != parent)
				_exit(1);
			run_session(plan, &info, dir, listen_fd, ready[1]);
		}
		setsid();
		if (fork() != 0)
			_exit(0);
		run_session(plan, &info, dir, listen_fd, ready[1]);
	}
	close(ready[1]);
	if (pid < 0) {
		close(ready[0]);
		return jr_fail(err, errno, "fork");
	}
	if (!private_session)
		waitpid(pid, NULL, 0);
	char answer[600];
	size_t got = 0;
	ssize_t n;
	while (got < sizeof(answer) - 1 &&
	       ((n = read(ready[0], answer + got, sizeof(answer) - 1 - got)) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			got += (size_t)n;
	close(ready[0]);
	answer[got] = '\0';
	if (strcmp(answer, "ok"))
		return jr_fail(err, 0, "session %s: %s", name, got ? answer : "its supervisor died while starting");
	return 0;
}

int jr_session_stop(const char *name, jr_error_t **err)
{
	char dir[PATH_MAX];
	int fd;
	if (session_dir(name, dir, sizeof(dir), false, err) < 0 || connect_dir(dir, &fd, err) < 0)
		return -1;
	/* The supervisor's pid, to wait until it has cleaned up. */
	long pid = 0;
	char path[PATH_MAX + 16], buf[2048];
	snprintf(path, sizeof(path), "%s/info.json", dir);
	int info = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = info < 0 ? -1 : read(info, buf, sizeof(buf) - 1);
	if (info >= 0)
		close(info);
	if (n > 0) {
		buf[n] = '\0';
		cJSON *o = cJSON_Parse(buf);
		const cJSON *p = cJSON_GetObjectItem(o, "pid");
		pid = cJSON_IsNumber(p) ? (long)p->valuedouble : 0;
		cJSON_Delete(o);
	}
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "stop");
	int r = jr_frame_send(fd, req, NULL, 0, err);
	cJSON_Delete(req);
	if (r == 0) {
		char c;
		while (read(fd, &c, 1) > 0 || errno == EINTR)
			; /* init closes the connection as it exits */
	}
	close(fd);
	for (int i = 0; r == 0 && pid > 0 && i < 500 && kill((pid_t)pid, 0) == 0; i++) {
		/* A private session's supervisor is our child: reap it, or it
		 * would stay a zombie that kill() still finds. */
		waitpid((pid_t)pid, NULL, WNOHANG);
		usleep(10000);
	}
	return r;
}

int jr_session_list(jr_line_fn fn, void *userdata, jr_error_t **err)
{
	char base[PATH_MAX - 80];
	jr_error_t *none = NULL;
	if (sessions_base(base, sizeof(base), false, &none) < 0) {
		int e = none->errnum;
		jr_error_free(none);
		return e == ENOENT ? 0 : jr_fail(err, e, "%s", base);
	}
	DIR *d = opendir(base);
	if (!d)
		return jr_fail(err, errno, "%s", base);
	struct dirent *e;
	while ((e = readdir(d))) {
		char dir[PATH_MAX + 300], path[PATH_MAX + 320], buf[4096];
		if (e->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name);
		int fd;
		jr_error_t *ignored = NULL;
		if (connect_dir(dir, &fd, &ignored) < 0) {
			/* Nobody answers: what a killed supervisor left. */
			if (ignored->errnum == ECONNREFUSED || ignored->errnum == ENOENT)
				remove_state(dir);
			jr_error_free(ignored);
			continue;
		}
		close(fd);
		snprintf(path, sizeof(path), "%s/info.json", dir);
		int info = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		ssize_t n = info < 0 ? -1 : read(info, buf, sizeof(buf) - 1);
		if (info >= 0)
			close(info);
		buf[n > 0 ? n : 0] = '\0';
		cJSON *o = cJSON_Parse(buf);
		const cJSON *pid = cJSON_GetObjectItem(o, "pid"), *policy = cJSON_GetObjectItem(o, "policy"),
			    *started = cJSON_GetObjectItem(o, "startedAt"),
			    *ws = cJSON_GetObjectItem(o, "workspace");
		jr_emitf(fn, userdata, "%s  %ld  %s  %s  %s", e->d_name,
			 cJSON_IsNumber(pid) ? (long)pid->valuedouble : 0L,
			 cJSON_IsString(policy) ? policy->valuestring : "?",
			 cJSON_IsString(started) ? started->valuestring : "?",
			 cJSON_IsString(ws) ? ws->valuestring : "?");
		cJSON_Delete(o);
	}
	closedir(d);
	return 0;
}

/* ---- running a command in a session ---------------------------------- */

int jr_session_exec_send(int fd, const char *digest, char *const argv[], char *const envp[],
			 const char *cwd, const int stdio[3], jr_error_t **err)
{
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "exec");
	cJSON_AddStringToObject(req, "digest", digest);
	cJSON *a = cJSON_AddArrayToObject(req, "argv"), *e = cJSON_AddArrayToObject(req, "env");
	for (size_t i = 0; argv[i]; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]));
	for (size_t i = 0; envp && envp[i]; i++)
		cJSON_AddItemToArray(e, cJSON_CreateString(envp[i]));
	if (cwd)
		cJSON_AddStringToObject(req, "cwd", cwd);
	int r = jr_frame_send(fd, req, stdio, 3, err);
	cJSON_Delete(req);
	return r;
}

int jr_session_exec_result(int fd, struct jr_result *res, jr_error_t **err)
{
	cJSON *answer = NULL;
	int r = jr_frame_recv(fd, &answer, NULL, NULL, err);
	if (r == 0)
		return jr_fail(err, ECONNRESET, "session: the jail ended before the command did");
	if (r < 0)
		return -1;
	const cJSON *error = cJSON_GetObjectItem(answer, "error");
	const cJSON *code = cJSON_GetObjectItem(answer, "exitCode"), *sig = cJSON_GetObjectItem(answer, "signal"),
		    *ee = cJSON_GetObjectItem(answer, "execErrno");
	if (error) {
		const cJSON *m = cJSON_GetObjectItem(error, "message");
		r = jr_fail(err, 0, "%s", cJSON_IsString(m) ? m->valuestring : "session: request failed");
	} else {
		res->exit_code = cJSON_IsNumber(code) ? code->valueint : -1;
		res->signal = cJSON_IsNumber(sig) ? sig->valueint : 0;
		res->exec_errno = cJSON_IsNumber(ee) ? ee->valueint : 0;
		res->status = res->signal ? 128 + res->signal : res->exit_code;
		r = 0;
	}
	cJSON_Delete(answer);
	return r;
}

/* A terminal among the caller's 0-2 is not handed over (the jail would
 * hold the caller's terminal): a pipe stands in, copied here. */
struct relay {
	int from, to;
};

static void copy_once(struct relay *r)
{
	char buf[16384];
	ssize_t n = read(r->from, buf, sizeof(buf));
	if (n <= 0) {
		close(r->from);
		if (r->to > 2)
			close(r->to);
		r->from = r->to = -1;
		return;
	}
	for (ssize_t done = 0; done < n;) {
		ssize_t w = write(r->to, buf + done, (size_t)(n - done));
		if (w <= 0)
			break;
		done += w;
	}
}

int jr_session_exec(const char *name, const jr_policy_t *policy, const jr_plan_t *plan,
		    char *const argv[], const char *cwd, struct jr_result *res, jr_error_t **err)
{
	memset(res, 0, sizeof(*res));
	res->memory_peak = res->pids_peak = res->output_bytes = -1;
	char digest[65];
	jr_policy_digest(policy, digest);
	int fd;
	if (jr_session_connect(name, &fd, err) < 0)
		return -1;
	int stdio[3] = { 0, 1, 2 }, theirs[3] = { -1, -1, -1 };
	struct relay relays[3];
	size_t n_relays = 0;
	int r = 0;
	for (int i = 0; i < 3 && r == 0; i++) {
		if (!isatty(i))
			continue;
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0) {
			r = jr_fail(err, errno, "pipe");
			break;
		}
		stdio[i] = theirs[i] = i == 0 ? p[0] : p[1];
		relays[n_relays++] = i == 0 ? (struct relay){ 0, p[1] } : (struct relay){ p[0], i };
	}
	char **envp = NULL, **scrubbed = NULL, *home = NULL;
	if (r == 0 && !plan &&
	    (jr_home_of(environ, &home, err) < 0 ||
	     jr_env_build(policy, environ, home, &envp, &scrubbed, err) < 0))
		r = -1;
	if (r == 0)
		r = jr_session_exec_send(fd, digest, argv, plan ? plan->envp : envp, cwd, stdio, err);
	jr_strv_free(envp);
	jr_strv_free(scrubbed);
	free(home);
	for (int i = 0; i < 3; i++)
		if (theirs[i] >= 0)
			close(theirs[i]);
	uint64_t t0 = jr_now_us();
	while (r == 0) {
		struct pollfd pfd[4] = { { .fd = fd, .events = POLLIN } };
		for (size_t i = 0; i < n_relays; i++)
			pfd[i + 1] = (struct pollfd){ .fd = relays[i].from, .events = POLLIN };
		if (poll(pfd, n_relays + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = jr_fail(err, errno, "poll");
			break;
		}
		for (size_t i = 0; i < n_relays; i++)
			if (pfd[i + 1].revents && relays[i].from >= 0)
				copy_once(&relays[i]);
		if (pfd[0].revents) {
			/* Output still in the pipes comes first. */
			for (size_t i = 0; i < n_relays; i++)
				while (relays[i].from >= 0 && relays[i].from != 0 &&
				       poll(&(struct pollfd){ .fd = relays[i].from, .events = POLLIN }, 1, 50) > 0)
					copy_once(&relays[i]);
			r = jr_session_exec_result(fd, res, err) < 0 ? -1 : 1;
		}
	}
	res->wall_us = jr_now_us() - t0;
	for (size_t i = 0; i < n_relays; i++)
		if (relays[i].from >= 0 && relays[i].from > 2)
			close(relays[i].from);
		else if (relays[i].to > 2)
			close(relays[i].to);
	close(fd);
	return r < 0 ? -1 : 0;
}
