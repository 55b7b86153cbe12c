package io.capsule.runtime.harness.contain;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The egress proxy's small I/O pieces: streams over one client channel that use its own read and
 * write (which may run at once on two threads, unlike {@code Channels.newInputStream} and {@code
 * newOutputStream} of one blocking channel, which share its blocking lock), streams that count as
 * activity for the idle watchdog, and the proxy's own error answers.
 */
final class ProxyIo {
  private ProxyIo() {}

  /** Reads the channel; {@code touch} after each read that brought bytes. */
  static final class ChannelInput extends InputStream {
    private final SocketChannel channel;
    private final Runnable touch;

    ChannelInput(SocketChannel channel, Runnable touch) {
      this.channel = channel;
      this.touch = touch;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = channel.read(ByteBuffer.wrap(b, off, len));
      if (n > 0) {
        touch.run();
      }
      return n;
    }
  }

  /** Writes the channel fully; {@code touch} after each write. */
  static final class ChannelOutput extends OutputStream {
    private final SocketChannel channel;
    private final Runnable touch;

    ChannelOutput(SocketChannel channel, Runnable touch) {
      this.channel = channel;
      this.touch = touch;
    }

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      writeFully(channel, b, off, len);
      touch.run();
    }
  }

  /** A host's input stream whose reads count as activity. */
  static final class Touching extends InputStream {
    private final InputStream in;
    private final Runnable touch;

    Touching(InputStream in, Runnable touch) {
      this.in = in;
      this.touch = touch;
    }

    @Override
    public int read() throws IOException {
      int b = in.read();
      touch.run();
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = in.read(b, off, len);
      if (n > 0) {
        touch.run();
      }
      return n;
    }
  }

  /** An output stream that remembers a failed write (for a host: it stopped reading). */
  static final class NotingFailure extends OutputStream {
    private final OutputStream out;
    private final AtomicBoolean failed;

    NotingFailure(OutputStream out, AtomicBoolean failed) {
      this.out = out;
      this.failed = failed;
    }

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      try {
        out.write(b, off, len);
      } catch (IOException e) {
        failed.set(true);
        throw e;
      }
    }
  }

  static void writeFully(SocketChannel channel, byte[] bytes) throws IOException {
    writeFully(channel, bytes, 0, bytes.length);
  }

  static void writeFully(SocketChannel channel, byte[] bytes, int off, int len) throws IOException {
    ByteBuffer out = ByteBuffer.wrap(bytes, off, len);
    while (out.hasRemaining()) {
      channel.write(out);
    }
  }

  /** A short plain-text error answer that closes the connection. */
  static void answer(SocketChannel client, int status, String reason) throws IOException {
    byte[] body = ("capsule egress proxy: " + reason + "\n").getBytes(StandardCharsets.UTF_8);
    String head =
        "HTTP/1.1 "
            + status
            + " "
            + phrase(status)
            + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
            + body.length
            + "\r\nConnection: close\r\n\r\n";
    byte[] bytes = head.getBytes(StandardCharsets.US_ASCII);
    writeFully(
        client, ByteBuffer.allocate(bytes.length + body.length).put(bytes).put(body).array());
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

  static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      // Already closed or broken: either way it is released.
    }
  }
}
