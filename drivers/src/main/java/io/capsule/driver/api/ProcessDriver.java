package io.capsule.driver.api;

import java.util.List;

/**
 * The five functions of {@code murmur:driver/process@0.6.0}. A WASM component is adapted to this
 * interface by the driver loader; a Java class may implement it directly (tests, embedding), and
 * the runtime treats both alike.
 *
 * <p>Threading: an instance is used by one thread at a time (the run's driver actor calls it on a
 * blocking dispatcher, one call after the other). It lives for one whole run, so {@link #parse} may
 * rely on what {@link #launch} was given. {@link #close()} releases native resources; it is called
 * once, when the run ends.
 *
 * <p>Failures: a call that traps, overruns its deadline, hits the memory cap or returns a result
 * that does not lift throws a subclass of {@link io.capsule.config.diag.DiagnosticException}; the
 * caller maps it to {@code E-RUN-032} (load) or {@code E-RUN-034} (run).
 */
public interface ProcessDriver extends AutoCloseable {

  /** What the driver drives. Called once, when the driver is loaded. */
  Description describe();

  /** Plans one turn, or refuses it with a message the runtime reports. */
  LaunchResult launch(LaunchRequest request);

  /** Reads a batch of complete stdout lines into events; may return none. */
  List<Event> parse(List<String> lines);

  /** Classifies a run whose output ended with no terminal event: turn-end or turn-failed only. */
  Event classifyExit(ExitStatus exit);

  /** Reads what the login command printed. */
  LoginState readLogin(LoginOutput output);

  /** Releases the instance; the default holds nothing to release. */
  @Override
  default void close() {}
}
