/*
 * t-cli-mapping - init --mappings: the field each column type becomes, for
 * PostgreSQL (format_type() text and the type oid) and MySQL
 * (information_schema DATA_TYPE and COLUMN_TYPE), with each choice.
 */
#include <string.h>

#include "mysql/mylist.h"
#include "pg/pglist.h"
#include "tap.h"
#include "target.h"

/* the field of one column named "f" as OpenSearch's mapping file spells
 * it: what lies between "f": and the file's closing braces */
static const char *
field(const struct target_field *f)
{
	static struct sbuf out;
	static const char head[] = "{\"mappings\":{\"properties\":{\"f\":";
	static const char tail[] = "}}}\n";

	sbuf_reset(&out);
	target_module_find(NULL)->ops->mapping_file(f, 1, &out);
	if (out.len < sizeof(head) + sizeof(tail) - 2 ||
	    strncmp(out.buf, head, sizeof(head) - 1) != 0 ||
	    strcmp(out.buf + out.len - (sizeof(tail) - 1), tail) != 0)
		return out.buf;	/* not a mapping file: the test shows it */
	out.buf[out.len - (sizeof(tail) - 1)] = '\0';
	return out.buf + sizeof(head) - 1;
}

static const char *
pg(const char *type, uint32_t oid, int scaled, int flat, char *note)
{
	struct mapping_opts o = { scaled, flat };
	struct target_field f = { "f", TF_KEYWORD, 0 };

	pglist_field(type, oid, &o, &f, note, 256);
	return field(&f);
}

static const char *
my(const char *dt, const char *ct, int json, int scaled, int flat, char *note)
{
	struct mapping_opts o = { scaled, flat };
	struct target_field f = { "f", TF_KEYWORD, 0 };

	mylist_field(dt, ct, json, &o, &f, note, 256);
	return field(&f);
}

int
main(void)
{
	char note[256];

	is_str(my("bigint", "bigint(20) unsigned", 0, 0, 0, note),
	    "{\"type\":\"unsigned_long\"}", "bigint unsigned: unsigned_long");
	is_str(my("bigint", "bigint(20)", 0, 0, 0, note), "{\"type\":\"long\"}",
	    "bigint: long");
	is_str(my("int", "int(10) unsigned", 0, 0, 0, note),
	    "{\"type\":\"long\"}", "int unsigned outgrows integer: long");
	is_str(my("decimal", "decimal(12,2)", 0, 0, 0, note),
	    "{\"type\":\"keyword\"}", "decimal: an exact keyword by default");
	is_str(my("decimal", "decimal(12,2)", 0, 1, 0, note),
	    "{\"type\":\"scaled_float\",\"scaling_factor\":100}",
	    "decimal(12,2) as scaled_float: factor 100");
	is_str(my("decimal", "decimal(30,4)", 0, 1, 0, note),
	    "{\"type\":\"keyword\"}", "decimal(30,4) cannot be a scaled_float");
	ok(strstr(note, "does not fit a scaled_float") != NULL, "... and says so");
	is_str(my("datetime", "datetime(6)", 0, 0, 0, note),
	    "{\"type\":\"date_nanos\"}", "datetime(6): date_nanos");
	is_str(my("datetime", "datetime(3)", 0, 0, 0, note),
	    "{\"type\":\"date\"}", "datetime(3): date keeps milliseconds");
	is_str(my("timestamp", "timestamp", 0, 0, 0, note),
	    "{\"type\":\"date\"}", "timestamp without a fraction: date");
	is_str(my("json", "json", 0, 0, 0, note), "{\"type\":\"object\"}",
	    "json: object");
	is_str(my("longtext", "longtext", 1, 0, 1, note),
	    "{\"type\":\"flat_object\"}", "MariaDB's JSON longtext, flat");
	ok(strstr(my("varchar", "varchar(40)", 0, 0, 0, note),
	    "\"keyword\":{\"type\":\"keyword\"") != NULL,
	    "varchar: text with a keyword sub-field");
	is_str(my("blob", "blob", 0, 0, 0, note), "{\"type\":\"binary\"}",
	    "blob: binary (base64)");
	is_str(my("enum", "enum('a','b')", 0, 0, 0, note),
	    "{\"type\":\"keyword\"}", "enum: keyword");
	is_str(my("bit", "bit(64)", 0, 0, 0, note),
	    "{\"type\":\"unsigned_long\"}", "bit(64): unsigned_long");

	is_str(pg("bigint", 20, 0, 0, note), "{\"type\":\"long\"}", "int8: long");
	is_str(pg("numeric(20,0)", 1700, 0, 0, note), "{\"type\":\"keyword\"}",
	    "numeric: keyword");
	is_str(pg("numeric(10,3)", 1700, 1, 0, note),
	    "{\"type\":\"scaled_float\",\"scaling_factor\":1000}",
	    "numeric(10,3) as scaled_float: factor 1000");
	is_str(pg("numeric", 1700, 1, 0, note), "{\"type\":\"keyword\"}",
	    "an unconstrained numeric stays keyword");
	is_str(pg("timestamp without time zone", 1114, 0, 0, note),
	    "{\"type\":\"date_nanos\"}", "timestamp keeps microseconds");
	is_str(pg("timestamp(3) with time zone", 1184, 0, 0, note),
	    "{\"type\":\"date\"}", "timestamptz(3): date");
	is_str(pg("jsonb", 3802, 0, 1, note), "{\"type\":\"flat_object\"}",
	    "jsonb, flat");
	is_str(pg("integer[]", 1007, 0, 0, note), "{\"type\":\"integer\"}",
	    "an array is its elements");
	is_str(pg("bytea", 17, 0, 0, note), "{\"type\":\"binary\"}",
	    "bytea: binary");
	is_str(pg("interval", 1186, 0, 0, note), "{\"type\":\"keyword\"}",
	    "interval: keyword");
	{
		/* a whole file: each column once, in order, names escaped */
		struct target_field two[] = { { "id", TF_UNSIGNED_LONG, 0 },
		    { "a\"b", TF_SCALED, 100 } };
		struct sbuf out = SBUF_INIT;

		target_module_find(NULL)->ops->mapping_file(two, 2, &out);
		is_str(out.buf, "{\"mappings\":{\"properties\":{\"id\":"
		    "{\"type\":\"unsigned_long\"},\"a\\\"b\":{\"type\":"
		    "\"scaled_float\",\"scaling_factor\":100}}}}\n",
		    "two columns: one mapping file, the name escaped");
		sbuf_release(&out);
	}
	return done_testing();
}
