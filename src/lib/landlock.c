/* The Landlock ruleset: what the jail may touch, whatever the mounts show.
 *
 * The mount namespace decides what exists; Landlock is the second wall
 * behind it (DESIGN principle 3): read-only trees get read and execute
 * rights, writable ones every right, /proc and /dev what tools need, and
 * nothing else any.  `exec PATH...` narrows execution to those trees.
 * Scopes (ABI 6) keep the command from signalling processes outside its
 * domain (jailrun's init among them) and from reaching abstract unix
 * sockets made outside it.
 *
 * Every ABI from 1 to 7 is handled: a right the kernel does not know is
 * left out of the ruleset, and --explain says which.  The headers of an
 * older libc may lack the newer constants, so they are spelled here. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "internal.h"
#include "values.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define SCOPE_SIGNAL (1ULL << 1)
#define RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1) /* ABI 7 */
#define RULE_PATH_BENEATH 1

struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

#define RULE_NET_PORT 2
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif

struct net_port {
	uint64_t allowed_access;
	uint64_t port;
};

struct path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define FS_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_EXEC LANDLOCK_ACCESS_FS_EXECUTE
#define FS_V1                                                                                   \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                           \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |                           \
	 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |                       \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |                          \
	 LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM)

int jr_landlock_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

static uint64_t handled_fs(int abi)
{
	uint64_t fs = FS_V1;
	if (abi >= 2)
		fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		fs |= FS_TRUNCATE;
	if (abi >= 5)
		fs |= FS_IOCTL_DEV;
	return fs;
}

static int add_rule(struct jr_landlock_plan *ll, const char *path, uint64_t access,
		    jr_error_t **err)
{
	for (size_t i = 0; i < ll->n_rules; i++)
		if (!strcmp(ll->rules[i].path, path)) {
			ll->rules[i].access |= access;
			return 0;
		}
	struct jr_landlock_rule *r = reallocarray(ll->rules, ll->n_rules + 1, sizeof(*r));
	if (!r)
		return jr_fail_oom(err);
	ll->rules = r;
	if (!(r[ll->n_rules].path = strdup(path)))
		return jr_fail_oom(err);
	r[ll->n_rules++].access = access;
	return 0;
}

/* What each mount of the plan may do under Landlock. */
static uint64_t access_for(const struct jr_mount *m, uint64_t all)
{
	/* Shells open /proc and /dev files with O_TRUNC (echo 5 > ...):
	 * that needs the truncate right (ABI 3) besides writing. */
	const uint64_t dev = FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | FS_IOCTL_DEV | FS_TRUNCATE;
	switch (m->kind) {
	case JR_MOUNT_BIND:
		return m->readonly ? FS_READ | FS_EXEC : all;
	case JR_MOUNT_TMPFS:
		return m->readonly ? FS_READ : all;
	case JR_MOUNT_EMPTY_FILE:
		return LANDLOCK_ACCESS_FS_READ_FILE;
	case JR_MOUNT_PROC:
		return FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | FS_TRUNCATE;
	case JR_MOUNT_DEV:
		return dev;
	case JR_MOUNT_SYMLINK:
		break;
	}
	return 0;
}

/* ---- Landlock-only isolation: rules on the host's own paths ----------- */

/* Landlock only grants; to hide a path beneath a granted tree, grant the
 * tree's other entries one by one instead (listing names stays possible,
 * reading what is hidden does not).  hidden: paths strictly beneath dir. */
static int carve(struct jr_landlock_plan *ll, const char *dir, uint64_t access, char **hidden,
		 size_t n, jr_error_t **err)
{
	if (add_rule(ll, dir, access & LANDLOCK_ACCESS_FS_READ_DIR, err) < 0)
		return -1;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	int r = 0;
	while (r == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[PATH_MAX];
		if (snprintf(path, sizeof(path), "%s%s%s", dir, strcmp(dir, "/") ? "/" : "",
			     e->d_name) >= (int)sizeof(path))
			continue;
		bool is_hidden = false, holds_hidden = false;
		for (size_t i = 0; i < n; i++) {
			is_hidden |= !strcmp(hidden[i], path);
			holds_hidden |= jr_path_is_beneath(hidden[i], path) && strcmp(hidden[i], path);
		}
		if (is_hidden)
			continue;
		r = holds_hidden ? carve(ll, path, access, hidden, n, err) : add_rule(ll, path, access, err);
	}
	closedir(d);
	return r;
}

static bool is_mask(const struct jr_mount *m)
{
	return m->kind == JR_MOUNT_EMPTY_FILE ||
	       (m->kind == JR_MOUNT_TMPFS && m->readonly && !strcmp(m->origin, "mask"));
}

/* The deepest host bind of the plan holding path. */
static const struct jr_mount *host_tree(const jr_plan_t *plan, const char *path)
{
	const struct jr_mount *best = NULL;
	for (size_t i = 0; i < plan->n_mounts; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		if (m->kind == JR_MOUNT_BIND && strcmp(m->origin, "protect") &&
		    jr_path_is_beneath(path, m->source) &&
		    (!best || jr_path_depth(m->source) > jr_path_depth(best->source)))
			best = m;
	}
	return best;
}

static int plan_host(const jr_plan_t *plan, struct jr_landlock_plan *ll, uint64_t all,
		     jr_error_t **err)
{
	static const char *const devices[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					       "/dev/urandom", "/dev/tty", "/dev/pts", "/dev/ptmx" };
	const uint64_t dev = FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | FS_IOCTL_DEV | FS_TRUNCATE;
	char *hidden[256];
	size_t n_hidden = 0;

	for (size_t i = 0; i < plan->n_mounts; i++) {
		const struct jr_mount *m = &plan->mounts[i];
		if (is_mask(m)) {
			const struct jr_mount *tree = host_tree(plan, m->target);
			if (tree && !tree->readonly)
				ll->gaps |= JR_LL_GAP_MASK_IN_WRITABLE;
			else if (tree && n_hidden == sizeof(hidden) / sizeof(hidden[0]))
				return jr_fail(err, E2BIG, "isolation landlock: more than %zu masks",
					       sizeof(hidden) / sizeof(hidden[0])); /* never leave one out */
			else if (tree)
				hidden[n_hidden++] = m->target;
			continue;
		}
		switch (m->kind) {
		case JR_MOUNT_BIND:
			if (!strcmp(m->origin, "protect")) {
				ll->gaps |= JR_LL_GAP_PROTECT_IN_WRITABLE;
				break;
			}
			if (add_rule(ll, m->source, m->readonly ? FS_READ | FS_EXEC : all, err) < 0)
				return -1;
			break;
		case JR_MOUNT_TMPFS:
			/* The home and /tmp become private directories made for
			 * the run (init adds their rule); others cannot be had. */
			if (m->placeholder)
				ll->gaps |= JR_LL_GAP_PROTECT_IN_WRITABLE;
			else if (!strcmp(m->origin, "tmpfs"))
				ll->gaps |= JR_LL_GAP_TMPFS;
			break;
		case JR_MOUNT_PROC:
			if (add_rule(ll, "/proc", (FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | FS_TRUNCATE) & all, err) < 0)
				return -1;
			break;
		case JR_MOUNT_DEV:
			for (size_t k = 0; k < sizeof(devices) / sizeof(devices[0]); k++)
				if (add_rule(ll, devices[k], dev & all, err) < 0)
					return -1;
			break;
		default:
			break;
		}
	}
	/* Replace each read-only tree holding hidden paths by its carving. */
	for (size_t h = 0; h < n_hidden; h++) {
		const struct jr_mount *tree = host_tree(plan, hidden[h]);
		for (size_t i = 0; i < ll->n_rules; i++)
			if (!strcmp(ll->rules[i].path, tree->source) && ll->rules[i].access) {
				uint64_t access = ll->rules[i].access;
				ll->rules[i].access = 0; /* carve() re-adds READ_DIR */
				if (carve(ll, tree->source, access, hidden, n_hidden, err) < 0)
					return -1;
				break;
			}
	}
	return 0;
}

/* The ports of a list of allow connect/bind entries still in effect
 * (a later !PORT takes one back). */
static int ports_in_effect(const struct jr_str_list *l, uint16_t **out, size_t *n, jr_error_t **err)
{
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < l->n; i++) {
		uint16_t port;
		if (!jr_str_entry_in_effect(l, i) || !jr_parse_port(l->v[i].value, &port))
			continue;
		uint16_t *grown = realloc(*out, (*n + 1) * sizeof(**out));
		if (!grown)
			return jr_fail_oom(err);
		*out = grown;
		(*out)[(*n)++] = port;
	}
	return 0;
}

/* net host: TCP connect and bind limited to the allowed ports (Landlock
 * ABI 4), each kind only when the policy lists ports for it. */
static int plan_net(const jr_policy_t *p, const jr_plan_t *plan, struct jr_landlock_plan *ll,
		    jr_error_t **err)
{
	if (!plan->net_host || ll->abi < 4)
		return 0;
	if (ports_in_effect(&p->lists[JR_LIST_ALLOW_CONNECT], &ll->connect_ports, &ll->n_connect, err) < 0 ||
	    ports_in_effect(&p->lists[JR_LIST_ALLOW_BIND], &ll->bind_ports, &ll->n_bind, err) < 0)
		return -1;
	if (ll->n_connect)
		ll->handled_net |= LANDLOCK_ACCESS_NET_CONNECT_TCP;
	if (ll->n_bind)
		ll->handled_net |= LANDLOCK_ACCESS_NET_BIND_TCP;
	return 0;
}

int jr_landlock_plan(const jr_policy_t *p, const jr_plan_t *plan, struct jr_landlock_plan *ll,
		     jr_error_t **err)
{
	memset(ll, 0, sizeof(*ll));
	ll->abi = jr_landlock_abi();
	if (!ll->abi)
		return 0;
	uint64_t all = handled_fs(ll->abi);
	ll->handled_fs = all;
	ll->scoped = ll->abi >= 6 ? SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL : 0;
	ll->restrict_flags = ll->abi >= 7 ? RESTRICT_SELF_LOG_NEW_EXEC_ON : 0;
	if (plan_net(p, plan, ll, err) < 0)
		return -1;

	if (plan->landlock_only) {
		if (plan_host(plan, ll, all, err) < 0)
			return -1;
	} else {
		/* Listing the root (ls /) needs READ_DIR there, which Landlock
		 * grants beneath it too: what exists is the mount namespace's call. */
		if (add_rule(ll, "/", LANDLOCK_ACCESS_FS_READ_DIR, err) < 0)
			return -1;
		for (size_t i = 0; i < plan->n_mounts; i++) {
			uint64_t a = access_for(&plan->mounts[i], all) & all;
			if (a && add_rule(ll, plan->mounts[i].target, a, err) < 0)
				return -1;
		}
		if (add_rule(ll, "/dev/shm", all, err) < 0)
			return -1;
	}

	/* exec PATH...: execution only beneath those trees. */
	for (size_t i = 0; i < p->n_fs; i++) {
		const struct jr_fs_entry *e = &p->fs[i];
		if (e->kind != JR_FS_EXEC || e->remove)
			continue;
		if (!ll->exec_narrowed) {
			for (size_t k = 0; k < ll->n_rules; k++)
				ll->rules[k].access &= ~FS_EXEC;
			ll->exec_narrowed = true;
		}
		struct jr_expand x = { .home = plan->home, .tmpdir = "/tmp",
				       .workspace = plan->workspace, .envp = plan->envp };
		_cleanup_free_ char *path = NULL;
		int r = jr_expand_path(&x, e->path, &e->loc, &path, err);
		if (r == 1)
			continue;
		if (r < 0 || add_rule(ll, path, FS_EXEC | FS_READ, err) < 0)
			return -1;
	}
	ll->enabled = true;
	return 0;
}

void jr_landlock_plan_free(struct jr_landlock_plan *ll)
{
	for (size_t i = 0; i < ll->n_rules; i++)
		free(ll->rules[i].path);
	free(ll->rules);
	ll->rules = NULL;
	ll->n_rules = 0;
	free(ll->connect_ports);
	free(ll->bind_ports);
	ll->connect_ports = ll->bind_ports = NULL;
	ll->n_connect = ll->n_bind = 0;
}

int jr_landlock_ruleset(const struct jr_landlock_plan *ll, const char *extra_rw, int *out,
			jr_error_t **err)
{
	*out = -1;
	if (!ll->enabled)
		return 0;
	struct ruleset_attr attr = { .handled_access_fs = ll->handled_fs,
				     .handled_access_net = ll->handled_net,
				     .scoped = ll->scoped };
	/* An older kernel rejects fields it does not know unless they are
	 * left out: pass only as much of the struct as this ABI reads. */
	size_t size = ll->abi >= 6 ? sizeof(attr) : ll->abi >= 4 ? 2 * sizeof(uint64_t)
								 : sizeof(uint64_t);
	_cleanup_close_ int fd = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0)
		return jr_fail(err, errno, "Landlock: creating the ruleset");
	for (size_t i = 0; i < ll->n_rules; i++) {
		_cleanup_close_ int dir = open(ll->rules[i].path, O_PATH | O_CLOEXEC);
		if (dir < 0)
			continue; /* not in this jail (an exec tree that does not exist) */
		struct path_beneath pb = { .allowed_access = ll->rules[i].access, .parent_fd = dir };
		struct stat st;
		/* On a file only file rights make sense. */
		if (fstat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
			pb.allowed_access &= LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
					     LANDLOCK_ACCESS_FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;
		if (pb.allowed_access &&
		    syscall(__NR_landlock_add_rule, fd, RULE_PATH_BENEATH, &pb, 0) < 0)
			return jr_fail(err, errno, "Landlock: rule for %s", ll->rules[i].path);
	}
	for (int kind = 0; kind < 2; kind++) {
		const uint16_t *ports = kind ? ll->bind_ports : ll->connect_ports;
		size_t n = kind ? ll->n_bind : ll->n_connect;
		for (size_t i = 0; i < n; i++) {
			struct net_port np = { .allowed_access = kind ? LANDLOCK_ACCESS_NET_BIND_TCP
								      : LANDLOCK_ACCESS_NET_CONNECT_TCP,
					       .port = ports[i] };
			if (syscall(__NR_landlock_add_rule, fd, RULE_NET_PORT, &np, 0) < 0)
				return jr_fail(err, errno, "Landlock: rule for TCP port %u", ports[i]);
		}
	}
	if (extra_rw) {
		_cleanup_close_ int dir = open(extra_rw, O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct path_beneath pb = { .allowed_access = ll->handled_fs, .parent_fd = dir };
		if (dir < 0 || syscall(__NR_landlock_add_rule, fd, RULE_PATH_BENEATH, &pb, 0) < 0)
			return jr_fail(err, errno, "Landlock: rule for %s", extra_rw);
	}
	*out = jr_steal_fd(&fd);
	return 0;
}

int jr_landlock_restrict(const struct jr_landlock_plan *ll, int ruleset, jr_error_t **err)
{
	if (ruleset < 0)
		return 0;
	if (syscall(__NR_landlock_restrict_self, ruleset, ll->restrict_flags) < 0 &&
	    (ll->restrict_flags == 0 ||
	     syscall(__NR_landlock_restrict_self, ruleset, 0) < 0))
		return jr_fail(err, errno, "Landlock: restrict_self");
	close(ruleset);
	return 0;
}

/* The egress proxy's own confinement (it parses what the jail sends):
 * read-only access to what name resolution reads, no other file access,
 * no signals or abstract sockets outside its domain, and, where the kernel
 * has Landlock's TCP rules and every rule names its ports, TCP connect to
 * those ports (and 53, DNS over TCP) only.  A kernel without Landlock
 * leaves it with no_new_privs alone: this is depth, not a policy clause. */
static int proxy_connect_ports(const struct jr_egress *eg, struct jr_landlock_plan *ll,
			       jr_error_t **err)
{
	uint16_t want[2 * JR_PROXY_MAX_PORT_RULES + 3];
	size_t n = 0;
	want[n++] = 53;
	for (size_t i = 0; i < eg->n_cidrs; i++) {
		if (!eg->cidrs[i].cidr.has_port)
			return 0; /* every port: nothing to narrow */
		if (n < sizeof(want) / sizeof(want[0]))
			want[n++] = eg->cidrs[i].cidr.port;
	}
	for (size_t i = 0; i < eg->n_hosts; i++) {
		const struct jr_host_pattern *h = &eg->hosts[i].pattern;
		if (n + 2 > sizeof(want) / sizeof(want[0]))
			return 0; /* too many to list: left wide */
		if (h->has_port) {
			want[n++] = h->port;
		} else {
			want[n++] = 80;
			want[n++] = 443;
		}
	}
	if (eg->n_cidrs + eg->n_hosts > JR_PROXY_MAX_PORT_RULES)
		return 0;
	if (!(ll->connect_ports = calloc(n, sizeof(uint16_t))))
		return jr_fail_oom(err);
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < ll->n_connect; j++)
			seen |= ll->connect_ports[j] == want[i];
		if (!seen)
			ll->connect_ports[ll->n_connect++] = want[i];
	}
	ll->handled_net = LANDLOCK_ACCESS_NET_CONNECT_TCP | LANDLOCK_ACCESS_NET_BIND_TCP;
	return 0;
}

int jr_landlock_confine_proxy(const struct jr_egress *eg, jr_error_t **err)
{
	/* What getaddrinfo reads (the NSS modules it loads included), and
	 * nothing of /etc or /run beyond it: no shadow, no secrets. */
	static const char *const readable[] = {
		"/etc/resolv.conf", "/etc/hosts",	 "/etc/nsswitch.conf", "/etc/gai.conf",
		"/etc/host.conf",   "/etc/ld.so.cache", "/etc/services",	    "/etc/protocols",
		"/usr",		    "/lib",		 "/lib64",		    "/run/systemd/resolve",
	};
	if (jr_set_no_new_privs(err) < 0)
		return -1;
	struct jr_landlock_plan ll = { .abi = jr_landlock_abi() };
	if (!ll.abi)
		return 0;
	ll.enabled = true;
	ll.handled_fs = handled_fs(ll.abi);
	if (ll.abi >= 6)
		ll.scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL;
	int r = -1, ruleset = -1;
	for (size_t i = 0; i < sizeof(readable) / sizeof(readable[0]); i++)
		if (add_rule(&ll, readable[i], FS_READ, err) < 0)
			goto out;
	if (ll.abi >= 4 && proxy_connect_ports(eg, &ll, err) < 0)
		goto out;
	if (jr_landlock_ruleset(&ll, NULL, &ruleset, err) < 0 ||
	    jr_landlock_restrict(&ll, ruleset, err) < 0)
		goto out;
	ruleset = -1;
	r = 0;
out:
	if (ruleset >= 0)
		close(ruleset);
	jr_landlock_plan_free(&ll);
	return r;
}
