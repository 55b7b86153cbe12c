package io.capsule.hub.placement;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Where the waiting tasks of one project go: a pure function of the queue and the runners, so the
 * project entity can call it after every change (a task queued, a runner connected or gone, a slot
 * freed) and persist only the places it makes.
 *
 * <p>The rules, in order:
 *
 * <ol>
 *   <li>Tasks are taken in queue order; each gets exactly one verdict, in that order. A task that
 *       must wait does not hold back later tasks that can run elsewhere (a task for a capsule no
 *       runner has must not stall the whole project), but it never loses its turn to them: a free
 *       slot that both could use goes to the earlier one.
 *   <li>A task is placed only on a connected runner that runs its capsule (announced it, or
 *       announced no capsules at all) and has a free slot. Free slots are {@code slots - running},
 *       minus the places already made earlier in the same plan.
 *   <li>Among those, the least loaded runner wins: the lowest fraction of its slots in use
 *       (counting places made in this plan), so a runner with 4 slots and 1 run is as loaded as one
 *       with 8 and 2. Ties go to the runner with more free slots, then to the smaller runner id (so
 *       the plan is deterministic and a test can name the winner).
 *   <li>A task naming a runner goes only there: {@link Verdict.NoSuchRunner} when no runner of that
 *       id is known (connected or not), otherwise it waits while that runner is away, busy, or does
 *       not run the capsule.
 *   <li>A task taken from a runner gone past {@code dead-after} ({@link Waiting#gaveUp}) is placed
 *       again like any task, the runners it was taken from included (it runs there as a new {@link
 *       Attempt}, under a wire id that runner never saw); it no longer names a runner. Of runners
 *       equally loaded, one it was not taken from wins: that is the only tie it breaks.
 * </ol>
 */
public final class Placement {

  private Placement() {}

  /**
   * One verdict per waiting task, in queue order; places as many as free slots allow.
   *
   * @throws IllegalArgumentException when two runners share an id (the caller's view is broken)
   */
  public static List<Verdict> plan(List<Waiting> queue, Collection<RunnerView> runners) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(runners, "runners");
    Map<String, Load> loads = new LinkedHashMap<>();
    for (RunnerView r : runners) {
      if (loads.put(r.runnerId(), new Load(r)) != null) {
        throw new IllegalArgumentException("two runners share the id " + r.runnerId());
      }
    }
    List<Verdict> verdicts = new ArrayList<>(queue.size());
    for (Waiting w : queue) {
      Verdict v = w.runner().isPresent() ? named(w, loads) : anywhere(w, loads.values());
      if (v instanceof Verdict.Place p) {
        loads.get(p.runnerId()).placed++;
      }
      verdicts.add(v);
    }
    return List.copyOf(verdicts);
  }

  private static Verdict named(Waiting w, Map<String, Load> loads) {
    String id = w.runner().orElseThrow();
    Load l = loads.get(id);
    if (l == null) {
      return new Verdict.NoSuchRunner(w.taskId(), id);
    }
    if (!l.view.connected()) {
      return new Verdict.Wait(w.taskId(), "runner " + id + " is away (not connected)");
    }
    if (!l.view.runs(w.capsule())) {
      return new Verdict.Wait(
          w.taskId(), "runner " + id + " does not announce capsule " + w.capsule());
    }
    if (l.free() == 0) {
      return new Verdict.Wait(w.taskId(), "runner " + id + " is busy (no free slot)");
    }
    return new Verdict.Place(w.taskId(), id);
  }

  private static Verdict anywhere(Waiting w, Collection<Load> loads) {
    Load best = null;
    boolean anyRuns = false;
    Comparator<Load> order = leastLoaded(w);
    for (Load l : loads) {
      if (!l.view.connected() || !l.view.runs(w.capsule())) {
        continue;
      }
      anyRuns = true;
      if (l.free() > 0 && (best == null || order.compare(l, best) < 0)) {
        best = l;
      }
    }
    if (best != null) {
      return new Verdict.Place(w.taskId(), best.view.runnerId());
    }
    String none =
        anyRuns
            ? "every connected runner with capsule " + w.capsule() + " is busy (no free slot)"
            // Runners read their capsules folder once, at start (docs/operations.md, "Two runners
            // on one machine"): a capsule added since is not announced until a restart.
            : "no connected runner announces capsule "
                + w.capsule()
                + " (a runner reads its --capsules folder when it starts: restart it after adding"
                + " a capsule)";
    return new Verdict.Wait(
        w.taskId(),
        w.gaveUp().isEmpty()
            ? none
            : none
                + " (taken from "
                + String.join(", ", w.gaveUp().stream().sorted().toList())
                + ", gone past dead-after: E-HUB-008; it runs again on the first runner with"
                + " the capsule and a free slot, that one included)");
  }

  /**
   * Lowest fraction of slots in use, then a runner {@code w} was not taken from, then most free
   * slots, then smallest id.
   */
  private static Comparator<Load> leastLoaded(Waiting w) {
    return ((Comparator<Load>) Placement::compareLoad)
        .thenComparing(l -> w.gaveUp().contains(l.view.runnerId())) // false (not taken) first
        .thenComparing(Comparator.comparingInt(Load::free).reversed())
        .thenComparing(l -> l.view.runnerId());
  }

  // Cross-multiplied so 1/4 and 2/8 compare equal without floating point; only runners with a
  // free slot get here, so slots > 0.
  private static int compareLoad(Load a, Load b) {
    return Long.compare((long) a.used() * b.view.slots(), (long) b.used() * a.view.slots());
  }

  /** A runner plus the places this plan has made on it so far. */
  private static final class Load {
    final RunnerView view;
    int placed;

    Load(RunnerView view) {
      this.view = view;
    }

    int used() {
      return view.running() + placed;
    }

    int free() {
      return Math.max(0, view.slots() - used());
    }
  }
}
