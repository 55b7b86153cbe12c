package io.capsule.runtime.bridge;

import static io.capsule.runtime.bridge.BridgeTestSupport.JSON;
import static io.capsule.runtime.bridge.BridgeTestSupport.rpc;
import static io.capsule.runtime.bridge.BridgeTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.driver.api.Bridge;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bridge as an MCP server over real HTTP on loopback: the exchange the Claude Code CLI does.
 */
class ToolBridgeMcpTest {
  private static final ActorTestKit KIT = ActorTestKit.create();

  @TempDir Path tmp;
  private Path workdir;
  private final BridgeTestSupport.Recorder recorder = new BridgeTestSupport.Recorder();
  private ToolBridge bridge;
  private BridgeTestSupport.Client client;

  @BeforeEach
  void startBridge() throws Exception {
    Path bin = tmp.resolve("bin");
    BridgeTestSupport.installTools(bin);
    workdir = Files.createDirectories(tmp.resolve("work")).toRealPath();
    var env = BridgeTestSupport.grantedEnv(bin);
    bridge =
        ToolBridge.start(
                KIT.system(),
                BridgeConfig.defaults()
                    .withRequestReadTimeout(Duration.ofSeconds(1))
                    .withBodyCapBytes(4096),
                new ToolWorkspace(workdir, env, false),
                ShellTool.resolveAll(List.of("probe", "fail"), env),
                recorder)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    client = new BridgeTestSupport.Client(bridge);
  }

  @AfterEach
  void stopBridge() throws Exception {
    bridge.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    recorder.assertEmpty();
  }

  @AfterAll
  static void shutdown() {
    KIT.shutdownTestKit();
  }

  @Test
  void servesTheExchangeTheClaudeCodeCliPerforms() throws Exception {
    HttpResponse<String> discover = client.post(rpc(0, "server/discover", "{}"));
    assertEquals(200, discover.statusCode());
    assertEquals(-32601, JSON.readTree(discover.body()).at("/error/code").asInt());

    HttpResponse<String> init =
        client.post(
            rpc(
                1,
                "initialize",
                "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                    + "\"clientInfo\":{\"name\":\"claude-code\",\"version\":\"2.1.328\"}}"));
    assertEquals(200, init.statusCode());
    assertTrue(
        init.headers().firstValue("Content-Type").orElseThrow().startsWith("application/json"));
    JsonNode initBody = JSON.readTree(init.body());
    assertEquals(1, initBody.get("id").asInt());
    assertEquals("2025-06-18", initBody.at("/result/protocolVersion").asText());
    assertTrue(initBody.at("/result/capabilities/tools").isObject());
    assertEquals("murmur", initBody.at("/result/serverInfo/name").asText());
    String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
    assertFalse(session.isBlank());
    client.session = session;

    HttpResponse<String> initialized =
        client.post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    assertEquals(202, initialized.statusCode());
    assertEquals("", initialized.body());

    HttpResponse<String> get = client.send(client.request().GET().build());
    assertEquals(405, get.statusCode());
    assertEquals("POST", get.headers().firstValue("Allow").orElseThrow());

    HttpResponse<String> list = client.post(rpc("list-1", "tools/list", "{}"));
    assertEquals(200, list.statusCode());
    JsonNode tools = JSON.readTree(list.body()).at("/result/tools");
    assertEquals("list-1", JSON.readTree(list.body()).get("id").asText());
    assertEquals(2, tools.size());
    assertEquals("probe", tools.get(0).get("name").asText());
    assertEquals("fail", tools.get(1).get("name").asText());
    assertFalse(tools.get(0).get("description").asText().isBlank());
    JsonNode schema = tools.get(0).get("inputSchema");
    assertEquals("object", schema.get("type").asText());
    assertEquals("array", schema.at("/properties/args/type").asText());
    assertEquals("string", schema.at("/properties/args/items/type").asText());
    assertEquals("string", schema.at("/properties/stdin/type").asText());
    assertEquals("args", schema.at("/required/0").asText());

    JsonNode result =
        client.call(
            "probe",
            "{\"args\":[\"a b\",\"$HOME\",\"*\",\"; rm -rf /\"],\"stdin\":\"from stdin\"}");
    assertFalse(result.get("isError").asBoolean());
    String out = text(result);
    // each array item is one argv entry, nothing expanded or interpreted
    assertTrue(out.contains("arg=a b\narg=$HOME\narg=*\narg=; rm -rf /\n"), out);
    assertTrue(out.contains("cwd=" + workdir + "\n"), out);
    assertTrue(out.contains("var=granted value\n"), out);
    // the environment is exactly the grant: HOME was not granted, so it is not there
    assertTrue(out.contains("home=unset\n"), out);
    assertTrue(out.contains("from stdin"), out);

    ToolCallEvent.Started started = recorder.nextStarted();
    assertEquals("probe", started.tool());
    assertEquals("7", started.rpcId());
    ToolCallEvent.Finished finished = recorder.nextFinished();
    assertEquals(started.callId(), finished.callId());
    assertEquals(ToolCallEvent.CallStatus.OK, finished.status());
    assertEquals(java.util.Optional.of(0), finished.exitCode());
    assertEquals(started.inputBytes(), finished.inputBytes());
    assertTrue(finished.inputBytes() > 20, "input bytes " + finished.inputBytes());
    assertEquals(out.getBytes(StandardCharsets.UTF_8).length - 1, finished.outputBytes());
    assertEquals(6, recorder.activity.get(), "every authenticated request counts as activity");
  }

  @Test
  void answersAnUnknownProtocolVersionWithItsNewestAndEachInitializeWithAFreshSession()
      throws Exception {
    HttpResponse<String> first =
        client.post(rpc(1, "initialize", "{\"protocolVersion\":\"1999-01-01\"}"));
    assertEquals(
        McpProtocol.SUPPORTED_VERSIONS.get(0),
        JSON.readTree(first.body()).at("/result/protocolVersion").asText());
    HttpResponse<String> second =
        client.post(rpc(2, "initialize", "{\"protocolVersion\":\"2024-11-05\"}"));
    assertEquals("2024-11-05", JSON.readTree(second.body()).at("/result/protocolVersion").asText());
    assertNotEquals(
        first.headers().firstValue("Mcp-Session-Id").orElseThrow(),
        second.headers().firstValue("Mcp-Session-Id").orElseThrow());
  }

  @Test
  void answersPing() throws Exception {
    HttpResponse<String> ping = client.post(rpc(3, "ping", "{}"));
    assertEquals(200, ping.statusCode());
    assertTrue(JSON.readTree(ping.body()).get("result").isObject());
  }

  @Test
  void refusesAnUnknownSessionWith404AndAnUnsupportedVersionHeaderWith400() throws Exception {
    client.session = "not-issued-here";
    assertEquals(404, client.post(rpc(1, "tools/list", "{}")).statusCode());
    client.session = null;
    HttpResponse<String> badVersion =
        client.send(
            client
                .request()
                .header("MCP-Protocol-Version", "1900-01-01")
                .POST(HttpRequest.BodyPublishers.ofString(rpc(1, "tools/list", "{}")))
                .build());
    assertEquals(400, badVersion.statusCode());
  }

  @Test
  void answersBadJsonWith400AndAParseError() throws Exception {
    HttpResponse<String> r = client.post("{\"jsonrpc\":\"2.0\",");
    assertEquals(400, r.statusCode());
    JsonNode body = JSON.readTree(r.body());
    assertEquals(-32700, body.at("/error/code").asInt());
    assertTrue(body.get("id").isNull());
  }

  @Test
  void answersAJsonRpcObjectWithoutVersionOrMethodWith400InvalidRequest() throws Exception {
    assertEquals(
        -32600,
        JSON.readTree(client.post("{\"id\":1,\"method\":\"ping\"}").body())
            .at("/error/code")
            .asInt());
    HttpResponse<String> noMethod = client.post("{\"jsonrpc\":\"2.0\",\"id\":4}");
    assertEquals(400, noMethod.statusCode());
    assertEquals(4, JSON.readTree(noMethod.body()).get("id").asInt());
    assertEquals(400, client.post("[" + rpc(1, "ping", "{}") + "]").statusCode());
  }

  @Test
  void answersAToolsCallWithoutANameWithInvalidParams() throws Exception {
    HttpResponse<String> r = client.post(rpc(5, "tools/call", "{\"arguments\":{}}"));
    assertEquals(-32602, JSON.readTree(r.body()).at("/error/code").asInt());
  }

  @Test
  void refusesRequestsWithoutTheRightBearerTokenAndDoesNotCountThemAsActivity() throws Exception {
    HttpRequest.Builder noAuth =
        HttpRequest.newBuilder(URI.create(bridge.url()))
            .POST(HttpRequest.BodyPublishers.ofString(rpc(1, "tools/list", "{}")));
    HttpResponse<String> missing = client.send(noAuth.build());
    assertEquals(401, missing.statusCode());
    assertEquals("Bearer", missing.headers().firstValue("WWW-Authenticate").orElseThrow());
    String wrong = bridge.bearerToken().substring(1) + "0";
    assertEquals(
        401, client.send(noAuth.header("Authorization", "Bearer " + wrong).build()).statusCode());
    HttpRequest prefixOnly =
        HttpRequest.newBuilder(URI.create(bridge.url()))
            .header("Authorization", "Bearer " + bridge.bearerToken().substring(0, 10))
            .GET()
            .build();
    assertEquals(401, client.send(prefixOnly).statusCode());
    assertEquals(0, recorder.activity.get());

    HttpRequest lowerCaseScheme =
        HttpRequest.newBuilder(URI.create(bridge.url()))
            .header("Authorization", "bearer " + bridge.bearerToken())
            .POST(HttpRequest.BodyPublishers.ofString(rpc(1, "ping", "{}")))
            .build();
    assertEquals(200, client.send(lowerCaseScheme).statusCode(), "the scheme is case-insensitive");
    assertEquals(1, recorder.activity.get());
  }

  @Test
  void refusesABrowserOriginAndOtherPaths() throws Exception {
    HttpResponse<String> fromPage =
        client.send(
            client
                .request()
                .header("Origin", "http://evil.example")
                .POST(HttpRequest.BodyPublishers.ofString(rpc(1, "tools/list", "{}")))
                .build());
    assertEquals(403, fromPage.statusCode());
    HttpResponse<String> otherPath =
        client.send(
            HttpRequest.newBuilder(URI.create(bridge.url().replace("/bridge", "/other")))
                .header("Authorization", "Bearer " + bridge.bearerToken())
                .GET()
                .build());
    assertEquals(404, otherPath.statusCode());
  }

  @Test
  void refusesABodyOverTheCapWith413() throws Exception {
    String big = toolCallPadded(5000);
    HttpResponse<String> tooBig = client.post(big);
    assertEquals(413, tooBig.statusCode(), tooBig.body());
    // the same body without a Content-Length (chunked) is cut while it streams in
    byte[] bytes = big.getBytes(StandardCharsets.UTF_8);
    HttpResponse<String> chunked =
        client.send(
            client
                .request()
                .header("Content-Type", "application/json")
                .POST(
                    HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream(bytes)))
                .build());
    assertEquals(413, chunked.statusCode(), chunked.body());
    assertEquals(0, recorder.events.size(), "an oversized call never reaches the gate");
  }

  @Test
  void answers408WhenTheBodyDoesNotArriveWithinTheReadTimeout() throws Exception {
    URI uri = URI.create(bridge.url());
    try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
      socket.setSoTimeout((int) BridgeTestSupport.WAIT.toMillis());
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /bridge HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                  + bridge.bearerToken()
                  + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      String status = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
      assertEquals("HTTP/1.1 408", status);
    }
  }

  @Test
  void isGoneAfterStopSoConnectionsAreRefused() throws Exception {
    Bridge wire = bridge.toBridge();
    assertEquals(bridge.url(), wire.url());
    assertEquals(List.of("probe", "fail"), wire.toolNames());
    assertFalse(wire.toString().contains(bridge.bearerToken()));
    assertTrue(bridge.url().matches("http://127\\.0\\.0\\.1:\\d+/bridge"), bridge.url());
    assertEquals(200, client.post(rpc(1, "ping", "{}")).statusCode());

    bridge.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);

    URI uri = URI.create(bridge.url());
    assertThrows(ConnectException.class, () -> new Socket(uri.getHost(), uri.getPort()).close());
    BridgeTestSupport.Client fresh = new BridgeTestSupport.Client(bridge);
    assertThrows(ConnectException.class, () -> fresh.post(rpc(2, "ping", "{}")));
  }

  @Test
  void givesEveryBridgeItsOwnToken() throws Exception {
    ToolBridge other =
        ToolBridge.start(
                KIT.system(),
                BridgeConfig.defaults(),
                new ToolWorkspace(workdir, java.util.Map.of(), false),
                List.of(),
                ToolBridge.Listener.NONE)
            .toCompletableFuture()
            .get(20, TimeUnit.SECONDS);
    try {
      assertNotEquals(bridge.bearerToken(), other.bearerToken());
      assertEquals(64, other.bearerToken().length());
      assertNotEquals(bridge.url(), other.url());
    } finally {
      other.stop().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  private static String toolCallPadded(int bytes) {
    return BridgeTestSupport.toolCall(1, "probe", "{\"args\":[\"" + "p".repeat(bytes) + "\"]}");
  }
}
