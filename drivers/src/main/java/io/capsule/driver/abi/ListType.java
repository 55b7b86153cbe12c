package io.capsule.driver.abi;

import java.util.List;
import java.util.Objects;

/** {@code list<T>}: a pointer to {@code length} consecutive elements and the length, both i32. */
public final class ListType implements WitType {
  private static final List<FlatType> FLAT = List.of(FlatType.I32, FlatType.I32);

  private final WitType element;

  public ListType(WitType element) {
    this.element = Objects.requireNonNull(element, "element");
  }

  public WitType element() {
    return element;
  }

  /** {@code list<u8>}, carried as a {@code byte[]}. */
  public boolean isBytes() {
    return element == Primitive.U8;
  }

  @Override
  public int size() {
    return 8;
  }

  @Override
  public int alignment() {
    return 4;
  }

  @Override
  public List<FlatType> flat() {
    return FLAT;
  }

  @Override
  public String wit() {
    return "list<" + element.wit() + ">";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ListType l && element.equals(l.element);
  }

  @Override
  public int hashCode() {
    return 31 + element.hashCode();
  }

  @Override
  public String toString() {
    return wit();
  }
}
