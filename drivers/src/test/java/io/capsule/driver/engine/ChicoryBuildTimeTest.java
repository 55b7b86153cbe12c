package io.capsule.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.load.BuiltinCoreModules;
import io.capsule.driver.load.DriverLoader;
import io.capsule.driver.load.LoadedDriver;
import io.capsule.driver.wasm.DriverException;
import io.capsule.driver.wasm.DriverTrap;
import io.capsule.driver.wasm.WasmInstance;
import io.capsule.driver.wasm.WasmModule;
import java.net.URL;
import java.security.CodeSource;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Chicory compiled at build time (drivers/pom.xml): the built-ins run on classes from the drivers
 * jar and nothing is compiled at run time for them; a folder driver is compiled at run time, once
 * per SHA-256; the memory cap and the call deadline hold on build-time classes (the two fixtures
 * compiled by the same plugin into the test classes).
 */
class ChicoryBuildTimeTest {

  private static final Duration DEADLINE = Duration.ofSeconds(30);
  private static final Duration SHORT = Duration.ofMillis(300);
  private static final long CAP = 2L << 20;

  @Test
  void everyBuiltinIsIndexedByTheShaOfTheCoreModuleTheLoaderExtracts() {
    for (String name : DriverLoader.BUILTINS) {
      byte[] core = BuiltinCoreModules.coreModule(name);
      assertEquals(
          ChicoryBuildTimeMachines.machineClassName(name),
          ChicoryBuildTimeMachines.index().get(Sha256.hex(core)),
          name);
    }
    assertEquals(DriverLoader.BUILTINS.size(), ChicoryBuildTimeMachines.index().size());
  }

  @Test
  void theBuiltinsLoadAndParseOnClassesFromTheJarWithoutCompilingAnything() {
    try (ChicoryEngine engine = new ChicoryEngine();
        DriverLoader loader = new DriverLoader(engine, DriverLoader.Settings.DEFAULTS)) {
      for (String name : DriverLoader.BUILTINS) {
        LoadedDriver driver = loader.loadBuiltin(name, Optional.empty()); // runs describe
        try (ProcessDriver run = driver.newInstance()) {
          assertEquals(List.of(), run.parse(List.of("")), name);
        }
        try (WasmInstance instance = driver.module().instantiate(DEADLINE)) {
          Class<?> machine = ((ChicoryInstance) instance).machineClass();
          assertEquals(ChicoryBuildTimeMachines.machineClassName(name), machine.getName());
          assertEquals(jarOf(ChicoryEngine.class), jarOf(machine), name);
        }
      }
      assertEquals(0, engine.runtimeCompilations());
    }
  }

  @Test
  void aFolderDriverIsCompiledAtRunTimeOncePerSha256() {
    try (ChicoryEngine engine = new ChicoryEngine()) {
      CompiledModuleCache cache = new CompiledModuleCache(engine);
      byte[] minimal = Fixtures.bytes("minimal");
      WasmModule first = cache.compile(minimal, CAP);
      assertSame(first, cache.compile(minimal.clone(), CAP));
      assertEquals(1, engine.runtimeCompilations());
      try (WasmInstance instance = first.instantiate(DEADLINE)) {
        Class<?> machine = ((ChicoryInstance) instance).machineClass();
        assertFalse(machine.getName().startsWith(ChicoryBuildTimeMachines.PACKAGE));
        assertNotEquals(jarOf(ChicoryEngine.class), jarOf(machine));
        assertEquals(1, instance.call(Fixtures.export("parse"), 0, 0).length);
      }
    }
  }

  @Test
  void theConfiguredMemoryCapHoldsOnABuiltinsBuildTimeClasses() {
    long minPages = minPages(BuiltinCoreModules.coreModule("jsonl"));
    long cap = (minPages + 16) * CoreModule.PAGE; // one MiB above what it starts with
    String text = "x".repeat(2 << 20);
    String line = "{\"type\":\"delta\",\"text\":\"" + text + "\"}";
    try (ChicoryEngine engine = new ChicoryEngine();
        DriverLoader capped = new DriverLoader(engine, new DriverLoader.Settings(cap, DEADLINE));
        ProcessDriver run = capped.loadBuiltin("jsonl", Optional.empty()).newInstance()) {
      DriverException e = assertThrows(DriverException.class, () -> run.parse(List.of(line)));
      assertEquals(Code.E_RUN_034, e.code(), e.getMessage());
      assertEquals(0, engine.runtimeCompilations());
    }
    try (ChicoryEngine engine = new ChicoryEngine();
        DriverLoader roomy = new DriverLoader(engine, DriverLoader.Settings.DEFAULTS);
        ProcessDriver run = roomy.loadBuiltin("jsonl", Optional.empty()).newInstance()) {
      assertEquals(List.of(new Event.TextDelta(text)), run.parse(List.of(line)));
      assertEquals(0, engine.runtimeCompilations());
    }
  }

  @Test
  void anEndlessLoopOnBuildTimeClassesStopsAtTheDeadline() {
    try (ChicoryEngine engine = fixtureEngine();
        WasmInstance i = engine.compile(Fixtures.bytes("parse-loop"), CAP).instantiate(SHORT)) {
      assertEquals(
          "io.capsule.driver.engine.fixture.ParseLoopMachine",
          ((ChicoryInstance) i).machineClass().getName());
      long start = System.nanoTime();
      DriverTrap e = assertThrows(DriverTrap.class, () -> i.call(Fixtures.export("parse"), 0, 0));
      long tookMs = (System.nanoTime() - start) / 1_000_000;
      assertEquals("deadline", e.diagnostic().details().get("cause"), e.getMessage());
      assertTrue(tookMs >= 250 && tookMs < 5_000, "stopped after " + tookMs + " ms");
      assertFalse(Thread.currentThread().isInterrupted());
      assertEquals(0, engine.runtimeCompilations());
    }
  }

  @Test
  void aMemoryBombOnBuildTimeClassesStopsAtTheCap() {
    try (ChicoryEngine engine = fixtureEngine();
        WasmInstance i =
            engine.compile(Fixtures.bytes("parse-membomb"), CAP).instantiate(DEADLINE)) {
      assertEquals(
          "io.capsule.driver.engine.fixture.ParseMembombMachine",
          ((ChicoryInstance) i).machineClass().getName());
      DriverTrap e = assertThrows(DriverTrap.class, () -> i.call(Fixtures.export("parse"), 0, 0));
      assertEquals("trap", e.diagnostic().details().get("cause"));
      long size = i.memory().size();
      assertTrue(size <= CAP && size > CAP / 2, "memory ended at " + size + " bytes");
      assertEquals(0, engine.runtimeCompilations());
    }
  }

  /** An engine whose build-time machines are the two fixtures compiled into the test classes. */
  private static ChicoryEngine fixtureEngine() {
    Map<String, String> classes =
        Map.of(
            Sha256.hex(Fixtures.bytes("parse-loop")),
            "io.capsule.driver.engine.fixture.ParseLoopMachine",
            Sha256.hex(Fixtures.bytes("parse-membomb")),
            "io.capsule.driver.engine.fixture.ParseMembombMachine");
    return new ChicoryEngine(
        sha -> Optional.ofNullable(classes.get(sha)).flatMap(ChicoryBuildTimeMachines::forClass));
  }

  private static long minPages(byte[] core) {
    try {
      return CoreModule.parse(core).memories().get(0).minPages();
    } catch (ByteReader.Malformed e) {
      throw new AssertionError(e);
    }
  }

  private static URL jarOf(Class<?> type) {
    CodeSource source = type.getProtectionDomain().getCodeSource();
    return source == null ? null : source.getLocation();
  }
}
