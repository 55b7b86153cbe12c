package io.capsule.driver.builtin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.driver.abi.ParseCall;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.wasm.WasmInstance;
import io.capsule.driver.wasm.WasmProcessDriver;
import java.nio.charset.StandardCharsets;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A {@code parse} batch too large for wasmtime's one-crossing lowering (over 64 KiB of lines, the
 * staged limit being 16 KiB) is lowered generically from the bytes {@link ParseCall} encoded: each
 * line is read and encoded once, not twice, and the events are the ones the same lines give one at
 * a time. On every engine (Chicory lowers generically from the start), every built-in.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LargeBatchLoweringTest {

  private static final int LARGE = 64 << 10;

  /** The built-ins, loaded once per engine for this class and closed after it. */
  @RegisterExtension static final BuiltinDrivers drivers = new BuiltinDrivers();

  Stream<Arguments> runs() {
    return BuiltinDrivers.engines().stream()
        .flatMap(e -> BuiltinDrivers.NAMES.stream().map(d -> Arguments.of(e, d)));
  }

  /** The driver's golden lines, cycled until they hold more than {@link #LARGE} bytes. */
  private static List<String> largeBatch(String driver) {
    List<String> golden = new ArrayList<>();
    for (Golden.Entry entry : Golden.index()) {
      if (entry.driver().equals(driver)) {
        golden.addAll(entry.lines());
      }
    }
    List<String> lines = new ArrayList<>();
    long bytes = 0;
    for (int i = 0; bytes <= LARGE; i++) {
      String line = golden.get(i % golden.size());
      lines.add(line);
      bytes += line.getBytes(StandardCharsets.UTF_8).length;
    }
    return lines;
  }

  /** The lines, counting how often each is read. */
  private static final class Counted extends AbstractList<String> {
    final List<String> lines;
    final int[] reads;

    Counted(List<String> lines) {
      this.lines = lines;
      this.reads = new int[lines.size()];
    }

    @Override
    public String get(int i) {
      reads[i]++;
      return lines.get(i);
    }

    @Override
    public int size() {
      return lines.size();
    }
  }

  private List<Event> parse(String engine, String driver, List<List<String>> batches) {
    List<Event> events = new ArrayList<>();
    try (ProcessDriver d = drivers.instance(engine, driver)) {
      assertInstanceOf(LaunchResult.Planned.class, d.launch(Golden.launchRequest()));
      WasmInstance instance = ((WasmProcessDriver) d).instance();
      ParseCall parse = new ParseCall();
      for (List<String> batch : batches) {
        events.addAll(parse.parse(instance, batch));
      }
    }
    return events;
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("runs")
  void aLargeBatchIsEncodedOnceAndParsesAsItsLinesOneAtATime(String engine, String driver) {
    List<String> lines = largeBatch(driver);
    Counted counted = new Counted(lines);
    List<Event> whole = parse(engine, driver, List.of(counted));
    List<List<String>> single = lines.stream().map(List::of).toList();
    assertEquals(parse(engine, driver, single), whole);
    assertTrue(!whole.isEmpty(), "no events: the batch proves nothing");
    for (int i = 0; i < counted.reads.length; i++) {
      assertEquals(1, counted.reads[i], "line " + i + " read " + counted.reads[i] + " times");
    }
  }
}
