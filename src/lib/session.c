/* A session's init: the jail stays up and its pid 1 serves requests.
 *
 * Each client connection (accepted by the supervisor outside, which checks
 * the peer's uid, and handed over on the control channel) carries one
 * request as a frame (frame.c):
 *   exec  {argv, env, cwd, digest} + the client's stdin, stdout, stderr:
 *         forked here, already inside every namespace, confined exactly as a
 *         one-shot command, in a process session of its own; the answer
 *         {exitCode|signal|execErrno} comes when it exits.  A client that
 *         hangs up first cancels it: its process session is killed.
 *   file  {method, params, digest}: a worker forked and confined the same
 *         way runs the file operation (fileops.c) and answers itself.
 *   info  {}: answered by init.
 *   stop  {}: every process of the jail is killed, init exits.
 * A request whose digest is not the session's policy is refused. */
#include "config.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

#define MAX_CLIENTS 256

struct client {
	int fd;
	pid_t pid;     /* the exec request's command, 0 before */
	int fail_fd;   /* its execve-failure pipe */
	bool cancelled;
};

struct server {
	const struct jr_init_ctx *ctx;
	int signal_fd, ruleset;
	struct client clients[MAX_CLIENTS];
	size_t n;
	unsigned running; /* exec requests whose command has not exited */
};

static void tell_active(struct server *s)
{
	struct jr_msg msg = { .type = JR_MSG_ACTIVE, .wait_status = (int32_t)s->running };
	jr_msg_send(s->ctx->ctl, &msg, -1, NULL);
}

static void reply_error(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply_error(int fd, const char *fmt, ...)
{
	char text[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	cJSON *o = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddNumberToObject(e, "code", -32603);
	cJSON_AddStringToObject(e, "message", text);
	jr_frame_send(fd, o, NULL, 0, NULL);
	cJSON_Delete(o);
}

static void drop_client(struct server *s, size_t i)
{
	close(s->clients[i].fd);
	if (s->clients[i].fail_fd >= 0)
		close(s->clients[i].fail_fd);
	s->clients[i] = s->clients[--s->n];
}

/* Every process whose session is sid: the request's whole tree, daemons
 * included, unless one left the session on purpose. */
static void kill_session(pid_t sid)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[64], buf[512];
		int pid = atoi(e->d_name);
		if (pid <= 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		const char *p = strrchr(buf, ')');
		int ppid, pgrp, session;
		char state;
		if (p && sscanf(p + 1, " %c %d %d %d", &state, &ppid, &pgrp, &session) == 4 &&
		    session == sid)
			kill(pid, SIGKILL);
	}
	closedir(d);
}

static char **string_array(const cJSON *a)
{
	int n = cJSON_GetArraySize(a);
	char **v = calloc((size_t)n + 1, sizeof(char *));
	if (!v)
		return NULL;
	for (int i = 0; i < n; i++) {
		const cJSON *s = cJSON_GetArrayItem(a, i);
		if (!cJSON_IsString(s)) {
			free(v);
			return NULL;
		}
		v[i] = s->valuestring;
	}
	return v;
}

/* The request's command: never returns. */
__attribute__((noreturn)) static void run_request(struct server *s, const int fds[3], char **argv,
						  char **envp, const char *cwd, int fail_fd)
{
	jr_error_t *err = NULL;
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	setsid();
	for (int fd = 0; fd < 3; fd++)
		if (dup2(fds[fd], fd) < 0)
			_exit(JR_EXIT_FAILURE);
	int keep[] = { fail_fd };
	if (chdir(cwd) < 0)
		jr_fail(&err, errno, "chdir %s", cwd);
	else if (jr_confine(s->ctx->plan, s->ruleset, keep, 1, -1, 0, &err) == 0 &&
		 jr_apply_rlimits(s->ctx->plan, &err) == 0) {
		execvpe(argv[0], argv, envp);
		int e = errno;
		ssize_t ignored = write(fail_fd, &e, sizeof(e));
		(void)ignored;
		_exit(e == ENOENT ? JR_EXIT_NOTFOUND : JR_EXIT_NOEXEC);
	}
	/* Setup failed: say so on the command's stderr, which is the client's. */
	dprintf(2, "jailrun: %s\n", err ? err->message : "setup failed");
	_exit(JR_EXIT_FAILURE);
}

static void start_exec(struct server *s, size_t i, const cJSON *req, int fds[3], size_t n_fds)
{
	struct client *c = &s->clients[i];
	char **argv = string_array(cJSON_GetObjectItem(req, "argv"));
	char **envp = string_array(cJSON_GetObjectItem(req, "env"));
	const cJSON *cwd = cJSON_GetObjectItem(req, "cwd");
	const char *dir = cJSON_IsString(cwd) ? cwd->valuestring : s->ctx->plan->workspace;
	int pipe_fds[2] = { -1, -1 };
	if (n_fds != 3 || !argv || !argv[0] || !envp || pipe2(pipe_fds, O_CLOEXEC) < 0) {
		reply_error(c->fd, "exec: malformed request");
		goto out;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(pipe_fds[0]);
		run_request(s, fds, argv, envp, dir, pipe_fds[1]);
	}
	if (pid < 0) {
		reply_error(c->fd, "exec: fork: %s", strerror(errno));
		goto out;
	}
	c->pid = pid;
	c->fail_fd = pipe_fds[0];
	pipe_fds[0] = -1;
	s->running++;
	tell_active(s);
out:
	for (int k = 0; k < 2; k++)
		if (pipe_fds[k] >= 0)
			close(pipe_fds[k]);
	free(argv);
	free(envp);
}

/* A worker for one file operation: confined, answers the client itself. */
static void start_fileop(struct server *s, size_t i, const cJSON *req)
{
	const cJSON *method = cJSON_GetObjectItem(req, "method");
	const cJSON *params = cJSON_GetObjectItem(req, "params");
	if (!cJSON_IsString(method)) {
		reply_error(s->clients[i].fd, "file: malformed request");
		return;
	}
	pid_t pid = fork();
	if (pid != 0) {
		if (pid < 0)
			reply_error(s->clients[i].fd, "file: fork: %s", strerror(errno));
		return;
	}
	jr_error_t *err = NULL;
	int fd = s->clients[i].fd;
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	int keep[] = { fd };
	/* jailrun's own filter refuses openat2 (its mode is out of a filter's
	 * sight); the worker needs it for RESOLVE_BENEATH and makes no
	 * setuid file (modes are masked to 0777 in fileops.c). */
	if (chdir(s->ctx->plan->workspace) < 0 ||
	    jr_confine(s->ctx->plan, s->ruleset, keep, 1, -1, JR_CONFINE_NO_BUILTIN_FILTER, &err) < 0) {
		reply_error(fd, "file: confining the worker: %s", err ? err->message : strerror(errno));
		_exit(1);
	}
	umask(022);
	cJSON *result = jr_fileop(s->ctx->plan->workspace, method->valuestring, params);
	if (!result)
		_exit(1);
	jr_frame_send(fd, result, NULL, 0, NULL);
	_exit(0);
}

static void send_info(struct server *s, int fd)
{
	const struct jr_session_info *info = s->ctx->session;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "version", jr_version());
	cJSON_AddStringToObject(o, "session", info->name);
	cJSON *p = cJSON_AddObjectToObject(o, "policy");
	cJSON_AddStringToObject(p, "name", info->policy_name);
	cJSON_AddStringToObject(p, "sha256", info->digest);
	cJSON_AddStringToObject(o, "workspace", s->ctx->plan->workspace);
	cJSON_AddNumberToObject(o, "startedMs", (double)info->started_ms);
	jr_frame_send(fd, o, NULL, 0, NULL);
	cJSON_Delete(o);
}

__attribute__((noreturn)) static void stop_all(struct server *s)
{
	(void)s;
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	_exit(0);
}

/* One request frame from client i.  Returns whether the client stays. */
static bool handle_request(struct server *s, size_t i)
{
	struct client *c = &s->clients[i];
	cJSON *req = NULL;
	int fds[JR_FRAME_MAX_FDS];
	size_t n_fds = JR_FRAME_MAX_FDS;
	if (jr_frame_recv(c->fd, &req, fds, &n_fds, NULL) <= 0) {
		for (size_t k = 0; k < n_fds; k++)
			close(fds[k]);
		return false;
	}
	const cJSON *op = cJSON_GetObjectItem(req, "op");
	const cJSON *digest = cJSON_GetObjectItem(req, "digest");
	bool stays = false;
	if (!cJSON_IsString(op)) {
		reply_error(c->fd, "malformed request");
	} else if (!strcmp(op->valuestring, "info")) {
		send_info(s, c->fd);
	} else if (!strcmp(op->valuestring, "stop")) {
		stop_all(s);
	} else if (!cJSON_IsString(digest) || strcmp(digest->valuestring, s->ctx->session->digest)) {
		reply_error(c->fd, "session %s runs policy %s (sha256 %.12s...), not the one this request was made under",
			    s->ctx->session->name, s->ctx->session->policy_name, s->ctx->session->digest);
	} else if (!strcmp(op->valuestring, "exec")) {
		start_exec(s, i, req, fds, n_fds);
		stays = c->pid > 0;
	} else if (!strcmp(op->valuestring, "file")) {
		start_fileop(s, i, req);
	} else {
		reply_error(c->fd, "unknown request '%s'", op->valuestring);
	}
	for (size_t k = 0; k < n_fds; k++)
		close(fds[k]);
	cJSON_Delete(req);
	return stays;
}

static void report_exit(struct server *s, size_t i, int status)
{
	struct client *c = &s->clients[i];
	int exec_errno = 0;
	if (read(c->fail_fd, &exec_errno, sizeof(exec_errno)) != sizeof(exec_errno))
		exec_errno = 0;
	cJSON *o = cJSON_CreateObject();
	if (WIFSIGNALED(status))
		cJSON_AddNumberToObject(o, "signal", WTERMSIG(status));
	else
		cJSON_AddNumberToObject(o, "exitCode", WEXITSTATUS(status));
	if (exec_errno)
		cJSON_AddNumberToObject(o, "execErrno", exec_errno);
	jr_frame_send(c->fd, o, NULL, 0, NULL);
	cJSON_Delete(o);
}

static void reap(struct server *s)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (size_t i = 0; i < s->n; i++) {
			if (s->clients[i].pid != pid)
				continue;
			report_exit(s, i, status);
			drop_client(s, i);
			s->running--;
			tell_active(s);
			break;
		}
	}
}

static void add_client(struct server *s, int fd)
{
	if (s->n == MAX_CLIENTS) {
		reply_error(fd, "too many requests at once");
		close(fd);
		return;
	}
	/* A client that stalls mid-frame must not stall the session. */
	struct timeval tv = { .tv_sec = 5 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	s->clients[s->n++] = (struct client){ .fd = fd, .fail_fd = -1 };
}

__attribute__((noreturn)) void jr_session_serve(const struct jr_init_ctx *ctx, int signal_fd,
						int ruleset)
{
	static struct server s;
	s.ctx = ctx;
	s.signal_fd = signal_fd;
	s.ruleset = ruleset;
	/* Commands' stdio is the clients'; init holds none of the caller's. */
	jr_stdio_to_devnull();
	jr_msg_send(ctx->ctl, &(struct jr_msg){ .type = JR_MSG_READY }, -1, NULL);
	for (;;) {
		struct pollfd pfd[MAX_CLIENTS + 2];
		pfd[0] = (struct pollfd){ .fd = signal_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = ctx->ctl, .events = POLLIN };
		for (size_t i = 0; i < s.n; i++)
			pfd[i + 2] = (struct pollfd){ .fd = s.clients[i].cancelled ? -1 : s.clients[i].fd,
						      .events = s.clients[i].pid ? POLLRDHUP : POLLIN };
		if (poll(pfd, s.n + 2, -1) < 0)
			continue;
		if (pfd[0].revents) {
			struct signalfd_siginfo si;
			if (read(signal_fd, &si, sizeof(si)) < 0 && errno != EINTR)
				stop_all(&s);
			reap(&s);
			continue; /* the client list may have changed */
		}
		if (pfd[1].revents) {
			struct jr_msg msg;
			int fd = -1;
			int r = jr_msg_recv(ctx->ctl, &msg, &fd, NULL);
			if (r <= 0 || msg.type == JR_MSG_TERMINATE)
				stop_all(&s); /* the supervisor is gone, or stops the session */
			if (msg.type == JR_MSG_CLIENT && fd >= 0)
				add_client(&s, fd);
			else if (fd >= 0)
				close(fd);
			continue;
		}
		for (size_t i = s.n; i-- > 0;) {
			if (!pfd[i + 2].revents)
				continue;
			if (s.clients[i].pid) {
				/* The client hung up before its command ended: cancel. */
				kill_session(s.clients[i].pid);
				s.clients[i].cancelled = true;
				continue;
			}
			if (!handle_request(&s, i))
				drop_client(&s, i);
		}
	}
}
