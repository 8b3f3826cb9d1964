/*
 * t-target-seam.c - the seam with the search engine has one side: no
 * source file of a program or of lib outside the target modules
 * (lib/target/) spells a target API path or error type in a string
 * literal: _bulk, _mget, _search, _refresh, _doc, _settings,
 * _delete_by_query, or a name ending in _exception. Only string literals
 * are read (comments, character constants and identifiers are not), a
 * word must stand on its own (pg2osync_bulk_bytes_total is a metric, not
 * the _bulk endpoint), and adjacent literals are read as the one string
 * the compiler makes of them. Tests are not scanned: they play the node.
 *
 * Nor does any spell a request body of the target's: a member of an index
 * creation body (mappings, properties, relations) written as JSON inside
 * a literal ("{\"mappings\":..."); and the configuration (lib/config*),
 * which asks the target for an index's body and the rules of its name,
 * does not look such a member up by name either (a literal that is just
 * "mappings").
 *
 * It finds the tree from where it was compiled (make runs at the top);
 * a tree it cannot read, or one where it does not find the module's own
 * paths, fails rather than passes.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sbuf.h"
#include "tap.h"

static const char *const words[] = { "_bulk", "_mget", "_search",
	"_refresh", "_doc", "_settings", "_delete_by_query" };
/* members of an index creation body */
static const char *const members[] = { "mappings", "properties",
	"relations" };
#define NMEMBERS	(sizeof(members) / sizeof(members[0]))

static int
ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

/* the first target word in s (a literal's bytes, escapes as written), or
 * NULL */
static const char *
target_word(const char *s, size_t n)
{
	size_t i, k, w;

	for (i = 0; i < n; i++) {
		/* \"mappings\": a body member spelled as JSON */
		for (k = 0; s[i] == '\\' && k < NMEMBERS; k++) {
			w = strlen(members[k]);
			if (i + w + 4 <= n && s[i + 1] == '"' &&
			    memcmp(s + i + 2, members[k], w) == 0 &&
			    s[i + w + 2] == '\\' && s[i + w + 3] == '"')
				return members[k];
		}
		if (s[i] != '_')
			continue;
		for (k = 0; k < sizeof(words) / sizeof(words[0]); k++) {
			w = strlen(words[k]);
			if (i + w <= n && memcmp(s + i, words[k], w) == 0 &&
			    (i == 0 || !ident(s[i - 1]) || s[i - 1] == '_') &&
			    (i + w == n || !ident(s[i + w])))
				return words[k];
		}
		/* some_thing_exception */
		if (i + 10 <= n && memcmp(s + i, "_exception", 10) == 0 &&
		    (i + 10 == n || !ident(s[i + 10])))
			return "_exception";
	}
	return NULL;
}

/* a literal that is a body member's name, looked up by it */
static const char *
member_name(const char *s, size_t n)
{
	size_t k;

	for (k = 0; k < NMEMBERS; k++)
		if (n == strlen(members[k]) && memcmp(s, members[k], n) == 0)
			return members[k];
	return NULL;
}

/*
 * Every string literal of C source text, adjacent ones joined; for each
 * that holds a target word (or, with config, is a body member's name),
 * print where when verbose. Returns the number of such literals.
 */
static int
scan(const char *src, size_t n, const char *name, int verbose, int config)
{
	struct sbuf lit = SBUF_INIT;
	const char *w;
	size_t i = 0;
	int line = 1, lit_line = 0, open = 0, hits = 0;

	while (i <= n) {
		char c = i < n ? src[i] : '\0';

		if (i < n && c == '"') {
			if (!open) {
				sbuf_reset(&lit);
				lit_line = line;
				open = 1;
			}
			for (i++; i < n && src[i] != '"'; i++) {
				if (src[i] == '\\' && i + 1 < n)
					sbuf_addc(&lit, src[i++]);
				if (src[i] == '\n')
					line++;
				sbuf_addc(&lit, src[i]);
			}
			i++;
			continue;
		}
		if (i < n && (c == ' ' || c == '\t' || c == '\n' ||
		    c == '\r')) {
			if (c == '\n')
				line++;
			i++;
			continue;
		}
		if (i + 1 < n && c == '/' && src[i + 1] == '*') {
			for (i += 2; i + 1 < n && !(src[i] == '*' &&
			    src[i + 1] == '/'); i++)
				if (src[i] == '\n')
					line++;
			i += 2;
			continue;
		}
		if (i + 1 < n && c == '/' && src[i + 1] == '/') {
			while (i < n && src[i] != '\n')
				i++;
			continue;
		}
		/* anything else ends the literal being joined */
		if (open) {
			open = 0;
			if ((w = target_word(lit.buf, lit.len)) != NULL ||
			    (config && (w = member_name(lit.buf,
			    lit.len)) != NULL)) {
				hits++;
				if (verbose)
					printf("# %s:%d: \"%.*s\" spells %s\n",
					    name, lit_line,
					    lit.len > 100 ? 100 : (int)lit.len,
					    lit.buf, w);
			}
		}
		if (i < n && c == '\'') {
			for (i++; i < n && src[i] != '\''; i++)
				if (src[i] == '\\')
					i++;
		}
		i++;
	}
	sbuf_release(&lit);
	return hits;
}

static int
scan_str(const char *src)
{
	return scan(src, strlen(src), "self-test", 0, 0);
}

static int
scan_config(const char *src)
{
	return scan(src, strlen(src), "self-test", 0, 1);
}

static void
self_test(void)
{
	ok(scan_str("x = \"/_bulk?filter_path=errors\";") == 1, "a path");
	ok(scan_str("f(\"/\" INDEX \"/_doc/\");") == 1, "after a macro");
	ok(scan_str("\"resource_already_exists_exception\"") == 1,
	    "an error type");
	ok(scan_str("\"/_se\" /* joined */ \"arch\"") == 1,
	    "adjacent literals are one string");
	ok(scan_str("s = \"{\\\"_refresh\\\":1}\";") == 1,
	    "escaped quotes stay inside");
	ok(scan_str("c = '\"'; d = \"_mget\";") == 1,
	    "a quote in a character constant opens nothing");
	ok(scan_str("\"pg2osync_bulk_bytes_total\"") == 0, "a metric name");
	ok(scan_str("msg_op_doc(x); _settings = 1;") == 0, "identifiers");
	ok(scan_str("/* \"_bulk\" */ // \"_doc\"\n") == 0, "comments");
	ok(scan_str("\"_doc_count\" \"flat_settings\"") == 0,
	    "a longer word is another word");
	ok(scan_str("\"with _bulk requests\"") == 1, "a word in a sentence");
	ok(scan_str("b = \"{\\\"mappings\\\":{\\\"properties\\\":{\";") == 1,
	    "a creation body spelled as JSON");
	ok(scan_str("\":{\\\"type\\\":\\\"join\\\",\\\"relations\\\":{\"") == 1,
	    "a join's relations");
	ok(scan_str("\"a non-empty list of mappings\"") == 0,
	    "the word in a sentence is no body");
	ok(scan_str("k[] = { \"mappings\", \"settings\" };") == 0 &&
	    scan_config("k[] = { \"mappings\", \"settings\" };") == 1,
	    "a member looked up by name: only the configuration may not");
	ok(scan_config("\"mappings, settings\"") == 0,
	    "a longer literal is no member's name");
}

static int nfiles, saw_writer, saw_ckpt, saw_config, module_hits;

static void
scan_file(const char *path, int module)
{
	FILE *fp = fopen(path, "r");
	struct sbuf b = SBUF_INIT;
	char buf[8192];
	size_t r;
	int hits;

	if (fp == NULL) {
		ok(0, "%s: cannot read it", path);
		return;
	}
	while ((r = fread(buf, 1, sizeof(buf), fp)) > 0)
		sbuf_add(&b, buf, r);
	fclose(fp);
	hits = scan(b.buf ? b.buf : "", b.len, path, !module,
	    strstr(path, "/lib/config") != NULL);
	if (module)
		module_hits += hits;
	else {
		nfiles++;
		saw_writer |= strstr(path, "writer/sink.c") != NULL;
		saw_ckpt |= strstr(path, "ckpt/store.c") != NULL;
		saw_config |= strstr(path, "lib/config_sync.c") != NULL;
		ok(hits == 0, "%s spells no target path, error type or body",
		    path);
	}
	sbuf_release(&b);
}

static int
is_source(const char *name)
{
	size_t n = strlen(name);

	return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' ||
	    name[n - 1] == 'h');
}

static void
walk(const char *dir, int top)
{
	struct dirent **ents;
	struct stat sb;
	char path[4096];
	int i, n, module;

	if ((n = scandir(dir, &ents, NULL, alphasort)) < 0) {
		if (top)
			BAIL_OUT("cannot read the source tree");
		return;
	}
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (name[0] == '.' || stat(path, &sb) == -1)
			goto next;
		/* tests play the node; build output is not source */
		if (top && (strcmp(name, "tests") == 0 ||
		    strncmp(name, "build", 5) == 0))
			goto next;
		if (S_ISDIR(sb.st_mode))
			walk(path, 0);
		else if (S_ISREG(sb.st_mode) && is_source(name)) {
			module = strstr(path, "/lib/target/") != NULL;
			scan_file(path, module);
		}
next:
		free(ents[i]);
	}
	free(ents);
}

int
main(void)
{
	char root[4096];
	const char *me = __FILE__, *tail = "tests/unit/t-target-seam.c";
	size_t n = strlen(me), t = strlen(tail);

	self_test();
	if (n < t || strcmp(me + n - t, tail) != 0)
		BAIL_OUT("cannot tell where the source tree is");
	snprintf(root, sizeof(root), "%.*s", n == t ? 1 : (int)(n - t - 1),
	    n == t ? "." : me);
	walk(root, 1);
	ok(saw_writer && saw_ckpt && saw_config && nfiles > 50,
	    "the writer's, ckpt's and the configuration's files were among "
	    "the %d scanned", nfiles);
	ok(module_hits > 10, "the target module's own %d paths and bodies "
	    "are found", module_hits);
	return done_testing();
}
