-- CreateTable
CREATE TABLE "snapshot" (
    "id" TEXT NOT NULL,
    "passport_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "size" INTEGER NOT NULL,
    "sha512" TEXT NOT NULL,
    "tagmanifest_sha512" TEXT NOT NULL,
    "payload_oxum" TEXT NOT NULL,
    "chunk_size" INTEGER NOT NULL,
    "chunk_count" INTEGER NOT NULL,
    "notarization" JSONB NOT NULL,
    "notary_kid" TEXT NOT NULL,

    CONSTRAINT "snapshot_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "snapshot_chunk" (
    "snapshot_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "bytes" BYTEA NOT NULL,
    "sha512" BYTEA NOT NULL,

    CONSTRAINT "snapshot_chunk_pkey" PRIMARY KEY ("snapshot_id","seq")
);

-- CreateIndex
CREATE INDEX "snapshot_passport_id_created_at_id_idx" ON "snapshot"("passport_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "snapshot_created_at_id_idx" ON "snapshot"("created_at", "id");

-- AddForeignKey
ALTER TABLE "snapshot_chunk" ADD CONSTRAINT "snapshot_chunk_snapshot_id_fkey" FOREIGN KEY ("snapshot_id") REFERENCES "snapshot"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;
