/*
 * t-cli-mapping - init --mappings: the field each column type becomes, for
 * PostgreSQL (format_type() text and the type oid) and MySQL
 * (information_schema DATA_TYPE and COLUMN_TYPE), with each choice.
 */
#include <string.h>

#include "../../cli/cli.h"
#include "tap.h"

static const char *
pg(const char *type, uint32_t oid, int scaled, int flat, char *note)
{
	static struct sbuf out;
	struct mapping_opts o = { scaled, flat };

	sbuf_reset(&out);
	mapping_pg(type, oid, &o, &out, note, 256);
	return out.buf;
}

static const char *
my(const char *dt, const char *ct, int json, int scaled, int flat, char *note)
{
	static struct sbuf out;
	struct mapping_opts o = { scaled, flat };

	sbuf_reset(&out);
	mapping_my(dt, ct, json, &o, &out, note, 256);
	return out.buf;
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
	return done_testing();
}
