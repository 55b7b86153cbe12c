package io.capsule.hub.queue;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
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
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * The project's queue in the hub's store: appends go to the project's {@link QueueEntity}, and
 * {@link #recorded()} is read once at open through Persistence Query, as {@code
 * PersistentHubJournal} reads the tasks. The system must already run the hub's store and cluster
 * (open a {@code PersistentHubJournal} on it first).
 */
public final class PersistentQueueStore implements QueueStore {
  private final ClusterSharding sharding;
  private final String projectId;
  private final Duration timeout;
  private final List<QueueEvent> recorded;

  private PersistentQueueStore(
      ActorSystem<?> system, String projectId, Duration timeout, List<QueueEvent> recorded) {
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
    JdbcReadJournal query =
        PersistenceQuery.get(system)
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    String pid = QueueEntity.KEY.name() + "|" + projectId;
    try {
      List<QueueEvent> events =
          query
              .currentEventsByPersistenceId(pid, 0L, Long.MAX_VALUE)
              .map(EventEnvelope::event)
              .map(QueueEvent.class::cast)
              .runWith(Sink.seq(), system)
              .toCompletableFuture()
              .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return new PersistentQueueStore(system, projectId, timeout, events);
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

  private static ProtocolException failed(String why, Throwable cause) {
    return new ProtocolException(
        Diagnostic.of(Code.E_PRO_010, "the hub's store: " + why)
            .withHint("check the store (database up, disk not full), then start the hub again"),
        cause);
  }
}
