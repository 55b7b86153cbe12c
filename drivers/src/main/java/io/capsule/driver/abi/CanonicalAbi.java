package io.capsule.driver.abi;

import io.capsule.driver.wasm.GuestMemory;
import java.nio.charset.CharsetDecoder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The canonical ABI of the Component Model (CanonicalABI.md), type-directed over {@link WitType},
 * for the utf8 string encoding, over one guest's {@link GuestMemory}.
 *
 * <p>Lowering allocates through the guest's {@code cabi_realloc}; lifting validates everything the
 * spec traps on (pointer alignment and bounds, UTF-8, discriminant range, list byte length) and a
 * bool other than 0 or 1, throwing {@link io.capsule.driver.wasm.AbiViolation} ({@code E-RUN-034})
 * with the address and what was wrong. See {@link WitType} for the Java value of each type.
 *
 * <p>Not thread-safe: confined, like its memory, to the thread that owns the instance.
 */
public final class CanonicalAbi {
  /** Above this many flat parameters they are passed in memory, by one pointer. */
  public static final int MAX_FLAT_PARAMS = 16;

  /** Above this many flat results the callee returns one pointer to them. */
  public static final int MAX_FLAT_RESULTS = 1;

  private final GuestMemory memory;
  private final CharsetDecoder utf8 = Lifter.strictUtf8();

  public CanonicalAbi(GuestMemory memory) {
    this.memory = Objects.requireNonNull(memory, "memory");
  }

  public GuestMemory memory() {
    return memory;
  }

  /** Loads a value of {@code t} stored at {@code ptr}, checking the pointer first. */
  public Object load(WitType t, int ptr) {
    Lifter lifter = new Lifter(memory, utf8);
    lifter.checkRange(t, ptr);
    return lifter.load(t, ptr);
  }

  /** Stores {@code value} at {@code ptr}, which the caller has allocated for {@code t}. */
  public void store(WitType t, Object value, int ptr) {
    new Lowerer(memory).store(t, value, ptr);
  }

  /** Allocates room for a {@code t} through {@code cabi_realloc}, stores the value there. */
  public int storeNew(WitType t, Object value) {
    Lowerer lowerer = new Lowerer(memory);
    int ptr = lowerer.allocate(t.alignment(), t.size(), () -> "a " + t.wit());
    lowerer.store(t, value, ptr);
    return ptr;
  }

  /** Lowers one value to its flat core values (raw bits, i32s zero-extended). */
  public long[] lowerFlat(WitType t, Object value) {
    FlatOut out = new FlatOut();
    new Lowerer(memory).lowerFlat(t, value, out);
    return out.toArray();
  }

  /** Lifts one value from exactly its flat core values. */
  public Object liftFlat(WitType t, long[] flat) {
    FlatIn.Values in = new FlatIn.Values(flat);
    Object value = new Lifter(memory, utf8).liftFlat(t, in);
    if (in.consumed() != flat.length) {
      throw Violations.of(
          "%d core values given for %s, which flattens to %d", flat.length, t.wit(), in.consumed());
    }
    return value;
  }

  /** The flat parameters of a function (CanonicalABI.md {@code flatten_functype}, lift). */
  public static List<FlatType> flatParams(List<WitType> params) {
    List<FlatType> flat = flatten(params);
    return flat.size() > MAX_FLAT_PARAMS ? List.of(FlatType.I32) : flat;
  }

  /** The flat results of a lifted function: over {@link #MAX_FLAT_RESULTS}, one i32 pointer. */
  public static List<FlatType> flatResults(List<WitType> results) {
    List<FlatType> flat = flatten(results);
    return flat.size() > MAX_FLAT_RESULTS ? List.of(FlatType.I32) : flat;
  }

  private static List<FlatType> flatten(List<WitType> types) {
    List<FlatType> flat = new ArrayList<>();
    for (WitType t : types) {
      flat.addAll(t.flat());
    }
    return flat;
  }

  /**
   * Lowers a call's arguments (CanonicalABI.md {@code lower_values} with {@link #MAX_FLAT_PARAMS}):
   * flat when they fit, else stored as a tuple in memory from {@code cabi_realloc}, passed by
   * pointer.
   */
  public long[] lowerParams(List<WitType> params, List<Object> args) {
    if (params.size() != args.size()) {
      throw new IllegalArgumentException(
          params.size() + " parameters, " + args.size() + " arguments");
    }
    if (flatten(params).size() > MAX_FLAT_PARAMS) {
      TupleType tuple = new TupleType(params);
      int ptr = storeNew(tuple, new WitRecord(args));
      return new long[] {Integer.toUnsignedLong(ptr)};
    }
    FlatOut out = new FlatOut();
    Lowerer lowerer = new Lowerer(memory);
    for (int i = 0; i < params.size(); i++) {
      lowerer.lowerFlat(params.get(i), args.get(i), out);
    }
    return out.toArray();
  }

  /**
   * {@link #lowerParams} of a function whose one parameter is a {@code list<string>}, from the
   * strings' UTF-8 (each element one string's bytes, encoded by the caller already): the same
   * allocations and stores, without encoding the strings again. Empty when the parameters are
   * anything else, or the memory does not allocate a string list in one call ({@link
   * GuestMemory#allocatesStringsInOneCall}): then lower the strings themselves.
   */
  public Optional<long[]> lowerEncodedStrings(List<WitType> params, byte[][] utf8) {
    if (params.size() != 1
        || !(params.get(0) instanceof ListType l)
        || l.element() != Primitive.STRING
        || !memory.allocatesStringsInOneCall()) {
      return Optional.empty();
    }
    if ((long) utf8.length * 8 >= 1L << 31) {
      return Optional.empty(); // lowerParams names the violation
    }
    int[] range = new Lowerer(memory).encodedStringList(utf8);
    return Optional.of(
        new long[] {Integer.toUnsignedLong(range[0]), Integer.toUnsignedLong(range[1])});
  }

  /**
   * Lifts a call's results (CanonicalABI.md {@code lift_values} with {@link #MAX_FLAT_RESULTS}):
   * from the flat values when they fit, else from the tuple the returned pointer points to, after
   * checking that pointer's alignment and bounds.
   */
  public List<Object> liftResults(List<WitType> results, long[] flat) {
    List<FlatType> expected = flatResults(results);
    if (flat.length != expected.size()) {
      throw Violations.of(
          "the function returned %d core values; its signature has %d",
          flat.length, expected.size());
    }
    if (flatten(results).size() > MAX_FLAT_RESULTS) {
      if (results.size() == 1) {
        // A one-tuple has its element's layout; loading the element names it in messages.
        return List.of(load(results.get(0), (int) flat[0]));
      }
      WitRecord record = (WitRecord) load(new TupleType(results), (int) flat[0]);
      return record.fields();
    }
    FlatIn.Values in = new FlatIn.Values(flat);
    Lifter lifter = new Lifter(memory, utf8);
    List<Object> values = new ArrayList<>(results.size());
    for (WitType t : results) {
      values.add(lifter.liftFlat(t, in));
    }
    return values;
  }
}
