package io.capsule.driver.wasm;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.driver.abi.ContractCodec;
import io.capsule.driver.abi.ContractTypes;
import io.capsule.driver.abi.EventCodec;
import io.capsule.driver.abi.GuestCall;
import io.capsule.driver.abi.ParseCall;
import io.capsule.driver.abi.WitFunction;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.ProcessDriver;
import java.util.List;
import java.util.Objects;

/**
 * A driver instance seen through {@link ProcessDriver}: each method calls the core export {@code
 * murmur:driver/process@0.6.0#<function>} with the canonical ABI (arguments lowered through the
 * guest's {@code cabi_realloc}, the result lifted with full validation), then {@code
 * cabi_post_<export>} when the guest exports it.
 *
 * <p>Every failure — a trap, an overrun deadline, the memory cap, a result that does not lift, and
 * a {@code classify-exit} that returns anything but {@code turn-end} or {@code turn-failed} — is a
 * {@link DriverException} ({@link DriverTrap}, {@link AbiViolation}) with {@code E-RUN-034}, a
 * message starting {@code driver failed in <function>:} and the detail {@code function}. The loader
 * remaps it to {@code E-RUN-032} when it happens during load. After a failure the instance must not
 * be called again.
 *
 * <p>Threading: confined, like the instance, to one thread at a time (the run's driver actor, on a
 * blocking dispatcher). {@link #close()} closes the instance.
 */
public final class WasmProcessDriver implements ProcessDriver {
  private final WasmInstance instance;
  private final ParseCall parseCall = new ParseCall();
  // what a WASI driver wrote to stdout/stderr since the last parse, as notes (bounded per call by
  // the WASI host's capture cap, and drained into the next parse's events)
  private final List<String> pendingNotes = new java.util.ArrayList<>();

  /**
   * Adapts an instance whose exports follow the component-model naming convention for {@code
   * murmur:driver/process@0.6.0} (the core module of a component, or a plain core module). The
   * loader has checked the exports; this class trusts it and calls.
   */
  public WasmProcessDriver(WasmInstance instance) {
    this.instance = Objects.requireNonNull(instance, "instance");
  }

  /** The instance this driver calls. */
  public WasmInstance instance() {
    return instance;
  }

  @Override
  public Description describe() {
    return ContractCodec.description(call(ContractTypes.DESCRIBE));
  }

  @Override
  public LaunchResult launch(LaunchRequest request) {
    return ContractCodec.launchResult(call(ContractTypes.LAUNCH, ContractCodec.value(request)));
  }

  @Override
  public List<Event> parse(List<String> lines) {
    List<Object> copied = ContractCodec.value(lines);
    List<Event> events = guarded(() -> parseCall.parse(instance, castStrings(copied)));
    if (pendingNotes.isEmpty()) {
      return events;
    }
    List<Event> withNotes =
        new java.util.ArrayList<>(drainNotes().stream().map(Event.Note::new).toList());
    withNotes.addAll(events);
    return withNotes;
  }

  /**
   * What the driver wrote to stdout and stderr (a WASI driver) since the last drain, as note texts;
   * {@link #parse} prepends them to its events.
   */
  public List<String> drainNotes() {
    List<String> out = List.copyOf(pendingNotes);
    pendingNotes.clear();
    return out;
  }

  /**
   * Also enforces the contract's rule that only {@code turn-end} or {@code turn-failed} comes back
   * (docs/run-semantics.md §9): anything else is {@code E-RUN-034} naming the event.
   */
  @Override
  public Event classifyExit(ExitStatus exit) {
    Event event = EventCodec.event(call(ContractTypes.CLASSIFY_EXIT, ContractCodec.value(exit)));
    if (!event.isTerminal()) {
      throw new DriverException(
          Diagnostic.of(
                  Code.E_RUN_034,
                  "driver failed in classify-exit: it returned `"
                      + event.witName()
                      + "`; only turn-end or turn-failed may be returned")
              .with("function", "classify-exit"));
    }
    return event;
  }

  @Override
  public LoginState readLogin(LoginOutput output) {
    return ContractCodec.loginState(call(ContractTypes.READ_LOGIN, ContractCodec.value(output)));
  }

  @Override
  public void close() {
    instance.close();
  }

  @SuppressWarnings("unchecked")
  private static List<String> castStrings(List<Object> lines) {
    return (List<String>) (List<?>) lines;
  }

  private Object call(WitFunction function, Object... args) {
    return guarded(
        () ->
            GuestCall.invoke(instance, ContractTypes.coreExport(function), function, List.of(args))
                .orElseThrow());
  }

  /** Runs one guest call, then takes what the driver wrote; a trap names its last stderr line. */
  private <T> T guarded(java.util.function.Supplier<T> guestCall) {
    try {
      return guestCall.get();
    } catch (DriverTrap e) {
      List<String> output = instance.drainOutput();
      pendingNotes.addAll(output);
      throw withLastStderrLine(e, output);
    } finally {
      pendingNotes.addAll(instance.drainOutput());
    }
  }

  /**
   * A trap after the call wrote to stderr — a Rust driver's panic message, say — names the last
   * line it wrote (cut to 200 characters): the run fails, so its notes would never be shown.
   */
  private static DriverTrap withLastStderrLine(DriverTrap e, List<String> output) {
    String prefix = "driver stderr: ";
    String last = null;
    for (String note : output) {
      if (note.startsWith(prefix) && !note.contains(" more bytes dropped (the runtime keeps ")) {
        last = note.substring(prefix.length());
      }
    }
    if (last == null) {
      return e;
    }
    if (last.length() > 200) {
      last = last.substring(0, 200) + "…";
    }
    Diagnostic d = e.diagnostic();
    return new DriverTrap(
        new Diagnostic(
            d.code(), d.message() + "; its last line on stderr: " + last, d.hint(), d.details()),
        e);
  }
}
