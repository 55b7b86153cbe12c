package io.capsule.runtime.harness.contain;

import io.capsule.config.manifest.NetworkEntry;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Whether a {@code host:port} the harness asks the egress proxy for is granted by {@code
 * capabilities.network.allow}. Pure. The rules are the manifest's ({@link NetworkEntry#covers}):
 * the exact host, or a subdomain of a {@code *.} entry; the entry's port, or any port when it names
 * none. An address literal is only granted when the manifest names that literal.
 */
public final class EgressPolicy {

  private final List<NetworkEntry> allow;

  public EgressPolicy(List<NetworkEntry> allow) {
    this.allow = List.copyOf(allow);
  }

  /** Empty when granted; else the reason the 403 states (host and port, never more). */
  public Optional<String> refusal(String host, int port) {
    if (port < 1 || port > 65535) {
      return Optional.of("port " + port + " is outside 1-65535");
    }
    String name = host.toLowerCase(Locale.ROOT);
    if (name.endsWith(".")) {
      name = name.substring(0, name.length() - 1); // the root label: same host
    }
    NetworkEntry need;
    try {
      need = NetworkEntry.parse(name + ":" + port);
    } catch (IllegalArgumentException e) {
      return Optional.of("'" + host + "' is not a host name capabilities.network.allow can grant");
    }
    if (need.wildcard()) {
      return Optional.of("'" + host + "' is not a single host");
    }
    NetworkEntry exact = new NetworkEntry(need.host(), false, OptionalInt.of(port));
    for (NetworkEntry grant : allow) {
      if (grant.covers(exact)) {
        return Optional.empty();
      }
    }
    return Optional.of(need.host() + ":" + port + " is not in capabilities.network.allow " + allow);
  }
}
