package io.capsule.driver.abi;

import java.util.Arrays;
import java.util.List;

/** The value of a {@code record} or {@code tuple}: its fields' values in declaration order. */
public record WitRecord(List<Object> fields) {
  public WitRecord {
    fields = List.copyOf(fields);
  }

  public static WitRecord of(Object... fields) {
    return new WitRecord(Arrays.asList(fields));
  }

  public Object get(int index) {
    return fields.get(index);
  }
}
