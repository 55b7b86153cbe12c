package io.capsule.runtime.harness.contain;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A host for the egress proxy's tests on 127.0.0.1:0, written on a plain {@link ServerSocket} and
 * independent of the proxy's own parser: it records each request as it arrived (its head as text,
 * its body's bytes as sent, and which of its connections carried it) and answers with the next
 * scripted reply, written as raw bytes so a test controls every byte of the framing.
 */
final class RecordingHost implements AutoCloseable {

  /** One request as it reached the host. */
  record Received(int connection, String head, String body) {}

  /**
   * What to answer: {@code raw} bytes (status line to body), {@code continueFirst} to send {@code
   * 100 Continue} before reading the body, {@code closeAfter} to close the connection after it.
   */
  record Reply(String raw, boolean continueFirst, boolean closeAfter) {
    static Reply of(String raw) {
      return new Reply(raw, false, false);
    }

    /** A 200 with {@code body} framed by Content-Length. */
    static Reply ok(String body) {
      return of("HTTP/1.1 200 OK\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
    }
  }

  private final ServerSocket server;
  private final LinkedBlockingQueue<Function<Received, Reply>> script = new LinkedBlockingQueue<>();
  private final List<Received> received = new CopyOnWriteArrayList<>();
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final AtomicInteger connections = new AtomicInteger();
  private final java.util.concurrent.Semaphore ended = new java.util.concurrent.Semaphore(0);

  RecordingHost() throws IOException {
    server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "recording-host");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return server.getLocalPort();
  }

  /** Answers the next request (in arrival order, over all connections) with {@code reply}. */
  RecordingHost then(Reply reply) {
    return then(r -> reply);
  }

  RecordingHost then(Function<Received, Reply> reply) {
    script.add(reply);
    return this;
  }

  List<Received> received() {
    return List.copyOf(received);
  }

  /** Connections the host accepted so far. */
  int connections() {
    return connections.get();
  }

  /** Whether a connection was closed by the proxy (an end of stream before a head) in time. */
  boolean awaitEndedByProxy(java.time.Duration within) throws InterruptedException {
    return ended.tryAcquire(within.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket s : sockets) {
      s.close();
    }
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        sockets.add(s);
        int number = connections.incrementAndGet();
        Thread t = new Thread(() -> serve(s, number), "recording-host-" + number);
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket s, int connection) {
    try (s) {
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      while (true) {
        String head = readHead(in);
        if (head == null) {
          ended.release();
          return;
        }
        Function<Received, Reply> next = script.poll();
        Reply reply = next == null ? Reply.of("HTTP/1.1 500 Unscripted\r\n\r\n") : null;
        Received partial = new Received(connection, head, "");
        if (reply == null) {
          reply = next.apply(partial);
        }
        if (reply.continueFirst()) {
          out.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          out.flush();
        }
        received.add(new Received(connection, head, readBody(head, in)));
        out.write(reply.raw().getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        if (reply.closeAfter()) {
          return;
        }
      }
    } catch (IOException | NumberFormatException e) {
      // The proxy closed the connection, or sent what a test meant to be refused.
    }
  }

  /** The head up to its empty line, or null at EOF before it. */
  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      head.write(b);
    }
    return head.toString(StandardCharsets.ISO_8859_1);
  }

  /** The body as sent: Content-Length bytes, or chunked up to the empty line after the last. */
  private static String readBody(String head, InputStream in) throws IOException {
    String lower = head.toLowerCase(Locale.ROOT);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (lower.contains("\r\ntransfer-encoding: chunked\r\n")) {
      while (true) {
        String line = readLine(in, body);
        int size = Integer.parseInt(line.split(";", 2)[0].strip(), 16);
        if (size == 0) {
          while (!readLine(in, body).isEmpty()) {
            // trailer fields
          }
          break;
        }
        body.write(in.readNBytes(size + 2));
      }
    } else {
      int at = lower.indexOf("\r\ncontent-length: ");
      if (at >= 0) {
        String value = lower.substring(at + 18, lower.indexOf("\r\n", at + 2));
        body.write(in.readNBytes(Integer.parseInt(value.strip())));
      }
    }
    return body.toString(StandardCharsets.ISO_8859_1);
  }

  /** One CRLF line, written to {@code copy} as read; returned without its CRLF. */
  private static String readLine(InputStream in, ByteArrayOutputStream copy) throws IOException {
    StringBuilder line = new StringBuilder();
    while (!line.toString().endsWith("\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("EOF inside a chunked body");
      }
      copy.write(b);
      line.append((char) b);
    }
    return line.substring(0, line.length() - 2);
  }
}
