/*
 * fuzz-myprogress.c - libFuzzer target for the MySQL loader's progress
 * object (loader/myprogress.c), which comes back from the checkpoint
 * store and could be anything: parsing never crashes, and whatever parses
 * is written out and read back to the same bytes (a resumed load starts
 * after exactly the key that was stored). Input: a JSON text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "sbuf.h"
#include "../../loader/loader.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct myprogress p, q;
	struct sbuf a = SBUF_INIT, b = SBUF_INIT;
	char err[256];

	if (jscan_validate((const char *)data, size, NULL, NULL) != 0)
		return 0;
	if (myprogress_parse((struct jspan){ (const char *)data, size }, &p,
	    err, sizeof(err)) == -1)
		return 0;
	myprogress_put(&a, &p);
	if (jscan_validate(a.buf, a.len, NULL, NULL) != 0)
		abort();
	if (myprogress_parse((struct jspan){ a.buf, a.len }, &q, err,
	    sizeof(err)) == -1)
		abort();
	myprogress_put(&b, &q);
	if (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)
		abort();
	myprogress_release(&p);
	myprogress_release(&q);
	sbuf_release(&a);
	sbuf_release(&b);
	return 0;
}
