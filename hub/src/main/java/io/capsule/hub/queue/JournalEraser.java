package io.capsule.hub.queue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.Done;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.persistence.AbstractPersistentActor;
import org.apache.pekko.persistence.DeleteMessagesFailure;
import org.apache.pekko.persistence.DeleteMessagesSuccess;
import org.apache.pekko.persistence.DeleteSnapshotsFailure;
import org.apache.pekko.persistence.DeleteSnapshotsSuccess;
import org.apache.pekko.persistence.Recovery;
import org.apache.pekko.persistence.RecoveryCompleted;
import org.apache.pekko.persistence.SnapshotSelectionCriteria;

/**
 * Erases one persistent entity's events and snapshots from the hub's store through Pekko
 * Persistence's own deletion (the journal and snapshot plugins configured for the system), so a
 * forgotten task's history leaves the store on H2 and PostgreSQL alike.
 *
 * <p>A short-lived classic persistent actor with the entity's persistence id: it recovers nothing
 * (it only learns the highest sequence number), asks the journal to delete every event and the
 * snapshot store every snapshot, completes, and stops. It writes no event, so it never competes
 * with the entity as a writer; call it only for an entity that will not write again (a finished,
 * forgotten task). Whether it succeeded or not, it stops within {@code timeout}.
 */
public final class JournalEraser extends AbstractPersistentActor {
  private static final AtomicLong ERASERS = new AtomicLong();
  private final String persistenceId;
  private final CompletableFuture<Done> done;
  private boolean eventsGone;
  private boolean snapshotsGone;

  private JournalEraser(String persistenceId, CompletableFuture<Done> done) {
    this.persistenceId = persistenceId;
    this.done = done;
  }

  /**
   * Erases {@code persistenceId}'s events and snapshots; completes once both are deleted, fails
   * when the store refused or did not answer within {@code timeout}.
   */
  public static CompletionStage<Done> erase(
      ActorSystem<?> system, String persistenceId, Duration timeout) {
    CompletableFuture<Done> done = new CompletableFuture<>();
    org.apache.pekko.actor.ActorRef eraser;
    try {
      // A system actor: a typed system's user guardian takes no classic children from outside.
      eraser =
          ((ExtendedActorSystem) Adapter.toClassic(system))
              .systemActorOf(
                  Props.create(JournalEraser.class, persistenceId, done),
                  "capsule-erase-" + ERASERS.incrementAndGet());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return done.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
        .whenComplete(
            (d, e) -> {
              if (e != null) { // it stops itself once done; a refused or late one is stopped here
                eraser.tell(org.apache.pekko.actor.PoisonPill.getInstance(), null);
              }
            });
  }

  @Override
  public String persistenceId() {
    return persistenceId;
  }

  @Override
  public Recovery recovery() {
    return Recovery.none();
  }

  @Override
  public Receive createReceiveRecover() {
    return receiveBuilder()
        .match(
            RecoveryCompleted.class,
            c -> {
              deleteMessages(Long.MAX_VALUE);
              deleteSnapshots(SnapshotSelectionCriteria.latest());
            })
        .matchAny(ignored -> {})
        .build();
  }

  @Override
  public Receive createReceive() {
    return receiveBuilder()
        .match(
            DeleteMessagesSuccess.class,
            s -> {
              eventsGone = true;
              finishIfDone();
            })
        .match(
            DeleteSnapshotsSuccess.class,
            s -> {
              snapshotsGone = true;
              finishIfDone();
            })
        .match(DeleteMessagesFailure.class, f -> fail(f.cause()))
        .match(DeleteSnapshotsFailure.class, f -> fail(f.cause()))
        .build();
  }

  private void finishIfDone() {
    if (eventsGone && snapshotsGone) {
      done.complete(Done.getInstance());
      getContext().stop(getSelf());
    }
  }

  private void fail(Throwable cause) {
    done.completeExceptionally(cause);
    getContext().stop(getSelf());
  }
}
