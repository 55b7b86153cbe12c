package io.capsule.driver.builtin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.ProcessDriver;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * On wasmtime a {@code parse} batch of at most 16 KiB of bytes is lowered and called in one
 * crossing, a larger one in two (its bytes copied straight into the guest): both give the events
 * that batches of 16 give on Chicory.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LargeBatchTest {

  /** The built-ins, loaded once per engine for this class and closed after it. */
  @RegisterExtension static final BuiltinDrivers drivers = new BuiltinDrivers();

  /** Parses {@code lines} on a fresh {@code engine} instance in batches of {@code split}. */
  private List<Event> parse(String engine, List<String> lines, int split) {
    try (ProcessDriver driver = drivers.instance(engine, "jsonl")) {
      driver.launch(Golden.launchRequest());
      return Golden.parse(driver, lines, split);
    }
  }

  @Test
  void aBatchOverOneMebibyteGivesTheEventsOfSmallBatchesOnBothEngines() {
    // the jsonl transcript over and over (the driver notes every repeated terminal line)
    List<String> transcript =
        Golden.index().stream()
            .filter(e -> e.driver().equals("jsonl"))
            .findFirst()
            .orElseThrow()
            .lines();
    List<String> lines = new ArrayList<>();
    long bytes = 0;
    while (bytes <= 1 << 20) {
      for (String line : transcript) {
        lines.add(line);
        bytes += line.getBytes(StandardCharsets.UTF_8).length;
      }
    }
    assertTrue(bytes > 1 << 20, "over 1 MiB: " + bytes);
    List<Event> smallBatches = parse("chicory", lines, 16);
    for (String engine : BuiltinDrivers.engines()) {
      List<Event> oneBatch = parse(engine, lines, lines.size());
      assertEquals(smallBatches.size(), oneBatch.size(), engine);
      assertTrue(smallBatches.equals(oneBatch), engine + ": one batch gives other events");
      assertTrue(smallBatches.equals(parse(engine, lines, 16)), engine + ": batches of 16");
    }
  }
}
