/*
 * fuzz-http-req.c - libFuzzer target for the supervisor's HTTP request
 * parser (sv_http_parse, behind /metrics and /healthz). Any bytes must
 * give one of the four answers without reading past the input; a parsed
 * request must have a sane path; and a prefix of the input that already
 * decides (1, -1, -2) must decide the same as the whole input, because the
 * server parses each time more bytes arrive.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I lib \
 *       tests/fuzz/fuzz-http-req.c supervisor/httpd.c lib/sbuf.c \
 *       lib/xio.c -o build/fuzz-http-req
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../supervisor/supervisor.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sv_http_req req, preq;
	char *buf;
	size_t cut, i, n;
	int r, pr;

	/* an exact-size copy, so an over-read is caught */
	buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	r = sv_http_parse(buf, size, &req);
	if (r < -2 || r > 1)
		abort();
	if (r == 1) {
		n = strnlen(req.path, sizeof(req.path));
		if (n == sizeof(req.path) || req.path[0] != '/')
			abort();
		for (i = 0; i < n; i++)
			if ((unsigned char)req.path[i] <= 0x20 ||
			    req.path[i] == '?' || req.path[i] == 0x7f)
				abort();
		if (req.method != SV_HTTP_GET && req.method != SV_HTTP_HEAD &&
		    req.method != SV_HTTP_OTHER)
			abort();
	}
	if (size > 0) {
		cut = data[0] % size;
		pr = sv_http_parse(buf, cut, &preq);
		if (pr != 0 && pr != r)
			abort();
		if (pr == 1 && (strcmp(preq.path, req.path) != 0 ||
		    preq.method != req.method))
			abort();
	}
	free(buf);
	return 0;
}
