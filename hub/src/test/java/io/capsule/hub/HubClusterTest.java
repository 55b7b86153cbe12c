package io.capsule.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.capsule.config.diag.Code;
import io.capsule.config.settings.SettingsInvalid;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The settings a hub cluster node is started with: addresses, seeds and failover timings. */
class HubClusterTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          127.0.0.1:2552     | 127.0.0.1 | 2552
          hub-a.internal:1   | hub-a.internal | 1
          ' 10.0.0.7:65535 ' | 10.0.0.7  | 65535
          [::1]:2552         | ::1       | 2552
          """)
  void readsHostAndPort(String text, String host, int port) {
    assertEquals(new HubCluster.Endpoint(host, port), HubCluster.Endpoint.parse(text));
  }

  @ParameterizedTest(name = "''{0}'' is refused: {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          127.0.0.1       | not HOST:PORT
          :2552           | not HOST:PORT
          127.0.0.1:      | not HOST:PORT
          127.0.0.1:port  | no numeric port
          127.0.0.1:0     | not 1-65535
          127.0.0.1:70000 | not 1-65535
          ''              | not HOST:PORT
          """)
  void refusesWhatIsNotHostColonPort(String text, String says) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> HubCluster.Endpoint.parse(text));
    assertTrue(e.getMessage().contains(says), e.getMessage());
  }

  @Test
  void aMemberListensOnItsCanonicalAddressAndJoinsTheSeedsInOrder() {
    Config c =
        HubCluster.member(
            "capsule-hub",
            HubCluster.Endpoint.parse("127.0.0.1:2553"),
            List.of(
                HubCluster.Endpoint.parse("127.0.0.1:2552"),
                HubCluster.Endpoint.parse("[::1]:2554")),
            new HubCluster.Failover(
                Duration.ofMillis(400),
                Duration.ofSeconds(3),
                Duration.ofSeconds(2),
                Duration.ofMillis(1500)));
    assertEquals("cluster", c.getString("pekko.actor.provider"));
    assertEquals("tcp", c.getString("pekko.remote.artery.transport"));
    assertEquals("127.0.0.1", c.getString("pekko.remote.artery.canonical.hostname"));
    assertEquals(2553, c.getInt("pekko.remote.artery.canonical.port"));
    assertEquals(
        List.of("pekko://capsule-hub@127.0.0.1:2552", "pekko://capsule-hub@[::1]:2554"),
        c.getStringList("pekko.cluster.seed-nodes"));
    assertEquals(
        "org.apache.pekko.cluster.sbr.SplitBrainResolverProvider",
        c.getString("pekko.cluster.downing-provider-class"));
    assertEquals(
        "keep-majority", c.getString("pekko.cluster.split-brain-resolver.active-strategy"));
    assertEquals(
        Duration.ofMillis(400), c.getDuration("pekko.cluster.failure-detector.heartbeat-interval"));
    assertEquals(
        Duration.ofSeconds(3),
        c.getDuration("pekko.cluster.failure-detector.acceptable-heartbeat-pause"));
    assertEquals(
        Duration.ofSeconds(2), c.getDuration("pekko.cluster.split-brain-resolver.stable-after"));
    assertEquals(Duration.ofMillis(1500), c.getDuration("pekko.cluster.down-removal-margin"));
    // Not derived from the short stable-after (4 s): a starved host's flap must not down all.
    assertEquals(
        Duration.ofSeconds(15),
        c.getDuration("pekko.cluster.split-brain-resolver.down-all-when-unstable"));
    assertEquals(
        Duration.ofMillis(250), c.getDuration("pekko.cluster.unreachable-nodes-reaper-interval"));
  }

  @Test
  void theShippedTimingsMoveADeadNodesTasksWellWithinTenSeconds() {
    HubCluster.Failover shipped = HubCluster.Failover.fromConfig(ConfigFactory.load());
    assertTrue(
        shipped.expected().compareTo(Duration.ofSeconds(10)) < 0,
        "interval + pause + stable-after + margin + ~2.5 s: " + shipped);
    // Pekko's own defaults, for comparison: about 49 s on this machine (TOOLCHAIN.md).
    assertTrue(
        new HubCluster.Failover(
                    Duration.ofSeconds(1),
                    Duration.ofSeconds(3),
                    Duration.ofSeconds(20),
                    Duration.ofSeconds(20))
                .expected()
                .toSeconds()
            > 40);
  }

  @Test
  void timingsOutOfRangeAreRefusedWithTheirKeys() {
    Config bad =
        ConfigFactory.parseString(
                "capsule.hub.cluster { heartbeat-pause = 200ms, stable-after = 0s }")
            .withFallback(ConfigFactory.load());
    SettingsInvalid e =
        assertThrows(SettingsInvalid.class, () -> HubCluster.Failover.fromConfig(bad));
    assertEquals(Code.E_CFG_001, e.code());
    List<String> said = e.diagnostics().stream().map(d -> d.message()).toList();
    assertEquals(2, said.size(), said.toString());
    assertTrue(said.get(0).startsWith("capsule.hub.cluster.heartbeat-pause"), said.toString());
    assertTrue(said.get(1).startsWith("capsule.hub.cluster.stable-after"), said.toString());
  }

  @Test
  void aPauseShorterThanTwoHeartbeatsIsRefused() {
    Config bad =
        ConfigFactory.parseString(
                "capsule.hub.cluster { heartbeat-interval = 800ms, heartbeat-pause = 1500ms }")
            .withFallback(ConfigFactory.load());
    SettingsInvalid e =
        assertThrows(SettingsInvalid.class, () -> HubCluster.Failover.fromConfig(bad));
    assertEquals(Code.E_CFG_001, e.code());
    assertTrue(
        e.diagnostics().get(0).message().contains("at least twice heartbeat-interval"),
        e.diagnostics().toString());
  }

  @Test
  void aMemberWithoutSeedsIsAProgrammingError() {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            HubCluster.member(
                "capsule-hub",
                HubCluster.Endpoint.parse("127.0.0.1:2552"),
                List.of(),
                HubCluster.Failover.fromConfig(ConfigFactory.load())));
  }
}
