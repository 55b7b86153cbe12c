package io.capsule.protocol.frame;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.config.diag.Code;
import io.capsule.protocol.ProtocolException.FrameRejected;

/**
 * Token usage split into its five components (stapel-taskspecs v1): a closed object, every
 * component required and non-negative. Thinking is its own column so reasoning costs are never
 * understated.
 */
public record UsageSplit(
    long cacheRead, long cacheWrite, long freshInput, long output, long thinking) {

  public static final UsageSplit ZERO = new UsageSplit(0, 0, 0, 0, 0);

  public UsageSplit {
    if (cacheRead < 0 || cacheWrite < 0 || freshInput < 0 || output < 0 || thinking < 0) {
      throw new IllegalArgumentException("usage components must be non-negative");
    }
  }

  public long total() {
    return cacheRead + cacheWrite + freshInput + output + thinking;
  }

  public UsageSplit plus(UsageSplit o) {
    return new UsageSplit(
        cacheRead + o.cacheRead,
        cacheWrite + o.cacheWrite,
        freshInput + o.freshInput,
        output + o.output,
        thinking + o.thinking);
  }

  public ObjectNode toJson() {
    ObjectNode n = JsonNodeFactory.instance.objectNode();
    n.put("cache_read", cacheRead);
    n.put("cache_write", cacheWrite);
    n.put("fresh_input", freshInput);
    n.put("output", output);
    n.put("thinking", thinking);
    return n;
  }

  /** Reads a UsageSplit object; refuses ({@code E-PRO-004}) a missing or negative component. */
  public static UsageSplit fromJson(JsonNode n) {
    if (n == null || !n.isObject()) {
      throw new FrameRejected(Code.E_PRO_004, "usage: must be an object");
    }
    try {
      return new UsageSplit(
          component(n, "cache_read"),
          component(n, "cache_write"),
          component(n, "fresh_input"),
          component(n, "output"),
          component(n, "thinking"));
    } catch (IllegalArgumentException e) {
      throw new FrameRejected(Code.E_PRO_004, "usage: " + e.getMessage(), e);
    }
  }

  private static long component(JsonNode n, String key) {
    JsonNode v = n.get(key);
    if (v == null || !v.canConvertToExactIntegral()) {
      throw new FrameRejected(Code.E_PRO_004, "usage." + key + ": must be an integer");
    }
    return v.longValue();
  }
}
