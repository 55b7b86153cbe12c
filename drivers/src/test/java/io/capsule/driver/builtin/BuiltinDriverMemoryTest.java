package io.capsule.driver.builtin;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.ProcessDriver;
import java.util.List;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The export owns the parameters the host lowers and frees them (the ABI crate's lifting takes each
 * string as its {@code String} and frees each list block): more line bytes than the driver's whole
 * memory (32 MiB maximum) go through one instance without reaching the cap. A lifting that forgot a
 * block would leak it on every call and trap at the cap half-way through.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BuiltinDriverMemoryTest {

  private static final int LINE_BYTES = 256 * 1024;
  private static final int CALLS = 96; // 96 × 2 lines × 256 KiB = 48 MiB, over the 32 MiB memory

  /** The built-ins, loaded once per engine for this class and closed after it. */
  @RegisterExtension static final BuiltinDrivers drivers = new BuiltinDrivers();

  List<String> engines() {
    return BuiltinDrivers.engines();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void parametersAreFreedAfterEveryCall(String engine) {
    String text = "x".repeat(LINE_BYTES - 40);
    String line = "{\"type\":\"delta\",\"text\":\"" + text + "\"}";
    try (ProcessDriver driver = drivers.instance(engine, "jsonl")) {
      for (int i = 0; i < CALLS; i++) {
        List<Event> events = driver.parse(List.of(line, line));
        assertEquals(List.of(new Event.TextDelta(text), new Event.TextDelta(text)), events);
      }
    }
  }
}
