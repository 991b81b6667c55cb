/* JfrFold.java - a JDK Flight Recorder file's method samples as folded
 * stacks, for tests/integration/javatruth.py to compare with stacktreed's
 * by one rule (a test tool, built beside the Ledger workload).
 *
 * `jfr print` writes every frame of every sample (~150 MB of text for a
 * 10 s run of the 200-deep recursion); this reads the file through the
 * JDK's own reader (jdk.jfr.consumer.RecordingFile) and prints each
 * distinct stack once with its count:
 *   KIND TID THREAD<TAB>FRAME;FRAME;...<TAB>COUNT
 * KIND is E (jdk.ExecutionSample: a thread running Java code) or N
 * (jdk.NativeMethodSample: a thread in a native method), or ET/NT when
 * JFR cut the stack short (its stackdepth); TID the thread's OS id; the
 * frames outermost first, each "pkg.Class.method" as the JVM names it
 * (nested classes with '$', hidden classes as JFR gives them).
 * Usage: java JfrFold FILE.jfr */
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

public class JfrFold {
	public static void main(String[] args) throws Exception {
		Map<String, Long> folded = new HashMap<>();
		try (RecordingFile f = new RecordingFile(Paths.get(args[0]))) {
			while (f.hasMoreEvents()) {
				RecordedEvent e = f.readEvent();
				String type = e.getEventType().getName();
				String kind;
				if (type.equals("jdk.ExecutionSample"))
					kind = "E";
				else if (type.equals("jdk.NativeMethodSample"))
					kind = "N";
				else
					continue;
				RecordedThread t = e.getThread("sampledThread");
				RecordedStackTrace st = e.getStackTrace();
				if (t == null || st == null)
					continue;
				List<RecordedFrame> frames = st.getFrames();
				StringBuilder b = new StringBuilder();
				for (int i = frames.size() - 1; i >= 0; i--) {
					RecordedMethod m = frames.get(i).getMethod();
					if (m == null)
						continue;
					if (b.length() > 0)
						b.append(';');
					b.append(m.getType().getName()).append('.').append(m.getName());
				}
				String name = t.getJavaName() == null ? "?" : t.getJavaName();
				String key = kind + (st.isTruncated() ? "T" : "") + " " + t.getOSThreadId() + " " +
					     name.replace('\t', ' ') + "\t" + b;
				folded.merge(key, 1L, Long::sum);
			}
		}
		StringBuilder out = new StringBuilder();
		for (Map.Entry<String, Long> kv : folded.entrySet())
			out.append(kv.getKey()).append('\t').append(kv.getValue()).append('\n');
		System.out.print(out);
	}
}
