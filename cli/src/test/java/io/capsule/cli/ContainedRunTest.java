package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@code capsule run} of the hello capsule under each containment (README "Containment"): the
 * default contains it where bubblewrap works (this machine kind and CI have it), {@code auto}
 * without it warns on the run, {@code required} without it refuses.
 */
class ContainedRunTest {

  private static Cli.Result hello() {
    return Cli.run("run", Cli.HELLO.toString(), "--task", "hi", "--json");
  }

  /** Runs with containment {@code mode} and a bwrap binary that is not there. */
  private static Cli.Result withoutBwrap(String mode, Supplier<Cli.Result> run) {
    System.setProperty("capsule.harness.containment", mode);
    System.setProperty("capsule.harness.bwrap", "/nonexistent/bwrap");
    ConfigFactory.invalidateCaches();
    try {
      return run.get();
    } finally {
      System.clearProperty("capsule.harness.containment");
      System.clearProperty("capsule.harness.bwrap");
      ConfigFactory.invalidateCaches();
    }
  }

  @Test
  void theDefaultRunsTheHarnessContainedWithoutAWarning() {
    Cli.Result r = hello();
    assertEquals(0, r.exit(), r.out() + r.err());
    assertFalse(r.out().contains("W-CAP-050"), r.out());
    assertTrue(r.out().contains("\"event\":\"finished\""), r.out());
  }

  @Test
  void autoWithoutBubblewrapRunsAndSaysSoInTheEvents() {
    Cli.Result r = withoutBwrap("auto", ContainedRunTest::hello);
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("\"code\":\"W-CAP-050\""), r.out());
    assertTrue(r.out().contains("/nonexistent/bwrap"), r.out());
  }

  @Test
  void autoWithoutBubblewrapPrintsTheWarningLineInTheLiveView() {
    Cli.Result r = withoutBwrap("auto", () -> Cli.run("run", Cli.HELLO.toString(), "--task", "hi"));
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue((r.out() + r.err()).contains("W-CAP-050"), r.out() + r.err());
  }

  @Test
  void requiredWithoutBubblewrapRefusesToStartTheHarness() {
    Cli.Result r = withoutBwrap("required", ContainedRunTest::hello);
    assertNotEquals(0, r.exit(), r.out() + r.err());
    assertTrue((r.out() + r.err()).contains("E-CAP-051"), r.out() + r.err());
  }
}
