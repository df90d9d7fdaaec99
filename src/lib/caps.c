/* Dropping every capability, for good. */
#include "config.h"

#include <errno.h>
#include <linux/securebits.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "internal.h"

static bool holds_no_capability(void)
{
	cap_t caps = cap_get_proc();
	cap_t none = cap_init();
	bool empty = caps && none && cap_compare(caps, none) == 0;
	cap_free(caps);
	cap_free(none);
	return empty;
}

int jr_caps_drop_all(jr_error_t **err)
{
	/* Lock the securebits first (needs CAP_SETPCAP, which the bounding-set
	 * drop below takes away): uid 0 inside must never regain capabilities
	 * through execve or a setuid() back to 0. */
	unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0) {
		/* Without a user namespace (Landlock-only isolation) an
		 * unprivileged process lacks CAP_SETPCAP for this and for the
		 * bounding set; holding no capability at all, with no_new_privs
		 * next, it can gain none either: that is the only case let by. */
		if (errno == EPERM && holds_no_capability())
			return 0;
		return jr_fail(err, errno, "dropping capabilities: PR_SET_SECUREBITS");
	}

	/* cap_max_bits() is what this kernel knows, not what the headers do. */
	for (cap_value_t cap = 0; cap < (cap_value_t)cap_max_bits(); cap++) {
		if (cap_drop_bound(cap) < 0 && errno != EINVAL)
			return jr_fail(err, errno, "dropping capabilities: bounding set (cap %d)",
				       (int)cap);
	}
	if (cap_reset_ambient() < 0)
		return jr_fail(err, errno, "dropping capabilities: ambient set");

	cap_t empty = cap_init();
	if (!empty)
		return jr_fail(err, errno, "dropping capabilities: cap_init");
	int r = cap_set_proc(empty);
	int saved = errno;
	cap_free(empty);
	if (r < 0)
		return jr_fail(err, saved, "dropping capabilities: cap_set_proc");
	return 0;
}

int jr_set_no_new_privs(jr_error_t **err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return jr_fail(err, errno, "setting no_new_privs");
	return 0;
}
