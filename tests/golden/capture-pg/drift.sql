-- a table whose shape changes between two rows: the next Relation message
-- says what changed
-- tables: shapes
drop table if exists shapes cascade;
create table shapes (id int primary key, name text, size int);
-- changes
insert into shapes values (1, 'one', 1);
alter table shapes add column color text;
insert into shapes values (2, 'two', 2, 'red');
alter table shapes drop column size;
alter table shapes alter column name type varchar(20);
insert into shapes values (3, 'three', 'blue');
alter table shapes alter column id type bigint;
update shapes set color = 'green' where id = 3;
