#!/usr/bin/env bash
# A section's where, pushed into the MySQL load's SELECT: for every filter
# the loader reads exactly the rows the shaper keeps, under MariaDB's
# default case-insensitive, PAD SPACE collation (strings are compared as
# their bytes, as the shaper compares them), for dates in their document
# text and zero dates as NULL; a filter the server cannot compute the
# shaper's way (a float) is not pushed down, and every row is read. The
# oracle: the shaper's documents from a load of every row.
. "$(dirname "$0")/../mysql-lib.sh"

my_sql "DROP TABLE IF EXISTS t23w;
CREATE TABLE t23w (id INT PRIMARY KEY, name VARCHAR(20), grp INT,
	price DECIMAL(8,2), day DATE, at DATETIME, ts TIMESTAMP(3) NULL,
	tag ENUM('b','a'), f FLOAT) DEFAULT CHARSET utf8mb4;
SET SESSION sql_mode = '';
INSERT INTO t23w VALUES
	(1, 'ab', 1, 2.50, '2024-01-02', '2024-01-05 09:59:59', '2024-02-01 00:00:00.001', 'a', 0.3),
	(2, 'Ab', 2, 2.49, '2024-01-03', '2024-01-05 10:00:00', '2024-01-31 23:59:59.999', 'b', 0.1),
	(3, 'AB ', 3, 100.00, '0000-00-00', '0000-00-00 00:00:00', NULL, 'b', 1.5),
	(4, 'a ', 1, NULL, NULL, NULL, '2024-03-01 12:00:00', NULL, NULL),
	(5, 'a', 3, 2.51, '2024-12-31', '2023-12-31 23:59:59', NULL, 'a', 0.3),
	(6, NULL, NULL, 0.00, '2024-01-03', '2024-01-05 10:00:00.000', '2024-02-01 00:00:00', '', -2),
	(7, 'b', 2, 2.50, '2024-01-01', '2024-01-06 00:00:00', '2024-02-02 00:00:00', 'a', 0.3000001),
	(8, 'ÄB', 1, 3.00, '2024-01-04', '2024-01-04 00:00:00', '2024-01-01 00:00:00', 'b', 2);"

# the documents the shaper keeps from a load of every row (no where: the
# loader reads it all), under the filter given
oracle() {	# oracle WHERE -> sorted ids
	{ cat "$T/all.yaml"; echo "    where: \"$1\""; } > "$T/o.yaml"
	shaper -c "$T/o.yaml" --load-fd 4 4< "$T/all.frames" < /dev/null 2>/dev/null |
	    sed -E 's/^[0-9]+ //' | jq -r 'select(.k == "index") | .id' | sort -n | tr '\n' ' '
}
my_config "$T/all.yaml" t23 t23w
loader -c "$T/all.yaml" > "$T/all.frames" 2> "$T/all.err"
ok $? "a load of every row"
all=$(frames "$T/all.frames" | jq -r 'select(.k == "row") | .new.id' | sort -n | tr '\n' ' ')

n=0
while IFS= read -r w; do
	[ -z "$w" ] && continue
	n=$((n + 1))
	{ cat "$T/all.yaml"; echo "    where: \"$w\""; } > "$T/w$n.yaml"
	loader -c "$T/w$n.yaml" > "$T/w$n.frames" 2> "$T/w$n.err"
	st=$?
	read=$(frames "$T/w$n.frames" | jq -r 'select(.k == "row") | .new.id' | sort -n | tr '\n' ' ')
	want=$(oracle "$w")
	if grep -q "evaluated on every row read, not by the server" "$T/w$n.err"; then
		ok $([ $st = 0 ] && [ "$read" = "$all" ]; echo $?) \
		    "not pushed down, every row read: $w ($(grep -o 'server: .*' "$T/w$n.err"))"
	else
		ok $([ $st = 0 ] && [ -n "$want" ] && [ "$read" = "$want" ]; echo $?) \
		    "pushed down, the rows read are the shaper's: $w (read: $read; kept: $want)"
	fi
done <<'WHERE'
name = 'ab'
name = 'a'
name > 'a ' AND name < 'b'
name <> 'ab'
NOT (name = 'ab' OR name IS NULL)
name IN ('AB ', 'ÄB')
grp IN (1, 3) AND price >= 2.5
price > 2.49 AND price <= 2.51
day >= '2024-01-03' OR day IS NULL
at < '2024-01-05T10:00:00'
at = '2024-01-05T10:00:00'
ts IS NOT NULL AND ts > '2024-02-01T00:00:00Z'
ts < '2024-02-01T00:00:00.001Z'
tag = 'b' OR tag = ''
NOT (tag IN ('a'))
f > 0.3
WHERE

# how many rows the server sends: the filter is its, not the loader's
my_config "$T/grp.yaml" t23 t23w
echo "    where: \"grp = 2\"" >> "$T/grp.yaml"
loader -c "$T/grp.yaml" > "$T/grp.frames" 2> "$T/grp.err"
ok $([ "$(frame_count "$T/grp.frames" '.k == "row"')" = 2 ]; echo $?) \
	"with grp = 2 the server sends 2 of the 8 rows"
my_sql "DROP TABLE t23w"
done_testing
