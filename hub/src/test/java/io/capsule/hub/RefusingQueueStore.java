package io.capsule.hub;

import io.capsule.hub.queue.QueueEvent;
import io.capsule.hub.queue.QueueStore;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.Done;

/**
 * A queue store that keeps every event until told to refuse, then fails every write with "the disk
 * is full" (what a full disk or a database gone away looks like to the queue).
 */
final class RefusingQueueStore implements QueueStore {
  private final AtomicBoolean refusing = new AtomicBoolean();
  private final List<QueueEvent> kept = new CopyOnWriteArrayList<>();

  void refuse(boolean refuse) {
    refusing.set(refuse);
  }

  /** Whether the store kept an event of this kind for this task. */
  boolean kept(QueueEvent.Kind kind, String taskId) {
    return kept.stream().anyMatch(e -> e.kind() == kind && e.taskId().equals(taskId));
  }

  @Override
  public List<QueueEvent> recorded() {
    return List.of();
  }

  @Override
  public CompletionStage<Done> append(QueueEvent event) {
    if (refusing.get()) {
      return CompletableFuture.failedFuture(new IllegalStateException("the disk is full"));
    }
    kept.add(event);
    return CompletableFuture.completedFuture(Done.getInstance());
  }

  @Override
  public String toString() {
    return "kept " + kept;
  }
}
