package io.capsule.runtime.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** How one HTTP body is classified: request, notification, client response, or malformed. */
class JsonRpcTest {

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}        | Call initialize 1
          {"jsonrpc":"2.0","id":"a","method":"tools/list"}                 | Call tools/list "a"
          {"jsonrpc":"2.0","method":"notifications/initialized"}            | Notification
          {"jsonrpc":"2.0","id":3,"result":{}}                              | ClientResponse
          {"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}         | ClientResponse
          {"jsonrpc":"2.0","id":1,"method":"x"                               | Malformed -32700 null
          ''                                                                | Malformed -32700 null
          [{"jsonrpc":"2.0","id":1,"method":"ping"}]                        | Malformed -32600 null
          42                                                                | Malformed -32600 null
          {"id":1,"method":"ping"}                                          | Malformed -32600 1
          {"jsonrpc":"1.0","id":1,"method":"ping"}                          | Malformed -32600 1
          {"jsonrpc":"2.0","id":null,"method":"ping"}                       | Malformed -32600 null
          {"jsonrpc":"2.0","id":1.5,"method":"ping"}                        | Malformed -32600 null
          {"jsonrpc":"2.0","id":2}                                          | Malformed -32600 2
          {"jsonrpc":"2.0","id":2,"method":7}                               | Malformed -32600 2
          {"jsonrpc":"2.0","id":2,"method":"ping","params":"x"}             | Malformed -32600 2
          """)
  void classifiesEachBody(String body, String expected) {
    JsonRpc.Incoming in = JsonRpc.read(body.getBytes(StandardCharsets.UTF_8));
    String got;
    if (in instanceof JsonRpc.Call c) {
      got = "Call " + c.method() + " " + c.id();
    } else if (in instanceof JsonRpc.Malformed m) {
      got = "Malformed " + m.code() + " " + m.id();
    } else {
      got = in.getClass().getSimpleName();
    }
    assertEquals(expected, got);
  }
}
