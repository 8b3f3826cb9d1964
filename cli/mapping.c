/*
 * mapping.c - the index field a column becomes, for init --mappings: the
 * kind of field the column's values need (the target names its type), so
 * that the first document does not decide it by guess. A dynamic mapping guesses `long` for a number and
 * then refuses 18446744073709551615, and guesses `text` for "12.50",
 * so that a range query on money compares words. Pure: no I/O.
 *
 * The values arrive in their document form (capture-pg/README.md and
 * capture-mysql/README.md "Type mapping"): numeric and decimal as strings
 * with every digit, timestamps as ISO 8601 with the column's fraction,
 * binary data as base64, JSON as JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "target.h"

/* the numbers in "(p)" or "(p,s)" of a type's text: how many were found */
static int
typmods(const char *type, int *a, int *b)
{
	const char *p = strchr(type, '(');

	if (p == NULL)
		return 0;
	return sscanf(p, "(%d,%d)", a, b);
}

/* scaled_float keeps value * factor in a long: 18 digits at most */
static void
decimal(int prec, int scale, int known, const struct mapping_opts *o,
    struct target_field *out, char *note, size_t notelen)
{
	long long factor = 1;
	int i;

	if (!o->decimal_scaled) {
		/* the digits as written: exact, sortable as text only */
		out->kind = TF_KEYWORD;
		return;
	}
	if (!known || prec > 18) {
		snprintf(note, notelen, "kept as keyword: %s does not fit a "
		    "scaled_float (value x 10^scale must fit 64 bits)",
		    known ? "its precision" : "an unconstrained numeric");
		out->kind = TF_KEYWORD;
		return;
	}
	for (i = 0; i < scale; i++)
		factor *= 10;
	out->kind = TF_SCALED;
	out->factor = factor;
}

/* a timestamp's fraction digits decide between milliseconds and
 * nanoseconds: date keeps three */
static enum target_field_kind
timestamp(int fsp)
{
	return fsp > 3 ? TF_DATE_NANOS : TF_DATE;
}

static enum target_field_kind
json(const struct mapping_opts *o)
{
	return o->json_flat ? TF_FLAT : TF_OBJECT;
}

/* an array type's element (pg_type.typelem of the arrays capture-pg maps) */
static uint32_t
pg_element(uint32_t oid)
{
	static const uint32_t arr[][2] = {
		{ 1000, 16 }, { 1005, 21 }, { 1007, 23 }, { 1016, 20 },
		{ 1028, 26 }, { 1009, 25 }, { 1015, 1043 }, { 1014, 1042 },
		{ 1021, 700 }, { 1022, 701 }, { 1231, 1700 }, { 1115, 1114 },
		{ 1185, 1184 }, { 1182, 1082 }, { 2951, 2950 }, { 199, 114 },
		{ 3807, 3802 }, { 1001, 17 },
	};
	size_t i;

	for (i = 0; i < sizeof(arr) / sizeof(arr[0]); i++)
		if (arr[i][0] == oid)
			return arr[i][1];
	return oid;
}

void
mapping_pg(const char *type, uint32_t typoid, const struct mapping_opts *o,
    struct target_field *out, char *note, size_t notelen)
{
	int a = 0, b = 0, n = typmods(type, &a, &b);

	note[0] = '\0';
	out->factor = 0;
	/* an array is its elements: one field of the element's kind */
	switch (pg_element(typoid)) {
	case 16:
		out->kind = TF_BOOLEAN;
		return;
	case 21:
		out->kind = TF_SHORT;
		return;
	case 23:
		out->kind = TF_INTEGER;
		return;
	case 20: case 26:
		out->kind = TF_LONG;
		return;
	case 700:
		out->kind = TF_FLOAT;
		return;
	case 701:
		out->kind = TF_DOUBLE;
		return;
	case 1700:
		decimal(a, n == 2 ? b : 0, n >= 1, o, out, note, notelen);
		return;
	case 25: case 1043: case 1042: case 19:
		out->kind = TF_TEXT;
		return;
	case 2950:
		out->kind = TF_KEYWORD;
		return;
	case 1082:
		out->kind = TF_DATE;
		return;
	case 1114: case 1184:
		/* without a typmod a timestamp keeps microseconds */
		out->kind = timestamp(n >= 1 ? a : 6);
		return;
	case 114: case 3802:
		out->kind = json(o);
		return;
	case 17:
		out->kind = TF_BINARY;
		return;
	default:
		/* times, intervals, enums, ranges, network types: the text
		 * as printed, searched whole */
		out->kind = TF_KEYWORD;
	}
}

void
mapping_my(const char *data_type, const char *column_type, int is_json,
    const struct mapping_opts *o, struct target_field *out, char *note,
    size_t notelen)
{
	int a = 0, b = 0, n = typmods(column_type, &a, &b);
	int uns = strstr(column_type, "unsigned") != NULL;
	const char *t = data_type;

	note[0] = '\0';
	out->factor = 0;
	if (is_json || strcasecmp(t, "json") == 0)
		out->kind = json(o);
	else if (strcasecmp(t, "tinyint") == 0)
		out->kind = uns ? TF_SHORT : TF_BYTE;
	else if (strcasecmp(t, "smallint") == 0)
		out->kind = uns ? TF_INTEGER : TF_SHORT;
	else if (strcasecmp(t, "mediumint") == 0)
		out->kind = TF_INTEGER;
	else if (strcasecmp(t, "int") == 0 || strcasecmp(t, "integer") == 0)
		out->kind = uns ? TF_LONG : TF_INTEGER;
	else if (strcasecmp(t, "bigint") == 0)
		/* up to 18446744073709551615, which long refuses */
		out->kind = uns ? TF_UNSIGNED_LONG : TF_LONG;
	else if (strcasecmp(t, "decimal") == 0 || strcasecmp(t, "numeric") == 0)
		decimal(a, n == 2 ? b : 0, n >= 1, o, out, note, notelen);
	else if (strcasecmp(t, "float") == 0)
		out->kind = TF_FLOAT;
	else if (strcasecmp(t, "double") == 0 || strcasecmp(t, "real") == 0)
		out->kind = TF_DOUBLE;
	else if (strcasecmp(t, "bit") == 0)
		out->kind = n >= 1 && a > 63 ? TF_UNSIGNED_LONG : TF_LONG;
	else if (strcasecmp(t, "year") == 0)
		out->kind = TF_SHORT;
	else if (strcasecmp(t, "date") == 0)
		out->kind = TF_DATE;
	else if (strcasecmp(t, "datetime") == 0 ||
	    strcasecmp(t, "timestamp") == 0)
		out->kind = timestamp(n >= 1 ? a : 0);
	else if (strcasecmp(t, "char") == 0 || strcasecmp(t, "varchar") == 0 ||
	    strcasecmp(t, "tinytext") == 0 || strcasecmp(t, "text") == 0 ||
	    strcasecmp(t, "mediumtext") == 0 || strcasecmp(t, "longtext") == 0)
		out->kind = TF_TEXT;
	else if (strcasecmp(t, "binary") == 0 ||
	    strcasecmp(t, "varbinary") == 0 || strcasestr(t, "blob") != NULL ||
	    strcasecmp(t, "geometry") == 0 || strcasecmp(t, "point") == 0 ||
	    strcasecmp(t, "linestring") == 0 || strcasecmp(t, "polygon") == 0)
		out->kind = TF_BINARY;
	else
		/* enum, set, time and whatever comes later: whole values */
		out->kind = TF_KEYWORD;
}
