-- Private signing keys are sealed under the key-encryption key (PASSPORT_KEK_FILE). The plaintext
-- column stays, nullable, only so that the first start of this version can seal the keys of an
-- older version: it is NULL for every key afterwards.
ALTER TABLE "signing_key" ALTER COLUMN "secret_key" DROP NOT NULL,
ADD COLUMN "sealed_key" BYTEA,
ADD COLUMN "kek_id" TEXT;
