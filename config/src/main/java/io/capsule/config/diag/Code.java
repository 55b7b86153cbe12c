package io.capsule.config.diag;

import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The diagnostics catalog: every code the runtime can raise, with one line of meaning and one line
 * of what to do. Codes are stable (tests and operators match on them); the prefix tells the area:
 * {@code CAP} grants, {@code RUN} a run, {@code MAN} the manifest, {@code CFG} runtime settings,
 * {@code CLI} command-line input, {@code PRO} the runner protocol, {@code HUB} the hub, {@code API}
 * the hub's task API, {@code HTTP} the hub's HTTP edge, {@code TLS} TLS on the hub's wires, {@code
 * SEC} security warnings, {@code TOOL} the tool bridge, {@code CLU} runs sharded in an embedding
 * application's cluster.
 *
 * <p>A code is defined here once and nowhere else; {@code CatalogCoverageTest} fails when a code is
 * used in the sources but missing here, or listed here but never raised.
 */
public enum Code {
  // --- grants (docs/run-semantics.md §11) ---
  E_CAP_016(
      "an env.allow name is credential-shaped and refused",
      "move the name to capabilities.env.allow_credentials if the harness really needs it"),
  E_CAP_019(
      "the driver requires an env name that env.allow does not grant",
      "add the missing names to capabilities.env.allow"),
  E_CAP_021(
      "a harness need (path or host) is not allowed by the manifest",
      "allow it under capabilities.harness.paths or capabilities.network.allow, or use another"
          + " driver"),

  W_CAP_050(
      "the harness runs uncontained: containment is auto and bubblewrap or socat does not work here, so its grants are not enforced on it",
      "install bubblewrap and socat (apt-get install bubblewrap socat), or set capsule.harness.containment = off to run uncontained knowingly"),
  E_CAP_051(
      "containment is required and the sandbox cannot start (bwrap or socat missing or not working)",
      "install bubblewrap and socat (apt-get install bubblewrap socat); check capsule.harness.bwrap and .socat with capsule doctor"),
  W_CAP_052(
      "the contained harness asked for a host:port that capabilities.network.allow does not grant; the egress proxy answered 403",
      "add the host:port to capabilities.network.allow if the harness really needs it"),
  W_CAP_053(
      "no cgroup bounds the run's memory, processes and CPU on this host; only rlimits hold",
      "run as root with writable cgroup v1 controllers or delegate cgroup v2 memory and pids"
          + " (systemd Delegate=yes); capsule doctor says what is missing"),
  W_CAP_054(
      "capabilities.resources asked for more than the operator's ceiling; the run gets the"
          + " ceiling",
      "ask for at most the ceiling the message names, or ask the operator to raise it"),

  // --- runs (docs/run-semantics.md §11) ---
  E_RUN_006(
      "driver artifact missing, or harness binary not found",
      "check the artifact path and sha256, or install the harness / set inference.command"),
  E_RUN_007(
      "the harness could not be started or fed (spawn, stdin write)",
      "check that the harness binary runs by hand with the granted environment"),
  E_RUN_029(
      "the driver does not export murmur:driver/process@0.6.0",
      "rebuild the driver against murmur:driver@0.6.0"),
  E_RUN_032(
      "the driver needs a grant or a host function this runtime does not give, has a shape it"
          + " cannot run, or described itself unusably",
      "fix the driver: import nothing but WASI 0.2 (served with empty grants; no sockets, HTTP or"
          + " other host functions) and describe a usable harness"),
  E_RUN_033(
      "a harness turn failed (with kind), including max turns",
      "read the failure kind and message; sign in, wait for quota, or raise the ceiling"),
  E_RUN_034(
      "a driver call refused, trapped, overran, or gave an unusable plan/result",
      "report it to the driver's author with the trace; the runtime stayed healthy"),
  E_RUN_035(
      "the harness was silent past the inactivity window",
      "check the harness (network, prompts waiting for input) or raise"
          + " capsule.run.inactivity-timeout"),
  E_RUN_036(
      "the session to resume is gone",
      "start a new conversation; the harness no longer has that session"),
  E_RUN_038(
      "a token ceiling is set but the driver reports no usage",
      "remove inference.max_session_tokens or use a driver that reports usage"),
  E_RUN_040(
      "the task did not complete (failed, max turns, spend ceiling, canceled)",
      "read the run's outcome and trace for the cause"),
  E_RUN_041(
      "a field of the assignment is malformed (capsule name, model, session) or of the wrong"
          + " type (a budget)",
      "send a capsule name of a-z, 0-9 and '-' (at most 64), a model and session without"
          + " control characters (at most 256), and typed fields"),
  E_RUN_042(
      "the runner failed while handling this task; other tasks go on",
      "report it with the runner's log; the task can be assigned again"),
  E_RUN_043(
      "the capsule could not be resolved in time (the driver registry restarted or did not"
          + " answer)",
      "run the task again; if it repeats, read the runner's log for the registry's failure"),
  W_RUN_044(
      "the run's trace could not be written; the run went on without it",
      "check the work root's free space and permissions (capsule.run.work-root)"),
  W_RUN_045(
      "the run's clean-up (trace flush, files directory removal) did not finish in time; the"
          + " report went out without waiting for it",
      "check the work root's disk and the blocking dispatcher's load; the trace may be cut short"),
  W_RUN_046(
      "the harness did not exit within 30 s of being killed; the run reported without its exit",
      "check the runner's io dispatcher and for processes stuck in the kernel (state D); its"
          + " process group is killed as soon as the spawn returns"),
  E_RUN_047(
      "the run passed its memory limit: the kernel killed a process of the run (out of memory)",
      "raise capabilities.resources.memory, within the operator's ceiling"
          + " capsule.harness.resources.memory-max, or make the harness or its tools use less"),
  E_RUN_048(
      "the run passed its process limit: a fork or thread creation was refused",
      "raise capabilities.resources.processes, within the operator's ceiling"
          + " capsule.harness.resources.processes-max, or find what spawns without bound"),
  // --- runs sharded in an embedding application's Pekko Cluster (CapsuleSharding) ---
  E_CLU_001(
      "the cluster node hosting the run left or died; its harness died with it",
      "start the task again, or ask for RunRequest.retryOnNodeLoss(n) to have it restarted on"
          + " another runner node"),
  E_CLU_002(
      "the runner node had no free run slot within the wait (capsule.run.max-concurrent)",
      "start the task again later, add runner nodes, or raise capsule.run.max-concurrent or"
          + " capsule.sharding.slot-wait"),
  E_CLU_003(
      "no runner node took the run within capsule.sharding.start-timeout",
      "check that a node with the runner role (capsule.sharding.role) is up in the cluster"),
  E_CLU_004(
      "events of the run were lost between the runner's and the caller's nodes (Artery's outbound"
          + " queue overflowed) or one was over 64 MiB; the run was canceled",
      "start the task again; if it recurs, raise"
          + " pekko.remote.artery.advanced.outbound-message-queue-size or start the run on a runner"
          + " node"),
  W_RUN_002(
      "harness version untested or unreadable",
      "the run goes on; install a tested harness version if something misbehaves"),

  // --- security warnings ---
  W_SEC_024(
      "a credential-shaped env name is allowed (warning form)",
      "make sure the harness needs this credential; it reaches the harness's environment"),
  W_SEC_031(
      "the harness reports non-subscription billing",
      "check which account the harness bills; sign in with a subscription if intended"),

  // --- the manifest ---
  E_MAN_001("the manifest is unreadable or not YAML", "fix the file so it parses as YAML"),
  E_MAN_002(
      "an unknown or missing key, a wrong type or a bad value in the manifest",
      "correct the named key or value at the given line and column"),
  E_MAN_003(
      "a path in the manifest escapes the capsule directory",
      "keep every path inside the capsule directory (no '..', no symlinks out)"),
  W_MAN_004(
      "the capsule's name differs from its folder's name; runners find a capsule by its folder",
      "rename the folder or change name: so the two agree and capsule:NAME reaches this capsule"),

  // --- runtime settings ---
  E_CFG_001(
      "a runtime setting under capsule.* is missing or invalid",
      "fix the named key in application.conf, -D or the environment"),
  E_CFG_002(
      "a key under capsule.* is not a setting (misspelt, or of another release); it would be"
          + " ignored",
      "use the key named after 'did you mean', or remove it; docs/settings.md lists every"
          + " setting"),
  E_CFG_003(
      "a duration setting is a bare number; without a unit it would be read as milliseconds",
      "write the unit: 5s, 200ms, 2m, 1h"),

  // --- the command line ---
  E_CLI_001(
      "a file, folder or value given on the command line is missing, unreadable or invalid",
      "check the path or value named in the message; 'capsule help COMMAND' describes each option"),

  // --- the runner protocol ---
  E_PRO_001(
      "a frame is not a JSON object (malformed JSON or wrong shape)",
      "send one JSON object per text frame"),
  E_PRO_002("a frame has an unknown type", "check the peer's protocol version"),
  E_PRO_003("a frame has an unsupported schema_version", "send schema_version 1"),
  E_PRO_004(
      "a frame or its body fails validation against the protocol schema",
      "fix the field named in the message"),
  E_PRO_005("a frame is larger than the frame cap", "split the payload or raise the frame cap"),
  E_PRO_006(
      "the replay buffer of a live task overflowed",
      "the peer is not acknowledging; check the connection or raise the replay buffer bound"),
  E_PRO_007(
      "the bearer token is missing, malformed, expired or wrongly signed",
      "fetch a fresh token for the project (capsule hub token)"),
  E_PRO_008(
      "hello.project_id differs from the token's project",
      "use a token issued for the project the runner says hello for"),
  E_PRO_009("no hello arrived in time after the upgrade", "send hello first, at once"),
  E_PRO_010(
      "the hub's state journal cannot be read, locked or written",
      "fix the named file or its disk; a hub that cannot keep its journal stops rather than lose"
          + " frames"),

  E_PRO_011(
      "a runner sent progress or a report for a task that is not placed on it",
      "nothing of that frame was applied; check the runner's task ids (a runner only reports the"
          + " tasks the hub assigned to it)"),

  E_PRO_012(
      "the token's scope does not open this route",
      "issue a token with the scope the route needs: capsule hub token --scope runner (the runner"
          + " endpoint), api (read, submit, cancel tasks) or admin (also delete)"),

  E_PRO_013(
      "a runner's out-of-order frames held by the hub passed the per-runner byte budget",
      "nothing applied is lost: reconnect and resume in order; if it repeats, look for a runner"
          + " that skips seqs"),

  // --- the hub ---
  E_HUB_001(
      "the hub's store cannot be reached or its schema cannot be created",
      "check the --store URL, its user and password file, and that the database is up; run"
          + " capsule hub migrate to see the database's own error"),
  E_HUB_002(
      "the project's queue of tasks waiting for a runner is full (capsule.hub.queue-max)",
      "submit again after the Retry-After seconds, connect runners or free slots so the queue"
          + " drains, or raise capsule.hub.queue-max"),
  E_HUB_003(
      "the task names a runner this hub does not know in the task's project",
      "check the runner's id (GET /v1/runners lists them) or leave \"runner\" out so any runner"
          + " that has the capsule takes it"),
  E_HUB_004(
      "the hub's store did not keep a task's submission, cancel or deletion in time",
      "send the request again; if it repeats, check the store (database up, disk not full)"),
  E_HUB_005(
      "a hub cluster (capsule hub --cluster) needs a store every node shares",
      "give every node the same --store jdbc:postgresql://… (an H2 file under --state-dir is one"
          + " process's, and memory is no node's but this one's)"),
  E_HUB_006(
      "this hub node left its cluster (downed by the split-brain resolver) and stopped",
      "its runners fail over to the other nodes; start it again with the same --seed list, and"
          + " check that the nodes reach each other's --canonical addresses"),
  E_HUB_007(
      "the project's hub did not answer in time: it is starting, or moving to another node",
      "retry after Retry-After (runners reconnect on their own); if it lasts, check that most"
          + " cluster nodes are up and the store answers"),
  E_HUB_008(
      "a runner was gone longer than dead-after; its unfinished tasks were taken from it and are"
          + " placed again on another runner",
      "nothing to do: each runs again elsewhere, keeping its events; the runner is told to cancel"
          + " them if it comes back (its late frames: E-PRO-011)"),
  E_HUB_009(
      "this hub node is cut off from its cluster (most other nodes unreachable, or it was downed)"
          + " and serves nothing until it is back",
      "send the request to another node (runners move on their own); if it lasts, check this"
          + " node's network to the others' --canonical addresses"),

  // --- the hub's task API (a request the API refuses after reading it) ---
  E_API_001(
      "the task is still running; the hub forgets only finished tasks",
      "cancel it (POST /v1/tasks/ID/cancel) and delete it once its report arrived"),
  E_API_002(
      "no task with this id is known to the hub",
      "check the id (GET /v1/tasks lists every task); a deleted task is gone"),
  E_API_003(
      "the task id was used by a task this hub forgot; ids are not reused",
      "submit the task under a new id (or give none and the hub names it)"),
  E_API_004(
      "a task with this id exists already",
      "submit under a new id (or give none and the hub names it); GET /v1/tasks/ID shows the"
          + " existing one"),
  E_API_005(
      "the task has its report already; there is nothing to cancel",
      "read the outcome with GET /v1/tasks/ID"),
  E_API_006(
      "the token is for another project than this hub's",
      "issue a token for the hub's project (capsule hub token --project ID)"),
  E_API_007(
      "an event watcher fell behind the task's events by more than the hub buffers for it",
      "reconnect with Last-Event-ID (the last id received): the stream resumes from there"),

  // --- the hub's HTTP edge (connections before any request is read) ---
  E_HTTP_001(
      "too many connections from this address are open at the hub",
      "close idle connections, or raise capsule.hub.http.max-connections-per-address"),
  E_HTTP_002(
      "the hub has as many connections open as it allows",
      "retry after a moment; if it persists, raise capsule.hub.http.max-connections"),
  E_HTTP_003(
      "a request's headers did not arrive within the header deadline; the connection was closed",
      "send the whole request head at once, or raise capsule.hub.http.header-timeout"),

  // --- TLS on the hub's wires: its edge, its cluster transport, its runners' dial
  // (docs/operations.md) ---
  E_TLS_001(
      "a TLS certificate, private key or CA file cannot be read, is not PEM this runtime reads, or"
          + " the key does not match the certificate",
      "give PEM files as openssl writes them (CERTIFICATE; PRIVATE KEY, RSA PRIVATE KEY or EC"
          + " PRIVATE KEY, unencrypted), the key belonging to the first certificate"),
  E_TLS_002(
      "the peer's certificate is not signed by a certificate authority this side trusts",
      "pass the CA that signed the hub's certificate with --ca-file, or serve a certificate from a"
          + " CA the system trusts"),
  E_TLS_003(
      "the peer's certificate has expired or is not valid yet",
      "renew the certificate (the hub reloads its files without a restart); check both clocks"),
  E_TLS_004(
      "the peer's certificate does not name the host that was dialled",
      "dial a name the certificate holds, or issue it with that name in its subjectAltName"
          + " (DNS or IP)"),
  E_TLS_005(
      "the TLS handshake failed for another reason (no common protocol or cipher, the peer closed)",
      "check that the peer speaks TLS 1.2 or 1.3 on that address (wss:// to a TLS hub, ws:// to a"
          + " plain one)"),
  W_TLS_001(
      "the hub serves plain HTTP on a non-loopback address: tokens cross the network in clear",
      "start it with --tls-cert and --tls-key, or listen on 127.0.0.1 behind a TLS proxy"),
  W_TLS_002(
      "the hub's cluster transport is plain TCP on a non-loopback address: any host that reaches"
          + " the port can talk to the cluster",
      "give every node --cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca (mutual TLS)"),
  W_TLS_003(
      "changed TLS files could not be loaded; the previous certificate is still served",
      "write the key and certificate completely (a matching pair); the next handshake loads them"),

  // --- the tool bridge ---
  E_TOOL_001(
      "a capabilities.shell.allow binary is not found on the granted PATH",
      "install it, or grant a PATH (capabilities.env.allow) whose directories hold it"),
  E_TOOL_002(
      "a tool call names no tool of this capsule, or its input does not match the tool's schema",
      "call a listed tool with {\"args\": [strings], \"stdin\": optional string}"),
  E_TOOL_003(
      "the run is ending; the tool bridge refuses new calls",
      "nothing to do: the run's outcome is already decided"),
  E_TOOL_004(
      "the embedding application's tool policy denied the call",
      "read the policy's reason; change the policy or the task"),
  E_TOOL_005(
      "too many tool calls are in flight on this run's bridge",
      "let running calls finish first, or raise the bridge's max-in-flight setting"),
  E_TOOL_006(
      "filesystem.read_only is set but the bridge cannot make the workdir read-only for tools",
      "allow mount namespaces (util-linux unshare) on this host, or set filesystem.read_only: false"),
  E_TOOL_007(
      "a tool overran its call timeout; its process group was killed",
      "narrow the call, or raise the bridge's call timeout"),
  E_TOOL_008(
      "a tool call ended before its tool did (the harness hung up, or the run ended); its process"
          + " group was killed",
      "nothing to do unless it repeats; then check the harness's MCP client timeouts"),
  E_TOOL_009(
      "a tool could not be started, or the tool bridge could not bind on loopback",
      "check that the binary runs by hand in the workdir, and that 127.0.0.1 is usable"),
  W_TOOL_010(
      "invocation.allowed_tools names a tool this capsule does not have; the name is ignored",
      "check the hub's allowed_tools against the capsule's capabilities.shell.allow"),
  ;

  private static final Pattern ID = Pattern.compile("[EW]-[A-Z]{3,4}-\\d{3}");

  private final String id;
  private final String meaning;
  private final String hint;

  Code(String meaning, String hint) {
    this.id = name().replace('_', '-');
    this.meaning = meaning;
    this.hint = hint;
  }

  /** The stable code as people and tests see it, e.g. {@code E-RUN-034}. */
  public String id() {
    return id;
  }

  /** One line: what this code means. */
  public String meaning() {
    return meaning;
  }

  /** One line: what to do about it. */
  public String hint() {
    return hint;
  }

  public Severity severity() {
    return id.startsWith("W-") ? Severity.WARNING : Severity.ERROR;
  }

  /** The code with this id ({@code E-RUN-034}), if the catalog has it. */
  public static Optional<Code> byId(String id) {
    return Arrays.stream(values()).filter(c -> c.id.equals(id)).findFirst();
  }

  /** The shape every code id has; used by the catalog coverage test to find codes in sources. */
  public static Pattern idPattern() {
    return ID;
  }

  @Override
  public String toString() {
    return id;
  }
}
