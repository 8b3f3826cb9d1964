-- The schema examples/shop.yaml syncs: a small multi-tenant shop.
-- psql -X -v ON_ERROR_STOP=1 -f examples/shop.sql
-- Everything lives in schema shop.
--
-- REPLICA IDENTITY FULL where the configuration reads a column outside the
-- key from an update's before-image: an id, index or routing template, a
-- filter, a fan-out column (capture-pg refuses to start otherwise, naming
-- the table and the column).

create schema shop;
set search_path = shop;

create table tenants (
	id		text primary key,
	name		text not null,
	region		text not null
);

create table customers (
	tenant_id	text not null references tenants,
	id		int not null,
	name		text not null,
	email		text not null,
	phone		text,
	prefs		text,		-- JSON written by the web application
	since		text,		-- 'DD/MM/YYYY', as the old CRM wrote it
	primary key (tenant_id, id)
);
alter table customers replica identity full;

-- a table from an older system: no primary key, but a unique email
create table staff (
	email		text not null,
	name		text not null,
	role		text not null
);
create unique index staff_email on staff (email);
alter table staff replica identity using index staff_email;

-- promoted items, one document per tag
create table promotions (
	id		int primary key,
	tenant_id	text not null references tenants,
	name		text not null,
	price		numeric(10, 2) not null,	-- arrives as a string
	tags		jsonb not null default '[]',	-- ["red", {"tag": "sale", "until": "2025-01-31"}]
	description	text
);
alter table promotions replica identity full;

-- a product's document embeds its variants, its tags and a count of its
-- reviews; a child whose product column is not its key needs FULL, so that
-- a deleted or moved row names the product it leaves
create table products (
	id		int primary key,
	tenant_id	text not null references tenants,
	name		text not null,
	price		numeric(10, 2) not null
);
alter table products replica identity full;	-- routed by tenant_id
create table variants (
	id		int primary key,
	product_id	int not null references products on delete cascade,
	sku		text not null,
	color		text
);
alter table variants replica identity full;
create table tags (
	id		int primary key,
	name		text not null
);
create table product_tags (
	product_id	int references products on delete cascade,
	tag_id		int references tags on delete cascade,
	primary key (product_id, tag_id)
);
create table reviews (
	id		int primary key,
	product_id	int not null references products on delete cascade,
	stars		int not null
);
alter table reviews replica identity full;

create table orders (
	id		bigint primary key,
	tenant_id	text not null references tenants,
	customer_id	int not null,
	status		text not null,
	total		numeric(12, 2) not null,
	placed_at	timestamp not null default now()
);
alter table orders replica identity full;

create table order_lines (
	id		bigint primary key,
	order_id	bigint not null references orders on delete cascade,
	product_id	int not null,
	quantity	int not null,
	unit_price	numeric(10, 2) not null
);
alter table order_lines replica identity full;

-- rows are only ever added; no key at all
create table audit_log (
	tenant_id	text not null,
	actor		text not null,
	action		text not null,
	logged		text not null		-- 'DD/MM/YYYY hh:mm:ss'
);

insert into tenants values ('acme', 'Acme Corp', 'eu'), ('zeta', 'Zeta Ltd', 'us');
insert into customers values
	('acme', 1, 'Ann Lee', 'ann@example.com', '+44 20 7946 0000',
	    '{"newsletter": true}', '05/01/2024'),
	('zeta', 1, 'Bob Roe', 'bob@example.com', null, null, '17/03/2023');
insert into staff values ('eve@example.com', 'Eve Ng', 'support');
insert into promotions values
	(1, 'acme', 'Desk lamp', '24.90', '["home", "light"]', 'A lamp.'),
	(2, 'acme', 'Oak desk', '310.00',
	    '["home", {"tag": "sale", "until": "2025-01-31"}]', 'A desk.');
insert into products values (1, 'acme', 'Desk lamp', '24.90'),
	(2, 'acme', 'Oak desk', '310.00');
insert into variants values (10, 2, 'DESK-OAK', 'oak'), (11, 2, 'DESK-ASH', 'ash'),
	(12, 1, 'LAMP', null);
insert into tags values (1, 'home'), (2, 'office'), (3, 'sale');
insert into product_tags values (1, 1), (2, 1), (2, 2), (2, 3);
insert into reviews values (1, 2, 5), (2, 2, 4), (3, 1, 3);
insert into orders values (100, 'acme', 1, 'paid', '55.80', '2024-06-01 10:30:00');
insert into order_lines values (1000, 100, 1, 2, '24.90'), (1001, 100, 2, 1, '6.00');
insert into audit_log values ('acme', 'ann', 'login', '01/06/2024 10:29:58');
