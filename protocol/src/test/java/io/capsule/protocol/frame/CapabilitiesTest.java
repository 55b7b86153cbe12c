package io.capsule.protocol.frame;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.protocol.codec.FrameCodec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CapabilitiesTest {

  /** Entries separated by spaces; {@code NUL}/{@code NL} stand for those characters. */
  @ParameterizedTest(name = "[{index}] {0} -> {1} / {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # capabilities                                  | capsules      | slots
          ''                                              | ''            | 1
          ack error-frames                                | ''            | 1
          ack capsule:echo slots:4                        | echo          | 4
          capsule:echo capsule:web-agent capsule:echo     | echo,web-agent | 1
          slots:0                                         | ''            | 0
          slots:4096                                      | ''            | 4096
          slots:4097                                      | ''            | 1
          slots:99999                                     | ''            | 1
          slots:999999999999                              | ''            | 1
          slots:-1                                        | ''            | 1
          slots:+3                                        | ''            | 1
          slots:                                          | ''            | 1
          slots:3x                                        | ''            | 1
          slots:x slots:2                                 | ''            | 2
          slots:2 slots:7                                 | ''            | 2
          SLOTS:5 Capsule:echo                            | ''            | 1
          capsule:                                        | ''            | 1
          capsule:Echo                                    | ''            | 1
          capsule:-echo                                   | ''            | 1
          capsule:../etc                                  | ''            | 1
          capsule:a/b                                     | ''            | 1
          capsule:echoNULx                                | ''            | 1
          capsule:echoNL                                  | ''            | 1
          capsule:echo:2                                  | ''            | 1
          capsule:a0123456789012345678901234567890123456789012345678901234567890123 | '' | 1
          capsule:a012345678901234567890123456789012345678901234567890123456789012 | a012345678901234567890123456789012345678901234567890123456789012 | 1
          capsule:ok capsule:BAD slots:2 future:thing     | ok            | 2
          """)
  void readsTheAnnouncementIgnoringMalformedEntries(String caps, String capsules, int slots) {
    Capabilities.Announced a = Capabilities.announced(entries(caps));
    assertEquals(
        capsules.isEmpty() ? List.of() : Arrays.asList(capsules.split(",")),
        new ArrayList<>(a.capsules()));
    assertEquals(slots, a.slots());
  }

  @Test
  void aRunnerAnnouncingNoCapsulesRunsAny() {
    assertTrue(Capabilities.announced(List.of("ack")).runs("anything"));
    Capabilities.Announced some = Capabilities.announced(List.of("capsule:echo"));
    assertTrue(some.runs("echo"));
    assertFalse(some.runs("other"));
  }

  @Test
  void helpersWriteWhatTheParserReads() {
    Capabilities.Announced a =
        Capabilities.announced(
            List.of(Capabilities.capsule("echo"), Capabilities.slots(3), Capabilities.ACK));
    assertEquals(List.of("echo"), new ArrayList<>(a.capsules()));
    assertEquals(3, a.slots());
    assertEquals("capsule:echo", Capabilities.capsule("echo"));
    assertEquals("slots:3", Capabilities.slots(3));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "Echo", "-x", "../x", "a/b", "a b", "a\nb"})
  void capsuleRefusesWhatTheParserWouldIgnore(String name) {
    assertThrows(IllegalArgumentException.class, () -> Capabilities.capsule(name));
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, 4097, Integer.MAX_VALUE, Integer.MIN_VALUE})
  void slotsRefusesWhatTheParserWouldIgnore(int n) {
    assertThrows(IllegalArgumentException.class, () -> Capabilities.slots(n));
  }

  @Test
  void theAnnouncementSurvivesTheWire() {
    Hello h =
        new Hello(
            "p",
            "1.0",
            List.of("ack", Capabilities.capsule("echo"), Capabilities.slots(2)),
            Map.of());
    Hello back = (Hello) FrameCodec.shared().decode(FrameCodec.shared().encode(h));
    assertEquals(
        Capabilities.announced(h.capabilities()), Capabilities.announced(back.capabilities()));
  }

  private static List<String> entries(String s) {
    if (s.isBlank()) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    for (String e : s.trim().split("\\s+")) {
      out.add(e.replace("NUL", "\0").replace("NL", "\n"));
    }
    return out;
  }
}
