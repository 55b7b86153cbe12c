package io.capsule.driver.builtin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.capsule.driver.abi.ContractTypes;
import io.capsule.driver.abi.EventLifts;
import io.capsule.driver.abi.ParseCall;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.wasm.GuestMemory;
import io.capsule.driver.wasm.WasmInstance;
import io.capsule.driver.wasm.WasmProcessDriver;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The specialised event lifter against the generic one on what real drivers return: every golden
 * transcript, on both engines, in batches of 1, 7 and 256. Right after each {@code parse} returns
 * (before its post-return), both lift the same result from the same memory: the specialised one
 * must accept it (it is no refusal) and give exactly the generic one's events; and {@link
 * ParseCall}, which uses it, must give the golden events.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EventLifterDifferentialTest {

  private static final String PARSE = ContractTypes.coreExport(ContractTypes.PARSE);

  /** The built-ins, loaded once per engine for this class and closed after it. */
  @RegisterExtension static final BuiltinDrivers drivers = new BuiltinDrivers();

  Stream<Arguments> runs() {
    return BuiltinDrivers.transcriptRuns(List.of(1, 7, 256));
  }

  @ParameterizedTest(name = "{0}: {1} in batches of {2}")
  @MethodSource("runs")
  void theSpecialisedLifterGivesTheGenericLiftersEventsForEveryRealResult(
      String engine, Golden.Entry entry, int split) {
    List<String> lines = entry.lines();
    List<Event> events = new ArrayList<>();
    List<int[]> compared = new ArrayList<>();
    try (ProcessDriver driver = drivers.instance(engine, entry.driver())) {
      assertInstanceOf(LaunchResult.Planned.class, driver.launch(Golden.launchRequest()));
      WasmInstance real = ((WasmProcessDriver) driver).instance();
      WasmInstance spy = new ComparingInstance(real, compared);
      ParseCall parse = new ParseCall();
      for (int i = 0; i < lines.size(); i += split) {
        events.addAll(parse.parse(spy, lines.subList(i, Math.min(lines.size(), i + split))));
      }
    }
    assertEquals(entry.expected(), events);
    assertEquals((lines.size() + split - 1) / split, compared.size(), "parse calls compared");
    assertEquals(events.size(), compared.stream().mapToInt(c -> c[0]).sum(), "events compared");
  }

  /** Delegates; after each {@code parse} compares the two lifters on its result. */
  private static final class ComparingInstance implements WasmInstance {
    private final WasmInstance real;
    private final List<int[]> compared;

    ComparingInstance(WasmInstance real, List<int[]> compared) {
      this.real = real;
      this.compared = compared;
    }

    @Override
    public boolean hasExport(String name) {
      return real.hasExport(name);
    }

    @Override
    public long[] call(String export, long... args) {
      long[] results = real.call(export, args);
      if (export.equals(PARSE)) {
        assertEquals(1, results.length);
        GuestMemory memory = real.memory();
        EventLifts.Outcome generic = EventLifts.generic(memory, (int) results[0]);
        assertEquals(null, generic.refusal(), "the generic lifter refused a real result");
        List<Event> specialised = EventLifts.specialisedAlone(memory, (int) results[0]);
        assertNotNull(specialised, "the specialised lifter gave up on a real result");
        assertEquals(generic.events(), specialised);
        compared.add(new int[] {specialised.size()});
      }
      return results;
    }

    @Override
    public GuestMemory memory() {
      return real.memory();
    }

    @Override
    public List<String> drainOutput() {
      return real.drainOutput();
    }

    @Override
    public void close() {
      // the driver closes the real instance
    }
  }
}
