package io.capsule.driver.component;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.engine.ByteReader;
import io.capsule.driver.engine.CoreModule;
import io.capsule.driver.wasm.DriverException;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The load-time check of every host item a core graph wires into a module: the lowered function is
 * one of WASI 0.2's, the module imports it with the core type the canonical ABI gives it, and the
 * lowering carries the memory and realloc it needs; a drop is of a WASI resource. Each refusal is
 * {@code E-RUN-032} naming the import, where without the check the first call would trap on a host
 * function reading arguments that are not there.
 */
class GraphHostImportsTest {

  private static final String STDOUT = "wasi:cli/stdout@0.2.3";
  private static final String ENV = "wasi:cli/environment@0.2.3";
  private static final Optional<CoreGraph.Export> MEMORY =
      Optional.of(new CoreGraph.Export(9, "memory"));
  private static final Optional<CoreGraph.Export> REALLOC =
      Optional.of(new CoreGraph.Export(9, "cabi_realloc"));

  /** {@code (module (import "m" "f" (func (param …) (result …))))}, assembled by hand. */
  static CoreModule importing(String params, String results) {
    ByteArrayOutputStream type = new ByteArrayOutputStream();
    type.write(1);
    type.write(0x60);
    for (String list : new String[] {params, results}) {
      List<String> ts = list.isBlank() ? List.of() : List.of(list.split(" "));
      type.write(ts.size());
      ts.forEach(t -> type.write(t.equals("i64") ? 0x7e : 0x7f));
    }
    byte[] imports = {1, 1, 'm', 1, 'f', 0x00, 0};
    ByteArrayOutputStream m = new ByteArrayOutputStream();
    m.writeBytes(new byte[] {0, 'a', 's', 'm', 1, 0, 0, 0});
    m.write(1);
    m.write(type.size());
    m.writeBytes(type.toByteArray());
    m.write(2);
    m.write(imports.length);
    m.writeBytes(imports);
    try {
      return CoreModule.parse(m.toByteArray());
    } catch (ByteReader.Malformed e) {
      throw new AssertionError(e);
    }
  }

  /** Module 0 instantiated with {@code m.f} = {@code item}, passed on through one more bundle. */
  static void check(CoreGraph.Item item, CoreModule module) {
    CoreGraph graph =
        new CoreGraph(
            List.of(new byte[0]),
            List.of(
                new CoreGraph.Bundle(Map.of("g", item)),
                new CoreGraph.Bundle(Map.of("f", new CoreGraph.Export(0, "g"))),
                new CoreGraph.Instantiate(0, Map.of("m", 1))),
            2,
            0,
            List.of(STDOUT, ENV));
    HostImportChecks.check(graph, List.of(module));
  }

  static CoreGraph.Lowered lowered(String iface, String fn, boolean memory, boolean realloc) {
    return new CoreGraph.Lowered(
        iface, fn, memory ? MEMORY : Optional.empty(), realloc ? REALLOC : Optional.empty());
  }

  @Test
  void loweringsAndDropsAsTheCanonicalAbiGivesThemPass() {
    check(lowered(STDOUT, "get-stdout", false, false), importing("", "i32"));
    check(lowered(ENV, "get-environment", true, true), importing("i32", ""));
    check(
        lowered("wasi:io/streams@0.2.0", "[method]output-stream.write", true, false),
        importing("i32 i32 i32 i32", ""));
    // output-stream as wasi:cli/stdout names it (it uses wasi:io/streams's)
    check(new CoreGraph.Dropped(STDOUT, "output-stream"), importing("i32", ""));
  }

  static Stream<Arguments> refusals() {
    return Stream.of(
        Arguments.of(
            "another core type",
            lowered(STDOUT, "get-stdout", false, false),
            importing("i32", "i32"),
            "lowers "
                + STDOUT
                + "#get-stdout as a core function (i32) -> (i32), but the"
                + " canonical ABI flattens it to () -> (i32)"),
        Arguments.of(
            "an i32 where the ABI has an i64",
            lowered("wasi:clocks/monotonic-clock@0.2.3", "subscribe-duration", false, false),
            importing("i32", "i32"),
            "flattens it to (i64) -> (i32)"),
        Arguments.of(
            "no memory for a return pointer",
            lowered(ENV, "initial-cwd", false, true),
            importing("i32", ""),
            "lowers " + ENV + "#initial-cwd without the memory option it needs"),
        Arguments.of(
            "no realloc for a list result",
            lowered(ENV, "get-arguments", true, false),
            importing("i32", ""),
            "lowers " + ENV + "#get-arguments without the realloc option it needs"),
        Arguments.of(
            "a function WASI 0.2 does not have",
            lowered(ENV, "get-secret", true, true),
            importing("i32", ""),
            "the driver imports " + ENV + "#get-secret, which WASI 0.2 does not define"),
        Arguments.of(
            "a resource the interface does not have",
            new CoreGraph.Dropped(ENV, "output-stream"),
            importing("i32", ""),
            "drops resource output-stream of " + ENV),
        Arguments.of(
            "a drop of another core type",
            new CoreGraph.Dropped(STDOUT, "output-stream"),
            importing("i32 i32", ""),
            "not (i32) -> ()"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusals")
  void aMismatchIsRefusedAtLoadNamingTheImport(
      String what, CoreGraph.Item item, CoreModule module, String named) {
    DriverException e = assertThrows(DriverException.class, () -> check(item, module));
    assertEquals(Code.E_RUN_032, e.code());
    assertTrue(e.getMessage().contains(named), e.getMessage());
  }

  @Test
  void aMemoryImportSatisfiedByAHostFunctionIsRefused() {
    CoreModule memoryImport;
    try {
      memoryImport =
          CoreModule.parse(
              new byte[] {0, 'a', 's', 'm', 1, 0, 0, 0, 2, 8, 1, 1, 'm', 1, 'f', 0x02, 0x00, 0x01});
    } catch (ByteReader.Malformed e) {
      throw new AssertionError(e);
    }
    DriverException e =
        assertThrows(
            DriverException.class,
            () -> check(lowered(STDOUT, "get-stdout", false, false), memoryImport));
    assertEquals(Code.E_RUN_032, e.code());
    assertTrue(e.getMessage().contains("imports m.f as a memory"), e.getMessage());
  }
}
