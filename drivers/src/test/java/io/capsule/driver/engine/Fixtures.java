package io.capsule.driver.engine;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** The committed fixture drivers (drivers/fixtures, built into src/test/resources/fixtures). */
public final class Fixtures {
  private Fixtures() {}

  public static final String IFACE = "murmur:driver/process@0.6.0";

  public static byte[] bytes(String name) {
    String path = "/fixtures/" + name + ".wasm";
    try (InputStream in = Fixtures.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException(
            "no fixture " + path + "; run drivers/fixtures/build-fixtures.sh");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static String export(String function) {
    return IFACE + "#" + function;
  }
}
