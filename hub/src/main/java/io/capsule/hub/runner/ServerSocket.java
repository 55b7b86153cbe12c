package io.capsule.hub.runner;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.NotUsed;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.impl.engine.ws.FrameEvent;
import org.apache.pekko.http.impl.engine.ws.FrameEvent$;
import org.apache.pekko.http.impl.engine.ws.UpgradeToWebSocketLowLevel;
import org.apache.pekko.http.impl.engine.ws.WebSocket$;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.WebSocketUpgrade;
import org.apache.pekko.http.scaladsl.settings.WebSocketSettings;
import org.apache.pekko.stream.FanOutShape2;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.GraphDSL;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import scala.Option;
import scala.concurrent.duration.FiniteDuration;

/**
 * The hub's side of one WebSocket, at frame level, because the protocol needs close codes that
 * Pekko HTTP's message-level API cannot send (4000, 4401, 1008, 1009: its handler flow can only
 * close with 1000 or 1011). Data messages are read by {@link InboundFrames} (which also holds the
 * frame cap: a data message whose frames add up to more than the cap is not passed on, and the
 * socket closes with 1009); control frames, the close handshake and the hub's outbound messages
 * stay with Pekko HTTP's own server WebSocket stack. Beside them, a control: completing it closes
 * the socket with a close frame of any code, ends the TCP connection without a close frame, or
 * aborts it.
 *
 * <p>Uses Pekko HTTP's internal frame API ({@code impl.engine.ws}), pinned by the build to the
 * version it was written against (1.3.0); {@code HubServerTest} and {@code InboundFramesTest}
 * exercise every path of it.
 */
final class ServerSocket {

  /** What the hub can do to a connection from outside its message flow. */
  sealed interface Control {}

  /** Send a close frame with this code, then end the connection. */
  record Close(int code, String reason) implements Control {}

  /** End the TCP connection without a close frame. */
  record Drop() implements Control {}

  /** Fail the connection (reset; no close frame). */
  record Abort() implements Control {}

  private ServerSocket() {}

  /**
   * The upgrade response that reads the runner's messages into {@code inbound} and writes {@code
   * outbound} to it.
   *
   * @param inbound the runner's data messages, whole ({@link InboundFrames}); when it fails the
   *     socket closes with 1011
   * @param outbound the hub's messages; its end ends the socket (a close frame with 1000), and it
   *     is cancelled when the peer closes
   * @param control completed (once, by anyone, any thread) to end the connection; the frame cap
   *     completes it with {@code Close(1009)}
   */
  static HttpResponse accept(
      WebSocketUpgrade upgrade,
      Sink<Message, NotUsed> inbound,
      Source<Message, NotUsed> outbound,
      CompletableFuture<Control> control,
      int frameCap,
      WebSocketSettings settings,
      LoggingAdapter log) {
    var stack =
        WebSocket$.MODULE$
            .stack(true, settings, FiniteDuration.apply(3, TimeUnit.SECONDS), log)
            .asJava();
    // The stack sees control frames only (InboundFrames takes the data frames): its message side
    // only ends when the peer closes, which ends the hub's outbound as a coupled handler did. Its
    // user-facing inlet is typed Object from Java (Scala variance); its elements are scaladsl
    // messages, which are javadsl messages too.
    Flow<Object, org.apache.pekko.http.scaladsl.model.ws.Message, NotUsed> stackHandler =
        Flow.fromSinkAndSourceCoupled(Sink.<Object>ignore(), outbound.map(Message::asScala));
    // Typed Object out, as the stack's outlet is from Java; its elements are FrameEvents.
    Flow<FrameEvent, Object, NotUsed> socket =
        Flow.fromGraph(
            GraphDSL.create(
                b -> {
                  FanOutShape2<FrameEvent, FrameEvent, Message> split =
                      b.add(new InboundFrames(frameCap, control));
                  FlowShape<FrameEvent, Object> pekko =
                      b.add(BidiFlow.fromGraph(stack).join(stackHandler));
                  b.from(split.out1()).to(b.add(inbound));
                  b.from(split.out0()).toInlet(pekko.in());
                  return FlowShape.of(split.in(), pekko.out());
                }));
    Flow<FrameEvent, FrameEvent, NotUsed> frames =
        Flow.<FrameEvent>create()
            .via(socket)
            .merge(Source.completionStage(control).map(c -> (Object) c), true)
            .takeWhile(e -> !(e instanceof Control), true)
            .mapConcat(ServerSocket::render);
    return (HttpResponse)
        ((UpgradeToWebSocketLowLevel) upgrade).handleFrames(erase(frames), Option.empty());
  }

  private static List<FrameEvent> render(Object e) {
    if (e instanceof FrameEvent f) {
      return List.of(f);
    }
    if (e instanceof Close c) {
      return List.of(FrameEvent$.MODULE$.closeFrame(c.code(), c.reason(), Option.empty()));
    }
    if (e instanceof Abort) {
      throw new IllegalStateException("connection aborted by the hub");
    }
    return List.of(); // Drop: complete without a close frame
  }

  @SuppressWarnings("unchecked")
  private static Graph<FlowShape<FrameEvent, FrameEvent>, Object> erase(
      Flow<FrameEvent, FrameEvent, NotUsed> flow) {
    return (Graph<FlowShape<FrameEvent, FrameEvent>, Object>) (Graph<?, ?>) flow;
  }
}
