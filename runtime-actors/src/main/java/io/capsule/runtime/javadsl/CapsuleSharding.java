package io.capsule.runtime.javadsl;

import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.cluster.HostServices;
import io.capsule.runtime.cluster.NodeSlots;
import io.capsule.runtime.cluster.RunCaller;
import io.capsule.runtime.cluster.RunEntity;
import io.capsule.runtime.cluster.Shards;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Capsule runs sharded over an embedding application's Pekko Cluster: each run is an entity whose
 * id is its task id, hosted only on nodes with the runner role ({@code capsule.sharding.role},
 * {@code capsule-runner} by default: the nodes with the harness CLIs installed). Call {@link #init}
 * once on every node, runner or not; then {@link #start} and {@link #cancel} work from any node.
 *
 * <ul>
 *   <li>A start is idempotent by task id while its run lives: a task never runs twice at once.
 *   <li>A runner node hosts at most {@code capsule.run.max-concurrent} runs; a start beyond that
 *       waits ({@code capsule.sharding.slot-wait}) or is refused ({@code E-CLU-002}).
 *   <li>When the node hosting a run leaves or dies, the harness died with it: the caller gets the
 *       outcome {@code failed} with {@code E-CLU-001}, or, when the request asked for it ({@link
 *       RunRequest#retryOnNodeLoss}), {@link RunEvent.AttemptLost} and the run again on another
 *       runner node; exactly one {@link RunEvent.Finished} either way.
 *   <li>No runner node answering within {@code capsule.sharding.start-timeout}: {@code E-CLU-003}.
 *   <li>Events cross nodes one message per parsed batch (at most 64 events and a size under
 *       Artery's frame; an event larger than that alone in numbered parts), numbered; if Artery
 *       drops one (its outbound queue, {@code
 *       pekko.remote.artery.advanced.outbound-message-queue-size}, was full), the caller never gets
 *       an outcome that looks complete: the run is canceled and fails with {@code E-CLU-004}. The
 *       outcome is sent again until the caller confirms it.
 * </ul>
 *
 * <p>Every message between nodes is a record bound to Pekko's Jackson CBOR serializer. A capsule is
 * found on the runner node: a folder path as that node sees it, or an in-memory capsule {@link
 * #register}ed on every runner node under the same name. Thread-safe.
 */
public final class CapsuleSharding {

  /**
   * By identity: typed {@code ActorSystem}s compare equal by path, so every node of a cluster in
   * one JVM (same system name) would be one key.
   */
  private static final Map<ActorSystem<?>, CapsuleSharding> BY_SYSTEM =
      Collections.synchronizedMap(new IdentityHashMap<>());

  private final ActorSystem<?> system;
  private final CapsuleShardingSettings settings;
  private final ClusterSharding sharding;
  private final Optional<EmbeddedRuntime> runtime;
  private final Optional<ActorRef<NodeSlots.Command>> slots;

  /**
   * Registers the run entity type on this node (and, on a runner node, this node's runtime and run
   * slots). Once per system: a second call returns the first instance.
   */
  public static CapsuleSharding init(ActorSystem<?> system, CapsuleShardingSettings settings) {
    synchronized (BY_SYSTEM) {
      CapsuleSharding existing = BY_SYSTEM.get(system);
      if (existing != null) {
        return existing;
      }
      CapsuleSharding s = new CapsuleSharding(system, settings);
      BY_SYSTEM.put(system, s);
      system.getWhenTerminated().thenRun(() -> BY_SYSTEM.remove(system));
      return s;
    }
  }

  /** The instance {@link #init} made for {@code system}. */
  public static CapsuleSharding get(ActorSystem<?> system) {
    CapsuleSharding s = BY_SYSTEM.get(system);
    if (s == null) {
      throw new IllegalStateException(
          "CapsuleSharding.init(system, settings) has not been called for " + system.name());
    }
    return s;
  }

  private CapsuleSharding(ActorSystem<?> system, CapsuleShardingSettings settings) {
    this.system = system;
    this.settings = settings;
    this.sharding = ClusterSharding.get(system);
    Cluster cluster = Cluster.get(system);
    if (cluster.selfMember().hasRole(settings.role())) {
      EmbeddedRuntime rt =
          EmbeddedRuntime.create(system, settings.limits(), settings.loading(), settings.prober());
      ActorRef<NodeSlots.Command> s =
          system.systemActorOf(
              NodeSlots.create(settings.maxConcurrent(), settings.queueMax(), settings.slotWait()),
              "capsule-run-slots",
              Props.empty());
      HostServices host =
          new HostServices(
              rt.guardian(),
              s,
              settings.handOffTimeout(),
              settings.startTimeout(),
              cluster.selfMember().address().toString());
      this.runtime = Optional.of(rt);
      this.slots = Optional.of(s);
      Shards.init(system, settings.role(), settings.numberOfShards(), Optional.of(host));
    } else {
      this.runtime = Optional.empty();
      this.slots = Optional.empty();
      Shards.init(system, settings.role(), settings.numberOfShards(), Optional.empty());
    }
  }

  /** Whether this node hosts runs (it has the runner role). */
  public boolean hostsRuns() {
    return runtime.isPresent();
  }

  public CapsuleShardingSettings settings() {
    return settings;
  }

  /**
   * Registers an in-memory capsule on this runner node. Register it under the same name on every
   * runner node: a run finds it on whichever node hosts it.
   */
  public CompletionStage<CapsuleRef.Registered> register(
      String name, Manifest manifest, Supplier<ProcessDriver> drivers) {
    return runtime
        .map(rt -> rt.register(name, manifest, drivers))
        .orElseGet(
            () ->
                CompletableFuture.failedFuture(
                    new IllegalStateException(
                        "this node has no role '"
                            + settings.role()
                            + "' and hosts no runs: register capsules on the runner nodes")));
  }

  /** This runner node's run slots; empty on a node without the role. */
  public Optional<CompletionStage<NodeSlots.Stats>> slotStats() {
    return slots.map(
        s ->
            AskPattern.<NodeSlots.Command, NodeSlots.Stats>ask(
                s, NodeSlots.GetStats::new, Duration.ofSeconds(10), system.scheduler()));
  }

  /** Starts a run somewhere on a runner node; every event goes to {@code listener}. */
  public RunHandle start(RunRequest request, ActorRef<RunEvent> listener) {
    return startWith(request, Optional.of(listener));
  }

  /** Starts a run whose events nobody hears; wait on {@link RunHandle#outcome()}. */
  public RunHandle start(RunRequest request) {
    return startWith(request, Optional.empty());
  }

  /**
   * A run as a stream: materializing it starts the run; the stream emits every event and completes
   * after {@link RunEvent.Finished}. Cancelling the stream does not cancel the run: use the handle.
   * A consumer {@link EmbeddedRuntime#SOURCE_BUFFER} events behind fails the stream (see there).
   */
  public Source<RunEvent, RunHandle> source(RunRequest request) {
    // As EmbeddedRuntime.source: the caller's relay hands the events into the stream in chunks.
    return EmbeddedRuntime.chunkedSource(
        chunks -> startVia(request, outcome -> RunRelay.chunked(chunks, outcome)));
  }

  /**
   * Cancels a task's run from any node (not only the one that started it); the caller that started
   * it gets the canceled outcome. Nothing happens for a finished task.
   */
  public void cancel(String taskId, String reason) {
    sharding.entityRefFor(RunEntity.TYPE_KEY, taskId).tell(new RunEntity.Cancel(reason));
  }

  private RunHandle startWith(RunRequest request, Optional<ActorRef<RunEvent>> listener) {
    return startVia(request, outcome -> RunRelay.create(listener, outcome));
  }

  /** Starts the run with a relay made by {@code relays} as the listener of the run's events. */
  private RunHandle startVia(
      RunRequest request, Function<CompletableFuture<RunOutcome>, Behavior<Object>> relays) {
    CompletableFuture<RunOutcome> outcome = new CompletableFuture<>();
    String id = UUID.randomUUID().toString();
    ActorRef<RunEvent> relay =
        RunRelay.events(
            system.systemActorOf(relays.apply(outcome), "run-relay-" + id, Props.empty()));
    ActorRef<RunCaller.Command> caller =
        system.systemActorOf(
            RunCaller.create(
                request,
                sharding.entityRefFor(RunEntity.TYPE_KEY, request.taskId()),
                relay,
                settings.startTimeout(),
                settings.startResend()),
            "capsule-run-caller-" + id,
            Props.empty());
    return new RunHandle(
        request.taskId(), reason -> caller.tell(new RunCaller.CancelRequested(reason)), outcome);
  }
}
