/* pid 1 of the jail.  It finishes building the jail (ids, mounts,
 * hostname, loopback), starts the command, reaps every orphan, forwards
 * signals to the command, and when the command exits kills whatever is
 * left and reports the command's status to the supervisor. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* Signals the supervisor forwards and init passes on to the command. */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

struct payload_failure {
	int errnum;
	int is_exec; /* execve itself failed: 126/127, not a setup error */
	char text[256];
};

__attribute__((noreturn)) static void init_fail(int ctl, jr_error_t *err)
{
	struct jr_msg msg = { .type = JR_MSG_ERROR, .errnum = err ? err->errnum : 0 };
	snprintf(msg.text, sizeof(msg.text), "%s", err ? err->message : "jail setup failed");
	jr_msg_send(ctl, &msg, -1, NULL);
	_exit(JR_EXIT_FAILURE);
}

/* Reports a failure from the forked command back to init, then exits. */
__attribute__((noreturn)) static void payload_fail(int pipe_fd, jr_error_t *err, int is_exec)
{
	struct payload_failure f = { .errnum = err ? err->errnum : 0, .is_exec = is_exec };
	snprintf(f.text, sizeof(f.text), "%s", err ? err->message : "setup failed");
	ssize_t ignored = write(pipe_fd, &f, sizeof(f));
	(void)ignored;
	_exit(is_exec ? (f.errnum == ENOENT ? JR_EXIT_NOTFOUND : JR_EXIT_NOEXEC) : JR_EXIT_FAILURE);
}

static int keep_list(const struct jr_init_ctx *ctx, int *keep, size_t cap, int extra1,
		     int extra2)
{
	size_t n = 0;
	for (size_t i = 0; i < ctx->plan->n_keep_fds && n < cap; i++)
		keep[n++] = ctx->plan->keep_fds[i];
	for (int fd = 0; fd < 3 && ctx->dup_to; fd++)
		if (ctx->dup_to[fd] >= 0 && n < cap)
			keep[n++] = ctx->dup_to[fd];
	if (extra1 >= 0 && n < cap)
		keep[n++] = extra1;
	if (extra2 >= 0 && n < cap)
		keep[n++] = extra2;
	return (int)n;
}

static void reset_signals(void)
{
	sigset_t all;
	sigfillset(&all);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
}

/* The command's side of the pty: a new session whose controlling terminal
 * is the jail's pty, in place of each descriptor of mask. */
static int attach_pty(int master, unsigned mask, jr_error_t **err)
{
	int slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return jr_fail(err, errno, "opening the pty");
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return jr_fail(err, errno, "TIOCSCTTY");
	for (int fd = 0; fd < 3; fd++)
		if ((mask & (1u << fd)) && dup2(slave, fd) < 0)
			return jr_fail(err, errno, "dup2 pty");
	close(slave);
	return 0;
}

int jr_confine(const struct jr_plan *plan, int ruleset, const int *keep, size_t n_keep, int ctl,
	       unsigned flags, jr_error_t **err)
{
	int all[72];
	if (n_keep > 70)
		return jr_fail(err, E2BIG, "too many descriptors kept");
	memcpy(all, keep, n_keep * sizeof(int));
	if (ruleset >= 0)
		all[n_keep++] = ruleset;
	if (jr_fds_close_except(all, n_keep, err) < 0 || jr_caps_drop_all(err) < 0 ||
	    jr_set_no_new_privs(err) < 0 || jr_landlock_restrict(&plan->landlock, ruleset, err) < 0 ||
	    jr_seccomp_load(&plan->seccomp, ctl, flags, err) < 0)
		return -1;
	return 0;
}

int jr_apply_rlimits(const struct jr_plan *plan, jr_error_t **err)
{
	/* Last, right before execve: an address-space limit must not starve
	 * the setup before it (libseccomp and libcap allocate). */
	for (size_t i = 0; i < plan->n_rlimits; i++) {
		const struct jr_rlimit_plan *l = &plan->rlimits[i];
		struct rlimit rl = { l->value, l->value };
		if (setrlimit(l->resource, &rl) < 0)
			return jr_fail(err, errno, "setrlimit %d to %llu (above the caller's hard limit?)",
				       l->resource, (unsigned long long)l->value);
	}
	return 0;
}

/* limit output: stdout and stderr are the supervisor's pipes. */
static int attach_output_pipes(const struct jr_init_ctx *ctx, jr_error_t **err)
{
	for (int fd = 0; fd < 3 && ctx->dup_to; fd++)
		if (ctx->dup_to[fd] >= 0 && dup2(ctx->dup_to[fd], fd) < 0)
			return jr_fail(err, errno, "dup2 output pipe");
	return 0;
}

__attribute__((noreturn)) static void run_payload(const struct jr_init_ctx *ctx, int master,
						  const struct jr_msg *go, int ruleset, int fail_pipe,
						  mode_t umask_saved)
{
	unsigned pty_mask = (unsigned)go->pty_mask;
	bool count = go->flags & JR_GO_COUNT_DENIALS;
	int ctl = count ? ctx->ctl : -1;
	jr_error_t *err = NULL;

	reset_signals();
	/* Without a pid namespace, nothing else ends the command with init. */
	if (ctx->plan->landlock_only)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* Without a controlling terminal of the caller's, TIOCSTI and
	 * TIOCLINUX cannot push input into the caller's terminal. */
	if (setsid() < 0) {
		jr_fail(&err, errno, "setsid");
		payload_fail(fail_pipe, err, 0);
	}
	if (master >= 0) {
		if (attach_pty(master, pty_mask, &err) < 0)
			payload_fail(fail_pipe, err, 0);
		close(master);
	}
	if (attach_output_pipes(ctx, &err) < 0)
		payload_fail(fail_pipe, err, 0);
	umask(umask_saved);
	if (chdir(ctx->plan->workspace) < 0) {
		jr_fail(&err, errno, "chdir %s", ctx->plan->workspace);
		payload_fail(fail_pipe, err, 0);
	}
	int keep[72];
	int n = keep_list(ctx, keep, 70, fail_pipe, -1);
	if (ctl >= 0)
		keep[n++] = ctl;
	/* The pipe ends are in place at 1 and 2: the originals go too. */
	for (int fd = 0; fd < 3 && ctx->dup_to; fd++)
		for (int i = 0; i < n; i++)
			if (ctx->dup_to[fd] >= 0 && keep[i] == ctx->dup_to[fd] && ctx->dup_to[fd] > 2)
				keep[i] = keep[--n];
	if (jr_confine(ctx->plan, ruleset, keep, (size_t)n, ctl, count ? JR_CONFINE_COUNT : 0, &err) < 0)
		payload_fail(fail_pipe, err, 0);
	if (ctl >= 0)
		close(ctl);
	if (jr_apply_rlimits(ctx->plan, &err) < 0)
		payload_fail(fail_pipe, err, 0);
	execvpe(ctx->argv[0], ctx->argv, ctx->envp);
	jr_fail(&err, errno, "%s", ctx->argv[0]);
	payload_fail(fail_pipe, err, 1);
}

static int open_pty(const struct jr_msg *go, bool host, int *master_out, jr_error_t **err)
{
	/* The jail's own devpts, or the host's in Landlock-only isolation. */
	const char *ptmx = host ? "/dev/ptmx" : "/dev/pts/ptmx";
	_cleanup_close_ int master = open(ptmx, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0)
		return jr_fail(err, errno, "opening %s", ptmx);
	if (unlockpt(master) < 0)
		return jr_fail(err, errno, "unlockpt");
	if (go->winsize.ws_row && ioctl(master, TIOCSWINSZ, &go->winsize) < 0)
		return jr_fail(err, errno, "setting the pty size");
	*master_out = jr_steal_fd(&master);
	return 0;
}

static void log_step(const struct jr_init_ctx *ctx, const char *step, uint64_t since)
{
	struct jr_msg msg = { .type = JR_MSG_LOG };
	snprintf(msg.text, sizeof(msg.text), "init: %s (%.2f ms)", step,
		 (double)(jr_now_us() - since) / 1000.0);
	jr_msg_send(ctx->ctl, &msg, -1, NULL);
}

/* Everything between the supervisor's go and the fork of the command. */
static void build_jail(const struct jr_init_ctx *ctx)
{
	jr_error_t *err = NULL;
	uint64_t t = jr_now_us();

	if (ctx->plan->landlock_only) {
		/* No pid namespace: become the subreaper of everything the
		 * command starts, so init can find and kill it all later. */
		if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
			jr_fail(&err, errno, "PR_SET_CHILD_SUBREAPER");
			init_fail(ctx->ctl, err);
		}
		return;
	}

	if (jr_become_ids(ctx->ids, &err) < 0)
		init_fail(ctx->ctl, err);
	/* Changing credentials cleared the parent-death signal. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) {
		jr_fail(&err, errno, "PR_SET_PDEATHSIG");
		init_fail(ctx->ctl, err);
	}
	struct pollfd hup = { .fd = ctx->ctl, .events = POLLRDHUP };
	if (poll(&hup, 1, 0) > 0 && (hup.revents & (POLLRDHUP | POLLHUP)))
		_exit(JR_EXIT_FAILURE); /* the supervisor died before we armed it */

	if (!ctx->ids->caller_is_root && jr_mount_sources_open(ctx->plan, ctx->sources, &err) < 0)
		init_fail(ctx->ctl, err);
	if (jr_mount_build_root(ctx->plan, ctx->sources, &err) < 0)
		init_fail(ctx->ctl, err);
	log_step(ctx, "mounts and pivot_root", t);
	t = jr_now_us();
	if (sethostname(ctx->plan->hostname, strlen(ctx->plan->hostname)) < 0) {
		jr_fail(&err, errno, "sethostname %s", ctx->plan->hostname);
		init_fail(ctx->ctl, err);
	}
	if (!ctx->plan->net_host && jr_net_loopback_up(&err) < 0)
		init_fail(ctx->ctl, err);
	if (ctx->plan->net_proxy) {
		/* The supervisor's proxy serves it from outside the jail. */
		int fd = jr_net_proxy_listener(&err);
		if (fd < 0 || jr_msg_send(ctx->ctl, &(struct jr_msg){ .type = JR_MSG_PROXY }, fd, &err) < 0)
			init_fail(ctx->ctl, err);
		close(fd);
	}
	log_step(ctx, "hostname and loopback", t);
}

static char **copy_strings(char *const *v)
{
	size_t n = 0;
	while (v[n])
		n++;
	char **copy = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; copy && i < n; i++)
		if (!(copy[i] = strdup(v[i])))
			return NULL; /* init exits soon either way */
	return copy;
}

/* /proc/1/cmdline is readable by the command (no ptrace check guards it),
 * and init's argv and environment are jailrun's: wipe them in place once
 * the command's own copies are taken.  The bounds are fields 48-51 of
 * /proc/self/stat (arg_start, arg_end, env_start, env_end). */
static void scrub_own_args_and_environ(void)
{
	char buf[2048];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the comm field may hold spaces */
	if (!p)
		return;
	unsigned long v[4];
	int field = 2;
	for (p++; *p && field < 48; p++)
		if (*p == ' ')
			field++;
	if (sscanf(p, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
		return;
	if (v[1] > v[0])
		memset((void *)v[0], 0, v[1] - v[0]);
	if (v[3] > v[2])
		memset((void *)v[2], 0, v[3] - v[2]);
}

/* Landlock-only isolation: HOME and TMPDIR point into the private
 * directory that stands in for the home tmpfs and /tmp. */
static int set_private_env(struct jr_init_ctx *own, const struct jr_init_ctx *ctx)
{
	size_t n = 0;
	while (own->envp[n])
		n++;
	char **v = calloc(n + 3, sizeof(char *));
	if (!v)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool home = ctx->plan->private_home && !strncmp(own->envp[i], "HOME=", 5);
		if (!home && strncmp(own->envp[i], "TMPDIR=", 7))
			v[k++] = own->envp[i];
	}
	if ((ctx->plan->private_home && asprintf(&v[k++], "HOME=%s/home", ctx->private_dir) < 0) ||
	    asprintf(&v[k++], "TMPDIR=%s/tmp", ctx->private_dir) < 0)
		return -1;
	own->envp = v;
	return 0;
}

static void forward_signal(pid_t payload, int sig)
{
	/* The command leads its own session and process group: signal the
	 * group so a shell's foreground children get it too, as a terminal
	 * would do; and wake a stopped group, as shells do, or a command that
	 * stopped itself would never see the signal. */
	if (kill(-payload, sig) < 0)
		kill(payload, sig);
	if (sig != SIGUSR1 && sig != SIGUSR2)
		kill(-payload, SIGCONT);
}

/* Reaps everything; returns once the command has exited, with its status. */
/* Time is up: SIGTERM to every process of the jail (woken, if stopped). */
static void terminate_all(const struct jr_plan *plan, pid_t payload)
{
	if (!plan->landlock_only) {
		kill(-1, SIGTERM); /* from pid 1: everyone else in the namespace */
		kill(-1, SIGCONT);
		return;
	}
	kill(-payload, SIGTERM);
	kill(-payload, SIGCONT);
	char buf[8192];
	int fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (char *p = buf, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		kill((pid_t)pid, SIGTERM);
		kill((pid_t)pid, SIGCONT);
	}
}

static void kill_everything_else(const struct jr_plan *plan);

/* Reaps everything; returns once the command has exited, with its status,
 * or when the supervisor says to kill it all (time's grace is over). */
static int reap_until_payload_exits(const struct jr_init_ctx *ctx, int signal_fd, pid_t payload)
{
	for (;;) {
		struct pollfd pfd[2] = { { .fd = signal_fd, .events = POLLIN },
					 { .fd = ctx->ctl, .events = POLLIN } };
		if (poll(pfd, 2, -1) < 0)
			continue;
		if (pfd[1].revents) {
			struct jr_msg msg;
			int r = jr_msg_recv(ctx->ctl, &msg, NULL, NULL);
			if (r > 0 && msg.type == JR_MSG_TERMINATE)
				terminate_all(ctx->plan, payload);
			else if (r <= 0) /* the supervisor is gone, or says: kill */
				return W_EXITCODE(0, SIGKILL);
			continue;
		}
		struct signalfd_siginfo si;
		ssize_t n = read(signal_fd, &si, sizeof(si));
		if (n != sizeof(si)) {
			if (n < 0 && errno == EINTR)
				continue;
			return W_EXITCODE(JR_EXIT_FAILURE, 0);
		}
		if (si.ssi_signo != SIGCHLD) {
			forward_signal(payload, (int)si.ssi_signo);
			continue;
		}
		int status;
		pid_t pid;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			if (pid == payload)
				return status;
	}
}

/* Landlock-only isolation: kill every descendant.  As subreaper, init
 * inherits the orphans of whatever it kills, so repeating until it has
 * no child left reaches daemons and double-forked children too. */
static void kill_descendants(void)
{
	for (;;) {
		char buf[8192];
		int fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0) {
			if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
				return;
			continue;
		}
		buf[n] = '\0';
		for (char *p = buf, *end; *p; p = end) {
			long pid = strtol(p, &end, 10);
			if (end == p)
				break;
			if (pid > 0)
				kill((pid_t)pid, SIGKILL);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

static void kill_everything_else(const struct jr_plan *plan)
{
	if (plan->landlock_only) {
		kill_descendants();
		return;
	}
	/* From pid 1, kill(-1) reaches every other process in the namespace,
	 * daemons and double-forked children included. */
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
}

void jr_init_main(const struct jr_init_ctx *caller_ctx)
{
	jr_error_t *err = NULL;
	struct jr_msg go;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(JR_EXIT_FAILURE);
	if (jr_msg_recv(caller_ctx->ctl, &go, NULL, &err) <= 0 || go.type != JR_MSG_GO)
		_exit(JR_EXIT_FAILURE);
	uint64_t t_go = jr_now_us();

	struct jr_init_ctx own = *caller_ctx;
	const struct jr_init_ctx *ctx = &own;
	own.argv = copy_strings(caller_ctx->argv);
	own.envp = copy_strings(caller_ctx->envp);
	if (!own.argv || !own.envp) {
		jr_fail_oom(&err);
		init_fail(ctx->ctl, err);
	}
	if (ctx->private_dir && set_private_env(&own, ctx) < 0) {
		jr_fail_oom(&err);
		init_fail(ctx->ctl, err);
	}
	scrub_own_args_and_environ();
	/* Out of the caller's session: init has no controlling terminal. */
	setsid();

	/* Only what init needs survives: the control socket, the mount
	 * sources the supervisor opened, and descriptors kept on purpose. */
	mode_t umask_saved = umask(022);
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++)
		sigaddset(&mask, forwarded_signals[i]);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	_cleanup_close_ int signal_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (signal_fd < 0) {
		jr_fail(&err, errno, "signalfd");
		init_fail(ctx->ctl, err);
	}

	log_step(ctx, "released: own copies, signals", t_go);
	build_jail(ctx);
	/* Built here, in the jail's root, so the rules name the jail's paths. */
	_cleanup_close_ int ruleset = -1;
	if (jr_landlock_ruleset(&ctx->plan->landlock, ctx->private_dir, &ruleset, &err) < 0)
		init_fail(ctx->ctl, err);
	int keep[72];
	int n_keep = keep_list(ctx, keep, 70, ctx->ctl, signal_fd);
	if (ruleset >= 0)
		keep[n_keep++] = ruleset;
	if (jr_fds_close_except(keep, (size_t)n_keep, &err) < 0)
		init_fail(ctx->ctl, err);

	_cleanup_close_ int master = -1;
	if (go.pty_mask) {
		if (open_pty(&go, ctx->plan->landlock_only, &master, &err) < 0)
			init_fail(ctx->ctl, err);
		if (jr_msg_send(ctx->ctl, &(struct jr_msg){ .type = JR_MSG_PTY }, master, &err) < 0)
			_exit(JR_EXIT_FAILURE);
	}
	/* /proc/1 (environ, cmdline, fds) must not be readable by the command. */
	prctl(PR_SET_DUMPABLE, 0);
	if (go.flags & JR_GO_SESSION)
		jr_session_serve(ctx, signal_fd, jr_steal_fd(&ruleset));

	int fail_pipe[2];
	if (pipe2(fail_pipe, O_CLOEXEC) < 0) {
		jr_fail(&err, errno, "pipe");
		init_fail(ctx->ctl, err);
	}
	pid_t payload = fork();
	if (payload < 0) {
		jr_fail(&err, errno, "fork");
		init_fail(ctx->ctl, err);
	}
	if (payload == 0) {
		close(fail_pipe[0]);
		if (!(go.flags & JR_GO_COUNT_DENIALS))
			close(ctx->ctl);
		close(signal_fd);
		run_payload(ctx, master, &go, ruleset, fail_pipe[1], umask_saved);
	}
	for (int fd = 0; fd < 3 && ctx->dup_to; fd++)
		if (ctx->dup_to[fd] > 2)
			close(ctx->dup_to[fd]);
	if (ruleset >= 0)
		close(jr_steal_fd(&ruleset));
	close(fail_pipe[1]);
	if (master >= 0)
		close(jr_steal_fd(&master));
	/* The command has its stdio; init keeps no handle on the caller's. */
	jr_stdio_to_devnull();

	struct payload_failure failure = { 0 };
	ssize_t got = read(fail_pipe[0], &failure, sizeof(failure));
	close(fail_pipe[0]);
	int status = reap_until_payload_exits(ctx, signal_fd, payload);
	kill_everything_else(ctx->plan);

	if (got == (ssize_t)sizeof(failure) && !failure.is_exec) {
		struct jr_msg msg = { .type = JR_MSG_ERROR, .errnum = failure.errnum };
		snprintf(msg.text, sizeof(msg.text), "%s", failure.text);
		jr_msg_send(ctx->ctl, &msg, -1, NULL);
		_exit(JR_EXIT_FAILURE);
	}
	struct jr_msg done = { .type = JR_MSG_EXITED, .wait_status = status };
	if (got == (ssize_t)sizeof(failure)) {
		done.exec_errno = failure.errnum;
		snprintf(done.text, sizeof(done.text), "%s", failure.text);
	}
	jr_msg_send(ctx->ctl, &done, -1, NULL);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}
