/* Named syscall groups and symbolic constants for seccomp clauses. */
#ifndef JR_SYSCALLS_H
#define JR_SYSCALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jr_syscall_group {
	const char *name; /* "@mount" */
	const char *summary;
	const char *const *syscalls; /* NULL-terminated; names this arch lacks are skipped */
};

const struct jr_syscall_group *jr_syscall_group_find(const char *name);
const struct jr_syscall_group *jr_syscall_groups(size_t *count);
/* A syscall name this architecture (native ABI) has. */
bool jr_syscall_known(const char *name);
/* TIOCSTI, CLONE_NEWUSER, AF_NETLINK, ...: the value, for argument conditions. */
bool jr_constant_lookup(const char *name, uint64_t *value);

#endif
