/* libjailrun: run a command inside a kernel-enforced jail.
 *
 * The flow is policy -> plan -> run:
 *   jr_policy_t  what the user asked for (pure data, no syscalls);
 *   jr_plan_t    the policy resolved against this host (paths made canonical,
 *                default mounts added, mounts ordered);
 *   jr_run()     builds the jail from the plan and runs one command in it.
 *
 * Every fallible call returns 0 on success or -1 with *err set to a new
 * error object, which the caller releases with jr_error_free().  The
 * library never prints and never exits.
 */
#ifndef JAILRUN_H
#define JAILRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JR_EXIT_TIMEOUT 124
#define JR_EXIT_FAILURE 125
#define JR_EXIT_NOEXEC 126
#define JR_EXIT_NOTFOUND 127

/* ---- errors ---------------------------------------------------------- */

typedef struct jr_error {
	int errnum;    /* errno of the failing call, 0 when not a syscall */
	char *message; /* one line, names the failing step */
} jr_error_t;

void jr_error_free(jr_error_t *err);
const char *jr_version(void);

/* ---- policy: what the user asked for --------------------------------- */

typedef struct jr_policy jr_policy_t;

enum jr_bind_mode {
	JR_BIND_RO,
	JR_BIND_RW,
};

enum jr_user_mode {
	JR_USER_SAME, /* the caller's ids, as themselves */
	JR_USER_ROOT, /* uid/gid 0 inside, still unprivileged outside */
	JR_USER_ID,   /* a given uid:gid inside (policy "user UID[:GID]") */
};

int jr_policy_new(jr_policy_t **out, jr_error_t **err);
void jr_policy_free(jr_policy_t *policy);

/* Reads a policy file and appends its clauses.  NAME_OR_PATH with a '/'
 * is a file; otherwise it is searched ('.pol' optional) in
 * $JAILRUN_POLICY_PATH, ~/.config/jailrun/policy, /etc/jailrun/policy and
 * the installed policy directory.  Errors say FILE:LINE:COL. */
int jr_policy_load(jr_policy_t *policy, const char *name_or_path, jr_error_t **err);
/* What the run report says of the policy: its name as loaded, the
 * sha256 of its resolved text (every file read and line added, in
 * order, framed), and the canonical path of each file read (NULL for the
 * lines added from code or the command line). */
const char *jr_policy_name(const jr_policy_t *policy);
void jr_policy_digest(const jr_policy_t *policy, char hex[65]);
size_t jr_policy_n_files(const jr_policy_t *policy);
const char *jr_policy_file(const jr_policy_t *policy, size_t i);
/* Appends one line of the policy language, as -D/--set does. */
int jr_policy_add_line(jr_policy_t *policy, const char *line, jr_error_t **err);
/* Appends "DIRECTIVE ARG" with ARG quoted as one argument (ARG may be
 * NULL): how every command-line override becomes a policy line. */
int jr_policy_add_directive(jr_policy_t *policy, const char *directive, const char *arg,
			    jr_error_t **err);

/* NULL path = the current directory. */
int jr_policy_set_workspace(jr_policy_t *policy, const char *path, jr_error_t **err);
/* A missing PATH is an error unless optional. */
int jr_policy_add_bind(jr_policy_t *policy, enum jr_bind_mode mode, const char *path,
		       bool optional, jr_error_t **err);
int jr_policy_add_tmpfs(jr_policy_t *policy, const char *path, jr_error_t **err);
int jr_policy_set_hostname(jr_policy_t *policy, const char *name, jr_error_t **err);
int jr_policy_set_user(jr_policy_t *policy, enum jr_user_mode mode, jr_error_t **err);
#define JR_MAX_KEEP_FDS 32
int jr_policy_keep_fd(jr_policy_t *policy, int fd, jr_error_t **err);

/* ---- plan: the policy resolved on this host -------------------------- */

typedef struct jr_plan jr_plan_t;

/* Resolves the policy against this host and the caller's environment
 * (NULL = environ), from which the command's environment is computed.
 * A plan may hold clauses this host or version cannot enforce: jr_run
 * refuses such a plan, --explain shows them. */
int jr_compile(const jr_policy_t *policy, char *const envp[], jr_plan_t **out, jr_error_t **err);
void jr_plan_free(jr_plan_t *plan);
/* Whether the jail can write the host's canonical path (it lies in a
 * read-write bind: the workspace, an rw entry). */
bool jr_plan_host_writable(const jr_plan_t *plan, const char *canonical_path);
/* 0 when every clause is enforced; else -1 naming the first that is not. */
int jr_plan_check_enforced(const jr_plan_t *plan, jr_error_t **err);

/* Describes the plan one line at a time: clauses with their mechanism,
 * mounts in order, the environment's names (never values). */
typedef void (*jr_line_fn)(void *userdata, const char *line);
void jr_plan_describe(const jr_plan_t *plan, jr_line_fn fn, void *userdata);

/* Checks what this host supports (user namespaces, Landlock, seccomp,
 * cgroups, pasta), one line per item with the fix for what is missing.
 * Returns 0 when the full jail works here, 1 when it does not. */
int jr_doctor(jr_line_fn fn, void *userdata);

/* ---- run ------------------------------------------------------------- */

struct jr_run_options {
	jr_line_fn log;        /* progress lines (setup steps with timings), or NULL */
	void *log_userdata;
	int pty;               /* -1 auto (stdin and stdout are terminals), 0 never, 1 always */
	/* Count the policy's seccomp denials (errno and log rules): each
	 * denied call is answered by the supervisor through a seccomp user
	 * notification, as the policy says, and counted. */
	bool count_denials;
	/* Lines the user must see whatever -v says, from a provider (the id
	 * of a kept container), called with a NULL userdata; NULL drops them. */
	jr_line_fn notice;
};

struct jr_denial {
	char *syscall; /* name, or "syscall_N" */
	unsigned long count;
};

/* A connection the egress proxy or the kernel CIDR filter refused. */
struct jr_net_denial {
	char *host;   /* the name or address asked for */
	uint16_t port;
	char *rule;   /* why: the clause that refused it, or that none allowed it */
	unsigned long count;
};

struct jr_result {
	int exit_code; /* the command's exit code when it exited, else -1 */
	int signal;    /* the signal that killed it, else 0 */
	int status;    /* what a shell would report: exit code or 128+signal, 126/127 */
	int exec_errno; /* non-zero: execve failed with it (status is then 126 or 127) */
	bool timed_out; /* the time limit ended it (status is then 124) */
	bool oom_killed; /* the memory limit's OOM killer ended a process of the jail */
	/* Accounting, filled whether or not the jail could be built. */
	uint64_t wall_us;      /* from the start of the setup to init reaped */
	uint64_t user_us, sys_us; /* CPU time of every process of the jail */
	long max_rss_kb;       /* the largest max RSS of one process of the jail */
	int64_t memory_peak;   /* bytes, the memory cgroup's high-water mark; -1 unknown */
	int64_t pids_peak;     /* the pids cgroup's high-water mark; -1 unknown */
	int64_t output_bytes;  /* stdout+stderr written, when jailrun relayed it; else -1 */
	bool truncated;        /* limit output cut the output */
	bool denials_counted;  /* count_denials asked and the listener was in place */
	struct jr_denial *denials; /* most frequent first; free with jr_result_release */
	size_t n_denials;
	struct jr_net_denial *net_denials; /* most frequent first, whether or not counted */
	size_t n_net_denials;
	const char *failed_step; /* when jr_run returns -1: "enforcement", "setup" or "supervise" */
};

/* Runs argv in a new jail built from plan and waits for it.  Returns -1
 * only when the jail could not be built (then the command never ran).
 * The jail's init is a raw clone3 child that allocates memory before it
 * execs: call jr_run from a single-threaded process (or a fork of one),
 * as another thread could hold the allocator's lock at the clone.
 * Descriptors 0-2 that are closed are opened on /dev/null first. */
int jr_run(const jr_plan_t *plan, char *const argv[], const struct jr_run_options *opts,
	   struct jr_result *result, jr_error_t **err);
/* Frees what jr_run allocated in result (the denials). */
void jr_result_release(struct jr_result *result);

/* ---- providers: the same contract elsewhere (jailrun-provider(7)) ----- */

typedef struct jr_provider_handle jr_provider_handle_t;

/* "local", or NAME.so from $JAILRUN_PROVIDER_PATH, then the installed
 * providers directory; refused unless its table is complete and of this
 * ABI. */
int jr_provider_load(const char *name, jr_provider_handle_t **out, jr_error_t **err);
void jr_provider_unload(jr_provider_handle_t *provider);
bool jr_provider_is_local(const jr_provider_handle_t *provider);
/* One line per provider found (name, ABI, optional methods, path); -1
 * when some plugin was refused (its line says why). */
int jr_provider_list(jr_line_fn fn, void *userdata);
/* The policy's `provider NAME KEY=VALUE` settings for name, then extra
 * (--provider-opt); a NULL-terminated array to free with jr_strv_free. */
char **jr_provider_config(const jr_policy_t *policy, const char *name, char *const *extra);
/* Runs argv through the provider: open (every semantic clause must be
 * enforced, as for the local jail), exec, close (also on SIGINT/SIGTERM). */
int jr_provider_run(jr_provider_handle_t *provider, const jr_policy_t *policy, const jr_plan_t *plan,
		    const char *const *config, bool preserve, char *const argv[],
		    const struct jr_run_options *opts, struct jr_result *result, jr_error_t **err);
/* Removes what killed runs left behind (the provider's gc method). */
int jr_provider_gc(jr_provider_handle_t *provider, const char *const *config,
		   const struct jr_run_options *opts, jr_error_t **err);
void jr_strv_free(char **v);

/* ---- sessions: a jail that stays up ---------------------------------- */

struct jr_session_options {
	unsigned idle_s;      /* stop after this many seconds with nothing running; 0 = never */
	bool private_session; /* dies with the calling process (serve, mcp) instead of daemonizing */
};

/* Starts session NAME running plan (made from policy); returns once it
 * serves requests.  EEXIST when it is already running. */
int jr_session_start(const jr_policy_t *policy, const jr_plan_t *plan, const char *name,
		     const struct jr_session_options *opts, jr_error_t **err);
/* A connection to session NAME's control socket (one request each). */
int jr_session_connect(const char *name, int *fd, jr_error_t **err);
/* Kills every process of the session and waits until it is gone. */
int jr_session_stop(const char *name, jr_error_t **err);
/* One line per running session of the caller: NAME PID POLICY STARTED WORKSPACE. */
int jr_session_list(jr_line_fn fn, void *userdata, jr_error_t **err);
/* Runs argv in session NAME with the caller's stdin, stdout and stderr
 * (a terminal among them is relayed through a pipe) and waits for it,
 * with plan's environment, or (plan NULL) the caller's environment as
 * policy makes it: a session already running needs no plan compiled.
 * policy must be the session's (its digest is checked). */
int jr_session_exec(const char *name, const jr_policy_t *policy, const jr_plan_t *plan,
		    char *const argv[], const char *cwd, struct jr_result *result, jr_error_t **err);

/* ---- agent API over stdio --------------------------------------------- */

enum jr_rpc_dialect { JR_RPC_JSONRPC, JR_RPC_MCP };
/* Serves JSON-RPC 2.0 (jailrun serve) or MCP (jailrun mcp), one object a
 * line, reading in_fd and writing out_fd, against session NAME, until
 * end of input or shutdown.  policy and plan are the session's. */
int jr_rpc_serve(enum jr_rpc_dialect dialect, const jr_policy_t *policy, const jr_plan_t *plan,
		 const char *session, int in_fd, int out_fd, jr_error_t **err);
/* The same through a provider plugin instead of a session: provider is
 * opened once at the start under the fail-closed rule of jr_provider_run
 * (config and preserve as there; opts's log and notice get the provider's
 * lines) and closed at the end of input, on shutdown, and on SIGTERM,
 * SIGINT or SIGHUP (which end the service; the function then returns 0).
 * Each exec runs in a child process of the caller that calls the
 * provider's exec; file methods are the provider's (glob and grep, which
 * its table lacks, answer an error). */
int jr_rpc_serve_provider(enum jr_rpc_dialect dialect, const jr_policy_t *policy, const jr_plan_t *plan,
			  jr_provider_handle_t *provider, const char *const *config, bool preserve,
			  const struct jr_run_options *opts, int in_fd, int out_fd, jr_error_t **err);

/* ---- report ---------------------------------------------------------- */

/* What one run was and did, for the JSON report (jailrun(1), REPORT). */
struct jr_report_input {
	const jr_policy_t *policy;     /* NULL when none could be made */
	const jr_plan_t *plan;         /* NULL when the policy did not compile */
	char *const *argv;
	long long started_ms;          /* wall-clock start, ms since the epoch */
	int status;                    /* jailrun's exit status */
	const struct jr_result *result; /* NULL when the jail was never started */
	const char *error_step;        /* NULL when nothing failed */
	const jr_error_t *error;
};

/* The report as one line of JSON (malloc'd, with a final newline). */
int jr_report_json(const struct jr_report_input *in, char **json, jr_error_t **err);

#ifdef __cplusplus
}
#endif
#endif
