package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.HarnessFixture.HOST_ENV;
import static io.capsule.runtime.harness.HarnessFixture.script;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.HarnessNeeds;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.LoginOutput;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The version probe and the login check as real, bounded processes (docs/run-semantics.md §3). */
class HelperCommandsTest {

  private static final ExecutorService POOL = Executors.newCachedThreadPool();

  /** Only for {@code awaitAssert}: a killed process takes a moment to leave {@code /proc}. */
  private static final ActorTestKit KIT = ActorTestKit.create();

  private static final Path SH = Path.of("/bin/sh");

  @TempDir Path workdir;

  @AfterAll
  static void stopPool() {
    POOL.shutdownNow();
    KIT.shutdownTestKit();
  }

  private static HelperCommands commands(Duration bound) {
    return new HelperCommands(POOL, bound);
  }

  private static Description description(List<String> versionArgs, List<String> tested) {
    return new Description(
        "fake",
        "/bin/sh",
        versionArgs,
        tested,
        InterruptMethod.SIGNAL_INT,
        List.of(),
        true,
        true,
        new LoginCheck.Unavailable("n/a"),
        new HarnessNeeds(List.of(), List.of()));
  }

  private static <T> T await(java.util.concurrent.CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  @Test
  void theProbeReadsTheVersionLineAndJudgesIt() throws Exception {
    Description d = description(List.of(script("version.sh").toString()), List.of("2.1.0"));
    VersionProbe.Result result =
        await(commands(Duration.ofSeconds(10)).probeVersion(SH, d, HOST_ENV, workdir));
    assertEquals(Optional.of("fake-harness v2.1.0 (build 7)"), result.version());
    assertTrue(result.tested());
  }

  @Test
  void theProbeFallsBackToStderr() throws Exception {
    Description d = description(List.of(script("version-on-stderr.sh").toString()), List.of());
    VersionProbe.Result result =
        await(commands(Duration.ofSeconds(10)).probeVersion(SH, d, HOST_ENV, workdir));
    assertEquals(Optional.of("fake 3.0.0"), result.version());
    assertEquals(Code.W_RUN_002, result.warning().orElseThrow().code());
  }

  @Test
  void aSilentHarnessIsUnreadable() throws Exception {
    Description d = description(List.of(script("silent.sh").toString()), List.of("1"));
    VersionProbe.Result result =
        await(commands(Duration.ofSeconds(10)).probeVersion(SH, d, HOST_ENV, workdir));
    assertEquals(Optional.empty(), result.version());
    assertEquals(Code.W_RUN_002, result.warning().orElseThrow().code());
  }

  @Test
  void aHangingCommandIsKilledWithItsGroupAfterTheBound() throws Exception {
    CommandOutcome outcome =
        await(
            commands(Duration.ofMillis(700))
                .run(SH, List.of(script("hang.sh").toString()), HOST_ENV, workdir));
    assertInstanceOf(CommandOutcome.TimedOut.class, outcome);
    long pgid = Long.parseLong(Files.readString(workdir.resolve("hang.pid")).trim());
    HarnessFixture.assertGroupGone(KIT.createTestProbe(), pgid);
  }

  @Test
  void aMissingBinaryIsNotStarted() throws Exception {
    CommandOutcome outcome =
        await(
            commands(Duration.ofSeconds(10))
                .run(workdir.resolve("missing"), List.of(), HOST_ENV, workdir));
    assertInstanceOf(CommandOutcome.NotStarted.class, outcome);
  }

  @Test
  void theLoginCheckHandsOnBothStreamsAndTheCodeWithTheGrantedEnvAndWorkdir() throws Exception {
    HelperCommands.LoginRun run =
        await(
            commands(Duration.ofSeconds(10))
                .checkLogin(
                    SH,
                    new LoginCheck.Command(List.of(script("login-status.sh").toString())),
                    HOST_ENV,
                    workdir));
    LoginOutput output = assertInstanceOf(HelperCommands.LoginRun.Ran.class, run).output();
    assertEquals(Optional.of(1), output.exitCode());
    assertEquals(
        "logged-out PATH=/usr/bin:/bin HOME=/nonexistent PWD=" + workdir.toRealPath() + "\n",
        output.stdout());
    assertEquals("please sign in\n", output.stderr());
  }

  @Test
  void aLoginCheckPastTheBoundIsNotChecked() throws Exception {
    HelperCommands.LoginRun run =
        await(
            commands(Duration.ofMillis(500))
                .checkLogin(
                    SH,
                    new LoginCheck.Command(List.of(script("hang.sh").toString())),
                    HOST_ENV,
                    workdir));
    assertInstanceOf(HelperCommands.LoginRun.NotChecked.class, run);
  }

  @Test
  void anUnavailableLoginCheckShowsTheFirstLineCutTo200Characters() throws Exception {
    String reason = "x".repeat(300) + "\nsecond line";
    HelperCommands.LoginRun run =
        await(
            commands(Duration.ofSeconds(10))
                .checkLogin(SH, new LoginCheck.Unavailable(reason), HOST_ENV, workdir));
    assertEquals(new HelperCommands.LoginRun.NotChecked("x".repeat(200)), run);
  }
}
