/* struct jr_policy: a policy as written, after parsing and validation,
 * before anything is resolved against this host.  Every clause keeps
 * where it came from, so later errors and --explain can point at it. */
#ifndef JR_POLICY_H
#define JR_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "jailrun.h"
#include "sha256.h"

struct jr_source {
	char *name;          /* file path, or "<command line>" */
	char *path;          /* canonical path of a file, NULL for the command line */
	char *included_from; /* "default.pol:3, ..." or NULL */
};

struct jr_loc {
	const struct jr_source *src;
	unsigned line, col;
};

/* Formats "file:line:col: message (included from ...)" into *err. */
int jr_fail_at(jr_error_t **err, const struct jr_loc *loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same for a failed system call: appends strerror(errnum), keeps errnum. */
int jr_fail_at_errno(jr_error_t **err, const struct jr_loc *loc, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- filesystem entries, in the order written ------------------------ */

enum jr_fs_kind {
	JR_FS_RO,
	JR_FS_RW,
	JR_FS_TMPFS,
	JR_FS_MASK,
	JR_FS_PROTECT,
	JR_FS_EXEC,
};

struct jr_fs_entry {
	enum jr_fs_kind kind;
	char *path;    /* unexpanded: may hold ~, $WORKSPACE, ${NAME} */
	bool optional; /* PATH? */
	bool dir;      /* PATH/: names a directory (protect: the placeholder's kind) */
	bool remove;   /* !PATH: drops earlier entries of the same kind */
	uint64_t size; /* tmpfs size=, 0 = kernel default */
	mode_t mode;
	bool has_mode;
	struct jr_loc loc;
};

/* ---- string lists ---------------------------------------------------- */

enum jr_list_id {
	JR_LIST_ALLOW_HOST,
	JR_LIST_ALLOW_CIDR,
	JR_LIST_ALLOW_CONNECT,
	JR_LIST_ALLOW_BIND,
	JR_LIST_ENV_KEEP,
	JR_LIST_ENV_SCRUB,
	JR_LIST_ENV_SET,
	JR_LIST_CAPS_KEEP,
	JR_LIST_LANDLOCK_SCOPE,
	JR_LIST_RESOLVE, /* resolve NAME:ADDR */
	JR_LIST_PROVIDER, /* provider NAME KEY=VALUE: "NAME KEY=VALUE" */
	JR_LIST_COUNT,
};

struct jr_str_entry {
	char *value;
	bool remove;
	struct jr_loc loc;
};

struct jr_str_list {
	struct jr_str_entry *v;
	size_t n;
};

/* ---- scalar settings: the last one wins ------------------------------ */

struct jr_setting {
	bool set;
	struct jr_loc loc;
};

enum jr_workspace_mode { JR_WS_RW, JR_WS_RO, JR_WS_OVERLAY };
enum jr_home_mode { JR_HOME_TMPFS, JR_HOME_RO, JR_HOME_RW };
enum jr_net_mode { JR_NET_NONE, JR_NET_HOST, JR_NET_PROXY, JR_NET_PASTA };
enum jr_env_mode { JR_ENV_INHERIT, JR_ENV_CLEAR };
enum jr_caps_mode { JR_CAPS_NONE, JR_CAPS_KEEP };

enum jr_limit_id {
	JR_LIMIT_MEMORY,
	JR_LIMIT_PIDS,
	JR_LIMIT_CPU,
	JR_LIMIT_TIME,
	JR_LIMIT_NOFILE,
	JR_LIMIT_FSIZE,
	JR_LIMIT_CORE,
	JR_LIMIT_OUTPUT,
	JR_LIMIT_KILL_AFTER,
	JR_LIMIT_COUNT,
};

struct jr_limit {
	struct jr_setting s;
	uint64_t value; /* bytes, count, thousandths of a CPU, or milliseconds */
};

/* ---- seccomp --------------------------------------------------------- */

enum jr_sc_action { JR_SC_ALLOW, JR_SC_KILL, JR_SC_LOG, JR_SC_ERRNO };

struct jr_sc_cond {
	unsigned arg;  /* 0-5 */
	enum { JR_CMP_EQ, JR_CMP_NE, JR_CMP_LT, JR_CMP_LE, JR_CMP_GT, JR_CMP_GE, JR_CMP_MASKED_EQ } op;
	uint64_t value;
	uint64_t mask; /* JR_CMP_MASKED_EQ */
};

struct jr_sc_rule {
	bool allow;              /* seccomp allow ..., else deny */
	enum jr_sc_action action;
	int errnum;              /* JR_SC_ERRNO */
	char **names;            /* syscalls and @groups */
	size_t n_names;
	struct jr_sc_cond conds[6];
	size_t n_conds;
	struct jr_loc loc;
};

/* ---- every clause as written, for --explain and fail-closed checks ---- */

enum jr_clause_type {
	JR_CL_WORKSPACE, JR_CL_RO, JR_CL_RW, JR_CL_TMPFS, JR_CL_MASK, JR_CL_PROTECT, JR_CL_EXEC,
	JR_CL_HOME, JR_CL_NET, JR_CL_ALLOW, JR_CL_ENV, JR_CL_USER, JR_CL_HOSTNAME, JR_CL_CAPS,
	JR_CL_LIMIT, JR_CL_SECCOMP, JR_CL_LANDLOCK, JR_CL_ISOLATION, JR_CL_GUARD, JR_CL_RESOLVE, JR_CL_PROVIDER,
};

struct jr_clause {
	enum jr_clause_type type;
	char *text; /* the directive as written, tokens joined by one space */
	struct jr_loc loc;
};

struct jr_policy {
	struct jr_source **sources;
	size_t n_sources;
	char *name; /* the policy asked for, for reports */

	struct jr_clause *clauses;
	size_t n_clauses;

	char *workspace; /* NULL: the current directory */
	enum jr_workspace_mode workspace_mode;
	struct jr_setting workspace_s;

	struct jr_fs_entry *fs;
	size_t n_fs;

	enum jr_home_mode home;
	struct jr_setting home_s;
	enum jr_net_mode net;
	struct jr_setting net_s;
	enum jr_env_mode env;
	struct jr_setting env_s;
	struct jr_str_list lists[JR_LIST_COUNT];

	enum jr_user_mode user;
	uid_t user_uid;
	gid_t user_gid;
	struct jr_setting user_s;
	char *hostname;
	struct jr_setting hostname_s;
	enum jr_caps_mode caps;
	struct jr_setting caps_s;
	struct jr_limit limits[JR_LIMIT_COUNT];

	enum jr_sc_action seccomp_default;
	int seccomp_default_errno;
	struct jr_setting seccomp_default_s;
	struct jr_sc_rule *rules;
	size_t n_rules;

	enum { JR_ISO_NAMESPACES, JR_ISO_LANDLOCK } isolation;
	struct jr_setting isolation_s;

	int landlock_abi; /* required ABI, 0 = none asked */
	bool landlock_best_effort;
	struct jr_setting landlock_s;

	bool guard_read_before_write; /* the agent API refuses blind overwrites */

	int *keep_fds;
	size_t n_keep_fds;
	unsigned command_lines; /* lines added with jr_policy_add_line so far */
	/* Of the resolved text: every file read and every line added, in
	 * order, so the report names exactly what the run was under. */
	struct jr_sha256 digest;
};

/* policy.c: storage helpers for the parser */
struct jr_source *jr_policy_add_source(jr_policy_t *p, const char *name, const char *path,
				       const char *included_from, jr_error_t **err);
int jr_policy_add_clause(jr_policy_t *p, enum jr_clause_type type, const char *text,
			 const struct jr_loc *loc, jr_error_t **err);
int jr_policy_add_fs(jr_policy_t *p, const struct jr_fs_entry *e, jr_error_t **err);
int jr_policy_add_str(jr_policy_t *p, enum jr_list_id list, const char *value, bool remove,
		      const struct jr_loc *loc, jr_error_t **err);
int jr_policy_add_rule(jr_policy_t *p, struct jr_sc_rule *rule, jr_error_t **err);
int jr_policy_set_string(char **slot, const char *value, jr_error_t **err);

/* policy-parse.c */
struct jr_policy_search {
	char **dirs;
	size_t n;
};
/* The search path of DESIGN §4: $JAILRUN_POLICY_PATH, ~/.config/jailrun/policy,
 * /etc/jailrun/policy, $(datadir)/jailrun/policy. */
int jr_policy_search_init(struct jr_policy_search *s, jr_error_t **err);
void jr_policy_search_free(struct jr_policy_search *s);

/* Edit distance, for "did you mean". */
unsigned jr_edit_distance(const char *a, const char *b);

#endif
