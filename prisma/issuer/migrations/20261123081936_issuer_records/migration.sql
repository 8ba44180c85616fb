-- CreateTable
CREATE TABLE "passport" (
    "id" TEXT NOT NULL,
    "identity" TEXT NOT NULL,
    "digital_link" TEXT NOT NULL,
    "granularity" TEXT NOT NULL,
    "type_ref_id" TEXT NOT NULL,
    "type_ref_version" INTEGER NOT NULL,
    "config_vector" JSONB NOT NULL,
    "capability_class" TEXT NOT NULL,
    "profile_id" TEXT,
    "claims" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "core" JSONB NOT NULL,
    "log_size" INTEGER NOT NULL,
    "frontier" TEXT[],
    "last_event" TEXT,
    "log_head" JSONB NOT NULL,
    "latest_pack" TEXT,
    "latest_pack_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "passport_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "passport_event" (
    "passport_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL,
    "kid" TEXT NOT NULL,
    "canonical" TEXT NOT NULL,

    CONSTRAINT "passport_event_pkey" PRIMARY KEY ("passport_id","seq")
);

-- CreateTable
CREATE TABLE "issuer_profile" (
    "id" TEXT NOT NULL,
    "description" TEXT,
    "capability_classes" TEXT[],
    "default_capability_class" TEXT NOT NULL,
    "claims" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "issuer_profile_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "issuer_applicability" (
    "model_id" TEXT NOT NULL,
    "model_version" INTEGER NOT NULL,
    "profile_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "issuer_applicability_pkey" PRIMARY KEY ("model_id","model_version")
);

-- CreateIndex
CREATE INDEX "passport_digital_link_idx" ON "passport"("digital_link");

-- AddForeignKey
ALTER TABLE "passport_event" ADD CONSTRAINT "passport_event_passport_id_fkey" FOREIGN KEY ("passport_id") REFERENCES "passport"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
