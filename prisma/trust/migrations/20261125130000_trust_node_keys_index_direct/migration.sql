-- The GIN index of the keys nodes list (trust_node_keys_idx) updated at each write instead of
-- through its pending list. With fastupdate on, PostgreSQL appends new entries to a pending list
-- (up to gin_pending_list_limit, 4 MB) that every search of the index reads in full until vacuum
-- merges it: after 9,000 nodes were added, each key-standing question read that list and took
-- twice as long until autovacuum came by. Standing questions far outnumber node writes, so a
-- write pays for its own entries and every read stays a lookup.
ALTER INDEX "trust_node_keys_idx" SET (fastupdate = off);

-- Entries already pending are merged into the index now.
SELECT gin_clean_pending_list('trust_node_keys_idx'::regclass);
