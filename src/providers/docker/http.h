/* http.h: the little HTTP/1.1 client the docker provider speaks to the
 * Docker Engine API over its AF_UNIX socket with.  No libcurl: the API
 * needs one request per connection, Content-Length or chunked bodies and
 * the connection upgrade of exec start, which is less code than a
 * dependency. */
#ifndef JR_DOCKER_HTTP_H
#define JR_DOCKER_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "jailrun-provider.h"

struct dk_buf {
	char *p;
	size_t len, cap;
};

int dk_buf_add(struct dk_buf *b, const void *data, size_t n);
void dk_buf_free(struct dk_buf *b);

/* Sets err and returns -1; code an errno value or 0. */
int dk_fail(struct jr_provider_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One request on a fresh connection (Connection: close); the body of the
 * answer, de-chunked and NUL-terminated, in *body.  timeout_ms 0: none.
 * Returns 0 with *status set whatever the status, -1 when the exchange
 * itself failed. */
int dk_request(const char *sock, const char *method, const char *path, const char *json,
	       uint64_t timeout_ms, int *status, struct dk_buf *body, struct jr_provider_error *err);

/* A request whose answer takes the connection over (exec start): returns
 * the connected descriptor positioned after the answer's headers, and the
 * status; *extra (malloc()ed, *n_extra bytes) is what was read past them. */
int dk_upgrade(const char *sock, const char *path, const char *json, int *fd, int *status,
	       char **extra, size_t *n_extra, struct jr_provider_error *err);

/* The "message" of an Engine API error body, or the body itself. */
const char *dk_error_message(const struct dk_buf *body, char *scratch, size_t size);

/* Percent-encodes s for a query string into out. */
void dk_query_escape(const char *s, char *out, size_t size);

#endif
