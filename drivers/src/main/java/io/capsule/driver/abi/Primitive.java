package io.capsule.driver.abi;

import java.util.List;

/**
 * The scalar types and {@code string}. {@code u8} appears in the contract only as the element of
 * {@code list<u8>}, which lifts to and lowers from a {@code byte[]}.
 */
public enum Primitive implements WitType {
  BOOL("bool", 1, 1, List.of(FlatType.I32)),
  U8("u8", 1, 1, List.of(FlatType.I32)),
  S32("s32", 4, 4, List.of(FlatType.I32)),
  U32("u32", 4, 4, List.of(FlatType.I32)),
  U64("u64", 8, 8, List.of(FlatType.I64)),
  F64("f64", 8, 8, List.of(FlatType.F64)),
  /** A pointer and a byte length, both i32; the bytes are UTF-8. */
  STRING("string", 8, 4, List.of(FlatType.I32, FlatType.I32));

  private final String wit;
  private final int size;
  private final int alignment;
  private final List<FlatType> flat;

  Primitive(String wit, int size, int alignment, List<FlatType> flat) {
    this.wit = wit;
    this.size = size;
    this.alignment = alignment;
    this.flat = flat;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public int alignment() {
    return alignment;
  }

  @Override
  public List<FlatType> flat() {
    return flat;
  }

  @Override
  public String wit() {
    return wit;
  }

  @Override
  public String toString() {
    return wit;
  }
}
