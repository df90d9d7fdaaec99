/* jailrun-provider.h: the ABI of jailrun's provider plugins.
 *
 * A provider runs jailrun's contract (one policy, the same commands and
 * file operations) somewhere other than the local jail: a container, a
 * cloud sandbox, a remote host.  It is a shared object in
 * $(pkglibdir)/providers/ or a directory of $JAILRUN_PROVIDER_PATH that
 * exports
 *
 *     const struct jr_provider *jailrun_provider_v1(void);
 *
 * jailrun refuses a plugin whose table says another abi_version, or that
 * leaves a required method NULL.  See jailrun-provider(7).
 *
 * Conventions: every method returns 0 on success and -1 with *err filled
 * on failure (err->code an errno value when one applies, else 0; the
 * message one line, with no credential in it: jailrun redacts what it can,
 * but the provider knows its secrets best).  Memory a method returns is
 * malloc()ed and freed by jailrun with free().  Methods are called from one
 * thread at a time per instance.
 */
#ifndef JAILRUN_PROVIDER_H
#define JAILRUN_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JR_PROVIDER_ABI_VERSION 1

typedef struct jr_provider_instance jr_provider_instance_t; /* the provider's own */

struct jr_provider_error {
	int code;
	char message[1024];
};

typedef void (*jr_provider_log_fn)(void *userdata, const char *line);

/* What open() gets. */
struct jr_provider_open_args {
	size_t size; /* sizeof(struct jr_provider_open_args) as jailrun knows it */
	/* The policy, resolved: a JSON object described in jailrun-provider(7)
	 * under POLICY, with a "clauses" array the answer below follows. */
	const char *policy_json;
	/* The provider's configuration: "KEY=VALUE" strings from `provider
	 * NAME KEY=VALUE...` policy lines and --provider-opt, NULL-terminated. */
	const char *const *config;
	const char *workspace; /* the host directory the policy's workspace is */
	bool preserve;         /* --preserve: keep the backend's resources at close */
	jr_provider_log_fn log; /* progress lines (-v), or NULL */
	void *log_userdata;
	/* Lines the user must see whatever -v says (the id of a preserved
	 * container, a pull's progress); never NULL. */
	jr_provider_log_fn notice;
	void *notice_userdata;
};

/* open()'s answer for one clause of policy_json's "clauses" array: whether
 * the backend enforces it, and how (or why not).  jailrun refuses to run
 * when a clause that matters is not enforced (exit status 125). */
struct jr_provider_clause {
	bool enforced;
	char mechanism[256];
};

struct jr_provider_exec_args {
	size_t size;
	char *const *argv;
	char *const *envp;   /* the command's environment, the policy applied */
	const char *cwd;     /* NULL: the workspace */
	int stdin_fd;        /* the caller's descriptors: read input from, */
	int stdout_fd;       /* write output to */
	int stderr_fd;
	uint64_t timeout_ms;       /* 0: none; at the limit the command is killed */
	uint64_t max_output_bytes; /* 0: none; stdout+stderr beyond it dropped */
};

struct jr_provider_exec_result {
	int exit_code;  /* when it exited, else -1 */
	int signal;     /* the signal that ended it, else 0 */
	bool timed_out;
	bool truncated;
};

struct jr_provider_stat {
	char type; /* 'f' file, 'd' directory, 'l' symlink, 'o' other */
	uint64_t size;
	uint32_t mode;  /* permission bits */
	int64_t mtime;  /* seconds since the epoch */
};

struct jr_provider {
	uint32_t abi_version; /* JR_PROVIDER_ABI_VERSION */
	const char *name;
	const char *description;

	/* Required.  clauses has n_clauses zeroed entries to fill. */
	int (*open)(const struct jr_provider_open_args *args, jr_provider_instance_t **out,
		    struct jr_provider_clause *clauses, size_t n_clauses, struct jr_provider_error *err);
	int (*exec)(jr_provider_instance_t *inst, const struct jr_provider_exec_args *args,
		    struct jr_provider_exec_result *result, struct jr_provider_error *err);
	/* Paths are the jail's (absolute, or relative to the workspace). */
	int (*read_file)(jr_provider_instance_t *inst, const char *path, uint64_t max_bytes,
			 void **data, size_t *len, struct jr_provider_error *err);
	int (*write_file)(jr_provider_instance_t *inst, const char *path, const void *data, size_t len,
			  uint32_t mode, struct jr_provider_error *err);
	int (*stat)(jr_provider_instance_t *inst, const char *path, struct jr_provider_stat *st,
		    struct jr_provider_error *err);
	/* *names: a malloc()ed array of n malloc()ed entry names. */
	int (*readdir)(jr_provider_instance_t *inst, const char *path, char ***names, size_t *n,
		       struct jr_provider_error *err);
	int (*exists)(jr_provider_instance_t *inst, const char *path, bool *exists,
		      struct jr_provider_error *err);
	int (*mkdir)(jr_provider_instance_t *inst, const char *path, uint32_t mode, bool parents,
		     struct jr_provider_error *err);
	int (*rm)(jr_provider_instance_t *inst, const char *path, bool recursive,
		  struct jr_provider_error *err);
	/* Releases everything (unless preserve was asked); inst is gone after. */
	int (*close)(jr_provider_instance_t *inst, struct jr_provider_error *err);

	/* Optional: NULL when the backend lacks them. */
	int (*snapshot)(jr_provider_instance_t *inst, const char *label, char **id,
			struct jr_provider_error *err);
	int (*restore)(jr_provider_instance_t *inst, const char *id, struct jr_provider_error *err);
	int (*fork)(jr_provider_instance_t *inst, jr_provider_instance_t **copy,
		    struct jr_provider_error *err);
	int (*suspend)(jr_provider_instance_t *inst, struct jr_provider_error *err);
	int (*resume)(jr_provider_instance_t *inst, struct jr_provider_error *err);
	/* Optional: remove what runs killed with SIGKILL left behind
	 * (jailrun --provider NAME --gc); config as for open. */
	int (*gc)(const char *const *config, jr_provider_log_fn log, void *log_userdata,
		  struct jr_provider_error *err);
};

typedef const struct jr_provider *(*jr_provider_entry_fn)(void);
const struct jr_provider *jailrun_provider_v1(void);

#ifdef __cplusplus
}
#endif

#endif
