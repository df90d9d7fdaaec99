/* A provider plugin for the loader's tests (provider-core.sh): it runs
 * commands on the host with fork and exec, no jail at all, and answers
 * open() as its configuration says:
 *   refuse=DIRECTIVE  leaves the clauses of that directive unenforced
 *   record=PATH       writes the policy JSON and the config it got there
 *   fail=open         fails open with a message that quotes config
 * Built three more times with -DSTUB_BAD_ABI, -DSTUB_NO_EXEC and
 * -DSTUB_NO_ENTRY into plugins the loader must refuse. */
#define _GNU_SOURCE /* execvpe */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jailrun-provider.h"

struct jr_provider_instance {
	char *workspace;
};

static const char *config_get(const char *const *config, const char *key)
{
	size_t n = strlen(key);
	const char *found = NULL;
	for (size_t i = 0; config && config[i]; i++)
		if (!strncmp(config[i], key, n) && config[i][n] == '=')
			found = config[i] + n + 1;
	return found;
}

static int stub_open(const struct jr_provider_open_args *args, jr_provider_instance_t **out,
		     struct jr_provider_clause *clauses, size_t n, struct jr_provider_error *err)
{
	const char *record = config_get(args->config, "record");
	if (record) {
		FILE *f = fopen(record, "w");
		if (f) {
			fprintf(f, "%s\n", args->policy_json);
			for (size_t i = 0; args->config[i]; i++)
				fprintf(f, "config %s\n", args->config[i]);
			fclose(f);
		}
	}
	const char *fail = config_get(args->config, "fail");
	if (fail && !strcmp(fail, "open")) {
		snprintf(err->message, sizeof(err->message), "cannot log in with %s",
			 config_get(args->config, "api_token") ? config_get(args->config, "api_token") : "?");
		return -1;
	}
	const char *refuse = config_get(args->config, "refuse");
	/* The clauses arrive in policy order, each "directive" in the JSON;
	 * finding one by name in the text is enough for a stub. */
	const char *p = args->policy_json;
	const char *clauses_at = strstr(p, "\"clauses\":[");
	for (size_t i = 0; i < n; i++) {
		clauses[i].enforced = true;
		snprintf(clauses[i].mechanism, sizeof(clauses[i].mechanism), "the stub says so");
		const char *d = clauses_at ? strstr(clauses_at, "\"directive\":\"") : NULL;
		if (!d)
			continue;
		d += strlen("\"directive\":\"");
		if (refuse && !strncmp(d, refuse, strlen(refuse)) && d[strlen(refuse)] == '"') {
			clauses[i].enforced = false;
			snprintf(clauses[i].mechanism, sizeof(clauses[i].mechanism), "the stub cannot do %s", refuse);
		}
		clauses_at = d;
	}
	*out = calloc(1, sizeof(**out));
	if (!*out || !((*out)->workspace = strdup(args->workspace))) {
		free(*out);
		err->code = ENOMEM;
		return -1;
	}
	return 0;
}

static int stub_exec(jr_provider_instance_t *inst, const struct jr_provider_exec_args *a,
		     struct jr_provider_exec_result *res, struct jr_provider_error *err)
{
	pid_t pid = fork();
	if (pid < 0) {
		err->code = errno;
		return -1;
	}
	if (pid == 0) {
		dup2(a->stdin_fd, 0);
		dup2(a->stdout_fd, 1);
		dup2(a->stderr_fd, 2);
		if (chdir(a->cwd ? a->cwd : inst->workspace) < 0)
			_exit(126);
		execve(a->argv[0], a->argv, a->envp);
		execvpe(a->argv[0], a->argv, a->envp);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			err->code = errno;
			return -1;
		}
	res->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	res->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	return 0;
}

static int stub_unsupported(struct jr_provider_error *err)
{
	err->code = ENOTSUP;
	snprintf(err->message, sizeof(err->message), "not in the stub");
	return -1;
}

static int stub_read(jr_provider_instance_t *i, const char *p, uint64_t m, void **d, size_t *l,
		     struct jr_provider_error *e)
{
	(void)i, (void)p, (void)m, (void)d, (void)l;
	return stub_unsupported(e);
}
static int stub_write(jr_provider_instance_t *i, const char *p, const void *d, size_t l, uint32_t m,
		      struct jr_provider_error *e)
{
	(void)i, (void)p, (void)d, (void)l, (void)m;
	return stub_unsupported(e);
}
static int stub_stat(jr_provider_instance_t *i, const char *p, struct jr_provider_stat *s,
		     struct jr_provider_error *e)
{
	(void)i, (void)p, (void)s;
	return stub_unsupported(e);
}
static int stub_readdir(jr_provider_instance_t *i, const char *p, char ***v, size_t *n,
			struct jr_provider_error *e)
{
	(void)i, (void)p, (void)v, (void)n;
	return stub_unsupported(e);
}
static int stub_exists(jr_provider_instance_t *i, const char *p, bool *x, struct jr_provider_error *e)
{
	(void)i, (void)p, (void)x;
	return stub_unsupported(e);
}
static int stub_mkdir(jr_provider_instance_t *i, const char *p, uint32_t m, bool r,
		      struct jr_provider_error *e)
{
	(void)i, (void)p, (void)m, (void)r;
	return stub_unsupported(e);
}
static int stub_rm(jr_provider_instance_t *i, const char *p, bool r, struct jr_provider_error *e)
{
	(void)i, (void)p, (void)r;
	return stub_unsupported(e);
}
static int stub_close(jr_provider_instance_t *inst, struct jr_provider_error *e)
{
	(void)e;
	free(inst->workspace);
	free(inst);
	return 0;
}

static const struct jr_provider table = {
#ifdef STUB_BAD_ABI
	.abi_version = JR_PROVIDER_ABI_VERSION + 1,
#else
	.abi_version = JR_PROVIDER_ABI_VERSION,
#endif
	.name = STUB_NAME,
	.description = "test stub: runs commands on the host, unconfined",
	.open = stub_open,
#ifndef STUB_NO_EXEC
	.exec = stub_exec,
#endif
	.read_file = stub_read,
	.write_file = stub_write,
	.stat = stub_stat,
	.readdir = stub_readdir,
	.exists = stub_exists,
	.mkdir = stub_mkdir,
	.rm = stub_rm,
	.close = stub_close,
};

#ifndef STUB_NO_ENTRY
const struct jr_provider *jailrun_provider_v1(void)
{
	return &table;
}
#endif
