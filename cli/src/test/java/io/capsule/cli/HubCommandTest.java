package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.settings.CapsuleSettings;
import io.capsule.hub.ReferenceHub;
import io.capsule.hub.runner.RunnerKey;
import io.capsule.hub.store.FileHubJournal;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.ProtocolException;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskSpec;
import io.capsule.protocol.token.ProjectTokens;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code capsule hub --state-dir}: the refusals a person sees, and a hub whose journal fails. */
class HubCommandTest {
  @TempDir Path dir;

  private Path secret() throws Exception {
    return Files.writeString(dir.resolve("hub.secret"), "a test secret of forty bytes, or so ok");
  }

  private Cli.Result hub(Path stateDir) throws Exception {
    return Cli.run(
        "hub",
        "--listen",
        "127.0.0.1:0",
        "--project",
        "demo",
        "--secret-file",
        secret().toString(),
        "--state-dir",
        stateDir.toString());
  }

  @Test
  void aCorruptJournalIsRefusedWithItsCodeLineAndWhatToDo() throws Exception {
    Path state = Files.createDirectories(dir.resolve("state"));
    Files.writeString(state.resolve("hub.journal"), "{\"v\":1}\n{\"v\":1}\n");
    Cli.Result r = hub(state);
    assertEquals(ExitCodes.TASK_FAILED, r.exit(), r.err());
    assertTrue(r.err().contains("E-PRO-010"), r.err());
    assertTrue(r.err().contains("line 1"), r.err());
    assertTrue(r.err().contains("--state-dir"), "says what to do: " + r.err());
  }

  @Test
  @org.junit.jupiter.api.Timeout(60) // a hub that did start would wait here for its stop
  void aPortInUseIsRefusedWithItsCodeNotAStackTrace() throws Exception {
    try (java.net.ServerSocket taken =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      Cli.Result r =
          Cli.run(
              "hub",
              "--listen",
              "127.0.0.1:" + taken.getLocalPort(),
              "--project",
              "demo",
              "--secret-file",
              secret().toString());
      assertEquals(ExitCodes.USAGE, r.exit(), r.err());
      assertTrue(r.err().contains("E-CFG-001"), r.err());
      assertTrue(r.err().contains("cannot be bound"), r.err());
      assertTrue(!r.err().contains("internal error"), r.err());
    }
  }

  @Test
  void aStateDirectoryInUseByAnotherHubIsRefused() throws Exception {
    Path state = dir.resolve("state");
    try (FileHubJournal other = FileHubJournal.open(state, false)) {
      Cli.Result r = hub(state);
      assertEquals(ExitCodes.TASK_FAILED, r.exit(), r.err());
      assertTrue(r.err().contains("E-PRO-010"), r.err());
      assertTrue(r.err().contains("in use by another hub"), r.err());
      assertTrue(other.recorded().isEmpty());
    }
  }

  @Test
  void aReferenceHubThatCannotWriteItsJournalStopsWithItsCode() throws Exception {
    HubJournal full =
        new HubJournal() {
          @Override
          public List<Entry> recorded() {
            return List.of();
          }

          @Override
          public void append(Entry entry) {
            throw new ProtocolException(Diagnostic.of(Code.E_PRO_010, "disk full (test)"));
          }

          @Override
          public void close() {}
        };
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "hub-journal-fails");
    try {
      ReferenceHub hub =
          ReferenceHub.start(
                  system,
                  RuntimeWiring.protocol(CapsuleSettings.load()),
                  new ProjectTokens(Files.readAllBytes(secret()), Duration.ofSeconds(30)),
                  "demo",
                  "127.0.0.1",
                  0,
                  full)
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      ExecutionException refused =
          assertThrows(
              ExecutionException.class,
              () ->
                  hub.hub()
                      .assign(
                          new RunnerKey("demo", RunnerKey.DEFAULT_RUNNER),
                          TaskSpec.builder("t-1", "capsule", "hello").build(),
                          "agent",
                          Invocation.builder("capsule:hello").build())
                      .toCompletableFuture()
                      .get(30, TimeUnit.SECONDS));
      assertEquals(
          Code.E_PRO_010,
          assertInstanceOf(ProtocolException.class, refused.getCause()).diagnostic().code());
      ExecutionException stopped =
          assertThrows(
              ExecutionException.class,
              () -> hub.terminated().toCompletableFuture().get(30, TimeUnit.SECONDS));
      assertEquals(
          Code.E_PRO_010,
          assertInstanceOf(ProtocolException.class, stopped.getCause()).diagnostic().code());
      hub.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } finally {
      system.terminate();
    }
  }
}
