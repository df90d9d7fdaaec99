/* The kernel CIDR filter of net host (src/lib/egress_bpf.c loads it into
 * a cgroup of the run's own): every connect() and every sendmsg() with a
 * destination, of every TCP and UDP socket of the jail, goes through only
 * to an address an allow cidr rule covers.  Anything else gets EPERM, and
 * is counted for the run's report.  IP sockets of other kinds cannot be
 * made at all.
 *
 * Built with clang -target bpf; the object is embedded in libjailrun. */
#include <linux/bpf.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "egress.h"

/* <sys/socket.h> is not for the BPF target. */
#define AF_INET 2
#define AF_INET6 10
#define SOCK_STREAM 1
#define SOCK_DGRAM 2

#define ALLOW 1
#define REFUSE 0 /* the caller gets EPERM */

/* The allow cidr rules, as longest-prefix-match tries (see struct
 * jr_bpf_key): those for every port, and those for one port. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, JR_BPF_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct jr_bpf_key);
	__type(value, __u8);
} any_port SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, JR_BPF_MAX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct jr_bpf_key);
	__type(value, __u8);
} one_port SEC(".maps");

/* Refusals by destination.  LRU: a jail trying ever new addresses evicts
 * old counts rather than finding the map full (refusing never depends on
 * this map, only the report does). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, JR_BPF_MAX_DENIALS);
	__type(key, struct jr_bpf_denial);
	__type(value, __u64);
} denials SEC(".maps");

static __always_inline void count_refusal(const struct jr_bpf_denial *key)
{
	__u64 one = 1, *n = bpf_map_lookup_elem(&denials, key);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return;
	}
	/* Another CPU may have made the entry meanwhile: then add to it. */
	if (bpf_map_update_elem(&denials, key, &one, BPF_NOEXIST) &&
	    (n = bpf_map_lookup_elem(&denials, key)))
		__sync_fetch_and_add(n, 1);
}

/* Two lookups, no loop: what the kernel runs on every connect stays
 * small, and so does the verifier's work when the programs load. */
static __always_inline int judge(const struct jr_bpf_denial *dst)
{
	struct jr_bpf_key key = { .prefixlen = JR_BPF_KEY_BITS, .family = (__u8)dst->family };
	__builtin_memcpy(key.addr, dst->addr, sizeof(key.addr));
	if (bpf_map_lookup_elem(&any_port, &key))
		return ALLOW;
	key.port[0] = (__u8)(dst->port >> 8);
	key.port[1] = (__u8)dst->port;
	if (bpf_map_lookup_elem(&one_port, &key))
		return ALLOW;
	count_refusal(dst);
	return REFUSE;
}

static __always_inline int judge4(const struct bpf_sock_addr *ctx)
{
	struct jr_bpf_denial dst = { .family = AF_INET, .addr = { ctx->user_ip4 },
				     .port = bpf_ntohs((__u16)ctx->user_port) };
	return judge(&dst);
}

/* An IPv6 socket reaches IPv4 addresses as ::ffff:a.b.c.d: that is the
 * IPv4 address, and only an IPv4 rule may let it through. */
static __always_inline int judge6(const struct bpf_sock_addr *ctx)
{
	struct jr_bpf_denial dst = { .family = AF_INET6,
				     .addr = { ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2],
					       ctx->user_ip6[3] },
				     .port = bpf_ntohs((__u16)ctx->user_port) };
	if (!dst.addr[0] && !dst.addr[1] && dst.addr[2] == bpf_htonl(0xffff)) {
		dst.family = AF_INET;
		dst.addr[0] = dst.addr[3];
		dst.addr[2] = dst.addr[3] = 0;
	}
	return judge(&dst);
}

SEC("cgroup/connect4")
int jr_connect4(struct bpf_sock_addr *ctx)
{
	return judge4(ctx);
}

SEC("cgroup/connect6")
int jr_connect6(struct bpf_sock_addr *ctx)
{
	return judge6(ctx);
}

/* Only an unconnected datagram socket's sendto/sendmsg comes here: a
 * connected one went through connect4/6 when it connected. */
SEC("cgroup/sendmsg4")
int jr_sendmsg4(struct bpf_sock_addr *ctx)
{
	return judge4(ctx);
}

SEC("cgroup/sendmsg6")
int jr_sendmsg6(struct bpf_sock_addr *ctx)
{
	return judge6(ctx);
}

/* The hooks above see TCP, MPTCP (its subflows connect through them) and
 * UDP.  Other IP sockets reach addresses they never see: ICMP echo
 * sockets (ping, open to unprivileged users where
 * net.ipv4.ping_group_range allows) send anywhere, a UDP-Lite socket
 * connects without the connect hook.  They are refused when made. */
SEC("cgroup/sock_create")
int jr_sock_create(struct bpf_sock *sk)
{
	if (sk->family != AF_INET && sk->family != AF_INET6)
		return ALLOW;
	if (sk->type == SOCK_STREAM && (sk->protocol == IPPROTO_TCP || sk->protocol == IPPROTO_MPTCP))
		return ALLOW;
	if (sk->type == SOCK_DGRAM && sk->protocol == IPPROTO_UDP)
		return ALLOW;
	return REFUSE;
}

char LICENSE[] SEC("license") = "GPL";
