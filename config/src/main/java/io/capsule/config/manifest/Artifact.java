package io.capsule.config.manifest;

import java.util.Objects;
import java.util.Optional;

/**
 * One entry of {@code artifacts[]}: something the capsule runs besides the harness.
 *
 * @param name unique among the capsule's artifacts, {@code [a-z0-9-]}
 * @param version semver
 * @param runtime driver or tool
 * @param source a file in the capsule or a built-in
 * @param sha256 lowercase hex digest the bytes must have (checked before load, E-RUN-006)
 */
public record Artifact(
    String name,
    String version,
    ArtifactRuntime runtime,
    ArtifactSource source,
    Optional<String> sha256) {

  public Artifact {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(runtime, "runtime");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(sha256, "sha256");
  }

  public boolean isDriver() {
    return runtime == ArtifactRuntime.DRIVER;
  }

  /** The built-in's name when this artifact is {@code builtin:}. */
  public Optional<String> builtinName() {
    return source instanceof ArtifactSource.Builtin b ? Optional.of(b.name()) : Optional.empty();
  }
}
