package io.capsule.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.DiagnosticException;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What {@code POST /v1/tasks} accepts and how it refuses: a table of bodies (JSON with single
 * quotes for readability) and the exact message, JSON path first, of every refusal.
 */
class TaskRequestTest {

  private static TaskRequest parse(String body) {
    return TaskRequest.parse(body.replace('\'', '"'), () -> "task-new");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          {'capsule':'hello','goal':'Say hi'}                                  | hello | task-new | Say hi | agent
          {'capsule':'hello','goal':'g','id':'t-1','type':'chore','body':'b'}  | hello | t-1      | g      | agent
          {'capsule':'hello','goal':'g','role':'reviewer','runner':'r-a'}      | hello | task-new | g      | reviewer
          {'capsule':'hello','goal':'g','model':'m','session':'s','allowed_tools':['ls']} | hello | task-new | g | agent
          {'capsule':'hello','goal':'g','budget':{'max_turns':3,'max_tokens':0}} | hello | task-new | g    | agent
          {'capsule':'hello','task':{'schema_version':1,'id':'t-9','type':'x','goal':'full','criteria':[],'budget':{'iterations':2}}} | hello | t-9 | full | agent
          """)
  void goodBodiesParse(String body, String capsule, String id, String goal, String role) {
    TaskRequest r = parse(body);
    assertEquals(capsule, r.capsule());
    assertEquals(id, r.spec().id());
    assertEquals(goal, r.spec().goal());
    assertEquals(role, r.role());
    assertEquals("capsule:" + capsule, r.invocation().backend());
  }

  @Test
  void theInvocationCarriesModelSessionBudgetAndToolsAndTheRunnerIsKept() {
    TaskRequest r =
        parse(
            "{'capsule':'c','goal':'g','runner':'r-a','model':'m','session':'s',"
                + "'budget':{'max_turns':3},'allowed_tools':['ls']}");
    assertEquals(Optional.of("r-a"), r.runner());
    assertEquals(Optional.of("m"), r.invocation().model());
    assertEquals(Optional.of("s"), r.invocation().session());
    assertEquals(3L, r.invocation().maxTurns().getAsLong());
    assertEquals(java.util.List.of("ls"), r.invocation().allowedTools());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          {'capsule':'hello','task':'Say hi'}            | E-PRO-004 the task request is invalid: $.goal: required (the task's text), or a whole TaskSpec as ~task~; $.task: unknown key; did you mean ~goal~?
          {'capsule':'hello','gaol':'x','goal':'g'}      | E-PRO-004 the task request is invalid: $.gaol: unknown key; did you mean ~goal~?
          {'capsule':'hello','goal':'g','zzz':1}         | E-PRO-004 the task request is invalid: $.zzz: unknown key; known keys: allowed_tools, body, budget, capsule, goal, id, model, role, runner, session, type
          {'capsule':'hello','goal':'g','budget':{'max_turn':1}} | E-PRO-004 the task request is invalid: $.budget.max_turn: unknown key; did you mean ~max_turns~?
          {'goal':'g'}                                   | E-PRO-004 the task request is invalid: $.capsule: required (a capsule name, as the runners' folders are named)
          {'capsule':5,'goal':'g'}                       | E-PRO-004 the task request is invalid: $.capsule: number found, string expected
          {'capsule':'','goal':'g'}                      | E-PRO-004 the task request is invalid: $.capsule: must not be empty
          {'capsule':'a\\nb','goal':'g'}                 | E-PRO-004 the task request is invalid: $.capsule: U+000A is a control character; names must be printable
          {'capsule':'c','goal':'g','runner':'r\\u0007'} | E-PRO-004 the task request is invalid: $.runner: U+0007 is a control character; names must be printable
          {'capsule':'c','goal':'g','role':['x']}        | E-PRO-004 the task request is invalid: $.role: array found, string expected
          {'capsule':'c','goal':'g','id':'a/b'}          | E-PRO-004 the task request is invalid: $.id: U+002F '/' cannot be in a task id (it is a URL path segment)
          {'capsule':'c','goal':'g','id':'a b'}          | E-PRO-004 the task request is invalid: $.id: U+0020 cannot be in a task id (it is a URL path segment)
          {'capsule':'c','goal':'g','id':'t\\r'}         | E-PRO-004 the task request is invalid: $.id: U+000D is a control character; names must be printable
          {'capsule':'c','goal':''}                      | E-PRO-004 the task request is invalid: $.goal: must be at least 1 characters long
          {'capsule':'c','goal':7}                       | E-PRO-004 the task request is invalid: $.goal: number found, string expected
          {'capsule':'c','goal':'g','body':false}        | E-PRO-004 the task request is invalid: $.body: boolean found, string expected
          {'capsule':'c','goal':'g','budget':{'max_turns':-1}} | E-PRO-004 the task request is invalid: $.budget.max_turns: must have a minimum value of 0
          {'capsule':'c','goal':'g','budget':{'max_tokens':'9'}} | E-PRO-004 the task request is invalid: $.budget.max_tokens: string found, integer expected
          {'capsule':'c','goal':'g','budget':5}          | E-PRO-004 the task request is invalid: $.budget: integer found, object expected
          {'capsule':'c','goal':'g','allowed_tools':'ls'} | E-PRO-004 the task request is invalid: $.allowed_tools: string found, array expected
          {'capsule':'c','goal':'g','model':1}           | E-PRO-004 the task request is invalid: $.model: integer found, string expected
          {'capsule':'c','task':{'id':'t','type':'x','goal':'g','criteria':[],'budget':{'iterations':-2},'schema_version':1}} | E-PRO-004 the task request is invalid: $.task.budget.iterations: must have a minimum value of 0
          {'capsule':'c','task':{'id':'t','type':'x','goal':'g','criteria':[],'budget':{},'schema_version':1,'golas':1}} | E-PRO-004 the task request is invalid: $.task.budget: required property 'iterations' not found; $.task.golas: unknown key; did you mean ~goal~?
          {'capsule':'c','goal':'g','task':{'id':'t','type':'x','goal':'g','criteria':[],'budget':{'iterations':1},'schema_version':1}} | E-PRO-004 the task request is invalid: $.goal: give it inside ~task~ when ~task~ is given
          {'capsule':'c','task':{'id':'t/1','type':'x','goal':'g','criteria':[],'budget':{'iterations':1},'schema_version':1}} | E-PRO-004 the task request is invalid: $.task.id: U+002F '/' cannot be in a task id (it is a URL path segment)
          {'capsule':'c\\n','goal':'','budget':{'max_turns':-1},'x':1} | E-PRO-004 the task request is invalid: $.budget.max_turns: must have a minimum value of 0; $.capsule: U+000A is a control character; names must be printable; $.goal: must be at least 1 characters long; $.x: unknown key; known keys: allowed_tools, body, budget, capsule, goal, id, model, role, runner, session, type
          [1,2]                                          | E-PRO-001 the task request is invalid: $: the body must be a JSON object
          {'capsule':                                    | E-PRO-001 the task request is invalid: $: the body is not JSON: Unexpected end-of-input...
          """)
  void badBodiesAreRefusedWithEveryPathAndACode(String body, String expected) {
    DiagnosticException e = assertThrows(DiagnosticException.class, () -> parse(body));
    String want = expected.replace('~', '"');
    if (want.endsWith("...")) {
      // Jackson's own wording after the prefix is its business.
      String prefix = want.substring(0, want.length() - 3);
      assertTrue(e.diagnostic().toString().startsWith(prefix), e.diagnostic().toString());
    } else {
      assertEquals(want, e.diagnostic().toString());
    }
  }

  @Test
  void aVeryLongNameIsRefused() {
    String name = "c".repeat(TaskRequest.MAX_NAME + 1);
    DiagnosticException e =
        assertThrows(
            DiagnosticException.class, () -> parse("{'capsule':'" + name + "','goal':'g'}"));
    assertEquals(Code.E_PRO_004, e.code());
    assertTrue(e.diagnostic().message().contains("$.capsule: longer than 200"), e.getMessage());
  }

  @Test
  void didYouMeanOffersOnlyCloseOrSynonymousKeys() {
    var known = java.util.Set.of("goal", "capsule", "budget");
    assertEquals(Optional.of("goal"), TaskRequest.didYouMean("task", known));
    assertEquals(Optional.of("goal"), TaskRequest.didYouMean("Prompt", known));
    assertEquals(Optional.of("capsule"), TaskRequest.didYouMean("capsules", known));
    assertEquals(Optional.empty(), TaskRequest.didYouMean("weather", known));
    assertEquals(Optional.empty(), TaskRequest.didYouMean("ab", known));
  }
}
