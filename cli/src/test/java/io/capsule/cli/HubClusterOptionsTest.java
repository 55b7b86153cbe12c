package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code capsule hub --cluster} and {@code capsule runner --hub a,b} refuse before anything
 * starts: a cluster on a store only one process can use, cluster addresses without {@code
 * --cluster}, addresses that are not {@code HOST:PORT}, hub URLs a runner cannot dial. (A hub that
 * did start would wait for its stop: the timeout turns that into a failure.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HubClusterOptionsTest {
  @TempDir Path dir;

  private Cli.Result hub(String... extra) throws Exception {
    Path secret =
        Files.writeString(dir.resolve("hub.secret"), "a test secret of forty bytes, or so ok");
    List<String> args =
        new ArrayList<>(
            List.of(
                "hub",
                "--listen",
                "127.0.0.1:0",
                "--project",
                "demo",
                "--secret-file",
                secret.toString()));
    args.addAll(List.of(extra));
    return Cli.run(args.toArray(String[]::new));
  }

  @Test
  void aProjectIdTooLongForTheStoreIsRefusedWithItsLimitBeforeAnythingIsCreated() throws Exception {
    Path secret =
        Files.writeString(dir.resolve("hub.secret"), "a test secret of forty bytes, or so ok");
    Cli.Result r =
        Cli.run(
            "hub",
            "--listen",
            "127.0.0.1:0",
            "--project",
            "p".repeat(48),
            "--secret-file",
            secret.toString(),
            "--state-dir",
            dir.resolve("state").toString());
    assertTrue(r.err().startsWith("E-CFG-001 --project 'ppp"), r.err());
    assertTrue(r.err().contains("at most 47 characters"), "gives the limit: " + r.err());
    assertFalse(r.out().contains("listening on"), r.out());
    assertFalse(Files.exists(dir.resolve("state/hub.mv.db")), "no store was created");
  }

  @Test
  void aClusterOnAnH2FileIsRefusedWithItsCodeBeforeAnythingListens() throws Exception {
    Cli.Result r =
        hub(
            "--cluster",
            "--seed",
            "127.0.0.1:2552",
            "--canonical",
            "127.0.0.1:2552",
            "--state-dir",
            dir.resolve("state").toString());
    assertEquals(ExitCodes.TASK_FAILED, r.exit(), r.err());
    assertTrue(r.err().startsWith("E-HUB-005"), r.err());
    assertTrue(r.err().contains("H2 file"), "names the store it was given: " + r.err());
    assertTrue(r.err().contains("--store jdbc:postgresql://"), "says what to do: " + r.err());
    assertFalse(r.out().contains("listening on"), r.out());
    assertFalse(Files.exists(dir.resolve("state/hub.mv.db")), "no schema was created either");
  }

  @Test
  void aClusterInMemoryIsRefusedWithItsCode() throws Exception {
    Cli.Result r = hub("--cluster", "--seed", "127.0.0.1:2552", "--canonical", "127.0.0.1:2552");
    assertEquals(ExitCodes.TASK_FAILED, r.exit(), r.err());
    assertTrue(r.err().startsWith("E-HUB-005"), r.err());
    assertTrue(r.err().contains("in memory"), r.err());
  }

  @Test
  void seedsWithoutClusterAreAUsageError() throws Exception {
    Cli.Result r = hub("--seed", "127.0.0.1:2552");
    assertEquals(ExitCodes.USAGE, r.exit(), r.err());
    assertTrue(r.err().contains("add --cluster"), r.err());
  }

  @Test
  void aClusterWithoutItsCanonicalAddressIsAUsageError() throws Exception {
    Cli.Result r = hub("--cluster", "--seed", "127.0.0.1:2552");
    assertEquals(ExitCodes.USAGE, r.exit(), r.err());
    assertTrue(r.err().contains("--canonical"), r.err());
  }

  @Test
  void aCanonicalAddressThatIsNotHostColonPortIsRefusedWithAnExample() throws Exception {
    Cli.Result r =
        hub(
            "--cluster",
            "--seed",
            "127.0.0.1:2552,127.0.0.1:2553",
            "--canonical",
            "127.0.0.1",
            "--store",
            "jdbc:postgresql://127.0.0.1:1/capsule");
    assertEquals(ExitCodes.USAGE, r.exit(), r.err());
    assertTrue(r.err().startsWith("E-CLI-001 --canonical '127.0.0.1' is not HOST:PORT"), r.err());
    assertTrue(r.err().contains("e.g. --canonical 10.0.0.1:2552"), r.err());
  }

  @Test
  void aSeedWithoutAPortIsRefusedNamingIt() throws Exception {
    Cli.Result r =
        hub(
            "--cluster",
            "--seed",
            "127.0.0.1:2552,hub-b",
            "--canonical",
            "127.0.0.1:2552",
            "--store",
            "jdbc:postgresql://127.0.0.1:1/capsule");
    assertEquals(ExitCodes.USAGE, r.exit(), r.err());
    assertTrue(r.err().startsWith("E-CLI-001 --seed 'hub-b' is not HOST:PORT"), r.err());
  }

  @Test
  void aRunnerHubListWithAUrlThatIsNotWebSocketIsRefusedNamingIt() throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "x.y.z");
    Cli.Result r =
        Cli.run(
            "runner",
            "--hub",
            "ws://127.0.0.1:8600/v1/runner,http://127.0.0.1:8601/v1/runner",
            "--token-file",
            token.toString(),
            "--capsules",
            dir.toString(),
            "--project",
            "demo");
    assertEquals(ExitCodes.USAGE, r.exit(), r.err());
    assertTrue(r.err().startsWith("E-CLI-001 --hub: 'http://127.0.0.1:8601/v1/runner'"), r.err());
    assertTrue(r.err().contains("not a ws:// or wss:// URL"), r.err());
  }
}
