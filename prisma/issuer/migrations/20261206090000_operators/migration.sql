-- Many operators on one platform (issue 44): each passport belongs to the operator that created it,
-- and each operator has its own event, carrier and credential keys. What the platform held before
-- becomes the operator `default`: it owns every passport, and the issuer's event, carrier and
-- credential keys are its keys, so every passport signed before reads and verifies as it did. The
-- service key stays the platform's own (operator NULL).

ALTER TABLE "signing_key" ADD COLUMN "operator" TEXT;
UPDATE "signing_key" SET "operator" = 'default' WHERE "purpose" <> 'service';

ALTER TABLE "passport" ADD COLUMN "operator" TEXT NOT NULL DEFAULT 'default';
ALTER TABLE "passport" ALTER COLUMN "operator" DROP DEFAULT;
