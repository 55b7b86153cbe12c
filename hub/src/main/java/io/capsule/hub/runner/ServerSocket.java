package io.capsule.hub.runner;

import io.capsule.protocol.ws.CloseCodes;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.NotUsed;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.impl.engine.ws.FrameData;
import org.apache.pekko.http.impl.engine.ws.FrameEvent;
import org.apache.pekko.http.impl.engine.ws.FrameEvent$;
import org.apache.pekko.http.impl.engine.ws.FrameStart;
import org.apache.pekko.http.impl.engine.ws.UpgradeToWebSocketLowLevel;
import org.apache.pekko.http.impl.engine.ws.WebSocket$;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.http.javadsl.model.ws.WebSocketUpgrade;
import org.apache.pekko.http.scaladsl.settings.WebSocketSettings;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Source;
import scala.Option;
import scala.concurrent.duration.FiniteDuration;

/**
 * The hub's side of one WebSocket, at frame level, because the protocol needs close codes that
 * Pekko HTTP's message-level API cannot send (4000, 4401, 1008, 1009: its handler flow can only
 * close with 1000 or 1011). The message handling itself stays Pekko's: this wraps Pekko HTTP's own
 * server WebSocket stack around the message flow and adds two things below it:
 *
 * <ul>
 *   <li>a frame cap: a data message whose frames add up to more than the cap is not passed on, and
 *       the socket closes with 1009;
 *   <li>a control: completing it closes the socket with a close frame of any code, ends the TCP
 *       connection without a close frame, or aborts it.
 * </ul>
 *
 * <p>Uses Pekko HTTP's internal frame API ({@code impl.engine.ws}), pinned by the build to the
 * version it was written against (1.3.0); {@code HubServerTest} exercises every path of it.
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
   * The upgrade response that runs {@code handler} over the socket.
   *
   * @param control completed (once, by anyone, any thread) to end the connection; the frame cap
   *     completes it with {@code Close(1009)}
   */
  static HttpResponse accept(
      WebSocketUpgrade upgrade,
      Flow<Message, Message, NotUsed> handler,
      CompletableFuture<Control> control,
      int frameCap,
      WebSocketSettings settings,
      LoggingAdapter log) {
    var stack =
        WebSocket$.MODULE$
            .stack(true, settings, FiniteDuration.apply(3, TimeUnit.SECONDS), log)
            .asJava();
    // The stack's user-facing inlet is typed Object from Java (Scala variance); its elements are
    // scaladsl messages, which are javadsl messages too.
    Flow<Object, org.apache.pekko.http.scaladsl.model.ws.Message, NotUsed> scalaHandler =
        Flow.<Object>create().map(m -> (Message) m).via(handler).map(Message::asScala);
    Flow<FrameEvent, FrameEvent, NotUsed> frames =
        Flow.<FrameEvent>create()
            .via(capped(frameCap, control))
            .via(BidiFlow.fromGraph(stack).join(scalaHandler))
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

  /**
   * Passes frames through while the current data message stays within the cap; past it, nothing
   * more is passed on and the control asks for a 1009 close.
   */
  private static Flow<FrameEvent, FrameEvent, NotUsed> capped(
      int cap, CompletableFuture<Control> control) {
    return Flow.<FrameEvent>create()
        .statefulMap(
            () -> new long[] {0, 0}, // [bytes of the current data message, 1 once over the cap]
            (state, e) -> {
              if (state[1] == 1) {
                return org.apache.pekko.japi.Pair.create(state, List.<FrameEvent>of());
              }
              if (e instanceof FrameStart start && !start.header().opcode().isControl()) {
                state[0] += start.header().length();
                if (state[0] > cap) {
                  state[1] = 1;
                  control.complete(
                      new Close(
                          CloseCodes.TOO_BIG, "E-PRO-005 frame larger than " + cap + " bytes"));
                  return org.apache.pekko.japi.Pair.create(state, List.<FrameEvent>of());
                }
                if (start.header().fin()) {
                  state[0] = 0;
                }
              } else if (e instanceof FrameData) {
                // continuation of a frame whose length the FrameStart already counted
              }
              return org.apache.pekko.japi.Pair.create(state, List.of(e));
            },
            state -> java.util.Optional.empty())
        .mapConcat(l -> l);
  }

  @SuppressWarnings("unchecked")
  private static Graph<FlowShape<FrameEvent, FrameEvent>, Object> erase(
      Flow<FrameEvent, FrameEvent, NotUsed> flow) {
    return (Graph<FlowShape<FrameEvent, FrameEvent>, Object>) (Graph<?, ?>) flow;
  }
}
