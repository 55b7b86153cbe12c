package io.capsule.hub.runner;

import io.capsule.protocol.ProtocolConfig;
import io.capsule.protocol.token.ProjectTokens;
import java.util.function.Predicate;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * {@link WsFixture}'s raw runners for tests outside this package (the queue and the task API in
 * {@code io.capsule.hub} drive a {@link HubServer} of their own there).
 */
public final class RawRunners {
  /** The tokens every fixture hub accepts. */
  public static final ProjectTokens TOKENS = WsFixture.TOKENS;

  private RawRunners() {}

  /** Short timers so the tests run in seconds, never sleeping ({@link WsFixture#fast}). */
  public static ProtocolConfig.Builder fast() {
    return WsFixture.fast();
  }

  /**
   * A node keeping the hub's store in {@code store} (an H2 file: what {@code --state-dir} opens),
   * with the store's schema created ({@link WsFixture#storeNode}).
   */
  public static org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit storeNode(
      io.capsule.hub.store.HubStore store) {
    return WsFixture.storeNode(store);
  }

  /** A raw runner over a real socket: what it received, in order; what it sends, as text. */
  public static final class Peer {
    private final WsFixture.RawPeer raw;

    private Peer(WsFixture.RawPeer raw) {
      this.raw = raw;
    }

    /** The first text received from now on that matches; fails after {@link WsFixture#WAIT}. */
    public String await(Predicate<String> match) throws InterruptedException {
      return WsFixture.await(raw.received, match);
    }

    /** Texts received and not yet awaited. */
    public java.util.List<String> unread() {
      return java.util.List.copyOf(raw.received);
    }

    public void send(String text) {
      raw.send(text);
    }

    /** Ends the connection from this side: the runner went away. */
    public void cut() {
      raw.cut();
    }
  }

  /**
   * Runner {@code id} of {@code project} signed in with {@code token} (a hub with tokens of its
   * own), with capsule {@code capsule} and one slot, answering pings; returned once the hub acked
   * its hello.
   */
  public static Peer helloSignedIn(
      ActorSystem<?> system, String url, String token, String project, String capsule)
      throws InterruptedException {
    WsFixture.RawPeer p = new WsFixture.RawPeer(system, url, token).answeringPings();
    p.send(WsFixture.hello(project, "ack", "error-frames", "capsule:" + capsule, "slots:1"));
    WsFixture.await(p.received, s -> s.contains("\"type\":\"ack\""));
    return new Peer(p);
  }

  /**
   * Runner {@code id} of {@code project} with capsule {@code hello} and one slot, answering pings,
   * its hello's {@code resume} being {@code resume}; returned once the hub acked that hello.
   */
  public static Peer hello(
      ActorSystem<?> system, String url, String project, String id, String resume)
      throws InterruptedException {
    return new Peer(WsFixture.helloRunner(system, url, project, id, resume));
  }
}
