package io.capsule.hub.queue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;

/**
 * Where the project's queue is kept: {@link #none()} in memory (a hub without a store), or {@link
 * PersistentQueueStore} in the hub's Pekko Persistence store next to the task entities.
 */
public interface QueueStore {

  /** What earlier hubs recorded, oldest first; read once when the hub starts. */
  List<QueueEvent> recorded();

  /** Completes once the event is kept; fails when the store refused or did not answer in time. */
  CompletionStage<Done> append(QueueEvent event);

  /**
   * Erases a forgotten task's journal (its entity's events and snapshots) from the store the queue
   * shares with the task entities; completes at once where nothing is stored.
   */
  default CompletionStage<Done> eraseTask(String projectId, String taskId) {
    return CompletableFuture.completedFuture(Done.getInstance());
  }

  /** Keeps nothing: the queue lives as long as the hub's process. */
  static QueueStore none() {
    return new QueueStore() {
      @Override
      public List<QueueEvent> recorded() {
        return List.of();
      }

      @Override
      public CompletionStage<Done> append(QueueEvent event) {
        return CompletableFuture.completedFuture(Done.getInstance());
      }
    };
  }
}
