package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.DiagnosticException;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ContainmentTest {

  private static final Optional<String> WORKS = Optional.empty();
  private static final Optional<String> BROKEN = Optional.of("bubblewrap is not installed at /x");

  private static ContainmentConfig config(ContainmentConfig.Mode mode) {
    return ContainmentConfig.defaults(mode);
  }

  @Test
  void offNeverContains() {
    assertEquals(false, Containment.decide(config(ContainmentConfig.Mode.OFF), WORKS).contained());
    assertEquals(
        Optional.empty(), Containment.decide(config(ContainmentConfig.Mode.OFF), BROKEN).warning());
  }

  @Test
  void autoContainsWhenItCanAndWarnsWhenItCannot() {
    assertEquals(true, Containment.decide(config(ContainmentConfig.Mode.AUTO), WORKS).contained());
    Containment fallback = Containment.decide(config(ContainmentConfig.Mode.AUTO), BROKEN);
    assertEquals(false, fallback.contained());
    assertEquals(Code.W_CAP_050, fallback.warning().orElseThrow().code());
  }

  @Test
  void requiredRefusesWithTheInstallHint() {
    assertEquals(
        true, Containment.decide(config(ContainmentConfig.Mode.REQUIRED), WORKS).contained());
    DiagnosticException e =
        assertThrows(
            DiagnosticException.class,
            () -> Containment.decide(config(ContainmentConfig.Mode.REQUIRED), BROKEN));
    assertEquals(Code.E_CAP_051, e.code());
  }

  @Test
  void theProbeNamesAMissingBinary() {
    assertEquals(
        Optional.of("bubblewrap is not installed at /nonexistent/bwrap"),
        SandboxProbe.problem(Path.of("/nonexistent/bwrap"), Path.of("/usr/bin/socat")));
    assertEquals(
        Optional.of("socat is not installed at /nonexistent/socat"),
        SandboxProbe.problem(Path.of("/usr/bin/bwrap"), Path.of("/nonexistent/socat")));
    assertEquals(
        Optional.empty(),
        SandboxProbe.problem(Path.of("/usr/bin/bwrap"), Path.of("/usr/bin/socat")));
  }
}
