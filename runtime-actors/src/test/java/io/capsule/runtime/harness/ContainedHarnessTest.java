package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.ContainedFixture.assertNoSleepers;
import static io.capsule.runtime.harness.ContainedFixture.launch;
import static io.capsule.runtime.harness.ContainedFixture.limits;
import static io.capsule.runtime.harness.ContainedFixture.lines;
import static io.capsule.runtime.harness.ContainedFixture.marker;
import static io.capsule.runtime.harness.ContainedFixture.of;
import static io.capsule.runtime.harness.ContainedFixture.untilEnd;
import static io.capsule.runtime.harness.HarnessFixture.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.capsule.config.diag.Code;
import io.capsule.config.manifest.Access;
import io.capsule.config.manifest.NetworkEntry;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The manifest's grants held against a hostile harness, with real bubblewrap, socat and loopback
 * listeners (CI installs the bubblewrap and socat packages; this machine kind has them).
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ContainedHarnessTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder().withCustomConfig(HarnessFixture.CONFIG).build();

  @TempDir Path runDir;
  @TempDir Path elsewhere;

  private HttpServer allowed;
  private HttpServer denied;
  private final AtomicInteger deniedHits = new AtomicInteger();
  private Path varTmp;

  @BeforeAll
  void listeners() throws IOException {
    allowed = serve("allowed-ok", new AtomicInteger());
    denied = serve("denied-reached", deniedHits);
    // Outside /tmp, so the hidden home and the read grant are tested apart from the private /tmp.
    varTmp = Files.createTempDirectory(Path.of("/var/tmp"), "capsule-contain-test-");
  }

  @AfterAll
  void stop() throws IOException {
    allowed.stop(0);
    denied.stop(0);
    AppliedLaunch.deleteTree(varTmp);
  }

  private static HttpServer serve(String body, AtomicInteger hits) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.createContext(
        "/",
        exchange -> {
          hits.incrementAndGet();
          byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, bytes.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
          }
        });
    server.start();
    return server;
  }

  @Test
  void aHostileHarnessIsHeldToItsGrants() throws IOException {
    Path grantDir = Files.createDirectories(varTmp.resolve("granted"));
    Files.writeString(grantDir.resolve("granted.txt"), "ok");
    Path home = Files.createDirectories(varTmp.resolve("home"));
    Path secret = Files.writeString(home.resolve("secret.txt"), "s3cret");
    Path hostTmp = Files.writeString(elsewhere.resolve("other.txt"), "other");
    int allowedPort = allowed.getAddress().getPort();
    int deniedPort = denied.getAddress().getPort();
    HarnessGrants grants =
        new HarnessGrants(
            List.of(NetworkEntry.parse("127.0.0.1:" + allowedPort)),
            List.of(new HarnessGrants.PathGrant(grantDir, Access.READ)),
            true,
            home);
    String marker = marker();
    AppliedLaunch launch =
        launch(
            runDir,
            grants,
            "hostile.sh",
            String.valueOf(allowedPort),
            String.valueOf(deniedPort),
            secret.toString(),
            grantDir.toString(),
            marker,
            hostTmp.toString(),
            LaunchPlanApplier.FILES_DIR_PLACEHOLDER);
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    ActorRef<HarnessProcess.Command> harness =
        testKit.spawn(
            HarnessProcess.create(launch, probe.getRef(), limits(ContainmentConfig.Mode.REQUIRED)));
    harness.tell(new HarnessProcess.CloseStdin());
    List<HarnessProcess.Event> events = untilEnd(probe, harness);

    HarnessProcess.ContainmentDecided decided =
        of(events, HarnessProcess.ContainmentDecided.class).get(0);
    assertTrue(decided.contained(), "contained");
    assertEquals(
        List.of(
            "proxy-allowed allowed-ok",
            "proxy-allowed-connect allowed-ok",
            "proxy-denied 403",
            "direct-allowed allowed-ok",
            "direct-denied failed",
            "interfaces lo",
            "dns none",
            "secret hidden",
            "host tmp hidden",
            "grant read",
            "grant refused",
            "workdir refused",
            "files refused",
            "children left"),
        lines(events),
        events::toString);
    List<HarnessProcess.EgressRefused> refused = of(events, HarnessProcess.EgressRefused.class);
    assertEquals(1, refused.size(), "one refusal told: " + refused);
    assertEquals("127.0.0.1", refused.get(0).host());
    assertEquals(deniedPort, refused.get(0).port());
    assertEquals(0, deniedHits.get(), "the denied listener was never reached");
    assertFalse(Files.exists(grantDir.resolve("written")));
    assertFalse(Files.exists(runDir.resolve("written")));
    assertFalse(Files.exists(launch.filesDir().resolve("written")));
    // The setsid and double-forked sleepers died with the sandbox's PID namespace.
    assertNoSleepers(probe, marker);
    HarnessFixture.assertClosedAndGone(launch);
  }

  /**
   * A capsule folder under a hidden home whose harness is {@code sh <folder>/harness/x.sh}: the
   * script and the files beside it are readable inside, and the folder stays read-only even when a
   * grant names it read-write (a harness must not rewrite its own manifest).
   */
  @Test
  void theCapsuleFolderIsReadableAndNeverWritable() throws IOException {
    Path home = Files.createDirectories(varTmp.resolve("capsule-home"));
    Path capsule = Files.createDirectories(home.resolve("capsules/scripted"));
    Files.writeString(capsule.resolve("murmur.yaml"), "name: scripted\n");
    Files.writeString(capsule.resolve("greeting.txt"), "hello-from-the-folder\n");
    Path script = Files.createDirectories(capsule.resolve("harness")).resolve("x.sh");
    Files.writeString(
        script,
        String.join(
            "\n",
            "dir=$(dirname \"$0\")/..",
            "read -r greeting < \"$dir/greeting.txt\" && echo \"read $greeting\"",
            "if (echo x >> \"$dir/murmur.yaml\") 2>/dev/null; then echo 'manifest written';"
                + " else echo 'manifest refused'; fi",
            "if (echo x > \"$dir/new.txt\") 2>/dev/null; then echo 'folder written';"
                + " else echo 'folder refused'; fi",
            ""));
    HarnessGrants grants =
        new HarnessGrants(
            List.of(),
            List.of(new HarnessGrants.PathGrant(capsule, Access.READ_WRITE)),
            false,
            home,
            List.of(),
            Optional.of(capsule));
    LaunchPlan plan =
        new LaunchPlan(
            List.of(script.toString()),
            List.of(),
            List.of(),
            Optional.of(new byte[0]),
            true,
            Optional.empty());
    AppliedLaunch launch =
        LaunchPlanApplier.apply(
            plan,
            Path.of("/bin/sh"),
            runDir,
            runDir,
            List.of("PATH"),
            HarnessFixture.HOST_ENV,
            grants);
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    ActorRef<HarnessProcess.Command> harness =
        testKit.spawn(
            HarnessProcess.create(launch, probe.getRef(), limits(ContainmentConfig.Mode.REQUIRED)));
    harness.tell(new HarnessProcess.CloseStdin());
    List<HarnessProcess.Event> events = untilEnd(probe, harness);

    assertTrue(of(events, HarnessProcess.ContainmentDecided.class).get(0).contained());
    assertEquals(
        List.of("read hello-from-the-folder", "manifest refused", "folder refused"),
        lines(events),
        events::toString);
    assertEquals("name: scripted\n", Files.readString(capsule.resolve("murmur.yaml")));
    assertFalse(Files.exists(capsule.resolve("new.txt")));
    HarnessFixture.assertClosedAndGone(launch);
  }

  /** The tool bridge listens on the host's loopback; the harness reaches it at the same URL. */
  @Test
  void theRunsLoopbackServiceStaysReachableAtItsOwnAddress() throws IOException {
    int port = allowed.getAddress().getPort();
    HarnessGrants grants =
        new HarnessGrants(List.of(), List.of(), false, varTmp).withLoopback(port);
    AppliedLaunch launch = launch(runDir, grants, "loopback.sh", String.valueOf(port));
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    ActorRef<HarnessProcess.Command> harness =
        testKit.spawn(
            HarnessProcess.create(launch, probe.getRef(), limits(ContainmentConfig.Mode.REQUIRED)));
    harness.tell(new HarnessProcess.CloseStdin());
    List<HarnessProcess.Event> events = untilEnd(probe, harness);
    assertEquals(List.of("direct allowed-ok", "proxied allowed-ok"), lines(events));
    assertEquals(List.of(), of(events, HarnessProcess.EgressRefused.class));
    HarnessFixture.assertClosedAndGone(launch);
  }

  @Test
  void theWorkingDirectoryIsWritableWithoutReadOnly() throws IOException {
    HarnessGrants grants = new HarnessGrants(List.of(), List.of(), false, varTmp);
    AppliedLaunch launch = launch(runDir, grants, "write-workdir.sh");
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    ActorRef<HarnessProcess.Command> harness =
        testKit.spawn(
            HarnessProcess.create(launch, probe.getRef(), limits(ContainmentConfig.Mode.REQUIRED)));
    harness.tell(new HarnessProcess.CloseStdin());
    List<HarnessProcess.Event> events = untilEnd(probe, harness);
    assertEquals(List.of("workdir written"), lines(events));
    assertEquals("inside\n", Files.readString(runDir.resolve("written")));
    HarnessFixture.assertClosedAndGone(launch);
  }

  @Test
  void autoWithoutBwrapRunsUncontainedWithTheWarning() throws IOException {
    AppliedLaunch launch = launch(runDir, HarnessGrants.NONE, "write-workdir.sh");
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    HarnessLimits limits =
        HarnessFixture.limits()
            .withContainment(
                ContainmentConfig.defaults(ContainmentConfig.Mode.AUTO)
                    .withBwrap(Path.of("/nonexistent/bwrap")));
    ActorRef<HarnessProcess.Command> harness =
        testKit.spawn(HarnessProcess.create(launch, probe.getRef(), limits));
    harness.tell(new HarnessProcess.CloseStdin());
    List<HarnessProcess.Event> events = untilEnd(probe, harness);
    HarnessProcess.ContainmentDecided decided =
        of(events, HarnessProcess.ContainmentDecided.class).get(0);
    assertFalse(decided.contained());
    assertEquals(Code.W_CAP_050, decided.warning().orElseThrow().code());
    assertTrue(decided.warning().get().message().contains("/nonexistent/bwrap"));
    assertEquals(List.of("workdir written"), lines(events));
    HarnessFixture.assertClosedAndGone(launch);
  }

  @Test
  void requiredWithoutBwrapRefusesToStart() throws IOException {
    AppliedLaunch launch = launch(runDir, HarnessGrants.NONE, "write-workdir.sh");
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    HarnessLimits limits =
        HarnessFixture.limits()
            .withContainment(
                ContainmentConfig.defaults(ContainmentConfig.Mode.REQUIRED)
                    .withBwrap(Path.of("/nonexistent/bwrap")));
    ActorRef<HarnessProcess.Command> harness =
        testKit.spawn(HarnessProcess.create(launch, probe.getRef(), limits));
    HarnessProcess.SpawnFailed failed =
        probe.expectMessageClass(HarnessProcess.SpawnFailed.class, WAIT);
    assertEquals(Code.E_CAP_051, failed.diagnostic().code());
    assertTrue(failed.diagnostic().message().contains("apt-get install bubblewrap socat"));
    probe.expectTerminated(harness, WAIT);
    assertFalse(Files.exists(runDir.resolve("written")), "nothing ran");
    HarnessFixture.assertClosedAndGone(launch);
  }
}
