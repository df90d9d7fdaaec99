/* The jail's network namespace: by default nothing but its own loopback. */
#include "config.h"

#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "internal.h"

int jr_net_loopback_up(jr_error_t **err)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct rtnl_link *lo = NULL, *change = NULL;
	int r = -1, nlerr;

	if (!sk)
		return jr_fail_oom(err);
	if ((nlerr = nl_connect(sk, NETLINK_ROUTE)) < 0) {
		jr_fail(err, 0, "bringing up lo: netlink: %s", nl_geterror(nlerr));
		goto out;
	}
	if ((nlerr = rtnl_link_get_kernel(sk, 0, "lo", &lo)) < 0) {
		jr_fail(err, 0, "bringing up lo: %s", nl_geterror(nlerr));
		goto out;
	}
	if (!(change = rtnl_link_alloc())) {
		jr_fail_oom(err);
		goto out;
	}
	rtnl_link_set_flags(change, IFF_UP);
	if ((nlerr = rtnl_link_change(sk, lo, change, 0)) < 0) {
		jr_fail(err, 0, "bringing up lo: %s", nl_geterror(nlerr));
		goto out;
	}
	r = 0;
out:
	rtnl_link_put(change);
	rtnl_link_put(lo);
	nl_socket_free(sk);
	return r;
}

int jr_net_proxy_listener(jr_error_t **err)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return jr_fail(err, errno, "net proxy: socket");
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(JR_PROXY_PORT),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 1024) < 0) {
		int e = errno;
		close(fd);
		return jr_fail(err, e, "net proxy: listening on 127.0.0.1:%d in the jail", JR_PROXY_PORT);
	}
	return fd;
}
