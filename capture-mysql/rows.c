/*
 * rows.c - TABLE_MAP events (column types, metadata and the optional
 * metadata MySQL 8 and MariaDB 10.5 send) and the row images of
 * WRITE/UPDATE/DELETE_ROWS v1 and v2: where each column's bytes are.
 *
 * What the bytes mean is myval.c's business; this file only measures
 * them, against the table map's types, and refuses anything that would
 * read past the event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binlog.h"
#include "p2o.h"

/* optional metadata field types */
enum {
	OM_SIGNEDNESS = 1, OM_DEFAULT_CHARSET, OM_COLUMN_CHARSET,
	OM_COLUMN_NAME, OM_SET_STR_VALUE, OM_ENUM_STR_VALUE,
	OM_GEOMETRY_TYPE, OM_SIMPLE_PRIMARY_KEY, OM_PRIMARY_KEY_WITH_PREFIX,
	OM_ENUM_AND_SET_DEFAULT_CHARSET, OM_ENUM_AND_SET_COLUMN_CHARSET,
	OM_COLUMN_VISIBILITY,
};

static void
labels_drop(struct bl_col *col)
{
	int k;

	for (k = 0; k < col->nlabels; k++)
		free(col->labels[k]);
	free(col->labels);
	col->labels = NULL;
	col->nlabels = -1;
}

void
bl_table_map_release(struct bl_table_map *tm)
{
	int i;

	for (i = 0; tm->cols != NULL && i < tm->ncols; i++) {
		free(tm->cols[i].name);
		labels_drop(&tm->cols[i]);
	}
	free(tm->cols);
	free(tm->db);
	free(tm->table);
	free(tm->keys);
	free(tm->key_prefix);
	memset(tm, 0, sizeof(*tm));
}

int
bl_col_is_numeric(const struct bl_col *c)
{
	switch (c->type) {
	case FT_DECIMAL: case FT_TINY: case FT_SHORT: case FT_LONG:
	case FT_FLOAT: case FT_DOUBLE: case FT_LONGLONG: case FT_INT24:
	case FT_YEAR: case FT_NEWDECIMAL:
		return 1;
	default:
		return 0;
	}
}

int
bl_col_is_char(const struct bl_col *c)
{
	switch (c->type) {
	case FT_STRING:
		return c->real == FT_STRING;
	case FT_VARCHAR: case FT_VAR_STRING: case FT_BLOB:
	case FT_TINY_BLOB: case FT_MEDIUM_BLOB: case FT_LONG_BLOB:
		return 1;
	default:
		return 0;
	}
}

/* MariaDB gives geometry columns a charset (binary) too */
static int
is_char_or_geometry(const struct bl_col *c)
{
	return bl_col_is_char(c) || c->type == FT_GEOMETRY;
}

static int
is_enum_set(const struct bl_col *c)
{
	return c->real == FT_ENUM || c->real == FT_SET;
}

/* one column's metadata bytes from the table map */
static int
read_meta(struct bcur *c, struct bl_col *col)
{
	const unsigned char *p;

	col->real = col->type;
	switch (col->type) {
	case FT_FLOAT: case FT_DOUBLE: case FT_BLOB: case FT_GEOMETRY:
	case FT_JSON: case FT_TIMESTAMP2: case FT_DATETIME2: case FT_TIME2:
	case FT_TINY_BLOB: case FT_MEDIUM_BLOB: case FT_LONG_BLOB:
		if ((p = bcur_take(c, 1)) == NULL)
			return -1;
		col->meta = p[0];
		return 0;
	case FT_VARCHAR: case FT_VAR_STRING: case FT_BIT:
		if ((p = bcur_take(c, 2)) == NULL)
			return -1;
		col->meta = (uint16_t)le16(p);
		return 0;
	case FT_NEWDECIMAL: case FT_STRING: case FT_ENUM: case FT_SET:
		if ((p = bcur_take(c, 2)) == NULL)
			return -1;
		col->meta = (uint16_t)(p[0] << 8 | p[1]);
		if (col->type == FT_STRING || col->type == FT_ENUM ||
		    col->type == FT_SET) {
			unsigned b0 = p[0];

			/* a CHAR longer than 255 moves two length bits
			 * into the type byte */
			if ((b0 & 0x30) != 0x30)
				col->real = (uint8_t)(b0 | 0x30);
			else
				col->real = (uint8_t)b0;
		}
		return 0;
	default:
		col->meta = 0;
		return 0;
	}
}

/* a STRING column's declared byte length (CHAR(n) * mbmaxlen) */
static unsigned
string_max_len(const struct bl_col *c)
{
	unsigned b0 = c->meta >> 8, b1 = c->meta & 0xff;

	if ((b0 & 0x30) != 0x30)
		return b1 | (((b0 & 0x30) ^ 0x30) << 4);
	return b1;
}

static char *
take_str(struct bcur *c, size_t n)
{
	const unsigned char *p = bcur_take(c, n);

	return p ? xstrndup((const char *)p, n) : NULL;
}

/* per-column values in a field, one per column that qualifies */
static int
next_col(const struct bl_table_map *tm, int from, int (*want)(const struct
    bl_col *))
{
	int i;

	for (i = from; i < tm->ncols; i++)
		if (want(&tm->cols[i]))
			return i;
	return -1;
}

static int
is_enum(const struct bl_col *c)
{
	return c->real == FT_ENUM;
}

static int
is_set(const struct bl_col *c)
{
	return c->real == FT_SET;
}

static int
is_geometry(const struct bl_col *c)
{
	return c->type == FT_GEOMETRY;
}

static int
read_labels(struct bcur *c, const struct bl_table_map *tm,
    int (*want)(const struct bl_col *))
{
	int col = -1;
	uint64_t n, i, len;

	while (bcur_left(c) > 0) {
		if ((col = next_col(tm, col + 1, want)) < 0)
			return -1;
		n = bcur_packed(c);
		if (c->bad || n > 65535)
			return -1;
		/* a map that names a column's values twice (a corrupt
		 * event; the server writes each field once): the last wins */
		labels_drop(&tm->cols[col]);
		tm->cols[col].labels = xcalloc(n ? n : 1, sizeof(char *));
		tm->cols[col].nlabels = 0;
		for (i = 0; i < n; i++) {
			len = bcur_packed(c);
			if (c->bad || len > bcur_left(c))
				return -1;
			tm->cols[col].labels[i] = take_str(c, len);
			tm->cols[col].nlabels++;
		}
	}
	return c->bad ? -1 : 0;
}

/* a bitmap, most significant bit first, one bit per qualifying column */
static int
read_bits(struct bcur *c, const struct bl_table_map *tm,
    int (*want)(const struct bl_col *), int which)
{
	int col = -1, bit = 0;
	const unsigned char *p;
	size_t n = bcur_left(c);

	if ((p = bcur_take(c, n)) == NULL)
		return -1;
	while ((col = next_col(tm, col + 1, want)) >= 0) {
		int v;

		if ((size_t)bit / 8 >= n)
			return -1;
		v = (p[bit / 8] >> (7 - bit % 8)) & 1;
		if (which == OM_SIGNEDNESS)
			tm->cols[col].is_unsigned = v;
		else
			tm->cols[col].visible = v;
		bit++;
	}
	return 0;
}

static int
any_col(const struct bl_col *c)
{
	(void)c;
	return 1;
}

static int
count_cols(const struct bl_table_map *tm, int (*want)(const struct bl_col *))
{
	int i, n = 0;

	for (i = 0; i < tm->ncols; i++)
		n += want(&tm->cols[i]) != 0;
	return n;
}

/*
 * Collations, per column or as a default with exceptions. Which columns
 * carry one differs: MariaDB counts geometry columns, MySQL does not. The
 * server's flavour decides, unless the field itself can only be read the
 * other way (a per-column list whose length fits only the other count,
 * an exception past the end of the flavour's columns).
 */
static int
read_charsets(struct bcur *c, struct bl_table_map *tm, int type,
    int (*want)(const struct bl_col *), int mariadb)
{
	struct bcur probe = *c;
	int col = -1, i, k, n = 0;
	uint64_t def, idx;

	if (want == bl_col_is_char) {
		if (type == OM_COLUMN_CHARSET) {
			while (!probe.bad && bcur_left(&probe) > 0) {
				bcur_packed(&probe);
				n++;
			}
			if (n == count_cols(tm, is_char_or_geometry) &&
			    n != count_cols(tm, bl_col_is_char))
				want = is_char_or_geometry;
		} else {
			bcur_packed(&probe);
			while (!probe.bad && bcur_left(&probe) > 0) {
				idx = bcur_packed(&probe);
				bcur_packed(&probe);
				if (idx >= (uint64_t)count_cols(tm,
				    bl_col_is_char))
					mariadb = 1;
			}
			if (mariadb)
				want = is_char_or_geometry;
		}
	}
	if (type == OM_DEFAULT_CHARSET ||
	    type == OM_ENUM_AND_SET_DEFAULT_CHARSET) {
		def = bcur_packed(c);
		if (type == OM_DEFAULT_CHARSET)
			tm->default_charset = (int)def;
		for (i = 0; i < tm->ncols; i++)
			if (want(&tm->cols[i]))
				tm->cols[i].charset = (int)def;
		/* exceptions: (index among the qualifying columns,
		 * collation) */
		while (!c->bad && bcur_left(c) > 0) {
			idx = bcur_packed(c);
			def = bcur_packed(c);
			for (col = -1, k = 0; (col = next_col(tm, col + 1,
			    want)) >= 0; k++)
				if ((uint64_t)k == idx)
					break;
			if (col < 0)
				return -1;
			tm->cols[col].charset = (int)def;
		}
		return c->bad ? -1 : 0;
	}
	while (!c->bad && bcur_left(c) > 0) {
		if ((col = next_col(tm, col + 1, want)) < 0)
			return -1;
		tm->cols[col].charset = (int)bcur_packed(c);
	}
	return c->bad ? -1 : 0;
}

static int
read_optional(struct bcur *c, struct bl_table_map *tm, int mariadb)
{
	uint64_t type, len, i;
	const unsigned char *v;
	struct bcur f;
	int col;

	while (bcur_left(c) > 0) {
		type = bcur_le(c, 1);
		len = bcur_packed(c);
		if (c->bad || len > bcur_left(c))
			return -1;
		v = bcur_take(c, len);
		bcur_init(&f, v, len);
		if (type < 32)
			tm->optmask |= 1u << type;
		switch (type) {
		case OM_SIGNEDNESS:
			if (read_bits(&f, tm, bl_col_is_numeric, (int)type))
				return -1;
			break;
		case OM_DEFAULT_CHARSET:
		case OM_COLUMN_CHARSET:
			if (read_charsets(&f, tm, (int)type, bl_col_is_char,
			    mariadb))
				return -1;
			break;
		case OM_ENUM_AND_SET_DEFAULT_CHARSET:
		case OM_ENUM_AND_SET_COLUMN_CHARSET:
			if (read_charsets(&f, tm, (int)type, is_enum_set, 0))
				return -1;
			break;
		case OM_COLUMN_NAME:
			for (col = 0; bcur_left(&f) > 0; col++) {
				if (col >= tm->ncols)
					return -1;
				len = bcur_packed(&f);
				if (f.bad || len > bcur_left(&f))
					return -1;
				free(tm->cols[col].name);
				tm->cols[col].name = take_str(&f, len);
			}
			break;
		case OM_SET_STR_VALUE:
			if (read_labels(&f, tm, is_set))
				return -1;
			break;
		case OM_ENUM_STR_VALUE:
			if (read_labels(&f, tm, is_enum))
				return -1;
			break;
		case OM_GEOMETRY_TYPE:
			for (col = -1; bcur_left(&f) > 0;) {
				if ((col = next_col(tm, col + 1,
				    is_geometry)) < 0)
					return -1;
				tm->cols[col].geometry = (int)bcur_packed(&f);
			}
			break;
		case OM_SIMPLE_PRIMARY_KEY:
		case OM_PRIMARY_KEY_WITH_PREFIX:
			free(tm->keys);
			free(tm->key_prefix);
			tm->keys = xcalloc(tm->ncols ? tm->ncols : 1,
			    sizeof(int));
			tm->key_prefix = xcalloc(tm->ncols ? tm->ncols : 1,
			    sizeof(int));
			tm->nkeys = 0;
			for (i = 0; bcur_left(&f) > 0; i++) {
				uint64_t k = bcur_packed(&f), pre = 0;

				if (type == OM_PRIMARY_KEY_WITH_PREFIX)
					pre = bcur_packed(&f);
				if (f.bad || k >= (uint64_t)tm->ncols ||
				    tm->nkeys >= tm->ncols)
					return -1;
				tm->keys[tm->nkeys] = (int)k;
				tm->key_prefix[tm->nkeys++] = (int)pre;
			}
			break;
		case OM_COLUMN_VISIBILITY:
			if (read_bits(&f, tm, any_col, (int)type))
				return -1;
			break;
		default:
			break;	/* a later field: its length skips it */
		}
		if (f.bad)
			return -1;
	}
	return 0;
}

int
bl_table_map_parse(const struct bl_format *fmt, const unsigned char *body,
    size_t len, struct bl_table_map *tm, struct p2o_err *e)
{
	unsigned ph = bl_post_len(fmt, BL_TABLE_MAP);
	struct bcur c;
	const unsigned char *types, *nulls;
	uint64_t ncols, mlen;
	size_t dblen, tlen, mend;
	int i;

	bl_table_map_release(tm);
	tm->nkeys = -1;
	tm->default_charset = -1;
	if (ph != 6 && ph != 8)
		return p2o_fail(e, P2O_EXIT_DATA, "TABLE_MAP post-header length is not "
		    "6 or 8");
	bcur_init(&c, body, len);
	tm->table_id = bcur_le(&c, ph == 6 ? 4 : 6);
	tm->flags = (uint16_t)bcur_le(&c, 2);
	dblen = (size_t)bcur_le(&c, 1);
	tm->db = take_str(&c, dblen);
	bcur_take(&c, 1);
	tlen = (size_t)bcur_le(&c, 1);
	tm->table = take_str(&c, tlen);
	bcur_take(&c, 1);
	ncols = bcur_packed(&c);
	if (c.bad || tm->db == NULL || tm->table == NULL)
		goto bad;
	if (ncols == 0 || ncols > TM_MAX_COLS)
		return p2o_fail(e, P2O_EXIT_DATA, "TABLE_MAP column count out of range");
	if ((types = bcur_take(&c, ncols)) == NULL)
		goto bad;
	tm->ncols = (int)ncols;
	tm->cols = xcalloc(ncols, sizeof(*tm->cols));
	for (i = 0; i < tm->ncols; i++) {
		tm->cols[i].type = types[i];
		tm->cols[i].is_unsigned = -1;
		tm->cols[i].charset = -1;
		tm->cols[i].nlabels = -1;
		tm->cols[i].visible = -1;
		tm->cols[i].geometry = -1;
	}
	mlen = bcur_packed(&c);
	if (c.bad || mlen > bcur_left(&c))
		goto bad;
	mend = c.off + mlen;
	for (i = 0; i < tm->ncols; i++)
		if (read_meta(&c, &tm->cols[i]) == -1 || c.off > mend)
			goto bad;
	if (c.off != mend)
		return p2o_fail(e, P2O_EXIT_DATA, "TABLE_MAP metadata length does not "
		    "match its columns");
	if ((nulls = bcur_take(&c, (ncols + 7) / 8)) == NULL)
		goto bad;
	for (i = 0; i < tm->ncols; i++)
		tm->cols[i].nullable = (nulls[i / 8] >> (i % 8)) & 1;
	for (i = 0; i < tm->ncols; i++)
		if (tm->cols[i].type == FT_ENUM || tm->cols[i].type == FT_SET)
			tm->cols[i].real = tm->cols[i].type;
	if (read_optional(&c, tm, fmt != NULL && fmt->mariadb) == -1)
		return p2o_fail(e, P2O_EXIT_DATA, "TABLE_MAP optional metadata is "
		    "malformed");
	return 0;
bad:
	return p2o_fail(e, P2O_EXIT_DATA, "TABLE_MAP is truncated or malformed");
}

int
bl_rows_parse(const struct bl_format *fmt, uint8_t type,
    const unsigned char *body, size_t len, struct bl_rows *r, struct p2o_err *e)
{
	unsigned ph = bl_post_len(fmt, type);
	struct bcur c;
	uint64_t ncols, extra;
	size_t bm;
	int v2;

	memset(r, 0, sizeof(*r));
	r->type = type;
	switch (type) {
	case BL_WRITE_V1: case BL_WRITE_V2:
		r->op = 'i';
		break;
	case BL_UPDATE_V1: case BL_UPDATE_V2: case BL_PARTIAL_UPDATE:
		r->op = 'u';
		break;
	case BL_DELETE_V1: case BL_DELETE_V2:
		r->op = 'd';
		break;
	default:
		return p2o_fail(e, P2O_EXIT_DATA, "not a rows event");
	}
	r->partial = type == BL_PARTIAL_UPDATE;
	v2 = type >= BL_WRITE_V2;
	if (ph != 6 && ph != 8 && ph != 10)
		return p2o_fail(e, P2O_EXIT_DATA, "rows event post-header length is not "
		    "6, 8 or 10");
	bcur_init(&c, body, len);
	r->table_id = bcur_le(&c, ph == 6 ? 4 : 6);
	r->flags = (uint16_t)bcur_le(&c, 2);
	if (v2 && ph == 10) {
		const unsigned char *x;
		struct bcur xc;

		extra = bcur_le(&c, 2);
		if (c.bad || extra < 2 || (x = bcur_take(&c, extra - 2)) ==
		    NULL)
			goto bad;
		bcur_init(&xc, x, extra - 2);
		while (bcur_left(&xc) > 0) {
			uint64_t t = bcur_le(&xc, 1), n;

			if (t == 0) {		/* NDB: length, format, data */
				n = bcur_le(&xc, 1);
				if (xc.bad || n < 2)
					goto bad;
				bcur_take(&xc, 1);
				r->ndb_len = n - 2;
				r->ndb_info = bcur_take(&xc, r->ndb_len);
			} else if (t == 1) {	/* partition info */
				r->has_partition = 1;
				r->partition_id = (uint32_t)bcur_le(&xc, 2);
				if (r->op == 'u')
					r->source_partition_id =
					    (uint32_t)bcur_le(&xc, 2);
			} else
				break;	/* unknown: the length covers it */
			if (xc.bad)
				goto bad;
		}
	}
	ncols = bcur_packed(&c);
	if (c.bad || ncols == 0 || ncols > TM_MAX_COLS)
		goto bad;
	r->ncols = (int)ncols;
	bm = (ncols + 7) / 8;
	r->present = bcur_take(&c, bm);
	r->present2 = r->present;
	if (r->op == 'u')
		r->present2 = bcur_take(&c, bm);
	if (c.bad)
		goto bad;
	r->rows = c.p + c.off;
	r->rowslen = bcur_left(&c);
	return 0;
bad:
	return p2o_fail(e, P2O_EXIT_DATA, "rows event is truncated or malformed");
}

static long
len_prefixed(const unsigned char *p, size_t n, unsigned k)
{
	uint64_t l;

	if (k < 1 || k > 4 || n < k)
		return -1;
	l = le_n(p, (int)k);
	if (l > n - k)
		return -1;
	return (long)(k + l);
}

long
bl_cell_len(const struct bl_col *col, const unsigned char *p, size_t n)
{
	long want;
	unsigned m = col->meta, max;

	switch (col->type) {
	case FT_TINY: case FT_YEAR:
		want = 1;
		break;
	case FT_SHORT:
		want = 2;
		break;
	case FT_INT24: case FT_DATE: case FT_NEWDATE: case FT_TIME:
		want = 3;
		break;
	case FT_LONG: case FT_FLOAT: case FT_TIMESTAMP:
		want = 4;
		break;
	case FT_LONGLONG: case FT_DOUBLE: case FT_DATETIME:
		want = 8;
		break;
	case FT_NULL:
		want = 0;
		break;
	case FT_TIMESTAMP2:
		want = 4 + (m + 1) / 2;
		break;
	case FT_DATETIME2:
		want = 5 + (m + 1) / 2;
		break;
	case FT_TIME2:
		want = 3 + (m + 1) / 2;
		break;
	case FT_NEWDECIMAL:
		want = my_decimal_bin_size(m >> 8, m & 0xff);
		break;
	case FT_BIT:
		want = (m >> 8) + ((m & 0xff) ? 1 : 0);
		break;
	case FT_VARCHAR: case FT_VAR_STRING:
		return len_prefixed(p, n, m < 256 ? 1 : 2);
	case FT_BLOB: case FT_GEOMETRY: case FT_JSON:
	case FT_TINY_BLOB: case FT_MEDIUM_BLOB: case FT_LONG_BLOB:
		return len_prefixed(p, n, m);
	case FT_STRING: case FT_ENUM: case FT_SET:
		max = string_max_len(col);
		if (col->real == FT_ENUM || col->real == FT_SET) {
			want = m & 0xff;
			break;
		}
		return len_prefixed(p, n, max < 256 ? 1 : 2);
	default:
		return -1;	/* a type with no known size */
	}
	if (want < 0 || (size_t)want > n)
		return -1;
	return want;
}

int
bl_image_next(const struct bl_rows *r, const struct bl_table_map *tm,
    const unsigned char *present, size_t *off, struct bl_cell *cells,
    struct p2o_err *e)
{
	const unsigned char *p = r->rows + *off, *nulls;
	size_t n = r->rowslen - *off, nbits = 0, bit = 0, nb;
	long cl;
	int i;

	if (n == 0)
		return 0;
	if (r->ncols != tm->ncols)
		return p2o_fail(e, P2O_EXIT_DATA, "rows event column count differs "
		    "from its table map");
	if (r->partial && present == r->present2) {
		/* value_options, and the partial-JSON bitmap */
		struct bcur c;
		uint64_t opts;

		bcur_init(&c, p, n);
		opts = bcur_packed(&c);
		if (opts & 1) {
			size_t nj = 0;

			for (i = 0; i < tm->ncols; i++)
				nj += tm->cols[i].type == FT_JSON;
			bcur_take(&c, (nj + 7) / 8);
		}
		if (c.bad)
			goto bad;
		p += c.off;
		n -= c.off;
	}
	for (i = 0; i < r->ncols; i++)
		nbits += (present[i / 8] >> (i % 8)) & 1;
	/* an image of no column takes no bytes: the rows after it would
	 * never end */
	if (nbits == 0)
		return p2o_fail(e, P2O_EXIT_DATA, "rows event image holds no column");
	nb = (nbits + 7) / 8;
	if (n < nb)
		goto bad;
	nulls = p;
	p += nb;
	n -= nb;
	for (i = 0; i < tm->ncols; i++) {
		memset(&cells[i], 0, sizeof(cells[i]));
		if (!((present[i / 8] >> (i % 8)) & 1))
			continue;
		cells[i].present = 1;
		if ((nulls[bit / 8] >> (bit % 8)) & 1) {
			cells[i].null = 1;
			bit++;
			continue;
		}
		bit++;
		if ((cl = bl_cell_len(&tm->cols[i], p, n)) < 0) {
			return p2o_fail(e, P2O_EXIT_DATA, "column %d (type %u) "
			    "of a rows event is truncated or of an unknown type",
			    i + 1, tm->cols[i].type);
		}
		cells[i].p = p;
		cells[i].n = (size_t)cl;
		p += cl;
		n -= (size_t)cl;
	}
	*off = (size_t)(p - r->rows);
	return 1;
bad:
	return p2o_fail(e, P2O_EXIT_DATA, "rows event image is truncated");
}
