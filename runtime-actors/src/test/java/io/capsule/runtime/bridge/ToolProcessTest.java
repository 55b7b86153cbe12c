package io.capsule.runtime.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.runtime.harness.ProcessGroup;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.io.TempDir;

/**
 * One tool's process group and its outcome: the outcome completes only after the group is gone.
 * Before, the group kill ran beside the outcome, so a member could outlive the call's report.
 */
class ToolProcessTest {

  private final ActorTestKit kit = ActorTestKit.create();
  private final ExecutorService io = Executors.newCachedThreadPool();
  @TempDir Path workdir;

  @AfterEach
  void stop() {
    io.shutdownNow();
    kit.shutdownTestKit();
  }

  // Busy children with their output elsewhere: the pipes close with the leader, and on two loaded
  // cores a member is still running as kill(2) returns, so only the wait can order the outcome.
  @RepeatedTest(5)
  void nothingOfTheToolIsAliveWhenItsOutcomeCompletes() throws Exception {
    List<String> argv =
        ToolCommand.argv(
            Path.of("/bin/sh"),
            List.of(
                "-c", "for i in 1 2 3; do (while :; do :; done) >/dev/null 2>&1 & done; echo $$"),
            Optional.empty(),
            false);
    ToolProcess tool =
        ToolProcess.start(
            argv,
            workdir,
            Map.of("PATH", "/usr/bin:/bin"),
            false,
            Optional.empty(),
            4096,
            Duration.ofSeconds(30),
            io,
            kit.system().scheduler(),
            kit.system().executionContext());

    ToolProcess.Outcome outcome = tool.outcome().get(20, TimeUnit.SECONDS);
    long pgid = Long.parseLong(outcome.stdout().trim());
    assertEquals(tool.pgid(), pgid);
    assertEquals(List.of(), ProcessGroup.liveMembers(pgid), "members outlived the outcome");
    assertEquals(ToolProcess.End.EXITED, outcome.end());
  }
}
