package io.capsule.driver.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.HarnessNeeds;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.PathAccess;
import io.capsule.driver.api.PathNeed;
import io.capsule.driver.wasm.DriverException;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class DescriptionChecksTest {

  private static final LoginCheck LOGIN = new LoginCheck.Command(List.of("auth"));

  private static Description d(String binary, List<String> env, LoginCheck login, HarnessNeeds n) {
    return Descriptions.with(binary, env, true, login, n);
  }

  private static HarnessNeeds paths(String... paths) {
    return new HarnessNeeds(
        Stream.of(paths).map(p -> new PathNeed(p, PathAccess.READ)).toList(), List.of());
  }

  private static HarnessNeeds hosts(String... hosts) {
    return new HarnessNeeds(List.of(), List.of(hosts));
  }

  static Stream<Arguments> table() {
    return Stream.of(
        Arguments.of("the minimal fixture's", Descriptions.minimal(), ""),
        Arguments.of("no needs at all", d("x", List.of(), LOGIN, HarnessNeeds.NONE), ""),
        Arguments.of(
            "login unavailable",
            d("x", List.of(), new LoginCheck.Unavailable("no way"), HarnessNeeds.NONE),
            ""),
        Arguments.of("an absolute path", d("x", List.of(), LOGIN, paths("/opt/x")), ""),
        Arguments.of("a wildcard host", d("x", List.of(), LOGIN, hosts("*.example.com:443")), ""),
        Arguments.of("empty binary", d("", List.of(), LOGIN, HarnessNeeds.NONE), "binary is empty"),
        Arguments.of("NUL in binary", d("a\0b", List.of(), LOGIN, HarnessNeeds.NONE), "NUL"),
        Arguments.of("an empty env name", d("x", List.of(""), LOGIN, HarnessNeeds.NONE), "empty"),
        Arguments.of(
            "'=' in an env name", d("x", List.of("A=B"), LOGIN, HarnessNeeds.NONE), "'A=B'"),
        Arguments.of("NUL in an env name", d("x", List.of("A\0"), LOGIN, HarnessNeeds.NONE), "NUL"),
        Arguments.of(
            "a login command without arguments",
            d("x", List.of(), new LoginCheck.Command(List.of()), HarnessNeeds.NONE),
            "login-check.command"),
        Arguments.of("a relative path", d("x", List.of(), LOGIN, paths("rel/dir")), "rel/dir"),
        Arguments.of("a bare ~", d("x", List.of(), LOGIN, paths("~")), "harness-needs path"),
        Arguments.of("a .. segment", d("x", List.of(), LOGIN, paths("/a/../b")), "'..'"),
        Arguments.of("a host with a scheme", d("x", List.of(), LOGIN, hosts("https://x")), "https"),
        Arguments.of("an empty host", d("x", List.of(), LOGIN, hosts("")), "host ''"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void aDescriptionIsUsableOrRefusedNamingTheProblem(String what, Description d, String problem) {
    if (problem.isEmpty()) {
      assertEquals(List.of(), DescriptionChecks.problems(d));
      DescriptionChecks.check(d, "test");
      return;
    }
    DriverException e =
        assertThrows(DriverException.class, () -> DescriptionChecks.check(d, "test"));
    assertEquals(Code.E_RUN_032, e.code());
    assertTrue(e.getMessage().contains(problem), e.getMessage());
    assertEquals("test", e.diagnostic().details().get("driver"));
  }
}
