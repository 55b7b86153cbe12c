package io.capsule.protocol.frame;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * runner → hub, the first frame of every connection.
 *
 * @param protocolVersion always 1 for this runtime
 * @param resume the highest hub seq the runner applied per open task; always present, {@code {}}
 *     when it has none
 */
public record Hello(
    int protocolVersion,
    String projectId,
    String runnerVersion,
    List<String> capabilities,
    Map<String, Long> resume,
    Extras extra)
    implements Frame {
  public static final String TYPE = "hello";

  public Hello {
    Objects.requireNonNull(projectId, "projectId");
    Objects.requireNonNull(runnerVersion, "runnerVersion");
    capabilities = List.copyOf(capabilities);
    resume = Ordered.copy(resume);
    extra = extra == null ? Extras.NONE : extra;
  }

  public Hello(
      String projectId, String runnerVersion, List<String> capabilities, Map<String, Long> resume) {
    this(1, projectId, runnerVersion, capabilities, resume, Extras.NONE);
  }

  public boolean hasCapability(String capability) {
    return capabilities.contains(capability);
  }

  @Override
  public String type() {
    return TYPE;
  }
}
