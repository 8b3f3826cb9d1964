/*
 * spec.h - the line format of the golden helpers' input files
 * (binlog-decode's NAME.tables, copy-decode's NAME.table): one item a
 * line, its words separated by single spaces, "#" lines and empty lines
 * ignored.
 */
#ifndef SPEC_H
#define SPEC_H

#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define SPEC_WORDS	8

/*
 * The next item of f: its words into w (at most SPEC_WORDS, pointing into
 * *line), their number returned; 0 at the end of the file.
 */
static inline int
spec_next(FILE *f, char **line, size_t *cap, char **w)
{
	char *p;
	int n;

	while (getline(line, cap, f) != -1) {
		(*line)[strcspn(*line, "\r\n")] = '\0';
		if ((*line)[0] == '#' || (*line)[0] == '\0')
			continue;
		for (n = 0, p = strtok(*line, " "); p && n < SPEC_WORDS;
		    p = strtok(NULL, " "))
			w[n++] = p;
		if (n > 0)
			return n;
	}
	return 0;
}

#endif
