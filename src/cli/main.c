/* jailrun(1): options -> libjailrun calls.  All behaviour lives in the
 * library; this file parses, prints and picks the exit status. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jailrun.h"

enum {
	OPT_RO = 0x100,
	OPT_RW,
	OPT_TMPFS,
	OPT_MASK,
	OPT_HOSTNAME,
	OPT_NET,
	OPT_RESOLVE,
	OPT_ENV,
	OPT_KEEP_ENV,
	OPT_KEEP_FD,
	OPT_LINT,
	OPT_EXPLAIN,
	OPT_DOCTOR,
	OPT_ISOLATION,
	OPT_TIMEOUT,
	OPT_KILL_AFTER,
	OPT_VERSION,
	OPT_PTY,
	OPT_NO_PTY,
	OPT_REPORT,
	OPT_MEMORY,
	OPT_PIDS,
	OPT_OUTPUT_LIMIT,
	OPT_SESSION,
	OPT_STOP,
	OPT_LIST,
	OPT_IDLE,
	OPT_PROVIDER,
	OPT_PROVIDER_OPT,
	OPT_PRESERVE,
	OPT_LIST_PROVIDERS,
	OPT_GC,
};

static const struct option long_options[] = {
	{ "policy", required_argument, NULL, 'p' },
	{ "set", required_argument, NULL, 'D' },
	{ "workspace", required_argument, NULL, 'w' },
	{ "ro", required_argument, NULL, OPT_RO },
	{ "rw", required_argument, NULL, OPT_RW },
	{ "tmpfs", required_argument, NULL, OPT_TMPFS },
	{ "mask", required_argument, NULL, OPT_MASK },
	{ "hostname", required_argument, NULL, OPT_HOSTNAME },
	{ "net", required_argument, NULL, OPT_NET },
	{ "resolve", required_argument, NULL, OPT_RESOLVE },
	{ "env", required_argument, NULL, OPT_ENV },
	{ "keep-env", required_argument, NULL, OPT_KEEP_ENV },
	{ "keep-fd", required_argument, NULL, OPT_KEEP_FD },
	{ "lint", no_argument, NULL, OPT_LINT },
	{ "explain", no_argument, NULL, OPT_EXPLAIN },
	{ "doctor", no_argument, NULL, OPT_DOCTOR },
	{ "isolation", required_argument, NULL, OPT_ISOLATION },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "kill-after", required_argument, NULL, OPT_KILL_AFTER },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "pids", required_argument, NULL, OPT_PIDS },
	{ "output-limit", required_argument, NULL, OPT_OUTPUT_LIMIT },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "session", required_argument, NULL, OPT_SESSION },
	{ "stop", no_argument, NULL, OPT_STOP },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "idle", required_argument, NULL, OPT_IDLE },
	{ "provider", required_argument, NULL, OPT_PROVIDER },
	{ "provider-opt", required_argument, NULL, OPT_PROVIDER_OPT },
	{ "preserve", no_argument, NULL, OPT_PRESERVE },
	{ "list-providers", no_argument, NULL, OPT_LIST_PROVIDERS },
	{ "gc", no_argument, NULL, OPT_GC },
	{ "pty", no_argument, NULL, OPT_PTY },
	{ "no-pty", no_argument, NULL, OPT_NO_PTY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
	fputs("Usage: jailrun [OPTIONS] [--] COMMAND [ARG...]\n"
	      "       jailrun --policy NAME --lint | --explain\n"
	      "       jailrun --session NAME [OPTIONS] [--] COMMAND [ARG...] | --stop | --list\n"
	      "       jailrun serve | mcp [--session NAME | --provider NAME] [OPTIONS]\n"
	      "       jailrun sessions\n"
	      "Run COMMAND in a jail: new user, mount, pid, net, ipc, uts and cgroup\n"
	      "namespaces; the system read-only, the workspace read-write, secrets hidden.\n"
	      "\n"
	      "  -p, --policy FILE|NAME  policy to apply (default: default.pol); a NAME is\n"
	      "                          searched in $JAILRUN_POLICY_PATH, ~/.config/jailrun/policy,\n"
	      "                          /etc/jailrun/policy and the installed policies\n"
	      "  -D, --set 'LINE'        append one policy line (repeatable)\n"
	      "  -w, --workspace DIR     read-write workspace and working directory (default: .)\n"
	      "      --ro PATH           show PATH read-only (repeatable)\n"
	      "      --rw PATH           show PATH read-write (repeatable)\n"
	      "      --tmpfs PATH        mount an empty tmpfs at PATH (repeatable)\n"
	      "      --mask PATH         hide PATH behind an empty read-only file or directory\n"
	      "      --hostname NAME     hostname inside (default: jailrun)\n"
	      "      --net MODE          network: none (own namespace, lo only), host (the\n"
	      "                          host's; TCP ports as allow connect/bind say), proxy\n"
	      "                          (own namespace; jailrun's egress proxy lets through\n"
	      "                          what allow host/cidr say) or pasta (own namespace,\n"
	      "                          user-mode networking)\n"
	      "      --resolve NAME:ADDR the egress proxy's answer for NAME (repeatable;\n"
	      "                          internal addresses still need allow cidr)\n"
	      "      --isolation MODE    namespaces (default) or landlock: no namespaces,\n"
	      "                          Landlock and seccomp alone (where user namespaces\n"
	      "                          are unavailable; refuses what it cannot enforce)\n"
	      "      --timeout SECONDS   wall-clock limit: SIGTERM to the whole jail, SIGKILL\n"
	      "                          --kill-after SECONDS later (default 2); exit 124\n"
	      "      --memory SIZE       memory limit (limit memory SIZE), e.g. 512M\n"
	      "      --pids N            process limit (limit pids N)\n"
	      "      --output-limit SIZE pass at most SIZE bytes of stdout+stderr, then a\n"
	      "                          truncation marker (limit output SIZE)\n"
	      "      --report FILE|-     write a JSON report of the run to FILE (- = stderr),\n"
	      "                          also when it fails; counts seccomp denials\n"
	      "      --session NAME      run COMMAND in the persistent jail NAME, starting it\n"
	      "                          if it is not running; with --stop, stop it; with\n"
	      "                          --list, list the running sessions\n"
	      "      --idle SECONDS      a session started now stops after SECONDS idle\n"
	      "      --provider NAME     run COMMAND through a provider plugin (docker, command,\n"
	      "                          ...; see jailrun-provider(7)) under the same policy:\n"
	      "                          a clause it does not enforce stops the run (125);\n"
	      "                          with serve and mcp, every request goes through it\n"
	      "      --provider-opt KEY=VALUE  the provider's configuration (repeatable)\n"
	      "      --preserve          keep the provider's resources (a container) after the run\n"
	      "      --list-providers    list the providers found, with their ABI and paths\n"
	      "      --gc                with --provider: remove what killed runs left behind\n"
	      "  serve                   JSON-RPC 2.0 server on stdin/stdout (one object a line)\n"
	      "  mcp                     Model Context Protocol server on stdin/stdout\n"
	      "      --env NAME=VALUE    set a variable in the command's environment\n"
	      "      --keep-env NAME     pass NAME even if the policy scrubs it\n"
	      "      --keep-fd N         pass descriptor N into the jail (repeatable)\n"
	      "      --lint              check the policy and exit (0 ok, 125 not)\n"
	      "      --explain           print the resolved plan: every clause and what\n"
	      "                          enforces it on this host; run nothing\n"
	      "      --doctor            check what this host supports, with fixes; run\n"
	      "                          nothing (exit 0 when the full jail works)\n"
	      "      --pty, --no-pty     force or forbid a pty (default: when stdin and stdout\n"
	      "                          are terminals)\n"
	      "  -v, --verbose           print the plan and the setup steps with timings\n"
	      "      --version           print the version\n"
	      "  -h, --help              print this help\n"
	      "\n"
	      "Each override is one policy line appended after the policy, in the order\n"
	      "given (--ro P is 'ro P').  Exit status: COMMAND's own; 128+N if it died of\n"
	      "signal N; 124 if the time limit ended it; 125 if jailrun failed; 126 if\n"
	      "COMMAND is not executable; 127 if it was not found.\n",
	      out);
}

static void print_line(void *userdata, const char *line)
{
	fprintf(userdata ? userdata : stderr, "%s%s\n", userdata ? "" : "jailrun: ", line);
}

static int fail(jr_error_t *err)
{
	fprintf(stderr, "jailrun: %s\n", err ? err->message : "unknown error");
	jr_error_free(err);
	return JR_EXIT_FAILURE;
}

static int parse_fd(const char *arg, int *fd)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || v < 0 || v > INT_MAX)
		return -1;
	*fd = (int)v;
	return 0;
}

/* One override, kept until the policy itself is loaded. */
struct override {
	const char *directive; /* NULL: arg is a whole line (-D) */
	char *arg;
};

struct cli {
	const char *policy;
	struct override overrides[256];
	size_t n_overrides;
	int keep_fds[JR_MAX_KEEP_FDS + 1];
	size_t n_keep_fds;
	bool verbose, lint, explain;
	int pty;
	const char *report; /* --report: a path, or "-" for stderr */
	const char *session;
	bool stop, list;
	unsigned idle_s;
	const char *provider;          /* --provider NAME */
	char *provider_opts[65];       /* --provider-opt KEY=VALUE, NULL-terminated */
	size_t n_provider_opts;
	bool preserve, list_providers, gc;
	enum { MODE_RUN, MODE_SERVE, MODE_MCP, MODE_SESSIONS } mode;
};

static int add_override(struct cli *cli, const char *directive, const char *arg)
{
	if (cli->n_overrides == sizeof(cli->overrides) / sizeof(cli->overrides[0])) {
		fputs("jailrun: too many overrides on the command line\n", stderr);
		return JR_EXIT_FAILURE;
	}
	char *copy = strdup(arg);
	if (!copy) {
		fputs("jailrun: out of memory\n", stderr);
		return JR_EXIT_FAILURE;
	}
	cli->overrides[cli->n_overrides++] = (struct override){ directive, copy };
	return -1;
}

/* Returns -1 to continue, or the exit status to stop with. */
static int parse_option(struct cli *cli, int opt, const char *arg)
{
	int fd;
	switch (opt) {
	case 'p':
		cli->policy = arg;
		return -1;
	case 'D':
		return add_override(cli, NULL, arg);
	case 'w':
		return add_override(cli, "workspace", arg);
	case OPT_RO:
		return add_override(cli, "ro", arg);
	case OPT_RW:
		return add_override(cli, "rw", arg);
	case OPT_TMPFS:
		return add_override(cli, "tmpfs", arg);
	case OPT_MASK:
		return add_override(cli, "mask", arg);
	case OPT_HOSTNAME:
		return add_override(cli, "hostname", arg);
	case OPT_NET:
		return add_override(cli, "net", arg);
	case OPT_RESOLVE:
		return add_override(cli, "resolve", arg);
	case OPT_ISOLATION:
		return add_override(cli, "isolation", arg);
	case OPT_TIMEOUT:
		return add_override(cli, "limit time", arg);
	case OPT_KILL_AFTER:
		return add_override(cli, "limit kill-after", arg);
	case OPT_MEMORY:
		return add_override(cli, "limit memory", arg);
	case OPT_PIDS:
		return add_override(cli, "limit pids", arg);
	case OPT_OUTPUT_LIMIT:
		return add_override(cli, "limit output", arg);
	case OPT_SESSION:
		cli->session = arg;
		return -1;
	case OPT_STOP:
		cli->stop = true;
		return -1;
	case OPT_LIST:
		cli->list = true;
		return -1;
	case OPT_IDLE: {
		char *end;
		errno = 0;
		unsigned long v = strtoul(arg, &end, 10);
		if (errno || *end || end == arg || v == 0 || v > 30 * 86400) {
			fprintf(stderr, "jailrun: --idle '%s': a number of seconds, 1 to 2592000\n", arg);
			return JR_EXIT_FAILURE;
		}
		cli->idle_s = (unsigned)v;
		return -1;
	}
	case OPT_PROVIDER:
		cli->provider = arg;
		return -1;
	case OPT_PROVIDER_OPT:
		if (!strchr(arg, '=') || arg[0] == '=') {
			fprintf(stderr, "jailrun: --provider-opt: '%s' is not KEY=VALUE\n", arg);
			return JR_EXIT_FAILURE;
		}
		if (cli->n_provider_opts == 64) {
			fputs("jailrun: too many --provider-opt\n", stderr);
			return JR_EXIT_FAILURE;
		}
		cli->provider_opts[cli->n_provider_opts++] = (char *)arg;
		return -1;
	case OPT_PRESERVE:
		cli->preserve = true;
		return -1;
	case OPT_LIST_PROVIDERS:
		cli->list_providers = true;
		return -1;
	case OPT_GC:
		cli->gc = true;
		return -1;
	case OPT_REPORT:
		if (!*arg) {
			fputs("jailrun: --report: empty file name (use - for stderr)\n", stderr);
			return JR_EXIT_FAILURE;
		}
		cli->report = arg;
		return -1;
	case OPT_ENV:
		return add_override(cli, "env set", arg);
	case OPT_KEEP_ENV:
		return add_override(cli, "env keep", arg);
	case OPT_KEEP_FD:
		if (parse_fd(arg, &fd) < 0) {
			fprintf(stderr, "jailrun: --keep-fd '%s': not a descriptor number\n", arg);
			return JR_EXIT_FAILURE;
		}
		if (cli->n_keep_fds == JR_MAX_KEEP_FDS + 1) {
			fprintf(stderr, "jailrun: --keep-fd: at most %d descriptors\n", JR_MAX_KEEP_FDS);
			return JR_EXIT_FAILURE;
		}
		cli->keep_fds[cli->n_keep_fds++] = fd;
		return -1;
	case OPT_LINT:
		cli->lint = true;
		return -1;
	case OPT_EXPLAIN:
		cli->explain = true;
		return -1;
	case OPT_DOCTOR:
		return jr_doctor(print_line, stdout);
	case OPT_PTY:
		cli->pty = 1;
		return -1;
	case OPT_NO_PTY:
		cli->pty = 0;
		return -1;
	case 'v':
		cli->verbose = true;
		return -1;
	case OPT_VERSION:
		printf("jailrun %s\n", jr_version());
		return 0;
	case 'h':
		usage(stdout);
		return 0;
	default:
		fputs("Try 'jailrun --help'.\n", stderr);
		return JR_EXIT_FAILURE;
	}
}

/* The policy file, then the overrides in command-line order. */
static int build_policy(struct cli *cli, jr_policy_t *policy, jr_error_t **err)
{
	if (jr_policy_load(policy, cli->policy ? cli->policy : "default", err) < 0)
		return -1;
	for (size_t i = 0; i < cli->n_overrides; i++) {
		const struct override *o = &cli->overrides[i];
		int r = o->directive ? jr_policy_add_directive(policy, o->directive, o->arg, err)
				     : jr_policy_add_line(policy, o->arg, err);
		if (r < 0)
			return -1;
	}
	for (size_t i = 0; i < cli->n_keep_fds; i++)
		if (jr_policy_keep_fd(policy, cli->keep_fds[i], err) < 0)
			return -1;
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The report's destination, opened before anything runs (a report that
 * cannot be written is found out before the command has had any effect)
 * and written after the whole jail is gone.  The jail may have written
 * where the report goes (the workspace): the file is opened without
 * following a symlink at its name, must be a regular file (a FIFO there
 * would hang jailrun), is written through the descriptor opened here,
 * and must still be the file at that name afterwards. */
struct report_sink {
	int fd;      /* -1: none; STDERR_FILENO for '-' */
	int dir_fd;  /* the directory holding it */
	char *dir, *base;
};

static void report_sink_close(struct report_sink *r)
{
	if (r->fd > STDERR_FILENO)
		close(r->fd);
	if (r->dir_fd >= 0)
		close(r->dir_fd);
	free(r->dir);
	free(r->base);
}

/* The directory, at once: a report that cannot be written is found out
 * before anything runs. */
static int open_report_dir(const char *path, struct report_sink *r)
{
	*r = (struct report_sink){ .fd = -1, .dir_fd = -1 };
	if (!strcmp(path, "-")) {
		r->fd = STDERR_FILENO;
		return 0;
	}
	const char *slash = strrchr(path, '/');
	r->dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	r->base = strdup(slash ? slash + 1 : path);
	if (!r->dir || !r->base || !*r->base || !strcmp(r->base, ".") || !strcmp(r->base, "..")) {
		fprintf(stderr, "jailrun: --report %s: not a file name\n", path);
		return -1;
	}
	r->dir_fd = open(r->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->dir_fd < 0) {
		fprintf(stderr, "jailrun: --report %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* A report directory reached through a symlink that sits in a tree the
 * jail can write could have been redirected by an earlier jail: refused. */
static int check_report_dir(const struct report_sink *r, const jr_plan_t *plan, const char *path)
{
	if (r->fd == STDERR_FILENO)
		return 0;
	char *cwd = getcwd(NULL, 0), *given = NULL;
	int bad = 0;
	if (cwd && asprintf(&given, "%s/%s", r->dir[0] == '/' ? "" : cwd, r->dir) >= 0) {
		for (char *p = given + 1; !bad; p++) {
			if (*p != '/' && *p)
				continue;
			char saved = *p;
			*p = '\0';
			struct stat st;
			if (lstat(given, &st) == 0 && S_ISLNK(st.st_mode)) {
				char *slash = strrchr(given, '/');
				*slash = '\0';
				char *parent = realpath(*given ? given : "/", NULL);
				bad = !plan || (parent && jr_plan_host_writable(plan, parent));
				free(parent);
				*slash = '/';
			}
			*p = saved;
			if (!saved)
				break;
		}
	}
	if (bad)
		fprintf(stderr, "jailrun: --report %s: its directory is reached through a symbolic link inside a tree the jail can write; refusing\n",
			path);
	free(cwd);
	free(given);
	return bad ? -1 : 0;
}

/* The file itself, once the plan says which trees the jail could have
 * changed (plan NULL: the policy failed; then no symlink at all is
 * trusted on the way).  Never through a symlink at its name, and only a
 * regular file (a FIFO there would hang jailrun). */
static int open_report_file(struct report_sink *r, const jr_plan_t *plan, const char *path)
{
	if (r->fd == STDERR_FILENO)
		return 0;
	if (check_report_dir(r, plan, path) < 0)
		return -1;
	r->fd = openat(r->dir_fd, r->base,
		       O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
	struct stat st;
	if (r->fd < 0) {
		fprintf(stderr, "jailrun: --report %s: %s\n", path,
			errno == ELOOP ? "is a symbolic link; refusing to write through it" : strerror(errno));
		return -1;
	}
	if (fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode) || ftruncate(r->fd, 0) < 0) {
		fprintf(stderr, "jailrun: --report %s: %s\n", path,
			S_ISREG(st.st_mode) ? strerror(errno) : "not a regular file");
		return -1;
	}
	return 0;
}

static int write_report(struct cli *cli, const struct report_sink *sink, const struct jr_report_input *in)
{
	jr_error_t *err = NULL;
	char *json = NULL;
	if (jr_report_json(in, &json, &err) < 0) {
		fprintf(stderr, "jailrun: report: %s\n", err->message);
		jr_error_free(err);
		return -1;
	}
	int fd = sink->fd;
	bool is_file = fd != STDERR_FILENO;
	if (is_file && ftruncate(fd, 0) < 0) {
		fprintf(stderr, "jailrun: --report %s: %s\n", cli->report, strerror(errno));
		free(json);
		return -1;
	}
	size_t len = strlen(json), done = 0;
	while (done < len) {
		ssize_t w = is_file ? pwrite(fd, json + done, len - done, (off_t)done)
				    : write(fd, json + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "jailrun: --report %s: %s\n", cli->report,
				w < 0 ? strerror(errno) : "short write");
			free(json);
			return -1;
		}
		done += (size_t)w;
	}
	free(json);
	struct stat opened, named;
	if (is_file && (fstat(fd, &opened) < 0 ||
			fstatat(sink->dir_fd, sink->base, &named, AT_SYMLINK_NOFOLLOW) < 0 ||
			opened.st_dev != named.st_dev || opened.st_ino != named.st_ino)) {
		fprintf(stderr, "jailrun: --report %s: replaced during the run; the file there now is not jailrun's report\n",
			cli->report);
		return -1;
	}
	return 0;
}

static void print_outcome(const struct jr_result *result, char **argv)
{
	if (result->oom_killed)
		fputs("jailrun: the memory limit was reached: the kernel's OOM killer ended a process of the jail\n",
		      stderr);
	if (result->exec_errno)
		fprintf(stderr, "jailrun: %s: %s\n", argv[0],
			result->exec_errno == ENOENT ? "command not found" : strerror(result->exec_errno));
}

/* The command through a provider plugin, under the same policy. */
static int run_provider(struct cli *cli, jr_provider_handle_t *provider, const jr_policy_t *policy,
			const jr_plan_t *plan, char **argv, const struct jr_run_options *opts,
			struct jr_result *result, jr_error_t **err)
{
	char **config = jr_provider_config(policy, cli->provider, cli->provider_opts);
	if (!config) {
		result->failed_step = "setup";
		if ((*err = calloc(1, sizeof(**err))))
			(*err)->message = strdup("out of memory");
		return -1;
	}
	int r = jr_provider_run(provider, policy, plan, (const char *const *)config, cli->preserve, argv,
				opts, result, err);
	jr_strv_free(config);
	return r;
}

static int collect_garbage(struct cli *cli, jr_policy_t *policy)
{
	jr_error_t *err = NULL;
	jr_provider_handle_t *provider = NULL;
	if (!cli->provider) {
		fputs("jailrun: --gc needs --provider NAME\n", stderr);
		return JR_EXIT_FAILURE;
	}
	/* The policy only for its provider lines, and only when named: the
	 * leftovers of killed runs are found by the provider's labels. */
	if ((cli->policy && build_policy(cli, policy, &err) < 0) ||
	    jr_provider_load(cli->provider, &provider, &err) < 0)
		return fail(err);
	char **config = jr_provider_config(policy, cli->provider, cli->provider_opts);
	struct jr_run_options opts = { .log = cli->verbose ? print_line : NULL };
	if (!config) {
		jr_provider_unload(provider);
		fputs("jailrun: out of memory\n", stderr);
		return JR_EXIT_FAILURE;
	}
	int r = jr_provider_gc(provider, (const char *const *)config, &opts, &err);
	jr_strv_free(config);
	jr_provider_unload(provider);
	return r < 0 ? fail(err) : 0;
}

static void print_notice(void *userdata, const char *line)
{
	(void)userdata;
	fprintf(stderr, "jailrun: %s\n", line);
}

static int run(struct cli *cli, jr_policy_t *policy, char **argv)
{
	jr_error_t *err = NULL;
	jr_plan_t *plan = NULL;
	struct jr_result result = { 0 };
	struct jr_report_input report = { .policy = policy, .argv = argv, .started_ms = now_ms() };
	struct report_sink sink = { .fd = -1, .dir_fd = -1 };
	bool ran = false;

	bool reporting = cli->report && !cli->explain && !cli->lint;
	jr_provider_handle_t *provider = NULL;
	if (cli->provider && !cli->explain && !cli->lint) {
		if (jr_provider_load(cli->provider, &provider, &err) < 0)
			return fail(err);
		if (jr_provider_is_local(provider)) {
			jr_provider_unload(provider);
			provider = NULL;
		}
	}
	if (reporting && open_report_dir(cli->report, &sink) < 0) {
		report_sink_close(&sink);
		return JR_EXIT_FAILURE;
	}
	if (build_policy(cli, policy, &err) < 0)
		report.error_step = "policy";
	else if (jr_compile(policy, NULL, &plan, &err) < 0)
		report.error_step = "compile";
	if (reporting && open_report_file(&sink, plan, cli->report) < 0) {
		jr_plan_free(plan);
		jr_error_free(err);
		report_sink_close(&sink);
		return JR_EXIT_FAILURE;
	}
	if (report.error_step) {
		/* reported below */
	} else if (cli->explain || cli->lint) {
		if (cli->explain)
			jr_plan_describe(plan, print_line, stdout);
		else
			printf("%s: ok\n", cli->policy ? cli->policy : "default");
		jr_plan_free(plan);
		return 0;
	} else {
		/* Through a provider, -v prints its answers, not the local jail's. */
		if (cli->verbose && !provider)
			jr_plan_describe(plan, print_line, NULL);
		struct jr_run_options opts = { .log = cli->verbose ? print_line : NULL,
					       .pty = cli->pty,
					       .count_denials = cli->report != NULL,
					       .notice = print_notice };
		ran = true;
		if ((provider ? run_provider(cli, provider, policy, plan, argv, &opts, &result, &err)
			      : jr_run(plan, argv, &opts, &result, &err)) < 0)
			report.error_step = result.failed_step ? result.failed_step : "setup";
	}
	int status;
	if (report.error_step) {
		fprintf(stderr, "jailrun: %s\n", err ? err->message : "unknown error");
		status = JR_EXIT_FAILURE;
	} else {
		print_outcome(&result, argv);
		status = result.status;
	}
	if (sink.fd >= 0) {
		report.plan = plan;
		report.status = status;
		report.result = ran ? &result : NULL;
		report.error = err;
		if (write_report(cli, &sink, &report) < 0)
			status = JR_EXIT_FAILURE;
	}
	report_sink_close(&sink);
	jr_result_release(&result);
	jr_plan_free(plan);
	jr_error_free(err);
	jr_provider_unload(provider);
	return status;
}

static int run_in_session(struct cli *cli, jr_policy_t *policy, char **argv)
{
	jr_error_t *err = NULL;
	jr_plan_t *plan = NULL;
	if (build_policy(cli, policy, &err) < 0)
		return fail(err);
	/* A running session needs only the policy's digest and environment;
	 * the plan is compiled when the session has to be started. */
	int probe;
	if (jr_session_connect(cli->session, &probe, &err) == 0) {
		close(probe);
	} else {
		jr_error_free(err);
		err = NULL;
		if (jr_compile(policy, NULL, &plan, &err) < 0)
			return fail(err);
		struct jr_session_options opts = { .idle_s = cli->idle_s };
		if (jr_session_start(policy, plan, cli->session, &opts, &err) < 0 &&
		    err->errnum != EEXIST) {
			jr_plan_free(plan);
			return fail(err);
		}
		jr_error_free(err);
		err = NULL;
	}
	struct jr_result result;
	int r = jr_session_exec(cli->session, policy, plan, argv, NULL, &result, &err);
	jr_plan_free(plan);
	if (r < 0)
		return fail(err);
	print_outcome(&result, argv);
	return result.status;
}

static int stop_session(const char *name)
{
	jr_error_t *err = NULL;
	if (jr_session_stop(name, &err) == 0)
		return 0;
	if (err->errnum == ENOENT || err->errnum == ECONNREFUSED) {
		fprintf(stderr, "jailrun: no session %s\n", name);
		jr_error_free(err);
		return 1;
	}
	return fail(err);
}

static int list_sessions(void)
{
	jr_error_t *err = NULL;
	return jr_session_list(print_line, stdout, &err) < 0 ? fail(err) : 0;
}

/* serve and mcp through --provider NAME: one instance for the service. */
static int serve_provider(struct cli *cli, jr_policy_t *policy, jr_plan_t *plan)
{
	jr_error_t *err = NULL;
	jr_provider_handle_t *provider = NULL;
	if (jr_provider_load(cli->provider, &provider, &err) < 0) {
		jr_plan_free(plan);
		return fail(err);
	}
	char **config = jr_provider_config(policy, cli->provider, cli->provider_opts);
	if (!config) {
		jr_provider_unload(provider);
		jr_plan_free(plan);
		fputs("jailrun: out of memory\n", stderr);
		return JR_EXIT_FAILURE;
	}
	/* stdout is the protocol's: progress and notices go to stderr; -v
	 * prints the provider's answers, not the local jail's plan. */
	struct jr_run_options opts = { .log = cli->verbose ? print_line : NULL, .notice = print_notice };
	int r = jr_rpc_serve_provider(cli->mode == MODE_MCP ? JR_RPC_MCP : JR_RPC_JSONRPC, policy, plan,
				      provider, (const char *const *)config, cli->preserve, &opts,
				      STDIN_FILENO, STDOUT_FILENO, &err);
	jr_strv_free(config);
	jr_provider_unload(provider);
	jr_plan_free(plan);
	return r < 0 ? fail(err) : 0;
}

/* serve and mcp: against --session NAME (started if need be, left
 * running), or a private session that lives as long as this process, or
 * through --provider NAME. */
static int serve(struct cli *cli, jr_policy_t *policy)
{
	jr_error_t *err = NULL;
	jr_plan_t *plan = NULL;
	if (build_policy(cli, policy, &err) < 0 || jr_compile(policy, NULL, &plan, &err) < 0)
		return fail(err);
	if (cli->provider && strcmp(cli->provider, "local"))
		return serve_provider(cli, policy, plan);
	char private_name[64];
	const char *name = cli->session;
	if (!name) {
		snprintf(private_name, sizeof(private_name), "%s-%d", cli->mode == MODE_MCP ? "mcp" : "serve",
			 (int)getpid());
		name = private_name;
	}
	struct jr_session_options opts = { .idle_s = cli->idle_s, .private_session = !cli->session };
	int probe;
	if (cli->session && jr_session_connect(name, &probe, &err) == 0) {
		close(probe);
	} else {
		jr_error_free(err);
		err = NULL;
		if (jr_session_start(policy, plan, name, &opts, &err) < 0 && err->errnum != EEXIST) {
			jr_plan_free(plan);
			return fail(err);
		}
		jr_error_free(err);
		err = NULL;
	}
	int r = jr_rpc_serve(cli->mode == MODE_MCP ? JR_RPC_MCP : JR_RPC_JSONRPC, policy, plan, name,
			     STDIN_FILENO, STDOUT_FILENO, &err);
	if (!cli->session) {
		jr_error_t *ignored = NULL;
		jr_session_stop(name, &ignored);
		jr_error_free(ignored);
	}
	jr_plan_free(plan);
	return r < 0 ? fail(err) : 0;
}

int main(int argc, char **argv)
{
	struct cli cli = { .pty = -1 };
	jr_error_t *err = NULL;
	jr_policy_t *policy = NULL;
	int status = -1, opt;

	/* A first word that names a mode. */
	if (argc > 1 && (!strcmp(argv[1], "serve") || !strcmp(argv[1], "mcp") || !strcmp(argv[1], "sessions"))) {
		cli.mode = !strcmp(argv[1], "serve") ? MODE_SERVE : !strcmp(argv[1], "mcp") ? MODE_MCP : MODE_SESSIONS;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	/* '+': options end at the command, so its own flags are not ours. */
	while (status < 0 && (opt = getopt_long(argc, argv, "+p:D:w:vh", long_options, NULL)) != -1)
		status = parse_option(&cli, opt, optarg);
	bool runs_command = cli.mode == MODE_RUN && !cli.lint && !cli.explain && !cli.stop && !cli.list &&
			    !cli.list_providers && !cli.gc;
	if (status < 0 && (cli.stop || cli.list) && !cli.session && !cli.list) {
		fputs("jailrun: --stop needs --session NAME\n", stderr);
		status = JR_EXIT_FAILURE;
	}
	if (status < 0 && cli.mode != MODE_RUN && optind < argc) {
		fprintf(stderr, "jailrun: %s takes no command\n", argv[0]);
		status = JR_EXIT_FAILURE;
	}
	if (status < 0 && optind >= argc && runs_command) {
		fputs("jailrun: no command given\nTry 'jailrun --help'.\n", stderr);
		status = JR_EXIT_FAILURE;
	}
	if (status < 0 && cli.provider && cli.session && strcmp(cli.provider, "local")) {
		fputs("jailrun: --provider works with one-shot runs, serve and mcp in this version (not with --session)\n", stderr);
		status = JR_EXIT_FAILURE;
	}
	/* The report and --explain describe the local jail's enforcement;
	 * for a provider they would describe protections not in force. */
	if (status < 0 && cli.provider && strcmp(cli.provider, "local") && (cli.report || cli.explain)) {
		fprintf(stderr, "jailrun: %s is not available with --provider in this version (-v prints the provider's answer for every clause)\n",
			cli.report ? "--report" : "--explain");
		status = JR_EXIT_FAILURE;
	}
	if (status < 0 && cli.session && cli.report) {
		fputs("jailrun: --report is not available with --session in this version\n", stderr);
		status = JR_EXIT_FAILURE;
	}
	if (status < 0) {
		if (cli.list_providers)
			status = jr_provider_list(print_line, stdout) < 0 ? 1 : 0;
		else if (cli.list || cli.mode == MODE_SESSIONS)
			status = list_sessions();
		else if (cli.stop)
			status = stop_session(cli.session);
		else if (jr_policy_new(&policy, &err) < 0)
			status = fail(err);
		else if (cli.gc)
			status = collect_garbage(&cli, policy);
		else if (cli.mode == MODE_SERVE || cli.mode == MODE_MCP)
			status = serve(&cli, policy);
		else if (cli.session && runs_command)
			status = run_in_session(&cli, policy, argv + optind);
		else
			status = run(&cli, policy, argv + optind);
	}
	jr_policy_free(policy);
	for (size_t i = 0; i < cli.n_overrides; i++)
		free(cli.overrides[i].arg);
	return status;
}
