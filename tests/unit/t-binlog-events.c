/*
 * t-binlog-events.c - capture-mysql's event decoders on the event bodies
 * of tests/fixtures/mysql/go-mysql: table maps with every kind of
 * optional metadata (names, signedness, charsets, enum/set labels,
 * primary keys with and without prefixes, visibility, geometry), GTID
 * events of MySQL 8 and MariaDB, GTID lists, tagged PREVIOUS_GTIDS, rows
 * v2 extra data, a zstd TRANSACTION_PAYLOAD, JSON columns in rows, the
 * PARTIAL_UPDATE_ROWS after image, and whole events with CRC32s. The
 * expected values are read from the .expected.json next to each file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "tap.h"
#include "mysql-fixtures.h"

static struct bl_format fmt8;	/* an 8.0-like format: post-headers 8/10 */

static void
init_format(void)
{
	static const unsigned char post[] = { 56, 13, 0, 8, 0, 18, 0, 4, 4,
	    4, 4, 18, 0, 0, 92, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0, 0, 0,
	    10, 10, 10, 25, 25, 0, 18, 52, 0, 10, 40, 0 };

	memset(&fmt8, 0, sizeof(fmt8));
	fmt8.have = 1;
	fmt8.crc = 1;
	fmt8.npost = sizeof(post);
	memcpy(fmt8.post, post, sizeof(post));
}

/* the JSON array of strings arr equals the n strings of got */
static int
strs_equal(json_t *arr, char *const *got, int n)
{
	size_t i;

	if (!json_is_array(arr) || json_array_size(arr) != (size_t)n)
		return 0;
	for (i = 0; i < (size_t)n; i++)
		if (got[i] == NULL || strcmp(json_string_value(
		    json_array_get(arr, i)), got[i]) != 0)
			return 0;
	return 1;
}

static int
ints_equal(json_t *arr, const int *got, int n)
{
	size_t i;

	if (!json_is_array(arr) || json_array_size(arr) != (size_t)n)
		return 0;
	for (i = 0; i < (size_t)n; i++)
		if (json_integer_value(json_array_get(arr, i)) != got[i])
			return 0;
	return 1;
}

/* column types and metadata of a table map against the derived lists */
static int
types_match(json_t *d, const struct bl_table_map *tm)
{
	json_t *ty = json_object_get(d, "column_types");
	json_t *me = json_object_get(d, "column_meta");
	int i;

	if (json_array_size(ty) != (size_t)tm->ncols ||
	    json_array_size(me) != (size_t)tm->ncols)
		return 0;
	for (i = 0; i < tm->ncols; i++)
		if (json_integer_value(json_array_get(ty, i)) !=
		    tm->cols[i].type || json_integer_value(json_array_get(me,
		    i)) != tm->cols[i].meta)
			return 0;
	return 1;
}

static int
parse_map(const struct fx_hex *h, int i, struct bl_table_map *tm)
{
	struct p2o_err err;

	memset(tm, 0, sizeof(*tm));
	if (bl_table_map_parse(&fmt8, h->b[i], h->len[i], tm, &err) == -1) {
		printf("# %s\n", err.msg);
		return -1;
	}
	return 0;
}

static void
test_names(void)
{
	struct fx_hex h;
	json_t *doc = fx_json("go-mysql/tablemap-optmeta-names.expected.json");
	struct bl_table_map tm;
	char *names[64], *enums[8][8], *sets[8][8];
	int i, k, ne, ns;

	if (!ok(fx_read_hex("go-mysql/tablemap-optmeta-names.hex", &h) == 0 &&
	    h.n == 4 && doc != NULL, "tablemap-optmeta-names: 4 bodies"))
		return;
	for (i = 0; i < h.n; i++) {
		json_t *a = fx_entry(doc, i, "asserted_by_upstream_test");
		json_t *d = fx_entry(doc, i, "derived_not_asserted_upstream");
		json_t *want = json_object_get(a, "column_names");

		if (!ok(parse_map(&h, i, &tm) == 0, "names [%d] parses", i + 1))
			continue;
		ok(strcmp(tm.db, "test") == 0 && strcmp(tm.table, "_types") ==
		    0 && tm.ncols == 42 && types_match(d, &tm),
		    "names [%d]: test._types, 42 columns, types and metadata",
		    i + 1);
		for (k = 0; k < tm.ncols; k++)
			names[k] = tm.cols[k].name;
		ne = ns = 0;
		for (k = 0; k < tm.ncols; k++) {
			if (tm.cols[k].real == FT_ENUM && tm.cols[k].nlabels >=
			    0 && ne < 8)
				memcpy(enums[ne++], tm.cols[k].labels,
				    sizeof(char *) * (tm.cols[k].nlabels < 8 ?
				    tm.cols[k].nlabels : 8));
			if (tm.cols[k].real == FT_SET && tm.cols[k].nlabels >=
			    0 && ns < 8)
				memcpy(sets[ns++], tm.cols[k].labels,
				    sizeof(char *) * (tm.cols[k].nlabels < 8 ?
				    tm.cols[k].nlabels : 8));
		}
		if (json_is_null(want)) {
			ok(tm.cols[0].name == NULL && ne == 0 && ns == 0,
			    "names [%d]: no optional metadata", i + 1);
		} else {
			ok(strs_equal(want, names, tm.ncols), "names [%d]: the "
			    "42 column names", i + 1);
			ok(ne == 1 && strs_equal(json_array_get(json_object_get(
			    a, "enum_str_values"), 0), enums[0], 2),
			    "names [%d]: enum labels a, b", i + 1);
			ok(ns == 1 && strs_equal(json_array_get(json_object_get(
			    a, "set_str_values"), 0), sets[0], 2),
			    "names [%d]: set labels 1, 2", i + 1);
		}
		bl_table_map_release(&tm);
	}
	fx_hex_release(&h);
	json_decref(doc);
}

static void
test_primary_key(void)
{
	struct fx_hex h;
	json_t *doc = fx_json("go-mysql/tablemap-optmeta-primary-key."
	    "expected.json");
	struct bl_table_map tm;
	int i;

	if (!ok(fx_read_hex("go-mysql/tablemap-optmeta-primary-key.hex",
	    &h) == 0 && h.n == 8 && doc != NULL, "primary-key: 8 bodies"))
		return;
	for (i = 0; i < h.n; i++) {
		json_t *a = fx_entry(doc, i, "asserted_by_upstream_test");
		json_t *pk = json_object_get(a, "primary_key");

		if (!ok(parse_map(&h, i, &tm) == 0, "primary-key [%d] parses",
		    i + 1))
			continue;
		if (json_is_null(pk))
			ok(tm.nkeys == -1, "primary-key [%d]: none sent",
			    i + 1);
		else
			ok(ints_equal(pk, tm.keys, tm.nkeys) &&
			    ints_equal(json_object_get(a, "primary_key_prefix"),
			    tm.key_prefix, tm.nkeys), "primary-key [%d]: %s "
			    "columns and prefixes", i + 1, tm.table);
		bl_table_map_release(&tm);
	}
	fx_hex_release(&h);
	json_decref(doc);
}

static void
test_visibility(void)
{
	struct fx_hex h;
	json_t *doc = fx_json("go-mysql/tablemap-optmeta-visibility."
	    "expected.json");
	struct bl_table_map tm;
	int i, k, same;

	if (!ok(fx_read_hex("go-mysql/tablemap-optmeta-visibility.hex",
	    &h) == 0 && h.n == 5 && doc != NULL, "visibility: 5 bodies"))
		return;
	for (i = 0; i < h.n; i++) {
		json_t *a = fx_entry(doc, i, "asserted_by_upstream_test");
		json_t *v = json_object_get(a, "visibility_by_column");

		if (!ok(parse_map(&h, i, &tm) == 0, "visibility [%d] parses",
		    i + 1))
			continue;
		same = 1;
		for (k = 0; k < tm.ncols; k++) {
			char key[16];

			snprintf(key, sizeof(key), "%d", k);
			if (json_is_null(v))
				same &= tm.cols[k].visible == -1;
			else
				same &= tm.cols[k].visible ==
				    json_is_true(json_object_get(v, key));
		}
		ok(same, "visibility [%d]: %s", i + 1, json_is_null(v) ?
		    "none sent" : "the visible columns");
		bl_table_map_release(&tm);
	}
	fx_hex_release(&h);
	json_decref(doc);
}

/* signedness, collations, enum/set labels and geometry, by column */
static void
test_charset_geometry(void)
{
	struct fx_hex h;
	json_t *doc = fx_json("go-mysql/tablemap-optmeta-charset-geometry."
	    "expected.json");
	struct bl_table_map tm;
	int i, same;

	if (!ok(fx_read_hex("go-mysql/tablemap-optmeta-charset-geometry.hex",
	    &h) == 0 && h.n == 4 && doc != NULL, "charset-geometry: 4 bodies"))
		return;
	for (i = 0; i < h.n; i++) {
		json_t *a = fx_entry(doc, i, "asserted_by_upstream_test");
		json_t *d = fx_entry(doc, i, "derived_not_asserted_upstream");
		const char *key;
		json_t *v;

		if (!ok(parse_map(&h, i, &tm) == 0 && types_match(d, &tm),
		    "charset-geometry [%d] parses, types and metadata", i + 1))
			continue;
		same = 1;
#define EACH(field) json_object_foreach(json_object_get(a, field), key, v)
		/* the expected maps number columns from 0 */
		EACH("unsigned_by_column")
			same &= tm.cols[atoi(key)].is_unsigned ==
			    json_is_true(v);
		ok(same, "charset-geometry [%d]: signedness", i + 1);
		same = 1;
		EACH("collation_by_column")
			same &= tm.cols[atoi(key)].charset ==
			    json_integer_value(v);
		EACH("enum_set_collation_by_column")
			same &= tm.cols[atoi(key)].charset ==
			    json_integer_value(v);
		ok(same, "charset-geometry [%d]: collations", i + 1);
		same = 1;
		EACH("enum_str_values_by_column")
			same &= strs_equal(v, tm.cols[atoi(key)].labels,
			    tm.cols[atoi(key)].nlabels);
		EACH("set_str_values_by_column")
			same &= strs_equal(v, tm.cols[atoi(key)].labels,
			    tm.cols[atoi(key)].nlabels);
		ok(same, "charset-geometry [%d]: enum and set labels", i + 1);
		same = 1;
		EACH("geometry_type_by_column")
			same &= tm.cols[atoi(key)].geometry ==
			    json_integer_value(v);
		ok(same, "charset-geometry [%d]: geometry types", i + 1);
#undef EACH
		bl_table_map_release(&tm);
	}
	fx_hex_release(&h);
	json_decref(doc);
}

static void
test_gtids(void)
{
	struct fx_hex h;
	json_t *doc = fx_json("go-mysql/gtid-mysql8-new-fields.expected.json");
	struct bl_gtid g;
	struct bl_mdb_gtid mg;
	struct gtid_set s;
	struct sbuf b = SBUF_INIT;
	char u[37], txt[128];
	int i;

	if (ok(fx_read_hex("go-mysql/gtid-mysql8-new-fields.hex", &h) == 0 &&
	    h.n == 3 && doc != NULL, "gtid-mysql8: 3 bodies")) {
		for (i = 0; i < h.n; i++) {
			json_t *a = fx_entry(doc, i,
			    "asserted_by_upstream_test");

			ok(bl_gtid_parse(h.b[i], h.len[i], &g) == 0,
			    "gtid [%d] parses", i + 1);
			uuid_format(g.uuid, u);
			snprintf(txt, sizeof(txt), "%s:%llu", u,
			    (unsigned long long)g.gno);
			is_str(txt, json_string_value(json_object_get(a,
			    "gtid")), "gtid [%d]: uuid:gno", i + 1);
#define F(m, name) (json_integer_value(json_object_get(a, name)) == \
	(json_int_t)(m))
			ok(F(g.last_committed, "last_committed") &&
			    F(g.sequence_number, "sequence_number") &&
			    F(g.immediate_commit_us,
			    "immediate_commit_timestamp") &&
			    F(g.transaction_length, "transaction_length") &&
			    F(g.immediate_server_version,
			    "immediate_server_version"), "gtid [%d]: logical "
			    "clock, commit time, length, server version",
			    i + 1);
			/* upstream reads a missing original as 0 */
			ok(json_integer_value(json_object_get(a,
			    "original_commit_timestamp")) == 0 ||
			    F(g.original_commit_us,
			    "original_commit_timestamp"), "gtid [%d]: the "
			    "original commit time", i + 1);
#undef F
		}
		fx_hex_release(&h);
	}
	json_decref(doc);

	ok(fx_read_hex("go-mysql/mariadb-gtid.hex", &h) == 0 && h.n == 1 &&
	    bl_mdb_gtid_parse(h.b[0], h.len[0], &mg) == 0 &&
	    mg.seq == 578437695752307201ULL && mg.domain == 70975786 &&
	    mg.flags2 == 0xff && mg.commit_id == 1663540288323457296ULL,
	    "mariadb-gtid: seq, domain, flags2, commit id");
	fx_hex_release(&h);

	gtid_set_init(&s);
	ok(fx_read_hex("go-mysql/mariadb-gtid-list.hex", &h) == 0 &&
	    h.n == 2, "mariadb-gtid-list: 2 bodies");
	ok(gtid_list_parse(&s, h.b[0], h.len[0]) == 0 &&
	    (gtid_set_format(&s, &b), strcmp(b.buf, "1-2-3") == 0),
	    "gtid-list [1]: 1-2-3");
	sbuf_reset(&b);
	ok(gtid_list_parse(&s, h.b[1], h.len[1]) == 0 &&
	    (gtid_set_format(&s, &b), strcmp(b.buf, "1-2-3,4-5-6,7-8-9") ==
	    0), "gtid-list [2]: 1-2-3,4-5-6,7-8-9");
	fx_hex_release(&h);

	doc = fx_json("go-mysql/previous-gtids-tagged.expected.json");
	ok(fx_read_hex("go-mysql/previous-gtids-tagged.hex", &h) == 0 &&
	    h.n == 5 && doc != NULL, "previous-gtids-tagged: 5 bodies");
	for (i = 0; i < h.n; i++) {
		json_t *a = fx_entry(doc, i, "asserted_by_upstream_test");

		sbuf_reset(&b);
		sbuf_grow(&b, 1);
		ok(gtid_prev_format(h.b[i], h.len[i], &b) == 0,
		    "tagged [%d] parses", i + 1);
		is_str(b.buf, json_string_value(json_object_get(a,
		    "gtid_set")), "tagged [%d]: the set with its tags", i + 1);
		ok(gtid_prev_parse(&s, h.b[i], h.len[i]) == 1, "tagged [%d]: "
		    "known to be tagged (the stream's set is then incomplete)",
		    i + 1);
	}
	fx_hex_release(&h);
	json_decref(doc);
	gtid_set_release(&s);
	sbuf_release(&b);
}

/* a row's int columns as "c0=1,c1=2" */
static void
ints_text(const struct bl_table_map *tm, const struct bl_cell *c,
    struct sbuf *out)
{
	int i;

	for (i = 0; i < tm->ncols; i++)
		sbuf_addf(out, "%sc%d=%d", i ? "," : "", i,
		    (int)le32(c[i].p));
}

static void
test_extra_data(void)
{
	struct fx_hex h;
	json_t *doc = fx_json("go-mysql/rows-v2-extra-data.expected.json");
	struct bl_table_map tm;
	struct bl_rows r;
	struct bl_cell c1[4], c2[4];
	struct sbuf got = SBUF_INIT, want = SBUF_INIT;
	struct p2o_err err;
	int i;

	if (!ok(fx_read_hex("go-mysql/rows-v2-extra-data.hex", &h) == 0 &&
	    h.n == 10 && doc != NULL, "rows-v2-extra-data: 5 maps and rows"))
		return;
	for (i = 0; i + 1 < h.n; i += 2) {
		json_t *a = fx_entry(doc, i + 1, "asserted_by_upstream_test");
		json_t *d = fx_entry(doc, i + 1,
		    "derived_not_asserted_upstream");
		json_t *rows = json_object_get(d, "rows"), *row;
		const char *ndb = json_string_value(json_object_get(a,
		    "ndb_data"));
		size_t off = 0, k;
		json_t *e = json_array_get(json_object_get(doc, "entries"),
		    i + 1);
		uint8_t type = strstr(json_string_value(json_object_get(e,
		    "label")), "UPDATE") ? BL_UPDATE_V2 : BL_WRITE_V2;

		if (parse_map(&h, i, &tm) == -1 ||
		    bl_rows_parse(&fmt8, type, h.b[i + 1], h.len[i + 1], &r,
		    &err) == -1) {
			ok(0, "extra-data [%d] parses", i + 2);
			continue;
		}
		ok(r.partition_id == json_integer_value(json_object_get(a,
		    "partition_id")) && r.source_partition_id ==
		    json_integer_value(json_object_get(a,
		    "source_partition_id")), "extra-data [%d]: partition ids",
		    i + 2);
		if (ndb != NULL) {
			unsigned char nb[64];
			long nl = fx_unhex(ndb, strlen(ndb), nb);

			ok(r.ndb_info != NULL && (long)r.ndb_len == nl &&
			    memcmp(r.ndb_info, nb, nl) == 0,
			    "extra-data [%d]: NDB info", i + 2);
		}
		sbuf_reset(&got);
		sbuf_reset(&want);
		sbuf_grow(&got, 1);
		sbuf_grow(&want, 1);
		while (bl_image_next(&r, &tm, r.present, &off, c1, &err) == 1) {
			ints_text(&tm, c1, &got);
			if (r.op == 'u' && bl_image_next(&r, &tm, r.present2,
			    &off, c2, &err) == 1) {
				sbuf_adds(&got, ">");
				ints_text(&tm, c2, &got);
			}
			sbuf_adds(&got, ";");
		}
		json_array_foreach(rows, k, row) {
			json_t *b = json_object_get(row, "before");
			json_t *src = b ? b : row;
			int c;

			for (c = 0; c < tm.ncols; c++) {
				char cn[16];

				snprintf(cn, sizeof(cn), "c%d", c);
				sbuf_addf(&want, "%sc%d=%d", c ? "," : "", c,
				    (int)json_integer_value(json_object_get(
				    src, cn)));
			}
			if (b != NULL) {
				sbuf_adds(&want, ">");
				for (c = 0; c < tm.ncols; c++) {
					char cn[16];

					snprintf(cn, sizeof(cn), "c%d", c);
					sbuf_addf(&want, "%sc%d=%d", c ? "," :
					    "", c, (int)json_integer_value(
					    json_object_get(json_object_get(row,
					    "after"), cn)));
				}
			}
			sbuf_adds(&want, ";");
		}
		is_str(got.buf, want.buf, "extra-data [%d]: the rows, every "
		    "byte read (%zu of %zu)", i + 2, off, r.rowslen);
		bl_table_map_release(&tm);
	}
	sbuf_release(&got);
	sbuf_release(&want);
	fx_hex_release(&h);
	json_decref(doc);
}

static void
test_payload(void)
{
	struct fx_hex h, inner;
	struct bl_payload pl;
	struct sbuf out = SBUF_INIT;
	struct p2o_err err;
	static const int types[] = { 2, 19, 30, 19, 31, 19, 32, 16 };
	size_t off = 0;
	int i = 0, same = 1;

	if (!ok(fx_read_hex("go-mysql/transaction-payload-mysql-8.0.27.hex",
	    &h) == 0 && h.n == 1, "payload 8.0.27: one zstd frame"))
		return;
	memset(&pl, 0, sizeof(pl));
	pl.compression = 0;
	pl.data = h.b[0];
	pl.datalen = h.len[0];
	ok(bl_payload_inflate(&pl, &out, &err) == 0 &&
	    out.len == 2442, "payload 8.0.27: inflates to 2442 bytes");
	while (off + BL_HEADER_LEN <= out.len) {
		struct bl_header eh;

		if (bl_header_parse((unsigned char *)out.buf + off,
		    out.len - off, &eh) == -1)
			break;
		same &= i < 8 && eh.type == types[i] && eh.log_pos == 0;
		i++;
		off += eh.size;
	}
	ok(same && i == 8 && off == out.len, "payload 8.0.27: 8 inner events, "
	    "QUERY, TABLE_MAP, WRITE, TABLE_MAP, UPDATE, TABLE_MAP, DELETE, "
	    "XID, log_pos 0, no CRC");
	ok(fx_read_hex("go-mysql/transaction-payload-mysql-8.0.27.inner.hex",
	    &inner) == 0 && inner.n == 8, "payload 8.0.27: the split events");
	for (same = 1, off = 0, i = 0; i < inner.n; i++) {
		same &= off + inner.len[i] <= out.len && memcmp(out.buf + off,
		    inner.b[i], inner.len[i]) == 0;
		off += inner.len[i];
	}
	ok(same, "payload 8.0.27: the same bytes as the split events");
	/* a truncated frame and a size that lies are refused */
	sbuf_reset(&out);
	pl.datalen = h.len[0] - 10;
	ok(bl_payload_inflate(&pl, &out, &err) == -1 &&
	    out.len == 0, "payload: a truncated frame is refused (%s)", err.msg);
	pl.datalen = h.len[0];
	pl.uncompressed_size = 2000;
	ok(bl_payload_inflate(&pl, &out, &err) == -1 &&
	    out.len == 0, "payload: more bytes than it states is refused");
	fx_hex_release(&h);
	fx_hex_release(&inner);
	sbuf_release(&out);
}

static void
test_json_rows(void)
{
	struct fx_hex h;
	json_t *doc = fx_json("go-mysql/json-rows-parse-json.expected.json");
	struct bl_table_map tm;
	struct bl_rows r;
	struct bl_cell c[8];
	struct my_col jc, dc;
	struct sbuf v = SBUF_INIT;
	struct p2o_err err;
	size_t off;
	int i;

	my_col_init(&jc, "c1", "json", "json", NULL, 0, &err);
	my_col_init(&dc, "c2", "decimal", "decimal(10,0)", NULL, 0, &err);
	if (!ok(fx_read_hex("go-mysql/json-rows-parse-json.hex", &h) == 0 &&
	    h.n == 4 && doc != NULL && parse_map(&h, 0, &tm) == 0,
	    "json-rows: table map and 3 rows"))
		return;
	for (i = 1; i < 4; i++) {
		json_t *a = fx_entry(doc, i, "asserted_by_upstream_test");
		json_t *d = fx_entry(doc, i, "derived_not_asserted_upstream");
		const char *want = json_string_value(json_object_get(d, "c1"));
		char dec[64];

		off = 0;
		if (bl_rows_parse(&fmt8, BL_WRITE_V2, h.b[i], h.len[i], &r,
		    &err) == -1 || bl_image_next(&r, &tm,
		    r.present, &off, c, &err) != 1) {
			ok(0, "json-rows [%d] decodes: %s", i + 1, err.msg);
			continue;
		}
		sbuf_reset(&v);
		sbuf_grow(&v, 1);
		if (c[0].null)
			sbuf_adds(&v, "null");
		else
			myval_binlog(&jc, &tm.cols[0], c[0].p, c[0].n, &v, &err);
		is_str(v.buf, want ? want : "null", "json-rows [%d]: the "
		    "JSON column", i + 1);
		sbuf_reset(&v);
		myval_binlog(&dc, &tm.cols[1], c[1].p, c[1].n, &v, &err);
		snprintf(dec, sizeof(dec), "\"%s\"", json_string_value(
		    json_object_get(a, "row0_c2_decimal_as_text")));
		is_str(v.buf, dec, "json-rows [%d]: the decimal column as a "
		    "string", i + 1);
	}
	bl_table_map_release(&tm);
	fx_hex_release(&h);
	json_decref(doc);

	/* a zero-length JSON value in a NOT NULL column is JSON null */
	if (ok(fx_read_hex("go-mysql/json-rows-json-null.hex", &h) == 0 &&
	    h.n == 2 && parse_map(&h, 0, &tm) == 0, "json-null: map and row")) {
		off = 0;
		ok(bl_rows_parse(&fmt8, BL_WRITE_V2, h.b[1], h.len[1], &r,
		    &err) == 0 && bl_image_next(&r, &tm, r.present,
		    &off, c, &err) == 1 && !c[3].null &&
		    c[3].n == 4 && off == r.rowslen, "json-null: the row "
		    "decodes, the JSON cell is present and empty");
		sbuf_reset(&v);
		myval_binlog(&jc, &tm.cols[3], c[3].p, c[3].n, &v, &err);
		is_str(v.buf, "null", "json-null: an empty JSON value is null");
		/* no column in the image: no bytes taken, rows never end */
		{
			unsigned char none[8] = { 0 };

			off = 0;
			ok(bl_image_next(&r, &tm, none, &off, c, &err) == -1 && off == 0 &&
			    strstr(err.msg, "holds no column") != NULL,
			    "an image naming no column is refused: %s", err.msg);
		}
		bl_table_map_release(&tm);
		fx_hex_release(&h);
	}
	my_col_release(&jc);
	my_col_release(&dc);
	sbuf_release(&v);
}

/* a binary(n) cell the binlog holds without its trailing zero bytes is
 * the n bytes a SELECT returns; a varbinary is what it holds */
static void
test_binary_pad(void)
{
	static const unsigned char cell[] = { 2, 0x01, 0x02 };
	struct bl_col b = { .type = FT_STRING, .real = FT_STRING,
	    .meta = FT_STRING << 8 | 4 };
	struct bl_col vb = { .type = FT_VARCHAR, .meta = 4 };
	struct my_col c, vc;
	struct sbuf v = SBUF_INIT;
	struct p2o_err err;

	ok(my_col_init(&c, "b", "binary", "binary(4)", NULL, 0, &err) == 0 && c.kind == MK_BINARY && c.pad == 4,
	    "binary(4): four bytes a value");
	my_col_init(&vc, "vb", "varbinary", "varbinary(4)", NULL, 0, &err);
	myval_binlog(&c, &b, cell, sizeof(cell), &v, &err);
	is_str(v.buf, "\"AQIAAA==\"", "binary(4) from the binlog: padded "
	    "with zero bytes");
	sbuf_reset(&v);
	myval_text(&c, "\x01\x02\0\0", 4, &v);
	is_str(v.buf, "\"AQIAAA==\"", "binary(4) from a SELECT: the same");
	sbuf_reset(&v);
	myval_binlog(&vc, &vb, cell, sizeof(cell), &v, &err);
	is_str(v.buf, "\"AQI=\"", "varbinary(4): as it is");
	my_col_release(&c);
	my_col_release(&vc);
	sbuf_release(&v);
}

/* MariaDB's compressed events: the plain event they stand for, and every
 * way the compressed part can be wrong refused with out unchanged */
static void
test_uncompress(void)
{
	static const char sql[] = "TRUNCATE TABLE p2o.cz";
	/* post-header: thread, time, db length 3, error, no status vars */
	static const unsigned char head[] = { 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0,
	    0, 0, 'p', '2', 'o', 0 };
	unsigned char body[256], z[128];
	uLongf zn = sizeof(z);
	struct sbuf out = SBUF_INIT;
	struct bl_query q;
	struct p2o_err err;
	uint8_t plain = 0;
	size_t n;

	if (compress(z, &zn, (const unsigned char *)sql, strlen(sql)) != Z_OK)
		BAIL_OUT("zlib compress");
	memcpy(body, head, sizeof(head));
	n = sizeof(head);
	body[n++] = 0x81;
	body[n++] = (unsigned char)strlen(sql);
	memcpy(body + n, z, zn);
	n += zn;
	ok(bl_uncompress(NULL, BL_QUERY_COMPRESSED, body, n, &plain, &out, &err) == 0 && plain == BL_QUERY && out.len == sizeof(head) +
	    strlen(sql) && bl_query_parse(NULL, (unsigned char *)out.buf,
	    out.len, &q) == 0 && q.sqllen == strlen(sql) &&
	    memcmp(q.sql, sql, q.sqllen) == 0 && q.dblen == 3,
	    "QUERY_COMPRESSED: the QUERY it stands for, its statement whole");
#define REFUSED(blen, why) do {						\
	sbuf_reset(&out);						\
	ok(bl_uncompress(NULL, BL_QUERY_COMPRESSED, body, blen, &plain,	\
	    &out, &err) == -1 && out.len == 0 &&		\
	    strstr(err.msg, why) != NULL, "refused: %s (%s)", why, err.msg);	\
} while (0)
	REFUSED(n - 3, "truncated");
	REFUSED(sizeof(head) - 2, "too short");
	body[sizeof(head)] = 0x91;
	REFUSED(n, "unknown compression header");
	body[sizeof(head)] = 0x85;
	REFUSED(n, "unknown compression header");
	body[sizeof(head)] = 0x81;
	body[sizeof(head) + 1]--;
	REFUSED(n, "inflates past");
	body[sizeof(head) + 1] += 2;
	REFUSED(n, "not the");
	body[sizeof(head) + 1] = 0;
	REFUSED(n, "states 0");
	body[sizeof(head) + 1] = (unsigned char)strlen(sql);
	body[sizeof(head) + 4] ^= 0xff;
	REFUSED(n, "does not inflate");
#undef REFUSED
	sbuf_release(&out);
}

/* the PARTIAL_UPDATE_ROWS after image: value options, partial bitmap */
static void
test_partial(void)
{
	static const uint8_t types[] = { 3, 3, 245, 245, 245, 18, 18, 3 };
	static const uint16_t meta[] = { 0, 0, 4, 4, 4, 0, 0, 0 };
	struct fx_hex h;
	struct bl_table_map tm;
	struct bl_rows r;
	struct bl_cell c[8];
	unsigned char present = 0xff;
	struct p2o_err err;
	size_t off = 0;
	int i;

	if (!ok(fx_read_hex("go-mysql/partial-update-rows-after-image.hex",
	    &h) == 0 && h.n == 1, "partial: one after image"))
		return;
	memset(&tm, 0, sizeof(tm));
	tm.ncols = 8;
	tm.cols = xcalloc(8, sizeof(*tm.cols));
	for (i = 0; i < 8; i++) {
		tm.cols[i].type = tm.cols[i].real = types[i];
		tm.cols[i].meta = meta[i];
	}
	memset(&r, 0, sizeof(r));
	r.partial = 1;
	r.op = 'u';
	r.ncols = 8;
	r.present = r.present2 = &present;
	r.rows = h.b[0];
	r.rowslen = h.len[0];
	ok(bl_image_next(&r, &tm, r.present2, &off, c, &err) ==
	    1 && off == 37, "partial: the after image is 37 bytes");
	ok(le32(c[0].p) == 994294 && le32(c[1].p) == 38842347 &&
	    c[2].n == 4 && c[3].n == 4 && c[4].n == 4 &&
	    le32(c[7].p) == 4404, "partial: c0, c1, three empty JSON diffs, "
	    "c7");
	free(tm.cols);
	fx_hex_release(&h);
}

static void
test_full_events(void)
{
	struct fx_hex h;
	struct bl_format f;
	struct bl_header hd;
	struct bl_table_map tm;
	struct bl_rows r;
	struct bl_cell c[4];
	const unsigned char *body;
	size_t blen, off;
	struct p2o_err err;
	int i, good = 0;

	memset(&f, 0, sizeof(f));
	memset(&tm, 0, sizeof(tm));
	if (!ok(fx_read_hex("go-mysql/full-events-mysql-5.7.22-crc32.hex",
	    &h) == 0 && h.n == 5, "full-events: 5 events"))
		return;
	for (i = 0; i < h.n; i++) {
		if (bl_header_parse(h.b[i], h.len[i], &hd) == -1 ||
		    hd.size != h.len[i] || bl_event_body(&f, 1, h.b[i], &hd,
		    &body, &blen, &err) == -1)
			continue;
		good++;
		if (hd.type == BL_FDE)
			bl_format_parse(&f, body, blen, &err);
		if (hd.type == BL_TABLE_MAP)
			bl_table_map_parse(&f, body, blen, &tm, &err);
		if (i == 2) {
			off = 0;
			ok(bl_rows_parse(&f, hd.type, body, blen, &r, &err) == 0 && bl_image_next(&r, &tm,
			    r.present, &off, c, &err) == 1 &&
			    le32(c[0].p) == 1 && off == r.rowslen,
			    "full-events: db.tbl row 1");
		}
		if (i == 4) {
			/* two INTs logged against a one-TINYINT map */
			off = 0;
			ok(bl_rows_parse(&f, hd.type, body, blen, &r, &err) == -1 || bl_image_next(&r, &tm,
			    r.present, &off, c, &err) == -1 ||
			    off != r.rowslen, "full-events: a row that does "
			    "not match its map is not read as one");
		}
	}
	is_int(good, 5, "full-events: every header and CRC32 checks out");
	ok(f.have && f.crc && strcmp(f.server_version, "5.7.22-log") == 0,
	    "full-events: the FDE says 5.7.22-log, CRC32");
	/* one flipped bit fails the CRC */
	h.b[1][25] ^= 1;
	bl_header_parse(h.b[1], h.len[1], &hd);
	ok(bl_event_body(&f, 1, h.b[1], &hd, &body, &blen, &err) == -1 && strstr(err.msg, "CRC32") != NULL,
	    "full-events: a flipped bit fails the CRC32");
	bl_table_map_release(&tm);
	fx_hex_release(&h);
}

int
main(void)
{
	init_format();
	test_names();
	test_primary_key();
	test_visibility();
	test_charset_geometry();
	test_gtids();
	test_extra_data();
	test_payload();
	test_json_rows();
	test_binary_pad();
	test_uncompress();
	test_partial();
	test_full_events();
	return done_testing();
}
