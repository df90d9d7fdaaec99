/* The agent API on stdio: JSON-RPC 2.0 (jailrun serve) and the Model
 * Context Protocol (jailrun mcp), one JSON object a line, against a
 * session.
 *
 * One poll loop: request lines are read as they come, so a long exec
 * never keeps a cancel or another call waiting.  exec runs as a session
 * request whose stdout and stderr are pipes read here (up to
 * maxOutputBytes each, the rest drained and dropped); a timeout or a
 * cancel hangs up the request's connection, on which the session kills
 * the request's process session.  File methods are one round trip each
 * to a confined worker in the jail (fileops.c). */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"
#include "jailrun-provider.h"
#include "values.h"

#define MAX_LINE (16u << 20)
#define MAX_EXECS 64
#define DEFAULT_MAX_OUTPUT (1u << 20)
#define DRAIN_MS 200
#define FILE_CALL_TIMEOUT_S 60
/* Through a provider, timeoutMs is the provider's to enforce (it can stop
 * the remote command); past it by this much the local child is killed. */
#define PROVIDER_GRACE_MS 1000
/* A provider child told to stop (SIGTERM: its exec call returns EINTR and
 * can stop the remote command) is killed with its process group after this. */
#define PROVIDER_STOP_MS 2000
#define PROVIDER_MAX_READ (10u << 20)
#define PROVIDER_READ_CAP (64u << 20)
#define PROVIDER_MAX_ENTRIES 10000

enum { E_PARSE = -32700, E_REQUEST = -32600, E_METHOD = -32601, E_PARAMS = -32602,
       E_INTERNAL = -32603, E_UNSUPPORTED = -32000, E_FILE = -32001, E_GUARD = -32002,
       E_CANCELLED = -32800 };

struct stream {
	int fd;
	char *buf;
	size_t len, max;
	bool truncated;
};

struct exec {
	cJSON *id;          /* the request's id (owned) */
	const char *tool;   /* MCP: the tool's name (bash), else NULL */
	int conn;           /* the session request, or the provider child's
			       result pipe; -1 once hung up */
	pid_t pid;          /* provider: the child calling exec, until reaped */
	uint64_t kill_at_us; /* provider: hung up; SIGKILL for the child then */
	char *error;        /* provider: exec failed (the message) */
	struct stream out, err;
	int in_fd;          /* the command's stdin, written from stdin_data */
	char *stdin_data;
	size_t stdin_len, stdin_off;
	uint64_t started_us, deadline_us; /* 0: none */
	uint64_t drain_until_us;         /* finished: pipes read until then */
	bool finished, timed_out, cancelled;
	struct jr_result result;
};

struct server {
	enum jr_rpc_dialect dialect;
	const jr_policy_t *policy;
	const jr_plan_t *plan;
	const char *session;
	char digest[65];
	int in_fd, out_fd;
	char *line;
	size_t line_len, line_cap;
	bool discarding; /* an oversize line: skip to its end */
	bool eof, shutdown;
	struct exec *execs[MAX_EXECS];
	size_t n_execs;
	char **read_paths; /* guard read-before-write: what readFile has read */
	size_t n_read;
	/* Provider mode (session NULL): the open instance. */
	jr_provider_conn_t *prov;
	sigset_t poll_mask; /* provider mode: the signal mask while polling */
	uint64_t started_ms;
};

static volatile sig_atomic_t rpc_stop;

/* ---- output ------------------------------------------------------------- */

static void send_json(struct server *s, cJSON *o)
{
	char *text = cJSON_PrintUnformatted(o);
	if (!text)
		return;
	size_t len = strlen(text);
	text[len] = '\n'; /* the terminator is overwritten: write len + 1 */
	for (size_t done = 0; done < len + 1;) {
		ssize_t w = write(s->out_fd, text + done, len + 1 - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->eof = true; /* nobody reads our answers any more */
			break;
		}
		done += (size_t)w;
	}
	free(text);
}

static void respond(struct server *s, const cJSON *id, cJSON *result)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "result", result ? result : cJSON_CreateObject());
	send_json(s, o);
	cJSON_Delete(o);
}

static void respond_error(struct server *s, const cJSON *id, int code, const char *errno_name,
			  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void respond_error(struct server *s, const cJSON *id, int code, const char *errno_name,
			  const char *fmt, ...)
{
	char message[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
	cJSON *e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	if (errno_name)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(e, "data"), "errno", errno_name);
	send_json(s, o);
	cJSON_Delete(o);
}

/* MCP: a tool's answer is text, isError when the tool failed. */
static void respond_tool(struct server *s, const cJSON *id, const char *text, bool is_error)
{
	cJSON *r = cJSON_CreateObject();
	cJSON *content = cJSON_AddArrayToObject(r, "content");
	cJSON *item = cJSON_CreateObject();
	cJSON_AddStringToObject(item, "type", "text");
	cJSON_AddStringToObject(item, "text", text);
	cJSON_AddItemToArray(content, item);
	cJSON_AddBoolToObject(r, "isError", is_error);
	respond(s, id, r);
}

/* ---- file methods through a provider -------------------------------------- */

static cJSON *answer_error(int code, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static cJSON *answer_error(int code, int errnum, const char *fmt, ...)
{
	char message[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	cJSON *o = cJSON_CreateObject();
	cJSON *e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	const char *name = errnum ? jr_errno_name(errnum) : NULL;
	if (name)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(e, "data"), "errno", name);
	return o;
}

/* The provider's failure as the worker would answer it (redacted). */
static cJSON *provider_file_error(struct server *s, const char *method, const char *path,
				  struct jr_provider_error *pe)
{
	char what[600];
	snprintf(what, sizeof(what), "%s %s", method, path);
	jr_error_t *err = NULL;
	/* The errno goes in data.errno, not again at the message's end. */
	struct jr_provider_error quiet = *pe;
	quiet.message[sizeof(quiet.message) - 1] = '\0';
	if (quiet.message[0])
		quiet.code = 0;
	jr_provider_conn_fail(s->prov, &err, what, &quiet);
	cJSON *o = answer_error(E_FILE, pe->code, "%s", err ? err->message : what);
	jr_error_free(err);
	return o;
}

static const char *param_str(const cJSON *params, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static uint64_t param_u64(const cJSON *params, const char *key, uint64_t def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, key);
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 9e15 ? (uint64_t)v->valuedouble : def;
}

static void add_stat(cJSON *o, const struct jr_provider_stat *st)
{
	cJSON_AddBoolToObject(o, "isDirectory", st->type == 'd');
	cJSON_AddBoolToObject(o, "isFile", st->type == 'f');
	cJSON_AddBoolToObject(o, "isSymlink", st->type == 'l');
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int provider_read(struct server *s, const char *path, const cJSON *params, cJSON *r,
			 struct jr_provider_error *pe)
{
	const struct jr_provider *t = jr_provider_conn_table(s->prov);
	jr_provider_instance_t *inst = jr_provider_conn_instance(s->prov);
	const char *enc = param_str(params, "encoding");
	bool b64 = enc && !strcmp(enc, "base64");
	uint64_t max = param_u64(params, "maxBytes", PROVIDER_MAX_READ);
	void *data = NULL;
	size_t len = 0;
	/* A provider refuses a file over its max_bytes (EFBIG) where the
	 * worker cuts it: a file up to PROVIDER_READ_CAP is read whole and
	 * cut here. */
	if (t->read_file(inst, path, max ? max : 1, &data, &len, pe) < 0) {
		if (pe->code != EFBIG || max >= PROVIDER_READ_CAP)
			return -1;
		memset(pe, 0, sizeof(*pe));
		if (t->read_file(inst, path, PROVIDER_READ_CAP, &data, &len, pe) < 0)
			return -1;
	}
	size_t size = len;
	bool truncated = len > max;
	if (truncated)
		len = (size_t)max;
	char *text = b64 ? jr_base64_encode(data, len) : jr_utf8_sanitize(data, len);
	free(data);
	if (!text) {
		pe->code = ENOMEM;
		return -1;
	}
	cJSON_AddStringToObject(r, b64 ? "contentBase64" : "content", text);
	free(text);
	cJSON_AddNumberToObject(r, "size", (double)size);
	cJSON_AddBoolToObject(r, "truncated", truncated);
	return 0;
}

static int provider_write(struct server *s, const char *path, const cJSON *params, cJSON *r,
			  struct jr_provider_error *pe)
{
	const struct jr_provider *t = jr_provider_conn_table(s->prov);
	jr_provider_instance_t *inst = jr_provider_conn_instance(s->prov);
	const char *text = param_str(params, "content"), *b64 = param_str(params, "contentBase64");
	_cleanup_free_ unsigned char *bytes = NULL;
	size_t len = text ? strlen(text) : 0;
	if (b64 && jr_base64_decode(b64, &bytes, &len) < 0) {
		pe->code = EINVAL;
		snprintf(pe->message, sizeof(pe->message), "contentBase64 is not base64");
		return -1;
	}
	uint32_t mode = (uint32_t)param_u64(params, "mode", 0644) & 0777;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(params, "createDirs"))) {
		_cleanup_free_ char *parent = strdup(path);
		char *slash = parent ? strrchr(parent, '/') : NULL;
		if (slash && slash != parent) {
			*slash = '\0';
			if (t->mkdir(inst, parent, 0755, true, pe) < 0)
				return -1;
		}
	}
	if (t->write_file(inst, path, text ? (const void *)text : bytes, len, mode, pe) < 0)
		return -1;
	cJSON_AddNumberToObject(r, "bytesWritten", (double)len);
	return 0;
}

static int provider_readdir(struct server *s, const char *path, cJSON *r, struct jr_provider_error *pe)
{
	const struct jr_provider *t = jr_provider_conn_table(s->prov);
	jr_provider_instance_t *inst = jr_provider_conn_instance(s->prov);
	char **names = NULL;
	size_t n = 0;
	if (t->readdir(inst, path, &names, &n, pe) < 0)
		return -1;
	if (n)
		qsort(names, n, sizeof(*names), by_string);
	cJSON *arr = cJSON_AddArrayToObject(r, "entries");
	size_t plen = strlen(path);
	bool slash = plen && path[plen - 1] == '/';
	for (size_t i = 0; i < n; i++) {
		if (i < PROVIDER_MAX_ENTRIES && names[i] && strcmp(names[i], ".") && strcmp(names[i], "..")) {
			/* The provider lists names only: a stat each gives the types. */
			cJSON *entry = cJSON_CreateObject();
			char *full = NULL;
			struct jr_provider_stat st = { .type = 'o' };
			struct jr_provider_error ignored = { 0 };
			if (asprintf(&full, "%s%s%s", path, slash ? "" : "/", names[i]) < 0)
				full = NULL;
			if (!full || t->stat(inst, full, &st, &ignored) < 0)
				st.type = 'o';
			free(full);
			cJSON_AddStringToObject(entry, "name", names[i]);
			add_stat(entry, &st);
			cJSON_AddItemToArray(arr, entry);
		}
		free(names[i]);
	}
	free(names);
	return 0;
}

/* A file method through the provider's table, answered as the worker in
 * the jail answers (fileops.c): {...} or {"error": {...}}. */
static cJSON *provider_file_call(struct server *s, const char *method, const cJSON *params)
{
	const struct jr_provider *t = jr_provider_conn_table(s->prov);
	jr_provider_instance_t *inst = jr_provider_conn_instance(s->prov);
	const char *path = param_str(params, "path");
	if (!strcmp(method, "glob") || !strcmp(method, "grep"))
		return answer_error(E_UNSUPPORTED, 0,
				    "%s: not available through provider %s (jailrun-provider(7) has no such method); run %s with exec instead",
				    method, t->name, !strcmp(method, "glob") ? "find" : "grep");
	if (!path || !*path)
		return answer_error(E_PARAMS, 0, "%s: path must be a non-empty string", method);
	const char *enc = param_str(params, "encoding");
	if (!strcmp(method, "readFile") && enc && strcmp(enc, "base64") && strcmp(enc, "utf8"))
		return answer_error(E_PARAMS, 0, "readFile: encoding must be \"utf8\" or \"base64\"");
	if (!strcmp(method, "writeFile") && !param_str(params, "content") == !param_str(params, "contentBase64"))
		return answer_error(E_PARAMS, 0, "writeFile: give exactly one of content and contentBase64");
	struct jr_provider_error pe = { 0 };
	cJSON *r = cJSON_CreateObject();
	int rc = -1;
	if (!r)
		return NULL;
	if (!strcmp(method, "readFile")) {
		rc = provider_read(s, path, params, r, &pe);
	} else if (!strcmp(method, "writeFile")) {
		rc = provider_write(s, path, params, r, &pe);
	} else if (!strcmp(method, "stat")) {
		struct jr_provider_stat st = { 0 };
		if ((rc = t->stat(inst, path, &st, &pe)) == 0) {
			cJSON_AddNumberToObject(r, "size", (double)st.size);
			add_stat(r, &st);
			cJSON_AddNumberToObject(r, "mode", st.mode & 07777);
			cJSON_AddNumberToObject(r, "mtimeMs", (double)st.mtime * 1000.0);
		}
	} else if (!strcmp(method, "exists")) {
		bool found = false;
		if ((rc = t->exists(inst, path, &found, &pe)) == 0)
			cJSON_AddBoolToObject(r, "exists", found);
	} else if (!strcmp(method, "readdir")) {
		rc = provider_readdir(s, path, r, &pe);
	} else if (!strcmp(method, "mkdir")) {
		rc = t->mkdir(inst, path, 0755, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(params, "recursive")), &pe);
	} else if (!strcmp(method, "rm")) {
		rc = t->rm(inst, path, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(params, "recursive")), &pe);
		if (rc < 0 && pe.code == ENOENT && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(params, "force")))
			rc = 0;
	} else {
		cJSON_Delete(r);
		return answer_error(E_METHOD, 0, "method not found: %s", method);
	}
	if (rc == 0)
		return r;
	cJSON_Delete(r);
	return provider_file_error(s, method, path, &pe);
}

/* ---- file methods: one round trip to a worker in the jail --------------- */

/* The worker's answer ({...} or {"error": {...}}), or NULL with *err. */
static cJSON *file_call(struct server *s, const char *method, const cJSON *params, jr_error_t **err)
{
	if (s->prov) {
		cJSON *answer = provider_file_call(s, method, params);
		if (!answer)
			jr_fail_oom(err);
		return answer;
	}
	int fd;
	if (jr_session_connect(s->session, &fd, err) < 0)
		return NULL;
	cJSON *req = cJSON_CreateObject(), *answer = NULL;
	cJSON_AddStringToObject(req, "op", "file");
	cJSON_AddStringToObject(req, "digest", s->digest);
	cJSON_AddStringToObject(req, "method", method);
	cJSON_AddItemToObject(req, "params", params ? cJSON_Duplicate(params, 1) : cJSON_CreateObject());
	/* A worker that never answers (a walk of a huge tree) must not
	 * freeze the server: past FILE_CALL_TIMEOUT_S the call fails. */
	struct timeval tv = { .tv_sec = FILE_CALL_TIMEOUT_S };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int r = jr_frame_send(fd, req, NULL, 0, err);
	cJSON_Delete(req);
	if (r == 0 && jr_frame_recv(fd, &answer, NULL, NULL, err) == 0)
		jr_fail(err, ECONNRESET, "%s: the session ended", method);
	close(fd);
	return answer;
}

static const char *error_message(const cJSON *answer, int *code, const char **errno_name)
{
	const cJSON *e = cJSON_GetObjectItem(answer, "error");
	if (!e)
		return NULL;
	const cJSON *c = cJSON_GetObjectItem(e, "code"), *m = cJSON_GetObjectItem(e, "message");
	const cJSON *en = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "data"), "errno");
	*code = cJSON_IsNumber(c) ? c->valueint : E_INTERNAL;
	*errno_name = cJSON_IsString(en) ? en->valuestring : NULL;
	return cJSON_IsString(m) ? m->valuestring : "request failed";
}

/* Paths the guard compares: as given, without "./" and trailing '/'. */
static char *guard_key(const jr_plan_t *plan, const char *path)
{
	char *abs = NULL;
	if (path[0] == '/')
		abs = jr_path_normalize(path);
	else if (asprintf(&abs, "%s/%s", plan->workspace, path) >= 0) {
		char *n = jr_path_normalize(abs);
		free(abs);
		abs = n;
	}
	return abs;
}

static bool was_read(const struct server *s, const char *key)
{
	for (size_t i = 0; i < s->n_read; i++)
		if (!strcmp(s->read_paths[i], key))
			return true;
	return false;
}

static void remember_read(struct server *s, const char *path)
{
	char *key = guard_key(s->plan, path);
	if (!key || was_read(s, key)) {
		free(key);
		return;
	}
	char **v = realloc(s->read_paths, (s->n_read + 1) * sizeof(*v));
	if (!v) {
		free(key);
		return;
	}
	s->read_paths = v;
	s->read_paths[s->n_read++] = key;
}

/* guard read-before-write: true when writing path must be refused. */
static bool guard_refuses(struct server *s, const char *path)
{
	if (!s->policy->guard_read_before_write || !path)
		return false;
	_cleanup_free_ char *key = guard_key(s->plan, path);
	if (key && was_read(s, key))
		return false;
	cJSON *params = cJSON_CreateObject();
	cJSON_AddStringToObject(params, "path", path);
	jr_error_t *err = NULL;
	cJSON *answer = file_call(s, "exists", params, &err);
	cJSON_Delete(params);
	jr_error_free(err);
	/* Refused unless the jail said plainly that there is no such file. */
	const cJSON *exists = cJSON_GetObjectItem(answer, "exists");
	bool refuse = !cJSON_IsFalse(exists);
	cJSON_Delete(answer);
	return refuse;
}

static void file_method(struct server *s, const cJSON *id, const char *method, const cJSON *params)
{
	const cJSON *path = cJSON_GetObjectItem(params, "path");
	const char *p = cJSON_IsString(path) ? path->valuestring : NULL;
	if (!strcmp(method, "writeFile") && guard_refuses(s, p))
		return respond_error(s, id, E_GUARD, NULL,
				     "writeFile %s: refused: the file was not read first (guard read-before-write)", p);
	jr_error_t *err = NULL;
	cJSON *answer = file_call(s, method, params, &err);
	if (!answer) {
		respond_error(s, id, E_INTERNAL, NULL, "%s: %s", method, err ? err->message : "failed");
		jr_error_free(err);
		return;
	}
	int code;
	const char *errno_name;
	const char *message = error_message(answer, &code, &errno_name);
	if (message) {
		respond_error(s, id, code, errno_name, "%s", message);
	} else {
		if (!strcmp(method, "readFile") && p)
			remember_read(s, p);
		respond(s, id, cJSON_Duplicate(answer, 1));
	}
	cJSON_Delete(answer);
}

/* ---- exec --------------------------------------------------------------- */

/* Reaps a provider child that was hung up: it had until kill_at_us to
 * end by itself (waited for here when grace), then its process group is
 * killed.  What it left in its group goes too. */
static void reap_child(struct exec *x, bool grace)
{
	if (x->pid <= 0)
		return;
	pid_t r;
	while ((r = waitpid(x->pid, NULL, WNOHANG)) == 0 && grace && jr_now_us() < x->kill_at_us)
		usleep(20000);
	kill(-x->pid, SIGKILL);
	if (r == 0)
		while (waitpid(x->pid, NULL, 0) < 0 && errno == EINTR)
			;
	x->pid = 0;
}

static void exec_free(struct exec *x)
{
	reap_child(x, true);
	free(x->error);
	if (x->conn >= 0)
		close(x->conn);
	if (x->out.fd >= 0)
		close(x->out.fd);
	if (x->err.fd >= 0)
		close(x->err.fd);
	if (x->in_fd >= 0)
		close(x->in_fd);
	free(x->out.buf);
	free(x->err.buf);
	free(x->stdin_data);
	cJSON_Delete(x->id);
	free(x);
}

/* The session's environment plus the request's, scrubbed by the policy. */
static char **exec_env(struct server *s, const cJSON *env)
{
	size_t n = 0, extra = (size_t)cJSON_GetArraySize(env);
	while (s->plan->envp[n])
		n++;
	char **v = calloc(n + extra + 1, sizeof(char *));
	if (!v)
		return NULL;
	size_t k = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, env) {
		if (!cJSON_IsString(e) || !e->string || !jr_env_name_valid(e->string) ||
		    jr_env_verdict(s->policy, e->string, strlen(e->string)) != JR_ENV_PASS)
			continue;
		if (asprintf(&v[k], "%s=%s", e->string, e->valuestring) < 0)
			break;
		k++;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strcspn(s->plan->envp[i], "=");
		bool overridden = false;
		for (size_t j = 0; j < k && !overridden; j++)
			overridden = !strncmp(v[j], s->plan->envp[i], len + 1);
		if (!overridden && !(v[k++] = strdup(s->plan->envp[i])))
			break;
	}
	return v;
}

static int make_pipe(int ends[2], jr_error_t **err)
{
	if (pipe2(ends, O_CLOEXEC) < 0)
		return jr_fail(err, errno, "pipe");
	return 0;
}

/* What the provider child sends back on its result pipe (one write,
 * under PIPE_BUF: atomic). */
struct provider_exec_msg {
	int rc;
	struct jr_provider_exec_result result;
	struct jr_provider_error error;
};

_Static_assert(sizeof(struct provider_exec_msg) <= PIPE_BUF, "one atomic write");

static void on_child_stop(int sig)
{
	(void)sig;
}

/* The provider's exec is synchronous: it runs in a child (its own process
 * group, killed whole on a timeout or a cancel) writing the command's
 * output to the pipes the loop reads, and its result to x->conn. */
static int provider_spawn(struct server *s, struct exec *x, char **argv, char **envp, const char *cwd,
			  const int stdio[3], const int ours[3], uint64_t timeout_ms, jr_error_t **err)
{
	int res[2];
	if (make_pipe(res, err) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(res[0]);
		close(res[1]);
		return jr_fail(err, e, "exec: fork");
	}
	if (pid == 0) {
		setpgid(0, 0);
		struct sigaction dfl = { .sa_handler = SIG_DFL }, stop = { .sa_handler = on_child_stop };
		sigemptyset(&dfl.sa_mask);
		sigemptyset(&stop.sa_mask);
		sigaction(SIGTERM, &stop, NULL); /* not SA_RESTART: exec's waits end (EINTR) */
		sigaction(SIGINT, &dfl, NULL);
		sigaction(SIGHUP, &dfl, NULL);
		sigprocmask(SIG_SETMASK, &s->poll_mask, NULL);
		/* Nothing of the server's: not the other requests' pipes (a stdin
		 * would never see its end), nor the protocol's stdin and stdout. */
		for (size_t k = 0; k < s->n_execs; k++) {
			struct exec *o = s->execs[k];
			int fds[4] = { o->conn, o->out.fd, o->err.fd, o->in_fd };
			for (int j = 0; j < 4; j++)
				if (fds[j] >= 0)
					close(fds[j]);
		}
		for (int j = 0; j < 3; j++)
			if (ours[j] >= 0)
				close(ours[j]);
		close(res[0]);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null >= 0 && null != s->in_fd)
			dup2(null, s->in_fd);
		if (s->out_fd != STDERR_FILENO)
			dup2(STDERR_FILENO, s->out_fd);
		struct jr_provider_exec_args ea = {
			.size = sizeof(ea), .argv = argv, .envp = envp, .cwd = cwd,
			.stdin_fd = stdio[0], .stdout_fd = stdio[1], .stderr_fd = stdio[2],
			.timeout_ms = timeout_ms, .max_output_bytes = 0, /* cut here, per stream */
		};
		struct provider_exec_msg m = { .result = { .exit_code = -1 } };
		m.rc = jr_provider_conn_table(s->prov)->exec(jr_provider_conn_instance(s->prov), &ea,
							      &m.result, &m.error);
		ssize_t w;
		while ((w = write(res[1], &m, sizeof(m))) < 0 && errno == EINTR)
			;
		_exit(w == (ssize_t)sizeof(m) ? 0 : 1);
	}
	setpgid(pid, pid); /* the child does it too: whichever comes first */
	close(res[1]);
	x->conn = res[0];
	x->pid = pid;
	return 0;
}

/* The provider child's result: the command's end, or why exec failed. */
static void provider_result(struct server *s, struct exec *x)
{
	struct provider_exec_msg m;
	ssize_t n;
	while ((n = read(x->conn, &m, sizeof(m))) < 0 && errno == EINTR)
		;
	while (waitpid(x->pid, NULL, 0) < 0 && errno == EINTR)
		;
	x->pid = 0;
	if (n != (ssize_t)sizeof(m)) {
		x->error = strdup("exec: the process calling the provider died");
		return;
	}
	if (m.rc < 0) {
		jr_error_t *err = NULL;
		m.error.message[sizeof(m.error.message) - 1] = '\0';
		jr_provider_conn_fail(s->prov, &err, "exec", &m.error);
		x->error = strdup(err ? err->message : "exec failed");
		jr_error_free(err);
		return;
	}
	x->result.exit_code = m.result.exit_code;
	x->result.signal = m.result.signal;
	x->timed_out = m.result.timed_out;
	x->out.truncated |= m.result.truncated;
}

static int start_exec(struct server *s, struct exec *x, const cJSON *params, jr_error_t **err)
{
	const cJSON *command = cJSON_GetObjectItem(params, "command"), *argv = cJSON_GetObjectItem(params, "argv");
	const cJSON *cwd = cJSON_GetObjectItem(params, "cwd"), *in = cJSON_GetObjectItem(params, "stdin");
	const cJSON *timeout = cJSON_GetObjectItem(params, "timeoutMs"),
		    *max = cJSON_GetObjectItem(params, "maxOutputBytes");
	char *sh[] = { "/bin/sh", "-c", cJSON_IsString(command) ? command->valuestring : NULL, NULL };
	char **args = NULL;
	if (cJSON_IsString(command) == cJSON_IsArray(argv) || (cJSON_IsArray(argv) && !cJSON_GetArraySize(argv)))
		return jr_fail(err, EINVAL, "exec: give exactly one of command (a string) and argv (a non-empty array of strings)");
	if (cJSON_IsArray(argv)) {
		size_t n = (size_t)cJSON_GetArraySize(argv);
		args = calloc(n + 1, sizeof(char *));
		if (!args)
			return jr_fail_oom(err);
		for (size_t i = 0; i < n; i++) {
			const cJSON *a = cJSON_GetArrayItem(argv, (int)i);
			if (!cJSON_IsString(a)) {
				free(args);
				return jr_fail(err, EINVAL, "exec: argv must hold strings only");
			}
			args[i] = a->valuestring;
		}
	}
	if ((cwd && !cJSON_IsString(cwd)) || (in && !cJSON_IsString(in)) ||
	    (timeout && !cJSON_IsNumber(timeout)) || (max && !cJSON_IsNumber(max))) {
		free(args);
		return jr_fail(err, EINVAL, "exec: cwd and stdin must be strings, timeoutMs and maxOutputBytes numbers");
	}
	_cleanup_free_ char *dir = NULL;
	if (cwd && cwd->valuestring[0] != '/' && asprintf(&dir, "%s/%s", s->plan->workspace, cwd->valuestring) < 0)
		dir = NULL;
	x->out.max = x->err.max = max && max->valuedouble >= 0 ? (size_t)max->valuedouble : DEFAULT_MAX_OUTPUT;
	x->out.buf = malloc(x->out.max + 1);
	x->err.buf = malloc(x->err.max + 1);
	char **envp = exec_env(s, cJSON_GetObjectItem(params, "env"));
	int o[2] = { -1, -1 }, e[2] = { -1, -1 }, i[2] = { -1, -1 };
	int r = -1;
	if (!x->out.buf || !x->err.buf || !envp) {
		jr_fail_oom(err);
	} else if (make_pipe(o, err) == 0 && make_pipe(e, err) == 0 && (!in || make_pipe(i, err) == 0)) {
		int null = in ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC);
		int stdio[3] = { in ? i[0] : null, o[1], e[1] }, ours[3] = { o[0], e[0], i[1] };
		const char *where = cwd ? (dir ? dir : cwd->valuestring) : NULL;
		uint64_t timeout_ms = !timeout || !(timeout->valuedouble > 0) ? 0
				    : timeout->valuedouble < 1e15	 ? (uint64_t)timeout->valuedouble
									 : (uint64_t)1e15;
		if (s->prov)
			r = provider_spawn(s, x, args ? args : sh, envp, where, stdio, ours, timeout_ms, err);
		else if (jr_session_connect(s->session, &x->conn, err) == 0)
			r = jr_session_exec_send(x->conn, s->digest, args ? args : sh, envp, where, stdio, err);
		if (null >= 0)
			close(null);
	}
	x->out.fd = o[0];
	x->err.fd = e[0];
	x->in_fd = i[1];
	for (int *fd = (int[]){ o[1], e[1], i[0] }, k = 0; k < 3; k++)
		if (fd[k] >= 0)
			close(fd[k]);
	if (x->in_fd >= 0) {
		x->stdin_data = strdup(in->valuestring);
		x->stdin_len = x->stdin_data ? strlen(x->stdin_data) : 0;
		fcntl(x->in_fd, F_SETFL, O_NONBLOCK);
	}
	fcntl(x->out.fd, F_SETFL, O_NONBLOCK);
	fcntl(x->err.fd, F_SETFL, O_NONBLOCK);
	x->started_us = jr_now_us();
	if (timeout && timeout->valuedouble > 0)
		x->deadline_us = x->started_us + (uint64_t)(timeout->valuedouble * 1000) +
				 (s->prov ? PROVIDER_GRACE_MS * 1000u : 0);
	jr_strv_free(envp);
	free(args);
	return r;
}

static void read_stream(struct stream *st)
{
	char scratch[65536];
	for (;;) {
		size_t room = st->max - st->len;
		char *into = room ? st->buf + st->len : scratch;
		ssize_t n = read(st->fd, into, room ? room : sizeof(scratch));
		if (n > 0) {
			if (room)
				st->len += (size_t)n;
			else
				st->truncated = true;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			close(st->fd);
			st->fd = -1;
		}
		return;
	}
}

static const char *signal_name(int sig, char *buf, size_t size)
{
	const char *abbrev = sigabbrev_np(sig);
	snprintf(buf, size, "SIG%s", abbrev ? abbrev : "UNKNOWN");
	return buf;
}

static void finish_exec(struct server *s, struct exec *x)
{
	_cleanup_free_ char *out = jr_utf8_sanitize(x->out.buf, x->out.len);
	_cleanup_free_ char *errs = jr_utf8_sanitize(x->err.buf, x->err.len);
	char sig[32];
	bool killed = x->timed_out || x->cancelled;
	int signal = killed ? SIGKILL : x->result.signal;
	if (x->cancelled)
		return respond_error(s, x->id, E_CANCELLED, NULL, "cancelled");
	if (x->error && !x->timed_out)
		return x->tool ? respond_tool(s, x->id, x->error, true)
			       : respond_error(s, x->id, E_INTERNAL, NULL, "%s", x->error);
	if (!out || !errs)
		return respond_error(s, x->id, E_INTERNAL, NULL, "exec: out of memory");
	if (x->tool) {
		/* MCP bash: stdout, stderr, and how it ended when not plainly. */
		char tail[128] = "";
		if (x->timed_out)
			snprintf(tail, sizeof(tail), "\n[timed out: killed]");
		else if (signal)
			snprintf(tail, sizeof(tail), "\n[killed by %s]", signal_name(signal, sig, sizeof(sig)));
		else if (x->result.exit_code)
			snprintf(tail, sizeof(tail), "\n[exit code %d]", x->result.exit_code);
		_cleanup_free_ char *text = NULL;
		if (asprintf(&text, "%s%s%s%s%s", out, *errs && *out && out[strlen(out) - 1] != '\n' ? "\n" : "",
			     errs, x->out.truncated || x->err.truncated ? "\n[output truncated]" : "", tail) < 0)
			return respond_error(s, x->id, E_INTERNAL, NULL, "exec: out of memory");
		return respond_tool(s, x->id, text, false);
	}
	cJSON *r = cJSON_CreateObject();
	if (killed || x->result.signal)
		cJSON_AddNullToObject(r, "exitCode");
	else
		cJSON_AddNumberToObject(r, "exitCode", x->result.exit_code);
	if (signal)
		cJSON_AddStringToObject(r, "signal", signal_name(signal, sig, sizeof(sig)));
	else
		cJSON_AddNullToObject(r, "signal");
	cJSON_AddStringToObject(r, "stdout", out);
	cJSON_AddStringToObject(r, "stderr", errs);
	cJSON_AddNumberToObject(r, "durationMs", (double)(jr_now_us() - x->started_us) / 1000.0);
	cJSON_AddBoolToObject(r, "truncated", x->out.truncated || x->err.truncated);
	cJSON_AddBoolToObject(r, "timedOut", x->timed_out);
	respond(s, x->id, r);
}

/* Hangs up the request: the session kills its process session. */
static void hang_up(struct exec *x, uint64_t now)
{
	if (x->pid > 0 && !x->kill_at_us) {
		/* The provider's child and what it started: its exec call gets
		 * EINTR, to stop the command where it runs, then SIGKILL. */
		kill(-x->pid, SIGTERM);
		x->kill_at_us = jr_now_us() + PROVIDER_STOP_MS * 1000u;
	}
	if (x->conn >= 0)
		close(x->conn);
	x->conn = -1;
	x->finished = true;
	x->drain_until_us = now + DRAIN_MS * 1000;
}

static void exec_method(struct server *s, const cJSON *id, const cJSON *params, const char *tool)
{
	if (s->n_execs == MAX_EXECS)
		return respond_error(s, id, E_INTERNAL, NULL, "exec: %d requests already running", MAX_EXECS);
	struct exec *x = calloc(1, sizeof(*x));
	if (!x)
		return respond_error(s, id, E_INTERNAL, NULL, "exec: out of memory");
	x->conn = x->out.fd = x->err.fd = x->in_fd = -1;
	x->tool = tool;
	x->id = cJSON_Duplicate(id, 1);
	jr_error_t *err = NULL;
	if (start_exec(s, x, params, &err) < 0) {
		if (tool)
			respond_tool(s, id, err ? err->message : "exec failed", true);
		else
			respond_error(s, id, err && err->errnum == EINVAL ? E_PARAMS : E_INTERNAL, NULL, "%s",
				      err ? err->message : "exec failed");
		jr_error_free(err);
		exec_free(x);
		return;
	}
	s->execs[s->n_execs++] = x;
}

static void cancel(struct server *s, const cJSON *target)
{
	for (size_t i = 0; i < s->n_execs; i++) {
		struct exec *x = s->execs[i];
		if (!x->finished && target && cJSON_Compare(x->id, target, 1)) {
			x->cancelled = true;
			hang_up(x, jr_now_us());
		}
	}
}

/* ---- MCP ---------------------------------------------------------------- */

static const char *const mcp_versions[] = { "2025-06-18", "2025-03-26", "2024-11-05", NULL };

static cJSON *schema(const char *const *props, const char *const *required)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", "object");
	cJSON *p = cJSON_AddObjectToObject(o, "properties");
	for (size_t i = 0; props[i]; i += 3) {
		cJSON *prop = cJSON_AddObjectToObject(p, props[i]);
		cJSON_AddStringToObject(prop, "type", props[i + 1]);
		cJSON_AddStringToObject(prop, "description", props[i + 2]);
	}
	cJSON *r = cJSON_AddArrayToObject(o, "required");
	for (size_t i = 0; required[i]; i++)
		cJSON_AddItemToArray(r, cJSON_CreateString(required[i]));
	cJSON_AddFalseToObject(o, "additionalProperties");
	return o;
}

static void add_tool(cJSON *tools, const char *name, const char *description,
		     const char *const *props, const char *const *required)
{
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "name", name);
	cJSON_AddStringToObject(t, "description", description);
	cJSON_AddItemToObject(t, "inputSchema", schema(props, required));
	cJSON_AddItemToArray(tools, t);
}

static void mcp_tools_list(struct server *s, const cJSON *id)
{
	cJSON *r = cJSON_CreateObject(), *tools = cJSON_AddArrayToObject(r, "tools");
	add_tool(tools, "bash", "Run a shell command (/bin/sh -c) in the jail, in the workspace; returns its output.",
		 (const char *const[]){ "command", "string", "the command line",
					"timeoutMs", "integer", "kill it after this many milliseconds", NULL },
		 (const char *const[]){ "command", NULL });
	add_tool(tools, "read_file", "Read a text file (a path relative to the workspace, or absolute).",
		 (const char *const[]){ "path", "string", "the file", NULL }, (const char *const[]){ "path", NULL });
	add_tool(tools, "write_file", "Create or overwrite a file with the given content.",
		 (const char *const[]){ "path", "string", "the file", "content", "string", "its new content", NULL },
		 (const char *const[]){ "path", "content", NULL });
	add_tool(tools, "edit_file", "Replace the one occurrence of old_string in a file by new_string; refused when it occurs zero or several times.",
		 (const char *const[]){ "path", "string", "the file", "old_string", "string", "text to replace, exactly as in the file",
					"new_string", "string", "the replacement", NULL },
		 (const char *const[]){ "path", "old_string", "new_string", NULL });
	add_tool(tools, "list_directory", "List a directory: one entry a line, directories with a trailing /.",
		 (const char *const[]){ "path", "string", "the directory (default: the workspace)", NULL },
		 (const char *const[]){ NULL });
	add_tool(tools, "glob", "Paths matching a glob pattern (** spans directories), relative to the workspace.",
		 (const char *const[]){ "pattern", "string", "e.g. src/**/*.c", NULL }, (const char *const[]){ "pattern", NULL });
	add_tool(tools, "grep", "Lines matching an extended regular expression, as path:line:text.",
		 (const char *const[]){ "pattern", "string", "POSIX extended regular expression",
					"path", "string", "file or directory to search (default: the workspace)",
					"include", "string", "only files whose name matches this glob", NULL },
		 (const char *const[]){ "pattern", NULL });
	respond(s, id, r);
}

/* A file call for a tool: the answer, or NULL after an isError reply. */
static cJSON *tool_file_call(struct server *s, const cJSON *id, const char *method, cJSON *params)
{
	jr_error_t *err = NULL;
	cJSON *answer = file_call(s, method, params, &err);
	int code;
	const char *errno_name, *message = answer ? error_message(answer, &code, &errno_name) : NULL;
	if (!answer || message) {
		respond_tool(s, id, message ? message : err ? err->message : "failed", true);
		jr_error_free(err);
		cJSON_Delete(answer);
		return NULL;
	}
	return answer;
}

static const char *arg(const cJSON *args, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(args, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

#define EDIT_MAX_BYTES (64u << 20)

/* The file's exact bytes, or NULL after an isError reply: an edit never
 * writes back less than it read, nor text that was not there (a file cut
 * at a size limit, NULs or invalid UTF-8 "repaired" into U+FFFD). */
static char *edit_read(struct server *s, const cJSON *id, const char *path, size_t *len)
{
	cJSON *params = cJSON_CreateObject();
	cJSON_AddStringToObject(params, "path", path);
	cJSON_AddStringToObject(params, "encoding", "base64");
	cJSON_AddNumberToObject(params, "maxBytes", EDIT_MAX_BYTES);
	cJSON *answer = tool_file_call(s, id, "readFile", params);
	cJSON_Delete(params);
	if (!answer)
		return NULL;
	const cJSON *b64 = cJSON_GetObjectItem(answer, "contentBase64");
	unsigned char *bytes = NULL;
	char msg[600] = "";
	if (cJSON_IsTrue(cJSON_GetObjectItem(answer, "truncated")))
		snprintf(msg, sizeof(msg), "edit_file %s: larger than %u bytes; not edited", path, EDIT_MAX_BYTES);
	else if (!cJSON_IsString(b64) || jr_base64_decode(b64->valuestring, &bytes, len) < 0)
		snprintf(msg, sizeof(msg), "edit_file %s: could not read it", path);
	cJSON_Delete(answer);
	if (!*msg) {
		char *clean = jr_utf8_sanitize((char *)bytes, *len);
		if (!clean || strlen(clean) != *len || memcmp(clean, bytes, *len))
			snprintf(msg, sizeof(msg), "edit_file %s: not UTF-8 text (NUL or invalid bytes); not edited", path);
		free(clean);
	}
	if (*msg) {
		free(bytes);
		respond_tool(s, id, msg, true);
		return NULL;
	}
	return (char *)bytes;
}

static void tool_edit(struct server *s, const cJSON *id, const cJSON *args)
{
	const char *path = arg(args, "path"), *old = arg(args, "old_string"), *new = arg(args, "new_string");
	if (!path || !old || !new || !*old)
		return respond_tool(s, id, "edit_file: path, old_string (non-empty) and new_string are required", true);
	size_t len = 0, old_len = strlen(old), new_len = strlen(new);
	_cleanup_free_ char *text = edit_read(s, id, path, &len);
	if (!text)
		return;
	size_t count = 0;
	const char *at = NULL;
	for (const char *p = memmem(text, len, old, old_len); p;
	     p = memmem(p + 1, len - (size_t)(p + 1 - text), old, old_len))
		if (count++ == 0)
			at = p;
	if (count != 1) {
		char msg[600];
		snprintf(msg, sizeof(msg), "edit_file %s: old_string occurs %zu times; it must occur exactly once%s",
			 path, count, count ? " (give more context)" : "");
		return respond_tool(s, id, msg, true);
	}
	size_t head = (size_t)(at - text), out_len = len - old_len + new_len;
	_cleanup_free_ char *edited = malloc(out_len + 1);
	if (!edited)
		return respond_tool(s, id, "edit_file: out of memory", true);
	memcpy(edited, text, head);
	memcpy(edited + head, new, new_len);
	memcpy(edited + head + new_len, at + old_len, len - head - old_len);
	_cleanup_free_ char *b64 = jr_base64_encode((unsigned char *)edited, out_len);
	if (!b64)
		return respond_tool(s, id, "edit_file: out of memory", true);
	remember_read(s, path);
	cJSON *params = cJSON_CreateObject();
	cJSON_AddStringToObject(params, "path", path);
	cJSON_AddStringToObject(params, "contentBase64", b64);
	cJSON *answer = tool_file_call(s, id, "writeFile", params);
	cJSON_Delete(params);
	if (answer)
		respond_tool(s, id, "edited", false);
	cJSON_Delete(answer);
}

static void tool_listing(struct server *s, const cJSON *id, const char *method, cJSON *params)
{
	cJSON *answer = tool_file_call(s, id, method, params);
	if (!answer)
		return;
	size_t cap = 4096, len = 0;
	char *text = malloc(cap);
	const cJSON *items = cJSON_GetObjectItem(answer, !strcmp(method, "readdir") ? "entries"
							: !strcmp(method, "glob")  ? "paths"
										   : "matches");
	const cJSON *it;
	cJSON_ArrayForEach(it, items) {
		char line[8192];
		if (!strcmp(method, "readdir"))
			snprintf(line, sizeof(line), "%s%s\n", cJSON_GetObjectItem(it, "name")->valuestring,
				 cJSON_IsTrue(cJSON_GetObjectItem(it, "isDirectory")) ? "/" : "");
		else if (!strcmp(method, "glob"))
			snprintf(line, sizeof(line), "%s\n", it->valuestring);
		else
			snprintf(line, sizeof(line), "%s:%d:%s\n", cJSON_GetObjectItem(it, "path")->valuestring,
				 cJSON_GetObjectItem(it, "line")->valueint,
				 cJSON_GetObjectItem(it, "text")->valuestring);
		size_t n = strlen(line);
		if (text && len + n + 1 > cap) {
			char *grown = realloc(text, cap = 2 * (len + n + 1));
			if (!grown) {
				free(text);
				text = NULL;
			}
			text = grown;
		}
		if (!text)
			break;
		memcpy(text + len, line, n);
		len += n;
	}
	if (text)
		text[len] = '\0';
	respond_tool(s, id, text ? text : "out of memory", !text);
	free(text);
	cJSON_Delete(answer);
}

static void mcp_tools_call(struct server *s, const cJSON *id, const cJSON *params)
{
	const cJSON *name = cJSON_GetObjectItem(params, "name"), *args = cJSON_GetObjectItem(params, "arguments");
	if (!cJSON_IsString(name))
		return respond_error(s, id, E_PARAMS, NULL, "tools/call: name must be a string");
	const char *tool = name->valuestring;
	cJSON *p = cJSON_CreateObject();
	if (!strcmp(tool, "bash")) {
		if (!arg(args, "command"))
			respond_tool(s, id, "bash: command (a string) is required", true);
		else {
			cJSON_AddStringToObject(p, "command", arg(args, "command"));
			const cJSON *t = cJSON_GetObjectItem(args, "timeoutMs");
			if (cJSON_IsNumber(t))
				cJSON_AddNumberToObject(p, "timeoutMs", t->valuedouble);
			exec_method(s, id, p, "bash");
		}
	} else if (!strcmp(tool, "read_file") || !strcmp(tool, "write_file")) {
		const char *path = arg(args, "path"), *content = arg(args, "content");
		bool write = !strcmp(tool, "write_file");
		if (!path || (write && !content)) {
			respond_tool(s, id, write ? "write_file: path and content are required" : "read_file: path is required", true);
		} else if (write && guard_refuses(s, path)) {
			char msg[600];
			snprintf(msg, sizeof(msg), "write_file %s: refused: the file was not read first (guard read-before-write)", path);
			respond_tool(s, id, msg, true);
		} else {
			cJSON_AddStringToObject(p, "path", path);
			if (write)
				cJSON_AddStringToObject(p, "content", content);
			cJSON *answer = tool_file_call(s, id, write ? "writeFile" : "readFile", p);
			if (answer && write) {
				char msg[600];
				snprintf(msg, sizeof(msg), "wrote %d bytes to %s",
					 cJSON_GetObjectItem(answer, "bytesWritten")->valueint, path);
				respond_tool(s, id, msg, false);
			} else if (answer) {
				remember_read(s, path);
				respond_tool(s, id, cJSON_GetObjectItem(answer, "content")->valuestring, false);
			}
			cJSON_Delete(answer);
		}
	} else if (!strcmp(tool, "edit_file")) {
		tool_edit(s, id, args);
	} else if (!strcmp(tool, "list_directory")) {
		cJSON_AddStringToObject(p, "path", arg(args, "path") ? arg(args, "path") : ".");
		tool_listing(s, id, "readdir", p);
	} else if (!strcmp(tool, "glob") || !strcmp(tool, "grep")) {
		const char *keys[] = { "pattern", "path", "include", NULL };
		for (size_t i = 0; keys[i]; i++)
			if (arg(args, keys[i]))
				cJSON_AddStringToObject(p, keys[i], arg(args, keys[i]));
		if (!arg(args, "pattern"))
			respond_tool(s, id, "pattern is required", true);
		else
			tool_listing(s, id, tool, p);
	} else {
		respond_error(s, id, E_PARAMS, NULL, "tools/call: unknown tool '%s'", tool);
	}
	cJSON_Delete(p);
}

static void mcp_initialize(struct server *s, const cJSON *id, const cJSON *params)
{
	const cJSON *asked = cJSON_GetObjectItem(params, "protocolVersion");
	const char *version = mcp_versions[0];
	for (size_t i = 0; cJSON_IsString(asked) && mcp_versions[i]; i++)
		if (!strcmp(asked->valuestring, mcp_versions[i]))
			version = mcp_versions[i];
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "protocolVersion", version);
	cJSON_AddObjectToObject(cJSON_AddObjectToObject(r, "capabilities"), "tools");
	cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
	cJSON_AddStringToObject(info, "name", "jailrun");
	cJSON_AddStringToObject(info, "version", jr_version());
	cJSON_AddStringToObject(r, "instructions",
				"Every tool runs inside a jailrun jail: the workspace is writable, the system read-only, secrets hidden, the network as the policy says.");
	respond(s, id, r);
}

/* ---- dispatch ------------------------------------------------------------ */

static void info_method(struct server *s, const cJSON *id)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "version", jr_version());
	if (s->session)
		cJSON_AddStringToObject(r, "session", s->session);
	else
		cJSON_AddNullToObject(r, "session");
	if (s->prov)
		cJSON_AddStringToObject(r, "provider", jr_provider_conn_table(s->prov)->name);
	cJSON *p = cJSON_AddObjectToObject(r, "policy");
	cJSON_AddStringToObject(p, "name", jr_policy_name(s->policy) ? jr_policy_name(s->policy) : "");
	cJSON_AddStringToObject(p, "sha256", s->digest);
	cJSON_AddStringToObject(r, "workspace", s->plan->workspace);
	/* When the session started: its init knows (a provider's: when it
	 * was opened). */
	int fd;
	jr_error_t *err = NULL;
	cJSON *req = cJSON_CreateObject(), *answer = NULL;
	cJSON_AddStringToObject(req, "op", "info");
	if (s->prov) {
		answer = cJSON_CreateObject();
		cJSON_AddNumberToObject(answer, "startedMs", (double)s->started_ms);
	} else if (jr_session_connect(s->session, &fd, &err) == 0) {
		if (jr_frame_send(fd, req, NULL, 0, &err) == 0)
			jr_frame_recv(fd, &answer, NULL, NULL, &err);
		close(fd);
	}
	jr_error_free(err);
	cJSON_Delete(req);
	const cJSON *ms = cJSON_GetObjectItem(answer, "startedMs");
	if (cJSON_IsNumber(ms)) {
		char when[40];
		long long v = (long long)ms->valuedouble;
		time_t secs = (time_t)(v / 1000);
		struct tm tm;
		gmtime_r(&secs, &tm);
		size_t n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(when + n, sizeof(when) - n, ".%03lldZ", v % 1000);
		cJSON_AddStringToObject(r, "startedAt", when);
	} else {
		cJSON_AddNullToObject(r, "startedAt");
	}
	cJSON_Delete(answer);
	respond(s, id, r);
}

static bool is_file_method(const char *m)
{
	static const char *const names[] = { "readFile", "writeFile", "stat", "readdir", "exists",
					     "mkdir",    "rm",	  "glob", "grep",    NULL };
	for (size_t i = 0; names[i]; i++)
		if (!strcmp(m, names[i]))
			return true;
	return false;
}

static void dispatch(struct server *s, const cJSON *req)
{
	const cJSON *id = cJSON_GetObjectItem(req, "id"), *method = cJSON_GetObjectItem(req, "method");
	const cJSON *params = cJSON_GetObjectItem(req, "params"), *version = cJSON_GetObjectItem(req, "jsonrpc");
	bool notification = !id;
	if (!cJSON_IsObject(req) || !cJSON_IsString(version) || strcmp(version->valuestring, "2.0") ||
	    !cJSON_IsString(method) || (id && !cJSON_IsString(id) && !cJSON_IsNumber(id) && !cJSON_IsNull(id)) ||
	    (params && !cJSON_IsObject(params) && !cJSON_IsArray(params)))
		return respond_error(s, cJSON_IsString(id) || cJSON_IsNumber(id) ? id : NULL, E_REQUEST, NULL,
				     "invalid request: need jsonrpc \"2.0\", a method string, an id string or number, params an object");
	const char *m = method->valuestring;
	if (!strcmp(m, "$/cancelRequest") || !strcmp(m, "notifications/cancelled") || !strcmp(m, "cancel")) {
		const cJSON *target = cJSON_GetObjectItem(params, "id");
		if (!target)
			target = cJSON_GetObjectItem(params, "requestId");
		cancel(s, target);
		if (!notification)
			respond(s, id, NULL);
		return;
	}
	if (notification)
		return; /* notifications/initialized and the like: nothing to say */
	if (params && !cJSON_IsObject(params))
		return respond_error(s, id, E_PARAMS, NULL, "%s: params must be an object", m);
	if (s->dialect == JR_RPC_MCP) {
		if (!strcmp(m, "initialize"))
			return mcp_initialize(s, id, params);
		if (!strcmp(m, "ping"))
			return respond(s, id, NULL);
		if (!strcmp(m, "tools/list"))
			return mcp_tools_list(s, id);
		if (!strcmp(m, "tools/call"))
			return mcp_tools_call(s, id, params);
		return respond_error(s, id, E_METHOD, NULL, "method not found: %s", m);
	}
	if (!strcmp(m, "exec"))
		return exec_method(s, id, params, NULL);
	if (is_file_method(m))
		return file_method(s, id, m, params);
	if (!strcmp(m, "info"))
		return info_method(s, id);
	if (!strcmp(m, "shutdown")) {
		s->shutdown = true;
		return respond(s, id, NULL);
	}
	if (!strcmp(m, "snapshot") || !strcmp(m, "restore"))
		return respond_error(s, id, E_UNSUPPORTED, NULL,
				     "%s: not supported in this version (it comes with overlay workspaces)", m);
	respond_error(s, id, E_METHOD, NULL, "method not found: %s", m);
}

static void handle_line(struct server *s, char *line, size_t len)
{
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (!len)
		return;
	cJSON *req = cJSON_ParseWithLength(line, len);
	if (!req)
		return respond_error(s, NULL, E_PARSE, NULL, "parse error: not a JSON object");
	if (cJSON_IsArray(req))
		respond_error(s, NULL, E_REQUEST, NULL, "batches are not supported: send one request a line");
	else
		dispatch(s, req);
	cJSON_Delete(req);
}

static void read_input(struct server *s)
{
	char buf[65536];
	ssize_t n = read(s->in_fd, buf, sizeof(buf));
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			s->eof = true;
		return;
	}
	for (ssize_t i = 0; i < n;) {
		char *nl = memchr(buf + i, '\n', (size_t)(n - i));
		size_t take = nl ? (size_t)(nl - (buf + i)) : (size_t)(n - i);
		if (!s->discarding) {
			if (s->line_len + take > MAX_LINE) {
				s->discarding = true;
				s->line_len = 0;
				respond_error(s, NULL, E_REQUEST, NULL, "request too large (over %u bytes)", MAX_LINE);
			} else {
				if (s->line_len + take + 1 > s->line_cap) {
					size_t cap = (s->line_len + take + 1) * 2;
					char *grown = realloc(s->line, cap);
					if (!grown) {
						s->eof = true;
						return;
					}
					s->line = grown;
					s->line_cap = cap;
				}
				memcpy(s->line + s->line_len, buf + i, take);
				s->line_len += take;
			}
		}
		i += (ssize_t)take;
		if (nl) {
			if (!s->discarding)
				handle_line(s, s->line, s->line_len);
			s->discarding = false;
			s->line_len = 0;
			i++;
		}
	}
}

/* ---- the loop ------------------------------------------------------------- */

static void step_execs(struct server *s, uint64_t now)
{
	for (size_t i = s->n_execs; i-- > 0;) {
		struct exec *x = s->execs[i];
		if (!x->finished && x->deadline_us && now >= x->deadline_us) {
			x->timed_out = true;
			hang_up(x, now);
		}
		bool pipes_open = x->out.fd >= 0 || x->err.fd >= 0;
		if (x->finished && x->pid > 0) {
			/* Hung up: answered once its child is gone. */
			if (now < x->kill_at_us && waitpid(x->pid, NULL, WNOHANG) == 0)
				continue;
			reap_child(x, false);
		}
		if (x->finished && (!pipes_open || now >= x->drain_until_us)) {
			finish_exec(s, x);
			exec_free(x);
			s->execs[i] = s->execs[--s->n_execs];
		}
	}
}

static void on_exec_event(struct server *s, struct exec *x, int fd, short revents)
{
	if (fd == x->conn && s->prov) {
		provider_result(s, x);
		close(x->conn);
		x->conn = -1;
		x->finished = true;
		x->drain_until_us = jr_now_us() + DRAIN_MS * 1000;
	} else if (fd == x->conn) {
		jr_error_t *err = NULL;
		if (jr_session_exec_result(x->conn, &x->result, &err) < 0) {
			/* The session ended under it (stopped, or its jail died). */
			x->result.signal = SIGKILL;
			jr_error_free(err);
		}
		close(x->conn);
		x->conn = -1;
		x->finished = true;
		x->drain_until_us = jr_now_us() + DRAIN_MS * 1000;
	} else if (fd == x->out.fd) {
		read_stream(&x->out);
	} else if (fd == x->err.fd) {
		read_stream(&x->err);
	} else if (fd == x->in_fd && (revents & (POLLOUT | POLLERR | POLLHUP))) {
		ssize_t w = write(x->in_fd, x->stdin_data + x->stdin_off, x->stdin_len - x->stdin_off);
		if (w > 0)
			x->stdin_off += (size_t)w;
		if (w < 0 || x->stdin_off == x->stdin_len) {
			close(x->in_fd);
			x->in_fd = -1;
		}
	}
}

static int serve_loop(struct server *s)
{
	struct pollfd pfd[1 + MAX_EXECS * 4];
	struct exec *owner[1 + MAX_EXECS * 4];
	while (!s->shutdown && !rpc_stop && !(s->eof && s->n_execs == 0)) {
		size_t n = 0;
		if (!s->eof) {
			owner[n] = NULL;
			pfd[n++] = (struct pollfd){ .fd = s->in_fd, .events = POLLIN };
		}
		int timeout = -1;
		uint64_t now = jr_now_us();
		for (size_t i = 0; i < s->n_execs; i++) {
			struct exec *x = s->execs[i];
			int fds[4] = { x->conn, x->out.fd, x->err.fd, x->in_fd };
			for (int k = 0; k < 4; k++)
				if (fds[k] >= 0) {
					owner[n] = x;
					pfd[n++] = (struct pollfd){ .fd = fds[k], .events = k == 3 ? POLLOUT : POLLIN };
				}
			uint64_t due = x->finished ? x->drain_until_us : x->deadline_us;
			if (x->finished && x->pid > 0) /* a stopping child: checked often */
				due = now + 50000;
			if (due) {
				int ms = due > now ? (int)((due - now) / 1000) + 1 : 0;
				if (timeout < 0 || ms < timeout)
					timeout = ms;
			}
		}
		struct timespec ts = { .tv_sec = timeout / 1000, .tv_nsec = (long)(timeout % 1000) * 1000000L };
		/* Provider mode: SIGTERM and the like are blocked but here, so
		 * one that comes is seen at once and ends the loop. */
		if (ppoll(pfd, n, timeout < 0 ? NULL : &ts, s->prov ? &s->poll_mask : NULL) < 0 && errno != EINTR)
			return -1;
		if (rpc_stop)
			break;
		for (size_t i = 0; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			if (!owner[i])
				read_input(s);
			else
				on_exec_event(s, owner[i], pfd[i].fd, pfd[i].revents);
		}
		step_execs(s, jr_now_us());
	}
	/* All told to stop first, so that their graces run together. */
	for (size_t i = 0; i < s->n_execs; i++)
		hang_up(s->execs[i], 0);
	for (size_t i = 0; i < s->n_execs; i++)
		exec_free(s->execs[i]);
	s->n_execs = 0;
	return 0;
}

/* A session started under another policy is refused before serving,
 * not request by request. */
static int check_session_policy(struct server *s, jr_error_t **err)
{
	int fd;
	if (jr_session_connect(s->session, &fd, err) < 0)
		return -1;
	cJSON *req = cJSON_CreateObject(), *answer = NULL;
	cJSON_AddStringToObject(req, "op", "info");
	int r = jr_frame_send(fd, req, NULL, 0, err);
	if (r == 0 && jr_frame_recv(fd, &answer, NULL, NULL, err) <= 0)
		r = -1;
	close(fd);
	cJSON_Delete(req);
	const cJSON *policy = cJSON_GetObjectItem(answer, "policy");
	const cJSON *digest = cJSON_GetObjectItem(policy, "sha256"), *name = cJSON_GetObjectItem(policy, "name");
	if (r == 0 && (!cJSON_IsString(digest) || strcmp(digest->valuestring, s->digest)))
		r = jr_fail(err, 0, "session %s runs policy %s (sha256 %.12s...), not this one", s->session,
			    cJSON_IsString(name) ? name->valuestring : "?",
			    cJSON_IsString(digest) ? digest->valuestring : "?");
	cJSON_Delete(answer);
	return r;
}

int jr_rpc_serve(enum jr_rpc_dialect dialect, const jr_policy_t *policy, const jr_plan_t *plan,
		 const char *session, int in_fd, int out_fd, jr_error_t **err)
{
	struct server s = { .dialect = dialect, .policy = policy, .plan = plan, .session = session,
			    .in_fd = in_fd, .out_fd = out_fd };
	jr_policy_digest(policy, s.digest);
	if (check_session_policy(&s, err) < 0)
		return -1;
	/* A client gone mid-answer is end of service, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	int flags = fcntl(in_fd, F_GETFL);
	fcntl(in_fd, F_SETFL, flags | O_NONBLOCK);
	int r = serve_loop(&s);
	fcntl(in_fd, F_SETFL, flags); /* the caller's open file, shared */
	if (r < 0)
		jr_fail(err, errno, "serve: poll");
	free(s.line);
	for (size_t i = 0; i < s.n_read; i++)
		free(s.read_paths[i]);
	free(s.read_paths);
	return r;
}

static void on_rpc_stop(int sig)
{
	rpc_stop = sig;
}

int jr_rpc_serve_provider(enum jr_rpc_dialect dialect, const jr_policy_t *policy, const jr_plan_t *plan,
			  jr_provider_handle_t *provider, const char *const *config, bool preserve,
			  const struct jr_run_options *opts, int in_fd, int out_fd, jr_error_t **err)
{
	struct server s = { .dialect = dialect, .policy = policy, .plan = plan, .in_fd = in_fd,
			    .out_fd = out_fd };
	jr_policy_digest(policy, s.digest);
	/* Per command, as in a session, and not applied to serve's execs:
	 * refused, never silently dropped (exec has timeoutMs and
	 * maxOutputBytes). */
	if (plan->time_ms || plan->output_limited)
		return jr_fail(err, 0, "serve --provider: limit time and limit output are not enforced for the service's commands in this version; use exec's timeoutMs and maxOutputBytes");
	/* SIGTERM, SIGINT and SIGHUP end the service and close the provider:
	 * during open its blocking calls return (EINTR); while serving they
	 * are blocked but in ppoll. */
	struct sigaction sa = { .sa_handler = on_rpc_stop }, old_int, old_term, old_hup;
	sigemptyset(&sa.sa_mask);
	rpc_stop = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	const char *failed_step = NULL;
	int r = jr_provider_open(provider, policy, plan, config, preserve, opts, &s.prov, &failed_step, err);
	if (r == 0 && rpc_stop) {
		jr_provider_close(s.prov, NULL);
		s.prov = NULL;
		r = jr_fail(err, EINTR, "serve: stopped by a signal while the provider was opening");
	}
	if (r == 0) {
		s.started_ms = (uint64_t)time(NULL) * 1000u;
		struct timespec now;
		if (clock_gettime(CLOCK_REALTIME, &now) == 0)
			s.started_ms = (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
		sigset_t block;
		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGHUP);
		sigprocmask(SIG_BLOCK, &block, &s.poll_mask);
		struct sigaction old_pipe, ign = { .sa_handler = SIG_IGN };
		sigemptyset(&ign.sa_mask);
		sigaction(SIGPIPE, &ign, &old_pipe);
		int flags = fcntl(in_fd, F_GETFL);
		fcntl(in_fd, F_SETFL, flags | O_NONBLOCK);
		r = serve_loop(&s);
		fcntl(in_fd, F_SETFL, flags);
		if (r < 0)
			jr_fail(err, errno, "serve: poll");
		/* Every child is reaped (serve_loop freed the requests) before
		 * the instance they used is closed. */
		if (jr_provider_close(s.prov, r == 0 ? err : NULL) < 0)
			r = -1;
		sigaction(SIGPIPE, &old_pipe, NULL);
		sigprocmask(SIG_SETMASK, &s.poll_mask, NULL);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	free(s.line);
	for (size_t i = 0; i < s.n_read; i++)
		free(s.read_paths[i]);
	free(s.read_paths);
	return r;
}
