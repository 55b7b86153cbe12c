package io.capsule.driver.abi;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code result<T, E>}: the variant {@code ok(T?) | error(E?)}. Its values are {@link WitVariant}s,
 * case 0 for ok and case 1 for error.
 */
public final class ResultType implements CasedType {
  public static final int OK = 0;
  public static final int ERROR = 1;

  private final Optional<WitType> ok;
  private final Optional<WitType> error;
  private final CaseLayout cases;

  public ResultType(Optional<WitType> ok, Optional<WitType> error) {
    this.ok = Objects.requireNonNull(ok, "ok");
    this.error = Objects.requireNonNull(error, "error");
    this.cases = new CaseLayout(List.of(ok, error));
  }

  public Optional<WitType> ok() {
    return ok;
  }

  public Optional<WitType> error() {
    return error;
  }

  @Override
  public CaseLayout cases() {
    return cases;
  }

  @Override
  public String wit() {
    return "result<"
        + ok.map(WitType::wit).orElse("_")
        + ", "
        + error.map(WitType::wit).orElse("_")
        + ">";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ResultType t && ok.equals(t.ok) && error.equals(t.error);
  }

  @Override
  public int hashCode() {
    return Objects.hash(ok, error);
  }

  @Override
  public String toString() {
    return wit();
  }
}
