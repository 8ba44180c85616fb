-- The feed of new snapshots (Subscription.passportSnapshots) reads snapshots after a cursor: each
-- snapshot's place in the feed, drawn from this sequence in the creating transaction under a
-- transaction-level advisory lock held to commit, so places commit in order and a reader after a
-- cursor never misses a snapshot committed later with a smaller one. The snapshots of before take
-- places in the order the table holds them.

ALTER TABLE "snapshot" ADD COLUMN "feed_id" BIGSERIAL NOT NULL;

CREATE UNIQUE INDEX "snapshot_feed_id_key" ON "snapshot"("feed_id");

CREATE INDEX "snapshot_passport_id_feed_id_idx" ON "snapshot"("passport_id", "feed_id");
