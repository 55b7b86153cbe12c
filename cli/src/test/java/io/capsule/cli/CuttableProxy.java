package io.capsule.cli;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP forwarder a test can cut: {@link #cut()} closes every forwarded connection and
 * stops listening (a new connection is refused, as by a host that is down) until {@link #heal()}
 * listens on the same port again. Between a runner and its hub it is a network outage, with real
 * sockets on both sides.
 *
 * <p>Threads: one acceptor while listening and two pumps per connection, all daemons, all ended by
 * {@link #close()}.
 */
final class CuttableProxy implements Closeable {
  private final int target;
  private final int port;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile ServerSocket server;

  CuttableProxy(int targetPort) throws IOException {
    this.target = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.port = server.getLocalPort();
    listen(server);
  }

  int port() {
    return port;
  }

  /** Ends every connection through it and stops listening. */
  synchronized void cut() {
    quietly(server);
    open.forEach(CuttableProxy::quietly);
  }

  /** Listens on the same port again. */
  synchronized void heal() throws IOException {
    if (!server.isClosed()) {
      return;
    }
    ServerSocket again = new ServerSocket();
    again.setReuseAddress(true); // the port's closed connections may linger in TIME_WAIT
    again.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
    server = again;
    listen(again);
  }

  @Override
  public void close() {
    cut();
  }

  private void listen(ServerSocket listening) {
    Thread acceptor = new Thread(() -> accept(listening), "cuttable-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  private void accept(ServerSocket listening) {
    while (!listening.isClosed()) {
      Socket in;
      try {
        in = listening.accept();
      } catch (IOException e) {
        return; // cut or closed
      }
      try {
        Socket out = new Socket(InetAddress.getLoopbackAddress(), target);
        open.add(in);
        open.add(out);
        pump(in, out);
        pump(out, in);
      } catch (IOException e) {
        quietly(in);
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              try {
                from.getInputStream().transferTo(to.getOutputStream());
              } catch (IOException e) {
                // cut, or the other side closed: either way this connection is over
              } finally {
                quietly(from);
                quietly(to);
                open.remove(from);
                open.remove(to);
              }
            },
            "cuttable-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void quietly(Closeable c) {
    try {
      c.close();
    } catch (IOException e) {
      // closing is best effort in a test fixture
    }
  }
}
