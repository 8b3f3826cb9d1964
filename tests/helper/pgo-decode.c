/*
 * pgo-decode - feed pgoutput messages from a file through capture-pg's
 * decoder and print the event frames it makes, for the golden tests at the
 * capture's boundary (tests/golden/capture-pg). The same code the capture
 * runs on a live walsender, without one.
 *
 *   pgo-decode < NAME.msgs > NAME.out
 *
 * Input, one item per line:
 *   key SCHEMA.TABLE COL...   the primary key the capture would read from
 *                             the catalogue (pgo_set_key)
 *   HEX                       one pgoutput message, as
 *                             pg_logical_slot_get_binary_changes returns it
 *   # ...                     a comment
 * A message the decoder refuses prints "error EXIT: MESSAGE" and ends the
 * run with that exit code, as the capture would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../capture-pg/capture-pg.h"
#include "frame.h"
#include "sbuf.h"
#include "xio.h"

static int
unhex(const char *s, size_t n, unsigned char *out)
{
	size_t i;
	int hi, lo;

	for (i = 0; i + 1 < n; i += 2) {
		hi = s[i] <= '9' ? s[i] - '0' : (s[i] | 0x20) - 'a' + 10;
		lo = s[i + 1] <= '9' ? s[i + 1] - '0' :
		    (s[i + 1] | 0x20) - 'a' + 10;
		if (hi < 0 || hi > 15 || lo < 0 || lo > 15)
			return -1;
		out[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	return n % 2 ? -1 : 0;
}

int
main(void)
{
	struct pgo_decoder d;
	struct sbuf out = SBUF_INIT;
	char *line = NULL, *cols[64], *p;
	unsigned char *msg;
	size_t cap = 0, n;
	ssize_t len;
	int lineno = 0, ncols;

	pgo_init(&d);
	while ((len = getline(&line, &cap, stdin)) != -1) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		if (strncmp(line, "key ", 4) == 0) {
			ncols = 0;
			strtok(line + 4, " ");
			while (ncols < 64 && (p = strtok(NULL, " ")) != NULL)
				cols[ncols++] = p;
			pgo_set_key(&d, line + 4, (const char *const *)cols,
			    ncols);
			continue;
		}
		n = (size_t)len / 2;
		msg = xmalloc(n ? n : 1);
		if (unhex(line, (size_t)len, msg) == -1) {
			fprintf(stderr, "line %d: not hex\n", lineno);
			free(msg);
			free(line);
			pgo_release(&d);
			return 2;
		}
		sbuf_reset(&out);
		if (pgo_decode(&d, msg, n, &out) == -1) {
			printf("error %d: %s\n", d.err.code, d.err.msg);
			free(msg);
			free(line);
			sbuf_release(&out);
			n = (size_t)d.err.code;
			pgo_release(&d);
			return (int)n;
		}
		fwrite(out.buf ? out.buf : "", 1, out.len, stdout);
		free(msg);
	}
	free(line);
	sbuf_release(&out);
	pgo_release(&d);
	return 0;
}
