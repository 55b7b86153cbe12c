package io.capsule.driver.abi;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * {@code tuple<T...>}: despecialized to a record whose fields are named {@code 0}, {@code 1}, …
 * (CanonicalABI.md {@code despecialize}), so it has exactly a record's layout. Its values are
 * {@link WitRecord}s too.
 */
public final class TupleType implements WitType {
  private final List<WitType> items;
  private final RecordType asRecord;

  public TupleType(List<WitType> items) {
    this.items = List.copyOf(items);
    List<RecordType.Field> fields = new ArrayList<>();
    for (int i = 0; i < this.items.size(); i++) {
      fields.add(new RecordType.Field(Integer.toString(i), this.items.get(i)));
    }
    this.asRecord = new RecordType(wit(this.items), fields);
  }

  public List<WitType> items() {
    return items;
  }

  /** The record this tuple despecializes to. */
  public RecordType asRecord() {
    return asRecord;
  }

  @Override
  public int size() {
    return asRecord.size();
  }

  @Override
  public int alignment() {
    return asRecord.alignment();
  }

  @Override
  public List<FlatType> flat() {
    return asRecord.flat();
  }

  @Override
  public String wit() {
    return asRecord.wit();
  }

  private static String wit(List<WitType> items) {
    return items.stream().map(WitType::wit).collect(Collectors.joining(", ", "tuple<", ">"));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TupleType t && items.equals(t.items);
  }

  @Override
  public int hashCode() {
    return items.hashCode();
  }

  @Override
  public String toString() {
    return wit();
  }
}
