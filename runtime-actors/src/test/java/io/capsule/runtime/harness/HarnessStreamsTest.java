package io.capsule.runtime.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Where {@link HarnessStreams#stdout} reads: on the harness I/O dispatcher the limits name, not on
 * a default pool of Pekko's (a real {@code sh}, its stdout watched read by read).
 */
class HarnessStreamsTest {

  private final ActorTestKit kit = ActorTestKit.create(HarnessFixture.CONFIG);

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  /** A real process whose stdout notes the threads that read it. */
  private static final class Watched extends Process {
    final Process real;
    final Set<String> readers = ConcurrentHashMap.newKeySet();

    Watched(Process real) {
      this.real = real;
    }

    @Override
    public InputStream getInputStream() {
      return new FilterInputStream(real.getInputStream()) {
        @Override
        public int read(byte[] b, int off, int len) throws IOException {
          readers.add(Thread.currentThread().getName());
          return super.read(b, off, len);
        }
      };
    }

    @Override
    public OutputStream getOutputStream() {
      return real.getOutputStream();
    }

    @Override
    public InputStream getErrorStream() {
      return real.getErrorStream();
    }

    @Override
    public int waitFor() throws InterruptedException {
      return real.waitFor();
    }

    @Override
    public int exitValue() {
      return real.exitValue();
    }

    @Override
    public void destroy() {
      real.destroy();
    }
  }

  @Test
  void stdoutIsReadOnTheConfiguredIoDispatcher() throws Exception {
    Watched process =
        new Watched(
            new ProcessBuilder("/bin/sh", "-c", "printf 'a\\nb\\n'; printf 'c\\n'").start());
    List<String> lines = java.util.Collections.synchronizedList(new ArrayList<>());
    HarnessStreams.Stdout out =
        HarnessStreams.stdout(
                process,
                HarnessFixture.limits(),
                64 * 1024,
                batch -> {
                  batch.forEach(l -> lines.add(l.text()));
                  return CompletableFuture.completedFuture(Done.getInstance());
                })
            .run(kit.system());
    out.done().toCompletableFuture().get(20, TimeUnit.SECONDS);
    process.real.waitFor(20, TimeUnit.SECONDS);

    assertEquals(List.of("a", "b", "c"), lines);
    assertFalse(process.readers.isEmpty());
    for (String thread : process.readers) {
      assertTrue(thread.contains(HarnessFixture.IO_DISPATCHER), "read on " + thread);
    }
  }
}
