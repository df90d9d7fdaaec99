/* The kernel CIDR filter for net host: cgroup BPF programs that refuse
 * every connect and sendmsg of the jail to an address no allow cidr rule
 * covers (src/bpf/egress.bpf.c), loaded with libbpf into a cgroup v2
 * group of the run's own that the jail's init is moved into before it
 * is released.  Without libbpf in the build, nothing is usable and a
 * policy that needs the filter is refused (explain.c). */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "internal.h"

#ifndef HAVE_LIBBPF

bool jr_egress_bpf_usable(char *why, size_t size)
{
	if (why && size)
		snprintf(why, size, "jailrun was built without libbpf (configure --with-libbpf)");
	return false;
}

int jr_egress_bpf_start(const struct jr_egress *eg, struct jr_egress_bpf **out, jr_error_t **err)
{
	(void)eg;
	*out = NULL;
	return jr_fail(err, ENOSYS, "the kernel CIDR filter is not built in");
}

int jr_egress_bpf_attach(struct jr_egress_bpf *bpf, pid_t pid, jr_error_t **err)
{
	(void)bpf;
	(void)pid;
	return jr_fail(err, ENOSYS, "the kernel CIDR filter is not built in");
}

void jr_egress_bpf_collect(struct jr_egress_bpf *bpf, struct jr_net_denials *d)
{
	(void)bpf;
	(void)d;
}

void jr_egress_bpf_stop(struct jr_egress_bpf *bpf)
{
	(void)bpf;
}

#else /* HAVE_LIBBPF */

#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../bpf/egress.h"
#include "cleanup.h"

/* The compiled src/bpf/egress.bpf.c (generated src/bpf/egress-object.c). */
extern const unsigned char jr_egress_bpf_object[];
extern const size_t jr_egress_bpf_object_size;

struct jr_egress_bpf {
	struct bpf_object *obj;
	char dir[PATH_MAX]; /* the run's cgroup, "" until made */
};

/* ---- libbpf's messages ------------------------------------------------ */

/* The library never prints: libbpf's first warning (the cause; what
 * follows is the verifier's log and its consequences) is kept for the
 * error message instead of going to stderr. */
static _Thread_local char libbpf_said[256];

__attribute__((format(printf, 2, 0))) static int keep_message(enum libbpf_print_level level,
							    const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || libbpf_said[0])
		return 0;
	char line[sizeof(libbpf_said)];
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	if (line[0])
		memcpy(libbpf_said, line, sizeof(line));
	return 0;
}

/* ---- where the run's cgroup goes -------------------------------------- */

/* The cgroup2 mount: its mount point and the group it shows as its root. */
static bool cgroup2_mount(char *mnt, size_t mnt_size, char *root, size_t root_size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE ... */
		char r[1024], m[1024], type[64];
		const char *dash = strstr(line, " - ");
		found = dash && sscanf(dash, " - %63s", type) == 1 && !strcmp(type, "cgroup2") &&
			sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) == 2 &&
			(size_t)snprintf(mnt, mnt_size, "%s", m) < mnt_size &&
			(size_t)snprintf(root, root_size, "%s", r) < root_size;
	}
	fclose(f);
	return found;
}

/* The directory of the caller's own cgroup v2 group: the run's group goes
 * beneath it, so whatever the caller is held to still holds.  Returns a
 * one-line reason when there is none. */
static const char *own_cgroup_dir(char *out, size_t size)
{
	char mnt[1024], root[1024], own[1024];
	if (!cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root)))
		return "no cgroup2 filesystem mounted (the filter's programs attach to a cgroup v2 group)";
	jr_cgroup_own(NULL, own, sizeof(own));
	const char *rel = own;
	if (strcmp(root, "/")) {
		size_t n = strlen(root);
		if (strncmp(own, root, n) || (own[n] && own[n] != '/'))
			return "this process's cgroup is not below the cgroup2 mount";
		rel = own + n;
	}
	if ((size_t)snprintf(out, size, "%s%s", mnt, rel) >= size)
		return "the cgroup path is too long";
	return NULL;
}

/* ---- jr_egress_bpf_usable --------------------------------------------- */

static bool cap_effective(cap_t caps, cap_value_t cap)
{
	cap_flag_value_t v = CAP_CLEAR;
	return cap_get_flag(caps, cap, CAP_EFFECTIVE, &v) == 0 && v == CAP_SET;
}

/* Loading the programs needs CAP_BPF, attaching them CAP_NET_ADMIN;
 * CAP_SYS_ADMIN stands for both (and for CAP_BPF before Linux 5.8). */
static bool has_capabilities(void)
{
	cap_t caps = cap_get_proc();
	if (!caps)
		return false;
	bool admin = cap_effective(caps, CAP_SYS_ADMIN);
	bool ok = (admin || cap_effective(caps, CAP_BPF)) &&
		  (admin || cap_effective(caps, CAP_NET_ADMIN));
	cap_free(caps);
	return ok;
}

static void set_why(char *why, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_why(char *why, size_t size, const char *fmt, ...)
{
	if (!why || !size)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

bool jr_egress_bpf_usable(char *why, size_t size)
{
	char dir[PATH_MAX];
	const char *no = own_cgroup_dir(dir, sizeof(dir));
	if (no) {
		set_why(why, size, "%s", no);
		return false;
	}
	if (!has_capabilities()) {
		set_why(why, size, "needs CAP_BPF and CAP_NET_ADMIN (run as root)");
		return false;
	}
	if (access(dir, W_OK) < 0) {
		set_why(why, size, "cannot make a cgroup in %s: %s", dir, strerror(errno));
		return false;
	}
	/* The capabilities may be those of a user namespace, or an LSM may
	 * forbid bpf(): only loading a program of the kind tells. */
	libbpf_print_fn_t old = libbpf_set_print(keep_message);
	int r = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, NULL);
	libbpf_set_print(old);
	if (r != 1) {
		set_why(why, size, "the kernel refused a cgroup socket-address BPF program%s%s",
			r < 0 ? ": " : " (a kernel before 4.17?)", r < 0 ? strerror(-r) : "");
		return false;
	}
	return true;
}

/* ---- the rules -------------------------------------------------------- */

/* A rule for ::ffff:a.b.c.d is one for a.b.c.d: the programs judge an
 * IPv4-mapped destination as the IPv4 address it is. */
static void canonical_rule(struct jr_cidr *c)
{
	if (c->family != AF_INET6 || c->prefix < 96)
		return;
	jr_egress_canonical_addr(&c->family, c->addr);
	if (c->family == AF_INET)
		c->prefix -= 96;
}

static int fill_rules(struct bpf_object *obj, const struct jr_egress *eg, jr_error_t **err)
{
	int any_port = bpf_map__fd(bpf_object__find_map_by_name(obj, "any_port"));
	int one_port = bpf_map__fd(bpf_object__find_map_by_name(obj, "one_port"));
	if (eg->n_cidrs > JR_BPF_MAX_RULES)
		return jr_fail(err, 0, "allow cidr: %zu rules in effect; the kernel CIDR filter holds %d",
			       eg->n_cidrs, JR_BPF_MAX_RULES);
	for (size_t i = 0; i < eg->n_cidrs; i++) {
		struct jr_cidr c = eg->cidrs[i].cidr;
		canonical_rule(&c);
		struct jr_bpf_key key = { .prefixlen = JR_BPF_KEY_BITS_BEFORE_ADDR + c.prefix,
					  .family = (__u8)c.family };
		if (c.has_port) {
			key.port[0] = (__u8)(c.port >> 8);
			key.port[1] = (__u8)c.port;
		}
		memcpy(key.addr, c.addr, c.family == AF_INET ? 4 : 16);
		__u8 yes = 1;
		if (bpf_map_update_elem(c.has_port ? one_port : any_port, &key, &yes, BPF_ANY) < 0)
			return jr_fail(err, errno, "kernel CIDR filter: storing %s", eg->cidrs[i].rule);
	}
	return 0;
}

/* ---- start, attach, collect, stop ------------------------------------- */

static int load(struct jr_egress_bpf *bpf, jr_error_t **err)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "jailrun_egress");
	bpf->obj = bpf_object__open_mem(jr_egress_bpf_object, jr_egress_bpf_object_size, &opts);
	const char *step = "opening the BPF object";
	if (bpf->obj) {
		step = "loading the BPF programs";
		if (bpf_object__load(bpf->obj) == 0)
			return 0;
	}
	int e = errno;
	return jr_fail(err, e, "kernel CIDR filter: %s%s%s%s", step, libbpf_said[0] ? " (libbpf: " : "",
		       libbpf_said, libbpf_said[0] ? ")" : "");
}

/* jailrun-PID-N: the PID lets limits.c's collector remove it once this
 * jailrun is gone; N tells apart the runs of one process (a library
 * user, a session's supervisor). */
static int make_group(struct jr_egress_bpf *bpf, jr_error_t **err)
{
	static atomic_uint runs;
	char parent[PATH_MAX];
	const char *no = own_cgroup_dir(parent, sizeof(parent));
	if (no)
		return jr_fail(err, 0, "kernel CIDR filter: %s", no);
	jr_cgroup_collect_orphans(parent);
	char dir[PATH_MAX];
	if ((size_t)snprintf(dir, sizeof(dir), "%s/jailrun-%d-%u", parent, (int)getpid(),
			     atomic_fetch_add(&runs, 1)) >= sizeof(dir))
		return jr_fail(err, ENAMETOOLONG, "kernel CIDR filter: cgroup below %s", parent);
	if (mkdir(dir, 0755) < 0)
		return jr_fail(err, errno, "kernel CIDR filter: mkdir %s", dir);
	memcpy(bpf->dir, dir, sizeof(dir));
	return 0;
}

/* Attached, not linked: an attachment lasts as long as the group, so a
 * killed jailrun leaves its jail filtered rather than free.  ALLOW_MULTI
 * keeps the programs of the groups above in force too. */
static int attach_programs(struct jr_egress_bpf *bpf, jr_error_t **err)
{
	_cleanup_close_ int cg = open(bpf->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0)
		return jr_fail(err, errno, "kernel CIDR filter: opening %s", bpf->dir);
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, bpf->obj) {
		if (bpf_prog_attach(bpf_program__fd(prog), cg, bpf_program__expected_attach_type(prog),
				    BPF_F_ALLOW_MULTI) < 0)
			return jr_fail(err, errno, "kernel CIDR filter: attaching %s to %s",
				       bpf_program__section_name(prog), bpf->dir);
	}
	return 0;
}

int jr_egress_bpf_start(const struct jr_egress *eg, struct jr_egress_bpf **out, jr_error_t **err)
{
	*out = NULL;
	struct jr_egress_bpf *bpf = calloc(1, sizeof(*bpf));
	if (!bpf)
		return jr_fail_oom(err);
	libbpf_said[0] = '\0';
	libbpf_print_fn_t old = libbpf_set_print(keep_message);
	int r = load(bpf, err);
	libbpf_set_print(old);
	if (r < 0 || fill_rules(bpf->obj, eg, err) < 0 || make_group(bpf, err) < 0 ||
	    attach_programs(bpf, err) < 0) {
		jr_egress_bpf_stop(bpf);
		return -1;
	}
	*out = bpf;
	return 0;
}

int jr_egress_bpf_attach(struct jr_egress_bpf *bpf, pid_t pid, jr_error_t **err)
{
	char v[32];
	snprintf(v, sizeof(v), "%d", (int)pid);
	return jr_cgroup_write(bpf->dir, "cgroup.procs", v, err);
}

/* Each refusal counted so far, then forgotten: a second call adds only
 * what came since. */
void jr_egress_bpf_collect(struct jr_egress_bpf *bpf, struct jr_net_denials *d)
{
	if (!bpf)
		return;
	int fd = bpf_map__fd(bpf_object__find_map_by_name(bpf->obj, "denials"));
	struct jr_bpf_denial key;
	for (int i = 0; i < 2 * JR_BPF_MAX_DENIALS && bpf_map_get_next_key(fd, NULL, &key) == 0; i++) {
		__u64 count = 0;
		if (bpf_map_lookup_elem(fd, &key, &count) == 0 && count) {
			char host[INET6_ADDRSTRLEN];
			jr_egress_format_addr((int)key.family, (const unsigned char *)key.addr, host,
					      sizeof(host));
			jr_net_denials_add(d, host, (uint16_t)key.port, "no allow cidr covers it",
					   (unsigned long)count);
		}
		bpf_map_delete_elem(fd, &key);
	}
}

/* Removing the group ends its attachments.  They are not detached
 * before: a process of the jail still in the group (rmdir failed) stays
 * filtered. */
void jr_egress_bpf_stop(struct jr_egress_bpf *bpf)
{
	if (!bpf)
		return;
	if (bpf->dir[0])
		jr_cgroup_remove(bpf->dir);
	bpf_object__close(bpf->obj);
	free(bpf);
}

#endif /* HAVE_LIBBPF */
