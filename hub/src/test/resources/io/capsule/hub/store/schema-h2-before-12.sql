-- schema-h2.sql as it was before 2026-12-03 (Pekko's H2 schema): FormerH2SchemaTest makes a store
-- with it, as a hub of then did, to prove today's migration and journal work on such a file.
-- The tables Pekko Persistence JDBC 1.1.1 reads and writes (journal, tags, snapshots), created
-- only when missing so that every hub start and every `capsule hub migrate` may run it again.
-- H2 dialect; identifiers quoted because the H2 profile quotes them (lower case).
CREATE TABLE IF NOT EXISTS PUBLIC."event_journal" (
  "ordering" BIGINT UNIQUE NOT NULL AUTO_INCREMENT,
  "deleted" BOOLEAN DEFAULT FALSE NOT NULL,
  "persistence_id" VARCHAR(255) NOT NULL,
  "sequence_number" BIGINT NOT NULL,
  "writer" VARCHAR NOT NULL,
  "write_timestamp" BIGINT NOT NULL,
  "adapter_manifest" VARCHAR NOT NULL,
  "event_payload" BLOB NOT NULL,
  "event_ser_id" INTEGER NOT NULL,
  "event_ser_manifest" VARCHAR NOT NULL,
  "meta_payload" BLOB,
  "meta_ser_id" INTEGER,
  "meta_ser_manifest" VARCHAR,
  PRIMARY KEY ("persistence_id", "sequence_number")
);
CREATE UNIQUE INDEX IF NOT EXISTS "event_journal_ordering_idx" ON PUBLIC."event_journal" ("ordering");
CREATE TABLE IF NOT EXISTS PUBLIC."event_tag" (
  "event_id" BIGINT NOT NULL,
  "tag" VARCHAR NOT NULL,
  PRIMARY KEY ("event_id", "tag"),
  CONSTRAINT "fk_event_journal" FOREIGN KEY ("event_id")
    REFERENCES PUBLIC."event_journal" ("ordering") ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS PUBLIC."snapshot" (
  "persistence_id" VARCHAR(255) NOT NULL,
  "sequence_number" BIGINT NOT NULL,
  "created" BIGINT NOT NULL,
  "snapshot_ser_id" INTEGER NOT NULL,
  "snapshot_ser_manifest" VARCHAR NOT NULL,
  "snapshot_payload" BLOB NOT NULL,
  "meta_ser_id" INTEGER,
  "meta_ser_manifest" VARCHAR,
  "meta_payload" BLOB,
  PRIMARY KEY ("persistence_id", "sequence_number")
);
