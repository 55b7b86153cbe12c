/**
 * A task's server-sent events: read from the task entity's journal (Persistence Query), so any hub
 * node and a restarted hub serve the same stream and {@code Last-Event-ID} resumes anywhere, merged
 * with this node's live push so a watcher does not wait for the journal's poll. {@link
 * io.capsule.hub.events.EventOrder} keeps the merged stream gap- and repeat-free; {@link
 * io.capsule.hub.events.TaskEventStream} bounds what one watcher can hold.
 */
package io.capsule.hub.events;
