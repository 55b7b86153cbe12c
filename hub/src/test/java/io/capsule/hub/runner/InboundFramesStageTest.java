package io.capsule.hub.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.impl.engine.ws.FrameData;
import org.apache.pekko.http.impl.engine.ws.FrameEvent;
import org.apache.pekko.http.impl.engine.ws.FrameHeader;
import org.apache.pekko.http.impl.engine.ws.FrameStart;
import org.apache.pekko.http.impl.engine.ws.Protocol;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.stream.ClosedShape;
import org.apache.pekko.stream.FanOutShape2;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.GraphDSL;
import org.apache.pekko.stream.javadsl.RunnableGraph;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link InboundFrames}' unmasking and assembly, fed frame events as Pekko's parser cuts them: a
 * frame's bytes may arrive in parts at any offset (the mask goes on where the last part stopped),
 * and a message may span frames, each with its own mask.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InboundFramesStageTest {
  private static final String TEXT =
      "{\"type\":\"ping\",\"schema_version\":1,\"nonce\":\"0123456789abcdefghij\"}";
  private static final int MASK = 0x9A3C51E7;

  private final ActorTestKit kit = ActorTestKit.create();
  private final Materializer mat = Materializer.matFromSystem(kit.system());

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  @ParameterizedTest(name = "one frame, its bytes cut after {0} and {1}")
  @CsvSource({
    "0, 0", // whole
    "1, 1", "2, 2", "3, 3", "4, 4", "5, 5", "7, 7", "8, 8", "9, 9", "1, 2", "3, 12", "6, 17",
    "15, 16", "16, 40", "31, 63",
  })
  void aFrameWhosePartsArriveAtAnyOffsetIsUnmaskedAsOne(int cut1, int cut2) throws Exception {
    byte[] plain = TEXT.getBytes(StandardCharsets.UTF_8);
    byte[] masked = masked(plain, MASK);
    List<FrameEvent> events = new ArrayList<>();
    events.add(new FrameStart(header(1, plain.length, true), slice(masked, 0, cut1)));
    if (cut1 < plain.length) {
      events.add(new FrameData(slice(masked, cut1, cut2), false));
      events.add(new FrameData(slice(masked, cut2, plain.length), true));
    }
    assertEquals(List.of(TEXT), texts(events));
  }

  @ParameterizedTest(name = "two frames, the first {0} bytes long")
  @CsvSource({"1", "3", "4", "9", "33"})
  void aMessageOverTwoFramesWithTheirOwnMasksIsReadAsOne(int first) throws Exception {
    byte[] plain = TEXT.getBytes(StandardCharsets.UTF_8);
    int second = 0x01020304;
    byte[] a = masked(java.util.Arrays.copyOfRange(plain, 0, first), MASK);
    byte[] b = masked(java.util.Arrays.copyOfRange(plain, first, plain.length), second);
    List<FrameEvent> events =
        List.of(
            new FrameStart(header(1, a.length, false, MASK), ByteString.fromArray(a)),
            new FrameStart(header(0, b.length, true, second), ByteString.fromArray(b)));
    assertEquals(List.of(TEXT), texts(events));
  }

  private List<String> texts(List<FrameEvent> events) throws Exception {
    CompletableFuture<ServerSocket.Control> control = new CompletableFuture<>();
    RunnableGraph<java.util.concurrent.CompletionStage<List<Message>>> graph =
        RunnableGraph.fromGraph(
            GraphDSL.create(
                Sink.<Message>seq(),
                (b, out) -> {
                  FanOutShape2<FrameEvent, FrameEvent, Message> split =
                      b.add(new InboundFrames(1 << 20, control));
                  b.from(b.add(Source.from(events))).toInlet(split.in());
                  b.from(split.out0()).to(b.add(Sink.<FrameEvent>ignore()));
                  b.from(split.out1()).to(out);
                  return ClosedShape.getInstance();
                }));
    List<Message> messages = graph.run(mat).toCompletableFuture().get(20, TimeUnit.SECONDS);
    assertEquals(null, control.getNow(null), "no close asked");
    return messages.stream().map(m -> m.asTextMessage().getStrictText()).toList();
  }

  private static FrameHeader header(int opcode, long length, boolean fin) {
    return header(opcode, length, fin, MASK);
  }

  private static FrameHeader header(int opcode, long length, boolean fin, int mask) {
    return FrameHeader.apply(
        Protocol.Opcode$.MODULE$.forCode((byte) opcode),
        scala.Option.apply((Object) mask),
        length,
        fin,
        false,
        false,
        false);
  }

  private static ByteString slice(byte[] bytes, int from, int to) {
    return ByteString.fromArray(bytes, from, to - from);
  }

  /** RFC 6455 5.3, written out plainly: byte i with mask byte i mod 4, big-endian. */
  private static byte[] masked(byte[] plain, int mask) {
    byte[] out = plain.clone();
    for (int i = 0; i < out.length; i++) {
      out[i] ^= (byte) (mask >>> (24 - 8 * (i % 4)));
    }
    return out;
  }
}
