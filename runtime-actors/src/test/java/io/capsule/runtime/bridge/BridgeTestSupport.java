package io.capsule.runtime.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** Shared pieces of the bridge tests: fake tools on disk, an HTTP client, a recorder, /proc. */
final class BridgeTestSupport {
  static final ObjectMapper JSON = new ObjectMapper();
  static final Duration WAIT = Duration.ofSeconds(20);
  static final List<String> TOOLS = List.of("probe", "fail", "slow", "spew", "writer");

  private BridgeTestSupport() {}

  /** Copies the test tools into {@code bin} as executables named without {@code .sh}. */
  static void installTools(Path bin) throws IOException {
    Files.createDirectories(bin);
    for (String tool : TOOLS) {
      try (InputStream in =
          BridgeTestSupport.class.getResourceAsStream("/bridge/" + tool + ".sh")) {
        assertNotNull(in, "test resource bridge/" + tool + ".sh");
        Path target = bin.resolve(tool);
        Files.write(target, in.readAllBytes());
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
      }
    }
  }

  /** The granted environment: the tools' directory first, then the system's, and one variable. */
  static Map<String, String> grantedEnv(Path bin) {
    return Map.of("PATH", bin + ":/usr/bin:/bin", "BRIDGE_TEST_VAR", "granted value");
  }

  /** Records what the bridge reports; tests take from it and end with it empty. */
  static final class Recorder implements ToolBridge.Listener {
    final AtomicInteger activity = new AtomicInteger();
    final BlockingQueue<ToolCallEvent> events = new LinkedBlockingQueue<>();

    @Override
    public void onActivity() {
      activity.incrementAndGet();
    }

    @Override
    public void onCall(ToolCallEvent event) {
      events.add(event);
    }

    ToolCallEvent next() throws InterruptedException {
      ToolCallEvent e = events.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      assertNotNull(e, "no tool call event within " + WAIT);
      return e;
    }

    ToolCallEvent.Started nextStarted() throws InterruptedException {
      return (ToolCallEvent.Started) next();
    }

    ToolCallEvent.Finished nextFinished() throws InterruptedException {
      return (ToolCallEvent.Finished) next();
    }

    void assertEmpty() {
      assertEquals(List.of(), new ArrayList<>(events), "unexpected tool call events");
    }
  }

  /** A JSON-RPC request body. */
  static String rpc(Object id, String method, String paramsJson) {
    String idJson = id instanceof String s ? "\"" + s + "\"" : String.valueOf(id);
    return "{\"jsonrpc\":\"2.0\",\"id\":"
        + idJson
        + ",\"method\":\""
        + method
        + "\",\"params\":"
        + paramsJson
        + "}";
  }

  static String toolCall(Object id, String tool, String argumentsJson) {
    return rpc(id, "tools/call", "{\"name\":\"" + tool + "\",\"arguments\":" + argumentsJson + "}");
  }

  /** Minimal MCP client over the JDK HttpClient, as a harness would talk to the bridge. */
  static final class Client {
    final HttpClient http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    final ToolBridge bridge;
    String session;

    Client(ToolBridge bridge) {
      this.bridge = bridge;
    }

    HttpRequest.Builder request() {
      HttpRequest.Builder b =
          HttpRequest.newBuilder(URI.create(bridge.url()))
              .timeout(WAIT)
              .header("Authorization", "Bearer " + bridge.bearerToken())
              .header("Accept", "application/json, text/event-stream");
      if (session != null) {
        b.header("Mcp-Session-Id", session);
      }
      return b;
    }

    HttpResponse<String> post(String body) throws IOException, InterruptedException {
      return send(
          request()
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(body))
              .build());
    }

    CompletableFuture<HttpResponse<String>> postAsync(String body) {
      return http.sendAsync(
          request()
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(body))
              .build(),
          HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
      return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** POSTs a tools/call and returns its {@code result}. */
    JsonNode call(String tool, String argumentsJson) throws IOException, InterruptedException {
      HttpResponse<String> r = post(toolCall(7, tool, argumentsJson));
      assertEquals(200, r.statusCode(), r.body());
      return JSON.readTree(r.body()).get("result");
    }
  }

  /** All text items of a tools/call result, joined by newlines. */
  static String text(JsonNode result) {
    StringBuilder out = new StringBuilder();
    for (JsonNode item : result.get("content")) {
      assertEquals("text", item.get("type").asText());
      out.append(item.get("text").asText()).append('\n');
    }
    return out.toString();
  }

  static ObjectNode object(String json) throws IOException {
    return (ObjectNode) JSON.readTree(json);
  }

  /**
   * Live (non-zombie) processes whose process group is {@code pgid}, read from {@code /proc}: the
   * ground truth for "the group is gone".
   */
  static List<Long> liveMembers(long pgid) throws IOException {
    List<Long> members = new ArrayList<>();
    try (var dirs = Files.list(Path.of("/proc"))) {
      for (Path dir : (Iterable<Path>) dirs::iterator) {
        String name = dir.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        String stat;
        try {
          stat = Files.readString(dir.resolve("stat"), StandardCharsets.US_ASCII);
        } catch (IOException gone) {
          continue;
        }
        // fields after the parenthesised command: state ppid pgrp ...
        String[] rest = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        if (Long.parseLong(rest[2]) == pgid && !rest[0].equals("Z") && !rest[0].equals("X")) {
          members.add(Long.parseLong(name));
        }
      }
    }
    return members;
  }

  /**
   * Probes {@code /proc} every 20 ms until no live member of {@code pgid} is left or {@link #WAIT}
   * passes; returns what was left last (empty when the group is gone). A killed process may need a
   * moment between releasing its pipes and leaving the process table.
   */
  static List<Long> awaitGroupGone(long pgid) throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    List<Long> left = liveMembers(pgid);
    while (!left.isEmpty() && System.nanoTime() < deadline) {
      left =
          CompletableFuture.supplyAsync(
                  () -> {
                    try {
                      return liveMembers(pgid);
                    } catch (IOException e) {
                      throw new IllegalStateException(e);
                    }
                  },
                  CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS))
              .get();
    }
    return left;
  }

  /** Makes a FIFO with mkfifo(1) (absolute path: tests never rely on the PATH). */
  static Path fifo(Path dir, String name) throws Exception {
    Path fifo = dir.resolve(name);
    Process p = new ProcessBuilder("/usr/bin/mkfifo", fifo.toString()).inheritIO().start();
    assertEquals(0, p.waitFor(), "mkfifo");
    return fifo;
  }

  /** Reads the "pgid childpid" line a slow tool writes to its FIFO, bounded by {@link #WAIT}. */
  static long[] readPids(Path fifo) throws Exception {
    String line =
        CompletableFuture.supplyAsync(
                () -> {
                  try {
                    return Files.readString(fifo).trim();
                  } catch (IOException e) {
                    throw new IllegalStateException(e);
                  }
                })
            .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    String[] parts = line.split(" ");
    return new long[] {Long.parseLong(parts[0]), Long.parseLong(parts[1])};
  }
}
