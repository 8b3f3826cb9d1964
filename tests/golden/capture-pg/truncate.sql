-- truncate of two tables in one statement, and of one with its sequence
-- tables: a b
drop table if exists a, b cascade;
create table a (id serial primary key, v text);
create table b (id int primary key, a_id int);
-- changes
insert into a (v) values ('x'), ('y');
insert into b values (1, 1);
truncate a, b;
insert into a (v) values ('z');
truncate a restart identity;
