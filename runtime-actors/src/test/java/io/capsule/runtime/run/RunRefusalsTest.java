package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.Description;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** Capsules that cannot start report once, before any harness runs, with the refusal's code. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunRefusalsTest {

  private static final Duration MAX = Duration.ofSeconds(20);
  private ActorTestKit kit;
  private RunFixture fx;
  private Path root;

  @BeforeAll
  void start(@TempDir Path workRoot) throws Exception {
    kit = ActorTestKit.create();
    root = workRoot; // deleted after the class, run directories and all
    fx = new RunFixture(kit, RunFixture.limits(root));
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  private RunOutcome run(RunRequest request) {
    TestProbe<RunEvent> probe = kit.createTestProbe();
    fx.runtime.start(request, probe.ref());
    return RunFixture.outcome(RunFixture.events(probe, MAX));
  }

  private RunOutcome run(
      UnaryOperator<io.capsule.config.manifest.ManifestBuilder> manifest,
      java.util.function.Function<PlayDriver, ProcessDriver> wrap) {
    PlayDriver.LAUNCHES.clear();
    CapsuleRef ref =
        fx.scenario(
            List.of("{\"type\":\"turn-end\",\"value\":\"r\"}"),
            InterruptMethod.SIGNAL_INT,
            false,
            manifest,
            wrap);
    RunOutcome o = run(fx.request(ref, "t"));
    assertTrue(PlayDriver.LAUNCHES.isEmpty(), "nothing was launched");
    return o;
  }

  @Test
  void aDriverRequiringAnUngrantedEnvNameIsBlockedWithECap019() {
    RunOutcome o = run(b -> b, d -> new Requiring(d, List.of("PLAY_TOKEN")));
    assertEquals(RunStatus.BLOCKED, o.status());
    assertEquals("E-CAP-019", o.code().orElseThrow());
    assertTrue(o.message().contains("PLAY_TOKEN"), o.message());
  }

  @Test
  void aHarnessBinaryThatDoesNotExistIsBlockedWithERun006() {
    RunOutcome o = run(b -> b.command("/nonexistent/harness"), d -> d);
    assertEquals(RunStatus.BLOCKED, o.status());
    assertEquals("E-RUN-006", o.code().orElseThrow());
  }

  @Test
  void aTokenCeilingWithADriverThatReportsNoUsageIsBlockedWithERun038() {
    RunOutcome o = run(b -> b.maxSessionTokens(10), d -> new Requiring(d, List.of(), false));
    assertEquals("E-RUN-038", o.code().orElseThrow());
  }

  @Test
  void anUnknownRegisteredCapsuleAndAFolderWithoutALoaderAreBlocked() {
    RunOutcome unknown =
        run(RunRequest.of(RunFixture.taskId(), new CapsuleRef.Registered("nobody"), "t"));
    assertEquals(RunStatus.BLOCKED, unknown.status());
    assertEquals("E-RUN-006", unknown.code().orElseThrow());
    RunOutcome folder =
        run(RunRequest.of(RunFixture.taskId(), new CapsuleRef.Folder(root.toString()), "t"));
    assertEquals(RunStatus.BLOCKED, folder.status());
    assertTrue(folder.code().orElseThrow().startsWith("E-"), folder.toString());
  }

  /** A driver whose description requires env names (and maybe reports no usage). */
  private record Requiring(ProcessDriver inner, List<String> env, boolean reportsUsage)
      implements ForwardingDriver {

    Requiring(ProcessDriver inner, List<String> env) {
      this(inner, env, true);
    }

    @Override
    public Description describe() {
      Description d = inner.describe();
      return new Description(
          d.harness(),
          d.binary(),
          d.versionArgs(),
          d.testedVersions(),
          d.interrupt(),
          env,
          d.streamsText(),
          reportsUsage,
          d.loginCheck(),
          d.harnessNeeds());
    }
  }
}
