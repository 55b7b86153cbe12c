package io.capsule.bench.hub;

import io.capsule.protocol.codec.FrameCodec;
import io.capsule.protocol.frame.Ack;
import io.capsule.protocol.frame.Capabilities;
import io.capsule.protocol.frame.Frame;
import io.capsule.protocol.frame.Hello;
import io.capsule.protocol.frame.Ping;
import io.capsule.protocol.frame.Pong;
import io.capsule.protocol.frame.TaskAssign;
import java.net.URI;
import java.net.http.WebSocket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * A runner that speaks the protocol by hand over the JDK's WebSocket client, so the bench sees each
 * {@code ack} the moment it arrives (the real client consumes acks inside itself). It says hello
 * with {@code ack}, the bench capsule and one slot, answers pings, and sends the frames it is
 * given, one after another (the JDK client allows one send in flight).
 *
 * <p>Threading: the listener's callbacks run on the HTTP client's threads, one at a time; {@link
 * #onAck} must only record.
 */
final class RawRunner implements WebSocket.Listener {
  private static final FrameCodec CODEC = FrameCodec.shared();

  private final StringBuilder partial = new StringBuilder();
  private final CompletableFuture<Void> helloTaken = new CompletableFuture<>();
  private final CompletableFuture<TaskAssign> assigned = new CompletableFuture<>();

  /** Completes when the socket closes or fails: a bench that still waits then fails at once. */
  final CompletableFuture<String> closed = new CompletableFuture<>();

  private final String taskId;
  private final LongConsumer onAck;
  private WebSocket ws;
  private CompletableFuture<WebSocket> sending;

  private RawRunner(String taskId, LongConsumer onAck) {
    this.taskId = taskId;
    this.onAck = onAck;
  }

  /**
   * Connects as {@code runnerId} and waits until the hub acked the hello. {@code onAck} gets the
   * highest seq of {@code taskId} the hub holds, from every ack that names it.
   */
  static RawRunner connect(BenchHub hub, String runnerId, String taskId, LongConsumer onAck)
      throws Exception {
    RawRunner r = new RawRunner(taskId, onAck);
    r.ws =
        hub.http
            .newWebSocketBuilder()
            .header("Authorization", "Bearer " + hub.runnerToken(runnerId))
            .connectTimeout(BenchHub.SLOW)
            .buildAsync(URI.create(hub.hub.runnerUrl()), r)
            .get(BenchHub.SLOW.toSeconds(), TimeUnit.SECONDS);
    r.sending = CompletableFuture.completedFuture(r.ws);
    Hello hello =
        new Hello(
            BenchHub.PROJECT,
            "bench",
            List.of(Capabilities.ACK, Capabilities.CAPSULE_PREFIX + BenchHub.CAPSULE, "slots:1"),
            Map.of());
    r.send(CODEC.encodeToString(hello));
    r.helloTaken.get(BenchHub.SLOW.toSeconds(), TimeUnit.SECONDS);
    return r;
  }

  /** Sends after every earlier send completed; completes when this one did. */
  synchronized CompletableFuture<WebSocket> send(String text) {
    sending = sending.thenCompose(w -> w.sendText(text, true));
    return sending;
  }

  /** The task the hub placed on this runner (bounded wait). */
  TaskAssign awaitAssign() throws Exception {
    return assigned.get(BenchHub.SLOW.toSeconds(), TimeUnit.SECONDS);
  }

  /** Closes after the queued sends (1000) and waits for the hub's close. */
  void close() throws Exception {
    CompletableFuture<WebSocket> last;
    synchronized (this) {
      sending = sending.thenCompose(w -> w.sendClose(WebSocket.NORMAL_CLOSURE, "bench done"));
      last = sending;
    }
    last.get(BenchHub.SLOW.toSeconds(), TimeUnit.SECONDS);
    closed.get(BenchHub.SLOW.toSeconds(), TimeUnit.SECONDS);
  }

  @Override
  public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
    partial.append(data);
    if (last) {
      String text = partial.toString();
      partial.setLength(0);
      on(CODEC.decode(text, false));
    }
    socket.request(1);
    return null;
  }

  private void on(Frame f) {
    if (f instanceof Ack a) {
      helloTaken.complete(null); // the first ack answers the hello
      Long held = a.acks().get(taskId);
      if (held != null) {
        onAck.accept(held);
      }
    } else if (f instanceof Ping p) {
      send(CODEC.encodeToString(new Pong(p.nonce())));
    } else if (f instanceof TaskAssign a) {
      assigned.complete(a);
    }
  }

  @Override
  public CompletionStage<?> onClose(WebSocket socket, int statusCode, String reason) {
    closed.complete(statusCode + " " + reason);
    return null;
  }

  @Override
  public void onError(WebSocket socket, Throwable error) {
    closed.complete("failed: " + error);
    helloTaken.completeExceptionally(error);
    assigned.completeExceptionally(error);
  }
}
