-- Audiences (issue 44 item 4): a profile names the audience of each config vector member it
-- restricts; a passport's restricted members are kept as RFC 9901 disclosures in a table of their
-- own, apart from the public columns, and its stored config vector is the committed manifest
-- (restricted members as digests in `_sd`). Profiles and passports of before restrict nothing.

-- AlterTable
ALTER TABLE "issuer_profile" ADD COLUMN     "audiences" JSONB NOT NULL DEFAULT '{}';

-- CreateTable
CREATE TABLE "passport_disclosure" (
    "passport_id" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "audience" TEXT NOT NULL,
    "disclosure" TEXT NOT NULL,

    CONSTRAINT "passport_disclosure_pkey" PRIMARY KEY ("passport_id","digest")
);

-- AddForeignKey
ALTER TABLE "passport_disclosure" ADD CONSTRAINT "passport_disclosure_passport_id_fkey" FOREIGN KEY ("passport_id") REFERENCES "passport"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
