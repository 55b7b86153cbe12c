package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code invocation.allowed_tools} narrows the capsule's tools and never widens them. */
class ToolNarrowingTest {

  static Stream<Arguments> table() {
    List<String> none = List.of();
    return Stream.of(
        // capsule tools, allowed (null: absent), offered, unknown
        Arguments.of(List.of("echo", "cat"), null, List.of("echo", "cat"), none),
        Arguments.of(List.of("echo", "echo"), null, List.of("echo"), none),
        Arguments.of(List.of("echo", "cat"), List.of("cat"), List.of("cat"), none),
        Arguments.of(List.of("echo", "cat"), List.of("cat", "echo"), List.of("echo", "cat"), none),
        Arguments.of(List.of("echo", "cat"), List.of(), none, none),
        Arguments.of(List.of("echo"), List.of("rm", "echo"), List.of("echo"), List.of("rm")),
        Arguments.of(List.of("echo"), List.of("rm", "rm"), none, List.of("rm")),
        Arguments.of(none, List.of("echo"), none, List.of("echo")),
        Arguments.of(none, null, none, none));
  }

  @ParameterizedTest(name = "tools {0}, allowed {1} -> offered {2}, unknown {3}")
  @MethodSource("table")
  void narrowsToTheIntersectionInManifestOrderAndNamesTheRest(
      List<String> capsule, List<String> allowed, List<String> offered, List<String> unknown) {
    ToolNarrowing n = ToolNarrowing.of(capsule, Optional.ofNullable(allowed));

    assertEquals(offered, n.offered());
    assertEquals(unknown, n.unknown());
  }
}
