-- The feed of trust-list changes (Subscription.trustListChanges) reads changes after a cursor: each
-- change's place in the feed, drawn from this sequence in the recording transaction under a
-- transaction-level advisory lock held to commit, so places commit in order. The changes of before
-- take places in the order the table holds them. (Revocations are read after their id, drawn the
-- same way from now on.)

-- AlterTable
ALTER TABLE "trust_list_change" ADD COLUMN     "feed_id" BIGSERIAL NOT NULL;

-- CreateIndex
CREATE UNIQUE INDEX "trust_list_change_feed_id_key" ON "trust_list_change"("feed_id");
