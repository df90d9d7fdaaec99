/* A classic-BPF interpreter for seccomp programs.
 *
 * When denials are counted, the kernel hands each denied syscall to the
 * supervisor (a user notification) instead of answering it; the
 * supervisor then runs the policy's own, unpatched program over the same
 * seccomp_data to answer exactly as the filter would have (the same
 * errno, or let a log-action call run).  The instruction set is the one
 * the kernel's seccomp_check_filter accepts. */
#include "config.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

static uint32_t alu(uint16_t op, uint32_t a, uint32_t x, int *bad)
{
	switch (op) {
	case BPF_ADD: return a + x;
	case BPF_SUB: return a - x;
	case BPF_MUL: return a * x;
	case BPF_DIV: return x ? a / x : (*bad = 1, 0);
	case BPF_MOD: return x ? a % x : (*bad = 1, 0);
	case BPF_AND: return a & x;
	case BPF_OR: return a | x;
	case BPF_XOR: return a ^ x;
	case BPF_LSH: return x < 32 ? a << x : 0;
	case BPF_RSH: return x < 32 ? a >> x : 0;
	case BPF_NEG: return (uint32_t)-a;
	default: *bad = 1; return 0;
	}
}

static int jump(uint16_t op, uint32_t a, uint32_t v, int *bad)
{
	switch (op) {
	case BPF_JEQ: return a == v;
	case BPF_JGT: return a > v;
	case BPF_JGE: return a >= v;
	case BPF_JSET: return (a & v) != 0;
	default: *bad = 1; return 0;
	}
}

int jr_bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *data,
	       uint32_t *ret)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	int bad = 0;
	for (size_t pc = 0; pc < len && !bad; pc++) {
		const struct sock_filter *i = &prog[pc];
		uint32_t v;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
		case BPF_LDX:
			if (BPF_MODE(i->code) == BPF_ABS && BPF_SIZE(i->code) == BPF_W &&
			    i->k % 4 == 0 && i->k + 4 <= sizeof(*data))
				memcpy(&v, (const char *)data + i->k, 4);
			else if (BPF_MODE(i->code) == BPF_LEN)
				v = sizeof(*data);
			else if (BPF_MODE(i->code) == BPF_IMM)
				v = i->k;
			else if (BPF_MODE(i->code) == BPF_MEM && i->k < BPF_MEMWORDS)
				v = mem[i->k];
			else
				return -EINVAL;
			if (BPF_CLASS(i->code) == BPF_LD)
				a = v;
			else
				x = v;
			break;
		case BPF_ST:
		case BPF_STX:
			if (i->k >= BPF_MEMWORDS)
				return -EINVAL;
			mem[i->k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			a = alu(BPF_OP(i->code), a, BPF_SRC(i->code) == BPF_X ? x : i->k, &bad);
			break;
		case BPF_JMP:
			if (BPF_OP(i->code) == BPF_JA) {
				pc += i->k;
				break;
			}
			pc += jump(BPF_OP(i->code), a, BPF_SRC(i->code) == BPF_X ? x : i->k, &bad)
				      ? i->jt
				      : i->jf;
			break;
		case BPF_RET:
			*ret = BPF_RVAL(i->code) == BPF_A ? a : i->k;
			return 0;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return -EINVAL;
		}
	}
	return -EINVAL; /* ran off the end, or an invalid operation */
}
