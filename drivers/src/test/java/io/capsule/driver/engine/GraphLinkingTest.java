package io.capsule.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.component.CoreGraph;
import io.capsule.driver.wasm.DriverException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What every engine refuses in a core graph before compiling it. */
class GraphLinkingTest {

  /** {@code (module (func (export "_start")))}, assembled by hand. */
  private static final byte[] COMMAND =
      HexFormat.of()
          .parseHex(
              "0061736d01000000" // magic, version
                  + "010401600000" // type: () -> ()
                  + "03020100" // one function of type 0
                  + "070a01065f73746172740000" // export "_start" func 0
                  + "0a040102000b"); // body: end

  @Test
  void aCommandModuleIsRefusedBecauseALinkerWouldReinstantiateItPerCall() {
    CoreGraph graph =
        new CoreGraph(
            List.of(COMMAND), List.of(new CoreGraph.Instantiate(0, Map.of())), 0, 0, List.of());
    DriverException e =
        assertThrows(DriverException.class, () -> GraphLinking.prepare(graph, 1 << 20));
    assertEquals(Code.E_RUN_032, e.code());
    assertTrue(e.getMessage().contains("exports _start"), e.getMessage());
  }

  @Test
  void aBundleThatPassesAnExportOnResolvesToTheModuleThatDefinesIt() {
    CoreGraph graph =
        new CoreGraph(
            List.of(COMMAND),
            List.of(
                new CoreGraph.Instantiate(0, Map.of()),
                new CoreGraph.Bundle(Map.of("run", new CoreGraph.Export(0, "_start"))),
                new CoreGraph.Bundle(Map.of("again", new CoreGraph.Export(1, "run")))),
            0,
            0,
            List.of());
    GraphLinking linking = new GraphLinking(graph, List.of());
    assertEquals(new GraphLinking.ModuleExport(0, "_start"), linking.resolve(2, "again"));
    assertThrows(DriverException.class, () -> linking.resolve(2, "missing"));
  }
}
