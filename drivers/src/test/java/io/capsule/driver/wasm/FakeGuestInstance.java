package io.capsule.driver.wasm;

import io.capsule.driver.abi.ByteArrayGuestMemory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A tiny Java "guest" standing in for a driver instance: its exports are handlers over a {@link
 * ByteArrayGuestMemory} that read their flat arguments and answer with flat results (usually a
 * pointer to an ABI image they wrote). Every call is recorded, so a test can check what the host
 * called, with what, and in which order.
 */
final class FakeGuestInstance implements WasmInstance {

  /** One recorded call: the export and its flat arguments. */
  record Call(String export, long[] args) {
    @Override
    public String toString() {
      return export + Arrays.toString(args);
    }
  }

  private final ByteArrayGuestMemory memory;
  private final Map<String, Function<long[], long[]>> exports = new HashMap<>();
  private final List<Call> calls = new ArrayList<>();
  private boolean closed;

  FakeGuestInstance(ByteArrayGuestMemory memory) {
    this.memory = memory;
  }

  FakeGuestInstance export(String name, Function<long[], long[]> handler) {
    exports.put(name, handler);
    return this;
  }

  List<Call> calls() {
    return calls;
  }

  List<String> calledExports() {
    return calls.stream().map(Call::export).toList();
  }

  boolean closed() {
    return closed;
  }

  @Override
  public boolean hasExport(String name) {
    return exports.containsKey(name);
  }

  @Override
  public long[] call(String export, long... args) {
    if (closed) {
      throw new IllegalStateException("instance closed");
    }
    calls.add(new Call(export, args.clone()));
    Function<long[], long[]> handler = exports.get(export);
    if (handler == null) {
      throw new IllegalStateException("no export " + export);
    }
    return handler.apply(args);
  }

  @Override
  public GuestMemory memory() {
    return memory;
  }

  @Override
  public void close() {
    closed = true;
  }
}
