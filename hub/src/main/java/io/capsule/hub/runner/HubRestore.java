package io.capsule.hub.runner;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.placement.Attempt;
import io.capsule.hub.placement.Reclaim;
import io.capsule.hub.store.HubJournal;
import io.capsule.hub.store.HubJournal.Direction;
import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.frame.SequencedFrame;
import io.capsule.protocol.frame.TaskAssign;
import io.capsule.protocol.frame.TaskCancel;
import io.capsule.protocol.frame.TaskReport;
import io.capsule.protocol.seq.Receipt;
import io.capsule.protocol.seq.SeqState;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The hub's state rebuilt from its journal: per runner, the sequencing ({@link SeqState}) and the
 * tasks assigned and not yet reported; which runner owns which open task; the tasks taken back from
 * a runner gone past {@code dead-after} ({@link Reclaim}'s cancel) and not yet placed again, which
 * the brain hands to the queue once more. All by the ids the runners saw: a later attempt of a task
 * under its wire id ({@link Attempt}), which is all a restart needs to number it apart from the
 * attempts before it; what was taken back is keyed by the task itself, so its next attempt's assign
 * (on any runner, the one it was taken from included) ends it. Pure: built before the hub's actor
 * starts, so a journal that does not replay fails whoever starts the hub, not a running hub.
 */
final class HubRestore {

  /** One runner's restored part. */
  record Runner(SeqState seq, Set<String> openTasks) {}

  private final Map<RunnerKey, Runner> runners = new HashMap<>();
  private final Map<String, RunnerKey> taskOwner = new HashMap<>();
  private final Map<String, Taken> taken = new LinkedHashMap<>(); // key: owned(...)

  private record Taken(RunnerKey runner, String taskId) {}

  private HubRestore() {}

  /**
   * Replays recorded entries ({@link HubJournal#restorable()}) through the same sequencing the live
   * hub uses: each sent frame must get back the seq it was sent with and each applied frame must
   * apply next (a folded one: after the run it stands for), or the journal does not follow this
   * protocol's rules and is refused ({@code E-PRO-010}).
   */
  static HubRestore of(ProtocolConfig config, List<HubJournal.Entry> entries) {
    HubRestore r = new HubRestore();
    int n = 0;
    for (HubJournal.Entry e : entries) {
      n++;
      Runner s =
          r.runners.computeIfAbsent(
              e.runner(), k -> new Runner(SeqState.of(config), new LinkedHashSet<>()));
      SequencedFrame f = e.frame();
      String task = f.taskId();
      if (e.direction() == Direction.SENT) {
        SequencedFrame numbered = s.seq().emit(f);
        if (numbered.seq() != f.seq()) {
          throw inconsistent(n, e, "the hub's next seq for the task is " + numbered.seq());
        }
        String key = owned(e.runner().projectId(), task);
        // Taken back is said of the task, whichever attempt: its next attempt's assign ends it.
        String taskKey = owned(e.runner().projectId(), Attempt.taskOf(task));
        if (f instanceof TaskAssign) {
          RunnerKey before = r.taskOwner.get(key);
          if (before != null && r.runners.containsKey(before)) {
            r.runners.get(before).openTasks().remove(task); // moved without a reclaim: be safe
          }
          s.openTasks().add(task);
          r.taskOwner.put(key, e.runner());
          r.taken.remove(taskKey);
        } else if (f instanceof TaskCancel c
            && Reclaim.isReclaim(c)
            && s.openTasks().remove(task)) {
          r.taskOwner.remove(key);
          r.taken.put(taskKey, new Taken(e.runner(), task));
        }
      } else {
        if (e.folded() > 1) { // it stands for the run of progress it ends: those count as applied
          long before = s.seq().appliedUpTo(task, f.seq() - 1);
          if (before != f.seq() - e.folded()) {
            throw inconsistent(
                n, e, "it ends a run of " + e.folded() + " frames, but seq " + before + " applied");
          }
        }
        Receipt receipt = s.seq().receive(f);
        if (receipt.status() != Receipt.Status.APPLIED || receipt.applied().size() != 1) {
          throw inconsistent(n, e, "it does not apply next (" + receipt.status() + ")");
        }
        if (f instanceof TaskReport) {
          s.openTasks().remove(task);
          r.taskOwner.remove(owned(e.runner().projectId(), task));
        }
      }
    }
    return r;
  }

  Map<RunnerKey, Runner> runners() {
    return runners;
  }

  /** Open task → its runner; the key is {@link #owned}. */
  Map<String, RunnerKey> taskOwner() {
    return taskOwner;
  }

  /**
   * Tasks taken back from dead runners and not placed again: per runner they were taken from, in
   * the order they were taken.
   */
  Map<RunnerKey, List<String>> taken() {
    Map<RunnerKey, List<String>> out = new LinkedHashMap<>();
    for (Taken t : taken.values()) {
      out.computeIfAbsent(t.runner(), k -> new java.util.ArrayList<>()).add(t.taskId());
    }
    return out;
  }

  /** Tasks assigned and not yet reported, over all runners. */
  int openTasks() {
    return runners.values().stream().mapToInt(s -> s.openTasks().size()).sum();
  }

  /** The key of {@link #taskOwner()}: task ids are unique within a project. */
  static String owned(String projectId, String taskId) {
    return projectId + '\0' + taskId;
  }

  private static ProtocolException inconsistent(int n, HubJournal.Entry e, String why) {
    return new ProtocolException(
        Diagnostic.of(
                Code.E_PRO_010,
                "journal entry "
                    + n
                    + " ("
                    + e.direction()
                    + " "
                    + e.frame().type()
                    + " seq "
                    + e.frame().seq()
                    + " of task "
                    + e.frame().taskId()
                    + " for "
                    + e.runner()
                    + ") is out of order: "
                    + why)
            .withHint("the journal was edited or mixes two hubs' histories; restore a backup"));
  }
}
