package io.capsule.hub.store;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.HubCluster;
import io.capsule.hub.placement.Attempt;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.task.TaskEntity;
import io.capsule.hub.task.TaskEvent;
import io.capsule.hub.task.TaskLedger;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.SequencedFrame;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;

/**
 * The hub's journal kept by sharded, event-sourced {@link TaskEntity task entities} in a Pekko
 * Persistence store (H2 in memory or in a file, PostgreSQL: see {@link HubStore}). Each entry is
 * persisted by its task's entity, which checks it against the task's ledger first; {@link
 * #appendAllAsync} completes only once the store has it, so the hub's rule (record, then ack or
 * publish) holds.
 *
 * <p>{@link #restorable()} is read once, when the journal opens: per task its latest snapshot (a
 * {@link TaskLedger} whose {@link TaskLedger#kept} holds what a restart needs of the events before
 * it) and the events after it (Persistence Query), folded the same way; tasks in the order they
 * were first recorded. A task snapshots at its report, so a finished task costs no event read (but
 * its first, for that order); a running one at most {@code TaskEntity.SNAPSHOT_EVERY}. {@link
 * #recorded()} reads every event of every task, on demand (tools and tests). Entries of different
 * tasks need no common order: the protocol numbers frames per task.
 *
 * <p>Threading: {@link #appendAllAsync} never blocks; {@link #append} and {@link #appendAll} block
 * their caller for at most the write bound. All are safe from any thread.
 */
public final class PersistentHubJournal implements HubJournal {
  private static final FrameCodec CODEC = FrameCodec.shared();

  private final ActorSystem<?> system;
  private final ClusterSharding sharding;
  private final Duration timeout;
  private final List<Entry> restorable;
  private final long eventsRead;

  private PersistentHubJournal(ActorSystem<?> system, Duration timeout, TaskReads.Read read) {
    this.system = system;
    this.sharding = ClusterSharding.get(system);
    this.timeout = timeout;
    this.restorable = read.entries();
    this.eventsRead = read.eventsRead();
  }

  /**
   * Starts task sharding on {@code system} (joining a cluster of one when no seeds are set) and
   * reads what the store holds. The system must run with {@link HubCluster#singleNode()} (or a
   * cluster's settings) and {@link HubStore#pekkoConfig()} in its config.
   *
   * @throws ProtocolException {@code E-PRO-010} when the store cannot be read within {@code
   *     timeout}
   */
  public static PersistentHubJournal open(ActorSystem<?> system, Duration timeout) {
    return open(system, timeout, timeout);
  }

  /**
   * As {@link #open(ActorSystem, Duration)}, with its own bound for the first read: at start the
   * JVM is cold, the pool and the cluster of one are still forming, and the read grows with the
   * store's history, so a bound fit for one write (seconds) refused to restart a healthy hub.
   *
   * @param startTimeout how long the first read may take
   * @param timeout how long each later write may take
   */
  public static PersistentHubJournal open(
      ActorSystem<?> system, Duration startTimeout, Duration timeout) {
    HubCluster.joinSelfIfAlone(system);
    ClusterSharding.get(system)
        .init(Entity.of(TaskEntity.KEY, ctx -> TaskEntity.create(ctx.getEntityId())));
    return new PersistentHubJournal(system, timeout, read(system, startTimeout, true));
  }

  /** Read when the journal opened: see the class comment. */
  @Override
  public List<Entry> restorable() {
    return restorable;
  }

  /** How many events the store gave {@link #restorable()} when the journal opened. */
  public long eventsRead() {
    return eventsRead;
  }

  /**
   * Every event of every task, read now (blocking, up to the write bound): the whole history, for
   * tools and tests; a hub restores from {@link #restorable()}.
   *
   * @throws ProtocolException {@code E-PRO-010} when the store cannot be read in time
   */
  @Override
  public List<Entry> recorded() {
    return read(system, timeout, false).entries();
  }

  /**
   * The same store, read again now (blocking, up to the timeout): what a hub's brain that starts on
   * this node, perhaps after another node's brain died, must restore from.
   *
   * @throws ProtocolException {@code E-PRO-010} when the store cannot be read in time
   */
  public PersistentHubJournal reopen() {
    return new PersistentHubJournal(system, timeout, read(system, timeout, true));
  }

  @Override
  public void append(Entry entry) {
    appendAll(List.of(entry));
  }

  /**
   * Records entries that arrived together and blocks until the store has them (at most the write
   * bound): for tools and tests; the hub uses {@link #appendAllAsync}.
   */
  @Override
  public void appendAll(List<Entry> entries) {
    try {
      appendAllAsync(entries)
          .toCompletableFuture()
          .get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw failed("interrupted while the store wrote", e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof ProtocolException p
          ? p
          : failed(String.valueOf(e.getCause().getMessage()), e.getCause());
    } catch (TimeoutException e) {
      throw failed("the store did not confirm a write within " + timeout, e);
    }
  }

  /**
   * One {@link TaskEntity.Record} per task, all sent at once: the entities persist concurrently and
   * the JDBC journal groups their rows into few transactions ({@code jdbc-journal.batchSize}, see
   * {@link HubStore#pekkoConfig()}). Completes when every task confirmed; fails with {@code
   * E-PRO-010} when one refuses, the store fails, or no answer comes within the write bound.
   */
  @Override
  public CompletionStage<Void> appendAllAsync(List<Entry> entries) {
    Map<String, List<TaskEvent>> byTask = new LinkedHashMap<>();
    // A write holds hundreds of entries of a few tasks: each (project, wire id) pair's list is
    // found once (its entity id built once), then by two strings whose hashes they keep.
    Map<WireTask, List<TaskEvent>> byWire = new HashMap<>();
    for (Entry e : entries) {
      WireTask w = new WireTask(e.runner().projectId(), e.frame().taskId());
      List<TaskEvent> events = byWire.get(w);
      if (events == null) {
        // Every attempt of a task in the task's entity: one history, its event ids running on.
        String id = TaskEntity.entityId(w.projectId(), Attempt.taskOf(w.wireId()));
        events = byTask.computeIfAbsent(id, k -> new ArrayList<>());
        byWire.put(w, events);
      }
      events.add(event(e));
    }
    CompletableFuture<?>[] writes = new CompletableFuture<?>[byTask.size()];
    int i = 0;
    for (Map.Entry<String, List<TaskEvent>> t : byTask.entrySet()) {
      writes[i++] =
          sharding
              .entityRefFor(TaskEntity.KEY, t.getKey())
              .<Done>askWithStatus(reply -> new TaskEntity.Record(t.getValue(), reply), timeout)
              .toCompletableFuture();
    }
    return CompletableFuture.allOf(writes)
        .handle(
            (ok, e) -> {
              if (e == null) {
                return null;
              }
              Throwable cause = e.getCause() != null ? e.getCause() : e;
              throw cause instanceof java.util.concurrent.TimeoutException
                      || cause instanceof org.apache.pekko.pattern.AskTimeoutException
                  ? failed("the store did not confirm a write within " + timeout, cause)
                  : failed(String.valueOf(cause.getMessage()), cause);
            });
  }

  /**
   * Starts each task's entity (by the task's own id, which holds all its attempts: {@link Attempt};
   * it recovers its ledger from the store) with a {@link TaskEntity.Get} whose answer is dropped:
   * after a failover, twenty entities recovering at once inside the first write held every task's
   * first frame back ~1 s; started while the runners' hellos and replays are on their way, they are
   * ready when the frames come. An entity that does not answer within the write bound only recovers
   * at the first write, as before.
   */
  @Override
  public void prepare(String projectId, Collection<String> taskIds) {
    for (String taskId : taskIds) {
      sharding
          .entityRefFor(TaskEntity.KEY, TaskEntity.entityId(projectId, Attempt.taskOf(taskId)))
          .<TaskLedger>ask(TaskEntity.Get::new, timeout);
    }
  }

  /** Nothing to release here: the store's pool ends with the actor system. */
  @Override
  public void close() {}

  public ActorSystem<?> system() {
    return system;
  }

  /** A frame's task as it came: its project and its wire id (an attempt's, or the task's own). */
  private record WireTask(String projectId, String wireId) {}

  static TaskEvent event(Entry e) {
    SequencedFrame f = e.frame();
    return new TaskEvent(
        e.runner().projectId(),
        e.runner().runnerId(),
        e.direction(),
        f.type(),
        f.seq(),
        e.text() != null ? e.text() : CODEC.encodeToString(f));
  }

  static Entry entry(TaskEvent e, int folded) {
    SequencedFrame f = (SequencedFrame) CODEC.decode(e.frame(), false);
    return new Entry(new RunnerKey(e.projectId(), e.runnerId()), e.direction(), f, folded, null);
  }

  /**
   * What the store holds, tasks in the order they were first recorded: folded ({@code restorable},
   * from each task's latest snapshot on) or every event.
   */
  private static TaskReads.Read read(ActorSystem<?> system, Duration timeout, boolean restorable) {
    try {
      return new TaskReads(system, timeout, restorable)
          .all()
          .toCompletableFuture()
          .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw failed("interrupted while reading the store", e);
    } catch (ExecutionException e) {
      throw failed("cannot read the store: " + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw failed("the store was not read within " + timeout, e);
    }
  }

  private static ProtocolException failed(String why, Throwable cause) {
    return new ProtocolException(
        Diagnostic.of(Code.E_PRO_010, "the hub's store: " + why)
            .withHint(
                "check the store (database up, disk not full); the hub stops rather than"
                    + " acknowledge what it could not keep"),
        cause);
  }
}
