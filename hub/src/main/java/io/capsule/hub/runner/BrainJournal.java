package io.capsule.hub.runner;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import io.capsule.hub.store.HubJournal;
import io.capsule.protocol.ProtocolException;
import java.util.List;

/**
 * The brain's writes to its {@link HubJournal}: an entry is written before it has any effect (see
 * there), and the first failure is kept, after which the brain stops rather than acknowledge or
 * send what could not be kept. Touched by the brain's actor only.
 */
final class BrainJournal {
  private final HubJournal journal;
  private ProtocolException failure;

  BrainJournal(HubJournal journal) {
    this.journal = journal;
  }

  /** Journals entries that arrived together, in one write where the journal can; false: failed. */
  boolean write(List<HubJournal.Entry> entries) {
    try {
      journal.appendAll(entries);
      return true;
    } catch (ProtocolException e) {
      failure = e;
      return false;
    } catch (RuntimeException e) {
      failure =
          new ProtocolException(
              Diagnostic.of(Code.E_PRO_010, "the hub journal failed: " + e.getMessage()), e);
      return false;
    }
  }

  /** The failure that stopped the brain, or null while the journal keeps everything. */
  ProtocolException failure() {
    return failure;
  }
}
