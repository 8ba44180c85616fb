-- A snapshot's chunks are written before its row, in the same transaction: the row holds the
-- archive's digest and notarization, known only once the last byte has been written. The foreign
-- key is therefore checked at commit.
ALTER TABLE "snapshot_chunk" ALTER CONSTRAINT "snapshot_chunk_snapshot_id_fkey" DEFERRABLE INITIALLY DEFERRED;
