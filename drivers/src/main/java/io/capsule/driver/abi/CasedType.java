package io.capsule.driver.abi;

/**
 * The types that despecialize to a {@code variant} (CanonicalABI.md {@code despecialize}): {@code
 * option}, {@code result}, {@code enum} and {@code variant} itself. They share one layout, {@link
 * CaseLayout}; they differ only in the Java value they lift to.
 */
public sealed interface CasedType extends WitType
    permits OptionType, ResultType, EnumType, VariantType {

  /** The layout of the variant this type despecializes to. */
  CaseLayout cases();

  @Override
  default int size() {
    return cases().size();
  }

  @Override
  default int alignment() {
    return cases().alignment();
  }

  @Override
  default java.util.List<FlatType> flat() {
    return cases().flat();
  }
}
