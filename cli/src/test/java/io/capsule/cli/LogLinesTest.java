package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.hub.ReferenceHub;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the hub and the runner log, as {@code capsule hub} and {@code capsule runner} configure it:
 * one INFO line per runner and task step, JSON on request, and never a token or a prompt.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LogLinesTest {
  private static final byte[] SECRET =
      "a test secret of at least thirty-two bytes".getBytes(StandardCharsets.UTF_8);

  /** Words no log line may carry: the task's goal, and what the harness says back. */
  private static final String PROMPT = "PROMPT-7f3a tell nobody the launch codes";

  @TempDir Path capsules;

  @AfterEach
  void restoreLogging() {
    LogOptions.configure("text", "WARN"); // as every other test in this JVM expects it
  }

  @Test
  void jsonFormatWritesOneJsonObjectPerLineOnStderr() throws Exception {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    try {
      System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
      LogOptions.configure("json", "INFO"); // the console appender binds System.err as it starts
      LoggerFactory.getLogger("io.capsule.cli.LogLinesTest").info("runner {} connected", "r-1");
      LoggerFactory.getLogger("io.capsule.cli.LogLinesTest").debug("not at INFO");
    } finally {
      LogOptions.configure("text", "WARN");
      System.setErr(original);
    }
    List<String> lines = captured.toString(StandardCharsets.UTF_8).lines().toList();
    assertEquals(1, lines.size(), lines.toString());
    JsonNode line = new ObjectMapper().readTree(lines.get(0));
    assertEquals("INFO", line.get("level").asText());
    assertEquals("runner r-1 connected", line.get("formattedMessage").asText());
    assertEquals("io.capsule.cli.LogLinesTest", line.get("loggerName").asText());
  }

  @Test
  void theHubLogsEachStepOnceAtInfoAndNeverATokenOrAPrompt() throws Exception {
    LogOptions.configure("text", "INFO");
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    ch.qos.logback.classic.Logger root =
        (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
    logged.start();
    root.addAppender(logged);
    TestCapsules.capsule(capsules, "echo", echoHarness());
    CapsuleSettings settings = CapsuleSettings.load();
    ProjectTokens tokens = new ProjectTokens(SECRET, Duration.ofSeconds(30));
    String runnerToken =
        tokens.issue("logs", Optional.of("r-logs"), TokenScope.RUNNER, Duration.ofMinutes(30));
    String apiToken =
        tokens.issue("logs", Optional.empty(), TokenScope.API, Duration.ofMinutes(30));
    ActorSystem<Void> hubSystem = ActorSystem.create(Behaviors.empty(), "hub");
    ActorSystem<Void> runnerSystem = ActorSystem.create(Behaviors.empty(), "runner");
    ReferenceHub hub = null;
    RunnerNode runner = null;
    try {
      hub =
          ReferenceHub.start(
                  hubSystem, RuntimeWiring.protocol(settings), tokens, "logs", "127.0.0.1", 0)
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      runner =
          TestCapsules.connectedRunner(
              runnerSystem, settings, hub.runnerUrl(), "logs", runnerToken, capsules, n -> {});
      HubApiClient api = new HubApiClient(hub.apiUrl(), apiToken);
      api.submit("{\"capsule\":\"echo\",\"id\":\"t-log\",\"goal\":\"" + PROMPT + "\"}");
      List<HubApiClient.Sse> events = api.follow("t-log", 0);
      JsonNode report = events.get(events.size() - 1).data();
      assertEquals("done", report.get("status").asText());
      assertTrue(report.get("summary_business").asText().contains("launch codes"), "echoed");
      // a wrong token is refused, and the refusal is logged without the token it carried
      assertEquals(401, api.getAs("/v1/tasks", apiToken + "x").statusCode());
      runner.close();
      runner = null;
      awaitLine(logged, "runner logs/r-logs disconnected");
    } finally {
      if (runner != null) {
        runner.close();
      }
      if (hub != null) {
        hub.stop().toCompletableFuture().join();
      }
      runnerSystem.terminate();
      hubSystem.terminate();
      root.detachAppender(logged);
    }
    List<ILoggingEvent> events = List.copyOf(logged.list);
    List<String> info =
        events.stream()
            .filter(e -> e.getLevel() == Level.INFO)
            .filter(e -> e.getLoggerName().startsWith("io.capsule.hub.metrics"))
            .map(ILoggingEvent::getFormattedMessage)
            .toList();
    assertEquals(
        List.of(
            "runner logs/r-logs connected (version "
                + System.getProperty("test.capsule-version")
                + ", capsules [echo], slots 4)",
            "task t-log queued (capsule echo)",
            "task t-log placed on runner logs/r-logs after S s",
            "task t-log started on runner logs/r-logs",
            "task t-log finished: done on runner logs/r-logs (0 tokens)",
            "runner logs/r-logs disconnected: closed"),
        info.stream()
            .map(l -> l.replaceAll("disconnected: .*", "disconnected: closed"))
            .map(l -> l.replaceAll("after \\d+\\.\\d s", "after S s"))
            .toList());
    // The runner: one line per run step, each naming the task, none with what it was asked.
    List<String> runSteps =
        events.stream()
            .filter(e -> e.getLevel() == Level.INFO)
            .filter(e -> e.getLoggerName().equals("io.capsule.runtime.runs"))
            .map(ILoggingEvent::getFormattedMessage)
            .map(l -> l.replaceAll("pid \\d+", "pid P").replaceAll("\\d+\\.\\d s$", "S s"))
            .toList();
    assertEquals(
        List.of(
            "run t-log started (capsule echo)",
            "run t-log: harness spawned (pid P)",
            "run t-log: turn ended",
            "run t-log finished: done after 1 turn, S s"),
        runSteps);
    for (ILoggingEvent e : events) {
      String text = everything(e);
      assertFalse(text.contains(runnerToken) || text.contains(apiToken), "a token: " + text);
      assertFalse(text.contains("PROMPT-7f3a") || text.contains("launch codes"), "prompt: " + text);
    }
    long frameLines =
        events.stream()
            .filter(e -> e.getLevel().isGreaterOrEqual(Level.INFO))
            .filter(e -> e.getFormattedMessage().contains("t-log"))
            .count();
    assertTrue(frameLines <= 8, "no INFO line per frame (4 hub, 4 runner steps): " + frameLines);
  }

  /** The message, its arguments and its throwable chain: all a log line can print. */
  private static String everything(ILoggingEvent e) {
    StringBuilder b = new StringBuilder(e.getFormattedMessage());
    if (e.getArgumentArray() != null) {
      for (Object a : e.getArgumentArray()) {
        b.append(' ').append(a);
      }
    }
    for (IThrowableProxy t = e.getThrowableProxy(); t != null; t = t.getCause()) {
      b.append(' ').append(t.getMessage());
    }
    e.getMDCPropertyMap().forEach((k, v) -> b.append(' ').append(k).append('=').append(v));
    return b.toString();
  }

  private static void awaitLine(ListAppender<ILoggingEvent> logged, String start)
      throws InterruptedException {
    Await.until(
        () ->
            List.copyOf(logged.list).stream()
                .anyMatch(e -> e.getFormattedMessage().startsWith(start)),
        Duration.ofSeconds(30),
        "a log line starting " + start);
  }

  /** Says the goal back, as a model would quote a prompt: the words reach the report only. */
  private static String echoHarness() {
    return "#!/bin/sh\n"
        + "[ \"$1\" = --version ] && { echo 1; exit 0; }\n"
        + "read -r turn\n"
        + "printf '{\"type\":\"delta\",\"text\":\"you said: launch codes\"}\\n'\n"
        + "printf '{\"type\":\"result\",\"text\":\"you said: launch codes\"}\\n'\n";
  }
}
