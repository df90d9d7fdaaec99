/* What enforces each clause on this host, the fail-closed check built on
 * it, and the human description of a plan (--explain, -v). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static bool same_loc(const struct jr_loc *a, const struct jr_loc *b)
{
	return a->src == b->src && a->line == b->line && a->col == b->col;
}

/* Second word of a clause's text ("net none" -> "none"). */
static const char *arg1(const struct jr_clause *cl, char *buf, size_t size)
{
	const char *sp = strchr(cl->text, ' ');
	snprintf(buf, size, "%s", sp ? sp + 1 : "");
	buf[strcspn(buf, " ")] = '\0';
	return buf;
}

/* Whether a list clause adds anything: some word after the first `skip`
 * words lacks the '!' of a removal. */
static bool adds_entries(const char *text, int skip)
{
	const char *w = text;
	for (int i = 0; w; i++) {
		if (i >= skip && *w != '!')
			return true;
		w = strchr(w, ' ');
		if (w)
			w++;
	}
	return false;
}

static const char *const not_yet = "not implemented in this version";
static const char *const overridden = "overridden by a later clause";

static const char *net_mode_name(enum jr_net_mode m)
{
	static const char *const names[] = { "none", "host", "proxy", "pasta" };
	return names[m];
}

/* Landlock-only isolation: the clauses it enforces differently, or not
 * at all (then refused unless landlock best-effort).  Returns -1 for a
 * clause assessed as in namespace isolation. */
static int assess_landlock_only(const jr_policy_t *p, const jr_plan_t *plan,
				const struct jr_clause *cl, char *mech, size_t size)
{
	const unsigned gaps = plan->landlock.gaps;
	const char *why = NULL;
	switch (cl->type) {
	case JR_CL_ISOLATION:
		snprintf(mech, size, "no namespaces: Landlock and seccomp confine the command on the host itself");
		return 1;
	case JR_CL_TMPFS:
		if (gaps & JR_LL_GAP_TMPFS)
			why = "a tmpfs needs a mount namespace, which this mode does not make";
		break;
	case JR_CL_MASK:
		if (gaps & JR_LL_GAP_MASK_IN_WRITABLE)
			why = "Landlock cannot take a path back from a writable tree it grants";
		else {
			snprintf(mech, size, "Landlock: the tree around each hidden path is granted entry by entry, the path itself not at all");
			return 1;
		}
		break;
	case JR_CL_PROTECT:
		if (gaps & JR_LL_GAP_PROTECT_IN_WRITABLE)
			why = "Landlock cannot keep a path read-only inside a writable tree it grants";
		else {
			snprintf(mech, size, "nothing to do: no protected path lies in a writable tree");
			return 1;
		}
		break;
	case JR_CL_HOME:
		if (p->home != JR_HOME_TMPFS)
			return -1;
		snprintf(mech, size, "a private directory made for the run (HOME points there), granted by Landlock");
		return 1;
	case JR_CL_NET:
		if (p->net != JR_NET_NONE && p->net != JR_NET_PROXY)
			return -1;
		snprintf(mech, size, "%sseccomp refuses IP and packet sockets%s",
			 p->net == JR_NET_PROXY ? "no network namespace for the egress proxy, so nothing is reachable (stricter than asked): " : "",
			 plan->landlock.scoped ? "; Landlock scopes abstract unix sockets" : "");
		return 1;
	case JR_CL_ALLOW:
	case JR_CL_RESOLVE:
		if (p->net != JR_NET_PROXY)
			return -1;
		snprintf(mech, size, "nothing to allow: without a network namespace the egress proxy cannot run, so IP sockets are refused");
		return 1;
	case JR_CL_HOSTNAME:
		why = "the hostname needs a UTS namespace, which this mode does not make";
		break;
	case JR_CL_USER:
		if (p->user == JR_USER_SAME)
			return -1;
		why = "another identity needs a user namespace, which this mode does not make";
		break;
	default:
		return -1;
	}
	if (!why)
		return -1;
	snprintf(mech, size, "isolation landlock: %s%s", why,
		 p->landlock_best_effort ? " (dropped: best-effort)" : "");
	return p->landlock_best_effort;
}

/* allow host|cidr|connect|bind: which network mode enforces which. */
static bool assess_allow(const jr_policy_t *p, const jr_plan_t *plan, const struct jr_clause *cl,
			 const char *kind, char *mech, size_t size)
{
	if (!adds_entries(cl->text, 2)) {
		snprintf(mech, size, "removes entries only");
		return true;
	}
	if (p->net == JR_NET_NONE) {
		snprintf(mech, size, "nothing to allow: the network is off (net none)");
		return true;
	}
	bool ports = !strcmp(kind, "connect") || !strcmp(kind, "bind");
	if (ports) {
		if (p->net != JR_NET_HOST) {
			snprintf(mech, size, "allow %s limits TCP ports under net host only (Landlock); use allow host or allow cidr with net proxy", kind);
			return false;
		}
		if (plan->landlock.abi >= 4) {
			snprintf(mech, size, "Landlock (ABI 4): TCP %s only to the listed ports, every other port refused", kind);
			return true;
		}
		snprintf(mech, size, "TCP port rules need Landlock ABI 4; this kernel has %d", plan->landlock.abi);
		return false;
	}
	bool host = !strcmp(kind, "host");
	if (p->net == JR_NET_PROXY && !plan->landlock_only) {
		snprintf(mech, size, host ? "the egress proxy: these names (without a port: plain HTTP on 80 and TLS on 443 whose server name is the name; with one: any TCP to it), resolved by the proxy itself, which dials the address it checked; an internal address is refused unless allow cidr covers it"
					  : "the egress proxy: these addresses (every port unless one is given), including internal ones");
		return true;
	}
	/* `--net host` given on the command line to a policy written for the
	 * proxy (default.pol) means the open network the user asked for: the
	 * file's names served the proxy.  A name listed with the mode, or
	 * after it on the command line, asks for filtering net host lacks. */
	if (host && p->net_s.loc.src && !p->net_s.loc.src->path && cl->loc.src && cl->loc.src->path) {
		snprintf(mech, size, "superseded: the command line's net %s lets every destination through (these names were for the egress proxy)", net_mode_name(p->net));
		return true;
	}
	if (host) {
		snprintf(mech, size, "only the egress proxy (net proxy) can hold a connection to a name; net %s cannot", net_mode_name(p->net));
		return false;
	}
	if (p->net == JR_NET_HOST && plan->egress_bpf) {
		snprintf(mech, size, "kernel CIDR filter: cgroup BPF programs (connect4, connect6, sendmsg4, sendmsg6, sock_create) refuse every other destination of every TCP and UDP socket of the jail; other IP sockets (ICMP echo, raw, UDP-Lite, SCTP), whose destinations no hook sees, cannot be made");
		return true;
	}
	if (p->net == JR_NET_HOST) {
		char why[200];
		jr_egress_bpf_usable(why, sizeof(why));
		snprintf(mech, size, "allow cidr under net host needs the kernel CIDR filter: %s", why);
		return false;
	}
	snprintf(mech, size, "net %s has no egress filter for allow cidr; use net proxy", net_mode_name(p->net));
	return false;
}

/* Fills *mech; returns whether the clause is in force (or harmless). */
static bool assess(const jr_policy_t *p, const jr_plan_t *plan, const struct jr_clause *cl,
		   char *mech, size_t size)
{
	char a[64];
	const char *mode = arg1(cl, a, sizeof(a));
	if (plan->landlock_only) {
		int r = assess_landlock_only(p, plan, cl, mech, size);
		if (r >= 0)
			return r;
	}
	switch (cl->type) {
	case JR_CL_ISOLATION:
		snprintf(mech, size, "user, mount, pid, net, ipc, uts and cgroup namespaces");
		return true;
	case JR_CL_PROVIDER:
		snprintf(mech, size, "configuration of a provider plugin, used when --provider selects it (the local jail ignores it)");
		return true;
	case JR_CL_GUARD:
		snprintf(mech, size, "jailrun serve and mcp: writeFile of an existing file the client has not read is refused (commands run with exec are not affected)");
		return true;
	case JR_CL_WORKSPACE:
		if (!same_loc(&cl->loc, &p->workspace_s.loc))
			break;
		if (p->workspace_mode == JR_WS_OVERLAY) {
			snprintf(mech, size, "overlay workspaces (snapshot/restore) are %s", not_yet);
			return false;
		}
		snprintf(mech, size, "bind mount of %s, %s, as the working directory (mount namespace)",
			 plan->workspace, p->workspace_mode == JR_WS_RO ? "read-only" : "read-write");
		return true;
	case JR_CL_RO:
		snprintf(mech, size, "read-only bind mounts, nosuid, nodev (mount namespace, MOUNT_ATTR_RDONLY)");
		return true;
	case JR_CL_RW:
		snprintf(mech, size, "read-write bind mounts, nosuid, nodev (mount namespace)");
		return true;
	case JR_CL_TMPFS:
		snprintf(mech, size, "tmpfs private to the jail (mount namespace)");
		return true;
	case JR_CL_MASK:
		snprintf(mech, size, "an empty read-only tmpfs or file over each path the jail would see (mount namespace); paths it cannot see need none");
		return true;
	case JR_CL_PROTECT:
		snprintf(mech, size, "read-only bind over each existing path inside a writable tree; a missing one whose parent exists gets an empty read-only tmpfs on a placeholder directory made for the run (mount namespace)");
		return true;
	case JR_CL_EXEC:
		if (plan->landlock.enabled) {
			snprintf(mech, size, plan->exec_narrowed
					 ? "Landlock: execution only beneath the exec trees; the writable trees outside them are mounted noexec (no ld.so or mmap trick) and memfd_create must seal memfds against execution (seccomp)"
					 : "Landlock: execution only beneath the exec trees (checked at execve only: without namespaces the dynamic loader can still map a program)");
			return true;
		}
		snprintf(mech, size, "restricting execution needs Landlock, which this kernel lacks");
		return p->landlock_best_effort;
	case JR_CL_HOME:
		if (!same_loc(&cl->loc, &p->home_s.loc))
			break;
		snprintf(mech, size, "%s at %s (mount namespace)",
			 p->home == JR_HOME_TMPFS ? "empty tmpfs"
			 : p->home == JR_HOME_RO ? "read-only bind" : "read-write bind",
			 plan->home ? plan->home : "(no home directory)");
		return true;
	case JR_CL_NET:
		if (!same_loc(&cl->loc, &p->net_s.loc))
			break;
		if (p->net == JR_NET_NONE) {
			snprintf(mech, size, plan->landlock_only
					 ? "no IP sockets (seccomp): there is no network namespace of the jail's own"
					 : "own network namespace with only lo, brought up with libnl-route");
			return true;
		}
		if (p->net == JR_NET_HOST) {
			snprintf(mech, size, "the host's network namespace: no network isolation; TCP ports only as allow connect/bind say (Landlock), UDP and the rest open");
			return true;
		}
		if (p->net == JR_NET_PASTA && !plan->landlock_only) {
			if (!jr_pasta_path()) {
				snprintf(mech, size, "pasta is not installed (apt-get install passt)");
				return false;
			}
			if (access("/dev/net/tun", R_OK | W_OK) < 0) {
				snprintf(mech, size, "pasta needs /dev/net/tun, which this user cannot open (%s)", strerror(errno));
				return false;
			}
			snprintf(mech, size, "own network namespace connected to the host's network by pasta(1) (user-mode TCP/UDP, started by jailrun outside the jail); loopback services of the host are reached through the gateway address");
			return true;
		}
		if (p->net == JR_NET_PROXY && !plan->landlock_only) {
			snprintf(mech, size, "own network namespace with only lo; jailrun's egress proxy, outside the jail, serves 127.0.0.1:%d inside (HTTP CONNECT and plain HTTP; HTTP_PROXY and the others point there) and lets through only what allow host and allow cidr say", JR_PROXY_PORT);
			return true;
		}
		snprintf(mech, size, "net %s needs a network namespace of the jail's own, which isolation landlock does not make", mode);
		return false;
	case JR_CL_ALLOW:
		return assess_allow(p, plan, cl, mode, mech, size);
	case JR_CL_RESOLVE:
		if (p->net == JR_NET_PROXY)
			snprintf(mech, size, "the egress proxy's answer for the name (its address still obeys the internal-address rule)");
		else
			snprintf(mech, size, "nothing to do: only the egress proxy (net proxy) resolves names");
		return true;
	case JR_CL_ENV:
		if ((!strcmp(mode, "inherit") || !strcmp(mode, "clear")) &&
		    !same_loc(&cl->loc, &p->env_s.loc))
			break;
		snprintf(mech, size, "the command's environment, computed by jailrun before execve");
		return true;
	case JR_CL_USER:
		if (!same_loc(&cl->loc, &p->user_s.loc))
			break;
		snprintf(mech, size, "user namespace id map");
		return true;
	case JR_CL_HOSTNAME:
		if (!same_loc(&cl->loc, &p->hostname_s.loc))
			break;
		snprintf(mech, size, "UTS namespace");
		return true;
	case JR_CL_CAPS:
		if (!same_loc(&cl->loc, &p->caps_s.loc))
			break;
		if (p->caps == JR_CAPS_NONE) {
			snprintf(mech, size, "every capability set emptied with libcap, securebits locked, no_new_privs");
			return true;
		}
		snprintf(mech, size, "keeping capabilities is %s (all are dropped)", not_yet);
		return false;
	case JR_CL_LIMIT:
		for (int k = 0; k < JR_LIMIT_COUNT; k++) {
			if (!p->limits[k].s.set || !same_loc(&cl->loc, &p->limits[k].s.loc))
				continue;
			switch ((enum jr_limit_id)k) {
			case JR_LIMIT_TIME:
				snprintf(mech, size, "wall clock, kept by jailrun outside the jail: at the limit SIGTERM to every process of the jail, SIGKILL %.1f s later, exit status 124",
					 (double)plan->kill_after_ms / 1000);
				return true;
			case JR_LIMIT_KILL_AFTER:
				snprintf(mech, size, "the grace between SIGTERM and SIGKILL when the time limit is reached");
				return true;
			case JR_LIMIT_NOFILE:
			case JR_LIMIT_FSIZE:
			case JR_LIMIT_CORE:
				snprintf(mech, size, "setrlimit (%s), soft and hard, before execve",
					 k == JR_LIMIT_NOFILE ? "RLIMIT_NOFILE" : k == JR_LIMIT_FSIZE ? "RLIMIT_FSIZE" : "RLIMIT_CORE");
				return true;
			case JR_LIMIT_MEMORY:
			case JR_LIMIT_PIDS:
			case JR_LIMIT_CPU:
				if (plan->limits_by == JR_LIMITS_CGROUP_V1) {
					snprintf(mech, size, "a cgroup v1 group of the run's own (%s), removed afterwards",
						 k == JR_LIMIT_MEMORY ? "memory.limit_in_bytes; OOM kills are reported"
						 : k == JR_LIMIT_PIDS ? "pids.max" : "cpu.cfs_quota_us per 100 ms");
					return true;
				}
				if (k == JR_LIMIT_CPU) {
					snprintf(mech, size, "a share of cores needs a cgroup, which jailrun cannot make here (not root, or no cpu controller; delegated cgroup v2 is not used yet)");
					return false;
				}
				if (k == JR_LIMIT_PIDS && plan->landlock_only) {
					snprintf(mech, size, "without a cgroup or a user namespace, RLIMIT_NPROC would count all the user's processes on the host");
					return false;
				}
				snprintf(mech, size, "%s (no cgroup here: not root, or no such controller)",
					 k == JR_LIMIT_MEMORY ? "RLIMIT_AS per process: address space, which counts more than resident memory"
							      : "RLIMIT_NPROC: the jail's processes, counted in its user namespace");
				return true;
			case JR_LIMIT_OUTPUT:
				snprintf(mech, size, "the supervisor relays stdout and stderr and passes at most this many bytes, then a truncation marker; the rest is read and dropped");
				return true;
			default:
				snprintf(mech, size, "limit %s is %s", mode, not_yet);
				return false;
			}
		}
		break;
	case JR_CL_SECCOMP:
		if (!strcmp(mode, "default") && !same_loc(&cl->loc, &p->seccomp_default_s.loc))
			break;
		if (!plan->seccomp.policy.len) {
			snprintf(mech, size, "no filter: every syscall is allowed (the default)");
			return true;
		}
		snprintf(mech, size,
			 "seccomp-bpf filter loaded last before execve (libseccomp, binary tree): %u rules, default %s; syscalls of other ABIs (i386, x32) kill the process",
			 plan->seccomp.policy_rules,
			 p->seccomp_default == JR_SC_ALLOW ? "allow"
			 : p->seccomp_default == JR_SC_KILL ? "kill"
			 : p->seccomp_default == JR_SC_LOG ? "log" : "errno");
		return true;
	case JR_CL_LANDLOCK: {
		int abi = plan->landlock.abi;
		if (strstr(cl->text, "best-effort")) {
			snprintf(mech, size, "takes what this kernel has (Landlock ABI %d)", abi);
			return true;
		}
		bool scope = !strcmp(mode, "scope");
		int need = scope ? 6 : p->landlock_abi;
		if (abi >= need && abi > 0) {
			snprintf(mech, size, scope ? "Landlock ABI %d scopes: abstract unix sockets and signals stay inside the jail's domain"
						   : "Landlock ABI %d in force", abi);
			return true;
		}
		snprintf(mech, size, "%s needs Landlock ABI %d, this kernel has %d%s", scope ? "scoping" : "the policy",
			 need, abi, p->landlock_best_effort ? " (dropped: best-effort)" : "");
		return p->landlock_best_effort;
	}
	}
	snprintf(mech, size, "%s", overridden);
	return true;
}

bool jr_plan_clause_overridden(const jr_plan_t *plan, size_t i)
{
	return i < plan->n_clauses && plan->clauses[i].mechanism &&
	       !strcmp(plan->clauses[i].mechanism, overridden);
}

int jr_plan_assess_clauses(const jr_policy_t *p, jr_plan_t *plan, jr_error_t **err)
{
	if (!p->n_clauses)
		return 0;
	plan->clauses = calloc(p->n_clauses, sizeof(*plan->clauses));
	if (!plan->clauses)
		return jr_fail_oom(err);
	for (size_t i = 0; i < p->n_clauses; i++) {
		const struct jr_clause *cl = &p->clauses[i];
		struct jr_plan_clause *pc = &plan->clauses[plan->n_clauses++];
		char mech[512];
		pc->enforced = assess(p, plan, cl, mech, sizeof(mech));
		if (asprintf(&pc->where, "%s:%u:%u", cl->loc.src->name, cl->loc.line, cl->loc.col) < 0)
			pc->where = NULL;
		pc->text = strdup(cl->text);
		if (pc->text && cl->type == JR_CL_PROVIDER)
			jr_redact_kv_words(pc->text); /* a provider's token never printed */
		pc->mechanism = strdup(mech);
		if (!pc->where || !pc->text || !pc->mechanism)
			return jr_fail_oom(err);
	}
	return 0;
}

int jr_plan_check_enforced(const jr_plan_t *plan, jr_error_t **err)
{
	for (size_t i = 0; i < plan->n_clauses; i++) {
		const struct jr_plan_clause *c = &plan->clauses[i];
		if (!c->enforced)
			return jr_fail(err, 0, "%s: '%s' is not enforced: %s; refusing to run", c->where,
				       c->text, c->mechanism);
	}
	return 0;
}

void jr_emitf(jr_line_fn fn, void *ud, const char *fmt, ...)
{
	char line[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fn(ud, line);
}

static void describe_mount(const struct jr_mount *m, jr_line_fn fn, void *ud)
{
	switch (m->kind) {
	case JR_MOUNT_BIND:
		jr_emitf(fn, ud, "  %s <- %s (%s bind, nosuid, nodev%s%s) [%s]", m->target, m->source,
			 m->readonly ? "ro" : "rw", m->noexec ? ", noexec" : "",
			 m->callers && getuid() == 0 ? ", idmapped to the caller" : "", m->origin);
		break;
	case JR_MOUNT_TMPFS:
		jr_emitf(fn, ud, "  %s (tmpfs%s, mode %04o%s) [%s]", m->target,
		     m->readonly ? ", empty, read-only" : "", (unsigned)m->mode,
		     m->placeholder ? ", on a placeholder directory made for the run" : "", m->origin);
		break;
	case JR_MOUNT_EMPTY_FILE:
		jr_emitf(fn, ud, "  %s (empty read-only file) [%s]", m->target, m->origin);
		break;
	case JR_MOUNT_PROC:
		jr_emitf(fn, ud, "  %s (proc of the jail's pid namespace; sys, sysrq-trigger, irq, bus, fs read-only; kcore, keys, kallsyms, timer_list and 5 more hidden)",
		     m->target);
		break;
	case JR_MOUNT_DEV:
		jr_emitf(fn, ud, "  %s (tmpfs: null zero full random urandom tty, own devpts, shm)", m->target);
		break;
	case JR_MOUNT_SYMLINK:
		jr_emitf(fn, ud, "  %s -> %s (symlink)", m->target, m->source);
		break;
	}
}

static void describe_env(const jr_plan_t *plan, jr_line_fn fn, void *ud)
{
	char names[4096] = "";
	size_t n = 0;
	for (char **e = plan->envp; e && *e; e++, n++) {
		size_t len = strcspn(*e, "=");
		if (strlen(names) + len + 2 < sizeof(names))
			strncat(strncat(names, " ", 2), *e, len);
	}
	jr_emitf(fn, ud, "environment: %zu variables passed:%s", n, names);
	names[0] = '\0';
	n = 0;
	for (char **s = plan->scrubbed; s && *s; s++, n++)
		if (strlen(names) + strlen(*s) + 2 < sizeof(names))
			strcat(strcat(names, " "), *s);
	jr_emitf(fn, ud, "environment: %zu scrubbed:%s", n, n ? names : " (none)");
}

static void describe_landlock(const jr_plan_t *plan, jr_line_fn fn, void *ud)
{
	const struct jr_landlock_plan *ll = &plan->landlock;
	if (plan->landlock_only)
		jr_emitf(fn, ud, "isolation landlock: no namespaces.  Not in this mode: a pid namespace (the command sees the host's processes; Landlock keeps it from tracing them%s), a mount namespace (the mounts listed below are not made: Landlock grants the same trees on the host, a private directory stands in for the home and /tmp), the host's SysV IPC and unix sockets (seccomp refuses them), and if jailrun itself is killed with SIGKILL, processes the command started may outlive it",
		     ll->scoped ? " and from signalling them" : "");
	if (!ll->enabled) {
		jr_emitf(fn, ud, "built in: Landlock is not available on this kernel; the mounts alone decide what the jail can touch");
		return;
	}
	jr_emitf(fn, ud,
	     "built in: Landlock ABI %d ruleset, %zu path rules (read-only trees read and execute, writable trees every right%s%s)%s%s",
	     ll->abi, ll->n_rules, ll->abi >= 3 ? " incl. truncate" : "",
	     ll->abi >= 5 ? ", ioctl on devices only in /dev and writable trees" : "",
	     ll->exec_narrowed ? "; execution only beneath the exec trees" : "",
	     ll->scoped ? "; scopes: abstract unix sockets and signals stay inside the jail"
			: "; no scopes (ABI < 6)");
}

void jr_plan_describe(const jr_plan_t *plan, jr_line_fn fn, void *ud)
{
	jr_emitf(fn, ud, "policy %s", plan->policy_name ? plan->policy_name : "(none)");
	jr_emitf(fn, ud, "workspace %s, hostname %s", plan->workspace, plan->hostname);
	jr_emitf(fn, ud, "clauses (%zu):", plan->n_clauses);
	for (size_t i = 0; i < plan->n_clauses; i++) {
		const struct jr_plan_clause *c = &plan->clauses[i];
		jr_emitf(fn, ud, "  %s: %s", c->where, c->text);
		jr_emitf(fn, ud, "      %s%s", c->enforced ? "-> " : "NOT ENFORCED: ", c->mechanism);
	}
	describe_landlock(plan, fn, ud);
	if (plan->setid_guard)
		jr_emitf(fn, ud, "built in: setuid/setgid bits refused (seccomp), since for a root caller the jail's uid 0 is root on disk in its writable trees");
	jr_emitf(fn, ud, "mounts, in order:");
	for (size_t i = 0; i < plan->n_mounts; i++)
		describe_mount(&plan->mounts[i], fn, ud);
	describe_env(plan, fn, ud);
}
