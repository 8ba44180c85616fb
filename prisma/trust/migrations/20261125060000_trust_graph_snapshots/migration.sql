-- GET /graph is read page by page (trustGraphPage), each page in a statement of its own, yet the
-- pages together must be one snapshot of the graph. Every row records the transaction that wrote
-- it (written_xid); the first page takes pg_current_snapshot() and every page keeps only the rows
-- visible in that snapshot (pg_visible_in_snapshot), so what commits between pages never appears.
-- Edges and revocations are never changed or deleted; a node's document is changed by upserts,
-- so each document a node has had is kept in trust_node_version, by the transaction that wrote it.
-- Rows already stored take this migration's transaction id: visible to every later snapshot.

ALTER TABLE "delegation_edge" ADD COLUMN "written_xid" xid8 NOT NULL DEFAULT pg_current_xact_id();
ALTER TABLE "revocation" ADD COLUMN "written_xid" xid8 NOT NULL DEFAULT pg_current_xact_id();

CREATE TABLE "trust_node_version" (
    "id" TEXT NOT NULL,
    "written_xid" xid8 NOT NULL DEFAULT pg_current_xact_id(),
    "document" JSONB NOT NULL,

    CONSTRAINT "trust_node_version_pkey" PRIMARY KEY ("id", "written_xid")
);

INSERT INTO "trust_node_version" ("id", "document") SELECT "id", "document" FROM "trust_node";

-- Kept by the database itself, so that no writer (this service's replicas, an operator's SQL) can
-- change a node without its version. The schema is the table's own: services share a database.
CREATE FUNCTION "trust_node_keep_version"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    updated integer;
BEGIN
    EXECUTE format('UPDATE %I.trust_node_version SET document = $2 WHERE id = $1 AND written_xid = pg_current_xact_id()', TG_TABLE_SCHEMA) USING NEW.id, NEW.document;
    GET DIAGNOSTICS updated = ROW_COUNT;
    IF updated = 0 THEN
        EXECUTE format('INSERT INTO %I.trust_node_version (id, document) VALUES ($1, $2)', TG_TABLE_SCHEMA) USING NEW.id, NEW.document;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER "trust_node_versioned" AFTER INSERT OR UPDATE OF "document" ON "trust_node"
    FOR EACH ROW EXECUTE FUNCTION "trust_node_keep_version"();

-- Keyset order of the edges in GET /graph (recording order, then id).
CREATE INDEX "delegation_edge_recorded_idx" ON "delegation_edge" ("recorded_at", "id");
