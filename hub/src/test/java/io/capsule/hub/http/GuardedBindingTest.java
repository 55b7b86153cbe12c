package io.capsule.hub.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.ws.Message;
import org.apache.pekko.stream.javadsl.Flow;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * {@link GuardedBinding} on real loopback sockets: normal requests and a WebSocket pass; a head
 * that never completes is closed with a 408; an address over its share and a server at its cap
 * answer 503 at once; and 2,000 slowloris connections do not keep a normal client or a WebSocket
 * waiting.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class GuardedBindingTest {
  private ActorSystem<Void> system;
  private GuardedBinding binding;
  private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();

  @BeforeAll
  void start() {
    system = ActorSystem.create(Behaviors.empty(), "guarded-binding-test");
  }

  @AfterEach
  void unbind() throws Exception {
    if (binding != null) {
      binding.terminate().toCompletableFuture().get(10, TimeUnit.SECONDS);
      binding = null;
    }
  }

  @AfterAll
  void stop() throws Exception {
    timers.shutdownNow();
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** {@code /ping} answers pong; {@code /ws} is a WebSocket echo. */
  private Flow<HttpRequest, HttpResponse, ?> handler() {
    return Flow.of(HttpRequest.class)
        .map(
            request -> {
              var upgrade = request.getAttribute(AttributeKeys.webSocketUpgrade);
              if (upgrade.isPresent()) {
                return upgrade.get().handleMessagesWith(Flow.of(Message.class));
              }
              request.discardEntityBytes(system);
              return request.getUri().path().equals("/ping")
                  ? HttpResponse.create().withEntity("pong")
                  : HttpResponse.create().withStatus(StatusCodes.NOT_FOUND);
            });
  }

  private GuardedBinding bind(GuardedBinding.Limits limits) throws Exception {
    binding =
        GuardedBinding.bind(system, "127.0.0.1", 0, handler(), limits)
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    return binding;
  }

  private static GuardedBinding.Limits limits(
      Duration header, Duration idle, int total, int perAddress) {
    return new GuardedBinding.Limits(header, idle, total, perAddress);
  }

  // --- the rules, one at a time ---

  @Test
  void aRequestIsAnsweredAndTheConnectionKeptAlive() throws Exception {
    GuardedBinding b = bind(limits(Duration.ofSeconds(5), Duration.ofSeconds(30), 10, 5));
    try (Socket s = connect(b, "127.0.0.1")) {
      for (int i = 0; i < 3; i++) {
        write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\n\r\n");
        String answer = readResponse(s);
        assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
        assertTrue(answer.endsWith("pong"), answer);
      }
    }
  }

  @Test
  void pipelinedRequestsAreAllAnsweredInOrder() throws Exception {
    GuardedBinding b = bind(limits(Duration.ofSeconds(5), Duration.ofSeconds(30), 10, 5));
    try (Socket s = connect(b, "127.0.0.1")) {
      write(
          s,
          "GET /ping HTTP/1.1\r\nHost: hub\r\n\r\n"
              + "GET /nowhere HTTP/1.1\r\nHost: hub\r\n\r\n"
              + "GET /ping HTTP/1.1\r\nHost: hub\r\n\r\n");
      assertTrue(readResponse(s).startsWith("HTTP/1.1 200"));
      assertTrue(readResponse(s).startsWith("HTTP/1.1 404"));
      assertTrue(readResponse(s).startsWith("HTTP/1.1 200"));
    }
    assertEquals(0, b.stats().headerTimeouts());
  }

  @Test
  void aHeadThatNeverCompletesIsClosedWithA408() throws Exception {
    GuardedBinding b = bind(limits(Duration.ofMillis(1500), Duration.ofSeconds(60), 10, 5));
    try (Socket s = connect(b, "127.0.0.1")) {
      write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\nX-Slow: a");
      long t0 = System.nanoTime();
      String answer = readToEnd(s, Duration.ofSeconds(20));
      long tookMillis = Duration.ofNanos(System.nanoTime() - t0).toMillis();
      assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
      assertTrue(answer.contains("E-HTTP-003"), answer);
      assertTrue(tookMillis >= 1000, "closed before the deadline: " + tookMillis + " ms");
    }
    assertEquals(1, b.stats().headerTimeouts());
    awaitTrue(() -> b.stats().open() == 0, "the timed-out connection is released");
  }

  @Test
  void aLaterHeadOnAKeptAliveConnectionHasADeadlineToo() throws Exception {
    GuardedBinding b = bind(limits(Duration.ofMillis(1500), Duration.ofSeconds(60), 10, 5));
    try (Socket s = connect(b, "127.0.0.1")) {
      write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\n\r\n");
      assertTrue(readResponse(s).startsWith("HTTP/1.1 200"));
      write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\nX-Slow: a");
      assertEquals("", readToEnd(s, Duration.ofSeconds(20)), "closed without a second response");
    }
    assertEquals(1, b.stats().headerTimeouts());
  }

  @Test
  void aConnectionSilentBetweenRequestsIsClosedOnlyByTheIdleTimeout() throws Exception {
    GuardedBinding b = bind(limits(Duration.ofMillis(500), Duration.ofMillis(2500), 10, 5));
    try (Socket s = connect(b, "127.0.0.1")) {
      write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\n\r\n");
      assertTrue(readResponse(s).startsWith("HTTP/1.1 200"));
      long t0 = System.nanoTime();
      assertEquals("", readToEnd(s, Duration.ofSeconds(20)));
      long quietMillis = Duration.ofNanos(System.nanoTime() - t0).toMillis();
      assertTrue(quietMillis >= 2000, "closed before the idle timeout: " + quietMillis + " ms");
    }
    assertEquals(0, b.stats().headerTimeouts());
    assertEquals(1, b.stats().idleTimeouts());
  }

  @Test
  void anAddressOverItsShareIsAnswered503AtOnceWhileOthersAreServed() throws Exception {
    GuardedBinding b = bind(limits(Duration.ofSeconds(30), Duration.ofSeconds(60), 10, 2));
    List<Socket> held = new ArrayList<>();
    try {
      held.add(connect(b, "127.0.0.5"));
      held.add(connect(b, "127.0.0.5"));
      awaitTrue(() -> b.stats().open() == 2, "two connections admitted");
      try (Socket third = connect(b, "127.0.0.5")) {
        String refused = readToEnd(third, Duration.ofSeconds(10));
        assertTrue(refused.startsWith("HTTP/1.1 503"), refused);
        assertTrue(refused.contains("E-HTTP-001"), refused);
        assertTrue(refused.contains("127.0.0.5"), refused);
      }
      assertEquals(200, ping(b).status());
      assertEquals(1, b.stats().refusedPerAddress());
    } finally {
      closeAll(held);
    }
  }

  @Test
  void aServerAtItsCapAnswers503AtOnce() throws Exception {
    GuardedBinding b = bind(limits(Duration.ofSeconds(30), Duration.ofSeconds(60), 3, 2));
    List<Socket> held = new ArrayList<>();
    try {
      for (String from : List.of("127.0.0.6", "127.0.0.7", "127.0.0.8")) {
        held.add(connect(b, from));
      }
      awaitTrue(() -> b.stats().open() == 3, "three connections admitted");
      try (Socket fourth = connect(b, "127.0.0.9")) {
        String refused = readToEnd(fourth, Duration.ofSeconds(10));
        assertTrue(refused.startsWith("HTTP/1.1 503"), refused);
        assertTrue(refused.contains("E-HTTP-002"), refused);
      }
      assertEquals(1, b.stats().refusedTotal());
    } finally {
      closeAll(held);
    }
    awaitTrue(() -> b.stats().open() == 0, "every connection released");
  }

  @Test
  void aWebSocketIsUpgradedAndOutlivesTheHeaderDeadline() throws Exception {
    GuardedBinding b = bind(limits(Duration.ofMillis(800), Duration.ofSeconds(60), 10, 5));
    Echo echo = Echo.open(b);
    try {
      assertEquals("one", echo.roundTrip("one"));
      later(Duration.ofMillis(2000)).get(10, TimeUnit.SECONDS); // past two head deadlines
      assertEquals("two", echo.roundTrip("two"));
      assertEquals(0, b.stats().headerTimeouts());
    } finally {
      echo.close();
    }
  }

  // --- the attack ---

  @Test
  void twoThousandSlowConnectionsDoNotKeepANormalClientOrAWebSocketWaiting() throws Exception {
    Duration header = Duration.ofSeconds(3);
    // 20 attacking addresses x 10 admitted = 200 connections held, far under the cap of 1,000;
    // the other 1,800 are refused at the door, and again on every reconnect.
    GuardedBinding b = bind(limits(header, Duration.ofSeconds(60), 1_000, 10));
    Echo echo = Echo.open(b);
    List<CompletableFuture<Long>> probes = new ArrayList<>();
    long t0 = System.nanoTime();
    try (SlowClients attack =
        new SlowClients(b.localAddress(), 2_000, 20, Duration.ofMillis(1500))) {
      System.out.println(
          "slow clients connected in "
              + Duration.ofNanos(System.nanoTime() - t0).toMillis()
              + " ms: "
              + b.stats());
      awaitTrue(
          () -> b.stats().refusedPerAddress() >= 1_000 && b.stats().admitted() >= 200,
          () -> "the attack has filled every address's share: " + b.stats());
      System.out.println("attack under way: " + b.stats());
      // A fresh connection from the victim's address every 400 ms, for three head deadlines.
      for (int i = 0; i < 22; i++) {
        probes.add(later(Duration.ofMillis(400L * i)).thenApplyAsync(t -> timedPing(b)));
      }
      assertEquals("during", echo.roundTrip("during"));
      for (CompletableFuture<Long> p : probes) {
        long millis = p.get(60, TimeUnit.SECONDS);
        // Locked out means no answer until the attack ends; 3 s leaves room for this shared
        // 2-core machine's load (measured: 0.1-1.2 s at load average 26) and still tells the two
        // apart, since the attack outlasts the probes.
        assertTrue(millis < 3_000, "a normal request waited " + millis + " ms");
      }
      assertEquals("still", echo.roundTrip("still"));

      GuardedBinding.Stats stats = b.stats();
      System.out.println(
          "after the probes: "
              + stats
              + "; attackers connected "
              + attack.connects()
              + " times, longest unfinished head "
              + attack.longestAdmittedLife().toMillis()
              + " ms; probe latencies "
              + probes.stream().map(CompletableFuture::join).toList());
      assertTrue(stats.open() <= 1_000, "over the cap: " + stats);
      assertTrue(stats.headerTimeouts() >= 200, "heads were not cut at the deadline: " + stats);
      assertEquals(0, stats.idleTimeouts(), "the attackers are not idle: " + stats);
      // Without the deadline no attacker would ever be closed (each sends a byte per tick, so the
      // idle timeout never fires): every admitted attacker's head was cut at least once. Their
      // lifetimes as seen by the client also count the wait in the kernel's accept backlog, so
      // they are printed above, not asserted.
      assertTrue(attack.refusals() > 0, "no attacker was turned away with a 503");
    } finally {
      echo.close();
    }
    awaitTrue(() -> b.stats().open() == 0, "every attacker's connection released: " + b.stats());
  }

  // --- helpers ---

  record Ping(int status, long millis) {}

  private Ping ping(GuardedBinding b) throws IOException {
    long t0 = System.nanoTime();
    try (Socket s = connect(b, "127.0.0.1")) {
      write(s, "GET /ping HTTP/1.1\r\nHost: hub\r\nConnection: close\r\n\r\n");
      String answer = readToEnd(s, Duration.ofSeconds(10));
      int status = answer.length() >= 12 ? Integer.parseInt(answer.substring(9, 12)) : -1;
      return new Ping(status, Duration.ofNanos(System.nanoTime() - t0).toMillis());
    }
  }

  private long timedPing(GuardedBinding b) {
    try {
      Ping p = ping(b);
      if (p.status() != 200) {
        throw new AssertionError("a normal request got " + p.status());
      }
      return p.millis();
    } catch (IOException e) {
      throw new AssertionError("a normal request failed: " + e, e);
    }
  }

  private CompletableFuture<Void> later(Duration d) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    timers.schedule(() -> f.complete(null), d.toMillis(), TimeUnit.MILLISECONDS);
    return f;
  }

  /** Polls a condition every 50 ms for at most 30 s (socket state has no event to wait on). */
  private void awaitTrue(BooleanSupplier condition, String what) throws Exception {
    awaitTrue(condition, () -> what);
  }

  private void awaitTrue(BooleanSupplier condition, java.util.function.Supplier<String> what)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting: " + what.get());
      }
      later(Duration.ofMillis(50)).get();
    }
  }

  private static Socket connect(GuardedBinding b, String from) throws IOException {
    Socket s = new Socket();
    s.bind(new InetSocketAddress(from, 0));
    s.connect(b.localAddress(), 5_000);
    s.setSoTimeout(20_000);
    return s;
  }

  private static void closeAll(List<Socket> sockets) throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
  }

  private static void write(Socket s, String text) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(text.getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  /** One response with a Content-Length body, read off a kept-alive connection. */
  private static String readResponse(Socket s) throws IOException {
    InputStream in = s.getInputStream();
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int c = in.read();
      if (c < 0) {
        throw new IOException("closed in the middle of a response head: " + head);
      }
      head.append((char) c);
    }
    int length = 0;
    for (String line : head.toString().split("\r\n")) {
      if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring("content-length:".length()).trim());
      }
    }
    byte[] body = in.readNBytes(length);
    return head + new String(body, StandardCharsets.UTF_8);
  }

  /** Everything until the server closes (an empty string when it closes without a word). */
  private static String readToEnd(Socket s, Duration max) throws IOException {
    s.setSoTimeout((int) max.toMillis());
    try {
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    } catch (java.net.SocketException e) {
      return ""; // reset: closed without a word
    }
  }

  /** A java.net.http WebSocket client on {@code /ws}. */
  private static final class Echo {
    private final WebSocket socket;
    private final BlockingQueue<String> received;

    private Echo(WebSocket socket, BlockingQueue<String> received) {
      this.socket = socket;
      this.received = received;
    }

    static Echo open(GuardedBinding b) throws Exception {
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
      return new Echo(ws, received);
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
}
