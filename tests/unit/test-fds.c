/* Unit tests for src/lib/fds.c: jr_fds_close_except.
 *
 * Closing descriptors is destructive for the test process itself (cmocka,
 * the test driver and the sanitizers may hold descriptors >= 3), so every
 * test that actually closes runs in a forked child.  The child checks the
 * descriptor table with fcntl(F_GETFD) and reports through its exit status:
 * 0 when every check held, otherwise the source line of the first failed
 * check (mod 256, never 0), with a diagnostic on stderr. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jailrun.h"
#include "internal.h"

#define CHILD_CHECK(cond)                                                              \
	do {                                                                           \
		if (!(cond)) {                                                         \
			dprintf(2, "%s:%d: child check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                \
			_exit(__LINE__ % 255 + 1);                                     \
		}                                                                      \
	} while (0)

static bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static bool fd_is_closed(int fd)
{
	errno = 0;
	return fcntl(fd, F_GETFD) < 0 && errno == EBADF;
}

/* Puts a copy of /dev/null at exactly fd. */
static int open_null_at(int fd)
{
	int tmp = open("/dev/null", O_RDONLY);
	if (tmp < 0)
		return -1;
	if (tmp == fd)
		return 0;
	int r = dup2(tmp, fd);
	close(tmp);
	return r == fd ? 0 : -1;
}

static void run_in_child(void (*body)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		body();
		_exit(0);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status))
		print_error("child killed by signal %d\n", WTERMSIG(status));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* 0-2 must survive every call. */
static void child_check_stdio(void)
{
	CHILD_CHECK(fd_is_open(0));
	CHILD_CHECK(fd_is_open(1));
	CHILD_CHECK(fd_is_open(2));
}

static void child_open_fixture(void)
{
	static const int fds[] = { 10, 11, 12, 20, 30 };
	/* Six /dev/null copies: whatever the lowest free number is, plus the
	 * fixed ones above. */
	int low = open("/dev/null", O_RDONLY);
	CHILD_CHECK(low >= 3);
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		CHILD_CHECK(open_null_at(fds[i]) == 0);
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		CHILD_CHECK(fd_is_open(fds[i]));
}

/* ---- keep {11, 30} ----------------------------------------------------- */

static void body_keep_two(void)
{
	child_open_fixture();
	const int keep[] = { 11, 30 };
	jr_error_t *err = NULL;
	CHILD_CHECK(jr_fds_close_except(keep, 2, &err) == 0);
	CHILD_CHECK(err == NULL);
	child_check_stdio();
	CHILD_CHECK(fd_is_open(11));
	CHILD_CHECK(fd_is_open(30));
	for (int fd = 3; fd < 64; fd++)
		if (fd != 11 && fd != 30)
			CHILD_CHECK(fd_is_closed(fd));
}

static void test_keep_two(void **state)
{
	(void)state;
	run_in_child(body_keep_two);
}

/* ---- unsorted list with values < 3 -------------------------------------- */

static void body_keep_unsorted(void)
{
	child_open_fixture();
	const int keep[] = { 30, 1, 12, -5, 0, 11, 2 };
	jr_error_t *err = NULL;
	CHILD_CHECK(jr_fds_close_except(keep, sizeof(keep) / sizeof(keep[0]), &err) == 0);
	CHILD_CHECK(err == NULL);
	child_check_stdio();
	CHILD_CHECK(fd_is_open(11));
	CHILD_CHECK(fd_is_open(12));
	CHILD_CHECK(fd_is_open(30));
	CHILD_CHECK(fd_is_closed(10));
	CHILD_CHECK(fd_is_closed(20));
	for (int fd = 3; fd < 64; fd++)
		if (fd != 11 && fd != 12 && fd != 30)
			CHILD_CHECK(fd_is_closed(fd));
}

static void test_keep_unsorted_with_low_values(void **state)
{
	(void)state;
	run_in_child(body_keep_unsorted);
}

/* ---- duplicates and adjacent values -------------------------------------- */

static void body_keep_duplicates(void)
{
	child_open_fixture();
	const int keep[] = { 30, 11, 30, 11, 12 };
	jr_error_t *err = NULL;
	CHILD_CHECK(jr_fds_close_except(keep, sizeof(keep) / sizeof(keep[0]), &err) == 0);
	CHILD_CHECK(err == NULL);
	child_check_stdio();
	for (int fd = 3; fd < 64; fd++) {
		if (fd == 11 || fd == 12 || fd == 30)
			CHILD_CHECK(fd_is_open(fd));
		else
			CHILD_CHECK(fd_is_closed(fd));
	}
}

static void test_keep_duplicates(void **state)
{
	(void)state;
	run_in_child(body_keep_duplicates);
}

static void body_keep_lowest(void)
{
	for (int fd = 3; fd <= 8; fd++)
		CHILD_CHECK(open_null_at(fd) == 0);
	const int keep[] = { 5, 3, 4 };
	jr_error_t *err = NULL;
	CHILD_CHECK(jr_fds_close_except(keep, 3, &err) == 0);
	CHILD_CHECK(err == NULL);
	child_check_stdio();
	CHILD_CHECK(fd_is_open(3));
	CHILD_CHECK(fd_is_open(4));
	CHILD_CHECK(fd_is_open(5));
	for (int fd = 6; fd < 64; fd++)
		CHILD_CHECK(fd_is_closed(fd));
}

static void test_keep_lowest_adjacent(void **state)
{
	(void)state;
	run_in_child(body_keep_lowest);
}

/* ---- keep nothing ------------------------------------------------------- */

static void body_keep_nothing(void)
{
	child_open_fixture();
	CHILD_CHECK(open_null_at(500) == 0);
	const int none[1] = { 0 };
	jr_error_t *err = NULL;
	CHILD_CHECK(jr_fds_close_except(none, 0, &err) == 0);
	CHILD_CHECK(err == NULL);
	child_check_stdio();
	for (int fd = 3; fd < 64; fd++)
		CHILD_CHECK(fd_is_closed(fd));
	CHILD_CHECK(fd_is_closed(500));

	/* Nothing at all >= 3 is left: the only entries of /proc/self/fd are
	 * 0-2 and the directory's own descriptor. */
	DIR *d = opendir("/proc/self/fd");
	CHILD_CHECK(d != NULL);
	int dfd = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		int fd = atoi(e->d_name);
		if (fd >= 3 && fd != dfd)
			dprintf(2, "fd %d still open\n", fd);
		CHILD_CHECK(fd < 3 || fd == dfd);
	}
	closedir(d);
}

static void test_keep_nothing_closes_all(void **state)
{
	(void)state;
	run_in_child(body_keep_nothing);
}

/* ---- limits ------------------------------------------------------------- */

static void body_keep_64(void)
{
	int keep[64];
	for (int i = 0; i < 64; i++)
		keep[63 - i] = 100 + i; /* 100..163, descending */
	CHILD_CHECK(open_null_at(99) == 0);
	CHILD_CHECK(open_null_at(100) == 0);
	CHILD_CHECK(open_null_at(130) == 0);
	CHILD_CHECK(open_null_at(163) == 0);
	CHILD_CHECK(open_null_at(164) == 0);
	jr_error_t *err = NULL;
	CHILD_CHECK(jr_fds_close_except(keep, 64, &err) == 0);
	CHILD_CHECK(err == NULL);
	child_check_stdio();
	CHILD_CHECK(fd_is_closed(99));
	CHILD_CHECK(fd_is_open(100));
	CHILD_CHECK(fd_is_open(130));
	CHILD_CHECK(fd_is_open(163));
	CHILD_CHECK(fd_is_closed(164));
}

static void test_keep_64_is_allowed(void **state)
{
	(void)state;
	run_in_child(body_keep_64);
}

/* Too many kept descriptors is refused before anything is closed, so this
 * one can run in the test process itself. */
static void test_keep_65_is_e2big(void **state)
{
	(void)state;
	int probe = fcntl(0, F_DUPFD, 3);
	assert_true(probe >= 3);

	int keep[65];
	for (int i = 0; i < 65; i++)
		keep[i] = 1000 + i;
	jr_error_t *err = NULL;
	assert_int_equal(jr_fds_close_except(keep, 65, &err), -1);
	assert_non_null(err);
	assert_int_equal(err->errnum, E2BIG);
	assert_non_null(err->message);
	assert_non_null(strstr(err->message, "too many"));
	jr_error_free(err);

	/* Nothing was closed. */
	assert_true(fd_is_open(probe));
	close(probe);

	err = NULL;
	int many[200] = { 0 };
	assert_int_equal(jr_fds_close_except(many, 200, &err), -1);
	assert_non_null(err);
	assert_int_equal(err->errnum, E2BIG);
	jr_error_free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep_two),
		cmocka_unit_test(test_keep_unsorted_with_low_values),
		cmocka_unit_test(test_keep_duplicates),
		cmocka_unit_test(test_keep_lowest_adjacent),
		cmocka_unit_test(test_keep_nothing_closes_all),
		cmocka_unit_test(test_keep_64_is_allowed),
		cmocka_unit_test(test_keep_65_is_e2big),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
