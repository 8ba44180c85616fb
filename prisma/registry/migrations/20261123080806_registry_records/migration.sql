-- CreateTable
-- Ids sort in byte order ("C"), the order list cursors assume, whatever the database's locale.
CREATE TABLE "record" (
    "id" TEXT COLLATE "C" NOT NULL,
    "kind" TEXT NOT NULL,
    "current_version" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "record_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "record_current_version_check" CHECK ("current_version" >= 1)
);

-- CreateTable
CREATE TABLE "record_version" (
    "id" TEXT COLLATE "C" NOT NULL,
    "version" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "body" JSON NOT NULL,
    "effective_from" TIMESTAMPTZ(3),
    "effective_to" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "supersedes" INTEGER,
    "scoped" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "record_version_pkey" PRIMARY KEY ("id","version"),
    -- Versions count from 1 and each supersedes the one before it.
    CONSTRAINT "record_version_chain_check" CHECK (("version" = 1 AND "supersedes" IS NULL) OR ("version" > 1 AND "supersedes" = "version" - 1))
);

-- CreateIndex
CREATE INDEX "record_kind_status_id_idx" ON "record"("kind", "status", "id");

-- CreateIndex
CREATE UNIQUE INDEX "record_kind_id_key" ON "record"("kind", "id");

-- CreateIndex
CREATE INDEX "record_version_scoped_kind_id_idx" ON "record_version"("scoped", "kind", "id");

-- CreateIndex
CREATE UNIQUE INDEX "record_version_kind_id_version_key" ON "record_version"("kind", "id", "version");

-- AddForeignKey
ALTER TABLE "record_version" ADD CONSTRAINT "record_version_kind_id_fkey" FOREIGN KEY ("kind", "id") REFERENCES "record"("kind", "id") ON DELETE RESTRICT ON UPDATE CASCADE;

