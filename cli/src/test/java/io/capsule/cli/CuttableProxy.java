package io.capsule.cli;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP forwarder a test can cut: {@link #cut()} closes every forwarded connection and,
 * until {@link #heal()}, closes each new one as soon as it is accepted (a connection attempt fails,
 * as against a host that is down). Between a runner and its hub it is a network outage, with real
 * sockets on both sides. {@link #stall()} is the quieter outage of a partition: nothing is closed,
 * nothing more is forwarded, and neither side hears that the other went away.
 *
 * <p>It keeps listening through a cut: stopping and listening again on the same port failed once
 * with "address already in use" on a busy machine (a free port can be taken meanwhile by any
 * outgoing connection's local end).
 *
 * <p>Threads: one acceptor and two pumps per connection, all daemons, all ended by {@link
 * #close()}.
 */
final class CuttableProxy implements Closeable {
  private final int target;
  private final ServerSocket server;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean down;
  private volatile boolean silent;

  CuttableProxy(int targetPort) throws IOException {
    this.target = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "cuttable-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return server.getLocalPort();
  }

  /** Ends every connection through it; new ones fail until {@link #heal()}. */
  synchronized void cut() {
    down = true;
    open.forEach(CuttableProxy::quietly);
  }

  /**
   * Stops forwarding without closing anything, as a network that drops every packet: bytes from
   * either side are read and dropped, a side that closes is not told to the other, and a new
   * connection is accepted and left unanswered. Until {@link #close()}.
   */
  void stall() {
    silent = true;
  }

  /** Lets new connections through again. */
  synchronized void heal() {
    down = false;
  }

  @Override
  public void close() {
    cut();
    quietly(server);
  }

  private void accept() {
    while (!server.isClosed()) {
      Socket in;
      try {
        in = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      synchronized (this) {
        if (down) {
          quietly(in); // the outage: the attempt fails at once
          continue;
        }
        open.add(in); // under the lock: a cut cannot miss a connection accepted meanwhile
        if (silent) {
          continue; // accepted by the kernel, never answered
        }
      }
      try {
        Socket out = new Socket(InetAddress.getLoopbackAddress(), target);
        open.add(out);
        pump(in, out);
        pump(out, in);
      } catch (IOException e) {
        open.remove(in);
        quietly(in);
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try {
                java.io.InputStream in = from.getInputStream();
                java.io.OutputStream out = to.getOutputStream();
                for (int n; (n = in.read(buffer)) >= 0; ) {
                  if (!silent) {
                    out.write(buffer, 0, n);
                    out.flush();
                  }
                }
              } catch (IOException e) {
                // cut, or the other side closed: either way this connection is over
              } finally {
                quietly(from);
                open.remove(from);
                if (!silent) { // stalled: the other side must not hear of it
                  quietly(to);
                  open.remove(to);
                }
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
