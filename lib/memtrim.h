/*
 * memtrim.h - handing an idle process's free heap pages back to the
 * system. A stage's heap holds at its busiest what an initial load or a
 * burst needed, and glibc returns only the top of it on its own: what was
 * freed below a block still in use stays resident. With several sources
 * in one supervisor every source's stages keep theirs for as long as
 * they run (docs/benchmarks.md, "sources in one process"), so a stage
 * with nothing to do calls mem_idle_trim.
 */
#ifndef MEMTRIM_H
#define MEMTRIM_H

/* the program has nothing to do now (now_ms's clock): the free pages of
 * its heap are returned, unless nothing was done since the last time
 * (mem_busy) or that was less than MEMTRIM_EVERY_MS ago. Returns the ms
 * until a call would trim, for a caller about to wait, or -1 when none is
 * due. Never fails */
long long mem_idle_trim(long long now);
/* something was done since: the next idle moment trims again */
void	mem_busy(void);
/* the free pages returned now, after a burst done once (the
 * configuration loaded: its parse tree and the strings config_pack.c
 * moved leave holes below what stays). Never fails */
void	mem_trim(void);

/* a burst of small transactions goes idle between each: trimming after
 * every one would make the next fault its pages in again */
#define MEMTRIM_EVERY_MS	1000

#endif
