/* Bytes into JSON strings: base64 (RFC 4648) and valid UTF-8. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *jr_base64_encode(const unsigned char *in, size_t len)
{
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
		*o++ = i + 2 < len ? b64[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

static int b64_value(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;
	return p ? (int)(p - b64) : -1;
}

/* -1 on anything that is not canonical-enough base64 (whitespace is
 * skipped, padding optional). */
int jr_base64_decode(const char *in, unsigned char **out, size_t *len)
{
	size_t n = strlen(in);
	unsigned char *buf = malloc(n / 4 * 3 + 3), *o = buf;
	if (!buf)
		return -1;
	uint32_t acc = 0;
	int bits = 0;
	for (const char *p = in; *p; p++) {
		if (*p == '=' || *p == '\n' || *p == '\r' || *p == ' ')
			continue;
		int v = b64_value(*p);
		if (v < 0) {
			free(buf);
			return -1;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			*o++ = (unsigned char)(acc >> bits);
		}
	}
	*out = buf;
	*len = (size_t)(o - buf);
	return 0;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	size_t k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
	if (!k || k > n || (s[0] >= 0xf8))
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (k == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0; /* overlong, surrogates */
	if (k == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return k;
}

char *jr_utf8_sanitize(const char *in, size_t len)
{
	char *out = malloc(len * 3 + 1), *o = out;
	if (!out)
		return NULL;
	const unsigned char *s = (const unsigned char *)in;
	for (size_t i = 0; i < len;) {
		size_t k = s[i] ? utf8_len(s + i, len - i) : 0;
		if (k) {
			memcpy(o, s + i, k);
			o += k;
			i += k;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3); /* U+FFFD; NUL too: C strings */
			o += 3;
			i++;
		}
	}
	*o = '\0';
	return out;
}
