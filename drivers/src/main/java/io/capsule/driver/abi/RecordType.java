package io.capsule.driver.abi;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A WIT {@code record}: fields laid out in order, each at the next offset aligned to its own
 * alignment, the whole padded to the largest field alignment (CanonicalABI.md {@code size_record}).
 * Its values are {@link WitRecord}s.
 */
public final class RecordType implements WitType {

  /** One named field. */
  public record Field(String name, WitType type) {
    public Field {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(type, "type");
    }
  }

  private final String wit;
  private final List<Field> fields;
  private final int[] offsets;
  private final int size;
  private final int alignment;
  private final List<FlatType> flat;

  public RecordType(String wit, List<Field> fields) {
    this.wit = Objects.requireNonNull(wit, "wit");
    this.fields = List.copyOf(fields);
    this.offsets = new int[this.fields.size()];
    int offset = 0;
    int align = 1;
    List<FlatType> flatTypes = new ArrayList<>();
    for (int i = 0; i < this.fields.size(); i++) {
      WitType t = this.fields.get(i).type();
      offset = WitType.alignTo(offset, t.alignment());
      offsets[i] = offset;
      offset += t.size();
      align = Math.max(align, t.alignment());
      flatTypes.addAll(t.flat());
    }
    this.alignment = align;
    this.size = WitType.alignTo(offset, align);
    this.flat = List.copyOf(flatTypes);
  }

  public List<Field> fields() {
    return fields;
  }

  /** The byte offset of field {@code index} from the record's start. */
  public int offset(int index) {
    return offsets[index];
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
  public boolean equals(Object o) {
    return o instanceof RecordType r && wit.equals(r.wit) && fields.equals(r.fields);
  }

  @Override
  public int hashCode() {
    return Objects.hash(wit, fields);
  }

  @Override
  public String toString() {
    return wit;
  }
}
