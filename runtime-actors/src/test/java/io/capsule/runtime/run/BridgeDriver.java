package io.capsule.runtime.run;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.EnvVar;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.EventJson;
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
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A Java driver for {@code bridge-harness.sh}: the harness is {@code /bin/sh bridge-harness.sh
 * <tool> <args…>}; {@code launch} puts the request's bridge into the harness's environment ({@code
 * BRIDGE_URL}, {@code BRIDGE_TOKEN}, {@code BRIDGE_TOOLS}), the way a real driver writes it into
 * the harness's MCP configuration, and records every request it was given. Stdout lines are
 * canonical event JSON.
 */
final class BridgeDriver implements ProcessDriver {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The curl the harness calls the bridge with. */
  static final Path CURL = Path.of("/usr/bin/curl");

  final ConcurrentLinkedQueue<LaunchRequest> launches;
  private final List<String> call;

  /**
   * @param call the tool and its args the harness calls ({@code "-"} alone: no call)
   * @param launches where launch requests are recorded
   */
  BridgeDriver(List<String> call, ConcurrentLinkedQueue<LaunchRequest> launches) {
    this.call = List.copyOf(call);
    this.launches = launches;
  }

  static Path script() {
    try {
      return Path.of(BridgeDriver.class.getResource("/run/bridge-harness.sh").toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public Description describe() {
    return new Description(
        "bridge-harness",
        "/bin/sh",
        List.of("-c", "echo bridge-harness v1.0"),
        List.of("1.0"),
        InterruptMethod.SIGNAL_INT,
        List.of(),
        true,
        true,
        new LoginCheck.Unavailable("a fake harness has no login"),
        HarnessNeeds.NONE);
  }

  @Override
  public LaunchResult launch(LaunchRequest request) {
    launches.add(request);
    List<EnvVar> env = new ArrayList<>();
    env.add(new EnvVar("CURL", CURL.toString()));
    request
        .bridge()
        .ifPresent(
            b -> {
              env.add(new EnvVar("BRIDGE_URL", b.url()));
              env.add(new EnvVar("BRIDGE_TOKEN", b.bearerToken()));
              env.add(new EnvVar("BRIDGE_TOOLS", String.join(",", b.toolNames())));
            });
    List<String> args = new ArrayList<>();
    args.add(script().toString());
    args.addAll(call);
    return new LaunchResult.Planned(
        new LaunchPlan(
            args,
            env,
            List.of(),
            Optional.of((request.task() + "\n").getBytes(StandardCharsets.UTF_8)),
            false,
            Optional.empty()));
  }

  @Override
  public List<Event> parse(List<String> lines) {
    List<Event> out = new ArrayList<>();
    for (String line : lines) {
      if (line.isBlank()) {
        continue;
      }
      try {
        out.add(EventJson.fromJson(JSON.readTree(line)));
      } catch (Exception e) {
        out.add(new Event.Note("unparsed line: " + line));
      }
    }
    return out;
  }

  @Override
  public Event classifyExit(ExitStatus exit) {
    if (exit.interrupted()) {
      return new Event.TurnFailed(new TurnFailure(FailureKind.CANCELED, "interrupted"));
    }
    return new Event.TurnFailed(
        new TurnFailure(FailureKind.HARNESS_ERROR, "exit " + exit.code() + " " + exit.signal()));
  }

  @Override
  public LoginState readLogin(LoginOutput output) {
    return new LoginState.Unknown("no login");
  }

  @Override
  public void close() {}
}
