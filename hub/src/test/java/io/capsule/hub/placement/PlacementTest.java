package io.capsule.hub.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Placement as tables. Notation:
 *
 * <ul>
 *   <li>runners, separated by {@code ;}: {@code id:caps:running/slots}, caps a comma list or {@code
 *       -} for none announced (runs anything), suffix {@code :down} when not connected;
 *   <li>queue, separated by spaces: {@code task:capsule}, or {@code task:capsule@runner} when the
 *       task names its runner, or {@code task:capsule!runner} when it was taken from that runner,
 *       gone past dead-after;
 *   <li>verdicts, separated by spaces: {@code task>runner} placed, {@code task~word} waits with a
 *       reason containing {@code word} ({@code -} for a space), {@code task?runner} no such runner.
 * </ul>
 */
class PlacementTest {

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # case                                 | runners                              | queue                   | verdicts
          by capsule                             | a:x:0/1; b:y:0/1                     | t1:y t2:x               | t1>b t2>a
          nobody has it                          | a:x:0/1                              | t1:z                    | t1~announces
          no runners at all                      | ''                                   | t1:x                    | t1~announces
          empty queue                            | a:x:0/1                              | ''                      | ''
          several capsules on one runner         | a:x,y,z:0/3                          | t1:z t2:x t3:y          | t1>a t2>a t3>a
          slots cap a runner                     | a:x:0/2                              | t1:x t2:x t3:x          | t1>a t2>a t3~busy
          running counts against slots           | a:x:1/2                              | t1:x t2:x               | t1>a t2~busy
          running above slots is just full       | a:x:3/2                              | t1:x                    | t1~busy
          zero slots takes nothing               | a:x:0/0                              | t1:x                    | t1~busy
          least loaded first                     | a:x:2/4; b:x:1/4                     | t1:x                    | t1>b
          least loaded is a fraction of slots    | a:x:1/2; b:x:3/8                     | t1:x                    | t1>b
          plan spreads over equal runners        | a:x:0/2; b:x:0/2                     | t1:x t2:x t3:x t4:x     | t1>a t2>b t3>a t4>b
          places in a plan count as load        | a:x:0/4; b:x:1/4                     | t1:x t2:x t3:x          | t1>a t2>a t3>b
          tie on fraction: more free slots wins  | a:x:1/2; b:x:2/4                     | t1:x                    | t1>b
          full tie: smaller id wins              | b:x:0/1; a:x:0/1                     | t1:x                    | t1>a
          dead runner gets nothing               | a:x:0/4:down; b:x:3/4                | t1:x t2:x               | t1>b t2~busy
          only dead runners have it              | a:x:0/4:down                         | t1:x                    | t1~announces
          no capsule list runs anything          | a:-:0/1                              | t1:whatever             | t1>a
          announcing runner preferred only by load | a:-:1/2; b:x:0/2                   | t1:x t2:x               | t1>b t2>a
          queue order: first come first placed   | a:x:0/1                              | t1:x t2:x               | t1>a t2~busy
          a stuck task does not block later ones | a:x:0/1                              | t1:z t2:x               | t1~announces t2>a
          later tasks take what is left         | a:x,y:0/1; b:y:0/1                   | t1:x t2:y t3:x          | t1>a t2>b t3~busy
          named runner present                   | a:x:0/1; b:x:0/1                     | t1:x@b                  | t1>b
          named runner unknown                   | a:x:0/1                              | t1:x@zed                | t1?zed
          named runner busy                      | a:x:1/1; b:x:0/1                     | t1:x@a                  | t1~busy
          named runner away                      | a:x:0/1:down; b:x:0/1                | t1:x@a                  | t1~away
          named runner lacks the capsule         | a:y:0/1; b:x:0/1                     | t1:x@a                  | t1~does-not-announce
          named runner known while down is not unknown | a:x:0/1:down                   | t1:x@a                  | t1~away
          named places count against free slots  | a:x:0/1; b:x:0/1                     | t1:x@a t2:x t3:x        | t1>a t2>b t3~busy
          free slot after a named wait still used | a:x:0/1                             | t1:y@a t2:x             | t1~does-not-announce t2>a
          task of a dead runner goes elsewhere    | a:x:0/1:down; b:x:0/1                | t1:x!a                  | t1>b
          equal load: one it was not taken from  | a:x:0/1; b:x:0/1                     | t1:x!a                  | t1>b
          taken from a, a less loaded: a again    | a:x:0/4; b:x:1/2                     | t1:x!a                  | t1>a
          the only runner with it runs it again   | a:x:0/1                              | t1:x!a                  | t1>a
          back with no free slot: waits, says why | a:x:1/1                              | t1:x!a                  | t1~taken-from-a
          away after the take-back: waits         | a:x:0/1:down                         | t1:x!a                  | t1~taken-from-a
          taken from two, both back              | a:x:0/1; b:x:0/1; c:x:1/1            | t1:x!a!b                | t1>a
          taken from a, queue order holds        | a:x:0/1                              | t1:x!a t2:x             | t1>a t2~busy
          slots counted across one plan          | a:x:0/3; b:x:2/3                     | t1:x t2:x t3:x t4:x t5:x | t1>a t2>a t3>a t4>b t5~busy
          """)
  void placesAsTheRulesSay(String name, String runners, String queue, String verdicts) {
    assertEquals(
        words(verdicts),
        Placement.plan(queue(queue), runners(runners)).stream()
            .map(v -> render(v, words(verdicts)))
            .toList(),
        name);
  }

  @Test
  void twoRunnersWithOneIdAreRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                Placement.plan(
                    List.of(Waiting.any("t1", "x")),
                    List.of(
                        new RunnerView("a", Set.of("x"), 1, 0, true),
                        new RunnerView("a", Set.of("y"), 1, 0, true))));
    assertTrue(e.getMessage().contains("a"), e.getMessage());
  }

  @Test
  void aNegativeSlotCountIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new RunnerView("a", Set.of(), -1, 0, true));
  }

  @Test
  void aViewFromAHelloFollowsTheAnnouncementRules() {
    RunnerView old = RunnerView.announced("old", List.of("ack", "error-frames"), 0, true);
    assertEquals(new RunnerView("old", Set.of(), 1, 0, true), old);
    RunnerView busy =
        RunnerView.announced("new", List.of("ack", "capsule:echo", "slots:3", "slots:x"), 2, true);
    assertEquals(new RunnerView("new", Set.of("echo"), 3, 2, true), busy);
    assertEquals(
        List.of(new Verdict.Place("t1", "old"), new Verdict.Place("t2", "new")),
        Placement.plan(
            List.of(Waiting.any("t1", "other"), Waiting.any("t2", "echo")), List.of(old, busy)));
  }

  @Test
  void theInputsAreNotChanged() {
    List<RunnerView> runners = List.of(new RunnerView("a", Set.of("x"), 2, 0, true));
    List<Waiting> queue = List.of(Waiting.any("t1", "x"), Waiting.any("t2", "x"));
    Placement.plan(queue, runners);
    // A second plan over the same views gives the same answer: nothing was counted into them.
    assertEquals(Placement.plan(queue, runners), Placement.plan(queue, runners));
    assertEquals(0, runners.get(0).running());
  }

  // --- notation ---

  private static List<String> words(String s) {
    return s.isBlank() ? List.of() : Arrays.asList(s.trim().split("\\s+"));
  }

  /**
   * Renders a verdict in the table's notation; for a wait, as the expected token if the reason
   * contains the expected word for that task (so a row names a category, not a whole sentence).
   */
  private static String render(Verdict v, List<String> expected) {
    if (v instanceof Verdict.Place p) {
      return p.taskId() + ">" + p.runnerId();
    }
    if (v instanceof Verdict.NoSuchRunner n) {
      return n.taskId() + "?" + n.runnerId();
    }
    Verdict.Wait w = (Verdict.Wait) v;
    for (String e : expected) {
      if (e.startsWith(w.taskId() + "~")
          && w.reason().contains(e.substring(e.indexOf('~') + 1).replace('-', ' '))) {
        return e;
      }
    }
    return w.taskId() + "~(" + w.reason() + ")";
  }

  private static List<Waiting> queue(String s) {
    List<Waiting> out = new ArrayList<>();
    for (String w : words(s)) {
      String[] idRest = w.split(":", 2);
      String[] capRunner = idRest[1].split("@", 2);
      String[] capDead = capRunner[0].split("!");
      Waiting t =
          capRunner.length == 2
              ? Waiting.on(idRest[0], capRunner[0], capRunner[1])
              : Waiting.any(idRest[0], capDead[0]);
      for (int i = 1; i < capDead.length; i++) {
        t = t.takenFrom(capDead[i]);
      }
      out.add(t);
    }
    return out;
  }

  private static List<RunnerView> runners(String s) {
    List<RunnerView> out = new ArrayList<>();
    if (s.isBlank()) {
      return out;
    }
    for (String r : s.split(";")) {
      String[] f = r.trim().split(":");
      Set<String> caps = f[1].equals("-") ? Set.of() : Set.of(f[1].split(","));
      String[] load = f[2].split("/");
      boolean up = f.length < 4 || !f[3].equals("down");
      out.add(new RunnerView(f[0], caps, Integer.parseInt(load[1]), Integer.parseInt(load[0]), up));
    }
    return out;
  }
}
