package io.capsule.hub.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/** HTTP/1.1 by hand on a plain socket, for the {@code GuardedBinding*Test} classes. */
final class HttpWire {
  private HttpWire() {}

  static Socket connect(GuardedBinding b, String from) throws IOException {
    Socket s = new Socket();
    s.bind(new InetSocketAddress(from, 0));
    s.connect(b.localAddress(), 5_000);
    s.setSoTimeout(20_000);
    return s;
  }

  static void closeAll(List<Socket> sockets) throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
  }

  static void write(Socket s, String text) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(text.getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  /** One response with a Content-Length body, read off a kept-alive connection. */
  static String readResponse(Socket s) throws IOException {
    InputStream in = s.getInputStream();
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int c = in.read();
      if (c < 0) {
        throw new IOException("closed in the middle of a response head: " + head);
      }
      head.append((char) c);
    }
    int length = 0;
    for (String line : head.toString().split("\r\n")) {
      if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring("content-length:".length()).trim());
      }
    }
    byte[] body = in.readNBytes(length);
    return head + new String(body, StandardCharsets.UTF_8);
  }

  /** Everything until the server closes (an empty string when it closes without a word). */
  static String readToEnd(Socket s, Duration max) throws IOException {
    s.setSoTimeout((int) max.toMillis());
    try {
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    } catch (java.net.SocketException e) {
      return ""; // reset: closed without a word
    }
  }
}
