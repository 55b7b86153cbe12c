package io.capsule.driver.abi;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A WIT {@code variant}: numbered cases, each with an optional payload. Values: {@link WitVariant}.
 */
public final class VariantType implements CasedType {

  /** One case; {@code payload} is empty for a case that carries nothing. */
  public record Case(String name, Optional<WitType> payload) {
    public Case {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(payload, "payload");
    }
  }

  private final String wit;
  private final List<Case> caseList;
  private final CaseLayout cases;

  public VariantType(String wit, List<Case> cases) {
    this.wit = Objects.requireNonNull(wit, "wit");
    this.caseList = List.copyOf(cases);
    this.cases = new CaseLayout(this.caseList.stream().map(Case::payload).toList());
  }

  /** The cases in declaration order; a value's case index points into this list. */
  public List<Case> caseList() {
    return caseList;
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
    return o instanceof VariantType t && wit.equals(t.wit) && caseList.equals(t.caseList);
  }

  @Override
  public int hashCode() {
    return Objects.hash(wit, caseList);
  }

  @Override
  public String toString() {
    return wit;
  }
}
