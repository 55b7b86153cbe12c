package io.capsule.protocol.ws;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Which hub node a runner dials next: the pure core of the runner client's failover. A runner given
 * several URLs ({@code ws://a/v1/runner,ws://b/v1/runner}, nodes of one hub cluster) dials them
 * round-robin: a connection that ends or an attempt that fails moves it to the next URL, and the
 * client's exponential back-off grows only once per full round of failed URLs, so a runner whose
 * node died tries the surviving nodes at the shortest delay before it slows down.
 *
 * <p>Moving on after a connection ends (rather than redialling the same node first) is deliberate:
 * a node that was killed or partitioned is the likeliest to fail again, and any node of the cluster
 * can resume the runner (its seqs live in the runner and in the shared journal, not in the node).
 * The one exception is a node that closes with 4012 ({@link CloseCodes#MOVED}): it is alive and in
 * its cluster, only the project's brain moved, so it is dialled again first ({@link #redial}); the
 * next URL might be the very node whose loss moved the brain. With one URL this is the plain
 * reconnect loop: the same URL, back-off exponent = failures.
 *
 * <p>Not thread-safe: owned by the client's actor.
 */
public final class HubEndpoints {
  private final List<String> urls;
  private int current;
  private int failures; // consecutive, since the last good connection

  private HubEndpoints(List<String> urls) {
    this.urls = urls;
  }

  /**
   * The URLs of {@code spec}: one URL or several separated by commas (spaces around them ignored).
   *
   * @throws IllegalArgumentException naming the first entry that is empty, not a {@code ws://} or
   *     {@code wss://} URL with a host, or repeated
   */
  public static HubEndpoints parse(String spec) {
    if (spec == null || spec.isBlank()) {
      throw new IllegalArgumentException("no hub URL given");
    }
    Set<String> seen = new LinkedHashSet<>();
    for (String raw : spec.split(",", -1)) {
      String url = raw.strip();
      if (url.isEmpty()) {
        throw new IllegalArgumentException("an empty hub URL in '" + spec + "'");
      }
      check(url);
      if (!seen.add(url)) {
        throw new IllegalArgumentException("the hub URL " + url + " is given twice");
      }
    }
    return new HubEndpoints(List.copyOf(new ArrayList<>(seen)));
  }

  private static void check(String url) {
    URI uri;
    try {
      uri = new URI(url);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("'" + url + "' is not a URL: " + e.getReason());
    }
    String scheme = uri.getScheme();
    if (scheme == null || !(scheme.equals("ws") || scheme.equals("wss"))) {
      throw new IllegalArgumentException(
          "'" + url + "' is not a ws:// or wss:// URL (e.g. ws://127.0.0.1:8600/v1/runner)");
    }
    if (uri.getHost() == null) {
      throw new IllegalArgumentException("'" + url + "' names no host");
    }
  }

  /** The URLs in dialling order. */
  public List<String> urls() {
    return urls;
  }

  /** The URL to dial now. */
  public String current() {
    return urls.get(current);
  }

  /** The connection to {@link #current()} is up: the next failure starts from a short delay. */
  public void connected() {
    failures = 0;
  }

  /**
   * The connection to {@link #current()} ended, or an attempt at it failed: moves to the next URL
   * and returns the back-off exponent for the wait before dialling it: the number of full rounds of
   * failed URLs so far (0 until every URL has failed once since the last good connection).
   */
  public int failed() {
    int exponent = failures / urls.size();
    failures++;
    current = (current + 1) % urls.size();
    return exponent;
  }

  /**
   * The node at {@link #current()} closed the connection but is fine to dial again (close 4012):
   * stays on it and returns the back-off exponent as {@link #failed()} does.
   */
  public int redial() {
    int exponent = failures / urls.size();
    failures++;
    return exponent;
  }
}
