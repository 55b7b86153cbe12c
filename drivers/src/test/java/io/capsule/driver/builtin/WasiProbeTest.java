package io.capsule.driver.builtin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.api.Event;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.component.CoreGraph;
import io.capsule.driver.engine.Engines;
import io.capsule.driver.engine.Fixtures;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The WASI host through each engine's real lowering path: the {@code wasi-probe} component lowers
 * functions of eight WASI 0.2 interfaces directly (no adapter in between) and its {@code launch}
 * checks what an empty grant gives — empty environment and arguments, no cwd, no preopens, stdin at
 * EOF, no terminal, a monotonic clock that does not go back, a zero timer ready at once, a wall
 * clock after 2020, 16 random bytes, a line written to stdout — dropping every handle it takes, and
 * answers {@code err(<the check>)} at the first that does not hold. Twice per instance, so a handle
 * left behind or a table in a bad state would show.
 */
class WasiProbeTest {

  static List<String> engines() {
    return Engines.NAMES;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void everyProbeOfAnEmptyGrantHoldsOnThisEngine(String engine) {
    try (DriverLoader loader = DriverLoader.create(engine, DriverLoader.Settings.DEFAULTS)) {
      LoadedDriver loaded = loader.loadBytes("wasi-probe", Fixtures.bytes("wasi-probe.component"));
      Set<String> lowered = new TreeSet<>();
      for (CoreGraph.Item item : loaded.binary().graph().orElseThrow().hostItems()) {
        if (item instanceof CoreGraph.Lowered l) {
          lowered.add(l.iface().substring(0, l.iface().indexOf('@')));
        }
      }
      assertEquals(10, lowered.size(), "interfaces lowered directly: " + lowered);
      LaunchRequest request = Golden.launchRequest();
      try (ProcessDriver driver = loaded.newInstance()) {
        for (int round = 0; round < 2; round++) {
          LaunchResult result = driver.launch(request);
          LaunchResult.Planned planned =
              assertInstanceOf(LaunchResult.Planned.class, result, result::toString);
          assertEquals(List.of("--print", request.task()), planned.plan().args());
          List<Event> notes = driver.parse(List.of());
          assertEquals(List.of(new Event.Note("driver stdout: probe: hello")), notes);
        }
      }
      assertTrue(loaded.describeNotes().isEmpty(), loaded.describeNotes().toString());
    }
  }
}
