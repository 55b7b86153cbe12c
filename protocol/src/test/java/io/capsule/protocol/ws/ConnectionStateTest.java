package io.capsule.protocol.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.protocol.ws.ConnectionState.Status;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What a person reads about a runner's connection ({@code capsule runner} prints it). */
class ConnectionStateTest {

  static Stream<Arguments> states() {
    return Stream.of(
        Arguments.of(Status.CONNECTING, 0, null, null, "connecting"),
        Arguments.of(Status.CONNECTING, 2, null, null, "connecting (attempt 3)"),
        Arguments.of(Status.CONNECTED, 0, null, null, "connected"),
        Arguments.of(Status.CLOSED, 0, null, null, "closed"),
        Arguments.of(
            Status.DISCONNECTED,
            1,
            null,
            "cannot connect: Connection failed.",
            "disconnected: cannot connect: Connection failed.; retrying"),
        Arguments.of(
            Status.DISCONNECTED,
            1,
            401,
            "E-PRO-007 token expired",
            "disconnected (HTTP 401: the token was refused): E-PRO-007 token expired; retrying"),
        Arguments.of(
            Status.DISCONNECTED,
            1,
            1011,
            "E-PRO-010",
            "disconnected (close 1011: the hub stopped): E-PRO-010; retrying"),
        Arguments.of(
            Status.DISCONNECTED,
            1,
            4401,
            null,
            "disconnected (close 4401: the token is for another project); retrying"),
        Arguments.of(
            Status.DISCONNECTED,
            1,
            4000,
            null,
            "disconnected (close 4000: replaced by a newer" + " connection); retrying"),
        Arguments.of(Status.DISCONNECTED, 1, 503, null, "disconnected (HTTP 503); retrying"),
        Arguments.of(Status.DISCONNECTED, 1, 1001, null, "disconnected (close 1001); retrying"));
  }

  @ParameterizedTest(name = "{4}")
  @MethodSource("states")
  void eachStateReadsAsOneLine(
      Status status, int attempt, Integer code, String reason, String expected) {
    ConnectionState s =
        new ConnectionState(
            status,
            attempt,
            code == null ? OptionalInt.empty() : OptionalInt.of(code),
            Optional.ofNullable(reason));
    assertEquals(expected, s.describe());
  }
}
