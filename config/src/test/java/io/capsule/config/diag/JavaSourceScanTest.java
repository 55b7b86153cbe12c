package io.capsule.config.diag;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What the catalog scan counts as using a code, and what it ignores. */
class JavaSourceScanTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          throw new X(Diagnostic.of(Code.E_RUN_034, "m"));            | E-RUN-034
          import static io.capsule.config.diag.Code.W_RUN_002;        | W-RUN-002
          report.failureType("E-RUN-033:" + kind);                    | E-RUN-033
          String t = \"""\\n  E-PRO-009 in a text block\\n  \""";     | E-PRO-009
          // Code.E_RUN_035 only in a line comment                    | ''
          /* "E-RUN-036" in a block comment */ int x = 1;             | ''
          char q = '"'; /* E_RUN_038 */ String s = "E_RUN_038";        | ''
          String s = "escaped \\" quote E-CAP-019";                   | E-CAP-019
          String p = "[EW]-[A-Z]{3,4}-\\\\d{3}";                       | ''
          """)
  void findsCodesInCodeAndLiteralsButNotInComments(String source, String expected) {
    JavaSourceScan scan = JavaSourceScan.ofText(source.replace("\\n", "\n"));

    assertEquals(
        expected.isEmpty() ? Map.of() : Map.of(expected, Set.of("T.java")), scan.uses, source);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          a /* x */ b    | a   b
          a // x         | 'a '
          "s" + 's'      | "" + ''
          """)
  void stripsCommentsAndEmptiesLiterals(String source, String expected) {
    assertEquals(expected, JavaSourceScan.stripCommentsAndLiterals(source, new ArrayList<>()));
  }
}
