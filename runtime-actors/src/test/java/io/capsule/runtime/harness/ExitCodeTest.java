package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ExitCodeTest {

  /** status, signals the runtime sent (space-separated), expected code, expected signal. */
  @ParameterizedTest(name = "{0} after [{1}] -> code {2} signal {3}")
  @CsvSource(
      nullValues = "-",
      textBlock =
          """
          0,   '',    0,   -
          1,   '',    1,   -
          128, '',    128, -
          145, '',    145, -
          173, '',    173, -
          130, '',    130, -
          137, '',    137, -
          192, '',    192, -
          130, '2',   -,   2
          137, '9',   -,   9
          137, '2 9', -,   9
          130, '9',   130, -
          145, '2 9', 145, -
          193, '2 9', 193, -
          255, '',    255, -
          1,   '2',   1,   -
          """)
  void aValueReadsAsASignalOnlyWhenTheRuntimeSentThatSignal(
      int status, String sent, Integer code, Integer signal) {
    Set<Integer> signals =
        Arrays.stream(sent.trim().split("\\s+"))
            .filter(s -> !s.isEmpty())
            .map(Integer::valueOf)
            .collect(Collectors.toSet());
    ExitCode how = ExitCode.decode(status, signals);
    assertEquals(Optional.ofNullable(code), how.code());
    assertEquals(Optional.ofNullable(signal), how.signal());
  }
}
