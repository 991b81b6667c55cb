/* perfflags.h - perf record's words for stacktreed's settings: -C CPU
 * lists, -e event names, -c sample periods. Pure parsing: on a word that
 * cannot hold, one line in err (no newline) and -EINVAL.
 * Owner: user/perfflags.c. */
#ifndef STACKTREE_PERFFLAGS_H
#define STACKTREE_PERFFLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stacktree.h"

/* -C LIST ("0,2-3"): sets the CPUs' bits in cpus (ST_MAX_CPUS / 64 words). */
int st_perfflags__cpus(const char *list, __u64 *cpus, char *err, size_t errlen);

/* --event wall: the cpu-clock trees (1 << ST_EVENT_CPU, set with it) in
 * time, off-CPU time folded into them: a bit above the kernel's events. */
#define ST_EVENTS_WALL (1u << 8)
/* The kernel's events of an --event set (without ST_EVENTS_WALL). */
#define ST_EVENTS_MASK ((1u << ST_EVENTS) - 1)

/* -e LIST: cpu-clock or cpu, page-faults or faults, offcpu (or off-cpu),
 * wall, perf's :u suffix; *events = 1 << ST_EVENT_CPU | 1 << ST_EVENT_FAULTS
 * | 1 << ST_EVENT_OFFCPU as named, wall: 1 << ST_EVENT_CPU | ST_EVENTS_WALL
 * (wall with cpu or offcpu is refused: it holds both). Hardware
 * events are refused as such (have_pmu false: the line says the machine
 * has no PMU), other events as not sampled. */
int st_perfflags__events(const char *list, bool have_pmu, unsigned *events, char *err,
			 size_t errlen);

/* -c N with the events chosen: cpu-clock's period in ns, which must divide
 * one second (reports keep a whole rate), gives *freq; page faults and
 * off-CPU periods are all recorded, so without cpu-clock only N = 1 holds
 * (*freq untouched), and with cpu-clock and page faults none does. */
int st_perfflags__count(double n, unsigned events, __u32 *freq, char *err, size_t errlen);

#endif
