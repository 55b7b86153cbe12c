package io.capsule.hub;

import io.capsule.hub.events.LocalFeed;
import io.capsule.hub.events.TaskEntry;
import io.capsule.hub.runner.RunnerOpened;
import io.capsule.hub.store.HubJournal;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.japi.function.Function;

/**
 * The project's brain as one actor: a Cluster Sharding entity keyed by project id, so it lives on
 * exactly one node of the cluster at a time (a hub without a cluster runs the same actor on its own
 * node). It restores the project's state from the shared journal as a restarted hub does ({@link
 * ProjectHub}), stashing what arrives meanwhile, then answers runner sockets (through their
 * gateways), the task API (serialized HTTP requests) and SSE look-ups. When its node dies, the
 * split-brain resolver downs the node and sharding starts the brain on a survivor, which restores
 * the same way; the gateways, which watch the brain's actor, close their sockets so the runners
 * resume against it.
 */
final class HubBrain {
  static final EntityTypeKey<Command> KEY = EntityTypeKey.create(Command.class, "CapsuleHubBrain");

  /** Messages to the brain; every public one is serializable (it may come from another node). */
  interface Command {}

  /** A runner socket accepted by a gateway on some node. */
  record Connect(RunnerOpened opened) implements Command, HubCbor {}

  /** A task API request, answered with the brain's HTTP response. */
  record Call(ApiCall request, ActorRef<ApiCall.Reply> replyTo) implements Command, HubCbor {}

  /** Is the task known, and its events that no journal holds (after {@code after}). */
  record Lookup(String taskId, long after, ActorRef<Found> replyTo) implements Command, HubCbor {}

  /**
   * @param state {@code task}, {@code forgotten} or {@code unknown}
   * @param history the events only the brain has (a task that ended unplaced; every event when the
   *     hub has no store)
   */
  record Found(String state, List<LiveFeed.Entry> history) implements HubCbor {}

  /**
   * Stops the brain: its runners' sockets close (1000), then it stops, or (sharded) asks its shard
   * to passivate it, so that messages sent after this start a new brain that reads the store again.
   */
  record Stop() implements Command, HubCbor {}

  private record CoreStopped() implements Command {}

  private record Restored(ProjectHub.Restored parts, Throwable failure) implements Command {}

  private HubBrain() {}

  /**
   * The brain of {@code projectId}.
   *
   * @param journal reads the project's journal now (blocking; run off the actor threads): a brain
   *     that starts again, on this node or another, must see everything written before
   */
  static Behavior<Command> create(
      String projectId, ProjectHub.Deps deps, Supplier<HubJournal> journal) {
    return create(projectId, deps, journal, Optional.empty());
  }

  /** The brain as a sharded entity of {@code shard}. */
  static Behavior<Command> create(
      String projectId,
      ProjectHub.Deps deps,
      Supplier<HubJournal> journal,
      Optional<ActorRef<ClusterSharding.ShardCommand>> shard) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withStash(
                // Bounded: runners and API calls that arrive while the store is read. Past it
                // they are dropped and their asks time out (503 E-HUB-007, a runner redials).
                10_000,
                stash -> {
                  var blocking =
                      ctx.getSystem().dispatchers().lookup(DispatcherSelector.blocking());
                  ctx.pipeToSelf(
                      CompletableFuture.supplyAsync(
                          () ->
                              ProjectHub.read(
                                  ctx.getSystem(), projectId, journal.get(), deps.storeTimeout()),
                          blocking),
                      Restored::new);
                  ctx.getLog().info("project {}: the hub's brain starts here", projectId);
                  return restoring(ctx, stash, projectId, deps, shard);
                }));
  }

  private static Behavior<Command> restoring(
      ActorContext<Command> ctx,
      StashBuffer<Command> stash,
      String projectId,
      ProjectHub.Deps deps,
      Optional<ActorRef<ClusterSharding.ShardCommand>> shard) {
    return Behaviors.receive(Command.class)
        .onMessage(
            Restored.class,
            r -> {
              if (r.failure() != null) {
                // The entity stops; the next message starts it again and it reads again.
                ctx.getLog().error("project {}: the brain cannot restore", projectId, r.failure());
                deps.built().accept(null, r.failure());
                return Behaviors.stopped();
              }
              ProjectHub hub;
              try {
                hub = ProjectHub.build(ctx, projectId, deps, r.parts());
              } catch (RuntimeException e) {
                ctx.getLog().error("project {}: the journal does not replay", projectId, e);
                deps.built().accept(null, e);
                return Behaviors.stopped();
              }
              // The brain's core stops on its own when it cannot keep its journal: then the whole
              // brain stops, and the next message starts it again from the store.
              ctx.watchWith(hub.hub.brainActor(), new CoreStopped());
              // The unfinished tasks' runners resume next and replay what they streamed while no
              // brain was up: the store gets their tasks ready meanwhile, not in the first write.
              r.parts()
                  .journal()
                  .prepare(
                      projectId,
                      hub.book.all().stream().filter(t -> !t.finished()).map(t -> t.id).toList());
              deps.built().accept(hub, null);
              ctx.getLog()
                  .info(
                      "project {}: the brain restored {} tasks", projectId, hub.book.all().size());
              return stash.unstashAll(active(ctx, hub, shard));
            })
        .onAnyMessage(
            m -> {
              if (!stash.isFull()) {
                stash.stash(m);
              }
              return Behaviors.same();
            })
        .build();
  }

  private static Behavior<Command> active(
      ActorContext<Command> ctx,
      ProjectHub hub,
      Optional<ActorRef<ClusterSharding.ShardCommand>> shard) {
    Function<HttpRequest, CompletionStage<HttpResponse>> handler =
        hub.route().seal().handler(ctx.getSystem());
    return Behaviors.receive(Command.class)
        .onMessage(
            Connect.class,
            c -> {
              hub.hub.open(c.opened());
              return Behaviors.same();
            })
        .onMessage(
            Call.class,
            c -> {
              // The route runs on the HTTP side's threads, not this actor's: TaskBook and
              // TaskQueue are thread-safe, and a slow store write must not hold the brain.
              CompletionStage<HttpResponse> response;
              try {
                response = handler.apply(c.request().toRequest());
              } catch (Exception e) {
                response = CompletableFuture.failedFuture(e);
              }
              ApiCall.answer(response, ctx.getSystem())
                  .exceptionally(ApiCall::failed)
                  .thenAccept(c.replyTo()::tell);
              return Behaviors.same();
            })
        .onMessage(
            Lookup.class,
            l -> {
              l.replyTo().tell(found(hub, l));
              return Behaviors.same();
            })
        .onMessage(
            Stop.class,
            s -> {
              hub.hub.close(); // closes the runners' sockets with 1000, then stops the core
              if (shard.isEmpty()) {
                return Behaviors.stopped();
              }
              shard.get().tell(new ClusterSharding.Passivate<>(ctx.getSelf()));
              return Behaviors.same();
            })
        .onMessage(CoreStopped.class, s -> Behaviors.stopped())
        .onSignal(
            PostStop.class,
            s -> {
              hub.stop();
              return Behaviors.same();
            })
        .build();
  }

  private static Found found(ProjectHub hub, Lookup l) {
    var task = hub.book.get(l.taskId());
    if (task.isEmpty()) {
      return new Found(hub.book.wasForgotten(l.taskId()) ? "forgotten" : "unknown", List.of());
    }
    LocalFeed.Subscription sub =
        task.get().subscribe(l.after(), hub.api.journaled(), (TaskEntry e) -> {});
    sub.cancel().run();
    return new Found(
        "task",
        sub.history().stream()
            .map(e -> new LiveFeed.Entry(l.taskId(), e.id(), e.event(), e.data().toString()))
            .toList());
  }
}
