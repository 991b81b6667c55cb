# Workloads that need more than one source file (included by the Makefile).
$(B)/workloads/libwork.so: tests/workloads/lib/libwork.c tests/workloads/workload.h
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) -fPIC -shared $< -o $@

$(B)/workloads/uselib: tests/workloads/uselib.c tests/workloads/workload.h $(B)/workloads/libwork.so
	@mkdir -p $(@D)
	$(CC) $(WL_CFLAGS) $< -o $@ -L$(B)/workloads -lwork -Wl,-rpath,'$$ORIGIN'

WORKLOAD_EXTRA += $(B)/workloads/libwork.so
