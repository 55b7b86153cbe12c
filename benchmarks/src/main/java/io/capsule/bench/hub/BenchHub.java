package io.capsule.bench.hub;

import com.typesafe.config.ConfigFactory;
import io.capsule.hub.HubCluster;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.store.HubStore;
import io.capsule.hub.store.PersistentHubJournal;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * One hub as {@code capsule hub} starts it, embedded: its own ActorSystem (a cluster of one, as a
 * single node runs), its store migrated, {@link PersistentHubJournal}, a {@link ReferenceHub} on
 * {@code 127.0.0.1:0}. Only the hub's public construction and its HTTP/WebSocket surfaces are used,
 * so the benches measure what a user's clients see. {@link #close()} stops the hub and the system
 * and deletes the H2 file's directory.
 */
final class BenchHub {
  /** Waits on a loaded 2-core machine: long enough for a slow start, still bounded. */
  static final Duration SLOW = Duration.ofSeconds(60);

  static final String PROJECT = "p-bench";

  /** The capsule every bench task asks for and every bench runner announces. */
  static final String CAPSULE = "bench";

  private static final byte[] SECRET =
      "bench-secret-bench-secret-bench-secret".getBytes(StandardCharsets.UTF_8);

  final ActorSystem<Void> system;
  final ReferenceHub hub;
  final ProjectTokens tokens;
  final HttpClient http;
  private final String apiToken;
  private final Optional<Path> stateDir;
  private final HubStore store;

  private BenchHub(
      ActorSystem<Void> system,
      ReferenceHub hub,
      ProjectTokens tokens,
      HttpClient http,
      Optional<Path> stateDir,
      HubStore store) {
    this.store = store;
    this.system = system;
    this.hub = hub;
    this.tokens = tokens;
    this.http = http;
    this.stateDir = stateDir;
    this.apiToken = tokens.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofHours(12));
  }

  /**
   * Starts a hub on {@code store}: {@code memory} (what {@code capsule hub} keeps without {@code
   * --state-dir}: H2 in memory), {@code h2} (an H2 file in a fresh temporary directory, {@code
   * WRITE_DELAY=0}, as with {@code --state-dir}) or {@code postgres} ({@link #emptiedPostgres()}).
   */
  static BenchHub start(String name, String store, ProtocolConfig config) {
    Optional<Path> dir = Optional.empty();
    HubStore hubStore;
    try {
      switch (store) {
        case "memory" -> hubStore = HubStore.memory();
        case "h2" -> {
          dir = Optional.of(Files.createTempDirectory("capsule-bench-hub-"));
          hubStore = HubStore.h2File(dir.get());
        }
        case "postgres" -> hubStore = emptiedPostgres();
        default ->
            throw new IllegalArgumentException("store is memory, h2 or postgres, not " + store);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    hubStore.migrate();
    ActorSystem<Void> system =
        ActorSystem.create(
            Behaviors.empty(),
            name,
            hubStore
                .pekkoConfig()
                .withFallback(HubCluster.singleNode())
                .withFallback(ConfigFactory.load()));
    try {
      ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(30));
      PersistentHubJournal journal = PersistentHubJournal.open(system, SLOW);
      ReferenceHub hub =
          ReferenceHub.start(system, config, tokens, PROJECT, "127.0.0.1", 0, journal)
              .toCompletableFuture()
              .get(SLOW.toSeconds(), TimeUnit.SECONDS);
      HttpClient http = HttpClient.newBuilder().connectTimeout(SLOW).build();
      return new BenchHub(system, hub, tokens, http, dir, hubStore);
    } catch (Exception e) {
      system.terminate();
      deleteTree(dir);
      throw new IllegalStateException("the bench hub did not start: " + e, e);
    }
  }

  /**
   * The PostgreSQL of {@code CAPSULE_PG_URL}, {@code CAPSULE_PG_USER}, {@code CAPSULE_PG_PASSWORD}
   * (a throwaway server: {@code eval "$(benchmarks/scripts/throwaway-postgres.sh start)"}), its hub
   * tables dropped first so every run starts empty (a hub reads its whole store when it starts).
   */
  static HubStore emptiedPostgres() {
    String url = System.getenv("CAPSULE_PG_URL");
    if (url == null) {
      throw new IllegalStateException(
          "set CAPSULE_PG_URL/USER/PASSWORD: eval \"$(benchmarks/scripts/throwaway-postgres.sh"
              + " start)\"");
    }
    HubStore store =
        HubStore.postgres(
            url, System.getenv("CAPSULE_PG_USER"), System.getenv("CAPSULE_PG_PASSWORD"));
    try (java.sql.Connection c =
            java.sql.DriverManager.getConnection(store.url(), store.user(), store.password());
        java.sql.Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS public.event_tag, public.event_journal, public.snapshot");
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException("cannot empty " + store + ": " + e.getMessage(), e);
    }
    return store;
  }

  /** The store this hub runs on (for a bare JDBC baseline into the same database). */
  HubStore store() {
    return store;
  }

  /** A token for runner {@code runnerId} of the bench project. */
  String runnerToken(String runnerId) {
    return tokens.issue(PROJECT, Optional.of(runnerId), Duration.ofHours(12));
  }

  /** {@code POST /v1/tasks} with {@code body}, an api token; the status and the body. */
  HttpResponse<String> submit(String body) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/v1/tasks"))
            .header("Authorization", "Bearer " + apiToken)
            .header("Content-Type", "application/json")
            .timeout(SLOW)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** {@code GET /healthz}: the same server and client, no authentication, no work. */
  HttpResponse<String> healthz() throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/healthz")).timeout(SLOW).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /**
   * The value of the Prometheus sample {@code name} whose labels include {@code label} (e.g. {@code
   * kind="text"}) on the hub's {@code /metrics}; 0 when the series does not exist yet.
   */
  double metric(String name, String label) throws IOException, InterruptedException {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/metrics")).timeout(SLOW).build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException("GET /metrics: " + r.statusCode());
    }
    return r.body()
        .lines()
        .filter(l -> l.startsWith(name + "{") && l.contains(label))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  /** A request of the task's server-sent events, with the api token. */
  HttpRequest events(String taskId) {
    return HttpRequest.newBuilder(URI.create(hub.apiUrl() + "/v1/tasks/" + taskId + "/events"))
        .header("Authorization", "Bearer " + apiToken)
        .header("Accept", "text/event-stream")
        .GET()
        .build();
  }

  void close() throws Exception {
    try {
      hub.stop().toCompletableFuture().get(SLOW.toSeconds(), TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      // Seen once (200 runners, H2 file, load ~20): the measurement before it stands, so say so
      // and go on terminating the system rather than lose the iteration's score.
      System.err.println("bench hub: ReferenceHub.stop() did not complete within " + SLOW);
    } finally {
      system.terminate();
      long t0 = System.nanoTime();
      try {
        system.getWhenTerminated().toCompletableFuture().get(SLOW.toSeconds(), TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        // Twice with 200 runners on the H2 file (cluster of one, ~1,000 task entities): say so
        // rather than lose the trial's last iteration; the fork ends with the trial anyway.
        System.err.println("bench hub: the ActorSystem did not terminate within " + SLOW);
      }
      System.out.printf(
          "bench hub: system terminated in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
      deleteTree(stateDir);
    }
  }

  private static void deleteTree(Optional<Path> dir) {
    if (dir.isEmpty()) {
      return;
    }
    try (Stream<Path> files = Files.walk(dir.get())) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
