package io.capsule.hub.task;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.hub.HubCbor;
import io.capsule.hub.placement.Attempt;
import io.capsule.hub.store.HubJournal.Direction;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A task's facts as its entity keeps them: the runner it is placed on and as which attempt ({@link
 * Attempt}), the last seq the hub sent it, the highest runner seq applied, how many progress events
 * and whether its one report arrived. Pure and immutable: {@link #refusal} decides, {@link #apply}
 * evolves; the entity's snapshots are this record.
 *
 * <p>The rules are the ones a journal must obey to replay (an assign places the task, on another
 * runner or as a later {@link Attempt} on the same one it places it again and the seqs start over;
 * a cancel goes to the runner it is placed on; sent seqs rise; applied runner frames come from the
 * runner the task is placed on, next in seq, nothing after the report). A refused batch is not
 * persisted at all.
 */
public record TaskLedger(
    String runnerId,
    long lastSentSeq,
    long lastAppliedSeq,
    int progressEvents,
    boolean reported,
    int placements,
    List<Kept> kept,
    int attempt)
    implements HubCbor {

  /** No runner ("" in {@code runnerId}: a plain string keeps the snapshot format simple). */
  public static final TaskLedger EMPTY = new TaskLedger("", 0, 0, 0, false, 0, List.of(), 0);

  private static final com.fasterxml.jackson.databind.ObjectMapper STATE_READER =
      new com.fasterxml.jackson.databind.ObjectMapper();

  /**
   * What a restart needs of the task's events, in order: every event but applied progress, and of
   * each run of applied progress (one runner's, seq after seq) only its last event with the run's
   * length ({@code folded}). A progress of kind {@code state} is kept whole: it says the task's
   * state. Null in a snapshot written before the ledger kept it: then the restart reads the task's
   * events.
   */
  public record Kept(TaskEvent event, int folded) implements HubCbor {}

  public TaskLedger {
    kept = kept == null ? null : List.copyOf(kept);
    // A snapshot from before attempts were kept reads 0: its placement was the task's own id.
    attempt = placements > 0 ? Math.max(1, attempt) : attempt;
  }

  /** The runner the task is placed on, if any. */
  public Optional<String> placedOn() {
    return runnerId.isEmpty() ? Optional.empty() : Optional.of(runnerId);
  }

  /** Why {@code e} cannot be recorded after what this ledger holds; empty when it can. */
  public Optional<String> refusal(TaskEvent e) {
    if (e.direction() == Direction.SENT) {
      if (e.isAssign()) {
        if (reported) {
          return Optional.of("the task has its report; it is not placed again");
        }
        if (runnerId.equals(e.runnerId()) && attemptOf(e) <= attempt) {
          return Optional.of(
              "the task is already placed on runner '"
                  + e.runnerId()
                  + "' (attempt "
                  + attempt
                  + "); only a later attempt runs there again");
        }
        return e.seq() == 1 ? Optional.empty() : Optional.of("an assign must carry seq 1");
      }
      if (runnerId.isEmpty()) {
        return Optional.of("a '" + e.type() + "' for a task that was never assigned");
      }
      if (!runnerId.equals(e.runnerId())) {
        return Optional.of(
            "the task is placed on runner '" + runnerId + "', not '" + e.runnerId() + "'");
      }
      return e.seq() > lastSentSeq
          ? Optional.empty()
          : Optional.of("sent seq " + e.seq() + " does not rise above " + lastSentSeq);
    }
    if (!runnerId.equals(e.runnerId())) {
      return Optional.of(
          "runner '"
              + e.runnerId()
              + "' sent '"
              + e.type()
              + "' for a task placed on "
              + placedOn().map(r -> "runner '" + r + "'").orElse("no runner"));
    }
    if (reported) {
      return Optional.of("a '" + e.type() + "' after the task's report");
    }
    return e.seq() == lastAppliedSeq + 1
        ? Optional.empty()
        : Optional.of("applied seq " + e.seq() + " is not the next (" + (lastAppliedSeq + 1) + ")");
  }

  /** The first refusal in {@code batch}, each event judged after the ones before it. */
  public Optional<String> refusal(List<TaskEvent> batch) {
    TaskLedger at = this;
    for (TaskEvent e : batch) {
      Optional<String> no = at.refusal(e);
      if (no.isPresent()) {
        return no;
      }
      // What the next refusal reads, not what a restart keeps: the event handler computes that
      // once the batch is persisted (a copy of the kept list and a look into the frame, per event).
      at = at.after(e, kept);
    }
    return Optional.empty();
  }

  /** The ledger after {@code e}; never refuses (recovery replays what was accepted). */
  public TaskLedger apply(TaskEvent e) {
    return after(e, keep(e));
  }

  /**
   * The ledger after the row's frames, in order; never refuses. The kept list is copied once for
   * the row, not once a frame.
   */
  public TaskLedger apply(TaskRow row) {
    if (row instanceof TaskEvent e) {
      return apply(e);
    }
    List<Kept> k = kept == null ? null : new ArrayList<>(kept);
    // Whether the last kept event folds, carried along: each frame's text is looked into once.
    boolean lastFolds = k != null && !k.isEmpty() && foldable(k.get(k.size() - 1).event());
    TaskLedger at = this;
    for (TaskEvent e : row.events()) {
      if (k != null) {
        lastFolds = keepInto(k, e, lastFolds);
      }
      at = at.after(e, List.of());
    }
    return at.after(k);
  }

  /** This ledger keeping {@code k}. */
  private TaskLedger after(List<Kept> k) {
    return new TaskLedger(
        runnerId, lastSentSeq, lastAppliedSeq, progressEvents, reported, placements, k, attempt);
  }

  /** The ledger after {@code e}, keeping {@code k}. */
  private TaskLedger after(TaskEvent e, List<Kept> k) {
    if (e.isAssign()) {
      return new TaskLedger(
          e.runnerId(), e.seq(), 0, progressEvents, false, placements + 1, k, attemptOf(e));
    }
    if (e.direction() == Direction.SENT) {
      return new TaskLedger(
          runnerId, e.seq(), lastAppliedSeq, progressEvents, reported, placements, k, attempt);
    }
    return e.isReport()
        ? new TaskLedger(
            runnerId, lastSentSeq, e.seq(), progressEvents, true, placements, k, attempt)
        : new TaskLedger(
            runnerId, lastSentSeq, e.seq(), progressEvents + 1, reported, placements, k, attempt);
  }

  /**
   * The attempt an assign starts ({@link Attempt}: its task's wire id says it); 1 when the frame
   * does not read. Only assigns are read: they are rare, progress is not.
   */
  private static int attemptOf(TaskEvent assign) {
    try {
      JsonNode id = STATE_READER.readTree(assign.frame()).path("task").path("id");
      return id.isTextual() ? Attempt.numberOf(id.asText()) : 1;
    } catch (java.io.IOException ex) {
      return 1;
    }
  }

  /**
   * {@link #kept} after {@code e}: a progress extends the run it follows, anything else is kept.
   */
  private List<Kept> keep(TaskEvent e) {
    if (kept == null) {
      return null;
    }
    List<Kept> out = new ArrayList<>(kept.size() + 1);
    out.addAll(kept);
    keepInto(out, e, !out.isEmpty() && foldable(out.get(out.size() - 1).event()));
    return out;
  }

  /**
   * {@code out} after {@code e}, in place, given whether {@code out}'s last event folds; answers
   * whether {@code e} folds.
   */
  private static boolean keepInto(List<Kept> out, TaskEvent e, boolean lastFolds) {
    boolean folds = foldable(e);
    Kept last = out.isEmpty() ? null : out.get(out.size() - 1);
    if (folds
        && lastFolds
        && last.event().runnerId().equals(e.runnerId())
        && last.event().seq() + 1 == e.seq()) {
      out.set(out.size() - 1, new Kept(e, last.folded() + 1));
    } else {
      out.add(new Kept(e, 1));
    }
    return folds;
  }

  /** An applied progress whose kind is not {@code state}. */
  static boolean foldable(TaskEvent e) {
    return e.direction() == Direction.APPLIED
        && "task.progress".equals(e.type())
        && !isStateKind(e.frame());
  }

  /**
   * Whether a progress frame's kind is {@code state}; a cheap look first, a parse only if it may.
   */
  private static boolean isStateKind(String frame) {
    if (!frame.contains("\"state\"")) {
      return false;
    }
    try {
      return "state".equals(STATE_READER.readTree(frame).path("kind").asText());
    } catch (java.io.IOException ex) {
      return true; // unreadable here: keep it whole, the restore decodes it as any kept frame
    }
  }
}
