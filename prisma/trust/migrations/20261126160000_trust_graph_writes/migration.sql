-- The graph version (trustGraphPage.version, GET /graph's ETag) without reading the graph. It is
-- the number of node documents, edges and revocations ever written: those rows are never changed
-- or deleted, so every committed write raises it and equal versions are equal graphs. Counting
-- them took 30-40 ms at 100k nodes and grew with the graph; the rows are now counted as they are
-- written, into 16 shard rows summed by the reader in its snapshot. A writing transaction adds to
-- the shard of its transaction id, one row for all its statements, taken after its other locks
-- (the graph insert is the last write before the admin log); writers that meet on a shard wait
-- only for the other's commit, and 16 make meeting rare.
CREATE TABLE "trust_graph_writes" (
    "shard" SMALLINT NOT NULL,
    "rows" BIGINT NOT NULL,

    CONSTRAINT "trust_graph_writes_pkey" PRIMARY KEY ("shard")
);

INSERT INTO "trust_graph_writes" ("shard", "rows") SELECT shard, 0 FROM generate_series(0, 15) AS shard;
UPDATE "trust_graph_writes"
   SET "rows" = (SELECT count(*) FROM "trust_node_version") + (SELECT count(*) FROM "delegation_edge") + (SELECT count(*) FROM "revocation")
 WHERE "shard" = 0;

-- Statement-level, from the statement's transition table: a bulk insert is one addition. The
-- schema is the table's own: services share a database.
CREATE FUNCTION "trust_graph_count_writes"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    added bigint;
BEGIN
    SELECT count(*) INTO added FROM written;
    IF added > 0 THEN
        EXECUTE format('UPDATE %I.trust_graph_writes SET rows = rows + $1 WHERE shard = $2', TG_TABLE_SCHEMA)
            USING added, (pg_current_xact_id()::text::bigint % 16)::smallint;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER "trust_node_version_counted" AFTER INSERT ON "trust_node_version"
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION "trust_graph_count_writes"();
CREATE TRIGGER "delegation_edge_counted" AFTER INSERT ON "delegation_edge"
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION "trust_graph_count_writes"();
CREATE TRIGGER "revocation_counted" AFTER INSERT ON "revocation"
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION "trust_graph_count_writes"();
