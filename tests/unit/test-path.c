/* Unit tests for src/lib/path.c: depth, lexical normalisation, canonical
 * resolution and the "is beneath" test the compiler and mount code use. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jailrun.h"
#include "internal.h"

/* ---- jr_path_depth ---------------------------------------------------- */

static void test_depth_root(void **state)
{
	(void)state;
	assert_int_equal(jr_path_depth("/"), 0);
	assert_int_equal(jr_path_depth("//"), 0);
	assert_int_equal(jr_path_depth("///"), 0);
}

static void test_depth_simple(void **state)
{
	(void)state;
	assert_int_equal(jr_path_depth("/a"), 1);
	assert_int_equal(jr_path_depth("/abc"), 1);
	assert_int_equal(jr_path_depth("/a/b"), 2);
	assert_int_equal(jr_path_depth("/usr/lib/x86_64-linux-gnu"), 3);
}

static void test_depth_trailing_and_repeated_slashes(void **state)
{
	(void)state;
	assert_int_equal(jr_path_depth("/a/"), 1);
	assert_int_equal(jr_path_depth("/a/b/"), 2);
	assert_int_equal(jr_path_depth("//a//b"), 2);
	assert_int_equal(jr_path_depth("//a//b//"), 2);
	assert_int_equal(jr_path_depth("/a///b////c"), 3);
}

/* ---- jr_path_normalize ------------------------------------------------ */

static void expect_normalize(const char *in, const char *want)
{
	char *got = jr_path_normalize(in);
	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	if (strcmp(got, want) != 0)
		print_error("normalize(\"%s\") = \"%s\", want \"%s\"\n", in, got, want);
	assert_string_equal(got, want);
	free(got);
}

static void test_normalize_identity(void **state)
{
	(void)state;
	expect_normalize("/", "/");
	expect_normalize("/a", "/a");
	expect_normalize("/a/b/c", "/a/b/c");
	expect_normalize("/.hidden/..x/x..", "/.hidden/..x/x..");
	expect_normalize("/a/.../b", "/a/.../b");
}

static void test_normalize_collapses_slashes(void **state)
{
	(void)state;
	expect_normalize("//", "/");
	expect_normalize("///a", "/a");
	expect_normalize("//a//b", "/a/b");
	expect_normalize("/a////b///c", "/a/b/c");
}

static void test_normalize_dot(void **state)
{
	(void)state;
	expect_normalize("/.", "/");
	expect_normalize("/./a/./b/.", "/a/b");
	expect_normalize("/a/././b", "/a/b");
}

static void test_normalize_dotdot(void **state)
{
	(void)state;
	expect_normalize("/a/..", "/");
	expect_normalize("/a/b/..", "/a");
	expect_normalize("/a/b/../c", "/a/c");
	expect_normalize("/a/b/c/../../d", "/a/d");
	expect_normalize("/a/./b/../../c/", "/c");
	expect_normalize("/abc/def/..", "/abc");
}

static void test_normalize_dotdot_above_root(void **state)
{
	(void)state;
	expect_normalize("/..", "/");
	expect_normalize("/../..", "/");
	expect_normalize("/../../a", "/a");
	expect_normalize("/a/../../b", "/b");
	expect_normalize("/a/../..", "/");
}

static void test_normalize_trailing_slash(void **state)
{
	(void)state;
	expect_normalize("/a/", "/a");
	expect_normalize("/a/b/", "/a/b");
	expect_normalize("/a/b//", "/a/b");
	expect_normalize("/a/b/./", "/a/b");
}

static void test_normalize_relative_is_null(void **state)
{
	(void)state;
	expect_normalize("a", NULL);
	expect_normalize("a/b", NULL);
	expect_normalize("./a", NULL);
	expect_normalize("../a", NULL);
	expect_normalize("", NULL);
	expect_normalize(NULL, NULL);
}

/* ---- jr_path_is_beneath ----------------------------------------------- */

static void test_beneath_exact(void **state)
{
	(void)state;
	assert_true(jr_path_is_beneath("/a", "/a"));
	assert_true(jr_path_is_beneath("/a/b", "/a/b"));
	assert_true(jr_path_is_beneath("/", "/"));
}

static void test_beneath_child(void **state)
{
	(void)state;
	assert_true(jr_path_is_beneath("/a/b", "/a"));
	assert_true(jr_path_is_beneath("/a/b/c/d", "/a/b"));
	assert_false(jr_path_is_beneath("/a", "/a/b"));
}

static void test_beneath_sibling_prefix(void **state)
{
	(void)state;
	assert_false(jr_path_is_beneath("/a/bc", "/a/b"));
	assert_false(jr_path_is_beneath("/a/bc/d", "/a/b"));
	assert_false(jr_path_is_beneath("/ab", "/a"));
	assert_false(jr_path_is_beneath("/b", "/a"));
	assert_false(jr_path_is_beneath("/usr2/lib", "/usr"));
}

static void test_beneath_root_contains_all(void **state)
{
	(void)state;
	assert_true(jr_path_is_beneath("/", "/"));
	assert_true(jr_path_is_beneath("/a", "/"));
	assert_true(jr_path_is_beneath("/a/b/c", "/"));
	assert_true(jr_path_is_beneath("/usr", "/"));
}

/* ---- jr_path_canonical ------------------------------------------------ */

/* A temporary tree:
 *   DIR/real/sub/
 *   DIR/real/file
 *   DIR/link -> real
 *   DIR/abslink -> DIR/real/sub   (absolute)
 * DIR is the canonical name of the mkdtemp directory. */
struct tree {
	char *dir;
	char buf[PATH_MAX];
};

static char *tree_path(struct tree *t, const char *rel)
{
	int n = snprintf(t->buf, sizeof(t->buf), "%s/%s", t->dir, rel);
	assert_true(n > 0 && (size_t)n < sizeof(t->buf));
	return t->buf;
}

static int tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	if (!t)
		return -1;
	char tmpl[] = "/tmp/jr-test-path-XXXXXX";
	if (!mkdtemp(tmpl))
		return -1;
	t->dir = realpath(tmpl, NULL);
	if (!t->dir)
		return -1;
	char target[PATH_MAX];
	if (mkdir(tree_path(t, "real"), 0755) < 0 || mkdir(tree_path(t, "real/sub"), 0755) < 0 ||
	    symlink("real", tree_path(t, "link")) < 0)
		return -1;
	snprintf(target, sizeof(target), "%s/real/sub", t->dir);
	if (symlink(target, tree_path(t, "abslink")) < 0)
		return -1;
	FILE *f = fopen(tree_path(t, "real/file"), "w");
	if (!f)
		return -1;
	fclose(f);
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;
	if (!t)
		return 0;
	unlink(tree_path(t, "abslink"));
	unlink(tree_path(t, "link"));
	unlink(tree_path(t, "real/file"));
	rmdir(tree_path(t, "real/sub"));
	rmdir(tree_path(t, "real"));
	rmdir(t->dir);
	free(t->dir);
	free(t);
	return 0;
}

static void expect_canonical(const char *in, const char *want)
{
	char *out = NULL;
	jr_error_t *err = NULL;
	int r = jr_path_canonical(in, &out, &err);
	if (r != 0)
		print_error("canonical(%s) failed: %s\n", in, err ? err->message : "?");
	assert_int_equal(r, 0);
	assert_null(err);
	assert_non_null(out);
	assert_string_equal(out, want);
	free(out);
}

static void test_canonical_plain(void **state)
{
	struct tree *t = *state;
	char want[PATH_MAX];
	snprintf(want, sizeof(want), "%s/real/sub", t->dir);
	expect_canonical(want, want);
	expect_canonical(t->dir, t->dir);
	expect_canonical("/", "/");
}

static void test_canonical_follows_symlink(void **state)
{
	struct tree *t = *state;
	char want[PATH_MAX];

	snprintf(want, sizeof(want), "%s/real", t->dir);
	expect_canonical(tree_path(t, "link"), want);
	expect_canonical(tree_path(t, "link/"), want);

	snprintf(want, sizeof(want), "%s/real/sub", t->dir);
	expect_canonical(tree_path(t, "link/sub"), want);
	expect_canonical(tree_path(t, "link//./sub/"), want);
	expect_canonical(tree_path(t, "abslink"), want);

	snprintf(want, sizeof(want), "%s/real/file", t->dir);
	expect_canonical(tree_path(t, "link/file"), want);

	/* ".." applies to the resolved directory, not to the link text. */
	snprintf(want, sizeof(want), "%s/real", t->dir);
	expect_canonical(tree_path(t, "abslink/.."), want);
	expect_canonical(tree_path(t, "link/sub/.."), want);
}

static void test_canonical_relative(void **state)
{
	struct tree *t = *state;
	char *saved = getcwd(NULL, 0);
	assert_non_null(saved);
	assert_int_equal(chdir(t->dir), 0);

	char want[PATH_MAX];
	char *out = NULL;
	jr_error_t *err = NULL;
	snprintf(want, sizeof(want), "%s/real/sub", t->dir);
	int r1 = jr_path_canonical("link/sub", &out, &err);
	int r2 = -1;
	char *dot = NULL;
	jr_error_t *err2 = NULL;
	r2 = jr_path_canonical(".", &dot, &err2);

	assert_int_equal(chdir(saved), 0);
	free(saved);

	assert_int_equal(r1, 0);
	assert_null(err);
	assert_string_equal(out, want);
	free(out);
	assert_int_equal(r2, 0);
	assert_null(err2);
	assert_string_equal(dot, t->dir);
	free(dot);
}

static void test_canonical_missing(void **state)
{
	struct tree *t = *state;
	char missing[PATH_MAX];
	snprintf(missing, sizeof(missing), "%s/link/no-such-entry", t->dir);

	char *out = NULL;
	jr_error_t *err = NULL;
	assert_int_equal(jr_path_canonical(missing, &out, &err), -1);
	assert_null(out);
	assert_non_null(err);
	assert_int_equal(err->errnum, ENOENT);
	assert_non_null(err->message);
	if (!strstr(err->message, missing))
		print_error("message \"%s\" does not name \"%s\"\n", err->message, missing);
	assert_non_null(strstr(err->message, missing));
	assert_non_null(strstr(err->message, strerror(ENOENT)));
	jr_error_free(err);
}

static void test_canonical_missing_parent(void **state)
{
	(void)state;
	const char *missing = "/nonexistent-jailrun-test/a/b";
	char *out = NULL;
	jr_error_t *err = NULL;
	assert_int_equal(jr_path_canonical(missing, &out, &err), -1);
	assert_null(out);
	assert_non_null(err);
	assert_int_equal(err->errnum, ENOENT);
	assert_non_null(strstr(err->message, missing));
	jr_error_free(err);
}

static void test_canonical_through_file_is_enotdir(void **state)
{
	struct tree *t = *state;
	char bad[PATH_MAX];
	snprintf(bad, sizeof(bad), "%s/real/file/x", t->dir);
	char *out = NULL;
	jr_error_t *err = NULL;
	assert_int_equal(jr_path_canonical(bad, &out, &err), -1);
	assert_null(out);
	assert_non_null(err);
	assert_int_equal(err->errnum, ENOTDIR);
	assert_non_null(strstr(err->message, bad));
	jr_error_free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth_root),
		cmocka_unit_test(test_depth_simple),
		cmocka_unit_test(test_depth_trailing_and_repeated_slashes),
		cmocka_unit_test(test_normalize_identity),
		cmocka_unit_test(test_normalize_collapses_slashes),
		cmocka_unit_test(test_normalize_dot),
		cmocka_unit_test(test_normalize_dotdot),
		cmocka_unit_test(test_normalize_dotdot_above_root),
		cmocka_unit_test(test_normalize_trailing_slash),
		cmocka_unit_test(test_normalize_relative_is_null),
		cmocka_unit_test(test_beneath_exact),
		cmocka_unit_test(test_beneath_child),
		cmocka_unit_test(test_beneath_sibling_prefix),
		cmocka_unit_test(test_beneath_root_contains_all),
		cmocka_unit_test_setup_teardown(test_canonical_plain, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_canonical_follows_symlink, tree_setup,
						tree_teardown),
		cmocka_unit_test_setup_teardown(test_canonical_relative, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_canonical_missing, tree_setup, tree_teardown),
		cmocka_unit_test(test_canonical_missing_parent),
		cmocka_unit_test_setup_teardown(test_canonical_through_file_is_enotdir, tree_setup,
						tree_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
