package io.capsule.protocol.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The runner's failover choice: which URL next, and how long to back off before it. */
class HubEndpointsTest {

  /**
   * A script of events ({@code F} an attempt or connection failed, {@code M} the node closed with
   * 4012, its brain moved, {@code C} connected) and, after each {@code F} or {@code M}, the URL
   * dialled next and the back-off exponent that precedes it.
   */
  @ParameterizedTest(name = "{0} with {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # urls   | script   | dialled after each F (url:exponent)
          a        | F F F    | a:0 a:1 a:2
          a        | F C F    | a:0 a:0
          a,b      | F F F F  | b:0 a:0 b:1 a:1
          a,b      | F C F    | b:0 a:0
          a,b,c    | F F F F  | b:0 c:0 a:0 b:1
          a,b,c    | C F C F  | b:0 c:0
          a,b,c    | F F C F  | b:0 c:0 a:0
          a,b,c    | F F F C F F F F | b:0 c:0 a:0 b:0 c:0 a:0 b:1
          a,b,c    | C M      | a:0
          a,b,c    | C M F    | a:0 b:0
          a,b,c    | C M M M M | a:0 a:0 a:0 a:1
          a,b,c    | F C M C M | b:0 b:0 b:0
          """)
  void failsOverRoundRobinAndBacksOffOncePerRound(String urls, String script, String expected) {
    HubEndpoints e = HubEndpoints.parse(ws(urls));
    List<String> dialled = new ArrayList<>();
    for (String step : script.split(" ")) {
      if (step.equals("C")) {
        e.connected();
      } else {
        int exponent = step.equals("M") ? e.redial() : e.failed();
        dialled.add(host(e.current()) + ":" + exponent);
      }
    }
    assertEquals(expected, String.join(" ", dialled));
  }

  @Test
  void startsAtTheFirstUrlInTheGivenOrder() {
    HubEndpoints e = HubEndpoints.parse(" ws://b:1/v1/runner , ws://a:1/v1/runner");
    assertEquals("ws://b:1/v1/runner", e.current());
    assertEquals(List.of("ws://b:1/v1/runner", "ws://a:1/v1/runner"), e.urls());
  }

  @ParameterizedTest(name = "''{0}'' is refused: {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          ''                                      | no hub URL
          ws://a:1/v1/runner,                     | an empty hub URL
          ws://a:1/v1/runner,,ws://b:1/v1/runner  | an empty hub URL
          http://a:1/v1/runner                    | not a ws:// or wss:// URL
          a:1/v1/runner                           | not a ws:// or wss:// URL
          ws:///v1/runner                         | names no host
          ws://a:1/v1/runner,ws://a:1/v1/runner   | given twice
          ws://a b/v1/runner                      | is not a URL
          """)
  void refusesWhatCannotBeDialled(String spec, String says) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> HubEndpoints.parse(spec));
    assertTrue(e.getMessage().contains(says), e.getMessage());
  }

  @Test
  void acceptsSecureUrls() {
    assertEquals(
        "wss://hub.example/v1/runner", HubEndpoints.parse("wss://hub.example/v1/runner").current());
  }

  private static String ws(String hosts) {
    List<String> out = new ArrayList<>();
    for (String h : hosts.split(",")) {
      out.add("ws://" + h + ":8600/v1/runner");
    }
    return String.join(",", out);
  }

  private static String host(String url) {
    return url.substring("ws://".length(), url.indexOf(':', "ws://".length()));
  }
}
