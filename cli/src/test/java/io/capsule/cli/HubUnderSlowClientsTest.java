package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.hub.http.SlowClients;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code capsule hub} binds through the guarded edge: with 2,000 connections from 20 addresses each
 * sending one header byte every 1.5 s (the attack that locks a plain Pekko HTTP binding out, see
 * hub's {@code PlainBindingLockOutTest}), the hub process still takes a runner's connection and
 * answers the task API, and it closes the never-finished heads at its header deadline (the attack
 * has to reconnect), which a plain binding never does.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class HubUnderSlowClientsTest {
  private static final String PROJECT = "demo";

  @TempDir Path work;

  @Test
  void theCliHubKeepsAnsweringARunnerWhileTwoThousandSlowConnectionsTrickleHeaders()
      throws Exception {
    Path secret =
        Files.writeString(work.resolve("hub.secret"), "a test secret of forty bytes, or so ok");
    Path capsules = Files.createDirectories(work.resolve("capsules"));
    ProjectTokens tokens = new ProjectTokens(Files.readAllBytes(secret), Duration.ofSeconds(30));
    try (HubProcess hub =
        HubProcess.start(
            "hub",
            work,
            List.of("-Xmx256m"),
            List.of(
                "--listen",
                "127.0.0.1:0",
                "--project",
                PROJECT,
                "--secret-file",
                secret.toString()),
            Duration.ofSeconds(90))) {
      HubApiClient api =
          new HubApiClient(
              hub.apiUrl(),
              tokens.issue(PROJECT, Optional.empty(), TokenScope.API, Duration.ofMinutes(10)));
      try (SlowClients attack =
          new SlowClients(
              new InetSocketAddress("127.0.0.1", hub.port()), 2_000, 20, Duration.ofMillis(1500))) {
        // Past 2,000 opened means some were closed at the header deadline (10 s) and reopened:
        // the whole attack is in place and the guard is acting on it.
        Await.until(
            () -> attack.connects() >= 2_200, Duration.ofSeconds(120), "the attack in place");

        long start = System.nanoTime();
        ActorSystem<Void> runnerSystem = ActorSystem.create(Behaviors.empty(), "runner");
        try {
          RunnerNode runner =
              TestCapsules.connectedRunner(
                  runnerSystem,
                  CapsuleSettings.load(),
                  hub.runnerUrl(),
                  PROJECT,
                  tokens.issue(PROJECT, Optional.empty(), Duration.ofMinutes(10)),
                  capsules,
                  n -> {});
          long connectedMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
          JsonNode runners = api.get("/v1/runners");
          long answeredMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
          System.out.printf(
              "under %d slow connections (%d opened so far): runner connected in %d ms, the API"
                  + " answered %d ms after the start; longest never-finished head held %d ms%n",
              2_000,
              attack.connects(),
              connectedMs,
              answeredMs,
              attack.longestAdmittedLife().toMillis());
          assertTrue(runners.size() >= 1, "the API lists the connected runner: " + runners);
          // Seconds on a quiet machine (~3 s here); the bound is wide because the shared 2-core
          // machine runs at load 20+ at times. A locked-out hub never answers at all.
          assertTrue(
              answeredMs < 90_000, "answered the runner and the API within 90 s: " + answeredMs);
          runner.close();
        } finally {
          runnerSystem.terminate();
          runnerSystem.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
      }
      assertTrue(hub.alive(), "the hub survived the attack");
    }
  }
}
