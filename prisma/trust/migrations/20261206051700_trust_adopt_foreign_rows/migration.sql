-- Rows restored into another cluster are adopted by it (docs/OPERATIONS.md, "Backup and restore").
--
-- GET /graph pages keep the rows whose written_xid is visible in the first page's snapshot
-- (migration 20261125060000_trust_graph_snapshots), and a node's current document is its version of
-- the highest written_xid. A transaction id is a count of one cluster's transactions: restored into
-- another cluster (npm run restore into a fresh data folder, pg_dump and pg_restore into another
-- server), a row's written_xid is mostly in that cluster's future. Every snapshot hid such rows until
-- the new counter passed them (after a restore into a fresh data folder, GET /graph listed the
-- platform node alone until some thirty transactions had run), and a node changed after the restore
-- kept its restored document wherever that version's number was the higher. Nothing else orders
-- writes the way a snapshot sees them, so the rows are not renumbered in some other order: they are
-- adopted. Each row written at or after `written_from` takes the adopting transaction's id, which
-- every snapshot taken after it commits sees, and which is below every transaction that follows.
--
-- Of a node's adopted documents only the newest is kept, with the node's current document: the
-- older ones served snapshots taken before that one was written, and this cluster has no such
-- snapshot (nor could two versions share the key (id, written_xid)). Rows are changed and removed,
-- never inserted, so trust_graph_writes counts what it counted: the graph version (GET /graph's
-- ETag) stays that of the same graph.
--
-- `everything`: npm run restore adopts every row, in its own transaction (they all came from the
-- backup). The trust service, at each start, adopts the rows of its cluster's future (at or past its
-- snapshot's xmax): what a pg_restore leaves. A row below that is visible to every snapshot already
-- and ordered before whatever this cluster writes next.
CREATE FUNCTION "trust_adopt_foreign_rows"(everything boolean) RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
    written_from xid8;
    adopted bigint;
    more bigint;
BEGIN
    -- Replicas starting at once adopt in turn: the later one's snapshot, taken after the lock, sees
    -- the earlier one's rows as written in the past.
    PERFORM pg_advisory_xact_lock(hashtext('passport.trust.adopt:' || current_schema()));
    written_from := CASE WHEN everything THEN '0'::xid8 ELSE pg_snapshot_xmax(pg_current_snapshot()) END;
    DELETE FROM trust_node_version AS version
        WHERE version.written_xid >= written_from
          AND EXISTS (SELECT 1 FROM trust_node_version AS newer WHERE newer.id = version.id AND newer.written_xid > version.written_xid);
    UPDATE trust_node_version AS version SET written_xid = pg_current_xact_id(), document = node.document
        FROM trust_node AS node
        WHERE node.id = version.id AND version.written_xid >= written_from;
    GET DIAGNOSTICS adopted = ROW_COUNT;
    UPDATE delegation_edge SET written_xid = pg_current_xact_id() WHERE written_xid >= written_from;
    GET DIAGNOSTICS more = ROW_COUNT;
    adopted := adopted + more;
    UPDATE revocation SET written_xid = pg_current_xact_id() WHERE written_xid >= written_from;
    GET DIAGNOSTICS more = ROW_COUNT;
    RETURN adopted + more;
END
$$;
