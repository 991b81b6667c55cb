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

/* -e LIST: cpu-clock or cpu, page-faults or faults, perf's :u suffix;
 * *events = 1 << ST_EVENT_CPU | 1 << ST_EVENT_FAULTS as named. Hardware
 * events are refused as such (have_pmu false: the line says the machine
 * has no PMU), other events as not sampled. */
int st_perfflags__events(const char *list, bool have_pmu, unsigned *events, char *err,
			 size_t errlen);

/* -c N with the events chosen: cpu-clock's period in ns, which must divide
 * one second (reports keep a whole rate), gives *freq; page faults are all
 * recorded, so with them alone only N = 1 holds (*freq untouched), and with
 * both events none does. */
int st_perfflags__count(double n, unsigned events, __u32 *freq, char *err, size_t errlen);

#endif
