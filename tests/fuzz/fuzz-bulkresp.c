/*
 * fuzz-bulkresp.c - libFuzzer target for what the writer reads from the
 * target through the OpenSearch module's table: the bulk answer, the error
 * text, the answers of index creation and of the probe, every step of a
 * clear's and a cascade's procedure, and the _mget reader with the TOAST
 * splice. The first two bytes pick the HTTP status and the number of
 * entries sent; the rest is the response body. Every verdict must be one
 * of the enum's, the texts NUL-terminated, and a spliced document must
 * still be valid JSON.  `make FUZZ=1 fuzz-bins` builds it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
#include "target.h"
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
	const struct target_ops *ops = target_module_find(NULL)->ops;
	struct item_result items[64];
	struct jspan found[64], doc, fields;
	struct sbuf out = SBUF_INIT, resp = SBUF_INIT;
	/* one procedure reset for every barrier, as the writer keeps it:
	 * a fresh one per input spent most of the run zeroing the page of
	 * results it allocates on first use */
	static struct target_proc proc;
	static int proc_ready;
	struct http_call call;
	char why[256], text[128], node[64];
	enum target_answer v;
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
	v = ops->bulk_answer(status, body, len, nsent, items, why,
	    sizeof(why));
	check(v == TA_OK || v == TA_RETRY || v == TA_AUTH || v == TA_REFUSED);
	check(memchr(why, '\0', sizeof(why)) != NULL);
	if (v == TA_OK) {
		check(status >= 200 && status < 300);
		for (i = 0; i < nsent; i++) {
			check(items[i].verdict >= ITEM_OK &&
			    items[i].verdict <= ITEM_REJECT);
			check(memchr(items[i].type, '\0',
			    sizeof(items[i].type)) != NULL);
			check(memchr(items[i].reason, '\0',
			    sizeof(items[i].reason)) != NULL);
			if (items[i].status >= 200 && items[i].status < 300)
				check(items[i].verdict == ITEM_OK);
		}
	}
	ops->error_text(body, len, text, sizeof(text));
	check(strlen(text) < sizeof(text));
	sbuf_add(&resp, body, len);
	v = ops->create_answer(status, &resp, why, sizeof(why));
	check(v >= TA_OK && v <= TA_AUTH && v != TA_NEXT);
	v = ops->probe_answer(status, &resp, node, sizeof(node), why,
	    sizeof(why));
	/* TA_REFUSED: a node of another engine or major version */
	check(v == TA_OK || v == TA_RETRY || v == TA_AUTH || v == TA_REFUSED);
	check(memchr(node, '\0', sizeof(node)) != NULL);
	check(memchr(why, '\0', sizeof(why)) != NULL);

	/* every step of both procedures answered with the body */
	if (!proc_ready) {
		target_proc_init(&proc);
		proc_ready = 1;
	}
	for (i = 0; i < 12; i++) {
		target_proc_reset(&proc);
		proc.kind = i < 2 ? PROC_CLEAR : PROC_CASCADE;
		proc.index = "i";
		proc.parent = "p";
		proc.parent_id.p = "\"p\"";
		proc.parent_id.n = 3;
		proc.children.p = "[\"c\"]";
		proc.children.n = 5;
		proc.step = i < 2 ? i : (i - 2) % 6;
		ops->proc_call(&proc, &call);
		v = ops->proc_answer(&proc, status, &resp, why, sizeof(why));
		check(v >= TA_OK && v <= TA_AUTH);
		check(memchr(why, '\0', sizeof(why)) != NULL);
		check(proc.page_done <= proc.npage);
		if (v == TA_NEXT)
			ops->proc_call(&proc, &call);
	}

	/* the _mget reader, and each found source spliced into a document */
	if (ops->read_answer(status, &resp, nsent, found, why,
	    sizeof(why)) == TA_OK) {
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
	sbuf_release(&resp);
	return 0;
}
