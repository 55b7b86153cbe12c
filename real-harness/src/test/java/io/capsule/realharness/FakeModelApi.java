package io.capsule.realharness;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.luben.zstd.ZstdInputStream;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import javax.net.ssl.SSLContext;

/**
 * A scripted model API on {@code 127.0.0.1:0} for the Codex (Responses API) and Gemini suites: a
 * {@code POST} to a path the {@code modelPath} test accepts takes the next scripted {@link
 * Responder}, else the fallback (a 500, so a missing script shows up as a failure, not a hang). A
 * path given to {@link #route} always gets its fixed answer (the account and setup calls a
 * subscription login makes first). Anything else is 404 and recorded in {@link #unknownRequests()}.
 */
final class FakeModelApi implements AutoCloseable {

  /** Answers one model request; it sees the request body. */
  @FunctionalInterface
  interface Responder {
    Answer answer(JsonNode request);
  }

  /** What one model request gets. */
  sealed interface Answer {
    /**
     * A {@code text/event-stream}: each frame written and flushed as is. With {@code stall} the
     * stream stays open (a comment line every 250 ms) until the client leaves or the fake closes.
     */
    record Sse(List<String> frames, boolean stall) implements Answer {}

    /** A JSON answer with this status. */
    record Json(int status, JsonNode body) implements Answer {}
  }

  /** One model request as received: its path with query, body and headers (lower-case names). */
  record Received(String path, JsonNode body, Map<String, String> headers) {}

  private final HttpServer server;
  private final Predicate<String> modelPath;
  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final ConcurrentLinkedDeque<Responder> script = new ConcurrentLinkedDeque<>();
  private volatile Responder fallback;
  private final List<Received> received = new CopyOnWriteArrayList<>();
  private final List<String> unknown = new CopyOnWriteArrayList<>();
  private final CountDownLatch closed = new CountDownLatch(1);
  private final Map<String, Responder> routes = new ConcurrentHashMap<>();
  private final List<String> routed = new CopyOnWriteArrayList<>();
  private final String scheme;

  private FakeModelApi(
      HttpServer server, Predicate<String> modelPath, Responder fallback, String scheme) {
    this.server = server;
    this.modelPath = modelPath;
    this.fallback = fallback;
    this.scheme = scheme;
  }

  /**
   * Binds 127.0.0.1 on an ephemeral port and serves model requests on paths {@code modelPath}
   * accepts.
   */
  static FakeModelApi start(Predicate<String> modelPath, Responder fallback) throws IOException {
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    return serve(new FakeModelApi(server, modelPath, fallback, "http"));
  }

  /** As {@link #start}, over HTTPS with {@code tls} (see {@link FakeTls}). */
  static FakeModelApi startHttps(Predicate<String> modelPath, Responder fallback, SSLContext tls)
      throws IOException {
    HttpsServer server =
        HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setHttpsConfigurator(new HttpsConfigurator(tls));
    return serve(new FakeModelApi(server, modelPath, fallback, "https"));
  }

  private static FakeModelApi serve(FakeModelApi fake) {
    fake.server.createContext("/", fake::handle);
    fake.server.setExecutor(fake.pool);
    fake.server.start();
    return fake;
  }

  String baseUrl() {
    return scheme + "://127.0.0.1:" + server.getAddress().getPort();
  }

  /** Every request to {@code path} (any method) gets what {@code responder} answers. */
  FakeModelApi route(String path, Responder responder) {
    routes.put(path, responder);
    return this;
  }

  /** The routed requests received, as {@code METHOD path}, in order. */
  List<String> routedRequests() {
    return List.copyOf(routed);
  }

  FakeModelApi then(Responder responder) {
    script.add(responder);
    return this;
  }

  FakeModelApi otherwise(Responder responder) {
    this.fallback = responder;
    return this;
  }

  List<Received> received() {
    return List.copyOf(received);
  }

  List<String> unknownRequests() {
    return List.copyOf(unknown);
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
      String path = exchange.getRequestURI().toString();
      byte[] body = decoded(exchange);
      Responder fixed = routes.get(exchange.getRequestURI().getPath());
      if (fixed != null) {
        routed.add(method + " " + path);
        JsonNode request =
            body.length == 0 ? MessageStream.JSON.missingNode() : MessageStream.JSON.readTree(body);
        answer(exchange, fixed.answer(request));
        return;
      }
      if (!method.equals("POST") || !modelPath.test(exchange.getRequestURI().getPath())) {
        unknown.add(method + " " + path);
        byte[] bytes =
            "{\"error\":{\"code\":404,\"message\":\"not served\"}}"
                .getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("content-type", "application/json");
        exchange.sendResponseHeaders(404, bytes.length);
        exchange.getResponseBody().write(bytes);
        return;
      }
      Map<String, String> headers = new TreeMap<>();
      exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(), v.get(0)));
      JsonNode request = MessageStream.JSON.readTree(body);
      received.add(new Received(path, request, headers));
      Responder next = script.poll();
      answer(exchange, (next == null ? fallback : next).answer(request));
    }
  }

  /** The request body, decompressed when it says {@code Content-Encoding: zstd}. */
  private static byte[] decoded(HttpExchange exchange) throws IOException {
    byte[] raw = exchange.getRequestBody().readAllBytes();
    String encoding = exchange.getRequestHeaders().getFirst("content-encoding");
    if (encoding == null || !encoding.trim().equalsIgnoreCase("zstd")) {
      return raw;
    }
    try (InputStream in = new ZstdInputStream(new ByteArrayInputStream(raw))) {
      return in.readAllBytes();
    }
  }

  private void answer(HttpExchange exchange, Answer answer) throws IOException {
    if (answer instanceof Answer.Json j) {
      byte[] bytes = MessageStream.JSON.writeValueAsBytes(j.body());
      exchange.getResponseHeaders().set("content-type", "application/json");
      exchange.sendResponseHeaders(j.status(), bytes.length);
      exchange.getResponseBody().write(bytes);
    } else if (answer instanceof Answer.Sse s) {
      stream(exchange, s);
    }
  }

  private void stream(HttpExchange exchange, Answer.Sse sse) throws IOException {
    exchange.getResponseHeaders().set("content-type", "text/event-stream");
    exchange.getResponseHeaders().set("cache-control", "no-cache");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    for (String frame : sse.frames()) {
      out.write(frame.getBytes(StandardCharsets.UTF_8));
      out.flush();
    }
    if (!sse.stall()) {
      return;
    }
    try {
      while (!closed.await(250, TimeUnit.MILLISECONDS)) {
        out.write(": still thinking\n\n".getBytes(StandardCharsets.UTF_8));
        out.flush();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException clientLeft) {
      // The harness went away: that is what a stalled stream waits for.
    }
  }
}
