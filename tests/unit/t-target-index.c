/*
 * t-target-index.c - what the OpenSearch module answers the configuration
 * through its table: which index names it takes (a whole name, the
 * literal text a template starts with, the literal text after a
 * placeholder), and the body a section's index is created with: a mapping
 * file kept or wrapped, refused when it is two kinds of body or maps a
 * name the documents do not carry, and the mapping a join parent needs.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "p2o.h"
#include "tap.h"
#include "target.h"

static const struct target_ops *ops;

static int
name_ok(const char *s, enum target_name_part part, char *why, size_t len)
{
	why[0] = '\0';
	return ops->index_name(s, part, why, len) == 0;
}

static void
test_names(void)
{
	char why[256], long_name[300];

	ok(name_ok("items", TNAME_WHOLE, why, sizeof(why)), "a plain name");
	ok(name_ok("events-2024.01+x", TNAME_WHOLE, why, sizeof(why)),
	    "digits, '-', '.', '+' inside");
	ok(name_ok(".hidden", TNAME_WHOLE, why, sizeof(why)),
	    "a whole name may start with '.'");
	ok(!name_ok("Items", TNAME_WHOLE, why, sizeof(why)) &&
	    strcmp(why, "must be lowercase") == 0, "capitals: %s", why);
	ok(!name_ok("it*ms", TNAME_WHOLE, why, sizeof(why)) &&
	    strcmp(why, "must not contain '*'") == 0, "a '*': %s", why);
	ok(!name_ok("a\tb", TNAME_WHOLE, why, sizeof(why)) &&
	    strcmp(why, "must not contain control characters") == 0,
	    "a control character: %s", why);
	ok(!name_ok("_items", TNAME_WHOLE, why, sizeof(why)) &&
	    strcmp(why, "must not start with '_'") == 0, "a leading '_'");
	ok(!name_ok("", TNAME_WHOLE, why, sizeof(why)) &&
	    strcmp(why, "must not be empty") == 0, "empty");
	ok(!name_ok("..", TNAME_WHOLE, why, sizeof(why)), "'..'");
	memset(long_name, 'a', 256);
	long_name[256] = '\0';
	ok(!name_ok(long_name, TNAME_WHOLE, why, sizeof(why)) &&
	    strcmp(why, "must be at most 255 bytes long") == 0,
	    "256 bytes: %s", why);
	long_name[255] = '\0';
	ok(name_ok(long_name, TNAME_WHOLE, why, sizeof(why)), "255 bytes");

	ok(!name_ok(".ev-", TNAME_HEAD, why, sizeof(why)) &&
	    strcmp(why, "must not start with '.'") == 0,
	    "a template's head must not start with '.': its glob would "
	    "claim hidden indices");
	ok(!name_ok("-ev", TNAME_HEAD, why, sizeof(why)),
	    "nor with '-'");
	ok(name_ok("-x", TNAME_INSIDE, why, sizeof(why)),
	    "literal text after a placeholder may start with '-'");
	ok(!name_ok("-X", TNAME_INSIDE, why, sizeof(why)) &&
	    strcmp(why, "must be lowercase") == 0,
	    "but holds no capitals either");
	ok(name_ok("", TNAME_INSIDE, why, sizeof(why)),
	    "no length rule for a part: the rendered name is checked whole");
}

/* index_body of s on a mapping file's text (NULL: none) */
static int
body_of(const struct sync_section *s, const char *mapping, char **body,
    char *why, size_t len)
{
	why[0] = '\0';
	return ops->index_body(s, mapping, mapping ? strlen(mapping) : 0, body,
	    why, len);
}

static void
test_bodies(void)
{
	struct sync_section s, child;
	struct sync_pair renames[2] = {
		{ .name = "email", .value = "mail" },
		{ .name = "nick", .value = "nick2" },
	};
	char *children[] = { "answer", "comment" };
	/* what a section sets beyond its table and index */
	struct sync_more sm, cm;
	char why[512], *body = NULL;

	memset(&s, 0, sizeof(s));
	ok(body_of(&s, NULL, &body, why, sizeof(why)) == 0 && body == NULL,
	    "no mapping file, no join: the target's defaults");
	ok(body_of(&s, "{\"properties\":{\"a\":{\"type\":\"keyword\"}}}",
	    &body, why, sizeof(why)) == 0, "a bare mapping: %s", why);
	is_str(body, "{\"mappings\":{\"properties\":{\"a\":{\"type\":"
	    "\"keyword\"}}}}", "is wrapped as a creation body");
	free(body);
	body = NULL;
	ok(body_of(&s, " {\"settings\":{\"number_of_shards\":1},"
	    "\"mappings\":{}}\n", &body, why, sizeof(why)) == 0 &&
	    body && strcmp(body, "{\"settings\":{\"number_of_shards\":1},"
	    "\"mappings\":{}}") == 0, "a creation body is kept as written, "
	    "white space around it trimmed");
	free(body);
	body = NULL;
	ok(body_of(&s, "{\"mappings\":{},\"properties\":{}}", &body, why,
	    sizeof(why)) == -1 && body == NULL && strcmp(why, "must be an "
	    "index creation body (mappings, settings, aliases) or a bare "
	    "mapping, not both") == 0, "two kinds of body: %s", why);
	ok(body_of(&s, "[1]", &body, why, sizeof(why)) == -1 &&
	    strcmp(why, "must hold a JSON object") == 0, "not an object");

	memset(&sm, 0, sizeof(sm));
	s.more = &sm;
	s.more->fields = renames;
	s.more->nfields = 2;
	ok(body_of(&s, "{\"properties\":{\"email\":{\"type\":\"keyword\"}}}",
	    &body, why, sizeof(why)) == -1 && strcmp(why, "maps field "
	    "'email', which 'fields' renames to 'mail': the mapping must use "
	    "the names the documents carry") == 0,
	    "a field renamed away is mapped: %s", why);
	ok(body_of(&s, "{\"properties\":{\"mail\":{\"type\":\"keyword\"}}}",
	    &body, why, sizeof(why)) == 0, "its new name is: %s", why);
	free(body);
	body = NULL;
	renames[1].value = "email";
	ok(body_of(&s, "{\"properties\":{\"email\":{\"type\":\"keyword\"}}}",
	    &body, why, sizeof(why)) == 0,
	    "a name another rename lands on is mapped: %s", why);
	free(body);
	body = NULL;
	s.more->fields = NULL;
	s.more->nfields = 0;

	s.has_join = 1;
	s.more->join.field = "qa";
	s.more->join.name = "question";
	ok(body_of(&s, "{\"properties\":{\"qa\":{\"type\":\"keyword\"}}}",
	    &body, why, sizeof(why)) == -1 && strstr(why, "must map the join "
	    "field 'qa' as type join") != NULL, "a join field mapped as "
	    "something else: %s", why);
	ok(body_of(&s, "{\"properties\":{\"qa\":{\"type\":\"join\"}}}", &body,
	    why, sizeof(why)) == 0, "mapped as a join: %s", why);
	free(body);
	body = NULL;
	s.more->join.children = children;
	s.more->join.nchildren = 2;
	ok(body_of(&s, NULL, &body, why, sizeof(why)) == 0 && body != NULL,
	    "a join parent without a mapping file");
	is_str(body, "{\"mappings\":{\"properties\":{\"qa\":{\"type\":\"join\","
	    "\"relations\":{\"question\":[\"answer\",\"comment\"]}}}}}",
	    "gets the join mapping of its relations");
	free(body);
	body = NULL;

	memset(&child, 0, sizeof(child));
	memset(&cm, 0, sizeof(cm));
	child.more = &cm;
	child.has_join = 1;
	child.more->join.field = "qa";
	child.more->join.name = "answer";
	child.more->join.parent = "questions";
	ok(body_of(&child, NULL, &body, why, sizeof(why)) == 0 && body == NULL,
	    "a child without a file: its parent's section gives the body");
}

int
main(void)
{
	const struct target_module *m = target_module_find(NULL);

	if (m == NULL || m->ops->index_name == NULL ||
	    m->ops->index_body == NULL)
		BAIL_OUT("the default target answers no configuration "
		    "question");
	ops = m->ops;
	test_names();
	test_bodies();
	return done_testing();
}
