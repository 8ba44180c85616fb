-- Each change of a passport's status by an event, appended in the event's transaction, for the
-- subscription to an operator's (or a set of passports') status changes. Its id is the feed's
-- cursor: taken under a transaction-level advisory lock held to commit, so ids are committed in
-- order and a reader after a cursor never misses a row committed later with a smaller id. The
-- changes of before are not reconstructed: the feed begins with this migration.

CREATE TABLE "passport_status_change" (
    "id" BIGSERIAL NOT NULL,
    "passport_id" TEXT NOT NULL,
    "operator" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "from_status" TEXT NOT NULL,
    "to_status" TEXT NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "passport_status_change_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "passport_status_change_operator_id_idx" ON "passport_status_change"("operator", "id");

CREATE INDEX "passport_status_change_passport_id_id_idx" ON "passport_status_change"("passport_id", "id");
