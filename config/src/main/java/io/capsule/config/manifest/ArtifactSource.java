package io.capsule.config.manifest;

import java.util.Objects;

/** Where an artifact's bytes come from: a file in the capsule, or one built into the runtime. */
public sealed interface ArtifactSource {

  /**
   * A file inside the capsule directory.
   *
   * @param relativePath as written in the manifest, relative to the capsule directory; the loader
   *     has checked that it does not escape the directory
   */
  record File(String relativePath) implements ArtifactSource {
    public File {
      Objects.requireNonNull(relativePath, "relativePath");
    }
  }

  /**
   * An artifact the runtime carries itself ({@code builtin: jsonl}).
   *
   * @param name the built-in's name
   */
  record Builtin(String name) implements ArtifactSource {
    public Builtin {
      Objects.requireNonNull(name, "name");
    }
  }
}
