/* Named syscall groups, modelled on what hardened runtimes (Docker's
 * default profile, systemd's SystemCallFilter sets) keep from jails, and
 * the symbolic constants argument conditions may use. */
#include "config.h"

#include <linux/sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "syscalls.h"

#define LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const struct jr_syscall_group groups[] = {
	{ "@mount", "mounting and the new mount API",
	  LIST("mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen",
	       "fsconfig", "fsmount", "fspick", "mount_setattr") },
	{ "@module", "loading kernel modules",
	  LIST("init_module", "finit_module", "delete_module", "create_module") },
	{ "@reboot", "rebooting and kexec", LIST("reboot", "kexec_load", "kexec_file_load") },
	{ "@swap", "swap control", LIST("swapon", "swapoff") },
	{ "@raw-io", "raw port and PCI access",
	  LIST("ioperm", "iopl", "pciconfig_read", "pciconfig_write", "pciconfig_iobase") },
	{ "@clock", "setting the system clock",
	  LIST("settimeofday", "stime", "clock_settime", "adjtimex", "clock_adjtime") },
	{ "@debug", "tracing and reading other processes",
	  LIST("ptrace", "process_vm_readv", "process_vm_writev", "perf_event_open",
	       "lookup_dcookie", "kcmp") },
	{ "@keyring", "the kernel keyring", LIST("add_key", "request_key", "keyctl") },
	{ "@bpf", "loading BPF programs", LIST("bpf") },
	{ "@io-uring", "io_uring (bypasses seccomp for the operations it submits)",
	  LIST("io_uring_setup", "io_uring_enter", "io_uring_register") },
	{ "@namespaces", "creating or joining namespaces (unshare, setns, clone3)",
	  LIST("unshare", "setns", "clone3") },
	{ "@obsolete", "syscalls no modern program uses",
	  LIST("_sysctl", "afs_syscall", "bdflush", "break", "ftime", "get_kernel_syms", "getpmsg",
	       "gtty", "lock", "mpx", "prof", "profil", "putpmsg", "query_module", "security",
	       "sgetmask", "ssetmask", "stty", "sysfs", "tuxcall", "ulimit", "uselib", "ustat",
	       "vserver", "nfsservctl") },
	{ "@cpu-emulation", "CPU emulation and segment games",
	  LIST("modify_ldt", "subpage_prot", "switch_endian", "vm86", "vm86old") },
	{ "@privileged", "system administration",
	  LIST("acct", "quotactl", "quotactl_fd", "vhangup", "syslog", "open_by_handle_at",
	       "name_to_handle_at", "userfaultfd", "personality") },
	/* The TIOCSTI/TIOCLINUX argument conditions belong to the filter
	 * compiler (seccomp.c); as a name list the group is just ioctl. */
	{ "@tty-inject", "ioctl TIOCSTI and TIOCLINUX (pushing input into a terminal)",
	  LIST("ioctl") },
};

const struct jr_syscall_group *jr_syscall_groups(size_t *count)
{
	*count = sizeof(groups) / sizeof(groups[0]);
	return groups;
}

const struct jr_syscall_group *jr_syscall_group_find(const char *name)
{
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (strcmp(groups[i].name, name) == 0)
			return &groups[i];
	return NULL;
}

bool jr_syscall_known(const char *name)
{
	return seccomp_syscall_resolve_name(name) >= 0;
}

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

static const struct {
	const char *name;
	uint64_t value;
} constants[] = {
	{ "TIOCSTI", TIOCSTI },		  { "TIOCLINUX", TIOCLINUX },
	{ "TIOCCONS", TIOCCONS },	  { "TIOCSETD", TIOCSETD },
	{ "CLONE_NEWUSER", CLONE_NEWUSER }, { "CLONE_NEWNS", CLONE_NEWNS },
	{ "CLONE_NEWPID", CLONE_NEWPID }, { "CLONE_NEWNET", CLONE_NEWNET },
	{ "CLONE_NEWIPC", CLONE_NEWIPC }, { "CLONE_NEWUTS", CLONE_NEWUTS },
	{ "CLONE_NEWCGROUP", CLONE_NEWCGROUP }, { "CLONE_NEWTIME", CLONE_NEWTIME },
	{ "AF_UNIX", AF_UNIX },		  { "AF_INET", AF_INET },
	{ "AF_INET6", AF_INET6 },	  { "AF_NETLINK", AF_NETLINK },
	{ "AF_PACKET", AF_PACKET },	  { "AF_KEY", AF_KEY },
	{ "AF_ALG", AF_ALG },		  { "AF_VSOCK", AF_VSOCK },
	{ "AF_BLUETOOTH", AF_BLUETOOTH }, { "SOCK_RAW", SOCK_RAW },
	{ "SOCK_STREAM", SOCK_STREAM },	  { "SOCK_DGRAM", SOCK_DGRAM },
	{ "PER_LINUX", 0 },		  { "PERSONALITY_QUERY", 0xffffffff },
};

bool jr_constant_lookup(const char *name, uint64_t *value)
{
	for (size_t i = 0; i < sizeof(constants) / sizeof(constants[0]); i++)
		if (strcmp(constants[i].name, name) == 0) {
			*value = constants[i].value;
			return true;
		}
	return false;
}
