package io.capsule.config.manifest;

import com.fasterxml.jackson.databind.JsonNode;
import io.capsule.config.diag.Code;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Validates a whole manifest tree and builds the {@link Manifest}. It reports <b>every</b> problem
 * it can find (it never stops at the first) and throws them together as {@link ManifestInvalid},
 * sorted by line. The only I/O is through {@link CapsulePaths} (path escapes, the inlined prompt).
 *
 * <p>Codes: {@code E-MAN-001} the document is not a mapping; {@code E-MAN-002} unknown, missing or
 * duplicate keys, wrong types and bad values; {@code E-MAN-003} a path escaping the capsule; {@code
 * E-CAP-016} a credential-shaped {@code env.allow} name; warning {@code W-SEC-024} for each
 * knowingly granted credential.
 */
public final class ManifestValidator {

  /** Capsule and artifact names: what a folder and a {@code capsule:<name>} backend can carry. */
  static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

  /** Semantic Versioning 2.0.0: MAJOR.MINOR.PATCH, optional -prerelease and +build. */
  static final Pattern SEMVER =
      Pattern.compile(
          "(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)"
              + "(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)"
              + "(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
              + "(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?");

  private static final Pattern SHA256 = Pattern.compile("[0-9a-fA-F]{64}");
  static final BigInteger U32_MAX = BigInteger.ONE.shiftLeft(32).subtract(BigInteger.ONE);
  static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
  private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

  private static final Set<String> ROOT_KEYS =
      Set.of(
          "name", "version", "description", "artifacts", "inference", "capabilities", "lifecycle");
  private static final Set<String> ARTIFACT_KEYS =
      Set.of("name", "version", "runtime", "path", "builtin", "sha256");
  private static final Set<String> INFERENCE_KEYS =
      Set.of(
          "transport",
          "driver",
          "model",
          "command",
          "max_turns",
          "max_session_tokens",
          "system_prompt",
          "system_prompt_file");
  private static final Set<String> DRIVER_KEYS = Set.of("artifact", "config");
  private static final Set<String> LIFECYCLE_KEYS = Set.of("conversation");

  private final LocatedTree tree;
  private final Problems problems;
  private final CapsulePaths paths;

  private ManifestValidator(LocatedTree tree, Path capsuleDir, String file) {
    this.tree = tree;
    this.problems = new Problems(tree, file);
    this.paths = new CapsulePaths(capsuleDir);
  }

  /**
   * Validates {@code tree} as the manifest of the capsule in {@code capsuleDir}.
   *
   * @param file what diagnostics name as {@code file} (the manifest's path, or a label)
   * @param manifestFile the file the tree was read from, when there is one
   * @return the manifest, with its warnings
   * @throws ManifestInvalid with every error found
   */
  public static Manifest validate(
      LocatedTree tree, Path capsuleDir, String file, Optional<Path> manifestFile) {
    return new ManifestValidator(tree, capsuleDir, file).run(manifestFile);
  }

  private Manifest run(Optional<Path> manifestFile) {
    JsonNode root = tree.root();
    if (!root.isObject()) {
      problems.atValue(
          Code.E_MAN_001,
          "",
          "the manifest must be a YAML mapping of keys (name:, version:, …), got "
              + Section.describe(root));
      throw invalid();
    }
    for (LocatedTree.Refusal r : tree.refusals()) {
      problems.at(Code.E_MAN_002, r.path(), r.message(), Optional.ofNullable(r.location()));
    }
    Section top = Section.of(root, "", problems, ROOT_KEYS);
    String name =
        checked(top, "name", NAME, "[a-z0-9-], starting with a letter or digit, at most 64 long");
    String version = checked(top, "version", SEMVER, "a semantic version like 1.2.3");
    Optional<String> description = top.text("description", false);
    List<Artifact> artifacts = artifacts(top);
    Inference inference = inference(top, artifacts);
    Capabilities capabilities = new CapabilitiesValidator(problems).capabilities(top);
    Lifecycle lifecycle = lifecycle(top);
    if (problems.hasErrors()) {
      throw invalid();
    }
    return new Manifest(
        name,
        version,
        description,
        artifacts,
        inference,
        capabilities,
        lifecycle,
        paths.dir(),
        manifestFile,
        problems.warnings());
  }

  private ManifestInvalid invalid() {
    return new ManifestInvalid(problems.errors(), problems.warnings());
  }

  /** A required string matching {@code pattern}; "" when missing or bad (reported). */
  private String checked(Section s, String key, Pattern pattern, String expected) {
    Optional<String> value = s.text(key, true);
    if (value.isPresent() && !pattern.matcher(value.get()).matches()) {
      problems.atValue(
          Code.E_MAN_002,
          s.pathOf(key),
          key + " '" + value.get() + "' is not valid: expected " + expected);
    }
    return value.orElse("");
  }

  private List<Artifact> artifacts(Section top) {
    List<Artifact> artifacts = new ArrayList<>();
    Map<String, String> seen = new HashMap<>();
    for (Section.Element e : top.list("artifacts")) {
      Optional<Section> entry = mappingElement(e, ARTIFACT_KEYS);
      if (entry.isEmpty()) {
        continue;
      }
      Section a = entry.get();
      String name =
          checked(a, "name", NAME, "[a-z0-9-], starting with a letter or digit, at most 64 long");
      if (!name.isEmpty() && seen.putIfAbsent(name, a.path()) != null) {
        problems.atValue(
            Code.E_MAN_002,
            a.pathOf("name"),
            "artifact name '" + name + "' is already used by " + seen.get(name));
      }
      String version = checked(a, "version", SEMVER, "a semantic version like 1.2.3");
      Optional<ArtifactRuntime> runtime =
          a.choice("runtime", true, ArtifactRuntime.values(), ArtifactRuntime::yaml);
      Optional<ArtifactSource> source = artifactSource(a);
      Optional<String> sha256 = a.text("sha256", false);
      if (sha256.isPresent() && !SHA256.matcher(sha256.get()).matches()) {
        problems.atValue(
            Code.E_MAN_002, a.pathOf("sha256"), "sha256 must be 64 hexadecimal characters");
      }
      if (runtime.isPresent() && source.isPresent()) {
        artifacts.add(
            new Artifact(
                name,
                version,
                runtime.get(),
                source.get(),
                sha256.map(h -> h.toLowerCase(Locale.ROOT))));
      }
    }
    return artifacts;
  }

  private Optional<ArtifactSource> artifactSource(Section a) {
    Optional<String> path = a.text("path", false);
    Optional<String> builtin = a.text("builtin", false);
    if (path.isPresent() && builtin.isPresent()) {
      problems.atKey(
          Code.E_MAN_002, a.pathOf("builtin"), "an artifact has either path or builtin, not both");
      return Optional.empty();
    }
    if (path.isEmpty() && builtin.isEmpty()) {
      if (a.raw("path", false).isEmpty() && a.raw("builtin", false).isEmpty()) {
        problems.atValue(
            Code.E_MAN_002, a.path(), "an artifact needs exactly one of path or builtin");
      }
      return Optional.empty();
    }
    if (builtin.isPresent()) {
      if (!NAME.matcher(builtin.get()).matches()) {
        problems.atValue(
            Code.E_MAN_002,
            a.pathOf("builtin"),
            "builtin '" + builtin.get() + "' is not a built-in name ([a-z0-9-])");
        return Optional.empty();
      }
      return Optional.of(new ArtifactSource.Builtin(builtin.get()));
    }
    return insidePath(a, "path").map(ArtifactSource.File::new);
  }

  /** A relative path that must stay inside the capsule ({@code E-MAN-003} when it escapes). */
  private Optional<String> insidePath(Section s, String key) {
    Optional<String> path = s.text(key, false);
    if (path.isEmpty()) {
      return path;
    }
    if (path.get().isBlank()) {
      problems.atValue(Code.E_MAN_002, s.pathOf(key), key + " must not be blank");
      return Optional.empty();
    }
    Optional<String> escape = paths.escape(path.get());
    if (escape.isPresent()) {
      problems.atValue(Code.E_MAN_003, s.pathOf(key), escape.get());
      return Optional.empty();
    }
    return path;
  }

  private Optional<Section> mappingElement(Section.Element e, Set<String> allowed) {
    if (!e.node().isObject()) {
      problems.atValue(
          Code.E_MAN_002,
          e.path(),
          e.path() + " must be a mapping (key: value), got " + Section.describe(e.node()));
      return Optional.empty();
    }
    return Optional.of(Section.of(e.node(), e.path(), problems, allowed));
  }

  private Inference inference(Section top, List<Artifact> artifacts) {
    Optional<Section> found = top.section("inference", true, INFERENCE_KEYS);
    if (found.isEmpty()) {
      return placeholderInference();
    }
    Section inf = found.get();
    Optional<String> transport = inf.text("transport", false);
    if (transport.isPresent() && !transport.get().equals(Transport.PROCESS.yaml())) {
      problems.atValue(
          Code.E_MAN_002,
          inf.pathOf("transport"),
          "transport '" + transport.get() + "' is not supported; the only transport is process");
    }
    DriverRef driver = driver(inf, artifacts);
    Optional<String> model = inf.text("model", false).map(String::strip).filter(m -> !m.isEmpty());
    Optional<String> command = command(inf);
    OptionalLong maxTurns = toLong(inf.unsigned("max_turns", U32_MAX, "u32"));
    OptionalLong maxTokens = toLong(inf.unsigned("max_session_tokens", U64_MAX, "u64"));
    Optional<String> prompt = inf.text("system_prompt", false);
    Optional<String> promptFile = Optional.empty();
    if (inf.raw("system_prompt_file", false).isPresent()) {
      if (inf.raw("system_prompt", false).isPresent()) {
        problems.atKey(
            Code.E_MAN_002,
            inf.pathOf("system_prompt_file"),
            "give either system_prompt or system_prompt_file, not both");
      } else {
        promptFile = insidePath(inf, "system_prompt_file");
        prompt = promptFile.flatMap(f -> readPrompt(inf, f));
      }
    }
    return new Inference(
        Transport.PROCESS, driver, model, command, maxTurns, maxTokens, prompt, promptFile);
  }

  private Optional<String> readPrompt(Section inf, String file) {
    CapsulePaths.Read read = paths.readUtf8(file);
    if (read instanceof CapsulePaths.Text text) {
      return Optional.of(text.text());
    }
    problems.atValue(
        Code.E_MAN_002,
        inf.pathOf("system_prompt_file"),
        ((CapsulePaths.Unreadable) read).reason());
    return Optional.empty();
  }

  private DriverRef driver(Section inf, List<Artifact> artifacts) {
    Optional<Section> found = inf.section("driver", true, DRIVER_KEYS);
    if (found.isEmpty()) {
      return new DriverRef("", Optional.empty());
    }
    Section d = found.get();
    Optional<String> artifact = d.text("artifact", true);
    artifact.ifPresent(name -> checkDriverArtifact(d, name, artifacts));
    return new DriverRef(artifact.orElse(""), d.raw("config", false));
  }

  private void checkDriverArtifact(Section d, String name, List<Artifact> artifacts) {
    Optional<Artifact> named = artifacts.stream().filter(a -> a.name().equals(name)).findFirst();
    if (named.isEmpty()) {
      // An entry that failed validation itself is already reported; do not pile on.
      List<String> declared = tree.root().path("artifacts").findValuesAsText("name");
      if (!declared.contains(name)) {
        problems.atValue(
            Code.E_MAN_002,
            d.pathOf("artifact"),
            "driver artifact '"
                + name
                + "' names no artifacts[] entry (declared: "
                + declared
                + ")");
      }
    } else if (!named.get().isDriver()) {
      problems.atValue(
          Code.E_MAN_002,
          d.pathOf("artifact"),
          "artifact '"
              + name
              + "' has runtime "
              + named.get().runtime().yaml()
              + "; the driver must be an artifact with runtime: driver");
    }
  }

  /**
   * {@code inference.command}: an absolute path, a bare name (looked up on the granted PATH), or a
   * relative path with {@code /}, which is inside the capsule and must not escape it.
   */
  private Optional<String> command(Section inf) {
    Optional<String> command = inf.text("command", false);
    if (command.isEmpty()) {
      return command;
    }
    String c = command.get();
    if (c.isBlank() || c.indexOf('\0') >= 0) {
      problems.atValue(
          Code.E_MAN_002, inf.pathOf("command"), "command must be a non-blank path or name");
      return Optional.empty();
    }
    if (c.contains("/") && !c.startsWith("/")) {
      return insidePath(inf, "command");
    }
    return command;
  }

  private Lifecycle lifecycle(Section top) {
    return top.section("lifecycle", false, LIFECYCLE_KEYS)
        .flatMap(l -> l.choice("conversation", false, Conversation.values(), Conversation::yaml))
        .map(Lifecycle::new)
        .orElse(Lifecycle.DEFAULT);
  }

  /** Above {@link Long#MAX_VALUE} a ceiling is unreachable: keep it as the largest long. */
  private static OptionalLong toLong(Optional<BigInteger> value) {
    return value
        .map(v -> OptionalLong.of(v.min(LONG_MAX).longValueExact()))
        .orElse(OptionalLong.empty());
  }

  private static Inference placeholderInference() {
    return new Inference(
        Transport.PROCESS,
        new DriverRef("", Optional.empty()),
        Optional.empty(),
        Optional.empty(),
        OptionalLong.empty(),
        OptionalLong.empty(),
        Optional.empty(),
        Optional.empty());
  }
}
