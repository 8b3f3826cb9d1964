/*
 * config_value.c - a value the configuration copies into documents as
 * it is written (a constant, a lookup's label): a number, a boolean or a
 * string, as JSON. Quoted, it is a string. Unquoted, true and false are
 * booleans and a JSON number is a number; every other unquoted word YAML
 * itself would read as a boolean or a number (yes, off, 0x1F, 012, 1_000,
 * .5, +1, 10:30, .inf) is refused, since YAML 1.1 and 1.2 read some of
 * them differently and a document field must not depend on which reader
 * the operator had in mind. Anything else unquoted is a string.
 *
 * Pure; quotes no value it refuses (a value is not a secret here, but a
 * message names the key and the rule).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "config_sections.h"
#include "jscan.h"
#include "sbuf.h"

static int
is_json_number(const char *s)
{
	struct jspan v = { s, strlen(s) };
	const char *why;
	size_t off;

	return v.n > 0 && jscan_validate(v.p, v.n, &off, &why) == 0 &&
	    jspan_type(v) == J_NUMBER && !isspace((unsigned char)s[0]) &&
	    !isspace((unsigned char)s[v.n - 1]);
}

/* YAML 1.1's booleans other than true and false, and 1.2's */
static int
yaml_bool(const char *s)
{
	static const char *const words[] = { "y", "Y", "yes", "Yes", "YES",
	    "n", "N", "no", "No", "NO", "True", "TRUE", "False", "FALSE", "on",
	    "On", "ON", "off", "Off", "OFF", NULL };
	int i;

	for (i = 0; words[i]; i++)
		if (strcmp(s, words[i]) == 0)
			return 1;
	return 0;
}

/* a run of digits (and '_' if under) of at least one digit; *s past it */
static int
digit_run(const char **s, const char *set, int under)
{
	int n = 0;

	while (**s && (strchr(set, **s) || (under && **s == '_'))) {
		n += **s != '_';
		(*s)++;
	}
	return n;
}

/* does YAML 1.1 or 1.2 read s as a number? (ints in any base, with '_',
 * sexagesimal, floats with or without digits around the point, inf, nan) */
static int
yaml_number(const char *s)
{
	static const char dec[] = "0123456789";
	const char *p = s;

	if (*p == '+' || *p == '-')
		p++;
	if (strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 ||
	    strcmp(p, ".INF") == 0 || strcmp(s, ".nan") == 0 ||
	    strcmp(s, ".NaN") == 0 || strcmp(s, ".NAN") == 0)
		return 1;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'o' || p[1] == 'b')) {
		const char *set = p[1] == 'x' ? "0123456789abcdefABCDEF" :
		    p[1] == 'o' ? "01234567" : "01";

		p += 2;
		return digit_run(&p, set, 1) > 0 && *p == '\0';
	}
	/* digits, then any of :digits (sexagesimal), .digits, exponent */
	if (digit_run(&p, dec, 1) == 0) {
		if (*p != '.')
			return 0;
		p++;
		if (digit_run(&p, dec, 1) == 0)
			return 0;
	} else {
		while (*p == ':') {
			p++;
			if (digit_run(&p, dec, 0) == 0)
				return 0;
		}
		if (*p == '.') {
			p++;
			digit_run(&p, dec, 1);
		}
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (digit_run(&p, dec, 0) == 0)
			return 0;
	}
	return *p == '\0';
}

int
config_value_json(const char *text, int plain, struct sbuf *json,
    int *literal, char *why, size_t len)
{
	*literal = 0;
	if (plain && (strcmp(text, "true") == 0 ||
	    strcmp(text, "false") == 0 || is_json_number(text))) {
		sbuf_adds(json, text);
		*literal = 1;
		return 0;
	}
	if (plain && yaml_bool(text)) {
		snprintf(why, len, "is a word YAML reads as a boolean: write "
		    "true or false for one, or quote it for a string");
		return -1;
	}
	if (plain && yaml_number(text)) {
		snprintf(why, len, "is a number YAML readers disagree on: write "
		    "it as JSON writes a number (12, -1.5, 2e3), or quote it for "
		    "a string");
		return -1;
	}
	sbuf_add_jstr(json, text, strlen(text));
	return 0;
}
