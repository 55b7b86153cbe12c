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
 * A Java driver whose harness says {@link #PARKED} once and then waits, idle, until it is
 * interrupted: an idle parked run. The shell {@code exec}s {@code sleep}, so each run holds exactly
 * one harness process; SIGINT (the interrupt method) ends it.
 */
final class ParkDriver implements ProcessDriver {

  /** The harness's only line, heard as a {@code note}: the run is parked from then on. */
  static final String PARKED = "parked";

  /** Longer than any benchmark iteration: the harness never ends by itself. */
  private static final String SLEEP_SECONDS = "3600";

  @Override
  public Description describe() {
    return new Description(
        "park",
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
            List.of("-c", "echo " + PARKED + " && exec sleep " + SLEEP_SECONDS),
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
      events.add(new Event.Note(line));
    }
    return events;
  }

  @Override
  public Event classifyExit(ExitStatus exit) {
    FailureKind kind = exit.interrupted() ? FailureKind.CANCELED : FailureKind.HARNESS_ERROR;
    return new Event.TurnFailed(new TurnFailure(kind, "the parked harness ended"));
  }

  @Override
  public LoginState readLogin(LoginOutput output) {
    return new LoginState.Unknown("no login check");
  }
}
