-- CreateTable
CREATE TABLE "trust_node" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "jurisdiction" TEXT,
    "document" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "trust_node_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "delegation_edge" (
    "id" TEXT NOT NULL,
    "iss" TEXT NOT NULL,
    "sub" TEXT NOT NULL,
    "document" JSONB NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "delegation_edge_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "trust_list" (
    "jurisdiction" TEXT NOT NULL,
    "framework" TEXT NOT NULL,
    "sequence_number" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "trust_list_pkey" PRIMARY KEY ("jurisdiction")
);

-- CreateTable
CREATE TABLE "trust_list_change" (
    "jurisdiction" TEXT NOT NULL,
    "sequence_number" INTEGER NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL,
    "document" JSONB NOT NULL,

    CONSTRAINT "trust_list_change_pkey" PRIMARY KEY ("jurisdiction","sequence_number")
);

-- CreateTable
CREATE TABLE "witness_set" (
    "id" BIGSERIAL NOT NULL,
    "m" INTEGER NOT NULL,
    "keys" JSONB NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "witness_set_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "master_list_entry" (
    "id" TEXT NOT NULL,
    "body" JSONB NOT NULL,
    "cosignatures" JSONB NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "master_list_entry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "revocation" (
    "id" BIGSERIAL NOT NULL,
    "subject" TEXT NOT NULL,
    "document" JSONB NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "revocation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "trust_node_kind_idx" ON "trust_node"("kind");

-- CreateIndex
CREATE INDEX "delegation_edge_iss_idx" ON "delegation_edge"("iss");

-- CreateIndex
CREATE INDEX "delegation_edge_sub_idx" ON "delegation_edge"("sub");

-- CreateIndex
CREATE INDEX "trust_list_framework_idx" ON "trust_list"("framework");

-- CreateIndex
CREATE INDEX "revocation_subject_idx" ON "revocation"("subject");

-- AddForeignKey
ALTER TABLE "delegation_edge" ADD CONSTRAINT "delegation_edge_iss_fkey" FOREIGN KEY ("iss") REFERENCES "trust_node"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delegation_edge" ADD CONSTRAINT "delegation_edge_sub_fkey" FOREIGN KEY ("sub") REFERENCES "trust_node"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "trust_list_change" ADD CONSTRAINT "trust_list_change_jurisdiction_fkey" FOREIGN KEY ("jurisdiction") REFERENCES "trust_list"("jurisdiction") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "witness_set" ADD CONSTRAINT "witness_set_m_check" CHECK ("m" >= 1);
ALTER TABLE "trust_list" ADD CONSTRAINT "trust_list_sequence_number_check" CHECK ("sequence_number" >= 1);
