/* libFuzzer target for the policy language: the input is written to a
 * policy file in a private sandbox directory and read with jr_policy_load,
 * so the lexer (quotes, continuations, comments, NUL and control bytes),
 * includes and every directive are exercised; a policy that parses is
 * compiled against a fixed environment, checked and described.
 *
 * Built by `make fuzz` (Makefile.am) with
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Wl,--wrap=open,--wrap=open64
 *
 * Guard: while a policy is being loaded, open(2) is wrapped so that only
 * files inside the sandbox directory can be opened.  An input such as
 * `include /dev/watchdog` or `include /some/fifo` then fails with EACCES
 * instead of opening a device (side effects) or blocking on a FIFO; bare
 * names are searched in $JAILRUN_POLICY_PATH, set to an empty directory,
 * and $HOME points into the sandbox, so no installed policy is read
 * either.  The sandbox holds a few fixture policies the fuzzer can
 * include by name: inc, nested (includes inc), self (includes itself),
 * base and secrets (small stand-ins for the shipped ones), d1 .. d17 (a
 * chain deeper than the include limit), big.pol (over 1 MiB) and dir.pol
 * (a directory). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jailrun.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char sandbox[PATH_MAX];  /* canonical; fixtures and the input live here */
static char input[PATH_MAX];    /* sandbox/input.pol */
static bool guard_on;
static bool verbose; /* $FUZZ_POLICY_VERBOSE: print each error and the plan */

/* ---- the open(2) guard ------------------------------------------------ */

int __real_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);

static bool allowed(const char *path)
{
	if (!guard_on)
		return true;
	char real[PATH_MAX];
	if (!realpath(path, real))
		return true; /* the open fails on its own (no file: nothing to open) */
	size_t n = strlen(sandbox);
	return strncmp(real, sandbox, n) == 0 && real[n] == '/';
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	if (!allowed(path)) {
		errno = EACCES;
		return -1;
	}
	return __real_open(path, flags, mode);
}

int __wrap_open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	if (!allowed(path)) {
		errno = EACCES;
		return -1;
	}
	return __real_open64(path, flags, mode);
}

/* ---- sandbox ------------------------------------------------------------ */

static void die(const char *what)
{
	perror(what);
	abort();
}

static void write_file(const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", sandbox, name);
	FILE *f = fopen(path, "w");
	if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0)
		die(path);
}

static void write_text(const char *name, const char *text)
{
	write_file(name, text, strlen(text));
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void remove_sandbox(void)
{
	if (sandbox[0])
		nftw(sandbox, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	char tmpl[] = "/tmp/jr-fuzz-policy-XXXXXX";
	if (!mkdtemp(tmpl) || !realpath(tmpl, sandbox))
		die("mkdtemp");
	atexit(remove_sandbox);
	verbose = getenv("FUZZ_POLICY_VERBOSE") != NULL;
	snprintf(input, sizeof(input), "%s/input.pol", sandbox);

	char dir[PATH_MAX + 32];
	snprintf(dir, sizeof(dir), "%s/search", sandbox); /* $JAILRUN_POLICY_PATH: empty */
	if (mkdir(dir, 0755) < 0)
		die(dir);
	setenv("JAILRUN_POLICY_PATH", dir, 1);
	snprintf(dir, sizeof(dir), "%s/home", sandbox); /* ~/.config/jailrun/policy: absent */
	if (mkdir(dir, 0755) < 0)
		die(dir);
	setenv("HOME", dir, 1);
	snprintf(dir, sizeof(dir), "%s/dir.pol", sandbox);
	if (mkdir(dir, 0755) < 0)
		die(dir);

	write_text("inc.pol", "ro /usr /etc?\nenv scrub *_TOKEN\nmask ~/.ssh\n");
	write_text("nested.pol", "include inc\nhostname nested\nenv scrub !*_TOKEN\n");
	write_text("self.pol", "include self.pol\n");
	write_text("base.pol", "workspace rw\nhome tmpfs\nnet none\nhostname jailrun\ncaps none\n"
			       "env inherit\nprotect $WORKSPACE/.git/hooks ~/.bashrc\n");
	write_text("secrets.pol", "mask ~/.ssh ~/.aws ~/.netrc\nmask ${SSH_AUTH_SOCK}?\n"
				  "env scrub *_API_KEY *_SECRET *_TOKEN AWS_SECRET_ACCESS_KEY\n");
	for (int i = 1; i <= 17; i++) {
		char name[16], text[32];
		snprintf(name, sizeof(name), "d%d.pol", i);
		snprintf(text, sizeof(text), "include d%d\n", i + 1);
		write_text(name, i < 17 ? text : "hostname deep\n");
	}
	static char big[(1u << 20) + 64];
	memset(big, '#', sizeof(big));
	write_file("big.pol", big, sizeof(big));
	return 0;
}

/* ---- one input ----------------------------------------------------------- */

static void consume(void *userdata, const char *line)
{
	size_t *total = userdata;
	*total += strlen(line);
	if (verbose)
		fprintf(stderr, "| %s\n", line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	write_file("input.pol", data, size);

	jr_policy_t *policy = NULL;
	jr_error_t *err = NULL;
	if (jr_policy_new(&policy, &err) < 0)
		abort();
	guard_on = true;
	int r = jr_policy_load(policy, input, &err);
	guard_on = false;
	if (r < 0) {
		/* Every failure says why. */
		if (!err || !err->message || !*err->message)
			abort();
		if (verbose)
			fprintf(stderr, "load: %s\n", err->message);
		jr_error_free(err);
		jr_policy_free(policy);
		return 0;
	}
	if (err)
		abort(); /* success leaves no error behind */

	static char *const envp[] = { (char *)"HOME=/tmp", (char *)"PATH=/usr/bin", NULL };
	jr_plan_t *plan = NULL;
	if (jr_compile(policy, envp, &plan, &err) == 0) {
		size_t total = 0;
		jr_plan_describe(plan, consume, &total);
		jr_error_t *not_enforced = NULL;
		jr_plan_check_enforced(plan, &not_enforced);
		jr_error_free(not_enforced);
		jr_plan_free(plan);
	} else if (!err || !err->message) {
		abort();
	} else if (verbose) {
		fprintf(stderr, "compile: %s\n", err->message);
	}
	jr_error_free(err);
	jr_policy_free(policy);
	return 0;
}
