/* test_perfflags.c - perf's -C, -e and -c words (user/perfflags.h): CPU
 * lists and ranges, event names and :u, the refusals and their reasons,
 * cpu-clock periods that give a whole rate and those that do not. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "user/perfflags.h"

static void test_cpus(void **state)
{
	__u64 cpus[ST_MAX_CPUS / 64];
	char err[256];

	(void)state;
	memset(cpus, 0, sizeof(cpus));
	assert_int_equal(st_perfflags__cpus("0,2-3,64,1023", cpus, err, sizeof(err)), 0);
	assert_true(cpus[0] == 0xdull && cpus[1] == 1 && cpus[15] == 1ull << 63);
	for (int i = 2; i < 15; i++)
		assert_true(cpus[i] == 0);
	memset(cpus, 0, sizeof(cpus));
	assert_int_equal(st_perfflags__cpus("5-5", cpus, err, sizeof(err)), 0);
	assert_true(cpus[0] == 1ull << 5);
	static const char *const bad[] = { "", ",", "1,", ",1", "1,,2", "3-1", "1-", "-1", "+1",
					   " 1", "1024", "0-1024", "a", "1 ", "1-2-3", "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(st_perfflags__cpus(bad[i], cpus, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "invalid -C"));
	}
}

static void test_events(void **state)
{
	unsigned ev;
	char err[256];

	(void)state;
	assert_int_equal(st_perfflags__events("cpu-clock", false, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev, 1u << ST_EVENT_CPU);
	assert_int_equal(st_perfflags__events("page-faults:u", false, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev, 1u << ST_EVENT_FAULTS);
	assert_int_equal(st_perfflags__events("cpu,faults", false, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev, (1u << ST_EVENT_CPU) | (1u << ST_EVENT_FAULTS));
	assert_int_equal(st_perfflags__events("faults,cpu-clock:u,cpu", false, &ev, err,
					      sizeof(err)), 0);
	assert_int_equal(ev, (1u << ST_EVENT_CPU) | (1u << ST_EVENT_FAULTS));
	/* time off the CPU: its own tree, or with the timer's in one (wall) */
	assert_int_equal(st_perfflags__events("offcpu", false, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev, 1u << ST_EVENT_OFFCPU);
	assert_int_equal(st_perfflags__events("cpu,off-cpu", false, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev, (1u << ST_EVENT_CPU) | (1u << ST_EVENT_OFFCPU));
	assert_int_equal(st_perfflags__events("wall", false, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev, (1u << ST_EVENT_CPU) | ST_EVENTS_WALL);
	assert_int_equal(st_perfflags__events("wall,faults", false, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev, (1u << ST_EVENT_CPU) | (1u << ST_EVENT_FAULTS) | ST_EVENTS_WALL);
	assert_int_equal(st_perfflags__events("wall,cpu", false, &ev, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "wall is on-CPU and off-CPU time in one tree"));
	assert_int_equal(st_perfflags__events("offcpu,wall", false, &ev, err, sizeof(err)),
			 -EINVAL);

	assert_int_equal(st_perfflags__events("cycles", false, &ev, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "-e cycles: a hardware event, which stacktreed does not sample "
			    "(and this machine has no hardware PMU): give cpu-clock or page-faults");
	assert_int_equal(st_perfflags__events("cpu,instructions:u", true, &ev, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "-e instructions: a hardware event, which stacktreed does not "
			    "sample: give cpu-clock or page-faults");
	assert_int_equal(st_perfflags__events("r01c2", true, &ev, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "hardware event"));
	assert_int_equal(st_perfflags__events("cpu/event=0x3c/", true, &ev, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "hardware event"));
	assert_int_equal(st_perfflags__events("task-clock", true, &ev, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "-e task-clock: stacktreed samples cpu-clock (cpu), "
			    "page-faults (faults), offcpu and wall only");
	assert_int_equal(st_perfflags__events("random", true, &ev, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "-e random: stacktreed samples"));
	assert_int_equal(st_perfflags__events("cpu-clock:k", true, &ev, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "-e cpu-clock:k: only the :u modifier"));
	assert_int_equal(st_perfflags__events("cpu:uk", true, &ev, err, sizeof(err)), -EINVAL);
	assert_int_equal(st_perfflags__events("", true, &ev, err, sizeof(err)), -EINVAL);
	assert_int_equal(st_perfflags__events("cpu,", true, &ev, err, sizeof(err)), -EINVAL);
	assert_int_equal(st_perfflags__events(":u", true, &ev, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "give cpu-clock, page-faults, offcpu or wall"));
}

static void test_count(void **state)
{
	const unsigned cpu = 1u << ST_EVENT_CPU, faults = 1u << ST_EVENT_FAULTS;
	__u32 freq = 99;
	char err[256];

	(void)state;
	assert_int_equal(st_perfflags__count(1000000, cpu, &freq, err, sizeof(err)), 0);
	assert_int_equal(freq, 1000);
	assert_int_equal(st_perfflags__count(10101010, cpu, &freq, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "-c 10101010: cpu-clock's period in ns must divide one second "
			    "(1000..1000000000, e.g. -c 1000000 for 1000 Hz)");
	assert_int_equal(freq, 1000);
	assert_int_equal(st_perfflags__count(1000, cpu, &freq, err, sizeof(err)), 0);
	assert_int_equal(freq, 1000000);
	assert_int_equal(st_perfflags__count(1e9, cpu, &freq, err, sizeof(err)), 0);
	assert_int_equal(freq, 1);
	assert_int_equal(st_perfflags__count(500, cpu, &freq, err, sizeof(err)), -EINVAL);
	assert_int_equal(st_perfflags__count(2e9, cpu, &freq, err, sizeof(err)), -EINVAL);
	freq = 7;
	assert_int_equal(st_perfflags__count(1, faults, &freq, err, sizeof(err)), 0);
	assert_int_equal(freq, 7);
	assert_int_equal(st_perfflags__count(10, faults, &freq, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "every page fault is recorded"));
	assert_int_equal(st_perfflags__count(10, 1u << ST_EVENT_OFFCPU, &freq, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "off-CPU time is recorded at every switch"));
	assert_int_equal(st_perfflags__count(1000000, cpu | ST_EVENTS_WALL, &freq, err,
					     sizeof(err)), 0);
	assert_int_equal(freq, 1000);
	assert_int_equal(st_perfflags__count(1000000, cpu | faults, &freq, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "give -F for the timer"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpus),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
