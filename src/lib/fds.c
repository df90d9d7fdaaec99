/* Inherited file descriptors: nothing the caller had open may leak into
 * the jail unless asked for with --keep-fd. */
#include "config.h"

#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static int compare_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int jr_fds_close_except(const int *keep, size_t n_keep, jr_error_t **err)
{
	int sorted[64];
	if (n_keep > sizeof(sorted) / sizeof(sorted[0]))
		return jr_fail(err, E2BIG, "closing inherited descriptors: too many kept");
	memcpy(sorted, keep, n_keep * sizeof(int));
	qsort(sorted, n_keep, sizeof(int), compare_int);

	unsigned first = 3;
	for (size_t i = 0; i <= n_keep; i++) {
		unsigned last = i < n_keep ? (unsigned)sorted[i] : UINT_MAX;
		if (i < n_keep && sorted[i] < 3)
			continue;
		if (last > first && close_range(first, last - 1, 0) < 0)
			return jr_fail(err, errno, "closing inherited descriptors %u-%u", first,
				       last - 1);
		if (last != UINT_MAX)
			first = last + 1;
	}
	return 0;
}

void jr_stdio_to_devnull(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		return;
	for (int fd = 0; fd < 3; fd++)
		dup2(null, fd);
	close(null);
}
