/* Unit tests for what the run report rests on: SHA-256 (the policy
 * digest), the seccomp BPF interpreter (how counted denials are
 * answered), the output budget (limit output) and the JSON itself. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "jailrun.h"
#include "internal.h"
#include "sha256.h"

static void hex_of(const char *text, size_t len, char out[65])
{
	struct jr_sha256 s;
	jr_sha256_init(&s);
	jr_sha256_update(&s, text, len);
	jr_sha256_hex(&s, out);
}

/* FIPS 180-4 example vectors, plus a message crossing block bounds. */
static void test_sha256_vectors(void **state)
{
	(void)state;
	char hex[65];
	hex_of("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hex_of("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	hex_of(two, strlen(two), hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* In pieces, finished twice: the running state is not consumed. */
	struct jr_sha256 s;
	jr_sha256_init(&s);
	for (size_t i = 0; i < strlen(two); i += 7)
		jr_sha256_update(&s, two + i, strlen(two) - i < 7 ? strlen(two) - i : 7);
	jr_sha256_hex(&s, hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	jr_sha256_hex(&s, hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static uint32_t run_filter(const struct jr_bpf *bpf, uint32_t arch, int nr, uint64_t a1)
{
	struct seccomp_data d = { .nr = nr, .arch = arch, .args = { 0, a1 } };
	uint32_t action = 0xdeadbeef;
	assert_int_equal(jr_bpf_run(bpf->insns, bpf->len, &d, &action), 0);
	return action;
}

/* The interpreter over libseccomp's own output gives the answers the
 * policy asks for: so the supervisor answers a counted denial as the
 * kernel would have. */
static void test_bpf_matches_policy(void **state)
{
	(void)state;
	jr_policy_t *p = NULL;
	jr_error_t *err = NULL;
	assert_int_equal(jr_policy_new(&p, &err), 0);
	assert_int_equal(jr_policy_add_line(p, "seccomp deny mount errno EACCES", &err), 0);
	assert_int_equal(jr_policy_add_line(p, "seccomp deny ioctl errno EPERM if arg1 == TIOCSTI", &err), 0);
	assert_int_equal(jr_policy_add_line(p, "seccomp deny swapon log", &err), 0);
	struct jr_seccomp sc;
	assert_int_equal(jr_seccomp_build(p, 0, &sc, &err), 0);
	assert_true(sc.policy.len > 0);
	assert_int_equal(run_filter(&sc.policy, AUDIT_ARCH_X86_64, SYS_mount, 0), SECCOMP_RET_ERRNO | EACCES);
	assert_int_equal(run_filter(&sc.policy, AUDIT_ARCH_X86_64, SYS_getpid, 0), SECCOMP_RET_ALLOW);
	assert_int_equal(run_filter(&sc.policy, AUDIT_ARCH_X86_64, SYS_ioctl, TIOCSTI), SECCOMP_RET_ERRNO | EPERM);
	assert_int_equal(run_filter(&sc.policy, AUDIT_ARCH_X86_64, SYS_ioctl, TCGETS), SECCOMP_RET_ALLOW);
	/* The upper half of a 64-bit request does not hide TIOCSTI. */
	assert_int_equal(run_filter(&sc.policy, AUDIT_ARCH_X86_64, SYS_ioctl, 0x100000000ull | TIOCSTI),
			 SECCOMP_RET_ERRNO | EPERM);
	assert_int_equal(run_filter(&sc.policy, AUDIT_ARCH_X86_64, SYS_swapon, 0), SECCOMP_RET_LOG);
	assert_int_equal(run_filter(&sc.policy, AUDIT_ARCH_I386, 1, 0), SECCOMP_RET_KILL_PROCESS);
	jr_seccomp_free(&sc);
	jr_policy_free(p);
}

static void test_bpf_rejects_bad_programs(void **state)
{
	(void)state;
	struct seccomp_data d = { 0 };
	uint32_t action;
	/* Runs off the end. */
	struct sock_filter no_ret[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0) };
	assert_int_equal(jr_bpf_run(no_ret, 1, &d, &action), -EINVAL);
	/* Loads outside seccomp_data. */
	struct sock_filter far[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4096),
				     BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	assert_int_equal(jr_bpf_run(far, 2, &d, &action), -EINVAL);
	/* Division by zero. */
	struct sock_filter div0[] = { BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
				      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	assert_int_equal(jr_bpf_run(div0, 2, &d, &action), -EINVAL);
	/* A jump past the end. */
	struct sock_filter jump[] = { BPF_JUMP(BPF_JMP | BPF_JA, 10, 0, 0),
				      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	assert_int_equal(jr_bpf_run(jump, 2, &d, &action), -EINVAL);
}

static void test_output_budget(void **state)
{
	(void)state;
	struct jr_output_budget b = { .limited = true, .limit = 10 };
	char buf[64 + JR_OUTPUT_MARKER_MAX];
	memcpy(buf, "123456", 6);
	assert_int_equal(jr_output_admit(&b, buf, 6, sizeof(buf)), 6);
	assert_false(b.truncated);
	memcpy(buf, "abcdefgh", 8);
	size_t n = jr_output_admit(&b, buf, 8, sizeof(buf));
	assert_true(b.truncated);
	assert_memory_equal(buf, "abcd", 4);
	buf[n] = '\0';
	assert_string_equal(buf + 4, "\n[jailrun: output truncated at 10 bytes (limit output)]\n");
	assert_int_equal(jr_output_admit(&b, buf, 8, sizeof(buf)), 0);
	assert_int_equal(b.produced, 22);
	assert_int_equal(b.passed, 10);
	/* Unlimited: everything passes, and is counted. */
	struct jr_output_budget all = { 0 };
	assert_int_equal(jr_output_admit(&all, buf, 8, sizeof(buf)), 8);
	assert_int_equal(all.produced, 8);
}

/* A policy error's report: the step and message, no plan, no result. */
static void test_report_of_policy_error(void **state)
{
	(void)state;
	jr_policy_t *p = NULL;
	jr_error_t *err = NULL;
	assert_int_equal(jr_policy_new(&p, &err), 0);
	assert_int_equal(jr_policy_add_line(p, "bogus", &err), -1);
	char *argv[] = { "true", NULL };
	struct jr_report_input in = { .policy = p, .argv = argv, .started_ms = 1700000000123LL,
				      .status = 125, .error_step = "policy", .error = err };
	char *json = NULL;
	jr_error_t *rerr = NULL;
	assert_int_equal(jr_report_json(&in, &json, &rerr), 0);
	assert_true(json[strlen(json) - 1] == '\n');
	cJSON *o = cJSON_Parse(json);
	assert_non_null(o);
	assert_int_equal(cJSON_GetObjectItem(o, "status")->valueint, 125);
	assert_string_equal(cJSON_GetObjectItem(o, "startedAt")->valuestring, "2023-11-14T22:13:20.123Z");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "exitCode")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "enforcement")));
	cJSON *e = cJSON_GetObjectItem(o, "error");
	assert_string_equal(cJSON_GetObjectItem(e, "step")->valuestring, "policy");
	assert_non_null(strstr(cJSON_GetObjectItem(e, "message")->valuestring, "bogus"));
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "argv"), 0)->valuestring, "true");
	cJSON_Delete(o);
	free(json);
	jr_error_free(err);
	jr_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_bpf_matches_policy),
		cmocka_unit_test(test_bpf_rejects_bad_programs),
		cmocka_unit_test(test_output_budget),
		cmocka_unit_test(test_report_of_policy_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
