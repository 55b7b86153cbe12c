package io.capsule.runtime.cluster;

import com.fasterxml.jackson.annotation.JacksonAnnotationsInside;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.capsule.runtime.javadsl.RunEvent;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A {@link RunEvent} (or a list of them) that crosses nodes with its variant named by its simple
 * class name in {@code @variant}: {@code RunEvent} itself carries no type id, as its JSON form
 * ({@code RunEventJson}) has none. One list for {@link RunCaller.Event} and {@link
 * RunCaller.Events}; a new variant must be listed here ({@code CrossNodeSerializationTest} fails
 * until it is).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER})
@JacksonAnnotationsInside
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "@variant")
@JsonSubTypes({
  @JsonSubTypes.Type(RunEvent.StateChanged.class),
  @JsonSubTypes.Type(RunEvent.SessionStarted.class),
  @JsonSubTypes.Type(RunEvent.TextDelta.class),
  @JsonSubTypes.Type(RunEvent.TextCompleted.class),
  @JsonSubTypes.Type(RunEvent.ThinkingDelta.class),
  @JsonSubTypes.Type(RunEvent.ThinkingCompleted.class),
  @JsonSubTypes.Type(RunEvent.ToolStarted.class),
  @JsonSubTypes.Type(RunEvent.ToolProgress.class),
  @JsonSubTypes.Type(RunEvent.ToolCalled.class),
  @JsonSubTypes.Type(RunEvent.ToolResulted.class),
  @JsonSubTypes.Type(RunEvent.BridgeCall.class),
  @JsonSubTypes.Type(RunEvent.UsageUpdated.class),
  @JsonSubTypes.Type(RunEvent.QuotaUpdated.class),
  @JsonSubTypes.Type(RunEvent.SuggestedPrompt.class),
  @JsonSubTypes.Type(RunEvent.Note.class),
  @JsonSubTypes.Type(RunEvent.Retry.class),
  @JsonSubTypes.Type(RunEvent.Warning.class),
  @JsonSubTypes.Type(RunEvent.AttemptLost.class),
  @JsonSubTypes.Type(RunEvent.Finished.class)
})
@interface RunEventByName {}
