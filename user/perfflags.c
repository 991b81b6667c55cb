/* perfflags.c - perf record's -C, -e and -c words (see perfflags.h). */
#include "user/perfflags.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int st_perfflags__cpus(const char *list, __u64 *cpus, char *err, size_t errlen)
{
	const char *p = list;

	for (;;) {
		char *end;
		long lo, hi;

		errno = 0;
		lo = hi = strtol(p, &end, 10);
		if (end > p && *end == '-') {
			const char *q = end + 1;

			hi = strtol(q, &end, 10);
			if (end == q)
				break;
		}
		if (errno || end == p || (*end && *end != ',') || lo < 0 || hi < lo ||
		    hi >= ST_MAX_CPUS || *p == '-' || *p == '+' || *p == ' ')
			break;
		for (long c = lo; c <= hi; c++)
			cpus[c / 64] |= 1ull << (c % 64);
		if (!*end)
			return 0;
		p = end + 1;
	}
	snprintf(err, errlen, "invalid -C '%s': give CPUs 0..%d as a list like 0,2-3", list,
		 ST_MAX_CPUS - 1);
	return -EINVAL;
}

/* Names perf gives hardware events, raw events (rNNN) and pmu/config/. */
static bool hardware_event(const char *e, size_t len)
{
	static const char *const hw[] = {
		"cycles", "cpu-cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-instructions", "branch-misses", "bus-cycles", "ref-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend", "idle-cycles-frontend",
		"idle-cycles-backend",
	};
	size_t hex = 0;

	for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++)
		if (strlen(hw[i]) == len && !strncmp(e, hw[i], len))
			return true;
	while (1 + hex < len && strchr("0123456789abcdefABCDEF", e[1 + hex]))
		hex++;
	return (len > 1 && e[0] == 'r' && 1 + hex == len) || memchr(e, '/', len);
}

int st_perfflags__events(const char *list, bool have_pmu, unsigned *events, char *err,
			 size_t errlen)
{
	const char *p = list;
	bool cpu = false, wall = false;

	*events = 0;
	for (;;) {
		size_t len = strcspn(p, ","), name = len;
		const char *mod = memchr(p, ':', len);

		if (mod && !memchr(p, '/', len)) {
			name = (size_t)(mod - p);
			if (len - name != 2 || mod[1] != 'u') {
				snprintf(err, errlen, "-e %.*s: only the :u modifier holds (user "
					 "stacks; --kernel adds kernel frames)", (int)len, p);
				return -EINVAL;
			}
		}
#define IS(w) (name == strlen(w) && !strncmp(p, w, name))
		if (IS("cpu") || IS("cpu-clock")) {
			*events |= 1u << ST_EVENT_CPU;
			cpu = true;
		} else if (IS("faults") || IS("page-faults")) {
			*events |= 1u << ST_EVENT_FAULTS;
		} else if (IS("offcpu") || IS("off-cpu")) {
			*events |= 1u << ST_EVENT_OFFCPU;
		} else if (IS("wall")) {
			*events |= 1u << ST_EVENT_CPU | ST_EVENTS_WALL;
			wall = true;
		} else if (!name) {
			snprintf(err, errlen, "-e '%s': give cpu-clock, page-faults, offcpu or wall, "
				 "or a comma list of them", list);
			return -EINVAL;
		} else if (hardware_event(p, name)) {
			snprintf(err, errlen, "-e %.*s: a hardware event, which stacktreed does not "
				 "sample%s: give cpu-clock or page-faults", (int)name, p,
				 have_pmu ? "" : " (and this machine has no hardware PMU)");
			return -EINVAL;
		} else {
			snprintf(err, errlen, "-e %.*s: stacktreed samples cpu-clock (cpu), "
				 "page-faults (faults), offcpu and wall only", (int)name, p);
			return -EINVAL;
		}
#undef IS
		if (wall && (cpu || (*events & (1u << ST_EVENT_OFFCPU)))) {
			snprintf(err, errlen, "-e '%s': wall is on-CPU and off-CPU time in one tree: "
				 "give it without cpu and offcpu (cpu,offcpu: two trees)", list);
			return -EINVAL;
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int st_perfflags__count(double n, unsigned events, __u32 *freq, char *err, size_t errlen)
{
	if (!(events & (1u << ST_EVENT_CPU))) {
		if (n == 1)
			return 0;
		if (events & (1u << ST_EVENT_FAULTS))
			snprintf(err, errlen, "-c %.0f: every page fault is recorded: -c 1 (perf's "
				 "meaning for page-faults) is the only period", n);
		else
			snprintf(err, errlen, "-c %.0f: off-CPU time is recorded at every switch: "
				 "-c sets cpu-clock's period (with -e cpu,offcpu or wall)", n);
		return -EINVAL;
	}
	if (events & (1u << ST_EVENT_FAULTS)) {
		snprintf(err, errlen, "-c applies to every -e event and page faults are each "
			 "recorded: with cpu-clock,page-faults give -F for the timer");
		return -EINVAL;
	}
	if (n < 1000 || n > 1e9 || fmod(1e9, n)) {
		snprintf(err, errlen, "-c %.0f: cpu-clock's period in ns must divide one second "
			 "(1000..1000000000, e.g. -c 1000000 for 1000 Hz)", n);
		return -EINVAL;
	}
	*freq = (__u32)(1e9 / n);
	return 0;
}
