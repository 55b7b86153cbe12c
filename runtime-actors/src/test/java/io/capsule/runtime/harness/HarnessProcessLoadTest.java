package io.capsule.runtime.harness;

import static io.capsule.runtime.harness.HarnessFixture.assertClosedAndGone;
import static io.capsule.runtime.harness.HarnessFixture.collect;
import static io.capsule.runtime.harness.HarnessFixture.limits;
import static io.capsule.runtime.harness.HarnessFixture.shLaunch;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Many harnesses at once in one ActorSystem: each one is read, fed and reported on its own. */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HarnessProcessLoadTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder().withCustomConfig(HarnessFixture.CONFIG).build();

  @TempDir Path runRoot;

  @Test
  void aHundredConcurrentHarnessesAllCompleteWithTheirOwnOutput() throws IOException {
    int count = 100;
    List<TestProbe<HarnessProcess.Event>> probes = new ArrayList<>();
    List<ActorRef<HarnessProcess.Command>> harnesses = new ArrayList<>();
    List<AppliedLaunch> launches = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Path runDir = Files.createDirectory(runRoot.resolve("run-" + i));
      byte[] stdin = ("harness " + i + "\n").getBytes(StandardCharsets.UTF_8);
      AppliedLaunch launch = shLaunch(runDir, "echo-stdin.sh", stdin, false);
      TestProbe<HarnessProcess.Event> probe = testKit.createTestProbe();
      harnesses.add(testKit.spawn(HarnessProcess.create(launch, probe.getRef(), limits())));
      probes.add(probe);
      launches.add(launch);
    }
    for (int i = 0; i < count; i++) {
      HarnessFixture.Collected out = collect(probes.get(i), harnesses.get(i));
      assertEquals(List.of("harness " + i), out.lines());
      assertEquals(Optional.of(0), out.exit().code());
      probes.get(i).expectTerminated(harnesses.get(i), HarnessFixture.WAIT);
      assertClosedAndGone(launches.get(i));
    }
  }
}
