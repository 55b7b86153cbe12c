package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.await;
import static io.capsule.hub.runner.WsFixture.hello;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.hub.runner.WsFixture.RawPeer;
import io.capsule.hub.store.HubEvent;
import io.capsule.protocol.token.ProjectTokens;
import io.capsule.protocol.token.TokenScope;
import io.capsule.protocol.ws.CloseCodes;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The hub's connection rules, driven by a bare WebSocket peer over a real socket. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HubServerTest {
  private static final int CAP = 64 * 1024;
  private final ActorTestKit kit = ActorTestKit.create();
  private final BlockingQueue<HubEvent> events = new LinkedBlockingQueue<>();
  private HubServer hub;

  @BeforeAll
  void bind() throws Exception {
    hub =
        HubServer.create(
                kit.system(),
                // The hello deadline well before dead-after, as in the defaults (10 s, 45 s): at
                // 2 s each, the idle cut (1011) raced the hello timer (1008) on a loaded machine.
                WsFixture.fast()
                    .frameCapBytes(CAP)
                    .helloTimeout(Duration.ofSeconds(1))
                    .deadAfter(Duration.ofSeconds(4))
                    .build(),
                WsFixture.TOKENS)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    hub.events().runWith(Sink.foreach(events::add), kit.system());
  }

  @AfterAll
  void shutdown() throws Exception {
    hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  private RawPeer peer(String token) {
    return new RawPeer(kit.system(), hub.url(), token);
  }

  @Test
  void refusesAMissingTokenWith401BeforeTheUpgrade() throws Exception {
    assertEquals(401, peer(null).upgradeStatus());
  }

  @Test
  void refusesAWronglySignedTokenWith401() throws Exception {
    ProjectTokens other =
        new ProjectTokens("another-secret-another-secret-xx".getBytes(), Duration.ofSeconds(5));
    String forged = other.issue("p-sig", Optional.empty(), Duration.ofMinutes(5));
    assertEquals(401, peer(forged).upgradeStatus());
  }

  @Test
  void refusesAnExpiredTokenWith401() throws Exception {
    ProjectTokens past =
        new ProjectTokens(
            WsFixture.SECRET,
            Duration.ofSeconds(5),
            Clock.fixed(Instant.now().minusSeconds(3600), ZoneOffset.UTC));
    String expired = past.issue("p-exp", Optional.empty(), Duration.ofMinutes(1));
    assertEquals(401, peer(expired).upgradeStatus());
  }

  @Test
  void refusesAnApiOrAdminTokenAtTheRunnerEndpointWith403() throws Exception {
    for (TokenScope scope : new TokenScope[] {TokenScope.API, TokenScope.ADMIN}) {
      String t = WsFixture.TOKENS.issue("p-scope", Optional.of("r"), scope, Duration.ofMinutes(5));
      assertEquals(403, peer(t).upgradeStatus(), scope.claim());
    }
    assertEquals(101, peer(token("p-scope", "r")).upgradeStatus(), "a runner token opens it");
  }

  @Test
  void closesWith4401WhenHelloNamesAnotherProject() throws Exception {
    RawPeer p = peer(token("p-token", "r"));
    assertEquals(101, p.upgradeStatus());
    p.send(hello("p-other"));
    assertEquals(CloseCodes.PROJECT_MISMATCH, p.awaitClose());
    HubEvent.Refused r =
        (HubEvent.Refused)
            await(
                events,
                e -> e instanceof HubEvent.Refused x && x.runner().projectId().equals("p-token"));
    assertEquals(Code.E_PRO_008, r.diagnostic().code());
  }

  @Test
  void closesWith1008WithoutHelloInTime() throws Exception {
    RawPeer p = peer(token("p-silent", "r"));
    assertEquals(CloseCodes.POLICY_VIOLATION, p.awaitClose());
    HubEvent.Refused r =
        (HubEvent.Refused)
            await(
                events,
                e -> e instanceof HubEvent.Refused x && x.runner().projectId().equals("p-silent"));
    assertEquals(Code.E_PRO_009, r.diagnostic().code());
  }

  @Test
  void closesWith1009OnAFrameOverTheCap() throws Exception {
    RawPeer p = peer(token("p-big", "r"));
    p.send(hello("p-big"));
    await(events, e -> e instanceof HubEvent.RunnerUp u && u.runner().projectId().equals("p-big"));
    p.send("{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"" + "x".repeat(CAP) + "\"}");
    assertEquals(CloseCodes.TOO_BIG, p.awaitClose());

    RawPeer again = peer(token("p-big", "r"));
    again.send(hello("p-big"));
    await(events, e -> e instanceof HubEvent.RunnerUp u && u.runner().projectId().equals("p-big"));
  }

  @Test
  void answersBadFramesWithErrorFramesAndKeepsTheConnection() throws Exception {
    RawPeer p = peer(token("p-bad", "r"));
    p.send(hello("p-bad", "error-frames"));
    p.send("this is not json");
    p.send("{\"type\":\"task.teleport\",\"schema_version\":1}");
    p.send("{\"type\":\"ping\",\"schema_version\":7,\"nonce\":\"n\"}");
    p.send("{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\"T\",\"seq\":-1}");
    p.send("{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"still-here\"}");
    // The errors come in order; the pong may come before them, since the node's edge answers
    // pings at once (runner liveness) while the errors take their way through the brain.
    String[] codes = {"E-PRO-001", "E-PRO-002", "E-PRO-003", "E-PRO-004"};
    int errors = 0;
    boolean ponged = false;
    while (errors < codes.length || !ponged) {
      String frame =
          await(
              p.received,
              s ->
                  s.contains("\"type\":\"error\"")
                      || (s.contains("\"type\":\"pong\"") && s.contains("still-here")));
      if (frame.contains("\"type\":\"pong\"")) {
        ponged = true;
      } else {
        assertTrue(errors < codes.length && frame.contains(codes[errors]), frame);
        errors++;
      }
    }
    assertTrue(!p.closeCode.isDone());
  }

  @Test
  void refusesAProgressKindWithAControlCharacterAtTheEdge() throws Exception {
    // A kind becomes an SSE `event:` line: a newline in it would split the stream for good.
    RawPeer p = peer(token("p-kind", "r"));
    p.send(hello("p-kind", "error-frames"));
    p.send(
        "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\"T\",\"seq\":1,"
            + "\"kind\":\"text\\nevent: report\",\"payload\":{}}");
    String error = await(p.received, s -> s.contains("\"type\":\"error\""));
    assertTrue(error.contains("E-PRO-004") && error.contains("kind"), error);
    HubEvent refused =
        await(
            events,
            e -> e instanceof HubEvent.Refused r && r.runner().projectId().equals("p-kind"));
    assertTrue(refused.toString().contains("E-PRO-004"), refused.toString());
    assertTrue(!p.closeCode.isDone(), "the connection stays");
  }

  @Test
  void dropsBadFramesSilentlyForAPeerWithoutErrorFrames() throws Exception {
    RawPeer p = peer(token("p-quiet", "r"));
    p.send(hello("p-quiet"));
    p.send("]]]");
    p.send("{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"after\"}");
    String first =
        await(p.received, s -> !s.contains("\"type\":\"ack\"") && !s.contains("\"type\":\"ping\""));
    assertTrue(first.contains("pong") && first.contains("after"), first);
  }

  @Test
  void aNewConnectionWithTheSameRunnerIdReplacesTheOldWith4000() throws Exception {
    String t = token("p-twice", "r-1");
    RawPeer first = peer(t);
    first.send(hello("p-twice"));
    await(
        events, e -> e instanceof HubEvent.RunnerUp u && u.runner().projectId().equals("p-twice"));
    RawPeer second = peer(t);
    second.send(hello("p-twice"));
    assertEquals(CloseCodes.REPLACED, first.awaitClose());
    await(
        events, e -> e instanceof HubEvent.RunnerUp u && u.runner().projectId().equals("p-twice"));
    assertTrue(hub.runners("p-twice").get(0).connected());
  }
}
