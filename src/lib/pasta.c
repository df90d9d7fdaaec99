/* net pasta: user-mode networking for the jail's own network namespace
 * through pasta(1) from passt, for tools that need real TCP and UDP to
 * the outside.  jailrun starts it once the namespaces exist and before
 * init is released, waits until it has configured the namespace (it
 * forks into the background when done), and stops it when the run ends.
 * pasta runs as the caller, outside the jail; as root it would switch to
 * nobody, who cannot enter root's namespaces, so root keeps it as root. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

static const char *const pasta_paths[] = { "/usr/bin/pasta", "/usr/local/bin/pasta", "/bin/pasta", NULL };

const char *jr_pasta_path(void)
{
	for (const char *const *p = pasta_paths; *p; p++)
		if (access(*p, X_OK) == 0)
			return *p;
	return NULL;
}

int jr_pasta_start(pid_t target, pid_t *pasta_pid, jr_error_t **err)
{
	*pasta_pid = 0;
	const char *pasta = jr_pasta_path();
	if (!pasta)
		return jr_fail(err, ENOENT, "net pasta: pasta is not installed (apt-get install passt)");
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	char pid_file[4096];
	snprintf(pid_file, sizeof(pid_file), "%s/jailrun-pasta.XXXXXX",
		 runtime && runtime[0] == '/' ? runtime : "/tmp");
	int fd = mkstemp(pid_file);
	if (fd < 0)
		return jr_fail(err, errno, "net pasta: %s", pid_file);
	close(fd);
	char target_s[16];
	snprintf(target_s, sizeof(target_s), "%d", (int)target);
	char *argv[] = { (char *)pasta, "--config-net", "--quiet", "--pid", pid_file,
			 getuid() == 0 ? "--runas" : target_s, getuid() == 0 ? "0" : NULL, target_s, NULL };
	pid_t child = fork();
	if (child == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			close(null);
		}
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execv(pasta, argv);
		_exit(127);
	}
	int status = 0;
	if (child < 0 || waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		unlink(pid_file);
		return jr_fail(err, child < 0 ? errno : 0,
			       "net pasta: %s could not set up the jail's network (status %d)", pasta,
			       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
	FILE *f = fopen(pid_file, "re");
	int pid = 0;
	if (!f || fscanf(f, "%d", &pid) != 1 || pid <= 1)
		pid = 0;
	if (f)
		fclose(f);
	unlink(pid_file);
	if (!pid)
		return jr_fail(err, 0, "net pasta: pasta did not say its pid");
	*pasta_pid = pid;
	return 0;
}

void jr_pasta_stop(pid_t pasta_pid)
{
	if (pasta_pid > 0)
		kill(pasta_pid, SIGTERM);
}
