package io.capsule.runtime.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.runtime.bridge.ToolCallEvent.CallStatus;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A harness that hangs up mid-call: the tool's process group is killed and the call noted. */
class ToolBridgeAbandonTest {
  private static final ActorTestKit KIT = ActorTestKit.create();

  @TempDir Path tmp;

  @AfterAll
  static void shutdown() {
    KIT.shutdownTestKit();
  }

  @Test
  void killsTheToolWhenTheClientClosesTheConnectionMidCall() throws Exception {
    Path bin = tmp.resolve("bin");
    BridgeTestSupport.installTools(bin);
    Path workdir = Files.createDirectories(tmp.resolve("work")).toRealPath();
    Map<String, String> env = BridgeTestSupport.grantedEnv(bin);
    BridgeTestSupport.Recorder recorder = new BridgeTestSupport.Recorder();
    ToolBridge bridge =
        ToolBridge.start(
                KIT.system(),
                BridgeConfig.defaults(),
                new ToolWorkspace(workdir, env, false),
                ShellTool.resolveAll(List.of("slow"), env),
                recorder)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    try {
      Path fifo = BridgeTestSupport.fifo(tmp, "abandon.fifo");
      String body = BridgeTestSupport.toolCall(1, "slow", "{\"args\":[\"" + fifo + "\"]}");
      URI uri = URI.create(bridge.url());
      long pgid;
      try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
        OutputStream out = socket.getOutputStream();
        out.write(
            ("POST /bridge HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                    + bridge.bearerToken()
                    + "\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.getBytes(StandardCharsets.UTF_8).length
                    + "\r\n\r\n"
                    + body)
                .getBytes(StandardCharsets.UTF_8));
        out.flush();
        pgid = BridgeTestSupport.readPids(fifo)[0];
        assertEquals("slow", recorder.nextStarted().tool());
        assertEquals(2, BridgeTestSupport.liveMembers(pgid).size());
      }
      ToolCallEvent.Finished finished = recorder.nextFinished();
      assertEquals(CallStatus.ABANDONED, finished.status());
      assertEquals("E-TOOL-008", finished.diagnostic().orElseThrow().code().id());
      assertEquals(List.of(), BridgeTestSupport.awaitGroupGone(pgid));
      assertEquals(0, bridge.callsInFlight());
    } finally {
      bridge.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    recorder.assertEmpty();
  }

  @Test
  void doesNotTakeARequestWithConnectionCloseForAHangUp() throws Exception {
    Path bin = tmp.resolve("bin");
    BridgeTestSupport.installTools(bin);
    Path workdir = Files.createDirectories(tmp.resolve("work")).toRealPath();
    Map<String, String> env = BridgeTestSupport.grantedEnv(bin);
    BridgeTestSupport.Recorder recorder = new BridgeTestSupport.Recorder();
    ToolBridge bridge =
        ToolBridge.start(
                KIT.system(),
                BridgeConfig.defaults().withCallTimeout(java.time.Duration.ofSeconds(1)),
                new ToolWorkspace(workdir, env, false),
                ShellTool.resolveAll(List.of("slow"), env),
                recorder)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    try {
      String body = BridgeTestSupport.toolCall(1, "slow", "{\"args\":[]}");
      URI uri = URI.create(bridge.url());
      try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
        socket.setSoTimeout(20_000);
        OutputStream out = socket.getOutputStream();
        out.write(
            ("POST /bridge HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + "Authorization: Bearer "
                    + bridge.bearerToken()
                    + "\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.getBytes(StandardCharsets.UTF_8).length
                    + "\r\n\r\n"
                    + body)
                .getBytes(StandardCharsets.UTF_8));
        out.flush();
        String response =
            new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        org.junit.jupiter.api.Assertions.assertTrue(
            response.startsWith("HTTP/1.1 200") && response.contains("E-TOOL-007"), response);
      }
      assertEquals("slow", recorder.nextStarted().tool());
      assertEquals(CallStatus.TIMED_OUT, recorder.nextFinished().status());
    } finally {
      bridge.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    recorder.assertEmpty();
  }
}
