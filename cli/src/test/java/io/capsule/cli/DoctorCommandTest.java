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

  /** The default (auto) on a machine with bubblewrap and socat: a real sandbox is started. */
  @Test
  void theContainmentAndTheGrantsAsTheSandboxAppliesThemAreShownAndChecked() {
    Cli.Result r = Cli.run("doctor", Cli.HELLO.toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("contain   auto: bubblewrap /usr/bin/bwrap"), r.out());
    assertTrue(r.out().contains("egress    no host (every connection is refused)"), r.out());
    assertTrue(r.out().contains("workdir   writable"), r.out());
    assertTrue(r.out().contains("sandbox   ok: started, and the egress proxy answered"), r.out());
  }

  /** Hosts, paths with their access and read-only, as the sandbox will apply them, then checked. */
  @Test
  void theEffectiveGrantsOfACapsuleAreListedAndTheSandboxStartsWithThem() throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("granted"));
    String manifest =
        Files.readString(Cli.HELLO.resolve("murmur.yaml"))
            .replace("name: hello", "name: granted")
            .replace("./harness/hello.sh", Cli.HELLO.resolve("harness/hello.sh").toString())
            .replace(
                "    allow: [HOME, PATH]\n",
                "    allow: [HOME, PATH]\n"
                    + "  network:\n    allow: [\"api.example.com:443\", \"*.example.org\"]\n"
                    + "  harness:\n    paths:\n"
                    + "      - { path: /srv/capsule-doctor-data, access: read }\n"
                    + "      - { path: /var/tmp/capsule-doctor-state, access: read-write }\n"
                    + "  filesystem:\n    read_only: true\n");
    assertTrue(manifest.contains("read_only: true"), manifest);
    Files.writeString(dir.resolve("murmur.yaml"), manifest);
    Cli.Result r = Cli.run("doctor", dir.toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("egress    api.example.com:443, *.example.org"), r.out());
    assertTrue(r.out().contains("bind      /srv/capsule-doctor-data (read)"), r.out());
    assertTrue(r.out().contains("bind      /var/tmp/capsule-doctor-state (read-write)"), r.out());
    assertTrue(
        r.out().contains("bind      " + dir.toAbsolutePath() + " (read, the capsule"), r.out());
    assertTrue(r.out().contains("workdir   read-only (filesystem.read_only)"), r.out());
    assertTrue(r.out().contains("sandbox   ok: started, and the egress proxy answered"), r.out());
  }

  @Test
  void requiredContainmentWithoutBubblewrapIsNotReady() {
    String r = withSettings("required", () -> Cli.run("doctor", Cli.HELLO.toString()));
    assertTrue(r.startsWith(ExitCodes.HARNESS_UNAVAILABLE + "\n"), r);
    assertTrue(r.contains("contain   required: refused"), r);
    assertTrue(r.contains("E-CAP-051"), r);
    assertTrue(r.contains("apt-get install bubblewrap socat"), r);
  }

  @Test
  void autoContainmentWithoutBubblewrapWarnsAndIsReady() {
    String r = withSettings("auto", () -> Cli.run("doctor", Cli.HELLO.toString()));
    assertTrue(r.startsWith("0\n"), r);
    assertTrue(r.contains("contain   auto: uncontained"), r);
    assertTrue(r.contains("W-CAP-050"), r);
  }

  /** Runs the doctor with containment {@code mode} and a bwrap that is not there. */
  private static String withSettings(String mode, java.util.function.Supplier<Cli.Result> run) {
    System.setProperty("capsule.harness.containment", mode);
    System.setProperty("capsule.harness.bwrap", "/nonexistent/bwrap");
    com.typesafe.config.ConfigFactory.invalidateCaches();
    try {
      Cli.Result r = run.get();
      return r.exit() + "\n" + r.out() + r.err();
    } finally {
      System.clearProperty("capsule.harness.containment");
      System.clearProperty("capsule.harness.bwrap");
      com.typesafe.config.ConfigFactory.invalidateCaches();
    }
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

  /**
   * A Codex capsule whose key is in its driver config: {@code codex login status} says "Not logged
   * in" (it sees only saved logins), yet a run authenticates with the key, so the doctor must not
   * say a run would be refused.
   */
  @Test
  void aCodexCapsuleWithAnApiKeyIsReadyThoughNoLoginIsSaved() throws IOException {
    Cli.Result withKey =
        Cli.run("doctor", codexCapsule("      env:\n        OPENAI_API_KEY: sk-x\n").toString());
    assertEquals(0, withKey.exit(), withKey.out());
    assertTrue(withKey.out().contains("login     no saved login, and none needed"), withKey.out());
    assertTrue(withKey.out().contains("OPENAI_API_KEY"), withKey.out());
    assertTrue(!withKey.out().contains("sk-x"), withKey.out());
    assertTrue(withKey.out().contains("ready: a run could start"), withKey.out());
  }

  @Test
  void aCodexCapsuleWithoutAnyCredentialIsLoggedOut() throws IOException {
    Cli.Result r = Cli.run("doctor", codexCapsule("      sandbox: read-only\n").toString());
    assertEquals(ExitCodes.HARNESS_UNAVAILABLE, r.exit(), r.out());
    assertTrue(r.out().contains("login     logged out: "), r.out());
    assertTrue(r.out().contains("codex login"), r.out());
  }

  private Path codexCapsule(String driverConfig) throws IOException {
    Path codex = tmp.resolve("codex");
    Files.writeString(
        codex,
        "#!/bin/sh\ncase \"$1\" in\n  --version) echo 'codex-cli 0.169.0' ;;\n"
            + "  login) echo 'Not logged in'; exit 1 ;;\nesac\n");
    codex.toFile().setExecutable(true);
    Path dir = Files.createDirectories(tmp.resolve("capsule"));
    Files.writeString(
        dir.resolve("murmur.yaml"),
        "name: t\nversion: 0.1.0\nartifacts:\n  - name: cx\n    version: 0.6.0\n"
            + "    runtime: driver\n    builtin: codex\ninference:\n  transport: process\n"
            + "  driver:\n    artifact: cx\n    config:\n"
            + driverConfig
            + "  command: "
            + codex
            + "\ncapabilities:\n  env:\n    allow: [HOME, PATH]\n  network:\n"
            + "    allow: [\"api.openai.com:443\", \"chatgpt.com:443\"]\n  harness:\n"
            + "    paths:\n      - path: ~/.codex\n        access: read-write\n");
    return dir;
  }
}
