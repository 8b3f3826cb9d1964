-- types the capture maps, and types it passes through as text
-- tables: typed
drop table if exists typed cascade;
drop type if exists mood; drop domain if exists posint;
create type mood as enum ('sad', 'ok', 'happy');
create domain posint as int check (value > 0);
create table typed (id uuid primary key, m mood, p posint, iv interval,
	ip inet, n numeric, t time, tz timetz, ts timestamp, pt point,
	ia int[], m2 int[][], j json, s text, bits bit varying(8), mon money,
	ch char(3), vc varchar(5), rng int4range, xml_ xml);
-- changes
insert into typed values ('6f1c0e3a-5b7d-4c1e-9f00-0123456789ab', 'happy', 7,
	'1 day 02:03:04.5', '10.0.0.1/8', 'NaN', '23:59:59.999999',
	'12:00:00+05:30', '2000-01-01 00:00:00', '(1.5,-2)', '{1,2,3}',
	'{{1,2},{3,4}}', '{"a": "é ☃ \u0001"}', e'line1\nline2\t"quoted" back\\slash ☃',
	B'1011', 12.34, 'ab', 'hello', '[1,10)', '<a>x</a>');
insert into typed (id, n, ia, s) values ('00000000-0000-0000-0000-000000000000',
	'123456789012345678901234567890.123456789012345678901234567890',
	'{NULL,-1}', '');
