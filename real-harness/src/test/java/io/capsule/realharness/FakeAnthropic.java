package io.capsule.realharness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fake Anthropic Messages API on {@code 127.0.0.1:0}, scripted per scenario.
 *
 * <p>{@code POST /v1/messages} (query ignored) with {@code stream: true} takes the next scripted
 * {@link Responder}; when the script is empty the fallback answers (by default a 500 {@code
 * api_error}, so a missing script shows up as a failure, not a hang). A request without {@code
 * stream} gets a small non-streamed message. {@code POST /v1/messages/count_tokens} answers a fixed
 * count. Everything else is 404 and recorded in {@link #unknownRequests()}, so a test can report
 * what the CLI asked for.
 */
final class FakeAnthropic implements AutoCloseable {

  /** Answers one streamed request; it sees the request body (e.g. to echo the model). */
  @FunctionalInterface
  interface Responder {
    Reply answer(JsonNode request);
  }

  /** One {@code /v1/messages} request as received: its body and its headers (lower-case names). */
  record Received(JsonNode body, Map<String, String> headers) {}

  private final HttpServer server;
  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final ConcurrentLinkedDeque<Responder> script = new ConcurrentLinkedDeque<>();
  private volatile Responder fallback =
      request -> new Reply.Error(500, "api_error", "no scripted reply left", OptionalInt.empty());
  private final List<Received> messages = new CopyOnWriteArrayList<>();
  private final List<String> all = new CopyOnWriteArrayList<>();
  private final List<String> unknown = new CopyOnWriteArrayList<>();
  private final CountDownLatch closed = new CountDownLatch(1);
  private final AtomicInteger ids = new AtomicInteger();
  private final Object arrivals = new Object();

  private FakeAnthropic(HttpServer server) {
    this.server = server;
  }

  /** Binds 127.0.0.1 on an ephemeral port and starts serving. */
  static FakeAnthropic start() throws IOException {
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    FakeAnthropic fake = new FakeAnthropic(server);
    server.createContext("/", fake::handle);
    server.setExecutor(fake.pool);
    server.start();
    return fake;
  }

  /** The base URL for {@code ANTHROPIC_BASE_URL}. */
  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** Appends the answer to the next streamed request. */
  FakeAnthropic then(Responder responder) {
    script.add(responder);
    return this;
  }

  /** What every streamed request answers once the script is used up. */
  FakeAnthropic otherwise(Responder responder) {
    this.fallback = responder;
    return this;
  }

  /** Every {@code /v1/messages} request so far, in arrival order. */
  List<Received> messages() {
    return List.copyOf(messages);
  }

  /** Every request so far as {@code "METHOD /path?query"}, in arrival order. */
  List<String> allRequests() {
    return List.copyOf(all);
  }

  /** Requests the fake does not know (answered 404), as {@code "METHOD /path?query"}. */
  List<String> unknownRequests() {
    return List.copyOf(unknown);
  }

  /** Waits until at least {@code n} messages requests arrived; false on timeout. */
  boolean awaitMessages(int n, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (arrivals) {
      while (messages.size() < n) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(arrivals, left);
      }
      return true;
    }
  }

  @Override
  public void close() {
    closed.countDown();
    server.stop(0);
    pool.shutdownNow();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod();
      String path = exchange.getRequestURI().getPath();
      String line = method + " " + exchange.getRequestURI();
      all.add(line);
      byte[] body = exchange.getRequestBody().readAllBytes();
      if (method.equals("POST") && path.equals("/v1/messages")) {
        onMessages(exchange, MessageStream.JSON.readTree(body));
      } else if (method.equals("POST") && path.equals("/v1/messages/count_tokens")) {
        sendJson(exchange, 200, MessageStream.JSON.createObjectNode().put("input_tokens", 1));
      } else {
        unknown.add(line);
        sendJson(exchange, 404, errorBody("not_found_error", "the fake does not serve " + path));
      }
    }
  }

  private void onMessages(HttpExchange exchange, JsonNode request) throws IOException {
    Map<String, String> headers = new java.util.TreeMap<>();
    exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(), v.get(0)));
    messages.add(new Received(request, headers));
    synchronized (arrivals) {
      arrivals.notifyAll();
    }
    if (!request.path("stream").asBoolean(false)) {
      sendJson(exchange, 200, plainMessage(request));
      return;
    }
    Responder next = script.poll();
    Reply reply = (next == null ? fallback : next).answer(request);
    exchange.getResponseHeaders().set("request-id", "req_fake_" + ids.incrementAndGet());
    if (reply instanceof Reply.Error e) {
      e.retryAfterSeconds()
          .ifPresent(s -> exchange.getResponseHeaders().set("retry-after", Integer.toString(s)));
      sendJson(exchange, e.status(), errorBody(e.type(), e.message()));
    } else if (reply instanceof Reply.Stream s) {
      stream(exchange, s);
    }
  }

  private void stream(HttpExchange exchange, Reply.Stream reply) throws IOException {
    exchange.getResponseHeaders().set("content-type", "text/event-stream; charset=utf-8");
    exchange.getResponseHeaders().set("cache-control", "no-cache");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    List<MessageStream.SseEvent> events = new ArrayList<>(reply.events());
    for (MessageStream.SseEvent event : events) {
      out.write(event.wire().getBytes(StandardCharsets.UTF_8));
      out.flush();
    }
    if (!reply.stall()) {
      return;
    }
    // Stalled: keep the stream open with pings until the client leaves (a write fails) or the
    // fake is closed.
    String ping = "event: ping\ndata: {\"type\": \"ping\"}\n\n";
    try {
      while (!closed.await(250, TimeUnit.MILLISECONDS)) {
        out.write(ping.getBytes(StandardCharsets.UTF_8));
        out.flush();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException clientLeft) {
      // The harness went away: that is what a stalled stream waits for.
    }
  }

  private ObjectNode plainMessage(JsonNode request) {
    ObjectNode m = MessageStream.JSON.createObjectNode();
    m.put("id", "msg_plain_" + ids.incrementAndGet()).put("type", "message");
    m.put("role", "assistant").put("model", request.path("model").asText("fake"));
    m.putArray("content").addObject().put("type", "text").put("text", "ok");
    m.put("stop_reason", "end_turn").putNull("stop_sequence");
    m.putObject("usage").put("input_tokens", 1).put("output_tokens", 1);
    return m;
  }

  private static ObjectNode errorBody(String type, String message) {
    ObjectNode body = MessageStream.JSON.createObjectNode().put("type", "error");
    body.putObject("error").put("type", type).put("message", message);
    return body;
  }

  private static void sendJson(HttpExchange exchange, int status, JsonNode body)
      throws IOException {
    byte[] bytes = MessageStream.JSON.writeValueAsBytes(body);
    exchange.getResponseHeaders().set("content-type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    exchange.getResponseBody().write(bytes);
  }
}
