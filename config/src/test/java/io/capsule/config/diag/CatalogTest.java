package io.capsule.config.diag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each catalog entry is usable as written, and a diagnostic renders in the one documented shape.
 */
class CatalogTest {

  @ParameterizedTest(name = "{0}")
  @EnumSource(Code.class)
  void eachCodeHasAWellFormedIdAndOneLineOfMeaningAndHint(Code code) {
    assertTrue(Code.idPattern().matcher(code.id()).matches(), code.id());
    assertEquals(code.name().replace('_', '-'), code.id());
    assertEquals(Optional.of(code), Code.byId(code.id()));
    assertEquals(code.id().startsWith("W-") ? Severity.WARNING : Severity.ERROR, code.severity());
    for (String line : List.of(code.meaning(), code.hint())) {
      assertFalse(line.isBlank(), code + " needs text");
      assertFalse(line.contains("\n") || line.contains("\r"), code + ": one line only");
      assertEquals(line.strip(), line, code + ": no surrounding blanks");
      assertTrue(line.length() <= 160, code + ": keep it to a line a terminal shows");
    }
    assertFalse(code.meaning().equals(code.hint()), code + ": the hint says what to do");
  }

  @Test
  void idsAreUnique() {
    assertEquals(
        Code.values().length, Arrays.stream(Code.values()).map(Code::id).distinct().count());
    assertEquals(Optional.empty(), Code.byId("E-NOPE-999"));
  }

  @Test
  void rendersCodeMessageAndDetailsOnOneLineAndTheHintOnTheNext() {
    Map<String, String> details = new LinkedHashMap<>();
    details.put("file", "caps/murmur.yaml");
    details.put("key", "inference.max_turns");
    details.put("line", "9");
    Diagnostic d = Diagnostic.of(Code.E_MAN_002, "max_turns must be a u32", details);

    assertEquals(
        "E-MAN-002 max_turns must be a u32 [file=caps/murmur.yaml, key=inference.max_turns, line=9]"
            + System.lineSeparator()
            + "  hint: "
            + Code.E_MAN_002.hint(),
        d.render());
  }

  @Test
  void rendersWithoutBracketsWhenThereAreNoDetailsAndKeepsAnOwnHint() {
    Diagnostic d =
        Diagnostic.of(Code.E_RUN_035, "silent for 600s").with("run", "r1").withHint("wait less");

    assertEquals(
        "E-RUN-035 silent for 600s [run=r1]" + System.lineSeparator() + "  hint: wait less",
        d.render());
    assertEquals(
        "W-RUN-002 untested" + System.lineSeparator() + "  hint: " + Code.W_RUN_002.hint(),
        Diagnostic.of(Code.W_RUN_002, "untested").render());
    assertEquals(Severity.WARNING, Diagnostic.of(Code.W_RUN_002, "x").severity());
    assertFalse(Diagnostic.of(Code.W_RUN_002, "x").isError());
  }

  @Test
  void anExceptionCarriesEveryDiagnosticAndSummarisesTheFirst() {
    DiagnosticException e =
        new DiagnosticException(
            List.of(Diagnostic.of(Code.E_MAN_002, "a"), Diagnostic.of(Code.E_MAN_003, "b")), null);

    assertEquals(Code.E_MAN_002, e.code());
    assertEquals(2, e.diagnostics().size());
    assertEquals("E-MAN-002 a (and 1 more)", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> new DiagnosticException(List.of(), null));
  }
}
