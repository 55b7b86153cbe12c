package io.capsule.runtime.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.config.manifest.Conversation;
import io.capsule.driver.api.Session;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SessionPlannerTest {

  /**
   * Each step is {@code conversation[>reported]} (a dash for no conversation key, {@code !} after
   * the reported id to mark the session gone); the expected plan is {@code id/mode} per step.
   */
  @ParameterizedTest(name = "[{index}] {0}: {1} -> {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # mode     | tasks            | plans
          stateless  | a a a            | s1/new s2/new s3/new
          stateless  | - -              | s1/new s2/new
          threaded   | a a a            | s1/new s1/resume s1/resume
          threaded   | a b a b          | s1/new s2/new s1/resume s2/resume
          threaded   | - -              | s1/new s2/new
          threaded   | a>h7 a a         | s1/new h7/resume h7/resume
          threaded   | a>! a            | s1/new s2/new
          stateless  | a>h7 a           | s1/new s2/new
          """)
  void plansSessionsPerConversationAndTheReportedIdWins(String mode, String tasks, String plans) {
    AtomicInteger n = new AtomicInteger();
    SessionPlanner planner =
        new SessionPlanner(
            Conversation.valueOf(mode.toUpperCase(java.util.Locale.ROOT)),
            () -> "s" + n.incrementAndGet());
    List<String> got = new ArrayList<>();
    for (String task : tasks.split(" ")) {
      String[] parts = task.split(">");
      Optional<String> key = parts[0].equals("-") ? Optional.empty() : Optional.of(parts[0]);
      Session s = planner.plan(key);
      got.add(s.id() + "/" + s.mode().witName());
      if (parts.length > 1) {
        boolean gone = parts[1].equals("!");
        planner.settle(key, gone ? Optional.empty() : Optional.of(parts[1]), gone);
      }
    }
    assertEquals(plans, String.join(" ", got));
  }
}
