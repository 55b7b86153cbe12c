package io.capsule.cli.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.HarnessNeeds;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.api.TurnFailure;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunLimits;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The "Embedding in a Pekko application" example of docs/embedding.md, compiled and run: an
 * in-memory capsule with a Java driver, started inside an existing actor system, its events heard
 * as a stream.
 */
class EmbeddingExampleTest {
  private static final ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "app");

  @TempDir static Path workRoot;

  /** A Java driver: the harness is /bin/sh echoing the task; each stdout line ends the turn. */
  static final class EchoDriver implements ProcessDriver {
    @Override
    public Description describe() {
      return new Description(
          "echo",
          "/bin/sh",
          List.of("-c", "echo 1"),
          List.of("1"),
          InterruptMethod.SIGNAL_INT,
          List.of(),
          false,
          false,
          new LoginCheck.Unavailable("nothing to sign in to"),
          HarnessNeeds.NONE);
    }

    @Override
    public LaunchResult launch(LaunchRequest request) {
      byte[] stdin = (request.task() + "\n").getBytes(StandardCharsets.UTF_8);
      return new LaunchResult.Planned(
          new LaunchPlan(
              List.of("-c", "read -r task; echo \"you said: $task\""),
              List.of(),
              List.of(),
              Optional.of(stdin),
              false,
              Optional.empty()));
    }

    @Override
    public List<Event> parse(List<String> lines) {
      List<Event> events = new ArrayList<>();
      for (String line : lines) {
        events.add(new Event.Text(line));
        events.add(new Event.TurnEnd(line));
      }
      return events;
    }

    @Override
    public Event classifyExit(ExitStatus exit) {
      FailureKind kind = exit.interrupted() ? FailureKind.CANCELED : FailureKind.HARNESS_ERROR;
      return new Event.TurnFailed(new TurnFailure(kind, "exited without an answer"));
    }

    @Override
    public LoginState readLogin(LoginOutput output) {
      return new LoginState.Unknown("no login check");
    }
  }

  @Test
  void runsAnInMemoryCapsuleInsideAnExistingActorSystem() {
    // --- README example starts here ---
    EmbeddedRuntime capsules =
        EmbeddedRuntime.create(
            system, RunLimits.defaults(workRoot), EmbeddedRuntime.noFolderDrivers());
    // The manifest's driver artifact only names the driver: a registered capsule runs the Java
    // driver given to register(), one instance per run.
    Manifest manifest =
        Manifest.builder("echo", "0.1.0").builtinDriver("echo", "0.1.0").envAllow("PATH").build();
    CapsuleRef echo =
        capsules.register("echo", manifest, EchoDriver::new).toCompletableFuture().join();

    Pair<RunHandle, CompletionStage<List<RunEvent>>> run =
        capsules
            .source(RunRequest.of("task-1", echo, "hello"))
            .toMat(Sink.seq(), Keep.both())
            .run(system);
    RunOutcome outcome = run.first().outcome().toCompletableFuture().join();
    List<RunEvent> events = run.second().toCompletableFuture().join(); // Finished is last
    // --- README example ends here ---

    assertEquals(RunStatus.DONE, outcome.status(), outcome.message());
    assertEquals(Optional.of("you said: hello"), outcome.result());
    assertEquals(1, outcome.turns());
    assertEquals(outcome, ((RunEvent.Finished) events.get(events.size() - 1)).outcome());
  }

  @AfterAll
  static void shutdown() {
    system.terminate();
  }
}
