package io.capsule.runtime.bridge;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * Where and with what the capsule's tools run: the run's working directory, the capsule's granted
 * environment (exactly these variables, nothing inherited, not even PATH), {@code
 * capabilities.filesystem.read_only} (see the package documentation for what that guarantees), and
 * whether calls wait for the run's sandbox (containment is not off: every call runs in a sandbox of
 * the run once the harness is contained, docs/containment.md).
 */
public record ToolWorkspace(
    Path workdir, Map<String, String> env, boolean readOnly, boolean awaitsSandbox) {

  /** Tools that never wait for a sandbox: containment off. */
  public ToolWorkspace(Path workdir, Map<String, String> env, boolean readOnly) {
    this(workdir, env, readOnly, false);
  }

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
        + ", awaitsSandbox="
        + awaitsSandbox
        + "]";
  }
}
