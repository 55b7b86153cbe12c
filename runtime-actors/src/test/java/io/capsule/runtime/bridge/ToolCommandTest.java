package io.capsule.runtime.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The exact argv a tool starts with. */
class ToolCommandTest {

  @ParameterizedTest(name = "[{index}] readOnly={0} root={1}")
  @CsvSource({
    "false, true,  ''",
    "false, false, ''",
    "true,  true,  'unshare --mount -- sh -c SCRIPT /work'",
    "true,  false, 'unshare --mount --map-root-user -- sh -c SCRIPT /work'"
  })
  void startsEveryToolThroughSetsidAndReadOnlyOnesInAPrivateMountNamespace(
      boolean readOnly, boolean asRoot, String prelude) {
    List<String> argv =
        ToolCommand.argv(
            Path.of("/usr/bin/git"),
            List.of("log", "--format=%H $x", "; rm -rf /"),
            readOnly ? Optional.of(Path.of("/work")) : Optional.empty(),
            asRoot);
    List<String> names = new ArrayList<>();
    for (String a : argv) {
      names.add(shortName(a));
    }
    List<String> expected = new ArrayList<>(List.of("setsid"));
    if (!prelude.isEmpty()) {
      expected.addAll(List.of(prelude.split(" ")));
    }
    expected.addAll(List.of("/usr/bin/git", "log", "--format=%H $x", "; rm -rf /"));
    assertEquals(expected, names);
    assertTrue(Path.of(argv.get(0)).isAbsolute(), "setsid never comes from the granted PATH");
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource({"--bind -o ro \"$0\" \"$0\"", "cd \"$0\"", "! test -w .", "exit 125", "exec \"$@\""})
  void mountsReadOnlyChecksItAndOnlyThenExecsTheToolWithItsArgumentsAsPositionalParameters(
      String piece) {
    String script = ToolCommand.readOnlyScript();
    assertTrue(script.contains(piece), script);
    assertTrue(script.indexOf("! test -w .") < script.indexOf("exec \"$@\""), script);
  }

  /** System utilities by file name (their directory varies by host), the script as SCRIPT. */
  private static String shortName(String arg) {
    if (arg.equals(ToolCommand.readOnlyScript())) {
      return "SCRIPT";
    }
    for (Path system : List.of(ToolCommand.SETSID, ToolCommand.UNSHARE, ToolCommand.SH)) {
      if (arg.equals(system.toString())) {
        return system.getFileName().toString();
      }
    }
    return arg;
  }
}
