#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static int set_error(jr_error_t **err, int errnum, char *message)
{
	if (!err || *err) {
		free(message);
		return -1;
	}
	jr_error_t *e = calloc(1, sizeof(*e));
	if (!e) {
		free(message);
		return -1;
	}
	e->errnum = errnum;
	e->message = message ? message : strdup("out of memory");
	*err = e;
	return -1;
}

int jr_fail(jr_error_t **err, int errnum, const char *fmt, ...)
{
	char *base = NULL, *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	int n = vasprintf(&base, fmt, ap);
	va_end(ap);
	if (n < 0)
		return set_error(err, errnum, NULL);
	if (errnum == 0)
		return set_error(err, errnum, base);
	if (asprintf(&msg, "%s: %s", base, strerror(errnum)) < 0)
		msg = NULL;
	free(base);
	return set_error(err, errnum, msg);
}

int jr_fail_wrap(jr_error_t **err, const char *fmt, ...)
{
	char *prefix = NULL, *msg = NULL;
	va_list ap;

	if (!err || !*err)
		return -1;
	va_start(ap, fmt);
	int n = vasprintf(&prefix, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if (asprintf(&msg, "%s: %s", prefix, (*err)->message) >= 0) {
		free((*err)->message);
		(*err)->message = msg;
	}
	free(prefix);
	return -1;
}

int jr_fail_oom(jr_error_t **err)
{
	return set_error(err, ENOMEM, strdup("out of memory"));
}

void jr_error_free(jr_error_t *err)
{
	if (!err)
		return;
	free(err->message);
	free(err);
}

const char *jr_version(void)
{
	return PACKAGE_VERSION;
}
