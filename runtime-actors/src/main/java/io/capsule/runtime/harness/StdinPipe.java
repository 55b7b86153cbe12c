package io.capsule.runtime.harness;

import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

/**
 * The harness's stdin, written off the actor's thread one write after the other (a write to a full
 * pipe blocks until the harness reads). Confined to its owning actor: call {@link #write} only from
 * the actor's thread; the returned stage completes on the executor.
 */
final class StdinPipe {

  private final OutputStream stdin;
  private final Executor io;
  private CompletableFuture<Void> last = CompletableFuture.completedFuture(null);

  StdinPipe(OutputStream stdin, Executor io) {
    this.stdin = stdin;
    this.io = io;
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
