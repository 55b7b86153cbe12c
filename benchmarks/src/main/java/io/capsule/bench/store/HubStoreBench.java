package io.capsule.bench.store;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.HubCluster;
import io.capsule.hub.runner.HubServer;
import io.capsule.hub.runner.RunnerInfo;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.store.HubEvent;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.RunnerClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Progress frames per second through one hub node into its store: {@value #RUNNERS} real runner
 * clients on loopback WebSockets, each streaming its own task; a frame counts once the hub has kept
 * it in the store and published its event (the moment an {@code ack} may cover it). H2 in a fresh
 * file with {@code WRITE_DELAY=0}, or PostgreSQL ({@code CAPSULE_PG_URL}, {@code CAPSULE_PG_USER},
 * {@code CAPSULE_PG_PASSWORD}: {@code benchmarks/scripts/throwaway-postgres.sh start}). Run it
 * beside {@link JdbcBaselineBench} in one invocation: its {@code batchOf64} is the bare JDBC
 * ceiling of the same rows on the same store, and issue #12's goal is ≥ 0.5 of it.
 *
 * <p>Payloads of ~600 bytes, the baseline's row size. Score: frames/s (throughput, {@value #FRAMES}
 * frames per invocation).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class HubStoreBench {
  /** 8 runners: what a small team's hub serves, and enough writes in flight to batch across. */
  static final int RUNNERS = 8;

  /** 8,192 frames per invocation: 1,024 per runner, a few seconds at the store's batched rate. */
  static final int FRAMES = 8_192;

  private static final String PROJECT = "bench";
  private static final byte[] SECRET =
      "hub-store-bench-secret-32-bytes!".getBytes(StandardCharsets.UTF_8);

  @Param({"h2", "postgres"})
  public String store;

  private Path h2Dir;
  private ActorSystem<Void> system;
  private HubServer hub;
  private final List<RunnerClient> clients = new ArrayList<>();
  private final Object lock = new Object();
  private long published; // guarded by lock
  private String payload;

  @Setup(Level.Trial)
  public void open() throws Exception {
    HubStore s;
    if (store.equals("h2")) {
      h2Dir = Files.createTempDirectory("capsule-bench-hub-");
      s = HubStore.h2File(h2Dir);
    } else {
      String url = System.getenv("CAPSULE_PG_URL");
      if (url == null) {
        throw new IllegalStateException(
            "set CAPSULE_PG_URL/USER/PASSWORD: eval \"$(benchmarks/scripts/throwaway-postgres.sh"
                + " start)\"");
      }
      s =
          HubStore.postgres(
              url, System.getenv("CAPSULE_PG_USER"), System.getenv("CAPSULE_PG_PASSWORD"));
      s.migrate();
      emptyPostgres(s); // a hub restores everything it finds: start from nothing, as H2 does
    }
    s.migrate();
    system =
        ActorSystem.create(
            Behaviors.empty(),
            "hub-store-bench",
            s.pekkoConfig()
                .withFallback(HubCluster.singleNode())
                .withFallback(ConfigFactory.load()));
    PersistentHubJournal journal = PersistentHubJournal.open(system, Duration.ofSeconds(60));
    ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(5));
    ProtocolConfig config = ProtocolConfig.defaults();
    hub =
        HubServer.create(system, config, tokens, journal)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(60, TimeUnit.SECONDS);
    hub.events().runWith(Sink.foreach(this::count), system);
    for (int i = 0; i < RUNNERS; i++) {
      String token = tokens.issue(PROJECT, Optional.of("r" + i), Duration.ofHours(4));
      RunnerClient c =
          RunnerClient.start(
              system,
              RunnerClient.Settings.of(
                  hub.url(), PROJECT, "bench", TokenSource.fixed(token), config));
      c.inbound().runWith(Sink.ignore(), system);
      clients.add(c);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (hub.runners(PROJECT).stream().filter(RunnerInfo::connected).count() < RUNNERS) {
      if (System.nanoTime() > deadline) {
        throw new TimeoutException("runners did not connect within 60 s");
      }
      Thread.sleep(20); // setup only, on JMH's thread: not timed
    }
    for (int i = 0; i < RUNNERS; i++) {
      hub.assign(
              new RunnerKey(PROJECT, "r" + i),
              TaskSpec.builder(task(i), "feature", "bench").build(),
              "agent",
              Invocation.builder("capsule:bench").build())
          .toCompletableFuture()
          .get(60, TimeUnit.SECONDS);
    }
    payload = "x".repeat(520); // with the frame's envelope, ~600 bytes as the baseline's rows
  }

  private void count(HubEvent e) {
    if (e instanceof HubEvent.Progress) {
      synchronized (lock) {
        published++;
        lock.notifyAll();
      }
    }
  }

  /** Every runner streams its share; returns once the hub kept and published all of them. */
  @Benchmark
  @OperationsPerInvocation(FRAMES)
  public long persistedAndPublished() throws Exception {
    long target;
    synchronized (lock) {
      target = published + FRAMES;
    }
    List<CompletableFuture<?>> sent = new ArrayList<>();
    for (int i = 0; i < RUNNERS; i++) {
      String taskId = task(i);
      sent.add(
          Source.range(1, FRAMES / RUNNERS)
              .map(n -> (SequencedFrame) progress(taskId))
              .runWith(clients.get(i).outbound(), system)
              .toCompletableFuture());
    }
    CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(300, TimeUnit.SECONDS);
    long deadline = System.currentTimeMillis() + 300_000;
    synchronized (lock) {
      while (published < target) {
        long left = deadline - System.currentTimeMillis();
        if (left <= 0) {
          throw new TimeoutException(published + " of " + target + " frames published");
        }
        lock.wait(left);
      }
      return published;
    }
  }

  private TaskProgress progress(String taskId) {
    return new TaskProgress(
        taskId, "text", JsonNodeFactory.instance.objectNode().put("delta", payload));
  }

  private static String task(int i) {
    return "bench-task-" + i;
  }

  @TearDown(Level.Trial)
  public void close() throws Exception {
    for (RunnerClient c : clients) {
      c.close().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    hub.close().toCompletableFuture().get(60, TimeUnit.SECONDS);
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    if (h2Dir != null) {
      deleteTree(h2Dir);
    }
  }

  private static void emptyPostgres(HubStore s) throws SQLException {
    try (Connection c = DriverManager.getConnection(s.url(), s.user(), s.password());
        Statement st = c.createStatement()) {
      st.execute("TRUNCATE event_tag, event_journal, snapshot");
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
