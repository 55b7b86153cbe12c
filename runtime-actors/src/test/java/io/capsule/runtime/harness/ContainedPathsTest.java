package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.ContainedFixture.launch;
import static io.capsule.runtime.harness.ContainedFixture.limits;
import static io.capsule.runtime.harness.ContainedFixture.lines;
import static io.capsule.runtime.harness.ContainedFixture.of;
import static io.capsule.runtime.harness.ContainedFixture.untilEnd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.manifest.Access;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.HarnessGrants;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a contained harness sees of {@code $HOME} (real bubblewrap): its installation, the granted
 * paths with their access, nothing else. The home is under /var/tmp, so that what is hidden is
 * hidden by the home's own mount, not by the private /tmp.
 */
@ExtendWith(TestKitJUnit5Extension.class)
class ContainedPathsTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder().withCustomConfig(HarnessFixture.CONFIG).build();

  @TempDir Path runDir;
  private Path home;

  @BeforeEach
  void home() throws IOException {
    home = Files.createTempDirectory(Path.of("/var/tmp"), "capsule-contain-home-");
  }

  @AfterEach
  void removeHome() throws IOException {
    AppliedLaunch.deleteTree(home);
  }

  @Test
  void theHarnessSeesItsInstallationAndItsGrantsWithTheirAccessAndNothingElseOfHome()
      throws IOException {
    // An installation as a user has one: a prefix under the home with bin/ and lib/.
    Path prefix = Files.createDirectories(home.resolve(".local/tool"));
    Files.createDirectories(prefix.resolve("lib"));
    Files.writeString(prefix.resolve("lib/data.txt"), "from-lib\n");
    Path binary = Files.createDirectories(prefix.resolve("bin")).resolve("harness");
    Files.writeString(
        binary,
        String.join(
            "\n",
            "#!/bin/sh",
            "home=$1 rw=$2 ro=$3",
            "read -r data < \"$(dirname \"$0\")/../lib/data.txt\" && echo \"installation $data\"",
            "if echo x > \"$rw/written\" 2>/dev/null; then echo 'read-write written';"
                + " else echo 'read-write refused'; fi",
            "if cat \"$ro/granted.txt\" >/dev/null 2>&1; then echo 'read readable';"
                + " else echo 'read unreadable'; fi",
            "if echo x > \"$ro/written\" 2>/dev/null; then echo 'read written';"
                + " else echo 'read refused'; fi",
            "if cat \"$home/secret.txt\" >/dev/null 2>&1; then echo 'secret read';"
                + " else echo 'secret hidden'; fi",
            "echo \"home $(ls -A \"$home\" | tr '\\n' ' ')\"",
            ""));
    Files.setPosixFilePermissions(binary, PosixFilePermissions.fromString("rwx------"));
    Path rw = Files.createDirectories(home.resolve(".state"));
    Path ro = Files.createDirectories(home.resolve(".config/tool"));
    Files.writeString(ro.resolve("granted.txt"), "ok");
    Files.writeString(home.resolve("secret.txt"), "s3cret");
    Files.createDirectories(home.resolve(".ssh"));
    HarnessGrants grants =
        new HarnessGrants(
            List.of(),
            List.of(
                new HarnessGrants.PathGrant(rw, Access.READ_WRITE),
                new HarnessGrants.PathGrant(ro, Access.READ)),
            false,
            home);
    AppliedLaunch launch =
        launch(runDir, grants, binary, List.of(home.toString(), rw.toString(), ro.toString()));
    TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
    ActorRef<HarnessProcess.Command> harness =
        testKit.spawn(
            HarnessProcess.create(launch, probe.getRef(), limits(ContainmentConfig.Mode.REQUIRED)));
    harness.tell(new HarnessProcess.CloseStdin());
    List<HarnessProcess.Event> events = untilEnd(probe, harness);

    assertTrue(of(events, HarnessProcess.ContainmentDecided.class).get(0).contained());
    assertEquals(
        List.of(
            "installation from-lib",
            "read-write written",
            "read readable",
            "read refused",
            "secret hidden",
            // Only the mount points of the binds: not secret.txt, not .ssh.
            "home .config .local .state "),
        lines(events),
        events::toString);
    assertEquals("x\n", Files.readString(rw.resolve("written")));
    assertTrue(Files.notExists(ro.resolve("written")));
    HarnessFixture.assertClosedAndGone(launch);
  }
}
