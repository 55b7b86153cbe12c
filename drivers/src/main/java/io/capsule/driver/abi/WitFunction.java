package io.capsule.driver.abi;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A component function's type: its WIT name, parameter types and optional result type, with the
 * core signature the canonical ABI gives it when lifted.
 */
public record WitFunction(String name, List<WitType> params, Optional<WitType> result) {
  public WitFunction {
    Objects.requireNonNull(name, "name");
    params = List.copyOf(params);
    Objects.requireNonNull(result, "result");
  }

  public static WitFunction of(String name, WitType result, WitType... params) {
    return new WitFunction(name, List.of(params), Optional.of(result));
  }

  public List<WitType> results() {
    return result.map(List::of).orElse(List.of());
  }

  /** The core parameter types of the lifted function. */
  public List<FlatType> coreParams() {
    return CanonicalAbi.flatParams(params);
  }

  /** The core result types of the lifted function (at most one). */
  public List<FlatType> coreResults() {
    return CanonicalAbi.flatResults(results());
  }
}
