/* Declarations shared between libjailrun's files.  Not installed. */
#ifndef JR_INTERNAL_H
#define JR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <termios.h>
#include <poll.h>
#include <sys/ioctl.h>

#include "jailrun.h"
#include "error.h"

#include "policy.h"
#include "values.h"

/* ---- expand.c, env.c ------------------------------------------------- */

struct jr_expand {
	const char *home, *tmpdir, *workspace; /* NULL: not available here */
	char *const *envp;
	char unset_name[128]; /* set when jr_expand_path returns 1 */
};

const char *jr_env_get(char *const envp[], const char *name);
/* 0 with *out; 1 when the path names an unset ${NAME}; -1 on error. */
int jr_expand_path(struct jr_expand *x, const char *in, const struct jr_loc *loc, char **out,
		   jr_error_t **err);

enum jr_env_verdict { JR_ENV_PASS, JR_ENV_DROP, JR_ENV_SCRUBBED };
enum jr_env_verdict jr_env_verdict(const jr_policy_t *p, const char *name, size_t len);
/* The command's environment, and the names the policy scrubbed from it. */
int jr_env_build(const jr_policy_t *p, char *const caller[], const char *home, char ***out,
		 char ***scrubbed, jr_error_t **err);
void jr_strv_free(char **v);
/* The caller's home as the jail shows it ($HOME, else the passwd entry),
 * normalised; NULL when there is none (or it is "/"). */
int jr_home_of(char *const envp[], char **out, jr_error_t **err);

/* ---- plan (compile.c) ------------------------------------------------ */

enum jr_mount_kind {
	JR_MOUNT_BIND,
	JR_MOUNT_TMPFS,
	JR_MOUNT_PROC,
	JR_MOUNT_DEV,
	JR_MOUNT_SYMLINK,
	JR_MOUNT_EMPTY_FILE, /* an empty read-only regular file (masks a file) */
};

struct jr_mount {
	enum jr_mount_kind kind;
	char *source;   /* bind: canonical host path; symlink: link text */
	char *target;   /* absolute path inside the jail */
	bool readonly;
	bool callers;   /* the caller's own data (workspace, --ro, --rw), not the system */
	bool is_mask;   /* ordered after everything else at its depth */
	bool placeholder; /* a missing protected path: created on the host for the run */
	bool on_link;     /* target is a symlink: mount onto the link itself, not its target */
	const char *placeholder_text; /* a file placeholder's content (static), or NULL */
	bool noexec;      /* exec narrowing: nothing here may be mapped executable */
	mode_t mode;    /* tmpfs root mode */
	uint64_t size;  /* tmpfs size in bytes, 0 = kernel default */
	const char *origin; /* which setting asked for it, for messages */
};

/* The Landlock ruleset the jail gets (landlock.c). */
enum {
	JR_LL_GAP_MASK_IN_WRITABLE = 1,	   /* a mask inside a writable tree */
	JR_LL_GAP_PROTECT_IN_WRITABLE = 2, /* a protected path inside a writable tree */
	JR_LL_GAP_TMPFS = 4,		   /* a tmpfs at a path of its own */
};
struct jr_landlock_rule {
	char *path;
	uint64_t access;
};

struct jr_landlock_plan {
	bool enabled;     /* the kernel has Landlock */
	int abi;          /* this kernel's ABI, 0 when none */
	uint64_t handled_fs, scoped;
	uint64_t handled_net;        /* net host with allow connect/bind: TCP ports */
	uint16_t *connect_ports, *bind_ports;
	size_t n_connect, n_bind;
	uint32_t restrict_flags;
	bool exec_narrowed;
	unsigned gaps; /* landlock_only: what cannot be expressed (JR_LL_GAP_*) */
	struct jr_landlock_rule *rules;
	size_t n_rules;
};

#define JR_MAX_RLIMITS 6

/* A generated seccomp program (struct sock_filter instructions). */
struct jr_bpf {
	struct sock_filter *insns;
	unsigned short len;
};

/* The destinations allow host, allow cidr and resolve permit (egress.c). */
struct jr_egress_host {
	struct jr_host_pattern pattern;
	char *rule; /* "allow host NAME (file:line)", for a refusal's message */
};
struct jr_egress_cidr {
	struct jr_cidr cidr; /* without a port: every port */
	char *rule;
};
struct jr_egress_pin { /* resolve NAME:ADDR (--resolve) */
	char name[254];
	int family;
	unsigned char addr[16];
};
struct jr_egress {
	struct jr_egress_host *hosts;
	size_t n_hosts;
	struct jr_egress_cidr *cidrs;
	size_t n_cidrs;
	struct jr_egress_pin *pins;
	size_t n_pins;
};

/* One policy clause and what enforces it on this host. */
struct jr_plan_clause {
	char *where;     /* "file:line:col" */
	char *text;
	char *mechanism; /* how it is enforced, or why it is not */
	bool enforced;
};

struct jr_plan {
	char *policy_name;
	char *workspace; /* canonical; also the working directory */
	char *home;      /* $HOME inside, an empty tmpfs */
	struct jr_mount *mounts; /* in mount order: parents before children */
	size_t n_mounts;
	char *hostname;
	enum jr_user_mode user;
	uid_t user_uid; /* JR_USER_ID */
	gid_t user_gid;
	int *keep_fds;
	size_t n_keep_fds;
	struct jr_seccomp {
		struct jr_bpf policy;  /* the policy's rules; len 0 = no filter */
		struct jr_bpf builtin; /* jailrun's own rules (setid guard, Landlock-only) */
		unsigned policy_rules, builtin_rules;
	} seccomp;
	bool setid_guard; /* root caller with a writable tree of its own */
	bool landlock_only; /* isolation landlock: no namespaces */
	bool net_host;      /* net host: the host's network namespace */
	bool net_pasta;     /* net pasta: pasta(1) connects the jail's namespace */
	bool net_proxy;     /* net proxy: own namespace, the egress proxy outside */
	bool egress_bpf;    /* net host with allow cidr: the kernel CIDR filter */
	struct jr_egress egress; /* allow host, allow cidr, resolve */
	bool exec_narrowed; /* exec PATH... in effect: noexec writable trees, no memfd exec */
	uint64_t time_ms;       /* wall-clock limit, 0 = none */
	uint64_t kill_after_ms; /* grace between SIGTERM and SIGKILL at the limit */
	bool output_limited;    /* limit output: the supervisor relays and caps stdout+stderr */
	uint64_t output_limit;
	struct jr_rlimit_plan {
		int resource;
		uint64_t value;
	} rlimits[JR_MAX_RLIMITS];
	size_t n_rlimits;
	uint64_t memory, pids, cpu_milli; /* 0 = none */
	enum { JR_LIMITS_NONE, JR_LIMITS_CGROUP_V1, JR_LIMITS_RLIMIT } limits_by;
	bool private_home, private_tmp; /* landlock_only: directories made for the run */
	struct jr_landlock_plan landlock;
	char **envp;     /* the command's environment */
	char **scrubbed; /* names the policy removed, for --explain */
	struct jr_plan_clause *clauses;
	size_t n_clauses;
};

/* explain.c: pairs each policy clause with what enforces it. */
/* One formatted line to a jr_line_fn. */
void jr_emitf(jr_line_fn fn, void *ud, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int jr_plan_assess_clauses(const jr_policy_t *p, jr_plan_t *plan, jr_error_t **err);
/* Clause i of the policy is a setting a later line replaced. */
bool jr_plan_clause_overridden(const jr_plan_t *plan, size_t i);

/* Depth of an absolute path: "/" is 0, "/a/b" is 2. */
unsigned jr_path_depth(const char *path);
/* Lexical normalisation of an absolute path: collapses "//", "." and "..". */
char *jr_path_normalize(const char *path);
/* Resolves path (relative to the current directory) to its canonical form. */
int jr_path_canonical(const char *path, char **out, jr_error_t **err);
/* Like jr_path_canonical for an absolute path whose tail may not exist
 * yet: the existing prefix is resolved, the missing rest appended. */
int jr_path_canonical_missing_ok(const char *path, char **out, jr_error_t **err);
/* rm -rf that never follows a symlink nor leaves the filesystem. */
void jr_remove_tree(const char *path);
/* Whether path is dir or beneath it (both canonical). */
bool jr_path_is_beneath(const char *path, const char *dir);

/* ---- ids (userns.c) -------------------------------------------------- */

/* JR_ROOT_HOST_ID (config.h) is the host id a root caller's jail runs
 * as: a jail whose uid 0 is the host's uid 0 could still own root's
 * files, so root is mapped away, to an id no other user shares. */

struct jr_ids {
	uid_t inside_uid, outside_uid;
	gid_t inside_gid, outside_gid;
	bool caller_is_root;
};

void jr_ids_for_plan(const struct jr_plan *plan, struct jr_ids *ids);
/* namespaces false: Landlock-only isolation, a plain child with a pidfd. */
pid_t jr_clone_jail(bool namespaces, bool new_net, int *pidfd, jr_error_t **err);
int jr_write_id_maps(pid_t pid, const struct jr_ids *ids, jr_error_t **err);
int jr_become_ids(const struct jr_ids *ids, jr_error_t **err);

/* ---- mounts.c -------------------------------------------------------- */

/* Bind sources opened as detached mount trees, index-aligned with
 * plan->mounts (-1 for entries that are not binds). */
struct jr_mount_sources {
	int *fds;
	bool *is_dir;
	size_t n;
};

int jr_mount_sources_open(const struct jr_plan *plan, struct jr_mount_sources *src,
			  jr_error_t **err);
/* Root callers only: show the caller's own binds (workspace, --ro, --rw)
 * with the jail's ids standing for the caller's. */
int jr_mount_sources_idmap(const struct jr_plan *plan, struct jr_mount_sources *src,
			   int userns_fd, jr_error_t **err);
void jr_mount_sources_close(struct jr_mount_sources *src);
/* In the jail's mount namespace: assemble the root and pivot into it. */
int jr_mount_build_root(const struct jr_plan *plan, struct jr_mount_sources *src,
			jr_error_t **err);

/* ---- seccomp.c ------------------------------------------------------- */

/* Rules jailrun adds on its own (bits of extras). */
enum {
	JR_SC_EXTRA_SETID = 1,	       /* refuse setuid/setgid bits: a root caller's writable trees */
	JR_SC_EXTRA_LANDLOCK_ONLY = 2, /* no unix sockets by path, no SysV IPC */
	JR_SC_EXTRA_NO_IP = 4,	       /* with LANDLOCK_ONLY and net none: no IP sockets */
	JR_SC_EXTRA_NO_MEMFD_EXEC = 8, /* exec narrowing: memfds sealed against execution */
};
struct jr_seccomp;
int jr_seccomp_build(const jr_policy_t *p, unsigned extras, struct jr_seccomp *out,
		     jr_error_t **err);
/* In the command's process, last before execve.  count: hand the
 * supervisor (over ctl) a listener that sees every errno/log denial of
 * the policy's filter, when the policy lets the hand-over through. */
#define JR_CONFINE_COUNT 1u             /* hand over a listener (denials counted) */
#define JR_CONFINE_NO_BUILTIN_FILTER 2u /* jailrun's own filter left out (file workers) */
int jr_seccomp_load(const struct jr_seccomp *sc, int ctl, unsigned flags, jr_error_t **err);
/* bpf-eval.c: runs a seccomp program over data; 0 with *ret, or -EINVAL. */
struct sock_filter;
struct seccomp_data;
int jr_bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *data,
	       uint32_t *ret);
void jr_seccomp_free(struct jr_seccomp *sc);
/* Each rule as the filters get it: action as libseccomp's (SCMP_ACT_*),
 * conditions as struct scmp_arg_cmp; builtin for jailrun's own rules. */
struct scmp_arg_cmp;
typedef void (*jr_seccomp_rule_fn)(void *ud, bool builtin, uint32_t action, const char *name,
				   unsigned n, const struct scmp_arg_cmp *conds);
int jr_seccomp_rules(const jr_policy_t *p, unsigned extras, jr_seccomp_rule_fn fn, void *ud,
		     jr_error_t **err);

/* ---- landlock.c ------------------------------------------------------ */

int jr_landlock_abi(void);
int jr_landlock_plan(const jr_policy_t *p, const jr_plan_t *plan, struct jr_landlock_plan *ll,
		     jr_error_t **err);
void jr_landlock_plan_free(struct jr_landlock_plan *ll);
/* In the jail, after pivot_root (or in Landlock-only isolation, on the
 * host): a ruleset fd (-1 when Landlock is off); extra_rw is granted
 * every right (the private directory of Landlock-only isolation). */
int jr_landlock_ruleset(const struct jr_landlock_plan *ll, const char *extra_rw, int *fd,
			jr_error_t **err);
/* The egress proxy's process: read-only system trees, allowed ports. */
#define JR_PROXY_MAX_PORT_RULES 64
int jr_landlock_confine_proxy(const struct jr_egress *eg, jr_error_t **err);
/* In the command's process, after no_new_privs; closes the ruleset. */
int jr_landlock_restrict(const struct jr_landlock_plan *ll, int ruleset, jr_error_t **err);

/* ---- limits.c ------------------------------------------------------- */

struct jr_cgroup {
	char dirs[3][256];
	int n;
	const char *memory; /* the memory group, for the OOM count */
	const char *pids;   /* the pids group, for its peak */
};

void jr_limits_plan(const jr_policy_t *p, jr_plan_t *plan);
int jr_cgroup_create(const jr_plan_t *plan, struct jr_cgroup *cg, jr_error_t **err);
int jr_cgroup_attach(struct jr_cgroup *cg, pid_t pid, jr_error_t **err);
bool jr_cgroup_oom_killed(const struct jr_cgroup *cg);
/* High-water marks of memory (bytes) and pids, -1 where unknown. */
void jr_cgroup_peaks(const struct jr_cgroup *cg, int64_t *memory, int64_t *pids);
void jr_cgroup_destroy(struct jr_cgroup *cg);
/* The pieces egress_bpf.c shares for its cgroup v2 group: the caller's
 * group (controller NULL: in the v2 hierarchy; "" for the root); writes
 * value to dir/name; removes the jailrun-PID groups in dir whose jailrun
 * is gone; rmdir once the jail's last process has left. */
void jr_cgroup_own(const char *controller, char *out, size_t size);
int jr_cgroup_write(const char *dir, const char *name, const char *value, jr_error_t **err);
void jr_cgroup_collect_orphans(const char *dir);
void jr_cgroup_remove(const char *dir);

/* ---- placeholder.c --------------------------------------------------- */

struct jr_placeholder {
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size; /* as made; a file of another size was written to: kept */
};

struct jr_placeholders {
	struct jr_placeholder *v;
	size_t n;
	int *locks; /* shared flocks on the protected directories this run uses */
	size_t n_locks;
	int pool;        /* the spare placeholders kept between runs, or -1 */
	bool pool_exdev; /* on another filesystem than the placeholders */
};

int jr_placeholders_create(const struct jr_plan *plan, struct jr_placeholders *ph,
			   jr_error_t **err);
void jr_placeholders_remove(struct jr_placeholders *ph);

/* ---- caps.c, fds.c, net.c ------------------------------------------- */

int jr_caps_drop_all(jr_error_t **err);
int jr_set_no_new_privs(jr_error_t **err);
/* Points 0, 1 and 2 at /dev/null: a process that must hold none of the
 * caller's descriptors (init, a session's supervisor). */
void jr_stdio_to_devnull(void);
/* Closes every fd >= 3 except those listed. */
int jr_fds_close_except(const int *keep, size_t n_keep, jr_error_t **err);
int jr_net_loopback_up(jr_error_t **err);
/* net proxy, in the jail's namespace: 127.0.0.1:JR_PROXY_PORT, listening. */
int jr_net_proxy_listener(jr_error_t **err);
/* pasta.c: net pasta. */
const char *jr_pasta_path(void);
int jr_pasta_start(pid_t target, pid_t *pasta_pid, jr_error_t **err);
void jr_pasta_stop(pid_t pasta_pid);

/* ---- egress.c: the destinations allow host/cidr and resolve permit ---- */

/* Whether entry i of a list is in effect (no later !VALUE removed it). */
bool jr_str_entry_in_effect(const struct jr_str_list *l, size_t i);
int jr_egress_build(const jr_policy_t *p, struct jr_egress *eg, jr_error_t **err);
void jr_egress_free(struct jr_egress *eg);
bool jr_parse_pin(const char *text, struct jr_egress_pin *out);
bool jr_egress_normalize_name(const char *in, char *out, size_t size);
/* The first rule that lets name:port (or addr:port) through, or -1.  A
 * host rule without a port allows 443, and 80 unless for a raw tunnel
 * (CONNECT); a cidr rule without a port every port. */
int jr_egress_match_host(const struct jr_egress *eg, const char *name, uint16_t port, bool tunnel);
/* Whether some allow host rule names name, whatever its port. */
bool jr_egress_name_listed(const struct jr_egress *eg, const char *name);
int jr_egress_match_cidr(const struct jr_egress *eg, int family, const unsigned char *addr,
			 uint16_t port);
/* Loopback, private, link-local, multicast, reserved: never reached
 * through an allowed name unless a cidr rule covers the address. */
bool jr_egress_addr_internal(int family, const unsigned char *addr);
void jr_egress_canonical_addr(int *family, unsigned char addr[16]);
const struct jr_egress_pin *jr_egress_pinned(const struct jr_egress *eg, const char *name);
void jr_egress_format_addr(int family, const unsigned char *addr, char *out, size_t size);

/* Refused connections, counted by destination and rule (denials.c). */
struct jr_net_denial_count {
	char host[256];
	uint16_t port;
	char rule[160];
	unsigned long count;
};
struct jr_net_denials {
	struct jr_net_denial_count *v;
	size_t n, cap;
};
void jr_net_denials_add(struct jr_net_denials *d, const char *host, uint16_t port,
			const char *rule, unsigned long count);
int jr_net_denials_export(const struct jr_net_denials *d, struct jr_net_denial **out, size_t *n);
void jr_net_denials_free(struct jr_net_denials *d);

/* ---- proxy.c: net proxy, outside the jail ---------------------------- */

#define JR_PROXY_PORT 3128 /* on the jail's own 127.0.0.1 */

/* Forks the proxy process serving listen_fd (a listening TCP socket in
 * the jail's namespace), as ids' outside id when the caller is root.  Its refusals and log lines (one for each
 * connection let through too, with log_allowed) arrive on *report_fd
 * as datagrams for jr_proxy_read_report. */
struct jr_ids;
int jr_proxy_start(const struct jr_plan *plan, const struct jr_ids *ids, int listen_fd,
		   bool log_allowed, pid_t *pid, int *report_fd, jr_error_t **err);
/* One datagram from the proxy: a refusal is counted, a log line is
 * returned in line (empty otherwise).  1 when one was read, -1 when none
 * is waiting, 0 at end of stream. */
int jr_proxy_read_report(int report_fd, struct jr_net_denials *d, char *line, size_t size);
void jr_proxy_stop(pid_t pid);

/* ---- egress_bpf.c: the kernel CIDR filter for net host (libbpf) ------- */

struct jr_egress_bpf;
/* Whether this build and this process can attach cgroup connect/sendmsg
 * programs; why not, in why. */
bool jr_egress_bpf_usable(char *why, size_t size);
/* Loads the programs with eg's cidr rules and attaches them to a new
 * cgroup (v2) of the run's own. */
int jr_egress_bpf_start(const struct jr_egress *eg, struct jr_egress_bpf **out, jr_error_t **err);
/* Moves pid (init, before it is released) into that cgroup. */
int jr_egress_bpf_attach(struct jr_egress_bpf *bpf, pid_t pid, jr_error_t **err);
/* Adds the refusals the programs counted. */
void jr_egress_bpf_collect(struct jr_egress_bpf *bpf, struct jr_net_denials *d);
void jr_egress_bpf_stop(struct jr_egress_bpf *bpf);

/* ---- channel.c: supervisor <-> init messages ------------------------- */

enum jr_msg_type {
	JR_MSG_GO = 1,  /* supervisor -> init: ids mapped, build the jail */
	JR_MSG_PTY,     /* init -> supervisor: the pty master (fd attached) */
	JR_MSG_ERROR,   /* init -> supervisor: setup failed, text says where */
	JR_MSG_EXITED,  /* init -> supervisor: the command's wait status */
	JR_MSG_LOG,     /* init -> supervisor: a progress line */
	JR_MSG_TERMINATE, /* supervisor -> init: time is up, SIGTERM every process of the jail */
	JR_MSG_NOTIFY,  /* command -> supervisor: the seccomp listener (fd attached) */
	JR_MSG_CLIENT,  /* supervisor -> init: a session client's connection (fd attached) */
	JR_MSG_READY,   /* init -> supervisor: the session serves requests */
	JR_MSG_ACTIVE,  /* init -> supervisor: wait_status holds how many requests run */
	JR_MSG_PROXY,   /* init -> supervisor: the proxy's listening socket (fd attached) */
};

#define JR_GO_COUNT_DENIALS 1u /* hand the supervisor a seccomp listener */
#define JR_GO_SESSION 2u       /* serve requests instead of running one command */

struct jr_msg {
	uint32_t type;
	int32_t errnum;
	int32_t wait_status;
	int32_t exec_errno; /* EXITED: execve failed with this errno */
	int32_t pty_mask;   /* GO: the descriptors (bit n = fd n) the jail's pty replaces */
	uint32_t flags;     /* GO: JR_GO_* */
	struct winsize winsize; /* GO */
	char text[512];
};

int jr_msg_send(int sock, const struct jr_msg *msg, int pass_fd, jr_error_t **err);
/* Returns 1 with a message, 0 at end of stream. */
int jr_msg_recv(int sock, struct jr_msg *msg, int *pass_fd, jr_error_t **err);

/* ---- init.c: pid 1 --------------------------------------------------- */

struct jr_init_ctx {
	const struct jr_plan *plan;
	const struct jr_ids *ids;
	struct jr_mount_sources *sources; /* already open when the caller is root */
	const char *private_dir;          /* landlock_only: holds home/ and tmp/ */
	char *const *argv;
	char *const *envp;
	int ctl;                /* SEQPACKET socket to the supervisor */
	const int *dup_to;      /* [3]: a pipe end to put at fd n, or -1 (limit output) */
	const struct jr_session_info *session; /* a session's identity, or NULL */
};

__attribute__((noreturn)) void jr_init_main(const struct jr_init_ctx *ctx);
/* In a process forked from init, before it runs anything of the user's:
 * closes all descriptors but keep, drops capabilities, no_new_privs,
 * Landlock (closing ruleset), seccomp (see jr_seccomp_load for ctl and
 * count). */
int jr_confine(const struct jr_plan *plan, int ruleset, const int *keep, size_t n_keep, int ctl,
	       unsigned flags, jr_error_t **err);
/* The plan's rlimits; last thing before execve. */
int jr_apply_rlimits(const struct jr_plan *plan, jr_error_t **err);

/* ---- sessions (session.c inside the jail, session-host.c outside) ---- */

struct jr_session_info {
	char name[72];
	char digest[65];      /* sha256 of the policy the session runs */
	char policy_name[256];
	long long started_ms;
	unsigned idle_s;      /* stop after this long with nothing running; 0 = never */
};

/* supervisor.c: a session's supervisor (session-host.c starts it). */
int jr_session_supervise(const jr_plan_t *plan, const struct jr_session_info *info, int listen_fd,
			 int ready_fd, const struct jr_run_options *opts, jr_error_t **err);
/* session-host.c: an exec request on a connection, and its answer. */
int jr_session_exec_send(int fd, const char *digest, char *const argv[], char *const envp[],
			 const char *cwd, const int stdio[3], jr_error_t **err);
int jr_session_exec_result(int fd, struct jr_result *res, jr_error_t **err);

/* init's loop in a session: one client connection per request. */
__attribute__((noreturn)) void jr_session_serve(const struct jr_init_ctx *ctx, int signal_fd,
						int ruleset);

/* frame.c: length-prefixed JSON with descriptors. */
/* All of buf to a stream socket (MSG_NOSIGNAL, EINTR retried); -1 if not. */
int jr_send_all(int sock, const char *buf, size_t len);
#define JR_FRAME_MAX_FDS 3
struct cJSON;
int jr_frame_send(int sock, const struct cJSON *msg, const int *fds, size_t n_fds, jr_error_t **err);
int jr_frame_send_text(int sock, const char *text, const int *fds, size_t n_fds, jr_error_t **err);
/* 1 with *msg (and up to *n_fds descriptors), 0 at end of stream. */
int jr_frame_recv(int sock, struct cJSON **msg, int *fds, size_t *n_fds, jr_error_t **err);

/* fileops.c: one file operation of the agent API; result or {"error":...}. */
struct cJSON *jr_fileop(const char *workspace, const char *method, const struct cJSON *params);

/* text.c */
char *jr_base64_encode(const unsigned char *in, size_t len);
int jr_base64_decode(const char *in, unsigned char **out, size_t *len);
char *jr_utf8_sanitize(const char *in, size_t len);

/* ---- output.c: stdout/stderr through the supervisor ------------------ */

/* The byte budget of limit output, shared by every stream jailrun relays
 * (pipes and the pty alike). */
struct jr_output_budget {
	bool limited;
	uint64_t limit;
	uint64_t produced; /* everything the jail wrote */
	uint64_t passed;   /* what reached the caller */
	bool truncated;
	bool counting;     /* some stream is relayed, so produced means something */
};

#define JR_OUTPUT_MARKER_MAX 96
/* Admits n bytes just read into buf (of size cap >= n + JR_OUTPUT_MARKER_MAX):
 * returns how many to pass on, with the truncation marker appended the
 * one time the budget runs out. */
size_t jr_output_admit(struct jr_output_budget *b, char *buf, size_t n, size_t cap);

/* The command's stdout and stderr as pipes the supervisor copies out. */
struct jr_output_pipe {
	int read_fd;  /* supervisor's end, -1 when unused */
	int write_fd; /* the command's end, closed in the supervisor after the clone */
	int to_fd;    /* the caller's descriptor it is copied to (or own_to_fd) */
	int own_to_fd; /* a non-blocking reopen of it, jailrun's alone, or -1 */
	bool to_socket; /* written with MSG_DONTWAIT */
	char buf[16384 + JR_OUTPUT_MARKER_MAX];
	size_t len, off;
	bool eof;
};

struct jr_output {
	struct jr_output_budget budget;
	struct jr_output_pipe pipes[2]; /* [0] for stdout, [1] for stderr (or both) */
	int dup_to[3];                  /* per descriptor 0-2: pipe write end to put there, or -1 */
	int stdin_ro;                   /* stdin reopened read-only for the command, or -1 */
};

/* Nothing open: safe to close. */
void jr_output_init(struct jr_output *o);
/* Makes pipes for those of fds 1 and 2 that the pty does not cover. */
int jr_output_setup(struct jr_output *o, const struct jr_plan *plan, unsigned pty_mask,
		    jr_error_t **err);
/* After the clone: the command's ends now live in the jail only. */
void jr_output_close_write_ends(struct jr_output *o);
int jr_output_pollfds(struct jr_output *o, struct pollfd *pfd);
void jr_output_handle(struct jr_output *o, const struct pollfd *pfd, int n);
/* The jail is gone: copy out what is left. */
void jr_output_drain(struct jr_output *o);
void jr_output_close(struct jr_output *o);

/* ---- pty.c: supervisor side of the terminal relay -------------------- */

struct jr_pty_relay {
	int master;
	int in_fd, out_fd, term_fd; /* caller's side: keystrokes, output, the terminal */
	bool raw_set;
	struct termios saved;
	char to_master[4096], to_out[4096 + JR_OUTPUT_MARKER_MAX];
	size_t to_master_len, to_out_len;
	bool in_eof, send_eof, master_eof;
	char last_to_master; /* the last byte of input passed on */
	struct jr_output_budget *budget; /* limit output, shared with the pipes */
};

/* Which of the caller's descriptors 0-2 are terminals (bit n = fd n). */
unsigned jr_pty_tty_mask(void);
void jr_pty_relay_init(struct jr_pty_relay *relay);
/* mask: the descriptors the jail's pty stands in for. */
int jr_pty_relay_start(struct jr_pty_relay *relay, int master, unsigned mask, jr_error_t **err);
void jr_pty_relay_resize(struct jr_pty_relay *relay);
/* Poll set of the relay; returns how many entries it filled (<= 2). */
int jr_pty_relay_pollfds(struct jr_pty_relay *relay, struct pollfd *pfd);
void jr_pty_relay_handle(struct jr_pty_relay *relay, const struct pollfd *pfd, int n);
/* Copies whatever the master still has to stdout (the jail has exited). */
void jr_pty_relay_drain(struct jr_pty_relay *relay);
void jr_pty_relay_stop(struct jr_pty_relay *relay);
void jr_pty_relay_suspend(struct jr_pty_relay *relay);
void jr_pty_relay_resume(struct jr_pty_relay *relay);

/* ---- denials.c: seccomp denials counted by the supervisor ------------ */

struct jr_denial_count {
	int nr;
	uint32_t arch;
	unsigned long count;
};

struct jr_denials {
	struct jr_denial_count *v;
	size_t n, cap;
};

/* One notification from listener: counted, and answered as policy says. */
int jr_denials_handle(struct jr_denials *d, int listener, const struct jr_bpf *policy);
/* Named and sorted (most frequent first), for jr_result. */
int jr_denials_export(const struct jr_denials *d, struct jr_denial **out, size_t *n);
void jr_denials_free(struct jr_denials *d);

/* ---- providers (provider.c, provider-policy.c) ---------------------- */

/* The policy as a provider's open() gets it (jailrun-provider(7)). */
char *jr_provider_policy_json(const jr_policy_t *p, const jr_plan_t *plan);
/* Whether clause i is the backend's to enforce (not the local jail's
 * mechanism nor jailrun's own). */
bool jr_provider_clause_semantic(const jr_policy_t *p, size_t i);
/* Values of the secret-named keys of config, replaced by *** in text. */
void jr_redact(char *text, const char *const *config);
/* KEY=VALUE words of text with a secret-named KEY get *** for a value. */
void jr_redact_kv_words(char *text);

/* An instance of a provider, opened under the same fail-closed rule as
 * jr_provider_run (every semantic clause enforced, else refused and
 * closed); *failed_step says "setup" or "enforcement" on failure.  The
 * config and opts must outlive it. */
typedef struct jr_provider_conn jr_provider_conn_t;
struct jr_provider_error;
int jr_provider_open(jr_provider_handle_t *h, const jr_policy_t *policy, const jr_plan_t *plan,
		     const char *const *config, bool preserve, const struct jr_run_options *opts,
		     jr_provider_conn_t **out, const char **failed_step, jr_error_t **err);
/* close(), then frees c (NULL: nothing). */
int jr_provider_close(jr_provider_conn_t *c, jr_error_t **err);
const struct jr_provider *jr_provider_conn_table(const jr_provider_conn_t *c);
struct jr_provider_instance *jr_provider_conn_instance(const jr_provider_conn_t *c);
/* "provider NAME: WHAT: MESSAGE" into *err, secrets redacted; -1. */
int jr_provider_conn_fail(const jr_provider_conn_t *c, jr_error_t **err, const char *what,
			  struct jr_provider_error *pe);

/* ---- time ------------------------------------------------------------ */
uint64_t jr_now_us(void);

#endif
