package io.capsule.config.manifest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Builds a manifest in memory, for embedding and tests, without a file. It writes the same tree a
 * {@code murmur.yaml} would give and runs the same {@link ManifestValidator}, so an in-memory
 * manifest obeys every rule a file does (its diagnostics carry no line or column).
 *
 * <pre>{@code
 * Manifest m = Manifest.builder("hello", "0.1.0")
 *     .builtinDriver("jsonl", "0.6.0")
 *     .command("/bin/cat")
 *     .envAllow("HOME", "PATH")
 *     .build();
 * }</pre>
 *
 * <p>Not thread-safe; use one builder per manifest.
 */
public final class ManifestBuilder {

  /** What diagnostics of an in-memory manifest name as {@code file}. */
  public static final String LABEL = "<in-memory manifest>";

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final ObjectNode root = NODES.objectNode();
  private Path capsuleDir = Path.of("").toAbsolutePath();

  ManifestBuilder(String name, String version) {
    root.put("name", name);
    root.put("version", version);
  }

  /** The directory relative paths resolve against (default: the working directory). */
  public ManifestBuilder capsuleDir(Path dir) {
    this.capsuleDir = dir;
    return this;
  }

  public ManifestBuilder description(String text) {
    root.put("description", text);
    return this;
  }

  /** Adds an {@code artifacts[]} entry. */
  public ManifestBuilder artifact(
      String name,
      String version,
      ArtifactRuntime runtime,
      ArtifactSource source,
      Optional<String> sha256) {
    ObjectNode a = root.withArray("artifacts").addObject();
    a.put("name", name).put("version", version).put("runtime", runtime.yaml());
    if (source instanceof ArtifactSource.File f) {
      a.put("path", f.relativePath());
    } else if (source instanceof ArtifactSource.Builtin b) {
      a.put("builtin", b.name());
    }
    sha256.ifPresent(h -> a.put("sha256", h));
    return this;
  }

  /** Adds a built-in driver artifact named like the built-in and makes it the driver. */
  public ManifestBuilder builtinDriver(String builtin, String version) {
    artifact(
        builtin,
        version,
        ArtifactRuntime.DRIVER,
        new ArtifactSource.Builtin(builtin),
        Optional.empty());
    return driverArtifact(builtin);
  }

  /** Sets {@code inference.driver.artifact}. */
  public ManifestBuilder driverArtifact(String artifactName) {
    driver().put("artifact", artifactName);
    return this;
  }

  /** Sets {@code inference.driver.config} (copied). */
  public ManifestBuilder driverConfig(JsonNode config) {
    driver().set("config", config.deepCopy());
    return this;
  }

  public ManifestBuilder model(String model) {
    inference().put("model", model);
    return this;
  }

  public ManifestBuilder command(String command) {
    inference().put("command", command);
    return this;
  }

  public ManifestBuilder maxTurns(long turns) {
    inference().put("max_turns", turns);
    return this;
  }

  public ManifestBuilder maxSessionTokens(long tokens) {
    inference().put("max_session_tokens", tokens);
    return this;
  }

  public ManifestBuilder systemPrompt(String text) {
    inference().put("system_prompt", text);
    return this;
  }

  /** A prompt file relative to the capsule directory; it is read and inlined by {@link #build}. */
  public ManifestBuilder systemPromptFile(String relativePath) {
    inference().put("system_prompt_file", relativePath);
    return this;
  }

  public ManifestBuilder envAllow(String... names) {
    add(capability("env").withArray("allow"), names);
    return this;
  }

  public ManifestBuilder envAllowCredentials(String... names) {
    add(capability("env").withArray("allow_credentials"), names);
    return this;
  }

  public ManifestBuilder networkAllow(String... entries) {
    add(capability("network").withArray("allow"), entries);
    return this;
  }

  public ManifestBuilder harnessPath(String path, Access access) {
    capability("harness")
        .withArray("paths")
        .addObject()
        .put("path", path)
        .put("access", access.yaml());
    return this;
  }

  public ManifestBuilder shellAllow(String... binaries) {
    add(capability("shell").withArray("allow"), binaries);
    return this;
  }

  public ManifestBuilder readOnly(boolean readOnly) {
    capability("filesystem").put("read_only", readOnly);
    return this;
  }

  /** {@code capabilities.resources.memory}, a size like {@code 512MiB}. */
  public ManifestBuilder memoryLimit(String size) {
    capability("resources").put("memory", size);
    return this;
  }

  /** {@code capabilities.resources.processes}. */
  public ManifestBuilder processLimit(int processes) {
    capability("resources").put("processes", processes);
    return this;
  }

  /** {@code capabilities.resources.cpu}, in cores. */
  public ManifestBuilder cpuLimit(double cores) {
    capability("resources").put("cpu", cores);
    return this;
  }

  /** {@code capabilities.resources.file_size}, a size like {@code 1GiB}. */
  public ManifestBuilder fileSizeLimit(String size) {
    capability("resources").put("file_size", size);
    return this;
  }

  /** {@code capabilities.resources.open_files}. */
  public ManifestBuilder openFilesLimit(int openFiles) {
    capability("resources").put("open_files", openFiles);
    return this;
  }

  public ManifestBuilder conversation(Conversation conversation) {
    object(root, "lifecycle").put("conversation", conversation.yaml());
    return this;
  }

  /** A copy of the tree built so far, in {@code murmur.yaml} shape. */
  public ObjectNode tree() {
    return root.deepCopy();
  }

  /**
   * Validates and builds.
   *
   * @throws ManifestInvalid every problem, as for a file
   */
  public Manifest build() {
    return ManifestValidator.validate(
        LocatedTree.inMemory(root.deepCopy()), capsuleDir, LABEL, Optional.empty());
  }

  private ObjectNode inference() {
    if (!root.has("inference")) {
      root.putObject("inference").put("transport", Transport.PROCESS.yaml());
    }
    return (ObjectNode) root.get("inference");
  }

  private ObjectNode driver() {
    return object(inference(), "driver");
  }

  private ObjectNode capability(String section) {
    return object(object(root, "capabilities"), section);
  }

  private static ObjectNode object(ObjectNode parent, String key) {
    JsonNode child = parent.get(key);
    return child instanceof ObjectNode o ? o : parent.putObject(key);
  }

  private static void add(ArrayNode array, String... values) {
    for (String v : values) {
      array.add(v);
    }
  }
}
