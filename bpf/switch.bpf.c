// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one sched_switch program: the context-switch steps of the sched, cpi,
 * throttle and memstall probes, in one program over the maps each probe created
 * (user space hands their fds over before load: user/probes/switch.c).
 *
 * One program instead of one per probe because entering a BPF program from
 * a tracepoint is not free: on the development VM (retpolines, SRSO "Safe
 * RET") each extra program on sched_switch cost more than the work inside
 * it. Sharing also lets the steps share what they read of the tasks.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "sched_switch.bpf.h"
#include "cpi_switch.bpf.h"
#include "throttle_switch.bpf.h"
#include "memstall_switch.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Which probes' steps run; set by user space before load. */
const volatile bool sched_on = false;
const volatile bool cpi_on = false;
const volatile bool throttle_on = false;
const volatile bool memstall_on = false;

/* `throttle`: whether the throttle step is in the program at all (the lean ones below). */
static __always_inline void on_switch(bool preempt, struct task_struct *prev,
				      struct task_struct *next, bool btf, bool throttle)
{
	__u64 next_cgid = 0;

	/* Both steps need the next task's cgroup: read it once when cpi runs. */
	if (cpi_on && task_tid(next, btf))
		next_cgid = task_cgroup_id(next, btf);
	if (sched_on)
		sched_on_switch(prev, next, cpi_on ? &next_cgid : NULL, btf);
	if (cpi_on)
		cpi_on_switch(next_cgid);
	if (throttle && throttle_on)
		throttle_mark_hierarchy(&prev->se, btf);
	if (memstall_on)
		memstall_on_switch(preempt, prev, next, btf);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(preempt, prev, next, true, true);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(preempt, prev, next, false, true);
	return 0;
}

/*
 * The same without the throttle step, loaded when the throttle probe does
 * not join: its compare-and-swap (5.12) makes an older kernel's verifier
 * refuse the whole program, throttle_on or not (user/probes/bpf_atomics.h).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(btf_switch_lean, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(preempt, prev, next, true, false);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_switch_lean, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(preempt, prev, next, false, false);
	return 0;
}
