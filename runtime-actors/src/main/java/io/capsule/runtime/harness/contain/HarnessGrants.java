package io.capsule.runtime.harness.contain;

import io.capsule.config.manifest.Access;
import io.capsule.config.manifest.Capabilities;
import io.capsule.config.manifest.HarnessPath;
import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.NetworkEntry;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The manifest's grants as the sandbox applies them: the hosts the egress proxy lets through, the
 * host paths bound in with their access ({@code ~/} already expanded), and whether the run's
 * directories are read-only.
 *
 * @param network {@code capabilities.network.allow}
 * @param paths {@code capabilities.harness.paths}, absolute
 * @param readOnly {@code capabilities.filesystem.read_only}
 * @param home the home directory {@code ~/} meant, hidden in the sandbox but for the grants
 * @param loopbackPorts services on the host's loopback reachable from inside at the same {@code
 *     127.0.0.1:port} (the sandbox has its own loopback, so a forwarder listens there and tunnels
 *     through the proxy): the run's own tool bridge, whatever the allowlist, and every allowlist
 *     entry {@code 127.0.0.1:port} or {@code localhost:port} (added here, so a harness pointed at a
 *     local API by URL reaches it whether or not it honours the proxy variables)
 * @param capsuleDir the folder the manifest was read from, bound read-only (a harness script beside
 *     the manifest must be readable, and a harness must never rewrite its own manifest or scripts,
 *     which would widen a later run's grants); empty for a manifest built in memory
 * @param resources {@code capabilities.resources}: what the capsule asks of memory, processes, CPU
 *     and files (the operator's settings give the defaults and ceilings)
 */
public record HarnessGrants(
    List<NetworkEntry> network,
    List<PathGrant> paths,
    boolean readOnly,
    Path home,
    List<Integer> loopbackPorts,
    Optional<Path> capsuleDir,
    Capabilities.Resources resources) {

  /** Nothing granted: no host, no path, directories writable; the JVM user's home. */
  public static final HarnessGrants NONE =
      new HarnessGrants(
          List.of(), List.of(), false, Path.of(System.getProperty("user.home")), List.of());

  /** A host path bound into the sandbox. */
  public record PathGrant(Path path, Access access) {
    public PathGrant {
      Objects.requireNonNull(path, "path");
      Objects.requireNonNull(access, "access");
      if (!path.isAbsolute()) {
        throw new IllegalArgumentException("a granted path must be absolute: " + path);
      }
    }

    public boolean writable() {
      return access == Access.READ_WRITE;
    }
  }

  /** Asking nothing of resources: the operator's defaults. */
  public HarnessGrants(
      List<NetworkEntry> network,
      List<PathGrant> paths,
      boolean readOnly,
      Path home,
      List<Integer> loopbackPorts,
      Optional<Path> capsuleDir) {
    this(
        network, paths, readOnly, home, loopbackPorts, capsuleDir, Capabilities.Resources.UNSTATED);
  }

  public HarnessGrants {
    Objects.requireNonNull(resources, "resources");
    network = List.copyOf(network);
    paths = List.copyOf(paths);
    Objects.requireNonNull(home, "home");
    List<Integer> ports = new java.util.ArrayList<>(loopbackPorts);
    for (NetworkEntry e : network) {
      boolean local = e.host().equals("127.0.0.1") || e.host().equals("localhost");
      if (local && !e.wildcard() && e.port().isPresent() && !ports.contains(e.port().getAsInt())) {
        ports.add(e.port().getAsInt());
      }
    }
    loopbackPorts = List.copyOf(ports);
    Objects.requireNonNull(capsuleDir, "capsuleDir");
    if (capsuleDir.isPresent() && !capsuleDir.get().isAbsolute()) {
      throw new IllegalArgumentException("the capsule folder must be absolute: " + capsuleDir);
    }
  }

  /** Without a capsule folder. */
  public HarnessGrants(
      List<NetworkEntry> network,
      List<PathGrant> paths,
      boolean readOnly,
      Path home,
      List<Integer> loopbackPorts) {
    this(network, paths, readOnly, home, loopbackPorts, Optional.empty());
  }

  /** Without loopback services. */
  public HarnessGrants(
      List<NetworkEntry> network, List<PathGrant> paths, boolean readOnly, Path home) {
    this(network, paths, readOnly, home, List.of());
  }

  /** A copy where the run's service on host loopback {@code port} is reachable from inside. */
  public HarnessGrants withLoopback(int port) {
    List<Integer> ports = new java.util.ArrayList<>(loopbackPorts);
    ports.add(port);
    return new HarnessGrants(network, paths, readOnly, home, ports, capsuleDir, resources);
  }

  /** A copy asking {@code value} of resources. */
  public HarnessGrants withResources(Capabilities.Resources value) {
    return new HarnessGrants(network, paths, readOnly, home, loopbackPorts, capsuleDir, value);
  }

  /** What the egress proxy lets through: the allowlist and the run's loopback services. */
  public List<NetworkEntry> egress() {
    List<NetworkEntry> all = new java.util.ArrayList<>(network);
    for (int port : loopbackPorts) {
      NetworkEntry local = NetworkEntry.parse("127.0.0.1:" + port);
      if (!all.contains(local)) { // an allowlist entry 127.0.0.1:port is one already
        all.add(local);
      }
    }
    return all;
  }

  /**
   * The grants of a manifest: its capabilities ({@link #of(Capabilities, Path)}) and, when it was
   * read from a file, its capsule folder (read-only).
   */
  public static HarnessGrants of(Manifest manifest, Path home) {
    HarnessGrants grants = of(manifest.capabilities(), home);
    Optional<Path> dir =
        manifest.manifestFile().map(f -> manifest.capsuleDir().toAbsolutePath().normalize());
    return new HarnessGrants(
        grants.network,
        grants.paths,
        grants.readOnly,
        grants.home,
        grants.loopbackPorts,
        dir,
        grants.resources);
  }

  /**
   * The grants of a manifest's capabilities, {@code ~/} paths under {@code home} (the host's {@code
   * HOME}, which the harness's own {@code HOME} is when granted).
   */
  public static HarnessGrants of(Capabilities capabilities, Path home) {
    List<PathGrant> paths =
        capabilities.harness().paths().stream()
            .map(p -> new PathGrant(expand(p, home), p.access()))
            .toList();
    return new HarnessGrants(
            capabilities.network().allow(), paths, capabilities.filesystem().readOnly(), home)
        .withResources(capabilities.resources());
  }

  private static Path expand(HarnessPath grant, Path home) {
    String p = grant.path();
    return p.startsWith("~/") ? home.resolve(p.substring(2)) : Path.of(p);
  }
}
