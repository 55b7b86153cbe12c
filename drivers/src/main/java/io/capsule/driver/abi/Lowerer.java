package io.capsule.driver.abi;

import static io.capsule.driver.abi.Violations.hex;
import static io.capsule.driver.abi.Violations.unsigned;

import io.capsule.driver.wasm.GuestMemory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Lowering (CanonicalABI.md "Storing" and "Flat Lowering"): strings and lists go into memory the
 * guest allocates through {@code cabi_realloc}, every allocation checked for alignment and bounds.
 *
 * <p>The values come from the host, so a value that does not match its type is a host bug: {@link
 * IllegalArgumentException}, never an {@link io.capsule.driver.wasm.AbiViolation}. Strings are
 * encoded with Java's UTF-8 encoder; the host never hands over unpaired surrogates (harness output
 * is decoded with replacement), and if it did they would be sent as {@code ?}.
 *
 * <p>Flat values are raw bits with i32s zero-extended, so a payload lowered into a slot joined to
 * i64 needs no conversion (CanonicalABI.md {@code lower_flat_variant}).
 */
final class Lowerer {
  private final GuestMemory memory;

  Lowerer(GuestMemory memory) {
    this.memory = memory;
  }

  /**
   * Calls {@code cabi_realloc(0, 0, align, size)} and checks what it returned. {@code what} names
   * the allocation in a refusal; a supplier because formatting it for every string cost ~3 % of a
   * {@code parse} call (profiled), and it is read only when something is wrong.
   */
  int allocate(int alignment, long size, Supplier<String> what) {
    if (size >= 1L << 32) {
      throw Violations.of("%s needs %d bytes, over the 32-bit address space", what.get(), size);
    }
    int ptr = memory.realloc(0, 0, alignment, (int) size);
    long start = unsigned(ptr);
    if (start % alignment != 0) {
      throw Violations.of(
          "cabi_realloc returned %s for %s, not aligned to %d", hex(start), what.get(), alignment);
    }
    long memorySize = memory.size();
    if (start + size > memorySize) {
      throw Violations.of(
          "cabi_realloc returned %s for %s (%d bytes), past the end of memory (%d bytes)",
          hex(start), what.get(), size, memorySize);
    }
    return ptr;
  }

  void store(WitType t, Object v, int ptr) {
    if (t instanceof Primitive p) {
      storePrimitive(p, v, ptr);
    } else if (t instanceof ListType l) {
      int[] range = list(l, v);
      memory.storeI32(ptr, range[0]);
      memory.storeI32(ptr + 4, range[1]);
    } else if (t instanceof RecordType r) {
      storeRecord(r, v, ptr);
    } else if (t instanceof TupleType tt) {
      storeRecord(tt.asRecord(), v, ptr);
    } else {
      CasedType c = (CasedType) t;
      CaseLayout layout = c.cases();
      int index = caseIndex(c, v);
      switch (layout.discriminantSize()) {
        case 1 -> memory.storeU8(ptr, (byte) index);
        case 2 -> memory.storeU16(ptr, (short) index);
        default -> memory.storeI32(ptr, index);
      }
      Optional<WitType> payloadType = layout.payload(index);
      if (payloadType.isPresent()) {
        store(payloadType.get(), payload(c, v), ptr + layout.payloadOffset());
      }
    }
  }

  private void storePrimitive(Primitive p, Object v, int ptr) {
    switch (p) {
      case BOOL -> memory.storeU8(ptr, (byte) (as(Boolean.class, v, p) ? 1 : 0));
      case U8 -> memory.storeU8(ptr, (byte) u8(v));
      case S32 -> memory.storeI32(ptr, as(Integer.class, v, p));
      case U32 -> memory.storeI32(ptr, (int) u32(v));
      case U64 -> memory.storeI64(ptr, as(Long.class, v, p));
      case F64 -> memory.storeI64(ptr, Double.doubleToLongBits(as(Double.class, v, p)));
      case STRING -> {
        int[] range = string(as(String.class, v, p));
        memory.storeI32(ptr, range[0]);
        memory.storeI32(ptr + 4, range[1]);
      }
      default -> throw new AssertionError(p);
    }
  }

  private void storeRecord(RecordType r, Object v, int ptr) {
    List<Object> values = fields(r, v);
    for (int i = 0; i < values.size(); i++) {
      store(r.fields().get(i).type(), values.get(i), ptr + r.offset(i));
    }
  }

  /** Lowers one value to flat core values (CanonicalABI.md {@code lower_flat}). */
  void lowerFlat(WitType t, Object v, FlatOut out) {
    if (t instanceof Primitive p) {
      switch (p) {
        case BOOL -> out.add(as(Boolean.class, v, p) ? 1 : 0);
        case U8 -> out.add(u8(v));
        case S32 -> out.add(unsigned(as(Integer.class, v, p)));
        case U32 -> out.add(u32(v));
        case U64 -> out.add(as(Long.class, v, p));
        case F64 -> out.add(Double.doubleToLongBits(as(Double.class, v, p)));
        case STRING -> {
          int[] range = string(as(String.class, v, p));
          out.add(unsigned(range[0]));
          out.add(unsigned(range[1]));
        }
        default -> throw new AssertionError(p);
      }
    } else if (t instanceof ListType l) {
      int[] range = list(l, v);
      out.add(unsigned(range[0]));
      out.add(unsigned(range[1]));
    } else if (t instanceof RecordType || t instanceof TupleType) {
      RecordType r = t instanceof TupleType tt ? tt.asRecord() : (RecordType) t;
      List<Object> values = fields(r, v);
      for (int i = 0; i < values.size(); i++) {
        lowerFlat(r.fields().get(i).type(), values.get(i), out);
      }
    } else {
      CasedType c = (CasedType) t;
      CaseLayout layout = c.cases();
      int index = caseIndex(c, v);
      out.add(index);
      int end = out.size() + layout.flatPayload().size();
      Optional<WitType> payloadType = layout.payload(index);
      if (payloadType.isPresent()) {
        lowerFlat(payloadType.get(), payload(c, v), out);
      }
      while (out.size() < end) {
        out.add(0);
      }
    }
  }

  /** CanonicalABI.md {@code store_string_into_range} for utf8 to utf8: a copy. */
  private int[] string(String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    int ptr = allocate(1, bytes.length, () -> "a string of " + bytes.length + " bytes");
    memory.storeBytes(ptr, bytes);
    return new int[] {ptr, bytes.length};
  }

  /** CanonicalABI.md {@code store_list_into_range}. */
  private int[] list(ListType type, Object v) {
    WitType element = type.element();
    if (type.isBytes()) {
      byte[] bytes = as(byte[].class, v, type);
      int ptr = allocate(1, bytes.length, () -> "a list<u8> of " + bytes.length + " bytes");
      memory.storeBytes(ptr, bytes);
      return new int[] {ptr, bytes.length};
    }
    List<?> values = as(List.class, v, type);
    if (element == Primitive.STRING && memory.allocatesStringsInOneCall()) {
      return stringList(type, values);
    }
    long bytes = (long) values.size() * element.size();
    int ptr =
        allocate(
            element.alignment(),
            bytes,
            () -> "a " + type.wit() + " of " + values.size() + " items");
    for (int i = 0; i < values.size(); i++) {
      store(element, values.get(i), ptr + i * element.size());
    }
    return new int[] {ptr, values.size()};
  }

  /**
   * A {@code list<string>} with the list's and the strings' allocations made in one guest call
   * ({@link GuestMemory#allocStringList}): the same allocations, in the same order, as {@link
   * #list}'s path, the bytes copied once they all exist.
   */
  private int[] stringList(ListType type, List<?> values) {
    int count = values.size();
    if ((long) count * 8 >= 1L << 31) {
      throw Violations.of(
          "a %s of %d items needs %d bytes, over the 32-bit address space",
          type.wit(), count, (long) count * 8);
    }
    byte[][] encoded = new byte[count][];
    for (int i = 0; i < count; i++) {
      encoded[i] =
          as(String.class, values.get(i), Primitive.STRING).getBytes(StandardCharsets.UTF_8);
    }
    return encodedStringList(encoded);
  }

  /**
   * {@link #stringList} of strings the caller has encoded already (each element a string's UTF-8);
   * only where the memory {@link GuestMemory#allocatesStringsInOneCall}.
   */
  int[] encodedStringList(byte[][] encoded) {
    int count = encoded.length;
    int[] lengths = new int[count];
    for (int i = 0; i < count; i++) {
      lengths[i] = encoded[i].length;
    }
    int ptr = memory.allocStringList(lengths);
    for (int i = 0; i < count; i++) {
      memory.storeBytes(memory.loadI32(ptr + i * 8), encoded[i]);
    }
    return new int[] {ptr, count};
  }

  private static List<Object> fields(RecordType r, Object v) {
    List<Object> values = as(WitRecord.class, v, r).fields();
    if (values.size() != r.fields().size()) {
      throw new IllegalArgumentException(
          r.wit() + " has " + r.fields().size() + " fields, the value " + values.size());
    }
    return values;
  }

  private static int caseIndex(CasedType t, Object v) {
    int index;
    if (t instanceof OptionType) {
      index = as(Optional.class, v, t).isPresent() ? 1 : 0;
    } else if (t instanceof EnumType) {
      index = as(WitEnum.class, v, t).index();
    } else {
      WitVariant variant = as(WitVariant.class, v, t);
      index = variant.caseIndex();
      if (index < t.cases().caseCount()
          && variant.payload().isPresent() != t.cases().payload(index).isPresent()) {
        throw new IllegalArgumentException(
            "case " + index + " of " + t.wit() + " does not match the payload " + variant);
      }
    }
    if (index >= t.cases().caseCount()) {
      throw new IllegalArgumentException(
          t.wit() + " has " + t.cases().caseCount() + " cases, not case " + index);
    }
    return index;
  }

  private static Object payload(CasedType t, Object v) {
    if (t instanceof OptionType) {
      return ((Optional<?>) v).orElseThrow();
    }
    return ((WitVariant) v).get();
  }

  private static int u8(Object v) {
    int i = as(Integer.class, v, Primitive.U8);
    if (i < 0 || i > 0xff) {
      throw new IllegalArgumentException("u8 out of range: " + i);
    }
    return i;
  }

  private static long u32(Object v) {
    long l = as(Long.class, v, Primitive.U32);
    if (l < 0 || l > 0xffff_ffffL) {
      throw new IllegalArgumentException("u32 out of range: " + l);
    }
    return l;
  }

  private static <T> T as(Class<T> type, Object v, WitType t) {
    if (!type.isInstance(v)) {
      throw new IllegalArgumentException(
          t.wit()
              + " lowers from a "
              + type.getSimpleName()
              + ", not "
              + (v == null ? "null" : v.getClass().getSimpleName()));
    }
    return type.cast(v);
  }
}
