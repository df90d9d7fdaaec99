/* Scope-bound release of resources, so every early return frees what
 * the function acquired (systemd/crun style). */
#ifndef JR_CLEANUP_H
#define JR_CLEANUP_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static inline void jr_freep(void *p)
{
	free(*(void **)p);
}

static inline void jr_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

#define _cleanup_free_ __attribute__((cleanup(jr_freep)))
#define _cleanup_close_ __attribute__((cleanup(jr_closep)))

/* Hands ownership out of a cleanup-managed variable. */
static inline int jr_steal_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}

static inline void *jr_steal_ptr(void *pp)
{
	void **p = pp;
	void *r = *p;
	*p = NULL;
	return r;
}

#endif
