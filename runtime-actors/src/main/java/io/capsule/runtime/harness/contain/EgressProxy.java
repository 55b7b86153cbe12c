package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One run's egress proxy: an HTTP/1.1 proxy on a Unix socket (bound into the sandbox, where a
 * forwarder on the sandbox's loopback reaches it), serving {@code CONNECT host:port} tunnels and
 * absolute-form plain-HTTP requests, each request of a persistent connection on its own ({@link
 * ProxyConnection}). Each {@code host:port} is checked against the run's {@link EgressPolicy}
 * before anything is resolved: a refused one gets a 403 with the reason and is counted and reported
 * (host and port only; a request body is never read). Granted names are resolved here, since the
 * sandbox has no DNS.
 *
 * <p>Bounded: at most {@code maxConnections} open (more get a 503), a request head of at most
 * {@code headerCapBytes} (more gets a 431), a connection idle in both directions (or a head
 * trickling in) for {@code idleTimeout} is closed, resolving and connecting take at most {@code
 * connectTimeout}.
 *
 * <p>Threads: blocking socket I/O on this proxy's own daemon threads, never an actor's: one
 * acceptor, at most two per open connection (its requests; its responses or a tunnel's other
 * direction), at most {@code maxConnections} resolving names, one watchdog. The pools have as many
 * threads as those bounds and queue instead of refusing: admission already bounds the tasks, and a
 * thread that just finished a task still counts until it takes the next, so a pool sized to the
 * bound that refused over it would drop a connection within the bound in a burst. {@link #close()}
 * ends all of them, closes every connection and removes the socket.
 */
public final class EgressProxy implements AutoCloseable {

  /** Told of each refused connection, on a proxy thread; must not block. */
  public interface Refusals {
    void refused(String host, int port, String reason, long refusedSoFar);
  }

  private final ServerSocketChannel server;
  private final Path dir;
  private final Path socket;
  private final EgressPolicy policy;
  private final ContainmentConfig config;
  private final Refusals refusals;
  private final ThreadPoolExecutor threads;
  private final ThreadPoolExecutor lookups;
  private final ScheduledExecutorService watchdog;
  private final Set<ProxyConnection> open = ConcurrentHashMap.newKeySet();
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
    this.threads = pool(2 * config.maxConnections() + 1, "capsule-egress");
    this.lookups = pool(config.maxConnections(), "capsule-egress-lookup");
    this.watchdog = Executors.newSingleThreadScheduledExecutor(daemon("capsule-egress-watchdog"));
  }

  /**
   * At most {@code size} threads, started on demand and ended after 30 s idle; tasks beyond them
   * wait in the queue, which the callers bound (see the class comment).
   */
  private static ThreadPoolExecutor pool(int size, String name) {
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            size, size, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), daemon(name));
    pool.allowCoreThreadTimeOut(true);
    return pool;
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
    open.forEach(ProxyConnection::close);
    threads.shutdownNow();
    lookups.shutdownNow();
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
      ProxyConnection[] self = new ProxyConnection[1];
      self[0] = new ProxyConnection(client, config, egress, threads, () -> open.remove(self[0]));
      open.add(self[0]);
      try {
        threads.execute(self[0]::serve);
      } catch (RejectedExecutionException e) {
        self[0].close(); // only once closing
      }
    }
  }

  private void closeIdle() {
    long now = System.nanoTime();
    long idle = config.idleTimeout().toNanos();
    for (ProxyConnection conn : open) {
      if (conn.idleNanos(now) > idle) {
        conn.close();
      }
    }
  }

  private final ProxyConnection.Egress egress =
      new ProxyConnection.Egress() {
        @Override
        public Optional<String> refusal(String host, int port) {
          Optional<String> refusal = policy.refusal(host, port);
          refusal.ifPresent(
              reason -> refusals.refused(host, port, reason, refused.incrementAndGet()));
          return refusal;
        }

        @Override
        public Socket connect(String host, int port) throws IOException {
          return EgressProxy.this.connect(host, port);
        }
      };

  /**
   * Resolves (an address literal in place, a name on the lookup pool: the resolver cannot be
   * interrupted, so a stuck lookup holds a lookup thread, never a connection's) and connects, each
   * within the connect timeout.
   */
  private Socket connect(String host, int port) throws IOException {
    long bound = config.connectTimeout().toMillis();
    InetAddress address = ipv4Literal(host);
    if (address == null) {
      Future<InetAddress> lookup = lookups.submit(() -> InetAddress.getByName(host));
      try {
        address = lookup.get(bound, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        lookup.cancel(true);
        lookups.remove((Runnable) lookup);
        throw new IOException("resolving " + host + " took over " + bound + " ms");
      } catch (ExecutionException e) {
        throw new IOException("could not resolve " + host, e.getCause());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted");
      }
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

  /** {@code a.b.c.d} with each part 0-255 as an address (nothing to look up), else null. */
  static InetAddress ipv4Literal(String host) throws IOException {
    String[] parts = host.split("\\.", -1);
    if (parts.length != 4) {
      return null;
    }
    byte[] bytes = new byte[4];
    for (int i = 0; i < 4; i++) {
      if (!parts[i].matches("[0-9]{1,3}") || Integer.parseInt(parts[i]) > 255) {
        return null;
      }
      bytes[i] = (byte) Integer.parseInt(parts[i]);
    }
    return InetAddress.getByAddress(bytes);
  }

  private void answerAndClose(SocketChannel client, int status, String reason) {
    try {
      ProxyIo.answer(client, status, reason);
    } catch (IOException e) {
      // The client went away; nothing to tell it.
    }
    closeQuietly(client);
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
    ProxyIo.closeQuietly(c);
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      // A leftover empty directory in /tmp is harmless; the next boot clears it.
    }
  }
}
