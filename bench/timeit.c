/* timeit: run several command lines interleaved, run by run, and print the
 * wall-clock time of every run as one JSON line.  Part of `make bench`
 * (bench/run.sh compiles it with cc -O2 into a temporary directory).
 *
 *   timeit [-n RUNS] [-w WARMUP] LABEL CMD [ARG...] [::: LABEL CMD [ARG...]]...
 *
 * Each round runs every command once, in the order given (A B C A B C ...),
 * so a slow phase of the machine hits all candidates alike.  WARMUP rounds
 * (default 2) are run first and not reported.  A run is timed with
 * CLOCK_MONOTONIC from just before posix_spawnp(3) (vfork + execvp) to
 * just after wait4(2) returns; the child's stdin and stdout are /dev/null,
 * its stderr is ours.  Output: first one line per command,
 *
 *   {"label":"bare","argv":["/bin/true"]}
 *
 * then one line per timed run:
 *
 *   {"label":"bare","round":0,"ms":0.412,"cpu_ms":0.310}
 *
 * cpu_ms is user + system time of the child and of the descendants it
 * waited for (wait4's rusage).  A command that exits non-zero or dies of
 * a signal stops everything: exit status 1 with a message on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct cand {
	const char *label;
	char **argv;
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double tv_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

/* Runs one command; returns 0 and sets *ms and *cpu_ms, or -1. */
static int run_once(const struct cand *c, double *ms, double *cpu_ms)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, r;
	struct rusage ru;

	if (posix_spawn_file_actions_init(&fa) != 0 ||
	    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) != 0 ||
	    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) != 0) {
		fprintf(stderr, "timeit: posix_spawn_file_actions: out of memory\n");
		return -1;
	}
	double t0 = now_ms();
	r = posix_spawnp(&pid, c->argv[0], &fa, NULL, c->argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0) {
		fprintf(stderr, "timeit: %s: cannot run %s: %s\n", c->label, c->argv[0], strerror(r));
		return -1;
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "timeit: wait4: %s\n", strerror(errno));
			return -1;
		}
	}
	*ms = now_ms() - t0;
	*cpu_ms = tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		fprintf(stderr, "timeit: %s: %s exited with status %d\n", c->label, c->argv[0],
			WEXITSTATUS(status));
	else
		fprintf(stderr, "timeit: %s: %s died of signal %d\n", c->label, c->argv[0],
			WTERMSIG(status));
	return -1;
}

/* Prints S as a JSON string. */
static void json_string(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void usage(void)
{
	fprintf(stderr, "usage: timeit [-n RUNS] [-w WARMUP] LABEL CMD [ARG...] "
			"[::: LABEL CMD [ARG...]]...\n");
	exit(2);
}

static long number(const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 1000000)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	long runs = 10, warmup = 2;
	int opt;

	while ((opt = getopt(argc, argv, "+n:w:")) != -1) {
		switch (opt) {
		case 'n': runs = number(optarg); break;
		case 'w': warmup = number(optarg); break;
		default: usage();
		}
	}
	if (optind >= argc)
		usage();

	/* Split the rest at ":::" into candidates, in place. */
	struct cand *cands = calloc((size_t)argc, sizeof(*cands));
	size_t n = 0;
	if (!cands)
		return 1;
	for (int i = optind; i < argc;) {
		int end = i;
		while (end < argc && strcmp(argv[end], ":::") != 0)
			end++;
		if (end - i < 2)
			usage();
		cands[n].label = argv[i];
		cands[n].argv = &argv[i + 1];
		argv[end < argc ? end : argc] = NULL;
		n++;
		i = end + 1;
	}

	for (size_t k = 0; k < n; k++) {
		fputs("{\"label\":", stdout);
		json_string(cands[k].label);
		fputs(",\"argv\":[", stdout);
		for (char **a = cands[k].argv; *a; a++) {
			if (a != cands[k].argv)
				putchar(',');
			json_string(*a);
		}
		fputs("]}\n", stdout);
	}
	for (long round = -warmup; round < runs; round++) {
		for (size_t k = 0; k < n; k++) {
			double ms, cpu_ms;
			if (run_once(&cands[k], &ms, &cpu_ms) < 0)
				return 1;
			if (round < 0)
				continue;
			fputs("{\"label\":", stdout);
			json_string(cands[k].label);
			printf(",\"round\":%ld,\"ms\":%.4f,\"cpu_ms\":%.3f}\n", round, ms, cpu_ms);
		}
	}
	free(cands);
	return fflush(stdout) == 0 ? 0 : 1;
}
