package io.capsule.cli;

import io.capsule.hub.store.HubStore;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code capsule hub migrate}: creates the store's schema where missing and exits, so that a
 * database can be prepared (and its credentials checked) before any hub starts. Idempotent.
 */
@Command(
    name = "migrate",
    mixinStandardHelpOptions = true,
    description =
        "Create the hub's tables in its store (--store or --state-dir) if missing, then exit;"
            + " safe to run again.")
final class HubMigrateCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @CommandLine.Mixin HubStoreOptions storeOptions = new HubStoreOptions();

  @Override
  public Integer call() {
    HubStore store = storeOptions.resolve();
    if (!store.durable()) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "capsule hub migrate needs --store or --state-dir");
    }
    store.migrate();
    spec.commandLine().getOut().println("schema ready: " + store.describe());
    spec.commandLine().getOut().flush();
    return ExitCodes.DONE;
  }
}
