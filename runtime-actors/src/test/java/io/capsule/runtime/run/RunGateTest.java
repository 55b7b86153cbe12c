package io.capsule.runtime.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.api.FailureKind;
import io.capsule.runtime.core.Ending;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The ending rules of docs/run-semantics.md §9 (and the cancel of §4), one row each: the facts the
 * run tells the gate, in order, and every decision the gate gives after each fact (a fact with no
 * decision shows {@code -}).
 */
class RunGateTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          terminal event: close stdin and the grace; report after the exit    | driver spawn end eof exit       | - - close - finish:terminal:spawned
          terminal event, grace elapses: kill                                 | driver spawn end grace eof exit | - - close kill:grace - finish:terminal:spawned
          EOF without terminal: close stdin, classify, then finish            | driver spawn eof exit classified-end | - - close classify:false finish:terminal:spawned
          classify must say turn-end or turn-failed, else E-RUN-034           | driver spawn eof exit classified-other | - - close classify:false finish:driver_error:spawned
          max turns: kill at once                                             | driver spawn maxturns eof exit  | - - kill:max_turns - finish:max_turns:spawned
          spend ceiling: kill at once                                         | driver spawn spend eof exit     | - - kill:spend_ceiling - finish:spend_ceiling:spawned
          inactivity: kill at once                                            | driver spawn inactive eof exit  | - - kill:inactivity - finish:inactivity:spawned
          driver failure: kill at once                                        | driver spawn driverfail drivergone eof exit | - - kill:driver_error - - finish:driver_error:spawned
          a cancel before the spawn spawns nothing and ends canceled          | driver cancel                   | - finish:canceled:none
          after a cancel the outcome is canceled, whatever follows            | driver spawn cancel end eof exit | - - - close - finish:canceled:spawned
          a cancel without a terminal event: classify interrupted             | driver spawn cancel eof exit classified-failed | - - - close classify:true finish:canceled:spawned
          a cancel after the outcome is decided changes nothing               | driver spawn end cancel eof exit | - - close - - finish:terminal:spawned
          the first ending wins                                               | driver spawn maxturns inactive eof exit | - - kill:max_turns - - finish:max_turns:spawned
          stdout open after the exit: drain bound, kill, drain, stop waiting  | driver spawn end exit drain drain | - - close drain kill:drain,drain finish:terminal:spawned
          stdout open after a kill: one drain bound, then stop waiting        | driver spawn inactive exit drain | - - kill:inactivity drain finish:inactivity:spawned
          a failed stdin write with no terminal event: E-RUN-007              | driver spawn stdinfail eof exit | - - - close fail:harness_error,finish:harness_error:spawned
          a failed stdin write, then a terminal event: completed              | driver spawn stdinfail end eof exit | - - - close - finish:terminal:spawned
          no report while a parse is in flight                                | driver spawn end parse eof exit parsed | - - close - - - finish:terminal:spawned
          no report until every batch in flight is parsed                     | driver spawn end parse parse eof exit parsed parsed | - - close - - - - - finish:terminal:spawned
          no classify until every batch in flight is parsed                   | driver spawn parse parse eof exit parsed parsed classified-end | - - - - close - - classify:false finish:terminal:spawned
          no driver left at EOF: E-RUN-034 with no outcome                    | driver spawn drivergone eof exit | - - - close finish:driver_error:spawned
          the bridge stops before the report                                  | bridge driver spawn end eof exit bridgegone | - - - close - stopbridge finish:terminal:spawned
          blocked before anything ran: no harness                             | blocked                         | finish:blocked:none
          the spawn failed: E-RUN-007 and no harness                          | driver spawn spawnfail harnessfail | - - - finish:harness_error:none
          the harness actor failed while running: group killed, E-RUN-007     | driver spawn harnessstop         | - - finish:harness_error:spawned
          """)
  void endsTheRunByTheRules(String rule, String facts, String decisions) {
    RunGate gate = new RunGate();
    List<String> seen = new ArrayList<>();
    for (String fact : facts.trim().split("\\s+")) {
      tell(gate, fact);
      seen.add(drain(gate));
    }
    assertEquals(decisions.trim(), String.join(" ", seen), rule);
  }

  @Test
  void aBridgeThatStopsOnItsOwnWhileListeningIsAFailureOnlyBeforeTheOutcome() {
    RunGate gate = new RunGate();
    gate.bridgeSpawned();
    gate.bridgeListening();
    assertTrue(gate.bridgeGone());

    RunGate decided = new RunGate();
    decided.bridgeSpawned();
    decided.bridgeListening();
    decided.decide(new Ending.Inactive(1));
    assertFalse(decided.bridgeGone());
  }

  @Test
  void aBridgeStoppedByTheRunIsNoFailure() {
    RunGate gate = new RunGate();
    gate.bridgeSpawned();
    gate.bridgeListening();
    gate.cancel("stop");
    assertEquals("stopbridge", drain(gate));
    assertFalse(gate.bridgeGone());
    assertEquals("finish:canceled:none", drain(gate));
  }

  @Test
  void bridgeCallsInFlightKeepTheRunAliveAndAreForgottenWhenTheBridgeGoes() {
    RunGate gate = new RunGate();
    gate.bridgeSpawned();
    gate.callStarted();
    assertTrue(gate.callsInFlight());
    gate.callFinished();
    gate.callFinished(); // a refused call never started: never below zero
    assertFalse(gate.callsInFlight());
    gate.callStarted();
    gate.bridgeGone();
    assertFalse(gate.callsInFlight());
  }

  @Test
  void onlyOneFinishAndOnlyTheFirstEnding() {
    RunGate gate = new RunGate();
    assertTrue(gate.decide(new Ending.Blocked(Diagnostic.of(Code.E_RUN_006, "x"))));
    assertFalse(gate.decide(new Ending.Inactive(1)));
    assertEquals("finish:blocked:none", drain(gate));
    assertFalse(gate.decide(new Ending.Inactive(1)));
    assertFalse(gate.cancel("late"));
    assertEquals("-", drain(gate));
  }

  @Test
  void aDriverGoneWithBatchesInFlightCountsThemForAcknowledgement() {
    RunGate gate = new RunGate();
    gate.driverSpawned();
    gate.harnessSpawned();
    assertTrue(gate.parseStarted());
    assertTrue(gate.parseStarted());
    assertTrue(gate.parseStarted());
    gate.parsed();
    assertTrue(gate.driverBusy());
    assertEquals(2, gate.driverGone());
    assertFalse(gate.driverBusy());
    assertFalse(gate.parseStarted(), "no driver: the next batch is dropped");
    assertEquals(0, gate.driverGone());
  }

  @Test
  void linesAfterTheRunStopsWaitingForThemAreNotParsed() {
    RunGate gate = new RunGate();
    gate.driverSpawned();
    gate.harnessSpawned();
    assertTrue(gate.acceptsLines());
    gate.exited(new RunGate.Exit(Optional.of(0), Optional.empty(), ""));
    drain(gate);
    gate.drainBoundElapsed();
    drain(gate);
    gate.drainBoundElapsed();
    assertFalse(gate.acceptsLines());
    assertFalse(gate.activityCounts());
  }

  /** Tells the gate one fact, the way the run does. */
  private static void tell(RunGate gate, String fact) {
    Diagnostic d = Diagnostic.of(Code.E_RUN_007, "x");
    switch (fact) {
      case "driver" -> gate.driverSpawned();
      case "bridge" -> {
        gate.bridgeSpawned();
        gate.bridgeListening();
      }
      case "spawn" -> gate.harnessSpawned();
      case "spawnfail" -> gate.spawnFailed();
      case "end" -> gate.decide(new Ending.Completed("done"));
      case "maxturns" -> gate.decide(new Ending.MaxTurns(3));
      case "spend" -> gate.decide(new Ending.SpendCeiling(10, 5));
      case "inactive" -> gate.decide(new Ending.Inactive(600_000));
      case "blocked" -> gate.decide(new Ending.Blocked(Diagnostic.of(Code.E_RUN_006, "x")));
      case "driverfail" -> gate.decide(new Ending.DriverFailed(Diagnostic.of(Code.E_RUN_034, "x")));
      case "harnessfail" -> gate.decide(new Ending.HarnessFailed(d));
      case "cancel" -> gate.cancel("asked");
      case "eof" -> gate.stdoutEnded();
      case "exit" -> gate.exited(new RunGate.Exit(Optional.of(0), Optional.empty(), "tail"));
      case "grace" -> gate.requestKill("grace");
      case "drain" -> gate.drainBoundElapsed();
      case "stdinfail" -> gate.stdinFailed(d);
      case "parse" -> assertTrue(gate.parseStarted());
      case "parsed" -> gate.parsed();
      case "classified-end" -> {
        gate.classified();
        gate.decide(new Ending.Completed("classified"));
      }
      case "classified-failed" -> {
        gate.classified();
        gate.decide(new Ending.TurnFailed(Code.E_RUN_033, FailureKind.CANCELED, "stopped"));
      }
      case "classified-other" -> {
        gate.classified();
        gate.decide(new Ending.DriverFailed(Diagnostic.of(Code.E_RUN_034, "not terminal")));
      }
      case "drivergone" -> gate.driverGone();
      case "harnessstop" -> {
        assertTrue(gate.harnessStopped());
        gate.decide(new Ending.HarnessFailed(d));
      }
      case "bridgegone" -> assertFalse(gate.bridgeGone());
      default -> throw new IllegalArgumentException("unknown fact " + fact);
    }
  }

  /** Every decision until the gate waits, carried out the way the run does. */
  private static String drain(RunGate gate) {
    List<String> out = new ArrayList<>();
    while (true) {
      RunGate.Decision d = gate.next();
      if (d == RunGate.Wait.INSTANCE) {
        break;
      }
      out.add(render(d));
      if (d instanceof RunGate.Fail f) {
        gate.decide(f.ending());
      }
      if (d instanceof RunGate.Finish) {
        break;
      }
    }
    return out.isEmpty() ? "-" : String.join(",", out);
  }

  private static String render(RunGate.Decision d) {
    if (d instanceof RunGate.Kill k) {
      return "kill:" + (k.cause().startsWith("stdout still open") ? "drain" : k.cause());
    } else if (d instanceof RunGate.Classify c) {
      return "classify:" + c.exit().interrupted();
    } else if (d instanceof RunGate.Fail f) {
      return "fail:" + f.ending().cause();
    } else if (d instanceof RunGate.Finish f) {
      return "finish:" + f.ending().cause() + ":" + (f.spawned() ? "spawned" : "none");
    } else if (d == RunGate.CloseStdin.INSTANCE) {
      return "close";
    } else if (d == RunGate.AwaitDrain.INSTANCE) {
      return "drain";
    } else if (d == RunGate.StopBridge.INSTANCE) {
      return "stopbridge";
    }
    throw new IllegalArgumentException(String.valueOf(d));
  }
}
