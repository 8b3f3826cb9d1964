/*
 * config_pack.h - the strings of a loaded configuration's sections in one
 * block, each distinct string once (config_pack.c). Internal to
 * lib/config*.c: config_load_with packs, config_release unpacks.
 */
#ifndef CONFIG_PACK_H
#define CONFIG_PACK_H

struct config;

/* moves the sections' names, tables, indices, ids and their templates
 * into cfg->pack; a configuration built by hand is never packed. Never
 * fails (an allocation failure aborts, as everywhere) */
void	config_pack(struct config *);
/* frees cfg->pack and clears the fields pointing into it, before the
 * rest is released field by field */
void	config_unpack(struct config *);

#endif
