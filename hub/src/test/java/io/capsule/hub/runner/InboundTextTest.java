package io.capsule.hub.runner;

import static io.capsule.hub.runner.WsFixture.hello;
import static io.capsule.hub.runner.WsFixture.token;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.capsule.config.diag.Code;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.ProtocolException.FrameRejected;
import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Invocation;
import io.capsule.protocol.frame.TaskProgress;
import io.capsule.protocol.frame.TaskSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A runner frame is decoded (and validated) once, at the edge, and its text goes to the brain and
 * the store as the runner sent it: never encoded again on the way. Across nodes the text is what
 * travels; the brain there decodes it to the same frame.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InboundTextTest {
  private static final FrameCodec CODEC = FrameCodec.shared();
  private static final String PROJECT = "p-text";

  private final ActorTestKit kit = ActorTestKit.create();

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void theStoreKeepsTheFrameAsTheRunnerSentIt() throws Exception {
    HubJournal journal = HubJournal.inMemory();
    HubServer hub =
        HubServer.create(
                kit.system(), WsFixture.fast().ackEvery(1).build(), WsFixture.TOKENS, journal)
            .bind("127.0.0.1", 0)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    try {
      WsFixture.RawPeer p = new WsFixture.RawPeer(kit.system(), hub.url(), token(PROJECT, "r1"));
      p.send(hello(PROJECT, Capabilities.ACK));
      assertInstanceOf(Ack.class, next(p));
      hub.assign(
              new RunnerKey(PROJECT, "r1"),
              TaskSpec.builder("T1", "feature", "text").build(),
              "agent",
              Invocation.builder("capsule:x").build())
          .toCompletableFuture()
          .get(20, TimeUnit.SECONDS);
      // Keys in an order and spacing the hub's own encoder would not write, and a field it does
      // not know: an encoding again would change the text.
      String sent =
          "{ \"seq\": 1, \"kind\": \"text\", \"payload\": {\"b\": 2, \"a\": 1},"
              + " \"task_id\": \"T1\", \"type\": \"task.progress\", \"schema_version\": 1,"
              + " \"x_later\": \"kept\" }";
      p.send(sent);
      long held = 0;
      while (held < 1) {
        if (next(p) instanceof Ack a) {
          held = a.acks().getOrDefault("T1", 0L);
        }
      }
      List<HubJournal.Entry> applied =
          journal.recorded().stream()
              .filter(e -> e.direction() == HubJournal.Direction.APPLIED)
              .toList();
      assertEquals(1, applied.size());
      assertEquals(sent, applied.get(0).text(), "the runner's text, not encoded again");
      assertEquals(CODEC.decode(sent, true), applied.get(0).frame());
    } finally {
      hub.close().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void theDecodedFramesStayInTheJvmAndTheirTextsCrossNodesInOrder() throws Exception {
    String text =
        "{\"type\":\"task.progress\",\"schema_version\":1,\"task_id\":\"T2\",\"seq\":3,"
            + "\"kind\":\"text\",\"payload\":{\"i\":3}}";
    Frame decoded = CODEC.decode(text, true);
    HubCore.InFrame frame = new HubCore.InFrame(text, decoded, null, null);
    HubCore.InFrame refused = new HubCore.InFrame(null, null, "E-PRO-002", "not json");
    HubCore.Inbound in =
        new HubCore.Inbound("c-1", List.of(frame, refused), kit.createTestProbe().ref().narrow());
    assertEquals(decoded, RunnerGateway.decode(frame), "a local brain takes the gateway's frame");

    Serialization ser = SerializationExtension.get(kit.system().classicSystem());
    byte[] bytes = ser.serialize(in).get();
    HubCore.Inbound remote =
        (HubCore.Inbound)
            ser.deserialize(
                    bytes,
                    ser.findSerializerFor(in).identifier(),
                    Serializers.manifestFor(ser.findSerializerFor(in), in))
                .get();
    assertEquals(2, remote.frames().size());
    HubCore.InFrame first = remote.frames().get(0);
    assertNull(first.decoded(), "the decoded frame does not travel");
    assertEquals(text, first.text());
    TaskProgress there = assertInstanceOf(TaskProgress.class, RunnerGateway.decode(first));
    assertEquals(decoded, there, "the remote brain decodes the text to the same frame");
    FrameRejected no =
        assertInstanceOf(FrameRejected.class, RunnerGateway.decode(remote.frames().get(1)));
    assertEquals(Code.E_PRO_002, no.diagnostic().code());
  }

  private static Frame next(WsFixture.RawPeer p) throws InterruptedException {
    String text = p.received.poll(Duration.ofSeconds(20).toMillis(), TimeUnit.MILLISECONDS);
    assertNotNull(text, "nothing received within 20 s");
    return CODEC.decode(text, false);
  }
}
