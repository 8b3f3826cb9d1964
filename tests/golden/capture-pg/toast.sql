-- an out-of-line value left unchanged by an update: sent as a marker under
-- the default identity, whole from the old row under REPLICA IDENTITY FULL
-- tables: docs docs_full
drop table if exists docs, docs_full cascade;
create table docs (id int primary key, title text, body text);
alter table docs alter column body set storage external;
create table docs_full (id int primary key, title text, body text);
alter table docs_full alter column body set storage external;
alter table docs_full replica identity full;
-- changes
insert into docs select 1, 't', string_agg(md5(i::text), '') from generate_series(1, 100) i;
insert into docs_full select 1, 't', string_agg(md5(i::text), '') from generate_series(1, 100) i;
update docs set title = 'changed' where id = 1;
update docs_full set title = 'changed' where id = 1;
update docs set id = 2, title = 'moved' where id = 1;
delete from docs_full where id = 1;
