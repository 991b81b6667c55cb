/* Ledger.java - the Java accuracy workload (issue 32, item 4): known
 * phases with a CPU budget each, every phase's CPU time measured by the
 * program itself (ThreadMXBean thread CPU time), for
 * tests/integration/test_java_accuracy.py to hold profiles against.
 *
 * The main thread loops over five phases until SECONDS have passed, in a
 * new order every cycle (a fixed order is a periodic signal a periodic
 * sampler aliases with):
 *   recurse  Ledger.descend recursing DEPTH deep (default 200), spinning
 *            in Ledger.leafWork at the bottom
 *   inline   Ledger.phaseInline's hot loop over the small Ledger.step and
 *            Ledger.mix (the JIT inlines them)
 *   matrix   Ledger$Matrix.multiply, a method of a nested class
 *   stream   Ledger.phaseStream: an IntStream pipeline with two lambdas
 *   deflate  Ledger.phaseDeflate: java.util.zip.Deflater on a 16 KiB
 *            buffer, a JNI call (libzip, then zlib: native frames under
 *            the Java ones)
 * and a second thread named "worker" (java.lang.Thread.run ->
 * Ledger$Worker.run) spends 2 ms in Ledger.sieve (in batches of ~200 us
 * between clock reads, a read's cost measured as it runs and taken
 * out), then sleeps 2 ms, until
 * main is done.
 *
 * Each phase is called through an interface with five implementations
 * (Ledger$Recurse.work, ...), a call the JIT does not inline: every phase
 * is compiled code of its own. Each phase's unit of work (7 us to 0.9 ms, JIT or -Xint) runs in
 * batches of about 200 us between two reads of the thread's CPU clock
 * (whose cost, ~2 us, is measured and taken out) until the phase has
 * spent WEIGHT x 2 ms of CPU in the cycle.
 *
 * Usage: java Ledger [SECONDS [recurse=W,inline=W,matrix=W,stream=W,
 *        deflate=W,worker=0|1 [DEPTH]]] (default 4 s, all weights 1, the
 *        worker started, depth 200).
 * At the end it prints one line, "ledger-truth " and a JSON object: the
 * pid, each phase's CPU seconds ("phases"; "worker" is the worker
 * thread's whole CPU time, "worker_sieve" its part in sieve, its clock
 * reads' cost taken out, "worker_clock" the cost of all its clock reads
 * after its start), the
 * threads' Linux tids ("threads": main, worker) and the cycles run. With
 * $WL_REPORT set the same goes to that file as "phase NAME SECONDS" and
 * "thread NAME TID" lines (tests/integration/stcheck.py's read_report).
 * With $WL_GO set, both threads wait for that file to exist before their
 * clocks start (a profiler attached by --pid sees the whole measured
 * run). "ready" is printed once main() runs, then "main-tid TID" (the main
 * thread's Linux tid: bench/bench.py times that thread's samples alone). */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.zip.Deflater;

public class Ledger {
	static final String[] PHASES = {"recurse", "inline", "matrix", "stream", "deflate"};
	static final double QUANTUM = 2e-3;	/* seconds of CPU per unit of weight, a cycle */
	static final double BATCH = 200e3;	/* ns of units between two clock reads */
	static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
	static volatile long sink;
	static volatile boolean done;

	static long cpu() {
		return MX.getCurrentThreadCpuTime();
	}

	/* the thread's Linux tid: /proc/thread-self links to PID/task/TID */
	static long tid() {
		try {
			Path p = Files.readSymbolicLink(Paths.get("/proc/thread-self"));
			return Long.parseLong(p.getFileName().toString());
		} catch (Exception e) {
			return -1;
		}
	}

	static void waitGo() {
		String go = System.getenv("WL_GO");
		while (go != null && !Files.exists(Paths.get(go))) {
			try {
				Thread.sleep(10);
			} catch (InterruptedException e) {
				return;
			}
		}
	}

	/* ---- recurse ---- */
	static long leafWork(long seed) {
		long x = seed | 1;
		for (int i = 0; i < 4000; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long descend(int depth, long acc) {
		if (depth <= 0)
			return leafWork(acc);
		long r = descend(depth - 1, acc + depth);
		return r ^ (r >>> 7) + depth;	/* not a tail call */
	}

	/* ---- inline ---- */
	static int step(int x) {
		return x * 0x9e3779b1 + 7;
	}

	static int mix(int a, int b) {
		return (a ^ b) * 31 + (a >>> 5);
	}

	static int phaseInline(int n) {
		int acc = 1;
		for (int i = 0; i < n; i++)
			acc = mix(acc, step(i));
		return acc;
	}

	/* ---- matrix ---- */
	static final class Matrix {
		final int n;
		final double[] a;

		Matrix(int n) {
			this.n = n;
			this.a = new double[n * n];
		}

		Matrix(int n, long seed) {
			this(n);
			Random r = new Random(seed);
			for (int i = 0; i < a.length; i++)
				a[i] = r.nextDouble();
		}

		Matrix multiply(Matrix o) {
			Matrix c = new Matrix(n);
			for (int i = 0; i < n; i++)
				for (int k = 0; k < n; k++) {
					double v = a[i * n + k];
					for (int j = 0; j < n; j++)
						c.a[i * n + j] += v * o.a[k * n + j];
				}
			return c;
		}
	}

	/* ---- stream ---- */
	static long phaseStream(int n) {
		return IntStream.range(0, n).map(x -> x * 31 ^ (x >>> 3))
			.filter(x -> (x & 3) != 0).asLongStream().sum();
	}

	/* ---- deflate (JNI) ---- */
	static final byte[] INPUT = new byte[16 << 10];
	static final byte[] OUTPUT = new byte[24 << 10];
	static final Deflater DEFLATER = new Deflater(6);

	static long phaseDeflate() {
		DEFLATER.reset();
		DEFLATER.setInput(INPUT);
		DEFLATER.finish();
		long n = 0;
		while (!DEFLATER.finished())
			n += DEFLATER.deflate(OUTPUT);
		return n;
	}

	/* ---- the worker thread ---- */
	static int sieve(int n) {
		boolean[] composite = new boolean[n + 1];
		int count = 0;
		for (int i = 2; i <= n; i++) {
			if (composite[i])
				continue;
			count++;
			for (long j = (long)i * i; j <= n; j += i)
				composite[(int)j] = true;
		}
		return count;
	}

	static final class Worker implements Runnable {
		volatile long total, inSieve, reads, clockReads, tid;
		volatile double readCost;	/* one clock read, measured as it runs */

		public void run() {
			tid = tid();
			waitGo();
			long t0 = cpu(), in = 0, n = 0, units = 0, pair = 0, pairs = 0;
			int reps = 1;
			while (!done) {
				/* 2 ms of sieving, then 2 ms asleep: the main thread
				 * keeps most of a CPU on a busy 2-CPU machine; the
				 * clock read every ~200 us of sieves, as main's */
				long t = cpu(), u = t;
				while (u - t < 2000000L) {
					for (int r = 0; r < reps; r++)
						sink += sieve(20000);
					u = cpu();
					n++;
					units += reps;
				}
				in += u - t;
				/* what a read costs now (a loaded machine makes
				 * it dearer than at start): two reads back to back */
				long a = cpu();
				pair += cpu() - a;
				pairs++;
				reps = (int)Math.max(1, Math.min(100000, Math.round(BATCH * units / Math.max(in, 1))));
				try {
					Thread.sleep(2);
				} catch (InterruptedException e) {
					break;
				}
			}
			inSieve = in;
			reads = n;
			/* every read after t0: the loop's, each cycle's first and its
			 * pair, the last */
			clockReads = n + 3 * pairs + 1;
			readCost = pairs > 0 ? (double)pair / pairs : 0;
			total = cpu() - t0;
		}
	}

	/* Each phase called through an interface with five implementations: a
	 * megamorphic call the JIT does not inline, so each phase's code is a
	 * compiled method of its own. (With a switch, the JIT inlined every
	 * phase into one method, where a profiler that maps a pc to the
	 * nearest debug scope, as JFR does, gives one phase's samples to
	 * another: JDK 17's JIT 4-13 points off.) */
	interface Phase {
		long work();
	}

	static final class Recurse implements Phase {
		public long work() {
			return descend(depth, sink);
		}
	}

	static final class Inline implements Phase {
		public long work() {
			return phaseInline(2000);
		}
	}

	static final class Multiply implements Phase {
		final Matrix m = new Matrix(24, 1);

		public long work() {
			return (long)m.multiply(m).a[1];
		}
	}

	static final class Stream implements Phase {
		public long work() {
			return phaseStream(1000);
		}
	}

	static final class Compress implements Phase {
		public long work() {
			return phaseDeflate();
		}
	}

	static final Phase[] WORK = {new Recurse(), new Inline(), new Multiply(), new Stream(),
				     new Compress()};

	static int depth = 200;

	public static void main(String[] args) throws Exception {
		double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 4.0;
		double[] weight = {1, 1, 1, 1, 1};
		boolean worker = true;
		if (args.length > 1)
			for (String kv : args[1].split(",")) {
				String[] p = kv.split("=");
				if (p[0].equals("worker"))
					worker = Double.parseDouble(p[1]) > 0;
				for (int k = 0; k < PHASES.length; k++)
					if (PHASES[k].equals(p[0]))
						weight[k] = Double.parseDouble(p[1]);
			}
		if (args.length > 2)
			depth = Integer.parseInt(args[2]);
		if (!MX.isCurrentThreadCpuTimeSupported())
			throw new IllegalStateException("no thread CPU time here");
		Random fill = new Random(32);
		for (int i = 0; i < INPUT.length; i++)	/* compressible, not trivially */
			INPUT[i] = (byte)('a' + (fill.nextInt(16) & fill.nextInt(16)));
		System.out.println("ready");
		System.out.println("main-tid " + tid());
		System.out.flush();

		Worker w = new Worker();
		Thread wt = new Thread(w, "worker");
		if (worker)
			wt.start();
		waitGo();
		long mainTid = tid();
		long[] spent = new long[PHASES.length];
		List<Integer> order = new ArrayList<>();
		for (int k = 0; k < PHASES.length; k++)
			if (weight[k] > 0)
				order.add(k);
		/* what one clock read costs: batches of units between reads keep
		 * the reads near 1% of a phase, and their cost is taken out */
		long c0 = cpu();
		for (int i = 0; i < 20000; i++)
			cpu();
		double readCost = (cpu() - c0) / 20001.0;
		int[] reps = {1, 1, 1, 1, 1};
		long[] units = new long[PHASES.length], reads = new long[PHASES.length];
		long[] gross = new long[PHASES.length];
		Random rnd = new Random(32);
		long cycles = 0;
		long end = System.nanoTime() + (long)(seconds * 1e9);
		while (System.nanoTime() < end) {
			java.util.Collections.shuffle(order, rnd);
			for (int k : order) {
				/* batches of the phase's unit of work until its budget
				 * for the cycle is spent */
				long t0 = cpu(), t = t0, budget = (long)(weight[k] * QUANTUM * 1e9);
				while (t - t0 < budget) {
					for (int r = 0; r < reps[k]; r++)
						sink += WORK[k].work();
					t = cpu();
					units[k] += reps[k];
					reads[k]++;
				}
				gross[k] += t - t0;
				double each = (double)gross[k] / units[k];
				reps[k] = (int)Math.max(1, Math.min(100000, Math.round(BATCH / each)));
			}
			cycles++;
		}
		for (int k = 0; k < PHASES.length; k++)
			spent[k] = Math.max(0, gross[k] - (long)(reads[k] * readCost));
		done = true;
		if (worker)
			wt.join();

		Map<String, Double> phases = new LinkedHashMap<>();
		for (int k = 0; k < PHASES.length; k++)
			phases.put(PHASES[k], spent[k] / 1e9);
		phases.put("worker", w.total / 1e9);
		/* the worker's clock reads (one per sieve) are not sieving */
		phases.put("worker_sieve", Math.max(0, w.inSieve - (long)(w.reads * w.readCost)) / 1e9);
		/* all its clock reads' cost (the measuring, not the work) */
		phases.put("worker_clock", (long)(w.clockReads * w.readCost) / 1e9);
		StringBuilder js = new StringBuilder("{\"pid\": " + ProcessHandle.current().pid() +
						     ", \"cycles\": " + cycles + ", \"depth\": " + depth +
						     ", \"phases\": {");
		StringBuilder rep = new StringBuilder();
		String sep = "";
		for (Map.Entry<String, Double> e : phases.entrySet()) {
			js.append(String.format("%s\"%s\": %.6f", sep, e.getKey(), e.getValue()));
			rep.append(String.format("phase %s %.6f%n", e.getKey(), e.getValue()));
			sep = ", ";
		}
		js.append("}, \"threads\": {\"main\": " + mainTid + ", \"worker\": " + w.tid + "}}");
		rep.append("thread main " + mainTid + "\nthread worker " + w.tid + "\n");
		System.out.println("ledger-truth " + js);
		String report = System.getenv("WL_REPORT");
		if (report != null)
			Files.writeString(Paths.get(report), rep.toString());
	}
}
