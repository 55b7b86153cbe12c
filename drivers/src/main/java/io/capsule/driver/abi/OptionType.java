package io.capsule.driver.abi;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** {@code option<T>}: the variant {@code none | some(T)}. Its values are {@link Optional}s. */
public final class OptionType implements CasedType {
  private final WitType some;
  private final CaseLayout cases;

  public OptionType(WitType some) {
    this.some = Objects.requireNonNull(some, "some");
    this.cases = new CaseLayout(List.of(Optional.empty(), Optional.of(some)));
  }

  public WitType some() {
    return some;
  }

  @Override
  public CaseLayout cases() {
    return cases;
  }

  @Override
  public String wit() {
    return "option<" + some.wit() + ">";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof OptionType t && some.equals(t.some);
  }

  @Override
  public int hashCode() {
    return 17 + some.hashCode();
  }

  @Override
  public String toString() {
    return wit();
  }
}
