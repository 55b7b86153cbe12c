package io.capsule.bench.driver;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.load.DriverLoader;
import io.github.kawamuray.wasmtime.Config;
import io.github.kawamuray.wasmtime.Engine;
import io.github.kawamuray.wasmtime.Func;
import io.github.kawamuray.wasmtime.Instance;
import io.github.kawamuray.wasmtime.Module;
import io.github.kawamuray.wasmtime.Store;
import io.github.kawamuray.wasmtime.Val;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What one line costs at batch 1 on wasmtime, beside the floor no driver or host code can go under:
 * one wasmtime-java {@code Func.call} of an export that takes nothing, returns nothing and does
 * nothing, on a store configured as the runtime's (epoch interruption on). Beside them, Jackson
 * {@code readTree} of one short {@code jsonl} line and one {@code claude-code} line, and the two
 * drivers' {@code parse} of one line — the terms of the parse-cost ratio at batch 1
 * (benchmarks/README.md).
 *
 * <p>Why it exists: at batch 1 a {@code parse} is one crossing per line, and wasmtime-java 0.19's
 * crossing has a fixed cost inside its native library (it looks up classes and fields and builds a
 * result array on every call). For {@code jsonl} to reach half of {@code claude-code}'s ratio at
 * batch 1, a whole {@code parse} of one line would have to cost at most about {@code jsonlJackson ×
 * 2 × claudeParse / claudeJackson}; this bench shows whether the empty call alone is already above
 * that, in one run.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar CrossingFloorBench
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "-XX:-DontCompileHugeMethods")
public class CrossingFloorBench {

  /**
   * {@code (module (func (export "nop")))}, in binary: the type section (one {@code [] -> []}), the
   * function section, the export and a body that is only {@code end}.
   */
  static final byte[] NOP_MODULE = {
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00, // magic, version 1
    0x01,
    0x04,
    0x01,
    0x60,
    0x00,
    0x00, // type section: func [] -> []
    0x03,
    0x02,
    0x01,
    0x00, // function section: one function of type 0
    0x07,
    0x07,
    0x01,
    0x03,
    0x6e,
    0x6f,
    0x70,
    0x00,
    0x00, // export "nop" = func 0
    0x0a,
    0x04,
    0x01,
    0x02,
    0x00,
    0x0b // code section: no locals, end
  };

  private static final Val[] NO_VALUES = new Val[0];

  private final ObjectMapper mapper = new ObjectMapper();
  private Engine engine;
  private Store<Void> store;
  private Module module;
  private Instance nopInstance;
  private Func nop;
  private DriverLoader loader;
  private ProcessDriver jsonl;
  private ProcessDriver claudeCode;
  private Cycle jsonlLines;
  private Cycle claudeLines;

  @Setup
  public void setUp() {
    engine = new Engine(new Config().epochInterruption(true));
    store = new Store<>(null, engine);
    store.setEpochDeadline(Long.MAX_VALUE / 2);
    module = new Module(engine, NOP_MODULE);
    nopInstance = new Instance(store, module, List.of());
    nop =
        nopInstance
            .getFunc(store, "nop")
            .orElseThrow(() -> new IllegalStateException("the module exports no nop"));
    loader = DriverLoader.create("wasmtime", DriverLoader.Settings.DEFAULTS);
    jsonl = ParseBench.load(loader, "jsonl").newInstance();
    claudeCode = ParseBench.load(loader, "claude-code").newInstance();
    jsonlLines = new Cycle("jsonl");
    claudeLines = new Cycle("claude-code");
  }

  /** A driver's transcript lines, one at a time, round and round. */
  private static final class Cycle {
    private final List<List<String>> singles;
    private int next;

    Cycle(String driver) {
      singles =
          ParseBench.transcriptLines(ParseBench.transcriptsOf(driver)).stream()
              .map(List::of)
              .toList();
    }

    List<String> next() {
      List<String> one = singles.get(next);
      next = (next + 1) % singles.size();
      return one;
    }
  }

  @TearDown
  public void tearDown() {
    jsonl.close();
    claudeCode.close();
    loader.close();
    nop.close();
    nopInstance.close();
    module.close();
    store.close();
    engine.close();
  }

  /** The floor: one crossing that passes no value and runs no guest instruction but {@code end}. */
  @Benchmark
  public Object emptyCall() {
    return nop.call(store, NO_VALUES);
  }

  @Benchmark
  public Object jsonlParseOneLine() {
    return jsonl.parse(jsonlLines.next());
  }

  @Benchmark
  public Object jsonlJacksonOneLine() throws IOException {
    return mapper.readTree(jsonlLines.next().get(0));
  }

  @Benchmark
  public Object claudeCodeParseOneLine() {
    return claudeCode.parse(claudeLines.next());
  }

  @Benchmark
  public Object claudeCodeJacksonOneLine() throws IOException {
    return mapper.readTree(claudeLines.next().get(0));
  }
}
