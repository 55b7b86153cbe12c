package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@code CONNECT} tunnel's two directions: bytes copied as they come, each direction until its
 * end of stream, which half-closes the other side; the connection closes once both ended, or at the
 * first error. One direction runs on the caller's thread, the other on the executor.
 */
final class Tunnel {

  /** Bytes read at once in each direction. */
  private static final int CHUNK = 16 * 1024;

  private final SocketChannel client;
  private final Socket host;
  private final Runnable touch;
  private final Runnable close;
  private final AtomicInteger directionsDone = new AtomicInteger();

  /**
   * @param touch called after bytes moved (the idle watchdog's clock)
   * @param close closes the connection: both sockets
   */
  Tunnel(SocketChannel client, Socket host, Runnable touch, Runnable close) {
    this.client = client;
    this.host = host;
    this.touch = touch;
    this.close = close;
  }

  /** Relays host to client on {@code threads} and client to host here, until this side ends. */
  void run(Executor threads) throws IOException {
    InputStream fromHost = host.getInputStream();
    OutputStream toHost = host.getOutputStream();
    threads.execute(() -> toClient(fromHost));
    toHost(toHost);
  }

  /*
   * The client channel's own read and write: they may run at once on two threads (see ProxyIo).
   */

  private void toHost(OutputStream out) {
    ByteBuffer chunk = ByteBuffer.allocate(CHUNK);
    try {
      while (client.read(chunk) >= 0) {
        touch.run();
        out.write(chunk.array(), 0, chunk.position());
        chunk.clear();
      }
      host.shutdownOutput();
      directionDone();
    } catch (IOException e) {
      close.run();
    }
  }

  private void toClient(InputStream in) {
    byte[] chunk = new byte[CHUNK];
    try {
      int n;
      while ((n = in.read(chunk)) >= 0) {
        touch.run();
        ProxyIo.writeFully(client, chunk, 0, n);
      }
      client.shutdownOutput();
      directionDone();
    } catch (IOException e) {
      close.run();
    }
  }

  private void directionDone() {
    if (directionsDone.incrementAndGet() == 2) {
      close.run();
    }
  }
}
