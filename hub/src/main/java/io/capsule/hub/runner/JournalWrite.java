package io.capsule.hub.runner;

import io.capsule.hub.store.HubJournal;
import java.util.function.Consumer;
import org.apache.pekko.http.javadsl.model.ws.Message;

/** One journal entry on its way to the store, with what the hub does once it is kept. */
sealed interface JournalWrite {
  HubJournal.Entry entry();

  /**
   * A runner frame applied on connection {@code conn}; {@code bytes} of it count against the
   * connection's unsettled budget until its event is published.
   */
  record Applied(long conn, HubJournal.Entry entry, int bytes) implements JournalWrite {}

  /**
   * A frame the hub numbered for a runner: once kept it is sent ({@code encoded}) and {@code kept}
   * answers whoever asked; {@code lost} when the store failed.
   */
  record Sent(HubJournal.Entry entry, Message encoded, Runnable kept, Consumer<Throwable> lost)
      implements JournalWrite {}
}
