package io.capsule.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import io.capsule.runtime.javadsl.CapsuleSharding;
import io.capsule.runtime.javadsl.CapsuleShardingSettings;
import io.capsule.runtime.javadsl.EmbeddedRuntime;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The clustered embedding example of docs/embedding.md ("In a Pekko Cluster"), compiled and run on
 * a two-node cluster: a caller node and a runner node. docs/embedding.md quotes the two marked
 * parts of this file; {@link #theReadmeQuotesThisExampleVerbatim} keeps them equal.
 */
class ClusterEmbeddingExampleTest {

  @TempDir Path workRoot;

  /** A Java driver: the harness is /bin/sh echoing the task; its line ends the turn. */
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
      return new LaunchResult.Planned(
          new LaunchPlan(
              List.of("-c", "read -r task; echo \"you said: $task\""),
              List.of(),
              List.of(),
              Optional.of((request.task() + "\n").getBytes(StandardCharsets.UTF_8)),
              false,
              Optional.empty()));
    }

    @Override
    public List<Event> parse(List<String> lines) {
      List<Event> events = new ArrayList<>();
      for (String line : lines) {
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

  private CapsuleSharding onEveryNode(ActorSystem<?> system) {
    Path workRoot = this.workRoot.resolve(system.address().toString().replaceAll("\\W", "_"));
    Manifest manifest =
        Manifest.builder("echo", "0.1.0").builtinDriver("echo", "0.1.0").envAllow("PATH").build();
    // --- README cluster setup starts here ---
    CapsuleSharding capsules =
        CapsuleSharding.init(
            system,
            CapsuleShardingSettings.from(
                system.settings().config(),
                RunLimits.defaults(workRoot),
                EmbeddedRuntime.noFolderDrivers()));
    if (capsules.hostsRuns()) { // this node has the role capsule-runner
      capsules.register("echo", manifest, EchoDriver::new).toCompletableFuture().join();
    }
    // --- README cluster setup ends here ---
    return capsules;
  }

  @Test
  void runsACapsuleOnTheRunnerNodeOfAnApplicationsCluster() {
    try (CapsuleClusterKit cluster =
        CapsuleClusterKit.start(List.of(Set.of(), Set.of("capsule-runner")))) {
      ActorSystem<?> system = cluster.node(0); // the caller: no runner role
      onEveryNode(system);
      onEveryNode(cluster.node(1));

      // --- README cluster start starts here ---
      CapsuleSharding capsules = CapsuleSharding.get(system);
      RunRequest request =
          RunRequest.of("task-42", new CapsuleRef.Registered("echo"), "hello").retryOnNodeLoss(1);
      Pair<RunHandle, CompletionStage<List<RunEvent>>> run =
          capsules.source(request).toMat(Sink.seq(), Keep.both()).run(system);
      RunOutcome outcome = run.first().outcome().toCompletableFuture().join();
      // --- README cluster start ends here ---

      assertEquals(RunStatus.DONE, outcome.status(), outcome.message());
      assertEquals(Optional.of("you said: hello"), outcome.result());
      List<RunEvent> events = run.second().toCompletableFuture().join();
      assertEquals(outcome, ((RunEvent.Finished) events.get(events.size() - 1)).outcome());
    }
  }

  @Test
  void theReadmeQuotesThisExampleVerbatim() throws IOException {
    String readme = Files.readString(Path.of("..", "docs", "embedding.md"));
    String source =
        Files.readString(
            Path.of("src/test/java/io/capsule/testkit/ClusterEmbeddingExampleTest.java"));
    for (String part : List.of("setup", "start")) {
      String quoted = region(source, "README cluster " + part);
      assertTrue(
          readme.contains(quoted),
          "docs/embedding.md must quote the '" + part + "' part:\n" + quoted);
    }
  }

  /** The lines between the two markers, with their common indentation removed. */
  private static String region(String source, String marker) {
    String body =
        source.substring(
            source.indexOf('\n', source.indexOf("// --- " + marker + " starts here")) + 1,
            source.indexOf("// --- " + marker + " ends here"));
    List<String> lines = body.lines().toList();
    int indent =
        lines.stream()
            .filter(l -> !l.isBlank())
            .mapToInt(l -> l.length() - l.stripLeading().length())
            .min()
            .orElse(0);
    return lines.stream()
            .map(l -> l.isBlank() ? "" : l.substring(indent))
            .collect(Collectors.joining("\n"))
            .stripTrailing()
        + "\n";
  }
}
