// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "actuate/contest.h"

static uint64_t hold_for(uint32_t holds)
{
	uint64_t ns = CONTEST_HOLD_FIRST_NS;

	for (uint32_t i = 1; i < holds && ns < CONTEST_HOLD_MAX_NS; i++)
		ns *= 2;
	return ns < CONTEST_HOLD_MAX_NS ? ns : CONTEST_HOLD_MAX_NS;
}

enum contest_verdict contest_judge(struct contest *c, uint64_t now_ns)
{
	if (contest_held(c, now_ns))
		return CONTEST_HELD;
	/* The last answer stood a whole window: whoever wrote now is not fighting it. */
	if (c->last_ns && now_ns - c->last_ns >= CONTEST_WINDOW_NS)
		c->strikes = c->holds = 0;
	/* This write undid the last answer (the first one has none before it). */
	if (c->last_ns)
		c->strikes++;
	if (c->holds || c->strikes >= CONTEST_STRIKES) {
		c->holds++;
		c->hold_until_ns = now_ns + hold_for(c->holds);
		return CONTEST_BACK_OFF;
	}
	c->last_ns = now_ns;
	return CONTEST_ANSWER;
}

uint64_t contest_hold_ns(const struct contest *c)
{
	return hold_for(c->holds);
}

bool contest_held(const struct contest *c, uint64_t now_ns)
{
	return c->hold_until_ns && now_ns < c->hold_until_ns;
}

bool contest_hold_over(struct contest *c, uint64_t now_ns)
{
	if (!c->hold_until_ns || now_ns < c->hold_until_ns)
		return false;
	c->hold_until_ns = 0;
	c->last_ns = now_ns;
	return true;
}
