/* What egress.bpf.c (in the kernel) and egress_bpf.c (loading it) share:
 * the layout of the rule and refusal maps.  Byte and fixed-width fields
 * only, with explicit padding: both compilers must agree on every byte
 * of a map key. */
#ifndef JR_BPF_EGRESS_H
#define JR_BPF_EGRESS_H

#include <linux/types.h>

#define JR_BPF_MAX_RULES 4096 /* in each of the two rule maps */
#define JR_BPF_MAX_DENIALS 1024

/* A key of the rule maps (longest-prefix-match tries): the family, the
 * port, then the address, so that a rule for ADDR/N is the prefix of
 * 8 * 3 + N bits.  The map of rules without a port holds port 0, and is
 * asked with port 0: there the port always matches. */
struct jr_bpf_key {
	__u32 prefixlen;
	__u8 family;  /* AF_INET, AF_INET6 */
	__u8 port[2]; /* network order */
	__u8 addr[16]; /* an IPv4 address in the first 4, the rest 0 */
	__u8 pad;
};
#define JR_BPF_KEY_BITS_BEFORE_ADDR 24
#define JR_BPF_KEY_BITS (JR_BPF_KEY_BITS_BEFORE_ADDR + 128)

/* A refused destination, the key of the refusal counts. */
struct jr_bpf_denial {
	__u32 family;
	__u32 addr[4]; /* network order; IPv4 in addr[0] */
	__u32 port;    /* host order */
};

#endif
