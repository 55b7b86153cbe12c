package io.capsule.config.diag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The catalog and the sources agree: every code the reactor's {@code src/main} uses is in {@link
 * Code}, and every code in {@link Code} is raised somewhere, except the ones listed in {@link
 * #NOT_YET_RAISED}.
 */
class CatalogCoverageTest {

  /**
   * Codes in the catalog whose raising code has not landed yet. Each entry is a promise that a
   * module will raise it; the test fails as soon as one is used (so remove it here then), so this
   * list can only shrink and never lies. Empty is the goal.
   */
  static final Set<Code> NOT_YET_RAISED = EnumSet.noneOf(Code.class);

  private static JavaSourceScan scan;

  @BeforeAll
  static void scanTheReactor() throws IOException {
    // Code.java defines the codes; defining is not using.
    scan = JavaSourceScan.ofReactor(Set.of(Path.of("io/capsule/config/diag/Code.java")));
  }

  @Test
  void everyCodeUsedInTheSourcesIsInTheCatalog() {
    Map<String, Set<String>> unknown = new TreeMap<>(scan.uses);
    unknown.keySet().removeIf(id -> Code.byId(id).isPresent());

    assertEquals(Map.of(), unknown, "codes used but missing from Code.java (id → files)");
  }

  @Test
  void everyCatalogCodeIsRaisedSomewhereUnlessListedAsNotYetRaised() {
    List<String> neverUsed = new ArrayList<>();
    for (Code code : Code.values()) {
      if (!scan.uses.containsKey(code.id()) && !NOT_YET_RAISED.contains(code)) {
        neverUsed.add(code.id());
      }
    }

    assertEquals(
        List.of(),
        neverUsed,
        "codes in Code.java that no src/main raises: raise them, delete them, or list them in"
            + " NOT_YET_RAISED with the issue that will raise them");
  }

  @Test
  void noCodeListedAsNotYetRaisedIsAlreadyRaised() {
    Map<String, Set<String>> stale = new TreeMap<>();
    for (Code code : NOT_YET_RAISED) {
      if (scan.uses.containsKey(code.id())) {
        stale.put(code.id(), scan.uses.get(code.id()));
      }
    }

    assertEquals(
        Map.of(), stale, "remove these from CatalogCoverageTest.NOT_YET_RAISED: they are raised");
  }

  @Test
  void theScanSeesThisModulesOwnCodes() {
    for (Code code :
        List.of(
            Code.E_MAN_001,
            Code.E_MAN_002,
            Code.E_MAN_003,
            Code.E_CAP_016,
            Code.W_SEC_024,
            Code.E_CFG_001)) {
      assertTrue(scan.uses.containsKey(code.id()), code + " should be found in config/src/main");
    }
  }
}
