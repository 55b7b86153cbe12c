package io.capsule.driver.load;

import io.capsule.driver.api.Description;
import io.capsule.driver.api.HarnessNeeds;
import io.capsule.driver.api.InterruptMethod;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.PathAccess;
import io.capsule.driver.api.PathNeed;
import java.util.List;

/** Descriptions for the checks' tables: the minimal fixture's, and variations of it. */
public final class Descriptions {
  private Descriptions() {}

  /** What the minimal fixture driver describes. */
  public static Description minimal() {
    return new Description(
        "fake",
        "fake-harness",
        List.of("--version"),
        List.of("1.0.0"),
        InterruptMethod.SIGNAL_INT,
        List.of("FAKE_HOME"),
        false,
        true,
        new LoginCheck.Command(List.of("auth", "status")),
        new HarnessNeeds(
            List.of(new PathNeed("~/.fake", PathAccess.READ_WRITE)),
            List.of("api.fake.example:443")));
  }

  static Description with(
      String binary,
      List<String> requiredEnv,
      boolean reportsUsage,
      LoginCheck login,
      HarnessNeeds needs) {
    Description m = minimal();
    return new Description(
        m.harness(),
        binary,
        m.versionArgs(),
        m.testedVersions(),
        m.interrupt(),
        requiredEnv,
        m.streamsText(),
        reportsUsage,
        login,
        needs);
  }
}
