package io.capsule.realharness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.cli.EmbeddedClaude;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.RunRequest;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunHandle;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedding API's cancel against the real {@code claude}: {@code RunHandle.cancel} mid-stream
 * ends the run canceled and leaves no harness process. (The harness's HOME is this JVM's, which the
 * module's Surefire configuration points into {@code target/}.)
 */
final class EmbeddedCancelIT {
  @TempDir Path tmp;

  @Test
  void cancelingThroughTheRunHandleMidStreamEndsCanceledWithTheHarnessGone() throws Exception {
    RealClaudeIT.onlyTheRealBinaryInsideALoopbackOnlyNamespace();
    Files.createDirectories(Path.of(System.getenv("HOME"), ".claude"));
    try (FakeAnthropic api = FakeAnthropic.start();
        EmbeddedClaude embedded = EmbeddedClaude.start(tmp.resolve("runs"))) {
      // Every streamed request stalls mid-answer, not only the first: should the CLI send a side
      // request first, the main one must not get the fake's 500 (with max_retries 0 the run would
      // end failed and nothing would ever stream).
      api.otherwise(
          req ->
              MessageStream.start("msg_stall", req.path("model").asText(), RealClaudeIT.USAGE)
                  .text("Starting a long answer")
                  .stall());
      Path capsule =
          TestCapsule.write(
              tmp.resolve("capsule"), RealClaudeIT.CLAUDE, api.baseUrl(), 0, List.of());
      CompletableFuture<RunEvent.TextDelta> streaming = new CompletableFuture<>();
      RunHandle handle =
          embedded
              .runtime()
              .source(
                  RunRequest.of(
                      "embedded-cancel", new CapsuleRef.Folder(capsule.toString()), "Go."))
              .to(
                  Sink.foreach(
                      e -> {
                        if (e instanceof RunEvent.TextDelta d) {
                          streaming.complete(d);
                        }
                      }))
              .run(embedded.system());

      // The first text, or the run's end if it came first: a run that ended without streaming
      // fails here with its outcome and what the CLI asked the fake, not after a silent 90 s.
      Object first;
      try {
        first =
            CompletableFuture.anyOf(streaming, handle.outcome().toCompletableFuture())
                .get(90, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        throw new AssertionError(
            "no text and no outcome within 90 s; the CLI asked the fake " + api.allRequests(), e);
      }
      assertTrue(
          first instanceof RunEvent.TextDelta,
          () ->
              "the run ended before any text streamed: "
                  + first
                  + "; requests "
                  + api.allRequests());
      assertEquals("Starting a long answer", streaming.get().soFar(), "streamed text");
      List<ProcessHandle> harness =
          ProcessHandle.current().descendants().filter(RealClaudeIT::isClaude).toList();
      assertFalse(harness.isEmpty(), "the claude process should be running mid-stream");

      handle.cancel("the test cancels mid-stream");
      RunOutcome outcome = handle.outcome().toCompletableFuture().get(60, TimeUnit.SECONDS);

      assertEquals(RunStatus.FAILED, outcome.status(), outcome::toString);
      assertTrue(outcome.canceled(), outcome::toString);
      for (ProcessHandle p : harness) {
        p.onExit().get(10, TimeUnit.SECONDS);
        assertFalse(p.isAlive(), "claude " + p.pid() + " outlived the canceled run");
      }
    }
  }
}
