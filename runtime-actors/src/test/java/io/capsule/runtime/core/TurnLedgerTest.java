package io.capsule.runtime.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.FailureKind;
import io.capsule.protocol.frame.UsageSplit;
import io.capsule.runtime.javadsl.RunEvent;
import io.capsule.runtime.javadsl.RunEventJson;
import io.capsule.runtime.javadsl.RunOutcome;
import io.capsule.runtime.javadsl.RunStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link TurnLedger}'s rules as tables: turns and max turns, usage growth and the spend ceiling,
 * sessions, quotas, the ending it stops on (docs/run-semantics.md §7).
 *
 * <p>Over 400 lines because it is one spec table per rule of one pure class, sharing the ledger
 * builders and the event shorthands; split by rule, each part would repeat them.
 */
class TurnLedgerTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static TurnLedger ledger(long maxTurns, long ceiling) {
    return new TurnLedger(
        "t1",
        maxTurns < 0 ? OptionalLong.empty() : OptionalLong.of(maxTurns),
        ceiling < 0 ? OptionalLong.empty() : OptionalLong.of(ceiling),
        false);
  }

  private static String cause(TurnLedger l) {
    return l.ending().map(Ending::cause).orElse("open");
  }

  @ParameterizedTest(name = "[{index}] {0} -> turns {2}, {3}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # script                                              | maxTurns | turns | ending
          ''                                                    | -1       | 0     | open
          delta:a;delta:b;think:x                               | -1       | 0     | open
          text:a                                                | -1       | 1     | open
          text:a;text:b;delta:c                                 | -1       | 1     | open
          text:a;end:r                                          | -1       | 1     | terminal
          call:1:ls;result:1;text:done;end:r                    | -1       | 2     | terminal
          text:a;call:1:ls;result:1;call:2:ls;result:2;end:r    | -1       | 2     | terminal
          call:1:ls;call:2:ls;result:1;result:2;end:r           | -1       | 1     | terminal
          call:1:ls;result:1;result:9;text:x;end:r              | -1       | 2     | terminal
          text:a;call:1:ls;result:1;text:b;end:r                | 1        | 1     | max_turns
          call:1:ls;result:1;call:2:ls;result:2;text:z          | 2        | 2     | max_turns
          call:1:ls;result:1;text:z;end:r                       | 2        | 2     | terminal
          text:a                                                | 0        | 0     | max_turns
          delta:a;think:b;end:r                                 | 0        | 0     | max_turns
          delta:a;think:b;end:                                  | 0        | 0     | terminal
          end:r                                                 | -1       | 1     | terminal
          end:                                                  | -1       | 0     | terminal
          delta:a;delta:b;end:ab                                | -1       | 1     | terminal
          usage:in=5;end:r                                      | 1        | 1     | terminal
          call:1:ls;result:1;end:r                              | -1       | 1     | terminal
          text:a;end:r                                          | 1        | 1     | terminal
          text:a;fail:quota                                     | -1       | 1     | terminal
          """)
  void opensAndClosesTurnsAsTheSpecSays(String script, long maxTurns, int turns, String ending) {
    TurnLedger l = ledger(maxTurns, -1);
    l.apply(Script.parse(script), T0);
    assertEquals(turns, l.turns());
    assertEquals(ending, cause(l));
  }

  @ParameterizedTest(name = "[{index}] {0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # cumulative reports (one batch each)           | total attributed
          usage:in=10                                      | in=10
          usage:in=10 & usage:in=10                        | in=10
          usage:in=10,out=5 & usage:in=7,out=9             | in=10,out=9
          usage:in=0                                       | in=0
          usage:none                                       | none
          usage:out=3 & usage:in=4                         | in=4,out=3
          usage:cr=100,cc=5 & usage:cr=150                  | cr=150,cc=5
          """)
  void attributesUsageGrowthPerMemberWithNoneApartFromZero(String reports, String total) {
    TurnLedger l = ledger(-1, -1);
    l.apply(Script.parse("text:a"), T0);
    for (String report : reports.split("&")) {
      l.apply(Script.parse(report.trim()), T0);
    }
    assertEquals(total, Script.render(l.usage()));
  }

  @ParameterizedTest(name = "[{index}] growth of {1} after {0} is {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # before        | report            | growth
          none            | in=10             | in=10
          in=10           | in=10             | in=0
          in=10           | in=4              | in=0
          in=10           | in=15             | in=5
          in=10           | out=3             | out=3
          in=10,out=3     | in=12             | in=2
          th=2            | th=2,out=8        | out=8,th=0
          """)
  void meterGrowthShrinkAddsZeroAndSameTotalAddsNothing(
      String before, String report, String growth) {
    UsageMeter meter = new UsageMeter();
    meter.report(Script.usage(before));
    assertEquals(growth, Script.render(meter.report(Script.usage(report))));
  }

  @ParameterizedTest(name = "[{index}] {0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # usage                         | cache_read, cache_write, fresh_input, output, thinking
          none                            | 0,0,0,0,0
          in=10,out=7,cr=3,cc=2,th=4      | 3,2,10,3,4
          out=7                           | 0,0,0,7,0
          th=5                            | 0,0,0,0,5
          out=3,th=5                      | 0,0,0,0,5
          """)
  void mapsUsageToTheWireSplit(String usage, String split) {
    UsageSplit s = UsageSplits.of(Script.usage(usage));
    assertEquals(
        split,
        s.cacheRead()
            + ","
            + s.cacheWrite()
            + ","
            + s.freshInput()
            + ","
            + s.output()
            + ","
            + s.thinking());
  }

  @ParameterizedTest(name = "[{index}] {0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # usage reported                | the JSON form's usage (a member never reported is null)
          in=10,out=7,cr=3,cc=2,th=4      | {"cache_read":3,"cache_write":2,"fresh_input":10,"output":3,"thinking":4}
          in=10,out=7                     | {"cache_read":null,"cache_write":null,"fresh_input":10,"output":7,"thinking":null}
          in=0,out=0,cr=0                 | {"cache_read":0,"cache_write":null,"fresh_input":0,"output":0,"thinking":null}
          th=5                            | {"cache_read":null,"cache_write":null,"fresh_input":null,"output":null,"thinking":5}
          none                            | {"cache_read":null,"cache_write":null,"fresh_input":null,"output":null,"thinking":null}
          """)
  void aMemberNeverReportedIsNullInTheJsonFormAndAReportedZeroStaysZero(String usage, String json) {
    TurnLedger l = ledger(-1, -1);
    LedgerStep step = l.apply(Script.parse("text:a;usage:" + usage + ";end:r"), T0);
    RunEvent.UsageUpdated updated =
        step.progress().stream()
            .filter(e -> e instanceof RunEvent.UsageUpdated)
            .map(e -> (RunEvent.UsageUpdated) e)
            .findFirst()
            .orElseThrow();
    assertEquals(json, RunEventJson.toJson(updated).get("usage").toString());
    assertFalse(RunEventJson.toJson(updated).has("unreported"), "the nulls say it");
    RunOutcome outcome =
        new RunOutcome(
                "t1",
                RunStatus.DONE,
                Optional.of("r"),
                l.turns(),
                UsageSplits.of(l.usage()),
                Optional.empty(),
                Optional.empty(),
                "the turn ended",
                Optional.empty(),
                Duration.ZERO)
            .withUnreported(UsageSplits.unreported(l.usage()));
    assertEquals(json, RunEventJson.outcome(outcome).get("usage").toString());
  }

  @ParameterizedTest(name = "[{index}] ceiling {1}: {0} -> {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # script                                                    | ceiling | ending
          call:1:ls;usage:in=50,out=49;result:1;text:a                 | 100     | open
          call:1:ls;usage:in=50,out=50;result:1;text:a                 | 100     | spend_ceiling
          call:1:ls;usage:in=50,out=60,th=60;result:1                  | 100     | spend_ceiling
          call:1:ls;usage:in=40,cr=40,cc=40;result:1                   | 100     | spend_ceiling
          text:a;usage:in=500;end:r                                    | 100     | terminal
          call:1:ls;usage:in=500;result:1                              | -1      | open
          """)
  void endsAtTheSpendCeilingWhenATurnCloses(String script, long ceiling, String ending) {
    TurnLedger l = ledger(-1, ceiling);
    l.apply(Script.parse(script), T0);
    assertEquals(ending, cause(l));
  }

  @ParameterizedTest(name = "[{index}] after the end, {0} is {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # event after turn-end in the same batch | applied
          quota:five-hour:0.5                       | true
          prompt:next                               | true
          note:hello                                | true
          text:late                                 | false
          usage:in=99                               | false
          call:9:ls                                 | false
          end:again                                 | false
          fail:other                                | false
          delta:x                                   | false
          """)
  void appliesOnlyQuotaSuggestedPromptAndNoteAfterTheTerminalEvent(String late, boolean applied) {
    for (boolean sameBatch : new boolean[] {true, false}) {
      TurnLedger l = ledger(-1, -1);
      LedgerStep step;
      if (sameBatch) {
        step = l.apply(Script.parse("text:a;usage:in=1;end:r;" + late), T0);
      } else {
        l.apply(Script.parse("text:a;usage:in=1;end:r"), T0);
        step = l.apply(Script.parse(late), T0);
      }
      int lateProgress =
          (int)
              step.progress().stream()
                  .filter(e -> !(e instanceof RunEvent.TextCompleted))
                  .filter(e -> !(sameBatch && e instanceof RunEvent.UsageUpdated u && inOne(u)))
                  .count();
      assertEquals(applied, lateProgress > 0, "same batch: " + sameBatch);
      assertEquals(applied, step.trace().stream().noneMatch(TurnLedgerTest::ignoredNote));
      assertEquals(new Ending.Completed("r"), l.ending().orElseThrow());
      assertEquals("in=1", Script.render(l.usage()));
      assertEquals(1, l.turns());
    }
  }

  private static boolean inOne(RunEvent.UsageUpdated u) {
    return u.usage().freshInput() == 1;
  }

  private static boolean ignoredNote(TraceRecord r) {
    return r.eventType().equals("harness_note") && r.fields().containsKey("ignored");
  }

  @ParameterizedTest(name = "[{index}] resumed={0}, session={1}, kind={2} -> {3}")
  @CsvSource({
    "false, false, harness-error, E-RUN-033",
    "true,  false, harness-error, E-RUN-036",
    "true,  false, other,         E-RUN-036",
    "true,  false, quota,         E-RUN-033",
    "true,  true,  harness-error, E-RUN-033",
    "true,  false, auth,          E-RUN-033",
  })
  void aResumedRunWhoseSessionNeverStartedFailsAsSessionGone(
      boolean resumed, boolean session, String kind, String code) {
    TurnLedger l = new TurnLedger("t1", OptionalLong.empty(), OptionalLong.empty(), resumed);
    l.apply(Script.parse((session ? "session:s1:subscription;" : "") + "fail:" + kind), T0);
    Ending.TurnFailed failed = (Ending.TurnFailed) l.ending().orElseThrow();
    assertEquals(code, failed.code().id());
    assertEquals(kind, failed.kind().witName());
  }

  @ParameterizedTest(name = "[{index}] {0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # windows                                                      | known after
          quota:five-hour:0.5                                             | five-hour=0.5
          quota:five-hour:0.5;quota:weekly:0.1;quota:five-hour:0.7        | five-hour=0.7,weekly=0.1
          quota:Bad:0.5                                                   | ''
          quota:-x:0.5                                                    | ''
          quota:ok:1.5                                                    | ''
          quota:ok:-0.1                                                   | ''
          quota:ok:NaN                                                    | ''
          quota:ok:Infinity                                               | ''
          quota:a:0;quota:b:1                                             | a=0.0,b=1.0
          """)
  void validatesAndMergesQuotaWindowsByName(String script, String known) {
    TurnLedger l = ledger(-1, -1);
    LedgerStep step = l.apply(Script.parse(script), T0);
    String got =
        l.quotaWindows().stream()
            .map(w -> w.name() + "=" + w.used().orElseThrow())
            .collect(Collectors.joining(","));
    assertEquals(known, got);
    long refused = step.trace().stream().filter(r -> r.eventType().equals("harness_note")).count();
    assertEquals(known.isEmpty(), refused > 0);
  }

  @Test
  void aLongWindowNameIsRefusedButSixtyFourCharactersAreFine() {
    TurnLedger l = ledger(-1, -1);
    l.apply(Script.parse("quota:" + "a".repeat(64) + ":0.2;quota:" + "b".repeat(65) + ":0.2"), T0);
    assertEquals(1, l.quotaWindows().size());
  }

  @Test
  void textDeltasAppendAndTheCompleteTextReplacesThem() {
    TurnLedger l = ledger(-1, -1);
    LedgerStep step = l.apply(Script.parse("delta:Hel;delta:lo;text:Hello!;delta:Ne"), T0);
    assertEquals(
        List.of(
            new RunEvent.TextDelta("t1", "Hel", "Hel"),
            new RunEvent.TextDelta("t1", "lo", "Hello"),
            new RunEvent.TextCompleted("t1", "Hello!"),
            new RunEvent.TextDelta("t1", "Ne", "Ne")),
        step.progress());
  }

  @Test
  void tracksToolCallsByIdAndNotesResultsWithoutCallsAndCallsWithoutResults() {
    TurnLedger l = ledger(-1, -1);
    LedgerStep step =
        l.apply(
            Script.parse("start:1:ls;prog:1:10;prog:1:5;prog:1:20;call:1:ls;result:1;result:7"),
            T0);
    long progress =
        step.progress().stream().filter(e -> e instanceof RunEvent.ToolProgress).count();
    assertEquals(2, progress, "a smaller progress report is ignored");
    TraceRecord call =
        step.trace().stream().filter(r -> r.eventType().equals("tool_call")).findFirst().get();
    assertEquals("ls", call.fields().get("name"));
    assertEquals(2L, call.fields().get("input_bytes"));
    assertTrue(
        step.trace().stream()
            .anyMatch(r -> "tool result with no call".equals(r.fields().get("note"))));
    l.apply(Script.parse("call:2:cat"), T0);
    List<TraceRecord> notes = l.finish();
    assertEquals(1, notes.size());
    assertEquals("2", notes.get(0).fields().get("id"));
  }

  @Test
  void aResultAloneIsOneTurnThatCarriesTheUsageReportedBeforeIt() {
    TurnLedger l = ledger(-1, -1);
    LedgerStep step = l.apply(Script.parse("usage:in=4,out=2;end:the answer"), T0);
    assertEquals(1, l.turns());
    TraceRecord inference =
        step.trace().stream().filter(r -> r.eventType().equals("inference")).findFirst().get();
    assertEquals(1, inference.fields().get("turn"));
    assertEquals("end_turn", inference.fields().get("decision"));
    @SuppressWarnings("unchecked")
    Map<String, Object> growth = (Map<String, Object>) inference.fields().get("usage_growth");
    assertEquals(4L, growth.get("input"));

    TurnLedger blank = ledger(-1, -1);
    LedgerStep none = blank.apply(List.of(new Event.TurnEnd(" \n")), T0);
    assertEquals(0, blank.turns(), "a blank result is no answer, so no turn");
    assertTrue(none.trace().stream().noneMatch(r -> r.eventType().equals("inference")));
    assertEquals(new Ending.Completed(" \n"), blank.ending().orElseThrow());
  }

  @Test
  void closesATurnWithItsGrowthDecisionAndFirstTool() {
    TurnLedger l = ledger(-1, -1);
    LedgerStep step =
        l.apply(Script.parse("usage:in=3;call:1:ls;call:2:rg;usage:in=10,out=2;result:1"), T0);
    TraceRecord inference =
        step.trace().stream().filter(r -> r.eventType().equals("inference")).findFirst().get();
    assertEquals(1, inference.fields().get("turn"));
    assertEquals("tool_call", inference.fields().get("decision"));
    assertEquals("ls", inference.fields().get("first_tool"));
    @SuppressWarnings("unchecked")
    Map<String, Object> growth = (Map<String, Object>) inference.fields().get("usage_growth");
    assertEquals(10L, growth.get("input"), "usage before the turn is carried into it");
    assertEquals(2L, growth.get("output"));
    assertEquals(null, growth.get("thinking"), "none stays none in the trace");
  }

  @Test
  void warnsAboutNonSubscriptionBillingAndRemembersTheReportedSession() {
    TurnLedger l = ledger(-1, -1);
    LedgerStep step = l.apply(Script.parse("session:abc:api-key"), T0);
    assertTrue(
        step.progress().stream()
            .anyMatch(
                e -> e instanceof RunEvent.Warning w && w.code().equals(Code.W_SEC_031.id())));
    assertEquals("abc", l.reportedSessionId().orElseThrow());
    TurnLedger quiet = ledger(-1, -1);
    LedgerStep none = quiet.apply(Script.parse("session::subscription"), T0);
    assertFalse(none.progress().stream().anyMatch(e -> e instanceof RunEvent.Warning));
    assertTrue(quiet.reportedSessionId().isEmpty(), "an empty id is not remembered");
  }

  @Test
  void aRuntimeStopFiltersLaterEventsLikeATerminalOne() {
    TurnLedger l = ledger(-1, -1);
    l.stop(new Ending.Inactive(1));
    LedgerStep step = l.apply(Script.parse("text:a;note:n;end:r"), T0);
    assertEquals(0, l.turns());
    assertEquals(List.of(new RunEvent.Note("t1", "n")), step.progress());
    assertEquals(new Ending.Inactive(1), l.ending().orElseThrow());
    assertTrue(step.ending().isEmpty());
  }

  @Test
  void maxTurnsIsARuntimeFailureKind() {
    TurnLedger l = ledger(0, -1);
    LedgerStep step = l.apply(Script.parse("call:1:ls"), T0);
    assertEquals(new Ending.MaxTurns(0), step.ending().orElseThrow());
    assertTrue(
        step.trace().stream()
            .anyMatch(
                r ->
                    r.eventType().equals("harness_failed")
                        && r.fields().get("kind").equals(FailureKind.MAX_TURNS.witName())
                        && r.fields().get("source").equals("runtime")));
  }
}
