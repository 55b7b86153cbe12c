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
import java.util.List;
import java.util.Optional;

/**
 * What the benchmarks' Java drivers share: the harness is {@code /bin/sh -c SCRIPT} (version probe
 * {@code echo 1}), interrupted with SIGINT, with nothing to sign in to; an exit without a terminal
 * event is a failure (canceled when interrupted). A driver says only its name, its script's
 * arguments and how it reads lines.
 */
abstract class ShDriver implements ProcessDriver {
  private final String name;
  private final String endedTooSoon;

  ShDriver(String name, String endedTooSoon) {
    this.name = name;
    this.endedTooSoon = endedTooSoon;
  }

  /** The arguments after {@code /bin/sh}: {@code -c}, the script, its positional parameters. */
  abstract List<String> shArgs(LaunchRequest request);

  @Override
  public final Description describe() {
    return new Description(
        name,
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
  public final LaunchResult launch(LaunchRequest request) {
    return new LaunchResult.Planned(
        new LaunchPlan(
            shArgs(request), List.of(), List.of(), Optional.empty(), false, Optional.empty()));
  }

  @Override
  public final Event classifyExit(ExitStatus exit) {
    FailureKind kind = exit.interrupted() ? FailureKind.CANCELED : FailureKind.HARNESS_ERROR;
    return new Event.TurnFailed(new TurnFailure(kind, endedTooSoon));
  }

  @Override
  public final LoginState readLogin(LoginOutput output) {
    return new LoginState.Unknown("no login check");
  }
}
