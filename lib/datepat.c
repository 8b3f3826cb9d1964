/*
 * datepat.c - the date transform's patterns (datepat.h): the check the
 * configuration runs on a pattern and the reading the shaper does with it
 * walk the same directives, so the two cannot disagree about what a
 * pattern means. Also what "ISO 8601 already" is, and the SQL spelling a
 * pattern-less date converts. Never allocates more than the output; never
 * reads past n bytes of a value.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "datepat.h"
#include "sbuf.h"

struct when {
	int	 y, mo, d, h, mi, s;
	int	 has_time, has_sec;
	const char *frac;	/* the fraction's digits, or NULL */
	int	 nfrac;
	int	 tz;		/* 0 none, 'Z', '+' or '-' */
	int	 tzh, tzm;
};

/* min to max digits at p[*i]: the value, or -1 */
static int
digits(const char *p, size_t len, size_t *i, int min, int max)
{
	int v = 0, k = 0;

	while (*i < len && k < max && isdigit((unsigned char)p[*i])) {
		v = v * 10 + (p[*i] - '0');
		(*i)++;
		k++;
	}
	return k >= min ? v : -1;
}

static int
leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
valid(const struct when *w)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	int dim;

	if (w->y < 1 || w->mo < 1 || w->mo > 12 || w->d < 1)
		return 0;
	dim = mdays[w->mo - 1] + (w->mo == 2 && leap(w->y));
	return w->d <= dim && w->h >= 0 && w->h <= 23 && w->mi >= 0 &&
	    w->mi <= 59 && w->s >= 0 && w->s <= 59 && w->tzh <= 23 &&
	    w->tzm <= 59;
}

/* YYYY-MM-DD, then optionally sep hh:mm[:ss[.fraction]][Z|+hh[[:]mm]]:
 * 1 when s is exactly that */
static int
iso_like(const char *s, size_t n, char sep, struct when *w)
{
	size_t i = 0;

	memset(w, 0, sizeof(*w));
	if ((w->y = digits(s, n, &i, 4, 4)) < 0 || i >= n || s[i++] != '-' ||
	    (w->mo = digits(s, n, &i, 2, 2)) < 0 || i >= n ||
	    s[i++] != '-' || (w->d = digits(s, n, &i, 2, 2)) < 0)
		return 0;
	if (i == n)
		return valid(w);
	if (s[i++] != sep || (w->h = digits(s, n, &i, 2, 2)) < 0 ||
	    i >= n || s[i++] != ':' || (w->mi = digits(s, n, &i, 2, 2)) < 0)
		return 0;
	w->has_time = 1;
	if (i < n && s[i] == ':') {
		i++;
		if ((w->s = digits(s, n, &i, 2, 2)) < 0)
			return 0;
		w->has_sec = 1;
		if (i < n && s[i] == '.') {
			i++;
			if (digits(s, n, &i, 1, 9) < 0)
				return 0;
		}
	}
	if (i < n && s[i] == 'Z')
		i++;
	else if (i < n && (s[i] == '+' || s[i] == '-')) {
		i++;
		if (digits(s, n, &i, 2, 2) < 0)
			return 0;
		if (i < n && s[i] == ':')
			i++;
		if (i < n && digits(s, n, &i, 2, 2) < 0)
			return 0;
	}
	return i == n && valid(w);
}

/* ---- tokens: YYYY MM DD hh mm ss ---- */

static const char *const tokens[] = { "YYYY", "MM", "DD", "hh", "mm", "ss" };

static int
token_at(const char *p)
{
	int i;

	for (i = 0; i < 6; i++)
		if (strncmp(p, tokens[i], strlen(tokens[i])) == 0)
			return i;
	return -1;
}

static int
check_tokens(const char *s, char *why, size_t len)
{
	int seen[6] = { 0 }, i;
	const char *p = s;

	while (*p) {
		if ((i = token_at(p)) >= 0) {
			if (seen[i]++) {
				snprintf(why, len, "names %s twice", tokens[i]);
				return -1;
			}
			p += strlen(tokens[i]);
			continue;
		}
		if (isalpha((unsigned char)*p)) {
			snprintf(why, len, "must be made of YYYY, MM, DD, hh, "
			    "mm, ss and separators (found '%c'), or of "
			    "strptime-style directives such as %%Y", *p);
			return -1;
		}
		p++;
	}
	if (!seen[0] || !seen[1] || !seen[2]) {
		snprintf(why, len, "must hold YYYY, MM and DD");
		return -1;
	}
	if ((seen[5] && !seen[4]) || (seen[4] && !seen[3])) {
		snprintf(why, len, "must not hold mm without hh or ss "
		    "without mm");
		return -1;
	}
	return 0;
}

static int
by_tokens(const char *pat, const char *s, size_t n, struct when *w)
{
	size_t i = 0;
	int v, k;

	memset(w, 0, sizeof(*w));
	while (*pat) {
		if ((k = token_at(pat)) == 0) {
			if ((w->y = digits(s, n, &i, 4, 4)) < 0)
				return 0;
		} else if (k > 0) {
			if ((v = digits(s, n, &i, 1, 2)) < 0)
				return 0;
			switch (k) {
			case 1: w->mo = v; break;
			case 2: w->d = v; break;
			case 3: w->h = v, w->has_time = 1; break;
			case 4: w->mi = v; break;
			default: w->s = v, w->has_sec = 1; break;
			}
		} else {
			if (i >= n || s[i] != *pat)
				return 0;
			i++;
			pat++;
			continue;
		}
		pat += strlen(tokens[k]);
	}
	return i == n && valid(w);
}

/* ---- strptime-style directives ---- */

/* the fields a pattern fills, each at most once */
enum field { F_YEAR, F_MONTH, F_DAY, F_HOUR, F_AMPM, F_MIN, F_SEC, F_FRAC,
	F_ZONE, F_WDAY, F_NFIELDS };

static const char *const field_name[F_NFIELDS] = { "the year", "the month",
	"the day", "the hour", "AM/PM", "the minute", "the second",
	"the fraction", "the offset", "the weekday" };

static const char *const months[] = { "january", "february", "march",
	"april", "may", "june", "july", "august", "september", "october",
	"november", "december" };
static const char *const weekdays[] = { "monday", "tuesday", "wednesday",
	"thursday", "friday", "saturday", "sunday" };

/* a directive that stands for several */
static const char *
composite(char c)
{
	switch (c) {
	case 'F': return "%Y-%m-%d";
	case 'T': return "%H:%M:%S";
	case 'R': return "%H:%M";
	case 'D': return "%m/%d/%y";
	}
	return NULL;
}

/* the field one directive fills, -1 for a literal one (%%), -2 unknown */
static int
field_of(char c)
{
	switch (c) {
	case 'Y': case 'y': return F_YEAR;
	case 'm': case 'b': case 'B': case 'h': return F_MONTH;
	case 'd': case 'e': return F_DAY;
	case 'H': case 'I': return F_HOUR;
	case 'p': return F_AMPM;
	case 'M': return F_MIN;
	case 'S': return F_SEC;
	case 'f': return F_FRAC;
	case 'z': return F_ZONE;
	case 'a': case 'A': return F_WDAY;
	case '%': return -1;
	}
	return -2;
}

struct pstate {
	int	 seen[F_NFIELDS];
	int	 twelve;	/* the hour is %I's */
};

static int
check_walk(const char *p, struct pstate *st, char *why, size_t len)
{
	const char *sub;
	int f;

	for (; *p; p++) {
		if (*p != '%')
			continue;
		if (*++p == '\0') {
			snprintf(why, len, "ends with a lone '%%' (write %%%% "
			    "for a percent sign)");
			return -1;
		}
		if ((sub = composite(*p)) != NULL) {
			if (check_walk(sub, st, why, len) == -1)
				return -1;
			continue;
		}
		if ((f = field_of(*p)) == -1)
			continue;
		if (f == -2) {
			snprintf(why, len, "has '%%%c', which the date transform "
			    "does not read (it reads %%Y %%y %%m %%b %%B %%h %%d "
			    "%%e %%H %%I %%p %%M %%S %%f %%z %%a %%A %%F %%T %%R "
			    "%%D %%%%)", *p);
			return -1;
		}
		if (st->seen[f]++) {
			snprintf(why, len, "reads %s twice", field_name[f]);
			return -1;
		}
		if (*p == 'I')
			st->twelve = 1;
	}
	return 0;
}

static int
check_directives(const char *s, char *why, size_t len)
{
	struct pstate st;
	const int *seen = st.seen;

	memset(&st, 0, sizeof(st));
	if (check_walk(s, &st, why, len) == -1)
		return -1;
	if (!seen[F_YEAR] || !seen[F_MONTH] || !seen[F_DAY]) {
		snprintf(why, len, "must read the year, the month and the day");
		return -1;
	}
	if ((seen[F_MIN] && !seen[F_HOUR]) || (seen[F_SEC] && !seen[F_MIN]) ||
	    (seen[F_FRAC] && !seen[F_SEC])) {
		snprintf(why, len, "must not read the minute without the hour, "
		    "the second without the minute or a fraction without the "
		    "second");
		return -1;
	}
	if (st.twelve != seen[F_AMPM]) {
		snprintf(why, len, "must read %%I and %%p together (a 12-hour "
		    "clock needs its AM or PM)");
		return -1;
	}
	return 0;
}

/* an English month or weekday name, whole or its first three letters,
 * in any case: its index, or -1 */
static int
name_at(const char *s, size_t n, size_t *i, const char *const *names,
    int nnames)
{
	size_t len;
	int k;

	for (k = 0; k < nnames; k++) {
		len = strlen(names[k]);
		if (n - *i >= len && strncasecmp(s + *i, names[k], len) == 0) {
			*i += len;
			return k;
		}
	}
	for (k = 0; k < nnames; k++)
		if (n - *i >= 3 && strncasecmp(s + *i, names[k], 3) == 0) {
			*i += 3;
			return k;
		}
	return -1;
}

struct reading {
	struct when w;
	int	 hour12, pm;	/* %I and %p: -1 when not read */
};

static int
read_walk(const char *p, const char *s, size_t n, size_t *i,
    struct reading *r)
{
	struct when *w = &r->w;
	const char *sub;
	int v;

	for (; *p; p++) {
		if (*p != '%') {
			if (*i >= n || s[*i] != *p)
				return 0;
			(*i)++;
			continue;
		}
		p++;
		if ((sub = composite(*p)) != NULL) {
			if (!read_walk(sub, s, n, i, r))
				return 0;
			continue;
		}
		v = 0;
		switch (*p) {
		case 'Y':
			v = w->y = digits(s, n, i, 4, 4);
			break;
		case 'y':
			/* POSIX: 69-99 are the 1900s, 00-68 the 2000s */
			if ((v = digits(s, n, i, 2, 2)) >= 0)
				w->y = v < 69 ? 2000 + v : 1900 + v;
			break;
		case 'm':
			v = w->mo = digits(s, n, i, 1, 2);
			break;
		case 'b': case 'B': case 'h':
			if ((v = name_at(s, n, i, months, 12)) >= 0)
				w->mo = v + 1;
			break;
		case 'e':
			if (*i < n && s[*i] == ' ')
				(*i)++;
			/* FALLTHROUGH */
		case 'd':
			v = w->d = digits(s, n, i, 1, 2);
			break;
		case 'H':
			v = w->h = digits(s, n, i, 1, 2);
			w->has_time = 1;
			break;
		case 'I':
			v = r->hour12 = digits(s, n, i, 1, 2);
			w->has_time = 1;
			if (v == 0 || v > 12)
				return 0;
			break;
		case 'p':
			if (n - *i >= 2 && (strncasecmp(s + *i, "am", 2) == 0 ||
			    strncasecmp(s + *i, "pm", 2) == 0)) {
				r->pm = tolower((unsigned char)s[*i]) == 'p';
				*i += 2;
			} else
				v = -1;
			break;
		case 'M':
			v = w->mi = digits(s, n, i, 1, 2);
			break;
		case 'S':
			v = w->s = digits(s, n, i, 1, 2);
			w->has_sec = 1;
			break;
		case 'f':
			w->frac = s + *i;
			v = digits(s, n, i, 1, 9);
			w->nfrac = (int)(s + *i - w->frac);
			break;
		case 'z':
			if (*i < n && s[*i] == 'Z') {
				w->tz = 'Z';
				(*i)++;
				break;
			}
			if (*i >= n || (s[*i] != '+' && s[*i] != '-'))
				return 0;
			w->tz = s[(*i)++];
			if ((w->tzh = digits(s, n, i, 2, 2)) < 0)
				return 0;
			if (*i < n && s[*i] == ':')
				(*i)++;
			v = w->tzm = digits(s, n, i, 2, 2);
			break;
		case 'a': case 'A':
			v = name_at(s, n, i, weekdays, 7);
			break;
		default:	/* '%': the check let nothing else through */
			if (*i >= n || s[*i] != '%')
				return 0;
			(*i)++;
			break;
		}
		if (v < 0)
			return 0;
	}
	return 1;
}

static int
by_directives(const char *pat, const char *s, size_t n, struct when *w)
{
	struct reading r;
	size_t i = 0;

	memset(&r, 0, sizeof(r));
	r.hour12 = r.pm = -1;
	if (!read_walk(pat, s, n, &i, &r) || i != n)
		return 0;
	if (r.hour12 >= 0)
		r.w.h = r.hour12 % 12 + (r.pm == 1 ? 12 : 0);
	*w = r.w;
	return valid(w);
}

int
datepat_check(const char *pat, char *why, size_t len)
{
	return strchr(pat, '%') ? check_directives(pat, why, len) :
	    check_tokens(pat, why, len);
}

static void
add_iso(struct sbuf *out, const struct when *w)
{
	sbuf_addf(out, "\"%04d-%02d-%02d", w->y, w->mo, w->d);
	if (w->has_time)
		sbuf_addf(out, "T%02d:%02d", w->h, w->mi);
	if (w->has_sec)
		sbuf_addf(out, ":%02d", w->s);
	if (w->frac) {
		sbuf_addc(out, '.');
		sbuf_add(out, w->frac, (size_t)w->nfrac);
	}
	if (w->tz == 'Z')
		sbuf_addc(out, 'Z');
	else if (w->tz)
		sbuf_addf(out, "%c%02d:%02d", w->tz, w->tzh, w->tzm);
	sbuf_addc(out, '"');
}

enum datepat_result
datepat_convert(const char *pat, const char *s, size_t n, struct sbuf *out)
{
	struct when w;
	size_t start = out->len;

	if (iso_like(s, n, 'T', &w))
		return DATEPAT_ISO;
	if (pat != NULL) {
		if (!(strchr(pat, '%') ? by_directives(pat, s, n, &w) :
		    by_tokens(pat, s, n, &w)))
			return DATEPAT_NO;
		add_iso(out, &w);
		return DATEPAT_CONVERTED;
	}
	if (!iso_like(s, n, ' ', &w))
		return DATEPAT_NO;
	/* the SQL spelling: only the separator differs */
	sbuf_add_jstr(out, s, n);
	out->buf[start + 1 + 10] = 'T';
	return DATEPAT_CONVERTED;
}
