package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.OptionalLong;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The request's budget tightens the manifest's ceilings and never loosens them. */
class RunLaunchTest {

  private static OptionalLong of(Long v) {
    return v == null ? OptionalLong.empty() : OptionalLong.of(v);
  }

  static Stream<Arguments> ceilings() {
    return Stream.of(
        // manifest, budget, ceiling (null: none)
        Arguments.of(null, null, null),
        Arguments.of(10L, null, 10L),
        Arguments.of(null, 3L, 3L),
        Arguments.of(10L, 3L, 3L),
        Arguments.of(3L, 10L, 3L),
        Arguments.of(5L, 5L, 5L),
        Arguments.of(5L, 0L, 0L));
  }

  @ParameterizedTest(name = "manifest {0}, budget {1} -> {2}")
  @MethodSource("ceilings")
  void theTighterCeilingWins(Long manifest, Long budget, Long ceiling) {
    assertEquals(of(ceiling), RunLaunch.tighter(of(manifest), of(budget)));
  }
}
