package io.capsule.bench.hub;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Extras;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * SSE delivery latency through one hub: a runner's {@code task.progress} frames at a steady rate,
 * each timed from the moment the runner writes it to its WebSocket until each of {@code readers}
 * real HTTP clients has read the event from the task's {@code /events} stream; beside, for the very
 * same frames, the time until the hub's {@code ack} of the frame is back at the runner (the hub
 * acks every frame here, {@code ackEvery = 1}). Both include the same two loopback legs and the
 * store write the hub makes before it acks or publishes; what SSE adds is the hub's path from the
 * applied frame to the watcher's stream. Percentiles are exact (every sample is kept).
 *
 * <p>A load {@code main}, not JMH: the subject is a distribution under a steady offered rate, not
 * the speed of a closed loop, and the two latencies are paired per frame. Every reader must get
 * every event once and in order, and the stream must end with the report, or the run fails.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.capsule.bench.hub.SseLatencyBench \
 *     [--store memory|h2] [--readers 1,50] [--events 10000] [--rate 100] [--warmup 3000]
 * </pre>
 */
public final class SseLatencyBench {
  private static final FrameCodec CODEC = FrameCodec.shared();
  private static final String TASK = "t-sse";
  private static final String RUNNER = "r-sse";

  /** A progress payload of ~600 B, the size of a recorded agent's text event. */
  private static final String PAD = "x".repeat(560);

  /**
   * @param trace when set, a CSV per configuration ({@code trace-R.csv} for R readers): per
   *     measured event, when it was sent and its ack and slowest-reader latencies, to see when
   *     stalls happen
   */
  record Options(
      String store,
      List<Integer> readers,
      int events,
      int rate,
      int warmup,
      java.util.Optional<Path> trace) {
    static Options parse(String[] args) {
      String store = "memory";
      List<Integer> readers = List.of(1, 50);
      int events = 10_000;
      int rate = 100;
      int warmup = 3_000;
      java.util.Optional<Path> trace = java.util.Optional.empty();
      for (int i = 0; i + 1 < args.length; i += 2) {
        String v = args[i + 1];
        switch (args[i]) {
          case "--store" -> store = v;
          case "--readers" -> readers = Arrays.stream(v.split(",")).map(Integer::valueOf).toList();
          case "--events" -> events = Integer.parseInt(v);
          case "--rate" -> rate = Integer.parseInt(v);
          case "--warmup" -> warmup = Integer.parseInt(v);
          case "--trace" -> trace = java.util.Optional.of(Path.of(v));
          default -> throw new IllegalArgumentException("unknown option " + args[i]);
        }
      }
      if (args.length % 2 != 0) {
        throw new IllegalArgumentException("options come in pairs: --name value");
      }
      if (events < 1 || rate < 1 || warmup < 1 || readers.stream().anyMatch(r -> r < 1)) {
        throw new IllegalArgumentException("--events, --rate, --warmup, --readers must be >= 1");
      }
      return new Options(store, readers, events, rate, warmup, trace);
    }
  }

  /**
   * One configuration's figures; {@code lastReader}: per event, when the slowest reader had it;
   * {@code ackedPerSecond}: the rate the acks came back at over the measured events (below the
   * offered rate, the hub was saturated and the latencies are mostly queueing).
   */
  record Result(
      Options o,
      int readers,
      double ackedPerSecond,
      Percentiles ack,
      Percentiles sse,
      Percentiles lastReader,
      String loadBefore,
      String loadAfter) {
    String row() {
      return "| "
          + o.store()
          + " | "
          + readers
          + " | "
          + o.events()
          + " at "
          + o.rate()
          + "/s | "
          + String.format("%.0f/s", ackedPerSecond)
          + " | "
          + ack.millis()
          + " | "
          + sse.millis()
          + " | "
          + lastReader.millis()
          + " | "
          + String.format("%.1f×", (double) sse.p50() / ack.p50())
          + " | "
          + loadBefore
          + " → "
          + loadAfter
          + " |";
    }
  }

  private SseLatencyBench() {}

  public static void main(String[] args) throws Exception {
    Options o = Options.parse(args);
    System.out.println(
        "| store | readers | events offered | acked | ack p50 / p99 / max | SSE p50 / p99 / max (every reader)"
            + " | SSE, slowest reader per event | SSE ÷ ack (p50) | load (1 min) |");
    System.out.println("|---|---|---|---|---|---|---|---|---|");
    for (int readers : o.readers()) {
      System.out.println(run(o, readers).row());
    }
  }

  static Result run(Options o, int readers) throws Exception {
    String before = load();
    BenchHub hub = BenchHub.start("sse", o.store(), ProtocolConfig.builder().ackEvery(1).build());
    try {
      return measure(hub, o, readers, before);
    } finally {
      hub.close();
    }
  }

  private static Result measure(BenchHub hub, Options o, int readerCount, String before)
      throws Exception {
    int total = o.warmup() + o.events(); // seqs 1..total; the first warmup ones are not counted
    long[] sent = new long[total + 1];
    AckClock acks = new AckClock(total);
    RawRunner runner = RawRunner.connect(hub, RUNNER, TASK, acks::on);
    HttpResponse<String> placed =
        hub.submit(
            "{\"capsule\":\""
                + BenchHub.CAPSULE
                + "\",\"goal\":\"sse\",\"id\":\""
                + TASK
                + "\",\"runner\":\""
                + RUNNER
                + "\"}");
    if (placed.statusCode() != 201) {
      throw new IllegalStateException("POST /v1/tasks: " + placed.statusCode() + placed.body());
    }
    runner.awaitAssign();
    List<SseReader> readers = new ArrayList<>();
    for (int i = 0; i < readerCount; i++) {
      SseReader r = new SseReader(1, total);
      readers.add(r);
      hub.http.sendAsync(hub.events(TASK), r.handler());
    }
    // Event 1 alone: every reader's stream is live before the steady rate starts.
    sent[1] = send(runner, 1);
    all(readers.stream().map(r -> r.sawFirst), BenchHub.SLOW.toSeconds());
    ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor();
    try {
      AtomicInteger next = new AtomicInteger(2);
      CompletableFuture<Void> allSent = new CompletableFuture<>();
      clock.scheduleAtFixedRate(
          () -> {
            int s = next.getAndIncrement();
            if (s <= total) {
              sent[s] = send(runner, s);
            }
            if (s == total) {
              allSent.complete(null); // after sent[total] is written: the main thread reads sent
            }
          },
          0,
          1_000_000_000L / o.rate(),
          TimeUnit.NANOSECONDS);
      long bound = BenchHub.SLOW.toSeconds() + 2L * total / o.rate();
      allSent.get(bound, TimeUnit.SECONDS);
    } finally {
      clock.shutdownNow();
    }
    acks.last.get(BenchHub.SLOW.toSeconds(), TimeUnit.SECONDS);
    all(readers.stream().map(r -> r.sawLast), BenchHub.SLOW.toSeconds());
    Result result = figures(o, readers, sent, acks.arrival, before);
    // The report ends every stream: each reader must see its end, and then nothing is left open.
    runner.send(CODEC.encodeToString(report().withSeq(total + 1)));
    all(readers.stream().map(r -> r.ended), BenchHub.SLOW.toSeconds());
    runner.close();
    // The hub's own meter (docs/operations.md "Metrics") must have counted what the runner sent: it
    // is updated before
    // the event reaches a watcher, so once every stream ended with the report it is final.
    double applied = hub.metric("capsule_hub_frames_applied_total", "kind=\"text\"");
    if (applied != total) {
      throw new IllegalStateException(
          "capsule_hub_frames_applied_total{kind=text} is "
              + applied
              + ", the runner sent "
              + total);
    }
    return result;
  }

  private static Result figures(
      Options o, List<SseReader> readers, long[] sent, long[] acked, String before) {
    int from = o.warmup() + 1;
    int n = o.events();
    long[] ack = new long[n];
    long[] sse = new long[n * readers.size()];
    long[] slowest = new long[n];
    for (SseReader r : readers) {
      if (r.problem() != null) {
        throw new IllegalStateException("a reader's events were wrong: " + r.problem());
      }
    }
    for (int i = 0; i < n; i++) {
      int s = from + i;
      ack[i] = acked[s] - sent[s];
      for (int k = 0; k < readers.size(); k++) {
        long at = readers.get(k).arrival[s];
        if (at == 0) {
          throw new IllegalStateException("reader " + k + " never read event " + s);
        }
        sse[i * readers.size() + k] = at - sent[s];
        slowest[i] = Math.max(slowest[i], at - sent[s]);
      }
    }
    if (o.trace().isPresent()) {
      trace(o.trace().get().resolve("trace-" + readers.size() + ".csv"), from, sent, ack, slowest);
    }
    double span = acked[from + n - 1] - acked[from];
    return new Result(
        o,
        readers.size(),
        n > 1 && span > 0 ? (n - 1) * 1e9 / span : Double.NaN,
        Percentiles.of(ack),
        Percentiles.of(sse),
        Percentiles.of(slowest),
        before,
        load());
  }

  private static void trace(Path file, int from, long[] sent, long[] ack, long[] slowest) {
    StringBuilder csv = new StringBuilder("seq,sent_ms,ack_ms,sse_slowest_ms\n");
    for (int i = 0; i < ack.length; i++) {
      csv.append(from + i)
          .append(',')
          .append(Percentiles.ms(sent[from + i] - sent[from]))
          .append(',')
          .append(Percentiles.ms(ack[i]))
          .append(',')
          .append(Percentiles.ms(slowest[i]))
          .append('\n');
    }
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, csv);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Encodes frame {@code seq} and writes it; the time it was handed to the socket. */
  private static long send(RawRunner runner, int seq) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode().put("i", seq).put("text", PAD);
    String text = CODEC.encodeToString(new TaskProgress(TASK, seq, "text", payload, Extras.NONE));
    long at = System.nanoTime();
    runner.send(text);
    return at;
  }

  private static TaskReport report() {
    return new TaskReport(
        TaskReportBody.builder(TASK, "done", new UsageSplit(1, 1, 0, 0, 1))
            .summaryBusiness("sse bench")
            .build());
  }

  private static void all(java.util.stream.Stream<? extends CompletableFuture<?>> fs, long secs)
      throws Exception {
    CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).get(secs, TimeUnit.SECONDS);
  }

  /** The 1-minute load average, as {@code uptime} prints it. */
  static String load() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (java.io.IOException e) {
      return "?";
    }
  }

  /**
   * When each seq's ack came back: an ack names the highest seq the hub holds, so it stamps every
   * seq up to it not stamped yet. Called on the socket's listener thread, one ack at a time.
   */
  private static final class AckClock {
    final long[] arrival;
    final CompletableFuture<Void> last = new CompletableFuture<>();
    private long highest;

    AckClock(int total) {
      arrival = new long[total + 1];
    }

    void on(long held) {
      long now = System.nanoTime();
      for (long s = highest + 1; s <= held && s < arrival.length; s++) {
        arrival[(int) s] = now;
      }
      highest = Math.max(highest, held);
      if (highest >= arrival.length - 1) {
        last.complete(null);
      }
    }
  }
}
