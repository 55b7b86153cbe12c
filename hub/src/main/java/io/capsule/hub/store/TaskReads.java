package io.capsule.hub.store;

import io.capsule.hub.store.HubJournal.Entry;
import io.capsule.hub.task.TaskEntity;
import io.capsule.hub.task.TaskEvent;
import io.capsule.hub.task.TaskLedger;
import io.capsule.hub.task.TaskRow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.pattern.Patterns;
import org.apache.pekko.persistence.Persistence;
import org.apache.pekko.persistence.SelectedSnapshot;
import org.apache.pekko.persistence.SnapshotProtocol;
import org.apache.pekko.persistence.SnapshotSelectionCriteria;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.persistence.query.Sequence;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * Reads the task entities' journal for {@link PersistentHubJournal}: every task's events, or
 * ({@code restorable}) its latest snapshot's {@link TaskLedger#kept} and the events after it,
 * folded the same way ({@link TaskLedger#apply}). A snapshot written before ledgers kept events
 * (its {@code kept} null) counts as none: that task's events are read from its first. Counts the
 * journal events (rows: {@link io.capsule.hub.task.TaskRow}) it reads, so a test can see that a
 * restart does not read history.
 */
final class TaskReads {
  /** What a read found: the entries, tasks in the order first recorded, and the events read. */
  record Read(List<Entry> entries, long eventsRead) {
    Read {
      entries = List.copyOf(entries);
    }
  }

  /** One task's part: its entries and where its first event sits in the journal. */
  private record Task(List<Entry> entries, long firstOrdering, long eventsRead) {}

  private final ActorSystem<?> system;
  private final Duration timeout;
  private final boolean restorable;
  private final JdbcReadJournal query;

  TaskReads(ActorSystem<?> system, Duration timeout, boolean restorable) {
    this.system = system;
    this.timeout = timeout;
    this.restorable = restorable;
    this.query =
        PersistenceQuery.get(system)
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
  }

  CompletionStage<Read> all() {
    String prefix = TaskEntity.KEY.name() + "|";
    return query
        .currentPersistenceIds()
        .filter(pid -> pid.startsWith(prefix))
        .mapAsync(4, this::task)
        .filter(t -> !t.entries().isEmpty())
        .runWith(Sink.seq(), system)
        .thenApply(
            tasks -> {
              List<Task> ordered = new ArrayList<>(tasks);
              ordered.sort(Comparator.comparingLong(Task::firstOrdering));
              List<Entry> out = new ArrayList<>();
              long read = 0;
              for (Task t : ordered) {
                out.addAll(t.entries());
                read += t.eventsRead();
              }
              return new Read(out, read);
            });
  }

  private CompletionStage<Task> task(String pid) {
    CompletionStage<Snap> base =
        restorable
            ? latestSnapshot(pid)
            : CompletableFuture.completedFuture(null); // every event, unfolded
    return base.thenCompose(
        snap -> {
          boolean folded = snap != null && snap.ledger().kept() != null;
          long from = folded ? snap.seq() + 1 : 1;
          return events(pid, from)
              .thenCompose(
                  tail -> {
                    CompletionStage<Long> first =
                        from == 1
                            ? CompletableFuture.completedFuture(ordering(tail))
                            : events(pid, 1, 1).thenApply(TaskReads::ordering);
                    return first.thenApply(
                        at -> {
                          long read = tail.size() + (from == 1 ? 0 : 1);
                          return new Task(entries(folded ? snap.ledger() : null, tail), at, read);
                        });
                  });
        });
  }

  /** The snapshot's kept events and the tail's, folded ({@code restorable}) or each as it is. */
  private List<Entry> entries(TaskLedger base, List<EventEnvelope> tail) {
    List<Entry> out = new ArrayList<>();
    if (!restorable) {
      for (EventEnvelope env : tail) {
        for (TaskEvent e : ((TaskRow) env.event()).events()) {
          out.add(PersistentHubJournal.entry(e, 1));
        }
      }
      return out;
    }
    TaskLedger ledger = base != null ? base : TaskLedger.EMPTY;
    for (EventEnvelope env : tail) {
      ledger = ledger.apply((TaskRow) env.event());
    }
    for (TaskLedger.Kept k : ledger.kept()) {
      out.add(PersistentHubJournal.entry(k.event(), k.folded()));
    }
    return out;
  }

  /** A snapshot's ledger and the sequence number it was taken at. */
  private record Snap(TaskLedger ledger, long seq) {}

  private CompletionStage<Snap> latestSnapshot(String pid) {
    org.apache.pekko.actor.ActorRef store =
        Persistence.get(Adapter.toClassic(system))
            .snapshotStoreFor("", com.typesafe.config.ConfigFactory.empty());
    return Patterns.ask(
            store,
            new SnapshotProtocol.LoadSnapshot(
                pid, SnapshotSelectionCriteria.latest(), Long.MAX_VALUE),
            timeout)
        .thenApply(
            answer -> {
              if (answer instanceof SnapshotProtocol.LoadSnapshotFailed f) {
                throw new IllegalStateException(
                    "cannot load the snapshot of " + pid + ": " + f.cause().getMessage(),
                    f.cause());
              }
              SnapshotProtocol.LoadSnapshotResult r = (SnapshotProtocol.LoadSnapshotResult) answer;
              if (r.snapshot().isEmpty()) {
                return null;
              }
              SelectedSnapshot s = r.snapshot().get();
              return s.snapshot() instanceof TaskLedger l
                  ? new Snap(l, s.metadata().sequenceNr())
                  : null; // not a ledger: read the task's events from its first
            });
  }

  private CompletionStage<List<EventEnvelope>> events(String pid, long from) {
    return events(pid, from, Long.MAX_VALUE);
  }

  private CompletionStage<List<EventEnvelope>> events(String pid, long from, long to) {
    return query.currentEventsByPersistenceId(pid, from, to).runWith(Sink.seq(), system);
  }

  private static long ordering(List<EventEnvelope> events) {
    return events.isEmpty() || !(events.get(0).offset() instanceof Sequence s)
        ? Long.MAX_VALUE
        : s.value();
  }
}
