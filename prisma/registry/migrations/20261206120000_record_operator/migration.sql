-- Who owns a registry record (issue 44 item 3): the operator whose writer created it; only its
-- writers and the platform's admin add versions. Every record of before operators, the sample
-- register included, becomes the operator `default`'s, as its passports did.

ALTER TABLE "record" ADD COLUMN "operator" TEXT NOT NULL DEFAULT 'default';
ALTER TABLE "record" ALTER COLUMN "operator" DROP DEFAULT;
