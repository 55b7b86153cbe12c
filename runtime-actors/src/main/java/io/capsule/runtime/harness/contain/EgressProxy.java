package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One run's egress proxy: an HTTP proxy on a Unix socket (bound into the sandbox, where a forwarder
 * on the sandbox's loopback reaches it), serving {@code CONNECT host:port} tunnels and
 * absolute-form plain-HTTP requests. Each {@code host:port} is checked against the run's {@link
 * EgressPolicy} before anything is resolved: a refused one gets a 403 with the reason and is
 * counted and reported (host and port only; a request body is never read). Granted names are
 * resolved here, since the sandbox has no DNS.
 *
 * <p>Bounded: at most {@code maxConnections} open (more get a 503), a request head of at most
 * {@code headerCapBytes} (more gets a 431), a connection idle in both directions (or a head
 * trickling in) for {@code idleTimeout} is closed, resolving and connecting take at most {@code
 * connectTimeout}.
 *
 * <p>Threads: blocking socket I/O on this proxy's own daemon threads (one acceptor, two per open
 * connection, one watchdog), never an actor's. {@link #close()} ends all of them, closes every
 * connection and removes the socket.
 *
 * <p>Over 400 lines because the acceptor, the per-connection relay and the watchdog share one set
 * of limits, counters and sockets; the decisions are already pure and table-tested apart ({@link
 * EgressPolicy}, {@code ProxyRequest}).
 */
public final class EgressProxy implements AutoCloseable {

  /** Told of each refused connection, on a proxy thread; must not block. */
  public interface Refusals {
    void refused(String host, int port, String reason, long refusedSoFar);
  }

  private static final byte[] ESTABLISHED =
      "HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private final ServerSocketChannel server;
  private final Path dir;
  private final Path socket;
  private final EgressPolicy policy;
  private final ContainmentConfig config;
  private final Refusals refusals;
  private final ThreadPoolExecutor threads;
  private final ScheduledExecutorService watchdog;
  private final Set<Conn> open = ConcurrentHashMap.newKeySet();
  private final AtomicLong refused = new AtomicLong();
  private volatile boolean closed;

  private EgressProxy(
      ServerSocketChannel server,
      Path dir,
      Path socket,
      EgressPolicy policy,
      ContainmentConfig config,
      Refusals refusals) {
    this.server = server;
    this.dir = dir;
    this.socket = socket;
    this.policy = policy;
    this.config = config;
    this.refusals = refusals;
    this.threads =
        new ThreadPoolExecutor(
            1,
            2 * config.maxConnections() + 2,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            daemon("capsule-egress"));
    this.watchdog = Executors.newSingleThreadScheduledExecutor(daemon("capsule-egress-watchdog"));
  }

  /**
   * Binds a new proxy on a socket in a fresh private directory under the temp dir (kept short: a
   * Unix socket path has at most 107 bytes) and starts accepting. Blocking (file work).
   */
  public static EgressProxy start(EgressPolicy policy, ContainmentConfig config, Refusals refusals)
      throws IOException {
    Path dir =
        Files.createTempDirectory(
            Path.of("/tmp"),
            "capsule-egress-",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path socket = dir.resolve("proxy.sock");
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      server.bind(UnixDomainSocketAddress.of(socket), 64);
    } catch (IOException e) {
      server.close();
      deleteQuietly(socket);
      deleteQuietly(dir);
      throw e;
    }
    EgressProxy proxy = new EgressProxy(server, dir, socket, policy, config, refusals);
    proxy.threads.execute(proxy::acceptLoop);
    long tick = Math.max(100, Math.min(1000, config.idleTimeout().toMillis() / 4));
    proxy.watchdog.scheduleAtFixedRate(proxy::closeIdle, tick, tick, TimeUnit.MILLISECONDS);
    return proxy;
  }

  /** The Unix socket the sandbox's forwarder connects to. */
  public Path socket() {
    return socket;
  }

  /** Connections refused so far. */
  public long refusedCount() {
    return refused.get();
  }

  /** Connections open now (for tests and the doctor). */
  public int openConnections() {
    return open.size();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    closeQuietly(server);
    open.forEach(Conn::close);
    threads.shutdownNow();
    watchdog.shutdownNow();
    deleteQuietly(socket);
    deleteQuietly(dir);
  }

  // --- accepting ---

  private void acceptLoop() {
    while (!closed) {
      SocketChannel client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      if (open.size() >= config.maxConnections()) {
        answerAndClose(client, 503, "more than " + config.maxConnections() + " open connections");
        continue;
      }
      Conn conn = new Conn(client);
      open.add(conn);
      try {
        threads.execute(() -> serve(conn));
      } catch (RejectedExecutionException e) {
        conn.close();
      }
    }
  }

  private void closeIdle() {
    long now = System.nanoTime();
    long idle = config.idleTimeout().toNanos();
    for (Conn conn : open) {
      if (now - conn.lastActivity > idle) {
        conn.close();
      }
    }
  }

  // --- one connection ---

  private void serve(Conn conn) {
    try {
      ByteBuffer buffer = ByteBuffer.allocate(config.headerCapBytes());
      int headEnd = readHead(conn, buffer);
      if (headEnd < 0) {
        if (headEnd == -2) {
          refuse(conn, 431, "the request head is over " + config.headerCapBytes() + " bytes");
        }
        return;
      }
      byte[] head = Arrays.copyOf(buffer.array(), headEnd);
      byte[] early = Arrays.copyOfRange(buffer.array(), headEnd, buffer.position());
      ProxyRequest request = ProxyRequest.parse(head);
      if (request instanceof ProxyRequest.Bad bad) {
        refuse(conn, 400, bad.reason());
        return;
      }
      String host = request instanceof ProxyRequest.Connect c ? c.host() : forward(request).host();
      int port = request instanceof ProxyRequest.Connect c ? c.port() : forward(request).port();
      Optional<String> refusal = policy.refusal(host, port);
      if (refusal.isPresent()) {
        long count = refused.incrementAndGet();
        refusals.refused(host, port, refusal.get(), count);
        refuse(conn, 403, refusal.get());
        return;
      }
      Socket upstream;
      try {
        upstream = connect(host, port);
      } catch (IOException e) {
        refuse(conn, 502, "could not reach " + host + ":" + port + ": " + e.getMessage());
        return;
      }
      conn.upstream = upstream;
      if (closed) {
        return;
      }
      OutputStream toUpstream = upstream.getOutputStream();
      if (request instanceof ProxyRequest.Forward f) {
        toUpstream.write(f.head());
      } else {
        writeFully(conn.client, ESTABLISHED, 0, ESTABLISHED.length);
      }
      toUpstream.write(early); // bytes the client sent right after the head
      toUpstream.flush();
      InputStream fromUpstream = upstream.getInputStream();
      threads.execute(() -> pumpToClient(conn, fromUpstream));
      pumpToUpstream(conn, toUpstream);
    } catch (IOException | RejectedExecutionException e) {
      conn.close();
    } finally {
      if (conn.upstream == null) {
        conn.close();
      }
    }
  }

  private static ProxyRequest.Forward forward(ProxyRequest request) {
    return (ProxyRequest.Forward) request;
  }

  /**
   * Reads until the blank line ending the head. Returns the head's length (the buffer holds it and
   * any bytes read after it, up to its position), -1 at EOF or close, -2 when the cap is reached
   * first.
   */
  private int readHead(Conn conn, ByteBuffer buffer) throws IOException {
    int scanned = 0;
    while (true) {
      if (!buffer.hasRemaining()) {
        return -2;
      }
      int n = conn.client.read(buffer);
      if (n < 0) {
        return -1;
      }
      conn.touch();
      byte[] a = buffer.array();
      for (int i = Math.max(0, scanned - 3); i < buffer.position(); i++) {
        if (a[i] == '\n' && i >= 1 && a[i - 1] == '\n') {
          return i + 1;
        }
        if (a[i] == '\n' && i >= 3 && a[i - 1] == '\r' && a[i - 2] == '\n' && a[i - 3] == '\r') {
          return i + 1;
        }
      }
      scanned = buffer.position();
    }
  }

  private Socket connect(String host, int port) throws IOException {
    long bound = config.connectTimeout().toMillis();
    InetAddress address;
    try {
      address =
          CompletableFuture.supplyAsync(() -> resolve(host), threads)
              .get(bound, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new IOException("resolving " + host + " took over " + bound + " ms");
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IOException("could not resolve " + host, e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted");
    }
    Socket s = new Socket();
    try {
      s.connect(new InetSocketAddress(address, port), (int) Math.min(Integer.MAX_VALUE, bound));
    } catch (IOException e) {
      s.close();
      throw e;
    }
    return s;
  }

  private static InetAddress resolve(String host) {
    try {
      return InetAddress.getByName(host);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /*
   * The two directions use the client channel's read and write directly: a channel's own read and
   * write may run at once on two threads, while Channels.newInputStream/newOutputStream of one
   * blocking channel share its blocking lock, so a pending read would stall every write.
   */

  /** Client to upstream until EOF, then half-closes the upstream; an error closes both. */
  private void pumpToUpstream(Conn conn, OutputStream out) {
    ByteBuffer chunk = ByteBuffer.allocate(16 * 1024);
    try {
      while (conn.client.read(chunk) >= 0) {
        conn.touch();
        out.write(chunk.array(), 0, chunk.position());
        out.flush();
        chunk.clear();
      }
      conn.upstream.shutdownOutput();
      conn.directionDone();
    } catch (IOException e) {
      conn.close();
    }
  }

  /** Upstream to client until EOF, then half-closes the client; an error closes both. */
  private void pumpToClient(Conn conn, InputStream in) {
    byte[] chunk = new byte[16 * 1024];
    try {
      int n;
      while ((n = in.read(chunk)) >= 0) {
        conn.touch();
        writeFully(conn.client, chunk, 0, n);
      }
      conn.client.shutdownOutput();
      conn.directionDone();
    } catch (IOException e) {
      conn.close();
    }
  }

  private static void writeFully(SocketChannel channel, byte[] bytes, int offset, int length)
      throws IOException {
    ByteBuffer out = ByteBuffer.wrap(bytes, offset, length);
    while (out.hasRemaining()) {
      channel.write(out);
    }
  }

  /** How much of an unread request is drained after an error answer before closing. */
  private static final int DRAIN_CAP = 64 * 1024;

  /**
   * Answers with an error, then drains (bounded by {@link #DRAIN_CAP} and the idle watchdog) what
   * the client still sends: closing with unread bytes would reset the connection, and the client
   * would see the reset instead of the answer.
   */
  private static void refuse(Conn conn, int status, String reason) throws IOException {
    answer(conn.client, status, reason);
    conn.client.shutdownOutput();
    ByteBuffer sink = ByteBuffer.allocate(4096);
    int drained = 0;
    while (drained < DRAIN_CAP) {
      sink.clear();
      int n = conn.client.read(sink);
      if (n < 0) {
        break;
      }
      conn.touch();
      drained += n;
    }
  }

  private void answerAndClose(SocketChannel client, int status, String reason) {
    try {
      answer(client, status, reason);
    } catch (IOException e) {
      // The client went away; nothing to tell it.
    }
    closeQuietly(client);
  }

  private static void answer(SocketChannel client, int status, String reason) throws IOException {
    byte[] body = ("capsule egress proxy: " + reason + "\n").getBytes(StandardCharsets.UTF_8);
    String head =
        "HTTP/1.1 "
            + status
            + " "
            + phrase(status)
            + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
            + body.length
            + "\r\nConnection: close\r\n\r\n";
    ByteBuffer out = ByteBuffer.allocate(head.length() + body.length);
    out.put(head.getBytes(StandardCharsets.US_ASCII)).put(body).flip();
    while (out.hasRemaining()) {
      client.write(out);
    }
  }

  static String phrase(int status) {
    return switch (status) {
      case 400 -> "Bad Request";
      case 403 -> "Forbidden";
      case 431 -> "Request Header Fields Too Large";
      case 502 -> "Bad Gateway";
      case 503 -> "Service Unavailable";
      default -> "Error";
    };
  }

  /** A client connection and, once connected, its upstream. */
  private final class Conn {
    final SocketChannel client;
    volatile Socket upstream;
    volatile long lastActivity = System.nanoTime();
    private final AtomicInteger directionsDone = new AtomicInteger();
    private final java.util.concurrent.atomic.AtomicBoolean closedOnce =
        new java.util.concurrent.atomic.AtomicBoolean();

    Conn(SocketChannel client) {
      this.client = client;
    }

    void touch() {
      lastActivity = System.nanoTime();
    }

    void directionDone() {
      if (directionsDone.incrementAndGet() == 2) {
        close();
      }
    }

    void close() {
      if (!closedOnce.compareAndSet(false, true)) {
        return;
      }
      open.remove(this);
      closeQuietly(client);
      Socket u = upstream;
      if (u != null) {
        closeQuietly(u);
      }
    }
  }

  private static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      // Already closed or broken: either way it is released.
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      // A leftover empty directory in /tmp is harmless; the next boot clears it.
    }
  }
}
