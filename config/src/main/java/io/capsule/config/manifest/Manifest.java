package io.capsule.config.manifest;

import io.capsule.config.diag.Diagnostic;
import java.nio.file.Path;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;

/**
 * A capsule's validated {@code murmur.yaml}, immutable. Get one from {@link ManifestLoader} (a
 * folder or text) or {@link ManifestBuilder} (in memory): both run {@link ManifestValidator}, so
 * every value has passed validation. The canonical constructor does not validate; it exists for the
 * validator and for copies ({@code with}-style), not as a way around the rules.
 *
 * @param name the capsule's name, {@code [a-z0-9-]}
 * @param version semver
 * @param description free text, when given
 * @param artifacts everything the capsule runs besides the harness, in manifest order
 * @param inference how the harness is driven
 * @param capabilities what the harness may touch
 * @param lifecycle how tasks relate to harness sessions
 * @param capsuleDir the capsule directory (its real path when it exists)
 * @param manifestFile the file this was read from; empty when built in memory
 * @param warnings what validation warned about (e.g. W-SEC-024); the runtime prints and traces them
 */
public record Manifest(
    String name,
    String version,
    Optional<String> description,
    List<Artifact> artifacts,
    Inference inference,
    Capabilities capabilities,
    Lifecycle lifecycle,
    Path capsuleDir,
    Optional<Path> manifestFile,
    List<Diagnostic> warnings) {

  /** The manifest's file name inside a capsule directory. */
  public static final String FILE_NAME = "murmur.yaml";

  public Manifest {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(description, "description");
    artifacts = List.copyOf(artifacts);
    Objects.requireNonNull(inference, "inference");
    Objects.requireNonNull(capabilities, "capabilities");
    Objects.requireNonNull(lifecycle, "lifecycle");
    Objects.requireNonNull(capsuleDir, "capsuleDir");
    Objects.requireNonNull(manifestFile, "manifestFile");
    warnings = List.copyOf(warnings);
  }

  /** Starts a manifest in memory (for embedding and tests); see {@link ManifestBuilder}. */
  public static ManifestBuilder builder(String name, String version) {
    return new ManifestBuilder(name, version);
  }

  /** The artifact named {@code name}. */
  public Optional<Artifact> artifact(String name) {
    return artifacts.stream().filter(a -> a.name().equals(name)).findFirst();
  }

  /** The artifact {@code inference.driver.artifact} names (validation guarantees it exists). */
  public Artifact driverArtifact() {
    String name = inference.driver().artifact();
    return artifact(name)
        .orElseThrow(() -> new NoSuchElementException("no artifact named " + name));
  }

  /**
   * Where a file artifact's bytes are: its path resolved against {@link #capsuleDir()}; empty for a
   * built-in. The file may not exist (that is E-RUN-006 when loading, not a manifest error).
   */
  public Optional<Path> artifactPath(Artifact artifact) {
    return artifact.source() instanceof ArtifactSource.File file
        ? Optional.of(capsuleDir.resolve(file.relativePath()).normalize())
        : Optional.empty();
  }

  /**
   * {@code inference.command} as the runtime uses it: an absolute path as written; a relative path
   * (contains {@code /}) resolved against the capsule directory; a bare name as written (looked up
   * on the PATH the capsule's env grants). Empty when the manifest sets no command (the driver's
   * {@code description.binary} then applies).
   */
  public Optional<String> resolvedCommand() {
    return inference
        .command()
        .map(
            c ->
                c.contains("/") && !c.startsWith("/")
                    ? capsuleDir.resolve(c).normalize().toString()
                    : c);
  }
}
