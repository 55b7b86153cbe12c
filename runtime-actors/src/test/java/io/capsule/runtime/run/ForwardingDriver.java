package io.capsule.runtime.run;

import io.capsule.driver.api.Description;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.ProcessDriver;
import java.util.List;

/**
 * A test driver that answers every call as {@link #inner()} does, except the calls it overrides:
 * the tests' wrappers around {@link PlayDriver} (a gate, a recorder, another description) write
 * only what they change.
 */
interface ForwardingDriver extends ProcessDriver {

  /** The driver every call not overridden goes to. */
  ProcessDriver inner();

  @Override
  default Description describe() {
    return inner().describe();
  }

  @Override
  default LaunchResult launch(LaunchRequest request) {
    return inner().launch(request);
  }

  @Override
  default List<Event> parse(List<String> lines) {
    return inner().parse(lines);
  }

  @Override
  default Event classifyExit(ExitStatus exit) {
    return inner().classifyExit(exit);
  }

  @Override
  default LoginState readLogin(LoginOutput output) {
    return inner().readLogin(output);
  }

  @Override
  default void close() {
    inner().close();
  }
}
