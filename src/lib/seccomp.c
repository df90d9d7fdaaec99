/* The seccomp-bpf filter: policy rules -> a libseccomp context, built
 * once per run before the jail is cloned (memory only, no syscalls) and
 * loaded by the command's process as the very last step before execve.
 *
 * Groups expand to plain rules, except where a syscall needs argument
 * checks to be safe or usable:
 *   @namespaces: unshare and setns refused; clone refused when its flags
 *     (low 32 bits) ask for a namespace; clone3 answers ENOSYS, so libc
 *     falls back to clone, whose flags a filter can see.
 *   @tty-inject: ioctl TIOCSTI, TIOCLINUX and TIOCSCTTY (taking an
 *     inherited terminal that no session owns), compared on the low 32
 *     bits of the request so a 64-bit value with the same low half cannot
 *     slip past (CVE-2019-10063).
 *
 * An int argument is compared through a 0xffffffff mask: libseccomp's
 * SCMP_A*_32 only narrows the value compared against, the comparison
 * itself stays 64-bit, while the kernel reads the low half alone. 
 *   personality (in @privileged): refused when it sets a flag that weakens
 *     the process (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, ...); the query
 *     form 0xffffffff has those bits too and is refused with it.
 * Syscalls of another ABI (i386 int 0x80, x32) kill the process.
 *
 * And one rule set jailrun adds on its own: when root runs a jail with a
 * writable tree of its own (the workspace, rw binds), the jail's uid 0 is
 * root on disk there, so a setuid or setgid bit it sets would make a
 * root program on the host for anyone to run.  Setting those bits is
 * refused in every way a mode reaches the kernel in a register; openat2,
 * whose mode sits behind a pointer, answers ENOSYS (libc's open() does not
 * use it). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

#include "cleanup.h"
#include "internal.h"
#include "syscalls.h"

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

static uint32_t to_scmp(enum jr_sc_action a, int errnum)
{
	switch (a) {
	case JR_SC_ALLOW: return SCMP_ACT_ALLOW;
	case JR_SC_KILL: return SCMP_ACT_KILL_PROCESS;
	case JR_SC_LOG: return SCMP_ACT_LOG;
	case JR_SC_ERRNO: break;
	}
	return SCMP_ACT_ERRNO((uint16_t)errnum);
}

struct builder {
	scmp_filter_ctx ctx; /* NULL: only record (jr_seccomp_rules) */
	jr_seccomp_rule_fn record;
	void *record_ud;
	bool builtin;
	uint32_t default_action;
	unsigned rules;
	const struct jr_loc *loc;
	jr_error_t **err;
};

static int add(struct builder *b, uint32_t action, const char *name, unsigned n,
	       const struct scmp_arg_cmp *conds)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr < 0)
		return 0; /* a group member this architecture lacks */
	if (action == b->default_action)
		return 0; /* libseccomp refuses a rule that repeats the default: a no-op */
	if (b->record) {
		b->record(b->record_ud, b->builtin, action, name, n, conds);
		b->rules++;
		return 0;
	}
	int r = seccomp_rule_add_array(b->ctx, action, nr, n, conds);
	if (r < 0)
		return jr_fail_at_errno(b->err, b->loc, -r, "seccomp rule for %s", name);
	b->rules++;
	return 0;
}

static int add_namespaces(struct builder *b, uint32_t action)
{
	static const unsigned long clone_ns[] = { CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,
						  CLONE_NEWNET,	 CLONE_NEWIPC, CLONE_NEWUTS,
						  CLONE_NEWCGROUP };
	if (add(b, action, "unshare", 0, NULL) < 0 || add(b, action, "setns", 0, NULL) < 0 ||
	    add(b, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(clone_ns) / sizeof(clone_ns[0]); i++) {
		struct scmp_arg_cmp c = SCMP_A0_64(SCMP_CMP_MASKED_EQ, clone_ns[i], clone_ns[i]);
		if (add(b, action, "clone", 1, &c) < 0)
			return -1;
	}
	return 0;
}

#define LOW32 0xffffffffULL

static int add_tty_inject(struct builder *b, uint32_t action)
{
	static const unsigned long requests[] = { TIOCSTI, TIOCLINUX, TIOCSCTTY };
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		struct scmp_arg_cmp c = SCMP_A1_64(SCMP_CMP_MASKED_EQ, LOW32, requests[i]);
		if (add(b, action, "ioctl", 1, &c) < 0)
			return -1;
	}
	return 0;
}

static int add_personality(struct builder *b, uint32_t action)
{
	static const unsigned long weakening[] = { ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC,
						   MMAP_PAGE_ZERO,    ADDR_COMPAT_LAYOUT,
						   ADDR_LIMIT_32BIT,  ADDR_LIMIT_3GB };
	for (size_t i = 0; i < sizeof(weakening) / sizeof(weakening[0]); i++) {
		struct scmp_arg_cmp c = SCMP_A0_64(SCMP_CMP_MASKED_EQ, weakening[i], weakening[i]);
		if (add(b, action, "personality", 1, &c) < 0)
			return -1;
	}
	return 0;
}

static int add_group(struct builder *b, const struct jr_syscall_group *g, uint32_t action)
{
	if (!strcmp(g->name, "@namespaces"))
		return add_namespaces(b, action);
	if (!strcmp(g->name, "@tty-inject"))
		return add_tty_inject(b, action);
	for (const char *const *s = g->syscalls; *s; s++) {
		int r = !strcmp(*s, "personality") ? add_personality(b, action)
						   : add(b, action, *s, 0, NULL);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int add_setid_guard(struct builder *b)
{
	static const struct {
		const char *name;
		int flags_arg; /* -1: no flags argument, the mode alone decides */
		unsigned long flag;
		unsigned mode_arg;
	} calls[] = {
		{ "chmod", -1, 0, 1 },	       { "fchmod", -1, 0, 1 },
		{ "fchmodat", -1, 0, 2 },      { "fchmodat2", -1, 0, 2 },
		{ "creat", -1, 0, 1 },	       { "mknod", -1, 0, 1 },
		{ "mknodat", -1, 0, 2 },       { "open", 1, O_CREAT, 2 },
		{ "open", 1, __O_TMPFILE, 2 }, { "openat", 2, O_CREAT, 3 },
		{ "openat", 2, __O_TMPFILE, 3 },
	};
	static const unsigned long bits[] = { S_ISUID, S_ISGID };
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		for (size_t k = 0; k < 2; k++) {
			struct scmp_arg_cmp c[2];
			unsigned n = 0;
			if (calls[i].flags_arg >= 0)
				c[n++] = (struct scmp_arg_cmp){ (unsigned)calls[i].flags_arg,
								SCMP_CMP_MASKED_EQ, calls[i].flag,
								calls[i].flag };
			c[n++] = (struct scmp_arg_cmp){ calls[i].mode_arg, SCMP_CMP_MASKED_EQ, bits[k],
							bits[k] };
			if (add(b, eperm, calls[i].name, n, c) < 0)
				return -1;
		}
	/* io_uring submits opens (IORING_OP_OPENAT with a mode) that no
	 * filter sees: without it the rules above could be sidestepped. */
	static const char *const uring[] = { "io_uring_setup", "io_uring_enter", "io_uring_register" };
	for (size_t i = 0; i < sizeof(uring) / sizeof(uring[0]); i++)
		if (add(b, eperm, uring[i], 0, NULL) < 0)
			return -1;
	return add(b, SCMP_ACT_ERRNO(ENOSYS), "openat2", 0, NULL);
}

/* Landlock-only isolation has no namespaces to hide the host's sockets
 * and IPC, so the filter closes them: unix sockets by path (D-Bus,
 * docker.sock, X11; socketpair still works), SysV IPC, and with net none
 * every IP and packet socket. */
static int add_landlock_only(struct builder *b, bool no_ip)
{
	const uint32_t eacces = SCMP_ACT_ERRNO(EACCES);
	int families[4] = { AF_UNIX, AF_INET, AF_INET6, AF_PACKET };
	for (int i = 0; i < (no_ip ? 4 : 1); i++) {
		struct scmp_arg_cmp c = SCMP_A0_64(SCMP_CMP_MASKED_EQ, LOW32, (unsigned)families[i]);
		if (add(b, eacces, "socket", 1, &c) < 0)
			return -1;
	}
	/* Every SysV IPC call, not just the *get ones: the ids of the host's
	 * objects are small integers, easy to guess. */
	static const char *const sysv[] = { "shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd",
					    "msgrcv", "msgctl", "semget", "semop", "semtimedop",
					    "semctl", "ipc" };
	for (size_t i = 0; i < sizeof(sysv) / sizeof(sysv[0]); i++)
		if (add(b, SCMP_ACT_ERRNO(EPERM), sysv[i], 0, NULL) < 0)
			return -1;
	/* io_uring makes sockets (IORING_OP_SOCKET) without socket(2): in
	 * this mode it is refused whatever the policy says. */
	static const char *const uring[] = { "io_uring_setup", "io_uring_enter", "io_uring_register" };
	for (size_t i = 0; i < sizeof(uring) / sizeof(uring[0]); i++)
		if (add(b, SCMP_ACT_ERRNO(EPERM), uring[i], 0, NULL) < 0)
			return -1;
	return 0;
}

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif

/* Exec narrowing: a memfd (on an internal mount Landlock does not see)
 * could carry code to execve; memfd_create must seal it against that. */
static int add_no_memfd_exec(struct builder *b)
{
	struct scmp_arg_cmp c = SCMP_A1_64(SCMP_CMP_MASKED_EQ, MFD_NOEXEC_SEAL, 0);
	return add(b, SCMP_ACT_ERRNO(EPERM), "memfd_create", 1, &c);
}

static enum scmp_compare to_cmp(int op)
{
	switch (op) {
	case JR_CMP_EQ: return SCMP_CMP_EQ;
	case JR_CMP_NE: return SCMP_CMP_NE;
	case JR_CMP_LT: return SCMP_CMP_LT;
	case JR_CMP_LE: return SCMP_CMP_LE;
	case JR_CMP_GT: return SCMP_CMP_GT;
	case JR_CMP_GE: return SCMP_CMP_GE;
	default: return SCMP_CMP_MASKED_EQ;
	}
}

static int add_policy_rule(struct builder *b, const struct jr_sc_rule *r)
{
	uint32_t action = to_scmp(r->action, r->errnum);
	for (size_t i = 0; i < r->n_names; i++) {
		const char *name = r->names[i];
		if (name[0] == '@') {
			if (r->n_conds)
				return jr_fail_at(b->err, &r->loc, "seccomp: conditions apply to syscalls, not to the group %s", name);
			if (add_group(b, jr_syscall_group_find(name), action) < 0)
				return -1;
			continue;
		}
		struct scmp_arg_cmp conds[6];
		for (size_t k = 0; k < r->n_conds; k++) {
			const struct jr_sc_cond *c = &r->conds[k];
			/* An ioctl request is an unsigned int to the kernel:
			 * compare its low 32 bits only, as the kernel will. */
			bool low32 = !strcmp(name, "ioctl") && c->arg == 1;
			conds[k] = (struct scmp_arg_cmp){
				.arg = c->arg,
				.op = to_cmp(c->op),
				.datum_a = c->op == JR_CMP_MASKED_EQ ? c->mask : c->value,
				.datum_b = c->op == JR_CMP_MASKED_EQ ? c->value : 0,
			};
			if (low32 && c->op == JR_CMP_MASKED_EQ)
				conds[k] = SCMP_A1_64(SCMP_CMP_MASKED_EQ, c->mask & LOW32, c->value);
			else if (low32 && c->op == JR_CMP_EQ)
				conds[k] = SCMP_A1_64(SCMP_CMP_MASKED_EQ, LOW32, c->value);
			else if (low32)
				return jr_fail_at(b->err, &r->loc,
						  "seccomp: an ioctl request (arg1) is compared with == or & only: the kernel reads its low 32 bits, and other comparisons cannot be limited to them");
		}
		if (add(b, action, name, (unsigned)r->n_conds, conds) < 0)
			return -1;
	}
	return 0;
}

static int new_filter(struct builder *b, uint32_t default_action, jr_error_t **err)
{
	b->default_action = default_action;
	if (b->record)
		return 0;
	b->ctx = seccomp_init(default_action);
	if (!b->ctx)
		return jr_fail(err, ENOMEM, "seccomp_init");
	int r;
	if ((r = seccomp_attr_set(b->ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (r = seccomp_attr_set(b->ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0) {
		seccomp_release(b->ctx);
		b->ctx = NULL;
		return jr_fail(err, -r, "seccomp attributes");
	}
	return 0;
}

/* The filter as the kernel will get it: generated once, here, so the
 * command's process only hands it over (libseccomp 2.5 exports to a
 * descriptor only). */
static int export_bpf(scmp_filter_ctx ctx, struct jr_bpf *out, jr_error_t **err)
{
	_cleanup_close_ int fd = memfd_create("jailrun-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return jr_fail(err, errno, "seccomp: memfd_create");
	int r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return jr_fail(err, -r, "seccomp: generating the filter");
	off_t size = lseek(fd, 0, SEEK_END);
	size_t n = size > 0 ? (size_t)size / sizeof(struct sock_filter) : 0;
	if (n == 0 || n > BPF_MAXINSNS)
		return jr_fail(err, E2BIG, "seccomp: the filter has %zu instructions (at most %d)", n,
			       BPF_MAXINSNS);
	out->insns = malloc(n * sizeof(struct sock_filter));
	if (!out->insns)
		return jr_fail_oom(err);
	if (pread(fd, out->insns, n * sizeof(struct sock_filter), 0) != (ssize_t)(n * sizeof(struct sock_filter)))
		return jr_fail(err, errno ? errno : EIO, "seccomp: reading the filter back");
	out->len = (unsigned short)n;
	return 0;
}

/* The rules exactly as jr_seccomp_build adds them (groups expanded with
 * their argument conditions, ioctl requests compared on their low 32
 * bits, clone3 answered ENOSYS), the policy's and then jailrun's own, for
 * a backend that builds a filter of its own (a provider). */
int jr_seccomp_rules(const jr_policy_t *p, unsigned extras, jr_seccomp_rule_fn fn, void *ud,
		     jr_error_t **err)
{
	struct builder b = { .err = err, .record = fn, .record_ud = ud };
	b.default_action = to_scmp(p->seccomp_default, p->seccomp_default_errno);
	for (size_t i = 0; i < p->n_rules; i++) {
		b.loc = &p->rules[i].loc;
		if (add_policy_rule(&b, &p->rules[i]) < 0)
			return -1;
	}
	b.builtin = true;
	b.default_action = SCMP_ACT_ALLOW;
	b.loc = NULL;
	if (((extras & JR_SC_EXTRA_SETID) && add_setid_guard(&b) < 0) ||
	    ((extras & JR_SC_EXTRA_NO_MEMFD_EXEC) && add_no_memfd_exec(&b) < 0))
		return -1;
	return 0;
}

/* Two filters: the policy's, and jailrun's own rules in a second one,
 * which the kernel applies too (the strictest answer of all filters
 * wins), so no policy rule on the same syscall can override them. */
int jr_seccomp_build(const jr_policy_t *p, unsigned extras, struct jr_seccomp *out,
		     jr_error_t **err)
{
	memset(out, 0, sizeof(*out));
	struct builder b = { .err = err };
	if (p->n_rules || p->seccomp_default != JR_SC_ALLOW) {
		if (new_filter(&b, to_scmp(p->seccomp_default, p->seccomp_default_errno), err) < 0)
			return -1;
		for (size_t i = 0; i < p->n_rules; i++) {
			b.loc = &p->rules[i].loc;
			if (add_policy_rule(&b, &p->rules[i]) < 0)
				goto fail;
		}
		out->policy_rules = b.rules;
		if (export_bpf(b.ctx, &out->policy, err) < 0)
			goto fail;
		seccomp_release(b.ctx);
		b.ctx = NULL;
	}
	if (extras) {
		if (new_filter(&b, SCMP_ACT_ALLOW, err) < 0)
			goto fail;
		b.rules = 0;
		if (((extras & JR_SC_EXTRA_SETID) && add_setid_guard(&b) < 0) ||
		    ((extras & JR_SC_EXTRA_LANDLOCK_ONLY) &&
		     add_landlock_only(&b, extras & JR_SC_EXTRA_NO_IP) < 0) ||
		    ((extras & JR_SC_EXTRA_NO_MEMFD_EXEC) && add_no_memfd_exec(&b) < 0))
			goto fail;
		out->builtin_rules = b.rules;
		if (export_bpf(b.ctx, &out->builtin, err) < 0)
			goto fail;
		seccomp_release(b.ctx);
	}
	return 0;
fail:
	if (b.ctx)
		seccomp_release(b.ctx);
	jr_seccomp_free(out);
	return -1;
}

static int install(const struct jr_bpf *bpf, unsigned flags)
{
	struct sock_fprog prog = { .len = bpf->len, .filter = bpf->insns };
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
}

/* Whether the filter lets this call through (as the hand-over of the
 * listener needs sendmsg and close to work under the filter). */
static bool lets_through(const struct jr_bpf *bpf, int nr, uint64_t a0, uint64_t a2)
{
	if (!bpf->len)
		return true;
	struct seccomp_data d = { .nr = nr, .arch = AUDIT_ARCH_X86_64, .args = { a0, 0, a2 } };
	uint32_t action;
	return jr_bpf_run(bpf->insns, bpf->len, &d, &action) == 0 &&
	       (action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW;
}

/* The policy's filter with every errno and log answer turned into a user
 * notification, so the supervisor sees (and counts) each denial and
 * answers it as the original would.  clone3 is the exception: policies
 * answer it ENOSYS so that libc falls back to clone, whose flags a filter
 * can see, and every thread would otherwise cost a round trip to the
 * supervisor; a short prefix sends it to an unpatched copy of the
 * program, which answers it in the kernel, uncounted:
 *
 *   ld arch; jne x86_64 -> patched; ld nr; jne clone3 -> patched;
 *   ja original; patched...; original...
 *
 * Both copies end in returns, so neither runs into the other.  NULL when
 * that is not possible (too long, or a return the patch cannot read). */
static struct sock_filter *notifying_program(const struct jr_bpf *bpf, unsigned short *len)
{
	enum { PREFIX = 5 };
	size_t total = PREFIX + 2 * (size_t)bpf->len;
	if (total > BPF_MAXINSNS)
		return NULL;
	struct sock_filter *prog = malloc(total * sizeof(*prog));
	if (!prog)
		return NULL;
	struct sock_filter prefix[PREFIX] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
		BPF_STMT(BPF_JMP | BPF_JA, bpf->len),
	};
	struct sock_filter *patched = prog + PREFIX, *original = patched + bpf->len;
	memcpy(prog, prefix, sizeof(prefix));
	memcpy(patched, bpf->insns, bpf->len * sizeof(*prog));
	memcpy(original, bpf->insns, bpf->len * sizeof(*prog));
	for (size_t i = 0; i < bpf->len; i++) {
		if (BPF_CLASS(patched[i].code) != BPF_RET)
			continue;
		if (BPF_RVAL(patched[i].code) != BPF_K) {
			free(prog);
			return NULL;
		}
		uint32_t action = patched[i].k & SECCOMP_RET_ACTION_FULL;
		if (action == SECCOMP_RET_ERRNO || action == SECCOMP_RET_LOG)
			patched[i].k = SECCOMP_RET_USER_NOTIF;
	}
	*len = (unsigned short)total;
	return prog;
}

int jr_seccomp_load(const struct jr_seccomp *sc, int ctl, unsigned flags, jr_error_t **err)
{
	bool count = flags & JR_CONFINE_COUNT;
	if (!(flags & JR_CONFINE_NO_BUILTIN_FILTER) && sc->builtin.len && install(&sc->builtin, 0) < 0)
		return jr_fail(err, errno, "loading jailrun's seccomp filter");
	if (!sc->policy.len)
		return 0;
	/* The hand-over below must not itself be denied, or the call would
	 * wait for a listener that is not there yet. */
	if (count && ctl >= 0 && lets_through(&sc->policy, SYS_sendmsg, (uint64_t)ctl, MSG_NOSIGNAL) &&
	    lets_through(&sc->builtin, SYS_sendmsg, (uint64_t)ctl, MSG_NOSIGNAL) &&
	    lets_through(&sc->policy, SYS_close, 0, 0) && lets_through(&sc->builtin, SYS_close, 0, 0)) {
		struct jr_bpf notifying = { 0 };
		_cleanup_free_ struct sock_filter *prog = notifying_program(&sc->policy, &notifying.len);
		notifying.insns = prog;
		/* WAIT_KILLABLE_RECV (Linux 5.19): once the supervisor has the
		 * call, only a fatal signal interrupts it, so a denial is not
		 * turned into EINTR (or counted twice on SA_RESTART). */
		int listener = -1;
		if (prog) {
			listener = install(&notifying, SECCOMP_FILTER_FLAG_NEW_LISTENER |
							       SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV);
			if (listener < 0 && errno == EINVAL)
				listener = install(&notifying, SECCOMP_FILTER_FLAG_NEW_LISTENER);
		}
		if (listener >= 0) {
			struct jr_msg msg = { .type = JR_MSG_NOTIFY };
			int r = jr_msg_send(ctl, &msg, listener, err);
			/* The command must never hold the listener: it could
			 * answer its own denied calls. */
			if (close(listener) < 0 && r == 0)
				r = jr_fail(err, errno, "closing the seccomp listener");
			return r;
		}
		/* EBUSY: an outer filter already has a listener (a nested
		 * jailrun).  Enforce without counting. */
	}
	if (install(&sc->policy, 0) < 0)
		return jr_fail(err, errno, "loading the policy's seccomp filter");
	return 0;
}

void jr_seccomp_free(struct jr_seccomp *sc)
{
	free(sc->policy.insns);
	free(sc->builtin.insns);
	memset(sc, 0, sizeof(*sc));
}
