package io.capsule.driver.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.manifest.Access;
import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.ManifestBuilder;
import io.capsule.config.manifest.NetworkEntry;
import io.capsule.driver.api.Description;
import io.capsule.driver.api.HarnessNeeds;
import io.capsule.driver.api.LoginCheck;
import io.capsule.driver.api.PathAccess;
import io.capsule.driver.api.PathNeed;
import io.capsule.driver.wasm.DriverException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestChecksTest {

  @TempDir Path capsule;
  private Path bin;
  private Map<String, String> hostEnv;

  @BeforeEach
  void harnessOnThePath() throws IOException {
    bin = Files.createDirectories(capsule.resolve("bin"));
    executable(bin.resolve("fake-harness"));
    hostEnv = Map.of("PATH", "/nonexistent:" + bin, "FAKE_HOME", "/home/x");
  }

  private static void executable(Path file) throws IOException {
    Files.writeString(file, "#!/bin/sh\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  /** A manifest granting exactly what the minimal fixture needs, changed by {@code edit}. */
  private Manifest manifest(UnaryOperator<ManifestBuilder> edit) {
    ManifestBuilder b =
        Manifest.builder("demo", "1.0.0")
            .capsuleDir(capsule)
            .builtinDriver("jsonl", "1.0.0")
            .envAllow("PATH", "FAKE_HOME")
            .harnessPath("~/.fake", Access.READ_WRITE)
            .networkAllow("api.fake.example:443");
    return edit.apply(b).build();
  }

  private DriverGrant check(Description d, Manifest m) {
    return ManifestChecks.check(d, m, hostEnv, false);
  }

  private DriverException refused(Description d, Manifest m) {
    return assertThrows(DriverException.class, () -> check(d, m));
  }

  @Test
  void grantsTheDriversOwnNeedsAndFindsTheBinaryOnTheGrantedPath() {
    DriverGrant g = check(Descriptions.minimal(), manifest(b -> b));
    assertEquals(bin.resolve("fake-harness"), g.harnessBinary());
    assertEquals(List.of("FAKE_HOME"), g.requiredEnv());
    assertEquals(List.of(new PathNeed("~/.fake", PathAccess.READ_WRITE)), g.paths());
    assertEquals(List.of(NetworkEntry.parse("api.fake.example:443")), g.hosts());
  }

  @Test
  void theGrantIsTheNeedNeverTheWiderManifestEntry() {
    Manifest wide =
        manifest(b -> b.harnessPath("~/.cache", Access.READ_WRITE).networkAllow("*.fake.example"));
    Description d =
        Descriptions.with(
            "fake-harness",
            List.of(),
            true,
            new LoginCheck.Command(List.of("x")),
            new HarnessNeeds(
                List.of(new PathNeed("~/.cache/fake", PathAccess.READ)),
                List.of("api.fake.example:443")));
    DriverGrant g = check(d, wide);
    assertEquals(List.of(new PathNeed("~/.cache/fake", PathAccess.READ)), g.paths());
  }

  @Test
  void listsEveryMissingEnvNameOnceInTheDriversOrder() {
    Description d =
        Descriptions.with(
            "fake-harness",
            List.of("ZED", "FAKE_HOME", "ALPHA", "ZED"),
            true,
            new LoginCheck.Command(List.of("x")),
            HarnessNeeds.NONE);
    DriverException e = refused(d, manifest(b -> b));
    assertEquals(Code.E_CAP_019, e.code());
    assertTrue(e.getMessage().contains("requires ZED, ALPHA,"), e.getMessage());
  }

  @Test
  void aCeilingAgainstADriverThatReportsNoUsageIsRefused() {
    Description silent =
        Descriptions.with(
            "fake-harness",
            List.of(),
            false,
            new LoginCheck.Command(List.of("x")),
            HarnessNeeds.NONE);
    assertEquals(Code.E_RUN_038, refused(silent, manifest(b -> b.maxSessionTokens(1000))).code());
    DriverException machine =
        assertThrows(
            DriverException.class,
            () -> ManifestChecks.check(silent, manifest(b -> b), hostEnv, true));
    assertEquals(Code.E_RUN_038, machine.code());
    check(silent, manifest(b -> b)); // no ceiling: fine
  }

  @Test
  void aBareNameNeedsAGrantedPath() {
    Manifest noPath =
        Manifest.builder("demo", "1.0.0")
            .capsuleDir(capsule)
            .builtinDriver("jsonl", "1.0.0")
            .envAllow("FAKE_HOME")
            .harnessPath("~/.fake", Access.READ_WRITE)
            .networkAllow("api.fake.example:443")
            .build();
    DriverException e = refused(Descriptions.minimal(), noPath);
    assertEquals(Code.E_RUN_006, e.code());
    assertTrue(e.getMessage().contains("grants no PATH"), e.getMessage());
  }

  @Test
  void aBinaryMissingFromThePathIsRefused() {
    hostEnv = Map.of("PATH", "/nonexistent");
    assertEquals(Code.E_RUN_006, refused(Descriptions.minimal(), manifest(b -> b)).code());
  }

  @Test
  void theManifestCommandWinsAndMustBeAnExecutableFile() throws IOException {
    executable(capsule.resolve("run-me"));
    Files.writeString(capsule.resolve("plain"), "not executable");
    DriverGrant g = check(Descriptions.minimal(), manifest(b -> b.command("./run-me")));
    assertEquals(capsule.resolve("run-me").toAbsolutePath(), g.harnessBinary());
    DriverException e = refused(Descriptions.minimal(), manifest(b -> b.command("./plain")));
    assertEquals(Code.E_RUN_006, e.code());
    assertTrue(e.getMessage().contains("inference.command"), e.getMessage());
    assertEquals(
        Code.E_RUN_006, refused(Descriptions.minimal(), manifest(b -> b.command("./gone"))).code());
  }

  @Test
  void namesEveryNeedTheManifestDoesNotCover() {
    Manifest narrow =
        Manifest.builder("demo", "1.0.0")
            .capsuleDir(capsule)
            .builtinDriver("jsonl", "1.0.0")
            .envAllow("PATH", "FAKE_HOME")
            .harnessPath("~/.fake", Access.READ)
            .networkAllow("api.fake.example:80")
            .build();
    DriverException e = refused(Descriptions.minimal(), narrow);
    assertEquals(Code.E_CAP_021, e.code());
    assertTrue(e.getMessage().contains("path ~/.fake (read-write)"), e.getMessage());
    assertTrue(e.getMessage().contains("host api.fake.example:443"), e.getMessage());
  }

  @Test
  void checksRunInTheSpecsOrder() {
    // missing env, no ceiling issue, missing binary and uncovered needs: E-CAP-019 comes first
    hostEnv = Map.of();
    Manifest bare =
        Manifest.builder("demo", "1.0.0")
            .capsuleDir(capsule)
            .builtinDriver("jsonl", "1.0.0")
            .envAllow("PATH")
            .build();
    assertEquals(Code.E_CAP_019, refused(Descriptions.minimal(), bare).code());
  }
}
