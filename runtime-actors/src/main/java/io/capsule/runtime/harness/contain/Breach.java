package io.capsule.runtime.harness.contain;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.manifest.ByteSize;

/**
 * A limit the run went past, as the kernel's own counters of the run's cgroup tell it
 * (docs/settings.md "How a run is bounded"). Ends the run with its code.
 */
public enum Breach {
  /** The kernel's OOM killer killed a process of the run: E-RUN-047. */
  MEMORY(Code.E_RUN_047),
  /** A fork or thread creation in the run was refused at the pids limit: E-RUN-048. */
  PROCESSES(Code.E_RUN_048);

  private final Code code;

  Breach(Code code) {
    this.code = code;
  }

  public Code code() {
    return code;
  }

  /** What the run ends with: the code, the limit it passed, the key to raise. */
  public Diagnostic diagnostic(ResourceLimits limits) {
    return switch (this) {
      case MEMORY ->
          Diagnostic.of(
                  code,
                  "the run passed its memory limit of "
                      + ByteSize.show(limits.memoryBytes())
                      + " and the kernel killed a process of it (out of memory)")
              .with("limit", "capabilities.resources.memory");
      case PROCESSES ->
          Diagnostic.of(
                  code,
                  "the run passed its limit of "
                      + limits.processes()
                      + " processes and threads: a fork was refused")
              .with("limit", "capabilities.resources.processes");
    };
  }
}
