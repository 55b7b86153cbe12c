package io.capsule.driver.abi;

import io.capsule.driver.api.Bridge;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.DriverFile;
import io.capsule.driver.api.EnvVar;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ExitStatus;
import io.capsule.driver.api.HarnessNeeds;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LaunchPlan;
import io.capsule.driver.api.LaunchRequest;
import io.capsule.driver.api.LaunchResult;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.LoginOutput;
import io.capsule.driver.api.LoginState;
import io.capsule.driver.api.PathAccess;
import io.capsule.driver.api.PathNeed;
import io.capsule.driver.api.Session;
import io.capsule.driver.api.SessionMode;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * The bridge between the contract's Java types ({@code io.capsule.driver.api}) and the ABI values
 * of {@link ContractTypes}, both ways for every type: {@code value(x)} gives the ABI value to
 * lower, the named methods ({@code description(v)}, {@code events(v)}, …) read a lifted one. The
 * host lowers requests and lifts results; the reverse directions let a Java test guest answer in
 * ABI values. Events have their own codec, {@link EventCodec}.
 *
 * <p>Lifted values are trusted to match their type (the lifter built them); a value that does not
 * is a host bug and fails with a {@link ClassCastException}.
 */
public final class ContractCodec {
  private ContractCodec() {}

  // --- description ---

  public static WitRecord value(Description d) {
    return WitRecord.of(
        d.harness(),
        d.binary(),
        d.versionArgs(),
        d.testedVersions(),
        new WitEnum(d.interrupt().ordinal()),
        d.requiredEnv(),
        d.streamsText(),
        d.reportsUsage(),
        value(d.loginCheck()),
        WitRecord.of(
            d.harnessNeeds().paths().stream()
                .map(p -> WitRecord.of(p.path(), new WitEnum(p.access().ordinal())))
                .toList(),
            d.harnessNeeds().hosts()));
  }

  public static Description description(Object v) {
    WitRecord r = (WitRecord) v;
    WitRecord needs = (WitRecord) r.get(9);
    return new Description(
        (String) r.get(0),
        (String) r.get(1),
        strings(r.get(2)),
        strings(r.get(3)),
        InterruptMethod.values()[((WitEnum) r.get(4)).index()],
        strings(r.get(5)),
        (Boolean) r.get(6),
        (Boolean) r.get(7),
        loginCheck(r.get(8)),
        new HarnessNeeds(
            list(
                needs.get(0),
                p -> {
                  WitRecord need = (WitRecord) p;
                  return new PathNeed(
                      (String) need.get(0), PathAccess.values()[((WitEnum) need.get(1)).index()]);
                }),
            strings(needs.get(1))));
  }

  public static WitVariant value(LoginCheck check) {
    if (check instanceof LoginCheck.Command c) {
      return WitVariant.of(0, c.args());
    }
    return WitVariant.of(1, ((LoginCheck.Unavailable) check).reason());
  }

  public static LoginCheck loginCheck(Object v) {
    WitVariant w = (WitVariant) v;
    return w.caseIndex() == 0
        ? new LoginCheck.Command(strings(w.get()))
        : new LoginCheck.Unavailable((String) w.get());
  }

  // --- launch ---

  public static WitRecord value(LaunchRequest q) {
    return WitRecord.of(
        q.model(),
        q.systemPrompt(),
        q.config(),
        q.bridge().map(ContractCodec::value),
        WitRecord.of(q.session().id(), new WitEnum(q.session().mode().ordinal())),
        q.harnessVersion(),
        q.task());
  }

  public static LaunchRequest launchRequest(Object v) {
    WitRecord r = (WitRecord) v;
    WitRecord session = (WitRecord) r.get(4);
    return new LaunchRequest(
        optional(r.get(0), String.class::cast),
        (String) r.get(1),
        optional(r.get(2), String.class::cast),
        optional(r.get(3), ContractCodec::bridge),
        new Session(
            (String) session.get(0), SessionMode.values()[((WitEnum) session.get(1)).index()]),
        optional(r.get(5), String.class::cast),
        (String) r.get(6));
  }

  static WitRecord value(Bridge b) {
    return WitRecord.of(b.serverName(), b.url(), b.bearerToken(), b.toolNames());
  }

  static Bridge bridge(Object v) {
    WitRecord r = (WitRecord) v;
    return new Bridge((String) r.get(0), (String) r.get(1), (String) r.get(2), strings(r.get(3)));
  }

  public static WitVariant value(LaunchResult result) {
    if (result instanceof LaunchResult.Refused refused) {
      return WitVariant.of(ResultType.ERROR, refused.message());
    }
    LaunchPlan p = ((LaunchResult.Planned) result).plan();
    return WitVariant.of(
        ResultType.OK,
        WitRecord.of(
            p.args(),
            p.envSet().stream().map(e -> WitRecord.of(e.name(), e.value())).toList(),
            p.files().stream().map(f -> WitRecord.of(f.name(), f.contents())).toList(),
            p.stdin().map(b -> (Object) b),
            p.keepStdinOpen(),
            p.interruptStdin().map(b -> (Object) b)));
  }

  public static LaunchResult launchResult(Object v) {
    WitVariant w = (WitVariant) v;
    if (w.caseIndex() == ResultType.ERROR) {
      return new LaunchResult.Refused((String) w.get());
    }
    WitRecord r = (WitRecord) w.get();
    return new LaunchResult.Planned(
        new LaunchPlan(
            strings(r.get(0)),
            list(
                r.get(1),
                e -> new EnvVar((String) ((WitRecord) e).get(0), (String) ((WitRecord) e).get(1))),
            list(
                r.get(2),
                f ->
                    new DriverFile(
                        (String) ((WitRecord) f).get(0), (String) ((WitRecord) f).get(1))),
            optional(r.get(3), byte[].class::cast),
            (Boolean) r.get(4),
            optional(r.get(5), byte[].class::cast)));
  }

  // --- parse and classify-exit ---

  /** {@code parse}'s argument: the lines, as they are ({@code list<string>}). */
  public static List<Object> value(List<String> lines) {
    return List.copyOf(lines);
  }

  public static List<Event> events(Object v) {
    return list(v, EventCodec::event);
  }

  public static WitRecord value(ExitStatus e) {
    return WitRecord.of(e.code(), e.signal(), e.stderrTail(), e.interrupted(), e.sawTerminal());
  }

  public static ExitStatus exitStatus(Object v) {
    WitRecord r = (WitRecord) v;
    return new ExitStatus(
        optional(r.get(0), Integer.class::cast),
        optional(r.get(1), Integer.class::cast),
        (String) r.get(2),
        (Boolean) r.get(3),
        (Boolean) r.get(4));
  }

  // --- read-login ---

  public static WitRecord value(LoginOutput o) {
    return WitRecord.of(o.exitCode(), o.stdout(), o.stderr());
  }

  public static LoginOutput loginOutput(Object v) {
    WitRecord r = (WitRecord) v;
    return new LoginOutput(
        optional(r.get(0), Integer.class::cast), (String) r.get(1), (String) r.get(2));
  }

  public static WitVariant value(LoginState s) {
    if (s instanceof LoginState.LoggedOut out) {
      return WitVariant.of(1, out.reason());
    }
    if (s instanceof LoginState.Unknown unknown) {
      return WitVariant.of(2, unknown.reason());
    }
    return WitVariant.of(0);
  }

  public static LoginState loginState(Object v) {
    WitVariant w = (WitVariant) v;
    return switch (w.caseIndex()) {
      case 0 -> new LoginState.LoggedIn();
      case 1 -> new LoginState.LoggedOut((String) w.get());
      default -> new LoginState.Unknown((String) w.get());
    };
  }

  // --- helpers ---

  static List<String> strings(Object v) {
    return list(v, String.class::cast);
  }

  static <T> List<T> list(Object v, Function<Object, T> element) {
    return ((List<?>) v).stream().map(element).toList();
  }

  static <T> Optional<T> optional(Object v, Function<Object, T> some) {
    return ((Optional<?>) v).map(some);
  }
}
