/*
 * fuzz-bulkresp.c - libFuzzer target for what the writer reads from the
 * target: the _bulk response classifier, the error text extractor, the
 * delete_by_query check and the _mget reader with the TOAST splice. The
 * first two bytes pick the HTTP status and the number of entries sent; the
 * rest is the response body. Every verdict must be one of the enum's, the
 * texts NUL-terminated, and a spliced document must still be valid JSON.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I lib \
 *       tests/fuzz/fuzz-bulkresp.c writer/response.c writer/toast.c \
 *       writer/batch.c writer/bulk.c lib/jscan.c lib/sbuf.c lib/frame.c \
 *       lib/xio.c -ljansson -o build/fuzz-bulkresp
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
#include "../../writer/writer.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

static const long statuses[] = { 200, 201, 400, 401, 403, 404, 409, 413,
	429, 500, 502, 503, 0, 302 };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct item_result items[64];
	struct jspan found[64], doc, fields;
	struct sbuf out = SBUF_INIT;
	char why[256], text[128];
	enum resp_verdict v;
	const char *body;
	size_t len, off;
	const char *jwhy;
	long status;
	int nsent, i, r;

	if (size < 2)
		return 0;
	status = statuses[data[0] % (sizeof(statuses) / sizeof(statuses[0]))];
	nsent = data[1] % 65;
	body = (const char *)data + 2;
	len = size - 2;

	memset(why, 'x', sizeof(why));
	v = bulkresp_classify(status, body, len, nsent, items, why,
	    sizeof(why));
	check(v == RESP_ITEMS || v == RESP_RETRY || v == RESP_AUTH ||
	    v == RESP_REJECT);
	check(memchr(why, '\0', sizeof(why)) != NULL);
	if (v == RESP_ITEMS) {
		check(status >= 200 && status < 300);
		for (i = 0; i < nsent; i++) {
			check(items[i].verdict >= ITEM_OK &&
			    items[i].verdict <= ITEM_REJECT);
			check(memchr(items[i].action, '\0',
			    sizeof(items[i].action)) != NULL);
			check(memchr(items[i].type, '\0',
			    sizeof(items[i].type)) != NULL);
			check(memchr(items[i].reason, '\0',
			    sizeof(items[i].reason)) != NULL);
			if (items[i].status >= 200 && items[i].status < 300)
				check(items[i].verdict == ITEM_OK);
		}
	}
	resp_error_text(body, len, text, sizeof(text));
	check(strlen(text) < sizeof(text));
	(void)dbq_complete(body, len);

	/* the _mget reader, and each found source spliced into a document */
	if (toast_mget_parse(body, len, nsent, found) == 0) {
		doc.p = "{\"id\":1}";
		doc.n = strlen(doc.p);
		fields.p = "[\"body\",\"tags\",\"id\"]";
		fields.n = strlen(fields.p);
		for (i = 0; i < nsent; i++) {
			sbuf_reset(&out);
			r = toast_complete(&out, doc, fields, found[i]);
			check(r >= -1 && r <= 2);
			if (r >= 0)
				check(jscan_validate(out.buf, out.len, &off,
				    &jwhy) == 0);
		}
	}
	sbuf_release(&out);
	return 0;
}
