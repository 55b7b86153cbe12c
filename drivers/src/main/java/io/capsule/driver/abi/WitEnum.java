package io.capsule.driver.abi;

/** The value of an {@code enum}: the case index in declaration order, from 0. */
public record WitEnum(int index) {
  public WitEnum {
    if (index < 0) {
      throw new IllegalArgumentException("enum index must not be negative: " + index);
    }
  }
}
