package io.capsule.bench.contain;

import com.sun.net.httpserver.HttpServer;
import io.capsule.config.manifest.NetworkEntry;
import io.capsule.runtime.harness.contain.ContainmentConfig;
import io.capsule.runtime.harness.contain.EgressPolicy;
import io.capsule.runtime.harness.contain.EgressProxy;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What both containment benchmarks stand on: an origin answering {@code ok} on loopback, the run's
 * egress proxy allowing only it, and the {@code socat} forwarder a contained harness dials,
 * listening on a loopback TCP port. Set up once per trial, outside any measurement.
 */
final class EgressRig implements AutoCloseable {
  static final ContainmentConfig CONFIG =
      ContainmentConfig.defaults(ContainmentConfig.Mode.REQUIRED);

  private final HttpServer origin;
  private final EgressProxy proxy;
  private final Process forwarder;
  private final int forwarderPort;

  private EgressRig(HttpServer origin, EgressProxy proxy, Process forwarder, int forwarderPort) {
    this.origin = origin;
    this.proxy = proxy;
    this.forwarder = forwarder;
    this.forwarderPort = forwarderPort;
  }

  static EgressRig start() throws IOException, InterruptedException {
    HttpServer origin =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    origin.createContext(
        "/",
        exchange -> {
          byte[] body = "ok".getBytes(StandardCharsets.US_ASCII);
          exchange.sendResponseHeaders(200, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    origin.start();
    int port = origin.getAddress().getPort();
    EgressProxy proxy =
        EgressProxy.start(
            new EgressPolicy(List.of(NetworkEntry.parse("127.0.0.1:" + port))),
            CONFIG,
            (h, p, r, n) -> {});
    int forwarderPort;
    try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      forwarderPort = free.getLocalPort();
    }
    Process forwarder =
        new ProcessBuilder(
                CONFIG.socat().toString(),
                "TCP-LISTEN:" + forwarderPort + ",bind=127.0.0.1,reuseaddr,fork",
                "UNIX-CONNECT:" + proxy.socket())
            .redirectErrorStream(true)
            .start();
    EgressRig rig = new EgressRig(origin, proxy, forwarder, forwarderPort);
    try {
      awaitListening(forwarderPort);
    } catch (IOException | InterruptedException e) {
      rig.close();
      throw e;
    }
    return rig;
  }

  /** The origin's port (the only destination the proxy allows). */
  int originPort() {
    return origin.getAddress().getPort();
  }

  /** Where the forwarder listens: the path a contained harness's traffic takes. */
  int forwarderPort() {
    return forwarderPort;
  }

  /** The proxy's Unix socket, as the sandbox binds it. */
  Path proxySocket() {
    return proxy.socket();
  }

  @Override
  public void close() {
    forwarder.destroyForcibly();
    proxy.close();
    origin.stop(0);
  }

  private static void awaitListening(int port) throws InterruptedException, IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (System.nanoTime() < deadline) {
      try {
        new Socket(InetAddress.getLoopbackAddress(), port).close();
        return;
      } catch (IOException e) {
        TimeUnit.MILLISECONDS.sleep(10); // setup only, outside any measurement
      }
    }
    throw new IOException("socat did not listen on " + port + " within 5 s");
  }
}
