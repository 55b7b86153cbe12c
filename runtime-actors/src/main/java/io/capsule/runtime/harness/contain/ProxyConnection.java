package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One client connection of the {@link EgressProxy} and, while it has one, its connection to a
 * granted host. A {@code CONNECT} turns it into a tunnel for the rest of its life. Otherwise it is
 * a persistent HTTP/1.1 connection: each request on it is read ({@link MessageReader}), parsed and
 * rewritten ({@link ProxyRequest}), checked against the allowlist on its own, and sent to its own
 * host in origin form; the host's connection is kept for the next request to the same {@code
 * host:port} and closed before one to another. The response is relayed ({@link ProxyResponse}), 1xx
 * interim responses first, then the next request is read. A malformed request gets a 400, a
 * malformed or missing response a 502, and the connection closes.
 *
 * <p>Threads: {@link #serve()} runs on one proxy thread for the connection's life (requests and
 * their bodies, client to host); a second task on the same executor relays each response, or a
 * tunnel's host-to-client direction, so a body and its response flow at once ({@code Expect:
 * 100-continue}, an early answer). Requests are sent one at a time: the next is read only after the
 * response to the last one ended (a pipelining client's requests wait in the socket, in order).
 * {@link #close()} may come from any thread (the watchdog, the proxy's close) and ends both tasks.
 */
final class ProxyConnection {

  /** What a connection asks of its proxy. */
  interface Egress {
    /** Empty when {@code host:port} is granted; else the reason, already counted and reported. */
    Optional<String> refusal(String host, int port);

    /** A connected socket to a granted host, resolved and connected within the proxy's bounds. */
    Socket connect(String host, int port) throws IOException;
  }

  /**
   * Largest response head from a host: hosts send more fields than clients (rate-limit, tracing and
   * cookie fields); 64 KiB is four times the request default and well above what APIs send.
   */
  static final int RESPONSE_HEAD_CAP = 64 * 1024;

  /** How much of an unread request is drained after a closing answer before closing. */
  private static final int DRAIN_CAP = 64 * 1024;

  private static final byte[] ESTABLISHED =
      "HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  /** Who has written to the client for the current exchange (one writer at a time). */
  private enum Stage {
    NOTHING,
    INTERIM,
    FINAL,
    ABORTED
  }

  /** How an exchange ended: whether the client's and the host's connections may go on. */
  private record Outcome(boolean closeClient, boolean upstreamReusable) {}

  private static final Outcome CLOSE = new Outcome(true, false);

  private final SocketChannel client;
  private final InputStream clientIn;
  private final OutputStream clientOut;
  private final ContainmentConfig config;
  private final Egress egress;
  private final ExecutorService threads;
  private final Runnable onClose;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile long lastActivity = System.nanoTime();
  private volatile Socket upstream;

  // The host connection's state, touched by the serve thread only.
  private String upstreamHost;
  private int upstreamPort;
  private boolean upstreamReusable;
  private MessageReader fromUpstream;

  ProxyConnection(
      SocketChannel client,
      ContainmentConfig config,
      Egress egress,
      ExecutorService threads,
      Runnable onClose) {
    this.client = client;
    this.config = config;
    this.egress = egress;
    this.threads = threads;
    this.onClose = onClose;
    this.clientIn = new ProxyIo.ChannelInput(client, this::touch);
    this.clientOut = new ProxyIo.ChannelOutput(client, this::touch);
  }

  /** Nanoseconds since bytes last moved either way. */
  long idleNanos(long now) {
    return now - lastActivity;
  }

  /** Closes the client's and the host's connections (once; any thread). */
  void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    onClose.run();
    ProxyIo.closeQuietly(client);
    Socket u = upstream;
    if (u != null) {
      ProxyIo.closeQuietly(u);
    }
  }

  /**
   * Serves the connection until it ends; then it is closed (a tunnel closes when both ends did).
   */
  void serve() {
    boolean tunneling = false;
    try {
      MessageReader fromClient = new MessageReader(clientIn, config.headerCapBytes());
      while (!closed.get()) {
        MessageReader.Head head = fromClient.readHead(config.headerCapBytes());
        if (head instanceof MessageReader.Head.End) {
          return;
        }
        if (head instanceof MessageReader.Head.TooLarge) {
          refuse(431, "the request head is over " + config.headerCapBytes() + " bytes");
          return;
        }
        ProxyRequest request = ProxyRequest.parse(((MessageReader.Head.Read) head).bytes());
        if (request instanceof ProxyRequest.Bad bad) {
          refuse(400, bad.reason());
          return;
        }
        String host =
            request instanceof ProxyRequest.Connect c ? c.host() : forward(request).host();
        int port = request instanceof ProxyRequest.Connect c ? c.port() : forward(request).port();
        Optional<String> refusal = egress.refusal(host, port);
        if (refusal.isPresent()) {
          refuse(403, refusal.get());
          return;
        }
        if (request instanceof ProxyRequest.Connect) {
          tunneling = tunnel(host, port, fromClient.takeBuffered());
          return;
        }
        if (!exchange(forward(request), fromClient)) {
          return;
        }
      }
    } catch (IOException | RuntimeException e) {
      // The client or the host went away, or the proxy is closing: the connection ends.
    } finally {
      if (!tunneling) {
        close();
      }
    }
  }

  private static ProxyRequest.Forward forward(ProxyRequest request) {
    return (ProxyRequest.Forward) request;
  }

  // --- plain HTTP ---

  /** One request and its response; whether the connection goes on to the next request. */
  private boolean exchange(ProxyRequest.Forward f, MessageReader fromClient) throws IOException {
    if (!useUpstream(f.host(), f.port())) {
      return false;
    }
    Socket host = upstream;
    MessageReader response = fromUpstream;
    AtomicBoolean hostStoppedReading = new AtomicBoolean();
    OutputStream toHost = new ProxyIo.NotingFailure(host.getOutputStream(), hostStoppedReading);
    try {
      toHost.write(f.head());
    } catch (IOException e) {
      refuse(502, "the connection to " + f.host() + ":" + f.port() + " broke: " + e.getMessage());
      return false;
    }
    AtomicReference<Stage> stage = new AtomicReference<>(Stage.NOTHING);
    Future<Outcome> relay = threads.submit(() -> relayResponse(f, host, response, stage));
    boolean bodySent = false;
    try {
      fromClient.copyBody(f.body(), toHost, config.headerCapBytes());
      bodySent = true;
    } catch (MalformedHttp e) {
      if (stage.compareAndSet(Stage.NOTHING, Stage.ABORTED)) {
        dropUpstream();
        refuse(400, e.getMessage());
      }
      return false;
    } catch (IOException e) {
      if (!hostStoppedReading.get()) {
        return false; // the client broke off: closing ends the relay too
      }
      // The host stopped reading the body (it may have answered early): relay its answer.
    }
    Outcome outcome = await(relay);
    upstreamReusable = outcome.upstreamReusable();
    if (!upstreamReusable) {
      dropUpstream();
    }
    if (outcome.closeClient() || !bodySent) {
      finish();
      return false;
    }
    return true;
  }

  /** The host's connection for {@code host:port}: the open one when reusable, else a new one. */
  private boolean useUpstream(String host, int port) throws IOException {
    String name = host.toLowerCase(Locale.ROOT);
    if (upstream != null
        && upstreamReusable
        && name.equals(upstreamHost)
        && port == upstreamPort
        && !peerClosed(upstream)) {
      return true;
    }
    dropUpstream();
    Socket s;
    try {
      s = egress.connect(host, port);
    } catch (IOException e) {
      refuse(502, "could not reach " + host + ":" + port + ": " + e.getMessage());
      return false;
    }
    attach(s);
    upstreamHost = name;
    upstreamPort = port;
    upstreamReusable = true;
    fromUpstream =
        new MessageReader(new ProxyIo.Touching(s.getInputStream(), this::touch), RESPONSE_HEAD_CAP);
    return true;
  }

  /**
   * Relays the response to {@code f} (interim ones first) from {@code host} to the client. On a
   * failure the host's connection is closed (so the request side stops too), and the client gets a
   * 502 if the final head had not gone out yet; after it, the connection just closes.
   */
  private Outcome relayResponse(
      ProxyRequest.Forward f, Socket host, MessageReader in, AtomicReference<Stage> stage) {
    try {
      while (true) {
        MessageReader.Head head = in.readHead(RESPONSE_HEAD_CAP);
        if (head instanceof MessageReader.Head.End) {
          return failed(host, stage, "the host closed the connection without a response");
        }
        if (head instanceof MessageReader.Head.TooLarge) {
          return failed(
              host, stage, "the host's response head is over " + RESPONSE_HEAD_CAP + " bytes");
        }
        ProxyResponse r =
            ProxyResponse.parse(
                ((MessageReader.Head.Read) head).bytes(), f.method(), f.keepAlive());
        if (r instanceof ProxyResponse.Bad bad) {
          return failed(host, stage, bad.reason());
        }
        if (r instanceof ProxyResponse.Interim interim) {
          if (!claim(stage, Stage.INTERIM)) {
            return CLOSE;
          }
          clientOut.write(interim.head());
          continue;
        }
        ProxyResponse.Final last = (ProxyResponse.Final) r;
        if (!claim(stage, Stage.FINAL)) {
          return CLOSE;
        }
        clientOut.write(last.head());
        in.copyBody(last.body(), clientOut, RESPONSE_HEAD_CAP);
        return new Outcome(last.closeClient(), last.upstreamReusable() && !in.hasBuffered());
      }
    } catch (IOException e) {
      return failed(host, stage, "the host's response broke off: " + e.getMessage());
    }
  }

  /** The relay may write {@code next} (interim or final) unless a final answer went out. */
  private static boolean claim(AtomicReference<Stage> stage, Stage next) {
    return stage.compareAndSet(Stage.NOTHING, next) || stage.compareAndSet(Stage.INTERIM, next);
  }

  private Outcome failed(Socket host, AtomicReference<Stage> stage, String reason) {
    ProxyIo.closeQuietly(host);
    if (claim(stage, Stage.FINAL)) {
      try {
        ProxyIo.answer(client, 502, reason);
      } catch (IOException e) {
        // The client went away; nothing to tell it.
      }
    }
    return CLOSE;
  }

  /** The relay's outcome; the idle watchdog bounds the wait (it closes a silent connection). */
  private static Outcome await(Future<Outcome> relay) {
    try {
      return relay.get();
    } catch (ExecutionException e) {
      return CLOSE;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return CLOSE;
    }
  }

  /**
   * Whether a kept host connection was closed by the host (or sent bytes nobody asked for) since
   * its last response: a 1 ms read, so a request is not written into a connection already gone.
   */
  private static boolean peerClosed(Socket s) {
    try {
      s.setSoTimeout(1);
      s.getInputStream().read();
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;
    } finally {
      try {
        s.setSoTimeout(0);
      } catch (IOException e) {
        // Closed: the next use fails and closes the connection.
      }
    }
  }

  // --- CONNECT ---

  /** Connects, answers 200 and relays both ways; whether the tunnel was set up. */
  private boolean tunnel(String host, int port, byte[] early) throws IOException {
    dropUpstream();
    Socket s;
    try {
      s = egress.connect(host, port);
    } catch (IOException e) {
      refuse(502, "could not reach " + host + ":" + port + ": " + e.getMessage());
      return false;
    }
    attach(s);
    ProxyIo.writeFully(client, ESTABLISHED);
    OutputStream toHost = s.getOutputStream();
    toHost.write(early); // bytes the client sent right after the head
    toHost.flush();
    new Tunnel(client, s, this::touch, this::close).run(threads);
    return true;
  }

  // --- the sockets ---

  private void touch() {
    lastActivity = System.nanoTime();
  }

  /** The host connection in use from now; closed at once if this connection already closed. */
  private void attach(Socket s) {
    upstream = s;
    if (closed.get()) {
      ProxyIo.closeQuietly(s);
    }
  }

  private void dropUpstream() {
    Socket u = upstream;
    if (u != null) {
      ProxyIo.closeQuietly(u);
      upstream = null;
    }
    fromUpstream = null;
    upstreamReusable = false;
  }

  /**
   * Answers with an error, then {@link #finish()}es. Closing with unread bytes would reset the
   * connection, and the client would see the reset instead of the answer.
   */
  private void refuse(int status, String reason) throws IOException {
    ProxyIo.answer(client, status, reason);
    finish();
  }

  /** Half-closes the client, drains (bounded by {@link #DRAIN_CAP} and the watchdog) and closes. */
  private void finish() throws IOException {
    dropUpstream();
    client.shutdownOutput();
    ByteBuffer sink = ByteBuffer.allocate(4096);
    int drained = 0;
    while (drained < DRAIN_CAP) {
      sink.clear();
      int n = client.read(sink);
      if (n < 0) {
        break;
      }
      touch();
      drained += n;
    }
    close();
  }

  /*
   * The two directions use the client channel's read and write directly (ProxyIo): a channel's own
   * read and write may run at once on two threads, while Channels.newInputStream/newOutputStream of
   * one blocking channel share its blocking lock, so a pending read would stall every write.
   */
}
