package io.capsule.driver.builtin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.EventJson;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.ProcessDriver;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every real harness transcript through its built-in driver, on both engines, under every batch
 * split: the events equal the checked-in golden file (which the Rust drivers' native tests also
 * check), there are exactly as many terminal events as the harness ran turns, nothing but quota or
 * suggested-prompt follows the last one, and no line the driver understands becomes a note.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BuiltinDriverGoldenTest {

  /** The built-ins, loaded once per engine for this class and closed after it. */
  @RegisterExtension static final BuiltinDrivers drivers = new BuiltinDrivers();

  Stream<Arguments> runs() {
    return BuiltinDrivers.transcriptRuns(Golden.SPLITS);
  }

  @ParameterizedTest(name = "{0}: {1} in batches of {2}")
  @MethodSource("runs")
  void aTranscriptGivesItsGoldenEventsOnEveryEngineUnderEveryBatchSplit(
      String engine, Golden.Entry entry, int split) {
    List<Event> events;
    try (ProcessDriver driver = drivers.instance(engine, entry.driver())) {
      assertInstanceOf(LaunchResult.Planned.class, driver.launch(Golden.launchRequest()));
      events = Golden.parse(driver, entry.lines(), split);
    }
    List<Event> actual = events;
    assertEquals(entry.expected(), actual, () -> EventJson.toPrettyLines(actual));
    // The canonical JSON is shared with the Rust side: the golden file is byte for byte what the
    // Java codec writes for these events.
    assertEquals(entry.expectedText(), EventJson.toPrettyLines(actual));

    int[] terminals =
        IntStream.range(0, actual.size()).filter(i -> actual.get(i).isTerminal()).toArray();
    assertEquals(entry.terminalEvents(), terminals.length, "terminal events");
    // A harness ended by the runtime's SIGINT may print no terminal line (classify-exit ends it).
    int afterLast = terminals.length == 0 ? actual.size() : terminals[terminals.length - 1] + 1;
    actual
        .subList(afterLast, actual.size())
        .forEach(
            after ->
                assertTrue(
                    after instanceof Event.Quota || after instanceof Event.SuggestedPrompt,
                    "after the terminal event: " + after));
    actual.forEach(
        e -> assertTrue(!(e instanceof Event.Note), "a line the driver understands: " + e));
  }
}
