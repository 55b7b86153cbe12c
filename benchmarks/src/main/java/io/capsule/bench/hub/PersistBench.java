package io.capsule.bench.hub;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.capsule.hub.metrics.HubTraffic;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Extras;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runner frames persisted and acknowledged per second through one hub node, beside a bare JDBC
 * batch insert of the same rows into the same store, in the same run: the ratio says how much of
 * what the database can take the hub turns into acknowledged frames (the goal: ≥ 0.5,
 * benchmarks/README.md).
 *
 * <p>{@code runners} raw runners (one task each) send {@code frames} frames each as fast as their
 * sockets take them ({@code frames - 1} progress of ~600 bytes, then the report); the figure is
 * every runner's frames over the time from the first send until the last runner's ack covered its
 * report (each frame is then in the store: the hub acks only what its journal confirmed). A warm-up
 * round of a quarter of the frames runs first on other tasks. The baseline inserts as many rows of
 * the same size (the frames' JSON) into a table of the journal's shape in the same database,
 * {@value BareJournal#BATCH} rows per transaction (as {@code JdbcBaselineBench}), with the hub
 * idle, right before and right after each measured round: on a shared machine whose load swings by
 * a factor of several within minutes, a round's ratio is against the mean of its two neighbours.
 * {@code rounds} rounds per store, each on new tasks; a row per round and the median ratio. It also
 * prints the hub's journal writes and entries per write in each round (its group commit).
 *
 * <p>The hub stores the frames one write brought for a task as one row ({@code TaskEvents}); the
 * goal's baseline is the plain way to store frames, a row each. {@code --bare-frames-per-row N}
 * makes the baseline insert rows of {@code N} frames' bytes instead (still counted in frames), to
 * show what the hub costs beside a store given rows as large as its own.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.capsule.bench.hub.PersistBench \
 *     [--store h2,postgres] [--runners 16] [--frames 2000] [--rounds 3] \
 *     [--bare-identity-cache 8192] [--bare-frames-per-row 1]
 * </pre>
 *
 * PostgreSQL: {@code eval "$(benchmarks/scripts/throwaway-postgres.sh start)"} first.
 */
public final class PersistBench {
  private static final FrameCodec CODEC = FrameCodec.shared();

  /** A progress payload of ~560 characters: each frame is ~600 bytes of JSON. */
  private static final String PAD = "x".repeat(520);

  /** The baseline's frame: a progress of the same size as the runners'. */
  private static final byte[] BARE_FRAME =
      CODEC
          .encodeToString(
              new TaskProgress(
                  "t-bare",
                  1,
                  "text",
                  JsonNodeFactory.instance.objectNode().put("i", 1).put("text", PAD),
                  Extras.NONE))
          .getBytes(StandardCharsets.UTF_8);

  record Options(
      List<String> stores,
      int runners,
      int frames,
      int rounds,
      int bareIdentityCache,
      int bareFramesPerRow) {
    static Options parse(String[] args) {
      List<String> stores = List.of("h2", "postgres");
      int runners = 16;
      int frames = 2000;
      int rounds = 3;
      int cache = BareJournal.JOURNAL_IDENTITY_CACHE;
      int perRow = 1;
      if (args.length % 2 != 0) {
        throw new IllegalArgumentException("options come in pairs: --name value");
      }
      for (int i = 0; i < args.length; i += 2) {
        String v = args[i + 1];
        switch (args[i]) {
          case "--store" -> stores = Arrays.asList(v.split(","));
          case "--runners" -> runners = Integer.parseInt(v);
          case "--frames" -> frames = Integer.parseInt(v);
          case "--rounds" -> rounds = Integer.parseInt(v);
          case "--bare-identity-cache" -> cache = Integer.parseInt(v);
          case "--bare-frames-per-row" -> perRow = Integer.parseInt(v);
          default -> throw new IllegalArgumentException("unknown option " + args[i]);
        }
      }
      if (runners < 1 || frames < 4 || rounds < 1 || cache < 1 || perRow < 1) {
        throw new IllegalArgumentException(
            "--runners, --rounds, --bare-identity-cache and --bare-frames-per-row must be >= 1"
                + " and --frames >= 4");
      }
      return new Options(stores, runners, frames, rounds, cache, perRow);
    }
  }

  /** One round's figures: rows/s through the hub and bare, the hub's writes, the load. */
  record Result(
      String store,
      int round,
      int rows,
      double hubPerSecond,
      double barePerSecond,
      long writes,
      long entries,
      Cpu hubCpu,
      Cpu bareCpu,
      String loadBefore,
      String loadAfter) {
    double ratio() {
      return hubPerSecond / barePerSecond;
    }

    /** The JVM's CPU per bare row over its CPU per hub frame (the runners' clients left out). */
    double cpuRatio() {
      return bareCpu.microsPerRow(rows) / hubCpu.hubMicrosPerRow(rows);
    }

    String row() {
      return String.format(
          "| %s | %d | %d | %.0f/s | %.0f/s | %.2f | %.0f µs | %.0f µs | %.1f µs | %.2f | %d (%.1f"
              + " entries each) | %s → %s |",
          store,
          round,
          rows,
          hubPerSecond,
          barePerSecond,
          ratio(),
          hubCpu.hubMicrosPerRow(rows),
          bareCpu.microsPerRow(rows),
          hubCpu.clientMicrosPerRow(rows),
          cpuRatio(),
          writes,
          writes == 0 ? 0.0 : (double) entries / writes,
          loadBefore,
          loadAfter);
    }
  }

  /**
   * CPU time of this JVM over a phase, and of it the bench's own runner clients (the JDK HTTP
   * client's threads, which run their WebSocket sends, and the bench's main thread, which queues
   * them and runs the sends whose turn has come when queued): a figure the machine's load hardly
   * moves, unlike a rate, since it counts only the time this process ran. PostgreSQL's own work is
   * in its server processes, not here, for the hub and the bare insert alike.
   */
  record Cpu(long processNanos, long clientNanos) {
    private static final com.sun.management.OperatingSystemMXBean OS =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    static Cpu now() {
      long clients = 0;
      for (ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
        if (t != null
            && (t.getThreadName().startsWith("HttpClient-") || t.getThreadName().equals("main"))) {
          long c = THREADS.getThreadCpuTime(t.getThreadId());
          clients += Math.max(0, c);
        }
      }
      return new Cpu(OS.getProcessCpuTime(), clients);
    }

    Cpu since(Cpu start) {
      return new Cpu(processNanos - start.processNanos, clientNanos - start.clientNanos);
    }

    double microsPerRow(int rows) {
      return processNanos / 1e3 / rows;
    }

    double clientMicrosPerRow(int rows) {
      return clientNanos / 1e3 / rows;
    }

    double hubMicrosPerRow(int rows) {
      return (processNanos - clientNanos) / 1e3 / rows;
    }
  }

  private PersistBench() {}

  public static void main(String[] args) throws Exception {
    Options o = Options.parse(args);
    BareJournal bare = new BareJournal(o.bareIdentityCache(), o.bareFramesPerRow());
    System.out.println(
        "bare H2 table: identity CACHE "
            + bare.identityCache()
            + "; bare rows of "
            + bare.framesPerRow()
            + " frame(s) each");
    System.out.println(
        "| store | round | frames | hub: persisted and acked | bare JDBC, "
            + BareJournal.BATCH
            + " rows/tx, frames (mean of before and after) | hub ÷ bare | JVM CPU per frame, hub"
            + " (runner clients excluded) | JVM CPU per frame, bare (mean) | runner clients' CPU"
            + " per frame | bare CPU ÷ hub CPU | hub journal writes | load (1 min) before →"
            + " after |");
    System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|");
    List<String> medians = new ArrayList<>();
    for (String store : o.stores()) {
      List<Result> rs = run(store, bare, o.runners(), o.frames(), o.rounds());
      double[] ratios = rs.stream().mapToDouble(Result::ratio).sorted().toArray();
      double[] cpu = rs.stream().mapToDouble(Result::cpuRatio).sorted().toArray();
      medians.add(
          String.format(
              "%s: median hub ÷ bare %.2f (%.2f–%.2f over %d rounds); CPU, bare ÷ hub: median"
                  + " %.2f (%.2f–%.2f)",
              store,
              ratios[ratios.length / 2],
              ratios[0],
              ratios[ratios.length - 1],
              ratios.length,
              cpu[cpu.length / 2],
              cpu[0],
              cpu[cpu.length - 1]));
    }
    medians.forEach(System.out::println);
  }

  static List<Result> run(String store, BareJournal bare, int runners, int frames, int rounds)
      throws Exception {
    BenchHub hub = BenchHub.start("persist", store, ProtocolConfig.builder().build());
    List<Result> out = new ArrayList<>();
    try {
      round(hub, "w", runners, Math.max(4, frames / 4), new Cpu[1]); // warm-up: JIT, pool
      bare.insert(hub.store(), BARE_FRAME, runners * frames / 4);
      HubTraffic traffic = HubTraffic.get(hub.system);
      for (int r = 1; r <= rounds; r++) {
        String before = SseLatencyBench.load();
        Cpu c0 = Cpu.now();
        double bareBefore = bare.insert(hub.store(), BARE_FRAME, runners * frames);
        Cpu c1 = Cpu.now();
        long writes0 = traffic.journalWriteCount();
        long entries0 = traffic.journalEntryCount();
        Cpu[] hubCpu = new Cpu[1];
        double hubRate = round(hub, "m" + r, runners, frames, hubCpu);
        long writes = traffic.journalWriteCount() - writes0;
        long entries = traffic.journalEntryCount() - entries0;
        Cpu c2 = Cpu.now();
        double bareAfter = bare.insert(hub.store(), BARE_FRAME, runners * frames);
        Cpu c3 = Cpu.now();
        Cpu bareCpu =
            new Cpu(
                (c1.since(c0).processNanos() + c3.since(c2).processNanos()) / 2,
                (c1.since(c0).clientNanos() + c3.since(c2).clientNanos()) / 2);
        Result res =
            new Result(
                store,
                r,
                runners * frames,
                hubRate,
                (bareBefore + bareAfter) / 2,
                writes,
                entries,
                hubCpu[0],
                bareCpu,
                before,
                SseLatencyBench.load());
        System.out.println(res.row());
        out.add(res);
      }
      return out;
    } finally {
      hub.close();
    }
  }

  /**
   * One round: a task per runner, every runner's frames; frames per second until all acked, and in
   * {@code cpu[0]} the JVM's CPU over that time.
   */
  private static double round(BenchHub hub, String name, int runners, int frames, Cpu[] cpu)
      throws Exception {
    List<RawRunner> rs = new ArrayList<>();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int i = 0; i < runners; i++) {
      String runner = String.format("r-%s%03d", name, i);
      String task = "t-" + runner;
      CompletableFuture<Void> acked = new CompletableFuture<>();
      done.add(acked);
      rs.add(
          RawRunner.connect(
              hub,
              runner,
              task,
              held -> {
                if (held >= frames) {
                  acked.complete(null);
                }
              }));
      HttpResponse<String> placed =
          hub.submit(
              "{\"capsule\":\""
                  + BenchHub.CAPSULE
                  + "\",\"goal\":\"persist\",\"id\":\""
                  + task
                  + "\",\"runner\":\""
                  + runner
                  + "\"}");
      if (placed.statusCode() != 201) {
        throw new IllegalStateException("POST /v1/tasks: " + placed.statusCode() + placed.body());
      }
      rs.get(i).awaitAssign();
    }
    List<List<String>> texts = new ArrayList<>();
    for (int i = 0; i < runners; i++) {
      texts.add(frames("t-" + String.format("r-%s%03d", name, i), frames));
    }
    Measured measured = new Measured();
    measured.name = name;
    measured.begin();
    Cpu cpu0 = Cpu.now();
    long t0 = System.nanoTime();
    for (int i = 0; i < runners; i++) {
      RawRunner r = rs.get(i);
      texts.get(i).forEach(r::send); // chained: one send in flight per socket
    }
    CompletableFuture.allOf(done.toArray(CompletableFuture[]::new))
        .get(BenchHub.SLOW.toSeconds() + frames * runners / 50, TimeUnit.SECONDS);
    long elapsed = System.nanoTime() - t0;
    cpu[0] = Cpu.now().since(cpu0);
    measured.commit();
    for (RawRunner r : rs) {
      r.close();
    }
    return (double) runners * frames * 1e9 / elapsed;
  }

  /**
   * A JFR event over each round's measured part (from the first send to the last ack, the time its
   * CPU figure covers), so that a profile of the bench can keep only those samples: a recording
   * taken with {@code -XX:StartFlightRecording} holds it, nothing is recorded otherwise.
   */
  @jdk.jfr.Name("io.capsule.bench.PersistRound")
  @jdk.jfr.Label("PersistBench round, measured part")
  static final class Measured extends jdk.jfr.Event {
    @jdk.jfr.Label("round")
    String name;
  }

  private static List<String> frames(String task, int frames) {
    List<String> out = new ArrayList<>(frames);
    for (int seq = 1; seq < frames; seq++) {
      var payload = JsonNodeFactory.instance.objectNode().put("i", seq).put("text", PAD);
      out.add(CODEC.encodeToString(new TaskProgress(task, seq, "text", payload, Extras.NONE)));
    }
    TaskReport report =
        new TaskReport(
            TaskReportBody.builder(task, "done", new UsageSplit(1, 1, 0, 0, 1))
                .summaryBusiness("persist bench")
                .build());
    out.add(CODEC.encodeToString(report.withSeq(frames)));
    return out;
  }
}
