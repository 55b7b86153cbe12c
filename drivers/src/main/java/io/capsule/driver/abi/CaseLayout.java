package io.capsule.driver.abi;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The canonical-ABI layout of a variant (CanonicalABI.md {@code discriminant_type}, {@code
 * size_variant}, {@code flatten_variant}): a discriminant of the smallest unsigned integer that
 * numbers the cases (u8 up to 256 cases, u16 up to 65536, else u32), then the payload at the
 * largest case alignment. Flattened, it is an i32 discriminant followed by the slot-wise {@link
 * FlatType#join} of every case's flat payload.
 */
public final class CaseLayout {
  private final List<Optional<WitType>> payloads;
  private final int discriminantSize;
  private final int payloadOffset;
  private final int size;
  private final int alignment;
  private final List<FlatType> flat;
  private final List<FlatType> flatPayload;

  public CaseLayout(List<Optional<WitType>> payloads) {
    this.payloads = List.copyOf(payloads);
    int n = this.payloads.size();
    if (n == 0) {
      throw new IllegalArgumentException("a variant needs at least one case");
    }
    discriminantSize = n <= 1 << 8 ? 1 : n <= 1 << 16 ? 2 : 4;
    int caseAlign = 1;
    int caseSize = 0;
    List<FlatType> joined = new ArrayList<>();
    for (Optional<WitType> payload : this.payloads) {
      if (payload.isEmpty()) {
        continue;
      }
      WitType t = payload.get();
      caseAlign = Math.max(caseAlign, t.alignment());
      caseSize = Math.max(caseSize, t.size());
      List<FlatType> f = t.flat();
      for (int i = 0; i < f.size(); i++) {
        if (i < joined.size()) {
          joined.set(i, joined.get(i).join(f.get(i)));
        } else {
          joined.add(f.get(i));
        }
      }
    }
    payloadOffset = WitType.alignTo(discriminantSize, caseAlign);
    alignment = Math.max(discriminantSize, caseAlign);
    size = WitType.alignTo(payloadOffset + caseSize, alignment);
    flatPayload = List.copyOf(joined);
    List<FlatType> all = new ArrayList<>();
    all.add(FlatType.I32);
    all.addAll(joined);
    flat = List.copyOf(all);
  }

  public int caseCount() {
    return payloads.size();
  }

  /** The payload type of case {@code index}; empty for a case without one. */
  public Optional<WitType> payload(int index) {
    return payloads.get(index);
  }

  /** 1, 2 or 4 bytes. */
  public int discriminantSize() {
    return discriminantSize;
  }

  /** Where the payload starts, from the variant's start. */
  public int payloadOffset() {
    return payloadOffset;
  }

  public int size() {
    return size;
  }

  public int alignment() {
    return alignment;
  }

  /** The discriminant's i32, then the joined payload slots. */
  public List<FlatType> flat() {
    return flat;
  }

  /** The joined payload slots alone. */
  public List<FlatType> flatPayload() {
    return flatPayload;
  }
}
