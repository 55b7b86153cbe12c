package io.capsule.runtime.harness;

import io.capsule.config.diag.Code;
import io.capsule.config.diag.Diagnostic;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

/**
 * The harness's stdin, written off the actor's thread one write after the other (a write to a full
 * pipe blocks until the harness reads), and whether more may still be written: not after it was
 * closed, and not after a write failed. Confined to its owning actor: call it only from the actor's
 * thread; the returned stages complete on the executor.
 */
final class StdinPipe {

  private final OutputStream stdin;
  private final Executor io;
  private CompletableFuture<Void> last = CompletableFuture.completedFuture(null);
  private boolean open = true;

  StdinPipe(OutputStream stdin, Executor io) {
    this.stdin = stdin;
    this.io = io;
  }

  /** The plan's stdin, then closed unless the plan keeps stdin open. */
  CompletableFuture<Void> writeInitial(byte[] bytes, boolean keepOpen) {
    open = keepOpen;
    return write(bytes, !keepOpen);
  }

  /** Closes stdin after pending writes; empty when it is already closed. */
  Optional<CompletableFuture<Void>> closeIfOpen() {
    if (!open) {
      return Optional.empty();
    }
    open = false;
    return Optional.of(write(new byte[0], true));
  }

  /** Writes an interrupt message; empty when stdin is closed or there is nothing to write. */
  Optional<CompletableFuture<Void>> writeIfOpen(Optional<byte[]> bytes) {
    if (!open || bytes.isEmpty() || bytes.get().length == 0) {
      return Optional.empty();
    }
    return Optional.of(write(bytes.get(), false));
  }

  /** A write failed: the pipe takes no more. */
  void broken() {
    open = false;
  }

  /** Why the plan's stdin could not be written ({@code E-RUN-007}), with its size. */
  static Diagnostic notWritten(Throwable failure, int stdinBytes) {
    return Diagnostic.of(
        Code.E_RUN_007,
        "could not write the harness's stdin: " + failure.getMessage(),
        Map.of("stdin_bytes", String.valueOf(stdinBytes)));
  }

  /** Writes and flushes {@code bytes} after every earlier write, then closes when asked. */
  CompletableFuture<Void> write(byte[] bytes, boolean close) {
    last =
        last.handle((v, e) -> (Void) null)
            .thenRunAsync(
                () -> {
                  try {
                    if (bytes.length > 0) {
                      stdin.write(bytes);
                      stdin.flush();
                    }
                    if (close) {
                      stdin.close();
                    }
                  } catch (IOException e) {
                    throw new CompletionException(e);
                  }
                },
                io);
    return last;
  }
}
