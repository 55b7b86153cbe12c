package io.capsule.protocol.frame;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.capsule.protocol.schema.Schemas;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * How the hub wants a task run: {@code backend} ({@code capsule:<name>}), {@code model}, {@code
 * session}, {@code system_prompt_ref}, {@code allowed_tools}, {@code llm_base_url}, {@code budget}
 * ({@code max_turns}, {@code max_tokens}); unknown keys kept. What the runtime does with each is
 * the runtime's business (docs/runner-protocol.md, "How a runner reads task.assign").
 */
public final class Invocation extends JsonBody {

  private Invocation(ObjectNode json) {
    super(json);
  }

  /** Validates against {@code invocation.json}; refuses with {@code E-PRO-004}. */
  public static Invocation of(JsonNode json) {
    return new Invocation(Bodies.checked(Schemas.Id.INVOCATION, json, "invocation"));
  }

  /** Takes the node as is (copied), without schema validation. */
  public static Invocation wrap(ObjectNode json) {
    return new Invocation(Bodies.withId(json, "backend", "invocation"));
  }

  public String backend() {
    return text("backend");
  }

  public Optional<String> model() {
    return optionalText("model");
  }

  public Optional<String> session() {
    return optionalText("session");
  }

  public Optional<String> systemPromptRef() {
    return optionalText("system_prompt_ref");
  }

  public Optional<String> llmBaseUrl() {
    return optionalText("llm_base_url");
  }

  /** Empty when absent (absent means "no narrowing"; see {@link #hasAllowedTools()}). */
  public List<String> allowedTools() {
    return texts("allowed_tools");
  }

  public boolean hasAllowedTools() {
    return node("allowed_tools") != null;
  }

  public OptionalLong maxTurns() {
    return budgetLong("max_turns");
  }

  public OptionalLong maxTokens() {
    return budgetLong("max_tokens");
  }

  private OptionalLong budgetLong(String key) {
    JsonNode b = node("budget");
    JsonNode v = b == null ? null : b.get(key);
    return v != null && v.canConvertToExactIntegral()
        ? OptionalLong.of(v.longValue())
        : OptionalLong.empty();
  }

  @Override
  Schemas.Id schema() {
    return Schemas.Id.INVOCATION;
  }

  public static Builder builder(String backend) {
    return new Builder(backend);
  }

  /** Builds an invocation; keys appear in the order they are set. */
  public static final class Builder {
    private final ObjectNode json = JsonNodeFactory.instance.objectNode();

    private Builder(String backend) {
      json.put("backend", backend);
    }

    public Builder model(String model) {
      json.put("model", model);
      return this;
    }

    public Builder session(String session) {
      json.put("session", session);
      return this;
    }

    public Builder systemPromptRef(String ref) {
      json.put("system_prompt_ref", ref);
      return this;
    }

    public Builder llmBaseUrl(String url) {
      json.put("llm_base_url", url);
      return this;
    }

    public Builder allowedTools(List<String> tools) {
      tools.forEach(json.putArray("allowed_tools")::add);
      return this;
    }

    public Builder budget(Long maxTurns, Long maxTokens) {
      ObjectNode b = json.putObject("budget");
      if (maxTurns != null) {
        b.put("max_turns", maxTurns);
      }
      if (maxTokens != null) {
        b.put("max_tokens", maxTokens);
      }
      return this;
    }

    public Builder put(String key, JsonNode value) {
      json.set(key, value);
      return this;
    }

    public Invocation build() {
      return Invocation.of(json);
    }
  }
}
