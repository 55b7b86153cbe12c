package io.capsule.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DoctorCommandTest {
  @TempDir Path tmp;

  @Test
  void theHelloCapsuleIsReady() {
    Cli.Result r = Cli.run("doctor", Cli.HELLO.toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("manifest  ok: hello"), r.out());
    assertTrue(r.out().contains("driver    ok: builtin:jsonl"), r.out());
    assertTrue(r.out().contains("env       HOME, PATH"), r.out());
    assertTrue(r.out().contains("version   hello-harness 1 (tested)"), r.out());
    assertTrue(r.out().contains("login     not checked: "), r.out());
    assertTrue(r.out().contains("ready: a run could start"), r.out());
  }

  @Test
  void aHarnessNeedTheManifestDoesNotAllowIsNamedWithItsCode() throws IOException {
    Files.writeString(
        tmp.resolve("murmur.yaml"),
        "name: t\nversion: 0.1.0\nartifacts:\n  - name: cc\n    version: 0.6.0\n"
            + "    runtime: driver\n    builtin: claude-code\ninference:\n  transport: process\n"
            + "  driver:\n    artifact: cc\n  command: /bin/true\ncapabilities:\n  env:\n"
            + "    allow: [HOME, PATH]\n");
    Cli.Result r = Cli.run("doctor", tmp.toString());
    assertEquals(ExitCodes.REFUSED_GRANTS, r.exit(), r.out());
    assertTrue(r.out().contains("E-CAP-021"), r.out());
    assertTrue(r.out().contains("~/.claude"), r.out());
    assertTrue(r.out().contains("api.anthropic.com:443"), r.out());
    assertTrue(r.out().contains("not ready"), r.out());
  }
}
