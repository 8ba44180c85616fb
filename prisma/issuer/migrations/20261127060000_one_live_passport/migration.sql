-- One live passport per identity (DESIGN §3): at most one passport in draft, active or suspended
-- per canonical Digital Link and granularity, held by a partial unique index so that two creations
-- at once cannot both commit. A successor, created after its predecessor was revoked or reached its
-- end of life, names it; a passport has at most one successor.
ALTER TABLE "passport" ADD COLUMN "predecessor_id" TEXT,
ADD COLUMN "live_before_rule" BOOLEAN NOT NULL DEFAULT false;

-- Versions before the rule accepted several live passports of one identity. The newest of each
-- identity is the one the rule counts; the older ones are kept as they are, marked, outside the index.
UPDATE "passport" AS older SET "live_before_rule" = true
WHERE older."status" IN ('draft', 'active', 'suspended')
  AND EXISTS (
    SELECT 1 FROM "passport" AS newer
    WHERE newer."digital_link" = older."digital_link" AND newer."granularity" = older."granularity"
      AND newer."status" IN ('draft', 'active', 'suspended')
      AND (newer."created_at", newer."id") > (older."created_at", older."id")
  );

-- CreateIndex
CREATE UNIQUE INDEX "passport_predecessor_id_key" ON "passport"("predecessor_id");

-- CreateIndex
CREATE UNIQUE INDEX "passport_live_identity_key" ON "passport"("digital_link", "granularity") WHERE ((status = ANY (ARRAY['draft'::text, 'active'::text, 'suspended'::text])) AND (NOT live_before_rule));

-- AddForeignKey
ALTER TABLE "passport" ADD CONSTRAINT "passport_predecessor_id_fkey" FOREIGN KEY ("predecessor_id") REFERENCES "passport"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
