package io.capsule.config.manifest;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * {@code inference}: how the harness is driven.
 *
 * @param transport always {@link Transport#PROCESS}
 * @param driver the driver artifact and its config
 * @param model trimmed; empty when absent or blank (the harness chooses)
 * @param command override of the driver's {@code description.binary}, as written; see {@link
 *     Manifest#resolvedCommand()}
 * @param maxTurns u32 ceiling on turns, when set
 * @param maxSessionTokens u64 spend ceiling, when set; values above {@link Long#MAX_VALUE} are kept
 *     as {@link Long#MAX_VALUE} (no run reaches 9.2e18 tokens, so the ceiling means the same)
 * @param systemPrompt the system prompt text: {@code system_prompt}, or the UTF-8 contents of
 *     {@code system_prompt_file} inlined by the loader
 * @param systemPromptFile the file the prompt came from (relative to the capsule), for the trace
 */
public record Inference(
    Transport transport,
    DriverRef driver,
    Optional<String> model,
    Optional<String> command,
    OptionalLong maxTurns,
    OptionalLong maxSessionTokens,
    Optional<String> systemPrompt,
    Optional<String> systemPromptFile) {

  public Inference {
    Objects.requireNonNull(transport, "transport");
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(command, "command");
    Objects.requireNonNull(maxTurns, "maxTurns");
    Objects.requireNonNull(maxSessionTokens, "maxSessionTokens");
    Objects.requireNonNull(systemPrompt, "systemPrompt");
    Objects.requireNonNull(systemPromptFile, "systemPromptFile");
  }
}
