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

/**
 * {@code capsule hub} and {@code hub migrate}: the refusals a person sees about the store and the
 * address, and a hub whose journal fails.
 */
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
  void aStateDirectoryWhoseDatabaseIsNotH2IsRefusedWithItsCodeAndWhatToDo() throws Exception {
    Path state = Files.createDirectories(dir.resolve("state"));
    Files.writeString(state.resolve("hub.mv.db"), "not an H2 database\n".repeat(200));
    Cli.Result r = hub(state);
    assertEquals(ExitCodes.TASK_FAILED, r.exit(), r.err());
    assertTrue(r.err().contains("E-HUB-001"), r.err());
    assertTrue(r.err().contains("hub.mv.db"), "names the file: " + r.err());
    assertTrue(r.err().contains("capsule hub migrate"), "says what to do: " + r.err());
  }

  @Test
  void migrateCreatesTheSchemaAndRunningItAgainIsHarmless() throws Exception {
    Path state = dir.resolve("state");
    for (int i = 0; i < 2; i++) {
      Cli.Result r = Cli.run("hub", "migrate", "--state-dir", state.toString());
      assertEquals(ExitCodes.DONE, r.exit(), r.err());
      assertTrue(r.out().contains("schema ready: H2 file"), r.out());
    }
    assertTrue(Files.exists(state.resolve("hub.mv.db")));
  }

  @Test
  void migrateWithoutAStoreIsAUsageError() throws Exception {
    Cli.Result r = Cli.run("hub", "migrate");
    assertEquals(ExitCodes.USAGE, r.exit(), r.err());
    assertTrue(r.err().contains("--store or --state-dir"), r.err());
  }

  @Test
  void anUnreachablePostgresIsRefusedWithItsCodeAndTheOutputNeverHoldsThePassword()
      throws Exception {
    Path pw = Files.writeString(dir.resolve("pg.pw"), "pw-that-must-not-leak\n");
    Cli.Result r =
        Cli.run(
            "hub",
            "migrate",
            "--store",
            "jdbc:postgresql://127.0.0.1:1/capsule",
            "--store-password-file",
            pw.toString());
    assertEquals(ExitCodes.TASK_FAILED, r.exit(), r.err());
    assertTrue(r.err().contains("E-HUB-001"), r.err());
    assertTrue(!r.err().contains("pw-that-must-not-leak"), r.err());
    assertTrue(!r.out().contains("pw-that-must-not-leak"), r.out());
  }

  @Test
  void aStoreThatIsNotPostgresIsAUsageErrorWithAnExample() throws Exception {
    Cli.Result r = Cli.run("hub", "migrate", "--store", "mysql://x");
    assertEquals(ExitCodes.USAGE, r.exit(), r.err());
    assertTrue(r.err().contains("jdbc:postgresql://"), r.err());
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
      assertTrue(
          r.out().contains("state: in memory (nothing survives a restart"),
          "without --state-dir or --store the hub says so at start: " + r.out());
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
