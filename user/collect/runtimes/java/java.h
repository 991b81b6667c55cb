/* java.h - the daemon's side of Java: the HotSpot JVMs a session meets.
 *
 * Owner: user/collect/runtimes/java/java.c. After each read of a process's
 * maps, st_java__probe() looks for a JVM in it (jvmproc.h) until one is
 * found (or its tables could not be read); the tables of one libjvm build
 * are read once. For now only counted (the summary's "java: JVMs seen"):
 * the walker of interpreted frames (bpf/javawalk.h) and the namer
 * (jmethod.h) are not called by a session yet (docs/java.md).
 */
#ifndef STACKTREE_JAVA_DAEMON_H
#define STACKTREE_JAVA_DAEMON_H

#include <linux/types.h>

struct st_java;

/* NULL on ENOMEM. */
struct st_java *st_java__new(void);
void st_java__free(struct st_java *j);

/* Look for a JVM in pid (maps just read). Nothing once pid's JVM was
 * found or failed; again at the next read while none is found, and (up
 * to 8 probes) while its tables cannot be read yet. j NULL: nothing. */
void st_java__probe(struct st_java *j, __u32 pid);

/* pid exited or exec'd: the next probe of pid looks anew. */
void st_java__exited(struct st_java *j, __u32 pid);

struct st_java_stats {
	__u64 jvms;		/* processes in which a JVM was found */
	__u64 failed;		/* JVMs whose tables could not be read */
	__u64 table_reads;	/* tables read (the others from the cache) */
};
void st_java__stats(const struct st_java *j, struct st_java_stats *out);

#endif
