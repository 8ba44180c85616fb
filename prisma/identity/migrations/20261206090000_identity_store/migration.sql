-- The platform's identity store (issue 44): the operators it serves and the access tokens it issues
-- to them and to itself. The `default` operator is every platform's from the start: a database of an
-- earlier release becomes that operator's, and PASSPORT_WRITER_TOKEN writes for it.

-- CreateTable
CREATE TABLE "operator" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "suspended_at" TIMESTAMPTZ(3),

    CONSTRAINT "operator_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "operator_status_check" CHECK ("status" IN ('active', 'suspended') AND ("status" = 'suspended') = ("suspended_at" IS NOT NULL))
);

-- CreateTable
CREATE TABLE "access_token" (
    "id" TEXT NOT NULL,
    "operator_id" TEXT,
    "role" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "created_by" TEXT NOT NULL,

    CONSTRAINT "access_token_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "access_token_role_check" CHECK ("role" IN ('admin', 'writer', 'reader', 'legitimate-interest', 'authority'))
);

-- CreateIndex
CREATE UNIQUE INDEX "access_token_sha256_key" ON "access_token"("sha256");

-- CreateIndex
CREATE INDEX "access_token_operator_id_created_at_idx" ON "access_token"("operator_id", "created_at");

-- AddForeignKey
ALTER TABLE "access_token" ADD CONSTRAINT "access_token_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operator"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

INSERT INTO "operator" ("id", "name") VALUES ('default', 'Default operator');
