package io.capsule.runtime.bridge;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * Where and with what the capsule's tools run: the run's working directory, the capsule's granted
 * environment (exactly these variables, nothing inherited, not even PATH) and {@code
 * capabilities.filesystem.read_only} (see the package documentation for what that guarantees).
 */
public record ToolWorkspace(Path workdir, Map<String, String> env, boolean readOnly) {
  public ToolWorkspace {
    Objects.requireNonNull(workdir, "workdir");
    if (!workdir.isAbsolute()) {
      throw new IllegalArgumentException("the workdir must be absolute: " + workdir);
    }
    env = Map.copyOf(env);
  }

  @Override
  public String toString() {
    // values may be credentials granted by allow_credentials: show names only
    return "ToolWorkspace[workdir="
        + workdir
        + ", env="
        + env.keySet()
        + ", readOnly="
        + readOnly
        + "]";
  }
}
