package io.capsule.driver.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.capsule.config.diag.Code;
import io.capsule.config.manifest.ArtifactRuntime;
import io.capsule.config.manifest.ArtifactSource;
import io.capsule.config.manifest.Manifest;
import io.capsule.driver.api.Event;
import io.capsule.driver.api.ProcessDriver;
import io.capsule.driver.component.DriverBinary;
import io.capsule.driver.engine.Fixtures;
import io.capsule.driver.engine.Sha256;
import io.capsule.driver.wasm.DriverException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DriverLoaderTest {

  private final DriverLoader loader =
      DriverLoader.create("wasmtime", new DriverLoader.Settings(4L << 20, Duration.ofMillis(500)));

  @TempDir Path capsule;

  @AfterAll
  void close() {
    loader.close();
  }

  @Test
  void loadsAComponentReadsItsDescriptionOnceAndSharesTheModule() {
    LoadedDriver d = loader.loadBytes("test", Fixtures.bytes("minimal.component"));
    assertEquals(DriverBinary.Form.COMPONENT, d.binary().form());
    assertEquals(Descriptions.minimal(), d.description());
    assertEquals("wasmtime", d.engineName());
    assertSame(d, loader.loadBytes("again", Fixtures.bytes("minimal.component")));
  }

  @Test
  void everyRunGetsItsOwnInstance() {
    LoadedDriver d = loader.loadBytes("test", Fixtures.bytes("minimal"));
    try (ProcessDriver a = d.newInstance();
        ProcessDriver b = d.newInstance()) {
      assertNotSame(a, b);
      assertEquals(List.of(new Event.Text("a")), a.parse(List.of("a")));
      assertEquals(List.of(new Event.TurnEnd("done")), b.parse(List.of("end")));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"jsonl", "claude-code", "codex", "gemini"})
  void loadsEveryBuiltInByName(String name) {
    LoadedDriver d = loader.load("builtin:" + name);
    assertEquals("builtin:" + name, d.origin());
    assertTrue(!d.description().binary().isEmpty());
  }

  @Test
  void anUnknownOrMalformedBuiltInIsMissing() {
    for (String ref : List.of("builtin:nope", "builtin:../jsonl", "builtin:")) {
      DriverException e = assertThrows(DriverException.class, () -> loader.load(ref));
      assertEquals(Code.E_RUN_006, e.code(), ref);
    }
  }

  @Test
  void aMissingFileOrAWrongSha256IsEruN006() throws IOException {
    Path file = capsule.resolve("driver.wasm");
    assertEquals(
        Code.E_RUN_006,
        assertThrows(DriverException.class, () -> loader.loadFile(file, Optional.empty())).code());
    Files.write(file, Fixtures.bytes("minimal"));
    DriverException e =
        assertThrows(
            DriverException.class, () -> loader.loadFile(file, Optional.of("00".repeat(32))));
    assertEquals(Code.E_RUN_006, e.code());
    assertTrue(e.getMessage().contains("sha256"), e.getMessage());
  }

  @Test
  void loadsTheArtifactAManifestNamesWithItsSha256() throws IOException {
    byte[] bytes = Fixtures.bytes("minimal.component");
    Files.createDirectories(capsule.resolve("drivers"));
    Files.write(capsule.resolve("drivers/fake.wasm"), bytes);
    Manifest m =
        Manifest.builder("demo", "1.0.0")
            .capsuleDir(capsule)
            .artifact(
                "fake",
                "1.0.0",
                ArtifactRuntime.DRIVER,
                new ArtifactSource.File("drivers/fake.wasm"),
                Optional.of(Sha256.hex(bytes)))
            .driverArtifact("fake")
            .build();
    LoadedDriver d = loader.load(m);
    assertEquals("fake", d.description().harness());
  }

  @Test
  void aTrapOrOverrunWhileLoadingIsEruN032NotARunFailure() {
    for (String fixture : List.of("describe-trap", "describe-loop")) {
      DriverException e =
          assertThrows(
              DriverException.class, () -> loader.loadBytes(fixture, Fixtures.bytes(fixture)));
      assertEquals(Code.E_RUN_032, e.code(), e.getMessage());
      assertEquals(fixture, e.diagnostic().details().get("driver"));
      assertEquals("describe", e.diagnostic().details().get("function"));
    }
  }
}
