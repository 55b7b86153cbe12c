/**
 * The tool bridge: the capsule's tools ({@code capabilities.shell.allow}) offered to the harness
 * over MCP "streamable HTTP" on {@code 127.0.0.1}, one bridge per run.
 *
 * <h2>Shape</h2>
 *
 * {@link io.capsule.runtime.bridge.ToolBridge} is the only type the run holds: {@code start} before
 * {@code launch}, {@code toBridge()} into the launch request, {@code beginEnding()} when the
 * outcome is decided, {@code stop()} when the run ends. Inside: {@code BridgeHttp} (transport,
 * auth, limits), {@code McpProtocol} (versions, sessions, {@code initialize}, {@code tools/list}),
 * {@code CallGate} (pure: every refusal), {@code CallRunner} (in-flight limit, events, results),
 * {@code ToolProcess} (one OS process group) and {@code ToolCommand} (pure: the argv).
 *
 * <h2>Why hand-written JSON-RPC and MCP types, not the MCP Java SDK</h2>
 *
 * The issue asks to prefer {@code io.modelcontextprotocol.sdk:mcp} if it fits the build. It does
 * not, checked against version 2.1.0 (the one that resolves here): it brings Jackson 3 ({@code
 * tools.jackson.core:jackson-databind} 3.1.x) beside the project's pinned Jackson 2.21.6, so two
 * Jacksons would serialise one bridge; it depends on {@code com.networknt:json-schema-validator}
 * 3.0.6 while the reactor manages that artifact at 1.5.9 for the protocol module, so dependency
 * management would force the SDK onto a validator whose API it was not built against (a runtime
 * failure that convergence checks do not catch); and it brings Reactor ({@code reactor-core}) for a
 * server framework the bridge does not use, since Pekko HTTP is the server. What the bridge needs
 * of MCP is small and stable across revisions 2024-11-05 to 2025-11-25 for a tools-only server: the
 * JSON-RPC envelope, {@code initialize}, {@code tools/list}, {@code tools/call} results of text
 * items. That is about two hundred lines on the Jackson 2 the project already has ({@code JsonRpc},
 * {@code McpProtocol}), tested against the exchange the real Claude Code CLI performs. Using only
 * {@code mcp-core}'s schema records was not tried: it still brings Reactor, and its records are
 * meant for the SDK's own (Jackson 3) mapper.
 *
 * <h2>The gate, in order</h2>
 *
 * The tool exists ({@code E-TOOL-002}); the input is {@code {"args": [string…], "stdin"?: string}}
 * and nothing else ({@code E-TOOL-002}); the run is not ending ({@code E-TOOL-003}); {@code
 * filesystem.read_only} can be kept ({@code E-TOOL-006}); the embedding application's {@link
 * io.capsule.runtime.bridge.ToolPolicy} allows it ({@code E-TOOL-004}); fewer than {@code
 * maxInFlight} calls run ({@code E-TOOL-005}, refused at once, never queued). A refusal is an
 * {@code isError} result carrying the rendered diagnostic and a {@code REFUSED} event; never a
 * protocol error, never a crash. Only a {@code tools/call} without a string {@code name} is a
 * JSON-RPC error (-32602): it is not a call of anything.
 *
 * <h2>Where a tool runs</h2>
 *
 * When the run is contained, every call runs in a new sandbox of the run's ({@link
 * io.capsule.runtime.harness.contain.RunSandbox}, docs/containment.md): the harness's grants,
 * read-only binds, sealed root, user, filter and egress proxy, its own PID namespace. The run hands
 * the sandbox to the bridge when the harness has spawned; a call that arrives first waits for it
 * (bounded). Only when the run is not contained (containment {@code off}, or {@code auto} without a
 * working sandbox) does a tool run as a host process, as below.
 *
 * <h2>What {@code filesystem.read_only: true} guarantees for an uncontained tool</h2>
 *
 * Contained, the sandbox binds the workdir read-only. Uncontained, the rule the bridge implements:
 * <em>a tool runs only inside a private mount namespace in which the workdir is a read-only bind
 * mount of itself</em> ({@code unshare --mount}, with {@code --map-root-user} when the JVM is not
 * root; util-linux). Writes through the workdir path (creating, changing or removing anything under
 * it, by relative or absolute path) then fail with EROFS, for root too. The prelude checks the
 * mount really took effect before it {@code exec}s the tool; at start the bridge probes it once,
 * and if this host cannot do it (no {@code unshare}, user namespaces disabled) every call is
 * refused {@code E-TOOL-006}: fail closed, never a silent read-write run.
 *
 * <p>Not guaranteed: paths outside the workdir stay writable (home, {@code /tmp}), including
 * targets of symlinks inside the workdir that point out of it; a tool that holds {@code
 * CAP_SYS_ADMIN} in the namespace (it does, as the namespace's root) could remount the workdir
 * read-write if it tried on purpose: the rule stops careless and model-directed writes through
 * ordinary tools ({@code git}, {@code sed -i}, redirections inside a tool), not a hostile binary.
 * The harness itself is not affected (it runs outside the namespace).
 *
 * <h2>Processes</h2>
 *
 * Each call is {@code setsid binary args…} (never a shell: arguments are argv items), in the run's
 * workdir, with exactly the granted environment, stdin from {@code stdin} or {@code /dev/null}.
 * stdout and stderr share one output cap; past it output is read and dropped, and the result says
 * so. The whole process group is killed on timeout ({@code E-TOOL-007}), when the harness hangs up
 * mid-call ({@code E-TOOL-008}, {@code ABANDONED}), on {@code stop()} ({@code E-TOOL-008}, {@code
 * STOPPED}), and also right after the tool exits, so nothing it started in its group outlives the
 * call. A hang-up is seen as the end of the connection's request stream (Pekko HTTP never cancels a
 * pending response); HTTP/1.1 clients do not half-close and then wait, so that is safe for the
 * harnesses' MCP clients. Pipe reads and waits run on the bridge's own daemon threads (at most
 * three per call, so at most {@code 3 × maxInFlight}), not on a Pekko dispatcher: a tool blocks for
 * as long as it runs, which would starve a shared blocking pool.
 *
 * <h2>Threading</h2>
 *
 * HTTP handling runs on Pekko HTTP's stream threads and never blocks; the {@link
 * io.capsule.runtime.bridge.ToolBridge.Listener} and the {@link
 * io.capsule.runtime.bridge.ToolPolicy} are called from those and from the bridge's I/O threads;
 * the run turns listener calls into messages to itself.
 */
package io.capsule.runtime.bridge;
