// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory and I/O interference. Each tick: (1) one entry per unit, (2) each
 * LS unit's stall of the tick shared out among the parties by their
 * evidence (mem_interference.h) and kept as pairs for n ticks, (3) each LS
 * unit's window, (4) each victim's breach explained by the party with the
 * largest share over the kept ticks, reported at most once per report_s
 * per victim and party, and its guilty BE units listed. Memory first, then
 * I/O, through the same steps.
 */
#include "policy/mem_interference.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

/* Which of the two resources a step works on. */
enum resource { RES_MEM = 0, RES_IO };

static int check_config(const struct mem_interference_config *cfg)
{
	if (cfg->n < 1 || cfg->n > BREACH_N_MAX || cfg->k < 1 || cfg->k > cfg->n ||
	    !(cfg->stall_share > 0 && cfg->stall_share <= 1) ||
	    !(cfg->io_share >= 0 && cfg->io_share <= 1) ||
	    !(cfg->culprit_min_share > 0 && cfg->culprit_min_share <= 1) || !(cfg->report_s >= 0))
		return -EINVAL;
	return 0;
}

/* A refault reads back one page: 4 KiB (a larger page only makes refault_wait smaller). */
#define REFAULT_BYTES 4096

/*
 * The unit's block I/O bytes that read back its refaults: a page each, at
 * most all its bytes (refaults of pages another unit read back cost it no
 * bio). Bounded before multiplying: a replayed record may hold anything.
 */
static uint64_t refault_bytes_of(const struct pol_unit *u)
{
	return u->ms.refaults > u->ms.io_bytes / REFAULT_BYTES ? u->ms.io_bytes
							       : u->ms.refaults * REFAULT_BYTES;
}

/*
 * The unit's waits for its refaults that PSI left out. PSI counts a
 * refault's wait as a memory stall only when the page was in the
 * workingset (thrashing); a reader whose pages someone else's page cache
 * pushed out waits on the disk for each of them all the same (issue 35's
 * LS pod: 46 ms reads, 0% memory stall). That wait is its I/O wait beyond
 * the memory stall already counted (a thrashing refault's sleep is in
 * both), times the share of its block I/O that refaults read back.
 */
static uint64_t refault_wait_of(const struct pol_unit *u)
{
	double part;

	if (!u->ms.has_io || !u->ms.io_bytes || u->ms.io_ns <= u->ms.stall_ns)
		return 0;
	part = (double)refault_bytes_of(u) / (double)u->ms.io_bytes;
	return (uint64_t)llround((double)(u->ms.io_ns - u->ms.stall_ns) * part);
}

/* The stall the unit's tasks lost this tick, as measured; 0 when not. */
static uint64_t stall_of(const struct pol_unit *u, enum resource r)
{
	if (r == RES_MEM)
		return u->ms.has_stall ? u->ms.stall_ns + refault_wait_of(u) : 0;
	return u->ms.has_io ? u->ms.io_ns : 0;
}

/* What a unit did that explains someone else's stall: reclaim (memory), bytes (I/O). */
static uint64_t evidence_of(const struct pol_unit *u, enum resource r)
{
	return r == RES_IO ? u->ms.io_bytes : u->ms.reclaim_ns;
}

/* The same for a party outside the units. */
static uint64_t party_evidence_of(const struct pol_mem_party *o, enum resource r)
{
	return r == RES_IO ? o->io_bytes : o->reclaim_ns;
}

/* A pair's worth of a stall: the evidence's share of `rest`, rounded. */
static uint64_t part_of(uint64_t rest, uint64_t e, uint64_t total)
{
	return (uint64_t)llround((double)rest * ((double)e / (double)total));
}

/*
 * The pairs of one victim, appended to b in culprit order (the tick's list
 * is sorted later). A culprit may appear twice (I/O: by its bytes and by
 * the refaults it caused); breach_waits_collect adds them up.
 */
struct pairs {
	struct pol_blame *v;
	size_t n;
};

/* Room for one victim's pairs: I/O's by bytes, then memory's of its refaults. */
static size_t pairs_max(const struct pol_input *in)
{
	return 2 * (in->n_units + in->n_mem_outside + 2);
}

static void add_pair(struct pairs *p, uint64_t victim, uint64_t culprit, uint64_t ns)
{
	if (ns)
		p->v[p->n++] = (struct pol_blame){victim, culprit, ns, 0};
}

/*
 * Shares out `rest` of the victim's stall among the units (and, for the
 * node, the cgroups outside them) by their evidence; `nobody` takes it
 * when nobody shows any. Memory's evidence is the reclaim time: the
 * reclaimer is the charger that found memory short. I/O's is the bytes:
 * a disk is the node's, and a slice streaming from it outside the pods
 * delays them as a pod would. `withheld` of the victim's evidence is not
 * its own doing: it counts in the total, but its part is returned for the
 * caller to share out, not paired with the victim.
 */
static uint64_t share_out(const struct pol_input *in, const struct pol_unit *v, enum resource r,
			  uint64_t rest, bool node, uint64_t nobody, uint64_t withheld,
			  struct pairs *p)
{
	uint64_t total = 0;

	for (size_t i = 0; i < in->n_units; i++)
		total += evidence_of(&in->units[i], r);
	for (size_t i = 0; node && i < in->n_mem_outside; i++)
		total += party_evidence_of(&in->mem_outside[i], r);
	if (!total) {
		add_pair(p, v->id, nobody, rest);
		return 0;
	}
	for (size_t i = 0; i < in->n_units; i++)
		add_pair(
			p, v->id, in->units[i].id,
			part_of(rest,
				evidence_of(&in->units[i], r) - (&in->units[i] == v ? withheld : 0),
				total));
	for (size_t i = 0; node && i < in->n_mem_outside; i++)
		add_pair(p, v->id, in->mem_outside[i].name.id,
			 part_of(rest, party_evidence_of(&in->mem_outside[i], r), total));
	return part_of(rest, withheld, total);
}

/*
 * `amount` of what the victim lost to memory, shared out: the share of
 * the limit hits it met that were its own limit's goes to
 * POL_CULPRIT_LIMIT; the rest to the units by reclaim when an ancestor's
 * limit was hit (or to that ancestor), else to the units and outside
 * parties (or to the node).
 */
static void mem_pairs(const struct pol_input *in, const struct pol_unit *v, uint64_t amount,
		      struct pairs *p)
{
	uint64_t hits = v->ms.limit_hits + v->ms.ancestor_hits, own = 0;

	if (hits)
		own = part_of(amount, v->ms.limit_hits, hits);
	add_pair(p, v->id, POL_CULPRIT_LIMIT, own);
	if (v->ms.ancestor_hits)
		share_out(in, v, RES_MEM, amount - own, false,
			  v->ms.ancestor ? v->ms.ancestor : POL_CULPRIT_NODE, 0, p);
	else if (amount > own)
		share_out(in, v, RES_MEM, amount - own, true, POL_CULPRIT_NODE, 0, p);
}

/*
 * The victim's I/O wait shared out by block I/O bytes, the units' and the
 * outside parties', else to the node (its disks). A refault read is I/O
 * the victim does only because its page was evicted: the part of the wait
 * its refault bytes stand for goes to whoever memory says evicted it (the
 * streamer whose reclaim under kubepods' limit pushed the page out; its
 * own limit; the node), not to the victim itself. Its other bytes (a file
 * it streams, cold misses) stay its own: self.
 */
static void io_pairs(const struct pol_input *in, const struct pol_unit *v, uint64_t amount,
		     struct pairs *p)
{
	mem_pairs(in, v,
		  share_out(in, v, RES_IO, amount, true, POL_CULPRIT_NODE, refault_bytes_of(v), p),
		  p);
}

/* One LS victim's pairs of this tick. */
static void victim_pairs(const struct pol_input *in, const struct pol_unit *v, enum resource r,
			 struct pairs *p)
{
	uint64_t stall = stall_of(v, r);

	if (!stall)
		return;
	if (r == RES_MEM)
		mem_pairs(in, v, stall, p);
	else
		io_pairs(in, v, stall, p);
}

static int cmp_pair(const void *a, const void *b)
{
	const struct pol_blame *x = a, *y = b;

	if (x->victim != y->victim)
		return x->victim < y->victim ? -1 : 1;
	return x->culprit < y->culprit ? -1 : x->culprit > y->culprit;
}

static int cmp_name(const void *a, const void *b)
{
	const struct pol_outside *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Whose stall is shared out: the policy's LS units, or (the CLI's views) every unit. */
static bool is_victim(const struct pol_unit *u, bool every_unit)
{
	return every_unit || qos_is_ls(u->cls);
}

/*
 * (2) The tick's pairs of every victim (is_victim), kept for window_n
 * ticks, and the names of the parties outside the units they may name
 * (ancestors, outside reclaimers).
 */
static int save_pairs(const struct pol_input *in, unsigned int window_n, bool every_unit,
		      struct breach_state *bs, enum resource r)
{
	size_t per = pairs_max(in), n_ls = 0, n_out;
	struct breach_tick *b;
	struct pairs p;

	for (size_t i = 0; i < in->n_units; i++)
		n_ls += is_victim(&in->units[i], every_unit) && stall_of(&in->units[i], r);
	/* I/O names ancestors too: they explain the refaults they evicted. */
	n_out = in->n_mem_ancestors + in->n_mem_outside;
	bs->ancestors = true;
	b = breach_tick_open(bs, window_n, n_ls * per, n_out);
	if (!b)
		return -ENOMEM;
	p = (struct pairs){b->v, 0};
	for (size_t i = 0; i < in->n_units; i++)
		if (is_victim(&in->units[i], every_unit))
			victim_pairs(in, &in->units[i], r, &p);
	if (p.n)
		qsort(p.v, p.n, sizeof(*p.v), cmp_pair);
	b->n = p.n;
	for (size_t i = 0; i < n_out; i++)
		b->out[b->n_out++] =
			i < n_out - in->n_mem_outside
				? in->mem_ancestors[i].name
				: in->mem_outside[i - (n_out - in->n_mem_outside)].name;
	if (b->n_out)
		qsort(b->out, b->n_out, sizeof(*b->out), cmp_name);
	return 0;
}

/* (3) The window of an LS unit whose stall was measured this tick. */
static void unit_update(struct mem_interference_unit *s, const struct pol_unit *u,
			const struct mem_interference_config *cfg, double interval_s)
{
	if (!qos_is_ls(u->cls) || interval_s <= 0)
		return;
	if (u->ms.has_stall) {
		s->mem_share = (double)stall_of(u, RES_MEM) / 1e9 / interval_s;
		s->refault_share = (double)refault_wait_of(u) / 1e9 / interval_s;
		breach_window_push(&s->mem, s->mem_share > cfg->stall_share);
	}
	if (u->ms.has_io && cfg->io_share > 0) {
		s->io_share = (double)u->ms.io_ns / 1e9 / interval_s;
		breach_window_push(&s->io, s->io_share > cfg->io_share);
	}
}

/* A report's own evidence (breach_evidence_fn). */
struct stall_evidence {
	const struct pol_unit *v;
	const struct mem_interference_unit *s;
	const struct mem_interference_config *cfg;
	enum resource r;
};

static void stall_evidence(struct action *a, const void *ctx)
{
	const struct stall_evidence *e = ctx;
	const struct breach_window *w = e->r == RES_MEM ? &e->s->mem : &e->s->io;

	action_evidence(a, "stall_share", e->r == RES_MEM ? e->s->mem_share : e->s->io_share);
	action_evidence(a, "threshold", e->r == RES_MEM ? e->cfg->stall_share : e->cfg->io_share);
	action_evidence(a, "windows_over", breach_windows_over(w, e->cfg->n));
	action_evidence(a, "windows", breach_windows(w, e->cfg->n));
	/* I/O too: they explain who evicted the pages its refaults read back. */
	action_evidence(a, "limit_hits", (double)e->v->ms.limit_hits);
	action_evidence(a, "ancestor_hits", (double)e->v->ms.ancestor_hits);
	action_evidence(a, "refaults", (double)e->v->ms.refaults);
	if (e->r == RES_MEM)
		action_evidence(a, "refault_wait_share", e->s->refault_share);
	else
		action_evidence(a, "refault_byte_share",
				e->v->ms.io_bytes
					? (double)refault_bytes_of(e->v) / (double)e->v->ms.io_bytes
					: 0);
}

/*
 * The causes a breach can have, memory's and I/O's alike: an I/O wait's
 * refault part has memory's (own limit, an ancestor).
 */
#define CAUSES                                                                                     \
	(1u << CAUSE_UNIT | 1u << CAUSE_OUTSIDE | 1u << CAUSE_SELF | 1u << CAUSE_LIMIT |           \
	 1u << CAUSE_ANCESTOR | 1u << CAUSE_NODE)

/* Appends one verdict to the resource's list. */
static int add_guilty(struct mem_interference_state *st, enum resource r, uint64_t culprit,
		      uint64_t victim, double share)
{
	if (r == RES_MEM) {
		if (array_grow((void **)&st->guilty, &st->cap_guilty, st->n_guilty,
			       sizeof(*st->guilty)))
			return -ENOMEM;
		st->guilty[st->n_guilty++] = (struct mem_guilty){culprit, victim, share};
		return 0;
	}
	if (array_grow((void **)&st->io_guilty, &st->cap_io_guilty, st->n_io_guilty,
		       sizeof(*st->io_guilty)))
		return -ENOMEM;
	st->io_guilty[st->n_io_guilty++] = (struct mem_guilty){culprit, victim, share};
	return 0;
}

/*
 * (4) One LS unit: is it a victim, what explains it, who is guilty. Its
 * own limit explaining it makes nobody guilty: the cure is its own limit.
 */
static int judge(const struct pol_input *in, struct mem_interference_state *st,
		 const struct mem_interference_config *cfg, size_t vi, enum resource r,
		 struct action_list *out)
{
	struct breach_state *bs = r == RES_MEM ? &st->mem : &st->io;
	const struct mem_interference_unit *s = &st->units[vi];
	const struct pol_unit *v = &in->units[vi];
	struct stall_evidence e = {v, s, cfg, r};
	double share[CAUSE_NR];
	struct breach_party p;
	struct breach_waits w;
	int err;

	if (breach_windows_over(r == RES_MEM ? &s->mem : &s->io, cfg->n) < cfg->k)
		return 0;
	err = breach_waits_collect(bs, cfg->n, v->id, &w);
	if (err || !breach_explain(in, bs, v->id, &w, &p, share)) {
		free(w.v);
		return err;
	}
	err = breach_report(in, bs, cfg->n, v, &p, share, CAUSES,
			    r == RES_MEM ? RULE_INTERFERENCE_MEMORY : RULE_INTERFERENCE_IO,
			    stall_evidence, &e, out);
	for (size_t i = 0; !err && p.cause != CAUSE_LIMIT && i < w.n; i++) {
		const struct pol_unit *u = pol_input_find(in, w.v[i].culprit);
		double sh = (double)w.v[i].wait_ns / (double)w.total;

		if (u && u->cls == QOS_BE && sh >= cfg->culprit_min_share)
			err = add_guilty(st, r, u->id, v->id, sh);
	}
	free(w.v);
	return err;
}

int mem_interference_run(const struct pol_input *in, const struct mem_interference_config *cfg,
			 struct mem_interference_state *st, struct action_list *out)
{
	int err;

	if (!cfg->enabled) {
		mem_interference_state_free(st);
		return 0;
	}
	err = check_config(cfg);
	if (!err)
		err = breach_units_sync((void **)&st->units, &st->n_units, sizeof(*st->units), in);
	if (err)
		return err;
	st->tick++;
	st->mem.tick = st->io.tick = st->tick;
	st->n_guilty = st->n_io_guilty = 0;
	err = save_pairs(in, cfg->n, false, &st->mem, RES_MEM)
		      ?: save_pairs(in, cfg->n, false, &st->io, RES_IO);
	if (err)
		return err;
	for (size_t i = 0; i < in->n_units; i++)
		unit_update(&st->units[i], &in->units[i], cfg, in->interval_s);
	breach_pairs_expire(&st->mem, in, cfg->report_s);
	breach_pairs_expire(&st->io, in, cfg->report_s);
	for (size_t i = 0; !err && i < in->n_units; i++)
		if (qos_is_ls(in->units[i].cls))
			err = judge(in, st, cfg, i, RES_MEM, out)
				      ?: judge(in, st, cfg, i, RES_IO, out);
	return err;
}

int mem_stall_explain(const struct pol_input *in, bool io, struct mem_stall_explained *out)
{
	enum resource r = io ? RES_IO : RES_MEM;
	struct breach_state bs = {.tick = 1}; /* one window: this input alone */
	int err = save_pairs(in, 1, true, &bs, r);

	for (size_t i = 0; !err && i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];
		struct mem_stall_explained *e = &out[i];
		struct breach_waits w;

		memset(e, 0, sizeof(*e));
		e->stall_ns = stall_of(u, r);
		e->refault_wait_ns = r == RES_MEM ? refault_wait_of(u) : 0;
		if (!e->stall_ns)
			continue;
		err = breach_waits_collect(&bs, 1, u->id, &w);
		if (!err)
			e->explained = breach_explain(in, &bs, u->id, &w, &e->top, e->share);
		free(w.v);
	}
	breach_state_free(&bs);
	return err;
}

void mem_interference_state_free(struct mem_interference_state *st)
{
	free(st->units);
	breach_state_free(&st->mem);
	breach_state_free(&st->io);
	free(st->guilty);
	free(st->io_guilty);
	memset(st, 0, sizeof(*st));
}
