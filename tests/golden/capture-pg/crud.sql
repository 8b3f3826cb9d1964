-- inserts, updates, a key change and deletes of a table with most types
-- tables: items
drop table if exists items cascade;
create table items (id int primary key, title text, price numeric(12,2),
	tags text[], meta jsonb, b bytea, ts timestamptz, d date, f float8,
	flag boolean, big bigint, small smallint, r real);
-- changes
insert into items values (1, 'lamp', 12.50, '{a,"b c"}', '{"x": [1, 2]}',
	'\x00ff10', '2024-02-29 12:34:56.789+02', '2024-02-29', 1.5, true,
	9007199254740993, -3, 0.1);
insert into items (id, title) values (2, 'only a title');
begin;
insert into items (id, title, price) values (3, 'three', 0), (4, 'four', -99.99);
update items set title = 'lamp 2', tags = '{x,NULL,"q\"uote"}' where id = 1;
commit;
update items set id = 10 where id = 2;
delete from items where id = 3;
update items set f = 'NaN', r = '-Infinity', meta = 'null' where id = 4;
