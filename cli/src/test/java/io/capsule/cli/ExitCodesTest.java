package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.config.diag.Code;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ExitCodesTest {
  @ParameterizedTest
  @CsvSource({
    "E_MAN_002, 2",
    "E_CFG_001, 2",
    "E_CAP_016, 3",
    "E_CAP_019, 3",
    "E_CAP_021, 3",
    "E_RUN_029, 3",
    "E_RUN_032, 3",
    "E_RUN_038, 3",
    "E_RUN_006, 4",
    "E_RUN_007, 4",
    "E_RUN_033, 1",
    "E_RUN_034, 1",
    "E_RUN_035, 1",
  })
  void refusalsMapToTheDocumentedExitCodes(Code code, int exit) {
    assertEquals(exit, CapsuleMain.exitCodeFor(code));
  }
}
