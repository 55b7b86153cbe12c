package io.capsule.runtime.harness.contain;

import java.util.List;
import java.util.Optional;

/**
 * The hardening of this machine's sandboxes: the sandbox's user ({@link
 * SandboxCommand.Hardening#SANDBOX_USER}, never root) and the live host for the sealed root.
 */
final class Hardenings {

  private Hardenings() {}

  static SandboxCommand.Hardening forThisMachine() {
    return new SandboxCommand.Hardening(
        Optional.of(SandboxCommand.Hardening.SANDBOX_USER),
        Optional.empty(),
        List.of(),
        List.of(),
        HostView.LIVE);
  }
}
