package io.capsule.driver.abi;

import static io.capsule.driver.abi.Violations.hex;
import static io.capsule.driver.abi.Violations.unsigned;

import io.capsule.driver.wasm.AbiViolation;
import io.capsule.driver.wasm.GuestMemory;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Lifting (CanonicalABI.md "Loading" and "Flat Lifting") with every check the spec traps on, plus
 * the host's stricter rules: a bool must be exactly 0 or 1 (the spec reads any nonzero byte as
 * true; the host refuses it, so a driver that writes garbage is caught rather than read as {@code
 * true}). Every refusal is an {@link AbiViolation}; one found inside a list, record or variant
 * carries the detail {@code path} from the lifted value to the culprit (e.g. {@code [3].note}).
 *
 * <p>One lifter serves one lift: it reads the memory size once, since no guest code runs while a
 * result is lifted. Not thread-safe.
 */
final class Lifter {
  private final GuestMemory memory;
  private final long memorySize;
  private final CharsetDecoder utf8;

  /**
   * Bytes of memory the lifted strings and list elements may still cover. A result whose lists and
   * strings do not overlap covers at most the whole memory; one that covers more reuses the same
   * bytes many times over (a million list elements pointing at one large string), which would make
   * the host copy far more than the guest holds. Such a result is refused before it is copied.
   */
  private long budget;

  Lifter(GuestMemory memory, CharsetDecoder utf8) {
    this.memory = memory;
    this.memorySize = memory.size();
    this.budget = memorySize;
    this.utf8 = utf8;
  }

  private void spend(long bytes, String what, long start) {
    budget -= bytes;
    if (budget < 0) {
      throw Violations.of(
          "%s at %s takes the lifted value past %d bytes, the size of the guest's memory:"
              + " its strings or lists overlap",
          what, hex(start), memorySize);
    }
  }

  static CharsetDecoder strictUtf8() {
    return StandardCharsets.UTF_8
        .newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
  }

  /** Checks that a value of {@code t} at {@code ptr} is aligned and wholly inside memory. */
  void checkRange(WitType t, int ptr) {
    long start = unsigned(ptr);
    if (start % t.alignment() != 0) {
      throw Violations.of(
          "%s at %s is not aligned to %d bytes", t.wit(), hex(start), t.alignment());
    }
    if (start + t.size() > memorySize) {
      throw Violations.of(
          "%s at %s (%d bytes) reaches past the end of memory (%d bytes)",
          t.wit(), hex(start), t.size(), memorySize);
    }
  }

  /** Loads a value whose range {@link #checkRange} has accepted (or that lies inside one). */
  Object load(WitType t, int ptr) {
    if (t instanceof Primitive p) {
      return loadPrimitive(p, ptr);
    }
    if (t instanceof ListType l) {
      return list(l, memory.loadI32(ptr), memory.loadI32(ptr + 4));
    }
    if (t instanceof RecordType r) {
      return loadRecord(r, ptr);
    }
    if (t instanceof TupleType tt) {
      return loadRecord(tt.asRecord(), ptr);
    }
    return loadCased((CasedType) t, ptr);
  }

  private Object loadPrimitive(Primitive p, int ptr) {
    switch (p) {
      case BOOL:
        return bool(memory.loadU8(ptr) & 0xff, unsigned(ptr));
      case U8:
        return memory.loadU8(ptr) & 0xff;
      case S32:
        return memory.loadI32(ptr);
      case U32:
        return unsigned(memory.loadI32(ptr));
      case U64:
        return memory.loadI64(ptr);
      case F64:
        return canonical(Double.longBitsToDouble(memory.loadI64(ptr)));
      case STRING:
        return string(memory.loadI32(ptr), memory.loadI32(ptr + 4));
      default:
        throw new AssertionError(p);
    }
  }

  private WitRecord loadRecord(RecordType r, int ptr) {
    List<RecordType.Field> fields = r.fields();
    Object[] values = new Object[fields.size()];
    for (int i = 0; i < values.length; i++) {
      try {
        values[i] = load(fields.get(i).type(), ptr + r.offset(i));
      } catch (AbiViolation e) {
        throw Violations.within(e, "." + fields.get(i).name());
      }
    }
    return WitRecord.of(values);
  }

  private Object loadCased(CasedType t, int ptr) {
    CaseLayout layout = t.cases();
    long discriminant =
        switch (layout.discriminantSize()) {
          case 1 -> memory.loadU8(ptr) & 0xffL;
          case 2 -> memory.loadU16(ptr) & 0xffffL;
          default -> unsigned(memory.loadI32(ptr));
        };
    int index = caseIndex(t, discriminant, unsigned(ptr));
    Optional<Object> payload =
        layout
            .payload(index)
            .map(p -> payload(t, index, () -> load(p, ptr + layout.payloadOffset())));
    return cased(t, index, payload);
  }

  /** Lifts one value from flat core values (CanonicalABI.md {@code lift_flat}). */
  Object liftFlat(WitType t, FlatIn in) {
    if (t instanceof Primitive p) {
      return liftPrimitive(p, in);
    }
    if (t instanceof ListType l) {
      int ptr = (int) in.next(FlatType.I32);
      return list(l, ptr, (int) in.next(FlatType.I32));
    }
    if (t instanceof RecordType r) {
      return liftRecord(r, in);
    }
    if (t instanceof TupleType tt) {
      return liftRecord(tt.asRecord(), in);
    }
    CasedType c = (CasedType) t;
    CaseLayout layout = c.cases();
    int index = caseIndex(c, unsigned((int) in.next(FlatType.I32)), FLAT);
    FlatIn.Coerced payloadIn = new FlatIn.Coerced(in, layout.flatPayload());
    Optional<Object> payload =
        layout.payload(index).map(p -> payload(c, index, () -> liftFlat(p, payloadIn)));
    payloadIn.skipRest();
    return cased(c, index, payload);
  }

  private Object liftPrimitive(Primitive p, FlatIn in) {
    switch (p) {
      case BOOL:
        return bool(unsigned((int) in.next(FlatType.I32)), FLAT);
      case U8:
        return (int) in.next(FlatType.I32) & 0xff;
      case S32:
        return (int) in.next(FlatType.I32);
      case U32:
        return unsigned((int) in.next(FlatType.I32));
      case U64:
        return in.next(FlatType.I64);
      case F64:
        return canonical(Double.longBitsToDouble(in.next(FlatType.F64)));
      case STRING:
        int ptr = (int) in.next(FlatType.I32);
        return string(ptr, (int) in.next(FlatType.I32));
      default:
        throw new AssertionError(p);
    }
  }

  private WitRecord liftRecord(RecordType r, FlatIn in) {
    Object[] values = new Object[r.fields().size()];
    for (int i = 0; i < values.length; i++) {
      try {
        values[i] = liftFlat(r.fields().get(i).type(), in);
      } catch (AbiViolation e) {
        throw Violations.within(e, "." + r.fields().get(i).name());
      }
    }
    return WitRecord.of(values);
  }

  /** The address of a flat value, which has none; a violation then says {@code (flat)}. */
  private static final long FLAT = -1;

  /**
   * Where a value was, for a violation's text: built only when one is thrown, since lifting a batch
   * reads thousands of bools and discriminants.
   */
  private static String where(long at) {
    return at == FLAT ? "(flat)" : "at " + hex(at);
  }

  private static Boolean bool(long value, long at) {
    if (value == 0) {
      return Boolean.FALSE;
    }
    if (value == 1) {
      return Boolean.TRUE;
    }
    throw Violations.of("bool %s is %d; the host accepts only 0 or 1", where(at), value);
  }

  /** CanonicalABI.md {@code canonicalize64}: every NaN becomes the one canonical NaN. */
  private static Double canonical(double d) {
    return Double.isNaN(d) ? Double.NaN : d;
  }

  private static int caseIndex(CasedType t, long discriminant, long at) {
    int count = t.cases().caseCount();
    if (discriminant >= count) {
      throw Violations.of(
          "%s %s has discriminant %d; it has %d cases (0..%d)",
          t.wit(), where(at), discriminant, count, count - 1);
    }
    return (int) discriminant;
  }

  /** Lifts a case's payload; a failure inside names the case in the violation's path. */
  private static Object payload(CasedType t, int index, Supplier<Object> lift) {
    try {
      return lift.get();
    } catch (AbiViolation e) {
      throw Violations.within(e, "." + caseName(t, index));
    }
  }

  private static String caseName(CasedType t, int index) {
    if (t instanceof OptionType) {
      return "some";
    }
    if (t instanceof ResultType) {
      return index == ResultType.OK ? "ok" : "error";
    }
    if (t instanceof VariantType v) {
      return v.caseList().get(index).name();
    }
    return ((EnumType) t).names().get(index);
  }

  private static Object cased(CasedType t, int index, Optional<Object> payload) {
    if (t instanceof OptionType) {
      return payload;
    }
    if (t instanceof EnumType) {
      return new WitEnum(index);
    }
    return new WitVariant(index, payload);
  }

  /** CanonicalABI.md {@code load_string_from_range} for utf8, with strict decoding. */
  String string(int ptr, int byteLength) {
    long start = unsigned(ptr);
    long length = unsigned(byteLength);
    if (start + length > memorySize) {
      throw Violations.of(
          "string at %s with byte length %d reaches past the end of memory (%d bytes)",
          hex(start), length, memorySize);
    }
    if (length > Integer.MAX_VALUE) {
      throw Violations.of("string at %s has byte length %d, over 2^31-1", hex(start), length);
    }
    if (length == 0) {
      return "";
    }
    spend(length, "string", start);
    byte[] bytes = memory.loadBytes(ptr, byteLength);
    return decode(bytes, start);
  }

  private String decode(byte[] bytes, long start) {
    boolean ascii = true;
    for (byte b : bytes) {
      if (b < 0) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      return new String(bytes, StandardCharsets.US_ASCII);
    }
    ByteBuffer in = ByteBuffer.wrap(bytes);
    CharBuffer out = CharBuffer.allocate(bytes.length);
    utf8.reset();
    CoderResult result = utf8.decode(in, out, true);
    if (!result.isError()) {
      result = utf8.flush(out);
    }
    if (result.isError()) {
      throw Violations.of(
          "string at %s (%d bytes) is not valid UTF-8: bad byte 0x%02x at offset %d",
          hex(start), bytes.length, bytes[in.position()] & 0xff, in.position());
    }
    return out.flip().toString();
  }

  /** CanonicalABI.md {@code load_list_from_range}. */
  Object list(ListType type, int ptr, int length) {
    WitType element = type.element();
    long start = unsigned(ptr);
    long count = unsigned(length);
    if (start % element.alignment() != 0) {
      throw Violations.of(
          "%s at %s is not aligned to %d bytes", type.wit(), hex(start), element.alignment());
    }
    long bytes = count * element.size();
    if (bytes >= 1L << 32) {
      throw Violations.of(
          "%s at %s: length %d × element size %d = %d bytes overflows 32-bit memory",
          type.wit(), hex(start), count, element.size(), bytes);
    }
    if (start + bytes > memorySize || (element.size() == 0 && count > memorySize)) {
      throw Violations.of(
          "%s at %s: length %d × element size %d reaches past the end of memory (%d bytes)",
          type.wit(), hex(start), count, element.size(), memorySize);
    }
    spend(bytes, type.wit(), start);
    if (type.isBytes()) {
      return memory.loadBytes(ptr, length);
    }
    List<Object> values = new ArrayList<>((int) count);
    int size = element.size();
    for (int i = 0; i < count; i++) {
      try {
        values.add(load(element, ptr + i * size));
      } catch (AbiViolation e) {
        throw Violations.within(e, "[" + i + "]");
      }
    }
    return Collections.unmodifiableList(values);
  }
}
