package io.capsule.hub.queue;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.task.TaskEntity;
import io.capsule.protocol.ProtocolException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;

/**
 * The project's queue in the hub's store: appends go to the project's {@link QueueEntity}, and
 * {@link #recorded()} is the entity's state asked once at open (a snapshot and a few events, not
 * the project's whole history: see {@link QueueState#asEvents()}). The system must already run the
 * hub's store and cluster (open a {@code PersistentHubJournal} on it first).
 */
public final class PersistentQueueStore implements QueueStore {
  private final ActorSystem<?> system;
  private final ClusterSharding sharding;
  private final String projectId;
  private final Duration timeout;
  private final List<QueueEvent> recorded;

  private PersistentQueueStore(
      ActorSystem<?> system, String projectId, Duration timeout, List<QueueEvent> recorded) {
    this.system = system;
    this.sharding = ClusterSharding.get(system);
    this.projectId = projectId;
    this.timeout = timeout;
    this.recorded = List.copyOf(recorded);
  }

  /**
   * Starts the queue entities' sharding and reads {@code projectId}'s queue.
   *
   * @throws ProtocolException {@code E-PRO-010} when the store cannot be read within {@code
   *     timeout}
   */
  public static PersistentQueueStore open(
      ActorSystem<?> system, String projectId, Duration timeout) {
    ClusterSharding.get(system)
        .init(Entity.of(QueueEntity.KEY, ctx -> QueueEntity.create(ctx.getEntityId())));
    try {
      QueueState state =
          ClusterSharding.get(system)
              .entityRefFor(QueueEntity.KEY, projectId)
              .<QueueState>ask(QueueEntity.Get::new, timeout)
              .toCompletableFuture()
              .get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
      return new PersistentQueueStore(system, projectId, timeout, state.asEvents());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw failed("interrupted while reading the queue", e);
    } catch (ExecutionException e) {
      throw failed("cannot read the queue: " + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw failed("the queue was not read within " + timeout, e);
    }
  }

  @Override
  public List<QueueEvent> recorded() {
    return recorded;
  }

  @Override
  public CompletionStage<Done> append(QueueEvent event) {
    return sharding
        .entityRefFor(QueueEntity.KEY, projectId)
        .askWithStatus(reply -> new QueueEntity.Record(event, reply), timeout);
  }

  /** Erases the task entity's events and snapshots ({@link JournalEraser}). */
  @Override
  public CompletionStage<Done> eraseTask(String projectId, String taskId) {
    String pid = TaskEntity.KEY.name() + "|" + TaskEntity.entityId(projectId, taskId);
    return JournalEraser.erase(system, pid, timeout);
  }

  private static ProtocolException failed(String why, Throwable cause) {
    return new ProtocolException(
        Diagnostic.of(Code.E_PRO_010, "the hub's store: " + why)
            .withHint("check the store (database up, disk not full), then start the hub again"),
        cause);
  }
}
