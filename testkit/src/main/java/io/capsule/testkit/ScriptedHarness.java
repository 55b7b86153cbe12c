package io.capsule.testkit;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * A fake harness: replays a {@link HarnessScript} written as JSON. It needs only the JDK and this
 * jar:
 *
 * <pre>java -cp capsule-testkit.jar io.capsule.testkit.ScriptedHarness script.json</pre>
 *
 * <p>{@link #command(Path)} builds that command line with the running JVM and this jar. Exit codes:
 * the script's, or on SIGINT what the script says (a JVM that obeys SIGINT exits 130, which the
 * runtime reports as signal 2); 2 when the script cannot be read or asks for something this JVM
 * cannot do.
 */
public final class ScriptedHarness {

  private static volatile boolean finished;

  private ScriptedHarness() {}

  /** The command that runs {@code scriptJson} with the current JVM: java, -cp, this jar, … */
  public static List<String> command(Path scriptJson) {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    return List.of(
        java.toString(),
        "-Xshare:auto",
        "-XX:TieredStopAtLevel=1",
        "-cp",
        ownLocation().toString(),
        ScriptedHarness.class.getName(),
        scriptJson.toAbsolutePath().toString());
  }

  /** The jar (or classes directory) this class was loaded from. */
  public static Path ownLocation() {
    try {
      return Path.of(
          ScriptedHarness.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: ScriptedHarness <script.json>");
      System.exit(2);
    }
    Map<String, Object> script;
    try {
      @SuppressWarnings("unchecked")
      Map<String, Object> parsed =
          (Map<String, Object>) MiniJson.parse(Files.readString(Path.of(args[0])));
      script = parsed;
    } catch (RuntimeException e) {
      System.err.println("ScriptedHarness: " + e.getMessage());
      System.exit(2);
      return;
    }
    OutputStream out = new FileOutputStream(FileDescriptor.out);
    PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, "UTF-8");
    setUpSigint(script.getOrDefault("on_sigint", "obey"), out, err);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> steps = (List<Map<String, Object>>) script.get("steps");
    InputStream in = new FileInputStream(FileDescriptor.in);
    for (Map<String, Object> step : steps) {
      run(step, out, err, in);
    }
    out.flush();
    finished = true;
    Number exit = (Number) script.getOrDefault("exit", 0L);
    System.exit(exit.intValue());
  }

  private static void run(
      Map<String, Object> step, OutputStream out, PrintStream err, InputStream in)
      throws IOException {
    if (step.containsKey("out")) {
      out.write(((String) step.get("out") + "\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
    } else if (step.containsKey("bytes_hex")) {
      out.write(HexFormat.of().parseHex((String) step.get("bytes_hex")));
      out.flush();
    } else if (step.containsKey("err")) {
      err.print(step.get("err") + "\n");
      err.flush();
    } else if (step.containsKey("sleep_ms")) {
      pause(((Number) step.get("sleep_ms")).longValue());
    } else if (step.containsKey("flood")) {
      byte[] line = ((String) step.get("flood") + "\n").getBytes(StandardCharsets.UTF_8);
      long count = ((Number) step.get("count")).longValue();
      OutputStream buffered = new java.io.BufferedOutputStream(out, 64 * 1024);
      for (long i = 0; i < count; i++) {
        buffered.write(line);
      }
      buffered.flush();
    } else if (step.containsKey("read_line")) {
      String line = readLine(in);
      Object prefix = step.get("read_line");
      if (prefix instanceof String p) {
        out.write((p + line + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
      }
    } else if (step.containsKey("close_stdout")) {
      out.close();
    } else {
      throw new IllegalArgumentException("unknown step " + step.keySet());
    }
  }

  private static String readLine(InputStream in) throws IOException {
    java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0 && b != '\n') {
      line.write(b);
    }
    return line.toString(StandardCharsets.UTF_8);
  }

  /** The script's pause: this process is the harness, so it waits like one. */
  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void setUpSigint(Object mode, OutputStream out, PrintStream err) {
    if (mode instanceof Map<?, ?> exit) {
      int code = ((Number) exit.get("exit")).intValue();
      Object line = exit.get("line");
      // SIGINT starts the JVM's shutdown; a hook that halts picks the exit code. A normal end
      // (finished) exits with the script's code instead.
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    if (finished) {
                      return;
                    }
                    try {
                      if (line != null) {
                        out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                      }
                      out.flush();
                    } catch (IOException e) {
                      // stdout is gone; the exit code still tells.
                    }
                    Runtime.getRuntime().halt(code);
                  }));
    } else if ("ignore".equals(mode)) {
      if (!ignoreSigint()) {
        err.println("ScriptedHarness: this JVM cannot ignore SIGINT; use the shell form");
        System.exit(2);
      }
    }
  }

  /** Through the JDK's unsupported signal API, looked up reflectively (it may be absent). */
  private static boolean ignoreSigint() {
    try {
      Class<?> signal = Class.forName("sun.misc.Signal");
      Class<?> handler = Class.forName("sun.misc.SignalHandler");
      Field ignore = handler.getField("SIG_IGN");
      Object sigint = signal.getConstructor(String.class).newInstance("INT");
      Method handle = signal.getMethod("handle", signal, handler);
      handle.invoke(null, sigint, ignore.get(null));
      return true;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return false;
    }
  }
}
