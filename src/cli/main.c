/* jailrun(1): options -> libjailrun calls.  All behaviour lives in the
 * library; this file parses, prints and picks the exit status. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jailrun.h"

enum {
	OPT_RO = 0x100,
	OPT_RW,
	OPT_TMPFS,
	OPT_HOSTNAME,
	OPT_KEEP_FD,
	OPT_VERSION,
	OPT_PTY,
	OPT_NO_PTY,
};

static const struct option long_options[] = {
	{ "workspace", required_argument, NULL, 'w' },
	{ "ro", required_argument, NULL, OPT_RO },
	{ "rw", required_argument, NULL, OPT_RW },
	{ "tmpfs", required_argument, NULL, OPT_TMPFS },
	{ "hostname", required_argument, NULL, OPT_HOSTNAME },
	{ "keep-fd", required_argument, NULL, OPT_KEEP_FD },
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
	      "Run COMMAND in a jail: new user, mount, pid, net, ipc, uts and cgroup\n"
	      "namespaces; the system read-only, the workspace read-write, an empty home.\n"
	      "\n"
	      "  -w, --workspace DIR   read-write workspace and working directory (default: .)\n"
	      "      --ro PATH         show PATH read-only (repeatable)\n"
	      "      --rw PATH         show PATH read-write (repeatable)\n"
	      "      --tmpfs PATH      mount an empty tmpfs at PATH (repeatable)\n"
	      "      --hostname NAME   hostname inside (default: jailrun)\n"
	      "      --keep-fd N       pass descriptor N into the jail (repeatable)\n"
	      "      --pty, --no-pty   force or forbid a pty (default: when stdin and stdout\n"
	      "                        are terminals)\n"
	      "  -v, --verbose         print the plan and the setup steps with timings\n"
	      "      --version         print the version\n"
	      "  -h, --help            print this help\n"
	      "\n"
	      "Exit status: COMMAND's own; 128+N if it died of signal N; 125 if jailrun\n"
	      "failed; 126 if COMMAND is not executable; 127 if it was not found.\n",
	      out);
}

static void print_line(void *userdata, const char *line)
{
	fprintf(stderr, "jailrun: %s\n", line);
	(void)userdata;
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

struct cli {
	jr_policy_t *policy;
	bool verbose;
	int pty;
};

/* Returns -1 to continue, or the exit status to stop with. */
static int parse_option(struct cli *cli, int opt, const char *arg, jr_error_t **err)
{
	int fd;
	switch (opt) {
	case 'w':
		return jr_policy_set_workspace(cli->policy, arg, err) < 0 ? JR_EXIT_FAILURE : -1;
	case OPT_RO:
		return jr_policy_add_bind(cli->policy, JR_BIND_RO, arg, false, err) < 0
			       ? JR_EXIT_FAILURE : -1;
	case OPT_RW:
		return jr_policy_add_bind(cli->policy, JR_BIND_RW, arg, false, err) < 0
			       ? JR_EXIT_FAILURE : -1;
	case OPT_TMPFS:
		return jr_policy_add_tmpfs(cli->policy, arg, err) < 0 ? JR_EXIT_FAILURE : -1;
	case OPT_HOSTNAME:
		return jr_policy_set_hostname(cli->policy, arg, err) < 0 ? JR_EXIT_FAILURE : -1;
	case OPT_KEEP_FD:
		if (parse_fd(arg, &fd) < 0) {
			fprintf(stderr, "jailrun: --keep-fd '%s': not a descriptor number\n", arg);
			return JR_EXIT_FAILURE;
		}
		return jr_policy_keep_fd(cli->policy, fd, err) < 0 ? JR_EXIT_FAILURE : -1;
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

static int run(struct cli *cli, char **argv)
{
	jr_error_t *err = NULL;
	jr_plan_t *plan = NULL;
	if (jr_compile(cli->policy, NULL, &plan, &err) < 0)
		return fail(err);
	if (cli->verbose)
		jr_plan_describe(plan, print_line, NULL);

	struct jr_run_options opts = { .log = cli->verbose ? print_line : NULL, .pty = cli->pty };
	struct jr_result result = { 0 };
	int r = jr_run(plan, argv, &opts, &result, &err);
	jr_plan_free(plan);
	if (r < 0)
		return fail(err);
	if (result.exec_errno)
		fprintf(stderr, "jailrun: %s: %s\n", argv[0],
			result.exec_errno == ENOENT ? "command not found" : strerror(result.exec_errno));
	return result.status;
}

int main(int argc, char **argv)
{
	struct cli cli = { .pty = -1 };
	jr_error_t *err = NULL;
	int status = -1, opt;

	if (jr_policy_new(&cli.policy, &err) < 0)
		return fail(err);
	/* '+': options end at the command, so its own flags are not ours. */
	while (status < 0 && (opt = getopt_long(argc, argv, "+w:vh", long_options, NULL)) != -1) {
		status = parse_option(&cli, opt, optarg, &err);
		if (err)
			{
			status = fail(err);
			err = NULL;
		}
	}
	if (status < 0 && optind >= argc) {
		fputs("jailrun: no command given\nTry 'jailrun --help'.\n", stderr);
		status = JR_EXIT_FAILURE;
	}
	if (status < 0)
		status = run(&cli, argv + optind);
	jr_policy_free(cli.policy);
	return status;
}
