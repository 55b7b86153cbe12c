package io.capsule.bench.runtime;

import io.capsule.driver.api.Description;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.FailureKind;
import io.capsule.driver.api.HarnessNeeds;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.api.TurnFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A Java driver whose harness is {@code /bin/sh} printing a recorded file as fast as {@code cat}
 * can, then one {@link #END} line. The task text is the file's path.
 *
 * <p>{@code parse} turns each recorded line into one {@link Event.Text} carrying the line. Why
 * {@code text} and not the alternatives: it reaches the listener as one {@code TextCompleted} with
 * the line's bytes, and the run does no per-line work beyond its ledger (no trace record, unlike
 * {@code note}; no growing message, unlike {@code text-delta}, whose {@code soFar} copies the whole
 * message on every delta). So the figure is the runtime's own pipe-to-listener cost, not a driver's
 * parsing (ParseBench measures that) nor trace I/O.
 */
final class CatDriver implements ProcessDriver {

  /** The harness's last line: the end of the turn. Not a JSON line, so no recorded line is it. */
  static final String END = "__end__";

  @Override
  public Description describe() {
    return new Description(
        "cat",
        "/bin/sh",
        List.of("-c", "echo 1"),
        List.of("1"),
        InterruptMethod.SIGNAL_INT,
        List.of(),
        false,
        false,
        new LoginCheck.Unavailable("nothing to sign in to"),
        HarnessNeeds.NONE);
  }

  @Override
  public LaunchResult launch(LaunchRequest request) {
    return new LaunchResult.Planned(
        new LaunchPlan(
            List.of("-c", "cat \"$0\" && echo " + END, request.task()),
            List.of(),
            List.of(),
            Optional.empty(),
            false,
            Optional.empty()));
  }

  @Override
  public List<Event> parse(List<String> lines) {
    List<Event> events = new ArrayList<>(lines.size());
    for (String line : lines) {
      events.add(END.equals(line) ? new Event.TurnEnd(END) : new Event.Text(line));
    }
    return events;
  }

  @Override
  public Event classifyExit(ExitStatus exit) {
    FailureKind kind = exit.interrupted() ? FailureKind.CANCELED : FailureKind.HARNESS_ERROR;
    return new Event.TurnFailed(new TurnFailure(kind, "exited before " + END));
  }

  @Override
  public LoginState readLogin(LoginOutput output) {
    return new LoginState.Unknown("no login check");
  }
}
