package io.capsule.runtime.harness.contain;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import java.util.Map;
import java.util.Optional;

/**
 * Which containment a harness gets (pure once the probe's answer is known): {@code off} never
 * contains; {@code auto} contains when the sandbox starts, else runs uncontained with {@code
 * W-CAP-050}; {@code required} contains or refuses with {@code E-CAP-051}.
 *
 * @param mode the setting
 * @param contained whether the harness runs in the sandbox
 * @param warning {@code W-CAP-050} when {@code auto} fell back
 */
public record Containment(
    ContainmentConfig.Mode mode, boolean contained, Optional<Diagnostic> warning) {

  /** Decides from the setting and the probe's problem (empty when the sandbox starts). */
  public static Containment decide(ContainmentConfig config, Optional<String> problem) {
    return switch (config.mode()) {
      case OFF -> new Containment(config.mode(), false, Optional.empty());
      case AUTO ->
          problem.isEmpty()
              ? new Containment(config.mode(), true, Optional.empty())
              : new Containment(
                  config.mode(),
                  false,
                  Optional.of(
                      Diagnostic.of(
                          Code.W_CAP_050,
                          "the harness runs uncontained: " + problem.get(),
                          Map.of("bwrap", config.bwrap().toString()))));
      case REQUIRED -> {
        if (problem.isPresent()) {
          throw new DiagnosticException(
              Diagnostic.of(
                  Code.E_CAP_051,
                  "containment is required and the sandbox cannot start: "
                      + problem.get()
                      + "; install bubblewrap and socat (apt-get install bubblewrap socat)",
                  Map.of("bwrap", config.bwrap().toString())));
        }
        yield new Containment(config.mode(), true, Optional.empty());
      }
    };
  }

  /** Probes (blocking, unless off) and decides. */
  public static Containment probeAndDecide(ContainmentConfig config) {
    if (config.mode() == ContainmentConfig.Mode.OFF) {
      return decide(config, Optional.empty());
    }
    return decide(config, SandboxProbe.problem(config.bwrap(), config.socat()));
  }
}
