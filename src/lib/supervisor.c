/* The supervisor: the part of jailrun that stays outside the jail.  It
 * opens what only the caller may open, creates the namespaces, writes the
 * id maps, releases init, relays the terminal and signals, and collects
 * the command's status. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char **environ;

/* SIGPIPE too: a reader of our output going away is not our death (the
 * terminal would stay raw); the write fails with EPIPE instead. */
static const int supervisor_signals[] = { SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2,
					  SIGWINCH, SIGCHLD, SIGPIPE, SIGTSTP, SIGCONT };

struct supervisor {
	const struct jr_plan *plan;
	const struct jr_run_options *opts;
	struct jr_ids ids;
	struct jr_mount_sources sources;
	int ctl;       /* our end of the control channel */
	int signal_fd;
	int pidfd;
	pid_t init_pid;
	sigset_t saved_mask;
	bool mask_saved;
	struct jr_pty_relay pty;
	struct jr_placeholders placeholders;
	char private_dir[4096]; /* Landlock-only isolation: home/ and tmp/ for the run */
	unsigned pty_mask;
	int timer_fd;      /* limit time: first the limit, then the grace */
	struct jr_cgroup cgroup;
	struct jr_output output;  /* limit output: stdout/stderr relayed and capped */
	int notify_fd;            /* the seccomp listener while anything can still be denied */
	bool denials_counted;     /* the listener was handed over */
	struct jr_denials denials;
	const char *step;         /* what is being done, for a failure's report */
	/* A session: requests come through listen_fd instead of one command. */
	const struct jr_session_info *session;
	int listen_fd, ready_fd, idle_fd;
	unsigned active;
	pid_t pasta_pid;          /* net pasta: the pasta process, 0 when none */
	pid_t proxy_pid;          /* net proxy: the egress proxy's process, 0 when none */
	int proxy_fd;             /* its refusals and log lines */
	struct jr_net_denials net_denials;
	struct jr_egress_bpf *egress_bpf; /* net host with allow cidr: the kernel CIDR filter */
	bool terminating;  /* SIGTERM sent, grace running */
	bool timed_out;
	/* outcome */
	bool init_exited;
	int init_status;
	struct rusage usage; /* init's, with its reaped descendants' */
	bool have_exit_msg;
	struct jr_msg exit_msg;
	jr_error_t *jail_error; /* setup failure reported by init */
	uint64_t t0;
};

static void say(struct supervisor *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct supervisor *s, const char *fmt, ...)
{
	if (!s->opts->log)
		return;
	char line[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	char stamped[700];
	snprintf(stamped, sizeof(stamped), "[%8.2f ms] %s",
		 (double)(jr_now_us() - s->t0) / 1000.0, line);
	s->opts->log(s->opts->log_userdata, stamped);
}

/* The descriptors the jail's pty stands in for: every terminal among 0-2
 * (so the jail never holds the caller's), plus 0 and 1 when forced. */
static unsigned pty_mask(const struct jr_run_options *opts)
{
	unsigned ttys = jr_pty_tty_mask();
	if (opts->pty == 0)
		return 0;
	return opts->pty > 0 ? ttys | 3u : ttys;
}

/* The jail's init relies on 0-2 being taken: a closed one would be
 * reused by its signalfd or control socket and then overwritten. */
static int ensure_stdio_open(jr_error_t **err)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (null < 0)
			return jr_fail(err, errno, "opening /dev/null for closed descriptor %d", fd);
		if (null != fd) {
			dup2(null, fd);
			close(null);
		}
	}
	return 0;
}

static int block_signals(struct supervisor *s, jr_error_t **err)
{
	sigset_t mask;
	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(supervisor_signals) / sizeof(supervisor_signals[0]); i++)
		sigaddset(&mask, supervisor_signals[i]);
	if (sigprocmask(SIG_BLOCK, &mask, &s->saved_mask) < 0)
		return jr_fail(err, errno, "sigprocmask");
	s->mask_saved = true;
	s->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->signal_fd < 0)
		return jr_fail(err, errno, "signalfd");
	return 0;
}

/* Runs in the child of clone3: becomes the jail's init, never returns. */
__attribute__((noreturn)) static void start_init(struct supervisor *s, int child_ctl,
						 char *const argv[])
{
	close(s->ctl);
	close(s->signal_fd);
	close(s->pidfd);
	struct jr_init_ctx ctx = {
		.plan = s->plan,
		.ids = &s->ids,
		.sources = &s->sources,
		.argv = argv,
		.envp = s->plan->envp,
		.ctl = child_ctl,
		.private_dir = s->private_dir[0] ? s->private_dir : NULL,
		.dup_to = s->output.dup_to,
		.session = s->session,
	};
	jr_init_main(&ctx);
}

/* Landlock-only isolation has no tmpfs: a directory of the caller's,
 * 0700, stands in for the home and /tmp, and is removed afterwards. */
static int make_private_dir(struct supervisor *s, jr_error_t **err)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	const char *base = runtime && runtime[0] == '/' ? runtime : "/tmp";
	snprintf(s->private_dir, sizeof(s->private_dir), "%s/jailrun-%u.XXXXXX", base,
		 (unsigned)getuid());
	if (!mkdtemp(s->private_dir)) {
		int e = errno;
		s->private_dir[0] = '\0';
		return jr_fail(err, e, "making the private directory in %s", base);
	}
	char sub[4200];
	snprintf(sub, sizeof(sub), "%s/home", s->private_dir);
	if (mkdir(sub, 0700) < 0)
		return jr_fail(err, errno, "mkdir %s", sub);
	snprintf(sub, sizeof(sub), "%s/tmp", s->private_dir);
	if (mkdir(sub, 0700) < 0)
		return jr_fail(err, errno, "mkdir %s", sub);
	return 0;
}

static int release_init(struct supervisor *s, unsigned pty, jr_error_t **err)
{
	if (!s->plan->landlock_only && jr_write_id_maps(s->init_pid, &s->ids, err) < 0)
		return -1;
	if (s->plan->net_pasta) {
		if (jr_pasta_start(s->init_pid, &s->pasta_pid, err) < 0)
			return -1;
		say(s, "pasta (pid %d) connected the jail's network", (int)s->pasta_pid);
	}
	if (s->ids.caller_is_root) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)s->init_pid);
		_cleanup_close_ int userns = open(path, O_RDONLY | O_CLOEXEC);
		if (userns < 0)
			return jr_fail(err, errno, "opening %s", path);
		if (jr_mount_sources_idmap(s->plan, &s->sources, userns, err) < 0)
			return -1;
		/* init holds its own copies now. */
		jr_mount_sources_close(&s->sources);
	}
	struct jr_msg go = { .type = JR_MSG_GO, .pty_mask = (int32_t)pty,
			     .flags = (s->opts->count_denials ? JR_GO_COUNT_DENIALS : 0) |
				      (s->session ? JR_GO_SESSION : 0) };
	for (int fd = 0; pty && fd < 3 && !go.winsize.ws_row; fd++)
		ioctl(fd, TIOCGWINSZ, &go.winsize);
	return jr_msg_send(s->ctl, &go, -1, err);
}

/* A session stops after idle_s with no request running. */
static void session_idle_timer(struct supervisor *s)
{
	if (!s->session || !s->session->idle_s || s->idle_fd < 0)
		return;
	struct itimerspec t = { .it_value = { s->active ? 0 : (time_t)s->session->idle_s, 0 } };
	timerfd_settime(s->idle_fd, 0, &t, NULL);
}

/* Whether pid is in our user namespace: a process in some jail (which,
 * for a caller that is not root, has the caller's uid) is not, and must
 * not drive a session that may be less confined than its own jail. */
static bool same_user_namespace(pid_t pid)
{
	char path[64], theirs[64], ours[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	ssize_t a = readlink(path, theirs, sizeof(theirs) - 1);
	ssize_t b = readlink("/proc/self/ns/user", ours, sizeof(ours) - 1);
	if (pid <= 0 || a <= 0 || b <= 0)
		return false;
	theirs[a] = ours[b] = '\0';
	return !strcmp(theirs, ours);
}

/* A client of the session: only the session's own user may talk to it
 * (the directory's mode says so too; this holds even if it did not). */
static void session_accept(struct supervisor *s)
{
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid() ||
	    !same_user_namespace(cred.pid)) {
		say(s, "refused a session client (uid %u, pid %d)", (unsigned)cred.uid, (int)cred.pid);
		close(fd);
		return;
	}
	struct jr_msg msg = { .type = JR_MSG_CLIENT };
	jr_msg_send(s->ctl, &msg, fd, NULL);
	close(fd);
	/* Busy until init says otherwise: a file request never reports. */
	if (s->idle_fd >= 0 && s->session->idle_s) {
		struct itimerspec t = { .it_value = { (time_t)s->session->idle_s, 0 } };
		timerfd_settime(s->idle_fd, 0, &t, NULL);
	}
}

static int handle_ctl(struct supervisor *s, jr_error_t **err)
{
	struct jr_msg msg;
	int fd = -1;
	int r = jr_msg_recv(s->ctl, &msg, &fd, err);
	if (r <= 0) {
		if (r == 0) {
			close(s->ctl);
			s->ctl = -1;
		}
		if (fd >= 0)
			close(fd);
		return r;
	}
	switch (msg.type) {
	case JR_MSG_LOG:
		say(s, "%s", msg.text);
		break;
	case JR_MSG_PTY:
		if (fd < 0)
			return jr_fail(err, EPROTO, "control channel: pty message without a descriptor");
		if (jr_pty_relay_start(&s->pty, fd, s->pty_mask, err) < 0) {
			close(fd);
			return -1;
		}
		fd = -1;
		break;
	case JR_MSG_ERROR:
		/* The text already ends with strerror(errnum). */
		jr_fail(&s->jail_error, 0, "%s", msg.text);
		if (s->jail_error)
			s->jail_error->errnum = msg.errnum;
		break;
	case JR_MSG_EXITED:
		s->exit_msg = msg;
		s->have_exit_msg = true;
		break;
	case JR_MSG_READY:
		if (s->ready_fd >= 0) {
			ssize_t ignored = write(s->ready_fd, "ok", 2);
			(void)ignored;
			close(s->ready_fd);
			s->ready_fd = -1;
		}
		say(s, "session %s serving", s->session ? s->session->name : "?");
		break;
	case JR_MSG_ACTIVE:
		s->active = (unsigned)msg.wait_status;
		session_idle_timer(s);
		break;
	case JR_MSG_PROXY:
		if (fd >= 0 && s->plan->net_proxy && !s->proxy_pid) {
			if (jr_proxy_start(s->plan, &s->ids, fd, s->opts->log != NULL, &s->proxy_pid,
					   &s->proxy_fd, err) < 0) {
				close(fd);
				return -1;
			}
			say(s, "egress proxy (pid %d) serves 127.0.0.1:%d in the jail", (int)s->proxy_pid,
			    JR_PROXY_PORT);
			/* What the jail makes it hold counts against the jail. */
			if (s->cgroup.memory) {
				char pid[16];
				snprintf(pid, sizeof(pid), "%d", (int)s->proxy_pid);
				jr_cgroup_write(s->cgroup.memory, "cgroup.procs", pid, NULL);
			}
		}
		break;
	case JR_MSG_NOTIFY:
		if (fd >= 0 && s->notify_fd < 0 && !s->denials_counted) {
			s->notify_fd = fd;
			s->denials_counted = true;
			fd = -1;
			say(s, "seccomp listener in place: denials are counted");
		}
		break;
	default:
		break;
	}
	if (fd >= 0)
		close(fd);
	return 1;
}

static void handle_signals(struct supervisor *s)
{
	struct signalfd_siginfo si;
	while (read(s->signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
		case SIGPIPE:
			break; /* the pidfd says when init is done; EPIPE says the rest */
		case SIGWINCH:
			jr_pty_relay_resize(&s->pty);
			break;
		case SIGTSTP:
			/* Stop like any job, with the caller's terminal restored. */
			jr_pty_relay_suspend(&s->pty);
			kill(getpid(), SIGSTOP);
			break;
		case SIGCONT:
			jr_pty_relay_resume(&s->pty);
			break;
		default:
			if (s->session && (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT ||
					   si.ssi_signo == SIGHUP)) {
				/* A session's supervisor told to go: stop the jail,
				 * then clean up as after --stop. */
				say(s, "signal %u: stopping the session", si.ssi_signo);
				if (s->ctl >= 0)
					shutdown(s->ctl, SHUT_WR);
				break;
			}
			say(s, "forwarding signal %u", si.ssi_signo);
			kill(s->init_pid, (int)si.ssi_signo);
			break;
		}
	}
}

static void reap_init(struct supervisor *s)
{
	siginfo_t info = { 0 };
	/* The raw call: its fifth argument, which libc's waitid() does not
	 * pass, is init's rusage including every process it reaped, which is
	 * every process of the jail. */
	if (syscall(SYS_waitid, P_PIDFD, s->pidfd, &info, WEXITED, &s->usage) < 0)
		return;
	s->init_exited = true;
	s->init_status = info.si_code == CLD_EXITED ? W_EXITCODE(info.si_status, 0)
						    : W_EXITCODE(0, info.si_status);
}

/* One datagram from the egress proxy; false when there is none now. */
static bool proxy_report(struct supervisor *s)
{
	char line[600];
	int r = jr_proxy_read_report(s->proxy_fd, &s->net_denials, line, sizeof(line));
	if (r == 0) {
		say(s, "the egress proxy has exited");
		close(s->proxy_fd);
		s->proxy_fd = -1;
		return false;
	}
	if (line[0])
		say(s, "%s", line);
	return r == 1;
}

static int arm_timer(struct supervisor *s, uint64_t ms, jr_error_t **err)
{
	if (s->timer_fd < 0 && (s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC)) < 0)
		return jr_fail(err, errno, "timerfd_create");
	struct itimerspec t = { .it_value = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L } };
	if (timerfd_settime(s->timer_fd, 0, &t, NULL) < 0)
		return jr_fail(err, errno, "timerfd_settime");
	return 0;
}

/* The time limit: SIGTERM to every process of the jail (through init),
 * then after the grace tell init to kill everything (closing our side of
 * the channel does that, and works even if init does not read it). */
static int on_timer(struct supervisor *s, jr_error_t **err)
{
	uint64_t ticks;
	if (read(s->timer_fd, &ticks, sizeof(ticks)) < 0)
		return 0;
	if (!s->terminating) {
		say(s, "time limit of %.1f s reached: SIGTERM to the jail", (double)s->plan->time_ms / 1000);
		s->terminating = s->timed_out = true;
		struct jr_msg msg = { .type = JR_MSG_TERMINATE };
		jr_msg_send(s->ctl, &msg, -1, NULL);
		return arm_timer(s, s->plan->kill_after_ms, err);
	}
	say(s, "grace of %.1f s over: killing the jail", (double)s->plan->kill_after_ms / 1000);
	shutdown(s->ctl, SHUT_WR);
	if (!s->plan->landlock_only)
		syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0); /* ends the pid namespace */
	return 0;
}

static int supervise(struct supervisor *s, jr_error_t **err)
{
	if (s->plan->time_ms && arm_timer(s, s->plan->time_ms, err) < 0)
		return -1;
	while (!s->init_exited) {
		struct pollfd pfd[16];
		int n = 0;
		pfd[n++] = (struct pollfd){ .fd = s->pidfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = s->signal_fd, .events = POLLIN };
		int timer_at = -1;
		if (s->timer_fd >= 0) {
			timer_at = n;
			pfd[n++] = (struct pollfd){ .fd = s->timer_fd, .events = POLLIN };
		}
		int ctl_at = -1;
		if (s->ctl >= 0) {
			ctl_at = n;
			pfd[n++] = (struct pollfd){ .fd = s->ctl, .events = POLLIN };
		}
		int listen_at = -1, idle_at = -1;
		if (s->listen_fd >= 0 && s->ready_fd < 0) {
			listen_at = n;
			pfd[n++] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
		}
		if (s->idle_fd >= 0) {
			idle_at = n;
			pfd[n++] = (struct pollfd){ .fd = s->idle_fd, .events = POLLIN };
		}
		int notify_at = -1;
		if (s->notify_fd >= 0) {
			notify_at = n;
			pfd[n++] = (struct pollfd){ .fd = s->notify_fd, .events = POLLIN };
		}
		int proxy_at = -1;
		if (s->proxy_fd >= 0) {
			proxy_at = n;
			pfd[n++] = (struct pollfd){ .fd = s->proxy_fd, .events = POLLIN };
		}
		int first_out = n;
		n += jr_output_pollfds(&s->output, &pfd[n]);
		int first_pty = n;
		n += jr_pty_relay_pollfds(&s->pty, &pfd[n]);
		if (poll(pfd, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return jr_fail(err, errno, "poll");
		}
		if (pfd[1].revents)
			handle_signals(s);
		if (timer_at >= 0 && pfd[timer_at].revents && on_timer(s, err) < 0)
			return -1;
		if (ctl_at >= 0 && s->ctl >= 0 && pfd[ctl_at].revents && handle_ctl(s, err) < 0)
			return -1;
		if (listen_at >= 0 && pfd[listen_at].revents)
			session_accept(s);
		if (idle_at >= 0 && pfd[idle_at].revents) {
			uint64_t ticks;
			if (read(s->idle_fd, &ticks, sizeof(ticks)) > 0 && !s->active) {
				say(s, "idle for %u s: stopping the session", s->session->idle_s);
				shutdown(s->ctl, SHUT_WR); /* init kills everything and exits */
				close(s->idle_fd);
				s->idle_fd = -1;
			}
		}
		if (notify_at >= 0 && pfd[notify_at].revents) {
			if (pfd[notify_at].revents & POLLIN)
				jr_denials_handle(&s->denials, s->notify_fd, &s->plan->seccomp.policy);
			else if (pfd[notify_at].revents & (POLLHUP | POLLERR)) {
				/* Every filtered process is gone: stop polling it. */
				close(s->notify_fd);
				s->notify_fd = -1;
			}
		}
		if (proxy_at >= 0 && pfd[proxy_at].revents)
			proxy_report(s);
		jr_output_handle(&s->output, &pfd[first_out], first_pty - first_out);
		jr_pty_relay_handle(&s->pty, &pfd[first_pty], n - first_pty);
		if (pfd[0].revents)
			reap_init(s);
	}
	/* init has exited: the whole jail is gone.  Collect what it said last. */
	while (s->ctl >= 0 && handle_ctl(s, err) > 0)
		;
	while (s->proxy_fd >= 0 && proxy_report(s))
		;
	jr_pty_relay_drain(&s->pty);
	jr_output_drain(&s->output);
	return 0;
}

static uint64_t timeval_us(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000u + (uint64_t)tv->tv_usec;
}

/* What is known even when the jail was never built. */
static void fill_accounting(struct supervisor *s, struct jr_result *res)
{
	res->wall_us = jr_now_us() - s->t0;
	res->user_us = timeval_us(&s->usage.ru_utime);
	res->sys_us = timeval_us(&s->usage.ru_stime);
	res->max_rss_kb = s->usage.ru_maxrss;
	jr_cgroup_peaks(&s->cgroup, &res->memory_peak, &res->pids_peak);
	res->output_bytes = s->output.budget.counting ? (int64_t)s->output.budget.produced : -1;
	res->truncated = s->output.budget.truncated;
	res->denials_counted = s->denials_counted;
	if (jr_denials_export(&s->denials, &res->denials, &res->n_denials) < 0)
		res->denials_counted = false;
	jr_egress_bpf_collect(s->egress_bpf, &s->net_denials);
	jr_net_denials_export(&s->net_denials, &res->net_denials, &res->n_net_denials);
}

static void fill_result(struct supervisor *s, struct jr_result *res)
{
	int status = s->have_exit_msg ? s->exit_msg.wait_status : s->init_status;
	res->exec_errno = s->have_exit_msg ? s->exit_msg.exec_errno : 0;
	res->timed_out = s->timed_out;
	res->oom_killed = jr_cgroup_oom_killed(&s->cgroup);
	if (WIFSIGNALED(status)) {
		res->exit_code = -1;
		res->signal = WTERMSIG(status);
		res->status = 128 + res->signal;
	} else {
		res->exit_code = WEXITSTATUS(status);
		res->signal = 0;
		res->status = res->exit_code;
	}
	if (s->timed_out)
		res->status = JR_EXIT_TIMEOUT; /* as timeout(1) */
}

static void supervisor_cleanup(struct supervisor *s)
{
	jr_pty_relay_stop(&s->pty);
	jr_pasta_stop(s->pasta_pid);
	jr_proxy_stop(s->proxy_pid);
	if (s->proxy_fd >= 0)
		close(s->proxy_fd);
	jr_net_denials_free(&s->net_denials);
	jr_egress_bpf_stop(s->egress_bpf);
	jr_output_close(&s->output);
	if (s->notify_fd >= 0)
		close(s->notify_fd);
	jr_denials_free(&s->denials);
	jr_mount_sources_close(&s->sources);
	jr_placeholders_remove(&s->placeholders);
	jr_cgroup_destroy(&s->cgroup);
	if (s->private_dir[0])
		jr_remove_tree(s->private_dir);
	if (s->ctl >= 0)
		close(s->ctl);
	if (s->pidfd >= 0)
		close(s->pidfd);
	if (s->signal_fd >= 0)
		close(s->signal_fd);
	if (s->timer_fd >= 0)
		close(s->timer_fd);
	if (s->idle_fd >= 0)
		close(s->idle_fd);
	if (s->ready_fd >= 0)
		close(s->ready_fd);
	if (s->mask_saved)
		sigprocmask(SIG_SETMASK, &s->saved_mask, NULL);
	jr_error_free(s->jail_error);
}

static int start_jail(struct supervisor *s, char *const argv[], jr_error_t **err)
{
	say(s, "starting");
	if (s->plan->landlock_only) {
		if (make_private_dir(s, err) < 0)
			return -1;
	} else if (jr_placeholders_create(s->plan, &s->placeholders, err) < 0) {
		return -1;
	}
	say(s, "protected paths locked, %zu placeholders made", s->placeholders.n);
	if (jr_cgroup_create(s->plan, &s->cgroup, err) < 0 ||
	    jr_output_setup(&s->output, s->plan, s->pty_mask, err) < 0)
		return -1;
	if (s->plan->egress_bpf) {
		if (jr_egress_bpf_start(&s->plan->egress, &s->egress_bpf, err) < 0)
			return -1;
		say(s, "kernel CIDR filter loaded: %zu allow cidr rules", s->plan->egress.n_cidrs);
	}
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
		return jr_fail(err, errno, "socketpair");
	s->ctl = pair[0];

	if (s->ids.caller_is_root) {
		/* Root opens the sources here, with its own credentials: inside,
		 * the jail is an unprivileged id that could not reach them.  Its
		 * supplementary groups are dropped so the jail cannot inherit
		 * them (setgroups is denied inside). */
		if (setgroups(0, NULL) < 0) {
			close(pair[1]);
			return jr_fail(err, errno, "dropping supplementary groups");
		}
		if (jr_mount_sources_open(s->plan, &s->sources, err) < 0) {
			close(pair[1]);
			return -1;
		}
		say(s, "bind sources opened");
	}
	if (block_signals(s, err) < 0) {
		close(pair[1]);
		return -1;
	}
	s->init_pid = jr_clone_jail(!s->plan->landlock_only, !s->plan->net_host, &s->pidfd, err);
	if (s->init_pid == 0)
		start_init(s, pair[1], argv);
	close(pair[1]);
	jr_output_close_write_ends(&s->output);
	if (s->init_pid < 0)
		return -1;
	say(s, "namespaces created, init is pid %d", (int)s->init_pid);
	/* Into the run's cgroups before init is released: everything the jail
	 * starts is born inside them. */
	if (jr_cgroup_attach(&s->cgroup, s->init_pid, err) < 0 ||
	    (s->egress_bpf && jr_egress_bpf_attach(s->egress_bpf, s->init_pid, err) < 0) ||
	    release_init(s, s->pty_mask, err) < 0) {
		kill(s->init_pid, SIGKILL);
		reap_init(s);
		return -1;
	}
	say(s, "id maps written (uid %u -> host %u, gid %u -> host %u), init released",
	    s->ids.inside_uid, s->ids.outside_uid, s->ids.inside_gid, s->ids.outside_gid);
	return 0;
}

int jr_run(const jr_plan_t *plan, char *const argv[], const struct jr_run_options *opts,
	   struct jr_result *result, jr_error_t **err)
{
	static const struct jr_run_options defaults = { .pty = -1 };
	struct supervisor s = { .plan = plan, .opts = opts ? opts : &defaults, .ctl = -1,
				.signal_fd = -1, .pidfd = -1, .timer_fd = -1, .notify_fd = -1,
				.listen_fd = -1, .ready_fd = -1, .idle_fd = -1, .proxy_fd = -1,
				.placeholders = { .pool = -1 }, .step = "enforcement" };
	memset(result, 0, sizeof(*result));
	result->exit_code = -1;
	result->memory_peak = result->pids_peak = result->output_bytes = -1;
	s.t0 = jr_now_us();
	if (!argv || !argv[0]) {
		result->failed_step = "setup";
		return jr_fail(err, 0, "no command to run");
	}
	if (jr_plan_check_enforced(plan, err) < 0) {
		result->failed_step = s.step;
		return -1;
	}
	s.step = "setup";
	jr_pty_relay_init(&s.pty);
	s.pty.budget = &s.output.budget;
	jr_output_init(&s.output);
	jr_ids_for_plan(plan, &s.ids);
	if (ensure_stdio_open(err) < 0) {
		result->failed_step = s.step;
		return -1;
	}
	s.pty_mask = pty_mask(s.opts);

	int r = start_jail(&s, argv, err);
	if (r == 0) {
		s.step = "supervise";
		r = supervise(&s, err);
	}
	if (r == 0 && s.jail_error) {
		s.step = "setup";
		*err = jr_steal_ptr(&s.jail_error);
		r = -1;
	}
	if (r == 0 && !s.have_exit_msg && !s.timed_out &&
	    !(s.init_exited && WIFSIGNALED(s.init_status)))
		r = jr_fail(err, 0, "the jail's init exited without reporting the command's status");
	fill_accounting(&s, result);
	if (r == 0) {
		fill_result(&s, result);
		say(&s, "command finished with status %d", result->status);
	} else {
		result->failed_step = s.step;
	}
	supervisor_cleanup(&s);
	return r;
}

void jr_result_release(struct jr_result *result)
{
	for (size_t i = 0; i < result->n_denials; i++)
		free(result->denials[i].syscall);
	free(result->denials);
	result->denials = NULL;
	result->n_denials = 0;
	for (size_t i = 0; i < result->n_net_denials; i++) {
		free(result->net_denials[i].host);
		free(result->net_denials[i].rule);
	}
	free(result->net_denials);
	result->net_denials = NULL;
	result->n_net_denials = 0;
}

/* A session's supervisor: the jail's init serves requests that arrive on
 * listen_fd; ready_fd gets "ok" once it does, or the failure's message.
 * Returns when the session has stopped (and the jail is gone). */
int jr_session_supervise(const jr_plan_t *plan, const struct jr_session_info *info, int listen_fd,
			 int ready_fd, const struct jr_run_options *opts, jr_error_t **err)
{
	static const struct jr_run_options defaults = { .pty = 0 };
	struct supervisor s = { .plan = plan, .opts = opts ? opts : &defaults, .ctl = -1,
				.signal_fd = -1, .pidfd = -1, .timer_fd = -1, .notify_fd = -1,
				.listen_fd = listen_fd, .ready_fd = ready_fd, .idle_fd = -1, .proxy_fd = -1,
				.session = info, .placeholders = { .pool = -1 }, .step = "setup" };
	static char *const no_argv[] = { "session", NULL };
	s.t0 = jr_now_us();
	jr_pty_relay_init(&s.pty);
	jr_output_init(&s.output);
	jr_ids_for_plan(plan, &s.ids);
	int r = jr_plan_check_enforced(plan, err);
	if (r == 0 && info->idle_s &&
	    (s.idle_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC)) < 0)
		r = jr_fail(err, errno, "timerfd_create");
	if (r == 0)
		session_idle_timer(&s);
	if (r == 0)
		r = start_jail(&s, no_argv, err);
	if (r == 0)
		r = supervise(&s, err);
	if (r == 0 && s.jail_error) {
		*err = jr_steal_ptr(&s.jail_error);
		r = -1;
	}
	if (r < 0 && s.ready_fd >= 0) {
		ssize_t ignored = write(s.ready_fd, (*err)->message, strlen((*err)->message));
		(void)ignored;
	}
	supervisor_cleanup(&s);
	return r;
}
