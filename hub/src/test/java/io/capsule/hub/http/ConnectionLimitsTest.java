package io.capsule.hub.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ConnectionLimitsTest {

  /**
   * Steps separated by spaces: {@code +a} opens from address a (127.0.0.a's last digit), {@code -a}
   * releases one of a's. Outcome: one letter per {@code +}: {@code Y} admitted, {@code A} over the
   * address's share, {@code T} over the total.
   */
  @ParameterizedTest(name = "[{index}] total {0}, per address {1}: {2} -> {3}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # total | per address | steps                    | outcomes | open at end
          3       | 2           | +1 +1 +1                 | YYA      | 2
          3       | 2           | +1 +1 +2 +2              | YYYT     | 3
          3       | 3           | +1 +1 +1 +1              | YYYA     | 3
          3       | 2           | +1 +1 -1 +1              | YYY      | 2
          3       | 2           | +1 +2 +3 -2 +1 +2        | YYYYT    | 3
          1       | 1           | +1 +2 -1 +2 +1           | YTYT     | 1
          5       | 1           | +1 +2 +3 +4 +5 +6 +1     | YYYYYTA  | 5
          4       | 2           | +1 +1 +1 -1 -1 +1 +1 +1  | YYAYYA   | 2
          """)
  void admitsUpToBothLimits(int total, int perAddress, String steps, String outcomes, int openAtEnd)
      throws Exception {
    ConnectionLimits limits = new ConnectionLimits(total, perAddress);
    StringBuilder got = new StringBuilder();
    for (String step : steps.split(" ")) {
      InetAddress a = InetAddress.getByName("127.0.0." + step.substring(1));
      if (step.startsWith("+")) {
        got.append(
            switch (limits.admit(a)) {
              case ADMITTED -> 'Y';
              case OVER_ADDRESS -> 'A';
              case OVER_TOTAL -> 'T';
            });
      } else {
        limits.release(a);
      }
    }
    assertEquals(outcomes, got.toString());
    assertEquals(openAtEnd, limits.open());
  }

  @Test
  void releasingEveryConnectionLeavesNoAddressBehind() throws Exception {
    ConnectionLimits limits = new ConnectionLimits(100, 10);
    List<InetAddress> admitted = new ArrayList<>();
    for (int i = 1; i <= 50; i++) {
      InetAddress a = InetAddress.getByName("127.0.1." + i);
      limits.admit(a);
      limits.admit(a);
      admitted.add(a);
      admitted.add(a);
    }
    assertEquals(50, limits.addresses());
    admitted.forEach(limits::release);
    assertEquals(0, limits.open());
    assertEquals(0, limits.addresses());
  }

  @Test
  void aReleaseWithoutAnAdmissionIsABug() throws Exception {
    ConnectionLimits limits = new ConnectionLimits(1, 1);
    assertThrows(
        IllegalStateException.class, () -> limits.release(InetAddress.getByName("127.0.0.9")));
  }

  @Test
  void limitsBelowOneAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new ConnectionLimits(0, 1));
    assertThrows(IllegalArgumentException.class, () -> new ConnectionLimits(1, 0));
  }
}
