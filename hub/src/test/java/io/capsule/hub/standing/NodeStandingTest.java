package io.capsule.hub.standing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.capsule.hub.web.Readiness;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link NodeStanding} on a real cluster of three actor systems on loopback: serving while all
 * three hear each other; when the other two stop without leaving (as if frozen or cut off by the
 * network), the remaining node finds itself on the minority side, its verdict turns to cut off and
 * its listeners hear it, without any help from the split-brain resolver (switched off here).
 */
class NodeStandingTest {
  private final List<ActorTestKit> kits = new ArrayList<>();

  @AfterEach
  void stop() {
    kits.forEach(ActorTestKit::shutdownTestKit);
  }

  private static Config node() {
    return ConfigFactory.parseString(
        """
        pekko.actor.provider = cluster
        pekko.remote.artery.transport = tcp
        pekko.remote.artery.canonical.hostname = "127.0.0.1"
        pekko.remote.artery.canonical.port = 0
        pekko.cluster.jmx.enabled = off
        pekko.cluster.downing-provider-class = ""
        pekko.cluster.failure-detector.heartbeat-interval = 200ms
        pekko.cluster.failure-detector.acceptable-heartbeat-pause = 1s
        pekko.coordinated-shutdown.run-by-actor-system-terminate = off
        pekko.coordinated-shutdown.terminate-actor-system = off
        """);
  }

  private ActorSystem<?> start() {
    ActorTestKit kit = ActorTestKit.create("standing", node());
    kits.add(kit);
    return kit.system();
  }

  @Test
  void aNodeThatHearsNoneOfItsPeersIsCutOffAndSaysSo() {
    ActorSystem<?> a = start();
    ActorSystem<?> b = start();
    ActorSystem<?> c = start();
    var seed = Cluster.get(a).selfMember().address();
    for (ActorSystem<?> s : List.of(a, b, c)) {
      Cluster.get(s).manager().tell(Join.create(seed));
    }
    ActorTestKit kitA = kits.get(0);
    TestProbe<String> heard = kitA.createTestProbe();
    NodeStanding standing = NodeStanding.get(a);
    standing.onCutOff(() -> heard.ref().tell("cut off"));
    heard.awaitAssert(
        Duration.ofSeconds(30),
        () -> {
          long up =
              java.util.stream.StreamSupport.stream(
                      Cluster.get(a).state().getMembers().spliterator(), false)
                  .filter(m -> m.status() == MemberStatus.up())
                  .count();
          assertEquals(3, up, "three members up");
          assertEquals(Standing.Verdict.SERVING, standing.now());
          assertTrue(Readiness.of(a).check().toCompletableFuture().join(), "ready");
          return null;
        });

    // b and c stop without leaving: to a, they went silent.
    kits.get(1).shutdownTestKit();
    kits.get(2).shutdownTestKit();
    kits.subList(1, 3).clear();

    heard.expectMessage(Duration.ofSeconds(20), "cut off");
    assertEquals(Standing.Verdict.CUT_OFF, standing.now());
    assertFalse(Readiness.of(a).check().toCompletableFuture().join(), "/readyz says 503");
    heard.expectNoMessage(Duration.ofMillis(500)); // once per change, not per look
  }
}
