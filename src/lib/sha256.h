/* SHA-256 (FIPS 180-4), for the policy digest in the run report: a
 * harness can tell which exact policy text a run was under. */
#ifndef JR_SHA256_H
#define JR_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct jr_sha256 {
	uint32_t h[8];
	uint64_t bytes;
	uint8_t block[64];
	size_t used;
};

void jr_sha256_init(struct jr_sha256 *s);
void jr_sha256_update(struct jr_sha256 *s, const void *data, size_t len);
/* Finishes a copy, so the running state can take more input afterwards. */
void jr_sha256_hex(const struct jr_sha256 *s, char out[65]);

#endif
