package io.capsule.bench.hub;

import io.capsule.protocol.ProtocolConfig;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Tasks placed per second through one hub: {@code POST /v1/tasks} over a real HTTP client until the
 * chosen runner's client receives the {@code task.assign}, with {@code runners} real runner clients
 * connected over WebSockets on 127.0.0.1 (each announcing the capsule and 64 slots, each answering
 * an assign at once with a report so its slot frees). Eight JMH threads each keep one task in
 * flight: a bounded load, as a CI job or a user's script submits.
 *
 * <p>The baseline in the same run: {@code GET /healthz} of the same server through the same client
 * from the same threads, a request that does no work. Placement ÷ baseline reads "placing a task
 * costs N bare requests". {@code runners} 1 and 200 show whether placement slows with the number of
 * runners it chooses among (least-loaded of those with the capsule and a free slot).
 *
 * <p>Every operation checks its answer (201 and an assign received; 200 {@code ok}) and throws
 * otherwise, so a refused or lost task cannot score.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 5)
@Measurement(iterations = 3, time = 5)
@Threads(8)
@Fork(1)
public class PlacementBench {
  /** Slots per runner: more than the eight in flight, so one runner is never the limit. */
  static final int SLOTS = 64;

  /** The hub's store: {@code memory} (H2 in memory, the default) or {@code h2} (a file). */
  @Param({"memory", "h2"})
  public String store;

  @Param({"1", "200"})
  public int runners;

  private BenchHub hub;
  private BenchRunners fleet;
  private final AtomicLong ids = new AtomicLong();

  @Setup(Level.Trial)
  public void start() throws Exception {
    // Default timers as a deployed hub has them; the client's reconnects never fire here.
    ProtocolConfig config = ProtocolConfig.builder().build();
    long t0 = System.nanoTime();
    hub = BenchHub.start("placement", store, config);
    long t1 = System.nanoTime();
    try {
      fleet = BenchRunners.connect(hub, runners, SLOTS, config);
    } catch (Exception e) {
      hub.close();
      throw e;
    }
    System.out.printf(
        "placement: hub up in %d ms, %d runners connected in %d ms%n",
        (t1 - t0) / 1_000_000, runners, (System.nanoTime() - t1) / 1_000_000);
  }

  @TearDown(Level.Trial)
  public void stop() throws Exception {
    System.out.println("placement: " + fleet.spread());
    long t0 = System.nanoTime();
    try {
      fleet.close();
    } finally {
      hub.close();
    }
    System.out.printf("placement: stopped in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
  }

  /** One task submitted and placed: 201 from the API, then its assign at a runner. */
  @Benchmark
  public String placeTask() throws Exception {
    String id = "t-" + ids.incrementAndGet();
    CompletableFuture<String> assign = fleet.expect(id);
    HttpResponse<String> r =
        hub.submit(
            "{\"capsule\":\"" + BenchHub.CAPSULE + "\",\"goal\":\"bench\",\"id\":\"" + id + "\"}");
    if (r.statusCode() != 201) {
      throw new IllegalStateException("POST /v1/tasks: " + r.statusCode() + " " + r.body());
    }
    return fleet.awaitAssign(assign, id);
  }

  /** The baseline: a bare request to the same server through the same client. */
  @Benchmark
  public String healthz() throws Exception {
    HttpResponse<String> r = hub.healthz();
    if (r.statusCode() != 200 || !r.body().startsWith("ok")) {
      throw new IllegalStateException("GET /healthz: " + r.statusCode() + " " + r.body());
    }
    return r.body();
  }
}
