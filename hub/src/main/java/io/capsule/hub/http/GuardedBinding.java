package io.capsule.hub.http;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.settings.SettingsInvalid;
import io.capsule.hub.http.ConnectionLimits.Admission;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.LongAdder;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.SharedKillSwitch;
import org.apache.pekko.stream.TLSClosing;
import org.apache.pekko.stream.TLSProtocol;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.TLS;
import org.apache.pekko.stream.javadsl.TLSPlacebo;
import org.apache.pekko.stream.javadsl.Tcp;
import org.apache.pekko.util.ByteString;

/**
 * An HTTP/1.1 server binding that slow and idle connections cannot take over: what {@code
 * Http.newServerAt(..).bindFlow(..)} does, plus
 *
 * <ul>
 *   <li>a <b>header deadline</b>: a connection that has not sent a complete request head within
 *       {@code header-timeout} is closed ({@code 408}, {@code E-HTTP-003}), so a client dribbling
 *       one header byte every few seconds holds a connection for seconds, not forever (Pekko HTTP
 *       has no such timeout: its {@code idle-timeout} is reset by every byte);
 *   <li>a <b>per-address limit</b>: one remote address holds at most {@code
 *       max-connections-per-address}; more are answered {@code 503} ({@code E-HTTP-001}) and closed
 *       at once, so one attacker cannot fill the server;
 *   <li>a <b>total cap</b> ({@code max-connections}, {@code 503} {@code E-HTTP-002}) that refuses
 *       at once instead of leaving new connections waiting in the accept backlog, which is how
 *       Pekko's own {@code max-connections} locks everyone out once slow connections reach it.
 * </ul>
 *
 * <p>WebSocket upgrades work as in a normal binding (the handler answers with {@code
 * handleMessagesWith}); once switched, only the idle timeout applies. Settings: {@code
 * capsule.hub.http.*} ({@link Limits#fromConfig}); the rest of {@code pekko.http.server} (parsing
 * limits, request timeout, pipelining) applies as usual.
 *
 * <p>Threading: {@link #bind} returns at once; the accept loop and every connection run on the
 * system's materializer. Every method is thread-safe.
 */
public final class GuardedBinding {

  /**
   * The limits.
   *
   * @param headerTimeout how long a request head may take to arrive, counted from the connection
   *     opening or from the first byte of a later request on a kept-alive connection
   * @param idleTimeout how long a connection may pass no byte either way (WebSockets included)
   * @param maxConnections open connections in total; beyond it new ones are refused at once
   * @param maxConnectionsPerAddress open connections from one remote IP address
   */
  public record Limits(
      Duration headerTimeout,
      Duration idleTimeout,
      int maxConnections,
      int maxConnectionsPerAddress) {
    /**
     * @throws SettingsInvalid {@code E-CFG-001} naming every key out of range
     */
    public Limits {
      List<Diagnostic> bad = new ArrayList<>();
      positive(headerTimeout, "header-timeout", bad);
      positive(idleTimeout, "idle-timeout", bad);
      atLeastOne(maxConnections, "max-connections", bad);
      atLeastOne(maxConnectionsPerAddress, "max-connections-per-address", bad);
      if (!bad.isEmpty()) {
        throw new SettingsInvalid(bad);
      }
    }

    /**
     * From {@code capsule.hub.http} of {@code config} (defaults in the hub's reference.conf).
     *
     * @throws SettingsInvalid {@code E-CFG-001} for a missing, mistyped or out-of-range key
     */
    public static Limits fromConfig(Config config) {
      try {
        Config c = config.getConfig("capsule.hub.http");
        return new Limits(
            c.getDuration("header-timeout"),
            c.getDuration("idle-timeout"),
            c.getInt("max-connections"),
            c.getInt("max-connections-per-address"));
      } catch (ConfigException e) {
        throw new SettingsInvalid(List.of(Diagnostic.of(Code.E_CFG_001, e.getMessage())));
      }
    }

    private static void positive(Duration d, String key, List<Diagnostic> bad) {
      if (d == null || d.isZero() || d.isNegative()) {
        bad.add(
            Diagnostic.of(Code.E_CFG_001, "capsule.hub.http." + key + " must be > 0, got " + d));
      }
    }

    private static void atLeastOne(int n, String key, List<Diagnostic> bad) {
      if (n < 1) {
        bad.add(
            Diagnostic.of(Code.E_CFG_001, "capsule.hub.http." + key + " must be >= 1, got " + n));
      }
    }
  }

  /** Counts since the binding started, for tests and {@code /metrics}. */
  public record Stats(
      int open,
      long admitted,
      long refusedPerAddress,
      long refusedTotal,
      long headerTimeouts,
      long idleTimeouts) {}

  private final ConnectionLimits limits;
  private final LongAdder admitted = new LongAdder();
  private final LongAdder refusedPerAddress = new LongAdder();
  private final LongAdder refusedTotal = new LongAdder();
  private final LongAdder headerTimeouts = new LongAdder();
  private final LongAdder idleTimeouts = new LongAdder();
  private final SharedKillSwitch connections;
  private volatile Tcp.ServerBinding tcp;

  private GuardedBinding(Limits limits, String name) {
    this.limits = new ConnectionLimits(limits.maxConnections(), limits.maxConnectionsPerAddress());
    this.connections = KillSwitches.shared(name);
  }

  /** Binds {@code route} on {@code host:port} (0 for any free port), plain HTTP. */
  public static CompletionStage<GuardedBinding> bind(
      ActorSystem<?> system, String host, int port, Route route, Limits limits) {
    return bind(system, host, port, route.flow(system), limits, Optional.empty());
  }

  /**
   * Binds {@code route} on {@code host:port}: HTTPS (and {@code wss://}) with {@code tls}, plain
   * HTTP without. The limits apply the same either way; the header deadline counts from the
   * connection's opening, so a client that never completes the handshake is closed by it too.
   */
  public static CompletionStage<GuardedBinding> bind(
      ActorSystem<?> system,
      String host,
      int port,
      Route route,
      Limits limits,
      Optional<ServerTls> tls) {
    return bind(system, host, port, route.flow(system), limits, tls);
  }

  /** As {@link #bind(ActorSystem, String, int, Flow, Limits, Optional)}, plain HTTP. */
  public static CompletionStage<GuardedBinding> bind(
      ActorSystem<?> system,
      String host,
      int port,
      Flow<HttpRequest, HttpResponse, ?> handler,
      Limits limits) {
    return bind(system, host, port, handler, limits, Optional.empty());
  }

  /**
   * Binds {@code handler} on {@code host:port} (0 for any free port); the handler is materialized
   * once per connection, as with {@code bindFlow}.
   */
  public static CompletionStage<GuardedBinding> bind(
      ActorSystem<?> system,
      String host,
      int port,
      Flow<HttpRequest, HttpResponse, ?> handler,
      Limits limits,
      Optional<ServerTls> tls) {
    Objects.requireNonNull(handler, "handler");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(tls, "tls");
    ServerSettings settings = ServerSettings.create(system.settings().config());
    GuardedBinding b = new GuardedBinding(limits, "guarded-" + host + "-" + port);
    Materializer mat = Materializer.matFromSystem(system);
    LoggingAdapter log = system.classicSystem().log();
    return Tcp.get(system)
        .bind(host, port, settings.getBacklog(), List.of(), false, Optional.empty())
        .toMat(
            Sink.foreach(c -> b.accept(c, system, settings, handler, limits, tls, log, mat)),
            Keep.left())
        .run(mat)
        .thenApply(
            t -> {
              b.tcp = t;
              return b;
            });
  }

  public InetSocketAddress localAddress() {
    return tcp.localAddress();
  }

  public Stats stats() {
    return new Stats(
        limits.open(),
        admitted.sum(),
        refusedPerAddress.sum(),
        refusedTotal.sum(),
        headerTimeouts.sum(),
        idleTimeouts.sum());
  }

  /** Stops accepting; open connections carry on. */
  public CompletionStage<Done> unbind() {
    return tcp.unbind().thenApply(u -> Done.getInstance());
  }

  /** Stops accepting and closes every open connection (responses in flight are cut). */
  public CompletionStage<Done> terminate() {
    return unbind()
        .thenApply(
            d -> {
              connections.shutdown();
              return d;
            });
  }

  private void accept(
      Tcp.IncomingConnection c,
      ActorSystem<?> system,
      ServerSettings settings,
      Flow<HttpRequest, HttpResponse, ?> handler,
      Limits l,
      Optional<ServerTls> tls,
      LoggingAdapter log,
      Materializer mat) {
    InetAddress from = c.remoteAddress().getAddress();
    Admission admission = limits.admit(from);
    if (admission != Admission.ADMITTED) {
      boolean perAddress = admission == Admission.OVER_ADDRESS;
      (perAddress ? refusedPerAddress : refusedTotal).increment();
      Flow<ByteString, ByteString, NotUsed> refusal = refusal(perAddress, from);
      // Over TLS the 503 is encrypted too: plain text would be noise to the client's TLS layer.
      c.handleWith(tls.isPresent() ? refusal.join(encrypted(tls.get())) : refusal, mat);
      return;
    }
    admitted.increment();
    try {
      HeaderDeadline deadline =
          new HeaderDeadline(
              l.headerTimeout(), l.idleTimeout(), timedOut(l), headerTimeouts, idleTimeouts);
      BidiFlow<HttpResponse, ByteString, ByteString, HttpRequest, NotUsed> stack =
          deadline
              .exchanges()
              .atop(Http.get(system).serverLayer(settings, Optional.of(c.remoteAddress()), log))
              .atop(PLAIN)
              .atop(TLSPlacebo.getInstance())
              .atop(deadline.bytes())
              .atop(tls.map(GuardedBinding::encrypted).orElse(CLEAR));
      Flow<ByteString, ByteString, NotUsed> connection =
          Flow.<HttpRequest>create()
              .via(handler)
              .join(stack)
              .via(connections.<ByteString>flow())
              .watchTermination(
                  (m, done) -> {
                    done.whenComplete((ok, failure) -> limits.release(from));
                    return NotUsed.getInstance();
                  });
      c.handleWith(connection, mat);
    } catch (RuntimeException e) {
      limits.release(from);
      log.error(e, "could not start handling a connection from {}", c.remoteAddress());
    }
  }

  /**
   * The server layer speaks {@code SslTlsInbound}; the placebo delivers its subtype {@code
   * SessionBytes}. This identity layer only widens the type (Java generics are invariant).
   */
  private static final BidiFlow<
          TLSProtocol.SslTlsOutbound,
          TLSProtocol.SslTlsOutbound,
          TLSProtocol.SessionBytes,
          TLSProtocol.SslTlsInbound,
          NotUsed>
      PLAIN =
          BidiFlow.fromFlows(
              Flow.of(TLSProtocol.SslTlsOutbound.class),
              Flow.of(TLSProtocol.SessionBytes.class).map(b -> (TLSProtocol.SslTlsInbound) b));

  /** No TLS: bytes pass as they are. */
  private static final BidiFlow<ByteString, ByteString, ByteString, ByteString, NotUsed> CLEAR =
      BidiFlow.identity();

  /**
   * TLS under the deadlines: the deadlines and the 408 farewell see the plain bytes, the socket the
   * encrypted ones. A refused or truncated handshake fails the connection (the peer sees the
   * alert).
   */
  private static BidiFlow<ByteString, ByteString, ByteString, ByteString, NotUsed> encrypted(
      ServerTls tls) {
    return BidiFlow.fromFlows(
            Flow.of(ByteString.class)
                .map(b -> (TLSProtocol.SslTlsOutbound) new TLSProtocol.SendBytes(b)),
            Flow.of(TLSProtocol.SslTlsInbound.class)
                .filter(i -> i instanceof TLSProtocol.SessionBytes)
                .map(i -> ((TLSProtocol.SessionBytes) i).bytes()))
        .atop(TLS.create(tls::engine, TLSClosing.eagerClose()));
  }

  /**
   * A refused connection gets one complete 503 response and is closed: its bytes are read and
   * dropped until the response is out (so the close does not reset the connection before the peer
   * can read why), and no more than that.
   */
  private static Flow<ByteString, ByteString, NotUsed> refusal(
      boolean perAddress, InetAddress from) {
    Diagnostic d =
        perAddress
            ? Diagnostic.of(
                Code.E_HTTP_001, "too many connections from " + from.getHostAddress() + " are open")
            : Diagnostic.of(Code.E_HTTP_002, "the hub holds as many connections as it allows");
    return Flow.fromSinkAndSourceCoupled(
        Sink.<ByteString>ignore(), Source.single(response("503 Service Unavailable", d, true)));
  }

  private static ByteString timedOut(Limits l) {
    return response(
        "408 Request Timeout",
        Diagnostic.of(
            Code.E_HTTP_003,
            "the request head did not arrive within "
                + l.headerTimeout().toMillis()
                + " ms of the connection opening"),
        false);
  }

  private static ByteString response(String status, Diagnostic d, boolean retry) {
    byte[] body = (d.render() + "\n").getBytes(StandardCharsets.UTF_8);
    String head =
        "HTTP/1.1 "
            + status
            + "\r\n"
            + (retry ? "Retry-After: 1\r\n" : "")
            + "Connection: close\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: "
            + body.length
            + "\r\n\r\n";
    return ByteString.fromString(head, StandardCharsets.US_ASCII)
        .concat(ByteString.fromArray(body));
  }
}
