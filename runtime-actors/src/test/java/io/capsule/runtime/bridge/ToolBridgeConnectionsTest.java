package io.capsule.runtime.bridge;

import static io.capsule.runtime.bridge.BridgeTestSupport.rpc;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The open-connection limit: one connection past it waits until another closes. */
class ToolBridgeConnectionsTest {
  private static final ActorTestKit KIT = ActorTestKit.create();

  @TempDir Path tmp;

  @AfterAll
  static void shutdown() {
    KIT.shutdownTestKit();
  }

  @Test
  void servesAConnectionPastTheLimitOnlyAfterAnotherCloses() throws Exception {
    ToolBridge bridge =
        ToolBridge.start(
                KIT.system(),
                BridgeConfig.defaults().withMaxConnections(3),
                new ToolWorkspace(tmp.toRealPath(), Map.of(), false),
                List.of(),
                ToolBridge.Listener.NONE)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    List<Socket> held = new ArrayList<>();
    try {
      URI uri = URI.create(bridge.url());
      for (int i = 0; i < 3; i++) {
        Socket socket = new Socket(uri.getHost(), uri.getPort());
        held.add(socket);
        assertEquals("HTTP/1.1 200", ping(socket, bridge.bearerToken()));
      }
      BridgeTestSupport.Client client = new BridgeTestSupport.Client(bridge);
      CompletableFuture<HttpResponse<String>> fourth = client.postAsync(rpc(9, "ping", "{}"));
      // a bounded wait for silence: the fourth connection is accepted by the kernel, not served
      assertThrows(TimeoutException.class, () -> fourth.get(1, TimeUnit.SECONDS));
      assertFalse(fourth.isDone());

      held.remove(0).close();
      HttpResponse<String> served = fourth.get(20, TimeUnit.SECONDS);
      assertEquals(200, served.statusCode());
      assertTrue(served.body().contains("\"id\":9"), served.body());
    } finally {
      for (Socket s : held) {
        s.close();
      }
      bridge.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  /** One keep-alive ping on a raw connection; returns the status line's first 12 bytes. */
  private static String ping(Socket socket, String token) throws Exception {
    socket.setSoTimeout(20_000);
    String body = rpc(1, "ping", "{}");
    OutputStream out = socket.getOutputStream();
    out.write(
        ("POST /bridge HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                + token
                + "\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length()
                + "\r\n\r\n"
                + body)
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    InputStream in = socket.getInputStream();
    return new String(in.readNBytes(12), StandardCharsets.US_ASCII);
  }
}
