package io.capsule.driver.abi;

import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** A WIT {@code enum}: a variant whose cases carry nothing. Its values are {@link WitEnum}s. */
public final class EnumType implements CasedType {
  private final String wit;
  private final List<String> names;
  private final CaseLayout cases;

  public EnumType(String wit, List<String> names) {
    this.wit = Objects.requireNonNull(wit, "wit");
    this.names = List.copyOf(names);
    this.cases = new CaseLayout(Collections.nCopies(this.names.size(), Optional.empty()));
  }

  /** The case names in declaration order; a value's index points into this list. */
  public List<String> names() {
    return names;
  }

  @Override
  public CaseLayout cases() {
    return cases;
  }

  @Override
  public String wit() {
    return wit;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof EnumType t && wit.equals(t.wit) && names.equals(t.names);
  }

  @Override
  public int hashCode() {
    return Objects.hash(wit, names);
  }

  @Override
  public String toString() {
    return wit;
  }
}
