package io.capsule.driver.abi;

/**
 * A core WebAssembly value type as the canonical ABI flattens component values into it. On the
 * {@link io.capsule.driver.wasm.WasmInstance} seam every flat value travels as raw bits in a {@code
 * long}: an i32 in the low 32 bits (the high bits are ignored when read), an i64 as is, f32/f64 as
 * their IEEE bit patterns.
 */
public enum FlatType {
  I32,
  I64,
  F32,
  F64;

  /**
   * CanonicalABI.md {@code join}: the tightest core type both cases of a variant slot fit in. Equal
   * types stay; i32 and f32 share i32; every other pair widens to i64.
   */
  public FlatType join(FlatType other) {
    if (this == other) {
      return this;
    }
    if ((this == I32 && other == F32) || (this == F32 && other == I32)) {
      return I32;
    }
    return I64;
  }
}
