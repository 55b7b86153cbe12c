package io.capsule.hub.http;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A java.net.http WebSocket client on {@code /ws}. */
final class WebSocketEcho {
  private final WebSocket socket;
  private final BlockingQueue<String> received;

  private WebSocketEcho(WebSocket socket, BlockingQueue<String> received) {
    this.socket = socket;
    this.received = received;
  }

  static WebSocketEcho open(GuardedBinding b) throws Exception {
    BlockingQueue<String> received = new LinkedBlockingQueue<>();
    WebSocket ws =
        HttpClient.newHttpClient()
            .newWebSocketBuilder()
            .connectTimeout(Duration.ofSeconds(5))
            .buildAsync(
                URI.create("ws://127.0.0.1:" + b.localAddress().getPort() + "/ws"),
                new WebSocket.Listener() {
                  private final StringBuilder text = new StringBuilder();

                  @Override
                  public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
                    text.append(data);
                    if (last) {
                      received.add(text.toString());
                      text.setLength(0);
                    }
                    w.request(1);
                    return null;
                  }
                })
            .get(10, TimeUnit.SECONDS);
    return new WebSocketEcho(ws, received);
  }

  String roundTrip(String text) throws Exception {
    long t0 = System.nanoTime();
    socket.sendText(text, true).get(3, TimeUnit.SECONDS);
    String back = received.poll(3, TimeUnit.SECONDS);
    long millis = Duration.ofNanos(System.nanoTime() - t0).toMillis();
    assertTrue(back != null, "no echo within 3 s");
    assertTrue(millis < 3_000, "the echo took " + millis + " ms");
    return back;
  }

  void close() throws Exception {
    socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(5, TimeUnit.SECONDS);
  }
}
