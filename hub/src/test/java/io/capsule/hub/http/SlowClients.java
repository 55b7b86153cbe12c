package io.capsule.hub.http;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A slowloris on loopback: {@code count} connections spread over source addresses 127.0.0.2 and up,
 * each sending a request line and then one header byte per tick, never finishing its head. A
 * connection the server closes is opened again on the next tick, until {@link #close}. One thread
 * and one selector do everything, so closes are seen when they happen (the lifetimes measured are
 * the server's doing, not this driver's), and 2,000 connections cost one thread.
 */
public final class SlowClients implements AutoCloseable {
  private static final byte[] START =
      "GET /ping HTTP/1.1\r\nHost: hub\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII);

  private final InetSocketAddress server;
  private final Duration tick;
  private final Selector selector;
  private final Thread loop;
  private final List<Slot> slots = new ArrayList<>();
  private final AtomicLong connects = new AtomicLong();
  private final AtomicLong refusals = new AtomicLong();
  private final AtomicLong longestAdmittedLifeMillis = new AtomicLong();
  private volatile boolean stopped;

  private static final class Slot {
    final String source;
    SocketChannel channel;
    long openedAt;
    final StringBuilder answer = new StringBuilder();

    Slot(String source) {
      this.source = source;
    }
  }

  public SlowClients(InetSocketAddress server, int count, int addresses, Duration tick) {
    this.server = server;
    this.tick = tick;
    try {
      this.selector = Selector.open();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (int i = 0; i < count; i++) {
      slots.add(new Slot("127.0.0." + (2 + i % addresses)));
    }
    loop = new Thread(this::run, "slow-clients");
    loop.start();
  }

  public long connects() {
    return connects.get();
  }

  /** Connections answered 503 (refused at the door) and closed. */
  public long refusals() {
    return refusals.get();
  }

  /** The longest time the server let an admitted (not 503), never-finished head stay open. */
  public Duration longestAdmittedLife() {
    return Duration.ofMillis(longestAdmittedLifeMillis.get());
  }

  private void run() {
    ByteBuffer in = ByteBuffer.allocate(4096);
    long nextTick = System.nanoTime();
    try {
      while (!stopped) {
        long now = System.nanoTime();
        if (now >= nextTick) {
          for (Slot s : slots) {
            if (s.channel == null) {
              open(s);
            } else if (s.channel.isConnected()) {
              dribble(s);
            }
          }
          nextTick = now + tick.toNanos();
        }
        selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextTick - System.nanoTime())));
        for (SelectionKey k : selector.selectedKeys()) {
          Slot s = (Slot) k.attachment();
          if (!k.isValid()) {
            continue;
          }
          if (k.isConnectable()) {
            connected(s, k);
          } else if (k.isReadable()) {
            read(s, in);
          }
        }
        selector.selectedKeys().clear();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      slots.forEach(SlowClients::closeQuietly);
      try {
        selector.close();
      } catch (IOException e) {
        // closing; nothing left to do
      }
    }
  }

  private void open(Slot s) {
    try {
      SocketChannel ch = SocketChannel.open();
      ch.configureBlocking(false);
      ch.bind(new InetSocketAddress(s.source, 0));
      s.channel = ch;
      s.answer.setLength(0);
      if (ch.connect(server)) {
        connected(s, ch.register(selector, 0, s));
      } else {
        ch.register(selector, SelectionKey.OP_CONNECT, s);
      }
    } catch (IOException e) {
      closeQuietly(s); // the next tick tries again
    }
  }

  private void connected(Slot s, SelectionKey k) {
    try {
      s.channel.finishConnect();
      s.channel.write(ByteBuffer.wrap(START));
      s.openedAt = System.nanoTime();
      connects.incrementAndGet();
      k.interestOps(SelectionKey.OP_READ);
    } catch (IOException e) {
      closeQuietly(s);
    }
  }

  private void dribble(Slot s) {
    try {
      s.channel.write(ByteBuffer.wrap(new byte[] {'a'}));
    } catch (IOException e) {
      closed(s);
    }
  }

  private void read(Slot s, ByteBuffer in) {
    try {
      in.clear();
      int n;
      while ((n = s.channel.read(in)) > 0) {
        if (s.answer.length() < 64) {
          s.answer.append(new String(in.array(), 0, n, StandardCharsets.ISO_8859_1));
        }
        in.clear();
      }
      if (n < 0) {
        closed(s);
      }
    } catch (IOException e) {
      closed(s);
    }
  }

  private void closed(Slot s) {
    if (s.answer.toString().startsWith("HTTP/1.1 503")) {
      refusals.incrementAndGet();
    } else {
      long life = Duration.ofNanos(System.nanoTime() - s.openedAt).toMillis();
      longestAdmittedLifeMillis.accumulateAndGet(life, Math::max);
    }
    closeQuietly(s); // reopened on the next tick
  }

  private static void closeQuietly(Slot s) {
    try {
      if (s.channel != null) {
        s.channel.close();
      }
    } catch (IOException e) {
      // closing a dead socket; nothing to do
    }
    s.channel = null;
  }

  @Override
  public void close() {
    stopped = true;
    selector.wakeup();
    try {
      loop.join(30_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping the slow clients", e);
    }
    if (loop.isAlive()) {
      throw new IllegalStateException("the slow clients' loop did not stop");
    }
  }
}
