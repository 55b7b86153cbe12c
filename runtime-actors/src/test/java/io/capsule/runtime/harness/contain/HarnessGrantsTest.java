package io.capsule.runtime.harness.contain;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.capsule.config.manifest.Manifest;
import io.capsule.config.manifest.ManifestLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HarnessGrantsTest {

  private static final String MANIFEST =
      String.join(
          "\n",
          "name: scripted",
          "version: 0.1.0",
          "artifacts:",
          "  - name: jsonl",
          "    version: 0.6.0",
          "    runtime: driver",
          "    builtin: jsonl",
          "inference:",
          "  transport: process",
          "  driver: { artifact: jsonl }",
          "  command: ./harness/x.sh",
          "capabilities:",
          "  env: { allow: [HOME, PATH] }",
          "lifecycle:",
          "  conversation: stateless",
          "");

  @TempDir Path tmp;

  @Test
  void aManifestReadFromAFolderGrantsThatFolder() throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("capsule"));
    Files.writeString(dir.resolve(Manifest.FILE_NAME), MANIFEST);
    Manifest m = ManifestLoader.load(dir);

    assertEquals(Optional.of(dir.toAbsolutePath()), HarnessGrants.of(m, tmp).capsuleDir());
    // Kept when the run adds its tool bridge.
    assertEquals(
        Optional.of(dir.toAbsolutePath()),
        HarnessGrants.of(m, tmp).withLoopback(4711).capsuleDir());
  }

  /** An in-memory manifest has no folder of its own (its capsuleDir is only a base for paths). */
  @Test
  void aManifestBuiltInMemoryGrantsNoFolder() {
    Manifest m = ManifestLoader.parse(MANIFEST, tmp, "in-memory");

    assertEquals(Optional.empty(), HarnessGrants.of(m, tmp).capsuleDir());
  }
}
