package io.capsule.driver.component;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.engine.CoreModule;
import io.capsule.driver.engine.Fixtures;
import io.capsule.driver.wasm.DriverException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ComponentBinaryTest {

  private static final String IFACE = ComponentBinary.INTERFACE;
  private static final int[] UTF8 = {0x00};
  private static final int[] MEMORY0 = {0x03, 0};
  private static final int[] REALLOC5 = {0x04, 5};

  /** A module that imports main._initialize and calls it from its start function (a fixup). */
  private static final byte[] FIXUP =
      HexFormat.of()
          .parseHex(
              "0061736d01000000"
                  + "010401600000"
                  + "021401046d61696e0b5f696e697469616c697a650000"
                  + "080100");

  @Test
  void readsTheJcoComponentDownToItsMainModuleAndLifts() {
    DriverBinary d = ComponentBinary.read(Fixtures.bytes("minimal.component"));
    assertEquals(DriverBinary.Form.COMPONENT, d.form());
    assertEquals(IFACE, d.interfaceName());
    assertEquals(1, d.fixupModules(), "wit-component adds a fixup for _initialize");
    assertEquals("memory", d.memoryExport());
    assertEquals(Optional.of("cabi_realloc"), d.reallocExport());
    assertEquals(
        ComponentBinary.FUNCTIONS, d.liftsInOrder().stream().map(l -> l.function()).toList());
    assertEquals(IFACE + "#parse", d.functions().get("parse").coreExport());
    assertEquals(
        Optional.of("cabi_post_" + IFACE + "#parse"), d.functions().get("parse").postReturn());
    assertEquals(Optional.empty(), d.functions().get("launch").postReturn());
    assertTrue(CoreModule.looksLikeCoreModule(d.coreModule()));
  }

  @Test
  void readsAPlainCoreModuleByTheNamingConvention() {
    byte[] bytes = Fixtures.bytes("minimal");
    DriverBinary d = ComponentBinary.read(bytes);
    assertEquals(DriverBinary.Form.CORE_MODULE, d.form());
    assertEquals(bytes.length, d.coreModule().length);
    assertEquals(
        Optional.of("cabi_post_" + IFACE + "#describe"),
        d.functions().get("describe").postReturn());
    assertEquals(0, d.fixupModules());
  }

  @Test
  void acceptsAHandBuiltComponentWithAFixupModule() {
    DriverBinary d = ComponentBinary.read(good(c -> c.coreModule(FIXUP)).bytes());
    assertEquals(1, d.fixupModules());
    assertEquals(IFACE + "#read-login", d.functions().get("read-login").coreExport());
  }

  static Stream<Arguments> refusals() {
    return Stream.of(
        Arguments.of(
            "a @0.5.0 component", fixture("wrong-version.component"), Code.E_RUN_029, "0.5.0"),
        Arguments.of("a @0.5.0 core module", fixture("wrong-version"), Code.E_RUN_029, "0.5.0"),
        Arguments.of(
            "a module exporting no driver", fixture("not-a-driver"), Code.E_RUN_029, "exports no"),
        Arguments.of(
            "a module importing WASI",
            fixture("wasi-import"),
            Code.E_RUN_032,
            "wasi_snapshot_preview1.fd_write"),
        Arguments.of(
            "not WebAssembly",
            "hello".getBytes(java.nio.charset.StandardCharsets.UTF_8),
            Code.E_RUN_029,
            "neither"),
        Arguments.of("a truncated component", truncated(), Code.E_RUN_029, "does not parse"),
        Arguments.of("another component version", otherVersion(), Code.E_RUN_029, "version 12"),
        Arguments.of(
            "a component import of someone's host function",
            good(c -> c.importFunc("acme:host/fn")).bytes(),
            Code.E_RUN_032,
            "acme:host/fn"),
        Arguments.of(
            "a WASI name imported as a bare function, not an interface instance",
            good(c -> c.importFunc("wasi:cli/environment@0.2.0")).bytes(),
            Code.E_RUN_032,
            "imported directly (wasi:cli/environment@0.2.0)"),
        Arguments.of(
            "a real component importing wasi:sockets",
            fixture("import-sockets.component"),
            Code.E_RUN_032,
            "wasi:sockets/instance-network@0.2.3"),
        Arguments.of(
            "a real component importing acme:host/fn",
            fixture("import-acme.component"),
            Code.E_RUN_032,
            "the driver imports acme:host/fn;"),
        Arguments.of(
            "an import and a wrong version: the version first",
            wrongVersion(c -> c.importFunc("x:y/z")),
            Code.E_RUN_029,
            "0.5.0"),
        Arguments.of("utf16 strings", withOption(new int[] {0x01}), Code.E_RUN_032, "utf16"),
        Arguments.of(
            "latin1+utf16 strings", withOption(new int[] {0x02}), Code.E_RUN_032, "latin1+utf16"),
        Arguments.of("an async lift", withOption(new int[] {0x06}), Code.E_RUN_032, "async"),
        Arguments.of(
            "a canon lower",
            good(ComponentBytes::canonLower).bytes(),
            Code.E_RUN_032,
            "canon lower"),
        Arguments.of(
            "a second real core module",
            good(c -> c.coreModule(Fixtures.bytes("minimal"))).bytes(),
            Code.E_RUN_032,
            "#1 is not one"),
        Arguments.of(
            "a lift of a non-convention export",
            offConvention(),
            Code.E_RUN_032,
            "naming-convention"),
        Arguments.of("a lift missing", missingLift(), Code.E_RUN_029, "lifts no read-login"),
        Arguments.of(
            "a WASI import and a lowering of a function no import provides",
            good(c -> c.importInstance("wasi:cli/stdout@0.2.3").canonLower()).bytes(),
            Code.E_RUN_032,
            "its canon section has a canon lower of component function 0, not an import's"),
        Arguments.of(
            "a WASI import and a resource of the component's own",
            good(c -> c.importInstance("wasi:cli/stdout@0.2.3").raw(8, 1, 0x02, 0)).bytes(),
            Code.E_RUN_032,
            "resources of its own"),
        Arguments.of(
            "a WASI import and a component start function",
            good(c -> c.importInstance("wasi:cli/stdout@0.2.3").raw(9, 0, 0, 0)).bytes(),
            Code.E_RUN_032,
            "start function"),
        Arguments.of(
            "a WASI import at 0.3",
            good(c -> c.importInstance("wasi:cli/stdout@0.3.0")).bytes(),
            Code.E_RUN_032,
            "the driver imports wasi:cli/stdout@0.3.0;"));
  }

  @Test
  void readsTheAdapterGraphOfARealWasiComponentFromItsSections() {
    DriverBinary d = ComponentBinary.read(fixture("wasi/jsonl-wasi"));
    CoreGraph g = d.graph().orElseThrow();
    assertEquals(4, g.modules().size(), "main, adapter, shim, fixup");
    assertEquals(IFACE + "#parse", d.functions().get("parse").coreExport());
    assertTrue(g.imports().contains("wasi:cli/exit@0.2.12"), g.imports().toString());
    CoreGraph.Instantiate main = (CoreGraph.Instantiate) g.instances().get(g.mainInstance());
    assertEquals(g.mainModule(), main.module());
    assertEquals(java.util.Set.of("wasi_snapshot_preview1"), main.args().keySet());
    List<CoreGraph.Item> host = g.hostItems();
    assertTrue(
        host.stream()
            .anyMatch(
                i ->
                    i instanceof CoreGraph.Lowered l
                        && l.function().equals("get-environment")
                        && l.realloc().isPresent()),
        "get-environment is lowered with a realloc: " + host);
    assertTrue(
        host.stream()
            .anyMatch(
                i -> i instanceof CoreGraph.Dropped r && r.resource().equals("output-stream")),
        "output-stream handles are dropped with resource.drop: " + host);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusals")
  void refusesWithItsCodeNamingWhatItFound(String what, byte[] bytes, Code code, String named) {
    DriverException e = assertThrows(DriverException.class, () -> ComponentBinary.read(bytes));
    assertEquals(code, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(named), e.getMessage());
  }

  private static byte[] fixture(String name) {
    return Fixtures.bytes(name);
  }

  /** The minimal driver as a hand-built component; {@code extra} adds sections before export. */
  static ComponentBytes good(UnaryOperator<ComponentBytes> extra) {
    return layout(IFACE, extra, UTF8, true);
  }

  private static ComponentBytes layout(
      String exportName, UnaryOperator<ComponentBytes> extra, int[] option, boolean allLifts) {
    ComponentBytes c =
        new ComponentBytes()
            .coreModule(Fixtures.bytes("minimal"))
            .instantiate(0)
            .aliasCoreMemory(0, "memory");
    List<String> fns = ComponentBinary.FUNCTIONS;
    for (String fn : fns) {
      c.aliasCoreFunc(0, IFACE + "#" + fn);
    }
    c.aliasCoreFunc(0, "cabi_realloc");
    for (int i = 0; i < fns.size() - (allLifts ? 0 : 1); i++) {
      c.lift(i, option, MEMORY0, REALLOC5);
    }
    return extra.apply(c).exportInstance(exportName, 0);
  }

  private static byte[] wrongVersion(UnaryOperator<ComponentBytes> extra) {
    return layout("murmur:driver/process@0.5.0", extra, UTF8, true).bytes();
  }

  private static byte[] withOption(int[] option) {
    return layout(IFACE, c -> c, option, true).bytes();
  }

  private static byte[] missingLift() {
    return layout(IFACE, c -> c, UTF8, false).bytes();
  }

  private static byte[] offConvention() {
    // lift cabi_realloc (core func 5) as if it were a WIT function
    return good(c -> c.lift(5, UTF8, MEMORY0)).bytes();
  }

  private static byte[] truncated() {
    byte[] full = Fixtures.bytes("minimal.component");
    return java.util.Arrays.copyOf(full, full.length / 2);
  }

  private static byte[] otherVersion() {
    byte[] bytes = Fixtures.bytes("minimal.component").clone();
    bytes[4] = 0x0c;
    return bytes;
  }
}
