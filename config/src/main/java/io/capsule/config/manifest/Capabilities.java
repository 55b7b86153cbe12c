package io.capsule.config.manifest;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * {@code capabilities}: exactly what the harness may touch. Every section defaults to granting
 * nothing (and {@code read_only: false}).
 */
public record Capabilities(
    Capabilities.Env env,
    Capabilities.Network network,
    Capabilities.Harness harness,
    Capabilities.Shell shell,
    Capabilities.Filesystem filesystem,
    Capabilities.Resources resources) {

  /** Grants nothing. */
  public static final Capabilities NONE =
      new Capabilities(
          new Env(List.of(), List.of()),
          new Network(List.of()),
          new Harness(List.of()),
          new Shell(List.of()),
          new Filesystem(false),
          Resources.UNSTATED);

  public Capabilities {
    Objects.requireNonNull(env, "env");
    Objects.requireNonNull(network, "network");
    Objects.requireNonNull(harness, "harness");
    Objects.requireNonNull(shell, "shell");
    Objects.requireNonNull(filesystem, "filesystem");
    Objects.requireNonNull(resources, "resources");
  }

  /** Capabilities that state no {@code resources}: the operator's defaults apply. */
  public Capabilities(
      Env env, Network network, Harness harness, Shell shell, Filesystem filesystem) {
    this(env, network, harness, shell, filesystem, Resources.UNSTATED);
  }

  /**
   * {@code capabilities.env}.
   *
   * @param allow names whose host values the harness gets; credential-shaped names are only here
   *     when also in {@code allowCredentials}
   * @param allowCredentials credential names the author grants knowingly (each is a W-SEC-024)
   */
  public record Env(List<String> allow, List<String> allowCredentials) {
    public Env {
      allow = List.copyOf(allow);
      allowCredentials = List.copyOf(allowCredentials);
    }

    /**
     * The harness's entire inherited environment: {@code allow} then {@code allow_credentials},
     * each name once, in that order. A credential listed only under {@code allow_credentials} is
     * granted too (that is where the E-CAP-016 hint tells the author to move it).
     */
    public List<String> granted() {
      Set<String> all = new LinkedHashSet<>(allow);
      all.addAll(allowCredentials);
      return List.copyOf(all);
    }

    /**
     * The host's values of the granted names, in {@link #granted()} order; a name the host does not
     * set is left out. Nothing else of the host's environment is ever passed on.
     */
    public Map<String, String> grantedValues(Map<String, String> hostEnv) {
      Map<String, String> env = new LinkedHashMap<>();
      for (String name : granted()) {
        String value = hostEnv.get(name);
        if (value != null) {
          env.put(name, value);
        }
      }
      return env;
    }
  }

  /** {@code capabilities.network}: hosts the driver's needs may use. */
  public record Network(List<NetworkEntry> allow) {
    public Network {
      allow = List.copyOf(allow);
    }

    /** Whether some entry covers {@code need}. */
    public boolean allows(NetworkEntry need) {
      return allow.stream().anyMatch(entry -> entry.covers(need));
    }
  }

  /** {@code capabilities.harness}: host paths the driver's needs may use. */
  public record Harness(List<HarnessPath> paths) {
    public Harness {
      paths = List.copyOf(paths);
    }

    /** Whether some entry covers {@code path} at {@code access}. */
    public boolean allows(String path, Access access) {
      return paths.stream().anyMatch(entry -> entry.covers(path, access));
    }
  }

  /** {@code capabilities.shell}: binaries, each one tool on the tool bridge. */
  public record Shell(List<String> allow) {
    public Shell {
      allow = List.copyOf(allow);
    }
  }

  /** {@code capabilities.filesystem}: whether bridged tools may write the workdir. */
  public record Filesystem(boolean readOnly) {}

  /**
   * {@code capabilities.resources}: what the run may use (docs/manifest.md
   * "capabilities.resources"). Each is what the author asks for; an empty one means the operator's
   * default ({@code capsule.harness.resources}), and the operator's ceiling caps every one.
   *
   * @param memoryBytes memory of the whole run (the harness and every process it starts)
   * @param processes tasks (processes and threads) alive at once in the run
   * @param cpuCores CPU time as a number of cores ({@code 1.5} = one and a half)
   * @param fileSizeBytes the largest file a process of the run may write
   * @param openFiles open file descriptors per process
   */
  public record Resources(
      OptionalLong memoryBytes,
      OptionalInt processes,
      OptionalDouble cpuCores,
      OptionalLong fileSizeBytes,
      OptionalInt openFiles) {

    /** Nothing asked: every limit is the operator's default. */
    public static final Resources UNSTATED =
        new Resources(
            OptionalLong.empty(),
            OptionalInt.empty(),
            OptionalDouble.empty(),
            OptionalLong.empty(),
            OptionalInt.empty());

    public Resources {
      Objects.requireNonNull(memoryBytes, "memoryBytes");
      Objects.requireNonNull(processes, "processes");
      Objects.requireNonNull(cpuCores, "cpuCores");
      Objects.requireNonNull(fileSizeBytes, "fileSizeBytes");
      Objects.requireNonNull(openFiles, "openFiles");
    }
  }
}
