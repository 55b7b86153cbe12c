package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Spec tables for docs/run-semantics.md §3's version rules. */
class VersionProbeTest {

  static Stream<Arguments> lines() {
    return Stream.of(
        Arguments.of("the first line of stdout", "1.2.3\nother\n", "", Optional.of("1.2.3")),
        Arguments.of("blank lines are skipped", "\n  \n x 1.0 \n", "", Optional.of("x 1.0")),
        Arguments.of("crlf output is trimmed", "\r\n1.0\r\n", "", Optional.of("1.0")),
        Arguments.of("stderr when stdout is blank", " \n", "2.0\n", Optional.of("2.0")),
        Arguments.of("stdout wins over stderr", "1.0", "2.0", Optional.of("1.0")),
        Arguments.of("nothing at all is unreadable", "", "\n\t\n", Optional.empty()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("lines")
  void theVersionIsTheFirstNonEmptyTrimmedLine(
      String name, String stdout, String stderr, Optional<String> expected) {
    assertEquals(expected, VersionProbe.versionLine(stdout, stderr));
  }

  static Stream<Arguments> tested() {
    List<String> versions = List.of("1.0.3", "2.1.0");
    return Stream.of(
        Arguments.of("a bare token", "1.0.3", versions, true),
        Arguments.of("a token among words", "claude 1.0.3 (Claude Code)", versions, true),
        Arguments.of("one leading v is dropped", "fake v2.1.0", versions, true),
        Arguments.of("only one v is dropped", "fake vv2.1.0", versions, false),
        Arguments.of("a longer version is not the same", "1.0.3-beta", versions, false),
        Arguments.of("punctuation stays part of the token", "version 1.0.3,", versions, false),
        Arguments.of("tabs separate tokens too", "x\t2.1.0", versions, true),
        Arguments.of("an untested version", "1.0.4", versions, false),
        Arguments.of("no tested versions at all", "1.0.3", List.of(), false),
        Arguments.of("a lone v is not empty-version", "v", List.of(""), false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tested")
  void aVersionIsTestedWhenATokenMatches(
      String name, String line, List<String> versions, boolean expected) {
    assertEquals(expected, VersionProbe.isTested(line, versions));
  }

  @Test
  void aTestedVersionHasNoWarning() {
    VersionProbe.Result result =
        VersionProbe.judge(finished("fake v2.1.0\n", ""), "fake", List.of("2.1.0"));
    assertEquals(Optional.of("fake v2.1.0"), result.version());
    assertTrue(result.tested());
    assertEquals(Optional.empty(), result.warning());
  }

  @Test
  void anUntestedVersionWarnsButIsPassedOn() {
    VersionProbe.Result result = VersionProbe.judge(finished("9.9\n", ""), "fake", List.of("1"));
    assertEquals(Optional.of("9.9"), result.version());
    assertFalse(result.tested());
    assertEquals(Code.W_RUN_002, result.warning().orElseThrow().code());
  }

  @Test
  void silenceATimeoutAndAFailedStartAreUnreadable() {
    for (CommandOutcome outcome :
        List.of(
            finished("", ""),
            new CommandOutcome.TimedOut(Duration.ofSeconds(10)),
            new CommandOutcome.NotStarted("no such file"))) {
      VersionProbe.Result result = VersionProbe.judge(outcome, "fake", List.of("1"));
      assertEquals(Optional.empty(), result.version(), outcome.toString());
      assertFalse(result.tested());
      assertEquals(Code.W_RUN_002, result.warning().orElseThrow().code());
    }
  }

  private static CommandOutcome finished(String stdout, String stderr) {
    return new CommandOutcome.Finished(Optional.of(0), Optional.empty(), stdout, stderr);
  }
}
