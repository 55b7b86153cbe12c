package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.config.manifest.NetworkEntry;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class EgressPolicyTest {

  private static final EgressPolicy POLICY =
      new EgressPolicy(
          Stream.of("api.anthropic.com:443", "*.googleapis.com", "127.0.0.1:8080")
              .map(NetworkEntry::parse)
              .toList());

  static Stream<Arguments> table() {
    return Stream.of(
        Arguments.of("api.anthropic.com", 443, true),
        Arguments.of("API.Anthropic.COM", 443, true),
        Arguments.of("api.anthropic.com.", 443, true),
        Arguments.of("api.anthropic.com", 80, false),
        Arguments.of("evil.anthropic.com", 443, false),
        Arguments.of("anthropic.com", 443, false),
        Arguments.of("storage.googleapis.com", 443, true),
        Arguments.of("a.b.googleapis.com", 8443, true),
        Arguments.of("googleapis.com", 443, false),
        Arguments.of("evilgoogleapis.com", 443, false),
        Arguments.of("127.0.0.1", 8080, true),
        Arguments.of("127.0.0.1", 8081, false),
        Arguments.of("localhost", 8080, false),
        Arguments.of("::1", 8080, false),
        Arguments.of("bad_host", 443, false),
        Arguments.of("api.anthropic.com", 0, false),
        Arguments.of("api.anthropic.com", 70000, false));
  }

  @ParameterizedTest
  @MethodSource("table")
  void grantsExactlyTheManifestsHosts(String host, int port, boolean granted) {
    assertEquals(granted, POLICY.refusal(host, port).isEmpty(), host + ":" + port);
  }

  @ParameterizedTest
  @MethodSource("table")
  void anEmptyAllowlistGrantsNothing(String host, int port, boolean ignored) {
    assertEquals(false, new EgressPolicy(List.of()).refusal(host, port).isEmpty());
  }
}
