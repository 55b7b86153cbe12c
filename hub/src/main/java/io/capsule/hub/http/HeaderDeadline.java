package io.capsule.hub.http;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.BidiShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.AsyncCallback;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.stream.stage.TimerGraphStageLogic;
import org.apache.pekko.util.ByteString;

/**
 * One connection's deadlines, in two layers that share this object (made per connection, never
 * shared between connections):
 *
 * <ul>
 *   <li>{@link #bytes()} sits between the socket and the HTTP parser and owns the timers;
 *   <li>{@link #exchanges()} sits between the HTTP layer and the handler and tells the first layer
 *       when a request's head has been parsed and when a response has been handed back.
 * </ul>
 *
 * <p>The rules: a connection must deliver a complete request head within {@code headerTimeout} of
 * opening, and again within {@code headerTimeout} of the first byte of each later request on a
 * kept-alive connection; while a request is being answered there is no head deadline (the handler's
 * own timeouts apply); after a {@code 101 Switching Protocols} response (a WebSocket) there is none
 * ever again. Independently, a connection with no byte in either direction for {@code idleTimeout}
 * is closed (what Pekko HTTP's {@code idle-timeout} does in a normal binding, which this one
 * replaces). A connection that misses its first head deadline gets a {@code 408} naming {@code
 * E-HTTP-003}; one that misses a later one is just closed (a response may be in flight, so nothing
 * can be written safely).
 *
 * <p>Threading: the stage runs on the stream's actor; {@link #exchanges()} may run elsewhere and
 * talks to it only through an {@link AsyncCallback}.
 */
final class HeaderDeadline {

  /** What the HTTP side reports to the byte side. */
  private enum Signal {
    HEAD_PARSED,
    RESPONDED,
    SWITCHED
  }

  private enum Phase {
    /** A request head has begun (or the connection just opened) and must complete in time. */
    AWAITING_HEAD,
    /** At least one request is being answered. */
    EXCHANGING,
    /** Kept alive between requests; only the idle timeout applies. */
    IDLE,
    /** A WebSocket (or any switched protocol): only the idle timeout applies. */
    SWITCHED
  }

  private static final String HEAD = "head";
  private static final String IDLE_TIMER = "idle";
  private static final String FORCE = "force";

  /**
   * How long the 408 may take to leave before the connection is failed instead: a peer that does
   * not read cannot keep a timed-out connection open by refusing the farewell.
   */
  private static final Duration FAREWELL = Duration.ofSeconds(1);

  private final Duration headerTimeout;
  private final Duration idleTimeout;
  private final ByteString farewell;
  private final LongAdder headTimeouts;
  private final LongAdder idleTimeouts;
  private volatile AsyncCallback<Signal> signals;

  HeaderDeadline(
      Duration headerTimeout,
      Duration idleTimeout,
      ByteString farewell,
      LongAdder headTimeouts,
      LongAdder idleTimeouts) {
    this.headerTimeout = Objects.requireNonNull(headerTimeout, "headerTimeout");
    this.idleTimeout = Objects.requireNonNull(idleTimeout, "idleTimeout");
    this.farewell = Objects.requireNonNull(farewell, "farewell");
    this.headTimeouts = headTimeouts;
    this.idleTimeouts = idleTimeouts;
  }

  /** The application-side layer: requests pass up, responses pass down, both reported. */
  BidiFlow<HttpResponse, HttpResponse, HttpRequest, HttpRequest, NotUsed> exchanges() {
    return BidiFlow.fromFlows(
        Flow.of(HttpResponse.class)
            .map(
                r -> {
                  signal(r.status().intValue() == 101 ? Signal.SWITCHED : Signal.RESPONDED);
                  return r;
                }),
        Flow.of(HttpRequest.class)
            .map(
                r -> {
                  signal(Signal.HEAD_PARSED);
                  return r;
                }));
  }

  /** The socket-side layer: outbound bytes (top to bottom) and inbound bytes, with the timers. */
  BidiFlow<ByteString, ByteString, ByteString, ByteString, NotUsed> bytes() {
    return BidiFlow.fromGraph(new Stage());
  }

  /** Why the HTTP layer's input ended: the head did not complete in time. */
  static final class HeadTimeout extends RuntimeException {
    private static final long serialVersionUID = 1L;

    HeadTimeout(Duration limit) {
      super(
          "E-HTTP-003: no complete request head within " + limit.toMillis() + " ms",
          null,
          false,
          false);
    }
  }

  /** Why the HTTP layer's input ended: the peer closed before completing a request head. */
  static final class PeerLeft extends RuntimeException {
    private static final long serialVersionUID = 1L;

    PeerLeft() {
      super("the peer closed the connection before completing a request head", null, false, false);
    }
  }

  private void signal(Signal s) {
    // The byte stage starts before any request can be parsed (the bytes pass through it first),
    // so the callback is always set by the time the HTTP side has something to report.
    signals.invoke(s);
  }

  private final class Stage
      extends GraphStage<BidiShape<ByteString, ByteString, ByteString, ByteString>> {
    final Inlet<ByteString> fromHttp = Inlet.create("HeaderDeadline.fromHttp");
    final Outlet<ByteString> toNet = Outlet.create("HeaderDeadline.toNet");
    final Inlet<ByteString> fromNet = Inlet.create("HeaderDeadline.fromNet");
    final Outlet<ByteString> toHttp = Outlet.create("HeaderDeadline.toHttp");
    final BidiShape<ByteString, ByteString, ByteString, ByteString> shape =
        BidiShape.of(fromHttp, toNet, fromNet, toHttp);

    @Override
    public BidiShape<ByteString, ByteString, ByteString, ByteString> shape() {
      return shape;
    }

    @Override
    public GraphStageLogic createLogic(Attributes attributes) {
      return new TimerGraphStageLogic(shape) {
        private Phase phase = Phase.AWAITING_HEAD;
        private int answering;
        private boolean respondedOnce;
        private boolean closing;
        private long lastActivity;

        {
          setHandler(
              fromNet,
              new AbstractInHandler() {
                @Override
                public void onPush() {
                  touched();
                  if (phase == Phase.IDLE) {
                    phase = Phase.AWAITING_HEAD;
                    scheduleOnce(HEAD, headerTimeout);
                  }
                  push(toHttp, grab(fromNet));
                }

                @Override
                public void onUpstreamFinish() {
                  if (phase == Phase.AWAITING_HEAD) {
                    // The peer left mid-head: as with a timeout, end the parser quietly instead
                    // of letting it log a 400 per departing connection (a flood of those is
                    // itself an attack on the log).
                    fail(toHttp, new PeerLeft());
                  } else {
                    complete(toHttp);
                  }
                }

                @Override
                public void onUpstreamFailure(Throwable ex) {
                  fail(toHttp, ex);
                }
              });
          setHandler(
              toHttp,
              new AbstractOutHandler() {
                @Override
                public void onPull() {
                  if (!closing) {
                    pull(fromNet);
                  }
                }

                @Override
                public void onDownstreamFinish(Throwable cause) {
                  cancel(fromNet, cause);
                }
              });
          setHandler(
              fromHttp,
              new AbstractInHandler() {
                @Override
                public void onPush() {
                  ByteString out = grab(fromHttp);
                  if (!closing) { // once closing, only the farewell may go out
                    touched();
                    push(toNet, out);
                  }
                }

                @Override
                public void onUpstreamFinish() {
                  if (!closing) { // once closing, the farewell's end completes the stage
                    complete(toNet);
                  }
                }

                @Override
                public void onUpstreamFailure(Throwable ex) {
                  if (!closing) {
                    fail(toNet, ex);
                  }
                }
              });
          setHandler(
              toNet,
              new AbstractOutHandler() {
                @Override
                public void onPull() {
                  if (!closing) {
                    pull(fromHttp);
                  }
                }

                @Override
                public void onDownstreamFinish(Throwable cause) {
                  cancel(fromHttp, cause);
                }
              });
        }

        @Override
        public void preStart() {
          signals = createAsyncCallback(this::onSignal);
          scheduleOnce(HEAD, headerTimeout);
          touched();
          scheduleOnce(IDLE_TIMER, idleTimeout);
        }

        // One clock read per chunk, not a timer per chunk: the idle timer re-arms itself for the
        // rest of the period when it finds activity since it was set.
        private void touched() {
          lastActivity = System.nanoTime();
        }

        private void onSignal(Signal s) {
          switch (s) {
            case HEAD_PARSED -> {
              answering++;
              cancelTimer(HEAD);
              if (phase != Phase.SWITCHED) {
                phase = Phase.EXCHANGING;
              }
            }
            case RESPONDED -> {
              respondedOnce = true;
              answering = Math.max(0, answering - 1);
              if (phase == Phase.EXCHANGING && answering == 0) {
                phase = Phase.IDLE;
              }
            }
            case SWITCHED -> {
              respondedOnce = true;
              cancelTimer(HEAD);
              phase = Phase.SWITCHED;
            }
          }
        }

        @Override
        public void onTimer(Object key) {
          if (HEAD.equals(key) && phase == Phase.AWAITING_HEAD && !closing) {
            headTimeouts.increment();
            closing = true;
            cancelTimer(IDLE_TIMER);
            cancel(fromNet);
            // Failed, not completed: a parser that sees the input end mid-head answers (and logs)
            // a 400 for every timed-out connection; a failure ends it quietly.
            fail(toHttp, new HeadTimeout(headerTimeout));
            if (respondedOnce) {
              completeStage();
            } else {
              // Nothing was ever written on this connection, so the 408 cannot interleave with a
              // response; it is the only word a slow but honest client gets about why.
              scheduleOnce(FORCE, FAREWELL);
              emit(toNet, farewell, this::completeStage);
            }
          } else if (IDLE_TIMER.equals(key) && !closing) {
            long quiet = System.nanoTime() - lastActivity;
            if (quiet >= idleTimeout.toNanos()) {
              idleTimeouts.increment();
              completeStage();
            } else {
              scheduleOnce(IDLE_TIMER, idleTimeout.minusNanos(quiet));
            }
          } else if (FORCE.equals(key)) {
            failStage(new IllegalStateException("the peer did not take the 408 in time"));
          }
        }
      };
    }
  }
}
