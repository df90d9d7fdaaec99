#ifndef JR_ERROR_H
#define JR_ERROR_H

#include "jailrun.h"

/* Sets *err (if err is non-NULL and *err is still empty) and returns -1,
 * so callers write `return jr_fail(err, errno, "...")`.  With errnum
 * non-zero, ": strerror(errnum)" is appended. */
int jr_fail(jr_error_t **err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefixes context to an existing error: "context: old message". */
int jr_fail_wrap(jr_error_t **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Allocation failure: the one message that must not itself allocate much. */
int jr_fail_oom(jr_error_t **err);

#endif
