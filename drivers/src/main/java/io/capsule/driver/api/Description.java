package io.capsule.driver.api;

import java.util.List;
import java.util.Objects;

/** WIT {@code description}: what the driver drives, read once when the driver is loaded. */
public record Description(
    String harness,
    String binary,
    List<String> versionArgs,
    List<String> testedVersions,
    InterruptMethod interrupt,
    List<String> requiredEnv,
    boolean streamsText,
    boolean reportsUsage,
    LoginCheck loginCheck,
    HarnessNeeds harnessNeeds) {

  public Description {
    Objects.requireNonNull(harness, "harness");
    Objects.requireNonNull(binary, "binary");
    versionArgs = List.copyOf(versionArgs);
    testedVersions = List.copyOf(testedVersions);
    Objects.requireNonNull(interrupt, "interrupt");
    requiredEnv = List.copyOf(requiredEnv);
    Objects.requireNonNull(loginCheck, "loginCheck");
    Objects.requireNonNull(harnessNeeds, "harnessNeeds");
  }
}
