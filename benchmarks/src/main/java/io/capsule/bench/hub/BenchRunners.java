package io.capsule.bench.hub;

import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.frame.TaskReportBody;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.protocol.token.TokenSource;
import io.capsule.protocol.ws.ConnectionState;
import io.capsule.protocol.ws.RunnerClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * {@code n} real runner clients ({@link RunnerClient}, the one {@code capsule runner} uses) in this
 * JVM, each on its own WebSocket to the hub, announcing the bench capsule and {@code slots} free
 * slots in {@code hello.capabilities}. A runner answers each {@code task.assign} at once with a
 * {@code task.report} ({@code done}), so its slot frees as soon as the hub applies the report: the
 * bench measures placement, not a run.
 *
 * <p>Whoever submits a task calls {@link #expect} first and waits on what it returns: it completes
 * with the runner's id when that runner receives the assign.
 */
final class BenchRunners {
  private final List<RunnerClient> clients = new ArrayList<>();
  private final Map<String, CompletableFuture<String>> assigned = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> perRunner = new ConcurrentHashMap<>();

  /** The first thing that went wrong in a runner (a report refused): fails the next wait. */
  private final AtomicReference<Throwable> failure = new AtomicReference<>();

  private BenchRunners() {}

  /** Connects {@code n} runners and returns once the hub has taken every hello in (its ack). */
  static BenchRunners connect(BenchHub hub, int n, int slots, ProtocolConfig config)
      throws Exception {
    BenchRunners fleet = new BenchRunners();
    List<CompletableFuture<Void>> up = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String id = String.format("r-%03d", i);
      CompletableFuture<Void> connected = new CompletableFuture<>();
      up.add(connected);
      fleet.perRunner.put(id, new AtomicLong());
      RunnerClient.Settings settings =
          new RunnerClient.Settings(
              hub.hub.runnerUrl(),
              BenchHub.PROJECT,
              "bench",
              List.of(
                  Capabilities.ACK,
                  Capabilities.ERROR_FRAMES,
                  Capabilities.CAPSULE_PREFIX + BenchHub.CAPSULE,
                  "slots:" + slots),
              TokenSource.fixed(hub.runnerToken(id)),
              config,
              // CONNECTED comes after the hub's first ack: the hub has the runner's capabilities.
              s -> {
                if (s.status() == ConnectionState.Status.CONNECTED) {
                  connected.complete(null);
                }
              });
      RunnerClient client = RunnerClient.start(hub.system, settings);
      fleet.clients.add(client);
      client
          .inbound()
          .runWith(
              Sink.foreach(
                  f -> {
                    if (f instanceof TaskAssign a) {
                      fleet.onAssign(id, client, a);
                    }
                  }),
              hub.system);
    }
    CompletableFuture.allOf(up.toArray(CompletableFuture[]::new))
        .get(BenchHub.SLOW.toSeconds(), TimeUnit.SECONDS);
    return fleet;
  }

  private void onAssign(String runner, RunnerClient client, TaskAssign a) {
    perRunner.get(runner).incrementAndGet();
    assigned.computeIfAbsent(a.taskId(), k -> new CompletableFuture<>()).complete(runner);
    client
        .send(report(a.taskId()))
        .whenComplete(
            (sent, e) -> {
              if (e != null) {
                failure.compareAndSet(null, e);
              }
            });
  }

  private static TaskReport report(String taskId) {
    return new TaskReport(
        TaskReportBody.builder(taskId, "done", new UsageSplit(1, 1, 0, 0, 1))
            .summaryBusiness("placed")
            .build());
  }

  /** What completes with the runner's id once {@code taskId}'s assign reaches it. */
  CompletableFuture<String> expect(String taskId) {
    Throwable t = failure.get();
    if (t != null) {
      throw new IllegalStateException("a runner failed: " + t, t);
    }
    return assigned.computeIfAbsent(taskId, k -> new CompletableFuture<>());
  }

  /** Waits for {@code taskId}'s assign (bounded) and forgets it; the runner that got it. */
  String awaitAssign(CompletableFuture<String> expected, String taskId) throws Exception {
    try {
      return expected.get(BenchHub.SLOW.toSeconds(), TimeUnit.SECONDS);
    } finally {
      assigned.remove(taskId);
    }
  }

  /** How many runners received at least one task, of how many. */
  String spread() {
    long used = perRunner.values().stream().filter(c -> c.get() > 0).count();
    long total = perRunner.values().stream().mapToLong(AtomicLong::get).sum();
    return total + " assigns on " + used + " of " + perRunner.size() + " runners";
  }

  void close() throws Exception {
    List<CompletableFuture<?>> closed = new ArrayList<>();
    for (RunnerClient c : clients) {
      closed.add(c.close().toCompletableFuture());
    }
    CompletableFuture.allOf(closed.toArray(CompletableFuture[]::new))
        .get(BenchHub.SLOW.toSeconds(), TimeUnit.SECONDS);
  }
}
