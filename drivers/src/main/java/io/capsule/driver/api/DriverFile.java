package io.capsule.driver.api;

import java.util.Objects;

/** WIT {@code driver-file}: a file the runtime writes into the files directory before spawning. */
public record DriverFile(String name, String contents) {
  public DriverFile {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(contents, "contents");
  }

  /** Contents may hold a bridge token: only the name and size are shown. */
  @Override
  public String toString() {
    return "DriverFile[name=" + name + ", chars=" + contents.length() + "]";
  }
}
