/*
 * fuzz-copytext.c - libFuzzer target for the loader's COPY text rows
 * (loader/copytext.c) and the copy row each becomes (loader/wave.c).
 *
 * Input: one byte choosing how many fields the row must have (1 to 8) and
 * the types of the table's columns, then the row's bytes. A row that
 * splits must give exactly that many fields, each inside the row and no
 * longer than its raw bytes, with no NUL; the copy row built from them
 * must be one frame of a valid JSON object without LF. A row that does
 * not split must say why. A violation aborts.
 *
 *   make FUZZ=1 fuzz-bins && build-fuzz/fuzz/fuzz-copytext CORPUS
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "jscan.h"
#include "sbuf.h"
#include "../../loader/loader.h"

/* the types a column may have: mapped ones, arrays, one unmapped */
static const uint32_t types[] = { 23, 25, 1700, 17, 3802, 114, 1184, 1114,
	1007, 1009, 701, 16, 1001, 3807, 16385 };
#define NTYPES	(sizeof(types) / sizeof(types[0]))

static void
check(int cond)
{
	if (!cond)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "a", "b", "c", "d", "e", "f",
	    "g", "h" };
	struct ld_column cols[8] = { 0 };
	struct ld_key key = { "a", "\"a\"", "integer" };
	struct ld_table t = { .rel = "public.t", .cols = cols, .nkeys = 1,
	    .keys = &key };
	struct copy_field f[8];
	struct sbuf out = SBUF_INIT;
	struct msg_in j = { 0, 0 };
	char err[256], *row;
	const char *json;
	size_t len, jl, i;
	int nf, rc;

	if (size < 1)
		return 0;
	nf = 1 + data[0] % 8;
	for (i = 0; i < 8; i++) {
		cols[i].name = (char *)names[i];
		cols[i].typoid = types[(data[0] / 8 + i * 7) % NTYPES];
	}
	t.ncols = nf;
	len = size - 1;
	row = malloc(len + 1);
	memcpy(row, data + 1, len);
	err[0] = '\0';

	rc = copy_split(row, len, f, nf, err, sizeof(err));
	if (rc == -1) {
		check(err[0] != '\0');
		goto out;
	}
	check(rc == 0);
	for (i = 0; i < (size_t)nf; i++) {
		if (f[i].p == NULL)
			continue;
		check(f[i].p >= row && f[i].p + f[i].n <= row + len - 1);
		check(memchr(f[i].p, '\0', f[i].n) == NULL);
	}
	wave_row_frame(&out, &j, &t, 42, f, NULL);
	check(out.len > 0 && out.buf[out.len - 1] == '\n');
	json = memchr(out.buf, ' ', out.len);
	check(json != NULL);
	json++;
	jl = out.buf + out.len - 1 - json;
	check(strtoul(out.buf, NULL, 10) == jl + 1);
	check(memchr(json, '\n', jl) == NULL);
	check(jscan_validate(json, jl, NULL, NULL) == 0);
out:
	sbuf_release(&out);
	free(row);
	return 0;
}
