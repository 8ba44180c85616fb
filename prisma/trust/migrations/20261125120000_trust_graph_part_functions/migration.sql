-- The part of the trust graph a key-standing question or a graph write reads
-- (subgraphs/trust/data/trust-repository.ts, graphPart), as functions of the database.
--
-- Why functions: the statement is a recursive query with three aggregates, and PostgreSQL spent
-- longer planning it on every call (0.3-0.5 ms) than running it on a small ancestry. PL/pgSQL
-- keeps the plans of its statements for the connection's lifetime, so each pooled connection
-- plans them a few times and then reuses a generic plan. The ids are looked up with `= ANY` of
-- one array rather than `IN (subquery)`, which lets the plan use the indexes whatever the
-- planner guesses a recursive query's size to be.
--
-- `SET search_path FROM CURRENT` binds the tables to the schema the migration runs in (each
-- service has its own, and tests one per run), whatever the caller's search_path is.

-- The nodes listing any of these keys (document -> keys contains an object with that kid), one
-- lookup in the GIN index on document -> keys per key.
CREATE FUNCTION "trust_key_holders"(kids text[]) RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path FROM CURRENT
AS $$
DECLARE
    kid text;
    listing jsonb;
    holders text[] := '{}';
BEGIN
    FOREACH kid IN ARRAY kids LOOP
        -- Built once here: written into the condition, it would be built again for every row read.
        listing := jsonb_build_array(jsonb_build_object('kid', kid));
        holders := holders || ARRAY(SELECT node.id FROM trust_node AS node WHERE node.document -> 'keys' @> listing);
    END LOOP;
    RETURN holders;
END
$$;

-- The seed nodes, every node from which a chain of delegations leads to one of them, the edges
-- into all of these (in recording order) and the revocations of them and of their keys, each as
-- a JSON array of the stored documents, read in one snapshot (a STABLE function's statements all
-- see the snapshot of the statement calling it).
CREATE FUNCTION "trust_graph_part"(seeds text[]) RETURNS TABLE (nodes json, edges json, revocations json)
LANGUAGE plpgsql STABLE
SET search_path FROM CURRENT
AS $$
DECLARE
    ancestry text[];
BEGIN
    WITH RECURSIVE reaching(id) AS (
        SELECT unnest(seeds)
        UNION
        SELECT edge.iss FROM delegation_edge AS edge JOIN reaching ON edge.sub = reaching.id
    )
    SELECT coalesce(array_agg(reaching.id), '{}') INTO ancestry FROM reaching;

    RETURN QUERY SELECT
        (SELECT coalesce(json_agg(node.document ORDER BY node.id), '[]') FROM trust_node AS node
            WHERE node.id = ANY(ancestry)),
        (SELECT coalesce(json_agg(edge.document ORDER BY edge.recorded_at, edge.id), '[]') FROM delegation_edge AS edge
            WHERE edge.sub = ANY(ancestry)),
        (SELECT coalesce(json_agg(revocation.document ORDER BY revocation.id), '[]') FROM revocation
            WHERE split_part(revocation.subject, '#', 1) = ANY(ancestry));
END
$$;
