package io.capsule.driver.abi;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The WIT value types the driver contract uses, with their canonical-ABI layout (CanonicalABI.md,
 * "Alignment", "Size", "Flattening"). Layouts are computed once, when a type is built, so lifting a
 * long list costs no layout arithmetic per element.
 *
 * <p>The Java value each type lifts to and lowers from:
 *
 * <table>
 *   <caption>values</caption>
 *   <tr><th>WIT</th><th>Java value</th></tr>
 *   <tr><td>bool</td><td>{@link Boolean}</td></tr>
 *   <tr><td>u8</td><td>{@link Integer} 0..255</td></tr>
 *   <tr><td>s32</td><td>{@link Integer}</td></tr>
 *   <tr><td>u32</td><td>{@link Long} 0..2^32-1</td></tr>
 *   <tr><td>u64</td><td>{@link Long}, read unsigned</td></tr>
 *   <tr><td>f64</td><td>{@link Double}</td></tr>
 *   <tr><td>string</td><td>{@link String}</td></tr>
 *   <tr><td>list&lt;u8&gt;</td><td>{@code byte[]}</td></tr>
 *   <tr><td>list&lt;T&gt;</td><td>{@link List} of T's values</td></tr>
 *   <tr><td>option&lt;T&gt;</td><td>{@link Optional} of T's value</td></tr>
 *   <tr><td>result&lt;T, E&gt;</td><td>{@link WitVariant}: case 0 ok, case 1 error</td></tr>
 *   <tr><td>record, tuple</td><td>{@link WitRecord}, fields in declaration order</td></tr>
 *   <tr><td>variant</td><td>{@link WitVariant}</td></tr>
 *   <tr><td>enum</td><td>{@link WitEnum}</td></tr>
 * </table>
 *
 * <p>Values never hold {@code null}: an absent payload is an empty {@link Optional}.
 */
public sealed interface WitType permits Primitive, ListType, RecordType, TupleType, CasedType {

  /** Size in bytes in linear memory. */
  int size();

  /** Alignment in bytes in linear memory (1, 2, 4 or 8). */
  int alignment();

  /** The core types this type flattens to, in order. */
  List<FlatType> flat();

  /** The type as WIT spells it, for messages. */
  String wit();

  /** {@code ceil(offset / alignment) * alignment}. */
  static int alignTo(int offset, int alignment) {
    return (offset + alignment - 1) / alignment * alignment;
  }

  static WitType list(WitType element) {
    return new ListType(element);
  }

  static WitType option(WitType some) {
    return new OptionType(some);
  }

  /** {@code result<ok, error>}; an empty side has no payload. */
  static WitType result(Optional<WitType> ok, Optional<WitType> error) {
    return new ResultType(ok, error);
  }

  static RecordType record(String wit, RecordType.Field... fields) {
    return new RecordType(wit, Arrays.asList(fields));
  }

  static RecordType.Field field(String name, WitType type) {
    return new RecordType.Field(name, type);
  }

  static VariantType variant(String wit, VariantType.Case... cases) {
    return new VariantType(wit, Arrays.asList(cases));
  }

  static VariantType.Case unitCase(String name) {
    return new VariantType.Case(name, Optional.empty());
  }

  static VariantType.Case payloadCase(String name, WitType payload) {
    return new VariantType.Case(name, Optional.of(payload));
  }

  static EnumType enumOf(String wit, String... names) {
    return new EnumType(wit, Arrays.asList(names));
  }

  static TupleType tuple(WitType... items) {
    return new TupleType(Arrays.asList(items));
  }
}
