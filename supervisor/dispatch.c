/*
 * dispatch.c - the control frames the children send, and what each sets
 * going: hello (a stage is up, those after it start), durable (remembered
 * for the next put), stored (the ack), checkpoint and load (the stages
 * start), marked and confirm (the load's progress), stats (/metrics). What
 * the frames say is msg.c's; the order durable -> stored -> ack is
 * backchannel.c's. A frame that breaks the protocol tears the incarnation
 * down with 65; nothing here exits.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "jscan.h"
#include "log.h"
#include "msg.h"
#include "p2o.h"
#include "supervisor.h"

static void
on_hello(struct sv *sv, int k, const struct frame *f, long long now)
{
	struct sv_child *c = &sv->kid[k];
	struct msg_hello h;
	char why[128];

	if (msg_read_hello(f, &h, why, sizeof(why)) == -1 ||
	    h.proto != P2O_PROTO) {
		sv_teardown(sv, now, P2O_EXIT_DATA, "'%s' speaks control "
		    "protocol %d, this supervisor %d: mixed installations?",
		    sv_kname(sv, k), h.proto, P2O_PROTO);
		return;
	}
	if (c->state != SV_STARTING)
		return;
	c->state = SV_UP;
	log_debug("'%s' is up (pid %d)", sv_kname(sv, k), (int)c->pid);
	/* the loader learns what to load, and where each table was left */
	if (k == SV_LOADER && sv->load_frame != NULL)
		frame_put(sv_child_out(c), sv->load_frame,
		    strlen(sv->load_frame));
	sv_start_after(sv, k, now);
	sv_check_up(sv, now);
}

/* a traced batch is durable: its checkpoint span, from now until ckpt
 * has stored its position (or a later one) */
static void
trace_checkpoint(const struct msg_pos *d)
{
	struct trace_ctx c;
	struct trace_span sp;

	if (trace_ctx_parse(d->trace, strlen(d->trace), &c) == -1 ||
	    trace_span_child(&sp, &c, "checkpoint", trace_now_ns()) == -1)
		return;
	if (d->text)
		trace_attr_str(&sp, "position", d->text, strlen(d->text));
	trace_hold(&sp, d->pos);
}

static void
on_durable(struct sv *sv, const struct frame *f, long long now)
{
	struct msg_pos d;
	char why[256];

	if (msg_read_pos(f, &d, why, sizeof(why)) == -1) {
		sv_teardown(sv, now, P2O_EXIT_DATA, "writer: control fd 3: "
		    "offset %" PRIu64 ": %s", f->offset, why);
		return;
	}
	if (sv_bc_durable(&sv->bc, d.pos, d.text) == -1)
		log_warnx("writer reported durable %" PRIu64 " after %" PRIu64
		    ": ignored", d.pos, sv->bc.durable);
	else if (d.trace[0] && trace_on())
		trace_checkpoint(&d);
	/* a bare pos has no commit time, and so no latency */
	if (d.ts > 0 && d.at > 0)
		sv_hist_observe(&sv->m.indexed, d.at - d.ts);
	if (d.ts > 0 && d.sent > 0)
		sv_hist_observe(&sv->m.sent, d.sent - d.ts);
	if (d.ts > 0 && d.tx > 0)
		sv_hist_observe(&sv->m.streamed, d.tx - d.ts);
	if (d.ts > 0 && d.rx > 0)
		sv_hist_observe(&sv->m.received, d.rx - d.ts);
	if (d.ts > 0 && d.in > 0)
		sv_hist_observe(&sv->m.writer, d.in - d.ts);
	msg_pos_release(&d);
}

static void
on_stored(struct sv *sv, const struct frame *f, long long now)
{
	struct msg_pos st;
	uint64_t ack;
	char why[256];
	int r, s;

	if (msg_read_pos(f, &st, why, sizeof(why)) == -1 ||
	    (r = sv_bc_stored(&sv->bc, st.pos, &ack)) == -1) {
		msg_pos_release(&st);
		sv_teardown(sv, now, P2O_EXIT_DATA, "ckpt answered 'stored' "
		    "for a checkpoint it was not given");
		return;
	}
	sv->m.checkpoint_position = sv->bc.stored;
	log_debug("checkpoint stored at %" PRIu64, st.pos);
	trace_held_end(st.pos);
	/* the new stream has a checkpoint of its own: a restart resumes
	 * from it, and the forgotten load progress is being rebuilt */
	sv_event(sv, EV_STORED, now);
	sv_sweep_maybe(sv, now);
	msg_pos_release(&st);
	/* a loader held back for the first checkpoint */
	if (sv_state_is(sv, PLF_STAGES) && sv->kid[SV_CAPTURE].state == SV_UP)
		sv_start_after(sv, SV_CAPTURE, now);
	if (r != 1)
		return;
	for (s = 0; s < SV_NSTAGES; s++)
		if (sv_stages[s].gets_ack && sv->kid[s].ctl_wfd != -1)
			msg_put_ack(sv_child_out(&sv->kid[s]), ack);
	sv->m.position_confirmed = ack;
}

static void
on_checkpoint(struct sv *sv, const struct frame *f, long long now)
{
	struct msg_pos cp;
	char why[256];

	if (!sv_state_allows(&sv->st, EV_LOADED)) {
		sv_teardown(sv, now, P2O_EXIT_DATA, "ckpt sent a checkpoint "
		    "nobody asked for");
		return;
	}
	if (msg_read_pos(f, &cp, why, sizeof(why)) == -1) {
		sv_teardown(sv, now, P2O_EXIT_DATA, "ckpt sent an unusable "
		    "checkpoint: %s", why);
		return;
	}
	/* the load frame follows: the stages start with both */
	sv->cp_have = cp.present;
	sv->cp_pos = cp.pos;
	free(sv->cp_text);
	sv->cp_text = cp.text;
	cp.text = NULL;
	msg_pos_release(&cp);
}

static void
on_load(struct sv *sv, const struct frame *f, long long now)
{
	struct jspan tables, progress;
	struct msg_pos cp;
	struct jiter it;
	char why[256], *table;
	int r;

	memset(&cp, 0, sizeof(cp));
	if (!sv_state_allows(&sv->st, EV_LOADED) || sv->load_frame != NULL ||
	    msg_read_load(f, &tables, &cp, why, sizeof(why)) == -1) {
		msg_pos_release(&cp);
		sv_teardown(sv, now, P2O_EXIT_DATA, "ckpt sent an unusable or "
		    "unasked-for load frame");
		return;
	}
	msg_pos_release(&cp);
	sv->load_tables = 0;
	jiter_init(&it, tables);
	while ((r = msg_load_next(&it, &table, &progress, why,
	    sizeof(why))) == 1) {
		/* poll mode loads nothing: its first round reads every row,
		 * from the cursor the checkpoint keeps */
		if (!sv->cf.poll) {
			log_info("'%s' %s", table, progress.p ? "resumes its "
			    "initial load" : "needs its initial load");
			sv->load_tables++;
		}
		free(table);
	}
	if (r == -1) {
		sv_teardown(sv, now, P2O_EXIT_DATA, "ckpt: %s", why);
		return;
	}
	sv_event(sv, msg_load_sweep(f) ? EV_SWEEP_OWED : EV_SWEEP_CLEAR, now);
	sv->load_frame = xstrndup(f->obj.p, f->obj.n);
	sv_event(sv, EV_LOADED, now);
}

/* the load's progress, as a line kept under the log on a terminal */
static void
load_status(struct sv *sv, long long now)
{
	uint64_t rows = sv_metrics_total(&sv->m, MC_LOAD_ROWS, NULL);
	uint64_t est = sv_metrics_total(&sv->m, MC_LOAD_ROWS_ESTIMATE, NULL);
	uint64_t done = sv_metrics_total(&sv->m, MC_LOAD_RANGES_DONE, NULL);
	uint64_t ranges = sv_metrics_total(&sv->m, MC_LOAD_RANGES, NULL);
	double r;
	long eta;

	if (sv->load_rows_ms && now > sv->load_rows_ms &&
	    rows >= sv->load_rows_at) {
		r = (double)(rows - sv->load_rows_at) * 1000.0 /
		    (double)(now - sv->load_rows_ms);
		sv->load_rate = sv->load_rate > 0 ? 0.7 * sv->load_rate +
		    0.3 * r : r;
	}
	sv->load_rows_at = rows;
	sv->load_rows_ms = now;
	eta = sv->load_rate > 1 && est > rows ?
	    (long)((double)(est - rows) / sv->load_rate) : 0;
	log_status("loading: %" PRIu64 " of about %" PRIu64 " rows (%d%%), "
	    "ranges %" PRIu64 "/%" PRIu64 ", %.0f rows/s, about %ld:%02ld "
	    "left", rows, est, est ? (int)(rows * 100 / (est > rows ? est :
	    rows)) : 0, done, ranges, sv->load_rate, eta / 60, eta % 60);
}

static void
on_ckpt_frame(struct sv *sv, const struct frame *f, long long now)
{
	switch (msg_kind(f)) {
	case MSG_STORED:
		on_stored(sv, f, now);
		sv_health_update(sv, now);
		break;
	case MSG_CHECKPOINT:
		on_checkpoint(sv, f, now);
		break;
	case MSG_LOAD:
		on_load(sv, f, now);
		break;
	case MSG_MARK_CONFIRM:
		/* the progress is stored: the next wave may start */
		if (sv_will_run(sv, SV_LOADER) &&
		    sv_child_running(&sv->kid[SV_LOADER]))
			frame_put(sv_child_out(&sv->kid[SV_LOADER]), f->obj.p,
			    f->obj.n);
		break;
	default:
		log_debug("ckpt: ignoring a frame of kind %.*s",
		    (int)f->kind.n, f->kind.p);
		break;
	}
}

static void
on_frame(struct sv *sv, int k, const struct frame *f, long long now)
{
	struct jspan tool, counters;
	struct msg_mark mk;
	char why[128];

	if (k == SV_CKPT) {
		on_ckpt_frame(sv, f, now);
		return;
	}
	switch (msg_kind(f)) {
	case MSG_HELLO:
		on_hello(sv, k, f, now);
		break;
	case MSG_STATS:
		if (msg_read_stats(f, &tool, &counters, why, sizeof(why)) == 0)
			sv_metrics_stats(&sv->m, counters);
		if (k == SV_LOADER)
			load_status(sv, now);
		/* when work begins to wait is seen as it happens */
		sv_health_update(sv, now);
		break;
	case MSG_DURABLE:
		if (k == SV_WRITER)
			on_durable(sv, f, now);
		sv_health_update(sv, now);
		break;
	case MSG_MARKED:
		/* every copy row before it is durable: ckpt stores the
		 * loader's progress and answers confirm */
		if (k != SV_WRITER)
			break;
		if (msg_read_mark(f, &mk, why, sizeof(why)) == -1) {
			sv_teardown(sv, now, P2O_EXIT_DATA, "writer: %s", why);
			break;
		}
		log_debug("load mark '%s' is durable", mk.id);
		msg_mark_release(&mk);
		frame_put(sv_child_out(&sv->kid[SV_CKPT]), f->obj.p, f->obj.n);
		break;
	default:
		log_debug("'%s': ignoring a control frame of kind %.*s",
		    sv_kname(sv, k), (int)f->kind.n, f->kind.p);
		break;
	}
}

/*
 * The end of a child's control channel. A child that ends closes it just
 * before its exit status arrives; waiting a moment for that status lets
 * the failure be named by its exit code rather than by its symptom.
 */
static void
ctl_eof(struct sv *sv, int k, long long now)
{
	sv_child_close_ctl(&sv->kid[k]);
	sv->kid[k].ctl_eof_ms = now;
	if (k == SV_CKPT && sv_state_allows(&sv->st, EV_CKPT_GONE)) {
		log_error("ckpt ended before the last checkpoint was stored");
		sv_event(sv, EV_CKPT_GONE, now);
	}
}

void
sv_kid_read(struct sv *sv, int k, long long now)
{
	struct sv_child *c = &sv->kid[k];
	struct frame f;
	ssize_t n;
	int r;

	n = frame_fill(&c->rd);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n == -1)
		c->rd.eof = 1;	/* a reset socket is an end like any other */
	while ((r = frame_next(&c->rd, &f)) == 1 && c->ctl_rfd != -1)
		on_frame(sv, k, &f, now);
	if (r == -1) {
		if (!c->rd.eof) {
			sv_teardown(sv, now, P2O_EXIT_DATA, "'%s': %s",
			    sv_kname(sv, k), c->rd.err);
			sv_child_close_ctl(c);
			return;
		}
		/* a frame cut short by the child's end: the end matters,
		 * not the fragment */
		log_warnx("'%s': %s", sv_kname(sv, k), c->rd.err);
	}
	if (c->rd.eof && c->ctl_rfd != -1)
		ctl_eof(sv, k, now);
}

void
sv_pump_checkpoint(struct sv *sv, long long now)
{
	struct sv_child *ck = &sv->kid[SV_CKPT];
	const char *text;
	uint64_t pos;

	if (ck->ctl_wfd == -1 || !sv_child_running(ck) ||
	    !sv_state_is(sv, PLF_FLOW))
		return;
	if (!sv_bc_next_put(&sv->bc, now, sv_state_is(sv, PLF_FINAL), &pos,
	    &text))
		return;
	msg_put_put(sv_child_out(ck), pos, text);
}
