/* provider-driver: calls a provider plugin's file operations, which
 * jailrun's command line does not reach, for the tests.
 *
 *   provider-driver PLUGIN.so WORKSPACE [KEY=VALUE...] -- OP [ARG...] [, OP [ARG...]]...
 *
 * opens one instance (a policy without clauses), runs the operations in
 * order, prints one line for each, and closes it.  OPs:
 *   write PATH TEXT | read PATH [MAX] | stat PATH | readdir PATH |
 *   exists PATH | mkdir PATH [parents] | rm PATH [recursive]
 * A failed operation prints "error: ERRNO-NAME MESSAGE" and the driver
 * goes on; the exit status is 1 when open or close failed. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jailrun-provider.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void log_line(void *ud, const char *line)
{
	(void)ud;
	fprintf(stderr, "log: %s\n", line);
}

static void report_error(const struct jr_provider_error *e)
{
	printf("error: %s %s\n", e->code ? strerrorname_np(e->code) : "0", e->message);
}

static void run_op(const struct jr_provider *t, jr_provider_instance_t *inst, char **a, int n)
{
	struct jr_provider_error e = { 0 };
	const char *op = a[0], *path = n > 1 ? a[1] : ".";
	if (strcmp(op, "write") == 0 && n == 3) {
		if (t->write_file(inst, path, a[2], strlen(a[2]), 0640, &e) < 0)
			return report_error(&e);
		printf("write: ok\n");
	} else if (strcmp(op, "read") == 0 && (n == 2 || n == 3)) {
		void *data;
		size_t len;
		if (t->read_file(inst, path, n == 3 ? strtoull(a[2], NULL, 10) : 0, &data, &len, &e) < 0)
			return report_error(&e);
		printf("read: %zu [%.*s]\n", len, (int)len, (char *)data);
		free(data);
	} else if (strcmp(op, "stat") == 0 && n == 2) {
		struct jr_provider_stat st;
		if (t->stat(inst, path, &st, &e) < 0)
			return report_error(&e);
		printf("stat: %c %llu %o\n", st.type, (unsigned long long)st.size, st.mode);
	} else if (strcmp(op, "readdir") == 0 && n == 2) {
		char **names;
		size_t k;
		if (t->readdir(inst, path, &names, &k, &e) < 0)
			return report_error(&e);
		qsort(names, k, sizeof(char *), cmp_str);
		printf("readdir:");
		for (size_t i = 0; i < k; i++) {
			printf(" %s", names[i]);
			free(names[i]);
		}
		printf("\n");
		free(names);
	} else if (strcmp(op, "exists") == 0 && n == 2) {
		bool yes;
		if (t->exists(inst, path, &yes, &e) < 0)
			return report_error(&e);
		printf("exists: %s\n", yes ? "yes" : "no");
	} else if (strcmp(op, "mkdir") == 0 && (n == 2 || n == 3)) {
		if (t->mkdir(inst, path, 0750, n == 3, &e) < 0)
			return report_error(&e);
		printf("mkdir: ok\n");
	} else if (strcmp(op, "rm") == 0 && (n == 2 || n == 3)) {
		if (t->rm(inst, path, n == 3, &e) < 0)
			return report_error(&e);
		printf("rm: ok\n");
	} else {
		printf("error: usage: %s\n", op);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: provider-driver PLUGIN.so WORKSPACE [KEY=VALUE...] -- OP...\n");
		return 2;
	}
	int sep = 3;
	while (sep < argc && strcmp(argv[sep], "--") != 0)
		sep++;
	const char **config = calloc((size_t)(sep - 3 + 1), sizeof(char *));
	if (!config)
		return 2;
	for (int i = 3; i < sep; i++)
		config[i - 3] = argv[i];

	void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	jr_provider_entry_fn entry = so ? (jr_provider_entry_fn)dlsym(so, "jailrun_provider_v1") : NULL;
	if (!entry) {
		fprintf(stderr, "provider-driver: %s\n", dlerror());
		free(config);
		return 2;
	}
	const struct jr_provider *t = entry();
	struct jr_provider_open_args oa = {
		.size = sizeof(oa),
		.policy_json = "{\"version\":1,\"clauses\":[]}",
		.config = config,
		.workspace = argv[2],
		.log = getenv("DRIVER_LOG") ? log_line : NULL,
	};
	struct jr_provider_error e = { 0 };
	jr_provider_instance_t *inst = NULL;
	int rc = 0;
	if (t->open(&oa, &inst, NULL, 0, &e) < 0) {
		report_error(&e);
		rc = 1;
		goto out;
	}
	for (int i = sep + 1; i < argc;) {
		int j = i;
		while (j < argc && strcmp(argv[j], ",") != 0)
			j++;
		run_op(t, inst, argv + i, j - i);
		i = j + 1;
	}
	if (t->close(inst, &e) < 0) {
		report_error(&e);
		rc = 1;
	}
out:
	free(config);
	dlclose(so);
	return rc;
}
