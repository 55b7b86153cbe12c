package io.capsule.runtime.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The gate as a table: each input, and the first check it fails (or that it is admitted). */
class CallGateTest {
  private static final ShellTool GIT = new ShellTool("git", Path.of("/usr/bin/git"));

  /** Denies any call whose first argument is "push". */
  private static final ToolPolicy NO_PUSH =
      call ->
          !call.args().isEmpty() && call.args().get(0).equals("push")
              ? ToolPolicy.Decision.deny("no pushing")
              : ToolPolicy.Decision.allow();

  @ParameterizedTest(name = "[{index}] {0} {1} ending={2} readOnly={3} -> {4}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          git   | {"args":["status"]}                   | false | NOT_REQUIRED  | admitted
          git   | {"args":[]}                           | false | NOT_REQUIRED  | admitted
          git   | {"args":["log"],"stdin":"x"}          | false | ENFORCED      | admitted
          rg    | {"args":["x"]}                        | false | NOT_REQUIRED  | E-TOOL-002
          GIT   | {"args":["x"]}                        | false | NOT_REQUIRED  | E-TOOL-002
          git   | {}                                    | false | NOT_REQUIRED  | E-TOOL-002
          git   | []                                    | false | NOT_REQUIRED  | E-TOOL-002
          git   | "status"                              | false | NOT_REQUIRED  | E-TOOL-002
          git   | {"args":"status"}                     | false | NOT_REQUIRED  | E-TOOL-002
          git   | {"args":[["status"]]}                 | false | NOT_REQUIRED  | E-TOOL-002
          git   | {"args":[null]}                       | false | NOT_REQUIRED  | E-TOOL-002
          git   | {"args":["a\\u0000b"]}                | false | NOT_REQUIRED  | E-TOOL-002
          git   | {"args":[],"stdin":null}              | false | NOT_REQUIRED  | E-TOOL-002
          git   | {"args":[],"env":{}}                  | false | NOT_REQUIRED  | E-TOOL-002
          rg    | {"args":["x"]}                        | true  | UNENFORCEABLE | E-TOOL-002
          git   | {"args":"bad"}                        | true  | NOT_REQUIRED  | E-TOOL-002
          git   | {"args":["status"]}                   | true  | NOT_REQUIRED  | E-TOOL-003
          git   | {"args":["push"]}                     | true  | UNENFORCEABLE | E-TOOL-003
          git   | {"args":["status"]}                   | false | UNENFORCEABLE | E-TOOL-006
          git   | {"args":["push"]}                     | false | UNENFORCEABLE | E-TOOL-006
          git   | {"args":["push"]}                     | false | NOT_REQUIRED  | E-TOOL-004
          git   | {"args":["push"]}                     | false | ENFORCED      | E-TOOL-004
          """)
  void refusesWithTheFirstFailingCheckInOrder(
      String tool, String arguments, boolean ending, CallGate.ReadOnly readOnly, String expected)
      throws Exception {
    JsonNode args = BridgeTestSupport.JSON.readTree(arguments);
    CallGate.Verdict verdict =
        new CallGate(List.of(GIT), readOnly, NO_PUSH).check(tool, args, ending);
    String got = verdict instanceof CallGate.Refused r ? r.diagnostic().code().id() : "admitted";
    assertEquals(expected, got, verdict.toString());
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          {"args":["status","-s"]}          | status,-s |
          {"args":["a b","*"],"stdin":"in"} | a b,*     | in
          """)
  void admitsTheArgumentsAndStdinExactlyAsGiven(String arguments, String args, String stdin)
      throws Exception {
    CallGate.Verdict verdict =
        new CallGate(List.of(GIT), CallGate.ReadOnly.NOT_REQUIRED, ToolPolicy.ALLOW_ALL)
            .check("git", BridgeTestSupport.JSON.readTree(arguments), false);
    CallGate.Admitted admitted = assertInstanceOf(CallGate.Admitted.class, verdict);
    assertEquals(GIT, admitted.tool());
    assertEquals(List.of(args.split(",")), admitted.args());
    assertEquals(Optional.ofNullable(stdin), admitted.stdin());
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @CsvSource({"a", "ab"})
  void showsThePolicyTheArgumentsAndTheStdinSize(String stdin) throws Exception {
    ToolPolicy.Call[] seen = new ToolPolicy.Call[1];
    ToolPolicy recording =
        call -> {
          seen[0] = call;
          return ToolPolicy.Decision.allow();
        };
    new CallGate(List.of(GIT), CallGate.ReadOnly.NOT_REQUIRED, recording)
        .check(
            "git",
            BridgeTestSupport.JSON.readTree("{\"args\":[\"log\"],\"stdin\":\"" + stdin + "é\"}"),
            false);
    assertEquals(new ToolPolicy.Call("git", List.of("log"), stdin.length() + 2), seen[0]);
  }
}
