-- W3C Bitstring Status Lists: each passport gets an index from a sequence (existing passports too),
-- and the lists of revocation and suspension bits are kept beside the passports.
ALTER TABLE "passport" ADD COLUMN "status_index" SERIAL NOT NULL;

CREATE UNIQUE INDEX "passport_status_index_key" ON "passport"("status_index");

CREATE TABLE "status_list" (
    "purpose" TEXT NOT NULL,
    "list" INTEGER NOT NULL,
    "bits" BYTEA NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "status_list_pkey" PRIMARY KEY ("purpose","list")
);

-- The lists that existing passports fall in, all bits clear, then the bits of those already revoked
-- or suspended (entry i is bit 7 - i mod 8 of byte i div 8 in PostgreSQL's numbering, which counts
-- from the least significant bit).
INSERT INTO "status_list" ("purpose", "list", "bits", "updated_at")
SELECT purposes.purpose, lists.list, decode(repeat('00', 16384), 'hex'), CURRENT_TIMESTAMP
FROM (VALUES ('revocation'), ('suspension')) AS purposes(purpose),
     (SELECT DISTINCT "status_index" / 131072 AS list FROM "passport") AS lists;

DO $$
DECLARE
  marked record;
BEGIN
  FOR marked IN SELECT "status_index" AS position, "status" FROM "passport" WHERE "status" IN ('revoked', 'suspended') LOOP
    UPDATE "status_list"
    SET "bits" = set_bit("bits", ((marked.position % 131072) / 8) * 8 + 7 - (marked.position % 8), 1)
    WHERE "list" = marked.position / 131072
      AND "purpose" = CASE marked.status WHEN 'revoked' THEN 'revocation' ELSE 'suspension' END;
  END LOOP;
END $$;
