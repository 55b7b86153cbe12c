package io.capsule.runtime.driver;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.config.diag.DiagnosticException;
import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.ManifestLoader;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.load.ManifestChecks;
import io.capsule.runtime.CapsuleRef;
import io.capsule.runtime.core.Failures;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * Resolves capsules for runs, once per capsule, shared by every run on this node
 * (docs/run-semantics.md §1): loads the manifest, loads and describes the driver (through {@link
 * DriverLoading} for a folder's artifact, or {@code describe()} of a registered Java driver), runs
 * the per-capsule checks and resolves the harness binary. Successes are cached; refusals are not (a
 * person fixes the capsule and runs again). Concurrent requests for one capsule share one load.
 *
 * <p>Loading runs on the blocking dispatcher, bounded by the driver call deadline as a timer
 * message; only the result comes back here as a message. Registrations survive a restart; runs
 * waiting for a load when the registry fails are refused with {@code E-RUN-043}.
 */
public final class DriverRegistry extends AbstractBehavior<DriverRegistry.Command> {

  public sealed interface Command {}

  /**
   * Registers an in-memory capsule: a manifest and a factory of Java driver instances (one per
   * run). Node-local: the factory cannot cross nodes. Answered with {@link Registered}.
   */
  public record Register(
      String name, Manifest manifest, Supplier<ProcessDriver> drivers, ActorRef<Registered> replyTo)
      implements Command {
    public Register {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(manifest, "manifest");
      Objects.requireNonNull(drivers, "drivers");
    }
  }

  public record Registered(CapsuleRef.Registered ref) {}

  /** Resolve a capsule for a run; answered with a {@link Resolution}. */
  public record Resolve(CapsuleRef capsule, ActorRef<Resolution> replyTo) implements Command {}

  public sealed interface Resolution {}

  public record Ready(ResolvedCapsule capsule) implements Resolution {}

  /** The capsule cannot run: a person must fix something (the run reports blocked). */
  public record Refused(Diagnostic diagnostic) implements Resolution {}

  private record Loaded(String key, ResolvedCapsule capsule, Diagnostic refusal)
      implements Command {}

  private record LoadDeadline(String key) implements Command {}

  private final DriverLoading loading;
  private final Map<String, String> hostEnv;
  private final Duration deadline;
  private final Executor blocking;
  private final TimerScheduler<Command> timers;
  private final Map<String, Register> registered;
  private final Map<String, ResolvedCapsule> ready = new HashMap<>();
  private final Map<String, List<ActorRef<Resolution>>> waiting = new HashMap<>();

  /**
   * @param loading loads a folder capsule's driver artifact (the WASM driver loader)
   * @param hostEnv the host environment the capsule's grants draw from (PATH lookup)
   * @param deadline bound of one load (the driver call deadline, 30 s)
   */
  public static Behavior<Command> create(
      DriverLoading loading, Map<String, String> hostEnv, Duration deadline, String dispatcher) {
    // Registrations are not a cache: the in-memory capsules exist nowhere else. Made once here,
    // outside the setup, every incarnation after a restart finds them (only the one live
    // incarnation touches the map, so it stays confined to this actor).
    Map<String, Register> registered = new HashMap<>();
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                t ->
                    new DriverRegistry(
                        ctx, t, loading, hostEnv, deadline, dispatcher, registered)));
  }

  private DriverRegistry(
      ActorContext<Command> ctx,
      TimerScheduler<Command> timers,
      DriverLoading loading,
      Map<String, String> hostEnv,
      Duration deadline,
      String dispatcher,
      Map<String, Register> registered) {
    super(ctx);
    this.registered = registered;
    this.loading = loading;
    this.hostEnv = Map.copyOf(hostEnv);
    this.deadline = deadline;
    this.timers = timers;
    this.blocking = ctx.getSystem().dispatchers().lookup(DispatcherSelector.fromConfig(dispatcher));
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Register.class, this::onRegister)
        .onMessage(Resolve.class, this::onResolve)
        .onMessage(Loaded.class, this::onLoaded)
        .onMessage(LoadDeadline.class, this::onDeadline)
        .onSignal(PreRestart.class, s -> refuseWaiting("restarted after a failure"))
        .onSignal(PostStop.class, s -> refuseWaiting("stopped"))
        .build();
  }

  /**
   * The registry fails or stops with runs waiting for a load: their answers would be lost with this
   * incarnation, so each is refused now ({@code E-RUN-043}) rather than left to hang.
   */
  private Behavior<Command> refuseWaiting(String what) {
    Resolution answer =
        new Refused(
            Diagnostic.of(
                Code.E_RUN_043,
                "the driver registry " + what + " while this run waited for its capsule"));
    waiting.values().forEach(queue -> queue.forEach(q -> q.tell(answer)));
    waiting.clear();
    return this;
  }

  private Behavior<Command> onRegister(Register r) {
    CapsuleRef.Registered ref = new CapsuleRef.Registered(r.name());
    registered.put(ref.key(), r);
    ready.remove(ref.key()); // a new registration replaces the old one for later runs
    if (r.replyTo() != null) {
      r.replyTo().tell(new Registered(ref));
    }
    return this;
  }

  private Behavior<Command> onResolve(Resolve r) {
    String key = r.capsule().key();
    ResolvedCapsule known = ready.get(key);
    if (known != null) {
      r.replyTo().tell(new Ready(known));
      return this;
    }
    List<ActorRef<Resolution>> queue = waiting.get(key);
    if (queue != null) {
      queue.add(r.replyTo());
      return this;
    }
    queue = new ArrayList<>();
    queue.add(r.replyTo());
    waiting.put(key, queue);
    Supplier<ResolvedCapsule> work = loader(r.capsule());
    timers.startSingleTimer(new LoadDeadline(key), deadline);
    getContext()
        .pipeToSelf(
            CompletableFuture.supplyAsync(work, blocking),
            (c, e) -> new Loaded(key, c, e == null ? null : refusal(Failures.unwrap(e))));
    return this;
  }

  private Supplier<ResolvedCapsule> loader(CapsuleRef ref) {
    if (ref instanceof CapsuleRef.Registered reg) {
      Register r = registered.get(ref.key());
      if (r == null) {
        return () -> {
          throw new DiagnosticException(
              Diagnostic.of(Code.E_RUN_006, "no capsule registered as '" + reg.name() + "'"));
        };
      }
      return () -> {
        Description d;
        try (ProcessDriver probe = r.drivers().get()) {
          d = probe.describe();
        }
        Path binary = ManifestChecks.check(d, r.manifest(), hostEnv, false).harnessBinary();
        return new ResolvedCapsule(r.manifest(), r.name(), d, r.drivers(), binary, List.of());
      };
    }
    CapsuleRef.Folder folder = (CapsuleRef.Folder) ref;
    return () -> {
      Manifest m = ManifestLoader.load(Path.of(folder.path()));
      DriverLoading.Loaded loaded = loading.load(m);
      Path binary = ManifestChecks.check(loaded.description(), m, hostEnv, false).harnessBinary();
      return new ResolvedCapsule(
          m,
          m.inference().driver().artifact(),
          loaded.description(),
          loaded.instances(),
          binary,
          loaded.describeNotes());
    };
  }

  private static Diagnostic refusal(Throwable t) {
    if (t instanceof DiagnosticException de) {
      return de.diagnostic();
    }
    return Diagnostic.of(
        Code.E_RUN_032,
        "the driver could not be loaded: "
            + t.getClass().getSimpleName()
            + (t.getMessage() == null ? "" : ": " + t.getMessage()));
  }

  private Behavior<Command> onLoaded(Loaded l) {
    timers.cancel(new LoadDeadline(l.key()));
    List<ActorRef<Resolution>> queue = waiting.remove(l.key());
    if (queue == null) {
      return this; // already answered by the deadline
    }
    Resolution answer;
    if (l.capsule() != null) {
      ready.put(l.key(), l.capsule());
      answer = new Ready(l.capsule());
    } else {
      answer = new Refused(l.refusal());
    }
    queue.forEach(q -> q.tell(answer));
    return this;
  }

  private Behavior<Command> onDeadline(LoadDeadline d) {
    List<ActorRef<Resolution>> queue = waiting.remove(d.key());
    if (queue != null) {
      Resolution answer =
          new Refused(
              Diagnostic.of(
                  Code.E_RUN_032,
                  "loading the driver overran its deadline of " + deadline.toMillis() + " ms"));
      queue.forEach(q -> q.tell(answer));
    }
    return this;
  }
}
